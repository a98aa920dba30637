"""An uncorrelated scalar subquery in the SELECT list -> a cross join with it.

`SELECT x / (SELECT SUM(y) FROM s) FROM r`: an aggregate without GROUP BY
has exactly one row (also over no rows), so the subquery becomes a derived
table of one row joined to every row, and the item reads its column:

    SELECT x / __scalar1.v FROM r CROSS JOIN (SELECT SUM(y) AS v FROM s) AS __scalar1

In a query with GROUP BY an item outside aggregates reads `MAX(v)`: every
row of a group has the same `v`. Not taken: a subquery correlated with the outer query or
not a one-column aggregate, and a query that aggregates without GROUP BY
(over no rows it still has its one row, which a join would lose).
Runs after `qualify_names` (columns carry their tables).

>>> import sqlglot
>>> from dynyan.compiler.frontend.context import Context
>>> tree = sqlglot.parse_one(
...     "SELECT r.a / (SELECT SUM(s.c) AS t FROM s AS s) AS share FROM r AS r",
...     read="duckdb")
>>> print(scalar_items(tree, Context({})).sql("duckdb"))
SELECT r.a / __scalar1.v AS share FROM r AS r CROSS JOIN (SELECT SUM(s.c) AS v FROM s AS s) AS __scalar1
"""

from __future__ import annotations

from sqlglot import exp

from ..context import Context
from .membership_flags import correlated


def scalar_items(tree: exp.Expression, ctx: Context) -> exp.Expression:
    count = 0
    for select in list(tree.find_all(exp.Select)):
        grouped = select.args.get("group") is not None
        aggregates = any(
            a.parent_select is select for a in select.find_all(exp.AggFunc)
        )
        if aggregates and not grouped:
            continue  # a global aggregate keeps its row over no input
        for item in select.expressions:
            for node in list(item.find_all(exp.Subquery)):
                inner = node.this
                if not _one_value(inner) or correlated(inner):
                    continue
                count += 1
                alias = f"__scalar{count}"
                body = inner.copy()
                body.set(
                    "expressions", [exp.alias_(body.expressions[0].unalias(), "v")]
                )
                select.append(
                    "joins",
                    exp.Join(this=body.subquery(alias, copy=False), kind="CROSS"),
                )
                column = exp.column("v", table=alias)
                if grouped and node.find_ancestor(exp.AggFunc, exp.Select) is select:
                    column = exp.Max(this=column)  # one value in every group
                node.replace(column)
    return tree


def _one_value(inner: exp.Expression) -> bool:
    """A SELECT of one aggregate column without GROUP BY: one row, always."""
    return (
        isinstance(inner, exp.Select)
        and len(inner.expressions) == 1
        and inner.args.get("group") is None
        and inner.expressions[0].find(exp.AggFunc) is not None
        and not any(inner.args.get(a) for a in ("limit", "offset", "having"))
    )
