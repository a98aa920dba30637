"""Planner: a GJT pair (T, N) for a `Query`, by GYO-style reduction.

The reduction (DESIGN.md §3) works on hyperedges, one per atom, each pointing
at the tree node standing for it:

- ISO(x, e): x occurs in e only, is not protected and in no unplaced
  predicate -> a unary node labelled e minus x above e's node.
- ABSORB(e into f): every variable of e that f lacks is unprotected, in no
  other hyperedge, and every predicate on such a variable lies within e ∪ f
  -> a binary node labelled f with children f's node (the guard) and e's node;
  those predicates go on the edge to e.

Phase 1 protects the output variables; what it leaves must lie within the
output (free-connex). Phase 2 reduces the rest to one hyperedge with nothing
protected. N = the nodes phase 2 creates plus the nodes phase 1 left.

Several reductions are possible. `plan_query` explores the choices of
which edge to absorb and into which guard, and picks the cheapest tree by
`Plan.cost` (documented there), or with table statistics by
`estimated_work`, which reads each candidate's trigger program.

>>> from dynyan.compiler.frontend import parse_query
>>> q = parse_query("CREATE TABLE r (a INT, b INT); CREATE TABLE s (b INT, c INT);"
...                 "SELECT * FROM r, s WHERE r.b = s.b")
>>> print(plan_query(q))
*[b] root
├── *r(a, b) leaf
└── *s(b, c) leaf
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace

from ..errors import CyclicQueryError, PaddedLeafUnplaced, UnsupportedQueryError
from .ir import Lit, Op, Predicate, Query, SetQuery, Var, WindowQuery
from .plan import Node, Plan, SetPlan, WindowPlan, order_vars, ranked_root
from .stats import Stats
from .triggers import Propagate, Weigh, trigger_program
from .triggers import padded_leaves_fit as _padded_leaves_fit

log = logging.getLogger("dynyan.plan")

MAX_CANDIDATES = 200


class _Builder:
    """Mutable tree under construction: nodes as (vars, children, atom, preds)."""

    def __init__(self):
        self.vars: list[frozenset[str]] = []
        self.children: list[tuple[int, ...]] = []
        self.atom: list[int | None] = []
        self.preds: list[tuple[Predicate, ...]] = []

    def add(self, vars, children=(), atom=None) -> int:
        self.vars.append(frozenset(vars))
        self.children.append(tuple(children))
        self.atom.append(atom)
        self.preds.append(())
        return len(self.vars) - 1

    def copy(self) -> "_Builder":
        b = _Builder()
        b.vars, b.children = list(self.vars), list(self.children)
        b.atom, b.preds = list(self.atom), list(self.preds)
        return b


@dataclass
class _State:
    builder: _Builder
    edges: dict[int, frozenset[str]]  # edge id -> variables
    points: dict[int, int]  # edge id -> tree node
    unplaced: tuple[Predicate, ...]

    def copy(self) -> "_State":
        return _State(
            self.builder.copy(), dict(self.edges), dict(self.points), self.unplaced
        )


def _iso_all(state: _State, protected: frozenset[str]) -> list[int]:
    """Apply every ISO step possible; returns the nodes created."""
    created = []
    changed = True
    while changed:
        changed = False
        for e in sorted(state.edges):
            vars_e = state.edges[e]
            others = set().union(*(v for f, v in state.edges.items() if f != e))
            in_preds = set().union(*(p.vars for p in state.unplaced))
            lonely = sorted(
                x
                for x in vars_e
                if x not in others and x not in protected and x not in in_preds
            )
            if lonely:
                new_vars = vars_e - set(lonely)
                node = state.builder.add(new_vars, (state.points[e],))
                created.append(node)
                state.edges[e] = new_vars
                state.points[e] = node
                changed = True
    return created


def _absorb_options(state: _State, protected: frozenset[str]) -> list[tuple[int, int]]:
    options = []
    for e in sorted(state.edges):
        for f in sorted(state.edges):
            if e == f:
                continue
            extra = state.edges[e] - state.edges[f]
            if extra & protected:
                continue
            others = set().union(
                *(v for g, v in state.edges.items() if g not in (e, f))
            )
            if extra & others:
                continue
            scope = state.edges[e] | state.edges[f]
            if any(p.vars & extra and not p.vars <= scope for p in state.unplaced):
                continue
            options.append((e, f))
    return options


def _absorb(state: _State, e: int, f: int) -> int:
    extra = state.edges[e] - state.edges[f]
    scope = state.edges[e] | state.edges[f]
    # Predicates over e ∪ f that mention a variable f lacks go on this edge;
    # those within f wait for a later step.
    placed = tuple(p for p in state.unplaced if p.vars <= scope and p.vars & extra)
    child = state.points[e]
    node = state.builder.add(state.edges[f], (state.points[f], child))
    state.builder.preds[child] = state.builder.preds[child] + placed
    state.unplaced = tuple(p for p in state.unplaced if p not in placed)
    del state.edges[e]
    del state.points[e]
    state.points[f] = node
    return node


def _reduce(
    state: _State, protected: frozenset[str], out: list, created: list, budget: list
):
    """Depth-first over absorb choices; appends (state, created) of every end state."""
    if budget[0] <= 0:
        return
    created = created + _iso_all(state, protected)
    options = _absorb_options(state, protected)
    if not options:
        budget[0] -= 1
        out.append((state, created))
        return
    first_e = options[0][0]
    branches = [o for o in options if o[0] == first_e]
    # Also try absorbing a different edge first when it makes a different guard.
    branches += [o for o in options if o[0] != first_e][:2]
    for e, f in branches:
        nxt = state.copy()
        node = _absorb(nxt, e, f)
        _reduce(nxt, protected, out, created + [node], budget)


def _initial(query: Query) -> _State:
    b = _Builder()
    edges, points = {}, {}
    for i, atom in enumerate(query.atoms):
        points[i] = b.add(atom.vars, atom=i)
        edges[i] = frozenset(atom.vars)
    return _State(b, edges, points, tuple(query.predicates))


def _cycle_message(query: Query, state: _State) -> str:
    atoms = [query.atoms[e] for e in sorted(state.edges) if state.edges[e]]
    names = ", ".join(a.alias for a in atoms)
    shared = sorted(set().union(*(state.edges[e] for e in state.edges)))
    msg = f"the query is cyclic: {names} join in a cycle (on {', '.join(shared)})"
    if state.unplaced:
        msg += "; predicates that fit no tree edge: " + ", ".join(
            map(str, state.unplaced)
        )
    return msg + (
        "; no decomposition into bags of at most 3 tables (inner views) "
        "makes it acyclic"
    )


def plan_query(query: Query | SetQuery, stats: Stats | None = None) -> Plan:
    """Search GJT pairs for `query` and return the cheapest: by
    `estimated_work` under `stats` when given, then by `Plan.cost`. A `<>`
    that fits no tree edge is checked on the rows of the query without it
    instead. A set operation gets the plans of its sides (`SetPlan`)."""
    if isinstance(query, SetQuery):
        return SetPlan(
            query, plan_query(query.left, stats), plan_query(query.right, stats)
        )
    if isinstance(query, WindowQuery):
        return WindowPlan(query, plan_query(query.input, stats))
    try:
        return _plan_query(query, stats)
    except UnsupportedQueryError:
        ne = [p for p in query.predicates if p.op == "ne"]
        if not ne:
            raise
    rest = tuple(p for p in query.predicates if p.op != "ne")
    residual = tuple(Op("ne", (Var(p.left), _shifted(p.right, p.offset))) for p in ne)
    return _plan_query(
        replace(query, predicates=rest, residual=query.residual + residual), stats
    )


# Figures assumed for a relation the statistics do not cover (a subquery's
# result, a table left out): a mid-sized table.
UNKNOWN_ROWS = 1_000


def estimated_work(plan: Plan, stats: Stats) -> float:
    """Parent tuples updated when every input row is inserted once, read off
    the plan's trigger program (`dynyan.compiler.triggers`): each leaf's rows
    times, on its path to the root, the fan-out of every step that loops over
    the sibling's groups (an update of the child's key reaches each parent
    tuple with that key: D(parent vars) / D(shared vars)); a weight lookup,
    range sum or scan passes one delta on. D(X), the distinct
    combinations of X, is the product of the variables' distinct counts (the
    smallest over the atoms that bind each), capped by the rows of any atom
    binding all of X."""
    return _work_estimator(plan.query, stats)(plan)


def _work_estimator(query: Query, stats: Stats):
    """`estimated_work` for the plans of `query`: the per-variable figures
    are computed once, not once per candidate tree."""
    atoms = query.atoms
    columns = {r.name: r.columns for r in query.relations}

    def rows(atom) -> int:
        n = stats.table_rows(atom.relation)
        return UNKNOWN_ROWS if n is None else max(n, 1)

    ndv: dict[str, int] = {}
    for atom in atoms:
        cols = columns.get(atom.relation, ())
        for i, v in enumerate(atom.variables):
            if v is None:
                continue
            d = stats.ndv(atom.relation, cols[i]) if i < len(cols) else None
            d = rows(atom) if d is None else max(d, 1)
            ndv[v] = min(ndv.get(v, d), d)
        for v, _ in atom.derived:
            ndv.setdefault(v, rows(atom))

    def combos(xs: set[str]) -> float:
        if not xs:
            return 1.0
        product = 1.0
        for x in xs:
            product *= ndv.get(x, UNKNOWN_ROWS)
        caps = [rows(a) for a in atoms if xs <= set(a.vars)]
        return min([product, *caps])

    def work(plan: Plan) -> float:
        total = 0.0
        for trigger in trigger_program(plan).triggers:
            touched = float(rows(atoms[plan.nodes[trigger.leaf].atom]))
            node, looped = trigger.leaf, False
            for step in trigger.steps:
                if isinstance(step, Weigh):
                    # a lookup, range sum or scan passes one Δ on; a loop
                    # over the sibling's groups one per parent tuple
                    looped = step.how == "loop"
                elif isinstance(step, Propagate):
                    if looped:
                        up = set(plan.nodes[step.node].vars)
                        shared = up & set(plan.nodes[node].vars)
                        touched *= max(1.0, combos(up) / combos(shared))
                    node, looped = step.node, False
            total += touched
        return total

    return work


def _shifted(var: str, offset):
    return Op("add", (Var(var), Lit(offset))) if offset else Var(var)


def is_acyclic(query: Query) -> bool:
    """Whether a join tree holds `query`'s atoms as they are, its
    inequalities on edges (else the frontend groups tables into bags)."""
    probe: list = []
    _reduce(_initial(query), frozenset(), probe, [], [1])
    return not _is_cyclic_core(probe[0][0])


def _plan_query(query: Query, stats: Stats | None) -> Plan:
    # Acyclicity first, for a clear refusal that names the cycle.
    probe: list = []
    _reduce(_initial(query), frozenset(), probe, [], [1])
    end = probe[0][0]
    if _is_cyclic_core(end):
        raise CyclicQueryError(_cycle_message(query, end))

    output = frozenset(query.plan_vars)
    widened: list[str] = []
    while True:
        plans, stuck = _plans_for(query, output)
        if plans or not stuck:
            break
        # Not free-connex: widen the output by the variables that block it.
        added = sorted(stuck, key=query.all_vars.index)
        widened += added
        output |= set(added)
    if not plans:
        raise UnsupportedQueryError("no join tree found for this query")
    fits = _padded_leaves_fit if any(a.padded for a in query.atoms) else None
    if fits is not None:
        plans = [p for p in plans if fits(p)]
        if not plans:
            raise PaddedLeafUnplaced("no join tree holds a NULL-padded table as a leaf")
    if stats is None:
        rank = lambda p: (p.cost, p.draw())  # noqa: E731
    else:
        work = _work_estimator(query, stats)
        rank = lambda p: (work(p), p.cost, p.draw())  # noqa: E731
    best = min(plans, key=rank)
    keys = order_vars(query)
    if keys and not widened and not ranked_root(best):
        # Ranked enumeration: a root holding the ORDER BY variables is
        # enumerated in its sorted order, so no sorted copy of the result is
        # kept. Preferred even at more non-guard hops: the copy's upkeep
        # touches every changed result row, which such hops bound.
        ranked = [
            p
            for p in _plans_for(query, output, keys)[0]
            if ranked_root(p) and (fits is None or fits(p))
        ]
        if ranked:
            best = min(ranked, key=rank)
    if widened:
        best = replace(best, widened=tuple(widened))
    if query.subqueries:
        best = replace(
            best,
            subplans=tuple((n, plan_query(q, stats)) for n, q in query.subqueries),
        )
    log.debug("chose among %d plans, cost %s:\n%s", len(plans), best.cost, best)
    return best


def _plans_for(
    query: Query, output: frozenset[str], at_root: frozenset[str] = frozenset()
) -> tuple[list[Plan], set[str]]:
    """Candidate plans whose N outputs exactly `output`, and the variables
    that block free-connexity when there are none. Phase 2 keeps the
    variables `at_root` (for a root that holds them)."""
    plans = []
    stuck: set[str] = set()
    phase1: list = []
    _reduce(_initial(query), output, phase1, [], [MAX_CANDIDATES])
    for state1, created1 in phase1:
        residual = dict(state1.points)
        if any(not v <= output for v in state1.edges.values()):
            stuck |= {x for v in state1.edges.values() for x in v - output}
            continue
        phase2: list = []
        _reduce(
            state1.copy(),
            at_root,
            phase2,
            [],
            [MAX_CANDIDATES // max(1, len(phase1)) + 1],
        )
        for state2, created2 in phase2:
            final = _join_components(state2)
            if final is None:
                continue
            root_node, extra = final
            in_n = set(residual.values()) | set(created2) | set(extra)
            plans.append(_finish(query, state2.builder, root_node, in_n))
    return plans, set() if plans else stuck


def _is_cyclic_core(state: _State) -> bool:
    """A reduction with nothing protected that stops with >1 non-empty
    connected hyperedges (or unplaced predicates) means a cycle."""
    if state.unplaced:
        return True
    nonempty = [v for v in state.edges.values() if v]
    return len(nonempty) > 1


def _join_components(state: _State) -> tuple[int, list[int]] | None:
    """Phase 2 ends with one hyperedge per connected part, all of them empty
    but one at most; join them under empty-labelled roots (cartesian product)."""
    if state.unplaced:
        return None
    live = sorted(state.edges)
    if len(live) == 1:
        return state.points[live[0]], []
    if any(state.edges[e] for e in live):
        return None
    created = []
    node = state.points[live[0]]
    for e in live[1:]:
        node = state.builder.add(frozenset(), (node, state.points[e]))
        created.append(node)
    return node, created


# --- contraction -----------------------------------------------------------------


def _finish(query: Query, b: _Builder, root: int, in_n: set[int]) -> Plan:
    """Drop the reduction's bookkeeping nodes (DESIGN.md §3, 'contract')."""
    parent: dict[int, int | None] = {root: None}
    stack = [root]
    while stack:
        n = stack.pop()
        for c in b.children[n]:
            parent[c] = n
            stack.append(c)

    def replace_child(p: int | None, old: int, new: int):
        nonlocal root
        if p is None:
            root = new
        else:
            b.children[p] = tuple(new if c == old else c for c in b.children[p])
        parent[new] = p

    changed = True
    while changed:
        changed = False
        for n in list(parent):
            if n not in parent or len(b.children[n]) != 1:
                continue
            (c,) = b.children[n]
            p = parent[n]
            # A unary node is kept only where it projects onto the frontier of
            # N (or is the root doing so); elsewhere the parent's index or the
            # sibling index projects just as well.
            if b.vars[n] == b.vars[c] and n in in_n:
                in_n.add(c)
            if c in in_n or b.vars[n] == b.vars[c] or (n not in in_n and p is not None):
                b.preds[c] = b.preds[c] + b.preds[n]
                replace_child(p, n, c)
                del parent[n]
                changed = True

    # Renumber in preorder so names are stable.
    order, stack = [], [root]
    while stack:
        n = stack.pop()
        order.append(n)
        stack.extend(reversed(b.children[n]))
    new_id = {old: i for i, old in enumerate(order)}
    var_order = {v: i for i, v in enumerate(query.all_vars)}
    nodes, parents = [], []
    for old in order:
        nodes.append(
            Node(
                id=new_id[old],
                vars=tuple(sorted(b.vars[old], key=var_order.__getitem__)),
                children=tuple(new_id[c] for c in b.children[old]),
                atom=b.atom[old],
                predicates=b.preds[old],
            )
        )
        parents.append(new_id[parent[old]] if parent[old] is not None else None)
    # Leaves keep their atom's column order.
    nodes = [
        (
            Node(n.id, query.atoms[n.atom].vars, n.children, n.atom, n.predicates)
            if n.is_leaf
            else n
        )
        for n in nodes
    ]
    return Plan(
        query,
        tuple(nodes),
        0,
        frozenset(new_id[n] for n in in_n if n in new_id),
        tuple(parents),
    )
