"""SELECT items' names where windows and group filters read them -> the
items' expressions, before any window pass rewrites the SELECT.

An unqualified name in a window's PARTITION BY or ORDER BY, in HAVING or in
QUALIFY that is no column of the SELECT's sources but an item's name (an
item without a window) stands for that item, as DuckDB binds it (a
source's column first): `SELECT k, a * 2 AS a2, RANK() OVER (ORDER BY a2)`.
Names are qualified only later (`qualify_names`), after the window passes
have moved windows into views of their own, where an item's name means
nothing.

>>> import sqlglot
>>> from dynyan.compiler.frontend.context import Context
>>> from dynyan.compiler.frontend.statements import parse_schema
>>> ctx = Context(parse_schema("CREATE TABLE r (k INT, a INT);"))
>>> tree = sqlglot.parse_one(
...     "SELECT k, a * 2 AS a2, RANK() OVER (PARTITION BY k ORDER BY a2) AS n "
...     "FROM r", read="duckdb")
>>> print(select_aliases(tree, ctx).sql("duckdb"))
SELECT k, a * 2 AS a2, RANK() OVER (PARTITION BY k ORDER BY a * 2) AS n FROM r
"""

from __future__ import annotations

from sqlglot import exp

from ....errors import DynyanError
from ..context import Context
from .qualify_names import _Names


def select_aliases(tree: exp.Expression, ctx: Context) -> exp.Expression:
    names = _Names(ctx)
    for select in list(tree.find_all(exp.Select)):
        items = {
            e.alias.lower(): e.this
            for e in select.expressions
            if isinstance(e, exp.Alias) and e.this.find(exp.Window) is None
        }
        places = _places(select)
        if not items or not places:
            continue
        try:
            sources = names._sources(select)
        except DynyanError:
            continue  # `qualify_names` says what is wrong with it
        columns = {c for _, cols in sources.values() for c in cols}
        for place in places:
            for col in list(place.find_all(exp.Column)):
                name = col.name.lower()
                if (
                    not col.table
                    and col.parent_select is select
                    and name in items
                    and name not in columns
                ):
                    col.replace(items[name].copy())
    return tree


def _places(select: exp.Select) -> list[exp.Expression]:
    """Where a SELECT's items may be named: HAVING, QUALIFY (windows in it
    too) and its other windows' PARTITION BY and ORDER BY."""
    places = [select.args[a] for a in ("having", "qualify") if select.args.get(a)]
    for window in select.find_all(exp.Window):
        clause = window.find_ancestor(exp.Having, exp.Qualify, exp.Select)
        if window.parent_select is select and isinstance(clause, exp.Select):
            places += window.args.get("partition_by") or []
            if window.args.get("order") is not None:
                places.append(window.args["order"])
    return places
