"""What every peer needs to know about a query."""

from __future__ import annotations

from dynyan.compiler.ir import Op, Query


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


def has_anti(e) -> bool:
    """Whether condition `e` tests a NOT IN / NOT EXISTS subquery."""
    return isinstance(e, Op) and (e.op == "anti" or any(has_anti(a) for a in e.args))


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
