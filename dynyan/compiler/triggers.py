"""The trigger program: what an update of each relation does, step by step,
and the structure every node of (T, N) keeps (docs/design.md §4).

It sits between the plan and the code: `trigger_program(plan)` decides, once,
the structures and the steps; `dynyan.compiler.render` turns each step into
Python and `dynyan explain --triggers` prints the program. What a node keeps:

| node is …                                     | structure                          |
|-----------------------------------------------|------------------------------------|
| the root (an atom's, or the result is kept)   | flat: tuple -> multiplicity         |
| in N, not root, adds variables to its parent  | groups: key -> {tuple: mult}        |
| in N, frontier, adds no variable              | flat: tuple -> multiplicity         |
| has a sibling that is a guard of the parent   | weights: key -> Σ multiplicity      |
| has a sibling that is not a guard             | groups: key -> {parent part: Σ}     |

On an inequality edge groups become `sorted` (ordered on the compared
variable) and weights `rangesum` (summable over a range). Keys are the
variables a node shares with its parent (parent index) or its sibling
(sibling index), in the query's variable order.

An update of a leaf walks up the tree: it updates the node's structures, then
weighs its delta by the sibling's matching tuples (a guard sibling: one
lookup; on an inequality edge: a range sum or a scan; otherwise a loop over
the sibling's tuples, binding the parent's other variables) and goes up.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..errors import UnsupportedQueryError
from .ir import INFIX
from .names import Names
from .plan import Plan, SetPlan, WindowPlan, ranked_root


@dataclass(frozen=True)
class Theta:
    """The inequalities on one GJT edge, as a range on the child's variable
    `child` relative to the parent's variable `parent` (one range seek), plus
    any other inequalities, checked one by one."""

    child: str
    parent: str
    bounds: tuple  # ((op, k), ...): child op parent + k, all on this pair
    extra: tuple  # Predicates on other pairs

    def point(self) -> tuple[str, int | float] | None:
        """(op "ne", k) when the edge is just `child <> parent + k`: then the
        matching weight is the total less the weight at one value."""
        if self.bounds or len(self.extra) != 1 or self.extra[0].op != "ne":
            return None
        p = self.extra[0]
        if p.vars != {self.child, self.parent}:
            return None
        op, _, k = p.oriented(self.child)
        return op, k

    def __str__(self) -> str:
        return " AND ".join(
            [
                f"{self.child} {INFIX[op]} {self.parent}{_offset(k)}"
                for op, k in self.bounds
            ]
            + [str(p) for p in self.extra]
        )


def _offset(k) -> str:
    if not k:
        return ""
    return f" + {k}" if k > 0 else f" - {-k}"


def edge_theta(node, parent_vars) -> Theta | None:
    """The inequalities on the edge from `node` to its parent, oriented."""
    if not node.predicates:
        return None
    oriented = []
    for p in node.predicates:
        child = p.left if p.left in node.vars else p.right
        op, other, k = p.oriented(child)
        if other not in parent_vars:
            raise UnsupportedQueryError(
                f"inequality {p} does not fit its join tree edge"
            )
        oriented.append((child, other, op, k, p))
    ranged = [o for o in oriented if o[2] != "ne"] or oriented
    child, parent = ranged[0][0], ranged[0][1]
    bounds, extra = [], []
    seen_dirs = set()
    for c, o, op, k, p in oriented:
        direction = "lo" if op in ("gt", "ge") else "hi"
        if op == "ne":  # not a range: checked entry by entry
            extra.append(p)
        elif (c, o) == (child, parent) and direction not in seen_dirs:
            seen_dirs.add(direction)
            bounds.append((op, k))
        else:
            extra.append(p)
    return Theta(child, parent, tuple(bounds), tuple(extra))


# --- structures ---------------------------------------------------------------


@dataclass(frozen=True)
class Structure:
    """One index a node keeps. `attr` names it (the module's attribute; the
    renderer makes it a unique identifier)."""

    attr: str
    # "flat" | "groups" | "weights", or on an inequality edge: "sorted"
    # (groups ordered on `order`) | "rangesum" (weights summed over a range)
    kind: str
    key: tuple[str, ...]  # variables of the key
    entry: tuple[str, ...]  # groups: variables of the entry tuple
    doc: str
    order: str | None = None  # the variable a sorted structure is ordered on
    # weights of a NULL-padded leaf (`Atom.padded`): a key it does not hold
    # weighs as the padded row
    padded: bool = False

    def shape(self) -> str:
        key = ", ".join(self.key)
        entry = ", ".join(self.entry)
        if self.kind == "flat":
            return f"({key}) -> multiplicity"
        if self.kind == "weights":
            return f"({key}) -> Σ multiplicity"
        if self.kind == "rangesum":
            return f"({key}) -> range-sum tree on {self.order}"
        sorted_on = f" sorted on {self.order}" if self.kind == "sorted" else ""
        return f"({key}) -> {{({entry}): Σ multiplicity}}{sorted_on}"


@dataclass(frozen=True)
class NodeKeeps:
    """What one node of T keeps: its structures and the inequalities on the
    edge to its parent."""

    name: str
    tuple_vars: tuple[str, ...]
    parent_index: Structure | None = None
    sibling_index: Structure | None = None
    root_index: Structure | None = None
    theta: Theta | None = None

    @property
    def structures(self) -> tuple[Structure, ...]:
        return tuple(
            s
            for s in (self.root_index, self.parent_index, self.sibling_index)
            if s is not None
        )


def node_keeps(plan: Plan) -> tuple[NodeKeeps, ...]:
    """The structures of every node of `plan`, by node id."""
    order = {v: i for i, v in enumerate(plan.query.all_vars)}

    def keyvars(vars_) -> tuple[str, ...]:
        return tuple(sorted(vars_, key=order.__getitem__))

    names = Names()
    out: list[NodeKeeps] = []
    frontier = set(plan.frontier())
    for node in plan.nodes:
        base = plan.query.atoms[node.atom].alias if node.is_leaf else f"n{node.id}"
        name = names.new(base)
        p = plan.parent(node.id)
        theta = edge_theta(node, plan.node(p).vars) if p is not None else None
        root = parent_index = sibling_index = None
        if p is None and (node.is_leaf or not plan.materialised):
            # (a kept result is followed by deltas alone: nothing reads the
            # totals of a root without an atom, so it keeps none)
            root = Structure(
                f"{name}_root", "flat", node.vars, (), f"root {name}: its tuples"
            )
        elif p is not None and node.id in plan.in_n:
            shared = keyvars(set(node.vars) & set(plan.node(p).vars))
            if set(node.vars) - set(shared):
                parent_index = Structure(
                    f"{name}_by_{'_'.join(shared) or 'all'}",
                    "sorted" if theta else "groups",
                    shared,
                    node.vars,
                    f"{name} by the variables it shares with its parent"
                    + (f", ordered on {Names.clean(theta.child)}" if theta else ""),
                    theta.child if theta else None,
                )
            elif node.id in frontier:
                parent_index = Structure(
                    name, "flat", node.vars, (), f"{name}: its tuples"
                )
        s = plan.sibling(node.id)
        if s is not None:
            sibling_index = _sibling_index(plan, node, s, name, theta, keyvars)
            if _presence_is_enough(plan, node.id, s, parent_index, sibling_index):
                sibling_index = None
            elif node.is_leaf and plan.query.atoms[node.atom].padded:
                sibling_index = replace(sibling_index, padded=True)
        out.append(NodeKeeps(name, node.vars, parent_index, sibling_index, root, theta))
    return tuple(out)


def padded_leaves_fit(plan: Plan) -> bool:
    """Whether every NULL-padded atom of `plan` (`Atom.padded`) is a leaf
    whose only structure is its weights by all of its variables, read by
    one lookup of its sibling: a missing key then reads as the padded row,
    and a change of the leaf's weights at a key changes what its parent
    holds by the new weight less the old one (the padded row's where there
    was none or is none). A leaf in N would be enumerated, the padded row
    with it; an inequality or a key short of its variables would sum it
    with other keys."""
    keeps = None
    for node in plan.nodes:
        if not node.is_leaf or not plan.query.atoms[node.atom].padded:
            continue
        keeps = keeps or node_keeps(plan)
        s = plan.sibling(node.id)
        index = keeps[node.id].sibling_index
        if (
            s is None
            or node.id in plan.in_n
            or index is None
            or keeps[node.id].structures != (index,)
            or keeps[node.id].theta is not None
            or keeps[s].theta is not None
            or index.kind != "weights"
            or set(index.key) != set(node.vars)
        ):
            return False
    return True


def _presence_is_enough(plan, node, s, parent_index, sibling_index) -> bool:
    """Whether sibling `s` needs to know only that `node` has tuples at a
    key, not their total weight: the result is kept (Plan.materialised) and
    their parent is a root that keeps nothing, so the weighed Δ of an update
    of `s` goes no higher; the weight would only decide whether the update
    emits (Δ is taken at `s`, in N), and `node`'s own groups by the same key
    answer that (a key has a group while its total is not zero)."""
    p = plan.parent(node)
    return (
        plan.materialised
        and p == plan.root
        and node in plan.in_n
        and s in plan.in_n
        and parent_index is not None
        and parent_index.kind == "groups"
        and sibling_index.kind == "weights"
        and parent_index.key == sibling_index.key
    )


def _sibling_index(plan, node, s, name, theta, keyvars) -> Structure:
    """What `node` keeps for its sibling `s`: the weight (or the parent's
    other variables) a change of `s` multiplies by."""
    p = plan.parent(node.id)
    shared = keyvars(set(node.vars) & set(plan.node(s).vars))
    rest = keyvars(set(plan.node(p).vars) - set(plan.node(s).vars))
    theta = theta or edge_theta(plan.node(s), plan.node(p).vars)
    by = "_".join(shared) or "all"
    if theta and not rest:  # this node is the one with the inequality edge
        ranged = not theta.extra or theta.point() is not None
        return Structure(
            f"{name}_count_by_{by}",
            "rangesum" if ranged else "sorted",
            shared,
            () if ranged else node.vars,
            f"{name}: multiplicities by what it shares with its sibling, "
            f"summable over a range of {Names.clean(theta.child)}",
            theta.child,
        )
    projected = ", ".join(map(Names.clean, rest))
    if theta:  # the guard: its sibling scans it on the parent side
        return Structure(
            f"{name}_{'_'.join(rest)}_by_{by}",
            "sorted",
            shared,
            rest,
            f"{name} projected on {projected}, by what it shares with its "
            f"sibling, ordered on {Names.clean(theta.parent)}",
            theta.parent,
        )
    if rest:
        return Structure(
            f"{name}_{'_'.join(rest)}_by_{by}",
            "groups",
            shared,
            rest,
            f"{name} projected on {projected}, by what it shares with its sibling",
        )
    return Structure(
        f"{name}_count_by_{by}",
        "weights",
        shared,
        (),
        f"{name}: total multiplicity by what it shares with its sibling",
    )


# --- steps --------------------------------------------------------------------


@dataclass(frozen=True)
class Filter:
    """Keep only the rows that satisfy the atom's local conditions (and whose
    join variables are not NULL: NULL joins nothing)."""

    conditions: tuple[str, ...]

    def __str__(self) -> str:
        return "filter   " + " AND ".join(self.conditions)


@dataclass(frozen=True)
class Project:
    """Read only these variables of the row (the leaf's tuple)."""

    vars: tuple[str, ...]

    def __str__(self) -> str:
        return f"project  ({', '.join(self.vars)})"


@dataclass(frozen=True)
class Payload:
    """Δ: the update's multiplicity m (+1 an insert, -1 a delete), with the
    count and each aggregate channel's factor of this atom (1 where it has
    none)."""

    channels: tuple[str, ...]

    def __str__(self) -> str:
        if not self.channels:
            return "payload  Δ = m"
        return f"payload  Δ = m × (1, {', '.join(self.channels)})"


@dataclass(frozen=True)
class Count:
    """Refuse a delete that would drive a count below zero: strict modules
    count every whole row of the relation, `--trust-input` modules the
    leaf's first structure (its projected tuple)."""

    relation: str

    def __str__(self) -> str:
        return "check    a delete must find its row (strict) or tuple (trusting)"


@dataclass(frozen=True)
class Update:
    """Add Δ to one structure of `node`."""

    node: int
    structure: Structure

    def __str__(self) -> str:
        s = self.structure
        text = f"update   {s.attr} ({s.kind}) at ({', '.join(s.key)}) += Δ"
        if s.padded:
            text += (
                "; Δ := its new weight less its old (a NULL-padded row's where none)"
            )
        return text


@dataclass(frozen=True)
class Weigh:
    """Multiply Δ by what the sibling `node` holds for it: `how` is
    "lookup" (a guard's total weight, O(1)), "present" (only whether the
    sibling has tuples there, O(1)), "range" (a range sum, O(log n)),
    "besides" (the total less one value's weight), "scan" (a sorted scan
    summing the entries in range) or "loop" (one Δ per matching tuple of the
    sibling, binding the parent's other variables)."""

    node: int
    structure: Structure
    how: str
    theta: Theta | None = None

    def __str__(self) -> str:
        s = self.structure
        where = f" where {self.theta}" if self.theta else ""
        text = {
            "lookup": f"Δ × {s.attr}[{', '.join(s.key)}]"
            + (", a NULL-padded row where none" if s.padded else "")
            + "  (O(1))",
            "present": f"Δ only where {s.attr}[{', '.join(s.key)}] has tuples  (O(1))",
            "range": f"Δ × range sum of {s.attr}{where}  (O(log n))",
            "besides": f"Δ × (total of {s.attr} less one value){where}  (O(log n))",
            "scan": f"Δ × Σ over {s.attr}{where}  (a sorted scan)",
            "loop": f"for each ({', '.join(s.entry)}) in {s.attr}"
            f"[{', '.join(s.key)}]{where}: Δ × its multiplicity",
        }[self.how]
        return f"weigh    {text}"


@dataclass(frozen=True)
class Propagate:
    """Carry Δ up to the parent `node`."""

    node: int
    name: str

    def __str__(self) -> str:
        return f"up to    {self.name}"


@dataclass(frozen=True)
class Emit:
    """Push mode: the result changes by Δ (taken at the first node of N on
    the path) times every combination of the other nodes of N."""

    anchor: str
    others: tuple[str, ...]
    # the module keeps the result (Plan.materialised): every update emits
    always: bool = False

    def __str__(self) -> str:
        when = (
            "(every update: the kept result follows these deltas)"
            if self.always
            else "(push mode)"
        )
        if not self.others:
            return f"emit     Δ at {self.anchor} {when}"
        return (
            f"emit     Δ at {self.anchor} × each tuple of "
            f"{', '.join(self.others)} {when}"
        )


@dataclass(frozen=True)
class Trigger:
    """The steps one insert or delete of a row of `relation` takes through
    the leaf of atom `alias`."""

    relation: str
    alias: str
    leaf: int
    steps: tuple

    def lines(self) -> list[str]:
        name = (
            self.relation
            if self.alias == self.relation
            else f"{self.relation} {self.alias}"
        )
        steps = [f"  {step}" for step in self.steps]
        return [f"on {name}:", *steps, f"  cost     {self.cost()}"]

    def cost(self) -> str:
        """The work of one update, from its steps: lookups are O(1), sorted
        structures and range sums O(log n), and each loop (or scan) does its
        work once per tuple it visits, which the update does not bound."""
        visits = [
            f"{s.structure.attr}[{', '.join(s.structure.key)}]"
            + (f" with {s.theta}" if s.theta else "")
            for s in self.steps
            if isinstance(s, Weigh) and s.how in ("loop", "scan")
        ]
        logs = any(
            (isinstance(s, Update) and s.structure.kind in ("sorted", "rangesum"))
            or (isinstance(s, Weigh) and s.how in ("range", "besides"))
            for s in self.steps
        )
        base = "O(log n)" if logs else "O(1)"
        text = f"{base} per update"
        if visits:
            text = (
                f"{base} per tuple visited in "
                + " × ".join(visits)
                + " (as many as match: not bounded by the update)"
            )
        emit = next((s for s in self.steps if isinstance(s, Emit)), None)
        if emit is not None and emit.always:
            text += (
                "; then one step per row of N's output it changes, pull mode "
                "too (the kept result follows them; not bounded by the update)"
            )
        elif emit is not None:
            text += "; push mode: one step more per result row it changes"
        return text

    def __str__(self) -> str:
        return "\n".join(self.lines())


@dataclass(frozen=True)
class TriggerProgram:
    plan: Plan
    nodes: tuple[NodeKeeps, ...]
    ranked: bool
    triggers: tuple[Trigger, ...]

    def path(self, leaf: int) -> tuple:
        """The steps that carry a leaf's Δ to the root (Update, Weigh,
        Propagate)."""
        return _path(self.plan, self.nodes, leaf)

    def __str__(self) -> str:
        lines = ["Structures (per node of T):"]
        for info in self.nodes:
            for s in info.structures:
                lines.append(f"  {s.attr}: {s.kind} {s.shape()}  # {s.doc}")
        if self.ranked:
            lines.append(
                f"  {self.nodes[self.plan.root].name}: also a SortedKeyList of its "
                "tuples on the ORDER BY key (ranked enumeration)"
            )
        lines += ["", "Triggers (an update of m copies of a row; Δ: its payload):"]
        for trigger in self.triggers:
            lines += ["  " + line for line in trigger.lines()]
        return "\n".join(lines)


def _path(plan: Plan, nodes, leaf: int) -> tuple:
    steps: list = []
    node = leaf
    while True:
        for s in nodes[node].structures:
            steps.append(Update(node, s))
        p = plan.parent(node)
        if p is None:
            return tuple(steps)
        sib = plan.sibling(node)
        if sib is not None:
            si = nodes[sib].sibling_index
            if si is None:  # its tuples' presence is enough (_presence_is_enough)
                steps.append(Weigh(sib, nodes[sib].parent_index, "present"))
            else:
                theta = nodes[node].theta or nodes[sib].theta
                steps.append(Weigh(sib, si, _how(si, theta), theta))
        steps.append(Propagate(p, nodes[p].name))
        node = p


def _how(si: Structure, theta: Theta | None) -> str:
    if si.kind == "weights":
        return "lookup"
    if si.kind == "rangesum":
        return "range" if theta.point() is None else "besides"
    if si.kind == "sorted" and si.order == theta.child:  # θ-child scanned, summed
        return "scan"
    return "loop"  # the parent's other variables are bound here


def trigger_program(plan: Plan) -> TriggerProgram:
    """The structures and, per atom, the steps of an update.

    >>> from dynyan.compiler import compile_query
    >>> plan = compile_query("CREATE TABLE r (a INT, b INT); CREATE TABLE s "
    ...     "(b INT, c INT); SELECT * FROM r, s WHERE r.b = s.b AND s.c > 0")
    >>> print(trigger_program(plan).triggers[1])
    on s:
      filter   (s.c > 0)
      project  (b, c)
      payload  Δ = m
      check    a delete must find its row (strict) or tuple (trusting)
      update   s_by_b (groups) at (b) += Δ
      update   s_count_by_b (weights) at (b) += Δ
      weigh    Δ × r_count_by_b[b]  (O(1))
      up to    n0
      update   n0_root (flat) at (b) += Δ
      emit     Δ at s × each tuple of r (push mode)
      cost     O(1) per update; push mode: one step more per result row it changes
    """
    nodes = node_keeps(plan)
    query = plan.query
    triggers = []
    for node in plan.nodes:
        if not node.is_leaf:
            continue
        atom = query.atoms[node.atom]
        steps: list = []
        conditions = [str(f) for f in atom.filters]
        if conditions:
            steps.append(Filter(tuple(conditions)))
        steps.append(Project(node.vars))
        channels = tuple(
            next((str(e) for a, e in ch.factors if a == node.atom), "1")
            for ch in query.channels
        )
        steps += [Payload(channels), Count(atom.relation)]
        path = _path(plan, nodes, node.id)
        steps += path
        on_path = [node.id] + [s.node for s in path if isinstance(s, Propagate)]
        anchor = next((n for n in on_path if n in plan.in_n), None)
        if anchor is not None:
            others = [
                nodes[n].name
                for n in plan.preorder()
                if n in plan.in_n and n not in on_path
            ]
            steps.append(Emit(nodes[anchor].name, tuple(others), plan.materialised))
        triggers.append(Trigger(atom.relation, atom.alias, node.id, tuple(steps)))
    return TriggerProgram(plan, nodes, ranked_root(plan), tuple(triggers))


def explain_triggers(plan: Plan | SetPlan) -> str:
    """The trigger program of `plan` (of each side of a set operation, and of
    each inner view), as text."""
    if isinstance(plan, WindowPlan):
        return "The windows' view, over the rows of:\n" + _indent(
            explain_triggers(plan.input)
        )
    if isinstance(plan, SetPlan):
        return "\n\n".join(
            f"Side {i} of the {plan.query.kind.upper()}:\n"
            + _indent(explain_triggers(side))
            for i, side in enumerate(plan.plans(), 1)
        )
    parts = [str(trigger_program(plan))]
    for name, sub in plan.subplans:
        parts.append(f"Inner view {name}:\n" + _indent(explain_triggers(sub)))
    return "\n\n".join(parts)


def _indent(text: str) -> str:
    return "\n".join("  " + line if line else line for line in text.splitlines())
