"""A subquery in a join's ON condition -> in WHERE, or in the joined table.

`a JOIN b ON a.k = b.k AND b.x > (SELECT AVG(c.x) FROM c WHERE c.g = b.g)`:
an inner join keeps the pairs its condition holds for, as WHERE would, so
the conjuncts with a subquery move to WHERE, which the later passes take
(`unnest_subqueries`). Not where a RIGHT or FULL join follows: it pads the
rows the condition fails for, which WHERE would then drop.

`a LEFT JOIN b ON a.k = b.k AND b.d = (SELECT MAX(c.d) FROM c WHERE c.k =
a.k)`: a conjunct that reads only `b` (once `a.k` reads as the `b.k` the
condition equates it to: the same value wherever it holds) chooses which
rows of `b` may match, so it filters `b` before the join: `LEFT JOIN
(SELECT b.… FROM b WHERE <conjunct>) AS b ON a.k = b.k`. A conjunct that
reads the preserved side beyond such equalities is refused as before.
Runs after `qualify_names`: every column names its table.

>>> import sqlglot
>>> tree = sqlglot.parse_one(
...     "SELECT a.x FROM a JOIN b ON a.k = b.k AND b.y IN (SELECT c.y FROM c)",
...     read="duckdb")
>>> print(join_subqueries(tree, None).sql("duckdb"))
SELECT a.x FROM a JOIN b ON a.k = b.k WHERE b.y IN (SELECT c.y FROM c)
"""

from __future__ import annotations

from sqlglot import exp

from ..context import Context, equated_columns, output_names, sql_conjuncts

_QUERIES = (exp.Subquery, exp.Exists, exp.Select)


def join_subqueries(tree: exp.Expression, ctx: Context | None) -> exp.Expression:
    for select in list(tree.find_all(exp.Select)):
        joins = select.args.get("joins") or []
        if not any(_has_query(j.args.get("on")) for j in joins):
            continue
        sides = [(j.side or "").upper() for j in joins]
        moved = []
        for i, join in enumerate(joins):
            on = join.args.get("on")
            if not _has_query(on):
                continue
            if not sides[i] and not {"RIGHT", "FULL"} & set(sides[i + 1 :]):
                conds = sql_conjuncts(on)
                moved += [c for c in conds if _has_query(c)]
                _set_on(join, [c for c in conds if not _has_query(c)])
            elif sides[i] == "LEFT" and ctx is not None:
                _filter_joined(join, ctx)
        if moved:
            where = select.args.get("where")
            kept = [where.this] if where is not None else []
            select.set("where", exp.Where(this=exp.and_(*kept, *moved)))
    return tree


def _has_query(e: exp.Expression | None) -> bool:
    return e is not None and e.find(*_QUERIES) is not None


def _set_on(join: exp.Join, conds: list) -> None:
    join.set("on", exp.and_(*conds) if conds else exp.true())


def _filter_joined(join: exp.Join, ctx: Context) -> None:
    """The LEFT JOIN's conjuncts with a subquery that read only the joined
    table (through the condition's equalities) -> a filter of that table."""
    source = join.this
    alias = source.alias_or_name.lower()
    names = output_names(source, ctx.relations)
    if names is None:
        return
    conds = sql_conjuncts(join.args["on"])
    equal = equated_columns(conds, {alias})  # another table's -> the joined one's
    filters, kept = [], []
    for c in conds:
        rewritten = _read_through(c, alias, equal) if _has_query(c) else None
        (filters if rewritten is not None else kept).append(rewritten or c)
    if not filters:
        return
    body = exp.select(
        *[exp.alias_(exp.column(n, table=alias), n) for n in names]
    ).from_(source.copy())
    body.set("where", exp.Where(this=exp.and_(*filters)))
    join.set("this", body.subquery(alias, copy=False))
    _set_on(join, kept)


def _read_through(cond: exp.Expression, alias: str, equal: dict):
    """`cond` reading the joined table `alias` where it read columns that
    the ON condition equates to one of its own; None where it reads another
    table of the query around it."""
    cond = cond.copy()
    inner = set()  # the aliases of the subqueries' own tables
    for q in cond.find_all(exp.Select):
        for t in q.find_all(exp.Table):
            inner.add(t.alias_or_name.lower())
    for col in list(cond.find_all(exp.Column)):
        table = col.table.lower()
        if table == alias or (table in inner and table != alias):
            continue
        mine = equal.get((table, col.name.lower()))
        if mine is None:
            return None
        col.replace(mine.copy())
    return cond
