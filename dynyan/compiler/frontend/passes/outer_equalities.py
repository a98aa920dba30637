"""A subquery's `inner = outer` columns -> the inner one in the subqueries
nested in its WHERE.

`WHERE o.p = (SELECT MAX(o2.p) FROM orders o2 WHERE o2.c = o.c AND o2.d =
(SELECT MAX(o3.d) FROM orders o3 WHERE o3.c = o.c))`: the innermost
subquery reads the outermost query, two levels out, which no inner view can
be keyed by. Wherever the middle subquery's WHERE holds, its conjunct `o2.c
= o.c` does, so the innermost reads `o2.c` instead: the same value, now of
the query just outside it. Only conjuncts of the WHERE (AND at the top)
between one of the subquery's own columns and an outer one are used, and
only subqueries inside that WHERE are changed (where a row is kept, the
equality holds); a nested query that names a table by the same alias
shadows it. Runs after `qualify_names`: every column names its table.

>>> import sqlglot
>>> tree = sqlglot.parse_one(
...     "SELECT r.a FROM r WHERE r.b = (SELECT MAX(s.b) FROM s WHERE s.k = r.k "
...     "AND s.t = (SELECT MAX(u.t) FROM u WHERE u.k = r.k))", read="duckdb")
>>> print(outer_equalities(tree, None).sql("duckdb"))
SELECT r.a FROM r WHERE r.b = (SELECT MAX(s.b) FROM s WHERE s.k = r.k AND s.t = (SELECT MAX(u.t) FROM u WHERE u.k = s.k))
"""

from __future__ import annotations

from sqlglot import exp

from ..context import Context, equated_columns, from_items, sql_conjuncts


def outer_equalities(tree: exp.Expression, ctx: Context | None) -> exp.Expression:
    for select in list(tree.find_all(exp.Select)):
        where = select.args.get("where")
        if where is None or where.find(exp.Select) is None:
            continue
        own = _aliases(select)
        conds = sql_conjuncts(where.this)
        inner_of = equated_columns(conds, own)  # outer column -> an own one
        if not inner_of:
            continue
        for cond in conds:
            for col in list(cond.find_all(exp.Column)):
                if _key(col) in inner_of and _nested_unshadowed(col, select):
                    col.replace(inner_of[_key(col)].copy())
    return tree


def _key(col: exp.Column) -> tuple[str, str]:
    return col.table.lower(), col.name.lower()


def _aliases(select: exp.Select) -> set[str]:
    return {(item.alias_or_name or "").lower() for item in from_items(select)}


def _nested_unshadowed(col: exp.Column, select: exp.Select) -> bool:
    """Whether `col` stands in a query nested in `select` (not in `select`'s
    own condition) and no query between them names its table."""
    nested = False
    node = col.parent
    while node is not None and node is not select:
        if isinstance(node, exp.Select):
            if col.table.lower() in _aliases(node):
                return False
            nested = True
        node = node.parent
    return nested and node is select
