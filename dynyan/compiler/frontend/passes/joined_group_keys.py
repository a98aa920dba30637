"""A GROUP BY key over columns of several tables -> groups of a derived
table of the join.

`SELECT u.country || '-' || o.status AS k, COUNT(*) FROM users u JOIN
orders o ON … GROUP BY 1`: the groups of a join tree are keyed by the
columns of its atoms, and this key belongs to none. The FROM, its joins
and WHERE become a derived table `__joined` that outputs the columns the
query reads and the key, and the query groups that table:

    SELECT __joined.__g1 AS k, COUNT(*) FROM (SELECT u.country || '-' ||
    o.status AS __g1 FROM users AS u JOIN orders AS o ON …) AS __joined
    GROUP BY __joined.__g1

The derived table is an inner view holding the joined rows (bag), so the
cost is that of the join's result. Not taken where a subquery reads the
query's tables outside FROM and WHERE (it would lose them), or FROM has a
LATERAL join: refused later, as before. Runs after `qualify_names`.
"""

from __future__ import annotations

from sqlglot import exp

from ..context import Context

ALIAS = "__joined"


def joined_group_keys(tree: exp.Expression, ctx: Context) -> exp.Expression:
    for select in reversed(list(tree.find_all(exp.Select))):
        group = select.args.get("group")
        if group is None:
            continue
        wide = [k for k in group.expressions if len(_tables(k)) > 1]
        if wide and _movable(select):
            _wrap(select, wide)
    return tree


def _tables(e: exp.Expression) -> set[str]:
    return {c.table.lower() for c in e.find_all(exp.Column) if c.table}


def _outside(select: exp.Select):
    """The parts of `select` that stay outside the derived table."""
    for arg in ("expressions", "group", "having", "order", "qualify"):
        value = select.args.get(arg)
        for part in value if isinstance(value, list) else [value]:
            if part is not None:
                yield part


def _movable(select: exp.Select) -> bool:
    if select.args.get("from_") is None:
        return False
    if any(isinstance(j.this, exp.Lateral) for j in select.args.get("joins") or []):
        return False
    return not any(
        part.find(exp.Subquery, exp.Exists, exp.Select) for part in _outside(select)
    )


def _wrap(select: exp.Select, wide: list[exp.Expression]) -> None:
    keys = [(k.copy(), f"__g{i}") for i, k in enumerate(wide, 1)]

    def as_key(node: exp.Expression) -> exp.Expression:
        for key, name in keys:
            if node == key:
                return exp.column(name, table=ALIAS)
        return node

    for part in list(_outside(select)):
        if isinstance(part, exp.Group):
            part.set("expressions", [as_key(k) for k in part.expressions])
        else:
            part.replace(part.transform(as_key))
    columns: dict[str, tuple[exp.Column, str]] = {}
    for part in _outside(select):
        for col in list(part.find_all(exp.Column)):
            if col.table.lower() == ALIAS or not col.table:
                continue
            text = col.sql()
            if text not in columns:
                columns[text] = (col.copy(), f"__c{len(columns) + 1}")
            col.replace(exp.column(columns[text][1], table=ALIAS))
    inner = exp.Select(
        expressions=[exp.alias_(c, name) for c, name in columns.values()]
        + [exp.alias_(k, name) for k, name in keys]
    )
    for arg in ("from_", "joins", "where"):
        inner.set(arg, select.args.get(arg))
        select.set(arg, None)
    select.set("from_", exp.From(this=inner.subquery(ALIAS, copy=False)))
