"""ORDER BY … LIMIT in a subquery -> its rows numbered in that order.

A subquery, derived table, CTE or LATERAL that keeps the first n groups of
an order (`IN (SELECT o_custkey FROM orders GROUP BY o_custkey ORDER BY
SUM(o_totalprice) DESC LIMIT 5)`) keeps the groups numbered m + 1 to m + n
by `ROW_NUMBER() OVER (ORDER BY …)` (m: its OFFSET):

    SELECT o_custkey FROM orders GROUP BY o_custkey QUALIFY ROW_NUMBER() OVER (ORDER BY SUM(o_totalprice) DESC) <= 5

`window_aggregates` maintains that numbering, and guards it where the order
may tie: tied rows at the cut would be any of them (DuckDB picks one), so
the View reads nothing while two rows tie.

Correlated by equalities (`(SELECT o_orderdate FROM orders WHERE o_custkey
= c_custkey ORDER BY o_orderdate DESC LIMIT 1)`, the latest order of each
customer), the rows are numbered per correlation key in a derived table of
the subquery's own rows, and the correlation is applied to it:

    (SELECT __limited.__l1 AS o_orderdate FROM (SELECT o_orderdate AS __l1,
     o_custkey AS __l2, ROW_NUMBER() OVER (PARTITION BY o_custkey ORDER BY
     o_orderdate DESC) AS __rn FROM orders) AS __limited
     WHERE __limited.__l2 = c_custkey AND __limited.__rn <= 1)

Uncorrelated over rows (`IN (SELECT o_custkey FROM orders ORDER BY
o_totalprice DESC LIMIT 10)`), the rows are numbered in place too: the
windows' view (`native_windows`, the default) outputs only those up to the
last place kept, and `top_rows` may cut the rows it numbers; with windows
rewritten into joins, only where `top_rows` cuts them (the first key a
column: NOT NULL or an INTEGER), else every update would renumber the
table, a cost per change that grows with it, and the subquery is
refused.

In EXISTS, LIMIT n ≥ 1 without OFFSET changes nothing and is dropped.
Uncorrelated over DISTINCT rows, they are the groups of its items.
Refused: LIMIT without ORDER BY (any rows), over DISTINCT correlated, beside QUALIFY,
uncorrelated over rows that nothing bounds (above), or correlated otherwise
than by `inner column = outer expression` in WHERE of a query that does not
aggregate. Runs after
`inline_views`, before `window_aggregates` and `check_supported`.

>>> import sqlglot
>>> from dynyan.compiler.frontend.context import Context
>>> tree = sqlglot.parse_one(
...     "SELECT a FROM r WHERE a IN "
...     "(SELECT b FROM s GROUP BY b ORDER BY SUM(c) DESC LIMIT 2)", read="duckdb")
>>> print(subquery_limits(tree, Context({})).sql("duckdb"))
SELECT a FROM r WHERE a IN (SELECT b FROM s GROUP BY b QUALIFY ROW_NUMBER() OVER (ORDER BY SUM(c) DESC) <= 2)
"""

from __future__ import annotations

from sqlglot import exp

from ..aggregates import is_grouped
from ..context import Context, sql_conjuncts
from ..diagnostics import unsupported
from .name_outputs import named
from .qualify_names import expand_stars
from .top_rows import bounded
from .window_aggregates import spelled_key


def subquery_limits(tree: exp.Expression, ctx: Context) -> exp.Expression:
    for select in reversed(list(tree.find_all(exp.Select))):
        if select is tree or not (
            select.args.get("limit") or select.args.get("offset")
        ):
            continue
        first, count = _bounds(select)
        holder = select.parent
        if isinstance(holder, exp.Subquery):
            holder = holder.parent
        if isinstance(holder, exp.Exists):
            if first == 0 and (count is None or count >= 1):  # EXISTS: any row
                for arg in ("order", "limit", "offset"):
                    select.set(arg, None)
                continue
        outer = _outer_columns(select, ctx)
        if not outer:
            _distinct_as_groups(select)
        _refuse_others(select)
        if not outer:
            if not is_grouped(select) and not _cheap(select, first, count, ctx):
                raise unsupported(
                    "ORDER BY … LIMIT in an uncorrelated subquery over rows (not "
                    "groups) is supported where its first ORDER BY key is a column "
                    "declared NOT NULL or an INTEGER one: else every update would "
                    "renumber the table's rows",
                    select.args.get("limit") or select.args.get("offset"),
                )
            _number_in_place(select, first, count)
        else:
            select.replace(_number_per_key(select, outer, first, count, ctx))
    return tree


def _bounds(select: exp.Select) -> tuple[int, int | None]:
    """OFFSET and LIMIT (None: no LIMIT), constant integers."""
    values = []
    for arg in ("offset", "limit"):
        node = select.args.get(arg)
        value = node.expression if node is not None else None
        if value is None:
            values.append(None)
        elif value.is_int and int(value.name) >= 0:
            values.append(int(value.name))
        else:
            raise unsupported(f"{arg.upper()} in a subquery needs a constant", node)
    return values[0] or 0, values[1]


def _distinct_as_groups(select: exp.Select) -> None:
    """`SELECT DISTINCT a, b … ORDER BY … LIMIT n` keeps n of the distinct
    rows, the groups of `GROUP BY a, b` (the second highest salary:
    `SELECT DISTINCT salary … ORDER BY salary DESC LIMIT 1 OFFSET 1`)."""
    distinct = select.args.get("distinct")
    if (
        distinct is None
        or distinct.args.get("on") is not None
        or is_grouped(select)
        or any(isinstance(e, exp.Star) for e in select.expressions)
    ):
        return
    select.set("distinct", None)
    select.set(
        "group", exp.Group(expressions=[e.unalias().copy() for e in select.expressions])
    )


def _refuse_others(select: exp.Select) -> None:
    if not select.args.get("order"):
        raise unsupported(
            "LIMIT in a subquery needs ORDER BY (else it keeps any rows)",
            select.args.get("limit") or select.args.get("offset"),
        )
    if select.args.get("distinct") is not None:
        raise unsupported("LIMIT in a subquery over DISTINCT", select.args["distinct"])
    if select.args.get("qualify") is not None:
        raise unsupported("LIMIT in a subquery beside QUALIFY", select.args["qualify"])


def spelled_order(select: exp.Select) -> list[exp.Ordered]:
    """The ORDER BY items, an alias or position of a SELECT item spelled out."""
    out = []
    for o in select.args["order"].expressions:
        o = o.copy()
        o.set("this", spelled_key(o.this, select).copy())
        out.append(o)
    return out


def _numbering(select: exp.Select, keys: list[exp.Expression]) -> exp.Window:
    return exp.Window(
        this=exp.RowNumber(),
        partition_by=keys,
        order=exp.Order(expressions=spelled_order(select)),
    )


def _kept(number: exp.Expression, first: int, count: int | None) -> exp.Expression:
    """`first < number <= first + count`."""
    parts = []
    if first:
        parts.append(exp.GT(this=number.copy(), expression=exp.Literal.number(first)))
    if count is not None:
        parts.append(
            exp.LTE(this=number.copy(), expression=exp.Literal.number(first + count))
        )
    return exp.and_(*parts)


def _cheap(select: exp.Select, first: int, count: int | None, ctx: Context) -> bool:
    """Whether the rows of `select` numbered for its LIMIT cost a change only
    those up to the last place kept (passes/top_rows.py)."""
    numbered = select.copy()
    _number_in_place(numbered, first, count)
    return bounded(numbered, ctx)


def _number_in_place(select: exp.Select, first: int, count: int | None) -> None:
    select.set("qualify", exp.Qualify(this=_kept(_numbering(select, []), first, count)))
    for arg in ("order", "limit", "offset"):
        select.set(arg, None)


def _sources(select: exp.Select, ctx: Context) -> dict[str, set[str] | None]:
    """The names the select's FROM and JOINs can be referred to by, with
    the columns of each (None: not known, a table not declared)."""
    from_ = select.args.get("from_") or select.args.get("from")
    items = ([from_.this] if from_ is not None else []) + [
        j.this for j in select.args.get("joins") or []
    ]
    out: dict[str, set[str] | None] = {}
    for item in items:
        name = item.alias_or_name.lower()
        if isinstance(item, exp.Table):
            rel = ctx.relations.get(item.name.lower()) or ctx.relations.get(item.name)
            out[name] = {c.lower() for c in rel.columns} if rel is not None else None
        elif isinstance(item, exp.Subquery) and isinstance(item.this, exp.Select):
            out[name] = {e.alias_or_name.lower() for e in item.this.expressions}
        else:
            out[name] = None
    return out


def _outer_columns(select: exp.Select, ctx: Context) -> list[exp.Column]:
    """The columns `select` reads from an enclosing query (not from its
    own FROM, nor from a subquery's)."""
    sources = _sources(select, ctx)
    outer = []
    for column in select.find_all(exp.Column):
        if column.find_ancestor(exp.Select) is not select:
            continue  # a nested subquery's: its own business
        table = column.table.lower()
        if table:
            if table not in sources:
                outer.append(column)
        elif not any(
            cols is None or column.name.lower() in cols for cols in sources.values()
        ):
            if not any(
                isinstance(i, exp.Alias) and i.alias.lower() == column.name.lower()
                for i in select.expressions
            ):
                outer.append(column)
    return outer


def _number_per_key(
    select: exp.Select,
    outer: list[exp.Column],
    first: int,
    count: int | None,
    ctx: Context,
) -> exp.Select:
    """The correlated subquery over a derived table of its own rows numbered
    per correlation key; the correlation applied to that table."""
    if is_grouped(select):
        raise unsupported("LIMIT in a correlated subquery that aggregates", select)
    outer_ids = {id(c) for c in outer}
    where = select.args.get("where")
    local, correlated = [], []
    for conjunct in sql_conjuncts(where.this) if where is not None else []:
        if any(id(c) in outer_ids for c in conjunct.find_all(exp.Column)):
            correlated.append(conjunct)
        else:
            local.append(conjunct)
    keys = []
    for conjunct in correlated:
        inner_side = _inner_side(conjunct, outer_ids)
        if inner_side is None:
            raise unsupported(
                "LIMIT in a subquery correlated otherwise than by `inner column = "
                "outer expression` in WHERE",
                conjunct,
            )
        keys.append(inner_side)
    placed = {id(c) for conjunct in correlated for c in conjunct.find_all(exp.Column)}
    if any(id(c) not in placed for c in outer):
        raise unsupported(
            "LIMIT in a subquery that reads outer columns outside WHERE", outer[0]
        )
    if not expand_stars(select, ctx):  # the columns the outside may read
        raise unsupported("LIMIT in a correlated subquery with SELECT *", select)
    items = [named(i.copy()) for i in select.expressions]
    # each column the outside reads (by its SQL): a column of the derived
    # table, and what it reads inside
    names: dict[str, tuple[str, exp.Column]] = {}

    def name_of(column: exp.Column) -> str:
        if column.sql() not in names:
            names[column.sql()] = (f"__l{len(names) + 1}", column.copy())
        return names[column.sql()][0]

    def lift(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Column):
            return exp.column(name_of(node), table="__limited")
        return node

    outer_items = [
        exp.alias_(i.unalias().copy().transform(lift), i.alias, quoted=True)
        for i in items
    ]
    conditions = []
    for conjunct, key in zip(correlated, keys):
        lifted = exp.column(name_of(key), table="__limited")
        other = conjunct.expression if conjunct.this is key else conjunct.this
        conditions.append(exp.EQ(this=lifted, expression=other.copy()))
    inner = select.copy()
    for arg in ("order", "limit", "offset", "where"):
        inner.set(arg, None)
    if local:
        inner.set("where", exp.Where(this=exp.and_(*[c.copy() for c in local])))
    inner.set(
        "expressions",
        [exp.alias_(column, name) for name, column in names.values()]
        + [exp.alias_(_numbering(select, [k.copy() for k in keys]), "__rn")],
    )
    number = exp.column("__rn", table="__limited")
    conditions.append(_kept(number, first, count))
    return (
        exp.select(*outer_items)
        .from_(
            exp.Subquery(
                this=inner, alias=exp.TableAlias(this=exp.to_identifier("__limited"))
            )
        )
        .where(exp.and_(*conditions))
    )


def _inner_side(conjunct: exp.Expression, outer_ids: set) -> exp.Column | None:
    """The inner column of `inner column = outer expression`, else None."""
    if not isinstance(conjunct, exp.EQ):
        return None
    for mine, theirs in (
        (conjunct.this, conjunct.expression),
        (conjunct.expression, conjunct.this),
    ):
        outer_only = all(id(c) in outer_ids for c in theirs.find_all(exp.Column))
        if isinstance(mine, exp.Column) and id(mine) not in outer_ids and outer_only:
            return mine
    return None
