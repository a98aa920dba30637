"""IGNORE NULLS and RESPECT NULLS -> the plain forms, or a refusal by name.

- `RESPECT NULLS` is every function's default: dropped.
- `AGG(x) IGNORE NULLS` of an aggregate (SUM, COUNT, MIN, …, windowed or
  not): aggregates skip NULLs anyway, so it is dropped (ANY_VALUE keeps it
  for `keyed_picks`, where it reads the same).
- `FIRST_VALUE(x IGNORE NULLS)` over the whole partition is `FIRST_VALUE(x)`
  over the order with the rows whose x is NULL put last (`ORDER BY x IS
  NULL, …`): the first row is then the first with a value, or a NULL where
  none has one; LAST_VALUE puts them first.
- Over an order, `LAG(x[, n] IGNORE NULLS)`, `LEAD(…)` and FIRST_VALUE and
  LAST_VALUE IGNORE NULLS in the default frame or over a ROWS frame stay as
  they are: the windows' view computes them (`picked_value`: the n-th row
  among those whose x is not NULL), a DEFAULT as COALESCE (the value is
  NULL exactly where none is found). Without that view they are refused.

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
from .window_aggregates import SHIFTS, frame, picked_value


def null_treatment(tree: exp.Expression, ctx: Context) -> exp.Expression:
    for node in list(tree.find_all(exp.RespectNulls)):
        node.replace(node.this.copy())
    for node in list(tree.find_all(exp.IgnoreNulls)):
        func = node.this
        if isinstance(func, PICKS):
            continue
        # an aggregate skips NULLs anyway; a shift (SHIFTS) may read one
        if isinstance(func, exp.AggFunc) and not isinstance(func, SHIFTS):
            node.replace(func.copy())
            continue
        window = node.parent
        select = window.find_ancestor(exp.Select)
        if (
            isinstance(window, exp.Window)
            and ctx.native_windows
            and picked_value(window, select) is not None
        ):
            default = func.args.get("default")
            if default is not None:  # NULL exactly where no value is found
                func.set("default", None)
                window.replace(exp.Coalesce(this=window.copy(), expressions=[default]))
            continue  # the windows' view computes it (native_windows)
        if not (
            isinstance(func, (exp.FirstValue, exp.LastValue))
            and isinstance(window, exp.Window)
            and window.args.get("order")
            and window.args.get("spec") is not None
            and frame(window, select) == "partition"
        ):
            raise unsupported(
                f"{func.sql_name()}(… IGNORE NULLS) is not supported; supported: "
                "over an ORDER BY, LAG(x[, n[, default]] IGNORE NULLS), LEAD(…) "
                "likewise, FIRST_VALUE and LAST_VALUE (x IGNORE NULLS) in the "
                "default frame, over a ROWS frame, or over the whole partition, and "
                "NTH_VALUE(x, n IGNORE NULLS) likewise",
                node,
            )
        missing = exp.Is(this=func.this.copy(), expression=exp.Null())
        if isinstance(func, exp.LastValue):
            missing = exp.Not(this=missing)  # the rows with a value last
        keys = window.args["order"].expressions
        window.args["order"].set("expressions", [exp.Ordered(this=missing), *keys])
        node.replace(func.copy())
    return tree
