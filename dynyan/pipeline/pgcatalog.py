"""The database side of following PostgreSQL: connections, the catalog
(tables, columns, types, and a schema for the compiler when the query
declares none), and the view to follow (a View, a module, or SQL compiled
against that schema).
"""

from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path

from . import checkpoint as _ckpt
from . import pgoutput as pgo
from ..errors import FollowError, SqlError

_CREATE_TABLE = re.compile(r"\bcreate\s+table\b", re.IGNORECASE)
_SESSION = ("SET DateStyle TO ISO", "SET extra_float_digits TO 3")


def _driver():
    """psycopg2, imported when following starts (the ``postgres`` extra)."""
    try:
        import psycopg2
        import psycopg2.extras
        import psycopg2.sql
    except ImportError:
        raise FollowError(
            "following PostgreSQL needs psycopg2: pip install 'dynyan[postgres]'"
        ) from None
    return psycopg2


# ---------------------------------------------------------------------------
# The catalog


@dataclasses.dataclass(frozen=True)
class Table:
    """A followed table: where it is, its columns, and what the view reads."""

    relation: str  # the view's name for it
    oid: int
    schema: str
    name: str
    columns: tuple[pgo.Column, ...]  # replicated columns, in table order
    view_columns: tuple[str, ...]  # the view's columns, in the view's order
    strict: bool = False  # the schema came from the catalog: any column change is DDL

    @property
    def qualified(self) -> str:
        return f"{self.schema}.{self.name}"

    def as_relation_message(self) -> pgo.RelationMessage:
        """The table as a Relation message would describe it now."""
        return pgo.RelationMessage(self.oid, self.schema, self.name, "f", self.columns)

    def read_columns(self, columns=None) -> list[int]:
        """Positions in ``columns`` (default: the table's) of the view's columns."""
        names = [c.name for c in (self.columns if columns is None else columns)]
        return [
            _column_index(names, want, self.qualified) for want in self.view_columns
        ]


def _column_index(names: list[str], want: str, table: str) -> int:
    if want in names:
        return names.index(want)
    folded = [i for i, n in enumerate(names) if n.lower() == want.lower()]
    if len(folded) == 1:
        return folded[0]
    raise FollowError(f"table {table} has no column {want} (it has {', '.join(names)})")


def query_tables(sql: str) -> list[str]:
    """The names of the tables a query reads, in order of appearance (not its
    CTEs or views; the tables a CREATE VIEW reads; no CREATE TABLE's table)."""
    import sqlglot
    from sqlglot import exp

    from ..compiler.frontend import DIALECT

    try:
        statements = sqlglot.parse(sql, read=DIALECT)
    except sqlglot.errors.SqlglotError:
        return []  # compiling reports it with its position
    bodies, derived = [], set()
    for stmt in statements:
        if stmt is None:
            continue
        if isinstance(stmt, exp.Create):
            if (stmt.kind or "").upper() == "VIEW":
                target = stmt.this
                derived.add(
                    (
                        target.this if isinstance(target, exp.Schema) else target
                    ).name.lower()
                )
                if stmt.expression is not None:
                    bodies.append(stmt.expression)
            continue
        bodies.append(stmt)
    names: list[str] = []
    for body in bodies:
        derived |= {c.alias_or_name.lower() for c in body.find_all(exp.CTE)}
    for body in bodies:
        for table in body.find_all(exp.Table):
            name = table.name.lower()
            if name and name not in derived and name not in names:
                names.append(name)
    return names


_CATALOG_TABLE = """
SELECT c.oid, n.nspname, c.relname, c.relkind, c.relreplident
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.oid = to_regclass(quote_ident(%s))
"""
_CATALOG_COLUMNS = """
SELECT attname, atttypid, atttypmod, attnotnull, attgenerated <> '',
       format_type(atttypid, atttypmod)
FROM pg_attribute
WHERE attrelid = %s AND attnum > 0 AND NOT attisdropped
ORDER BY attnum
"""
_RELKINDS = {
    "r": "table",
    "p": "partitioned table",
    "v": "view",
    "m": "materialized view",
    "f": "foreign table",
}


@dataclasses.dataclass
class _CatalogEntry:
    oid: int
    schema: str
    name: str
    relkind: str
    replident: str
    columns: list  # (name, type oid, typmod, not null, generated, type text)

    @property
    def qualified(self) -> str:
        return f"{self.schema}.{self.name}"


def _catalog_entry(cur, name: str) -> _CatalogEntry:
    cur.execute(_CATALOG_TABLE, (name,))
    found = cur.fetchone()
    if found is None:
        raise FollowError(
            f"table {name} does not exist in the database (or is not on its search_path)"
        )
    oid, schema, relname, relkind, replident = found
    if relkind != "r":
        raise FollowError(
            f"{schema}.{relname} is a {_RELKINDS.get(relkind, 'relation of kind ' + relkind)}; "
            "dynyan follow reads ordinary tables"
        )
    cur.execute(_CATALOG_COLUMNS, (oid,))
    return _CatalogEntry(oid, schema, relname, relkind, replident, cur.fetchall())


def _sql_type(type_oid: int, typmod: int) -> str | None:
    """The CREATE TABLE type dynyan compiles a PostgreSQL column as (None: unsupported)."""
    if type_oid == 21:
        return "SMALLINT"
    if type_oid == 23:
        return "INTEGER"
    if type_oid in (20, 26):
        return "BIGINT"
    if type_oid == 1700:
        if typmod >= 4:
            precision, scale = ((typmod - 4) >> 16) & 0xFFFF, (typmod - 4) & 0xFFFF
            if 0 <= scale <= precision:
                return f"DECIMAL({precision}, {scale})"
        return "DOUBLE"  # unconstrained numeric: no fixed scale to sum exactly
    if type_oid == 700:
        return "REAL"
    if type_oid == 701:
        return "DOUBLE"
    if type_oid in (25, 19):
        return "TEXT"
    if type_oid == 1043:
        return f"VARCHAR({typmod - 4})" if typmod >= 4 else "VARCHAR"
    if type_oid == 1042:
        return f"CHAR({typmod - 4})" if typmod >= 4 else "CHAR"
    if type_oid == 1082:
        return "DATE"
    if type_oid == 16:
        return "BOOLEAN"
    if type_oid == 1114:
        return "TIMESTAMP"
    if type_oid == 1184:
        return "TIMESTAMPTZ"
    if type_oid == 1083:
        return "TIME"
    return None


def schema_from_catalog(conn, sql: str) -> tuple[str, dict[str, list[str]]]:
    """CREATE TABLE statements for the tables ``sql`` reads, from the catalog.

    Columns of a type dynyan cannot hold (JSON, arrays, …) and generated
    columns (logical replication does not send them) are left out; the
    second value names them per table (``"payload jsonb"``).
    """
    statements, left_out = [], {}
    with conn.cursor() as cur:
        for name in query_tables(sql):
            entry = _catalog_entry(cur, name)
            columns, skipped = [], []
            for cname, type_oid, typmod, notnull, generated, type_text in entry.columns:
                sql_type = None if generated else _sql_type(type_oid, typmod)
                if sql_type is None:
                    skipped.append(
                        f"{cname} {type_text}{' (generated)' if generated else ''}"
                    )
                    continue
                ident = cname.replace('"', '""')
                columns.append(f'"{ident}" {sql_type}{" NOT NULL" if notnull else ""}')
            if skipped:
                left_out[name] = skipped
            if not columns:
                raise FollowError(
                    f"table {entry.qualified} has no column dynyan can hold "
                    f"({', '.join(skipped)})"
                )
            statements.append(
                f'CREATE TABLE "{name}" (\n    ' + ",\n    ".join(columns) + "\n);"
            )
    return "\n".join(statements), left_out


def _declared_types(schema_text: str | None) -> dict[str, dict[str, str]]:
    """relation -> column -> contract type, from CREATE TABLE statements."""
    if not schema_text:
        return {}
    from ..compiler.frontend import parse_schema

    return {
        name: dict(zip(rel.columns, rel.types))
        for name, rel in parse_schema(schema_text).items()
    }


# ---------------------------------------------------------------------------
# Targets: a View, a query module, or SQL


@dataclasses.dataclass
class _Target:
    view: object
    fingerprint: str
    declared: dict  # relation -> column -> type ('int', 'float', 'str', 'date')
    strict: bool  # the schema came from the catalog
    name: str


def _make_view(view_class, push: bool):
    if not push:
        return view_class()
    try:
        return view_class(push=True)
    except NotImplementedError as exc:
        raise FollowError(f"push mode: {exc}") from None


def _resolve_target(target, conn, schema, push: bool) -> _Target:
    from . import replay

    if hasattr(target, "RELATIONS") and hasattr(target, "update"):
        if isinstance(target, type):
            return _Target(
                _make_view(target, push),
                _ckpt.module_fingerprint(target),
                {},
                False,
                target.__name__,
            )
        return _Target(
            target, _ckpt.module_fingerprint(target), {}, False, type(target).__name__
        )
    if isinstance(target, replay.Query):
        return _Target(
            _make_view(target.View, push), target.fingerprint, {}, False, target.name
        )
    if hasattr(target, "View") and hasattr(target.View, "RELATIONS"):
        return _Target(
            _make_view(target.View, push),
            _ckpt.module_fingerprint(target),
            {},
            False,
            target.__name__,
        )
    if not isinstance(target, (str, os.PathLike)):
        raise FollowError(
            f"cannot follow {type(target).__name__}: give a View, a query module, "
            "a .sql file or SQL text"
        )
    text, name = str(target), "query"
    one_line = "\n" not in text
    if one_line and text.endswith(".sql"):
        from ..compiler.source import read_text

        if not Path(text).is_file():
            raise FollowError(f"query file {text} does not exist")
        text, name = read_text(text, text), Path(text).stem
    elif one_line and not re.search(r"\bselect\b", text, re.IGNORECASE):
        query = replay.load_query(text)  # a generated module: file.py or module name
        return _Target(
            _make_view(query.View, push), query.fingerprint, {}, False, query.name
        )
    schema_text = None
    if schema is not None:
        from ..compiler.source import read_text

        schema_text = (
            schema
            if _CREATE_TABLE.search(str(schema))
            else read_text(schema, f"schema {schema}")
        )
    strict, left_out = False, {}
    if schema_text is None and not _CREATE_TABLE.search(text):
        schema_text, left_out = schema_from_catalog(conn, text)
        strict = True
        _refuse_star_over_left_out(text, left_out)
    from ..compiler import compile_sql, import_source

    try:
        source = compile_sql(text, schema_text)
    except SqlError as exc:
        hint = _left_out_hint(str(exc), left_out)
        if hint:
            raise SqlError(f"{exc}; {hint}") from None
        raise
    module = import_source(source)
    declared = {} if strict else _declared_types(schema_text or text)
    return _Target(
        _make_view(module.View, push),
        _ckpt.source_fingerprint(source),
        declared,
        strict,
        name,
    )


def _refuse_star_over_left_out(sql: str, left_out: dict) -> None:
    """A ``SELECT *`` (or ``t.*``) would silently lack the left-out columns."""
    if not left_out:
        return
    import sqlglot
    from sqlglot import exp

    from ..compiler.frontend import DIALECT

    try:
        statements = sqlglot.parse(sql, read=DIALECT)
    except sqlglot.errors.SqlglotError:
        return  # compiling reports it
    stars = [
        star
        for stmt in statements
        if stmt is not None
        for star in stmt.find_all(exp.Star)
        if not isinstance(star.parent, exp.Count)
    ]
    if stars:
        listed = "; ".join(f"{t}: {', '.join(cols)}" for t, cols in left_out.items())
        raise FollowError(
            f"SELECT * would include columns dynyan cannot hold ({listed}); "
            "name the columns you want, or declare the tables with CREATE TABLE"
        )


def _left_out_hint(message: str, left_out: dict) -> str:
    for table, cols in left_out.items():
        for col in cols:
            if re.search(rf"\b{re.escape(col.split()[0])}\b", message):
                return (
                    f"{table}.{col.split()[0]} is {col.split(' ', 1)[1]}, which dynyan "
                    "cannot hold (INTEGER, DECIMAL/DOUBLE, CHAR/VARCHAR/TEXT, DATE)"
                )
    return ""


# ---------------------------------------------------------------------------
# Connections


def _connect(dsn: str, *, replication: bool = False):
    psycopg2 = _driver()
    kwargs = {}
    if replication:
        kwargs["connection_factory"] = psycopg2.extras.LogicalReplicationConnection
    try:
        conn = psycopg2.connect(dsn, **kwargs)
    except psycopg2.Error as exc:
        raise FollowError(f"cannot connect to PostgreSQL: {_pg_message(exc)}") from None
    if not replication:
        conn.autocommit = True
    with conn.cursor() as cur:
        for statement in _SESSION:
            cur.execute(statement)
    return conn


def _pg_message(exc) -> str:
    text = (getattr(exc, "pgerror", None) or str(exc) or type(exc).__name__).strip()
    return " ".join(text.split())


def _transient(exc) -> bool:
    """A connection problem worth reconnecting for (not a refusal that would repeat)."""
    psycopg2 = _driver()
    if isinstance(exc, (psycopg2.OperationalError, psycopg2.InterfaceError)):
        return True
    return getattr(exc, "pgcode", None) == "55006"  # slot still active (old walsender)
