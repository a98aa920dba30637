"""GROUP BY and aggregates: group keys become variables, aggregates payload channels.

COUNT/SUM/AVG become linear combinations of multiplicative payload channels
(each atom contributes a factor; a join multiplies, a projection adds),
following SQL's NULL rules; MIN/MAX/COUNT(DISTINCT)/SUM(DISTINCT)/AVG(DISTINCT)
keep (sorted) multisets of their argument per group (docs/design.md,
"Aggregates").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from sqlglot import exp

from ...errors import UnsupportedQueryError
from ..ir import (
    exact_digits,
    NULL_ABSORBING,
    PICKS,
    AggRef,
    Aggregate,
    Channel,
    InnerTest,
    Lit,
    Op,
    Ref,
    may_be_nonfinite,
    refs,
)
from ..functions import BIT_KINDS, DISTINCT_SUM_KINDS, MULTISET_KINDS, PICK_KINDS
from .diagnostics import DIALECT, sql_error, unsupported
from .expressions import CONVERTERS, is_single, single_arith
from .types import check_condition, coerce_literals, infer_type, typed

# MEDIAN(x), QUANTILE_CONT(x, q), QUANTILE_DISC(x, q) (PERCENTILE_… WITHIN
# GROUP and QUANTILE are respelled as these: passes/aggregate_spellings.py)
QUANTILES = (exp.Median, exp.PercentileCont, exp.PercentileDisc)


class TopCut(exp.Expression, exp.AggFunc):
    """TOP_CUT(x, n, descending): the value at place n of x's order, or the
    last one; no SQL function: passes/top_rows.py makes it, the threshold
    of a partition's top n rows."""

    arg_types = {"this": True, "expression": True, "descending": False}


# the aggregates whose argument's values a group keeps (a multiset)
# (FIRST/LAST here: with an ORDER BY, the others are gone, passes/keyed_picks.py)
KEPT = (
    exp.Min,
    exp.Max,
    exp.ArgMin,
    exp.ArgMax,
    exp.First,
    exp.Last,
    *QUANTILES,
    TopCut,
    exp.GroupConcat,
    exp.ArrayAgg,
    exp.BitwiseOrAgg,
    exp.BitwiseAndAgg,
    exp.BitwiseXorAgg,
)
AGGREGATES = (exp.Count, exp.Sum, exp.Avg, *KEPT)
_DISTINCT_KINDS = {
    exp.Count: "count_distinct",
    exp.Sum: "sum_distinct",
    exp.Avg: "avg_distinct",
}
_PICK_NAMES = {exp.ArgMin: "arg_min", exp.ArgMax: "arg_max"}
_BIT_NAMES = {
    exp.BitwiseOrAgg: "bit_or_agg",
    exp.BitwiseAndAgg: "bit_and_agg",
    exp.BitwiseXorAgg: "bit_xor_agg",
}
_QUANTILE_NAMES = {
    exp.Median: "MEDIAN",
    exp.PercentileCont: "QUANTILE_CONT",
    exp.PercentileDisc: "QUANTILE_DISC",
}


def is_grouped(select: exp.Select) -> bool:
    """GROUP BY, an aggregate in SELECT, or HAVING (SQL groups the whole
    input then: `SELECT a FROM r HAVING …` is refused as `a` is not grouped)."""
    return any(select.args.get(arg) for arg in ("group", "having")) or any(
        e.find(exp.AggFunc) for e in select.expressions
    )


@dataclass(frozen=True)
class GroupKey:
    """Placeholder for GROUP BY item `index` until variables are named."""

    index: int

    def __str__(self) -> str:
        return f"group{self.index}"


class Grouping:
    """Converts a grouped SELECT: group keys become variables (derived ones
    computed at their atom's leaf), aggregates become payload channels."""

    def __init__(self, fe, select: exp.Select):
        self.fe = fe
        group = select.args.get("group")
        items = group.expressions if group is not None else []
        self.keys = [fe.expr(item) for item in items]
        for key, item in zip(self.keys, items):
            atoms = {r.atom for r in refs(key)}
            if len(atoms) != 1:
                raise unsupported(
                    "a GROUP BY item must read columns of exactly one table", item
                )
        self.channels: list[Channel] = []
        self.aggregates: list[Aggregate] = []
        self.args: list = []  # arguments of MIN/MAX/COUNT(DISTINCT)
        # Per aggregate: its argument as a sum of products of per-atom
        # factors (None for COUNT(*), MIN, MAX, COUNT(DISTINCT)), its node.
        self.polys: list = []

    def column_keys(self) -> list[Ref]:
        """The columns the groups read: keys, arguments, computed arguments."""
        out = [k for k in self.keys + self.args if isinstance(k, Ref)]
        for a in self.aggregates:
            if a.computed is not None:
                out += refs(a.computed)
        return out

    def derived_vars(self, taken: set[str]) -> dict[str, tuple[int, object]]:
        """Variables for expression keys and arguments: name -> (atom, expression)."""
        out = {}
        items = [(f"group{i + 1}", k) for i, k in enumerate(self.keys)]
        items += [(f"arg{i + 1}", a) for i, a in enumerate(self.args)]
        seen = []
        for base, key in items:
            if isinstance(key, Ref) or key in seen:
                continue
            seen.append(key)
            name, k = base, 2
            while name in taken or name in out:
                name, k = f"{base}_{k}", k + 1
            out[name] = (refs(key)[0].atom, key)
        return out

    def arg_names(self, var_of, derived) -> dict[str, str]:
        """Placeholder "#argI" -> the variable of MIN/MAX/COUNT(DISTINCT) argument I."""
        by_expr = {repr(e): v for v, (_, e) in derived.items()}
        return {
            f"#arg{i}": (
                var_of[(a.atom, a.column)] if isinstance(a, Ref) else by_expr[repr(a)]
            )
            for i, a in enumerate(self.args)
        }

    def key_names(self, var_of, derived) -> dict[int, str]:
        by_expr = {repr(e): v for v, (_, e) in derived.items()}
        names = {}
        for i, key in enumerate(self.keys):
            if isinstance(key, Ref):
                names[i] = var_of[(key.atom, key.column)]
            else:
                names[i] = by_expr[repr(key)]
        return names

    def convert(self, node: exp.Expression):
        """An output or HAVING expression over group keys and aggregates."""
        if isinstance(node, exp.AggFunc):
            return self._aggregate(node)
        if not node.find(exp.AggFunc):
            ir = self.fe.expr(node)
            for i, key in enumerate(self.keys):
                if ir == key:
                    return GroupKey(i)
            if not refs(ir):
                return ir
            if isinstance(node, exp.Column):
                raise sql_error(
                    f"column {node.sql()} must appear in GROUP BY or in an aggregate",
                    node,
                )
        convert = _GROUPED_CONVERTERS.get(type(node))
        if convert is not None:
            ir = convert(self, node)
        elif type(node) in CONVERTERS:  # any scalar function of the operands
            ir = CONVERTERS[type(node)](_OverGroups(self), node)
        else:
            raise unsupported(
                f"{type(node).__name__} is not supported around aggregates", node
            )
        typed(self.type_of, ir, node)
        return ir

    def condition(self, node: exp.Expression):
        """The HAVING condition: true or false, as in WHERE."""
        ir = self.convert(node)
        check_condition(self.type_of(ir), ir, node)
        return ir

    def type_of(self, e) -> str | None:
        return infer_type(e, self._leaf_type)

    def digits_of(self, e) -> int | None:
        """Decimal digits an expression over groups holds exactly: a key's,
        a SUM's, MIN's or MAX's of a DECIMAL argument (AVG is a DOUBLE)."""
        return exact_digits(e, self._leaf_digits)

    def int_bits(self, e) -> int | None:
        """The bits of the INTEGER type of `e` over groups (`expressions.
        _int_width`): a key's or MIN's or MAX's of a column, COUNT's 64 (a
        BIGINT)."""
        if isinstance(e, AggRef):
            kind = self.aggregates[e.index].kind
            if kind not in ("min", "max", *BIT_KINDS):
                return 64 if kind in ("count", "count_distinct") else None
            inner = self._argument(e.index)
        elif isinstance(e, GroupKey):
            inner = self.keys[e.index]
        else:
            return None
        bits = getattr(self.fe, "int_bits", None)
        return None if bits is None or isinstance(inner, Op) else bits(inner)

    def single_leaf(self, e) -> bool:
        """Whether `e` over groups is a REAL (`expressions.is_single`): a
        REAL key, or a value picked (MIN, MAX, ARG_MAX, …) of a REAL."""
        if isinstance(e, GroupKey):
            return is_single(self.fe, self.keys[e.index])
        if isinstance(e, AggRef):
            if self.aggregates[e.index].kind in (*PICKS, *PICK_KINDS):
                return is_single(self.fe, self._argument(e.index))
        return False

    def _leaf_digits(self, e) -> int | None:
        if isinstance(e, GroupKey):
            return self.fe.digits_of(self.keys[e.index])
        if not isinstance(e, AggRef):
            return self.fe.digits_of(e)
        agg = self.aggregates[e.index]
        if agg.kind in ("count", "count_distinct", *BIT_KINDS):
            return 0
        if agg.kind == "quantile_cont":  # a DECIMAL's (else a DOUBLE)
            return agg.scale
        exact = (*PICKS, *PICK_KINDS, "sum", "sum_distinct")
        arg = self._argument(e.index) if agg.kind in exact else None
        return None if arg is None else self.fe.digits_of(arg)

    def _leaf_type(self, e) -> str | None:
        if isinstance(e, GroupKey):
            return self.fe.type_of(self.keys[e.index])
        if isinstance(e, AggRef):
            kind = self.aggregates[e.index].kind
            if kind in (*PICKS, *PICK_KINDS):
                return self.fe.type_of(self._argument(e.index))
            if kind.startswith("string_agg"):
                return "str"
            if kind.startswith("array_agg"):
                return "list"
            if kind in ("sum", "sum_distinct"):  # SUM of integers is an integer
                arg = self._argument(e.index)
                return "int" if self.fe.type_of(arg) in ("int", "bool") else "float"
            if kind in ("count", "count_distinct", *BIT_KINDS):
                return "int"
            return "float"
        return self.fe.leaf_type(e)

    def _argument(self, index: int):
        """The expression aggregate number `index` aggregates: MIN, MAX, a
        quantile's, STRING_AGG's or SUM's (None: a SUM without one)."""
        agg = self.aggregates[index]
        if agg.computed is not None:
            return agg.computed
        if agg.kind in MULTISET_KINDS:
            return self.args[int(agg.arg.removeprefix("#arg"))]
        node = self.polys[index][1]
        return self.fe.expr(node.this) if node.this is not None else None

    def _aggregate(self, node: exp.AggFunc) -> AggRef:
        text = node.sql(dialect=DIALECT)
        distinct = isinstance(node.this, exp.Distinct)
        if isinstance(node, KEPT) or distinct:
            if distinct and len(node.this.expressions) != 1:
                raise unsupported(
                    f"{node.sql_name()}(DISTINCT …) takes one expression", node
                )
            by = None  # STRING_AGG's ORDER BY key other than its argument
            if isinstance(node, exp.GroupConcat):  # DISTINCT maybe in ORDER BY
                arg_node, kind, options, by = self._string_agg(node)
            elif isinstance(node, (exp.ArgMin, exp.ArgMax)):
                arg_node, kind, options = None, _PICK_NAMES[type(node)], {}
            elif isinstance(node, (exp.First, exp.Last)):
                arg_node, kind, options = None, self._ordered_pick(node), {}
            elif isinstance(node, exp.ArrayAgg):
                arg_node, kind, options = None, *self._array_agg(node)
            elif isinstance(node, tuple(_BIT_NAMES)):
                arg_node, kind, options = node.this, _BIT_NAMES[type(node)], {}
            else:
                arg_node = node.this.expressions[0] if distinct else node.this
                kind = _DISTINCT_KINDS[type(node)] if distinct else node.sql_name()
                kind, options = kind.lower(), {}  # options: fields beyond these
            if kind == "count_distinct" and isinstance(arg_node, exp.Tuple):
                # COUNT(DISTINCT (a, b)): the distinct rows, NULLs in them too
                arg = Op("row", tuple(self.fe.expr(e) for e in arg_node.expressions))
            elif isinstance(node, (exp.First, exp.Last, exp.ArrayAgg)):
                arg = self._ordered_pair(node, kind)
            else:
                arg = self._pair(node) if arg_node is None else self.fe.expr(arg_node)
            where = node.args.get("where")  # FILTER (WHERE c) of a value never NULL
            if where is not None:  # NULL where c is not TRUE: the row left out
                arg = Op("case", (self.fe.expr(where), arg, Lit(None)))
            if by is not None:
                arg = self._keyed_pair(by, arg, node)
            if kind in BIT_KINDS and self.fe.type_of(arg) != "int":
                raise unsupported(
                    f"{kind.removesuffix('_agg').upper()} takes an INTEGER "
                    f"argument, got {self.fe.type_of(arg)}",
                    node,
                )
            if kind in DISTINCT_SUM_KINDS:
                arg, options["scale"] = self._distinct_sum(arg, node)
            elif isinstance(node, exp.GroupConcat):
                text_kind, digits = self._text_type(arg, node, keyed=by is not None)
                options["cast_text"] = text_kind != "str"
                if digits is not None:  # a DECIMAL's text: every digit of its scale
                    options["scale"] = digits
            elif isinstance(node, TopCut):
                options["place"] = int(node.expression.name)
                options["descending"] = bool(node.args.get("descending"))
            elif isinstance(node, QUANTILES):
                kind, options["fraction"] = self._quantile(node, arg)
                if kind == "quantile_cont" and self.fe.type_of(arg) == "float":
                    options["scale"] = self.fe.digits_of(arg)
            if len({r.atom for r in refs(arg)}) > 1:
                return self._computed(kind, arg, text, node, **options)
            if not refs(arg):
                raise unsupported(
                    f"{node.sql_name()} of a constant is not supported", node
                )
            if arg not in self.args:
                self.args.append(arg)
            aggregate = Aggregate(
                kind, (), text, f"#arg{self.args.index(arg)}", **options
            )
            if aggregate not in self.aggregates:
                self.aggregates.append(aggregate)
                self.polys.append((None, node))
            return AggRef(self.aggregates.index(aggregate), text)
        if isinstance(node, exp.Count):
            kind = "count"
            if isinstance(node.this, exp.Star) or node.this is None:
                poly = None  # COUNT(*): every row
            else:  # COUNT(x): the rows whose x is not NULL
                arg = self.fe.expr(node.this)
                if isinstance(arg, Lit) and arg.value is None:
                    raise unsupported("COUNT(NULL) is not supported", node)
                try:
                    poly = [(1, _split_by_atom(arg, node))]
                except UnsupportedQueryError:
                    return self._computed("count", arg, text, node)
        else:
            arg = self.fe.expr(node.this)
            numeric = self.fe.type_of(arg) in ("int", "float", "bool")
            # a column of no type (of VALUES, NULLs only) is SQL's NULL
            if not numeric and not (isinstance(arg, Ref) and not self.fe.type_of(arg)):
                raise unsupported(f"{node.sql_name()} needs a numeric argument", node)
            kind = "sum" if isinstance(node, exp.Sum) else "avg"
            try:
                poly = _poly(arg, node)
            except UnsupportedQueryError:
                return self._computed(kind, arg, text, node)
        # Terms and channels are made by `finish`, once it is known which
        # columns can hold a NULL.
        aggregate = Aggregate(kind, ((1, 0),) if poly is None else (), text)
        if aggregate not in self.aggregates:
            self.aggregates.append(aggregate)
            self.polys.append((poly, node))
        return AggRef(self.aggregates.index(aggregate), text)

    def _pair(self, node: exp.AggFunc) -> Op:
        """ARG_MIN/ARG_MAX(x, k)'s argument: the pair (k, x), NULL where
        either is (DuckDB leaves such rows out); MIN/MAX of the pairs is a
        row's with the least/greatest k, of those tied on k the least/greatest
        x (DuckDB picks any of them)."""
        name = node.sql_name()
        if node.args.get("count") is not None:
            raise unsupported(f"{name}(x, k, n) (a LIST) is not supported", node)
        value, key = self.fe.expr(node.this), self.fe.expr(node.expression)
        if may_be_nonfinite(key) or may_be_nonfinite(value):
            raise unsupported(
                f"{name} over a key or value that may be NaN (x / 0) is not supported",
                node,
            )
        return Op("pair", (key, value))

    def _ordered_pick(self, node: exp.First | exp.Last) -> str:
        """FIRST/LAST(x ORDER BY k1, …)'s kind: the least (ARG_MIN's) of the
        pairs `_ordered_pair` makes, or the greatest for a descending order
        (LAST: the first of the order reversed)."""
        keys = node.this.expressions
        if isinstance(node.this.this, exp.Distinct):
            raise unsupported(
                f"{node.sql_name()}(DISTINCT …) is not supported (the first row "
                f"is the same without it: {node.sql_name()}(x ORDER BY k))",
                node,
            )
        if len({bool(k.args.get("desc")) for k in keys}) != 1:
            raise unsupported(
                f"{node.sql_name()} ordered by keys of both directions is not "
                "supported (ORDER BY a, b or ORDER BY a DESC, b DESC)",
                node,
            )
        descending = bool(keys[0].args.get("desc")) != isinstance(node, exp.Last)
        return "arg_max" if descending else "arg_min"

    def _array_agg(self, node: exp.ArrayAgg) -> tuple[str, dict]:
        """ARRAY_AGG/LIST([DISTINCT] x ORDER BY k1 [DESC], …)'s kind and
        options: a group keeps the pairs `_ordered_pair` makes (a NULL x is
        an element, as DuckDB's), sorted, and its value is their x's in that
        order (reversed for descending keys), a tuple. Rows tied on every
        key: in the order of their x, where SQL takes any. Unordered, the
        elements come in an order no view can reproduce; DISTINCT is ordered
        by its argument (DuckDB's rule)."""
        order = node.this
        if not isinstance(order, exp.Order):
            raise unsupported(
                "ARRAY_AGG/LIST is supported with an ORDER BY, ARRAY_AGG(x "
                "ORDER BY k [DESC][, …]): unordered, its elements come in an "
                "arbitrary order",
                node,
            )
        keys = order.expressions
        if len({bool(k.args.get("desc")) for k in keys}) != 1:
            raise unsupported(
                "ARRAY_AGG ordered by keys of both directions is not supported "
                "(ORDER BY a, b or ORDER BY a DESC, b DESC)",
                node,
            )
        distinct = isinstance(order.this, exp.Distinct)
        if distinct and [k.this for k in keys] != order.this.expressions:
            raise unsupported(
                "ARRAY_AGG(DISTINCT x …) is supported ordered by x alone", node
            )
        kind = "array_agg_distinct" if distinct else "array_agg"
        return kind, {"descending": bool(keys[0].args.get("desc"))}

    def _ordered_pair(self, node: exp.First | exp.Last, kind: str) -> Op:
        """FIRST/LAST(x ORDER BY k1, …)'s argument (`kind`: `_ordered_pick`'s,
        whose extreme picks the first row; ARRAY_AGG's, whose sorted entries
        are read in order or reversed): ((k1 IS NULL) is f1,
        k1, …, x IS NULL), x), never NULL (FIRST keeps a NULL x, and NULL
        keys sort where the ORDER BY puts them, DuckDB: last). The flags
        rank a NULL key above the others where it comes last under MIN, or
        first under MAX; a NULL is never compared with a value. Rows tied
        on every key: the least (greatest) x, where SQL takes any. (FILTER:
        `_aggregate` makes the pair NULL where its condition is not TRUE.)"""
        order, last = node.this, isinstance(node, exp.Last)
        if kind.startswith("array_agg"):  # read from the least pair, or reversed
            descending = bool(order.expressions[0].args.get("desc"))
            kind = "arg_max" if descending else "arg_min"
        value_node = order.this
        if isinstance(value_node, exp.Distinct):  # ARRAY_AGG(DISTINCT x ORDER BY x)
            (value_node,) = value_node.expressions
        flags, keys = [], []
        for k in order.expressions:
            key = _sortable(self.fe.expr(k.this), "ordered by a key", node)
            nulls_first = bool(k.args.get("nulls_first")) != last
            flags.append(nulls_first if kind == "arg_max" else not nulls_first)
            keys.append(key)
        value = _sortable(self.fe.expr(value_node), "of a value", node)
        rest = [a for key, flag in zip(keys[1:], flags[1:]) for a in (key, Lit(flag))]
        return Op("ordered_pair", (keys[0], value, Lit(flags[0]), *rest))

    def _quantile(self, node: exp.AggFunc, arg) -> tuple[str, float]:
        """The kind and q of MEDIAN or QUANTILE_CONT/_DISC(x, q): as DuckDB,
        an interpolated DOUBLE (DECIMAL of a DECIMAL) over numbers, a value
        of the argument's for QUANTILE_DISC and MEDIAN of strings."""
        name = _QUANTILE_NAMES[type(node)]
        if isinstance(node, exp.Median):
            q = 0.5
        else:
            given = node.args.get("expression")
            if not (isinstance(given, exp.Literal) and not given.is_string):
                raise unsupported(f"{name} needs a constant q from 0 to 1", node)
            q = float(given.name)
            if not 0 <= q <= 1:
                raise sql_error(
                    f"{name}: q must be from 0 to 1, not {given.name}", node
                )
        numeric = self.fe.type_of(arg) in ("int", "float")
        if isinstance(node, exp.PercentileDisc) or (
            isinstance(node, exp.Median) and self.fe.type_of(arg) == "str"
        ):
            return "quantile_disc", q
        if not numeric:
            raise unsupported(
                f"{name} of a {self.fe.type_of(arg) or 'NULL'} is not supported "
                "(it interpolates between two values); QUANTILE_DISC picks one",
                node,
            )
        return "quantile_cont", q

    def _distinct_sum(self, arg, node) -> tuple:
        """SUM/AVG(DISTINCT x)'s argument and the digits its values are
        kept in, exactly: 0 for an integer (a BOOLEAN counts as 1 or 0), a
        DECIMAL's (summed as integers scaled by 10^digits), None for a
        DOUBLE (summed exactly in units of 2**-1074, ±inf counted)."""
        kind = self.fe.type_of(arg)
        if kind not in ("int", "float", "bool"):
            raise unsupported(f"{node.sql_name()} needs a numeric argument", node)
        if may_be_nonfinite(arg):
            # NaN is no key of a multiset: it equals no value, itself neither
            raise unsupported(
                f"{node.sql_name()}(DISTINCT …) of an argument that may be NaN or "
                "infinite (a division by what may be 0) is not supported",
                node,
            )
        if kind == "bool":  # its distinct values are summed as 1 and 0
            return Op("to_int", (arg,)), 0
        if kind == "int":
            return arg, 0
        return arg, self.fe.digits_of(arg) or None

    def _string_agg(self, node: exp.GroupConcat) -> tuple:
        """STRING_AGG([DISTINCT] x[, sep] ORDER BY x [DESC][, …]): its
        argument, its Aggregate's kind and options, and the ORDER BY key when
        it is another (`_keyed_pair`), else None. Rows that tie on x join
        the same text whatever the later keys, and `CAST(x AS VARCHAR)`
        ordered by x is x's values in x's order, cast (as STRING_AGG of a
        non-string casts); not with DISTINCT, whose ORDER BY DuckDB takes of
        the argument alone. Ordered by one other key, x's values follow it
        (rows tied on it in the order of their x, where SQL takes any); not
        ordered at all, they join in an order no view can reproduce."""
        order = node.this
        inner = order.this if isinstance(order, exp.Order) else order
        distinct = isinstance(inner, exp.Distinct)
        if distinct:
            if len(inner.expressions) != 1:
                raise unsupported("STRING_AGG(DISTINCT …) takes one expression", node)
            inner = inner.expressions[0]
        keys = order.expressions if isinstance(order, exp.Order) else []
        if distinct and len(keys) > 1:  # DuckDB: keys must be the argument
            keys = []
        if keys and not distinct and _text_cast_of(inner, keys[0].this):
            inner = keys[0].this
        by = None
        if keys and keys[0].this != inner and not distinct and len(keys) == 1:
            by = keys[0]
        elif not keys or keys[0].this != inner:
            raise unsupported(
                "STRING_AGG is supported ordered by its argument first, "
                "STRING_AGG(x, sep ORDER BY x [DESC][, …]), or by one other key, "
                "STRING_AGG(x, sep ORDER BY k [DESC]): unordered, rows join in an "
                "arbitrary order",
                node,
            )
        separator = node.args.get("separator")
        sep = self.fe.expr(separator) if separator is not None else Lit(",")
        if not (isinstance(sep, Lit) and isinstance(sep.value, str)):
            raise unsupported("STRING_AGG needs a string literal separator", node)
        kind = "string_agg_distinct" if distinct else "string_agg"
        descending = bool(keys[0].args.get("desc"))
        options = {"separator": sep.value, "descending": descending}
        if by is not None:
            options["keyed"] = True
        return inner, kind, options, by

    def _keyed_pair(self, by: exp.Ordered, value, node) -> Op:
        """STRING_AGG(x ORDER BY k)'s argument: ((k IS NULL, k), x), sorted
        by k with its NULLs where the ORDER BY puts them (DuckDB: last), NULL
        only where x is (the row is left out)."""
        key = self.fe.expr(by.this)
        if may_be_nonfinite(key):
            raise unsupported(
                "STRING_AGG ordered by a key that may be NaN (x / 0) is not "
                "supported",
                node,
            )
        # NULL keys after every other in the sorted pairs, read reversed for DESC
        nulls_high = bool(by.args.get("nulls_first")) == bool(by.args.get("desc"))
        return Op("keyed_pair", (key, value, Lit(nulls_high)))

    def _text_type(self, arg, node, keyed: bool) -> tuple[str, int | None]:
        """The type of STRING_AGG's argument, one whose VARCHAR text is
        DuckDB's, and a DECIMAL's scale (its text shows every digit of it;
        ordered by itself, not by another key). A DOUBLE's or REAL's digits
        are not known surely."""
        kind = self.fe.type_of(arg)
        if kind == "float" and not keyed and not is_single(self.fe, arg):
            digits = self.fe.digits_of(arg)
            if digits is not None:
                return kind, digits
        if kind not in ("str", "int", "bool", "date", "timestamp", "time"):
            named = "DOUBLE or DECIMAL" if kind == "float" else kind or "NULL"
            raise unsupported(
                f"STRING_AGG of a {named} is not supported (of strings, "
                "integers, booleans, dates, timestamps, times, and a DECIMAL "
                "ordered by itself)",
                node,
            )
        return kind, None

    def _computed(self, kind: str, arg, text: str, node, **options) -> AggRef:
        """An aggregate whose argument is computed on each row of the
        widened result (see `Aggregate.computed`)."""
        scale = self._exact_scale(arg) if kind in ("sum", "avg") else None
        scale = options.pop("scale", scale)
        # a float total keeps counts of ±inf and NaN beside its exact finite
        # part (render `_exact`), whether they come from x / 0 or the input
        ieee = kind in ("sum", "avg") and scale is None
        aggregate = Aggregate(
            kind,
            (),
            text,
            computed=arg,
            scale=scale,
            nonfinite=ieee,
            **options,
        )
        if aggregate not in self.aggregates:
            self.aggregates.append(aggregate)
            self.polys.append((None, node))
        return AggRef(self.aggregates.index(aggregate), text)

    def finish(self, nonnull: set[tuple[int, int]]) -> None:
        """Make the payload channels of COUNT/SUM/AVG, following SQL's NULL
        rules: a row whose argument is NULL is left out (its factors are 0 and
        a channel counts the rest); `nonnull`: the (atom, column) pairs that
        hold no NULL in any row the query takes (join columns, columns a
        filter compares), whose arguments pay nothing for this."""
        for i, (poly, node) in enumerate(self.polys):
            agg = self.aggregates[i]
            if poly is None or agg.kind not in ("count", "sum", "avg"):
                continue
            guards: dict[int, list] = {}
            for _, factors in poly:
                for atom, e in factors.items():
                    if _may_be_null(e, nonnull):
                        _check_null_safe(e, nonnull, node)
                        if e not in guards.setdefault(atom, []):
                            guards[atom].append(e)
            guard = tuple((a, tuple(es)) for a, es in sorted(guards.items()))
            nn = self._channel({}, guard)
            if agg.kind == "count":
                terms = ((1, nn),)
            else:
                terms = tuple((c, self._channel(f, guard)) for c, f in poly)
            self.aggregates[i] = replace(agg, terms=terms, nonnull=nn)

    def _channel(self, factors: dict, guards: tuple = ()) -> int:
        if not factors and not guards:
            return 0
        factor_items = tuple(sorted(factors.items()))
        scales = [self._exact_scale(e) for _, e in factor_items]
        if None in scales:
            scales = [None] * len(scales)
        channel = Channel(factor_items, tuple(scales), guards)
        if channel not in self.channels:
            self.channels.append(channel)
        return self.channels.index(channel) + 1

    def _exact_scale(self, e) -> int | None:
        """Decimal digits of an exact value of `e`, None if it may be inexact."""

        def column(ref) -> int | None:
            if not isinstance(ref, Ref):
                return None
            rel = self.fe.atom_relations[ref.atom]
            return rel.scales[ref.column] if rel.scales else None

        return exact_digits(e, column)


def _split_by_atom(e, node) -> dict:
    """COUNT(e)'s argument as per-atom parts that are NULL exactly when one of
    them is (`e` itself when it reads one table)."""
    atoms = {r.atom for r in refs(e)}
    if len(atoms) <= 1:
        return {atoms.pop(): e} if atoms else {}
    if any(
        isinstance(x, Op) and x.op in NULL_ABSORBING | {"and", "or", "not"}
        for x in _subexpressions(e)
    ):
        raise unsupported(
            "COUNT of an expression over several tables must be NULL-strict "
            "(no CASE, AND, OR, NOT)",
            node,
        )
    out: dict = {}
    for r in refs(e):
        out.setdefault(r.atom, [])
        if r not in out[r.atom]:
            out[r.atom].append(r)
    # One factor per atom; it is only tested for NULL, never multiplied.
    return {a: rs[0] if len(rs) == 1 else Op("add", tuple(rs)) for a, rs in out.items()}


def _subexpressions(e):
    yield e
    if isinstance(e, Op):
        for a in e.args:
            yield from _subexpressions(a)


def _null_tested(e):
    """`e` and the parts of it whose NULL-ness decides whether `e` is NULL
    (a CASE: its branches, not its conditions)."""
    yield e
    if isinstance(e, Op):
        parts = (*e.args[1:-1:2], e.args[-1]) if e.op == "case" else e.args
        for a in parts:
            yield from _null_tested(a)


def _may_be_null(e, nonnull: set) -> bool:
    """Whether `e` can be NULL in a row the query takes (conservative)."""
    if isinstance(e, Ref):
        return (e.atom, e.column) not in nonnull
    if isinstance(e, Lit):
        return e.value is None
    if isinstance(e, InnerTest):
        return False
    if isinstance(e, Op):
        if e.op == "isnull":
            return False
        if e.op == "case":  # conditions are TRUE or not; a branch may be NULL
            return any(_may_be_null(a, nonnull) for a in (*e.args[1::2], e.args[-1]))
        if e.op == "nullif":
            return True
        if e.op in ("coalesce", "greatest", "least"):
            return all(_may_be_null(a, nonnull) for a in e.args)
        return any(_may_be_null(a, nonnull) for a in e.args)
    return True


def _check_null_safe(e, nonnull: set, node) -> None:
    """Refuse an aggregate argument whose NULL test the generated code cannot
    make exactly: a NULL-able boolean (AND/OR/NOT are not NULL-strict).
    A CASE's conditions are only tested TRUE or not, as WHERE tests them
    (render `condition`): the NULL test reads its branches alone, so
    `COUNT(*) FILTER (WHERE NOT flag)` is taken."""
    for x in _null_tested(e):
        if (
            isinstance(x, Op)
            and x.op in ("and", "or", "not")
            and _may_be_null(x, nonnull)
        ):
            raise unsupported(
                "an aggregate of AND/OR/NOT over a column that may be NULL "
                "is not supported",
                node,
            )


def nonnull_leaves(e, negate: bool = False) -> set:
    """The columns a row's condition `e` being TRUE (FALSE with `negate`)
    proves non-NULL, as the generated code's `condition` tests them."""
    if isinstance(e, Op) and e.op == "not":
        return nonnull_leaves(e.args[0], not negate)
    if isinstance(e, Op) and e.op in ("and", "or"):
        joint = e.op if not negate else {"and": "or", "or": "and"}[e.op]
        parts = [nonnull_leaves(a, negate) for a in e.args]
        if joint == "or":
            return set.intersection(*parts)
        return set.union(*parts)
    if isinstance(e, Op) and e.op == "isnull":  # IS NOT NULL: TRUE says so
        return {(r.atom, r.column) for r in _plain_refs(e.args[0])} if negate else set()
    if isinstance(e, InnerTest):  # TRUE says little of its columns
        # but a scalar comparison that holds has a compared value: where
        # the test (NOT of it when `negated`) is TRUE, FALSE with `negate`
        compared = e.kind == "scalar" and e.negated == negate
        return {(r.atom, r.column) for r in refs(e.value)} if compared else set()
    return {(r.atom, r.column) for r in _plain_refs(e)}


def _plain_refs(e):
    """The column references of `e` that are not NULL when `e` is not
    (outside NOT IN/NOT EXISTS tests, CASE, COALESCE and the like)."""
    if isinstance(e, Ref):
        yield e
    elif isinstance(e, Op) and e.op not in NULL_ABSORBING:
        for a in e.args:
            yield from _plain_refs(a)


def _poly(e, node) -> list[tuple[int | float, dict]]:
    """`e` as a sum of products of per-atom factors: [(coefficient, {atom: expr})]."""
    atoms = {r.atom for r in refs(e)}
    if not atoms:
        if (
            isinstance(e, Lit)
            and isinstance(e.value, (int, float))
            and not isinstance(e.value, bool)
        ):
            return [(e.value, {})]
        raise unsupported("aggregate of a non-numeric constant", node)
    if len(atoms) == 1:
        return [(1, {atoms.pop(): e})]
    if isinstance(e, Op) and e.op in ("add", "sub"):
        left, right = (_poly(a, node) for a in e.args)
        sign = 1 if e.op == "add" else -1
        return left + [(sign * c, f) for c, f in right]
    if isinstance(e, Op) and e.op == "neg":
        return [(-c, f) for c, f in _poly(e.args[0], node)]
    if isinstance(e, Op) and e.op == "mul":
        out = []
        for c1, f1 in _poly(e.args[0], node):
            for c2, f2 in _poly(e.args[1], node):
                merged = dict(f1)
                for atom, factor in f2.items():
                    merged[atom] = (
                        Op("mul", (merged[atom], factor)) if atom in merged else factor
                    )
                out.append((c1 * c2, merged))
        return out
    raise unsupported(
        "an aggregate over several tables must be a sum of products of "
        "per-table expressions (+, -, *)",
        node,
    )


class _OverGroups:
    """What a scalar converter (`expressions.CONVERTERS`) asks of the
    frontend, answered over group keys and aggregates: the operands of
    COALESCE(SUM(x), 0) or CASE WHEN COUNT(*) > 1 … are converted by `g`."""

    def __init__(self, g):
        self.expr = self.column = g.convert
        self.type_of = g.type_of
        self.digits_of = g.digits_of
        self.single_leaf = g.single_leaf
        self.int_bits = g.int_bits


def _grouped_binary(op: str) -> Callable:
    return lambda g, node: Op(op, (g.convert(node.this), g.convert(node.expression)))


def _grouped_arith(op: str) -> Callable:
    """`op` over groups; REAL arithmetic where DuckDB's is, SUM(x)::REAL / n."""

    def convert(g, node):
        left, right = g.convert(node.this), g.convert(node.expression)
        single = single_arith(_OverGroups(g), op, left, right)
        return Op(op, (left, right)) if single is None else single

    return convert


def _grouped_comparison(op: str) -> Callable:
    def convert(g, node):
        left, right = g.convert(node.this), g.convert(node.expression)
        return Op(op, coerce_literals(left, right, g.type_of, node))

    return convert


_GROUPED_CONVERTERS: dict[type, Callable] = {
    exp.Paren: lambda g, node: g.convert(node.this),
    # + and - as over rows (`expressions._shift`): MAX(d) - MIN(d) in days,
    # MAX(d) + INTERVAL 1 DAY
    exp.Add: lambda g, node: CONVERTERS[exp.Add](_OverGroups(g), node),
    exp.Sub: lambda g, node: CONVERTERS[exp.Sub](_OverGroups(g), node),
    exp.Mul: _grouped_arith("mul"),
    exp.Div: _grouped_arith("div"),
    exp.Mod: _grouped_arith("mod"),
    exp.EQ: _grouped_comparison("eq"),
    exp.NEQ: _grouped_comparison("ne"),
    exp.LT: _grouped_comparison("lt"),
    exp.LTE: _grouped_comparison("le"),
    exp.GT: _grouped_comparison("gt"),
    exp.GTE: _grouped_comparison("ge"),
    exp.And: _grouped_binary("and"),
    exp.Or: _grouped_binary("or"),
    exp.Not: lambda g, node: Op("not", (g.convert(node.this),)),
    exp.Neg: lambda g, node: Op("neg", (g.convert(node.this),)),
}


def _text_cast_of(arg: exp.Expression, key: exp.Expression) -> bool:
    """Whether `arg` is `CAST(key AS VARCHAR)` (or TEXT, STRING)."""
    return (
        isinstance(arg, exp.Cast)
        and arg.this == key
        and arg.to.is_type(*exp.DataType.TEXT_TYPES)
        and not arg.to.expressions  # VARCHAR(n) cuts: not the key's text
    )


def _sortable(e, what: str, node: exp.Expression):
    """`e`, refused where it may be NaN (x / 0): a sorted multiset would
    misplace it (`what`: how the message names it)."""
    if may_be_nonfinite(e):
        raise unsupported(
            f"{node.sql_name()} {what} that may be NaN (x / 0) is not supported", node
        )
    return e
