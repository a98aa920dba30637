"""`x op ANY (subquery)` and `x op ALL (subquery)` as [NOT] EXISTS.

In a conjunct of WHERE (where NULL and FALSE both drop the row):

- `x op ANY (SELECT y FROM … WHERE w)` holds when some row has `x op y`:
  `EXISTS (SELECT 1 FROM … WHERE w AND x op y)` (`SOME` is `ANY`);
- `x op ALL (SELECT y …)` holds when no row has `x op y` FALSE or NULL:
  `NOT EXISTS (SELECT 1 FROM … WHERE w AND (NOT x op y OR x IS NULL OR y IS
  NULL))` (TRUE over an empty subquery, as SQL says).

A subquery that groups, aggregates, is DISTINCT or a set operation becomes a
derived table first (`FROM (subquery) AS __qN`). Runs after `qualify_names`,
so the outer `x` keeps its table's alias inside the subquery. Elsewhere
(under OR or NOT, where NULL and FALSE differ) the quantifier is refused.

>>> import sqlglot
>>> from dynyan.compiler.frontend.context import Context
>>> tree = sqlglot.parse_one(
...     "SELECT r.a AS a FROM r AS r WHERE r.a > ANY (SELECT s.c AS c FROM s AS s)",
...     read="duckdb",
... )
>>> print(quantified_subqueries(tree, Context({})).sql("duckdb"))
SELECT r.a AS a FROM r AS r WHERE EXISTS(SELECT 1 FROM s AS s WHERE r.a > s.c)
"""

from __future__ import annotations

from sqlglot import exp

from ..context import Context
from ..diagnostics import unsupported

_COMPARISONS = (exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT, exp.GTE)


def quantified_subqueries(tree: exp.Expression, ctx: Context) -> exp.Expression:
    made = 0
    for node in list(tree.find_all(exp.Any, exp.All)):
        comparison = node.parent
        if (
            not isinstance(comparison, _COMPARISONS)
            or node is not comparison.expression
        ):
            raise unsupported(
                "ANY/ALL is supported as the right side of a comparison", node
            )
        if not _conjunct_of_where(comparison):
            raise unsupported(
                "a comparison with ANY/ALL must be a conjunct of WHERE", comparison
            )
        made += 1
        query = node.this.this if isinstance(node.this, exp.Subquery) else node.this
        comparison.replace(_exists(comparison, query, isinstance(node, exp.All), made))
    return tree


def _exists(comparison, query: exp.Expression, every: bool, n: int):
    if not isinstance(query, exp.Select) or len(query.expressions) != 1:
        raise unsupported("ANY/ALL needs a subquery of one column", query)
    inner = query.copy()
    if _needs_derived(inner):
        alias = f"__q{n}"
        item = inner.expressions[0]
        name = item.alias_or_name
        inner = exp.select("1").from_(
            exp.Subquery(
                this=inner, alias=exp.TableAlias(this=exp.to_identifier(alias))
            )
        )
        value = exp.column(name, table=alias)
        where = None
    else:
        item = inner.expressions[0]
        value = item.this.copy() if isinstance(item, exp.Alias) else item.copy()
        where = inner.args.get("where")
        inner.set("expressions", [exp.Literal.number(1)])
    x = comparison.this.copy()
    test = type(comparison)(this=x, expression=value)
    if every:
        test = exp.or_(
            exp.Not(this=exp.Paren(this=test)),
            exp.Is(this=x.copy(), expression=exp.Null()),
            exp.Is(this=value.copy(), expression=exp.Null()),
        )
    condition = test if where is None else exp.and_(where.this, exp.Paren(this=test))
    inner.set("where", exp.Where(this=condition))
    found = exp.Exists(this=inner)
    return exp.Not(this=found) if every else found


def _needs_derived(select: exp.Select) -> bool:
    return bool(
        select.args.get("group")
        or select.args.get("having")
        or select.args.get("distinct")
        or select.find(exp.AggFunc)
    )


def _conjunct_of_where(node: exp.Expression) -> bool:
    parent = node.parent
    while isinstance(parent, (exp.And, exp.Paren)):
        parent = parent.parent
    return isinstance(parent, exp.Where)
