"""SELECT DISTINCT ON (keys) -> GROUP BY keys, or the first row numbered.

`SELECT DISTINCT ON (k) k, d FROM t ORDER BY k, d DESC` keeps, per value
of k, the first row in the ORDER BY order. Where the SELECT list holds only
DISTINCT ON expressions and the one ORDER BY expression beside them, that
row's values do not depend on which of the rows tied in the order comes
first: the expression's smallest value (ASC) or largest (DESC), NULL where
the group has a NULL and the order puts NULLs first (DuckDB puts them last
unless NULLS FIRST):

    SELECT k, MAX(d) AS d FROM t GROUP BY k ORDER BY k, d DESC

Any other SELECT list, or several ORDER BY expressions beside the keys, is
the row numbered first in its partition:

    SELECT k, x, d FROM t QUALIFY ROW_NUMBER() OVER (PARTITION BY k ORDER BY d DESC) = 1 ORDER BY k, d DESC

which `window_aggregates` guards where the order may tie (the View reads
nothing while two rows of a key tie: DuckDB would pick any of them). With
no ORDER BY beside the keys every row of a key ties: refused, unless the
SELECT list holds only keys. Runs before `check_supported`, on the query as
written.

>>> import sqlglot
>>> from dynyan.compiler.frontend.context import Context
>>> tree = sqlglot.parse_one(
...     "SELECT DISTINCT ON (k) k, d FROM t ORDER BY k, d DESC", read="duckdb")
>>> print(distinct_on(tree, Context({})).sql("duckdb"))
SELECT k AS k, MAX(d) AS d FROM t GROUP BY k ORDER BY k, d DESC
"""

from __future__ import annotations

from sqlglot import exp

from ..aggregates import is_grouped
from ..context import Context
from ..diagnostics import unsupported
from .name_outputs import named
from .subquery_limits import spelled_order

_TIES = (
    "DISTINCT ON needs ORDER BY expressions beside its keys where the SELECT "
    "list holds other columns (the first row would be any of the key's rows)"
)


def distinct_on(tree: exp.Expression, ctx: Context) -> exp.Expression:
    for select in list(tree.find_all(exp.Select)):
        distinct = select.args.get("distinct")
        on = distinct.args.get("on") if distinct is not None else None
        if on is None:
            continue
        keys = on.expressions if isinstance(on, exp.Tuple) else [on]
        spelled = {k.sql() for k in keys}
        grouped = is_grouped(select)
        order = select.args.get("order")
        extra = [
            o
            for o in (order.expressions if order else [])
            if o.this.sql() not in spelled
        ]
        items = [named(item) for item in select.expressions]  # DuckDB's names
        others = [i for i in items if i.unalias().sql() not in spelled]
        if not others:  # DISTINCT over the keys
            if grouped:
                select.set("distinct", exp.Distinct())
            else:
                _group_by(select, items, keys)
        elif select.args.get("qualify") is not None:  # it filters first
            raise unsupported("DISTINCT ON beside QUALIFY is not supported", distinct)
        elif (
            len(others) == 1
            and len(extra) == 1
            and others[0].unalias().sql() == extra[0].this.sql()
            and not grouped
        ):
            first = _first(others[0].unalias(), extra[0])
            items[items.index(others[0])] = exp.alias_(first, others[0].alias)
            extra[0].set("this", exp.column(others[0].alias))
            _group_by(select, items, keys)
        elif extra:
            _numbered(select, items, keys)
        else:
            raise unsupported(_TIES, others[0] if others else distinct)
    return tree


def _group_by(select: exp.Select, items: list, keys: list) -> None:
    select.set("expressions", items)
    select.set("distinct", None)
    select.set("group", exp.Group(expressions=[k.copy() for k in keys]))


def _numbered(select: exp.Select, items: list, keys: list) -> None:
    """The rows numbered 1 in their key's partition by `order` (the ORDER BY
    items beside the keys, an alias or position spelled out)."""
    spelled = {k.sql() for k in keys}
    by = [o for o in spelled_order(select) if o.this.sql() not in spelled]
    window = exp.Window(
        this=exp.RowNumber(),
        partition_by=[k.copy() for k in keys],
        order=exp.Order(expressions=by),
    )
    first = exp.EQ(this=window, expression=exp.Literal.number(1))
    select.set("expressions", items)
    select.set("distinct", None)
    select.set("qualify", exp.Qualify(this=first))


def _first(value: exp.Expression, ordered: exp.Ordered) -> exp.Expression:
    """The value of `value` in a group's first row by `ordered`."""
    extreme = exp.Max if ordered.args.get("desc") else exp.Min
    first = extreme(this=value.copy())
    if not ordered.args.get("nulls_first"):
        return first
    return exp.Case(
        ifs=[
            exp.If(
                this=exp.GT(
                    this=exp.Count(this=exp.Star()),
                    expression=exp.Count(this=value.copy()),
                ),
                true=exp.Null(),
            )
        ],
        default=first,
    )
