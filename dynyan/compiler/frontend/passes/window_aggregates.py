"""Aggregate window functions over whole partitions -> a join with the
aggregates of the partitions.

`AGG(x) OVER (PARTITION BY p, …)` (SUM, COUNT, AVG, MIN or MAX; no ORDER BY,
no frame) gives each row the aggregate over the rows of its partition. The
SELECT without its windows becomes a derived table `__windowed` that also
outputs the windows' arguments and partition keys; each distinct PARTITION
BY list becomes `__windowed` grouped by those keys, joined back on them with
IS NOT DISTINCT FROM (NULL keys form one partition, as in SQL). Windows are
computed before DISTINCT, ORDER BY and LIMIT, which stay on the outer query.

>>> import sqlglot
>>> from dynyan.compiler.frontend.context import Context
>>> tree = sqlglot.parse_one(
...     "SELECT k, v, SUM(v) OVER (PARTITION BY k) AS total FROM t", read="duckdb")
>>> print(window_aggregates(tree, Context({})).sql("duckdb"))
SELECT __windowed.__c1 AS k, __windowed.__c2 AS v, __partition1.__w1 AS total FROM (SELECT k AS __c1, v AS __c2 FROM t) AS __windowed JOIN (SELECT __rows.__c1 AS __c1, SUM(__rows.__c2) AS __w1 FROM (SELECT k AS __c1, v AS __c2 FROM t) AS __rows GROUP BY __rows.__c1) AS __partition1 ON __windowed.__c1 IS NOT DISTINCT FROM __partition1.__c1
"""

from __future__ import annotations

from sqlglot import exp

from ..context import Context
from ..diagnostics import unsupported
from .name_outputs import named

# the functions a window over whole partitions may compute
WINDOW_AGGREGATES = (exp.Sum, exp.Count, exp.Avg, exp.Min, exp.Max)


def window_aggregates(tree: exp.Expression, ctx: Context) -> exp.Expression:
    for select in reversed(list(tree.find_all(exp.Select))):
        windows = [
            w
            for w in select.find_all(exp.Window)
            if w.find_ancestor(exp.Select) is select
        ]
        if not windows or not all(_supported(w, select) for w in windows):
            continue  # none, or refused by check_supported, by name
        rewritten = _Rewrite(select).query()
        if select is tree:
            tree = rewritten
        else:
            select.replace(rewritten)
    return tree


def _supported(window: exp.Window, select: exp.Select) -> bool:
    """An aggregate over whole partitions, in the SELECT list."""
    if window.args.get("order") or window.args.get("spec"):
        return False
    func = window.this
    if not isinstance(func, WINDOW_AGGREGATES) or func.args.get("expressions"):
        return False
    if any(isinstance(e, exp.Star) for e in select.expressions):
        return False
    return in_select_list(window)


def in_select_list(window: exp.Window) -> bool:
    """Whether the window is (inside) an item of its SELECT's list."""
    select = window.find_ancestor(exp.Select)
    item = window
    while item.parent is not None and item.parent is not select:
        item = item.parent
    return item.arg_key == "expressions"


class _Rewrite:
    """One SELECT with windows -> the outer query over `__windowed`."""

    def __init__(self, select: exp.Select):
        self.select = select
        self.columns: dict[str, str] = {}  # SQL of a base expression -> its column
        self.base_items: list[exp.Expression] = []
        # PARTITION BY list (SQL) -> (alias, key columns, window items)
        self.partitions: dict[tuple, tuple[str, list[str], list[exp.Expression]]] = {}

    def query(self) -> exp.Select:
        select = self.select
        items = [named(e.copy()) for e in select.expressions]
        outer_items = [
            exp.alias_(self._outer(item.this), item.alias, quoted=_quoted(item))
            for item in items
        ]
        order = select.args.get("order")
        if order is not None:
            order = self._order(order.copy(), {item.alias for item in items})
        base = select.copy()
        for arg in ("order", "limit", "offset", "distinct"):
            base.set(arg, None)
        base.set("expressions", self.base_items)
        outer = exp.select(*outer_items).from_(
            exp.Subquery(this=base, alias=exp.TableAlias(this=_name("__windowed")))
        )
        for alias, keys, windows in self.partitions.values():
            rows = exp.Subquery(
                this=base.copy(), alias=exp.TableAlias(this=_name("__rows"))
            )
            grouped = exp.select(
                *[exp.alias_(exp.column(k, table="__rows"), k) for k in keys],
                *windows,
            ).from_(rows)
            if keys:
                grouped = grouped.group_by(
                    *[exp.column(k, table="__rows") for k in keys]
                )
            on = [
                exp.NullSafeEQ(
                    this=exp.column(k, table="__windowed"),
                    expression=exp.column(k, table=alias),
                )
                for k in keys
            ]
            joined = exp.Subquery(this=grouped, alias=exp.TableAlias(this=_name(alias)))
            outer = outer.join(joined, on=exp.and_(*on) if on else None)
        for arg in ("distinct", "limit", "offset"):
            if select.args.get(arg) is not None:
                outer.set(arg, select.args[arg].copy())
        if order is not None:
            outer.set("order", order)
        return outer

    def _column(self, node: exp.Expression, prefix: str) -> str:
        """The column of `__windowed` that outputs `node` (added once)."""
        key = node.sql()
        if key not in self.columns:
            name = f"__{prefix}{len(self.base_items) + 1}"
            self.columns[key] = name
            self.base_items.append(exp.alias_(node.copy(), name))
        return self.columns[key]

    def _outer(self, body: exp.Expression) -> exp.Expression:
        """A SELECT item over `__windowed` and the partitions' aggregates."""
        if body.find(exp.Window) is None:
            return exp.column(self._column(body, "c"), table="__windowed")

        def lift(node):
            if isinstance(node, exp.Window):
                return self._window(node)
            if isinstance(node, (exp.AggFunc, exp.Column)):
                return exp.column(self._column(node, "c"), table="__windowed")
            return node

        return body.copy().transform(lift)

    def _window(self, window: exp.Window) -> exp.Column:
        keys = list(window.args.get("partition_by") or [])
        signature = tuple(k.sql() for k in keys)
        if signature not in self.partitions:
            alias = f"__partition{len(self.partitions) + 1}"
            columns = [self._column(k, "k") for k in keys]
            self.partitions[signature] = (alias, columns, [])
        alias, _, windows = self.partitions[signature]
        for done in windows:  # the same aggregate twice: one column
            if done.this == window.this:
                return exp.column(done.alias, table=alias)
        agg = window.this.copy()
        arg = agg.this
        if isinstance(arg, exp.Distinct):
            (inner,) = arg.expressions
            arg.set(
                "expressions", [exp.column(self._column(inner, "x"), table="__rows")]
            )
        elif arg is not None and not isinstance(arg, exp.Star):
            agg.set("this", exp.column(self._column(arg, "x"), table="__rows"))
        name = f"__w{sum(len(w) for _, _, w in self.partitions.values()) + 1}"
        windows.append(exp.alias_(agg, name))
        return exp.column(name, table=alias)

    def _order(self, order: exp.Order, outputs: set[str]) -> exp.Order:
        """ORDER BY over the outer query: output names and positions stay,
        other expressions become columns of `__windowed`."""
        for ordered in order.expressions:
            key = ordered.this
            if isinstance(key, exp.Literal) or (
                isinstance(key, exp.Column) and not key.table and key.name in outputs
            ):
                continue
            if key.find(exp.Window) is not None:
                raise unsupported("ORDER BY a window function is not supported", key)
            ordered.set("this", exp.column(self._column(key, "o"), table="__windowed"))
        return order


def _name(text: str) -> exp.Identifier:
    return exp.to_identifier(text)


def _quoted(item: exp.Alias) -> bool:
    alias = item.args.get("alias")
    return bool(alias is not None and alias.args.get("quoted"))
