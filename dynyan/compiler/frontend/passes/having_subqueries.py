"""A HAVING condition with a subquery filters the rows of the grouped query.

`SELECT … GROUP BY … HAVING SUM(x) > (SELECT …)` becomes `SELECT … FROM
(SELECT …, SUM(x) AS __h1 … GROUP BY … [HAVING the other conditions]) AS
__having WHERE __having.__h1 > (SELECT …)`: the groups are an inner view,
and the subquery a test on its rows (a threshold that moves re-checks only
the groups between the old and the new value).

>>> import sqlglot
>>> from dynyan.compiler.frontend.context import Context
>>> tree = sqlglot.parse_one(
...     "SELECT k AS k, SUM(v) AS s FROM t GROUP BY k "
...     "HAVING SUM(v) > (SELECT SUM(v) * 0.5 FROM t) ORDER BY s DESC", read="duckdb")
>>> print(having_subqueries(tree, Context({})).sql("duckdb"))
SELECT __having.k AS k, __having.s AS s FROM (SELECT k AS k, SUM(v) AS s, SUM(v) AS __h1 FROM t GROUP BY k) AS __having WHERE __having.__h1 > (SELECT SUM(v) * 0.5 FROM t) ORDER BY s DESC
"""

from __future__ import annotations

from sqlglot import exp

from ..context import Context, from_aliases, sql_conjuncts
from ..diagnostics import unsupported

ALIAS = "__having"
# what holds a subquery in a condition (ANY/ALL hold their SELECT directly)
_SUBQUERIES = (exp.Subquery, exp.Exists, exp.Any, exp.All)


def having_subqueries(tree: exp.Expression, ctx: Context) -> exp.Expression:
    for select in reversed(list(tree.find_all(exp.Select))):
        having = select.args.get("having")
        if having is None or having.find(*_SUBQUERIES) is None:
            continue
        outer = _split(select)
        if select is tree:
            tree = outer
        else:
            select.replace(outer)
    return tree


def _split(select: exp.Select) -> exp.Select:
    if any(
        isinstance(e, exp.Star) or (isinstance(e, exp.Column) and e.is_star)
        for e in select.expressions
    ):
        raise unsupported("SELECT * with a subquery in HAVING", select)
    inner = select.copy()
    conds = sql_conjuncts(inner.args["having"].this)
    moved = [c for c in conds if c.find(*_SUBQUERIES) is not None]
    kept = [c for c in conds if c not in moved]
    inner.set("having", exp.Having(this=exp.and_(*kept)) if kept else None)
    for arg in ("order", "limit", "offset", "distinct"):
        inner.set(arg, None)
    items = list(inner.expressions)
    projected: list[tuple[exp.Expression, str]] = []

    def column(e: exp.Expression) -> exp.Column:
        for expr, name in projected:
            if expr == e:
                return exp.column(name, table=ALIAS)
        name = f"__h{len(projected) + 1}"
        projected.append((e.copy(), name))
        return exp.column(name, table=ALIAS)

    sources = from_aliases(select)

    def lift(node: exp.Expression) -> exp.Expression:
        """Aggregates and columns outside subqueries come from the groups,
        and so do a subquery's columns of the grouped query's tables (a
        correlation with a GROUP BY key)."""
        if isinstance(node, _SUBQUERIES):
            inner_sources = set().union(*map(from_aliases, node.find_all(exp.Select)))
            for col in list(node.find_all(exp.Column)):
                table = col.table.lower()
                if table in sources and table not in inner_sources:
                    col.replace(column(col))
            return node
        if isinstance(node, (exp.AggFunc, exp.Column)):
            return column(node)
        for arg, value in list(node.args.items()):
            if isinstance(value, exp.Expression):
                node.set(arg, lift(value))
            elif isinstance(value, list):
                node.set(
                    arg,
                    [lift(v) if isinstance(v, exp.Expression) else v for v in value],
                )
        return node

    where = lift(exp.and_(*[c.copy() for c in moved]))
    order = select.args.get("order")
    if order is not None:
        order = order.copy()
        names = {e.alias_or_name.lower() for e in items}
        for ordered in order.expressions:
            key = ordered.this
            named = (
                isinstance(key, exp.Column)
                and not key.table
                and key.name.lower() in names
            )
            positional = isinstance(key, exp.Literal) and not key.is_string
            if not (named or positional):
                ordered.set("this", lift(key.copy()))
    inner.set("expressions", items + [exp.alias_(e, name) for e, name in projected])
    outer = exp.select(
        *[
            exp.alias_(exp.column(e.alias_or_name, table=ALIAS), e.alias_or_name)
            for e in items
        ]
    ).from_(
        exp.Subquery(this=inner, alias=exp.TableAlias(this=exp.to_identifier(ALIAS)))
    )
    outer.set("where", exp.Where(this=where))
    if select.args.get("distinct") is not None:
        outer.set("distinct", exp.Distinct())
    for arg, value in (
        ("order", order),
        ("limit", select.args.get("limit")),
        ("offset", select.args.get("offset")),
    ):
        if value is not None:
            outer.set(arg, value.copy())
    return outer
