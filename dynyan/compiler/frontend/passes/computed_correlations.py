"""A scalar subquery correlated through expressions -> through columns.

`(SELECT COUNT(*) FROM e WHERE e.u = u.id AND e.ts < u.signup + INTERVAL 1
DAY)`, `(SELECT MAX(e.x) FROM e WHERE e.k = u.k + 1)` in the SELECT list:
the later passes key a subquery's value by the outer columns its
correlation reads (`scalar_items`, `banded_subqueries`), not by an
expression of them. The expression is a column of the outer table
computed once per row, so the table becomes a derived table that computes
it (`(SELECT u.id AS id, …, u.signup + INTERVAL 1 DAY AS __corr1 FROM u)
AS u`) and the correlation reads that column; likewise an expression of
the subquery's own table (`e.ts - INTERVAL 1 DAY < u.signup`). Taken for
comparisons (=, <, <=, >, >=) of an expression of one table's columns with
one of the other side's, without subqueries, aggregates or windows in
them; in WHERE only the inequalities (its equalities are keys already).

A LEFT JOIN whose ON equates the joined table with several tables before
it (`d CROSS JOIN c LEFT JOIN e ON e.kind = c.kind AND CAST(e.ts AS DATE)
= d.day`, a spine of days and kinds filled from events) becomes a test of
the unmatched rows correlated with both (`outer_joins`), keyed by columns
only: an expression of one table in such an equality is computed as a
column of that table first, the joined table's own too (read only in the
ON, its value never stands for a padded row).
Runs after `qualify_names`: every column names its table.
"""

from __future__ import annotations

from sqlglot import exp

from ..context import Context, from_items, output_names, sql_conjuncts
from .banded_subqueries import in_from
from .unnest_subqueries import split_correlation

_COMPARISONS = (exp.EQ, exp.GT, exp.GTE, exp.LT, exp.LTE)
_NOT_COMPUTED = (exp.Subquery, exp.Select, exp.AggFunc, exp.Window)


def computed_correlations(tree: exp.Expression, ctx: Context) -> exp.Expression:
    count = [0]
    for node in list(tree.find_all(exp.Subquery)):
        inner, outer = node.this, node.parent_select
        if not isinstance(inner, exp.Select) or outer is None or in_from(node):
            continue
        in_where = node.find_ancestor(exp.Where, exp.Select)
        keyed = isinstance(in_where, exp.Where) and in_where.parent is outer
        _, correlated, is_inner = split_correlation(inner)
        for cond in correlated:
            if not isinstance(cond, _COMPARISONS) or (
                keyed and isinstance(cond, exp.EQ)
            ):
                continue
            for side in (cond.this, cond.expression):
                columns = list(side.find_all(exp.Column))
                if isinstance(side, exp.Column) or not columns:
                    continue
                if side.find(*_NOT_COMPUTED) is not None:
                    break
                owners = {is_inner(c) for c in columns}
                aliases = {c.table.lower() for c in columns}
                if len(owners) != 1 or len(aliases) != 1:
                    break
                select = inner if owners.pop() else outer
                column = _computed(select, aliases.pop(), side, ctx, count)
                if column is None:
                    break
                side.replace(column)
    for join in list(tree.find_all(exp.Join)):
        _outer_join_keys(join, ctx, count)
    return tree


def _outer_join_keys(join: exp.Join, ctx: Context, count: list) -> None:
    """The equalities of expressions in a LEFT JOIN's ON that reads several
    tables before it, each expression a computed column of its table."""
    on, select = join.args.get("on"), join.parent
    if (join.side or "").upper() != "LEFT" or on is None:
        return
    if not isinstance(select, exp.Select):
        return
    joined = join.this.alias_or_name.lower()
    conds = sql_conjuncts(on)
    tables = {c.table.lower() for cond in conds for c in cond.find_all(exp.Column)}
    if len(tables - {joined}) < 2:
        return  # one table before it: its test is keyed by expressions
    for cond in conds:
        if not isinstance(cond, exp.EQ):
            continue
        for side in (cond.this, cond.expression):
            columns = list(side.find_all(exp.Column))
            aliases = {c.table.lower() for c in columns}
            if isinstance(side, exp.Column) or len(aliases) != 1:
                continue
            if side.find(*_NOT_COMPUTED) is not None:
                continue
            alias = aliases.pop()
            column = _computed(select, alias, side, ctx, count, alias == joined)
            if column is not None:
                side.replace(column)


def _computed(
    select: exp.Select,
    alias: str,
    value,
    ctx: Context,
    count: list,
    only_in_on: bool = False,
):
    """`value` (of `alias`'s columns) as a column of `alias` in `select`'s
    FROM, which becomes a derived table computing it; None where `alias`
    is not one of its tables or derived tables, or is one an outer join
    may pad (unless `only_in_on`: the value is read only in an ON, where
    the rows are not padded)."""
    item = next(
        (i for i in from_items(select) if i.alias_or_name.lower() == alias), None
    )
    names = output_names(item, ctx.relations) if item is not None else None
    if names is None or (not only_in_on and _padded(select, item)):
        return None
    count[0] += 1
    name, source = f"__corr{count[0]}", f"__corr{count[0]}_{alias}"
    value = value.copy()
    for col in value.find_all(exp.Column):  # under its own name inside
        col.set("table", exp.to_identifier(source))
    inside = item.copy()
    inside.set("alias", exp.TableAlias(this=exp.to_identifier(source)))
    body = exp.select(
        *[exp.alias_(exp.column(n, table=source), n) for n in names],
        exp.alias_(value, name),
    ).from_(inside)
    item.replace(body.subquery(alias, copy=False))
    return exp.column(name, table=alias)


def _padded(select: exp.Select, item: exp.Expression) -> bool:
    """Whether an outer join may pad `item`'s rows with NULLs, where a
    value computed inside it would not be NULL (COALESCE(x, 0))."""
    joins = select.args.get("joins") or []
    sides = {(j.side or "").upper() for j in joins}
    if sides & {"RIGHT", "FULL"}:
        return True
    return isinstance(item.parent, exp.Join) and bool(item.parent.side)
