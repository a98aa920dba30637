"""ORDER BY, LIMIT and OFFSET of the outermost query -> its `Ordering`.

Each ORDER BY item names a SELECT item (by alias, position or the same
expression); any other becomes a sort-only output appended to the SELECT
list (`__order1`, …), which rows carry and the user never sees. LIMIT and
OFFSET without ORDER BY take rows in the order of all SELECT columns (SQL
allows any rows there).

>>> import sqlglot
>>> from dynyan.compiler.frontend.context import Context
>>> tree = sqlglot.parse_one(
...     "SELECT r.a AS a FROM r AS r ORDER BY a DESC, r.b LIMIT 5", read="duckdb")
>>> ctx = Context({})
>>> print(order_limit(tree, ctx).sql("duckdb"))
SELECT r.a AS a, r.b AS __order1 FROM r AS r
>>> print(ctx.ordering)
order by #1 DESC, #2 limit 5 (the last 1 outputs are sort-only)
"""

from __future__ import annotations

from sqlglot import exp

from ...ir import Ordering, SortKey
from ..context import Context
from ..diagnostics import sql_error, unsupported


def _all(node: exp.Expression) -> bool:
    """`ALL` of DuckDB's ORDER BY ALL: every SELECT item, left to right."""
    return isinstance(node, (exp.Var, exp.Column)) and node.name.upper() == "ALL"


def _with_aliases(key: exp.Expression, items: list) -> exp.Expression:
    """An ORDER BY expression with the SELECT aliases it names (`ORDER BY
    dbl + id`; names qualification left bare) replaced by their items."""
    named = {e.alias.lower(): e.unalias() for e in items if isinstance(e, exp.Alias)}

    def swap(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Column) and not node.table:
            item = named.get(node.name.lower())
            if item is not None:
                return item.copy()
        return node

    return key.transform(swap)


def order_limit(select: exp.Select, ctx: Context) -> exp.Select:
    if not ctx.top:
        return select
    order = select.args.get("order")
    limit = _count(select.args.get("limit"), "LIMIT")
    offset = _count(select.args.get("offset"), "OFFSET") or 0
    if order is None and limit is None and not offset:
        return select
    items = list(select.expressions)
    visible = len(items)
    keys = []
    spelled = order.expressions if order is not None else []
    if len(spelled) == 1 and _all(spelled[0].this):  # DuckDB: ORDER BY ALL
        spelled = [
            spelled[0].__class__(
                this=exp.Literal.number(i + 1),
                desc=spelled[0].args.get("desc"),
                nulls_first=spelled[0].args.get("nulls_first"),
            )
            for i in range(visible)
        ]
    for ordered in spelled:
        position = _position(ordered.this, items, visible)
        if position is None:
            if select.args.get("distinct") is not None:
                raise sql_error(
                    "with SELECT DISTINCT, ORDER BY may only name SELECT items",
                    ordered,
                )
            position = len(items)
            key = _with_aliases(ordered.this.copy(), items[:visible])
            items.append(exp.alias_(key, f"__order{position - visible + 1}"))
        keys.append(
            SortKey(
                position,
                bool(ordered.args.get("desc")),
                bool(ordered.args.get("nulls_first")),
            )
        )
    implied = not keys
    if implied:
        # SQL: LIMIT without ORDER BY may return any k rows. Taking them in the
        # order of all SELECT columns returns k of them that stay in the answer
        # while they live (push mode reports no churn), and one row of a
        # global aggregate as it is.
        keys = [SortKey(i, False, False) for i in range(visible)]
    select.set("expressions", items)
    for arg in ("order", "limit", "offset"):
        select.set(arg, None)
    hidden = len(items) - visible
    ctx.ordering = Ordering(tuple(keys), limit, offset, hidden, implied)
    return select


def _position(e: exp.Expression, items: list, visible: int) -> int | None:
    """The SELECT item an ORDER BY expression names, or None."""
    if isinstance(e, exp.Literal) and not e.is_string:
        k = int(e.this)
        if not 1 <= k <= visible:
            raise sql_error(f"ORDER BY {k}: the SELECT list has {visible} items", e)
        return k - 1
    if isinstance(e, exp.Column) and not e.table:
        for i, item in enumerate(items[:visible]):
            if item.alias_or_name.lower() == e.name.lower():
                return i
    for i, item in enumerate(items[:visible]):
        if item.unalias() == e:
            return i
    return None


def _count(clause: exp.Expression | None, what: str) -> int | None:
    """The number of a LIMIT or OFFSET clause (an integer literal; None for
    `LIMIT ALL` and `LIMIT NULL`, which limit nothing)."""
    if clause is None:
        return None
    value = clause.args.get("expression")
    if what == "LIMIT" and (
        isinstance(value, exp.Null)
        or (isinstance(value, (exp.Var, exp.Column)) and value.name.upper() == "ALL")
    ):
        return None
    if (
        not isinstance(value, exp.Literal)
        or value.is_string
        or not value.this.isdigit()
    ):
        raise unsupported(f"{what} needs a whole number", clause)
    return int(value.this)
