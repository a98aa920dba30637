"""What every peer needs to know about a query."""

from __future__ import annotations

from dynyan.compiler import functions
from dynyan.compiler.ir import InnerTest, Op, Query, Ref, SetQuery


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


def has_inner_test(e) -> bool:
    """Whether condition `e` reads the result of a subquery (an `InnerTest`:
    NOT IN, [NOT] EXISTS, a scalar subquery)."""
    if isinstance(e, InnerTest):
        return True
    return isinstance(e, Op) and any(has_inner_test(a) for a in e.args)


def inner_tests(query) -> dict:
    """Per inner view read by an `InnerTest`: (the tested atom, the test).
    Refuses (NotImplementedError: the peer is "unavailable") a test nested
    in another condition, or an inner view tested twice."""
    out: dict = {}
    for k, atom in enumerate(getattr(query, "atoms", ())):
        for f in atom.filters:
            if isinstance(f, InnerTest):
                if f.view in out:
                    raise NotImplementedError(
                        f"subquery {f.view} is tested twice (the baselines handle "
                        "one test per subquery)"
                    )
                out[f.view] = (k, f)
            elif has_inner_test(f):
                raise NotImplementedError(
                    "a subquery test inside another condition (the baselines "
                    "handle a subquery test as a conjunct of WHERE)"
                )
    return out


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


def refuse_padded(query, who: str) -> None:
    """A peer reads LEFT JOINs as UNION ALLs (`parse_query(...,
    padded_leaves=False)`): a NULL-padded atom (`Atom.padded`, dynyan's own
    form) would be read as an inner join, so it is refused, not miscounted."""
    if any(a.padded for a in getattr(query, "atoms", ())):
        raise NotImplementedError(
            f"a NULL-padded atom: parse with padded_leaves=False ({who})"
        )
    for _, sub in getattr(query, "subqueries", ()):
        refuse_padded(sub, who)


def require_plain_query(query, who: str) -> None:
    """Refuse (NotImplementedError: the peer is reported "unavailable" with
    the reason) what the dataflow adapters (pydbsp, Pathway) do not build:
    set operations (outer joins become UNION ALL), subquery tests other than
    NOT IN / NOT EXISTS on columns, computed aggregate arguments, quantiles
    (MEDIAN), STRING_AGG and SUM/AVG(DISTINCT), and a
    LIMIT/OFFSET window or sort-only columns of ORDER BY (a plain ORDER BY
    leaves the result bag as it is)."""
    if isinstance(query, SetQuery):
        raise NotImplementedError(
            f"{query.kind.upper()}{' ALL' if query.all else ''} (a set operation "
            f"or an outer join) ({who})"
        )
    refuse_padded(query, who)
    for a in getattr(query, "aggregates", ()):
        if a.computed is not None:
            raise NotImplementedError(
                f"an aggregate over an expression of several tables, {a} ({who})"
            )
        if a.kind in (*functions.ORDERED_KINDS, *functions.PICK_KINDS):
            raise NotImplementedError(
                f"a quantile, STRING_AGG or ARG_MIN/MAX, {a} ({who})"
            )
        if a.kind in functions.DISTINCT_SUM_KINDS:
            raise NotImplementedError(f"SUM/AVG(DISTINCT …), {a} ({who})")
    for atom, test in inner_tests(query).values():
        if test.kind not in ("not_in", "not_exists"):
            what = "a scalar subquery" if test.kind == "scalar" else "EXISTS"
            raise NotImplementedError(f"{what} ({test}) ({who})")
        if not all(isinstance(r, Ref) and r.atom == atom for r in test.keys):
            raise NotImplementedError(
                f"a subquery correlated by an expression ({test}) ({who})"
            )
    for _, sub in getattr(query, "subqueries", ()):
        require_plain_query(sub, who)
    ordering = getattr(query, "ordering", None)
    if ordering is not None and (
        ordering.limit is not None or ordering.offset or ordering.hidden
    ):
        raise NotImplementedError(f"ORDER BY with LIMIT/OFFSET ({who})")
