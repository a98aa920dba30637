"""Named windows -> windows spelled out where they are used.

`SUM(x) OVER w … WINDOW w AS (PARTITION BY k)` is `SUM(x) OVER (PARTITION BY
k)`; a window may build on a named one (`OVER (w ORDER BY t)`, `WINDOW v AS
(w ORDER BY t)`), adding an ORDER BY where it has none and a frame, never
another PARTITION BY, or name one with a frame as it is (`OVER v`; SQL's
rules, as DuckDB). The passes after this one see
only windows spelled out.

>>> import sqlglot
>>> from dynyan.compiler.frontend.context import Context
>>> tree = sqlglot.parse_one(
...     "SELECT SUM(a) OVER w AS s, COUNT(*) OVER (w ORDER BY b) AS n FROM r "
...     "WINDOW w AS (PARTITION BY c)", read="duckdb")
>>> print(named_windows(tree, Context({})).sql("duckdb"))
SELECT SUM(a) OVER (PARTITION BY c) AS s, COUNT(*) OVER (PARTITION BY c ORDER BY b) AS n FROM r
"""

from __future__ import annotations

from sqlglot import exp

from ..context import Context
from ..diagnostics import unsupported


def named_windows(tree: exp.Expression, ctx: Context) -> exp.Expression:
    for select in list(tree.find_all(exp.Select)):
        named = {}
        for window in select.args.get("windows") or []:
            name = window.this.name.lower()
            if name in named:
                raise unsupported(f"window {window.this.name} is named twice", window)
            named[name] = _spelled(window, named, window)
        select.set("windows", None)
        for window in list(select.find_all(exp.Window)):
            base = window.args.get("alias")
            if base is None or window.find_ancestor(exp.Select) is not select:
                continue
            window.replace(_spelled(window, named, window, own=window.this))
    return tree


def _spelled(window: exp.Window, named: dict, node, own=None) -> exp.Window:
    """`window` with the named window it builds on (its `alias`) spelled out;
    `own`: the function it applies (None: a definition of the WINDOW clause)."""
    base_name = window.args.get("alias")
    parts = {a: window.args.get(a) for a in ("partition_by", "order", "spec")}
    if base_name is not None:
        base = named.get(base_name.name.lower())
        if base is None:
            raise unsupported(f"no window named {base_name.name}", node)
        if parts["partition_by"]:
            raise unsupported(
                f"a window built on {base_name.name} cannot PARTITION BY again", node
            )
        if parts["order"] and base.args.get("order"):
            raise unsupported(
                f"a window built on {base_name.name} cannot ORDER BY again", node
            )
        if base.args.get("spec") and (parts["order"] or parts["spec"]):
            raise unsupported(
                f"window {base_name.name} has a frame: a window may name it "
                "(OVER w), not build on it",
                node,
            )
        for arg in ("partition_by", "order", "spec"):
            if not parts[arg] and base.args.get(arg):
                parts[arg] = base.args[arg]
    return exp.Window(
        this=own.copy() if own is not None else window.this.copy(),
        over=window.args.get("over") or "OVER",
        **{a: _copy(v) for a, v in parts.items() if v},
    )


def _copy(value):
    return [e.copy() for e in value] if isinstance(value, list) else value.copy()
