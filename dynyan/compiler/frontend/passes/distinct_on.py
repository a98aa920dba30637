"""SELECT DISTINCT ON (keys) -> GROUP BY keys with the first row's value.

`SELECT DISTINCT ON (k) k, d FROM t ORDER BY k, d DESC` keeps, per value
of k, the first row in the ORDER BY order. Where the SELECT list holds only
DISTINCT ON expressions and the one ORDER BY expression beside them, that
row's values do not depend on which of the rows tied in the order comes
first: the expression's smallest value (ASC) or largest (DESC), NULL where
the group has a NULL and the order puts NULLs first (DuckDB puts them last
unless NULLS FIRST):

    SELECT k, MAX(d) AS d FROM t GROUP BY k ORDER BY k, d DESC

Other columns of the first row would be any of the tied rows' (DuckDB picks
one), so such a query is refused, as is DISTINCT ON in a query that
aggregates. Runs before `check_supported`, on the query as written.

>>> import sqlglot
>>> from dynyan.compiler.frontend.context import Context
>>> tree = sqlglot.parse_one(
...     "SELECT DISTINCT ON (k) k, d FROM t ORDER BY k, d DESC", read="duckdb")
>>> print(distinct_on(tree, Context({})).sql("duckdb"))
SELECT k AS k, MAX(d) AS d FROM t GROUP BY k ORDER BY k, d DESC
"""

from __future__ import annotations

from sqlglot import exp

from ..context import Context
from ..diagnostics import unsupported
from .name_outputs import named

_TIES = (
    "DISTINCT ON is supported where the SELECT list holds only DISTINCT ON "
    "expressions and one ORDER BY expression beside them (the first row's "
    "other columns would be any of the rows tied in the order)"
)


def distinct_on(tree: exp.Expression, ctx: Context) -> exp.Expression:
    for select in list(tree.find_all(exp.Select)):
        distinct = select.args.get("distinct")
        on = distinct.args.get("on") if distinct is not None else None
        if on is None:
            continue
        keys = on.expressions if isinstance(on, exp.Tuple) else [on]
        spelled = {k.sql() for k in keys}
        grouped = select.args.get("group") or any(
            a.parent_select is select for a in select.find_all(exp.AggFunc)
        )
        if grouped:
            raise unsupported("DISTINCT ON in a query that aggregates", distinct)
        order = select.args.get("order")
        extra = [
            o
            for o in (order.expressions if order else [])
            if o.this.sql() not in spelled
        ]
        if len(extra) > 1:
            raise unsupported(_TIES, extra[1])
        items = []
        for item in select.expressions:
            item = named(item)  # its name as DuckDB gives it, kept
            value = item.unalias()
            if value.sql() in spelled:
                items.append(item)
            elif extra and value.sql() == extra[0].this.sql():
                first = _first(value, extra[0])
                items.append(exp.alias_(first, item.alias_or_name))
                extra[0].set("this", exp.column(item.alias_or_name))
            else:
                raise unsupported(_TIES, item)
        select.set("expressions", items)
        select.set("distinct", None)
        select.set("group", exp.Group(expressions=[k.copy() for k in keys]))
    return tree


def _first(value: exp.Expression, ordered: exp.Ordered) -> exp.Expression:
    """The value of `value` in a group's first row by `ordered`."""
    extreme = exp.Max if ordered.args.get("desc") else exp.Min
    first = extreme(this=value.copy())
    if not ordered.args.get("nulls_first"):
        return first
    return exp.Case(
        ifs=[
            exp.If(
                this=exp.GT(
                    this=exp.Count(this=exp.Star()),
                    expression=exp.Count(this=value.copy()),
                ),
                true=exp.Null(),
            )
        ],
        default=first,
    )
