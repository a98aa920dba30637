"""Refuse, by name and position, what a view cannot maintain (yet).

Runs before anything is resolved, so the message names the construct as the
user wrote it.
"""

from __future__ import annotations

from sqlglot import exp

from ..aggregates import AGGREGATES
from ..context import Context
from ..diagnostics import unsupported

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
    for node in tree.find_all(exp.Window):
        raise unsupported("window functions are not supported", node)
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
