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
        parent = select.parent
        if isinstance(parent, exp.In) and parent.args.get("query") is select:
            parent.set("query", None)
            parent.set("expressions", [value])
        elif isinstance(parent, exp.Subquery) and parent.parent is not None:
            holder = parent.parent
            if isinstance(holder, exp.In) and holder.args.get("query") is parent:
                holder.set("query", None)
                holder.set("expressions", [value])
            elif isinstance(holder, exp.Exists):
                holder.replace(exp.true())
            elif not isinstance(holder, (exp.From, exp.Join)) and not parent.alias:
                parent.replace(exp.Paren(this=value))
        elif isinstance(parent, exp.Exists):
            parent.replace(exp.true())
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
