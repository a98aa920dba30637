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

from .codegen import Expressions, _targets, py, tuple_literal
from .ir import AggRef, Lit, Op, Query, Ref, Var, refs, var_refs

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

    SPJ queries keep the result bag ``row -> multiplicity``. Aggregate
    queries evaluate the same delta queries, but each derivation goes into
    its group's payload (the count, one running sum per payload channel, and
    a multiset of values per MIN/MAX/COUNT(DISTINCT)) instead of a result
    row; after each update the touched groups' output rows (HAVING applied)
    are recomputed and the result bag is corrected. Subqueries (EXISTS, IN,
    derived tables, NOT IN/NOT EXISTS) are inner `FirstOrderIVM`s whose
    pushed deltas are updates of the outer query's virtual relations (or
    flip the rows an anti-join filter lets through). Sums are kept in
    floats, so after deletions an aggregate may differ from an exact one in
    the last bits.
    """

    def __init__(self, query: Query, on_delta: Callable | None = None):
        self.query = query
        self.on_delta = on_delta
        self.result: dict = {}  # output row -> multiplicity
        antis = _anti_names(query)
        self.keysets: dict[str, dict] = {name: {} for name in antis}
        # inner views first: their deltas feed this view
        self.inner: dict[str, FirstOrderIVM] = {}
        for name, sub in getattr(query, "subqueries", ()):
            self.inner[name] = FirstOrderIVM(sub, on_delta=self._forward(name, antis))
        push = on_delta is not None
        self.source, namespace = _compile_ivm(query, push=push, antis=antis)
        self.indexes: dict[str, dict] = {name: {} for name in namespace["INDEXES"]}
        self.groups: dict = {}  # group key -> payload list (aggregate queries)
        self.outrow: dict = {}  # group key -> its current output row (or None)
        self.touched: dict = {}
        make = namespace["make_appliers"]
        self._appliers, self._flips = make(self.indexes, self, on_delta)
        self._group_row = namespace.get("group_row")
        self._zero = namespace.get("ZERO")
        virtual = {name for name, _ in getattr(query, "subqueries", ())}
        own = {r.name for r in query.relations if r.name not in virtual}
        self.RELATIONS = {
            r.name: r.columns for r in base_relations(query) if r.name not in virtual
        }
        # every base relation goes to the inner views that read it, then here
        self._routes: dict[str, list] = {}
        for rel in self.RELATIONS:
            targets = [
                (lambda row, d, f=inner._apply, rel=rel: f(rel, row, d))
                for inner in self.inner.values()
                if rel in inner.RELATIONS
            ]
            if rel in own:
                targets.append(self._appliers[rel])
            self._routes[rel] = targets
        if query.grouped and not query.group_vars:
            # a global aggregate has its one row even on an empty database
            self.groups[()] = list(self._zero())
            self.touched[()] = None
            self._finish()

    def _forward(self, name: str, antis: set[str]):
        if name in antis:

            def flip(row, change):
                keyset = self.keysets[name]
                key = row[0] if len(row) == 1 else row
                before = key in keyset
                n = keyset.get(key, 0) + change
                if n:
                    keyset[key] = n
                else:
                    del keyset[key]
                if before != (n > 0):
                    # rows of the filtered atom with this key appear (key gone)
                    # or disappear (key arrived)
                    self._flips[name](key, -1 if n > 0 else 1)
                    self._finish()

            return flip

        def forward(row, change):
            self._appliers[name](row, change)
            self._finish()

        return forward

    def _apply(self, relation: str, row: tuple, d: int) -> None:
        for target in self._routes[relation]:
            target(row, d)
        self._finish()

    def insert(self, relation: str, row: tuple) -> None:
        self._apply(relation, row, 1)

    def delete(self, relation: str, row: tuple) -> None:
        self._apply(relation, row, -1)

    def _finish(self) -> None:
        """Aggregate queries: turn the touched groups into result rows."""
        if not self.touched:
            return
        groups, outrow, result = self.groups, self.outrow, self.result
        group_row, emit = self._group_row, self.on_delta
        distinct = self.query.distinct
        keep_empty = not self.query.group_vars
        for key in self.touched:
            p = groups.get(key)
            if p is not None and p[0] == 0 and not keep_empty:
                del groups[key]
                p = None
            new = None if p is None else group_row(key, p)
            old = outrow.get(key)
            if new == old:
                continue
            if new is None:
                del outrow[key]
            else:
                outrow[key] = new
            if old is not None:
                n = result[old] - 1
                if n:
                    result[old] = n
                else:
                    del result[old]
                if emit is not None and (not distinct or not n):
                    emit(old, -1)
            if new is not None:
                n = result.get(new, 0) + 1
                result[new] = n
                if emit is not None and (not distinct or n == 1):
                    emit(new, 1)
        self.touched.clear()

    def enumerate(self) -> Iterator[tuple[tuple, int]]:
        if self.query.distinct:
            return ((row, 1) for row in self.result)
        return iter(self.result.items())

    def rows(self) -> Iterator[tuple]:
        for row, m in self.enumerate():
            for _ in range(m):
                yield row


def base_relations(query: Query) -> list:
    """The stored relations a query reads, its subqueries' included (virtual
    relations, the subqueries' results, are not)."""
    virtual = {name for name, _ in getattr(query, "subqueries", ())}
    out = [r for r in query.relations if r.name not in virtual]
    for _, sub in getattr(query, "subqueries", ()):
        for r in base_relations(sub):
            if all(r.name != o.name for o in out):
                out.append(r)
    return out


def _has_anti(e) -> bool:
    return isinstance(e, Op) and (e.op == "anti" or any(_has_anti(a) for a in e.args))


def _anti_names(query: Query) -> set[str]:
    out: set[str] = set()

    def walk(e):
        if isinstance(e, Op):
            if e.op == "anti":
                out.add(e.args[0].value)
            for a in e.args:
                walk(a)

    for a in query.atoms:
        for f in a.filters:
            walk(f)
    return out


def _injective(query: Query) -> bool:
    """True if distinct combinations of atom rows give distinct output rows
    (then a delta never holds the same output row twice)."""
    if query.grouped or not all(isinstance(o.expr, Var) for o in query.outputs):
        return False
    out = {o.expr.name for o in query.outputs}
    return all(v is not None and v in out for a in query.atoms for v in a.vars)


def _column_vars(atom) -> list[str]:
    return [v for v in dict.fromkeys(atom.variables) if v is not None]


def _delta_order(query: Query, k: int) -> list[tuple[int, list[str]]]:
    """Join order of the delta query for atom k: greedily the atom sharing
    the most bound variables; each step lists the bound column variables it
    probes (derived variables are checked after the probe)."""
    bound = list(query.atoms[k].vars)
    remaining = [j for j in range(len(query.atoms)) if j != k]
    order = []
    while remaining:
        best = max(
            remaining,
            key=lambda j: (
                len([v for v in _column_vars(query.atoms[j]) if v in bound]),
                -j,
            ),
        )
        remaining.remove(best)
        key = [v for v in _column_vars(query.atoms[best]) if v in bound]
        order.append((best, key))
        bound += [v for v in query.atoms[best].vars if v not in bound]
    return order


_CMP = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "ne": "!=", "eq": "=="}


def _compile_ivm(query: Query, push: bool, antis: set[str] = frozenset()):
    """Source and namespace of the IVM's per-relation apply functions."""
    atoms = query.atoms
    expressions = Expressions()
    for name in antis:
        expressions.anti[name] = f"keysets[{py(name)}]"
    src = _Source()
    # index name -> (atom, key columns); created on demand by the delta plans
    indexes: dict[tuple[int, tuple[int, ...]], str] = {}

    def index(j: int, key_vars: list[str]) -> str:
        cols = tuple(atoms[j].variables.index(v) for v in key_vars)
        return index_cols(j, cols)

    def index_cols(j: int, cols: tuple[int, ...]) -> str:
        name = indexes.get((j, cols))
        if name is None:
            name = f"i{j}_" + "_".join(map(str, cols)) if cols else f"i{j}_all"
            indexes[(j, cols)] = name
        return name

    plans = {k: _delta_order(query, k) for k in range(len(atoms))}
    for k, order in plans.items():
        for j, key in order:
            index(j, key)
    # anti-join filters: the rows of the atom by the filter's key columns
    anti_of: dict[str, tuple[int, tuple[int, ...]]] = {}
    for k, a in enumerate(atoms):
        for f in a.filters:
            if isinstance(f, Op) and f.op == "anti":
                cols = tuple(r.column for r in f.args[1:])
                anti_of[f.args[0].value] = (k, cols)
                index_cols(k, cols)
    if set(anti_of) != set(antis):
        raise NotImplementedError(
            "anti-join filter inside an expression (only a plain NOT IN/NOT "
            "EXISTS conjunct is supported by the IVM baseline)"
        )

    grouped = query.grouped
    injective = _injective(query)
    collect = not grouped and (query.distinct or (push and not injective))
    var_names: dict[str, str] = {}
    for a in atoms:
        for v in a.vars:
            var_names.setdefault(v, f"v{len(var_names)}")
    shared = {
        v
        for v in var_names
        if sum(v in a.vars for a in atoms) > 1
        or any(v in p.vars for p in query.predicates)
    }
    residual = list(getattr(query, "residual", ()))
    multisets = []  # (payload position, argument variable)
    if grouped:
        base = 1 + len(query.channels)
        for a in query.aggregates:
            if a.arg is not None and a.arg not in dict(multisets).values():
                multisets.append((base + len(multisets), a.arg))
    ms_pos = {arg: pos for pos, arg in multisets}

    def bind_atom(j: int, rowname: str, bound: set, refenv: dict) -> None:
        """Locals for atom j's columns (and derived variables) from `rowname`;
        a derived variable that is bound already becomes an equality check."""
        atom = atoms[j]
        for c in range(len(atom.variables)):
            refenv[(j, c)] = f"{rowname}[{c}]"
        for c, v in enumerate(atom.variables):
            if v is not None and v not in bound:
                src.add(f"{var_names[v]} = {rowname}[{c}]")
                bound.add(v)
        for v, e in atom.derived:
            value = expressions.render(e, refenv)
            if v in bound:
                src.add(f"if {var_names[v]} != {value}:")
                src.add("    continue" if j != -1 else "    return")
            else:
                src.add(f"{var_names[v]} = {value}")
                bound.add(v)

    def dynamic_filters(j: int, refenv: dict) -> str | None:
        conds = [
            expressions.condition(f, refenv) for f in atoms[j].filters if _has_anti(f)
        ]
        return " and ".join(conds) if conds else None

    def static_filters(j: int, refenv: dict) -> str | None:
        conds = [
            expressions.condition(f, refenv)
            for f in atoms[j].filters
            if not _has_anti(f)
        ]
        guard = [
            f"{refenv[(j, atoms[j].variables.index(v))]} is not None"
            for v in _column_vars(atoms[j])
            if v in shared
        ]
        conds = list(dict.fromkeys(guard)) + conds
        return " and ".join(conds) if conds else None

    src.add("def make_appliers(INDEX, self, emit):")
    src.depth += 1
    src.add("result = self.result")
    src.add("groups = self.groups")
    src.add("touched = self.touched")
    src.add("keysets = self.keysets")
    for (j, cols), name in sorted(indexes.items(), key=lambda kv: kv[1]):
        src.add(f"{name} = INDEX[{py(name)}]")

    # one delta function per atom: the delta query from atom k's row `row`
    # with multiplicity d against the current state of the other atoms
    for k, atom in enumerate(atoms):
        src.add(f"def delta_{k}(row, d):")
        src.depth += 1
        if collect:
            src.add("delta = {}")
        refenv: dict = {}
        bound: set = set()
        for c in range(len(atom.variables)):
            refenv[(k, c)] = f"row[{c}]"
        for c, v in enumerate(atom.variables):
            if v is not None and v not in bound:
                src.add(f"{var_names[v]} = row[{c}]")
                bound.add(v)
        for v, e in atom.derived:
            src.add(f"{var_names[v]} = {expressions.render(e, refenv)}")
            bound.add(v)
        placed = set()
        mults = ["d"]
        for step, (j, key) in enumerate(plans[k]):
            name = index(j, key)
            r, m = f"r{step}", f"m{step}"
            probe = _key([var_names[v] for v in key]) if key else "()"
            src.add(f"for {r}, {m} in {name}.get({probe}, _EMPTY).items():")
            src.depth += 1
            mults.append(m)
            bind_atom(j, r, bound, refenv)
            dyn = dynamic_filters(j, refenv)
            if dyn:
                src.add(f"if not {dyn}:")
                src.add("    continue")
            for p in query.predicates:
                if p in placed or not p.vars <= bound:
                    continue
                placed.add(p)
                env = {v: var_names[v] for v in bound}
                left = expressions.render(Var(p.left), env)
                right = expressions.render(Var(p.right), env)
                offset = f" + {py(p.offset)}" if getattr(p, "offset", 0) else ""
                src.add(f"if not ({left} {_CMP[p.op]} {right}{offset}):")
                src.add("    continue")
        env = {v: var_names[v] for v in bound}
        stop = "continue" if plans[k] else "return delta" if collect else "return"
        for p in query.predicates:  # predicates within the delta atom alone
            if p not in placed:
                left = expressions.render(Var(p.left), env)
                right = expressions.render(Var(p.right), env)
                offset = f" + {py(p.offset)}" if getattr(p, "offset", 0) else ""
                src.add(f"if not ({left} {_CMP[p.op]} {right}{offset}):")
                src.add(f"    {stop}")
        for cond in residual:
            src.add(f"if not {expressions.condition(cond, env)}:")
            src.add(f"    {stop}")
        mult = " * ".join(mults)
        if grouped:
            gkey = tuple_literal([var_names[v] for v in query.group_vars])
            src.add(f"key = {gkey}")
            src.add("p = groups.get(key)")
            src.add("if p is None:")
            src.add("    p = groups[key] = ZERO()")
            src.add("touched[key] = None")
            src.add(f"m = {mult}")
            src.add("p[0] += m")
            for i, ch in enumerate(query.channels):
                factors = " * ".join(
                    f"({expressions.render(e, refenv)})" for _, e in ch.factors
                )
                step = f"p[{i + 1}] += m * {factors or '1'}"
                if ch.guards:  # SQL: a row whose argument is NULL adds nothing
                    nn = " and ".join(
                        dict.fromkeys(
                            expressions.nonnull(e, refenv)
                            for _, es in ch.guards
                            for e in es
                        )
                    )
                    step = f"if {nn}: {step}"
                src.add(step)
            for pos, arg in multisets:  # SQL: NULLs are left out
                src.add(f"if {var_names[arg]} is not None:")
                src.add(f"    s = p[{pos}]")
                src.add(f"    n = s.get({var_names[arg]}, 0) + m")
                src.add("    if n:")
                src.add(f"        s[{var_names[arg]}] = n")
                src.add("    else:")
                src.add(f"        del s[{var_names[arg]}]")
        else:
            outs = [expressions.render(o.expr, env) for o in query.outputs]
            src.add(f"out = {tuple_literal(outs)}")
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
        src.depth = 2
        if collect:
            src.add("return delta")
        src.depth = 1

    if collect:
        src.add("def merge(delta):")
        src.add("    for out, m in delta.items():")
        src.add("        if not m:")
        src.add("            continue")
        src.add("        old = result.get(out, 0)")
        src.add("        n = old + m")
        src.add("        if n:")
        src.add("            result[out] = n")
        src.add("        else:")
        src.add("            del result[out]")
        if push and query.distinct:
            src.add("        if old <= 0 < n:")
            src.add("            emit(out, 1)")
            src.add("        elif n <= 0 < old:")
            src.add("            emit(out, -1)")
        elif push:
            src.add("        emit(out, m)")

    appliers = {}
    for rel in query.relations:
        fname = f"apply_{len(appliers)}"
        appliers[rel.name] = fname
        src.add(f"def {fname}(row, d):")
        src.depth += 1
        if collect:
            src.add("delta = {}")
        occurrences = [k for k, a in enumerate(atoms) if a.relation == rel.name]
        if not occurrences:
            src.add("pass")
        for k in occurrences:
            base = src.depth
            refenv = {(k, c): f"row[{c}]" for c in range(len(atoms[k].variables))}
            static = static_filters(k, refenv)
            if static:
                src.add(f"if {static}:")
                src.depth += 1
            dyn = dynamic_filters(k, refenv)
            if dyn:
                src.add(f"if {dyn}:")
                src.add(
                    f"    for out, m in delta_{k}(row, d).items():"
                    if collect
                    else f"    delta_{k}(row, d)"
                )
                if collect:
                    src.add("        delta[out] = delta.get(out, 0) + m")
            elif collect:
                src.add(f"for out, m in delta_{k}(row, d).items():")
                src.add("    delta[out] = delta.get(out, 0) + m")
            else:
                src.add(f"delta_{k}(row, d)")
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
            src.add("merge(delta)")
        src.depth -= 1
    flips = {}
    for name, (k, cols) in sorted(anti_of.items()):
        # the anti-join key `key` arrived in (sign -1) or left (sign +1) the
        # inner view: atom k's rows with that key leave or join the query
        fname = f"flip_{len(flips)}"
        flips[name] = fname
        src.add(f"def {fname}(key, sign):")
        src.depth += 1
        if collect:
            src.add("delta = {}")
        src.add(f"for row, m in list({index_cols(k, cols)}.get(key, _EMPTY).items()):")
        if collect:
            src.add(f"    for out, x in delta_{k}(row, sign * m).items():")
            src.add("        delta[out] = delta.get(out, 0) + x")
            src.add("merge(delta)")
        else:
            src.add(f"    delta_{k}(row, sign * m)")
        src.depth -= 1
    src.add(
        "return {"
        + ", ".join(f"{py(rel)}: {f}" for rel, f in appliers.items())
        + "}, {"
        + ", ".join(f"{py(n)}: {f}" for n, f in flips.items())
        + "}"
    )
    src.depth = 0
    if grouped:
        width = 1 + len(query.channels)
        src.add("def ZERO():")
        src.add(
            "    return [" + ", ".join(["0"] * width + ["{}"] * len(multisets)) + "]"
        )
        src.add("def group_row(key, p):")
        src.depth += 1
        gnames = [f"g{i}" for i in range(len(query.group_vars))]
        if gnames:
            src.add(f"{_targets(gnames)} = key")
        env = dict(zip(query.group_vars, gnames))
        for i, a in enumerate(query.aggregates):
            lin = (
                " + ".join(
                    f"{py(coef)} * p[{ch}]" if coef != 1 else f"p[{ch}]"
                    for coef, ch in a.terms
                )
                or "0"
            )
            if a.kind == "count":
                value = lin
            elif a.kind == "sum":  # NULL when no argument is not NULL
                value = f"None if p[{a.nonnull}] == 0 else ({lin})"
            elif a.kind == "avg":
                value = f"None if p[{a.nonnull}] == 0 else ({lin}) / p[{a.nonnull}]"
            elif a.kind in ("min", "max"):
                s = f"p[{ms_pos[a.arg]}]"
                value = f"{a.kind}({s}) if {s} else None"
            elif a.kind == "count_distinct":
                value = f"len(p[{ms_pos[a.arg]}])"
            else:
                raise NotImplementedError(f"aggregate {a.kind}")
            src.add(f"a{i} = {value}")
            env[("agg", i)] = f"a{i}"
        if query.having is not None:
            # a comparison with a NULL aggregate is not TRUE (three-valued)
            cond = expressions.condition(query.having, env)
            src.add(f"if not ({cond}):")
            src.add("    return None")
        outs = [expressions.render(o.expr, env) for o in query.outputs]
        src.add(f"return {tuple_literal(outs)}")
        src.depth = 0
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

    def __init__(
        self,
        query: Query,
        on_delta=None,
        threads: int = 1,
        sql_text: str | None = None,
    ):
        import duckdb

        self.query = query
        self.on_delta = on_delta
        self.con = duckdb.connect(config={"threads": threads})
        # every stored relation is a table with a row id, seen by the query
        # through a view of its own columns (so SELECT * means the same)
        self.relations = base_relations(query)
        for rel in self.relations:
            cols = ", ".join(
                f"{_ident(c)} {_DUCK_TYPES[t]}" for c, t in zip(rel.columns, rel.types)
            )
            table = _ident("_t_" + rel.name)
            self.con.execute(f"CREATE TABLE {table} (_id BIGINT, {cols})")
            names = ", ".join(_ident(c) for c in rel.columns)
            self.con.execute(
                f"CREATE VIEW {_ident(rel.name)} AS SELECT {names} FROM {table}"
            )
        self.select = duckdb_select(sql_text) if sql_text else query.sql
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
            for rel in self.relations
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
            table = _ident("_t_" + rel)
            if kind == "ins":
                con.execute(f"INSERT INTO {table} SELECT * FROM _batch")
            else:
                con.execute(
                    f"DELETE FROM {table} WHERE _id IN (SELECT _id FROM _batch)"
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


def duckdb_select(sql_text: str) -> str:
    """The query of a query file (its last statement that is not CREATE
    TABLE), as DuckDB SQL: subqueries and all, as the user wrote it."""
    import sqlglot
    from sqlglot import exp

    statements = [
        s
        for s in sqlglot.parse(sql_text, read="duckdb")
        if s is not None and not isinstance(s, exp.Create)
    ]
    return statements[-1].sql(dialect="duckdb")


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
                if isinstance(f, Op) and f.op == "anti":
                    inner = virtual[f.args[0].value]
                    conds = [
                        t[f"a{k}_c{r.column}"] == inner[f"o{i}"]
                        for i, r in enumerate(f.args[1:])
                    ]
                    t = (
                        t.join_left(inner, *conds)
                        .select(*pw.left, _anti=pw.right.o0)
                        .filter(pw.this._anti.is_none())
                        .without(pw.this._anti)
                    )
                elif _has_anti(f):
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
            lin = None
            for coef, ch in a.terms:
                term = pw.this._n if ch == 0 else pw.this[f"_s{ch}"]
                scale = q.channels[ch - 1].scale if ch else 0
                if scale:
                    term = term / 10**scale
                term = term if coef == 1 else coef * term
                lin = term if lin is None else lin + term
            lin = lin if lin is not None else 0
            aggs[f"agg{i}"] = lin / pw.this._n if a.kind == "avg" else lin
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
            if args[i] is not None:
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
