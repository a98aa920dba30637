"""Membership tests that are not conjuncts of WHERE -> LEFT JOIN flags.

A conjunct of WHERE (`x IN (SELECT …) AND …`, `EXISTS (…) AND …`) is a
semijoin (`unnest_subqueries`). Anywhere else — under an OR, under NOT, in
a CASE condition, as a value in the SELECT list — it cannot be, and
becomes a LEFT JOIN with a flag instead:

- `EXISTS (SELECT … WHERE inner = outer AND …)`, correlated by equalities
  only: a LEFT JOIN with the distinct correlation keys of the subquery's
  rows, each with a flag; the test is `flag IS NOT NULL`. EXISTS is never
  NULL, so this is its value in any place (a NULL outer key meets no key:
  FALSE, as `inner = NULL` never holds). Uncorrelated, it becomes
  `(SELECT COUNT(*) FROM (…)) > 0`, which `scalar_items` joins.
- `x IN (SELECT y … WHERE <correlated>)`: `EXISTS (… AND y = x)` as above,
  and where NULL differs from FALSE the EXISTS of the subquery's rows and
  of its NULL values too.
- `x IN (SELECT y …)`, uncorrelated: a LEFT JOIN with the distinct values
  of the subquery, and `flag IS NOT NULL`. In a positive place (under AND
  and OR only, up to WHERE or a CASE condition) NULL and FALSE both fail,
  so that is all; elsewhere (the SELECT list, under NOT) SQL's NULL, where
  x is NULL or a value is, comes from two counts of the subquery's rows.

A row of the outer query meets at most one distinct key, so no row is
repeated. In a grouped query, a test outside aggregates must read GROUP BY
keys only and reads `MAX(flag)` (one value per group). An OR of EXISTS that
`unnest_subqueries` turns into one IN over a UNION ALL is left to it. Runs
after `qualify_names` (columns carry their tables) and before
`scalar_items` and `outer_joins`, which maintain what this makes.

>>> import sqlglot
>>> from dynyan.compiler.frontend.context import Context
>>> tree = sqlglot.parse_one(
...     "SELECT r.a AS a FROM r AS r WHERE r.a IN (SELECT s.c AS c FROM s AS s) OR r.a > 5",
...     read="duckdb")
>>> print(membership_flags(tree, Context({})).sql("duckdb"))
SELECT r.a AS a FROM r AS r LEFT JOIN (SELECT DISTINCT __s1.c AS __k, 1 AS __in FROM (SELECT s.c AS c FROM s AS s) AS __s1) AS __in1 ON r.a = __in1.__k WHERE NOT __in1.__in IS NULL OR r.a > 5
>>> tree = sqlglot.parse_one(
...     "SELECT r.a AS a, EXISTS (SELECT 1 FROM s AS s WHERE s.b = r.b AND s.c > 0) AS e FROM r AS r",
...     read="duckdb")
>>> print(membership_flags(tree, Context({})).sql("duckdb"))
SELECT r.a AS a, NOT __in1.__in IS NULL AS e FROM r AS r LEFT JOIN (SELECT DISTINCT s.b AS __k1, 1 AS __in FROM s AS s WHERE s.c > 0) AS __in1 ON __in1.__k1 = r.b
"""

from __future__ import annotations

from sqlglot import exp

from ..context import Context
from .unnest_subqueries import column_equality, exists_side, split_correlation


def membership_flags(tree: exp.Expression, ctx: Context) -> exp.Expression:
    count = 0
    for select in list(tree.find_all(exp.Select)):
        work = list(select.find_all(exp.In, exp.Exists))
        while work:
            node = work.pop(0)
            if node.parent_select is not select or _conjunct_of_where(node, select):
                continue
            if not _in_items_or_where(node, select):
                continue  # ON, GROUP BY, ORDER BY: refused later
            tests = _correlated_in(select, node)
            if tests is not None:  # EXISTS tests in its place, taken in turn
                node.replace(tests)
                work[:0] = list(tests.find_all(exp.Exists))
                continue
            if isinstance(node, exp.Exists):
                made = _exists_flag(select, node, count + 1)
            else:
                made = _in_flag(select, node, count + 1)
            if made is None:
                continue  # refused later, by unnest_subqueries
            join, flag = made
            count += 1
            select.append("joins", join)
            if _outside_aggregates(node, select) and _grouped(select):
                flag = exp.Max(this=flag)  # one value in every group
            found = exp.Not(this=exp.Is(this=flag, expression=exp.Null()))
            if isinstance(node, exp.In) and not _positive(node, select):
                found = _in_value(node, found, count)
            node.replace(found)
    return tree


def _exists_flag(select: exp.Select, node: exp.Exists, n: int):
    """(the LEFT JOIN, its flag column) for a correlated EXISTS, or None;
    an uncorrelated one becomes a COUNT(*) subquery in place (None)."""
    inner = node.this
    if not isinstance(inner, exp.Select) or _under_exists_union(node, select):
        return None
    if not correlated(inner):
        global_aggregate = _grouped(select) and select.args.get("group") is None
        if not (global_aggregate and _outside_aggregates(node, select)):
            count = exp.select(exp.Count(this=exp.Star())).from_(
                inner.copy().subquery(f"__e{n}")
            )
            node.replace(
                exp.GT(this=exp.Subquery(this=count), expression=exp.Literal.number(0))
            )
        return None  # a global aggregate keeps its row over no input: not joined
    if any(inner.args.get(a) for a in ("group", "having", "limit", "offset")):
        return None
    if any(a.parent_select is inner for a in inner.find_all(exp.AggFunc)):
        return None
    keep, conds, is_inner = split_correlation(inner)
    pairs = [column_equality(c, is_inner) for c in conds]
    if not pairs or None in pairs or not own_columns(select, [o for _, o in pairs]):
        return None
    if _outside_aggregates(node, select) and not _group_keys_only(
        select, [o for _, o in pairs]
    ):
        return None
    alias = f"__in{n}"
    flag = exp.alias_(exp.Literal.number(1), "__in")
    join = correlated_left_join(inner, keep, pairs, alias, "__k", [flag], "distinct")
    if join is None:
        return None
    return join, exp.column("__in", table=alias)


def _in_flag(select: exp.Select, node: exp.In, n: int):
    """(the LEFT JOIN, its flag column) for an uncorrelated `x IN (SELECT
    y …)` in a positive place, or None."""
    query = node.args.get("query")
    columns = list(node.this.find_all(exp.Column))
    if (
        query is None
        or not columns
        or node.this.find(exp.Query, exp.AggFunc, exp.Window, exp.Tuple) is not None
    ):
        return None  # a value of this row's columns (`x`, `x + 1`)
    inner = query.this if isinstance(query, exp.Subquery) else query
    name = _single_output(inner)
    if name is None or correlated(inner) or not own_columns(select, columns):
        return None
    if _outside_aggregates(node, select) and not _group_keys_only(select, columns):
        return None
    alias, source = f"__in{n}", f"__s{n}"
    values = (
        exp.select(
            exp.alias_(exp.column(name, table=source), "__k"),
            exp.alias_(exp.Literal.number(1), "__in"),
        )
        .distinct()
        .from_(inner.subquery(source))
    )
    join = exp.Join(
        this=values.subquery(alias, copy=False),
        side="LEFT",
        on=exp.EQ(this=node.this.copy(), expression=exp.column("__k", table=alias)),
    )
    return join, exp.column("__in", table=alias)


def _correlated_in(select: exp.Select, node: exp.Expression):
    """`x IN (SELECT y FROM … WHERE <correlated>)` outside the conjuncts of
    WHERE as EXISTS tests, or None: `EXISTS (… AND y = x)` in a positive
    place; elsewhere TRUE if that, else NULL if x is NULL and the subquery
    has rows or a y is NULL (`EXISTS (… AND y IS NULL)`), else FALSE."""
    query = node.args.get("query") if isinstance(node, exp.In) else None
    if query is None or not isinstance(node.this, exp.Column):
        return None
    inner = query.this if isinstance(query, exp.Subquery) else query
    if not isinstance(inner, exp.Select) or not correlated(inner):
        return None
    if len(inner.expressions) != 1 or any(
        inner.args.get(a) for a in ("group", "having", "limit", "offset")
    ):
        return None
    value = inner.expressions[0].unalias()
    if not isinstance(value, exp.Column) or inner.find(exp.AggFunc, exp.Window):
        return None

    def exists(condition: exp.Expression | None) -> exp.Exists:
        body = inner.copy()
        body.set("expressions", [exp.Literal.number(1)])
        body.set("distinct", None)
        if condition is not None:
            body = body.where(condition, copy=False)
        return exp.Exists(this=body)

    found = exists(exp.EQ(this=value.copy(), expression=node.this.copy()))
    if _positive(node, select):
        return found
    unknown = exp.or_(
        exp.and_(exp.Is(this=node.this.copy(), expression=exp.Null()), exists(None)),
        exists(exp.Is(this=value.copy(), expression=exp.Null())),
    )
    return _three_valued(found, unknown)


def _in_value(node: exp.In, found: exp.Expression, n: int) -> exp.Expression:
    """`x IN (SELECT y …)` with SQL's NULL where FALSE and NULL differ (the
    SELECT list, under NOT): TRUE if `found`; else NULL if x is NULL over a
    subquery with rows, or if a y is NULL; else FALSE."""
    query = node.args["query"]
    inner = query.this if isinstance(query, exp.Subquery) else query
    name = _single_output(inner)

    def rows(where: exp.Expression | None = None) -> exp.Expression:
        count = exp.select(exp.Count(this=exp.Star())).from_(
            inner.copy().subquery(f"__n{n}")
        )
        if where is not None:
            count = count.where(where)
        return exp.GT(this=exp.Subquery(this=count), expression=exp.Literal.number(0))

    unknown = exp.or_(
        exp.and_(exp.Is(this=node.this.copy(), expression=exp.Null()), rows()),
        rows(exp.Is(this=exp.column(name, table=f"__n{n}"), expression=exp.Null())),
    )
    return _three_valued(found, unknown)


def _three_valued(found: exp.Expression, unknown: exp.Expression) -> exp.Case:
    """IN's value: TRUE where `found`, else NULL where `unknown`, else FALSE."""
    return (
        exp.Case().when(found, exp.true()).when(unknown, exp.null()).else_(exp.false())
    )


def _conjunct_of_where(node: exp.Expression, select: exp.Select) -> bool:
    """`node` (or NOT `node`) reached from WHERE through ANDs only: a
    semijoin or an anti-join, `unnest_subqueries`' to make."""
    where = select.args.get("where")
    up = node.parent
    if isinstance(up, exp.Not):
        up = up.parent
    while isinstance(up, (exp.And, exp.Paren)):
        up = up.parent
    return where is not None and up is where


def _in_items_or_where(node: exp.Expression, select: exp.Select) -> bool:
    up = node
    while up.parent is not select:
        up = up.parent
    return up is select.args.get("where") or up in select.expressions


def _positive(node: exp.Expression, select: exp.Select) -> bool:
    """Under AND, OR and parentheses only, up to WHERE or a CASE
    condition: where NULL and FALSE both fail."""
    child, up = node, node.parent
    while isinstance(up, (exp.And, exp.Or, exp.Paren)):
        child, up = up, up.parent
    if up is select.args.get("where"):
        return True
    return isinstance(up, exp.If) and up.this is child


def _under_exists_union(node: exp.Exists, select: exp.Select) -> bool:
    """Whether `node` is a term of an OR of EXISTS, a conjunct of WHERE,
    each correlated by one equality with the same outer column (TPC-DS
    Q10, Q35): `unnest_subqueries` makes it one IN over a UNION ALL."""
    top = node
    while isinstance(top.parent, (exp.Or, exp.Paren)):
        top = top.parent
    if top is node or not _conjunct_of_where(top, select):
        return False
    ors = top.unnest()
    if not isinstance(ors, exp.Or):
        return False
    outers = set()
    for term in ors.flatten():
        found = exists_side(term.unnest())
        if found is None:
            return False
        outers.add(found[1].sql())
    return len(outers) == 1


def _outside_aggregates(node: exp.Expression, select: exp.Select) -> bool:
    """Read per group, not per row: neither in WHERE nor in an aggregate."""
    return (
        node.find_ancestor(exp.AggFunc, exp.Select) is select
        and node.find_ancestor(exp.Where, exp.Select) is select
    )


def _grouped(select: exp.Select) -> bool:
    return select.args.get("group") is not None or any(
        a.parent_select is select for a in select.find_all(exp.AggFunc)
    )


def _group_keys_only(select: exp.Select, columns) -> bool:
    """Outside aggregates of a grouped query only GROUP BY keys are read."""
    if not _grouped(select):
        return True
    group = select.args.get("group")
    keys = {e.sql() for e in group.expressions} if group is not None else set()
    return all(c.sql() in keys for c in columns)


def own_columns(select: exp.Select, columns) -> bool:
    """Whether `columns` are of this SELECT's own tables (not of an
    enclosing query's, which a join here cannot read)."""
    own = {
        (s.alias_or_name or "").lower()
        for s in select.find_all(exp.Table, exp.Subquery)
        if s.parent_select is select
    }
    return all(c.table.lower() in own for c in columns)


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


def correlated_left_join(
    inner: exp.Select,
    keep: list[exp.Expression],
    pairs: list[tuple[exp.Column, exp.Column]],
    alias: str,
    prefix: str,
    items: list[exp.Expression],
    once: str,
) -> exp.Join | None:
    """`LEFT JOIN (SELECT the inner columns AS <prefix>1…, items FROM … WHERE
    keep, once per key) AS alias ON <prefix>j = outer column …` for a
    subquery correlated by the `(inner, outer)` column equalities `pairs`
    (`once`: "distinct", its rows; "group", grouped by the keys). None when
    the outer query is read elsewhere in it (a join's ON, a nested query)."""
    body = inner.copy()
    body.set(
        "where", exp.Where(this=exp.and_(*[c.copy() for c in keep])) if keep else None
    )
    body.set(
        "expressions",
        [exp.alias_(i.copy(), f"{prefix}{j}") for j, (i, _) in enumerate(pairs, 1)]
        + items,
    )
    if once == "group":
        body.set("group", exp.Group(expressions=[i.copy() for i, _ in pairs]))
    else:
        body.set("distinct", exp.Distinct())
    if correlated(body):
        return None
    on = exp.and_(
        *[
            exp.EQ(this=exp.column(f"{prefix}{j}", table=alias), expression=o.copy())
            for j, (_, o) in enumerate(pairs, 1)
        ]
    )
    return exp.Join(this=body.subquery(alias, copy=False), side="LEFT", on=on)


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
