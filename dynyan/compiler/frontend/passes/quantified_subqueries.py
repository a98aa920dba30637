"""`x op ANY (subquery)` and `x op ALL (subquery)` as [NOT] EXISTS.

A list written out, `x op ANY (ARRAY[v, …])` (PostgreSQL's spelling) or
`x op ALL ([v, …])`, is first the OR (the AND) of `x op v` over its values.

In a conjunct of WHERE (where NULL and FALSE both drop the row):

- `x op ANY (SELECT y FROM … WHERE w)` holds when some row has `x op y`:
  `EXISTS (SELECT 1 FROM … WHERE w AND x op y)` (`SOME` is `ANY`);
- `x op ALL (SELECT y …)` holds when no row has `x op y` FALSE or NULL:
  `NOT EXISTS (SELECT 1 FROM … WHERE w AND (NOT x op y OR x IS NULL OR y IS
  NULL))` (TRUE over an empty subquery, as SQL says).

A subquery that groups, aggregates, is DISTINCT or a set operation becomes a
derived table first (`FROM (subquery) AS __qN`). Runs after `qualify_names`,
so the outer `x` keeps its table's alias inside the subquery.

Elsewhere (under OR or NOT, in the SELECT list, where NULL and FALSE
differ) the value is SQL's three-valued one, from scalar subqueries: `= ANY`
is `IN` and `<> ALL` is `NOT IN` (`membership_flags` gives their NULLs);
for an order, `x > ANY (…)` is TRUE where `x > MIN(y)`, `x > ALL (…)` FALSE
where `NOT x > MAX(y)`; over no rows ANY is FALSE and ALL TRUE; otherwise
NULL where x is NULL or a y is (`COUNT(*) > COUNT(y)`), else ALL's TRUE or
ANY's FALSE. A row of values `(a, b) = ANY (SELECT x, y …)` is `IN`
everywhere (no other comparison of a row is read). `x IN (SELECT MAX(y)
…)`, a subquery of one aggregate without GROUP BY (one row, always), is the
comparison `x = (SELECT MAX(y) …)`, and so is `x op ANY/ALL` of it anywhere.

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

from ..context import SWAPPED, Context, from_aliases, reads_outer, sql_conjuncts
from ..diagnostics import unsupported
from .unnest_subqueries import aggregate_exists_value

_COMPARISONS = (exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT, exp.GTE)


def quantified_subqueries(tree: exp.Expression, ctx: Context) -> exp.Expression:
    for node in list(tree.find_all(*_COMPARISONS)):
        listed = _listed(node.expression)
        if listed is not None:
            node.replace(_over_values(node, *listed))
    for node in list(tree.find_all(exp.In)):
        query = node.args.get("query")
        inner = query.this if isinstance(query, exp.Subquery) else query
        if _one_row(inner) and not isinstance(node.this, exp.Tuple):
            node.replace(exp.EQ(this=node.this, expression=exp.Subquery(this=inner)))
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
        made += 1
        query = node.this.this if isinstance(node.this, exp.Subquery) else node.this
        every = isinstance(node, exp.All)
        if isinstance(comparison.this, exp.Tuple):  # (a, b) = ANY (SELECT a, b …)
            if not _membership(comparison, every):
                raise unsupported(
                    "a row of values is compared with ANY/ALL only by = ANY "
                    "(that is IN) and <> ALL (NOT IN)",
                    comparison,
                )
            comparison.replace(_in(comparison.this, query, comparison))
        elif _one_row(query):  # ANY and ALL of one value: the comparison
            node.replace(exp.Subquery(this=query))
        elif _conjunct_of_where(comparison):
            comparison.replace(_exists(comparison, query, every, made))
        else:
            comparison.replace(_value(comparison, query, every, made))
    for node in list(tree.find_all(exp.Exists)):
        test = node.parent if isinstance(node.parent, exp.Not) else node
        if not _conjunct_of_where(test):
            counted = aggregate_exists_value(node)
            if counted is not None:
                node.replace(counted)
                continue
            banded = _banded_exists(node)
            if banded is not None:
                node.replace(banded)
    return tree


def _listed(right: exp.Expression) -> tuple[list, bool] | None:
    """(values, ALL?) of `ANY (ARRAY[v, …])`, `ALL ([v, …])`, `SOME (…)`: a
    list written out; None for anything else (a subquery)."""
    if isinstance(right, (exp.Any, exp.All)):
        values, every = right.this, isinstance(right, exp.All)
    elif isinstance(right, exp.Anonymous) and right.name.upper() in (
        "ANY",
        "SOME",
        "ALL",
    ):
        if len(right.expressions) != 1:
            return None
        values, every = right.expressions[0], right.name.upper() == "ALL"
    else:
        return None
    while isinstance(values, exp.Paren):
        values = values.this
    if not isinstance(values, exp.Array) or any(
        isinstance(v, exp.Query) for v in values.expressions
    ):
        return None
    return values.expressions, every


def _over_values(comparison: exp.Expression, values: list, every: bool):
    """`x op ANY ([v1, v2])` is `(x op v1 OR x op v2)` and `x op ALL (…)`
    `(x op v1 AND x op v2)`, in SQL's three values as DuckDB's (NULL where
    no v decides and one is NULL); over no values FALSE and TRUE."""
    parts = [
        comparison.__class__(this=comparison.this.copy(), expression=v.copy())
        for v in values
    ]
    if not parts:
        return exp.Boolean(this=every)
    return exp.Paren(this=(exp.and_ if every else exp.or_)(*parts))


def _one_row(select) -> bool:
    """A SELECT of one aggregate value without GROUP BY: exactly one row, so
    `x IN (it)` is `x = (it)` (and NOT IN `<>`) in SQL's three values too."""
    if not isinstance(select, exp.Select) or len(select.expressions) != 1:
        return False
    if any(
        select.args.get(k)
        for k in ("group", "having", "qualify", "limit", "offset", "distinct")
    ):
        return False
    return any(
        a.find_ancestor(exp.Select) is select and not isinstance(a.parent, exp.Window)
        for a in select.expressions[0].find_all(exp.AggFunc)
    )


def _banded_exists(node: exp.Exists) -> exp.Expression | None:
    """`EXISTS (SELECT … WHERE w AND x op y)` where NULL and FALSE differ, x
    of the outer query and y of the subquery, w at most correlated by
    equalities: `x op ANY (SELECT y … WHERE w)` with NULL as FALSE, i.e.
    `COALESCE(x > (SELECT MIN(y) … WHERE w), FALSE)` (a LEFT JOIN flag
    cannot hold an inequality). None where the subquery is not that."""
    select = node.this
    if not isinstance(select, exp.Select) or _needs_derived(select):
        return None
    if any(select.args.get(k) for k in ("limit", "offset", "order", "qualify")):
        return None
    where = select.args.get("where")
    if where is None or where.find(exp.Select) is not None:
        return None
    inner = from_aliases(select)

    def outer(e: exp.Expression) -> bool:
        return any(c.table.lower() not in inner for c in e.find_all(exp.Column))

    def local(e: exp.Expression) -> bool:
        return all(c.table.lower() in inner for c in e.find_all(exp.Column))

    bands, rest = [], []
    for c in sql_conjuncts(where.this):
        if not outer(c):
            rest.append(c)
        elif isinstance(c, exp.EQ):
            rest.append(c)  # an equality: a correlated scalar subquery's key
        elif isinstance(c, tuple(_FLIPPED)) and (local(c.this) or local(c.expression)):
            bands.append(c)
        else:
            return None
    if len(bands) != 1:
        return None
    band = bands[0]
    if local(band.this):  # y op x -> x op' y
        band = _FLIPPED[type(band)](this=band.expression, expression=band.this)
    x, y = band.this, band.expression
    if (
        not local(y)
        or x.find(exp.Column) is None
        or any(local(c) for c in x.find_all(exp.Column))
    ):
        return None
    rows = select.copy()
    rows.set("where", exp.Where(this=exp.and_(*rest)) if rest else None)

    def scalar(aggregate) -> exp.Subquery:
        one = rows.copy()
        one.set("expressions", [aggregate(this=y.copy())])
        return exp.Subquery(this=one)

    if isinstance(band, exp.NEQ):
        test = exp.or_(
            exp.NEQ(this=x.copy(), expression=scalar(exp.Min)),
            exp.NEQ(this=x.copy(), expression=scalar(exp.Max)),
        )
    else:
        test = type(band)(this=x.copy(), expression=scalar(_ANY_BOUND[type(band)]))
    return exp.Paren(this=exp.Coalesce(this=test, expressions=[exp.false()]))


# `y op x` is `x op' y`, for the comparisons a band can be
_FLIPPED = {**SWAPPED, exp.NEQ: exp.NEQ}


# the aggregate of y that decides `x op ANY` (TRUE) and `x op ALL` (FALSE)
_ANY_BOUND = {exp.GT: exp.Min, exp.GTE: exp.Min, exp.LT: exp.Max, exp.LTE: exp.Max}
_ALL_BOUND = {exp.GT: exp.Max, exp.GTE: exp.Max, exp.LT: exp.Min, exp.LTE: exp.Min}


def _value(comparison, query: exp.Expression, every: bool, n: int):
    """`x op ANY/ALL (subquery)` where NULL and FALSE differ (see above)."""
    op = type(comparison)
    x = comparison.this
    if _membership(comparison, every):
        return _in(x, query, comparison)
    base, value = _rows(query, n)

    def scalar(aggregate: exp.Expression) -> exp.Subquery:
        select = base.copy()
        select.set("expressions", [aggregate])
        return exp.Subquery(this=select)

    if op in (exp.EQ, exp.NEQ):  # = ALL, <> ANY: is some y other than x?
        decided = exp.or_(
            exp.NEQ(this=x.copy(), expression=scalar(exp.Min(this=value.copy()))),
            exp.NEQ(this=x.copy(), expression=scalar(exp.Max(this=value.copy()))),
        )
    elif every:
        bound = scalar(_ALL_BOUND[op](this=value.copy()))
        decided = exp.Not(this=exp.Paren(this=op(this=x.copy(), expression=bound)))
    else:
        decided = op(
            this=x.copy(), expression=scalar(_ANY_BOUND[op](this=value.copy()))
        )
    rows = scalar(exp.Count(this=exp.Star()))
    unknown = exp.or_(
        exp.Is(this=x.copy(), expression=exp.Null()),
        exp.GT(this=rows.copy(), expression=scalar(exp.Count(this=value.copy()))),
    )
    empty, otherwise = (exp.true(), exp.true()) if every else (exp.false(), exp.false())
    return exp.Paren(
        this=exp.Case()
        .when(exp.EQ(this=rows, expression=exp.Literal.number(0)), empty)
        .when(decided, exp.false() if every else exp.true())
        .when(unknown, exp.null())
        .else_(otherwise)
    )


def _membership(comparison, every: bool) -> bool:
    """`= ANY` is `IN` and `<> ALL` is `NOT IN`, by SQL's definition."""
    return isinstance(comparison, exp.NEQ if every else exp.EQ)


def _in(x: exp.Expression, query: exp.Expression, comparison) -> exp.Expression:
    member = exp.In(this=x.copy(), query=exp.Subquery(this=query.copy()))
    if isinstance(comparison, exp.EQ):
        return member
    return exp.Not(this=member)


def _rows(query: exp.Expression, n: int) -> tuple[exp.Select, exp.Expression]:
    """The subquery's rows as a SELECT to put aggregates in, and its value."""
    if not isinstance(query, (exp.Select, exp.SetOperation)) or (
        len(query.named_selects) != 1
    ):
        raise unsupported("ANY/ALL needs a subquery of one column", query)
    inner = query.copy()
    if isinstance(inner, exp.SetOperation) or _needs_derived(inner):
        if isinstance(inner, exp.Select) and reads_outer(inner):
            raise unsupported(
                "ANY/ALL over a correlated subquery that groups, aggregates or "
                "is DISTINCT is not supported (one aggregate without GROUP BY "
                "is: the comparison with it)",
                query,
            )
        alias = f"__q{n}"
        name = inner.named_selects[0]
        base = exp.select("1").from_(
            exp.Subquery(
                this=inner, alias=exp.TableAlias(this=exp.to_identifier(alias))
            )
        )
        return base, exp.column(name, table=alias)
    item = inner.expressions[0]
    return inner, item.this.copy() if isinstance(item, exp.Alias) else item.copy()


def _exists(comparison, query: exp.Expression, every: bool, n: int):
    inner, value = _rows(query, n)
    x = comparison.this.copy()
    test = type(comparison)(this=x, expression=value)
    if every:
        test = exp.or_(
            exp.Not(this=exp.Paren(this=test)),
            exp.Is(this=x.copy(), expression=exp.Null()),
            exp.Is(this=value.copy(), expression=exp.Null()),
        )
    where = inner.args.get("where")
    condition = test if where is None else exp.and_(where.this, exp.Paren(this=test))
    inner.set("expressions", [exp.Literal.number(1)])
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
