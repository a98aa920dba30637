"""A derived table in a subquery's FROM that reads the query around it ->
the same table keyed by what it compared, the subquery correlated.

`(SELECT MAX(t.c) FROM (SELECT COUNT(*) AS c FROM s WHERE s.k = r.k GROUP
BY s.g) t)` is `(SELECT MAX(t.c) FROM (SELECT COUNT(*) AS c, s.k AS __outer1
FROM s GROUP BY s.g, s.k) t WHERE t.__outer1 = r.k)`: per outer row the same
groups (those of its k), now a subquery correlated by an equality, which
later passes turn into an inner view keyed by k. Taken where every outer
reference of the derived table is one side of an equality in its WHERE's
conjuncts and the table groups its rows or does not aggregate (a global
aggregate has a row even for no input: keyed, it would have none), without
LIMIT, OFFSET, DISTINCT ON or windows; others are refused by `qualify_names`.

>>> import sqlglot
>>> from dynyan.compiler.frontend.context import Context
>>> from dynyan.compiler.frontend.statements import parse_schema
>>> ctx = Context(parse_schema("CREATE TABLE r (k INT); CREATE TABLE s (k INT, g INT);"))
>>> tree = sqlglot.parse_one(
...     "SELECT r.k FROM r WHERE 2 = (SELECT MAX(t.c) FROM (SELECT COUNT(*) AS c "
...     "FROM s WHERE s.k = r.k GROUP BY s.g) AS t)", read="duckdb")
>>> print(correlated_derived(tree, ctx).sql("duckdb"))
SELECT r.k FROM r WHERE 2 = (SELECT MAX(t.c) FROM (SELECT COUNT(*) AS c, s.k AS __outer1 FROM s GROUP BY s.g, s.k) AS t WHERE t.__outer1 = r.k)
"""

from __future__ import annotations

from sqlglot import exp

from ..context import Context
from .qualify_names import _source_items


def correlated_derived(tree: exp.Expression, ctx: Context) -> exp.Expression:
    for inner in list(tree.find_all(exp.Select)):
        sub = inner.parent
        if not (
            isinstance(sub, exp.Subquery)
            and isinstance(sub.parent, (exp.From, exp.Join))
            and sub.parent.this is sub
            and isinstance(sub.parent.parent, exp.Select)
            and sub.alias
        ):
            continue
        holder = sub.parent.parent
        around = _aliases_around(holder)
        own = set(_source_items(inner))
        refs = [
            c
            for c in inner.find_all(exp.Column)
            if c.parent_select is inner
            and c.table
            and c.table.lower() not in own
            and c.table.lower() in around
        ]
        if refs and _keyable(inner):
            _key(inner, sub, holder, refs)
    return tree


def _aliases_around(select: exp.Select) -> set[str]:
    """The sources of the SELECTs around `select` (not its own)."""
    out, node = set(), select.parent
    while node is not None:
        if isinstance(node, exp.Select):
            out |= set(_source_items(node))
        node = node.parent
    return out


def _keyable(inner: exp.Select) -> bool:
    if any(inner.args.get(a) for a in ("limit", "offset", "qualify", "windows")):
        return False
    if inner.find(exp.Window) is not None:
        return False
    distinct = inner.args.get("distinct")
    if distinct is not None and distinct.args.get("on") is not None:
        return False  # DISTINCT ON (a): one row per a, not per (a, key)
    aggregated = (
        any(e.find(exp.AggFunc) is not None for e in inner.expressions)
        or inner.args.get("having") is not None
    )
    return bool(inner.args.get("group")) or not aggregated


def _key(inner: exp.Select, sub: exp.Subquery, holder: exp.Select, refs) -> None:
    """Move each `inner_expr = outer.c` conjunct out (see the module's doc),
    if every reference in `refs` is in one."""
    where = inner.args.get("where")
    cond = where.this if where is not None else None
    conjuncts = list(cond.flatten()) if isinstance(cond, exp.And) else [cond]
    outer = {id(c) for c in refs}
    moved, kept = [], []
    for term in filter(None, conjuncts):
        pair = _split(term, outer)
        (moved if pair else kept).append(pair or term)
    taken = {id(c) for _, side in moved for c in side.find_all(exp.Column)}
    if not moved or outer - taken:
        return  # a reference elsewhere: refused later, as before
    inner.set("where", exp.Where(this=exp.and_(*kept)) if kept else None)
    columns = sub.args["alias"].columns
    tests = []
    for i, (inside, outside) in enumerate(moved, 1):
        name = f"__outer{i}"
        inner.append("expressions", exp.alias_(inside.copy(), name))
        if inner.args.get("group"):
            inner.args["group"].append("expressions", inside.copy())
        if columns:
            sub.args["alias"].append("columns", exp.to_identifier(name))
        key = exp.column(name, table=sub.alias)
        tests.append(exp.EQ(this=key, expression=outside.copy()))
    holder.where(exp.and_(*tests), copy=False)


def _split(term: exp.Expression, outer: set[int]):
    """(inner side, outer side) of `inner = outer` where the outer side is
    only outer references and the inner side none, else None."""
    if not isinstance(term, exp.EQ):
        return None
    for inside, outside in ((term.this, term.expression), (term.expression, term.this)):
        out_cols = list(outside.find_all(exp.Column))
        if (
            out_cols
            and all(id(c) in outer for c in out_cols)
            and not any(id(c) in outer for c in inside.find_all(exp.Column))
            and outside.find(exp.Select) is None
            and inside.find(exp.Select) is None
        ):
            return inside, outside
    return None
