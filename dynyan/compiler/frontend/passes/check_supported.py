"""Refuse, by name and position, what a view cannot maintain (yet).

Runs before anything is resolved, so the message names the construct as the
user wrote it.
"""

from __future__ import annotations

from sqlglot import exp

from ..aggregates import AGGREGATES
from ..context import Context
from ..diagnostics import unsupported
from .window_aggregates import (
    SHIFTS,
    WINDOW_AGGREGATES,
    frame,
    in_select_list,
    shift_refusal,
)
from .window_orders import RANKINGS

# SELECT clauses refused wherever they appear: clause -> how to name it.
_REFUSED = {"windows": "WINDOW", "qualify": "QUALIFY without a window function"}


def check_supported(tree: exp.Expression, ctx: Context) -> exp.Expression:
    for node in tree.find_all(exp.TableSample):
        raise unsupported(
            "TABLESAMPLE (a view maintains the whole result) is not supported", node
        )
    windows = sorted(
        tree.find_all(exp.Window), key=lambda w: (not _specific(w), in_select_list(w))
    )
    for node in windows:  # the one that is not supported anywhere first
        raise unsupported(_window_refusal(node), node)
    for select in tree.find_all(exp.Select):
        for arg, what in _REFUSED.items():
            if select.args.get(arg):
                raise unsupported(f"{what} is not supported", select.args[arg])
    for node in tree.find_all(exp.Lateral):
        raise unsupported("LATERAL subqueries are not supported", node)
    for select in tree.find_all(exp.Select):
        if select is not tree:
            _inner_order(select)
        distinct = select.args.get("distinct")
        if distinct is not None and distinct.args.get("on"):
            raise unsupported("DISTINCT ON is not supported", distinct)
    for node in tree.find_all(exp.AggFunc):
        if not isinstance(node, AGGREGATES):
            raise unsupported(
                f"aggregate {node.sql_name()} is not supported; supported: "
                "COUNT(*), COUNT(col), COUNT(DISTINCT col), SUM, AVG, MIN, MAX, "
                "VARIANCE, STDDEV",
                node,
            )
        if isinstance(node.this, exp.Distinct) and not isinstance(node, exp.Count):
            raise unsupported("only COUNT takes DISTINCT", node)
        outer = node.find_ancestor(exp.AggFunc, exp.Select)
        if isinstance(outer, exp.AggFunc):
            raise unsupported("nested aggregates are not supported", node)
    return tree


def _specific(node: exp.Window) -> bool:
    """A window no SELECT list could hold (a ranking without an order, a
    frame that is not supported, another function)."""
    func = node.this
    if isinstance(func, RANKINGS):
        return not node.args.get("order") or bool(node.args.get("spec"))
    select = node.find_ancestor(exp.Select)
    if isinstance(func, SHIFTS):
        return shift_refusal(node, select) is not None
    if not isinstance(func, WINDOW_AGGREGATES):
        return True
    return frame(node, select) is None or (
        bool(node.args.get("order")) and isinstance(func.this, exp.Distinct)
    )


def _window_refusal(node: exp.Window) -> str:
    """Why a window function is refused (passes.window_aggregates takes
    aggregates over partitions or running in an order, and rankings)."""
    supported = (
        "supported: SUM, COUNT, AVG, MIN, MAX OVER ([PARTITION BY …] [ORDER BY …]) "
        "and RANK, DENSE_RANK, PERCENT_RANK, CUME_DIST, LAG, LEAD OVER ([PARTITION "
        "BY …] ORDER BY …) in the SELECT "
        "list, QUALIFY or ORDER BY"
    )
    func = node.this
    if isinstance(func, exp.RowNumber):
        return (
            "ROW_NUMBER() is not supported: tied rows get arbitrary numbers, which "
            "no view can reproduce; use RANK() (the same where the ORDER BY keys "
            "are unique)"
        )
    if isinstance(func, RANKINGS):
        name = func.sql(dialect="duckdb")
        if not node.args.get("order"):
            return f"{name} needs ORDER BY in its window; {supported}"
        if node.args.get("spec"):
            return f"{name} takes no frame; {supported}"
    elif isinstance(func, SHIFTS):
        refusal = shift_refusal(node, node.find_ancestor(exp.Select))
        if refusal is not None:
            return f"{refusal}; {supported}"
    elif not isinstance(func, WINDOW_AGGREGATES):
        name = func.sql_name() if isinstance(func, exp.Func) else func.key.upper()
        return f"window function {name} is not supported; {supported}"
    elif frame(node, node.find_ancestor(exp.Select)) is None:
        return (
            "this window frame is not supported: running aggregates take the "
            "default frame, RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW, or "
            "ROWS up to the current row where the ORDER BY keys tell the rows "
            "apart (the GROUP BY keys of a grouped query); "
            f"{supported}"
        )
    elif node.args.get("order") and isinstance(func.this, exp.Distinct):
        return f"a running {func.sql_name()}(DISTINCT …) is not supported; {supported}"
    if not in_select_list(node):
        return (
            "a window function outside the SELECT list, QUALIFY and ORDER BY is "
            f"not supported; {supported}"
        )
    if any(isinstance(e, exp.Star) for e in node.find_ancestor(exp.Select).expressions):
        return "a window function beside SELECT * is not supported (name the columns)"
    return f"this window function is not supported; {supported}"


def _inner_order(select: exp.Select) -> None:
    """A subquery's ORDER BY orders nothing (a relation has no order): it is
    dropped; LIMIT/OFFSET there would pick rows, which is refused."""
    for arg in ("limit", "offset"):
        if select.args.get(arg):
            raise unsupported(
                f"{arg.upper()} in a subquery is not supported (only the outermost "
                "query may have ORDER BY … LIMIT)",
                select.args[arg],
            )
    select.set("order", None)
