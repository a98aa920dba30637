"""IGNORE NULLS and RESPECT NULLS -> the plain forms, or a refusal by name.

- `RESPECT NULLS` is every function's default: dropped.
- `AGG(x) IGNORE NULLS` of an aggregate (SUM, COUNT, MIN, …, windowed or
  not): aggregates skip NULLs anyway, so it is dropped (ANY_VALUE keeps it
  for `keyed_picks`, where it reads the same).
- `FIRST_VALUE(x IGNORE NULLS)` over the whole partition is `FIRST_VALUE(x)`
  over the order with the rows whose x is NULL put last (`ORDER BY x IS
  NULL, …`): the first row is then the first with a value, or a NULL where
  none has one; LAST_VALUE puts them first. Over any other frame (the
  default one, from the partition's start to the current row) the rows of
  the frame would change with the order: refused, as are LAG and LEAD
  IGNORE NULLS.

>>> import sqlglot
>>> from dynyan.compiler.frontend.context import Context
>>> tree = sqlglot.parse_one(
...     "SELECT FIRST_VALUE(x IGNORE NULLS) OVER (PARTITION BY k ORDER BY t ROWS "
...     "BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS f FROM r",
...     read="duckdb")
>>> print(null_treatment(tree, Context({})).sql("duckdb"))
SELECT FIRST_VALUE(x) OVER (PARTITION BY k ORDER BY x IS NULL, t ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS f FROM r
"""

from __future__ import annotations

from sqlglot import exp

from ..context import Context
from ..diagnostics import unsupported
from .keyed_picks import PICKS
from .window_aggregates import SHIFTS, frame

# functions that may read a NULL where IGNORE NULLS would skip it
_PICKING_NULLS = (*SHIFTS, exp.NthValue)


def null_treatment(tree: exp.Expression, ctx: Context) -> exp.Expression:
    for node in list(tree.find_all(exp.RespectNulls)):
        node.replace(node.this.copy())
    for node in list(tree.find_all(exp.IgnoreNulls)):
        func = node.this
        if isinstance(func, PICKS):
            continue
        if isinstance(func, exp.AggFunc) and not isinstance(func, _PICKING_NULLS):
            node.replace(func.copy())
            continue
        window = node.parent
        if not (
            isinstance(func, (exp.FirstValue, exp.LastValue))
            and isinstance(window, exp.Window)
            and window.args.get("order")
            and window.args.get("spec") is not None
            and frame(window, window.find_ancestor(exp.Select)) == "partition"
        ):
            raise unsupported(
                f"{func.sql_name()}(… IGNORE NULLS) is not supported; supported: "
                "FIRST_VALUE and LAST_VALUE (x IGNORE NULLS) over the whole "
                "partition (ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED "
                "FOLLOWING)",
                node,
            )
        missing = exp.Is(this=func.this.copy(), expression=exp.Null())
        if isinstance(func, exp.LastValue):
            missing = exp.Not(this=missing)  # the rows with a value last
        keys = window.args["order"].expressions
        window.args["order"].set("expressions", [exp.Ordered(this=missing), *keys])
        node.replace(func.copy())
    return tree
