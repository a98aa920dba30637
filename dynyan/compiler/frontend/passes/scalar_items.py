"""A scalar subquery in the SELECT list (or in WHERE, where it is not a
side of a comparison that is a conjunct) -> a join with it.

`SELECT x / (SELECT SUM(y) FROM s) FROM r`: an aggregate without GROUP BY
has exactly one row (also over no rows), so the subquery becomes a derived
table of one row joined to every row, and the item reads its column:

    SELECT x / __scalar1.v FROM r CROSS JOIN (SELECT SUM(y) AS v FROM s) AS __scalar1

In a query with GROUP BY an item outside aggregates reads `MAX(v)`: every
row of a group has the same `v`.

Correlated by equalities (`(SELECT COUNT(*) FROM s WHERE s.b = r.b)`), the
subquery is the aggregate grouped by its side of them, LEFT JOINed on them:
every outer row meets at most one group, and a row whose key no row of `s`
has (or is NULL) meets none, where the subquery's aggregate is over no
rows: NULL, or 0 for a COUNT:

    SELECT COALESCE(__scalar1.v, 0) FROM r
    LEFT JOIN (SELECT s.b AS k1, COUNT(*) AS v FROM s GROUP BY s.b) AS __scalar1
      ON __scalar1.k1 = r.b

A value over several aggregates (`MAX(s.t) - MIN(s.t)`, `SUM(x) / COUNT(*)`)
joins each as a column (`v`, `v2`, …) and reads the expression over them:
over no rows each is what it is there, so the expression is too.

A SELECT without FROM (`SELECT (SELECT COUNT(*) FROM r), (SELECT
MAX(b) FROM s)`, a dashboard's row of figures) reads its first such
subquery as FROM and joins the others.

In WHERE the same joins serve a subquery under OR, in a CASE or in
arithmetic with columns (`WHERE x > (SELECT AVG(y) FROM s) OR …`); one
compared in a conjunct of WHERE is left to `unnest_subqueries`, which
keeps it as a test that re-checks only the rows a change can flip.

Not taken (the query is refused later, saying what is supported): a
subquery that is not one column over aggregates, one correlated other than by
`inner column = outer column` conjuncts of its WHERE or with a table of an
enclosing query, a correlated value outside aggregates of a grouped query
whose outer columns are not GROUP BY keys, and an uncorrelated one read
outside aggregates of a query that aggregates without GROUP BY and has
window functions. Without them, such a query (which has its one row also
over no input, a row a join with it would lose) first computes its
aggregates in a derived table of their own (`_aggregates_apart`), a row
the join keeps. Runs after `qualify_names` (columns carry their tables).

>>> import sqlglot
>>> from dynyan.compiler.frontend.context import Context
>>> tree = sqlglot.parse_one(
...     "SELECT r.a / (SELECT SUM(s.c) AS t FROM s AS s) AS share FROM r AS r",
...     read="duckdb")
>>> print(scalar_items(tree, Context({})).sql("duckdb"))
SELECT r.a / __scalar1.v AS share FROM r AS r CROSS JOIN (SELECT SUM(s.c) AS v FROM s AS s) AS __scalar1
>>> tree = sqlglot.parse_one(
...     "SELECT r.a, (SELECT COUNT(*) FROM s AS s WHERE s.b = r.b AND s.c > 0) AS n FROM r AS r",
...     read="duckdb")
>>> print(scalar_items(tree, Context({})).sql("duckdb"))
SELECT r.a, COALESCE(__scalar1.v, 0) AS n FROM r AS r LEFT JOIN (SELECT s.b AS k1, COUNT(*) AS v FROM s AS s WHERE s.c > 0 GROUP BY s.b) AS __scalar1 ON __scalar1.k1 = r.b
"""

from __future__ import annotations

from sqlglot import exp

from ..context import Context
from .membership_flags import correlated, correlated_left_join, own_columns
from .unnest_subqueries import column_equality, split_correlation


def scalar_items(tree: exp.Expression, ctx: Context) -> exp.Expression:
    count = 0
    selects = list(tree.find_all(exp.Select))
    for select in selects:
        body = _aggregates_apart(select)
        if body is not None:  # its WHERE's subqueries: read per row there
            selects.append(body)
        group = select.args.get("group")
        aggregates = any(
            a.parent_select is select for a in select.find_all(exp.AggFunc)
        )
        grouped = aggregates or group is not None
        where = select.args.get("where")
        made = {}  # one join per distinct subquery (an expanded REGR_* repeats one)
        for node in _scalar_subqueries(select):
            inner = node.this
            if not _one_value(inner):
                continue
            in_where = where is not None and node.find_ancestor(exp.Where) is where
            if in_where and _left_to_unnest(node, where):
                continue
            # read per row (in WHERE or an aggregate), not per group
            per_row = in_where or (
                node.find_ancestor(exp.AggFunc, exp.Select) is not select
            )
            by_row = correlated(inner)
            keys = _group_keys(select) if grouped and not per_row else None
            if not by_row and aggregates and group is None and not per_row:
                continue  # a global aggregate keeps its row over no input
            same = (inner.sql(), by_row, None if keys is None else tuple(sorted(keys)))
            alias = made.get(same)
            if alias is None:
                alias = f"__scalar{count + 1}"
                if by_row:
                    join = _correlated_join(select, inner, alias, keys)
                else:
                    body = inner.copy()
                    body.set(
                        "expressions",
                        [exp.alias_(body.expressions[0].unalias(), "v")],
                    )
                    join = exp.Join(this=body.subquery(alias, copy=False), kind="CROSS")
                if join is None:
                    continue
                count += 1
                made[same] = alias
                if select.args.get("from_") is None:  # SELECT (SELECT …), …
                    select.set("from_", exp.From(this=join.this))
                else:
                    select.append("joins", join)
            once = grouped and not per_row  # MAX(v): one value in every group
            if by_row:
                node.replace(_grouped_value(inner, alias, once))
            else:
                column = exp.column("v", table=alias)
                node.replace(exp.Max(this=column) if once else column)
    return tree


def _aggregates_apart(select: exp.Select) -> exp.Select | None:
    """A query that aggregates without GROUP BY and reads an uncorrelated
    subquery outside its aggregates (`SELECT COUNT(*) * 1.0 / (SELECT
    COUNT(*) FROM u) FROM e`): its aggregates first become the columns of a
    derived table of their own, which has one row also over no input, and
    the query reads them there (HAVING becoming its WHERE), so that the
    subquery's join, of one row too, keeps that row. Returns that derived
    table's SELECT, None where nothing changed."""
    if select.args.get("group") is not None or select.args.get("from_") is None:
        return None
    if select.args.get("qualify") is not None or any(
        w.parent_select is select for w in select.find_all(exp.Window)
    ):
        return None
    own = [a for a in select.find_all(exp.AggFunc) if _outermost(a, select)]
    outside = [  # (in WHERE or an aggregate: read per row, a join of each row)
        n
        for n in _scalar_subqueries(select)
        if _one_value(n.this)
        and n.find_ancestor(exp.AggFunc, exp.Select) is select
        and n.find_ancestor(exp.Where) is None
    ]
    if not own or not outside or any(correlated(n.this) for n in outside):
        return None
    body = exp.Select()
    for arg in ("from_", "joins", "where"):
        body.set(arg, select.args.get(arg))
        select.set(arg, None)
    names = {}
    for agg in own:
        node = agg.parent if isinstance(agg.parent, _AGGREGATE_WRAPPERS) else agg
        name = names.get(node.sql())
        if name is None:
            name = names[node.sql()] = f"__a{len(names) + 1}"
            body.append("expressions", exp.alias_(node.copy(), name))
        node.replace(exp.column(name, table="__aggregates"))
    select.set("from_", exp.From(this=body.subquery("__aggregates", copy=False)))
    having = select.args.get("having")
    if having is not None:
        select.set("having", None)
        select.set("where", exp.Where(this=having.this))
    return body


# what an aggregate's own clauses wrap it in (FILTER, WITHIN GROUP)
_AGGREGATE_WRAPPERS = (exp.Filter, exp.WithinGroup)


def _outermost(agg: exp.AggFunc, select: exp.Select) -> bool:
    """Whether `agg` is an aggregate of `select` itself, not of a subquery
    or inside another aggregate."""
    return agg.parent_select is select and (
        agg.find_ancestor(exp.AggFunc, exp.Select) is select
    )


def _aggregates(value: exp.Expression) -> list[exp.AggFunc]:
    """The distinct aggregates a correlated subquery's value computes, in
    order: the columns `v`, `v2`, … of its join."""
    found = {}
    for agg in value.find_all(exp.AggFunc):
        if not isinstance(agg.find_ancestor(exp.AggFunc, exp.Select), exp.AggFunc):
            found.setdefault(agg.sql(), agg)
    return list(found.values())


def _grouped_value(inner: exp.Select, alias: str, once: bool) -> exp.Expression:
    """The value of a correlated subquery read from its join: each
    aggregate its column (0 for a COUNT where no row of the key meets it,
    as over no rows), in the expression over them."""
    names = {}
    for i, agg in enumerate(_aggregates(inner.expressions[0].unalias()), 1):
        column = exp.column("v" if i == 1 else f"v{i}", table=alias)
        if isinstance(agg, exp.Count):
            column = exp.Coalesce(this=column, expressions=[exp.Literal.number(0)])
        names[agg.sql()] = exp.Max(this=column) if once else column

    def read(e: exp.Expression) -> exp.Expression:
        return names[e.sql()].copy() if isinstance(e, exp.AggFunc) else e

    return inner.expressions[0].unalias().copy().transform(read)


def _scalar_subqueries(select: exp.Select):
    """This SELECT's subqueries in its SELECT list and its WHERE."""
    where = select.args.get("where")
    for part in [*select.expressions, *([where] if where is not None else [])]:
        for node in list(part.find_all(exp.Subquery)):
            if node.parent_select is select:
                yield node


_ARITHMETIC = (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Neg)
_COMPARISONS = (exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT, exp.GTE)


def _left_to_unnest(node: exp.Subquery, where: exp.Where) -> bool:
    """Whether `node` is a side of a comparison that is a conjunct of
    WHERE (through parentheses and arithmetic with constants), which
    `unnest_subqueries` keeps as a test on the outer rows instead of a
    join."""
    top = node
    while isinstance(top.parent, (exp.Paren, *_ARITHMETIC)):
        others = [c for c in top.parent.iter_expressions() if c is not top]
        if any(o.find(exp.Column, exp.Subquery, exp.Select) for o in others):
            return False
        top = top.parent
    anchor = top.parent
    if not isinstance(anchor, _COMPARISONS):
        return False
    other = anchor.expression if anchor.this is top else anchor.this
    if other.find(exp.Subquery, exp.Select) is not None:
        return False
    up = anchor.parent
    while isinstance(up, (exp.And, exp.Paren)):
        up = up.parent
    return up is where


def _one_value(inner: exp.Expression) -> bool:
    """A SELECT of one aggregate column without GROUP BY: one row, always."""
    return (
        isinstance(inner, exp.Select)
        and len(inner.expressions) == 1
        and inner.args.get("group") is None
        and inner.expressions[0].find(exp.AggFunc) is not None
        and not any(inner.args.get(a) for a in ("limit", "offset", "having"))
    )


def _group_keys(select: exp.Select) -> set[str]:
    """The GROUP BY keys of `select` as SQL text (none: a global aggregate)."""
    group = select.args.get("group")
    return {e.sql() for e in group.expressions} if group is not None else set()


def _correlated_join(
    select: exp.Select, inner: exp.Select, alias: str, keys: set[str] | None
) -> exp.Join | None:
    """`LEFT JOIN (the aggregate grouped by the inner columns of the
    correlation) AS alias ON k = outer column …`, or None when the subquery
    is not taken (see the module's docstring); `keys`: the GROUP BY keys the
    outer columns must be, for a value read outside aggregates of a grouped
    query."""
    value = inner.expressions[0].unalias()
    if value.find(exp.Window, exp.Subquery, exp.Select) or any(
        isinstance(c.find_ancestor(exp.AggFunc, exp.Select), exp.Select)
        for c in value.find_all(exp.Column)
    ):
        return None  # arithmetic over aggregates and constants only
    keep, conds, is_inner = split_correlation(inner)
    pairs = [column_equality(c, is_inner) for c in conds]
    if not pairs or None in pairs:
        return None
    if not own_columns(select, [outer for _, outer in pairs]):
        return None  # a table of an enclosing query
    if keys is not None and any(outer.sql() not in keys for _, outer in pairs):
        return None  # not one value per group
    items = [
        exp.alias_(agg.copy(), "v" if i == 1 else f"v{i}")
        for i, agg in enumerate(_aggregates(value), 1)
    ]
    return correlated_left_join(inner, keep, pairs, alias, "k", items, "group")
