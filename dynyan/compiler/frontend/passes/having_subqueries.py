"""A HAVING condition with a subquery filters the rows of the grouped query.

`SELECT … GROUP BY … HAVING SUM(x) > (SELECT …)` becomes `SELECT … FROM
(SELECT …, SUM(x) AS __h1 … GROUP BY … [HAVING the other conditions]) AS
__having WHERE __having.__h1 > (SELECT …)`: the groups are an inner view,
and the subquery a test on its rows (a threshold that moves re-checks only
the groups between the old and the new value). A subquery that sums the
rows the groups hold (the same FROM and WHERE, its columns inside SUMs)
sums the groups' sums instead: it reads the same derived table, whose
changes its view then takes (`render._read_from_siblings`).

>>> import sqlglot
>>> from dynyan.compiler.frontend.context import Context
>>> tree = sqlglot.parse_one(
...     "SELECT k AS k, SUM(v) AS s FROM t GROUP BY k "
...     "HAVING SUM(v) > (SELECT SUM(v) * 0.5 FROM t WHERE t.v > 0)", read="duckdb")
>>> print(having_subqueries(tree, Context({})).sql("duckdb"))
SELECT __having.k AS k, __having.s AS s FROM (SELECT k AS k, SUM(v) AS s, SUM(v) AS __h1 FROM t GROUP BY k) AS __having WHERE __having.__h1 > (SELECT SUM(v) * 0.5 FROM t WHERE t.v > 0)
>>> tree = sqlglot.parse_one(
...     "SELECT k AS k, SUM(v) AS s FROM t GROUP BY k "
...     "HAVING SUM(v) > (SELECT SUM(v) * 0.5 FROM t) ORDER BY s DESC", read="duckdb")
>>> print(having_subqueries(tree, Context({})).sql("duckdb"))
SELECT __having.k AS k, __having.s AS s FROM (SELECT k AS k, SUM(v) AS s, SUM(v) AS __h1 FROM t GROUP BY k) AS __having WHERE __having.__h1 > (SELECT SUM(__total.__h1) * 0.5 FROM (SELECT k AS k, SUM(v) AS s, SUM(v) AS __h1 FROM t GROUP BY k) AS __total) ORDER BY s DESC
"""

from __future__ import annotations

from sqlglot import exp

from ..context import Context, from_aliases, sql_conjuncts
from ..diagnostics import unsupported

ALIAS = "__having"
TOTAL = "__total"  # the groups again, read by a subquery that sums them
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

    conds = [c.copy() for c in moved]
    # a subquery summing the very rows the groups hold: the sum of the
    # groups' sums (its view then takes their changes, not the rows again)
    totals = [
        sub.this
        for c in ([] if kept else conds)
        for sub in c.find_all(exp.Subquery)
        if _sums_the_same_rows(sub.this, select)
    ]
    for query in totals:
        for agg in list(query.expressions[0].find_all(exp.Sum)):
            agg.replace(exp.Sum(this=exp.column(column(agg).name, table=TOTAL)))
        for arg in ("joins", "where"):
            query.set(arg, None)
    where = lift(exp.and_(*conds, copy=False))
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
    for query in totals:
        groups = exp.Subquery(
            this=inner.copy(), alias=exp.TableAlias(this=exp.to_identifier(TOTAL))
        )
        query.set("from_", exp.From(this=groups))
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


def _sums_the_same_rows(query: exp.Expression, select: exp.Select) -> bool:
    """Whether `query` is `SELECT f(SUM(a), …) FROM` the FROM and WHERE of
    the grouped `select`, word for word (so it reads no outer column), its
    columns all inside SUMs: the sum over all rows is the sum of the groups'
    sums (TPC-H Q11's `SUM(v) > (SELECT SUM(v) * 0.0001 FROM …)`)."""
    if not isinstance(query, exp.Select) or len(query.expressions) != 1:
        return False
    if any(
        query.args.get(arg)
        for arg in ("group", "having", "distinct", "order", "limit", "offset")
    ):
        return False
    for arg in ("from_", "joins", "where"):
        mine, theirs = _listed(query.args.get(arg)), _listed(select.args.get(arg))
        if [m.sql() for m in mine] != [t.sql() for t in theirs]:
            return False
    value = query.expressions[0]
    if value.find(exp.Select, exp.Window, exp.Distinct):
        return False
    sums = list(value.find_all(exp.Sum))
    aggs = list(value.find_all(exp.AggFunc))
    return (
        bool(sums)
        and len(aggs) == len(sums)
        and all(
            c.find_ancestor(exp.Sum) is not None for c in value.find_all(exp.Column)
        )
    )


def _listed(part) -> list:
    """A clause's expressions as a list (joins are one already; none: [])."""
    if isinstance(part, list):
        return part
    return [] if part is None else [part]
