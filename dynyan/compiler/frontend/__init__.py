"""Frontend: SQL text (sqlglot) -> `dynyan.compiler.ir.Query`, as passes.

The file holds CREATE TABLE statements (or they come from a separate schema
text), CREATE VIEWs if it likes, and exactly one query (`statements`). The
query's tree then goes through `TREE_PASSES` once, and each SELECT in it
through `SELECT_PASSES` before `build` turns it into a `Query`; subqueries
become inner views compiled the same way. Each pass is one module of
`passes/` with one function named after it (as sqlglot's optimizer rules).

>>> print(parse_query(
...     "CREATE TABLE r (a INT, b INT); CREATE TABLE s (b INT, c INT);"
...     "SELECT r.a, s.c FROM r JOIN s ON r.b = s.b WHERE r.a > 3"))
SELECT a AS a, c AS c
  atom r(a, b) | (r.a > 3)
  atom s(b, c)
"""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp

from ..ir import Query
from .build import SelectBuilder
from .context import Context
from .diagnostics import DIALECT, unsupported
from .expressions import shift_date
from .passes.check_supported import check_supported
from .passes.having_subqueries import having_subqueries
from .passes.inline_views import inline_views
from .passes.name_outputs import name_outputs
from .passes.order_limit import order_limit
from .passes.qualify_names import qualify_names
from .passes.unnest_subqueries import unnest_subqueries
from .statements import parse_schema, read_program

# Over the whole query, once, in this order.
TREE_PASSES = (
    inline_views,  # WITH and CREATE VIEW -> derived tables
    check_supported,  # refuse what cannot be maintained, by name
    name_outputs,  # every SELECT item gets its name as an alias
    having_subqueries,  # HAVING with a subquery -> WHERE over the groups
    qualify_names,  # every name resolved and qualified
)
# On each SELECT, just before it is built.
SELECT_PASSES = (
    order_limit,  # ORDER BY / LIMIT / OFFSET of the outermost query
    unnest_subqueries,  # subqueries -> inner views (virtual relations)
)


def parse_query(sql: str, schema: str | None = None, passes=None) -> Query:
    """Parse `sql` (CREATE TABLEs + one query) into a `Query` (`passes`: the
    tree passes to run, for tests; all by default)."""
    program = read_program(sql, schema)
    ctx = Context(dict(program.relations), program.views, compile=compile_select)
    tree = program.query.copy()
    for step in TREE_PASSES if passes is None else passes:
        tree = step(tree, ctx)
    return compile_select(tree, ctx)


def compile_select(tree: exp.Expression, ctx: Context) -> Query:
    """One (qualified) query of the tree -> its `Query`, inner views included."""
    if not isinstance(tree, exp.Select):
        raise unsupported(f"{type(tree).__name__.upper()} is not supported", tree)
    select = tree.copy()
    for step in SELECT_PASSES:
        select = step(select, ctx)
    query = SelectBuilder(ctx.relations, ctx.tests).build(select)
    if ctx.subqueries:
        query = replace(query, subqueries=tuple(ctx.subqueries))
    if ctx.ordering is not None:
        query = replace(query, ordering=ctx.ordering)
    return query


__all__ = ["parse_query", "parse_schema", "shift_date", "DIALECT"]
