"""Baseline engines the benchmark compares dynyan against (DESIGN.md §6).

All of them read the same pre-decoded stream, a list of
``(relation, op, row)`` events (``op`` is +1 or -1, rows follow the module
contract of DESIGN.md §4), and produce the query result as a bag:

- `StoreOnly`: the floor. Inserts every event into a per-relation dict
  ``row -> count`` and computes nothing; any engine must at least do this.
- `FirstOrderIVM`: classical first-order incremental view maintenance. It
  materialises the query result in a dict ``row -> multiplicity`` and, on an
  update of relation R, evaluates the delta query ΔR ⋈ (the other atoms) with
  hash indexes on the join columns. Like dynyan it is compiled to specialised
  Python (nested loops over the indexes), so the comparison is between data
  structures, not between an interpreter and generated code. It is generic
  over the SPJ queries `dynyan.sql.parse_query` accepts (filters, θ-predicates
  as post-filters, projections, DISTINCT, self-joins, cross products).
- `DuckDBRecompute`: keeps DuckDB tables in sync batch by batch and
  re-evaluates the whole query after every batch (materialising the result
  in a DuckDB table); push mode diffs consecutive results.
- `PathwayEngine`: the same query as a Pathway dataflow over an in-memory
  table with ``__time__``/``__diff__`` columns (one timestamp per batch); a
  delete carries the row id of the insert it undoes.

Heavy imports (duckdb, pandas, pathway) happen inside the engines, so
importing this module is cheap. Baselines trust their input (the stream was
validated when it was built): unlike the generated views they do not check
arity or refuse deletes of absent rows.
"""

from __future__ import annotations

import datetime
import importlib.util
import re
import shutil
import subprocess
from collections.abc import Callable, Iterable, Iterator

from .codegen import Expressions, py
from .ir import Lit, Op, Query, Ref, Var, refs, var_refs

_EMPTY: dict = {}


# --- the floor -----------------------------------------------------------------


class StoreOnly:
    """Per-relation dicts ``row -> count``: the cost of merely storing the stream."""

    def __init__(self, relations: Iterable[str]):
        self.stores: dict[str, dict] = {r: {} for r in relations}

    def insert(self, relation: str, row: tuple) -> None:
        store = self.stores[relation]
        store[row] = store.get(row, 0) + 1

    def delete(self, relation: str, row: tuple) -> None:
        store = self.stores[relation]
        n = store[row] - 1
        if n:
            store[row] = n
        else:
            del store[row]


# --- first-order IVM -------------------------------------------------------------

# Runtime helpers the rendered filter expressions may call (same semantics as
# the generated modules' helpers, templates/module.py.jinja).


def _div(a, b):
    return None if b == 0 else a / b


def _mod(a, b):
    if b == 0:
        return None
    r = abs(a) % abs(b)
    return -r if a < 0 else r


def _add_months(date, months):
    total = date.year * 12 + date.month - 1 + months
    year, month = divmod(total, 12)
    for day in (date.day, 30, 29, 28):
        try:
            return datetime.date(year, month + 1, day)
        except ValueError:
            continue


class _Source:
    """Python source built line by line with indentation (generated names only;
    SQL values enter through `dynyan.codegen.py`/`Expressions`)."""

    def __init__(self):
        self.lines: list[str] = []
        self.depth = 0

    def add(self, line: str) -> None:
        self.lines.append("    " * self.depth + line)

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def _key(items: list[str]) -> str:
    if len(items) == 1:
        return items[0]
    return "(" + ", ".join(items) + (",)" if len(items) == 1 else ")")


class FirstOrderIVM:
    """Materialised result maintained by first-order delta queries.

    Same interface as a generated `View`: ``insert``, ``delete``,
    ``enumerate``, ``rows``, and push mode through ``on_delta(row, change)``.
    """

    def __init__(self, query: Query, on_delta: Callable | None = None):
        self.query = query
        self.on_delta = on_delta
        self.source, namespace = _compile_ivm(query, push=on_delta is not None)
        self.result: dict = {}
        self.indexes: dict[str, dict] = {name: {} for name in namespace["INDEXES"]}
        make = namespace["make_appliers"]
        self._appliers = make(self.indexes, self.result, on_delta)
        self.RELATIONS = {r.name: r.columns for r in query.relations}

    def insert(self, relation: str, row: tuple) -> None:
        self._appliers[relation](row, 1)

    def delete(self, relation: str, row: tuple) -> None:
        self._appliers[relation](row, -1)

    def enumerate(self) -> Iterator[tuple[tuple, int]]:
        if self.query.distinct:
            return ((row, 1) for row in self.result)
        return iter(self.result.items())

    def rows(self) -> Iterator[tuple]:
        if self.query.distinct:
            yield from self.result
            return
        for row, m in self.result.items():
            for _ in range(m):
                yield row


def _injective(query: Query) -> bool:
    """True if distinct combinations of atom rows give distinct output rows
    (then a delta never holds the same output row twice)."""
    if not all(isinstance(o.expr, Var) for o in query.outputs):
        return False
    out = {o.expr.name for o in query.outputs}
    return all(v is not None and v in out for a in query.atoms for v in a.variables)


def _delta_order(query: Query, k: int) -> list[tuple[int, list[str]]]:
    """Join order of the delta query for atom k: greedily the atom sharing
    the most bound variables; each step lists the bound variables it probes."""
    bound = list(query.atoms[k].vars)
    remaining = [j for j in range(len(query.atoms)) if j != k]
    order = []
    while remaining:
        best = max(
            remaining,
            key=lambda j: (
                len([v for v in query.atoms[j].vars if v in bound]),
                -j,
            ),
        )
        remaining.remove(best)
        key = [v for v in query.atoms[best].vars if v in bound]
        order.append((best, key))
        bound += [v for v in query.atoms[best].vars if v not in bound]
    return order


def _compile_ivm(query: Query, push: bool) -> tuple[str, dict]:
    """Source and namespace of the IVM's per-relation apply functions."""
    atoms = query.atoms
    expressions = Expressions()
    src = _Source()
    # index name -> (atom, key columns); created on demand by the delta plans
    indexes: dict[tuple[int, tuple[int, ...]], str] = {}

    def index(j: int, key_vars: list[str]) -> str:
        cols = tuple(atoms[j].variables.index(v) for v in key_vars)
        name = indexes.get((j, cols))
        if name is None:
            name = f"i{j}_" + "_".join(map(str, cols)) if cols else f"i{j}_all"
            indexes[(j, cols)] = name
        return name

    plans = {k: _delta_order(query, k) for k in range(len(atoms))}
    for k, order in plans.items():
        for j, key in order:
            index(j, key)

    injective = _injective(query)
    collect = query.distinct or (push and not injective)
    var_names = {}
    for a in atoms:
        for v in a.vars:
            var_names.setdefault(v, f"v{len(var_names)}")

    src.add("def make_appliers(INDEX, result, emit):")
    src.depth += 1
    for (j, cols), name in sorted(indexes.items(), key=lambda kv: kv[1]):
        src.add(f"{name} = INDEX[{py(name)}]")
    appliers = {}
    for rel in query.relations:
        fname = f"apply_{len(appliers)}"
        appliers[rel.name] = fname
        src.add(f"def {fname}(row, d):")
        src.depth += 1
        if collect:
            src.add("delta = {}")
        occurrences = [k for k, a in enumerate(atoms) if a.relation == rel.name]
        for k in occurrences:
            atom = atoms[k]
            base = src.depth
            if atom.filters:
                env = {(k, c): f"row[{c}]" for c in range(len(atom.variables))}
                cond = " and ".join(expressions.render(f, env) for f in atom.filters)
                src.add(f"if {cond}:")
                src.depth += 1
            # bind atom k's variables from the delta row
            for v in atom.vars:
                src.add(f"{var_names[v]} = row[{atom.variables.index(v)}]")
            bound = set(atom.vars)
            placed = set()
            mults = ["d"]
            loop_base = src.depth
            for step, (j, key) in enumerate(plans[k]):
                name = index(j, key)
                r, m = f"r{step}", f"m{step}"
                if key:
                    probe = _key([var_names[v] for v in key])
                    src.add(f"for {r}, {m} in {name}.get({probe}, _EMPTY).items():")
                else:
                    src.add(f"for {r}, {m} in {name}.get((), _EMPTY).items():")
                src.depth += 1
                mults.append(m)
                for c, v in enumerate(atoms[j].variables):
                    if v is not None and v not in bound:
                        src.add(f"{var_names[v]} = {r}[{c}]")
                        bound.add(v)
                for p in query.predicates:
                    if p in placed or not p.vars <= bound:
                        continue
                    placed.add(p)
                    env = {v: var_names[v] for v in bound}
                    left = expressions.render(p.left, env)
                    right = expressions.render(p.right, env)
                    op = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "ne": "!="}[
                        p.op
                    ]
                    src.add(f"if not ({left} {op} {right}):")
                    src.add("    continue")
            env = {v: var_names[v] for v in bound}
            outs = [expressions.render(o.expr, env) for o in query.outputs]
            out = "(" + ", ".join(outs) + ("," if len(outs) == 1 else "") + ")"
            mult = " * ".join(mults)
            src.add(f"out = {out}")
            if collect:
                src.add(f"delta[out] = delta.get(out, 0) + {mult}")
            else:
                src.add(f"m = {mult}")
                src.add("n = result.get(out, 0) + m")
                src.add("if n:")
                src.add("    result[out] = n")
                src.add("else:")
                src.add("    del result[out]")
                if push:
                    src.add("emit(out, m)")
            src.depth = loop_base
            # then update atom k's indexes (the delta saw its old state)
            for (j, cols), name in sorted(indexes.items(), key=lambda kv: kv[1]):
                if j != k:
                    continue
                src.add(f"key = {_key([f'row[{c}]' for c in cols]) if cols else '()'}")
                src.add(f"g = {name}.get(key)")
                src.add("if g is None:")
                src.add(f"    {name}[key] = {{row: d}}")
                src.add("else:")
                src.add("    n = g.get(row, 0) + d")
                src.add("    if n:")
                src.add("        g[row] = n")
                src.add("    else:")
                src.add("        del g[row]")
                src.add("        if not g:")
                src.add(f"            del {name}[key]")
            src.depth = base
        if collect:
            src.add("for out, m in delta.items():")
            src.add("    if not m:")
            src.add("        continue")
            src.add("    old = result.get(out, 0)")
            src.add("    n = old + m")
            src.add("    if n:")
            src.add("        result[out] = n")
            src.add("    else:")
            src.add("        del result[out]")
            if push and query.distinct:
                src.add("    if old <= 0 < n:")
                src.add("        emit(out, 1)")
                src.add("    elif n <= 0 < old:")
                src.add("        emit(out, -1)")
            elif push:
                src.add("    emit(out, m)")
        src.depth -= 1
    src.add(
        "return {" + ", ".join(f"{py(rel)}: {f}" for rel, f in appliers.items()) + "}"
    )
    namespace = {
        "_EMPTY": _EMPTY,
        "_div": _div,
        "_mod": _mod,
        "_add_months": _add_months,
        "datetime": datetime,
        "re": re,
        "INDEXES": sorted(indexes.values()),
    }
    for name, value_source in expressions.constants:
        namespace[name] = eval(value_source, namespace)  # re.compile(<literal>)
    text = src.text()
    exec(compile(text, "<dynyan first-order IVM>", "exec"), namespace)
    return text, namespace


# --- row ids for engines that identify rows (DuckDB, Pathway) -------------------


def assign_ids(events: list[tuple[str, int, tuple]]) -> list[int]:
    """For every event, the id of the row version it touches: an insert gets
    its position in the stream, a delete the id of a live insert of the same
    row (the oldest), so an engine can delete exactly one copy."""
    live: dict[tuple[str, tuple], list[int]] = {}
    ids = []
    for i, (rel, op, row) in enumerate(events):
        if op > 0:
            live.setdefault((rel, row), []).append(i)
            ids.append(i)
        else:
            stack = live[(rel, row)]
            ids.append(stack.pop(0))
            if not stack:
                del live[(rel, row)]
    return ids


# --- DuckDB recomputation -----------------------------------------------------------

_DUCK_TYPES = {"int": "BIGINT", "float": "DOUBLE", "str": "VARCHAR", "date": "DATE"}


class DuckDBRecompute:
    """Tables kept in sync per batch; the query re-evaluated after each batch.

    ``prepare`` turns the stream into per-batch Arrow tables (outside the
    timed part, like the decoding of the stream for the other engines);
    ``apply_batch(b)`` loads batch b (inserts, then deletes by row id) and
    recomputes the result into a DuckDB table; in push mode it also diffs the
    new result against the previous one (``EXCEPT ALL`` both ways) and calls
    ``on_delta`` for every changed row.
    """

    def __init__(self, query: Query, on_delta=None, threads: int = 1):
        import duckdb

        self.query = query
        self.on_delta = on_delta
        self.con = duckdb.connect(config={"threads": threads})
        for rel in query.relations:
            cols = ", ".join(
                f"{_ident(c)} {_DUCK_TYPES[t]}" for c, t in zip(rel.columns, rel.types)
            )
            self.con.execute(f"CREATE TABLE {_ident(rel.name)} (_id BIGINT, {cols})")
        self.select = query.sql
        self.con.execute(f"CREATE TABLE _result AS {self.select} LIMIT 0")
        self.batches: list = []

    def prepare(self, events, ids, batch: int) -> None:
        import pyarrow as pa

        arrow_types = {
            "int": pa.int64(),
            "float": pa.float64(),
            "str": pa.string(),
            "date": pa.date32(),
        }
        schemas = {
            rel.name: pa.schema(
                [("_id", pa.int64())]
                + [(c, arrow_types[t]) for c, t in zip(rel.columns, rel.types)]
            )
            for rel in self.query.relations
        }
        self.batches = []
        for start in range(0, len(events), batch):
            ins: dict[str, list] = {}
            dels: dict[str, list] = {}
            for i in range(start, min(start + batch, len(events))):
                rel, op, row = events[i]
                if op > 0:
                    ins.setdefault(rel, []).append((ids[i], *row))
                else:
                    dels.setdefault(rel, []).append(ids[i])
            part = []
            for rel, rows in ins.items():
                cols = list(zip(*rows))
                table = pa.Table.from_arrays(
                    [pa.array(c, type=f.type) for c, f in zip(cols, schemas[rel])],
                    schema=schemas[rel],
                )
                part.append(("ins", rel, table))
            for rel, rid in dels.items():
                part.append(("del", rel, pa.table({"_id": pa.array(rid, pa.int64())})))
            self.batches.append((min(batch, len(events) - start), part))

    def apply_batch(self, b: int) -> None:
        con = self.con
        for kind, rel, table in self.batches[b][1]:
            con.register("_batch", table)
            if kind == "ins":
                con.execute(f"INSERT INTO {_ident(rel)} SELECT * FROM _batch")
            else:
                con.execute(
                    f"DELETE FROM {_ident(rel)} WHERE _id IN (SELECT _id FROM _batch)"
                )
            con.unregister("_batch")
        if self.on_delta is None:
            con.execute(f"CREATE OR REPLACE TABLE _result AS {self.select}")
            return
        con.execute(f"CREATE OR REPLACE TABLE _new AS {self.select}")
        emit = self.on_delta
        for sign, sql in (
            (1, "SELECT * FROM _new EXCEPT ALL SELECT * FROM _result"),
            (-1, "SELECT * FROM _result EXCEPT ALL SELECT * FROM _new"),
        ):
            cur = con.execute(sql)
            while chunk := cur.fetchmany(10_000):
                for row in chunk:
                    emit(row, sign)
        con.execute("DROP TABLE _result")
        con.execute("ALTER TABLE _new RENAME TO _result")

    def enumerate(self) -> Iterator[tuple[tuple, int]]:
        cur = self.con.execute("SELECT * FROM _result")
        while chunk := cur.fetchmany(10_000):
            for row in chunk:
                yield row, 1

    def memory_bytes(self) -> int | None:
        try:
            (n,) = self.con.execute(
                "SELECT sum(memory_usage_bytes) FROM duckdb_memory()"
            ).fetchone()
            return int(n) if n is not None else None
        except Exception:  # noqa: BLE001 - older DuckDB: no duckdb_memory()
            return None


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


# --- Pathway ---------------------------------------------------------------------


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
        self.time_ends: list[float] = []

    def prepare(self, events, ids, batch: int) -> None:
        import pandas as pd

        per_rel: dict[str, tuple[list, list, list, list]] = {
            r.name: ([], [], [], []) for r in self.query.relations
        }
        dates = {
            r.name: [i for i, t in enumerate(r.types) if t == "date"]
            for r in self.query.relations
        }
        for i, (rel, op, row) in enumerate(events):
            rows, index, times, diffs = per_rel[rel]
            if dates[rel]:
                row = list(row)
                for c in dates[rel]:
                    row[c] = row[c].isoformat()
            rows.append(row)
            index.append(ids[i])
            times.append(2 * (i // batch))
            diffs.append(op)
        self.frames = {}
        for rel in self.query.relations:
            rows, index, times, diffs = per_rel[rel.name]
            names = [f"c{i}" for i in range(len(rel.columns))]
            df = pd.DataFrame.from_records(
                rows, columns=names, index=pd.Index(index, dtype="int64")
            )
            for c, t in zip(names, rel.types):
                if t == "int":
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
        for rel in self.query.relations:
            schema = pw.schema_from_types(
                **{f"c{i}": types[t] for i, t in enumerate(rel.types)}
            )
            tables[rel.name] = pw.debug.table_from_pandas(
                self.frames[rel.name], schema=schema, _new_universe=True
            )
        q = self.query
        atom_tables = []
        col_of: dict[str, str] = {}  # variable -> column name in the joined table
        for k, atom in enumerate(q.atoms):
            rel = q.relation(atom.relation)
            t = tables[atom.relation]
            if sum(a.relation == atom.relation for a in q.atoms) > 1:
                t = t.copy()
            t = t.select(**{f"a{k}_c{i}": t[f"c{i}"] for i in range(len(rel.columns))})
            for f in atom.filters:
                t = t.filter(self._expr(f, t, rel, k))
            atom_tables.append(t)
        order = [0]
        while len(order) < len(q.atoms):
            bound = {v for k in order for v in q.atoms[k].vars}
            rest = [j for j in range(len(q.atoms)) if j not in order]
            order.append(
                max(rest, key=lambda j: (len(set(q.atoms[j].vars) & bound), -j))
            )
        acc = atom_tables[order[0]]
        for c, v in enumerate(q.atoms[order[0]].variables):
            if v is not None:
                col_of.setdefault(v, f"a{order[0]}_c{c}")
        for j in order[1:]:
            t = atom_tables[j]
            conds = []
            for c, v in enumerate(q.atoms[j].variables):
                if v is None:
                    continue
                if v in col_of:
                    conds.append(acc[col_of[v]] == t[f"a{j}_c{c}"])
            if conds:
                acc = acc.join(t, *conds).select(*pw.left, *pw.right)
            else:  # cartesian product: join on a constant
                acc = (
                    acc.with_columns(_one=1)
                    .join(t.with_columns(_one=1), pw.left._one == pw.right._one)
                    .select(*pw.left.without("_one"), *pw.right.without("_one"))
                )
            for c, v in enumerate(q.atoms[j].variables):
                if v is not None:
                    col_of.setdefault(v, f"a{j}_c{c}")
        for p in q.predicates:
            acc = acc.filter(self._predicate(p, acc, col_of))
        outs = {}
        for i, o in enumerate(q.outputs):
            outs[f"o{i}"] = self._out(o.expr, acc, col_of)
        result = acc.select(**outs)
        if q.distinct:
            result = result.groupby(*[result[c] for c in outs]).reduce(
                *[result[c] for c in outs]
            )
        return result

    # Expressions: comparisons, AND/OR/NOT and arithmetic become Pathway
    # expressions; anything else runs as a Python UDF on contract values.

    def _expr(self, e, t, rel, k):
        import pathway as pw

        native = _pw_native(e, lambda r: t[f"a{k}_c{r.column}"])
        if native is not None:
            return native
        cols = sorted({r.column for r in refs(e)})
        env = {(k, c): f"a[{i}]" for i, c in enumerate(cols)}
        fn = _udf(e, env, [rel.types[c] for c in cols])
        return pw.apply_with_type(fn, bool, *[t[f"a{k}_c{c}"] for c in cols])

    def _predicate(self, p, acc, col_of):
        e = Op(p.op, (p.left, p.right))
        return self._out(e, acc, col_of, result_type=bool)

    def _out(self, e, acc, col_of, result_type=None):
        import pathway as pw

        native = _pw_native(e, lambda v: acc[col_of[v.name]])
        if native is not None:
            return native
        names = [v.name for v in dict.fromkeys(var_refs(e))]
        env = {n: f"a[{i}]" for i, n in enumerate(names)}
        types = [self._var_type(n) for n in names]
        fn = _udf(e, env, types)
        return pw.apply(fn, *[acc[col_of[n]] for n in names])

    def _var_type(self, name: str) -> str:
        for a in self.query.atoms:
            if name in a.variables:
                return self.query.relation(a.relation).types[a.variables.index(name)]
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


def _udf(e, env, types):
    """A Python function over contract values for expression `e`; its
    arguments arrive as Pathway values (dates as ISO strings)."""
    expressions = Expressions()
    body = expressions.render(e, env)
    namespace = {
        "_div": _div,
        "_mod": _mod,
        "_add_months": _add_months,
        "datetime": datetime,
        "re": re,
    }
    for name, value_source in expressions.constants:
        namespace[name] = eval(value_source, namespace)
    exec(compile(f"def _f(a):\n    return {body}\n", "<dynyan udf>", "exec"), namespace)
    inner = namespace["_f"]
    dates = [i for i, t in enumerate(types) if t == "date"]
    fromiso = datetime.date.fromisoformat

    def fn(*args):
        args = list(args)
        for i in dates:
            args[i] = fromiso(args[i])
        return inner(args)

    return fn


# --- peers that could not be run here -------------------------------------------------


def newer_python(minimum: tuple[int, int] = (3, 12)) -> str | None:
    """Path of a working Python >= `minimum` (pydbsp needs 3.12): on PATH,
    or installed by pyenv, or $DYNYAN_PY312."""
    import glob
    import os

    candidates = [os.environ.get("DYNYAN_PY312", "")]
    for minor in range(14, minimum[1] - 1, -1):
        candidates.append(shutil.which(f"python3.{minor}") or "")
        root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
        candidates += sorted(glob.glob(f"{root}/versions/3.{minor}.*/bin/python3"))
    for exe in candidates:
        if not exe:
            continue
        try:
            proc = subprocess.run(
                [
                    exe,
                    "-c",
                    "import sys; print(sys.version_info[:2] >= %r)" % (minimum,),
                ],
                capture_output=True,
                text=True,
                timeout=30,
            )
        except (OSError, subprocess.SubprocessError):
            continue
        if proc.returncode == 0 and proc.stdout.strip() == "True":
            return exe
    return None
