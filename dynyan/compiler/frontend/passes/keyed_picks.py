"""ANY_VALUE, FIRST, LAST of a column whose table's PRIMARY KEY the query
groups by -> MIN.

`SELECT c.id, ANY_VALUE(c.name), SUM(o.amount) FROM customers c JOIN
orders o … GROUP BY c.id` (DuckDB asks for ANY_VALUE where PostgreSQL
reads `c.name` as it is): every row of a group has the same `c.name`, so
any value the aggregate picks is that one, and MIN (which skips NULLs, as
ANY_VALUE does) reads it. Elsewhere such an aggregate picks among
different values, which no maintained view could agree on run after run:
refused, saying what to write. FIRST and LAST with an ORDER BY pick the
first (last) row of that order's, kept as ARG_MIN's pairs are
(`aggregates.Grouping._ordered_pair`). Runs after `qualify_names`.
"""

from __future__ import annotations

from sqlglot import exp

from ..context import Context, from_items
from ..diagnostics import unsupported

PICKS = (exp.AnyValue, exp.First, exp.Last)


def keyed_picks(tree: exp.Expression, ctx: Context) -> exp.Expression:
    for node in list(tree.find_all(*PICKS)):
        select, arg, spelled = node.parent_select, node.this, node
        if isinstance(node.parent, (exp.IgnoreNulls, exp.RespectNulls)):
            spelled = node.parent  # DuckDB's ANY_VALUE skips NULLs, as MIN
        if (
            isinstance(node, (exp.First, exp.Last))
            and isinstance(arg, exp.Order)
            and not isinstance(node.parent, exp.Window)
        ):
            continue  # FIRST(x ORDER BY k): the first row's x (aggregates.py)
        if select is not None and _one_value(arg, select, ctx):
            spelled.replace(exp.Min(this=arg.copy()))
            continue
        raise unsupported(
            f"aggregate {node.sql_name()} is not supported: it picks any row's "
            "value (DuckDB the first it reads): where the group holds one value, "
            "MIN or MAX gives the same (taken as it is where the query groups "
            "by the PRIMARY KEY of the column's table); FIRST(x ORDER BY k) and "
            "LAST(x ORDER BY k) take the first and last row of an order",
            node,
        )
    return tree


def _one_value(arg, select: exp.Select, ctx: Context) -> bool:
    """Whether `arg` is a column of a table (of `select`'s FROM) whose
    declared PRIMARY KEY columns are all GROUP BY keys of `select`."""
    group = select.args.get("group")
    if not isinstance(arg, exp.Column) or not arg.table or group is None:
        return False
    alias = arg.table.lower()
    tables = [
        t
        for t in from_items(select)
        if isinstance(t, exp.Table) and (t.alias_or_name or "").lower() == alias
    ]
    relation = ctx.relations.get(tables[0].name.lower()) if tables else None
    if relation is None or not relation.key:
        return False
    grouped = {
        (k.table.lower(), k.name.lower())
        for k in group.expressions
        if isinstance(k, exp.Column)
    }
    return all((alias, column) in grouped for column in relation.key)
