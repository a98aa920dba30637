"""Refuse, by name and position, what a view cannot maintain (yet).

Runs before anything is resolved, so the message names the construct as the
user wrote it.
"""

from __future__ import annotations

from sqlglot import exp

from ..aggregates import AGGREGATES
from ..context import Context
from ..diagnostics import unsupported
from .window_aggregates import WINDOW_AGGREGATES, in_select_list

# SELECT clauses refused wherever they appear: clause -> how to name it.
_REFUSED = {"windows": "WINDOW", "qualify": "QUALIFY"}


def check_supported(tree: exp.Expression, ctx: Context) -> exp.Expression:
    for node in tree.find_all(exp.TableSample):
        raise unsupported(
            "TABLESAMPLE (a view maintains the whole result) is not supported", node
        )
    for select in tree.find_all(exp.Select):
        for arg, what in _REFUSED.items():
            if select.args.get(arg):
                raise unsupported(f"{what} is not supported", select.args[arg])
    windows = sorted(
        tree.find_all(exp.Window), key=lambda w: (not _specific(w), in_select_list(w))
    )
    for node in windows:  # the one that is not supported anywhere first
        raise unsupported(_window_refusal(node), node)
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
    """A window no SELECT list could hold (a ranking or running one)."""
    func = node.this
    return not isinstance(func, WINDOW_AGGREGATES) or bool(
        node.args.get("order") or node.args.get("spec")
    )


def _window_refusal(node: exp.Window) -> str:
    """Why a window function is refused (passes.window_aggregates takes
    aggregates over whole partitions in the SELECT list)."""
    supported = (
        "supported: SUM, COUNT, AVG, MIN, MAX OVER ([PARTITION BY …]) in the "
        "SELECT list"
    )
    func = node.this
    if not isinstance(func, WINDOW_AGGREGATES):
        name = func.sql_name() if isinstance(func, exp.Func) else func.key.upper()
        return f"window function {name} is not supported; {supported}"
    if node.args.get("order") or node.args.get("spec"):
        return (
            "a window with ORDER BY or a frame (running aggregates) is not "
            f"supported; {supported}"
        )
    if not in_select_list(node):
        return (
            f"a window function outside the SELECT list is not supported; {supported}"
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
