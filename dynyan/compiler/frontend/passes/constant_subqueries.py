"""Subqueries without FROM are constants: `x IN (SELECT 1)` is `x IN (1)`,
`(SELECT 5)` is `5`, `EXISTS (SELECT 1)` is TRUE.

Only a SELECT of one constant item with no WHERE, GROUP BY, HAVING or
LIMIT is folded; anything else keeps its refusal.

>>> import sqlglot
>>> from dynyan.compiler.frontend.context import Context
>>> tree = sqlglot.parse_one(
...     "SELECT a FROM r WHERE a IN (SELECT 1) AND b > (SELECT 2)", read="duckdb"
... )
>>> print(constant_subqueries(tree, Context({})).sql("duckdb"))
SELECT a FROM r WHERE a IN (1) AND b > (2)
"""

from __future__ import annotations

from sqlglot import exp

from ..context import Context

_CLAUSES = ("where", "group", "having", "limit", "offset", "joins", "qualify")


def constant_subqueries(tree: exp.Expression, ctx: Context) -> exp.Expression:
    for select in list(tree.find_all(exp.Select)):
        value = _constant(select)
        if value is None or select is tree:
            continue
        # the node that stands for the subquery: its Subquery wrapper, if any
        node = select.parent if isinstance(select.parent, exp.Subquery) else select
        holder = node.parent
        if isinstance(holder, exp.In) and holder.args.get("query") is node:
            holder.set("query", None)
            holder.set("expressions", [value])
        elif isinstance(holder, exp.Exists):
            holder.replace(exp.true())
        elif (
            node is not select
            and holder is not None
            and not isinstance(holder, (exp.From, exp.Join))
            and not node.alias
        ):
            node.replace(exp.Paren(this=value))
    return tree


def _constant(select: exp.Select):
    """The one constant item of a SELECT without FROM, else None."""
    if select.args.get("from_") or select.args.get("from"):
        return None
    if any(select.args.get(c) for c in _CLAUSES) or len(select.expressions) != 1:
        return None
    item = select.expressions[0]
    value = item.this if isinstance(item, exp.Alias) else item
    if value.find(exp.Column, exp.AggFunc, exp.Star, exp.Select):
        return None
    return value.copy()
