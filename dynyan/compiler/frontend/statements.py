"""Statements: the query file's text -> declared tables, views and the one query.

A file holds CREATE TABLE statements (or they come from a separate schema
text), optionally CREATE VIEW statements (and DROP VIEW of those views, as
TPC-H Q15 is written), and exactly one query.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field, replace

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ParseError, SqlglotError, TokenError

from ...errors import SqlError, UnsupportedQueryError
from ..ir import Relation
from .diagnostics import DIALECT, sql_error, unsupported
from .duckdb_names import duckdb_name
from .passes.pivots import statement as pivot_statement

# sqlglot warns before falling back to parsing a statement it does not know
# as a raw command; we refuse such statements with our own one-line error.
logging.getLogger("sqlglot").setLevel(logging.ERROR)

# sqlglot type -> the Python type a row value has (docs/design.md, "The
# generated module").
TYPES = {
    **dict.fromkeys(
        [
            "INT",
            "BIGINT",
            "SMALLINT",
            "TINYINT",
            "UBIGINT",
            "UINT",
            "USMALLINT",
            "UTINYINT",
            "INT128",  # HUGEINT
            "UINT128",  # UHUGEINT
        ],
        "int",
    ),
    **dict.fromkeys(["DECIMAL", "DOUBLE", "FLOAT", "REAL", "BIGDECIMAL"], "float"),
    **dict.fromkeys(["CHAR", "VARCHAR", "TEXT", "NCHAR", "NVARCHAR"], "str"),
    "DATE": "date",
    "BOOLEAN": "bool",
    **dict.fromkeys(["TIMESTAMP", "TIMESTAMPNTZ", "DATETIME"], "timestamp"),
    "TIMESTAMPTZ": "timestamptz",
    "TIME": "time",
}


SUPPORTED_TYPES = (
    "supported: INTEGER, DECIMAL/DOUBLE, CHAR/VARCHAR/TEXT, DATE, TIMESTAMP, "
    "TIMESTAMPTZ, TIME, BOOLEAN"
)
# Scalar types a table may have in columns the query does not read: their
# values pass through (a strict view counts whole rows, so they must hash).
UNREAD_TYPES = {
    "TIMETZ",
    "UUID",
    "VARBINARY",
    "JSON",
    "JSONB",
    "INTERVAL",
    "BIT",
    "INET",
    "ENUM",
}
UNREAD = "unread "  # the prefix of such a column's type: "unread UUID"


@dataclass
class Program:
    """What a query file declares: its tables, its views (name -> the view's
    query with its column names applied) and the one query to maintain."""

    relations: dict[str, Relation]
    query: exp.Query
    views: dict[str, exp.Expression] = field(default_factory=dict)
    # a result column's name (lower case) -> as DuckDB spells it (`spellings`)
    spellings: dict[str, str] = field(default_factory=dict)


def read_program(sql: str, schema: str | None = None) -> Program:
    """Split `sql` (and the optional schema text) into a `Program`."""
    statements = parse_statements(sql, "the query")
    schema_statements = parse_statements(schema, "the schema") if schema else []
    relations = schema_relations(schema_statements)
    views: dict[str, exp.Expression] = {}
    queries = []
    for stmt in statements:
        stmt = _fetch_as_limit(_plain_strings(stmt))
        kind = (
            (stmt.args.get("kind") or "").upper()
            if isinstance(stmt, (exp.Create, exp.Drop))
            else ""
        )
        if isinstance(stmt, exp.Create) and kind == "TABLE":
            rel = relation(stmt)
            if rel.name in relations and relations[rel.name] != rel:
                raise sql_error(
                    f"table {rel.name} is declared twice, differently", stmt
                )
            relations[rel.name] = rel
        elif isinstance(stmt, exp.Create) and kind == "VIEW":
            name, body = _view(stmt)
            if name in views or name in relations:
                raise sql_error(f"{name} is declared twice", stmt)
            views[name] = body
        elif isinstance(stmt, exp.Drop) and kind == "VIEW":
            for table in stmt.args.get("tables") or []:
                name = table.name.lower()
                if name not in views and not stmt.args.get("exists"):
                    raise sql_error(
                        f"DROP VIEW {name}: no such view in this file", stmt
                    )
        elif isinstance(stmt, exp.Drop) and kind == "TABLE":
            for table in stmt.args.get("tables") or []:
                if table.name.lower() in relations or not stmt.args.get("exists"):
                    raise unsupported(
                        "DROP TABLE is supported as DROP TABLE IF EXISTS before "
                        "the table's CREATE TABLE (a fresh database has none)",
                        stmt,
                    )
        elif _inert(stmt, relations):
            name = stmt.this.name.lower() if isinstance(stmt, exp.Alter) else None
            for key in stmt.find_all(exp.PrimaryKey) if name else ():
                relations[name] = _with_key(relations[name], key, stmt)
        elif isinstance(stmt, exp.Query):
            queries.append(stmt)
        elif isinstance(stmt, exp.Pivot):  # DuckDB's PIVOT/UNPIVOT statements
            queries.append(pivot_statement(stmt))
        elif is_raw_create(stmt):
            raise raw_create_error(stmt)
        else:
            raise unsupported(
                "only CREATE TABLE, CREATE VIEW and one query (SELECT) are allowed "
                "(and what changes no table's rows: CREATE INDEX, ALTER TABLE … "
                "ADD CONSTRAINT, DROP TABLE IF EXISTS before CREATE TABLE)",
                stmt,
            )
    if not queries:
        raise SqlError("no SELECT statement found")
    if len(queries) > 1:
        raise unsupported(
            "the file holds several queries; write one SELECT per file", queries[1]
        )
    names = spellings([*schema_statements, *statements], queries[0])
    return Program(relations, queries[0], views, names)


def spellings(statements: list[exp.Expression], query: exp.Query) -> dict[str, str]:
    """Result column names (read in lower case everywhere) -> as DuckDB
    names them: an alias of the outermost SELECT as written, else the name
    as its definition spells it (CREATE TABLE, an alias in the query or a
    view, a derived table's column list), an unnamed expression as DuckDB
    prints it where that is sure (`duckdb_names`); a name defined in two
    spellings stays in lower case."""
    defined: dict[str, set[str]] = {}
    for stmt in statements:
        for node in stmt.find_all(exp.ColumnDef, exp.Alias, exp.TableAlias):
            if isinstance(node, exp.TableAlias):
                names = [c.name for c in node.columns]
            else:
                names = [node.alias if isinstance(node, exp.Alias) else node.name]
            for name in names:
                defined.setdefault(name.lower(), set()).add(name)
    known = {low: next(iter(s)) for low, s in defined.items() if len(s) == 1}
    outermost = query
    while isinstance(outermost, (exp.SetOperation, exp.Subquery)):
        outermost = outermost.this  # a set operation is named by its left side
    for item in outermost.expressions if isinstance(outermost, exp.Select) else ():
        if isinstance(item, exp.Alias):
            known[item.alias.lower()] = item.alias
        elif not isinstance(item, exp.Column):
            printed = duckdb_name(item)
            if printed is not None:  # an unnamed item: named by its text
                known[item.sql(dialect=DIALECT).lower()] = printed
    return known


# statements of a schema script that change neither a table's rows nor
# what the query means: indexes, schemas, sequences, comments, statistics,
# transaction brackets
_INERT_CREATES = {"INDEX", "SCHEMA", "SEQUENCE"}
_INERT_STATEMENTS = (exp.Transaction, exp.Commit, exp.Comment, exp.Analyze)


def _inert(stmt: exp.Expression, relations: dict) -> bool:
    """Whether `stmt` is one of those (skipped), or ALTER TABLE … ADD
    CONSTRAINT of a declared table (a key or a check the rows keep)."""
    if isinstance(stmt, _INERT_STATEMENTS):
        return True
    if isinstance(stmt, (exp.Create, exp.Drop)):
        kind = (stmt.args.get("kind") or "").upper()
        return kind in _INERT_CREATES and (
            isinstance(stmt, exp.Create) or kind == "INDEX"
        )
    if isinstance(stmt, exp.Alter) and (stmt.args.get("kind") or "").upper() == "TABLE":
        actions = stmt.args.get("actions") or []
        known = stmt.this.name.lower() in relations
        return (
            known
            and bool(actions)
            and all(isinstance(a, exp.AddConstraint) for a in actions)
        )
    return False


def _with_key(rel: Relation, key: exp.PrimaryKey, stmt) -> Relation:
    """`rel` with the PRIMARY KEY an ALTER TABLE … ADD adds (its columns
    NOT NULL, as SQL makes them)."""
    columns = {c.name.lower() for c in key.expressions}
    unknown = sorted(columns - set(rel.columns))
    if unknown:
        raise sql_error(
            f"PRIMARY KEY names {unknown[0]}, not a column of {rel.name}", stmt
        )
    if rel.key:
        raise sql_error(f"table {rel.name} has a PRIMARY KEY already", stmt)
    notnull = rel.notnull or (False,) * len(rel.columns)
    return replace(
        rel,
        key=tuple(c for c in rel.columns if c in columns),
        notnull=tuple(nn or c in columns for c, nn in zip(rel.columns, notnull)),
    )


def _plain_strings(stmt: exp.Expression) -> exp.Expression:
    """PostgreSQL's escape strings (`E'a\\tb'`) and dollar-quoted strings
    (`$$it's$$`), which DuckDB reads as VARCHARs, as the plain string
    literals they spell (sqlglot has read their escapes); a byte string
    stays what it is (refused later)."""
    for node in list(stmt.find_all(exp.ByteString, exp.RawString)):
        if not node.args.get("is_bytes"):
            node.replace(exp.Literal.string(node.this))
    return stmt


def _fetch_as_limit(stmt: exp.Expression) -> exp.Expression:
    """`FETCH FIRST|NEXT n ROWS ONLY` is the standard's spelling of LIMIT n:
    written as LIMIT, every later step reads one clause. PERCENT and WITH
    TIES pick rows by another rule and are refused (WITH TIES after ORDER
    BY is a rank: `_ties_as_rank`); so are they written after LIMIT
    (`LIMIT 10%`, `LIMIT n WITH TIES`)."""
    for limit in list(stmt.find_all(exp.Limit)):
        options = limit.args.get("limit_options")
        if options is None:
            continue
        if options.args.get("percent"):
            raise unsupported(
                "LIMIT … PERCENT is not supported (LIMIT n is: the first n rows "
                "of the order)",
                limit,
            )
        if options.args.get("with_ties") and not _ties_as_rank(
            limit, limit.args.get("expression")
        ):
            raise unsupported(
                "LIMIT … WITH TIES is supported after ORDER BY in a SELECT "
                "without DISTINCT or OFFSET, with a constant count",
                limit,
            )
    for fetch in list(stmt.find_all(exp.Fetch)):
        options = fetch.args.get("limit_options")
        count = fetch.args.get("count") or exp.Literal.number(1)
        if options is not None and options.args.get("with_ties"):
            if not options.args.get("percent") and _ties_as_rank(fetch, count):
                continue
            raise unsupported(
                "FETCH … PERCENT is not supported, nor FETCH … WITH TIES but "
                "after ORDER BY in a SELECT without DISTINCT, a constant count "
                "(FETCH FIRST n ROWS ONLY is: the first n rows of the order)",
                fetch,
            )
        if options is not None and options.args.get("percent"):
            raise unsupported(
                "FETCH … PERCENT is not supported (FETCH FIRST n ROWS ONLY is: the "
                "first n rows of the order)",
                fetch,
            )
        limit = exp.Limit(expression=count)
        limit.meta.update(fetch.meta)  # where the query says it, for messages
        fetch.replace(limit)
    return stmt


def _ties_as_rank(fetch: exp.Fetch | exp.Limit, count: exp.Expression) -> bool:
    """`ORDER BY k FETCH FIRST n ROWS WITH TIES` (`LIMIT n WITH TIES`): the
    rows ranked up to n, `QUALIFY RANK() OVER (ORDER BY k) <= n` with the
    ORDER BY kept (its keys by position or output name read as the SELECT
    items they name), the clause dropped. False, the query unchanged, where
    that is not the same: no ORDER BY, DISTINCT (taken after QUALIFY), a
    count that is not a constant."""
    select = fetch.parent
    order = select.args.get("order") if isinstance(select, exp.Select) else None
    if order is None or select.args.get("distinct") or select.args.get("offset"):
        return False
    if not (isinstance(count, exp.Literal) and count.is_int):
        return False
    items = {
        e.alias.lower(): e.this for e in select.expressions if isinstance(e, exp.Alias)
    }
    keys = []
    for key in order.expressions:
        value = key.this
        if isinstance(value, exp.Literal) and value.is_int:
            position = int(value.name)
            if not 1 <= position <= len(select.expressions):
                return False
            value = select.expressions[position - 1].unalias()
        elif isinstance(value, exp.Column) and not value.table:
            value = items.get(value.name.lower(), value)
        ranked_key = key.copy()
        ranked_key.set("this", value.copy())
        keys.append(ranked_key)
    ranked = exp.Window(this=exp.Rank(), order=exp.Order(expressions=keys))
    test = exp.LTE(this=ranked, expression=count.copy())
    qualify = select.args.get("qualify")
    select.set(
        "qualify",
        exp.Qualify(this=test if qualify is None else exp.and_(qualify.this, test)),
    )
    fetch.pop()
    return True


def _view(create: exp.Create) -> tuple[str, exp.Expression]:
    """A CREATE VIEW's name and query, its column list applied as aliases."""
    target = create.this
    body = create.args.get("expression")
    if not isinstance(body, exp.Query):
        raise unsupported("CREATE VIEW needs AS followed by a query", create)
    if isinstance(target, exp.Schema):
        name = target.this.name.lower()
        columns = [c.name.lower() for c in target.expressions]
        if not isinstance(body, exp.Select) or len(columns) != len(body.expressions):
            raise unsupported(
                f"view {name}: {len(columns)} column names for its query", create
            )
        body = body.copy()
        body.set(
            "expressions",
            [
                exp.alias_(e.unalias() if isinstance(e, exp.Alias) else e, c)
                for e, c in zip(body.expressions, columns)
            ],
        )
    else:
        name = target.name.lower()
    return name, body


def parse_statements(text: str, what: str) -> list[exp.Expression]:
    dialect = Dialect.get_or_raise(DIALECT)
    try:
        tokens = dialect.tokenize(text)
    except TokenError as err:
        raise token_error(err, text, what) from None
    # sqlglot skips an empty list item (`a INTEGER,, b INTEGER`); SQL does not.
    for prev, token in zip(tokens, tokens[1:]):
        if prev.token_type == token.token_type == sqlglot.TokenType.COMMA:
            raise SqlError(
                f"syntax error in {what}: two commas in a row", token.line, token.col
            )
    try:
        return [s for s in dialect.parser().parse(tokens, text) if s is not None]
    except ParseError as err:
        first = err.errors[0] if err.errors else {}
        desc = first.get("description", str(err)).split(". Line")[0]
        raise SqlError(
            f"syntax error in {what}: {_syntax_message(desc, first.get('highlight'))}",
            first.get("line"),
            first.get("col"),
        ) from None
    except SqlglotError as err:
        raise SqlError(f"cannot parse {what}: {_sql_terms(str(err))}") from None


# sqlglot node -> what the SQL writer typed, for a message about a missing part.
_SQL_NAMES = {
    "Where": "WHERE needs a condition after it",
    "Having": "HAVING needs a condition after it",
    "Not": "NOT needs a condition after it",
    "Neg": "`-` needs an expression after it",
    "Between": "BETWEEN needs both bounds: x BETWEEN low AND high",
}


def _syntax_message(desc: str, near: str | None) -> str:
    """sqlglot's parse error in SQL terms: "Required keyword: 'expression'
    missing for <class 'sqlglot.expressions.core.GT'>" names its own classes;
    the user wrote `>` and left out what follows it."""
    missing = re.fullmatch(
        r"Required keyword: '(\w+)' missing for <class '[\w.]+\.(\w+)'>", desc
    )
    if missing:
        part, name = missing.groups()
        node = getattr(exp, name, None)
        if isinstance(node, type) and issubclass(node, exp.Binary):
            op = node(this=exp.column("x"), expression=exp.column("y")).sql(DIALECT)
            op = op.removeprefix("x").removesuffix("y").strip()
            side = "right" if part == "expression" else "left"
            return f"`{op}` needs an expression on its {side}"
        if name in _SQL_NAMES:
            return _SQL_NAMES[name]
        return f"incomplete {name.upper()}" + (f" near `{near}`" if near else "")
    expected = re.fullmatch(
        r"Expected (.+?) but got <Token token_type: TokenType\.(\w+), text: (.*?), line:.*",
        desc,
        flags=re.DOTALL,
    )
    if expected:
        what, kind, found = expected.groups()
        if kind == "SENTINEL":
            return f"expected {what.lower()}, but the query ends"
        return f"expected {what.lower()}, found `{found}`"
    if desc == "Invalid expression / Unexpected token":
        return f"unexpected `{near}`" if near else "unexpected token"
    if desc.startswith("Expecting "):
        return f"expected `{desc.removeprefix('Expecting ')}`" + (
            f" near `{near}`" if near else ""
        )
    return _sql_terms(desc[:1].lower() + desc[1:])


def _sql_terms(message: str) -> str:
    """Any message of sqlglot's without its internals: a class becomes the
    name of the SQL construct, a token its text."""
    message = re.sub(r"<class '[\w.]+\.(\w+)'>", lambda m: m.group(1).upper(), message)
    return re.sub(
        r"<Token token_type: [\w.]+, text: (.*?), line:[^>]*>", r"`\1`", message
    )


def token_error(err: TokenError, text: str, what: str) -> SqlError:
    """One line with a position: sqlglot's message quotes the text around the
    fault (over several lines); its cause says "Missing ' from LINE:OFFSET"."""
    m = re.fullmatch(r"Missing (\S+) from (\d+):(\d+)", str(err.__cause__ or ""))
    if m is None:
        return SqlError(f"syntax error in {what}: cannot split it into tokens")
    quote, line, offset = m.group(1), int(m.group(2)), int(m.group(3))
    col = offset - text.rfind("\n", 0, offset)
    return SqlError(f"syntax error in {what}: no closing {quote}", line, col)


def relation(create: exp.Create) -> Relation:
    schema = create.this
    if not isinstance(schema, exp.Schema) or create.args.get("expression") is not None:
        raise unsupported(
            "only CREATE TABLE name (column type, ...) is supported", create
        )
    name = schema.this.name.lower()
    columns, types, scales, notnull, singles, bits = [], [], [], [], [], []
    key_columns: set[str] = set()  # of PRIMARY KEY (...) or a column's PRIMARY KEY
    for col in schema.expressions:
        if isinstance(col, exp.Identifier):
            raise sql_error(f"column {name}.{col.name} has no type", col)
        if not isinstance(col, exp.ColumnDef):
            # constraints such as [CONSTRAINT c] PRIMARY KEY (...)
            for key in col.find_all(exp.PrimaryKey):
                key_columns |= {k.name.lower() for k in key.expressions}
            continue
        kind = col.args.get("kind")
        type_name = kind.this.name if kind is not None else None
        serial = _SERIALS.get(kind.sql().upper()) if kind is not None else None
        if serial:  # PostgreSQL's auto-numbered INTEGER, never NULL
            kind, type_name = exp.DataType.build("INT"), "INT"
        if type_name not in TYPES and type_name not in UNREAD_TYPES:
            raise unsupported(
                f"column {name}.{col.name} has type {kind.sql() if kind else 'none'}; "
                f"{SUPPORTED_TYPES}",
                col,
            )
        collation = _collation(col)  # such a column is held, never read
        columns.append(col.name.lower())
        if type_name in TYPES and collation is None:
            types.append(TYPES[type_name])
        else:
            held = f" COLLATE {collation}" if collation else ""
            types.append(UNREAD + kind.sql(dialect="duckdb") + held)
        scales.append(declared_scale(kind))
        bits.append(serial or INTEGER_BITS.get(type_name))
        notnull.append(bool(serial) or _declared_notnull(col))
        if _single(kind):
            singles.append(len(columns) - 1)
        if any(
            isinstance(c.kind, exp.PrimaryKeyColumnConstraint) for c in col.constraints
        ):
            key_columns.add(col.name.lower())
    if not columns:
        raise sql_error(f"table {name} declares no column", create)
    if len(set(columns)) != len(columns):
        raise sql_error(f"table {name} declares a column twice", create)
    unknown = sorted(key_columns - set(columns))
    if unknown:
        raise sql_error(
            f"PRIMARY KEY names {unknown[0]}, not a column of {name}", create
        )
    notnull = [nn or c in key_columns for c, nn in zip(columns, notnull)]
    return Relation(
        name,
        tuple(columns),
        tuple(types),
        tuple(scales),
        tuple(notnull) if any(notnull) else (),
        key=tuple(c for c in columns if c in key_columns),
        singles=tuple(singles),
        bits=tuple(bits),
    )


def _single(kind: exp.DataType | None) -> bool:
    """Whether a column type is DuckDB's 4-byte float: REAL, FLOAT, FLOAT4
    and FLOAT(p) up to 24 bits (above, a DOUBLE)."""
    if kind is None or kind.this.name != "FLOAT":
        return False
    params = kind.expressions
    return not params or not params[0].name.isdigit() or int(params[0].name) <= 24


# the signed INTEGER types' widths (what << and BIT_COUNT of a column read)
INTEGER_BITS = {"TINYINT": 8, "SMALLINT": 16, "INT": 32, "BIGINT": 64, "INT128": 128}

# PostgreSQL's SERIAL types: INTEGERs numbered by a sequence
# (name -> the bits of its INTEGER type)
_SERIALS = {
    **dict.fromkeys(("SERIAL", "SERIAL4"), 32),
    **dict.fromkeys(("SERIAL2", "SMALLSERIAL"), 16),
    **dict.fromkeys(("SERIAL8", "BIGSERIAL"), 64),
}
# collations that compare strings as views do, by code point
_PLAIN_COLLATIONS = {"default", "c", "posix", "binary", "ucs_basic"}


def _collation(col: exp.ColumnDef) -> str | None:
    """A COLLATE that compares strings otherwise than by code point (NOCASE,
    a locale's order), else None: views would answer differently, so such
    a column is held only where the query does not read it."""
    for constraint in col.constraints:
        if isinstance(constraint.kind, exp.CollateColumnConstraint):
            name = constraint.kind.this.name.lower()
            if name not in _PLAIN_COLLATIONS:
                return constraint.kind.this.sql()
    return None


def collation_refusal(column: str, kind: str) -> str | None:
    """The refusal of reading `column` of unread type `kind` when a
    collation made it one (see `_collation`), else None."""
    if " COLLATE " not in kind:
        return None
    collation = kind.rsplit(" COLLATE ", 1)[1]
    return (
        f"column {column} is declared COLLATE {collation}: views compare and "
        "order strings by code point (drop COLLATE; lower() or ILIKE compare "
        "without case)"
    )


def _declared_notnull(col: exp.ColumnDef) -> bool:
    """Whether a column definition says NOT NULL or PRIMARY KEY (SQL: a key
    column is NOT NULL). sqlglot reads a bare `NULL` as a NotNull constraint
    with allow_null."""
    for constraint in col.constraints:
        kind = constraint.kind
        if isinstance(kind, exp.PrimaryKeyColumnConstraint):
            return True
        if isinstance(kind, exp.NotNullColumnConstraint) and not kind.args.get(
            "allow_null"
        ):
            return True
    return False


def declared_scale(kind: exp.DataType) -> int | None:
    """Digits after the decimal point a column holds exactly (None: inexact)."""
    name = kind.this.name
    if TYPES.get(name) in ("int", "bool"):  # a BOOLEAN sums as 0 or 1
        return 0
    if name in ("DECIMAL", "BIGDECIMAL"):
        params = kind.expressions
        return int(params[1].name) if len(params) > 1 else (3 if not params else 0)
    return None


def parse_schema(text: str) -> dict[str, Relation]:
    """Relations declared by the CREATE TABLE statements in `text`."""
    return schema_relations(parse_statements(text, "the schema"))


def schema_relations(statements: list[exp.Expression]) -> dict[str, Relation]:
    """Relations declared by the CREATE TABLE statements of a schema."""
    relations: dict[str, Relation] = {}
    for stmt in statements:
        if isinstance(stmt, exp.Create) and (stmt.kind or "").upper() == "TABLE":
            rel = relation(stmt)
            if rel.name in relations:
                raise sql_error(f"table {rel.name} is declared twice", stmt)
            relations[rel.name] = rel
        elif is_raw_create(stmt):
            raise raw_create_error(stmt)
    return relations


def is_raw_create(stmt: exp.Expression) -> bool:
    """A CREATE sqlglot could not parse (it keeps such statements as text)."""
    return isinstance(stmt, exp.Command) and stmt.name.upper() == "CREATE"


def raw_create_error(stmt: exp.Command) -> UnsupportedQueryError:
    text = " ".join(str(stmt.args.get("expression") or "").split())[:40]
    return UnsupportedQueryError(
        f"cannot read CREATE {text}: "
        "only CREATE TABLE name (column type, ...) is supported"
    )
