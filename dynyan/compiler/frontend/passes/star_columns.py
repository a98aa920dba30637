"""DuckDB's `COLUMNS(…)` in a SELECT item -> one item per column it names.

`COLUMNS('regex')` names the columns of the SELECT's sources whose names
the regular expression finds, `COLUMNS(*)` (with `EXCLUDE (…)`) and
`COLUMNS(t.*)` every column, in FROM order; the item is repeated for each,
named as DuckDB names it (the column's name, or the item's alias):
`SELECT MAX(COLUMNS(*)) FROM r` is `SELECT MAX(r.k) AS k, MAX(r.v) AS v FROM r`.

>>> import sqlglot
>>> from dynyan.compiler.frontend.context import Context
>>> from dynyan.compiler.frontend.statements import parse_schema
>>> ctx = Context(parse_schema("CREATE TABLE r (k INT, a1 INT, a2 INT);"))
>>> tree = sqlglot.parse_one("SELECT k, SUM(COLUMNS('^a')) FROM r GROUP BY k")
>>> print(star_columns(tree, ctx).sql("duckdb"))
SELECT k, SUM(r.a1) AS a1, SUM(r.a2) AS a2 FROM r GROUP BY k
"""

from __future__ import annotations

import re

from sqlglot import exp

from ..context import Context
from ..diagnostics import sql_error, unsupported
from .qualify_names import _Names


def star_columns(tree: exp.Expression, ctx: Context) -> exp.Expression:
    if tree.find(exp.Columns) is None:
        return tree
    names = _Names(ctx)
    for select in list(tree.find_all(exp.Select)):
        found = [c for c in select.find_all(exp.Columns) if c.parent_select is select]
        if not found:
            continue
        pairs = _source_columns(select, names, found[0])
        items = []
        for item in select.expressions:
            specs = [c for c in item.find_all(exp.Columns) if c.parent_select is select]
            if not specs:
                items.append(item)
                continue
            if len(specs) > 1:
                raise unsupported("several COLUMNS(…) in one SELECT item", item)
            for alias, column in _named(specs[0], pairs):
                copy = item.copy()
                spec = next(c for c in copy.find_all(exp.Columns))
                ref = exp.column(column, table=alias)
                if spec is copy:
                    copy = ref
                else:
                    spec.replace(ref)
                if not isinstance(copy, exp.Alias) and copy is not ref:
                    copy = exp.alias_(copy, column)
                items.append(copy)
        select.set("expressions", items)
        rest = [c for c in select.find_all(exp.Columns) if c.parent_select is select]
        if rest:  # in WHERE, GROUP BY, …
            raise unsupported("COLUMNS(…) is supported in the SELECT list", rest[0])
    return tree


def _source_columns(select: exp.Select, names: _Names, spec: exp.Columns) -> list:
    """(source alias, column) of every column of the SELECT's sources, in
    FROM order (USING and NATURAL joins, which merge columns, refused)."""
    if any(
        j.args.get("using") or j.args.get("method")
        for j in select.args.get("joins") or []
    ):
        raise unsupported("COLUMNS(…) beside a JOIN … USING or NATURAL JOIN", spec)
    sources = names._sources(select)
    return [(alias, c) for alias, (_, cols) in sources.items() for c in cols]


def _named(spec: exp.Columns, pairs: list) -> list:
    """The (source alias, column) pairs of `pairs` that `spec` names."""
    what = spec.this
    if isinstance(what, exp.Literal) and what.is_string:
        try:
            pattern = re.compile(what.this)
        except re.error as err:
            raise sql_error(f"COLUMNS: bad regular expression ({err})", spec) from None
        out = [(a, c) for a, c in pairs if pattern.search(c)]
    elif isinstance(what, exp.Star) and not what.args.get("replace"):
        dropped = {
            e.name.lower()
            for e in what.args.get("except_") or what.args.get("except") or []
        }
        out = [(a, c) for a, c in pairs if c not in dropped]
    elif isinstance(what, exp.Column) and isinstance(what.this, exp.Star):
        table = what.table.lower()
        out = [(a, c) for a, c in pairs if a == table]
    else:
        raise unsupported(
            "COLUMNS is supported of a regular expression, * [EXCLUDE (…)] or t.*",
            spec,
        )
    if not out:
        raise sql_error("COLUMNS(…) names no column", spec)
    return out
