"""The planner's product: a GJT pair (T, N) (`Plan`), or one per side of a
set operation (`SetPlan`), with what can be read off it without code: its
cost (`Plan.cost`), its complexity and whether enumeration follows ORDER BY
from the root (`ranked_root`). `dynyan.compiler.planner` searches for it."""

from __future__ import annotations

from dataclasses import dataclass, field

from .ir import InnerTest, Op, Predicate, Query, SetQuery, Var, WindowQuery


@dataclass(frozen=True)
class Node:
    """A GJT node. Children come guard first; leaves carry their atom index."""

    id: int
    vars: tuple[str, ...]
    children: tuple[int, ...] = ()
    atom: int | None = None
    # θ-predicates on the edge from this node to its parent.
    predicates: tuple[Predicate, ...] = ()

    @property
    def is_leaf(self) -> bool:
        return self.atom is not None


@dataclass(frozen=True)
class Plan:
    """A GJT pair: the tree, its root, and the connex node set N."""

    query: Query
    nodes: tuple[Node, ...]  # indexed by Node.id
    root: int
    in_n: frozenset[int]
    parents: tuple[int | None, ...] = field(default=(), compare=False)
    # Variables added to the output to make it free-connex (Q_F): the
    # projected result is then materialised from the deltas of Q_F.
    widened: tuple[str, ...] = ()
    # Plans of the subqueries whose results are virtual relations of this one.
    subplans: tuple[tuple[str, "Plan"], ...] = ()

    @property
    def n_vars(self) -> tuple[str, ...]:
        """The variables N outputs: the query's output plus `widened`."""
        return tuple(self.query.plan_vars) + self.widened

    @property
    def materialised(self) -> bool:
        """Whether the module keeps the result itself, maintained from the
        deltas of the query N outputs in pull mode too: N's output is wider
        than the result (`widened`, or variables an aggregate or a residual
        condition reads), or an aggregate's argument is computed (its
        channels then need the rows)."""
        query = self.query
        return bool(
            self.widened
            or query.extra_vars
            or query.residual
            or any(a.computed is not None for a in query.aggregates)
        )

    def node(self, i: int) -> Node:
        return self.nodes[i]

    def parent(self, i: int) -> int | None:
        return self.parents[i]

    def sibling(self, i: int) -> int | None:
        p = self.parents[i]
        if p is None or len(self.nodes[p].children) != 2:
            return None
        a, b = self.nodes[p].children
        return b if a == i else a

    def frontier(self) -> list[int]:
        """Nodes of N with no child in N (N is sibling-closed: all or none)."""
        return [
            n
            for n in self.preorder()
            if n in self.in_n
            and not any(c in self.in_n for c in self.nodes[n].children)
        ]

    def preorder(self, start: int | None = None) -> list[int]:
        order, stack = [], [self.root if start is None else start]
        while stack:
            n = stack.pop()
            order.append(n)
            stack.extend(reversed(self.nodes[n].children))
        return order

    def is_guard(self, child: int) -> bool:
        p = self.parents[child]
        return p is None or set(self.nodes[p].vars) <= set(self.nodes[child].vars)

    @property
    def simple(self) -> bool:
        """Every child is a guard: updates cost O(|u|) (q-hierarchical)."""
        return all(self.is_guard(n) for n in range(len(self.nodes)))

    @property
    def cost(self) -> tuple:
        """Lexicographic: the most non-guard hops on any leaf's path to the
        root (each hop makes an update iterate over the sibling's matching
        tuples, and hops multiply), then non-guard children in all, then
        inequalities on the busiest edge, then tree size (every node is a
        structure to maintain)."""
        non_guards = sum(not self.is_guard(n) for n in range(len(self.nodes)))
        hops = 0
        for leaf in (n.id for n in self.nodes if n.is_leaf):
            count, node = 0, leaf
            while self.parents[node] is not None:
                count += not self.is_guard(node)
                node = self.parents[node]
            hops = max(hops, count)
        theta = max((len(n.predicates) for n in self.nodes), default=0)
        return (hops, non_guards, theta, len(self.nodes))

    def label(self, i: int) -> str:
        node = self.nodes[i]
        star = "*" if i in self.in_n else ""
        if node.is_leaf:
            atom = self.query.atoms[node.atom]
            name = (
                atom.alias
                if atom.alias == atom.relation
                else f"{atom.relation} {atom.alias}"
            )
            text = f"{star}{name}({', '.join(v or '_' for v in atom.variables)})"
        else:
            text = f"{star}[{', '.join(node.vars)}]"
        if node.predicates:
            text += " on " + " AND ".join(map(str, node.predicates))
        return text

    def draw(self) -> str:
        """The tree, one node a line; * marks N, (F) its frontier."""
        frontier = set(self.frontier())
        lines: list[str] = []

        def walk(i: int, prefix: str, tail: str):
            node = self.nodes[i]
            role = "root" if i == self.root else "leaf" if node.is_leaf else ""
            if i in frontier and i != self.root and not node.is_leaf:
                role = "frontier"
            lines.append(f"{tail}{self.label(i)} {role}".rstrip())
            kids = node.children
            for k, c in enumerate(kids):
                last = k == len(kids) - 1
                walk(
                    c,
                    prefix + ("    " if last else "│   "),
                    prefix + ("└── " if last else "├── "),
                )

        walk(self.root, "", "")
        return "\n".join(lines)

    def __str__(self) -> str:
        text = self.draw()
        for name, sub in self.subplans:
            text += f"\n\nrelation {name} := inner view\n" + sub.draw()
        return text


@dataclass(frozen=True)
class SetPlan:
    """The plans of the two sides of a UNION/INTERSECT/EXCEPT (`SetQuery`)."""

    query: SetQuery
    left: "Plan | SetPlan"
    right: "Plan | SetPlan"

    @property
    def subplans(self) -> tuple:
        return ()

    def plans(self) -> list[Plan]:
        """The plans of the SELECTs it combines, left to right."""
        out = []
        for side in (self.left, self.right):
            out += side.plans() if isinstance(side, (SetPlan, WindowPlan)) else [side]
        return out

    def draw(self) -> str:
        word = self.query.kind.upper() + (" ALL" if self.query.all else "")
        parts = []
        for side in (self.left, self.right):
            text = side.draw() if isinstance(side, (SetPlan, WindowPlan)) else str(side)
            parts.append("  " + text.replace("\n", "\n  "))
        return f"{parts[0]}\n{word}\n{parts[1]}"

    def __str__(self) -> str:
        return self.draw()


@dataclass(frozen=True)
class WindowPlan:
    """The plan of the rows a `WindowQuery` computes its windows over."""

    query: WindowQuery
    input: "Plan | SetPlan"

    @property
    def subplans(self) -> tuple:
        return ()

    @property
    def sides(self) -> tuple:
        return (self.input,)

    def plans(self) -> list[Plan]:
        """The plans of the SELECTs under it."""
        side = self.input
        return side.plans() if isinstance(side, (SetPlan, WindowPlan)) else [side]

    def draw(self) -> str:
        side = self.input
        text = side.draw() if isinstance(side, (SetPlan, WindowPlan)) else str(side)
        lines = ["WINDOW over the rows of:", "  " + text.replace("\n", "\n  ")]
        lines += [f"  compute {f}" for f in self.query.functions]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.draw()


# --- the reduction -------------------------------------------------------------


def order_vars(query: Query) -> frozenset[str]:
    """The variables of ORDER BY when enumeration can follow it from the
    root: an ungrouped query ordered by plain columns (else empty)."""
    order = query.ordering
    if order is None or query.grouped or query.residual or query.extra_vars:
        return frozenset()
    keys = [query.outputs[k.position].expr for k in order.keys]
    if not all(isinstance(e, Var) for e in keys):
        return frozenset()
    return frozenset(e.name for e in keys)


def ranked_root(plan: Plan) -> bool:
    """Whether enumeration follows ORDER BY from the root: the root (in N)
    holds every ORDER BY variable and the result is not materialised. The
    root's tuples are then kept sorted on their ORDER BY values too (ranked
    enumeration: the rows below one root tuple tie on every sort key)."""
    query = plan.query
    keys = order_vars(query)
    return bool(
        keys
        and not plan.widened
        and plan.root in plan.in_n
        and keys <= set(plan.nodes[plan.root].vars)
    )


def orders_groups(query: Query) -> bool:
    """Whether a grouped query is ordered by group columns only: a group then
    keeps its place while it lives, so the groups are kept sorted and a
    group's row is computed when read."""
    order = query.ordering
    if order is None or not (query.grouped and query.group_vars) or query.distinct:
        return False
    groups = set(query.output_vars)
    return all(
        isinstance(e := query.outputs[k.position].expr, Var) and e.name in groups
        for k in order.keys
    )


def complexity(plan: Plan) -> str:
    """The update and delay bounds the plan gives, for `dynyan explain`."""
    if plan.simple:
        update = "simple GJT (q-hierarchical): O(|u|) per update"
    else:
        update = "non-simple GJT: O(|db| + |u|) per update in the worst case"
    theta = [n for n in plan.nodes if n.predicates]
    ranged = [n for n in theta if any(p.op != "ne" for p in n.predicates)]
    if ranged:
        update += ", O(log |db|) more per inequality edge on the path"
    notes = []
    if any(p.op == "ne" for n in theta for p in n.predicates):
        notes.append(
            "a <> on an edge: enumeration skips the entries equal to the bound "
            "value; an update gets its weight as the key's total less the equal "
            "entries' (O(log |db|); with other predicates on that edge it scans "
            "the key's group)"
        )
    elif any(len({p.vars for p in n.predicates}) > 1 for n in theta):
        notes.append("an edge compares several column pairs, so enumeration filters")
    residual = plan.query.residual
    if residual:
        notes.append(
            ", ".join(map(str, residual)) + " fits no tree edge: checked on each "
            "row of the query without it, whose result is materialised (memory "
            "proportional to that result)"
        )
    if plan.widened:
        notes.append(
            "not free-connex: output widened by "
            + ", ".join(plan.widened)
            + ", the projected result is materialised (memory proportional to the "
            "result) and maintained from the widened query's deltas"
        )
    if not notes:
        return update + "; enumeration with constant delay"
    if not (residual or plan.widened):
        notes[-1] += " (delay no longer constant)"
    return "; ".join([update, *notes])


def counted_in_state(plan: Plan, name: str, sub) -> bool:
    """Whether subquery `name` is a projection of one table R, filtered by
    R's own columns, read only by an EXISTS with a condition on an atom of
    R itself (TPC-H Q21's two subqueries): its view would keep one count per
    row of its result, and the test's state one more entry for it. The
    module counts R's rows per result row in the test's state instead
    (`render._counted_rows`); R's own leaf checks the rows they take."""
    if isinstance(sub, (SetPlan, WindowPlan)) or sub.subplans:
        return False
    q = sub.query
    if (
        len(q.atoms) != 1
        or q.grouped
        or q.aggregates
        or q.channels
        or q.having is not None
        or q.ordering is not None
        or q.residual
        or q.predicates
        or q.unread
        or q.null_safe
        or q.subqueries
    ):
        return False
    atom = q.atoms[0]
    named = [v for v in atom.variables if v is not None]
    if (
        atom.padded
        or atom.derived
        or len(named) != len(set(named))
        or any(isinstance(f, InnerTest) for e in atom.filters for f in _walk(e))
        or not all(isinstance(o.expr, Var) and o.expr.name in named for o in q.outputs)
    ):
        return False
    outer = plan.query
    tests = [
        (i, f)
        for i, a in enumerate(outer.atoms)
        for f in a.filters
        if isinstance(f, InnerTest) and f.view == name
    ]
    anywhere = [  # nested in a condition, or read beside the atom's filters
        f
        for e in (
            *(f for a in outer.atoms for f in a.filters),
            *outer.residual,
            *(o.expr for o in outer.outputs),
            *(() if outer.having is None else (outer.having,)),
        )
        for f in _walk(e)
        if isinstance(f, InnerTest) and f.view == name
    ]
    if len(tests) != 1 or len(anywhere) != 1:
        return False
    if name in {r.name for r in outer.relations}:
        return False
    i, test = tests[0]
    return (
        test.kind == "exists"
        and test.condition is not None
        and test.guard is None
        and outer.atoms[i].relation == atom.relation
    )


def _walk(e):
    """`e` and every expression inside it."""
    yield e
    if isinstance(e, Op):
        for a in e.args:
            yield from _walk(a)
