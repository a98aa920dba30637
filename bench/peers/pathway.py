"""The query as a Pathway dataflow."""

from __future__ import annotations

import datetime
import importlib.util
import re
from collections.abc import Iterator

from dynyan.compiler.ir import (
    AggRef,
    InnerTest,
    Lit,
    Op,
    Query,
    Ref,
    Var,
    refs,
    var_refs,
)
from dynyan.compiler import functions
from dynyan.compiler.render import Expressions

from .common import base_relations, has_inner_test, require_plain_query


def pathway_available() -> str | None:
    """None if Pathway can be used here, else the reason it cannot."""
    if importlib.util.find_spec("pathway") is None:
        return "pathway is not installed (pip install -e '.[peers]')"
    return None


class PathwayEngine:
    """The query as a Pathway dataflow (joins chained in a connected order).

    Input: one pandas DataFrame per relation, built in ``prepare`` (outside
    timing) with the row id as index, ``__time__`` = 2 × batch number and
    ``__diff__`` = ±1. DATE values travel as ISO strings (ordered the same)
    and come back as dates. ``run_pull`` builds the graph, runs it to the end
    and returns the final rows; ``run_push`` subscribes a sink to every
    change and records when each timestamp closes.
    """

    def __init__(self, query: Query):
        self.query = query
        self.frames: dict = {}
        self.nullable: dict[str, set[int]] = {}  # relation -> columns with a NULL
        self._optional_cols: set[str] = set()
        self.time_ends: list[float] = []

    def prepare(self, events, ids, batch: int) -> None:
        import pandas as pd

        rels = base_relations(self.query)
        per_rel: dict[str, tuple[list, list, list, list]] = {
            r.name: ([], [], [], []) for r in rels
        }
        dates = {
            r.name: [i for i, t in enumerate(r.types) if t == "date"] for r in rels
        }
        for i, (rel, op, row) in enumerate(events):
            rows, index, times, diffs = per_rel[rel]
            if dates[rel]:
                row = list(row)
                for c in dates[rel]:
                    if row[c] is not None:
                        row[c] = row[c].isoformat()
            rows.append(row)
            index.append(ids[i])
            times.append(2 * (i // batch))
            diffs.append(op)
        self.frames = {}
        # columns holding a NULL: Optional in the schema, values kept as the
        # Python objects (pandas would turn an int column with None into NaN
        # floats)
        self.nullable = {}
        for rel in rels:
            rows, index, times, diffs = per_rel[rel.name]
            names = [f"c{i}" for i in range(len(rel.columns))]
            nullable = {
                i
                for i in range(len(rel.columns))
                if any(row[i] is None for row in rows)
            }
            self.nullable[rel.name] = nullable
            df = pd.DataFrame.from_records(
                rows, columns=names, index=pd.Index(index, dtype="int64")
            )
            for i, (c, t) in enumerate(zip(names, rel.types)):
                if i in nullable:
                    df[c] = pd.Series(
                        [row[i] for row in rows], index=df.index, dtype=object
                    )
                elif t == "int":
                    df[c] = df[c].astype("int64")
                elif t == "float":
                    df[c] = df[c].astype("float64")
            df["__time__"] = pd.Series(times, index=df.index, dtype="int64")
            df["__diff__"] = pd.Series(diffs, index=df.index, dtype="int64")
            self.frames[rel.name] = df

    def _graph(self):
        import pathway as pw

        pw.internals.parse_graph.G.clear()
        types = {"int": int, "float": float, "str": str, "date": str}
        tables = {}
        for rel in base_relations(self.query):
            nullable = self.nullable.get(rel.name, ())
            schema = pw.schema_from_types(
                **{
                    f"c{i}": types[t] | None if i in nullable else types[t]
                    for i, t in enumerate(rel.types)
                }
            )
            tables[rel.name] = pw.debug.table_from_pandas(
                self.frames[rel.name], schema=schema, _new_universe=True
            )
        self._uses: dict[str, int] = {}
        require_plain_query(self.query, "Pathway adapter")
        return self._build(self.query, tables)

    def _build(self, q: Query, tables: dict):
        """The table of query `q`'s result (columns o0, o1, …): joins in a
        connected order, filters, then grouping; subqueries first."""
        import pathway as pw

        virtual = {}
        for name, sub in getattr(q, "subqueries", ()):
            virtual[name] = self._build(sub, tables)
        atom_tables = []
        col_of: dict[str, str] = {}  # variable -> column name in the joined table
        self._types = {}
        # joined-table columns that may hold a NULL (Optional in Pathway)
        self._optional_cols: set[str] = set()
        for k, atom in enumerate(q.atoms):
            rel = q.relation(atom.relation)
            if atom.relation in virtual:
                t = virtual[atom.relation]
                t = t.select(
                    **{f"a{k}_c{i}": t[f"o{i}"] for i in range(len(rel.columns))}
                )
            else:
                t = tables[atom.relation]
                self._uses[atom.relation] = self._uses.get(atom.relation, 0) + 1
                if self._uses[atom.relation] > 1:
                    t = t.copy()
                t = t.select(
                    **{f"a{k}_c{i}": t[f"c{i}"] for i in range(len(rel.columns))}
                )
                # SQL: NULL never joins (nor satisfies a comparison), while
                # Pathway's join matches None with None: drop such rows
                # first, and make the column non-optional for the joins
                for i in sorted(self.nullable.get(atom.relation, ())):
                    v = atom.variables[i]
                    if v is not None and (
                        sum(v in a.vars for a in q.atoms) > 1
                        or any(v in p.vars for p in q.predicates)
                    ):
                        col = f"a{k}_c{i}"
                        t = t.filter(t[col].is_not_none())
                        t = t.with_columns(**{col: pw.unwrap(t[col])})
                    else:
                        self._optional_cols.add(f"a{k}_c{i}")
            for f in atom.filters:
                if isinstance(f, InnerTest):
                    inner = virtual[f.view]
                    conds = [
                        t[f"a{k}_c{r.column}"] == inner[f"o{i}"]
                        for i, r in enumerate(f.keys)
                    ]
                    t = (
                        t.join_left(inner, *conds)
                        .select(*pw.left, _anti=pw.right.o0)
                        .filter(pw.this._anti.is_none())
                        .without(pw.this._anti)
                    )
                elif has_inner_test(f):
                    raise NotImplementedError(
                        "anti-join inside an expression (Pathway adapter)"
                    )
                else:
                    t = t.filter(self._expr(f, t, rel, k))
            for d, (v, e) in enumerate(atom.derived):
                t = t.with_columns(**{f"a{k}_d{d}": self._value(e, t, rel, k)})
            atom_tables.append(t)
        order = [0]
        while len(order) < len(q.atoms):
            bound = {v for k in order for v in q.atoms[k].vars}
            rest = [j for j in range(len(q.atoms)) if j not in order]
            order.append(
                max(rest, key=lambda j: (len(set(q.atoms[j].vars) & bound), -j))
            )

        def atom_cols(j):
            a = q.atoms[j]
            cols = [(v, f"a{j}_c{c}") for c, v in enumerate(a.variables)]
            cols += [(v, f"a{j}_d{d}") for d, (v, _) in enumerate(a.derived)]
            return [(v, c) for v, c in cols if v is not None]

        acc = atom_tables[order[0]]
        for v, c in atom_cols(order[0]):
            col_of.setdefault(v, c)
        for j in order[1:]:
            t = atom_tables[j]
            conds = []
            for v, c in atom_cols(j):
                if v in col_of:
                    conds.append(acc[col_of[v]] == t[c])
            if conds:
                acc = acc.join(t, *conds).select(*pw.left, *pw.right)
            else:  # cartesian product: join on a constant
                acc = (
                    acc.with_columns(_one=1)
                    .join(t.with_columns(_one=1), pw.left._one == pw.right._one)
                    .select(*pw.left.without("_one"), *pw.right.without("_one"))
                )
            for v, c in atom_cols(j):
                col_of.setdefault(v, c)
        self._q = q
        for p in q.predicates:
            acc = acc.filter(self._predicate(p, acc, col_of))
        for cond in getattr(q, "residual", ()):
            acc = acc.filter(self._out(cond, acc, col_of, result_type=bool))
        if not q.grouped:
            outs = {}
            for i, o in enumerate(q.outputs):
                outs[f"o{i}"] = self._out(o.expr, acc, col_of)
            result = acc.select(**outs)
        else:
            result = self._aggregate(q, acc, col_of)
        if q.distinct:
            names = [f"o{i}" for i in range(len(q.outputs))]
            result = result.groupby(*[pw.this[c] for c in names]).reduce(
                *[pw.this[c] for c in names]
            )
        return result

    def _aggregate(self, q, acc, col_of):
        """GROUP BY: per-row payload channels, Pathway reducers, then the
        SELECT list (and HAVING) over group variables and aggregates."""
        import pathway as pw

        refcol = {}
        for k, a in enumerate(q.atoms):
            for c in range(len(a.variables)):
                refcol[(k, c)] = f"a{k}_c{c}"
        # Channels with exact decimals are summed as scaled integers, as
        # dynyan does: Pathway 0.33.0's float sum drifts under retractions
        # (the final sums come out wrong by whole units on the window
        # streams, while int sums and counts are right).
        chans = {}
        for i, ch in enumerate(q.channels):
            value = None
            exact = ch.scale is not None
            # An aggregate argument with a NULL in the data: refused (SQL
            # leaves those rows out; dynyan's payload guards are not ported).
            guarded = [(k, e) for k, es in ch.guards for e in es]
            for k, e in [*ch.factors, *guarded]:
                nulls = [
                    refcol[(k, r.column)]
                    for r in refs(e)
                    if refcol[(k, r.column)] in self._optional_cols
                ]
                if nulls:
                    rel = q.relation(q.atoms[k].relation)
                    raise NotImplementedError(
                        "NULL in an aggregated column (Pathway adapter): "
                        + ", ".join(
                            rel.columns[int(c.rsplit("_c", 1)[1])] for c in nulls
                        )
                    )
            for (k, e), scale in zip(ch.factors, ch.factor_scales):
                f = self._ref_value(
                    e,
                    acc,
                    refcol,
                    q.relation(q.atoms[k].relation),
                    k,
                    int if scale == 0 else float,
                )
                if exact and scale:
                    f = pw.apply_with_type(
                        lambda x, m=10**scale: None if x is None else round(x * m),
                        int,
                        f,
                    )
                value = f if value is None else value * f
            chans[f"_ch{i + 1}"] = value if value is not None else 1
        if chans:
            acc = acc.with_columns(**chans)
        groups = [acc[col_of[v]] for v in q.group_vars]
        red = {f"g{i}": pw.this[col_of[v]] for i, v in enumerate(q.group_vars)}
        red["_n"] = pw.reducers.count()
        for name in chans:
            red["_s" + name[3:]] = pw.reducers.sum(pw.this[name])
        for i, a in enumerate(q.aggregates):
            if a.kind in ("min", "max"):
                red[f"_x{i}"] = getattr(pw.reducers, a.kind)(pw.this[col_of[a.arg]])
            elif a.kind == "count_distinct":
                red[f"_x{i}"] = pw.reducers.count_distinct(pw.this[col_of[a.arg]])
        grouped = (acc.groupby(*groups) if groups else acc).reduce(**red)
        env = {v: f"g{i}" for i, v in enumerate(q.group_vars)}
        aggs = {}
        for i, a in enumerate(q.aggregates):
            if a.kind in ("min", "max", "count_distinct"):
                aggs[f"agg{i}"] = pw.this[f"_x{i}"]
                continue
            # The total as a Pathway expression; the SQL value from it by
            # the registry's rule (NULL of no rows, AVG's division).
            lin = None
            for coef, ch in a.terms:
                term = pw.this._n if ch == 0 else pw.this[f"_s{ch}"]
                scale = q.channels[ch - 1].scale if ch else 0
                if scale:
                    term = term / 10**scale
                term = term if coef == 1 else coef * term
                lin = term if lin is None else lin + term
            lin = lin if lin is not None else 0
            if a.kind == "count":
                aggs[f"agg{i}"] = lin
            else:  # NULLs in aggregated columns are refused above: nonnull = _n
                exact = all(
                    isinstance(coef, int)
                    and (ch == 0 or set(q.channels[ch - 1].factor_scales) <= {0})
                    for coef, ch in a.terms
                )
                aggs[f"agg{i}"] = pw.apply_with_type(
                    functions.aggregate_function(a.kind),
                    int if exact and a.kind == "sum" else float,
                    pw.this._n,
                    lin,
                )
        grouped = grouped.with_columns(**aggs)
        for i in range(len(q.aggregates)):
            env[f"__agg{i}"] = f"agg{i}"
        if q.having is not None:
            grouped = grouped.filter(
                self._out(_aggs_as_vars(q.having), grouped, env, result_type=bool)
            )
        outs = {}
        for i, o in enumerate(q.outputs):
            outs[f"o{i}"] = self._out(_aggs_as_vars(o.expr), grouped, env)
        return grouped.select(**outs)

    # Expressions: comparisons, AND/OR/NOT and arithmetic become Pathway
    # expressions; anything else runs as a Python UDF on contract values.

    def _expr(self, e, t, rel, k):
        import pathway as pw

        cols = sorted({r.column for r in refs(e)})
        # a column with NULLs: SQL's TRUE in Python (Pathway refuses to
        # compare an Optional column)
        nulls = any(f"a{k}_c{c}" in self._optional_cols for c in cols)
        native = None if nulls else _pw_native(e, lambda r: t[f"a{k}_c{r.column}"])
        if native is not None:
            return native
        env = {(k, c): f"a[{i}]" for i, c in enumerate(cols)}
        fn = _udf(e, env, [rel.types[c] for c in cols], condition=nulls)
        return pw.apply_with_type(fn, bool, *[t[f"a{k}_c{c}"] for c in cols])

    def _value(self, e, t, rel, k):
        """A value (derived variable) over atom k's columns."""
        return self._ref_value(e, t, {}, rel, k)

    def _ref_value(self, e, t, refcol, rel, k, result_type=None):
        import pathway as pw

        def col(r):
            return t[refcol.get((r.atom, r.column), f"a{k}_c{r.column}")]

        native = _pw_native(e, col)
        if native is not None:
            return native
        cols = sorted({r.column for r in refs(e)})
        env = {(k, c): f"a[{i}]" for i, c in enumerate(cols)}
        fn = _udf(e, env, [rel.types[c] for c in cols])
        args = [col(Ref(k, c, "")) for c in cols]
        if result_type is None:
            return pw.apply(fn, *args)

        def typed(*a, fn=fn, cast=result_type):
            value = fn(*a)
            return None if value is None else cast(value)

        return pw.apply_with_type(typed, result_type, *args)

    def _predicate(self, p, acc, col_of):
        e = Op(p.op, (Var(p.left), Var(p.right)))
        if getattr(p, "offset", 0):
            e = Op(p.op, (Var(p.left), Op("add", (Var(p.right), Lit(p.offset)))))
        return self._out(e, acc, col_of, result_type=bool)

    def _out(self, e, acc, col_of, result_type=None):
        import pathway as pw

        names = [v.name for v in dict.fromkeys(var_refs(e))]
        nulls = result_type is bool and any(
            col_of.get(n) in self._optional_cols for n in names
        )
        native = None if nulls else _pw_native(e, lambda v: acc[col_of[v.name]])
        if native is not None:
            return native
        env = {n: f"a[{i}]" for i, n in enumerate(names)}
        types = [self._var_type(n) for n in names]
        fn = _udf(e, env, types, condition=nulls)
        if result_type is not None:
            return pw.apply_with_type(fn, result_type, *[acc[col_of[n]] for n in names])
        return pw.apply(fn, *[acc[col_of[n]] for n in names])

    def _var_type(self, name: str) -> str:
        q = getattr(self, "_q", self.query)
        for a in q.atoms:
            if name in a.variables:
                return q.relation(a.relation).types[a.variables.index(name)]
        return "int"

    def output_dates(self) -> list[int]:
        """Output positions holding dates (they travel as ISO strings)."""
        out = []
        for i, o in enumerate(self.query.outputs):
            if isinstance(o.expr, Var) and self._var_type(o.expr.name) == "date":
                out.append(i)
        return out

    def run_pull(self) -> list[tuple]:
        import pathway as pw

        result = self._graph()
        keys, columns = pw.debug.table_to_dicts(result)
        self._keys, self._columns = keys, columns
        return keys

    def enumerate(self) -> Iterator[tuple[tuple, int]]:
        cols = [self._columns[f"o{i}"] for i in range(len(self.query.outputs))]
        dates = self.output_dates()
        fromiso = datetime.date.fromisoformat
        for key in self._keys:
            row = [c[key] for c in cols]
            for i in dates:
                if row[i] is not None:
                    row[i] = fromiso(row[i])
            yield tuple(row), 1

    def run_push(self, on_delta) -> None:
        import time

        import pathway as pw

        result = self._graph()
        n = len(self.query.outputs)
        dates = self.output_dates()
        fromiso = datetime.date.fromisoformat
        self.time_ends = []
        clock = time.perf_counter
        ends = self.time_ends

        if dates:

            def on_change(key, row, time, is_addition):
                vals = [row[f"o{i}"] for i in range(n)]
                for i in dates:
                    if vals[i] is not None:
                        vals[i] = fromiso(vals[i])
                on_delta(tuple(vals), 1 if is_addition else -1)

        else:
            names = [f"o{i}" for i in range(n)]

            def on_change(key, row, time, is_addition):
                on_delta(tuple([row[c] for c in names]), 1 if is_addition else -1)

        pw.io.subscribe(
            result, on_change=on_change, on_time_end=lambda t: ends.append(clock())
        )
        pw.run(monitoring_level=pw.MonitoringLevel.NONE)


def _aggs_as_vars(e):
    """An output expression with AggRef i as Var('__agg<i>')."""
    if isinstance(e, AggRef):
        return Var(f"__agg{e.index}")
    if isinstance(e, Op):
        return Op(e.op, tuple(_aggs_as_vars(a) for a in e.args))
    return e


def _pw_native(e, ref):
    """A Pathway expression for `e`, or None if it needs a Python UDF.
    `ref(leaf)` maps a Ref or Var to a Pathway column."""
    if isinstance(e, (Ref, Var)):
        return ref(e)
    if isinstance(e, Lit):
        if isinstance(e.value, datetime.date):
            return e.value.isoformat()
        if isinstance(e.value, (int, float, str, bool)):
            return e.value
        return None
    if not isinstance(e, Op):
        return None
    binary = {
        "add": lambda a, b: a + b,
        "sub": lambda a, b: a - b,
        "mul": lambda a, b: a * b,
        "eq": lambda a, b: a == b,
        "ne": lambda a, b: a != b,
        "lt": lambda a, b: a < b,
        "le": lambda a, b: a <= b,
        "gt": lambda a, b: a > b,
        "ge": lambda a, b: a >= b,
        "and": lambda a, b: a & b,
        "or": lambda a, b: a | b,
    }
    if e.op in binary:
        args = [_pw_native(a, ref) for a in e.args]
        if any(a is None for a in args):
            return None
        if not any(_is_pw(a) for a in args):
            return None  # constant folding is not worth a special case
        out = args[0]
        for a in args[1:]:
            out = binary[e.op](out, a)
        return out
    if e.op == "not":
        inner = _pw_native(e.args[0], ref)
        return None if inner is None else ~inner
    return None


def _is_pw(value) -> bool:
    return type(value).__module__.startswith("pathway")


def _udf(e, env, types, condition: bool = False):
    """A Python function over contract values for expression `e`; its
    arguments arrive as Pathway values (dates as ISO strings). With
    `condition`: true exactly when SQL condition `e` is TRUE (a comparison
    with a NULL is not)."""
    expressions = Expressions()
    body = expressions.condition(e, env) if condition else expressions.render(e, env)
    namespace = functions.peer_namespace(expressions.constants)
    exec(compile(f"def _f(a):\n    return {body}\n", "<dynyan udf>", "exec"), namespace)
    inner = namespace["_f"]
    dates = [i for i, t in enumerate(types) if t == "date"]
    fromiso = datetime.date.fromisoformat

    def fn(*args):
        args = list(args)
        for i in dates:
            if args[i] is not None:
                args[i] = fromiso(args[i])
        return inner(args)

    return fn
