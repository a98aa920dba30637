"""`x IN (SELECT …)` inside an OR of WHERE -> a LEFT JOIN flag.

Where a membership test is not a conjunct of WHERE (`x IN (SELECT y …) OR
c`), it cannot be a semijoin. Uncorrelated and in a positive place (under
AND and OR only), it becomes a LEFT JOIN with the distinct values of the
subquery, each with a flag, and the test becomes `flag IS NOT NULL`:

    FROM … LEFT JOIN (SELECT DISTINCT __s1.y AS __k, 1 AS __in
                      FROM (SELECT y …) AS __s1) AS __in1 ON x = __in1.__k
    WHERE __in1.__in IS NOT NULL OR c

A row of the outer query meets at most one distinct value, so no row is
repeated. In a positive place NULL and FALSE both fail, so a NULL `x` or a
NULL among the values (where SQL's IN gives NULL) gives the same rows.
Runs after `qualify_names` (columns carry their tables) and before
`outer_joins`, which maintains the LEFT JOIN.

>>> import sqlglot
>>> from dynyan.compiler.frontend.context import Context
>>> tree = sqlglot.parse_one(
...     "SELECT r.a AS a FROM r AS r WHERE r.a IN (SELECT s.c AS c FROM s AS s) OR r.a > 5",
...     read="duckdb")
>>> print(membership_flags(tree, Context({})).sql("duckdb"))
SELECT r.a AS a FROM r AS r LEFT JOIN (SELECT DISTINCT __s1.c AS __k, 1 AS __in FROM (SELECT s.c AS c FROM s AS s) AS __s1) AS __in1 ON r.a = __in1.__k WHERE NOT __in1.__in IS NULL OR r.a > 5
"""

from __future__ import annotations

from sqlglot import exp

from ..context import Context


def membership_flags(tree: exp.Expression, ctx: Context) -> exp.Expression:
    count = 0
    for select in list(tree.find_all(exp.Select)):
        where = select.args.get("where")
        if where is None:
            continue
        for node in list(where.find_all(exp.In)):
            query = node.args.get("query")
            if query is None or node.parent_select is not select:
                continue
            if not _under_or(node, where) or not isinstance(node.this, exp.Column):
                continue
            inner = query.this if isinstance(query, exp.Subquery) else query
            name = _single_output(inner)
            if name is None or correlated(inner):
                continue  # refused later, by unnest_subqueries
            count += 1
            alias, source = f"__in{count}", f"__s{count}"
            values = (
                exp.select(
                    exp.alias_(exp.column(name, table=source), "__k"),
                    exp.alias_(exp.Literal.number(1), "__in"),
                )
                .distinct()
                .from_(inner.subquery(source))
            )
            select.append(
                "joins",
                exp.Join(
                    this=values.subquery(alias, copy=False),
                    side="LEFT",
                    on=exp.EQ(
                        this=node.this.copy(), expression=exp.column("__k", table=alias)
                    ),
                ),
            )
            flag = exp.column("__in", table=alias)
            node.replace(exp.Not(this=exp.Is(this=flag, expression=exp.Null())))
    return tree


def _under_or(node: exp.Expression, where: exp.Where) -> bool:
    """Inside an OR, with only AND, OR and parentheses up to WHERE."""
    seen_or = False
    parent = node.parent
    while parent is not where:
        if isinstance(parent, exp.Or):
            seen_or = True
        elif not isinstance(parent, (exp.And, exp.Paren)):
            return False
        parent = parent.parent
    return seen_or


def _single_output(inner: exp.Expression) -> str | None:
    """The name of the one column a subquery selects (None: not one)."""
    first = inner
    while isinstance(first, exp.SetOperation):
        first = first.this
    if not isinstance(first, exp.Select) or len(first.expressions) != 1:
        return None
    item = first.expressions[0]
    if isinstance(item, exp.Star) or not item.alias_or_name:
        return None
    return item.alias_or_name


def correlated(inner: exp.Expression) -> bool:
    """Whether a column of the subquery names a table outside it."""
    own = {
        (t.alias_or_name or "").lower()
        for t in inner.find_all(exp.Table, exp.Subquery)
        if t.alias_or_name
    }
    return any(
        col.table and col.table.lower() not in own for col in inner.find_all(exp.Column)
    )
