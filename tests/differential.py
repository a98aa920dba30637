"""Differential testing harness: a generated view against DuckDB.

A *query file* holds CREATE TABLE statements followed by exactly one SELECT.
`QuerySpec.parse` reads it (sqlglot for the schema and the literals the query
mentions, DuckDB for the exact statement texts). `UpdateStream` produces a
seeded random stream of batches for the relations the query reads: small
value domains (so joins hit), the query's own literals and LIKE patterns mixed
into the columns they are compared with, duplicates, deletions of rows that
are present, mixed-sign batches and occasional wipes of a whole relation.
`run_differential` applies the stream to a `View` and, after every batch,
compares it with DuckDB evaluating the SELECT on the current database:

* ``Counter(view.rows())`` equals DuckDB's bag (values normalised: Decimal ->
  float, floats rounded to 9 significant digits, midnight timestamps -> date);
* value types follow the contract (DECIMAL/DOUBLE -> float, DATE -> date, ...);
* for non-DISTINCT queries the multiplicities from ``view.enumerate()`` sum to
  ``len(rows)``, and, for plain-column SELECTs, ``enumerate`` and ``rows``
  agree tuple by tuple;
* ``view.multiplicity(row)`` for a few present and absent rows (every query
  answers, README);
* in push mode, the sum of all ``on_delta`` changes equals ``rows()``.

`check_atomicity` feeds bad input (absent deletes, wrong arity, wrong
relation names, over-deletes inside a batch) and checks that each call raises
and leaves the view exactly as it was, then keeps streaming to catch hidden
corruption.

Usage from a REPL, to reproduce a failure::

    from tests.differential import QuerySpec, run_differential
    import dynyan
    spec = QuerySpec.from_file("tests/fixtures/spj/14_chain3.sql")
    run_differential(spec, dynyan.load(spec.text), seed=1, n_events=300)
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import functools
import math
import random
import re
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

import duckdb
import pyarrow as pa
import sqlglot
from sqlglot import exp

from dynyan.compiler.frontend.duckdb_names import duckdb_name
from dynyan.compiler.frontend.passes.pivots import statement as pivot_statement
from dynyan.compiler.frontend.statements import relation

# ---------------------------------------------------------------------------
# Query files
# ---------------------------------------------------------------------------

_INT_TYPES = {
    exp.DataType.Type.INT,
    exp.DataType.Type.BIGINT,
    exp.DataType.Type.SMALLINT,
    exp.DataType.Type.TINYINT,
    exp.DataType.Type.UINT,
    exp.DataType.Type.UBIGINT,
}
_FLOAT_TYPES = {
    exp.DataType.Type.DECIMAL,
    exp.DataType.Type.DOUBLE,
    exp.DataType.Type.FLOAT,
}
_STR_TYPES = {
    exp.DataType.Type.VARCHAR,
    exp.DataType.Type.CHAR,
    exp.DataType.Type.TEXT,
    exp.DataType.Type.NCHAR,
    exp.DataType.Type.NVARCHAR,
}

_ARROW_TYPES = {
    "int": pa.int64(),
    "float": pa.float64(),
    "str": pa.string(),
    "date": pa.date32(),
    "bool": pa.bool_(),
    "timestamp": pa.timestamp("us"),
    "timestamptz": pa.timestamp("us", tz="UTC"),
    "time": pa.time64("us"),
    # types of columns a query may hold but not read (their values unread)
    "UUID": pa.string(),
    "VARBINARY": pa.binary(),
    "JSON": pa.string(),
    "INTERVAL": pa.string(),
}


@dataclass(frozen=True)
class ColumnInfo:
    name: str
    kind: str  # "int" | "float" | "str" | "date" | "bool" | "timestamp" | "timestamptz"
    scale: int | None = None  # decimal places for DECIMAL(p, s)
    sql_type: str = ""  # DuckDB's name for the declared type
    notnull: bool = False  # declared NOT NULL or PRIMARY KEY: never gets a NULL
    spelt: str = ""  # the name as CREATE TABLE writes it (DuckDB's result names)


@functools.cache
def _without_window(select_sql: str) -> str:
    """`select_sql` without LIMIT/OFFSET; parsed once per text (an ordered
    query is checked after every batch, and parsing costs more than DuckDB
    running it)."""
    tree = sqlglot.parse_one(select_sql, read="duckdb")
    tree.set("limit", None)
    tree.set("offset", None)
    return tree.sql(dialect="duckdb")


@dataclass
class QuerySpec:
    """A parsed query file."""

    name: str
    text: str
    create_sql: list[str]
    select_sql: str
    tables: dict[str, list[ColumnInfo]]
    relations: list[str]  # tables the SELECT reads, first-mention order
    distinct: bool
    plain_columns: bool  # every SELECT item is a bare column (or a star)
    select_aliases: list[str | None]  # explicit alias per item (None if none)
    domains: dict[tuple[str, str], list[Any]] = field(repr=False)
    view_sql: list[str] = field(default_factory=list)  # CREATE VIEWs, in order
    # ORDER BY: (SELECT position, descending) per item, when every item names
    # a SELECT item (else None: only the bag is checked); LIMIT and OFFSET.
    order: list[tuple[int, bool]] | None = None
    limit: int | None = None
    offset: int = 0
    # `-- ties: SELECT …` in the file: true where rows tie in the order of a
    # window that numbers or shifts them (the view then reads nothing, or,
    # where only equal rows tie, DuckDB's result)
    ties_sql: str | None = None
    # `-- duplicates: none`: no row inserted again (nor with a multiplicity
    # above 1), so rows rarely tie where ties make the view read nothing
    duplicates: bool = True
    # `-- unique: r.a, s.b`: per relation, the columns whose values no two
    # rows share (a PRIMARY KEY the streams respect): their indexes
    unique: dict[str, tuple[int, ...]] = field(default_factory=dict)

    @property
    def ordered(self) -> bool:
        return self.order is not None or self.limit is not None or self.offset > 0

    @property
    def unlimited_sql(self) -> str:
        """The query without LIMIT/OFFSET (the rows a window may pick)."""
        return _without_window(self.select_sql)

    # -- construction -----------------------------------------------------
    @classmethod
    def from_file(cls, path: str | Path) -> "QuerySpec":
        path = Path(path)
        return cls.parse(path.read_text(), name=path.stem)

    @classmethod
    def parse(cls, text: str, name: str = "query") -> "QuerySpec":
        statements = [s.query.strip() for s in duckdb.extract_statements(text)]
        # whole-line comments go (regression fixtures keep their updates there)
        statements = [re.sub(r"(?m)^\s*--.*$", "", s).strip() for s in statements]
        statements = [s.rstrip().rstrip(";").strip() for s in statements]
        statements = [s for s in statements if s]
        if not statements:
            raise ValueError(f"{name}: no SQL statements")
        # what changes no table's rows (the compiler skips it too)
        inert = (
            r"(?i)(drop\s+(view|table|index)|create\s+(unique\s+)?index|alter\s+table"
            r"|comment\s+on|begin|commit|create\s+(schema|sequence)|analyze)\b"
        )
        statements = [s for s in statements if not re.match(inert, s)]
        *creates, select_sql = statements
        views = [s for s in creates if re.match(r"(?i)create\s+view\b", s)]
        creates = [s for s in creates if s not in views]
        tables: dict[str, list[ColumnInfo]] = {}
        primary: dict[str, list[str]] = {}  # declared PRIMARY KEYs
        for stmt in creates:
            tree = sqlglot.parse_one(stmt, read="duckdb")
            if not isinstance(tree, exp.Create) or tree.kind != "TABLE":
                raise ValueError(f"{name}: expected CREATE TABLE, got {stmt[:60]!r}")
            schema = tree.this
            tname = schema.this.name.lower()
            cols = []
            for coldef in schema.expressions:
                if not isinstance(coldef, exp.ColumnDef):
                    continue
                info = _column_info(coldef, name)
                cols.append(dataclasses.replace(info, spelt=coldef.name))
            tables[tname] = cols
            if tree.find(exp.PrimaryKey, exp.PrimaryKeyColumnConstraint):
                primary[tname] = list(relation(tree).key)  # the compiler's reading
        query = sqlglot.parse_one(select_sql, read="duckdb")
        if isinstance(query, exp.Pivot):  # DuckDB's PIVOT statement: read as
            query = pivot_statement(query)  # the compiler reads it (DuckDB runs it)
        if not isinstance(query, exp.Query):
            raise ValueError(f"{name}: the last statement must be a query")
        # the SELECT whose items make the result (the first of a UNION)
        select = query if isinstance(query, exp.Select) else query.find(exp.Select)
        # every table the query reads, its views' and subqueries' included
        whole = exp.Tuple(
            expressions=[query]
            + [sqlglot.parse_one(v, read="duckdb").expression for v in views]
        )

        # DuckDB's own spelling of every declared type.
        types = _duckdb_types(tuple(creates))
        for tname, cols in tables.items():
            described = types[tname]
            tables[tname] = [
                dataclasses.replace(c, sql_type=described[c.name.lower()]) for c in cols
            ]

        relations: list[str] = []
        ctes = {c.alias.lower() for c in whole.find_all(exp.CTE)}
        for v in views:
            target = sqlglot.parse_one(v, read="duckdb").this
            ctes.add(
                (target.this if isinstance(target, exp.Schema) else target).name.lower()
            )
        for tbl in whole.find_all(exp.Table):
            tname = tbl.name.lower()
            if tname in ctes or not isinstance(tbl.this, exp.Identifier):
                continue  # a WITH table, a table function (generate_series)
            if tname not in tables:
                raise ValueError(f"{name}: table {tname!r} has no CREATE TABLE")
            if tname not in relations:
                relations.append(tname)

        items = select.expressions
        # a COUNT of an aggregating LATERAL subquery is computed (0 over no
        # rows): no plain column (README, multiplicity)
        counted = {
            lateral.alias.lower()
            for lateral in select.find_all(exp.Lateral)
            if lateral.find(exp.Count) is not None
        }
        plain = all(
            isinstance(e, (exp.Column, exp.Star))
            or (isinstance(e, exp.Alias) and isinstance(e.this, exp.Column))
            for e in items
        ) and not any(
            isinstance(e, exp.Star) or c.table.lower() in counted
            for e in items
            for c in ([e] if isinstance(e, exp.Star) else e.find_all(exp.Column))
            if counted
        )
        # an outer join's USING column is COALESCE(left, right): computed
        plain = plain and not any(
            j.args.get("side") and (j.args.get("using") or j.args.get("method"))
            for j in select.args.get("joins") or []
        )
        aliases = [e.alias if isinstance(e, exp.Alias) else None for e in items]
        distinct = bool(select.args.get("distinct"))
        domains = _domains(whole, tables, relations)
        # `-- domain: r.a 0..40`: a wider integer domain for one column (rows
        # that rarely tie, where ties make the view read nothing)
        for rel, col, low, high in re.findall(
            r"(?m)^-- domain: (\w+)\.(\w+) (\d+)\.\.(\d+)$", text
        ):
            if (rel, col) not in domains:
                raise ValueError(f"{name}: no column {rel}.{col} to widen")
            domains[(rel, col)] = list(range(int(low), int(high) + 1))
        order, limit, offset = _ordering(query, select)
        return cls(
            name=name,
            text=text,
            create_sql=creates,
            select_sql=select_sql,
            tables=tables,
            relations=relations,
            distinct=distinct,
            plain_columns=plain and not distinct,
            select_aliases=aliases,
            domains=domains,
            view_sql=views,
            order=order,
            limit=limit,
            offset=offset,
            ties_sql=(
                ties.group(1)
                if (ties := re.search(r"(?m)^-- ties: (.+)$", text))
                else None
            ),
            duplicates=not re.search(r"(?m)^-- duplicates: none$", text),
            unique=_unique_columns(text, tables, primary),
        )


def _unique_columns(text: str, tables, keys) -> dict[str, tuple[int, ...]]:
    """The `-- unique: r.a, r.b, s.c` line: per relation, the indexes of the
    columns that together are a key the streams keep unique; a relation it
    does not name, its declared PRIMARY KEY (SQL refuses rows that break it,
    and so does a strict view)."""
    line = re.search(r"(?m)^-- unique: (.+)$", text)
    out: dict[str, list[int]] = {}
    for item in line.group(1).split(",") if line else []:
        rel, col = item.strip().lower().split(".")
        names = [c.name for c in tables[rel]]
        out.setdefault(rel, []).append(names.index(col))
    for rel, key in keys.items():
        if key and rel not in out:
            names = [c.name.lower() for c in tables[rel]]
            out[rel] = [names.index(col) for col in key]
    return {rel: tuple(cols) for rel, cols in out.items()}


def _ordering(query: exp.Query, select: exp.Select):
    """ORDER BY items as SELECT positions (None if one names no SELECT item),
    LIMIT and OFFSET."""
    order = query.args.get("order")
    limit = query.args.get("limit")
    offset = query.args.get("offset")
    items = select.expressions
    positions: list[tuple[int, bool]] | None = [] if order is not None else None
    for ordered in order.expressions if order is not None else []:
        e, at = ordered.this, None
        if isinstance(e, exp.Literal) and not e.is_string:
            at = int(e.this) - 1
        else:
            for i, item in enumerate(items):
                if (
                    isinstance(e, exp.Column)
                    and not e.table
                    and item.alias_or_name.lower() == e.name.lower()
                ) or item.unalias() == e:
                    at = i
                    break
        if at is None:
            positions = None
            break
        positions.append((at, bool(ordered.args.get("desc"))))

    def count(clause):  # LIMIT n, OFFSET n, FETCH FIRST n ROWS ONLY
        if clause is None:
            return None
        if isinstance(clause, exp.Fetch):  # FETCH FIRST ROW ONLY: one
            n = clause.args.get("count")
            return 1 if n is None else int(n.this)
        if isinstance(clause.expression, (exp.Null, exp.Var)):  # LIMIT ALL/NULL
            return None
        return int(clause.expression.this)

    return positions, count(limit), count(offset) or 0


@functools.lru_cache(maxsize=64)
def _duckdb_types(creates: tuple[str, ...]) -> dict[str, dict[str, str]]:
    """table -> column -> DuckDB's name of its declared type."""
    con = duckdb.connect()
    try:
        for stmt in creates:
            con.execute(stmt)
        tables = [r[0] for r in con.execute("SHOW TABLES").fetchall()]
        return {
            t.lower(): {
                r[0].lower(): r[1] for r in con.execute(f'DESCRIBE "{t}"').fetchall()
            }
            for t in tables
        }
    finally:
        con.close()


def _column_info(coldef: exp.ColumnDef, qname: str) -> ColumnInfo:
    dtype = coldef.args["kind"]
    t = dtype.this
    name = coldef.name.lower()
    notnull = any(
        isinstance(
            c.kind, (exp.NotNullColumnConstraint, exp.PrimaryKeyColumnConstraint)
        )
        and not (
            isinstance(c.kind, exp.NotNullColumnConstraint)
            and c.kind.args.get("allow_null")
        )
        for c in coldef.constraints
    )
    if t in _INT_TYPES:
        return ColumnInfo(name, "int", notnull=notnull)
    if t in _FLOAT_TYPES:
        scale = None
        if t == exp.DataType.Type.DECIMAL:
            params = dtype.expressions
            scale = int(params[1].this.this) if len(params) >= 2 else 3
        return ColumnInfo(name, "float", scale, notnull=notnull)
    if t in _STR_TYPES:
        return ColumnInfo(name, "str", notnull=notnull)
    if t == exp.DataType.Type.DATE:
        return ColumnInfo(name, "date", notnull=notnull)
    if t == exp.DataType.Type.BOOLEAN:
        return ColumnInfo(name, "bool", notnull=notnull)
    if t in (exp.DataType.Type.TIMESTAMP, exp.DataType.Type.TIMESTAMPNTZ):
        return ColumnInfo(name, "timestamp", notnull=notnull)
    if t == exp.DataType.Type.TIMESTAMPTZ:
        return ColumnInfo(name, "timestamptz", notnull=notnull)
    if t == exp.DataType.Type.TIME:
        return ColumnInfo(name, "time", notnull=notnull)
    if t.name in _UNREAD_VALUES:  # a type views keep only in columns not read
        return ColumnInfo(name, t.name, notnull=notnull)
    raise ValueError(
        f"{qname}: unsupported column type {dtype.sql()} for {coldef.name}"
    )


# ---------------------------------------------------------------------------
# Value domains
# ---------------------------------------------------------------------------

_BASE_STRINGS = ["a", "b", "c", "ab"]
_BASE_FLOATS = [0.25, 0.5, 1.0, 1.5, 2.75, 4.0]
_PREDICATES = (
    exp.EQ,
    exp.NEQ,
    exp.GT,
    exp.GTE,
    exp.LT,
    exp.LTE,
    exp.Between,
    exp.In,
    exp.Like,
    exp.ILike,
)


class _UnionFind:
    def __init__(self) -> None:
        self.parent: dict[Any, Any] = {}

    def find(self, x: Any) -> Any:
        self.parent.setdefault(x, x)
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, a: Any, b: Any) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[rb] = ra


def _resolver(
    select: exp.Select, tables: dict[str, list[ColumnInfo]], relations: list[str]
):
    alias_to_table: dict[str, str] = {}
    for tbl in select.find_all(exp.Table):
        alias_to_table[tbl.alias_or_name.lower()] = tbl.name.lower()
        alias_to_table.setdefault(tbl.name.lower(), tbl.name.lower())

    def resolve(col: exp.Column) -> list[tuple[str, str]]:
        cname = col.name.lower()
        if col.table:
            tname = alias_to_table.get(col.table.lower())
            if tname in tables and any(c.name == cname for c in tables[tname]):
                return [(tname, cname)]
            return []
        return [
            (t, cname) for t in relations if any(c.name == cname for c in tables[t])
        ]

    return resolve


def _literal_values(
    node: exp.Expression,
) -> tuple[list[str], list[float], list[datetime.date]]:
    """String, numeric and date literals inside `node` (not interval amounts)."""
    strings: list[str] = []
    numbers: list[float] = []
    dates: list[datetime.date] = []
    for lit in node.find_all(exp.Literal):
        if lit.find_ancestor(exp.Interval) is not None:
            continue
        parent = lit.parent
        if isinstance(parent, exp.Cast) and parent.to.this == exp.DataType.Type.DATE:
            y, m, d = (int(part) for part in lit.this.strip().split("-"))
            dates.append(datetime.date(y, m, d))  # DuckDB also reads '1999-2-01'
        elif lit.is_string:
            strings.append(lit.this)
        else:
            try:
                numbers.append(float(lit.this))
            except ValueError:
                pass
    return strings, numbers, dates


def _interval_days(select: exp.Select) -> set[int]:
    days: set[int] = set()
    for iv in select.find_all(exp.Interval):
        try:
            n = int(float(iv.this.this))
        except (AttributeError, TypeError, ValueError):
            continue
        unit = (iv.args.get("unit").name if iv.args.get("unit") else "DAY").upper()
        if unit.startswith("DAY"):
            days.update({n})
        elif unit.startswith("MONTH"):
            days.update({30 * n, 31 * n, 28 * n, 30 * n + 1})
        elif unit.startswith("YEAR"):
            days.update({365 * n, 366 * n})
    return days


def _like_instances(pattern: str, escape: str | None = None) -> list[str]:
    """Strings that match a LIKE pattern (with its ESCAPE character, if
    any: after it `%`, `_` or itself is that character), and near misses."""
    out = []
    for pct, und in (("", "q"), ("x", "z"), ("yy ", "Q")):
        s = pattern.replace("%", pct).replace("_", und)
        out.append(s)
        if escape:
            parts = re.split(f"({re.escape(escape)}.)", pattern)
            out.append(
                "".join(
                    p[1] if i % 2 else p.replace("%", pct).replace("_", und)
                    for i, p in enumerate(parts)
                )
            )
    base = pattern.replace("%", "").replace("_", "")
    out.extend([base, base + "!", "!" + base, base[1:], base[:-1]])
    return [s for s in dict.fromkeys(out)]


def _domains(select, tables, relations) -> dict[tuple[str, str], list[Any]]:
    resolve = _resolver(select, tables, relations)
    kinds = {(t, c.name): c for t in relations for c in tables[t]}
    uf = _UnionFind()
    for key in kinds:
        uf.find(key)
    # Columns equated anywhere in the query share one domain (joins hit).
    for eq in select.find_all(exp.EQ):
        left, right = eq.this, eq.expression
        if isinstance(left, exp.Column) and isinstance(right, exp.Column):
            lhs, rhs = resolve(left), resolve(right)
            for a in lhs:
                for b in rhs:
                    if kinds[a].kind == kinds[b].kind:
                        uf.union(a, b)

    n_atoms = len(list(select.find_all(exp.Table)))
    int_domain = list(range(0, 3 + n_atoms))
    specials: dict[Any, set] = {}
    for node in select.find_all(*_PREDICATES):
        cols = [k for c in node.find_all(exp.Column) for k in resolve(c)]
        strings, numbers, _dates = _literal_values(node)
        if isinstance(node, (exp.Like, exp.ILike)):
            escape = (
                node.parent.expression if isinstance(node.parent, exp.Escape) else None
            )
            esc = escape.name if isinstance(escape, exp.Literal) else None
            pats = [s for s in strings if s != esc]
            strings = [inst for p in pats for inst in _like_instances(p, esc)]
        for key in cols:
            root = uf.find(key)
            info = kinds[key]
            bag = specials.setdefault(root, set())
            if info.kind == "str":
                bag.update(strings)
            elif info.kind == "int":
                for x in numbers:
                    if x == int(x):
                        bag.update({int(x) - 1, int(x), int(x) + 1})
                    else:
                        bag.update({int(x), int(x) + 1})
            elif info.kind == "float":
                for x in numbers:
                    bag.update({x, x - 0.01, x + 0.01})

    all_dates = _literal_values(select)[2]
    offsets = {0, 1, -1}
    intervals = _interval_days(select)
    if not intervals:
        offsets.update({30, -30, 365, -365})
    for d in intervals:
        offsets.update({d, -d, d + 1, -d - 1, d - 1, -d + 1})
    if all_dates:
        date_pool = sorted(
            {b + datetime.timedelta(days=o) for b in all_dates for o in offsets}
        )
    else:
        base = datetime.date(1995, 1, 1)
        date_pool = [base + datetime.timedelta(days=i) for i in range(6)]

    domains: dict[tuple[str, str], list[Any]] = {}
    for key, info in kinds.items():
        extra = specials.get(uf.find(key), set())
        if info.kind == "int":
            pool = sorted(set(int_domain) | {x for x in extra if x >= 0})
        elif info.kind == "float":
            vals = set(_BASE_FLOATS) | {x for x in extra if x >= 0}
            if info.scale is not None:
                vals = {round(x, info.scale) for x in vals}
            pool = sorted(vals)
        elif info.kind == "str":
            pool = sorted(set(_BASE_STRINGS) | extra)
        elif info.kind == "bool":
            pool = [False, True]
        elif info.kind == "timestamp":  # midnight, a morning, a second's half
            times = [
                datetime.time(),
                datetime.time(6, 30),
                datetime.time(23, 59, 59, 500000),
            ]
            pool = [datetime.datetime.combine(d, t) for d in date_pool for t in times]
        elif info.kind == "time":  # the timestamps' times of day, and others
            pool = [
                datetime.time(),
                datetime.time(6, 30),
                datetime.time(9),
                datetime.time(12, 0, 0, 500000),
                datetime.time(17, 0),
                datetime.time(23, 59, 59, 500000),
            ]
        elif info.kind == "timestamptz":  # instants, some one in other offsets
            pool = [
                datetime.datetime.combine(d, t, tzinfo=zone)
                for d in date_pool
                for t in (datetime.time(), datetime.time(6, 30))
                for zone in _ZONES
            ]
        elif info.kind in _UNREAD_VALUES:
            pool = list(_UNREAD_VALUES[info.kind])
        else:
            pool = date_pool
        domains[key] = pool
    return domains


# offsets of TIMESTAMPTZ values: 06:30+06:30 is midnight UTC, as 00:00+00
_ZONES = (
    datetime.timezone.utc,
    datetime.timezone(datetime.timedelta(hours=6, minutes=30)),
)
# values of the types a view keeps only in columns the query does not read
_UNREAD_VALUES = {
    "UUID": (
        uuid.UUID("12345678-1234-5678-1234-567812345678"),
        uuid.UUID("87654321-4321-8765-4321-876543218765"),
    ),
    "VARBINARY": (b"", b"\x00\xff"),
    "JSON": ('{"a": 1}', "[1, 2]"),
    "INTERVAL": (datetime.timedelta(days=1), datetime.timedelta(seconds=90)),
}


# ---------------------------------------------------------------------------
# Update streams
# ---------------------------------------------------------------------------


@dataclass
class Batch:
    """One call on the view: insert/delete of one row, or update of many."""

    kind: str  # "insert" | "delete" | "update"
    relation: str
    rows: list[tuple]
    mults: list[int] | None = None

    def apply(self, view) -> None:
        if self.kind == "insert":
            view.insert(self.relation, self.rows[0])
        elif self.kind == "delete":
            view.delete(self.relation, self.rows[0])
        elif self.mults is None:
            view.update(self.relation, list(self.rows))
        else:
            view.update(self.relation, list(self.rows), list(self.mults))

    def changes(self) -> list[tuple[tuple, int]]:
        if self.kind == "insert":
            return [(self.rows[0], 1)]
        if self.kind == "delete":
            return [(self.rows[0], -1)]
        mults = self.mults if self.mults is not None else [1] * len(self.rows)
        return list(zip(self.rows, mults))

    def events(self) -> int:
        return sum(abs(m) for _, m in self.changes())

    def __str__(self) -> str:
        if self.kind in ("insert", "delete"):
            return f"view.{self.kind}({self.relation!r}, {self.rows[0]!r})"
        lines = [f"view.update({self.relation!r}, rows, mults) with"]
        for row, m in self.changes():
            lines.append(f"    {m:+d}  {row!r}")
        return "\n".join(lines)


class Database:
    """The current multiset of rows per relation."""

    def __init__(self, relations: Iterable[str]):
        self.rels: dict[str, Counter] = {r: Counter() for r in relations}

    def apply(self, batch: Batch) -> None:
        c = self.rels[batch.relation]
        for row, m in batch.changes():
            c[row] += m
            if c[row] < 0:
                raise AssertionError(f"harness bug: negative multiplicity for {row}")
            if c[row] == 0:
                del c[row]

    def dump(self, limit: int = 40) -> str:
        lines = []
        for rel, c in self.rels.items():
            total = sum(c.values())
            lines.append(f"  {rel}: {total} rows")
            for row, m in sorted(c.items(), key=repr)[:limit]:
                lines.append(f"    {m} x {row!r}")
            if len(c) > limit:
                lines.append(f"    ... {len(c) - limit} more distinct rows")
        return "\n".join(lines)


class UpdateStream:
    """Seeded random batches over `spec.relations`, valid by construction.

    With `null_rate`, each value of a column that may hold NULL is None with
    that probability; columns declared NOT NULL and the (relation, column)
    pairs in `no_null` (where the module's contract allows no NULL, e.g. a
    column a SELECT expression computes with) never are. With `warm`, the
    stream starts with one batch per relation inserting half its target
    rows (so joins see partners from the first checks on).
    """

    def __init__(
        self,
        spec: QuerySpec,
        seed: int,
        target_rows: int = 14,
        null_rate: float = 0.0,
        no_null: Iterable[tuple[str, str]] = (),
        warm: bool = False,
    ):
        self.spec = spec
        self.warm = list(spec.relations) if warm else []
        self.rng = random.Random(f"{spec.name}/{seed}")
        self.target = target_rows
        self.db = Database(spec.relations)
        self.null_rate = null_rate
        blocked = set(no_null)
        self.nullable = {
            (rel, c.name)
            for rel in spec.relations
            for c in spec.tables[rel]
            if not c.notnull and (rel, c.name) not in blocked
        }

    def random_row(self, rel: str) -> tuple:
        rng = self.rng
        if not self.null_rate:
            return tuple(
                rng.choice(self.spec.domains[(rel, c.name)])
                for c in self.spec.tables[rel]
            )
        return tuple(
            (
                None
                if (rel, c.name) in self.nullable and rng.random() < self.null_rate
                else rng.choice(self.spec.domains[(rel, c.name)])
            )
            for c in self.spec.tables[rel]
        )

    def _fresh_row(self, rel: str, taken: set) -> tuple | None:
        """A random row whose key (`spec.unique`) no row has: its key added
        to `taken`; None if a few tries find none."""
        key = self.spec.unique.get(rel)
        for _ in range(20):
            row = self.random_row(rel)
            if key is None:
                return row
            k = tuple(row[i] for i in key)
            if k not in taken and None not in k:
                taken.add(k)
                return row
        return None

    def _keys(self, rel: str) -> set:
        key = self.spec.unique.get(rel, ())
        return {tuple(row[i] for i in key) for row in self.db.rels[rel]}

    def absent_row(self, rel: str) -> tuple:
        """A row that is certainly not in `rel` (a value outside the domain)."""
        cols = self.spec.tables[rel]
        row = list(self.random_row(rel))
        c = cols[0]
        row[0] = _ABSENT[
            {
                "int": int,
                "float": float,
                "str": str,
                "date": datetime.date,
                "bool": bool,
                "timestamp": datetime.datetime,
                "timestamptz": "timestamptz",
                "time": datetime.time,
            }[c.kind]
        ]
        return tuple(row)

    def _existing(self, rel: str) -> tuple | None:
        c = self.db.rels[rel]
        if not c:
            return None
        rows = sorted(c, key=repr)
        return self.rng.choice(rows)

    def next_batch(self) -> Batch:
        rng = self.rng
        if self.warm:
            rel = self.warm.pop(0)
            rows = [self.random_row(rel) for _ in range(max(1, self.target // 2))]
            batch = Batch("update", rel, rows, [1] * len(rows))
            self.db.apply(batch)
            return batch
        rel = rng.choice(self.spec.relations)
        current = self.db.rels[rel]
        size = sum(current.values())
        p_del = (
            0.15 if size < self.target // 2 else (0.4 if size <= self.target else 0.65)
        )
        r = rng.random()
        if size and r < 0.02:
            # Wipe the whole relation in one batch.
            rows = sorted(current, key=repr)
            batch = Batch("update", rel, rows, [-current[row] for row in rows])
        elif r < 0.25 and rel in self.spec.unique:
            row = self._fresh_row(rel, self._keys(rel))
            batch = (
                Batch("insert", rel, [row])
                if row is not None
                else Batch("update", rel, [], [])
            )
        elif r < 0.25:
            again = current and self.spec.duplicates and rng.random() < 0.3
            row = self._existing(rel) if again else None
            batch = Batch("insert", rel, [row or self.random_row(rel)])
        elif r < 0.25 + p_del * 0.4 and current:
            batch = Batch("delete", rel, [self._existing(rel)])
        else:
            n = rng.randint(1, 7)
            remaining = Counter(current)  # deletable copies (pre-batch state)
            rows, mults = [], []
            keyed = rel in self.spec.unique
            taken = self._keys(rel) if keyed else set()
            for _ in range(n):
                if keyed:  # inserts of fresh keys (a key deleted here stays taken)
                    if remaining and rng.random() < p_del:
                        row = rng.choice(sorted(remaining, key=repr))
                        del remaining[row]
                        rows.append(row)
                        mults.append(-1)
                    elif (row := self._fresh_row(rel, taken)) is not None:
                        rows.append(row)
                        mults.append(1)
                    continue
                if remaining and rng.random() < p_del:
                    row = rng.choice(sorted(remaining, key=repr))
                    m = -1 if remaining[row] == 1 or rng.random() < 0.8 else -2
                    remaining[row] += m
                    if remaining[row] <= 0:
                        del remaining[row]
                else:
                    again = current and self.spec.duplicates and rng.random() < 0.25
                    row = self._existing(rel) if again else None
                    row = row or self.random_row(rel)
                    m = 1 if rng.random() < 0.85 else rng.choice([2, 3])
                    if not self.spec.duplicates:
                        m = 1
                rows.append(row)
                mults.append(m)
            if all(m == 1 for m in mults) and rng.random() < 0.5:
                batch = Batch("update", rel, rows, None)
            else:
                batch = Batch("update", rel, rows, mults)
        self.db.apply(batch)
        return batch

    def batches(self, n_events: int):
        done = 0
        while done < n_events:
            batch = self.next_batch()
            done += batch.events()
            yield batch


# ---------------------------------------------------------------------------
# DuckDB mirror
# ---------------------------------------------------------------------------


class DuckMirror:
    """DuckDB evaluating the query's SELECT on a given database state.

    Each relation is a view with the declared column types over a registered
    Arrow table that is swapped whenever the relation changes. A long query
    (PREPARED_FROM characters) is planned once instead: planning a TPC-DS
    query costs several times its run on these tiny tables (q85: 24 ms a run,
    4 ms prepared), so its relations are tables refilled on every change (a
    prepared statement over a swapped Arrow table keeps reading the old one).
    Short queries keep the views: their planning is cheap, and the prepared
    path was measured on the long ones only.
    """

    PREPARED_FROM = 1500

    def __init__(self, spec: QuerySpec):
        self.spec = spec
        # one thread: the databases are tiny, and planning is most of the cost
        self.con = duckdb.connect(config={"threads": 1})
        self.prepared = len(spec.select_sql) >= self.PREPARED_FROM
        self._fill = {}
        for tname in spec.relations:
            cols = spec.tables[tname]
            casts = ", ".join(
                f'CAST("{c.name}" AS {c.sql_type}) AS "{c.spelt or c.name}"'
                for c in cols
            )
            select = f'SELECT {casts} FROM "_src_{tname}"'
            if self.prepared:
                decls = ", ".join(f'"{c.spelt or c.name}" {c.sql_type}' for c in cols)
                self.con.execute(f'CREATE TABLE "{tname}" ({decls})')
                self._fill[tname] = f'INSERT INTO "{tname}" {select}'
            else:
                self._register(tname, [])
                self.con.execute(f'CREATE VIEW "{tname}" AS {select}')
        for view in spec.view_sql:
            self.con.execute(view)
        self._statements: dict[str, str | None] = {}
        self.description = None

    def _register(self, tname: str, rows: list[tuple]) -> None:
        cols = self.spec.tables[tname]
        arrays = []
        for i, c in enumerate(cols):
            values = [row[i] for row in rows]
            if c.kind in ("UUID", "INTERVAL"):  # no Arrow type DuckDB reads back
                values = [None if v is None else str(v) for v in values]
            arrays.append(pa.array(values, type=_ARROW_TYPES[c.kind]))
        names = [c.name for c in cols]
        if not self.prepared:
            self.con.register(f"_src_{tname}", pa.table(arrays, names=names))
            return
        self.con.execute(f'DELETE FROM "{tname}"')
        if rows:
            self.con.register(f"_src_{tname}", pa.table(arrays, names=names))
            self.con.execute(self._fill[tname])
            self.con.unregister(f"_src_{tname}")

    def load(self, db: Database, relations: Iterable[str] | None = None) -> None:
        for rel in relations if relations is not None else db.rels:
            rows = [row for row, m in db.rels[rel].items() for _ in range(m)]
            self._register(rel, rows)

    def _execute(self, sql: str):
        """The cursor of `sql`, through its prepared statement where the
        mirror prepares (on first use; a text DuckDB will not prepare runs
        as it is)."""
        if not self.prepared:
            return self.con.execute(sql)
        if sql not in self._statements:
            name = f"_q{len(self._statements)}"
            try:
                self.con.execute(f"PREPARE {name} AS {sql}")
            except duckdb.Error:
                name = None
            self._statements[sql] = name
        name = self._statements[sql]
        return self.con.execute(f"EXECUTE {name}" if name else sql)

    def query(self, sql: str | None = None, describe: bool = False) -> list[tuple]:
        cur = self._execute(sql or self.spec.select_sql)
        rows = cur.fetchall()
        types = [str(d[1]) for d in cur.description]
        if sql is None or describe:
            # (name, type name): no DuckDB object outlives the check (nanobind
            # reports objects still alive at exit as leaks)
            self.description = [(d[0], t) for d, t in zip(cur.description, types)]
        if any(t.endswith("[]") for t in types):  # a LIST: a tuple (contract)
            rows = [tuple(_tupled(v) for v in row) for row in rows]
        return rows

    def close(self) -> None:
        self.con.close()


def _tupled(v):
    """A LIST DuckDB returns (a list) as a view returns it, a tuple."""
    return tuple(map(_tupled, v)) if isinstance(v, list) else v


# ---------------------------------------------------------------------------
# Normalisation and comparison
# ---------------------------------------------------------------------------


def norm_value(v: Any) -> Any:
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, decimal.Decimal):
        v = float(v)
    if isinstance(v, float):
        if v != v:
            return "NaN"
        if v in (math.inf, -math.inf):
            return v
        if abs(v) < 1e-9:  # what a running float sum keeps of x - x
            return 0
        # 13 digits first: two sums of the same values in different orders
        # differ in the last bits, and one rounding alone splits them where
        # the value ends in a 5 at the tenth digit (1.376328125)
        r = float(f"{float(f'{v:.13g}'):.9g}")
        return int(r) if r == int(r) and abs(r) < 2**53 else r
    if isinstance(v, datetime.datetime):
        if v.time() == datetime.time(0) and v.tzinfo is None:
            return v.date()
        return v
    if isinstance(v, tuple):  # a LIST's elements
        return tuple(map(norm_value, v))
    return v


# Values norm_value returns unchanged (bool is not int here: type() is exact).
_PLAIN = frozenset({int, str, datetime.date, type(None)})


_NORMALISED: dict = {}  # (type, value) -> norm_value(value): streams repeat values


def norm_row(row: Iterable[Any]) -> tuple:
    row = tuple(row)
    if all(type(v) in _PLAIN for v in row):  # most rows: nothing to normalise
        return row
    out = []
    for v in row:
        if type(v) in _PLAIN:
            out.append(v)
            continue
        key = (type(v), v)
        try:
            out.append(_NORMALISED[key])
        except KeyError:
            out.append(_NORMALISED.setdefault(key, norm_value(v)))
        except TypeError:  # unhashable: normalised as it is
            out.append(norm_value(v))
    return tuple(out)


def norm_bag(rows: Iterable[Iterable[Any]]) -> Counter:
    """Rows normalised, counted: each distinct row is normalised once (large
    join results repeat rows many times)."""
    out: Counter = Counter()
    for row, m in Counter(map(tuple, rows)).items():
        out[norm_row(row)] += m
    return out


def norm_counter(bag: Counter) -> Counter:
    out: Counter = Counter()
    for row, m in bag.items():
        out[norm_row(row)] += m
    return +out


def _expected_pytypes(duck_type: str) -> tuple[type, ...]:
    t = str(duck_type).upper()
    if t.endswith("[]"):  # a LIST
        return (tuple,)
    if t in (
        "INTEGER",
        "BIGINT",
        "SMALLINT",
        "TINYINT",
        "HUGEINT",
        "UBIGINT",
        "UINTEGER",
    ):
        return (int,)
    if t.startswith("DECIMAL") or t in ("DOUBLE", "FLOAT", "REAL"):
        return (float,)
    if t == "VARCHAR":
        return (str,)
    if t == "DATE":
        return (datetime.date,)
    if t.startswith("TIMESTAMP"):
        return (datetime.date,)  # date + INTERVAL: DuckDB says TIMESTAMP
    if t == "BOOLEAN":
        return (bool,)
    return (object,)


def _fmt_bag(bag: Counter, limit: int = 25) -> str:
    items = sorted(bag.items(), key=repr)
    lines = [f"    {m} x {row!r}" for row, m in items[:limit]]
    if len(items) > limit:
        lines.append(f"    ... {len(items) - limit} more distinct rows")
    return "\n".join(lines) if lines else "    (none)"


_ABSENT = {
    int: 987654,
    float: 98765.5,
    str: "~absent~",
    datetime.date: datetime.date(2091, 7, 7),
    datetime.datetime: datetime.datetime(2091, 7, 7, 7, 7),
    "timestamptz": datetime.datetime(2091, 7, 7, 7, 7, tzinfo=datetime.timezone.utc),
    datetime.time: datetime.time(7, 7, 7, 7),
    bool: True,  # no BOOLEAN is outside the domain: fixtures start with another column
}


class DifferentialFailure(AssertionError):
    """A view disagreed with DuckDB (or broke the module contract); the
    message says where. `run_batches` adds `.batches` (those applied, the
    failing one last) and `.batch_no`."""

    batches: list = []
    batch_no: int = 0

    @property
    def what(self) -> str:
        """The first line's complaint, without the query name and position."""
        first = str(self).split("\n", 1)[0]
        return first.split(": ", 1)[1] if ": " in first else first


@dataclass
class _Context:
    spec: QuerySpec
    seed: int
    batch_no: int
    batch: Batch | None
    db: Database

    def fail(self, what: str, detail: str = "") -> None:
        lines = [
            f"[{self.spec.name}] seed={self.seed} after batch #{self.batch_no}: {what}",
        ]
        if detail:
            lines.append(detail)
        if self.batch is not None:
            lines.append("last batch:")
            lines.append("  " + str(self.batch).replace("\n", "\n  "))
        lines.append("database now:")
        lines.append(self.db.dump())
        lines.append("query:\n  " + self.spec.select_sql.replace("\n", "\n  "))
        raise DifferentialFailure("\n".join(lines))


class ViewChecker:
    """All per-batch checks of one view against the DuckDB mirror."""

    def __init__(
        self,
        spec: QuerySpec,
        view,
        seed: int,
        push: Counter | None = None,
        mirror: DuckMirror | None = None,
    ):
        self.spec = spec
        self.view = view
        self.seed = seed
        self.push = push
        self.mirror = mirror or DuckMirror(spec)
        self.rng = random.Random(f"check/{spec.name}/{seed}")
        self.seen_rows: list[tuple] = []
        self.checked_header = False
        self.last_expected: Counter = Counter()
        self.withheld = 0  # checks where the view rightly read nothing
        self.full: list = []  # a window's whole ordered result, last check

    def expected(self, ctx: _Context, changed: Iterable[str] | None = None) -> list:
        """DuckDB's result on the database of `ctx` (raw rows); none while
        rows tie (`QuerySpec.ties_sql`)."""
        self.mirror.load(ctx.db, changed)
        spec = self.spec
        if spec.ties_sql is not None and self.mirror.query(spec.ties_sql)[0][0]:
            raise _ManyRows("rows tie")
        return self._result(ctx)

    def _also_many_rows(self, ctx: _Context, error: Exception) -> bool:
        """Whether the view's error names a scalar subquery of several rows
        where rows tie as well and DuckDB's query fails on that subquery:
        the result is undefined for either reason, and either may be said."""
        if "more than one row" not in str(error):
            return False
        try:
            self._result(ctx)
        except _ManyRows:
            return True
        return False

    def _result(self, ctx: _Context) -> list:
        """DuckDB's result on the tables loaded (raw rows)."""
        spec = self.spec
        try:
            if spec.limit is None and not spec.offset:
                return self.mirror.query()
            # a window: the whole ordered result once, the window cut from
            # it (the rows tied at its ends are checked against the whole)
            self.full = self.mirror.query(spec.unlimited_sql, describe=True)
        except duckdb.Error as e:
            if "More than one row returned by a subquery" in str(e):
                raise _ManyRows("more than one row") from None
            ctx.fail(f"DuckDB refused the query: {e}")
        end = None if spec.limit is None else spec.offset + spec.limit
        return self.full[spec.offset : end]

    def check(self, ctx: _Context, changed: Iterable[str] | None = None) -> Counter:
        try:
            expected_raw = self.expected(ctx, changed)
        except _ManyRows as why:
            # DuckDB's query fails, or its result is not determined: the
            # view's reads must fail (push mode reports the net change once
            # it has a value again)
            try:
                next(iter(self.view.rows()), None)
            except Exception as e:  # noqa: BLE001 - the message says which
                if why.args[0] not in str(e) and not self._also_many_rows(ctx, e):
                    ctx.fail(f"view.rows() raised {type(e).__name__}: {e}")
                self.withheld += 1
                return self.last_expected
            if why.args[0] != "rows tie":
                ctx.fail(f"DuckDB: {why.args[0]}; the view read a result")
            # rows tie, but where only equal rows do the order is no matter:
            # a view that reads then must read DuckDB's result
            expected_raw = self._result(ctx)
        expected = self.last_expected = norm_bag(expected_raw)
        try:
            got_raw = list(self.view.rows())
        except Exception as e:  # noqa: BLE001 - report any crash with context
            ctx.fail(f"view.rows() raised {type(e).__name__}: {e}")
        if not self.checked_header:
            self._check_header(ctx)
        got = norm_bag(got_raw)
        if self.spec.ordered:
            self._check_order(ctx, expected_raw, got_raw)
            expected = got  # the window is checked; ties at its ends may differ
        if got != expected:
            missing = expected - got
            extra = got - expected
            ctx.fail(
                f"result mismatch: view has {sum(got.values())} rows, "
                f"DuckDB {sum(expected.values())}",
                "missing from view (DuckDB has them):\n"
                + _fmt_bag(missing)
                + "\nextra in view (DuckDB does not have them):\n"
                + _fmt_bag(extra),
            )
        self._check_types(ctx, got_raw)
        self._check_enumerate(ctx, got_raw)
        self._check_multiplicity(ctx, got_raw)
        if self.push is not None:
            pushed = norm_counter(self.push)
            # rows compared by value: a NaN retracted is the NaN reported
            # (another float object: NaN != NaN in Python)
            by_value: Counter = Counter()
            for r, m in self.push.items():
                by_value[norm_row(r)] += m
            neg = {r: m for r, m in by_value.items() if m < 0}
            if neg:
                ctx.fail(
                    "push deltas sum to a negative multiplicity", _fmt_bag(Counter(neg))
                )
            if pushed != got:
                ctx.fail(
                    "sum of on_delta changes differs from rows()",
                    "missing from deltas:\n"
                    + _fmt_bag(expected - pushed)
                    + "\nextra in deltas:\n"
                    + _fmt_bag(pushed - expected),
                )
        return Counter(got_raw)

    def _check_order(self, ctx: _Context, expected_raw, got_raw) -> None:
        """ORDER BY … LIMIT/OFFSET: the view's rows in DuckDB's order (rows
        with equal sort keys in any order) and the same window, up to rows
        tied with the window's first or last row."""
        spec = self.spec
        window = spec.limit is not None or spec.offset > 0
        full = self.full if window else expected_raw
        if spec.order is None:  # a sort key outside the SELECT list: bag only
            allowed = norm_bag(full)
            if len(got_raw) != len(expected_raw) or norm_bag(got_raw) - allowed:
                ctx.fail(
                    "ordered window differs from DuckDB's",
                    f"view: {got_raw[:20]!r}\nDuckDB: {expected_raw[:20]!r}",
                )
            return

        def key(row):
            return tuple(norm_value(row[i]) for i, _ in spec.order)

        want = [key(r) for r in expected_raw]
        have = [key(r) for r in got_raw]
        if have != want:
            at = next(
                (i for i, (a, b) in enumerate(zip(have, want)) if a != b),
                min(len(have), len(want)),
            )
            ctx.fail(
                f"rows out of ORDER BY order (first difference at row {at})",
                f"view:   {got_raw[max(0, at - 2):at + 3]!r}\n"
                f"DuckDB: {expected_raw[max(0, at - 2):at + 3]!r}",
            )
        edges = {want[0], want[-1]} if window and want else set()
        inner_got = Counter(norm_row(r) for r in got_raw if key(r) not in edges)
        inner_want = Counter(norm_row(r) for r in expected_raw if key(r) not in edges)
        tied = norm_bag(r for r in full if key(r) in edges)
        edge_got = Counter(norm_row(r) for r in got_raw if key(r) in edges)
        if inner_got != inner_want or edge_got - tied:
            ctx.fail(
                "ordered window differs from DuckDB's",
                "missing from view:\n"
                + _fmt_bag(inner_want - inner_got)
                + "\nextra in view:\n"
                + _fmt_bag((inner_got - inner_want) + (edge_got - tied)),
            )

    def _check_header(self, ctx: _Context) -> None:
        self.checked_header = True
        desc = self.mirror.description
        cols = getattr(self.view, "COLUMNS", None)
        if cols is None or len(tuple(cols)) != len(desc):
            ctx.fail(f"View.COLUMNS = {cols!r}, expected {len(desc)} columns")
        select = sqlglot.parse_one(self.spec.select_sql, read="duckdb")
        items = select.expressions if isinstance(select, exp.Select) else []
        several = any(  # items that stand for several columns: `*`, COLUMNS(…)
            isinstance(e, exp.Star)
            or (isinstance(e, exp.Column) and e.is_star)
            or e.find(exp.Columns) is not None
            for e in items
        )
        for i, (name, *_) in enumerate(desc):  # spelt as DuckDB spells it
            mine = tuple(cols)[i]
            # an unnamed expression: DuckDB's printing where the view is sure
            # of it, else (`upper(s)`) the view's own text
            sure = not several and i < len(items) and duckdb_name(items[i])
            if mine != name and (
                sure or (mine.lower() == name.lower() and "(" not in name)
            ):
                ctx.fail(f"View.COLUMNS[{i}] = {mine!r}, DuckDB names it {name!r}")
        aliases = self.spec.select_aliases
        if not several:
            for i, alias in enumerate(aliases):
                if alias is not None and tuple(cols)[i].lower() != alias.lower():
                    ctx.fail(
                        f"View.COLUMNS[{i}] = {tuple(cols)[i]!r}, expected alias {alias!r}"
                    )
        rels = getattr(self.view, "RELATIONS", None)
        if rels is None:
            ctx.fail("View.RELATIONS is missing")
        for rel in self.spec.relations:
            want = tuple(c.name for c in self.spec.tables[rel])
            have = rels.get(rel)
            if have is None or tuple(x.lower() for x in have) != want:
                ctx.fail(f"View.RELATIONS[{rel!r}] = {have!r}, expected {want!r}")

    def _check_types(self, ctx: _Context, rows: list[tuple]) -> None:
        desc = self.mirror.description
        for row in rows[:50]:
            if not isinstance(row, tuple):
                ctx.fail(f"rows() yielded a {type(row).__name__}, not a tuple: {row!r}")
            for i, v in enumerate(row):
                if v is None:  # SQL NULL: a value of every type
                    continue
                want = _expected_pytypes(desc[i][1])
                bad = not isinstance(v, want) or (
                    want == (int,) and isinstance(v, bool)
                )
                if (
                    want == (datetime.date,)
                    and "TIMESTAMP" not in str(desc[i][1]).upper()
                ):
                    bad = bad or isinstance(v, datetime.datetime)
                if bad:
                    ctx.fail(
                        f"column {i} ({desc[i][0]}, DuckDB type {desc[i][1]}) has "
                        f"{type(v).__name__} value {v!r}; expected {want[0].__name__}",
                    )

    def _check_enumerate(self, ctx: _Context, rows: list[tuple]) -> None:
        try:
            pairs = list(self.view.enumerate())
        except Exception as e:  # noqa: BLE001
            ctx.fail(f"view.enumerate() raised {type(e).__name__}: {e}")
        for t, m in pairs:
            if not isinstance(m, int) or isinstance(m, bool) or m <= 0:
                ctx.fail(f"enumerate() yielded multiplicity {m!r} for {t!r}")
        if self.spec.distinct:
            return
        total = sum(m for _, m in pairs)
        if total != len(rows):
            ctx.fail(
                f"sum of enumerate() multiplicities is {total}, len(rows()) is {len(rows)}"
            )
        if self.spec.plain_columns:
            bag = Counter()
            for t, m in pairs:
                bag[tuple(t)] += m
            if bag != Counter(rows):
                ctx.fail(
                    "enumerate() and rows() disagree",
                    "in rows() only:\n"
                    + _fmt_bag(Counter(rows) - bag)
                    + "\nin enumerate() only:\n"
                    + _fmt_bag(bag - Counter(rows)),
                )

    def _check_multiplicity(self, ctx: _Context, rows: list[tuple]) -> None:
        bag = Counter(rows)
        distinct_rows = sorted(bag, key=repr)
        # NaN equals NaN in SQL (and in the view): compare normalised rows
        normalised = Counter(norm_row(r) for r in rows)
        probes = self.rng.sample(distinct_rows, min(3, len(distinct_rows)))
        for row in distinct_rows[:5]:
            if row not in self.seen_rows:
                self.seen_rows.append(row)
        self.seen_rows = self.seen_rows[-200:]
        absent = [r for r in self.seen_rows if norm_row(r) not in normalised]
        probes += self.rng.sample(absent, min(2, len(absent)))
        if rows:
            r = list(rows[0])
            r[0] = _ABSENT.get(type(r[0]), "~absent~")
            probes.append(tuple(r))
        for row in probes:
            try:
                m = self.view.multiplicity(row)
            except Exception as e:  # noqa: BLE001  (every query answers: README)
                ctx.fail(f"multiplicity({row!r}) raised {type(e).__name__}: {e}")
            want = normalised.get(norm_row(row), 0)
            # DISTINCT: a row of the result occurs once (rows() holds it once).
            ok = m == want and not isinstance(m, bool)
            if not ok:
                ctx.fail(f"multiplicity({row!r}) = {m!r}, expected {want}")


# ---------------------------------------------------------------------------
# Entry points
# ---------------------------------------------------------------------------


def rows_of(group) -> list:
    """The rows a test's index keeps in one group: inline as the pair (row,
    count) while it holds one, a dict of them from the second."""
    return list(group) if isinstance(group, dict) else [group[0]]


def make_view(module, push: Counter | None = None):
    if push is None:
        return module.View()

    def on_delta(row, change):
        push[tuple(row)] += change
        if push[tuple(row)] == 0:
            del push[tuple(row)]

    return module.View(on_delta=on_delta)


def _rows_or_error(view):
    """The view's rows, or the error a read raises (a scalar subquery with
    several rows: no result)."""
    try:
        return Counter(view.rows())
    except Exception as e:  # noqa: BLE001 - compared as text
        if "more than one row" not in str(e) and "rows tie" not in str(e):
            raise
        return str(e)


class _ManyRows(Exception):
    """DuckDB's query failed (a scalar subquery had more than one row), or
    rows tie where the query numbers them (`QuerySpec.ties_sql`): the view
    reads nothing; the argument is what its error says."""


def run_differential(
    spec: QuerySpec,
    module,
    seed: int,
    n_events: int = 300,
    push: bool = False,
    target_rows: int = 14,
    null_rate: float = 0.0,
    no_null: Iterable[tuple[str, str]] = (),
    mirror: DuckMirror | None = None,
    warm: bool = False,
) -> dict:
    """Stream `n_events` row changes into a fresh view, checking every batch.

    Returns a few statistics for the caller to log and assert on: batches,
    how many checks had a non-empty result (`nonempty_results`: the view's
    result was not empty) and how many a non-trivial one (`nontrivial`:
    DuckDB's result differs from the result on the empty database, so a
    global COUNT's ever-present row does not count), the largest result.
    A failure (`DifferentialFailure`)
    carries the batches applied so far (`.batches`), for shrinking.
    """
    stream = UpdateStream(spec, seed, target_rows, null_rate, no_null, warm)
    return run_batches(
        spec,
        module,
        stream.batches(n_events),
        push=push,
        seed=seed,
        db=stream.db,
        mirror=mirror,
    )


def run_batches(
    spec: QuerySpec,
    module,
    batches: Iterable[Batch],
    push: bool = False,
    seed: int = 0,
    db: Database | None = None,
    mirror: DuckMirror | None = None,
) -> dict:
    """Apply `batches` (valid ones) to a fresh view, checking it against DuckDB
    before the first and after every batch (see `run_differential`). `db` is
    the database the batches' generator keeps up to date, if any; `mirror` a
    DuckDB mirror of `spec` to reuse (it is left open)."""
    pushed: Counter | None = Counter() if push else None
    own_db = db is None
    db = Database(spec.relations) if own_db else db
    checker = ViewChecker(spec, None, seed, pushed, mirror)
    ctx = _Context(spec, seed, 0, None, db)
    applied: list[Batch] = []
    try:
        try:
            checker.view = make_view(module, pushed)
        except Exception as e:  # noqa: BLE001
            ctx.fail(f"View() raised {type(e).__name__}: {e}")
        empty = norm_bag(checker.expected(ctx))
        checker.check(ctx)
        largest = nonempty = nontrivial = 0
        for i, batch in enumerate(batches, start=1):
            if own_db:
                db.apply(batch)
            applied.append(batch)
            ctx.batch_no, ctx.batch = i, batch
            try:
                batch.apply(checker.view)
            except Exception as e:  # noqa: BLE001
                ctx.fail(f"a valid batch raised {type(e).__name__}: {e}")
            got = checker.check(ctx, [batch.relation])
            largest = max(largest, sum(got.values()))
            nonempty += bool(got)
            nontrivial += checker.last_expected != empty
    except DifferentialFailure as e:
        e.batches = applied
        e.batch_no = ctx.batch_no
        raise
    finally:
        if mirror is None:
            checker.mirror.close()
    return {
        "batches": ctx.batch_no,
        "events": sum(b.events() for b in applied),
        "nonempty_results": nonempty,
        "nontrivial": nontrivial,
        "largest_result": largest,
    }


def _expect_rejected(
    ctx: _Context,
    checker: ViewChecker,
    what: str,
    call: Callable[[], Any],
    before: Counter,
    pushed: Counter | None,
) -> str:
    push_before = Counter(pushed) if pushed is not None else None
    try:
        call()
    except Exception as e:  # noqa: BLE001 - any exception is acceptable
        if not str(e).strip():
            ctx.fail(f"{what}: raised {type(e).__name__} without a message")
        after = _rows_or_error(checker.view)
        if after != before:
            ctx.fail(
                f"{what}: raised {type(e).__name__} but changed the result",
                "lost:\n"
                + _fmt_bag(before - after)
                + "\ngained:\n"
                + _fmt_bag(after - before),
            )
        if pushed is not None and pushed != push_before:
            ctx.fail(
                f"{what}: raised but on_delta reported a net change",
                _fmt_bag(+(pushed - push_before))
                + "\n  minus\n"
                + _fmt_bag(+(push_before - pushed)),
            )
        return f"{type(e).__name__}: {e}"
    ctx.fail(f"{what}: no exception was raised")
    return ""


def _expect_rejected_or_ignored(
    ctx: _Context,
    checker: ViewChecker,
    what: str,
    call: Callable[[], Any],
    before: Counter,
    pushed: Counter | None,
) -> str:
    """A delete a view compiled to trust its input may take or refuse: one
    of a row it keeps nothing of (filtered out) is a no-op, one that drives
    a kept count below zero raises. Either way the result must not change
    (the stream that follows finds hidden damage)."""
    push_before = Counter(pushed) if pushed is not None else None
    try:
        call()
    except Exception as e:  # noqa: BLE001 - any exception is acceptable
        message = f"{type(e).__name__}: {e}"
        if not str(e).strip():
            ctx.fail(f"{what}: raised {type(e).__name__} without a message")
    else:
        message = "(taken: the view keeps nothing of the row)"
    after = _rows_or_error(checker.view)
    if after != before:
        ctx.fail(
            f"{what}: changed the result ({message})",
            "lost:\n"
            + _fmt_bag(before - after)
            + "\ngained:\n"
            + _fmt_bag(after - before),
        )
    if pushed is not None and pushed != push_before:
        ctx.fail(f"{what}: on_delta reported a net change ({message})")
    return message


def check_atomicity(
    spec: QuerySpec,
    module,
    seed: int = 0,
    n_events: int = 60,
    push: bool = False,
    trusting: bool = False,
) -> list[str]:
    """Bad calls raise and change nothing; the view stays usable afterwards.

    With `push`, the view runs in push mode and a rejected call must not leave
    a net change in the deltas it reported. With `trusting` (a module
    compiled with trust_input), deletes of absent rows are not bad input; a
    delete of a present row more often than the whole relation holds rows
    must be refused or, where the view keeps nothing of the row, change
    nothing. Returns the exception messages seen (for logging).
    """
    pushed: Counter | None = Counter() if push else None
    view = make_view(module, pushed)
    stream = UpdateStream(spec, seed)
    checker = ViewChecker(spec, view, seed, pushed)
    ctx = _Context(spec, seed, 0, None, stream.db)
    for i, batch in enumerate(stream.batches(n_events), start=1):
        ctx.batch_no, ctx.batch = i, batch
        try:
            batch.apply(view)
        except Exception as e:  # noqa: BLE001
            ctx.fail(f"a valid batch raised {type(e).__name__}: {e}")
    ctx.batch = None
    checker.check(ctx)
    before = _rows_or_error(view)
    messages = []
    rng = random.Random(f"atomicity/{spec.name}/{seed}")

    def good_changes(rel: str) -> tuple[list[tuple], list[int]]:
        rows = [stream.random_row(rel) for _ in range(3)]
        mults = [1, 2, 1]
        present = sorted(stream.db.rels[rel], key=repr)
        if present:
            rows.append(rng.choice(present))
            mults.append(-1)
        return rows, mults

    for rel in spec.relations:
        arity = len(spec.tables[rel])
        absent = stream.absent_row(rel)
        rows, mults = good_changes(rel)
        cases = [
            (f"delete({rel!r}, absent row)", lambda: view.delete(rel, absent)),
            (
                f"update({rel!r}) with an absent delete last",
                lambda: view.update(rel, rows + [absent], mults + [-1]),
            ),
            (
                f"update({rel!r}) with an absent delete first",
                lambda: view.update(rel, [absent] + rows, [-1] + mults),
            ),
            (
                f"update({rel!r}) with a row of arity {arity + 1} last",
                lambda: view.update(
                    rel, rows + [stream.random_row(rel) + (1,)], mults + [1]
                ),
            ),
            (
                f"update({rel!r}) with a row of arity {arity - 1} in the middle",
                lambda: view.update(
                    rel,
                    rows[:1] + [stream.random_row(rel)[:-1]] + rows[1:],
                    mults[:1] + [1] + mults[1:],
                ),
            ),
            (
                f"insert({rel!r}, row of arity {arity + 1})",
                lambda: view.insert(rel, stream.random_row(rel) + (1,)),
            ),
            (
                f"insert({rel!r}, row of arity {arity - 1})",
                lambda: view.insert(rel, stream.random_row(rel)[:-1]),
            ),
            (
                f"delete({rel!r}, row of arity {arity + 1})",
                lambda: view.delete(rel, stream.random_row(rel) + (1,)),
            ),
        ]
        if trusting:  # an absent row's kept values may be present
            cases = [c for c in cases if "absent" not in c[0]]
        present = sorted(stream.db.rels[rel], key=repr)
        if present and trusting:
            victim = rng.choice(present)
            total = sum(stream.db.rels[rel].values())
            for what, call in [
                (
                    f"delete({rel!r}) of a present row {total + 1} times",
                    lambda: view.update(rel, [victim], [-(total + 1)]),
                ),
                (
                    f"update({rel!r}) deleting a present row {total + 1} times "
                    "in separate entries",
                    lambda: view.update(
                        rel, [victim] * (total + 1), [-1] * (total + 1)
                    ),
                ),
            ]:
                messages.append(
                    _expect_rejected_or_ignored(
                        ctx, checker, what, call, before, pushed
                    )
                )
        elif present:
            victim = rng.choice(present)
            count = stream.db.rels[rel][victim]
            # The other entries must not touch the victim, or the net change
            # of the batch could be valid after all.
            others = [(r, m) for r, m in zip(rows, mults) if r != victim]
            o_rows = [r for r, _ in others]
            o_mults = [m for _, m in others]
            cases.append(
                (
                    f"update({rel!r}) deleting a row {count + 1} times (present {count})",
                    lambda: view.update(
                        rel, o_rows + [victim], o_mults + [-(count + 1)]
                    ),
                )
            )
            cases.append(
                (
                    f"update({rel!r}) deleting a row once too often in separate entries",
                    lambda: view.update(
                        rel,
                        [victim] * (count + 1) + o_rows,
                        [-1] * (count + 1) + o_mults,
                    ),
                )
            )
        for what, call in cases:
            messages.append(_expect_rejected(ctx, checker, what, call, before, pushed))
    good = spec.relations[0]
    row = stream.random_row(good)
    for what, call in [
        (
            "insert('no_such_relation', row)",
            lambda: view.insert("no_such_relation", row),
        ),
        (
            "delete('no_such_relation', row)",
            lambda: view.delete("no_such_relation", row),
        ),
        (
            "update('no_such_relation', [row])",
            lambda: view.update("no_such_relation", [row]),
        ),
    ]:
        messages.append(_expect_rejected(ctx, checker, what, call, before, pushed))
    ctx.batch_no, ctx.batch = -1, None
    checker.check(ctx)
    # Keep going: a rejected call must not have left hidden damage behind.
    for i, batch in enumerate(stream.batches(n_events), start=ctx.batch_no + 1):
        ctx.batch_no, ctx.batch = i, batch
        try:
            batch.apply(view)
        except Exception as e:  # noqa: BLE001
            ctx.fail(
                f"a valid batch after the rejected calls raised {type(e).__name__}: {e}"
            )
        checker.check(ctx, [batch.relation])
    checker.mirror.close()
    return messages


def reference_result(spec: QuerySpec, db: Database) -> Counter:
    """DuckDB's normalised answer on a database (for ad-hoc tests)."""
    mirror = DuckMirror(spec)
    mirror.load(db)
    try:
        return norm_bag(mirror.query())
    finally:
        mirror.close()


_RE_WS = re.compile(r"\s+")


def describe(spec: QuerySpec) -> str:
    """One line for logs: name and the SELECT squeezed onto a line."""
    return f"{spec.name}: {_RE_WS.sub(' ', spec.select_sql)}"
