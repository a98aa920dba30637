"""Classical first-order IVM, compiled to specialised Python."""

from __future__ import annotations

import bisect
import collections
import decimal
import math
from collections.abc import Callable, Iterator

from dynyan.compiler import functions

from dynyan.compiler.functions import (
    DISTINCT_SUM_KINDS,
    MULTISET_KINDS,
    QUANTILE_KINDS,
)
from dynyan.compiler.ir import InnerTest, Op, Query, Ref, SetQuery, Var

from . import sqlexpr
from .common import base_relations, has_inner_test, inner_tests, refuse_padded

_EMPTY: dict = {}


class _Source:
    """Python source built line by line with indentation (generated names only;
    SQL values enter through `sqlexpr`, the baselines' own expression
    renderer: the IVM shares no code with dynyan's code generator, so a bug
    there is not repeated here)."""

    def __init__(self):
        self.lines: list[str] = []
        self.depth = 0

    def add(self, line: str) -> None:
        self.lines.append("    " * self.depth + line)

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def py(value) -> str:
    return sqlexpr.literal(value)


def tuple_literal(items: list[str]) -> str:
    """A tuple display: `()`, `(x,)` or `(a, b)`."""
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


def targets(items: list[str]) -> str:
    """An assignment target list unpacking a tuple of len(items)."""
    return f"({items[0]},)" if len(items) == 1 else ", ".join(items)


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
        if isinstance(query, SetQuery):
            raise TypeError("a set operation: use make_ivm")
        refuse_padded(query, "first-order IVM")
        self.query = query
        self.ordering = query.ordering
        if on_delta is not None and self.ordering is not None:
            # the core reports changes of the whole result; this reports the
            # changes of the ordered window (LIMIT/OFFSET) without sort-only
            # columns
            on_delta = _OrderedWindow(query.ordering, len(query.outputs), on_delta)
        self.on_delta = on_delta
        self.result: dict = {}  # output row -> multiplicity
        tests = inner_tests(query)
        self.tstate: dict[str, dict] = {name: {} for name in tests}
        # inner views first: their deltas feed this view (a global aggregate
        # reports its row on creation: held until this view is ready)
        self._pending: list | None = []
        self.inner: dict = {}
        for name, sub in getattr(query, "subqueries", ()):
            sink = self._tested(name) if name in tests else self._forward(name)
            self.inner[name] = make_ivm(sub, on_delta=self._held(sink))
        push = on_delta is not None
        self.source, namespace = _compile_ivm(query, push=push, tests=tests)
        self.indexes: dict[str, dict] = {name: {} for name in namespace["INDEXES"]}
        self._test_indexes = namespace["TEST_INDEXES"]
        self._tests = tests
        self.groups: dict = {}  # group key -> payload list (aggregate queries)
        self.outrow: dict = {}  # group key -> its current output row (or None)
        self.touched: dict = {}
        make = namespace["make_appliers"]
        self._appliers, self._flips, self._checks = make(self.indexes, self, on_delta)
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
        pending, self._pending = self._pending, None
        for sink, row, change in pending:
            sink(row, change)

    def _held(self, sink):
        def held(row, change):
            if self._pending is None:
                sink(row, change)
            else:
                self._pending.append((sink, row, change))

        return held

    def _tested(self, name: str):
        """The sink of an inner view read by an `InnerTest`: keep its result by
        key, and re-check the tested atom's rows whose test can change (those
        with the changed key; every row when the test has no key, or when a
        NOT IN subquery becomes empty or non-empty or gives a NULL). This is
        first-order IVM: the rows are looked up and tested again one by one,
        a scalar subquery without correlation re-checks the whole relation."""
        k, test = self._tests_of(name)
        n = len(test.keys)
        not_in = test.kind == "not_in"

        def on_change(row, change):
            state = self.tstate[name]
            by_key, everything = self._test_indexes[name]
            key = () if n == 0 else row[0] if n == 1 else row[:n]
            at = state.get(key)
            if n == 0 or (
                not_in
                and (
                    key is None
                    or not state
                    or (
                        len(state) == 1
                        and at is not None
                        and sum(at.values()) + change <= 0
                    )
                )
            ):
                affected = list(self.indexes[everything].get((), _EMPTY).items())
            else:
                affected = list(self.indexes[by_key].get(key, _EMPTY).items())
            check = self._checks[k]
            before = [check(r) for r, _ in affected]
            if at is None:
                at = state[key] = {}
            c = at.get(row, 0) + change
            if c:
                at[row] = c
            else:
                del at[row]
                if not at:
                    del state[key]
            changes = []
            for (r, m), b in zip(affected, before):
                a = check(r)
                if a != b:
                    changes.append((r, m if a else -m))
            if changes:
                self._flips[name](changes)
            self._finish()

        return on_change

    def _tests_of(self, name: str):
        return inner_tests(self.query)[name]

    def _forward(self, name: str):
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
            pairs = ((row, 1) for row in self.result)
        else:
            pairs = iter(self.result.items())
        if self.ordering is None:
            return pairs
        # a materialised result sorted when read (first-order IVM keeps no
        # order); only the rows of the LIMIT/OFFSET window, sort-only columns cut
        return _window(self.ordering, len(self.query.outputs), pairs)

    def rows(self) -> Iterator[tuple]:
        for row, m in self.enumerate():
            for _ in range(m):
                yield row


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


def _compile_ivm(query: Query, push: bool, tests: dict | None = None):
    """Source and namespace of the IVM's per-relation apply functions (and,
    per inner view read by a test, the function applying the rows of the
    tested atom whose test flipped, and the atom's full filter)."""
    tests = tests or {}
    atoms = query.atoms
    expressions = sqlexpr.SQLPython()
    for name in tests:
        expressions.tests[name] = f"tstate[{py(name)}]"
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
    # subquery tests: the tested atom's rows by the test's key, and all of
    # them (a test without key, NOT IN becoming empty)
    test_indexes = {}
    for name, (k, test) in tests.items():
        if not all(isinstance(r, Ref) and r.atom == k for r in test.keys):
            raise NotImplementedError(
                f"subquery {name} is correlated by an expression (the IVM "
                "baseline needs columns of the tested table)"
            )
        cols = tuple(r.column for r in test.keys)
        test_indexes[name] = (index_cols(k, cols), index_cols(k, ()))

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
    # computed aggregate arguments (an expression over several tables):
    # per aggregate a multiset (MIN/MAX/COUNT DISTINCT) or a running sum and
    # the count of non-NULL values
    computed: dict[int, tuple[int, ...]] = {}
    next_pos = (1 + len(query.channels) + len(multisets)) if grouped else 0
    for i, a in enumerate(query.aggregates if grouped else ()):
        if a.computed is None:
            continue
        width = 1 if a.kind in MULTISET_KINDS else 2
        computed[i] = tuple(range(next_pos, next_pos + width))
        next_pos += width

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
            value = expressions.value(e, refenv)
            if v in bound:
                src.add(f"if {var_names[v]} != {value}:")
                src.add("    continue" if j != -1 else "    return")
            else:
                src.add(f"{var_names[v]} = {value}")
                bound.add(v)

    def dynamic_filters(j: int, refenv: dict) -> str | None:
        conds = [
            expressions.holds(f, refenv) for f in atoms[j].filters if has_inner_test(f)
        ]
        return " and ".join(conds) if conds else None

    def static_filters(j: int, refenv: dict) -> str | None:
        conds = [
            expressions.holds(f, refenv)
            for f in atoms[j].filters
            if not has_inner_test(f)
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
    src.add("tstate = self.tstate")
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
            src.add(f"{var_names[v]} = {expressions.value(e, refenv)}")
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
                src.add(f"if not ({dyn}):")
                src.add("    continue")
            for p in query.predicates:
                if p in placed or not p.vars <= bound:
                    continue
                placed.add(p)
                env = {v: var_names[v] for v in bound}
                left = expressions.value(Var(p.left), env)
                right = expressions.value(Var(p.right), env)
                offset = f" + {py(p.offset)}" if getattr(p, "offset", 0) else ""
                src.add(f"if not ({left} {_CMP[p.op]} {right}{offset}):")
                src.add("    continue")
        env = {v: var_names[v] for v in bound}
        stop = "continue" if plans[k] else "return delta" if collect else "return"
        for p in query.predicates:  # predicates within the delta atom alone
            if p not in placed:
                left = expressions.value(Var(p.left), env)
                right = expressions.value(Var(p.right), env)
                offset = f" + {py(p.offset)}" if getattr(p, "offset", 0) else ""
                src.add(f"if not ({left} {_CMP[p.op]} {right}{offset}):")
                src.add(f"    {stop}")
        for cond in residual:
            src.add(f"if not {expressions.holds(cond, env)}:")
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
                    f"({expressions.value(e, refenv)})" for _, e in ch.factors
                )
                step = f"p[{i + 1}] += m * {factors or '1'}"
                if ch.guards:  # SQL: a row whose argument is NULL adds nothing
                    nn = " and ".join(
                        dict.fromkeys(
                            f"{expressions.value(e, refenv)} is not None"
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
            for i, slots in computed.items():
                value = expressions.value(query.aggregates[i].computed, env)
                src.add(f"x = {value}")
                src.add("if x is not None:")
                if len(slots) == 1:
                    src.add(f"    s = p[{slots[0]}]")
                    src.add("    n = s.get(x, 0) + m")
                    src.add("    if n:")
                    src.add("        s[x] = n")
                    src.add("    else:")
                    src.add("        del s[x]")
                else:
                    src.add(f"    p[{slots[0]}] += m * x")
                    src.add(f"    p[{slots[1]}] += m")
        else:
            outs = [expressions.value(o.expr, env) for o in query.outputs]
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
    flips, checks = {}, {}
    for name, (k, _test) in sorted(tests.items()):
        # the rows of atom k whose test flipped: (row, +m) now passing,
        # (row, -m) no longer passing, as updates of atom k
        fname = f"flip_{len(flips)}"
        flips[name] = fname
        src.add(f"def {fname}(changes):")
        src.depth += 1
        if collect:
            src.add("delta = {}")
        src.add("for row, m in changes:")
        if collect:
            src.add(f"    for out, x in delta_{k}(row, m).items():")
            src.add("        delta[out] = delta.get(out, 0) + x")
            src.add("merge(delta)")
        else:
            src.add(f"    delta_{k}(row, m)")
        src.depth -= 1
        if k not in checks:
            checks[k] = f"check_{k}"
            refenv = {(k, c): f"row[{c}]" for c in range(len(atoms[k].variables))}
            conds = [static_filters(k, refenv), dynamic_filters(k, refenv)]
            conds = [c for c in conds if c]
            src.add(f"def check_{k}(row):")
            src.add(f"    return bool({' and '.join(conds) or 'True'})")
    src.add(
        "return {"
        + ", ".join(f"{py(rel)}: {f}" for rel, f in appliers.items())
        + "}, {"
        + ", ".join(f"{py(n)}: {f}" for n, f in flips.items())
        + "}, {"
        + ", ".join(f"{k}: {f}" for k, f in checks.items())
        + "}"
    )
    src.depth = 0
    if grouped:
        width = 1 + len(query.channels)
        src.add("def ZERO():")
        src.add(
            "    return ["
            + ", ".join(
                ["0"] * width
                + ["{}"] * len(multisets)
                + [
                    x
                    for slots in computed.values()
                    for x in (["{}"] if len(slots) == 1 else ["0", "0"])
                ]
            )
            + "]"
        )
        src.add("def group_row(key, p):")
        src.depth += 1
        gnames = [f"g{i}" for i in range(len(query.group_vars))]
        if gnames:
            src.add(f"{targets(gnames)} = key")
        env = dict(zip(query.group_vars, gnames))
        for i, a in enumerate(query.aggregates):
            nonnull = f"p[{a.nonnull}]"
            if i in computed and len(computed[i]) == 2:
                total, nonnull = (f"p[{x}]" for x in computed[i])
                value = functions.aggregate_value(a.kind, nonnull, total=total)
            elif a.kind in QUANTILE_KINDS:
                s = f"p[{computed[i][0]}]" if i in computed else f"p[{ms_pos[a.arg]}]"
                discrete = a.kind == "quantile_disc"
                if a.kind == "top_cut":
                    value = f"_sql_top_cut({s}, {a.place!r}, {a.descending})"
                else:
                    value = (
                        f"_sql_quantile({s}, {a.fraction!r}, {discrete}, {a.scale!r})"
                    )
            elif a.kind.startswith("string_agg"):
                s = f"p[{computed[i][0]}]" if i in computed else f"p[{ms_pos[a.arg]}]"
                value = (
                    f"_sql_string_agg({s}, {a.separator!r}, "
                    f"{a.kind == 'string_agg_distinct'}, {a.descending}, {a.scale})"
                )
            elif a.kind.startswith("array_agg"):
                s = f"p[{computed[i][0]}]" if i in computed else f"p[{ms_pos[a.arg]}]"
                value = (
                    f"_sql_array_agg({s}, "
                    f"{a.kind == 'array_agg_distinct'}, {a.descending})"
                )
            elif a.kind in functions.BIT_KINDS:
                s = f"p[{computed[i][0]}]" if i in computed else f"p[{ms_pos[a.arg]}]"
                value = f"_sql_bits({s}, {a.kind!r})"
            elif a.kind in DISTINCT_SUM_KINDS:
                s = f"p[{computed[i][0]}]" if i in computed else f"p[{ms_pos[a.arg]}]"
                average = a.kind == "avg_distinct"
                value = f"_sum_distinct({s}, {a.scale!r}, {average})"
            elif a.kind in ("min", "max", *functions.PICK_KINDS, "count_distinct"):
                s = f"p[{computed[i][0]}]" if i in computed else f"p[{ms_pos[a.arg]}]"
                value = functions.aggregate_value(
                    a.kind,
                    f"len({s})",
                    extreme=f"{a.kind.removeprefix('arg_')}({s})",
                    distinct=f"len({s})",
                    empty=f"not {s}",
                )
            else:  # running sums of the channels (floats: see the class doc)
                total = functions.linear_total(
                    [(coef, f"p[{ch}]", 0) for coef, ch in a.terms]
                )
                value = functions.aggregate_value(a.kind, nonnull, total=total)
            src.add(f"a{i} = {value}")
            env[("agg", i)] = f"a{i}"
        if query.having is not None:
            # a comparison with a NULL aggregate is not TRUE (three-valued)
            cond = expressions.holds(query.having, env)
            src.add(f"if not ({cond}):")
            src.add("    return None")
        outs = [expressions.value(o.expr, env) for o in query.outputs]
        src.add(f"return {tuple_literal(outs)}")
        src.depth = 0
    namespace = {
        "_EMPTY": _EMPTY,
        "_sum_distinct": _sum_distinct,
        **sqlexpr.HELPERS,
        **expressions.constants,  # compiled LIKE patterns
        "INDEXES": sorted(indexes.values()),
        "TEST_INDEXES": test_indexes,
    }
    text = src.text()
    exec(compile(text, "<dynyan first-order IVM>", "exec"), namespace)
    return text, namespace


def _sum_distinct(counts: dict, scale: int | None, average: bool):
    """SUM (AVG) of the distinct values of a value -> count multiset, NULL
    over none. Of a DECIMAL of `scale` digits (0: an INTEGER) in decimal
    arithmetic, each value rounded to its digits first (a computed one may
    be off in its last float bits); of a DOUBLE by math.fsum, correctly
    rounded, ±inf and NaN added as IEEE does."""
    if not counts:
        return None
    if scale is None:
        finite = [v for v in counts if v - v == 0]
        total = math.fsum(finite) + sum(v for v in counts if not v - v == 0)
        return total / len(counts) if average else total
    unit = decimal.Decimal(1).scaleb(-scale)
    values = {decimal.Decimal(repr(v)).quantize(unit) for v in counts}
    total = sum(values)
    if average:
        return float(total / len(values))
    return int(total) if scale == 0 else float(total)


def make_ivm(query, on_delta: Callable | None = None):
    """The first-order IVM of a query or of a set operation."""
    if isinstance(query, SetQuery):
        return SetOperationIVM(query, on_delta)
    return FirstOrderIVM(query, on_delta)


_MULTIPLICITY = {
    ("union", True): lambda left, right: left + right,
    ("union", False): lambda left, right: 1 if left + right > 0 else 0,
    ("intersect", True): min,
    ("intersect", False): lambda left, right: 1 if min(left, right) > 0 else 0,
    ("except", True): lambda left, right: max(left - right, 0),
    ("except", False): lambda left, right: 1 if left > 0 and right <= 0 else 0,
}


class SetOperationIVM:
    """`left UNION|INTERSECT|EXCEPT [ALL] right` over two first-order IVMs:
    each row's multiplicity on either side, the result's as SQL defines it
    from those two (`ir.SetQuery`)."""

    def __init__(self, query: SetQuery, on_delta: Callable | None = None):
        self.query = query
        self.on_delta = on_delta
        self._multiplicity = _MULTIPLICITY[(query.kind, query.all)]
        self.counts: dict = {}  # row -> [left, right]
        self.result: dict = {}
        self.sides = [
            make_ivm(
                side,
                on_delta=self._side(i, query.side_types[i] if query.side_types else ()),
            )
            for i, side in enumerate((query.left, query.right))
        ]
        self.RELATIONS = {r.name: r.columns for r in query.relations}

    def _side(self, i: int, side_types: tuple):
        # an integer column of one side in a DOUBLE/DECIMAL result column is
        # read as a float, as SQL casts it
        widen = [
            c
            for c, (t, s) in enumerate(zip(self.query.types, side_types))
            if t != s and t in ("float", "decimal")
        ]

        def change(row, d):
            if widen:
                row = tuple(
                    float(v) if c in widen and v is not None else v
                    for c, v in enumerate(row)
                )
            counts = self.counts.get(row)
            if counts is None:
                counts = self.counts[row] = [0, 0]
            old = self._multiplicity(*counts)
            counts[i] += d
            new = self._multiplicity(*counts)
            if counts == [0, 0]:
                del self.counts[row]
            if new != old:
                if new:
                    self.result[row] = new
                else:
                    del self.result[row]
                if self.on_delta is not None:
                    self.on_delta(row, new - old)

        return change

    def _apply(self, relation: str, row: tuple, d: int) -> None:
        for side in self.sides:
            if relation in side.RELATIONS:
                side._apply(relation, row, d)

    def insert(self, relation: str, row: tuple) -> None:
        self._apply(relation, row, 1)

    def delete(self, relation: str, row: tuple) -> None:
        self._apply(relation, row, -1)

    def enumerate(self) -> Iterator[tuple[tuple, int]]:
        return iter(self.result.items())

    def rows(self) -> Iterator[tuple]:
        for row, m in self.enumerate():
            for _ in range(m):
                yield row


class _Descending:
    """A sort key component that orders its value in reverse."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __lt__(self, other) -> bool:
        return other.value < self.value

    def __eq__(self, other) -> bool:
        return self.value == other.value


def _sort_key(ordering):
    """A function from an output row to its ORDER BY key (NULLs first or
    last by the key's own setting, whatever the direction)."""
    keys = [
        (k.position, k.descending, 0 if k.nulls_first else 2) for k in ordering.keys
    ]

    def key(row):
        out = []
        for position, descending, null_rank in keys:
            v = row[position]
            if v is None:
                out.append((null_rank,))
            else:
                out.append((1, _Descending(v) if descending else v))
        return tuple(out)

    return key


def _window(ordering, width: int, pairs) -> Iterator[tuple[tuple, int]]:
    """(row, 1) per row of the LIMIT/OFFSET window of the result `pairs`,
    in ORDER BY order, sort-only columns cut."""
    key = _sort_key(ordering)
    rows = sorted((row for row, m in pairs for _ in range(m)), key=key)
    stop = None if ordering.limit is None else ordering.offset + ordering.limit
    visible = width - ordering.hidden
    for row in rows[ordering.offset : stop]:
        yield row[:visible], 1


class _OrderedWindow:
    """Push mode of an ordered query: takes the changes of the whole result
    and reports those of its LIMIT/OFFSET window (rows entering and leaving
    the first k), sort-only columns cut. Keeps the result sorted (a list,
    bisected); a change inside the window compares the window before and
    after it (O(k))."""

    def __init__(self, ordering, width: int, emit: Callable):
        self.key = _sort_key(ordering)
        self.keys: list = []
        self.rows: list = []
        self.offset = ordering.offset
        self.stop = None if ordering.limit is None else ordering.offset + ordering.limit
        self.visible = width - ordering.hidden
        self.windowed = ordering.limit is not None or ordering.offset > 0
        self.emit = emit

    def __call__(self, row: tuple, change: int) -> None:
        if not self.windowed:
            self.emit(row[: self.visible], change)
            return
        k = self.key(row)
        for _ in range(abs(change)):
            if change > 0:
                at = bisect.bisect_right(self.keys, k)
            else:
                at = bisect.bisect_left(self.keys, k)
                while self.rows[at] != row:
                    at += 1
            if self.stop is not None and at >= self.stop:
                # beyond the window: it does not change
                if change > 0:
                    self.keys.insert(at, k)
                    self.rows.insert(at, row)
                else:
                    del self.keys[at], self.rows[at]
                continue
            before = collections.Counter(self.rows[self.offset : self.stop])
            if change > 0:
                self.keys.insert(at, k)
                self.rows.insert(at, row)
            else:
                del self.keys[at], self.rows[at]
            after = collections.Counter(self.rows[self.offset : self.stop])
            after.subtract(before)
            for r, d in after.items():
                if d:
                    self.emit(r[: self.visible], d)
