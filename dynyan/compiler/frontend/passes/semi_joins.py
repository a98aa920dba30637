"""SEMI JOIN and ANTI JOIN -> [NOT] EXISTS.

DuckDB's `a SEMI JOIN b ON c` keeps each row of `a` (as often as `a` has
it) where some row of `b` satisfies `c`; `ANTI JOIN` keeps the others, a
row whose `c` is NULL for every row of `b` among them. That is SQL's
`WHERE [NOT] EXISTS (SELECT 1 FROM b WHERE c)`, which the later passes
maintain (`unnest_subqueries`). `USING (k, …)` reads `k` of the one source
before the join; after several, the ON condition must say which.

>>> import sqlglot
>>> tree = sqlglot.parse_one(
...     "SELECT a.x FROM a ANTI JOIN b ON a.x = b.x WHERE a.y > 1", read="duckdb")
>>> print(semi_joins(tree, None).sql("duckdb"))
SELECT a.x FROM a WHERE a.y > 1 AND NOT EXISTS(SELECT 1 FROM b WHERE a.x = b.x)
"""

from __future__ import annotations

from sqlglot import exp

from ..context import Context, from_items
from ..diagnostics import unsupported

_KINDS = ("SEMI", "ANTI")


def semi_joins(tree: exp.Expression, ctx: Context | None) -> exp.Expression:
    # innermost first: a join's table is copied into its EXISTS rewritten
    for select in reversed(list(tree.find_all(exp.Select))):
        joins = select.args.get("joins") or []
        if not any((j.kind or "").upper() in _KINDS for j in joins):
            continue
        kept, tests = [], []
        for join in joins:
            if (join.kind or "").upper() not in _KINDS:
                kept.append(join)
                continue
            condition = _condition(select, join, kept)
            body = exp.select("1").from_(join.this.copy()).where(condition)
            test = exp.Exists(this=body)
            tests.append(exp.not_(test) if join.kind.upper() == "ANTI" else test)
        select.set("joins", kept or None)
        where = select.args.get("where")
        conds = ([where.this] if where is not None else []) + tests
        select.set("where", exp.Where(this=exp.and_(*conds)))
    return tree


def _condition(select: exp.Select, join: exp.Join, before: list) -> exp.Expression:
    """The join's ON condition, or its USING columns as equalities."""
    word = f"{join.kind.upper()} JOIN"
    if join.args.get("on") is not None:
        return join.args["on"].copy()
    using = join.args.get("using")
    if not using:
        raise unsupported(f"{word} needs an ON or USING condition", join)
    if before:
        raise unsupported(
            f"{word} … USING after several tables: say in ON which table's "
            "column it compares",
            join,
        )
    left, right = _name(from_items(select)[0], join), _name(join.this, join)
    return exp.and_(
        *(
            exp.column(k.name, table=left).eq(exp.column(k.name, table=right))
            for k in using
        )
    )


def _name(source: exp.Expression, join: exp.Join) -> str:
    name = source.alias_or_name
    if not name:
        raise unsupported(
            f"{join.kind.upper()} JOIN … USING of a source without a name: "
            "give it an alias",
            join,
        )
    return name
