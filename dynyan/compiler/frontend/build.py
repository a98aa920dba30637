"""One SELECT (its subqueries already inner views) -> a `Query`.

Columns equated across atoms by `=` become one variable; a condition on one
atom becomes that atom's local filter; `<`, `<=`, `>`, `>=` and `<>` between
two atoms become θ-predicates (edges of the join tree); other conditions
across atoms are checked on the rows of the widened result (`residual`).
"""

from __future__ import annotations

import datetime
from dataclasses import replace

from sqlglot import exp

from ..ir import (
    COMPARISONS,
    Atom,
    Lit,
    Op,
    Output,
    Predicate,
    Query,
    Ref,
    Relation,
    InnerTest,
    Var,
    ViewColumn,
    conjuncts,
    exact_digits,
    reads_a_view,
    refs,
)
from ...errors import UnsupportedQueryError
from .aggregates import GroupKey, Grouping, is_grouped, nonnull_leaves
from .diagnostics import DIALECT, sql_error, unsupported
from .disjunctions import factor_disjunctions
from .expressions import CONVERTERS, null_safe_pair
from .passes.outer_joins import PADDED
from .passes.unnest_subqueries import INNER
from .statements import SUPPORTED_TYPES, UNREAD, collation_refusal
from .types import (
    check_comparable,
    check_condition,
    infer_type,
    lit_type,
    to_timestamp,
    typed,
)

# The table a SELECT without FROM reads: one row, held by the View from the
# start like a VALUES table's (passes/values_tables.py), never updated.
ONE_ROW = Relation("__one_row", ("__one",), ("int",), (None,), rows=((1,),))


class SelectBuilder:
    """Builds the `Query` of one qualified SELECT whose FROM holds only
    tables (declared or virtual: the results of its inner views)."""

    def __init__(self, relations: dict[str, Relation], tests=()):
        self.relations = relations
        self.tests = list(tests)  # PendingTests of the unnested subqueries
        self.aliases: dict[str, int] = {}  # alias -> atom index
        self.atom_relations: list[Relation] = []
        self.inner_view: Relation | None = None  # the view `__inner.kN` reads
        self.padded: set[int] = set()  # atoms of NULL-padded tables (Atom.padded)

    def build(self, select: exp.Select) -> Query:
        self._collect_atoms(select)
        conditions = self._conditions(select)
        distinct = select.args.get("distinct") is not None
        return self._assemble(select, conditions, distinct)

    def _collect_atoms(self, select: exp.Select) -> None:
        from_ = select.args.get("from_") or select.args.get("from")
        if from_ is None:  # `SELECT 1 AS x`: its items over one row, as in SQL
            self.relations.setdefault(ONE_ROW.name, ONE_ROW)
            from_ = exp.From(this=exp.to_table(ONE_ROW.name))
            select.set("from_", from_)
        sources = [from_.this]
        for join in select.args.get("joins") or []:
            side, kind = (join.side or "").upper(), (join.kind or "").upper()
            if side or kind not in ("", "INNER", "CROSS"):
                raise unsupported(
                    f"{side or kind} JOIN is not supported (inner joins only)", join
                )
            if join.args.get("using"):
                raise unsupported("JOIN … USING is not supported; write ON", join)
            sources.append(join.this)
        for source in sources:
            if not isinstance(source, exp.Table):
                raise unsupported("only tables may appear in FROM", source)
            alias = (source.alias or source.name).lower()
            if alias in self.aliases:
                raise sql_error(f"alias {alias} is used twice in FROM", source)
            if source.meta.get(PADDED):
                self.padded.add(len(self.atom_relations))
            self.aliases[alias] = len(self.atom_relations)
            self.atom_relations.append(self.relations[source.name.lower()])

    def _conditions(self, select: exp.Select) -> list:
        conds = []
        where = select.args.get("where")
        if where is not None:
            conds.append(self.condition(where.this))
        conds += [self._inner_test(t) for t in self.tests]
        for join in select.args.get("joins") or []:
            if join.args.get("on") is not None:
                conds.append(self.condition(join.args["on"]))
        return factor_disjunctions([c for cond in conds for c in conjuncts(cond)])

    # -- expressions --

    def expr(self, node: exp.Expression):
        convert = CONVERTERS.get(type(node))
        if convert is None:
            if isinstance(node, exp.AggFunc):
                raise unsupported(
                    "an aggregate is not allowed in WHERE, ON or GROUP BY "
                    "(filter groups with HAVING)",
                    node,
                )
            if isinstance(node, (exp.Exists, exp.Subquery, exp.Select)) or (
                isinstance(node, exp.In) and node.args.get("query") is not None
            ):
                raise unsupported(
                    "a subquery nested in a correlated subquery's condition is "
                    "supported where it reads only its own tables and those of "
                    "the query just outside it (not of a query further out, as "
                    "NOT EXISTS (… NOT EXISTS (… = outer.x)) for 'all of')",
                    node,
                )
            what = (  # a function by its SQL name (TO_CHAR), else its kind
                node.sql_name()
                if isinstance(node, exp.Func)
                else f"{type(node).__name__} expressions"
            )
            raise unsupported(f"{what} is not supported", node)
        ir = convert(self, node)
        if isinstance(ir, Op):
            typed(self.type_of, ir, node)
        return ir

    def condition(self, node: exp.Expression):
        """`expr(node)` for a WHERE, ON or HAVING condition, which must be
        true or false (DuckDB also reads a number as one, not a string)."""
        ir = self.expr(node)
        check_condition(self.type_of(ir), ir, node)
        return ir

    def _inner_test(self, test) -> InnerTest:
        """A PendingTest of the unnest pass as an `InnerTest` (over columns of
        any atoms yet: `_assemble` moves it onto the one that holds them)."""
        view = self.relations[test.view]
        keys = tuple(self.expr(k) for k in test.keys)
        value = condition = None
        if test.value is not None:
            value = self.expr(test.value)
            result = view.types[len(keys)]
            if result == "timestamp" and self.type_of(value) == "date":
                value = to_timestamp(value)  # DuckDB compares its midnight
            elif result == "date" and self.type_of(value) == "timestamp":
                raise unsupported(
                    "a TIMESTAMP compared with a DATE of the subquery: write that "
                    "DATE as CAST(… AS TIMESTAMP)",
                    test.node,
                )
            typed(
                lambda e: check_comparable(e, self.type_of(e), test.view, result),
                value,
                test.node,
            )
        if test.condition is not None:
            self.inner_view = view
            try:
                condition = self.condition(test.condition)
            finally:
                self.inner_view = None
        return InnerTest(
            test.kind,
            test.view,
            keys,
            value,
            test.op,
            test.default,
            condition,
            test.negated,
            self.relations[test.view].guard,
            tuple(test.null_safe) if any(test.null_safe) else (),
        )

    def column(self, node: exp.Column) -> Ref | ViewColumn:
        if node.table.lower() == INNER:
            return ViewColumn(int(node.name[1:]) - 1)
        atom = self.aliases[node.table.lower()]
        rel = self.atom_relations[atom]
        name = node.name.lower()
        column = rel.columns.index(name)
        kind = rel.types[column] if column < len(rel.types) else None
        if kind and kind.startswith(UNREAD):
            raise unsupported(
                collation_refusal(f"{rel.name}.{name}", kind)
                or f"column {rel.name}.{name} has type {kind.removeprefix(UNREAD)}, "
                f"which a view holds only in columns the query does not read; "
                f"{SUPPORTED_TYPES}",
                node,
            )
        return Ref(atom, column, f"{node.table.lower()}.{name}")

    def type_of(self, e) -> str | None:
        """The Python type of an expression's value (None for NULL); raises
        `_ExprError` for operands that do not fit (see `_op_type`)."""
        return infer_type(e, self.leaf_type)

    def single_leaf(self, e) -> bool:
        """Whether leaf `e` is a REAL (`expressions.is_single`): a REAL column."""
        return isinstance(e, Ref) and e.column in self.atom_relations[e.atom].singles

    def int_bits(self, e) -> int | None:
        """The bits of leaf `e`'s signed INTEGER type (a table's column; a
        subquery's view's: not known, None)."""
        if isinstance(e, Ref):
            bits = self.atom_relations[e.atom].bits
            return bits[e.column] if e.column < len(bits) else None
        return None

    def digits_of(self, e) -> int | None:
        """Decimal digits `e` holds exactly (a DECIMAL's scale), None for a
        DOUBLE."""
        return exact_digits(e, self._leaf_digits)

    def _leaf_digits(self, e) -> int | None:
        if isinstance(e, Ref):
            rel = self.atom_relations[e.atom]
            return rel.scales[e.column] if rel.scales else None
        if isinstance(e, ViewColumn):
            scales = self.inner_view.scales
            return scales[e.index] if scales else None
        return None

    def leaf_type(self, e) -> str | None:
        if isinstance(e, Ref):
            return self.atom_relations[e.atom].types[e.column]
        if isinstance(e, ViewColumn):
            return self.inner_view.types[e.index]
        return lit_type(e)

    # -- assembling the GCQ --

    def _assemble(self, select: exp.Select, conditions: list, distinct: bool) -> Query:
        n = len(self.atom_relations)
        local: list[list] = [[] for _ in range(n)]
        join_pairs: list[tuple[Ref, Ref]] = []
        null_safe: list[tuple[Ref, Ref]] = []  # IS NOT DISTINCT FROM: NULL joins NULL
        theta: list = []
        for cond in conditions:
            atoms = sorted({r.atom for r in refs(cond)})
            pair = null_safe_pair(cond)
            if len(atoms) <= 1:
                local[atoms[0] if atoms else 0].append(cond)
            elif pair is not None:
                null_safe.append(pair)
            elif (
                isinstance(cond, Op)
                and cond.op == "eq"
                and all(isinstance(a, Ref) for a in cond.args)
            ):
                join_pairs.append(cond.args)
            else:
                theta.append(cond)

        # Variables: equivalence classes of columns equated across atoms.
        parent: dict[tuple[int, int], tuple[int, int]] = {}

        def find(k):
            while parent.get(k, k) != k:
                k = parent[k]
            return k

        for a, b in join_pairs + null_safe:
            ra, rb = find((a.atom, a.column)), find((b.atom, b.column))
            if ra != rb:
                parent[max(ra, rb)] = min(ra, rb)

        grouping = Grouping(self, select) if is_grouped(select) else None
        outputs_sql = select.expressions
        if grouping is None:
            converted = [self.expr(e.unalias()) for e in outputs_sql]
            output_refs = [r for ir in converted for r in refs(ir)]
        else:
            converted = [grouping.convert(e.unalias()) for e in outputs_sql]
            having = select.args.get("having")
            having = grouping.condition(having.this) if having is not None else None
            output_refs = grouping.column_keys()
        theta_refs = [r for c in theta for r in refs(c)]
        used = {(a.atom, a.column) for p in join_pairs + null_safe for a in p}
        used |= {(r.atom, r.column) for r in output_refs + theta_refs}

        classes: dict[tuple[int, int], list[tuple[int, int]]] = {}
        for key in sorted(used):
            classes.setdefault(find(key), []).append(key)
        names = self._var_names(classes)
        var_of = {m: names[root] for root, members in classes.items() for m in members}
        # a variable whose every join is null-safe: its NULLs join each other
        strict_roots = {find((a.atom, a.column)) for p in join_pairs for a in p}
        null_safe_vars = frozenset(
            names[find((a.atom, a.column))]
            for p in null_safe
            for a in p
            if find((a.atom, a.column)) not in strict_roots
        )
        derived = grouping.derived_vars(set(var_of.values())) if grouping else {}

        predicates, placed, residual = [], [], []
        joined: list[list] = [[] for _ in range(n)]  # equalities of expressions
        taken = set(var_of.values()) | set(derived)
        for cond in theta:
            pred = self._predicate(cond, var_of)
            cond_vars = (
                pred.vars if pred else {var_of[(r.atom, r.column)] for r in refs(cond)}
            )
            home = next(
                (
                    i
                    for i in range(n)
                    if cond_vars <= {v for (a, _), v in var_of.items() if a == i}
                ),
                None,
            )
            if home is not None:  # every variable lives in one atom: a local filter
                local[home].append(self._localize(cond, home, var_of))
            elif pred is not None and not _shift_beside_a_join(pred, cond, var_of):
                predicates.append(pred)
                placed.append(cond)
            elif (
                pred is None
                and (keyed := _expression_join(cond, var_of, joined, taken)) is not None
            ):
                for atom, name, side in keyed:
                    joined[atom].append((name, side))
            else:  # fits no tree edge: checked on each row of the widened result
                if isinstance(cond, InnerTest):
                    atoms = sorted({r.atom for r in refs(cond)})
                    names = ", ".join(map(self._alias, atoms))
                    raise UnsupportedQueryError(
                        "a correlated subquery that compares columns of several "
                        f"tables around it ({names}) is not supported: its "
                        "correlation must read one of them (and columns that "
                        "joins equate to it)"
                    )
                residual.append(_to_vars(cond, var_of))
        if any(joined):
            # A θ-predicate both of whose variables one atom holds once a
            # join on an expression computed one of them there fits no edge.
            held = [_held(var_of, {atom}, joined) for atom in range(n)]
            edges, predicates = list(zip(predicates, placed)), []
            for pred, cond in edges:
                if any(pred.vars <= h for h in held):
                    residual.append(_to_vars(cond, var_of))
                else:
                    predicates.append(pred)

        atoms = []
        for i, rel in enumerate(self.atom_relations):
            alias = next(a for a, j in self.aliases.items() if j == i)
            variables = tuple(var_of.get((i, c)) for c in range(len(rel.columns)))
            filters = list(local[i])
            # A variable bound twice in one atom means those columns must be equal.
            first: dict[str, int] = {}
            for c, v in enumerate(variables):
                if v is None:
                    continue
                if v in first:
                    a, b = self._ref(i, first[v]), self._ref(i, c)
                    same = Op("eq", (a, b))
                    if v in null_safe_vars:  # NULL is NULL's equal there
                        nulls = Op("and", (Op("isnull", (a,)), Op("isnull", (b,))))
                        same = Op("coalesce", (same, nulls))
                    filters.append(same)
                else:
                    first[v] = c
            for f in filters:
                self._check_types(f)
            mine = tuple((v, e) for v, (a, e) in derived.items() if a == i)
            mine += tuple(joined[i])
            atoms.append(
                Atom(alias, rel.name, variables, tuple(filters), mine, i in self.padded)
            )

        if grouping is not None:
            # SQL NULL: columns no taken row holds a NULL in (declared NOT
            # NULL; NULL never joins nor satisfies a comparison).
            nonnull = {
                key
                for p in join_pairs + null_safe
                for r in p
                if var_of[key := (r.atom, r.column)] not in null_safe_vars
            }
            nonnull |= {  # declared NOT NULL (the module refuses a None there)
                (i, c)
                for i, rel in enumerate(self.atom_relations)
                for c in range(len(rel.columns))
                if rel.is_notnull(c)
            }
            nonnull |= {
                key for key, v in var_of.items() if any(v in p.vars for p in predicates)
            }
            for i, atom in enumerate(atoms):
                for f in atom.filters:
                    nonnull |= nonnull_leaves(f)
            # a padded row holds NULL in every column of its table
            nonnull = {key for key in nonnull if key[0] not in self.padded}
            grouping.finish(nonnull)
        group_names = grouping.key_names(var_of, derived) if grouping else {}
        outputs = [  # every SELECT item has its alias (passes.name_outputs)
            Output(e.alias_or_name.lower(), _to_vars(ir, var_of, group_names))
            for e, ir in zip(outputs_sql, converted)
        ]

        relations = tuple(dict.fromkeys(self.atom_relations))
        extra = {}
        if grouping is not None:
            if having is not None:
                having = _to_vars(having, var_of, group_names)
            args = grouping.arg_names(var_of, derived)
            extra = dict(
                grouped=True,
                group_vars=tuple(dict.fromkeys(group_names.values())),
                channels=tuple(grouping.channels),
                aggregates=tuple(
                    (
                        replace(a, arg=args[a.arg])
                        if a.arg
                        else (
                            replace(a, computed=_to_vars(a.computed, var_of))
                            if a.computed is not None
                            else a
                        )
                    )
                    for a in grouping.aggregates
                ),
                having=having,
            )
        return Query(
            relations,
            tuple(atoms),
            tuple(predicates),
            tuple(outputs),
            distinct,
            select.sql(dialect=DIALECT, pretty=True),
            residual=tuple(residual),
            null_safe=null_safe_vars,
            **extra,
        )

    def _ref(self, atom: int, column: int) -> Ref:
        column_name = self.atom_relations[atom].columns[column]
        return Ref(atom, column, f"{self._alias(atom)}.{column_name}")

    def _alias(self, atom: int) -> str:
        return next(a for a, j in self.aliases.items() if j == atom)

    def _var_names(self, classes) -> dict:
        """Name each variable after its first column; qualify names that collide."""
        names: dict = {}
        taken: set[str] = set()
        for root in sorted(classes):
            atom, column = root
            base = self.atom_relations[atom].columns[column]
            name = base
            if name in taken:
                alias = next(a for a, j in self.aliases.items() if j == atom)
                name = f"{alias}_{base}"
            k = 2
            while name in taken:
                name, k = f"{base}_{k}", k + 1
            taken.add(name)
            names[root] = name
        return names

    def _check_types(self, e) -> None:
        """Refuse operands that do not fit, e.g. values Python cannot compare
        (`expr` has checked every converted expression already)."""
        self.type_of(e)

    def _predicate(self, cond, var_of) -> Predicate | None:
        """`a op b ± k` across two tables (op one of <> < <= > >=), in the
        normal form of Predicate; None for other conditions (OR, expressions),
        which fit no edge."""
        self._check_types(cond)
        if not isinstance(cond, Op) or cond.op not in COMPARISONS:
            return None
        sides = [_affine(a) for a in cond.args]
        if cond.op == "eq" or None in sides:
            return None
        (left, k_left), (right, k_right) = sides
        return Predicate(
            var_of[(left.atom, left.column)],
            cond.op,
            var_of[(right.atom, right.column)],
            _offset(k_right, k_left),
        )

    def _localize(self, cond, home: int, var_of):
        """`cond` over the columns of atom `home` that hold its variables."""
        cols = {v: c for (a, c), v in sorted(var_of.items()) if a == home}
        if isinstance(cond, Ref):
            return self._ref(home, cols[var_of[(cond.atom, cond.column)]])
        if isinstance(cond, InnerTest):
            return cond.with_args(self._localize(a, home, var_of) for a in cond.args)
        if isinstance(cond, Op):
            return Op(
                cond.op, tuple(self._localize(a, home, var_of) for a in cond.args)
            )
        return cond


def _affine(e) -> tuple[Ref, int | float | datetime.timedelta] | None:
    """`column`, `column ± constant` or `constant + column` as (column,
    constant); a DATE or TIMESTAMP column ± INTERVAL (or ± n days) as
    (column, timedelta)."""
    if isinstance(e, Ref):
        return e, 0
    if isinstance(e, Op) and e.op in _SHIFT_SECONDS and isinstance(e.args[0], Ref):
        amount = e.args[1]
        if isinstance(amount, Lit) and type(amount.value) is int:
            seconds = amount.value * _SHIFT_SECONDS[e.op]
            return e.args[0], datetime.timedelta(seconds=seconds)
    if isinstance(e, Op) and e.op in ("add", "sub") and len(e.args) == 2:
        a, b = e.args
        number = (int, float)
        if isinstance(a, Ref) and isinstance(b, Lit) and isinstance(b.value, number):
            return a, b.value if e.op == "add" else -b.value
        if (
            e.op == "add"
            and isinstance(b, Ref)
            and isinstance(a, Lit)
            and isinstance(a.value, number)
        ):
            return b, a.value
    return None


_SHIFT_SECONDS = {"add_days": 86400, "add_seconds": 1}


def _shift_beside_a_join(pred: Predicate, cond, var_of) -> bool:
    """Whether `pred` shifts a DATE or TIMESTAMP (`o.d > c.d + INTERVAL 30
    DAY`) between two atoms an equality joins already: checked on their
    joined rows instead (a range index per join key costs more time and
    memory where a key has a few rows; BENCHMARKS.md "ORs of cases, joins on
    expressions, shifted dates"). Without such an equality it is an edge."""
    if not isinstance(pred.offset, datetime.timedelta):
        return False
    a, b = (_held(var_of, {r.atom for r in refs(side)}) for side in cond.args)
    return bool((a & b) - pred.vars)


def _held(var_of, atoms: set[int], joined=None) -> set[str]:
    """The variables the columns of `atoms` bind, and those a join on an
    expression computes there (`joined`, per atom)."""
    out = {v for (i, _), v in var_of.items() if i in atoms}
    for atom in atoms if joined else ():
        out |= {v for v, _ in joined[atom]}
    return out


def _offset(right, left):
    """`right - left` of two offsets, where 0 stands for no shift of a date."""
    if isinstance(right, datetime.timedelta) and not left:
        return right
    if isinstance(left, datetime.timedelta) and not right:
        return -left
    return right - left


def _expression_join(cond, var_of, joined, taken) -> list | None:
    """`x = y` where each side reads one atom (different ones) and one side is
    an expression (`r.a = s.b + 1`, `lower(r.c) = s.f`): a join on a variable
    each such atom computes from its row — (atom, variable, expression) per
    computed side. None where the condition is no such equality, or where an
    atom would bind the variable twice (left to the residual check)."""
    if not (isinstance(cond, Op) and cond.op == "eq" and len(cond.args) == 2):
        return None
    sides = []
    for side in cond.args:
        atoms = {r.atom for r in refs(side)}
        if len(atoms) != 1 or reads_a_view(side):
            return None
        sides.append((atoms.pop(), side))
    (a, _), (b, _) = sides
    if a == b:
        return None
    plain = [s for _, s in sides if isinstance(s, Ref)]
    if plain:
        name = var_of[(plain[0].atom, plain[0].column)]
    else:
        base, k = "joined", 1
        while (name := f"{base}{k}") in taken:
            k += 1
    out = [(atom, name, side) for atom, side in sides if not isinstance(side, Ref)]
    if any(name in _held(var_of, {atom}, joined) for atom, _, _ in out):
        return None
    taken.add(name)
    return out


def _to_vars(e, var_of, group_names=None):
    """Rewrite column references (and group-key placeholders) into variables."""
    if isinstance(e, Ref):
        return Var(var_of[(e.atom, e.column)])
    if isinstance(e, GroupKey):
        return Var(group_names[e.index])
    if isinstance(e, Op):
        return Op(e.op, tuple(_to_vars(a, var_of, group_names) for a in e.args))
    return e
