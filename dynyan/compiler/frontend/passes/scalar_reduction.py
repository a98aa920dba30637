"""A correlated scalar subquery's view, kept only at the keys the outer query reads.

`x < (SELECT AVG(l.q) FROM lineitem l WHERE l.pk = p.pk)` becomes a view
grouped by `l.pk` (`unnest_subqueries`). The outer query reads that view only
at the keys of the rows of `p` that pass `p`'s own conditions (TPC-H Q17:
`p_brand = 'Brand#23' AND p_container = 'MED BOX'`, one part in a thousand);
a row of the outer join at any other key joins no such `p` row and is not in
the result, whatever the test says there. So the view's query gets

    l.pk IN (SELECT p2.pk FROM part p2 WHERE <p's own conditions>)

and stops maintaining groups nobody reads: an update of `lineitem` at another
key stops at that semi-join instead of moving an average and re-checking
the outer rows between its old and new value.
"""

from __future__ import annotations

from sqlglot import exp

from ..context import Context, from_items, sql_conjuncts


def reduce_to_read_keys(
    inner: exp.Select, outer_cols: list, null_safe: tuple, anchor, ctx: Context
) -> exp.Select:
    """`inner` (the decorrelated view's SELECT, keys k1… first) with a semi-join
    per key whose outer column is a column of a table the outer SELECT
    filters on its own; `inner` itself where there is none."""
    select = anchor.parent_select
    if not isinstance(select, exp.Select) or select.args.get("where") is None:
        return inner
    virtual = {name for name, _ in ctx.subqueries}
    tables = {
        (item.alias or item.name).lower(): item
        for item in from_items(select)
        if isinstance(item, exp.Table)
        and item.name.lower() in ctx.relations
        and item.name.lower() not in virtual
    }
    own = _own_conditions(select.args["where"].this, tables)
    keys = [e.unalias() for e in inner.expressions[: len(outer_cols)]]
    semi = []
    for key, outer, nulls in zip(keys, outer_cols, null_safe):
        alias = outer.table.lower() if isinstance(outer, exp.Column) else ""
        if nulls or alias not in tables or not own.get(alias):
            continue
        semi.append(_semi_join(key, outer, tables[alias], own[alias], inner))
    if not semi:
        return inner
    where = inner.args.get("where")
    conds = ([where.this] if where is not None else []) + semi
    inner.set("where", exp.Where(this=exp.and_(*conds)))
    return inner


def _own_conditions(where: exp.Expression, tables: dict) -> dict[str, list]:
    """Per table of the outer FROM, the conjuncts of WHERE over its columns
    alone (no subquery, no aggregate, no window)."""
    out: dict[str, list] = {}
    for cond in sql_conjuncts(where):
        if cond.find(exp.Subquery, exp.Select, exp.AggFunc, exp.Window):
            continue
        if isinstance(cond, exp.Boolean):  # a test already taken out: TRUE
            continue
        aliases = {c.table.lower() for c in cond.find_all(exp.Column)}
        if len(aliases) == 1 and "" not in aliases:
            (alias,) = aliases
            if alias in tables:
                out.setdefault(alias, []).append(cond)
    return out


def _semi_join(key, outer: exp.Column, table: exp.Table, conds: list, inner):
    """`key IN (SELECT t.col FROM table AS t WHERE conds)`, `t` an alias
    that `inner` does not use."""
    used = {a.lower() for a in _aliases(inner)}
    alias, n = f"{outer.table.lower()}_read", 1
    while alias in used:
        n += 1
        alias = f"{outer.table.lower()}_read{n}"

    def renamed(e: exp.Expression) -> exp.Expression:
        e = e.copy()
        for col in e.find_all(exp.Column):
            col.set("table", exp.to_identifier(alias))
        return e

    sub = exp.select(renamed(outer)).from_(exp.table_(table.name, alias=alias))
    sub = sub.where(exp.and_(*(renamed(c) for c in conds)))
    return exp.In(this=key.copy(), query=exp.Subquery(this=sub))


def _aliases(e: exp.Expression):
    for t in e.find_all(exp.Table):
        yield t.alias or t.name
