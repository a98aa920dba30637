"""`WHERE n = 1` over a derived table that numbers its rows -> QUALIFY in it.

`SELECT … FROM (SELECT …, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts
DESC) AS n FROM t) AS x WHERE x.n = 1` (the latest row per key, as people
write it; `subquery_limits` writes a correlated `ORDER BY … LIMIT 1` so)
keeps the first row of each partition. The test is repeated as the derived
table's QUALIFY, where `window_aggregates` sees that only first rows are
kept: it numbers the rows DISTINCT and guards only the first place, so
exact duplicate rows and ties further down the order leave the result
determined, as they do in SQL. A test that keeps the first n places (`n <=
3`; of RANK() too) moves likewise, for `top_rows` to see. The outer WHERE
keeps its test: rows that an outer join pads have no number and fail it
either way, so the test may move below any join. Not where the derived table has a LIMIT or OFFSET, or
its columns renamed (`AS x(a, b)`). Runs before `window_aggregates`.

>>> import sqlglot
>>> from dynyan.compiler.frontend.context import Context
>>> tree = sqlglot.parse_one(
...     "SELECT k, v FROM (SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v) AS n "
...     "FROM t) AS x WHERE x.n = 1", read="duckdb")
>>> print(first_rows(tree, Context({})).sql("duckdb"))
SELECT k, v FROM (SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v) AS n FROM t QUALIFY ROW_NUMBER() OVER (PARTITION BY k ORDER BY v) = 1) AS x WHERE x.n = 1
"""

from __future__ import annotations

from sqlglot import exp

from ..context import Context, from_items, sql_conjuncts
from .window_aggregates import top_bound


def first_rows(tree: exp.Expression, ctx: Context) -> exp.Expression:
    for select in list(tree.find_all(exp.Select)):
        where = select.args.get("where")
        if where is None:
            continue
        items = from_items(select)
        for derived in items:
            if not _numbering(derived):
                continue
            numbers = _row_numbers(derived.this)
            alias = derived.alias_or_name.lower()
            others = [i for i in items if i is not derived]

            def numbered(x, numbers=numbers, alias=alias, others=others):
                return (
                    isinstance(x, exp.Column)
                    and x.name.lower() in numbers
                    and (
                        x.table.lower() == alias
                        or not (x.table or any(_names(i, x.name, ctx) for i in others))
                    )
                )

            for test in sql_conjuncts(where.this):
                if top_bound(test, numbered):
                    _qualify(derived.this, _renamed(test, numbered, derived.this))
    return tree


def _names(item: exp.Expression, name: str, ctx: Context) -> bool:
    """Whether FROM item `item` may have a column `name` (unknown: yes)."""
    if isinstance(item, exp.Table):
        relation = ctx.relations.get(item.name.lower())
        return relation is None or name.lower() in relation.columns
    if isinstance(item, exp.Subquery) and isinstance(item.this, exp.Select):
        alias = item.args.get("alias")
        if alias is None or not alias.columns:
            return any(
                e.alias_or_name.lower() == name.lower() for e in item.this.expressions
            ) or any(
                isinstance(e, exp.Star) or isinstance(e.this, exp.Star)
                for e in item.this.expressions
            )
    return True


def _numbering(item: exp.Expression) -> bool:
    """A derived table whose SELECT numbers rows and keeps them all."""
    if not isinstance(item, exp.Subquery) or not isinstance(item.this, exp.Select):
        return False
    alias = item.args.get("alias")
    if alias is not None and alias.columns:
        return False  # `AS x(a, b)`: the outer names are not the SELECT's
    inner = item.this
    return not (inner.args.get("limit") or inner.args.get("offset")) and bool(
        _row_numbers(inner)
    )


def _row_numbers(inner: exp.Select) -> set[str]:
    """The output names of `ROW_NUMBER()` or `RANK() OVER (… ORDER BY …)`
    items."""
    return {
        item.alias.lower()
        for item in inner.expressions
        if isinstance(item, exp.Alias)
        and isinstance(item.this, exp.Window)
        and isinstance(item.this.this, (exp.RowNumber, exp.Rank))
        and item.this.args.get("order") is not None
    }


def _renamed(test: exp.Expression, numbered, inner: exp.Select) -> exp.Expression:
    """The test over the derived table's own window (its output name could
    be a column of a table it reads, which QUALIFY would read instead)."""
    windows = {
        item.alias.lower(): item.this
        for item in inner.expressions
        if isinstance(item, exp.Alias)
    }
    return test.copy().transform(
        lambda node: windows[node.name.lower()].copy() if numbered(node) else node
    )


def _qualify(inner: exp.Select, test: exp.Expression) -> None:
    qualify = inner.args.get("qualify")
    condition = test if qualify is None else exp.and_(qualify.this, test)
    inner.set("qualify", exp.Qualify(this=condition))
