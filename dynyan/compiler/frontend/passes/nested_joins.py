"""A parenthesized join in FROM -> the joins of the FROM around it.

`FROM r JOIN (s JOIN t ON c1) ON c2` joins the same rows as `FROM r CROSS
JOIN s JOIN t ON c1 AND c2` when every join in it is inner (inner joins
regroup freely), and so does `FROM (s JOIN t ON c1)`. Under an outer
join (`r LEFT JOIN (s JOIN t ON c1) ON c2`: the rows of r keep NULLs for
s and t together) it is refused with the derived table that says it.

>>> import sqlglot
>>> from dynyan.compiler.frontend.context import Context
>>> tree = sqlglot.parse_one(
...     "SELECT r.a FROM r JOIN (s JOIN t ON s.c = t.c) ON r.b = s.b", read="duckdb")
>>> print(nested_joins(tree, Context({})).sql("duckdb"))
SELECT r.a FROM r CROSS JOIN s JOIN t ON s.c = t.c AND r.b = s.b
"""

from __future__ import annotations

from sqlglot import exp

from ..context import Context
from ..diagnostics import unsupported


def nested_joins(tree: exp.Expression, ctx: Context) -> exp.Expression:
    for select in list(tree.find_all(exp.Select)):
        from_ = select.args.get("from_") or select.args.get("from")
        joins = list(select.args.get("joins") or [])
        if from_ is not None and _nested(from_.this):  # FROM (s JOIN t ON …)
            inner = from_.this.this
            _refuse_outer(inner.args["joins"], inner)
            joins = [*inner.args["joins"], *joins]
            inner.set("joins", None)
            from_.set("this", inner)
        flat = []
        for join in joins:
            if not _nested(join.this):
                flat.append(join)
                continue
            inner = join.this.this
            _refuse_outer([join, *inner.args["joins"]], join)
            nested = list(inner.args["joins"])
            inner.set("joins", None)
            flat.append(exp.Join(this=inner, kind="CROSS"))
            on = join.args.get("on")
            if on is not None:  # the outer ON, last: it may read every table
                last = nested[-1]
                both = [c for c in (last.args.get("on"), on) if c is not None]
                last.set("on", exp.and_(*both))
                last.set("kind", None)
            flat += nested
        if joins:
            select.set("joins", flat)
    return tree


def _nested(source: exp.Expression) -> bool:
    """`(s JOIN t ON …)` without an alias: tables joined in parentheses."""
    return (
        isinstance(source, exp.Subquery)
        and isinstance(source.this, exp.Table)
        and bool(source.this.args.get("joins"))
        and not source.alias
    )


def _refuse_outer(joins: list, node: exp.Expression) -> None:
    for join in joins:
        if (
            join.side
            or join.args.get("using")
            or (join.kind or "").upper()
            in (
                "SEMI",
                "ANTI",
                "ASOF",
                "POSITIONAL",
            )
        ):
            raise unsupported(
                "a parenthesized join is supported where every join in and around "
                "it is inner; write the parenthesized part as a derived table, "
                "(SELECT … FROM s JOIN t ON …) AS x",
                node,
            )
