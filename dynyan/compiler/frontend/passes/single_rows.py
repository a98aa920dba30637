"""A scalar subquery without an aggregate -> one that aggregates and counts.

`(SELECT e FROM s WHERE …)` is the value of its one row, NULL over no rows,
and an error over several (DuckDB: "More than one row returned by a
subquery used as an expression"). Over at most one row `MIN(e)` is that
value, so the subquery becomes `(SELECT MIN(e) FROM s WHERE …)`, which the
passes after this one take as any one-aggregate subquery (a test in WHERE,
a join in the SELECT list), and its SELECT is marked (`ROWS` in its meta)
with what counts its rows: `COUNT(*)`, or for `SELECT DISTINCT e` the
distinct values, NULL one of them. `unnest_subqueries.virtual` adds that
count as a column `__rows` of the inner view; the generated module counts
the result rows of the view with more than one row, and a View reads
nothing while there is one (`ViewError`; push mode reports the net change
once the subquery has one row again).

Correlated by `inner column = outer column` conditions, its groups are cut
to the keys the outer query's rows read (`_read_keys_only`): as in DuckDB, a
key with several rows that no outer row reads is no error.

ORDER BY in such a subquery orders one row and is dropped. One with GROUP
BY, uncorrelated, is that over the derived table of its groups (TPC-DS Q44:
the one store's average). With LIMIT or OFFSET, HAVING without GROUP BY or a
window function the subquery is left as it is (and refused later). Runs after `qualify_names`.

>>> import sqlglot
>>> from dynyan.compiler.frontend.context import Context
>>> tree = sqlglot.parse_one(
...     "SELECT r.a FROM r AS r WHERE r.b = (SELECT s.c FROM s AS s WHERE s.d = 1)",
...     read="duckdb")
>>> tree = single_rows(tree, Context({}))
>>> print(tree.sql("duckdb"))
SELECT r.a FROM r AS r WHERE r.b = (SELECT MIN(s.c) AS c FROM s AS s WHERE s.d = 1)
>>> print(tree.find(exp.Subquery).this.meta[ROWS].sql("duckdb"))
COUNT(*)
"""

from __future__ import annotations

from sqlglot import exp

from ..context import ROWS, Context, sql_conjuncts
from .membership_flags import correlated
from .unnest_subqueries import keyed_equality, split_correlation

# Where a subquery is not a scalar: a table, a set, a quantifier's operand.
_NOT_SCALAR = (
    exp.From,
    exp.Join,
    exp.In,
    exp.Exists,
    exp.Any,
    exp.All,
    exp.Lateral,
    exp.SetOperation,
)


def single_rows(tree: exp.Expression, ctx: Context) -> exp.Expression:
    made = []
    for node in list(tree.find_all(exp.Subquery)):
        if isinstance(node.parent, _NOT_SCALAR):
            continue
        if _grouped_item(node.this):
            node.set("this", _over_groups(node.this))
        inner = node.this
        if not _one_row_item(inner):
            continue
        item = inner.expressions[0]
        value = item.unalias()
        if inner.args.get("distinct") is not None:
            # the distinct values, NULL one of them when a row has it
            count = exp.Add(
                this=exp.Count(this=exp.Distinct(expressions=[value.copy()])),
                expression=exp.Case(
                    ifs=[
                        exp.If(
                            this=exp.LT(
                                this=exp.Count(this=value.copy()),
                                expression=exp.Count(this=exp.Star()),
                            ),
                            true=exp.Literal.number(1),
                        )
                    ],
                    default=exp.Literal.number(0),
                ),
            )
            inner.set("distinct", None)
        else:
            count = exp.Count(this=exp.Star())
        inner.set("order", None)
        inner.set(
            "expressions", [exp.alias_(exp.Min(this=value.copy()), item.alias_or_name)]
        )
        inner.meta[ROWS] = count
        made.append(node)
    # those in WHERE first: a subquery in the SELECT list copies WHERE
    made.sort(key=lambda node: node.find_ancestor(exp.Where) is None)
    for node in made:
        _read_keys_only(node, node.this, ctx)
    return tree


def _read_keys_only(node: exp.Subquery, inner: exp.Select, ctx: Context) -> None:
    """A subquery correlated by `inner column = outer column` conditions (or
    an expression of outer columns) is
    an error only where a row of the outer query reads a key with several
    rows: DuckDB evaluates it on the rows of the outer FROM that pass its
    conditions without a subquery (all of WHERE for one in the SELECT
    list). Its groups are cut to those keys: `AND (inner columns) IN
    (SELECT the outer columns FROM <the outer FROM> WHERE those
    conditions)`. Correlated otherwise, every key is read (an error where
    any has several rows)."""
    outer = node.parent_select
    _, correlated, is_inner = split_correlation(inner)
    pairs = [keyed_equality(c, is_inner) for c in correlated]
    if outer is None or not pairs or None in pairs:
        return
    from_ = outer.args.get("from_") or outer.args.get("from")
    joins = outer.args.get("joins") or []
    items = ([from_.this] if from_ is not None else []) + [j.this for j in joins]
    own = {(t.alias_or_name or "").lower() for t in items}
    outer_columns = [c for _, o in pairs for c in o.find_all(exp.Column)]
    if from_ is None or any(c.table.lower() not in own for c in outer_columns):
        return  # a column of an enclosing query
    in_where = node.find_ancestor(exp.Where) is not None
    where = outer.args.get("where")
    kept = []
    for cond in sql_conjuncts(where.this) if where is not None else []:
        subquery = cond.find(exp.Subquery, exp.Select, exp.Exists) is not None
        if cond is node or node in cond.find_all(exp.Subquery):
            continue
        if not (in_where and subquery):
            kept.append(cond.copy())
    keys = exp.Select(
        expressions=[o.copy() for _, o in pairs],
        joins=[j.copy() for j in joins],
    )
    keys.set("from_" if "from_" in outer.args else "from", from_.copy())
    if kept:
        keys.set("where", exp.Where(this=_chain(kept)))
    # its own aliases, so that no pass takes its tables for the outer query's
    fresh = {name: f"{ctx.fresh_name('__keys')}_{name}" for name in own}
    for item in [keys.args.get("from_") or keys.args.get("from")] + keys.args["joins"]:
        item.this.set(
            "alias",
            exp.TableAlias(
                this=exp.to_identifier(fresh[item.this.alias_or_name.lower()])
            ),
        )
    for col in keys.find_all(exp.Column):
        if col.table.lower() in fresh:
            col.set("table", exp.to_identifier(fresh[col.table.lower()]))
    this = (
        pairs[0][0].copy()
        if len(pairs) == 1
        else exp.Tuple(expressions=[i.copy() for i, _ in pairs])
    )
    cut = exp.In(this=this, query=exp.Subquery(this=keys))
    conds = sql_conjuncts(inner.args["where"].this) + [cut]  # correlated: has WHERE
    inner.set("where", exp.Where(this=_chain(conds)))


def _grouped_item(inner: exp.Expression) -> bool:
    """An uncorrelated SELECT of one item with GROUP BY: one row per group."""
    return (
        isinstance(inner, exp.Select)
        and len(inner.expressions) == 1
        and inner.args.get("group") is not None
        and not any(inner.args.get(a) for a in ("limit", "offset", "qualify"))
        and inner.find(exp.Window) is None
        and not correlated(inner)
    )


def _over_groups(inner: exp.Select) -> exp.Select:
    """`(SELECT AVG(x) … GROUP BY g)` -> `(SELECT __groups.v FROM (SELECT
    AVG(x) AS v … GROUP BY g) AS __groups)`: the value of its one group, NULL
    over none, an error over several, as a subquery of rows."""
    groups = inner.copy()
    groups.set("expressions", [exp.alias_(inner.expressions[0].unalias().copy(), "v")])
    groups.set("order", None)
    return exp.select(exp.column("v", table="__groups")).from_(
        groups.subquery("__groups", copy=False)
    )


def _one_row_item(inner: exp.Expression) -> bool:
    """A SELECT of one item from tables, without aggregates, grouping,
    windows or a limit: its value is that of its one row, if any."""
    if not isinstance(inner, exp.Select) or len(inner.expressions) != 1:
        return False
    if not (inner.args.get("from_") or inner.args.get("from")):
        return False
    if any(inner.args.get(a) for a in ("group", "having", "limit", "offset")):
        return False
    if any(inner.args.get(a) for a in ("qualify", "windows")):
        return False
    if _one_row_table(inner):
        return False  # `SELECT c FROM (SELECT MAX(x) AS c …) AS d`: one row
    item = inner.expressions[0]
    own = [a for a in item.find_all(exp.AggFunc) if a.parent_select is inner]
    return (
        not own
        and item.find(exp.Window) is None
        and not isinstance(item.unalias(), exp.Star)
    )


def _one_row_table(inner: exp.Select) -> bool:
    """A SELECT of nothing but a derived table that aggregates without GROUP
    BY, which has exactly one row (`unnest_subqueries` merges the two)."""
    from_ = inner.args.get("from_") or inner.args.get("from")
    table = from_.this
    return (
        isinstance(table, exp.Subquery)
        and isinstance(table.this, exp.Select)
        and table.this.args.get("group") is None
        and any(e.find(exp.AggFunc) for e in table.this.expressions)
        and not any(inner.args.get(a) for a in ("joins", "where"))
    )


def _chain(conds: list[exp.Expression]) -> exp.Expression:
    """`c1 AND c2 AND …`, left-deep, without parentheses around its parts."""
    out = conds[0]
    for cond in conds[1:]:
        out = exp.And(this=out, expression=cond)
    return out
