"""The parts of `dynyan explain` beyond the GJT pair: what ORDER BY/LIMIT,
a decomposed cycle and the inner views (subqueries) cost, and which rows
wait for a partner.

Each function reads a plan and returns lines of text (none when the query
has no such part), so `dynyan.compiler.explain` stays one list of sections.
"""

from __future__ import annotations

from .frontend.passes.decompose_cycles import MAX_WIDTH
from .gates import gates
from .ir import InnerTest, Query, SetQuery, WindowQuery
from .plan import (
    Plan,
    SetPlan,
    WindowPlan,
    counted_in_state,
    orders_groups,
    ranked_root,
)

BAG_PREFIX = "__bag"  # aliases decompose_cycles gives the bags


def unread_lines(plan: Plan) -> list[str]:
    """Tables the SQL names that the result does not depend on."""
    unread = getattr(plan.query, "unread", ())
    if not unread:
        return []
    names = ", ".join(r.name for r in unread)
    return [
        f"Tables the result does not depend on: {names} (their updates are "
        "checked, counted in strict mode, and change nothing)"
    ]


def waiting_lines(plan: Plan) -> list[str]:
    """Relations whose rows wait for a partner in a log (`gates.py`)."""
    if isinstance(plan, (SetPlan, WindowPlan)):
        return []
    query = plan.query
    lines = []
    for gate in gates(query):
        column = query.relation(gate.relation).columns[gate.column]
        lines.append(
            f"Rows that wait: a {gate.relation} row whose {column} no {gate.gate} "
            f"row its filters take has had is kept in a log, counted, until one "
            f"arrives (one dict entry, nothing in the indexes or inner views)"
        )
    return lines


def fan_out_lines(plan: Plan) -> list[str]:
    """Where the tree is not simple, what an update pays: a child that is no
    guard of its parent holds only part of the parent's key, so an update
    below it changes the weight of every parent tuple its sibling has at the
    shared key (and past its edge's inequalities), one step each. No lazy
    weights defer that work to enumeration: it is done at the update."""
    if isinstance(plan, (SetPlan, WindowPlan)):
        return []
    lines = []
    for i in plan.preorder():
        if plan.is_guard(i):
            continue
        parent = plan.node(plan.parent(i))
        node = plan.node(i)
        shared = [v for v in parent.vars if v in node.vars]
        sibling = plan.sibling(i)
        whose = f" of {_short_label(plan, sibling)}" if sibling is not None else ""
        text = f"every ({', '.join(parent.vars)}){whose}"
        if shared:
            text += f" with the same {', '.join(shared)}"
        if node.predicates:
            text += " where " + " AND ".join(map(str, node.predicates))
        rels = sorted(
            {
                plan.query.atoms[plan.node(n).atom].alias
                for n in plan.preorder(i)
                if plan.node(n).is_leaf
            }
        )
        bound = "up to all of them" if node.predicates else "one if the key is unique"
        lines.append(
            f"  an update of {', '.join(rels)} visits {text}, one weight update "
            f"each ({bound})"
        )
    if not lines:
        return []
    return [
        "Fan-out (children that are no guard of their parent: the work is done "
        "at the update, no lazy weights defer it):",
        *lines,
    ]


def _short_label(plan: Plan, i: int) -> str:
    """A node by its table (a leaf) or its key (an inner node)."""
    node = plan.node(i)
    if node.is_leaf:
        return plan.query.atoms[node.atom].alias
    return f"[{', '.join(node.vars)}]"


def ordering_lines(plan: Plan) -> list[str]:
    """ORDER BY [LIMIT k] [OFFSET m]: the structure the module keeps (ranked
    enumeration from the root, or a sorted index), its memory, and the cost
    of an update and of enumeration."""
    query = plan.query
    order = query.ordering
    if order is None:
        return []
    keys = ", ".join(
        f"{query.outputs[k.position].name}{' DESC' if k.descending else ''}"
        for k in order.keys
    )
    lines = [f"Ordering: ORDER BY {keys}" + _window(order)]
    if ranked_root(plan):
        lines += [
            f"  structure: ranked enumeration: the root {plan.label(plan.root)} "
            "holds every ORDER BY variable, its tuples are also kept in a "
            "SortedKeyList on the sort key; enumeration walks them in that order "
            "(the rows below one root tuple tie on every key), so the result is "
            "not copied",
            "  memory: one entry per root tuple (not per result row)",
        ]
        update = "O(log n) when a root tuple appears or disappears (n: root tuples)"
    else:
        rows = "groups" if query.grouped else "distinct result rows"
        if orders_groups(query):
            lines.append(
                "  structure: a sorted index (SortedKeyList on the sort key) of "
                "the live groups (ORDER BY names group columns only: a group "
                "keeps its place while it lives); a group's row is computed "
                "when read"
            )
            update = (
                "O(log n) when a group appears or disappears (n: groups), in "
                "pull mode at the next read"
            )
        else:
            lines.append(
                f"  structure: the {rows}, each with its multiplicity, sorted "
                "(SortedKeyList on the sort key) when read: the rows that "
                "entered or left since the last read are put in or taken out "
                "then, or all are sorted again when they are more than a quarter"
            )
            update = (
                "O(1) per changed output row on top of the update of (T, N), "
                "in pull mode at the next read (the deltas of the calls since "
                "the last one merged per row first); the first read after m "
                f"rows moved O(min(m log n, n log n)) (n: {rows})"
            )
        if query.grouped:
            memory = "one entry per group"
        else:
            memory = (
                "one entry per distinct result row: the result is materialised, "
                "memory proportional to the result, not only to the database"
            )
        if order.limit is not None:
            memory += f"; all of them, not only the {order.limit} shown (a row "
            memory += "below the cut may move up when one above it leaves)"
        lines.append(f"  memory: {memory}")
    if order.limit is not None or order.offset:
        shown = (order.offset or 0) + (order.limit or 0)
        update += (
            f"; push mode compares the rows shown before and after each update "
            f"(O({shown if order.limit is not None else 'n'}) more)"
        )
    lines.append(f"  update: {update}")
    if order.limit is not None:
        first = f"first {order.limit} rows"
        if order.offset:
            first += f" after skipping {order.offset} (O({order.offset}) to skip)"
        enum = f"constant delay in ORDER BY order, only the {first}"
    elif order.offset:
        enum = f"constant delay in ORDER BY order after skipping {order.offset} rows"
    elif ranked_root(plan) or orders_groups(query):
        enum = "constant delay in ORDER BY order (no sorting on read)"
    else:
        enum = "constant delay in ORDER BY order once the moved rows are sorted in"
    lines.append(f"  enumeration: {enum}")
    return lines


def _window(order) -> str:
    text = ""
    if order.limit is not None:
        text += f" LIMIT {order.limit}"
    if order.offset:
        text += f" OFFSET {order.offset}"
    if order.hidden:
        text += f" ({order.hidden} sort-only column{'s' if order.hidden > 1 else ''})"
    return text


def decomposition_lines(plan: Plan) -> list[str]:
    """A cyclic join decomposed into bags (frontend/passes/decompose_cycles):
    the bags, the width, and the memory and update cost they imply."""
    query = plan.query
    subs = dict(query.subqueries)
    bags = [
        (a.alias, a.relation, subs[a.relation])
        for a in query.atoms
        if a.alias.startswith(BAG_PREFIX) and a.relation in subs
    ]
    if not bags:
        return []
    width = max(len(sub.atoms) for _, _, sub in bags)
    others = [a.relation for a in query.atoms if not a.alias.startswith(BAG_PREFIX)]
    lines = [
        f"Cycle decomposition (generalized hypertree decomposition): width {width} "
        f"(tables per bag; the limit is {MAX_WIDTH})"
    ]
    for alias, name, sub in bags:
        tables = [a.relation for a in sub.atoms]
        product = " · ".join(f"|{t}|" for t in tables)
        lines.append(
            f"  bag {alias} = {' ⋈ '.join(tables)} (inner view {name}): its join "
            f"is materialised, at most {product} rows (the product of its relations)"
        )
    lines.append(
        "  the query over "
        + ", ".join(others + [alias for alias, _, _ in bags])
        + " is acyclic and maintained by DYN over the bags"
    )
    lines.append(
        f"  memory: O(|db|^{width}) in the worst case (the bags' joins), where an "
        "acyclic query needs O(|db|)"
    )
    others_cost = "O(|db|)" if width == 2 else f"O(|db|^{width - 1})"
    lines.append(
        f"  update: a row of a bag's table changes up to the product of the other "
        f"tables of its bag ({others_cost}) bag rows, each one update of the "
        "tree over the bags"
    )
    return lines


def inner_view_lines(plan: Plan | SetPlan, indent: str = "  ") -> list[str]:
    """Every inner view (subquery, derived table, CTE, bag, outer-join side),
    how the outer query reads it, and what the module keeps of it."""
    query = plan.query
    if isinstance(query, (SetQuery, WindowQuery)):
        return []
    tests = {
        f.view: (a, f)
        for a in query.atoms
        for f in a.filters
        if isinstance(f, InnerTest)
    }
    lines: list[str] = []
    for name, sub_plan in plan.subplans:
        sub = sub_plan.query
        what = _view_kind(sub)
        if name in tests:
            atom, test = tests[name]
            kept = _test_state(test, atom.relation)
            lines.append(
                f"{indent}{name} ({what}): tested by {test} on {atom.relation}"
            )
            own = (
                f"no view of its own (the rows of {atom.relation} counted per "
                "row of its result, in the test's state)"
                if counted_in_state(plan, name, sub_plan)
                else "its own view (linear in its relations)"
            )
            lines.append(f"{indent}  keeps: {own}, {kept}")
        else:
            users = [a.alias for a in query.atoms if a.relation == name]
            role = (
                "a bag of the decomposition"
                if any(u.startswith(BAG_PREFIX) for u in users)
                else "joined as a relation"
            )
            lines.append(f"{indent}{name} ({what}): {role} ({', '.join(users)})")
            own = (
                "both sides' views and each row's multiplicity on either side"
                if isinstance(sub, SetQuery)
                else (
                    (
                        "the view of its rows, and each partition's rows in its "
                        "order (a change recomputes the rows of the partition "
                        "whose values it can change)"
                    )
                    if isinstance(sub, WindowQuery)
                    else "its own view"
                )
            )
            lines.append(
                f"{indent}  keeps: {own}, and its result rows as the rows "
                "of that relation in the outer tree (one entry per distinct row)"
            )
        if isinstance(sub_plan, WindowPlan) and isinstance(sub_plan.input, Plan):
            lines += inner_view_lines(sub_plan.input, indent + "    ")
        if isinstance(sub_plan, Plan):
            lines += inner_view_lines(sub_plan, indent + "    ")
    if lines and indent == "  ":
        return [
            "Inner views (each maintained by its own view, fed the same updates,"
            " unless it says otherwise):"
        ] + lines
    return lines


def _view_kind(sub: Query | SetQuery | WindowQuery) -> str:
    if isinstance(sub, WindowQuery):
        names = ", ".join(f.kind.upper() for f in sub.functions if not f.found)
        return f"windows {names} over its rows"
    if isinstance(sub, SetQuery):
        word = sub.kind.upper() + (" ALL" if sub.all else "")
        return f"{word}: the multiplicity of each row on either side"
    if sub.grouped:
        keys = ", ".join(sub.group_vars) or "no key"
        return f"grouped by {keys}"
    return "DISTINCT rows" if sub.distinct else "rows"


def _test_state(test: InnerTest, relation: str) -> str:
    """What the module keeps to re-check a test when the inner result changes."""
    rows = f"the rows of {relation} by the test's key"
    if test.kind == "scalar":
        state = "the subquery's value per key (one entry per key)"
        if test.op in ("lt", "le", "gt", "ge"):
            rows += (
                ", sorted on the compared value: a change of the value re-checks "
                "only the rows between the old and the new threshold (a range scan)"
            )
        else:
            rows += ": a change re-checks the rows equal to the old or new value"
    elif test.condition is not None:
        state = "its result rows per key (the condition reads them)"
        rows += ": a change at a key re-checks that key's rows"
    else:
        state = "a count per key of its result"
        rows += ": a change at a key re-checks that key's rows"
        if test.kind == "not_in":
            rows += (
                " (all rows when a NULL comes or goes; the rows with a NULL key"
                " too when it turns empty or non-empty)"
            )
    return f"{state}, and {rows}"
