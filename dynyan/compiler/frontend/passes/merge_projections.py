"""A derived table that only renames a table's columns -> that table.

`window_aggregates` reads its SELECT's rows as derived tables, several
times and at several depths (`(SELECT t.k AS __c1, t.v AS __c2 FROM t AS
t) AS __rows`); each would be an inner view of its own, a state and a
trigger that copy the table. Read as `t AS __rows`, with `__rows.__c1`
written `__rows.k`, it is an atom of the SELECT that reads it (a LAG over
a customer's orders ran 1.16x faster, BENCHMARKS.md "Small sorted groups").

Taken where the derived table's SELECT reads one table and nothing else
(no WHERE, GROUP BY, HAVING, QUALIFY, DISTINCT, window, ORDER BY or
LIMIT), every item is one of that table's columns, its alias names no
columns, and the SELECT reading it reads its columns only in its own
scope (a subquery in its conditions that reads them keeps the derived
table). Runs after `qualify_names`: every column is `alias.column`.

>>> import sqlglot
>>> from dynyan.compiler.frontend.context import Context
>>> from dynyan.compiler.frontend.statements import parse_schema
>>> ctx = Context(parse_schema("CREATE TABLE t (k INT, v INT);"))
>>> tree = sqlglot.parse_one("SELECT r.__c1 AS k, COUNT(*) AS n FROM (SELECT t.k AS "
...     "__c1, t.v AS __c2 FROM t AS t) AS r GROUP BY r.__c1", read="duckdb")
>>> print(merge_projections(tree, ctx).sql("duckdb"))
SELECT r.k AS k, COUNT(*) AS n FROM t AS r GROUP BY r.k
>>> kept = "SELECT r.c AS c FROM (SELECT t.k AS c FROM t AS t WHERE t.v > 1) AS r"
>>> print(merge_projections(sqlglot.parse_one(kept, read="duckdb"), ctx).sql("duckdb"))
SELECT r.c AS c FROM (SELECT t.k AS c FROM t AS t WHERE t.v > 1) AS r
"""

from __future__ import annotations

from sqlglot import exp

from ..context import Context

# What a derived table's SELECT may not have to be read as its table.
_CLAUSES = (
    "joins",
    "laterals",
    "where",
    "group",
    "having",
    "qualify",
    "distinct",
    "order",
    "limit",
    "offset",
    "with",
)


def merge_projections(tree: exp.Expression, ctx: Context) -> exp.Expression:
    for select in list(tree.find_all(exp.Select)):
        for source in _sources(select):
            columns = _renamed_columns(source, ctx)
            if columns is not None:
                _merge(select, source, columns)
    return tree


def _sources(select: exp.Select) -> list[exp.Subquery]:
    """The derived tables in `select`'s FROM and JOINs."""
    from_ = select.args.get("from_") or select.args.get("from")
    nodes = [from_.this] if from_ is not None else []
    for join in select.args.get("joins") or []:
        if join.args.get("using"):
            return []  # (qualify_names writes ON; kept as written otherwise)
        nodes.append(join.this)
    return [n for n in nodes if isinstance(n, exp.Subquery)]


def _renamed_columns(source: exp.Subquery, ctx: Context) -> dict | None:
    """Output name -> the table's column, where `source` only renames the
    columns of one declared table; else None."""
    inner = source.this
    alias = source.args.get("alias")
    if not isinstance(inner, exp.Select) or alias is None or alias.columns:
        return None
    if any(inner.args.get(c) for c in _CLAUSES):
        return None
    from_ = inner.args.get("from_") or inner.args.get("from")
    table = from_.this if from_ is not None else None
    if not isinstance(table, exp.Table) or table.name.lower() not in ctx.relations:
        return None
    if table.args.get("db") or table.args.get("catalog"):
        return None
    columns = {}
    for item in inner.expressions:
        column = item.this if isinstance(item, exp.Alias) else None
        if not isinstance(column, exp.Column) or column.table != table.alias_or_name:
            return None
        columns[item.alias] = column.name
    return columns


def _merge(select: exp.Select, source: exp.Subquery, columns: dict) -> None:
    """Read `source` as its table in `select`, if `select` reads its columns
    only in its own scope."""
    name = source.alias
    sources = {id(s) for s in _sources(select)}
    refs = []
    for column in select.find_all(exp.Column):
        if column.table != name:
            continue
        if column.find_ancestor(exp.Select) is not select:
            if _inside(column, sources, select):
                continue  # a derived table of its own (not LATERAL: not ours)
            return  # read from a subquery: kept
        if column.name not in columns:
            return
        refs.append(column)
    table = source.this.args.get("from_") or source.this.args.get("from")
    for column in refs:
        column.set("this", exp.to_identifier(columns[column.name]))
    source.replace(
        exp.Table(
            this=table.this.this.copy(),
            alias=exp.TableAlias(this=exp.to_identifier(name)),
        )
    )


def _inside(node: exp.Expression, sources: set[int], select: exp.Select) -> bool:
    """Whether `node` lies in one of `sources` (by id), below `select`."""
    while node is not None and node is not select:
        if id(node) in sources:
            return True
        node = node.parent
    return False
