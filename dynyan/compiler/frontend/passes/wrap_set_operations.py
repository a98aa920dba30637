"""A UNION, INTERSECT or EXCEPT that is a whole query becomes a derived table.

The outermost query, or the query of an `IN (…)`, that is a set operation is
read as `SELECT * FROM (the set operation) AS __set` (its ORDER BY and LIMIT
move to that SELECT), so that a set operation is always an inner view.

>>> import sqlglot
>>> from dynyan.compiler.frontend.context import Context
>>> tree = sqlglot.parse_one("SELECT a FROM r UNION SELECT b FROM s ORDER BY a", read="duckdb")
>>> print(wrap_set_operations(tree, Context({})).sql("duckdb"))
SELECT * FROM (SELECT a FROM r UNION SELECT b FROM s) AS __set ORDER BY a
"""

from __future__ import annotations

from sqlglot import exp

from ..context import Context


def wrap_set_operations(tree: exp.Expression, ctx: Context) -> exp.Expression:
    for node in list(tree.find_all(exp.In)):
        query = node.args.get("query")
        inner = query.this if isinstance(query, exp.Subquery) else query
        if isinstance(inner, exp.SetOperation):
            inner.replace(_wrapped(inner))
    if isinstance(tree, exp.SetOperation):
        return _wrapped(tree)
    return tree


def _wrapped(setop: exp.SetOperation) -> exp.Select:
    moved = {arg: setop.args.get(arg) for arg in ("order", "limit", "offset")}
    setop = setop.copy()
    for arg in moved:
        setop.set(arg, None)
    select = exp.select("*").from_(
        exp.Subquery(this=setop, alias=exp.TableAlias(this=exp.to_identifier("__set")))
    )
    for arg, value in moved.items():
        if value is not None:
            select.set(arg, value)
    return select
