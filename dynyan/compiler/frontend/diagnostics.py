"""Errors that point at the SQL: line, column and the text at fault."""

from __future__ import annotations

import re

from sqlglot import exp

from ...errors import SqlError, UnsupportedQueryError

DIALECT = "duckdb"


def position(node: exp.Expression | None) -> tuple[int | None, int | None]:
    """Line and column of the first token of `node` that sqlglot recorded."""
    if node is None:
        return None, None
    for sub in node.walk():
        meta = getattr(sub, "meta", None) or {}
        if "line" in meta:
            return meta["line"], meta.get("col")
    return None, None


def unsupported(what: str, node: exp.Expression | None = None) -> UnsupportedQueryError:
    """A refusal naming the construct, where it is and (a prefix of) its text."""
    line, col = position(node)
    where = f"line {line}, column {col}: " if line is not None else ""
    text = f" ({node.sql(dialect=DIALECT)[:60]})" if node is not None else ""
    return UnsupportedQueryError(f"{where}{what}{text}")


def sql_error(message: str, node: exp.Expression | None = None) -> SqlError:
    return SqlError(message, *position(node))


def line_col(message: str) -> tuple[int | None, int | None]:
    """The position sqlglot writes into some of its messages."""
    m = re.search(r"Line: (\d+), Col: (\d+)", message)
    return (int(m.group(1)), int(m.group(2))) if m else (None, None)


# What a DISTINCT inside another aggregate is told (`check_supported`,
# `spread_aggregates`).
ONLY_DISTINCT = "only COUNT, SUM, AVG, MIN, MAX and STRING_AGG take DISTINCT"
