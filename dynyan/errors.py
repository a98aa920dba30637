"""One exception family for every stage, so the CLI has a single error boundary."""

from __future__ import annotations


class DynyanError(Exception):
    """Base class of every error dynyan raises on purpose."""


class SqlError(DynyanError):
    """The SQL text could not be parsed or resolved (syntax, unknown names)."""

    def __init__(self, message: str, line: int | None = None, col: int | None = None):
        where = f"line {line}, column {col}: " if line is not None else ""
        super().__init__(where + message)
        self.line = line
        self.col = col


class UnsupportedQueryError(DynyanError):
    """The query is valid SQL, but dynyan cannot maintain it (yet)."""


class PaddedLeafUnplaced(UnsupportedQueryError):
    """No join tree holds a LEFT JOINed table as a NULL-padded leaf
    (`Atom.padded`): the query is compiled again with the table's padded
    rows as a UNION ALL (`dynyan.compiler.compile_query`)."""


class CompilerBug(DynyanError):
    """The compiler failed on a query in a way it does not mean to: a bug in
    dynyan, reported as an error of the query's compile (no traceback
    unless asked for), never as a module."""

    def __init__(self, err: BaseException):
        super().__init__(
            f"dynyan failed on this query ({type(err).__name__}: {err}): a bug in "
            "dynyan, not in the query; `dynyan --debug compile …` shows where, "
            "and the query is worth a report"
        )


class CyclicQueryError(UnsupportedQueryError):
    """The query's hypergraph is cyclic: no join tree exists."""


class PipelineError(DynyanError):
    """Data generation, stream building, replay or checkpoint problems."""


class FollowError(PipelineError):
    """Following a PostgreSQL database failed: setup (catalog, replica
    identity, slot), the connection, a change the view refuses, or DDL on a
    followed table. The view and its checkpoint stay at the last commit
    applied in full."""
