"""Every SELECT item gets its name as an explicit alias.

A column is named after itself, any other expression after its SQL text (as
written), so the names survive qualification (which would invent `_col_0`).

>>> import sqlglot
>>> from dynyan.compiler.frontend.context import Context
>>> tree = sqlglot.parse_one("SELECT r.a, COUNT(*), b AS x FROM r", read="duckdb")
>>> print(name_outputs(tree, Context({})).sql("duckdb"))
SELECT r.a AS a, COUNT(*) AS "COUNT(*)", b AS x FROM r
"""

from __future__ import annotations

from sqlglot import exp

from ..context import Context
from ..diagnostics import DIALECT


def name_outputs(tree: exp.Expression, ctx: Context) -> exp.Expression:
    for select in tree.find_all(exp.Select):
        select.set("expressions", [named(e) for e in select.expressions])
    return tree


def named(e: exp.Expression) -> exp.Expression:
    """`e` with its name as an explicit alias (a star stays as it is)."""
    if isinstance(e, exp.Alias) or isinstance(e, exp.Star):
        return e
    while isinstance(e, exp.Paren):  # SELECT DISTINCT(x): the column x
        e = e.this
    if isinstance(e, exp.Column):
        if isinstance(e.this, exp.Star):
            return e
        return exp.alias_(e, e.name, copy=False)
    name = exp.to_identifier(e.sql(dialect=DIALECT), quoted=True)
    # a subquery takes an alias as a table does: wrapped, it names a column
    return exp.Alias(this=e, alias=name)
