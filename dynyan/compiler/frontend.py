"""Frontend: SQL text (sqlglot) -> `dynyan.compiler.ir.Query`.

The file holds CREATE TABLE statements (or they come from a separate schema
text) and exactly one SELECT. Columns equated across atoms by `=` become one
variable; conditions on a single atom become that atom's local filters.

>>> print(parse_query(
...     "CREATE TABLE r (a INT, b INT); CREATE TABLE s (b INT, c INT);"
...     "SELECT r.a, s.c FROM r JOIN s ON r.b = s.b WHERE r.a > 3"))
SELECT a AS a, c AS c
  atom r(a, b) | (r.a > 3)
  atom s(b, c)
"""

from __future__ import annotations

import datetime
import decimal
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, replace

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import OptimizeError, ParseError, SqlglotError, TokenError
from sqlglot.optimizer.qualify import qualify

from ..errors import SqlError, UnsupportedQueryError
from .ir import (
    AggRef,
    Aggregate,
    Channel,
    COMPARISONS,
    FLIPPED,
    INFIX,
    Atom,
    Lit,
    Op,
    Output,
    Predicate,
    Query,
    Ref,
    Relation,
    Var,
    conjuncts,
    refs,
)

DIALECT = "duckdb"

# sqlglot warns before falling back to parsing a statement it does not know
# as a raw command; we refuse such statements with our own one-line error.
logging.getLogger("sqlglot").setLevel(logging.ERROR)

# sqlglot type -> the Python type a row value has (DESIGN.md §4).
TYPES = {
    **dict.fromkeys(
        ["INT", "BIGINT", "SMALLINT", "TINYINT", "UBIGINT", "UINT", "HUGEINT"], "int"
    ),
    **dict.fromkeys(["DECIMAL", "DOUBLE", "FLOAT", "REAL", "BIGDECIMAL"], "float"),
    **dict.fromkeys(["CHAR", "VARCHAR", "TEXT", "NCHAR", "NVARCHAR"], "str"),
    "DATE": "date",
}


# --- errors with positions ---------------------------------------------------


def _position(node: exp.Expression | None) -> tuple[int | None, int | None]:
    """Line and column of the first token of `node` that sqlglot recorded."""
    if node is None:
        return None, None
    for sub in node.walk():
        meta = getattr(sub, "meta", None) or {}
        if "line" in meta:
            return meta["line"], meta.get("col")
    return None, None


def _unsupported(
    what: str, node: exp.Expression | None = None
) -> UnsupportedQueryError:
    line, col = _position(node)
    where = f"line {line}, column {col}: " if line is not None else ""
    text = f" ({node.sql(dialect=DIALECT)[:60]})" if node is not None else ""
    return UnsupportedQueryError(f"{where}{what}{text}")


def _sql_error(message: str, node: exp.Expression | None = None) -> SqlError:
    return SqlError(message, *_position(node))


# --- parsing -----------------------------------------------------------------


def _parse(text: str, what: str) -> list[exp.Expression]:
    dialect = Dialect.get_or_raise(DIALECT)
    try:
        tokens = dialect.tokenize(text)
    except TokenError as err:
        raise _token_error(err, text, what) from None
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


def _token_error(err: TokenError, text: str, what: str) -> SqlError:
    """One line with a position: sqlglot's message quotes the text around the
    fault (over several lines); its cause says "Missing ' from LINE:OFFSET"."""
    m = re.fullmatch(r"Missing (\S+) from (\d+):(\d+)", str(err.__cause__ or ""))
    if m is None:
        return SqlError(f"syntax error in {what}: cannot split it into tokens")
    quote, line, offset = m.group(1), int(m.group(2)), int(m.group(3))
    col = offset - text.rfind("\n", 0, offset)
    return SqlError(f"syntax error in {what}: no closing {quote}", line, col)


def _relation(create: exp.Create) -> Relation:
    schema = create.this
    if not isinstance(schema, exp.Schema) or create.args.get("expression") is not None:
        raise _unsupported(
            "only CREATE TABLE name (column type, ...) is supported", create
        )
    name = schema.this.name.lower()
    columns, types, scales, notnull = [], [], [], []
    key_columns: set[str] = set()  # named by a table constraint PRIMARY KEY (...)
    for col in schema.expressions:
        if isinstance(col, exp.Identifier):
            raise _sql_error(f"column {name}.{col.name} has no type", col)
        if not isinstance(col, exp.ColumnDef):
            # constraints such as [CONSTRAINT c] PRIMARY KEY (...)
            for key in col.find_all(exp.PrimaryKey):
                key_columns |= {k.name.lower() for k in key.expressions}
            continue
        kind = col.args.get("kind")
        type_name = kind.this.name if kind is not None else None
        if type_name not in TYPES:
            raise _unsupported(
                f"column {name}.{col.name} has type {kind.sql() if kind else 'none'}; "
                "supported: INTEGER, DECIMAL/DOUBLE, CHAR/VARCHAR/TEXT, DATE",
                col,
            )
        columns.append(col.name.lower())
        types.append(TYPES[type_name])
        scales.append(_scale(kind))
        notnull.append(_declared_notnull(col))
    if not columns:
        raise _sql_error(f"table {name} declares no column", create)
    if len(set(columns)) != len(columns):
        raise _sql_error(f"table {name} declares a column twice", create)
    unknown = sorted(key_columns - set(columns))
    if unknown:
        raise _sql_error(
            f"PRIMARY KEY names {unknown[0]}, not a column of {name}", create
        )
    notnull = [nn or c in key_columns for c, nn in zip(columns, notnull)]
    return Relation(
        name,
        tuple(columns),
        tuple(types),
        tuple(scales),
        tuple(notnull) if any(notnull) else (),
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


def _scale(kind: exp.DataType) -> int | None:
    """Digits after the decimal point a column holds exactly (None: inexact)."""
    name = kind.this.name
    if TYPES[name] == "int":
        return 0
    if name in ("DECIMAL", "BIGDECIMAL"):
        params = kind.expressions
        return int(params[1].name) if len(params) > 1 else (3 if not params else 0)
    return None


def parse_schema(text: str) -> dict[str, Relation]:
    """Relations declared by the CREATE TABLE statements in `text`."""
    relations: dict[str, Relation] = {}
    for stmt in _parse(text, "the schema"):
        if isinstance(stmt, exp.Create) and (stmt.kind or "").upper() == "TABLE":
            rel = _relation(stmt)
            if rel.name in relations:
                raise _sql_error(f"table {rel.name} is declared twice", stmt)
            relations[rel.name] = rel
        elif _is_raw_create(stmt):
            raise _raw_create_error(stmt)
    return relations


def _is_raw_create(stmt: exp.Expression) -> bool:
    """A CREATE sqlglot could not parse (it keeps such statements as text)."""
    return isinstance(stmt, exp.Command) and stmt.name.upper() == "CREATE"


def _raw_create_error(stmt: exp.Command) -> UnsupportedQueryError:
    text = " ".join(str(stmt.args.get("expression") or "").split())[:40]
    return UnsupportedQueryError(
        f"cannot read CREATE {text}: "
        "only CREATE TABLE name (column type, ...) is supported"
    )


def parse_query(sql: str, schema: str | None = None) -> Query:
    """Parse `sql` (CREATE TABLEs + one SELECT) into a `Query`."""
    statements = _parse(sql, "the query")
    relations = parse_schema(schema) if schema else {}
    selects = []
    for stmt in statements:
        if isinstance(stmt, exp.Create) and (stmt.kind or "").upper() == "TABLE":
            rel = _relation(stmt)
            if rel.name in relations and relations[rel.name] != rel:
                raise _sql_error(
                    f"table {rel.name} is declared twice, differently", stmt
                )
            relations[rel.name] = rel
        elif isinstance(stmt, exp.Query):
            selects.append(stmt)
        elif _is_raw_create(stmt):
            raise _raw_create_error(stmt)
        else:
            raise _unsupported(
                "only CREATE TABLE statements and one SELECT are allowed", stmt
            )
    if not selects:
        raise SqlError("no SELECT statement found")
    if len(selects) > 1:
        raise _unsupported(
            "the file holds several queries; write one SELECT per file", selects[1]
        )
    return _Frontend(relations).build(selects[0])


# --- the SELECT ----------------------------------------------------------------

_UNSUPPORTED_ARGS = {
    "order": "ORDER BY (a view's result is unordered)",
    "limit": "LIMIT",
    "offset": "OFFSET",
    "with": "WITH (common table expressions)",
    "with_": "WITH (common table expressions)",  # sqlglot's newer name
    "sample": "TABLESAMPLE (a view maintains the whole result)",
    "windows": "WINDOW",
    "qualify": "QUALIFY",
}


class _Frontend:
    """Resolves one SELECT against the declared relations."""

    def __init__(self, relations: dict[str, Relation]):
        self.relations = relations
        self.aliases: dict[str, int] = {}  # alias -> atom index
        self.atom_relations: list[Relation] = []

    def build(self, select: exp.Expression) -> Query:
        if not isinstance(select, exp.Select):
            raise _unsupported(
                f"{type(select).__name__.upper()} is not supported", select
            )
        self.relations = dict(self.relations)  # subqueries add virtual relations
        self.subqueries: list[tuple[str, Query]] = []
        for arg, what in _UNSUPPORTED_ARGS.items():
            if select.args.get(arg):
                raise _unsupported(f"{what} is not supported", select.args[arg])
        for node in select.find_all(exp.TableSample):
            raise _unsupported(f"{_UNSUPPORTED_ARGS['sample']} is not supported", node)
        select = self._unnest(select.copy())
        for node in select.find_all(exp.AggFunc):
            if not isinstance(node, _AGGREGATES):
                raise _unsupported(
                    f"aggregate {node.sql_name()} is not supported; supported: "
                    "COUNT(*), COUNT(col), COUNT(DISTINCT col), SUM, AVG, MIN, MAX",
                    node,
                )
            if isinstance(node.this, exp.Distinct) and not isinstance(node, exp.Count):
                raise _unsupported("only COUNT takes DISTINCT", node)
            if node.find_ancestor(exp.AggFunc) is not None:
                raise _unsupported("nested aggregates are not supported", node)
        for node in select.find_all(exp.Window):
            raise _unsupported("window functions are not supported", node)
        for node in select.find_all(exp.Subquery, exp.Exists):
            raise _unsupported("subqueries are not supported", node)
        distinct = select.args.get("distinct")
        if distinct is not None and distinct.args.get("on"):
            raise _unsupported("DISTINCT ON is not supported", distinct)
        self._check_tables(select)
        self._check_columns(select)
        self.output_names = [
            (
                e.alias
                if isinstance(e, exp.Alias)
                else e.name if isinstance(e, exp.Column) else e.sql(dialect=DIALECT)
            )
            for e in select.expressions
        ]
        schema = {
            r.name: dict(zip(r.columns, ["INT"] * len(r.columns)))
            for r in self.relations.values()
        }
        try:
            select = qualify(
                select.copy(),
                schema=schema,
                dialect=DIALECT,
                quote_identifiers=False,
                validate_qualify_columns=True,
            )
        except OptimizeError as err:
            raise SqlError(str(err).split(". Line")[0], *_line_col(str(err))) from None
        self._collect_atoms(select)
        conditions = self._conditions(select)
        query = self._assemble(select, conditions, distinct is not None)
        return (
            replace(query, subqueries=tuple(self.subqueries))
            if self.subqueries
            else query
        )

    # -- subqueries become inner views whose results are virtual relations --

    def _virtual(self, inner: exp.Select, prefix: str, renames=()) -> tuple[str, Query]:
        """Compile `inner` as its own query and declare its result as a
        relation the outer query can join (columns renamed by `renames`)."""
        query = _Frontend(self.relations).build(inner)
        name = f"{prefix}{len(self.subqueries) + 1}"
        while name in self.relations:
            name += "_"
        columns = tuple(o.name for o in query.outputs)
        if renames:
            if len(renames) != len(columns):
                raise _unsupported(
                    f"{len(renames)} column names for {len(columns)} columns", inner
                )
            columns = tuple(renames)
        if len(set(columns)) != len(columns):
            raise _unsupported(
                "a subquery's columns need distinct names (use aliases)", inner
            )
        types = tuple(_output_type(query, o.expr) for o in query.outputs)
        scales = tuple(0 if t == "int" else None for t in types)
        self.relations[name] = Relation(name, columns, types, scales)
        self.subqueries.append((name, query))
        return name, query

    def _unnest(self, select: exp.Select) -> exp.Select:
        """Derived tables, IN (SELECT …) and correlated EXISTS (SELECT …) as
        joins with virtual relations (DESIGN.md: inner views feeding outer)."""
        from_ = select.args.get("from_") or select.args.get("from")
        sources = ([from_] if from_ is not None else []) + list(
            select.args.get("joins") or []
        )
        for holder in sources:
            sub = holder.this
            if isinstance(sub, exp.Subquery):
                if not isinstance(sub.this, exp.Select):
                    raise _unsupported(
                        "only SELECT subqueries are supported in FROM", sub
                    )
                alias = sub.alias or f"sub{len(self.subqueries) + 1}"
                renames = [
                    c.name.lower()
                    for c in (
                        sub.args["alias"].columns if sub.args.get("alias") else []
                    )
                ]
                name, _ = self._virtual(sub.this, "derived", renames)
                holder.set("this", exp.table_(name, alias=alias))
        where = select.args.get("where")
        if where is None:
            return select
        for node in list(where.find_all(exp.In, exp.Exists)):
            if isinstance(node, exp.In) and node.args.get("query") is None:
                continue  # IN (list of literals): a plain filter
            parent = node.parent
            negated = isinstance(parent, exp.Not)
            anchor = parent if negated else node
            if not _in_conjunction(anchor, where):
                raise _unsupported(
                    "a subquery condition must be a conjunct of WHERE", anchor
                )
            if isinstance(node, exp.In):
                query = node.args.get("query")
                if query is None:
                    continue  # IN (list of literals)
                inner = query.this if isinstance(query, exp.Subquery) else query
                if not isinstance(inner, exp.Select) or len(inner.expressions) != 1:
                    raise _unsupported("IN (SELECT …) must select one column", node)
                inner = inner.copy()
                inner.set("expressions", [exp.alias_(inner.expressions[0], "k1")])
                grouped = _is_grouped(inner)
                if not grouped:
                    inner.set("distinct", exp.Distinct())  # IN never multiplies rows
                alias = f"in{len(self.subqueries) + 1}"
                name, sub = self._virtual(inner, "in_")
                if grouped and sub.outputs[0].expr not in [
                    Var(v) for v in sub.group_vars
                ]:
                    raise _unsupported(
                        "IN (SELECT … GROUP BY …) must select a GROUP BY column", node
                    )
                outer_cols = [node.this.copy()]
                condition = exp.EQ(
                    this=node.this.copy(), expression=exp.column("k1", table=alias)
                )
            else:
                inner, pairs = self._decorrelate(node.this, select)
                alias = f"exists{len(self.subqueries) + 1}"
                name, _ = self._virtual(inner, "exists_")
                outer_cols = pairs
                condition = exp.and_(
                    *[
                        exp.EQ(
                            this=outer, expression=exp.column(f"k{i + 1}", table=alias)
                        )
                        for i, outer in enumerate(pairs)
                    ]
                )
            if negated:
                # Anti-join: a filter "key not in the inner result" on the one
                # table the key columns belong to (DESIGN: inner views feed
                # the outer query); no join with the inner result.
                if not all(isinstance(c, exp.Column) for c in outer_cols):
                    raise _unsupported("NOT IN needs a column on its left", anchor)
                anchor.replace(
                    exp.Anonymous(this=f"{_ANTI}{name}", expressions=outer_cols)
                )
                continue
            select = select.join(
                exp.table_(name, alias=alias), join_type="cross", copy=False
            )
            anchor.replace(condition)
        return select

    def _decorrelate(self, inner, outer_select) -> tuple[exp.Select, list]:
        """EXISTS (SELECT … WHERE inner = outer AND …) -> SELECT DISTINCT inner
        columns … without the correlation, and the outer columns to join on."""
        if not isinstance(inner, exp.Select):
            raise _unsupported("EXISTS needs a SELECT", inner)
        inner = inner.copy()
        inner_tables = {
            (t.alias or t.name).lower(): t.name.lower()
            for t in inner.find_all(exp.Table)
        }

        def is_inner(col: exp.Column) -> bool:
            if col.table:
                return col.table.lower() in inner_tables
            return any(
                col.name.lower() in self.relations[t].columns
                for t in inner_tables.values()
                if t in self.relations
            )

        where = inner.args.get("where")
        keep, pairs, inner_cols = [], [], []
        for cond in (
            where.this.flatten()
            if where is not None and isinstance(where.this, exp.And)
            else [where.this] if where is not None else []
        ):
            cols = list(cond.find_all(exp.Column))
            outer = [c for c in cols if not is_inner(c)]
            if not outer:
                keep.append(cond)
                continue
            if (
                isinstance(cond, exp.EQ)
                and isinstance(cond.this, exp.Column)
                and isinstance(cond.expression, exp.Column)
                and len(outer) == 1
            ):
                inside = cond.this if is_inner(cond.this) else cond.expression
                pairs.append(outer[0].copy())
                inner_cols.append(inside.copy())
                continue
            raise _unsupported(
                "EXISTS may refer to the outer query only by column = column", cond
            )
        if not pairs:
            raise _unsupported("uncorrelated EXISTS is not supported", inner)
        inner.set(
            "expressions",
            [exp.alias_(c, f"k{i + 1}") for i, c in enumerate(inner_cols)],
        )
        inner.set("distinct", exp.Distinct())
        inner.set("where", exp.Where(this=exp.and_(*keep)) if keep else None)
        return inner, pairs

    # -- checks that give better messages than qualify would --

    def _check_tables(self, select: exp.Select) -> None:
        seen = set()
        for table in select.find_all(exp.Table):
            # A schema-qualified name (other.r) is not a declared table.
            if table.name.lower() not in self.relations or table.args.get("db"):
                name = ".".join(part.name for part in table.parts)
                if not self.relations:
                    raise _sql_error(
                        f"unknown table {name}: no table is declared; put its "
                        "CREATE TABLE in the query file, or name a schema file "
                        "with --schema FILE or a `-- schema: PATH` line",
                        table,
                    )
                known = ", ".join(sorted(self.relations))
                raise _sql_error(
                    f"unknown table {name} (declared tables: {known})", table
                )
            alias = (table.alias or table.name).lower()
            if alias in seen and not table.alias:
                raise _sql_error(
                    f"table {alias} appears twice in FROM: give each an alias "
                    f"(FROM {alias} {alias}1, {alias} {alias}2)",
                    table,
                )
            seen.add(alias)

    def _check_columns(self, select: exp.Select) -> None:
        tables: dict[str, str] = {}
        for table in select.find_all(exp.Table):
            tables[(table.alias or table.name).lower()] = table.name.lower()
        for col in select.find_all(exp.Column):
            if isinstance(col.this, exp.Star):
                continue
            name = col.name.lower()
            if col.table:
                rel = tables.get(col.table.lower())
                if rel is None:
                    raise _sql_error(
                        f"unknown table or alias {col.table} in {col.sql()}", col
                    )
                if name not in self.relations[rel].columns:
                    raise _sql_error(f"table {rel} has no column {name}", col)
                continue
            owners = sorted(
                {a for a, r in tables.items() if name in self.relations[r].columns}
            )
            if not owners and not self._is_select_alias(select, name):
                raise _sql_error(f"unknown column {name}", col)
            if len(owners) > 1:
                raise _sql_error(
                    f"ambiguous column {name} (in {', '.join(owners)}); qualify it", col
                )

    @staticmethod
    def _is_select_alias(select: exp.Select, name: str) -> bool:
        return any(
            e.alias_or_name.lower() == name
            for e in select.expressions
            if isinstance(e, exp.Alias)
        )

    # -- FROM and JOIN --

    def _collect_atoms(self, select: exp.Select) -> None:
        from_ = select.args.get("from_") or select.args.get("from")
        if from_ is None:
            raise _unsupported("a SELECT without FROM is not supported", select)
        sources = [from_.this]
        for join in select.args.get("joins") or []:
            side, kind = (join.side or "").upper(), (join.kind or "").upper()
            if side or kind not in ("", "INNER", "CROSS"):
                raise _unsupported(
                    f"{side or kind} JOIN is not supported (inner joins only)", join
                )
            if join.args.get("using"):
                raise _unsupported("JOIN … USING is not supported; write ON", join)
            sources.append(join.this)
        for source in sources:
            if not isinstance(source, exp.Table):
                raise _unsupported("only tables may appear in FROM", source)
            alias = (source.alias or source.name).lower()
            if alias in self.aliases:
                raise _sql_error(f"alias {alias} is used twice in FROM", source)
            self.aliases[alias] = len(self.atom_relations)
            self.atom_relations.append(self.relations[source.name.lower()])

    def _conditions(self, select: exp.Select) -> list:
        conds = []
        where = select.args.get("where")
        if where is not None:
            conds.append(self.condition(where.this))
        for join in select.args.get("joins") or []:
            if join.args.get("on") is not None:
                conds.append(self.condition(join.args["on"]))
        return [c for cond in conds for c in conjuncts(cond)]

    # -- expressions --

    def expr(self, node: exp.Expression):
        convert = _CONVERTERS.get(type(node))
        if convert is None:
            if isinstance(node, exp.AggFunc):
                raise _unsupported(
                    "an aggregate is not allowed in WHERE, ON or GROUP BY "
                    "(filter groups with HAVING)",
                    node,
                )
            raise _unsupported(
                f"{type(node).__name__} expressions are not supported", node
            )
        ir = convert(self, node)
        if isinstance(ir, Op):
            _typed(self.type_of, ir, node)
        return ir

    def condition(self, node: exp.Expression):
        """`expr(node)` for a WHERE, ON or HAVING condition, which must be
        true or false (DuckDB also reads a number as one, not a string)."""
        ir = self.expr(node)
        _check_condition(self.type_of(ir), ir, node)
        return ir

    def column(self, node: exp.Column) -> Ref:
        atom = self.aliases[node.table.lower()]
        rel = self.atom_relations[atom]
        name = node.name.lower()
        return Ref(atom, rel.columns.index(name), f"{node.table.lower()}.{name}")

    def type_of(self, e) -> str | None:
        """The Python type of an expression's value (None for NULL); raises
        `_ExprError` for operands that do not fit (see `_op_type`)."""
        return _type(e, self._leaf_type)

    def _leaf_type(self, e) -> str | None:
        if isinstance(e, Ref):
            return self.atom_relations[e.atom].types[e.column]
        return _lit_type(e)

    # -- assembling the GCQ --

    def _assemble(self, select: exp.Select, conditions: list, distinct: bool) -> Query:
        n = len(self.atom_relations)
        local: list[list] = [[] for _ in range(n)]
        join_pairs: list[tuple[Ref, Ref]] = []
        theta: list = []
        for cond in conditions:
            atoms = sorted({r.atom for r in refs(cond)})
            if len(atoms) <= 1:
                local[atoms[0] if atoms else 0].append(cond)
            elif (
                isinstance(cond, Op)
                and cond.op == "eq"
                and all(isinstance(a, Ref) for a in cond.args)
            ):
                join_pairs.append(cond.args)
            else:
                theta.append(cond)

        # Variables: equivalence classes of columns equated across atoms.
        parent: dict[tuple[int, int], tuple[int, int]] = {}

        def find(k):
            while parent.get(k, k) != k:
                k = parent[k]
            return k

        for a, b in join_pairs:
            ra, rb = find((a.atom, a.column)), find((b.atom, b.column))
            if ra != rb:
                parent[max(ra, rb)] = min(ra, rb)

        grouping = _Grouping(self, select) if _is_grouped(select) else None
        outputs_sql = select.expressions
        if grouping is None:
            converted = [self.expr(e.unalias()) for e in outputs_sql]
            output_refs = [r for ir in converted for r in refs(ir)]
        else:
            converted = [grouping.convert(e.unalias()) for e in outputs_sql]
            having = select.args.get("having")
            having = grouping.condition(having.this) if having is not None else None
            output_refs = grouping.column_keys()
        theta_refs = [r for c in theta for r in refs(c)]
        used = {(a.atom, a.column) for p in join_pairs for a in p}
        used |= {(r.atom, r.column) for r in output_refs + theta_refs}

        classes: dict[tuple[int, int], list[tuple[int, int]]] = {}
        for key in sorted(used):
            classes.setdefault(find(key), []).append(key)
        names = self._var_names(classes)
        var_of = {m: names[root] for root, members in classes.items() for m in members}
        derived = grouping.derived_vars(set(var_of.values())) if grouping else {}

        predicates, residual = [], []
        for cond in theta:
            pred = self._predicate(cond, var_of)
            cond_vars = (
                pred.vars if pred else {var_of[(r.atom, r.column)] for r in refs(cond)}
            )
            home = next(
                (
                    i
                    for i in range(n)
                    if cond_vars <= {v for (a, _), v in var_of.items() if a == i}
                ),
                None,
            )
            if home is not None:  # every variable lives in one atom: a local filter
                local[home].append(self._localize(cond, home, var_of))
            elif pred is not None:
                predicates.append(pred)
            else:  # fits no tree edge: checked on each row of the widened result
                residual.append(_to_vars(cond, var_of))

        atoms = []
        for i, rel in enumerate(self.atom_relations):
            alias = next(a for a, j in self.aliases.items() if j == i)
            variables = tuple(var_of.get((i, c)) for c in range(len(rel.columns)))
            filters = list(local[i])
            # A variable bound twice in one atom means those columns must be equal.
            first: dict[str, int] = {}
            for c, v in enumerate(variables):
                if v is None:
                    continue
                if v in first:
                    filters.append(Op("eq", (self._ref(i, first[v]), self._ref(i, c))))
                else:
                    first[v] = c
            for f in filters:
                self._check_types(f)
            mine = tuple((v, e) for v, (a, e) in derived.items() if a == i)
            atoms.append(Atom(alias, rel.name, variables, tuple(filters), mine))

        if grouping is not None:
            # SQL NULL: columns no taken row holds a NULL in (declared NOT
            # NULL; NULL never joins nor satisfies a comparison).
            nonnull = {(r.atom, r.column) for p in join_pairs for r in p}
            nonnull |= {  # declared NOT NULL (the module refuses a None there)
                (i, c)
                for i, rel in enumerate(self.atom_relations)
                for c in range(len(rel.columns))
                if rel.is_notnull(c)
            }
            nonnull |= {
                key for key, v in var_of.items() if any(v in p.vars for p in predicates)
            }
            for i, atom in enumerate(atoms):
                for f in atom.filters:
                    nonnull |= _nonnull_leaves(f)
            grouping.finish(nonnull)
        group_names = grouping.key_names(var_of, derived) if grouping else {}
        outputs = []
        names_ = self.output_names if len(self.output_names) == len(outputs_sql) else []
        for k, (e, ir) in enumerate(zip(outputs_sql, converted)):
            name = (
                names_[k]
                if names_ and not names_[k].startswith("*")
                else e.alias_or_name
            )
            outputs.append(Output(name.lower(), _to_vars(ir, var_of, group_names)))

        relations = tuple(dict.fromkeys(self.atom_relations))
        extra = {}
        if grouping is not None:
            if having is not None:
                having = _to_vars(having, var_of, group_names)
            args = grouping.arg_names(var_of, derived)
            extra = dict(
                grouped=True,
                group_vars=tuple(dict.fromkeys(group_names.values())),
                channels=tuple(grouping.channels),
                aggregates=tuple(
                    replace(a, arg=args[a.arg]) if a.arg else a
                    for a in grouping.aggregates
                ),
                having=having,
            )
        return Query(
            relations,
            tuple(atoms),
            tuple(predicates),
            tuple(outputs),
            distinct,
            select.sql(dialect=DIALECT, pretty=True),
            residual=tuple(residual),
            **extra,
        )

    def _ref(self, atom: int, column: int) -> Ref:
        alias = next(a for a, j in self.aliases.items() if j == atom)
        return Ref(atom, column, f"{alias}.{self.atom_relations[atom].columns[column]}")

    def _var_names(self, classes) -> dict:
        """Name each variable after its first column; qualify names that collide."""
        names: dict = {}
        taken: set[str] = set()
        for root in sorted(classes):
            atom, column = root
            base = self.atom_relations[atom].columns[column]
            name = base
            if name in taken:
                alias = next(a for a, j in self.aliases.items() if j == atom)
                name = f"{alias}_{base}"
            k = 2
            while name in taken:
                name, k = f"{base}_{k}", k + 1
            taken.add(name)
            names[root] = name
        return names

    def _check_types(self, e) -> None:
        """Refuse operands that do not fit, e.g. values Python cannot compare
        (`expr` has checked every converted expression already)."""
        self.type_of(e)

    def _predicate(self, cond, var_of) -> Predicate | None:
        """`a op b ± k` across two tables (op one of <> < <= > >=), in the
        normal form of Predicate; None for other conditions (OR, expressions),
        which fit no edge."""
        self._check_types(cond)
        if not isinstance(cond, Op) or cond.op not in COMPARISONS:
            return None
        sides = [_affine(a) for a in cond.args]
        if cond.op == "eq" or None in sides:
            return None
        (left, k_left), (right, k_right) = sides
        return Predicate(
            var_of[(left.atom, left.column)],
            cond.op,
            var_of[(right.atom, right.column)],
            k_right - k_left,
        )

    def _localize(self, cond, home: int, var_of):
        """`cond` over the columns of atom `home` that hold its variables."""
        cols = {v: c for (a, c), v in sorted(var_of.items()) if a == home}
        if isinstance(cond, Ref):
            return self._ref(home, cols[var_of[(cond.atom, cond.column)]])
        if isinstance(cond, Op):
            return Op(
                cond.op, tuple(self._localize(a, home, var_of) for a in cond.args)
            )
        return cond


def _affine(e) -> tuple[Ref, int | float] | None:
    """`column`, `column ± constant` or `constant + column` as (column, constant)."""
    if isinstance(e, Ref):
        return e, 0
    if isinstance(e, Op) and e.op in ("add", "sub") and len(e.args) == 2:
        a, b = e.args
        number = (int, float)
        if isinstance(a, Ref) and isinstance(b, Lit) and isinstance(b.value, number):
            return a, b.value if e.op == "add" else -b.value
        if (
            e.op == "add"
            and isinstance(b, Ref)
            and isinstance(a, Lit)
            and isinstance(a.value, number)
        ):
            return b, a.value
    return None


def _line_col(message: str) -> tuple[int | None, int | None]:
    m = re.search(r"Line: (\d+), Col: (\d+)", message)
    return (int(m.group(1)), int(m.group(2))) if m else (None, None)


def _to_vars(e, var_of, group_names=None):
    """Rewrite column references (and group-key placeholders) into variables."""
    if isinstance(e, Ref):
        return Var(var_of[(e.atom, e.column)])
    if isinstance(e, _GroupKey):
        return Var(group_names[e.index])
    if isinstance(e, Op):
        return Op(e.op, tuple(_to_vars(a, var_of, group_names) for a in e.args))
    return e


_ANTI = "dynyan_anti__"  # marks an anti-join filter through qualification


def _anti(fe, node: exp.Anonymous):
    name = node.name
    if not name.lower().startswith(_ANTI):
        raise _unsupported(f"function {name} is not supported", node)
    cols = [fe.expr(c) for c in node.expressions]
    return Op("anti", (Lit(name[len(_ANTI) :].lower()), *cols))


def _in_conjunction(node: exp.Expression, where: exp.Where) -> bool:
    """Whether `node` is reached from WHERE through ANDs (and parentheses) only."""
    up = node.parent
    while up is not where:
        if not isinstance(up, (exp.And, exp.Paren)):
            return False
        up = up.parent
    return True


def _output_type(query: Query, expr) -> str:
    """The type of a subquery's output column, for the relation it becomes."""

    def column_type(atom: Atom, e) -> str | None:
        rel = query.relation(atom.relation)
        return rel.types[e.column] if isinstance(e, Ref) else _lit_type(e)

    def leaf(e) -> str | None:
        if isinstance(e, Var):
            for atom in query.atoms:
                rel = query.relation(atom.relation)
                for column, var in enumerate(atom.variables):
                    if var == e.name:
                        return rel.types[column]
                for var, derived in atom.derived:  # EXTRACT(…), SUBSTRING(…)
                    if var == e.name:
                        return _type(derived, lambda x: column_type(atom, x))
            return None
        if isinstance(e, AggRef):
            agg = query.aggregates[e.index]
            if agg.kind in ("count", "count_distinct"):
                return "int"
            if agg.kind in ("min", "max"):
                return leaf(Var(agg.arg))
            scales = [query.channels[c - 1].scale if c else 0 for _, c in agg.terms]
            exact_ints = all(sc == 0 for sc in scales) and all(
                isinstance(k, int) for k, _ in agg.terms
            )
            return "int" if exact_ints and agg.kind == "sum" else "float"
        return _lit_type(e)

    return _type(expr, leaf) or "float"  # NULL: any type


# --- GROUP BY and aggregates -------------------------------------------------

_AGGREGATES = (exp.Count, exp.Sum, exp.Avg, exp.Min, exp.Max)


def _is_grouped(select: exp.Select) -> bool:
    """GROUP BY, an aggregate in SELECT, or HAVING (SQL groups the whole
    input then: `SELECT a FROM r HAVING …` is refused as `a` is not grouped)."""
    return any(select.args.get(arg) for arg in ("group", "having")) or any(
        e.find(exp.AggFunc) for e in select.expressions
    )


@dataclass(frozen=True)
class _GroupKey:
    """Placeholder for GROUP BY item `index` until variables are named."""

    index: int

    def __str__(self) -> str:
        return f"group{self.index}"


class _Grouping:
    """Converts a grouped SELECT: group keys become variables (derived ones
    computed at their atom's leaf), aggregates become payload channels."""

    def __init__(self, fe: "_Frontend", select: exp.Select):
        self.fe = fe
        group = select.args.get("group")
        items = group.expressions if group is not None else []
        self.keys = [fe.expr(item) for item in items]
        for key, item in zip(self.keys, items):
            atoms = {r.atom for r in refs(key)}
            if len(atoms) != 1:
                raise _unsupported(
                    "a GROUP BY item must read columns of exactly one table", item
                )
        self.channels: list[Channel] = []
        self.aggregates: list[Aggregate] = []
        self.args: list = []  # arguments of MIN/MAX/COUNT(DISTINCT)
        # Per aggregate: its argument as a sum of products of per-atom
        # factors (None for COUNT(*), MIN, MAX, COUNT(DISTINCT)), its node.
        self.polys: list = []

    def column_keys(self) -> list[Ref]:
        return [k for k in self.keys + self.args if isinstance(k, Ref)]

    def derived_vars(self, taken: set[str]) -> dict[str, tuple[int, object]]:
        """Variables for expression keys and arguments: name -> (atom, expression)."""
        out = {}
        items = [(f"group{i + 1}", k) for i, k in enumerate(self.keys)]
        items += [(f"arg{i + 1}", a) for i, a in enumerate(self.args)]
        seen = []
        for base, key in items:
            if isinstance(key, Ref) or key in seen:
                continue
            seen.append(key)
            name, k = base, 2
            while name in taken or name in out:
                name, k = f"{base}_{k}", k + 1
            out[name] = (refs(key)[0].atom, key)
        return out

    def arg_names(self, var_of, derived) -> dict[str, str]:
        """Placeholder "#argI" -> the variable of MIN/MAX/COUNT(DISTINCT) argument I."""
        by_expr = {repr(e): v for v, (_, e) in derived.items()}
        return {
            f"#arg{i}": (
                var_of[(a.atom, a.column)] if isinstance(a, Ref) else by_expr[repr(a)]
            )
            for i, a in enumerate(self.args)
        }

    def key_names(self, var_of, derived) -> dict[int, str]:
        by_expr = {repr(e): v for v, (_, e) in derived.items()}
        names = {}
        for i, key in enumerate(self.keys):
            if isinstance(key, Ref):
                names[i] = var_of[(key.atom, key.column)]
            else:
                names[i] = by_expr[repr(key)]
        return names

    def convert(self, node: exp.Expression):
        """An output or HAVING expression over group keys and aggregates."""
        if isinstance(node, exp.AggFunc):
            return self._aggregate(node)
        if not node.find(exp.AggFunc):
            ir = self.fe.expr(node)
            for i, key in enumerate(self.keys):
                if ir == key:
                    return _GroupKey(i)
            if not refs(ir):
                return ir
            if isinstance(node, exp.Column):
                raise _sql_error(
                    f"column {node.sql()} must appear in GROUP BY or in an aggregate",
                    node,
                )
        convert = _GROUPED_CONVERTERS.get(type(node))
        if convert is None:
            raise _unsupported(
                f"{type(node).__name__} is not supported around aggregates", node
            )
        ir = convert(self, node)
        _typed(self.type_of, ir, node)
        return ir

    def condition(self, node: exp.Expression):
        """The HAVING condition: true or false, as in WHERE."""
        ir = self.convert(node)
        _check_condition(self.type_of(ir), ir, node)
        return ir

    def type_of(self, e) -> str | None:
        return _type(e, self._leaf_type)

    def _leaf_type(self, e) -> str | None:
        if isinstance(e, _GroupKey):
            return self.fe.type_of(self.keys[e.index])
        if isinstance(e, AggRef):
            agg = self.aggregates[e.index]
            if agg.kind in ("min", "max"):
                return self.fe.type_of(self.args[int(agg.arg.removeprefix("#arg"))])
            return "int" if agg.kind in ("count", "count_distinct") else "float"
        return self.fe._leaf_type(e)

    def _aggregate(self, node: exp.AggFunc) -> AggRef:
        text = node.sql(dialect=DIALECT)
        distinct = isinstance(node.this, exp.Distinct)
        if isinstance(node, (exp.Min, exp.Max)) or distinct:
            arg_node = node.this.expressions[0] if distinct else node.this
            if distinct and len(node.this.expressions) != 1:
                raise _unsupported("COUNT(DISTINCT …) takes one expression", node)
            arg = self.fe.expr(arg_node)
            if len({r.atom for r in refs(arg)}) != 1:
                raise _unsupported(
                    f"{node.sql_name()} must read columns of one table", node
                )
            if arg not in self.args:
                self.args.append(arg)
            kind = "count_distinct" if distinct else node.sql_name().lower()
            aggregate = Aggregate(kind, (), text, f"#arg{self.args.index(arg)}")
            if aggregate not in self.aggregates:
                self.aggregates.append(aggregate)
                self.polys.append((None, node))
            return AggRef(self.aggregates.index(aggregate), text)
        if isinstance(node, exp.Count):
            kind = "count"
            if isinstance(node.this, exp.Star) or node.this is None:
                poly = None  # COUNT(*): every row
            else:  # COUNT(x): the rows whose x is not NULL
                arg = self.fe.expr(node.this)
                if isinstance(arg, Lit) and arg.value is None:
                    raise _unsupported("COUNT(NULL) is not supported", node)
                poly = [(1, _split_by_atom(arg, node))]
        else:
            arg = self.fe.expr(node.this)
            if self.fe.type_of(arg) not in ("int", "float", "bool"):
                raise _unsupported(f"{node.sql_name()} needs a numeric argument", node)
            poly = _poly(arg, node)
            kind = "sum" if isinstance(node, exp.Sum) else "avg"
        # Terms and channels are made by `finish`, once it is known which
        # columns can hold a NULL.
        aggregate = Aggregate(kind, ((1, 0),) if poly is None else (), text)
        if aggregate not in self.aggregates:
            self.aggregates.append(aggregate)
            self.polys.append((poly, node))
        return AggRef(self.aggregates.index(aggregate), text)

    def finish(self, nonnull: set[tuple[int, int]]) -> None:
        """Make the payload channels of COUNT/SUM/AVG, following SQL's NULL
        rules: a row whose argument is NULL is left out (its factors are 0 and
        a channel counts the rest); `nonnull`: the (atom, column) pairs that
        hold no NULL in any row the query takes (join columns, columns a
        filter compares), whose arguments pay nothing for this."""
        for i, (poly, node) in enumerate(self.polys):
            agg = self.aggregates[i]
            if poly is None or agg.kind not in ("count", "sum", "avg"):
                continue
            guards: dict[int, list] = {}
            for _, factors in poly:
                for atom, e in factors.items():
                    if _may_be_null(e, nonnull):
                        _check_null_safe(e, nonnull, node)
                        if e not in guards.setdefault(atom, []):
                            guards[atom].append(e)
            guard = tuple((a, tuple(es)) for a, es in sorted(guards.items()))
            nn = self._channel({}, guard)
            if agg.kind == "count":
                terms = ((1, nn),)
            else:
                terms = tuple((c, self._channel(f, guard)) for c, f in poly)
            self.aggregates[i] = replace(agg, terms=terms, nonnull=nn)

    def _channel(self, factors: dict, guards: tuple = ()) -> int:
        if not factors and not guards:
            return 0
        factor_items = tuple(sorted(factors.items()))
        scales = [self._exact_scale(e) for _, e in factor_items]
        if None in scales:
            scales = [None] * len(scales)
        channel = Channel(factor_items, tuple(scales), guards)
        if channel not in self.channels:
            self.channels.append(channel)
        return self.channels.index(channel) + 1

    def _exact_scale(self, e) -> int | None:
        """Decimal digits of an exact value of `e`, None if it may be inexact."""
        if isinstance(e, Ref):
            rel = self.fe.atom_relations[e.atom]
            return rel.scales[e.column] if rel.scales else None
        if isinstance(e, Lit):
            if isinstance(e.value, bool) or isinstance(e.value, int):
                return 0
            if isinstance(e.value, float):
                text = repr(e.value)
                if "e" in text or "inf" in text or "nan" in text:
                    return None
                digits = text.split(".")[1].rstrip("0") if "." in text else ""
                return len(digits)
            return None
        if e.op in ("add", "sub"):
            parts = [self._exact_scale(a) for a in e.args]
            return None if None in parts else max(parts)
        if e.op == "mul":
            parts = [self._exact_scale(a) for a in e.args]
            return None if None in parts else sum(parts)
        if e.op == "neg":
            return self._exact_scale(e.args[0])
        if e.op == "case":
            parts = [self._exact_scale(a) for a in e.args[1::2]] + [
                self._exact_scale(e.args[-1])
            ]
            parts = [
                p
                for p, a in zip(parts, e.args[1::2] + (e.args[-1],))
                if not (isinstance(a, Lit) and a.value is None)
            ]
            return None if None in parts or not parts else max(parts)
        return None


def _split_by_atom(e, node) -> dict:
    """COUNT(e)'s argument as per-atom parts that are NULL exactly when one of
    them is (`e` itself when it reads one table)."""
    atoms = {r.atom for r in refs(e)}
    if len(atoms) <= 1:
        return {atoms.pop(): e} if atoms else {}
    if any(
        isinstance(x, Op) and x.op in ("case", "and", "or", "not", "anti")
        for x in _subexpressions(e)
    ):
        raise _unsupported(
            "COUNT of an expression over several tables must be NULL-strict "
            "(no CASE, AND, OR, NOT)",
            node,
        )
    out: dict = {}
    for r in refs(e):
        out.setdefault(r.atom, [])
        if r not in out[r.atom]:
            out[r.atom].append(r)
    # One factor per atom; it is only tested for NULL, never multiplied.
    return {a: rs[0] if len(rs) == 1 else Op("add", tuple(rs)) for a, rs in out.items()}


def _subexpressions(e):
    yield e
    if isinstance(e, Op):
        for a in e.args:
            yield from _subexpressions(a)


def _may_be_null(e, nonnull: set) -> bool:
    """Whether `e` can be NULL in a row the query takes (conservative)."""
    if isinstance(e, Ref):
        return (e.atom, e.column) not in nonnull
    if isinstance(e, Lit):
        return e.value is None
    if isinstance(e, Op):
        if e.op == "anti":
            return False
        if e.op == "case":  # conditions are TRUE or not; a branch may be NULL
            return any(_may_be_null(a, nonnull) for a in (*e.args[1::2], e.args[-1]))
        return any(_may_be_null(a, nonnull) for a in e.args)
    return True


def _check_null_safe(e, nonnull: set, node) -> None:
    """Refuse an aggregate argument whose NULL test the generated code cannot
    make exactly: a NULL-able boolean (AND/OR/NOT are not NULL-strict)."""
    for x in _subexpressions(e):
        if (
            isinstance(x, Op)
            and x.op in ("and", "or", "not")
            and _may_be_null(x, nonnull)
        ):
            raise _unsupported(
                "an aggregate of AND/OR/NOT over a column that may be NULL "
                "is not supported",
                node,
            )


def _nonnull_leaves(e, negate: bool = False) -> set:
    """The columns a row's condition `e` being TRUE (FALSE with `negate`)
    proves non-NULL, as the generated code's `condition` tests them."""
    if isinstance(e, Op) and e.op == "not":
        return _nonnull_leaves(e.args[0], not negate)
    if isinstance(e, Op) and e.op in ("and", "or"):
        joint = e.op if not negate else {"and": "or", "or": "and"}[e.op]
        parts = [_nonnull_leaves(a, negate) for a in e.args]
        if joint == "or":
            return set.intersection(*parts)
        return set.union(*parts)
    if isinstance(e, Op) and e.op == "anti":
        return set()
    return {(r.atom, r.column) for r in _plain_refs(e)}


def _plain_refs(e):
    """The column references of `e` outside NOT IN/NOT EXISTS tests."""
    if isinstance(e, Ref):
        yield e
    elif isinstance(e, Op) and e.op != "anti":
        for a in e.args:
            yield from _plain_refs(a)


def _poly(e, node) -> list[tuple[int | float, dict]]:
    """`e` as a sum of products of per-atom factors: [(coefficient, {atom: expr})]."""
    atoms = {r.atom for r in refs(e)}
    if not atoms:
        if (
            isinstance(e, Lit)
            and isinstance(e.value, (int, float))
            and not isinstance(e.value, bool)
        ):
            return [(e.value, {})]
        raise _unsupported("aggregate of a non-numeric constant", node)
    if len(atoms) == 1:
        return [(1, {atoms.pop(): e})]
    if isinstance(e, Op) and e.op in ("add", "sub"):
        left, right = (_poly(a, node) for a in e.args)
        sign = 1 if e.op == "add" else -1
        return left + [(sign * c, f) for c, f in right]
    if isinstance(e, Op) and e.op == "neg":
        return [(-c, f) for c, f in _poly(e.args[0], node)]
    if isinstance(e, Op) and e.op == "mul":
        out = []
        for c1, f1 in _poly(e.args[0], node):
            for c2, f2 in _poly(e.args[1], node):
                merged = dict(f1)
                for atom, factor in f2.items():
                    merged[atom] = (
                        Op("mul", (merged[atom], factor)) if atom in merged else factor
                    )
                out.append((c1 * c2, merged))
        return out
    raise _unsupported(
        "an aggregate over several tables must be a sum of products of "
        "per-table expressions (+, -, *)",
        node,
    )


def _grouped_binary(op: str) -> Callable:
    return lambda g, node: Op(op, (g.convert(node.this), g.convert(node.expression)))


def _grouped_comparison(op: str) -> Callable:
    def convert(g, node):
        left, right = g.convert(node.this), g.convert(node.expression)
        return Op(op, _coerce_dates(left, right, g.type_of, node))

    return convert


_GROUPED_CONVERTERS: dict[type, Callable] = {
    exp.Paren: lambda g, node: g.convert(node.this),
    exp.Add: _grouped_binary("add"),
    exp.Sub: _grouped_binary("sub"),
    exp.Mul: _grouped_binary("mul"),
    exp.Div: _grouped_binary("div"),
    exp.Mod: _grouped_binary("mod"),
    exp.EQ: _grouped_comparison("eq"),
    exp.NEQ: _grouped_comparison("ne"),
    exp.LT: _grouped_comparison("lt"),
    exp.LTE: _grouped_comparison("le"),
    exp.GT: _grouped_comparison("gt"),
    exp.GTE: _grouped_comparison("ge"),
    exp.And: _grouped_binary("and"),
    exp.Or: _grouped_binary("or"),
    exp.Not: lambda g, node: Op("not", (g.convert(node.this),)),
    exp.Neg: lambda g, node: Op("neg", (g.convert(node.this),)),
    exp.Cast: lambda g, node: g.convert(node.this),
}


def _vars(e) -> list[Var]:
    if isinstance(e, Var):
        return [e]
    if isinstance(e, Op):
        return [v for a in e.args for v in _vars(a)]
    return []


# --- expression types ----------------------------------------------------------
#
# Every converted expression is typed bottom-up, so that operands the
# generated Python would reject at run time (or combine unlike SQL: `'1' = 1`
# never matches) are refused at compile time, where the query says it.

NUMERIC = {"int", "float", "bool"}
_DATE_ARITHMETIC = (
    "DATE arithmetic is not supported; supported: DATE ± INTERVAL 'n' "
    "DAY|WEEK|MONTH|YEAR and comparisons of dates"
)


class _ExprError(UnsupportedQueryError):
    """An expression the type check refuses; `_typed` adds where it is."""


def _lit_type(e) -> str | None:
    if not isinstance(e, Lit) or e.value is None:
        return None
    if isinstance(e.value, datetime.date):
        return "date"
    return {bool: "bool", int: "int", float: "float", str: "str"}.get(type(e.value))


def _type(e, leaf: Callable) -> str | None:
    """The type ("int", "float", "bool", "str", "date"; None: unknown, NULL)
    of `e`, whose non-operator leaves `leaf` types."""
    if not isinstance(e, Op):
        return leaf(e)
    return _op_type(e, [_type(a, leaf) for a in e.args])


def _typed(type_of: Callable, e, node: exp.Expression) -> str | None:
    """`type_of(e)`, a refusal located at `node`."""
    try:
        return type_of(e)
    except _ExprError as err:
        raise _unsupported(str(err), node) from None


def _check_condition(t: str | None, e, node: exp.Expression) -> None:
    if t is not None and t not in NUMERIC:
        raise _unsupported(
            f"type mismatch: {e} ({t}) is not a condition (true or false)", node
        )


def _check_comparable(a, ta: str | None, b, tb: str | None) -> None:
    if ta and tb and ta != tb and not (ta in NUMERIC and tb in NUMERIC):
        raise _ExprError(f"type mismatch: cannot compare {a} ({ta}) with {b} ({tb})")


def _op_type(e: Op, types: list) -> str | None:
    """The type of operator `e` over arguments of `types`; `_ExprError` for
    operands that do not fit (DuckDB refuses them, or converts them in ways
    the generated Python does not)."""
    op, args = e.op, e.args

    def need(kinds: set, what: str, *positions: int) -> None:
        for i in positions:
            if types[i] is not None and types[i] not in kinds:
                raise _ExprError(f"type mismatch: {what}, got {args[i]} ({types[i]})")

    if op in COMPARISONS or op == "in":
        for b, tb in zip(args[1:], types[1:]):
            _check_comparable(args[0], types[0], b, tb)
        return "bool"
    if op in ("add", "sub", "mul", "div", "mod"):
        if "date" in types:
            raise _ExprError(_DATE_ARITHMETIC)
        need(NUMERIC, f"{INFIX[op]} needs numbers", 0, 1)
        divisor = args[1]
        if (
            op in ("div", "mod")
            and isinstance(divisor, Lit)
            and type(divisor.value) in (int, float)
            and divisor.value == 0
        ):
            raise _ExprError("division by zero")
        return "float" if op == "div" or "float" in types else "int"
    if op in ("neg", "abs"):
        need(NUMERIC, f"{'ABS' if op == 'abs' else 'unary -'} needs a number", 0)
        return types[0]
    if op in ("and", "or", "not"):
        need(NUMERIC, f"{op.upper()} needs conditions", *range(len(args)))
        return "bool"
    if op == "like":
        need({"str"}, "LIKE needs a string", 0)
        return "bool"
    if op in ("year", "month", "day"):
        need({"date"}, "EXTRACT needs a DATE", 0)
        return "int"
    if op in ("substr", "upper", "lower"):
        need({"str"}, f"{op.upper()} needs a string", 0)
        return "str"
    if op == "case":
        need(NUMERIC, "CASE WHEN needs conditions", *range(0, len(args) - 1, 2))
        results = [t for t in types[1:-1:2] + types[-1:] if t is not None]
        if results and all(t in NUMERIC for t in results):
            return next((t for t in ("float", "int") if t in results), "bool")
        if len(set(results)) > 1:
            raise _ExprError(
                "type mismatch: CASE results of different types "
                f"({', '.join(dict.fromkeys(results))})"
            )
        return results[0] if results else None
    if op in ("add_days", "add_months"):
        return "date"
    if op == "concat":
        return "str"  # rendered as str(a) + str(b), as DuckDB casts to VARCHAR
    return "bool"  # anti


def _coerce_dates(left, right, type_of: Callable, node: exp.Expression):
    """DuckDB casts a string literal compared with a DATE to a date."""
    for a, b in ((left, right), (right, left)):
        if type_of(a) == "date" and isinstance(b, Lit) and isinstance(b.value, str):
            try:
                date = Lit(datetime.date.fromisoformat(b.value))
            except ValueError:
                raise _sql_error(f"invalid date {b.value!r}", node) from None
            left, right = (date, right) if b is left else (left, date)
    return left, right


# --- sqlglot node -> IR, one small converter per node type -------------------


def _binary(op: str) -> Callable:
    return lambda fe, node: _arith(op, fe.expr(node.this), fe.expr(node.expression))


def _arith(op: str, left, right):
    """`left op right`, folded when both are numeric literals: exactly, in
    decimal, as SQL computes DECIMAL literals (0.06 + 0.01 is 0.07)."""
    numbers = (int, float)
    if (
        op in ("add", "sub", "mul")
        and isinstance(left, Lit)
        and isinstance(right, Lit)
        and type(left.value) in numbers
        and type(right.value) in numbers
    ):
        a, b = decimal.Decimal(repr(left.value)), decimal.Decimal(repr(right.value))
        value = a + b if op == "add" else a - b if op == "sub" else a * b
        both_int = type(left.value) is int and type(right.value) is int
        return Lit(int(value) if both_int else float(value))
    return Op(op, (left, right))


def _literal(fe, node: exp.Literal) -> Lit:
    text = str(node.this)
    if node.is_string:
        return Lit(text)
    if re.fullmatch(r"[+-]?\d+", text):
        return Lit(int(text))
    try:
        return Lit(float(text))
    except ValueError:
        raise _unsupported(f"cannot read the number {text}", node) from None


def _cast(fe, node: exp.Cast):
    target = node.to.this.name
    inner = fe.expr(node.this)
    if target == "DATE" and isinstance(inner, Lit) and isinstance(inner.value, str):
        try:
            return Lit(datetime.date.fromisoformat(inner.value.strip()))
        except ValueError:
            raise _sql_error(f"invalid date literal {inner.value!r}", node) from None
    if TYPES.get(target) == fe.type_of(inner) or (
        TYPES.get(target) in ("float", "int") and fe.type_of(inner) in ("float", "int")
    ):
        if TYPES.get(target) == "float" and isinstance(inner, Lit):
            return Lit(float(inner.value))
        return inner
    raise _unsupported("only CAST of a string literal to DATE is supported", node)


_UNITS = {
    "DAY": ("add_days", 1),
    "WEEK": ("add_days", 7),
    "MONTH": ("add_months", 1),
    "YEAR": ("add_months", 12),
}


def _interval(node: exp.Interval) -> tuple[str, int]:
    unit = (node.text("unit") or "").upper().rstrip("S")
    text = node.this.name if node.this is not None else ""
    parts = text.split()
    if len(parts) == 2 and not unit:
        text, unit = parts[0], parts[1].upper().rstrip("S")
    if unit not in _UNITS or not re.fullmatch(r"[+-]?\d+", text.strip()):
        raise _unsupported(
            "supported intervals: INTERVAL 'n' DAY|WEEK|MONTH|YEAR", node
        )
    op, scale = _UNITS[unit]
    return op, int(text) * scale


def _shift(fe, node, sign: int):
    """date ± INTERVAL, folded at compile time when the date is a literal."""
    left, right = node.this, node.expression
    if isinstance(left, exp.Interval) and sign > 0:
        left, right = right, left
    if not isinstance(right, exp.Interval):
        return _arith("add" if sign > 0 else "sub", fe.expr(left), fe.expr(right))
    op, amount = _interval(right)
    date = fe.expr(left)
    if fe.type_of(date) != "date":
        raise _unsupported("INTERVAL arithmetic needs a DATE operand", node)
    if isinstance(date, Lit):
        return Lit(shift_date(date.value, op, sign * amount))
    return Op(op, (date, Lit(sign * amount)))


def shift_date(value: datetime.date, op: str, amount: int) -> datetime.date:
    """Add days or months to a date as SQL does (clamping to the month's end)."""
    if op == "add_days":
        return value + datetime.timedelta(days=amount)
    months = value.year * 12 + value.month - 1 + amount
    year, month = divmod(months, 12)
    month += 1
    for day in (value.day, 30, 29, 28):
        try:
            return datetime.date(year, month, day)
        except ValueError:
            continue
    raise AssertionError("unreachable")


def _comparison(op: str) -> Callable:
    def convert(fe, node):
        left, right = fe.expr(node.this), fe.expr(node.expression)
        return Op(op, _coerce_dates(left, right, fe.type_of, node))

    return convert


def _like(fe, node):
    pattern = fe.expr(node.expression)
    if not (isinstance(pattern, Lit) and isinstance(pattern.value, str)):
        raise _unsupported("LIKE needs a string literal pattern", node)
    if node.args.get("escape") is not None:
        raise _unsupported("LIKE … ESCAPE is not supported", node)
    result = Op("like", (fe.expr(node.this), pattern))
    return Op("not", (result,)) if node.args.get("negate") else result


def _escape(fe, node):
    raise _unsupported("LIKE … ESCAPE is not supported", node)


def _in(fe, node):
    if node.args.get("query") is not None or node.args.get("unnest") is not None:
        raise _unsupported("IN (subquery) is not supported", node)
    values = [fe.expr(v) for v in node.expressions]
    if not all(isinstance(v, Lit) for v in values):
        raise _unsupported("IN needs a list of literals", node)
    value = fe.expr(node.this)
    values = [_coerce_dates(value, v, fe.type_of, node)[1] for v in values]
    return Op("in", (value, *values))


def _between(fe, node):
    low = _comparison("ge")(fe, exp.GTE(this=node.this, expression=node.args["low"]))
    high = _comparison("le")(fe, exp.LTE(this=node.this, expression=node.args["high"]))
    return Op("and", (low, high))


def _case(fe, node: exp.Case):
    subject = node.this
    args = []
    for branch in node.args.get("ifs") or []:
        cond = branch.this
        if subject is not None:
            cond = exp.EQ(this=subject.copy(), expression=cond)
        args += [fe.expr(cond), fe.expr(branch.args["true"])]
    default = node.args.get("default")
    args.append(fe.expr(default) if default is not None else Lit(None))
    return Op("case", tuple(args))


def _extract(fe, node: exp.Extract):
    part = node.this.name.upper()
    if part not in ("YEAR", "MONTH", "DAY"):
        raise _unsupported("EXTRACT supports YEAR, MONTH and DAY", node)
    return Op(part.lower(), (fe.expr(node.expression),))


def _fold_neg(fe, node):
    inner = fe.expr(node.this)
    if isinstance(inner, Lit) and isinstance(inner.value, (int, float)):
        return Lit(-inner.value)
    return Op("neg", (inner,))


def _substring(fe, node):
    args = [fe.expr(node.this), fe.expr(node.args["start"])]
    if node.args.get("length") is not None:
        args.append(fe.expr(node.args["length"]))
    if not all(isinstance(a, Lit) and isinstance(a.value, int) for a in args[1:]):
        raise _unsupported("SUBSTRING needs integer literal positions", node)
    return Op("substr", tuple(args))


def _is(fe, node):
    raise _unsupported("IS [NOT] NULL is not supported: input rows hold no NULLs", node)


_CONVERTERS: dict[type, Callable] = {
    exp.Column: lambda fe, node: fe.column(node),
    exp.Literal: _literal,
    exp.Boolean: lambda fe, node: Lit(bool(node.this)),
    exp.Null: lambda fe, node: Lit(None),
    exp.Paren: lambda fe, node: fe.expr(node.this),
    exp.Cast: _cast,
    exp.Add: lambda fe, node: _shift(fe, node, +1),
    exp.Sub: lambda fe, node: _shift(fe, node, -1),
    exp.Mul: _binary("mul"),
    exp.Div: _binary("div"),
    exp.Mod: _binary("mod"),
    exp.Neg: _fold_neg,
    exp.DPipe: _binary("concat"),
    exp.EQ: _comparison("eq"),
    exp.NEQ: _comparison("ne"),
    exp.LT: _comparison("lt"),
    exp.LTE: _comparison("le"),
    exp.GT: _comparison("gt"),
    exp.GTE: _comparison("ge"),
    exp.And: _binary("and"),
    exp.Or: _binary("or"),
    exp.Not: lambda fe, node: Op("not", (fe.expr(node.this),)),
    exp.Like: _like,
    exp.Escape: _escape,
    exp.In: _in,
    exp.Between: _between,
    exp.Case: _case,
    exp.If: lambda fe, node: Op(
        "case",
        (
            fe.expr(node.this),
            fe.expr(node.args["true"]),
            fe.expr(node.args["false"]) if node.args.get("false") else Lit(None),
        ),
    ),
    exp.Extract: _extract,
    exp.Substring: _substring,
    exp.Anonymous: _anti,
    exp.Upper: lambda fe, node: Op("upper", (fe.expr(node.this),)),
    exp.Lower: lambda fe, node: Op("lower", (fe.expr(node.this),)),
    exp.Abs: lambda fe, node: Op("abs", (fe.expr(node.this),)),
    exp.Is: _is,
}

__all__ = ["parse_query", "parse_schema", "shift_date", "FLIPPED"]
