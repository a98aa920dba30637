"""Refuse, by name and position, what a view cannot maintain (yet).

Runs before anything is resolved, so the message names the construct as the
user wrote it.
"""

from __future__ import annotations

from sqlglot import exp

from ..aggregates import AGGREGATES
from ..context import Context
from ..diagnostics import ONLY_DISTINCT, unsupported
from .keyed_picks import PICKS
from .window_aggregates import function_refusal, in_select_list

# What to write instead of an aggregate that picks a row arbitrarily (no
# maintained view could agree with a database run after run).
_PICKS = {
    exp.Mode: "among values as frequent as each other it picks any",
}
# SELECT clauses refused wherever they appear: clause -> how to name it.
_REFUSED = {
    "windows": "WINDOW",
    "qualify": "QUALIFY without a window function",
    # other dialects' clauses, which sqlglot reads and DuckDB does not
    "connect": "CONNECT BY",
    "match": "MATCH_RECOGNIZE",
    "laterals": "LATERAL VIEW",
    "prewhere": "PREWHERE",
    "distribute": "DISTRIBUTE BY",
    "sort": "SORT BY",
    "cluster": "CLUSTER BY",
    "settings": "SETTINGS",
    "format": "FORMAT",
    "options": "OPTION",
}
# parts of SELECT clauses refused: (clause, part, message)
_REFUSED_PARTS = (
    (
        "limit",
        "expressions",
        "LIMIT … BY is not supported; QUALIFY ROW_NUMBER() OVER (PARTITION BY … "
        "ORDER BY …) <= n keeps n rows per key",
    ),
    (
        "group",
        "totals",
        "GROUP BY … WITH TOTALS is not supported; GROUP BY ROLLUP (…) adds the "
        "total row",
    ),
)
# parts of a table in FROM that read another version of it: arg -> name
_VERSIONS = {
    "version": "a table's version (AT, FOR SYSTEM_TIME)",
    "system_time": "FOR SYSTEM_TIME",
    "changes": "CHANGES",
    "when": "a table's version (AT, BEFORE)",
}


# joins that pair rows otherwise than by their values: method -> why refused
_JOIN_METHODS = {
    "ASOF": "it pairs each row with one match of the nearest value, any one "
    "among tied matches; the latest match as a value is a correlated scalar "
    "subquery, `(SELECT MAX(s.t) FROM s WHERE s.k = r.k AND s.t <= r.t)`",
    "POSITIONAL": "it pairs rows by their places in the tables, which the "
    "rows of a view do not have",
}


def check_supported(tree: exp.Expression, ctx: Context) -> exp.Expression:
    for node in tree.find_all(exp.TableSample):
        raise unsupported(
            "TABLESAMPLE (a view maintains the whole result) is not supported", node
        )
    for node in tree.find_all(exp.Join):
        method = (node.args.get("method") or "").upper()
        if node.args.get("match_condition") is not None:
            method = "ASOF"  # Snowflake's ASOF JOIN … MATCH_CONDITION (…)
        if method in _JOIN_METHODS:
            raise unsupported(
                f"{method} JOIN is not supported: {_JOIN_METHODS[method]}", node
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
        if select.args.get("kind"):  # BigQuery's SELECT AS STRUCT|VALUE
            raise unsupported(
                f"SELECT AS {select.args['kind']} is not supported", select
            )
        for clause, part, message in _REFUSED_PARTS:
            node = select.args.get(clause)
            if node is not None and node.args.get(part):
                raise unsupported(message, node)
    for node in tree.find_all(exp.Ordered):
        if node.args.get("with_fill") is not None:
            raise unsupported("ORDER BY … WITH FILL is not supported", node)
    for node in tree.find_all(exp.Table):
        for arg, what in _VERSIONS.items():
            if node.args.get(arg):
                raise unsupported(f"{what} is not supported", node)
    for select in tree.find_all(exp.Select):
        if select is not tree:
            _inner_order(select)
        distinct = select.args.get("distinct")
        if distinct is not None and distinct.args.get("on"):
            raise unsupported("DISTINCT ON is not supported", distinct)
    clocks = (exp.CurrentDate, exp.CurrentTimestamp, exp.CurrentTime)
    for node in tree.find_all(*clocks, exp.Localtimestamp, exp.Anonymous):
        if isinstance(node, exp.Anonymous) and node.name.upper() not in _CLOCKS:
            continue
        raise unsupported(
            f"{node.sql('duckdb')} is not supported: it changes while a view is "
            "maintained, so a row's fate would depend on when it came; write the "
            "date as a literal (DATE '2026-01-31')",
            node,
        )
    for node in tree.find_all(exp.AggFunc):
        if isinstance(node, PICKS):
            continue  # passes/keyed_picks: MIN where the group has one value
        why = next((w for kind, w in _PICKS.items() if isinstance(node, kind)), None)
        if why is not None:
            raise unsupported(
                f"aggregate {node.sql_name()} is not supported: {why}", node
            )
        if not isinstance(node, AGGREGATES):
            raise unsupported(
                f"aggregate {node.sql_name()} is not supported; supported: "
                "COUNT(*), COUNT(col), COUNT(DISTINCT col), SUM, SUM(DISTINCT x), "
                "AVG, AVG(DISTINCT x), MIN, MAX, ARG_MIN, ARG_MAX, VARIANCE, STDDEV, CORR, COVAR_POP, "
                "COVAR_SAMP, REGR_SLOPE (and the other REGR_*), SKEWNESS, KURTOSIS, "
                "KURTOSIS_POP, MEDIAN, QUANTILE_CONT, QUANTILE_DISC, "
                "STRING_AGG(x, sep ORDER BY x), ARRAY_AGG(x ORDER BY k), "
                "FIRST(x ORDER BY k), LAST(x ORDER BY k), BIT_AND, BIT_OR, BIT_XOR",
                node,
            )
        if isinstance(node.this, exp.Distinct) and not isinstance(
            node, (exp.Count, exp.Sum, exp.Avg, exp.GroupConcat)
        ):
            raise unsupported(ONLY_DISTINCT, node)
        outer = node.find_ancestor(exp.AggFunc, exp.Select)
        if isinstance(outer, exp.AggFunc):
            raise unsupported("nested aggregates are not supported", node)
    return tree


# the clock's functions sqlglot leaves unnamed
_CLOCKS = {"NOW", "GET_CURRENT_TIMESTAMP", "TRANSACTION_TIMESTAMP", "GET_CURRENT_TIME"}


def _specific(node: exp.Window) -> bool:
    """A window no SELECT list could hold (its function, order or frame is
    refused wherever it stands)."""
    return function_refusal(node, node.find_ancestor(exp.Select)) is not None


def _window_refusal(node: exp.Window) -> str:
    """Why a window function is refused (passes.window_aggregates takes
    aggregates over partitions or running in an order, and rankings)."""
    supported = (
        "supported: SUM, COUNT, AVG, MIN, MAX OVER ([PARTITION BY …] [ORDER BY …]), "
        "the other aggregates GROUP BY takes (MEDIAN, QUANTILE_CONT, an ordered "
        "STRING_AGG, BOOL_AND, …) OVER ([PARTITION BY …]) over whole partitions, "
        "and RANK, DENSE_RANK, PERCENT_RANK, CUME_DIST, ROW_NUMBER, NTILE, LAG, "
        "LEAD, FIRST_VALUE, LAST_VALUE, NTH_VALUE OVER ([PARTITION BY …] ORDER BY "
        "…) in the SELECT list, QUALIFY or ORDER BY (those that number or shift rows read "
        "nothing while two rows of a partition tie in the order)"
    )
    refusal = function_refusal(node, node.find_ancestor(exp.Select))
    if refusal is not None:
        return f"{refusal}; {supported}"
    if not in_select_list(node):
        return (
            "a window function outside the SELECT list, QUALIFY and ORDER BY is "
            f"not supported; {supported}"
        )
    if any(
        isinstance(e, exp.Star) or isinstance(e.this, exp.Star)
        for e in node.find_ancestor(exp.Select).expressions
    ):
        return (
            "a window function beside SELECT * with USING, NATURAL, EXCLUDE, "
            "REPLACE or RENAME is not supported (name the columns)"
        )
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
