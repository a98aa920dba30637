"""The differential fuzzer's query generator: SQL drawn from small productions.

A query is built in phases, each a list of *productions* (small functions
that add one construct to a `Query`): FROM (atoms: tables, derived tables,
CTEs), JOIN (an edge of a random join tree between two atoms: equality,
several equalities, inequality, band, `<>` on the edge, LEFT/RIGHT/FULL
JOIN, none = a cartesian product), WHERE (local filters of every supported
form, IS [NOT] NULL, cross-table conditions, IN/EXISTS/NOT IN/NOT EXISTS
and scalar subqueries), SELECT (`*`, columns, expressions, DISTINCT, GROUP
BY with every aggregate, HAVING, arithmetic over aggregates) and a tail
(ORDER BY/LIMIT/OFFSET, UNION/INTERSECT/EXCEPT [ALL]). A production is
picked by weight among the enabled ones of its phase; a construct the
compiler learns is one more production. A production for a construct that
does not compile yet is listed with ``enabled=False`` (none is, since
2026-11-24); `enable()` (or ``scripts/fuzz.py --enable NAME``) switches it
on once it compiles.

Queries are structured (`Query`: atoms, conjuncts, SELECT items, GROUP BY
keys, HAVING conjuncts), so the shrinker (tests/fuzzrun.py) can drop parts.
Every part records the atom aliases it mentions and the columns where the
module contract allows no NULL (a column an expression in SELECT or GROUP BY
computes with: README, docs/robustness.md); the update stream puts NULLs
everywhere else.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field, replace
from typing import Callable

# table -> [(column, kind, NOT NULL?)]; kinds: int, dec (DECIMAL), dbl
# (DOUBLE), str, date
TABLES: dict[str, list[tuple[str, str, bool]]] = {
    "r1": [("x", "int", False), ("y", "int", False), ("z", "int", False)],
    "r2": [("x", "int", False), ("y", "int", False), ("w", "dbl", False)],
    "r3": [("y", "int", False), ("v", "int", False), ("amt", "dec", False)],
    "r4": [("x", "int", False), ("v", "int", False), ("tag", "str", False)],
    "r5": [("k", "int", True), ("x", "int", True), ("p", "dec", True)],
    "r6": [("y", "int", False), ("d", "date", False), ("tag", "str", False)],
}
SQL_TYPES = {
    "int": "INTEGER",
    "dec": "DECIMAL(6, 2)",
    "dbl": "DOUBLE",
    "str": "VARCHAR",
    "date": "DATE",
}
SCHEMA = "\n".join(
    f"CREATE TABLE {t} ("
    + ", ".join(f"{c} {SQL_TYPES[k]}{' NOT NULL' if nn else ''}" for c, k, nn in cols)
    + ");"
    for t, cols in TABLES.items()
)
NUMERIC = ("int", "dec", "dbl")
SAME_ROWS = "__SAME_ROWS__"  # in HAVING: the query's own FROM and WHERE
DATES = ["1995-01-01", "1995-01-03", "1995-01-05"]
STRINGS = ["a", "b", "ab"]
LIKE_PATTERNS = ["a%", "%b", "_", "ab", "%a%", "a_"]


# --- the query ----------------------------------------------------------------------


@dataclass(frozen=True)
class Part:
    """A piece of SQL: the aliases of the outer atoms it mentions and the
    (table, column) pairs that must not hold NULL while it is in the query."""

    sql: str
    aliases: frozenset = frozenset()
    no_null: frozenset = frozenset()


@dataclass(frozen=True)
class Atom:
    """A FROM item: a table, or a derived table exporting `columns`."""

    alias: str
    table: str | None  # None: a derived table
    columns: tuple  # ((name, kind), ...)
    sql: str  # as it appears in FROM
    no_null: frozenset = frozenset()
    # derived table: column -> the stored (table, column) pairs it comes from
    sources: tuple = ()

    @property
    def outer(self) -> bool:
        """An outer join: its ON condition sees every earlier atom."""
        return self.sql.split(" ", 1)[0] in ("LEFT", "RIGHT", "FULL")


@dataclass
class Query:
    atoms: list[Atom] = field(default_factory=list)
    where: list[Part] = field(default_factory=list)
    items: list[Part] = field(default_factory=list)  # SELECT list ([] = *)
    group_by: list[Part] = field(default_factory=list)
    having: list[Part] = field(default_factory=list)
    grouped: bool = False  # aggregates or GROUP BY
    distinct: bool = False
    tail: str = ""  # ORDER BY/LIMIT/OFFSET
    ctes: list[str] = field(default_factory=list)  # WITH name AS (…)
    semi: list[str] = field(default_factory=list)  # `SEMI|ANTI JOIN …` after FROM
    set_op: str = ""  # the query UNION/INTERSECT/EXCEPT [ALL] itself …
    set_filter: Part | None = None  # … with this conjunct more on the right
    tags: list[str] = field(default_factory=list)  # productions used
    # DuckDB conditions true while rows tie where the query numbers them
    # (DuckDB then picks any row and the View reads nothing)
    ties: list[Part] = field(default_factory=list)

    def select_sql(self) -> str:
        items = (
            ", ".join(f"{p.sql} AS o{i}" for i, p in enumerate(self.items))
            if self.items
            else "*"
        )
        # an outer JOIN binds tighter than a comma: with one, the others are
        # CROSS JOINs, so that its ON condition sees every earlier atom
        outer = any(a.outer for a in self.atoms)
        sep = " CROSS JOIN " if outer else ", "
        from_sql = self.atoms[0].sql + "".join(
            (" " if a.outer else sep) + a.sql for a in self.atoms[1:]
        )
        from_sql += "".join(f" {j}" for j in self.semi)
        head = f"SELECT {'DISTINCT ' if self.distinct else ''}{items} FROM {from_sql}"

        def body(where: list[Part]) -> str:
            sql = head
            rows = f"FROM {from_sql}"
            if where:
                rows += " WHERE " + " AND ".join(p.sql for p in where)
                sql += " WHERE " + " AND ".join(p.sql for p in where)
            if self.group_by:
                sql += " GROUP BY " + ", ".join(p.sql for p in self.group_by)
            if self.having:
                having = " AND ".join(p.sql for p in self.having)
                sql += " HAVING " + having.replace(SAME_ROWS, rows)
            return sql

        sql = body(self.where)
        if self.set_op:
            extra = [self.set_filter] if self.set_filter else []
            sql = f"{sql} {self.set_op} {body(self.where + extra)}"
        if self.ctes:
            sql = "WITH " + ", ".join(self.ctes) + " " + sql
        return sql + self.tail

    def text(self) -> str:
        """The whole query file: the schema, then the SELECT."""
        ties = ""
        if self.ties:
            ties = " OR ".join(f"({t.sql})" for t in self.ties)
            ties = f"-- ties: SELECT {ties}\n"
        return ties + SCHEMA + "\n" + self.select_sql() + ";\n"

    def no_null(self) -> set[tuple[str, str]]:
        out: set = set()
        for a in self.atoms:
            out |= a.no_null
        for p in (*self.where, *self.items, *self.group_by, *self.having):
            out |= p.no_null
        return out

    def without_atom(self, alias: str) -> "Query | None":
        """The query without one atom and every part that mentions it."""
        if len(self.atoms) < 2:
            return None

        def keep(parts):
            return [p for p in parts if alias not in p.aliases]

        q = replace(
            self,
            atoms=[a for a in self.atoms if a.alias != alias],
            where=keep(self.where),
            items=keep(self.items),
            group_by=keep(self.group_by),
            having=keep(self.having),
            ties=keep(self.ties),
            set_filter=(
                None
                if self.set_filter and alias in self.set_filter.aliases
                else self.set_filter
            ),
        )
        if (self.items and not q.items) or q.atoms[0].outer:
            return None  # nothing selected, or a first JOIN with nothing before it
        return q


# --- generation context ---------------------------------------------------------------


class Gen:
    """Random choices for one query, and helpers the productions share."""

    def __init__(self, rng: random.Random, query: Query, enabled: set[str]):
        self.rng = rng
        self.q = query
        self.enabled = enabled
        self.n_sub = 0

    def choice(self, xs):
        return self.rng.choice(list(xs))

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def cols(self, atom: Atom, kinds=None) -> list[tuple[str, str]]:
        return [(c, k) for c, k in atom.columns if kinds is None or k in kinds]

    def col(self, atom: Atom, kinds=None) -> tuple[str, str] | None:
        """A random column reference `alias.c` of `atom` and its kind."""
        cs = self.cols(atom, kinds)
        if not cs:
            return None
        c, k = self.choice(cs)
        return f"{atom.alias}.{c}", k

    def base(self, atom: Atom, ref: str) -> frozenset:
        """The stored (table, column) pairs a column reference reads."""
        column = ref.split(".", 1)[1]
        if atom.table is None:
            return frozenset(dict(atom.sources).get(column, ()))
        return frozenset({(atom.table, column)})

    def literal(self, kind: str) -> str:
        if kind == "int":
            return str(self.rng.randint(0, 4))
        if kind == "dec":
            return self.choice(["1.00", "2.50", "0.75"])
        if kind == "dbl":
            return self.choice(["1.0", "2.5", "0.5"])
        if kind == "str":
            return f"'{self.choice(STRINGS)}'"
        return f"DATE '{self.choice(DATES)}'"

    def sub_alias(self) -> str:
        self.n_sub += 1
        return f"s{self.n_sub}"


@dataclass
class Production:
    name: str
    phase: str  # "from" | "join" | "filter" | "cross" | "subquery" | "select" | "tail"
    weight: float
    make: Callable  # (gen, *args) -> bool (False: not applicable here)
    enabled: bool = True
    note: str = ""


PRODUCTIONS: list[Production] = []


def production(phase: str, weight: float = 1.0, enabled: bool = True, note: str = ""):
    def register(fn):
        PRODUCTIONS.append(Production(fn.__name__, phase, weight, fn, enabled, note))
        return fn

    return register


def enable(names) -> None:
    """Switch productions on by name (e.g. once the compiler supports them)."""
    _check_names(names)
    for p in PRODUCTIONS:
        if p.name in names:
            p.enabled = True


def reweight(weights: dict[str, float]) -> None:
    """Change productions' weights by name: a run that exercises a new
    construct often (the query sequence of a seed changes with them)."""
    _check_names(weights)
    for p in PRODUCTIONS:
        p.weight = weights.get(p.name, p.weight)


def _check_names(names) -> None:
    known = {p.name for p in PRODUCTIONS}
    unknown = set(names) - known
    if unknown:
        raise ValueError(
            f"unknown production(s) {', '.join(sorted(unknown))}; "
            f"known: {', '.join(sorted(known))}"
        )


def _pick(g: Gen, phase: str, *args) -> str | None:
    """Run one enabled production of `phase` (by weight; on False, another;
    one of weight 0 never)."""
    options = [p for p in PRODUCTIONS if p.phase == phase and p.enabled and p.weight]
    while options:
        p = g.rng.choices(options, [o.weight for o in options])[0]
        if p.make(g, *args) is not False:
            g.q.tags.append(p.name)
            return p.name
        options.remove(p)
    return None


# --- FROM -------------------------------------------------------------------------------


def _table_atom(table: str, alias: str) -> Atom:
    cols = tuple((c, k) for c, k, _ in TABLES[table])
    return Atom(alias, table, cols, f"{table} {alias}")


@production("from", weight=8)
def table(g: Gen, alias: str):
    g.q.atoms.append(_table_atom(g.choice(sorted(TABLES)), alias))


@production("from", weight=1)
def derived_select(g: Gen, alias: str):
    """(SELECT t.a AS a, t.b AS b FROM t WHERE …) alias"""
    t = g.choice(sorted(TABLES))
    inner = _table_atom(t, "i" + alias)
    cols = g.rng.sample(g.cols(inner), min(len(inner.columns), g.rng.randint(2, 3)))
    items = ", ".join(f"{inner.alias}.{c} AS {c}" for c, _ in cols)
    where = ""
    ref = g.col(inner, ("int",))
    if ref and g.chance(0.6):
        where = f" WHERE {ref[0]} {g.choice(['<', '>=', '<>'])} {g.literal('int')}"
    sql = f"(SELECT {items} FROM {t} {inner.alias}{where}) {alias}"
    sources = tuple((c, frozenset({(t, c)})) for c, _ in cols)
    g.q.atoms.append(Atom(alias, None, tuple(cols), sql, sources=sources))


@production("from", weight=1)
def derived_group(g: Gen, alias: str):
    """(SELECT t.k AS k, COUNT(*) AS n, SUM(t.m) AS s FROM t GROUP BY t.k [HAVING]) alias"""
    t = g.choice(sorted(TABLES))
    inner = _table_atom(t, "i" + alias)
    key = g.col(inner, ("int", "str"))
    num = g.col(inner, NUMERIC)
    if key is None or num is None:
        return False
    items = [f"{key[0]} AS k", "COUNT(*) AS n"]
    cols = [("k", key[1]), ("n", "int")]
    agg = g.choice(["SUM", "MIN", "MAX"])
    items.append(f"{agg}({num[0]}) AS m")
    cols.append(("m", "int" if num[1] == "int" else num[1]))
    having = f" HAVING COUNT(*) > {g.rng.randint(0, 1)}" if g.chance(0.3) else ""
    sql = (
        f"(SELECT {', '.join(items)} FROM {t} {inner.alias} "
        f"GROUP BY {key[0]}{having}) {alias}"
    )
    base = lambda ref: frozenset({(t, ref.split(".", 1)[1])})  # noqa: E731
    sources = (("k", base(key[0])), ("m", base(num[0])))
    g.q.atoms.append(Atom(alias, None, tuple(cols), sql, sources=sources))


@production("from", weight=0)  # drawn with --weight: earlier seeds keep theirs
def first_row_per_key(g: Gen, alias: str):
    """The first row of each key in an order, as people write it: (SELECT
    …, ROW_NUMBER() OVER (PARTITION BY k ORDER BY o [DESC], …) AS rn FROM t)
    alias, with `alias.rn = 1` in WHERE, or the same numbered in QUALIFY.
    The order may tie (DuckDB then picks any row, the View reads nothing)."""
    t = g.choice(sorted(TABLES))
    inner = _table_atom(t, "i" + alias)
    cols = g.rng.sample(g.cols(inner), min(len(inner.columns), g.rng.randint(2, 3)))
    names = [c for c, _ in cols]
    key = g.col(inner, ("int", "str"))
    order = [g.col(inner) for _ in range(g.rng.randint(1, 2))]
    if key is None or None in order:
        return False
    by = ", ".join(
        f"{o[0]}{g.choice(['', ' DESC', ' DESC NULLS FIRST'])}" for o in order
    )
    window = f"ROW_NUMBER() OVER (PARTITION BY {key[0]} ORDER BY {by})"
    items = ", ".join(f"{inner.alias}.{c} AS {c}" for c in names)
    if g.chance(0.5):  # numbered in QUALIFY
        sql = f"(SELECT {items} FROM {t} {inner.alias} QUALIFY {window} = 1) {alias}"
    else:
        sql = f"(SELECT {items}, {window} AS rn FROM {t} {inner.alias}) {alias}"
        test = f"{alias}.rn {g.choice(['= 1', '<= 1', '< 2'])}"
        g.q.where.append(Part(test, frozenset({alias})))
    needed = list(
        dict.fromkeys(
            [*names, key[0].split(".")[1]] + [o[0].split(".")[1] for o in order]
        )
    )
    rows = ", ".join(f"{inner.alias}.{c} AS {c}" for c in needed)
    d_by = by.replace(f"{inner.alias}.", "d.")
    d_key = key[0].replace(f"{inner.alias}.", "d.")
    ties = (
        f"SELECT COUNT(*) > 0 FROM (SELECT f.k FROM (SELECT {d_key} AS k FROM "
        f"(SELECT DISTINCT {rows} FROM {t} {inner.alias}) AS d QUALIFY RANK() "
        f"OVER (PARTITION BY {d_key} ORDER BY {d_by}) = 1) AS f GROUP BY f.k "
        "HAVING COUNT(*) > 1) AS g"
    )
    g.q.ties.append(Part(ties, frozenset({alias})))
    sources = tuple((c, frozenset({(t, c)})) for c in names)
    g.q.atoms.append(Atom(alias, None, tuple(cols), sql, sources=sources))


@production("from", weight=0)  # drawn with --weight: earlier seeds keep theirs
def top_rows_per_key(g: Gen, alias: str):
    """The top n rows of each key (or of the table) in an order, as people
    write them: (SELECT …, ROW_NUMBER() or RANK() OVER ([PARTITION BY k]
    ORDER BY o [DESC], …) AS rn FROM t) alias with `alias.rn <= n` in WHERE,
    or the same kept by QUALIFY (`<= n`, `< n + 1`), the number read or not.
    The first ORDER BY key of a ROW_NUMBER() is an INTEGER, which the
    compiler may cut at the n-th place (passes/top_rows.py); the windows'
    view outputs the places up to n alone: the View reads nothing while
    two rows tie in the whole order at a place up to n (DuckDB then picks
    any), ties further down decide nothing."""
    t = g.choice(sorted(TABLES))
    inner = _table_atom(t, "i" + alias)
    cols = g.rng.sample(g.cols(inner), min(len(inner.columns), g.rng.randint(2, 3)))
    names = [c for c, _ in cols]
    key = g.col(inner, ("int", "str")) if g.chance(0.7) else None
    rank = g.choice(["ROW_NUMBER", "RANK"])
    first = g.col(inner, ("int",) if rank == "ROW_NUMBER" else None)
    order = [first] + [g.col(inner) for _ in range(g.rng.randint(0, 1))]
    if None in order:
        return False
    ways = [
        f"{o[0]}{g.choice(['', ' DESC', ' DESC NULLS FIRST', ' NULLS FIRST'])}"
        for o in order
    ]
    partition = f"PARTITION BY {key[0]} " if key else ""
    window = f"{rank}() OVER ({partition}ORDER BY {', '.join(ways)})"
    n = g.rng.randint(2, 4)
    rn = f"{alias}_rn"  # one name per table: an unqualified one is ambiguous
    items = ", ".join(f"{inner.alias}.{c} AS {c}" for c in names)
    if g.chance(0.5):  # kept in QUALIFY
        kept = g.choice([f"<= {n}", f"< {n + 1}"])
        if g.chance(0.5):
            sql = f"(SELECT {items} FROM {t} {inner.alias} QUALIFY {window} {kept}) {alias}"
        else:
            sql = f"(SELECT {items}, {window} AS {rn} FROM {t} {inner.alias} QUALIFY {rn} {kept}) {alias}"
            cols = [*cols, (rn, "int")]
    else:
        sql = f"(SELECT {items}, {window} AS {rn} FROM {t} {inner.alias}) {alias}"
        g.q.where.append(Part(f"{alias}.{rn} <= {n}", frozenset({alias})))
        cols = [*cols, (rn, "int")]
    if rank == "ROW_NUMBER":
        columns = [key[0]] if key else []
        columns += [o[0] for o in order]
        needed = list(dict.fromkeys(c.split(".")[1] for c in columns))
        rows = ", ".join(f"{inner.alias}.{c} AS {c}" for c in needed)
        d = lambda text: text.replace(f"{inner.alias}.", "c.")  # noqa: E731
        ties = (
            f"SELECT COUNT(*) > 0 FROM (SELECT 1 FROM (SELECT {rows}, RANK() OVER "
            f"({partition}ORDER BY {', '.join(ways)}) AS r1 FROM {t} {inner.alias}) "
            f"AS c WHERE c.r1 <= {n} GROUP BY {', '.join(d(c) for c in columns)} "
            "HAVING COUNT(*) > 1) AS g"
        )
        g.q.ties.append(Part(ties, frozenset({alias})))
    sources = tuple((c, frozenset({(t, c)})) for c in names)
    g.q.atoms.append(Atom(alias, None, tuple(cols), sql, sources=sources))


def _window_source(g: Gen, alias: str, keyed: float):
    """A table for a window in a derived table: the table, its atom, one or
    two of its columns to output, a PARTITION BY key (with chance `keyed`)
    and one or two ORDER BY columns (None among them: none fits)."""
    t = g.choice(sorted(TABLES))
    inner = _table_atom(t, "i" + alias)
    cols = g.rng.sample(g.cols(inner), min(len(inner.columns), g.rng.randint(1, 2)))
    key = g.col(inner, ("int", "str")) if g.chance(keyed) else None
    order = [g.col(inner) for _ in range(g.rng.randint(1, 2))]
    return t, inner, cols, key, order


def _window_order(g: Gen, key, order) -> str:
    """A window's `[PARTITION BY k] ORDER BY o [DESC] [NULLS …], …`."""
    by = ", ".join(
        f"{o[0]}{g.choice(['', ' DESC', ' NULLS FIRST', ' DESC NULLS LAST'])}"
        for o in order
    )
    return (f"PARTITION BY {key[0]} " if key else "") + f"ORDER BY {by}"


def _window_table(alias, suffix, t, inner, names, window) -> tuple[str, str]:
    """The derived table of table `t`'s columns `names` and `window`, and
    the window's column name (one per table: an unqualified one is
    ambiguous)."""
    w = f"{alias}_{suffix}"
    items = ", ".join(f"{inner.alias}.{c} AS {c}" for c in names)
    return w, f"(SELECT {items}, {window} AS {w} FROM {t} {inner.alias}) {alias}"


def _window_atom(g: Gen, alias, t, inner, names, cols, sql, key, order, read):
    """The derived table `sql` (a window over table `t`, outputting its
    columns `names`) as the atom `alias` of columns `cols`, and its ties
    query unless `read` is None: two rows that differ in a column the query
    reads (those, the window's keys, the columns `read`) tie in its order."""
    if read is not None:
        peers = ([key[0]] if key else []) + [o[0] for o in order]
        shown = [f"{inner.alias}.{c}" for c in names]
        shown = dict.fromkeys(shown + peers + read)
        ties = (
            f"SELECT COUNT(*) > 0 FROM (SELECT 1 FROM {t} {inner.alias} GROUP BY "
            f"{', '.join(dict.fromkeys(peers))} HAVING COUNT(DISTINCT ROW("
            f"{', '.join(shown)})) > 1) AS g"
        )
        g.q.ties.append(Part(ties, frozenset({alias})))
    sources = tuple((c, frozenset({(t, c)})) for c in names)
    g.q.atoms.append(Atom(alias, None, tuple(cols), sql, sources=sources))


@production("from", weight=0)  # drawn with --weight: earlier seeds keep theirs
def rows_frame_per_key(g: Gen, alias: str):
    """An aggregate over a sliding ROWS frame as people write a moving
    average: (SELECT …, AGG(x) OVER ([PARTITION BY k] ORDER BY o [DESC], …
    ROWS BETWEEN … AND …) AS w FROM t) alias. The order may tie: the View
    reads nothing while two rows that differ in a column the query reads
    tie (copies of a row give the same output in either order), as its
    ties query says."""
    t, inner, cols, key, order = _window_source(g, alias, 0.7)
    names = [c for c, _ in cols]
    num = g.col(inner, NUMERIC)
    if None in order or num is None:
        return False
    n, m = g.rng.randint(0, 3), g.rng.randint(0, 3)
    start, end = g.choice(
        [
            (f"{n} PRECEDING", "CURRENT ROW"),
            (f"{n} PRECEDING", f"{m} FOLLOWING"),
            (f"{max(n, m)} PRECEDING", f"{min(n, m)} PRECEDING"),
            (f"{min(n, m)} FOLLOWING", f"{max(n, m)} FOLLOWING"),
            ("CURRENT ROW", f"{m} FOLLOWING"),
            ("UNBOUNDED PRECEDING", g.choice([f"{n} PRECEDING", f"{m} FOLLOWING"])),
            (g.choice(["CURRENT ROW", f"{n} PRECEDING"]), "UNBOUNDED FOLLOWING"),
        ]
    )
    agg = g.choice(["SUM", "AVG", "COUNT", "MIN", "MAX", "COUNT(*)"])
    arg = "COUNT(*)" if agg == "COUNT(*)" else f"{agg}({num[0]})"
    over = _window_order(g, key, order)
    window = f"{arg} OVER ({over} ROWS BETWEEN {start} AND {end})"
    w, sql = _window_table(alias, "w", t, inner, names, window)
    kind = "int" if agg.startswith("COUNT") else "dbl" if agg == "AVG" else num[1]
    cols = [*cols, (w, kind)]
    read = [] if agg == "COUNT(*)" else [num[0]]
    _window_atom(g, alias, t, inner, names, cols, sql, key, order, read)


@production("from", weight=0)  # drawn with --weight: earlier seeds keep theirs
def distinct_in_order(g: Gen, alias: str):
    """A DISTINCT aggregate over an order as people write a running count of
    distinct users: (SELECT …, COUNT|SUM|AVG(DISTINCT x) OVER ([PARTITION BY
    k] ORDER BY o, … [ROWS BETWEEN … AND …]) AS w FROM t) alias. A ROWS
    frame's order may tie: the View reads nothing while two rows that differ
    in a column the query reads tie, as its ties query says."""
    t, inner, cols, key, order = _window_source(g, alias, 0.6)
    names = [c for c, _ in cols]
    agg = g.choice(["COUNT", "COUNT", "SUM", "AVG"])
    x = g.col(inner) if agg == "COUNT" else g.col(inner, NUMERIC)
    if None in order or x is None:
        return False
    n, m = g.rng.randint(0, 3), g.rng.randint(0, 3)
    frame = g.choice(
        [
            "",
            "",
            f" ROWS BETWEEN {n} PRECEDING AND CURRENT ROW",
            f" ROWS BETWEEN {n} PRECEDING AND {m} FOLLOWING",
            " ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING",
            " ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW",
        ]
    )
    over = _window_order(g, key, order)
    window = f"{agg}(DISTINCT {x[0]}) OVER ({over}{frame})"
    w, sql = _window_table(alias, "w", t, inner, names, window)
    kind = "int" if agg == "COUNT" else "dbl" if agg == "AVG" else x[1]
    cols = [*cols, (w, kind)]
    read = [x[0]] if frame else None  # (a RANGE frame's peers: no order)
    _window_atom(g, alias, t, inner, names, cols, sql, key, order, read)


@production("from", weight=0)  # drawn with --weight: earlier seeds keep theirs
def folded_per_key(g: Gen, alias: str):
    """A rolling median, a path of values or the latest best as people write
    them: (SELECT …, MEDIAN(x) | QUANTILE_CONT(x, q) | QUANTILE_DISC(x, q) |
    STRING_AGG(x, sep) | ARG_MAX/ARG_MIN(x, y) OVER ([PARTITION BY k] ORDER BY o, … [ROWS BETWEEN … AND …]) AS w
    FROM t) alias. The order may tie: the View reads nothing while two rows
    that differ in a column the query reads tie where their order matters
    (a ROWS frame, STRING_AGG's joined values), as its ties query says."""
    t, inner, cols, key, order = _window_source(g, alias, 0.6)
    names = [c for c, _ in cols]
    agg = g.choice(
        ["MEDIAN", "QUANTILE_CONT", "QUANTILE_DISC", "STRING_AGG", "ARG_MAX", "ARG_MIN"]
    )
    x = g.col(inner, ("str",) if agg == "STRING_AGG" else NUMERIC)
    y = g.col(inner) if agg.startswith("ARG_") else x
    if None in order or x is None or y is None:
        return False
    n, m = g.rng.randint(0, 3), g.rng.randint(0, 3)
    frame = g.choice(
        [
            "",
            f" ROWS BETWEEN {n} PRECEDING AND CURRENT ROW",
            f" ROWS BETWEEN {n} PRECEDING AND {m} FOLLOWING",
            " ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING",
        ]
    )
    over = _window_order(g, key, order)
    q = g.choice(["0.25", "0.5", "0.9", "0", "1"])
    args = {
        "MEDIAN": x[0],
        "QUANTILE_CONT": f"{x[0]}, {q}",
        "QUANTILE_DISC": f"{x[0]}, {q}",
        "STRING_AGG": f"{x[0]}, '{g.choice([',', '|', ''])}'",
        "ARG_MAX": f"{x[0]}, {y[0]}",
        "ARG_MIN": f"{x[0]}, {y[0]}",
    }[agg]
    window = f"{agg}({args}) OVER ({over}{frame})"
    w, sql = _window_table(alias, "w", t, inner, names, window)
    kind = (
        "str"
        if agg == "STRING_AGG"
        else (
            x[1]
            if agg in ("QUANTILE_DISC", "ARG_MAX", "ARG_MIN") or x[1] == "dec"
            else "dbl"
        )
    )
    cols = [*cols, (w, kind)]
    # a quantile over a RANGE frame reads its peers in any order: no ties
    picks = agg in ("STRING_AGG", "ARG_MAX", "ARG_MIN")  # (the first in order)
    read = list(dict.fromkeys([x[0], y[0]])) if frame or picks else None
    _window_atom(g, alias, t, inner, names, cols, sql, key, order, read)


@production("from", weight=0)  # drawn with --weight: earlier seeds keep theirs
def picked_per_key(g: Gen, alias: str):
    """A value picked from another row as people write a forward fill or a
    previous reading: (SELECT …, LAG(x[, n[, d]] IGNORE NULLS) | LEAD(…) |
    FIRST_VALUE/LAST_VALUE(x [IGNORE NULLS]) OVER ([PARTITION BY k] ORDER BY
    o, … [ROWS BETWEEN … AND …]) AS v FROM t) alias. The order may tie: the
    View reads nothing while two rows that differ in a column the query
    reads tie, as its ties query says."""
    t, inner, cols, key, order = _window_source(g, alias, 0.7)
    names = [c for c, _ in cols]
    x = g.col(inner)
    if None in order or x is None:
        return False
    n, m = g.rng.randint(0, 3), g.rng.randint(0, 3)
    over = _window_order(g, key, order)
    shift = g.choice(["LAG", "LEAD", "FIRST_VALUE", "LAST_VALUE", "NTH_VALUE"])
    frame = ""
    if shift in ("LAG", "LEAD"):
        args = x[0]
        if g.chance(0.5):
            args += f", {n + 1}"
            if g.chance(0.5) and x[1] in ("int", "dec"):
                args += f", {g.choice([0, -1, 7])}"
        call = f"{shift}({args} IGNORE NULLS)"
    else:
        ignore = g.chance(0.7)
        place = f", {g.rng.randint(1, 3)}" if shift == "NTH_VALUE" else ""
        call = f"{shift}({x[0]}{place}{' IGNORE NULLS' if ignore else ''})"
        start, end = g.choice(
            [
                (f"{n} PRECEDING", "CURRENT ROW"),
                (f"{n} PRECEDING", f"{m} FOLLOWING"),
                (f"{max(n, m)} PRECEDING", f"{min(n, m)} PRECEDING"),
                (f"{min(n, m)} FOLLOWING", f"{max(n, m)} FOLLOWING"),
                ("CURRENT ROW", "UNBOUNDED FOLLOWING"),
                ("UNBOUNDED PRECEDING", g.choice([f"{n} PRECEDING", "CURRENT ROW"])),
                (None, None),  # the default frame
            ]
        )
        if start is not None:
            frame = f" ROWS BETWEEN {start} AND {end}"
        elif not ignore:
            return False  # the default frame of the plain ones: window_ends
        elif place and g.chance(0.3):
            frame = " ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING"
    window = f"{call} OVER ({over}{frame})"
    v, sql = _window_table(alias, "v", t, inner, names, window)
    cols = [*cols, (v, x[1])]
    _window_atom(g, alias, t, inner, names, cols, sql, key, order, [x[0]])


@production("from", weight=1)
def with_table(g: Gen, alias: str):
    """WITH walias AS (SELECT * FROM t WHERE …): a common table expression."""
    t = g.choice(sorted(TABLES))
    inner = _table_atom(t, "i" + alias)
    ref = g.col(inner, ("int",))
    where = f" WHERE {ref[0]} <> {g.literal('int')}" if ref else ""
    g.q.ctes.append(f"w{alias} AS (SELECT * FROM {t} {inner.alias}{where})")
    cols = inner.columns
    sources = tuple((c, frozenset({(t, c)})) for c, _ in cols)
    g.q.atoms.append(Atom(alias, None, cols, f"w{alias} {alias}", sources=sources))


@production("from", weight=0.5)
def values_table(g: Gen, alias: str):
    """(VALUES (1, 'a'), …) alias(k, v): constant rows (a duplicate or a NULL
    among them), never the first FROM item (a stream needs a table)."""
    if not g.q.atoms:
        return False
    kinds = g.choice([("int", "str"), ("int", "dec"), ("str", "date")])
    rows = []
    for _ in range(g.rng.randint(1, 4)):
        row = [g.literal(k) if not g.chance(0.1) else "NULL" for k in kinds]
        rows.append(row)
    for i, k in enumerate(kinds):  # a column of NULLs alone has no type in DuckDB
        if all(row[i] == "NULL" for row in rows):  # (fixture 229 has one)
            rows[0][i] = g.literal(k)
    if g.chance(0.3):
        rows.append(list(rows[0]))
    body = ", ".join("(" + ", ".join(r) + ")" for r in rows)
    cols = tuple((f"c{i}", k) for i, k in enumerate(kinds))
    names = ", ".join(c for c, _ in cols)
    g.q.atoms.append(Atom(alias, None, cols, f"(VALUES {body}) {alias}({names})"))


@production("from", weight=0.6)
def lateral_select(g: Gen, alias: str):
    """LATERAL (SELECT s.a AS a, … FROM t s WHERE s.k = outer.col [AND s.x op
    outer.y]) alias: a join with its rows per key (an inequality in ON), or
    LATERAL (SELECT COUNT(*) AS n, SUM(…) AS m …): one row per outer row."""
    outer = [a for a in g.q.atoms if not a.outer]
    if not outer:
        return False
    a = g.choice(outer)
    ref = g.col(a, ("int",))
    if ref is None:
        return False
    t = g.choice(sorted(TABLES))
    inner = _table_atom(t, "l" + alias)
    key = g.col(inner, ("int",))
    where = f" WHERE {key[0]} = {ref[0]}"
    if g.chance(0.5):
        num = g.col(inner, NUMERIC)
        items = [f"COUNT(*) AS n", f"{g.choice(['SUM', 'MAX'])}({num[0]}) AS m"]
        cols = (("n", "int"), ("m", "int" if num[1] == "int" else num[1]))
    else:
        picked = g.rng.sample(g.cols(inner), min(len(inner.columns), 2))
        items = [f"{inner.alias}.{c} AS {c}" for c, _ in picked]
        cols = tuple(picked)
        other = g.col(a, ("int",))
        if g.chance(0.4):
            where += (
                f" AND {g.col(inner, ('int',))[0]} {g.choice(['<', '>='])} {other[0]}"
            )
    sql = f"LATERAL (SELECT {', '.join(items)} FROM {t} {inner.alias}{where}) {alias}"
    g.q.atoms.append(Atom(alias, None, cols, sql))


# --- JOIN: the edges of a random join tree --------------------------------------------


def _eq(g: Gen, a: Atom, b: Atom) -> Part | None:
    kinds = {k for _, k in a.columns} & {k for _, k in b.columns}
    kinds &= {"int", "str", "date"}
    if not kinds:
        return None
    kind = g.choice(sorted(kinds))
    x, y = g.col(a, (kind,)), g.col(b, (kind,))
    return Part(f"{x[0]} = {y[0]}", frozenset({a.alias, b.alias}))


def _ineq(
    g: Gen, a: Atom, b: Atom, ops=("<", "<=", ">", ">="), besides: Part | None = None
) -> Part | None:
    """An inequality between an int column of `a` and one of `b`; `besides`:
    an equality on the same edge, whose pair of columns it avoids (x = y AND
    x < y is never true: a test that sees only empty results)."""
    x, y = g.col(a, ("int",)), g.col(b, ("int",))
    if x is None or y is None:
        return None
    for _ in range(4):
        if besides is None or not {x[0], y[0]} <= set(
            re.findall(r"[\w.]+", besides.sql)
        ):
            break
        x, y = g.col(a, ("int",)), g.col(b, ("int",))
    else:
        return None
    k = g.choice([0, 0, 1, -1, 2])
    shift = "" if k == 0 else (f" + {k}" if k > 0 else f" - {-k}")
    return Part(f"{x[0]} {g.choice(ops)} {y[0]}{shift}", frozenset({a.alias, b.alias}))


def _add(g: Gen, *parts) -> bool:
    if any(p is None for p in parts):
        return False
    g.q.where.extend(parts)
    return True


@production("join", weight=6)
def equi_join(g, a, b):
    return _add(g, _eq(g, a, b))


@production("join", weight=1.5)
def two_equalities(g, a, b):
    first, second = _eq(g, a, b), _eq(g, a, b)
    return _add(g, first, second if second != first else None)


@production("join", weight=2)
def inequality_join(g, a, b):
    return _add(g, _ineq(g, a, b))


@production("join", weight=1.5)
def equi_and_inequality(g, a, b):
    eq = _eq(g, a, b)
    return _add(g, eq, eq and _ineq(g, a, b, besides=eq))


@production("join", weight=1)
def band_join(g, a, b):
    x, y = g.col(a, ("int",)), g.col(b, ("int",))
    if x is None or y is None:
        return False
    lo, hi = g.rng.randint(0, 2), g.rng.randint(0, 2)
    al = frozenset({a.alias, b.alias})
    return _add(
        g, Part(f"{x[0]} >= {y[0]} - {lo}", al), Part(f"{x[0]} <= {y[0]} + {hi}", al)
    )


@production("join", weight=1)
def equi_and_not_equal(g, a, b):
    """`<>` on a tree edge (a filter on the edge)."""
    eq = _eq(g, a, b)
    return _add(g, eq, eq and _ineq(g, a, b, ops=("<>",), besides=eq))


@production("join", weight=0)  # drawn with --weight: earlier seeds keep their queries
def expression_join(g, a, b):
    """An equality with an expression on one side or both (`a.x = b.y + 1`,
    `a.x % 3 = b.y`, `upper(a.s) = b.t`): a join on a computed value."""
    kinds = {k for _, k in a.columns} & {k for _, k in b.columns} & {"int", "str"}
    if not kinds:
        return False
    kind = g.choice(sorted(kinds))
    x, y = g.col(a, (kind,)), g.col(b, (kind,))
    if kind == "str":
        forms = [f"upper({x[0]})", f"lower({x[0]})", x[0]]
        other = [f"upper({y[0]})", y[0]]
    else:
        k = g.rng.randint(1, 2)
        forms = [f"{x[0]} + {k}", f"{x[0]} - {k}", f"{x[0]} % 3", f"{x[0]} * 2", x[0]]
        other = [f"{y[0]} + {k}", f"abs({y[0]})", y[0]]
    left, right = g.choice(forms), g.choice(other)
    if left == x[0] and right == y[0]:
        right = other[0]
    return _add(g, Part(f"{left} = {right}", frozenset({a.alias, b.alias})))


@production("join", weight=0)  # drawn with --weight, as expression_join
def date_shift_join(g, a, b):
    """DATE columns of two tables compared shifted (`a.d >= b.d - INTERVAL
    '2' DAY`, `a.d < b.d + 3`), sometimes as a band, sometimes beside an
    equality."""
    x, y = g.col(a, ("date",)), g.col(b, ("date",))
    if x is None or y is None:
        return False
    al = frozenset({a.alias, b.alias})
    k = g.rng.randint(1, 40)
    parts = [Part(f"{x[0]} >= {y[0]} - INTERVAL '{k}' DAY", al)]
    if g.chance(0.6):
        parts.append(Part(f"{x[0]} < {y[0]} + {g.rng.randint(0, 40)}", al))
    if g.chance(0.4):
        parts.append(_eq(g, a, b))
    return _add(g, *parts)


@production("join", weight=0)  # drawn with --weight, as expression_join
def or_of_cases(g, a, b):
    """An OR of two or three cases, each repeating the join equality beside
    conditions on either side (TPC-H Q19's form)."""
    eq = _eq(g, a, b)
    if eq is None:
        return False
    cases = []
    for _ in range(g.rng.randint(2, 3)):
        terms = [eq.sql]
        for atom in g.rng.sample([a, b], g.rng.randint(1, 2)):
            ref = g.col(atom, ("int", "dec", "str", "date"))
            op = g.choice(["=", "<>", "<=", ">="])
            terms.append(f"{ref[0]} {op} {g.literal(ref[1])}")
        g.rng.shuffle(terms)
        cases.append("(" + " AND ".join(terms) + ")")
    return _add(g, Part("(" + " OR ".join(cases) + ")", eq.aliases))


@production("join", weight=1)
def cartesian(g, a, b):
    return None  # no condition: a cartesian product


@production("join", weight=1)
def left_join(g, a, b):
    """`a` LEFT (sometimes RIGHT or FULL) JOINs what comes before it: the
    equality with its parent `b` goes into ON."""
    eq = _eq(g, a, b)
    if eq is None or a is g.q.atoms[0] or a.sql.startswith("LATERAL"):
        return False  # an outer join of a LATERAL: lateral_select's own forms
    kind = g.rng.choices(["LEFT", "RIGHT", "FULL"], [3, 1, 1])[0]
    i = g.q.atoms.index(a)
    g.q.atoms[i] = replace(a, sql=f"{kind} JOIN {a.sql} ON {eq.sql}")


@production("join", weight=0.5)
def left_join_filtered(g, a, b):
    """An outer join whose ON also filters the joined table alone (`AND
    a.x op literal`): its rows that fail it match nothing, and are padded."""
    i = g.q.atoms.index(a)
    if left_join(g, a, b) is False:
        return False
    ref = g.col(a, ("int", "str", "date"))
    if ref is None:
        return None
    op = g.choice(["=", "<>", "<", ">="])
    cond = f"{ref[0]} {op} {g.literal(ref[1])}"
    g.q.atoms[i] = replace(g.q.atoms[i], sql=f"{g.q.atoms[i].sql} AND {cond}")


# --- WHERE: local filters on one atom -------------------------------------------------


def _local(g: Gen, atom: Atom, sql: str) -> bool:
    g.q.where.append(Part(sql, frozenset({atom.alias})))
    return True


@production("filter", weight=3)
def compare_literal(g, atom):
    kinds = ("int", "dec", "dbl", "date", "str")
    ref = g.col(atom, kinds)
    op = g.choice(["=", "<>", "<", "<=", ">", ">="])
    return _local(g, atom, f"{ref[0]} {op} {g.literal(ref[1])}")


@production("filter")
def between(g, atom):
    ref = g.col(atom, ("int", "dec", "date"))
    if ref is None:
        return False
    if ref[1] == "date":
        lo, hi = sorted(g.rng.sample(DATES, 2))
        return _local(g, atom, f"{ref[0]} BETWEEN DATE '{lo}' AND DATE '{hi}'")
    lo = g.rng.randint(0, 3)
    return _local(g, atom, f"{ref[0]} BETWEEN {lo} AND {lo + g.rng.randint(0, 2)}")


@production("filter")
def in_list(g, atom):
    ref = g.col(atom, ("int", "str"))
    if ref is None:  # (a derived table of numbers and dates)
        return False
    vals = {g.literal(ref[1]) for _ in range(g.rng.randint(1, 3))}
    neg = "NOT " if g.chance(0.3) else ""
    return _local(g, atom, f"{ref[0]} {neg}IN ({', '.join(sorted(vals))})")


@production("filter")
def like(g, atom):
    ref = g.col(atom, ("str",))
    if ref is None:
        return False
    neg = "NOT " if g.chance(0.3) else ""
    return _local(g, atom, f"{ref[0]} {neg}LIKE '{g.choice(LIKE_PATTERNS)}'")


@production("filter")
def or_of_comparisons(g, atom):
    ints = g.cols(atom, ("int",))
    if len(ints) < 2:
        return False
    (a, _), (b, _) = g.rng.sample(ints, 2)
    a, b = f"{atom.alias}.{a}", f"{atom.alias}.{b}"
    return _local(g, atom, f"({a} < {b} OR {a} = {g.literal('int')})")


@production("filter", weight=0.7)
def not_condition(g, atom):
    a = g.col(atom, ("int", "dec"))
    if a is None:
        return False
    return _local(
        g, atom, f"NOT ({a[0]} > {g.literal(a[1])} AND {a[0]} <> {g.literal(a[1])})"
    )


@production("filter")
def arithmetic_filter(g, atom):
    a, b = g.col(atom, ("int",)), g.col(atom, NUMERIC)
    if a is None:
        return False
    op = g.choice(["+", "-", "*"])
    return _local(
        g, atom, f"{a[0]} {op} {b[0]} {g.choice(['<', '>='])} {g.rng.randint(0, 5)}"
    )


@production("filter", weight=0.7)
def modulo_filter(g, atom):
    a = g.col(atom, ("int",))
    if a is None:
        return False
    return _local(g, atom, f"{a[0]} % 2 = {g.rng.randint(0, 1)}")


@production("filter", weight=0.7)
def case_filter(g, atom):
    a, b = g.col(atom, ("int",)), g.col(atom, ("int",))
    if a is None:
        return False
    return _local(
        g,
        atom,
        f"CASE WHEN {a[0]} > {g.literal('int')} THEN {b[0]} ELSE 0 END "
        f"{g.choice(['>', '<=', '='])} {g.literal('int')}",
    )


@production("filter", weight=0.7)
def date_filter(g, atom):
    ref = g.col(atom, ("date",))
    if ref is None:
        return False
    form = g.rng.randint(0, 2)
    if form == 0:
        n = g.rng.randint(1, 3)
        unit = g.choice(["DAY", "MONTH"])
        return _local(
            g,
            atom,
            f"{ref[0]} {g.choice(['<', '>='])} DATE '{g.choice(DATES)}' "
            f"+ INTERVAL '{n}' {unit}",
        )
    if form == 1:
        return _local(
            g, atom, f"EXTRACT(DAY FROM {ref[0]}) {g.choice(['<', '>', '='])} 3"
        )
    return _local(
        g,
        atom,
        f"{ref[0]} - INTERVAL '1' DAY {g.choice(['<', '>='])} DATE '1995-01-02'",
    )


@production("filter", weight=0.7)
def string_function_filter(g, atom):
    ref = g.col(atom, ("str",))
    if ref is None:
        return False
    f = g.choice(
        [
            f"SUBSTRING({ref[0]}, 1, 1) = 'a'",
            f"SUBSTRING({ref[0]}, -1, {g.choice([1, 2, -1])}) = 'b'",
            f"UPPER({ref[0]}) = 'AB'",
            f"LOWER({ref[0]}) <> 'b'",
            f"{ref[0]} || 'x' = 'ax'",
        ]
    )
    return _local(g, atom, f)


@production("filter", weight=0.5)
def abs_filter(g, atom):
    a, b = g.col(atom, ("int",)), g.col(atom, ("int",))
    if a is None:
        return False
    return _local(g, atom, f"ABS({a[0]} - {b[0]}) <= 1")


@production("filter", weight=0.5)
def is_null(g, atom):
    ref = g.col(atom)
    return _local(g, atom, f"{ref[0]} IS {g.choice(['', 'NOT '])}NULL")


@production("filter", weight=0.5)
def coalesce_filter(g, atom):
    ref = g.col(atom, ("int",))
    if ref is None:
        return False
    return _local(g, atom, f"COALESCE({ref[0]}, 0) >= {g.literal('int')}")


@production("filter", weight=0.5)
def ilike(g, atom):
    ref = g.col(atom, ("str",))
    if ref is None:
        return False
    return _local(g, atom, f"{ref[0]} ILIKE 'A%'")


# --- WHERE: conditions across atoms that fit no tree edge ------------------------------


@production("cross", weight=2)
def extra_inequality(g, a, b):
    """One more inequality between two atoms (may make the query cyclic)."""
    return _add(g, _ineq(g, a, b))


@production("cross", weight=1)
def residual_or(g, a, b):
    x, y = g.col(a, ("int",)), g.col(b, ("int",))
    if x is None or y is None:
        return False
    al = frozenset({a.alias, b.alias})
    return _add(g, Part(f"({x[0]} <> {y[0]} OR {x[0]} + {y[0]} < 3)", al))


@production("cross", weight=1)
def residual_arithmetic(g, a, b):
    x, y = g.col(a, ("int",)), g.col(b, ("int",))
    if x is None or y is None:
        return False
    al = frozenset({a.alias, b.alias})
    return _add(g, Part(f"{x[0]} + {y[0]} <> {g.rng.randint(1, 4)}", al))


# --- WHERE: subqueries --------------------------------------------------------------


def _inner(g: Gen, outer: Atom, kind: str = "int"):
    """A table for a subquery, its alias and a column of `kind`."""
    t = g.choice(
        [t for t, cols in TABLES.items() if any(k == kind for _, k, _ in cols)]
    )
    s = _table_atom(t, g.sub_alias())
    return t, s, g.col(s, (kind,))


def _inner_filter(g: Gen, s: Atom) -> str:
    ref = g.col(s, ("int",))
    if g.chance(0.5):
        return f" AND {ref[0]} {g.choice(['<', '>', '<>'])} {g.literal('int')}"
    return ""


@production("subquery", weight=2)
def in_subquery(g, atom):
    ref = g.col(atom, ("int",))
    if ref is None:
        return False
    t, s, inner = _inner(g, atom)
    where = _inner_filter(g, s)
    where = f" WHERE {where[5:]}" if where else ""
    neg = "NOT " if g.chance(0.35) else ""
    g.q.where.append(
        Part(
            f"{ref[0]} {neg}IN (SELECT {inner[0]} FROM {t} {s.alias}{where})",
            frozenset({atom.alias}),
        )
    )


@production("subquery", weight=1)
def correlated_in_subquery(g, atom):
    """`x [NOT] IN (SELECT v … WHERE <a condition on atom>)`: an EXISTS
    with `v = x` (NOT IN with its NULL rules)."""
    ref = g.col(atom, ("int",))
    if ref is None:
        return False
    t, s, inner = _inner(g, atom)
    other = g.col(s, ("int",))
    op = g.choice(["=", "=", "<"])
    where = f" WHERE {other[0]} {op} {g.col(atom, ('int',))[0]}{_inner_filter(g, s)}"
    neg = "NOT " if g.chance(0.4) else ""
    g.q.where.append(
        Part(
            f"{ref[0]} {neg}IN (SELECT {inner[0]} FROM {t} {s.alias}{where})",
            frozenset({atom.alias}),
        )
    )


@production("subquery", weight=1)
def in_grouped_subquery(g, atom):
    ref = g.col(atom, ("int",))
    if ref is None:
        return False
    t, s, inner = _inner(g, atom)
    g.q.where.append(
        Part(
            f"{ref[0]} IN (SELECT {inner[0]} FROM {t} {s.alias} GROUP BY {inner[0]} "
            f"HAVING COUNT(*) > {g.rng.randint(0, 2)})",
            frozenset({atom.alias}),
        )
    )


@production("subquery", weight=1)
def in_grouped_self_subquery(g, atom):
    """`x IN (SELECT x FROM <atom's table> GROUP BY x HAVING …)` (TPC-H Q18):
    where the outer atom sums what the subquery sums per key, its leaf
    reads the subquery view's dict."""
    if atom.table is None:
        return False
    ref = g.col(atom, ("int",))
    if ref is None:
        return False
    s = _table_atom(atom.table, g.sub_alias())
    col = ref[0].split(".")[-1]
    having = f"COUNT(*) > {g.rng.randint(0, 2)}"
    measure = g.col(s, NUMERIC)
    if measure is not None and g.chance(0.5):
        having = f"SUM({measure[0]}) > {g.literal('int')}"
    where = _inner_filter(g, s).replace(" AND ", " WHERE ", 1) if g.chance(0.4) else ""
    g.q.where.append(
        Part(
            f"{ref[0]} IN (SELECT {s.alias}.{col} FROM {atom.table} {s.alias}{where} "
            f"GROUP BY {s.alias}.{col} HAVING {having})",
            frozenset({atom.alias}),
        )
    )


@production("subquery", weight=2)
def exists_subquery(g, atom):
    ref = g.col(atom, ("int",))
    if ref is None:
        return False
    t, s, inner = _inner(g, atom)
    _where_exists(g, atom, t, s, f"{inner[0]} = {ref[0]}")


def _where_exists(g, atom, t: str, s, condition: str) -> None:
    """`[NOT] EXISTS (SELECT * FROM t s WHERE condition [AND filter])` as a
    conjunct of WHERE on `atom`."""
    neg = "NOT " if g.chance(0.4) else ""
    g.q.where.append(
        Part(
            f"{neg}EXISTS (SELECT * FROM {t} {s.alias} WHERE {condition}"
            f"{_inner_filter(g, s)})",
            frozenset({atom.alias}),
        )
    )


@production("subquery", weight=0)
def exists_over_aggregate(g, atom):
    """`[NOT] EXISTS (SELECT COUNT(*)/SUM(v) … WHERE i = o [HAVING …])`, an
    aggregate without GROUP BY (one row even over no input), its HAVING on
    the aggregates or comparing them with the outer row; or `… GROUP BY c
    HAVING COUNT(*)/SUM(v) > n`; at times ORed with a comparison. Weight 0
    unless given (earlier seeds draw the queries they drew)."""
    ref = g.col(atom, ("int",))
    if ref is None:
        return False
    t, s, inner = _inner(g, atom)
    value = g.col(s, ("int",))
    aggregate = g.choice(["COUNT(*)", f"SUM({value[0]})", f"MAX({value[0]})"])
    n = g.literal("int")
    op = g.choice([">", ">=", "<", "=", "<>"])
    shape = g.choice(["none", "having", "outer", "grouped"])
    own = f"{inner[0]} = {ref[0]}{_inner_filter(g, s)}"
    if shape == "none":
        body = f"SELECT {aggregate} FROM {t} {s.alias} WHERE {own}"
    elif shape == "having":
        body = f"SELECT 1 FROM {t} {s.alias} WHERE {own} HAVING {aggregate} {op} {n}"
    elif shape == "outer":
        other = g.col(atom, ("int",))
        body = (
            f"SELECT {aggregate} FROM {t} {s.alias} WHERE {own} "
            f"HAVING {aggregate} {op} {other[0]}"
        )
    else:
        body = (
            f"SELECT {value[0]} FROM {t} {s.alias} WHERE {own} "
            f"GROUP BY {value[0]} HAVING {aggregate} {op} {n}"
        )
    neg = "NOT " if g.chance(0.4) else ""
    test = f"{neg}EXISTS ({body})"
    if shape in ("none", "having") and g.chance(0.3):  # a value, not a conjunct
        test = f"({ref[0]} > {g.literal('int')} OR {test})"
    g.q.where.append(Part(test, frozenset({atom.alias})))


@production("subquery", weight=0.6)
def exists_other_value(g, atom):
    """`[NOT] EXISTS (… WHERE [i = o AND] i2 <> o2 [AND filter])`: another
    row with a different value (TPC-H Q21's form), which the compiler counts
    instead of scanning; the key at times left out."""
    kind = g.choice(["int", "str"])
    other = g.col(atom, (kind,))
    if other is None:
        return False
    t, s, inner = _inner(g, atom, kind)
    if inner is None:
        return False
    ref, key = g.col(atom, ("int",)), g.col(s, ("int",))
    eq = f"{key[0]} = {ref[0]} AND " if ref and key and g.chance(0.8) else ""
    ne = g.choice([f"{inner[0]} <> {other[0]}", f"{other[0]} <> {inner[0]}"])
    _where_exists(g, atom, t, s, eq + ne)


@production("subquery", weight=0)
def exists_same_table(g, atom):
    """`[NOT] EXISTS (SELECT * FROM <the atom's table> s WHERE s.k = o.k AND
    s.c <> o.c [AND filter])`, the `<>` at times ORed with a comparison of
    the inner row: TPC-H Q21's subqueries over the outer atom's own table,
    counted in the test's state with no view of their own. Weight 0 unless
    given (earlier seeds draw the queries they drew)."""
    if atom.table is None:
        return False
    key = g.col(atom, ("int",))
    other = g.col(atom, (g.choice(["int", "str"]),))
    if key is None or other is None:
        return False
    s = _table_atom(atom.table, g.sub_alias())
    k, c = (ref[0].split(".")[-1] for ref in (key, other))
    cond = f"{s.alias}.{c} <> {other[0]}"
    if g.chance(0.3):
        cond = f"({cond} OR {s.alias}.{k} > {g.literal('int')})"
    _where_exists(g, atom, atom.table, s, f"{s.alias}.{k} = {key[0]} AND {cond}")


@production("subquery", weight=0.6)
def semi_join(g, atom):
    """`… SEMI|ANTI JOIN t s ON s.k = last.col [AND s.x op n]` (DuckDB): a
    row of the left once where the right has a match, or where it has none.
    Correlated with the last FROM item whatever `atom` is (a comma binds
    looser than the join)."""
    atom = g.q.atoms[-1]
    ref = g.col(atom, ("int",))
    if ref is None:
        return False
    t, s, inner = _inner(g, atom)
    kind = g.choice(["SEMI", "ANTI"])
    g.q.semi.append(
        f"{kind} JOIN {t} {s.alias} ON {inner[0]} = {ref[0]}{_inner_filter(g, s)}"
    )


@production("subquery", weight=1)
def bounded_exists_subquery(g, atom):
    """`[NOT] EXISTS (… WHERE [i = o AND | i IS NOT DISTINCT FROM o AND]
    i2 < o2 + n)`: one inequality beside at most one key, which the compiler
    tests against MIN or MAX of the inner side per key."""
    ref, bound = g.col(atom, ("int",)), g.col(atom, ("int", "dec"))
    if ref is None or bound is None:
        return False
    t, s, inner = _inner(g, atom)
    key = g.choice(
        [
            "",
            f"{inner[0]} = {ref[0]} AND ",
            f"{inner[0]} IS NOT DISTINCT FROM {ref[0]} AND ",
        ]
    )
    other = g.col(s, ("int",))
    op = g.choice(["<", "<=", ">", ">="])
    cond = f"{other[0]} {op} {bound[0]}"
    if g.chance(0.3):
        cond = f"{bound[0]} + {g.literal('int')} {op} {other[0]}"
    neg = "NOT " if g.chance(0.5) else ""
    g.q.where.append(
        Part(
            f"{neg}EXISTS (SELECT 1 FROM {t} {s.alias} WHERE {key}{cond}"
            f"{_inner_filter(g, s)})",
            frozenset({atom.alias}),
        )
    )


@production("subquery", weight=1)
def scalar_subquery(g, atom):
    """`x >= (SELECT MAX(…) …)`, uncorrelated or correlated with `atom`."""
    ref = g.col(atom, ("int",))
    if ref is None:
        return False
    t, s, inner = _inner(g, atom)
    agg = g.choice([f"MAX({inner[0]})", f"MIN({inner[0]})", "COUNT(*)"])
    where = ""
    if g.chance(0.5):  # correlated
        other = g.col(s, ("int",))
        where = f" WHERE {other[0]} = {g.col(atom, ('int',))[0]}"
    g.q.where.append(
        Part(
            f"{ref[0]} {g.choice(['>=', '<', '='])} (SELECT {agg} FROM {t} {s.alias}"
            f"{where})",
            frozenset({atom.alias}),
        )
    )


@production(
    "subquery", weight=0
)  # drawn with --weight: earlier seeds keep their queries
def scalar_test_by_the_join_key(g, atom):
    """`x op (SELECT AGG(…) FROM t s WHERE s.k = atom.k)` correlated by a
    column the atom joins by (any of its int columns in a query of one
    table), the subquery often over the atom's own table (TPC-H Q17's
    lineitem against its part's average): a test whose index can sum the
    rows' payloads per key and compared value in trusting mode."""
    ints = {c for c, k in atom.columns if k == "int"}
    alias = re.escape(atom.alias)
    joined = sorted(
        c
        for p in g.q.where
        for c in re.findall(rf"\b{alias}\.(\w+) = \w+\.\w+\b", p.sql)
        + re.findall(rf"\b\w+\.\w+ = {alias}\.(\w+)\b", p.sql)
        if c in ints
    )
    keys = joined or (sorted(ints) if len(g.q.atoms) == 1 else [])
    ref = g.col(atom, ("int",))
    if not keys or ref is None:
        return False
    key = g.choice(keys)
    if atom.table is not None and g.chance(0.5):  # the atom's own table
        t, s = atom.table, _table_atom(atom.table, g.sub_alias())
        inner, other = f"{s.alias}.{ref[0].split('.', 1)[1]}", f"{s.alias}.{key}"
    else:
        t, s, (inner, _) = _inner(g, atom)
        other = g.col(s, ("int",))[0]
    agg = g.choice([f"AVG({inner})", f"MAX({inner})", f"SUM({inner})", "COUNT(*)"])
    g.q.where.append(
        Part(
            f"{ref[0]} {g.choice(['<', '>=', '='])} (SELECT {agg} FROM {t} {s.alias}"
            f" WHERE {other} = {atom.alias}.{key}{_inner_filter(g, s)})",
            frozenset({atom.alias}),
        )
    )


@production(
    "subquery", weight=0
)  # drawn with --weight: earlier seeds keep their queries
def waits_for_a_filtered_partner(g, atom):
    """A table joined by a key to a partner filtered by a literal, tested by
    that key against a subquery over its own table (`x op (SELECT AGG(…)
    … WHERE s.k = atom.k)`, or `[NOT] EXISTS (… WHERE s.k = atom.k AND
    s.x <> atom.x)`): its rows of keys that no partner row the filter takes
    has had wait in a log (TPC-H Q17, Q21; `dynyan.compiler.gates`)."""
    other = g.col(atom, ("int",))
    if atom.table is None or other is None:
        return False
    alias = re.escape(atom.alias)
    found = []
    for p in g.q.where:
        found += [
            (k, a)
            for k, a, _ in re.findall(rf"\b{alias}\.(\w+) = (\w+)\.(\w+)\b", p.sql)
        ]
        found += [
            (k, a)
            for a, _, k in re.findall(rf"\b(\w+)\.(\w+) = {alias}\.(\w+)\b", p.sql)
        ]
    atoms = {x.alias: x for x in g.q.atoms}
    found = sorted(
        (k, a)
        for k, a in found
        if a in atoms and a != atom.alias and atoms[a].table is not None
    )
    if not found:
        return False
    key, partner = g.choice(found)
    ref = g.col(atoms[partner], ("int", "str"))
    if ref is None:
        return False
    g.q.where.append(
        Part(
            f"{ref[0]} {g.choice(['=', '<>', '<', '>='])} {g.literal(ref[1])}",
            frozenset({partner}),
        )
    )
    s = _table_atom(atom.table, g.sub_alias())
    inner = f"{s.alias}.{other[0].split('.', 1)[1]}"
    where = f"{s.alias}.{key} = {atom.alias}.{key}"
    if g.chance(0.5):
        agg = g.choice([f"AVG({inner})", f"MAX({inner})", f"MIN({inner})", "COUNT(*)"])
        test = (
            f"{other[0]} {g.choice(['<', '>=', '='])} (SELECT {agg} FROM "
            f"{atom.table} {s.alias} WHERE {where})"
        )
    else:
        test = (
            f"{'NOT ' if g.chance(0.5) else ''}EXISTS (SELECT 1 FROM {atom.table} "
            f"{s.alias} WHERE {where} AND {inner} <> {other[0]})"
        )
    g.q.where.append(Part(test, frozenset({atom.alias})))


@production("subquery", weight=0.6)
def single_row_subquery(g, atom):
    """`x op (SELECT [DISTINCT] c FROM t WHERE t.k = … AND …)`: no aggregate,
    so the value of its one row, NULL over none, an error over several (the
    check expects the view's reads to fail where DuckDB's query does)."""
    ref = g.col(atom, ("int",))
    if ref is None:
        return False
    t, s, inner = _inner(g, atom)
    key = g.col(s, ("int",))[0]
    if g.chance(0.6):  # correlated
        where = f" WHERE {key} = {g.col(atom, ('int',))[0]}"
    else:
        where = f" WHERE {key} = {g.literal('int')}"
    distinct = "DISTINCT " if g.chance(0.3) else ""
    g.q.where.append(
        Part(
            f"{ref[0]} {g.choice(['>=', '<', '=', '<>'])} (SELECT {distinct}"
            f"{inner[0]} FROM {t} {s.alias}{where}{_inner_filter(g, s)})",
            frozenset({atom.alias}),
        )
    )


@production("subquery", weight=1)
def subquery_under_or(g, atom):
    """A subquery test that is no conjunct of WHERE: `(EXISTS (…) OR c)`,
    `(NOT EXISTS (…) OR c)`, `(x IN (SELECT …) OR c)` or `(x > (SELECT
    AGG(…) … correlated) OR c)`: a LEFT JOIN flag or a joined aggregate."""
    ref = g.col(atom, ("int",))
    if ref is None:
        return False
    t, s, inner = _inner(g, atom)
    other = f"{ref[0]} {g.choice(['<', '>', '='])} {g.literal('int')}"
    form = g.choice(["exists", "not_exists", "in", "scalar"])
    if form in ("exists", "not_exists"):
        neg = "NOT " if form == "not_exists" else ""
        test = (
            f"{neg}EXISTS (SELECT * FROM {t} {s.alias} WHERE {inner[0]} = {ref[0]}"
            f"{_inner_filter(g, s)})"
        )
    elif form == "in":
        where = _inner_filter(g, s)
        where = f" WHERE {where[5:]}" if where else ""
        test = f"{ref[0]} IN (SELECT {inner[0]} FROM {t} {s.alias}{where})"
    else:
        agg = g.choice([f"MAX({inner[0]})", "COUNT(*)", f"SUM({inner[0]})"])
        key = g.col(s, ("int",))
        test = (
            f"{ref[0]} {g.choice(['>=', '<'])} (SELECT {agg} FROM {t} {s.alias} "
            f"WHERE {key[0]} = {g.col(atom, ('int',))[0]})"
        )
    g.q.where.append(Part(f"({test} OR {other})", frozenset({atom.alias})))


@production("subquery", weight=0.8)
def quantified_subquery(g, atom):
    """`x op ANY|SOME|ALL (SELECT v FROM t …)` as a conjunct, under NOT or
    OR; at times the subquery's table takes the outer table's alias (it
    shadows it: nothing inside may read the outer one then)."""
    ref = g.col(atom, ("int",))
    if ref is None:
        return False
    t = g.choice(
        [t for t, cols in TABLES.items() if any(k == "int" for _, k, _ in cols)]
    )
    shadow = g.chance(0.3)
    s = _table_atom(t, atom.alias if shadow else g.sub_alias())
    inner = g.col(s, ("int",))
    where = _inner_filter(g, s)[5:]
    if not shadow and g.chance(0.4):  # correlated by an equality
        eq = f"{g.col(s, ('int',))[0]} = {g.col(atom, ('int',))[0]}"
        where = f"{eq} AND {where}" if where else eq
    where = f" WHERE {where}" if where else ""
    op = g.choice(["=", "<>", "<", "<=", ">", ">="])
    quantifier = g.choice(["ANY", "SOME", "ALL"])
    test = f"{ref[0]} {op} {quantifier} (SELECT {inner[0]} FROM {t} {s.alias}{where})"
    form = g.choice(["conjunct", "conjunct", "not", "or"])
    if form == "not":
        test = f"NOT ({test})"
    elif form == "or":
        test = f"({test} OR {ref[0]} {g.choice(['<', '='])} {g.literal('int')})"
    g.q.where.append(Part(test, frozenset({atom.alias})))


# --- SELECT ---------------------------------------------------------------------------


def _everything(g: Gen) -> list[tuple[str, str, Atom]]:
    return [(f"{a.alias}.{c}", k, a) for a in g.q.atoms for c, k in a.columns]


def _pick_columns(g: Gen, n_max: int = 4) -> list[Part]:
    every = _everything(g)
    picked = g.rng.sample(every, min(len(every), g.rng.randint(1, n_max)))
    return [Part(ref, frozenset({a.alias})) for ref, _, a in picked]


# forms of `_expression` over one column: of a string, or of a number
# (rounding: a DECIMAL halves away from zero, a DOUBLE to even)
_ONE_COLUMN = {
    "upper": [
        "UPPER({x})",
        "SUBSTRING({x}, 1, 1)",
        "{x} || '!'",
        "REPLACE({x}, 'a', 'xy')",
        "LEFT({x}, 1) || RIGHT({x}, -1)",
        "CAST(STRPOS({x}, 'b') AS VARCHAR)",
    ],
    "cast": [
        "CAST({x} * 0.5 AS INTEGER)",
        "CAST({x} / 4 AS INTEGER)",
        "CAST({x} * 0.25 AS DECIMAL(12, 1))",
        "ROUND({x} * 0.05, 1)",
        "CAST({x} / 8 AS DECIMAL(12, 2))",
    ],
}


def _expression(g: Gen) -> Part | None:
    """A scalar expression over one or two atoms (never given NULLs: README)."""
    every = _everything(g)
    nums = [e for e in every if e[1] in ("int", "dec")]
    strs = [e for e in every if e[1] == "str"]
    forms = (["sum", "case", "cast"] if nums else []) + (["upper"] if strs else [])
    if not forms:  # the atoms have no number or string column
        return None
    form = g.choice(forms)
    if form in _ONE_COLUMN:  # a function of one column
        ref, _, a = g.choice(strs if form == "upper" else nums)
        used = [(ref, a)]
        sql = g.choice(_ONE_COLUMN[form]).format(x=ref)
    elif form == "case":
        (x, _, a), (y, _, b) = g.choice(nums), g.choice(nums)
        used = [(x, a), (y, b)]
        sql = f"CASE WHEN {x} > {y} THEN {x} ELSE {y} END"
    else:
        (x, _, a), (y, _, b) = g.choice(nums), g.choice(nums)
        used = [(x, a), (y, b)]
        sql = f"{x} {g.choice(['+', '-', '*'])} 2 * {y}"
    return Part(
        sql,
        frozenset(a.alias for _, a in used),
        frozenset().union(*(g.base(a, ref) for ref, a in used)),
    )


def _nan_expression(g: Gen) -> Part | None:
    """An expression that is ±inf or NaN on some rows: a division by a
    column that can be 0 (DuckDB: x / 0 is ±inf, 0 / 0 NaN)."""
    every = _everything(g)
    nums = [e for e in every if e[1] in ("int", "dbl")]
    if not nums:
        return None
    (x, _, a), (y, _, b) = g.choice(nums), g.choice(nums)
    return Part(
        f"{x} / {y}",
        frozenset({a.alias, b.alias}),
        g.base(a, x) | g.base(b, y),
    )


@production("select", weight=1)
def select_star(g):
    g.q.items = []


@production("select", weight=3)
def select_columns(g):
    g.q.items = _pick_columns(g)


@production("select", weight=1.5)
def select_expressions(g):
    columns = _pick_columns(g, 2)
    expression = _expression(g)
    if expression is None:  # no column it could compute with
        return False
    g.q.items = columns + [expression]


@production("select", weight=0.8)
def select_logic(g):
    """AND, OR, NOT over comparisons of columns that may be NULL, as values
    (three-valued: NOT NULL is NULL, FALSE AND NULL is FALSE)."""
    every = _everything(g)
    terms, aliases = [], set()
    for _ in range(g.rng.randint(1, 3)):
        ref, kind, atom = g.choice(every)
        aliases.add(atom.alias)
        term = f"{ref} {g.choice(['=', '<>', '<', '>='])} {g.literal(kind)}"
        terms.append(f"NOT ({term})" if g.chance(0.3) else f"({term})")
    sql = terms[0]
    for term in terms[1:]:
        sql = f"({sql} {g.choice(['AND', 'OR'])} {term})"
    if g.chance(0.3):
        sql = f"NOT {sql}"
    g.q.items = _pick_columns(g, 2) + [Part(sql, frozenset(aliases))]


@production("select", weight=0.7)
def select_nan_producing(g):
    """x / y over columns that can be 0: ±inf and NaN in the result."""
    e = _nan_expression(g)
    if e is None:
        return False
    g.q.items = _pick_columns(g, 2) + [e]


@production("select", weight=0.7)
def select_scalar_subquery(g):
    """Columns and `(SELECT AGG(…) FROM t WHERE t.c = outer.col [AND …])`: a
    scalar subquery in the SELECT list correlated by an equality (COUNT over
    no rows is 0, the others NULL)."""
    atom = g.choice(g.q.atoms)
    ref = g.col(atom, ("int",))
    if ref is None:
        return False
    t, s, inner = _inner(g, atom)
    agg = g.choice(
        [
            f"MAX({inner[0]})",
            f"SUM({inner[0]})",
            "COUNT(*)",
            f"COUNT(DISTINCT {inner[0]})",
        ]
    )
    where = f" WHERE {g.col(s, ('int',))[0]} = {ref[0]}" + _inner_filter(g, s)
    sub = Part(f"(SELECT {agg} FROM {t} {s.alias}{where})", frozenset({atom.alias}))
    g.q.items = _pick_columns(g, 2) + [sub]


@production("select", weight=0.4)
def select_banded_subquery(g):
    """Columns and `(SELECT AGG(…) FROM t WHERE [t.k = outer.k AND] t.x op
    outer.y [AND …])`: a scalar subquery correlated by an inequality (the
    rows above a row, a running total, the previous value)."""
    atom = g.choice(g.q.atoms)
    key, bound = g.col(atom, ("int",)), g.col(atom, ("int",))
    if key is None or bound is None:
        return False
    t, s, inner = _inner(g, atom)
    agg = g.choice(
        ["COUNT(*)", f"SUM({inner[0]})", f"MIN({inner[0]})", f"MAX({inner[0]})"]
    )
    op = g.choice(["<", "<=", ">", ">="])
    cond = f"{g.col(s, ('int',))[0]} {op} {bound[0]}"
    if g.chance(0.3):  # the outer column on the left
        flipped = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}[op]
        cond = f"{bound[0]} {flipped} {g.col(s, ('int',))[0]}"
    keyed = f"{g.col(s, ('int',))[0]} = {key[0]} AND " if g.chance(0.7) else ""
    where = f" WHERE {keyed}{cond}" + _inner_filter(g, s)
    sub = Part(f"(SELECT {agg} FROM {t} {s.alias}{where})", frozenset({atom.alias}))
    g.q.items = _pick_columns(g, 2) + [sub]


@production("select", weight=0.4)
def select_single_row_subquery(g):
    """Columns and `(SELECT c FROM t WHERE t.k = outer.col [AND …])`: a
    scalar subquery without an aggregate in the SELECT list (an error where
    an outer row reads a key with several rows)."""
    atom = g.choice(g.q.atoms)
    ref = g.col(atom, ("int",))
    if ref is None:
        return False
    t, s, inner = _inner(g, atom)
    where = f" WHERE {g.col(s, ('int',))[0]} = {ref[0]}" + _inner_filter(g, s)
    sub = Part(
        f"(SELECT {inner[0]} FROM {t} {s.alias}{where})", frozenset({atom.alias})
    )
    g.q.items = _pick_columns(g, 2) + [sub]


@production("select", weight=0.7)
def select_membership(g):
    """Columns and a membership test as a value: `EXISTS (SELECT … WHERE
    t.c = outer.col …)` (never NULL), `CASE WHEN x IN (SELECT …) THEN …
    END` (NULL and FALSE alike there), or `[NOT] x IN (SELECT …)` itself
    (TRUE, FALSE or NULL)."""
    atom = g.choice(g.q.atoms)
    ref = g.col(atom, ("int",))
    if ref is None:
        return False
    t, s, inner = _inner(g, atom)
    if g.chance(0.5):
        sql = (
            f"{g.choice(['', 'NOT '])}EXISTS (SELECT * FROM {t} {s.alias} WHERE "
            f"{inner[0]} = {ref[0]}{_inner_filter(g, s)})"
        )
    else:
        where = _inner_filter(g, s)
        where = f" WHERE {where[5:]}" if where else ""
        member = f"{ref[0]} IN (SELECT {inner[0]} FROM {t} {s.alias}{where})"
        key, outer = g.col(s, ("int",)), g.col(atom, ("int",))
        if g.chance(0.4) and key is not None and outer is not None:  # correlated
            where = f"{where} AND" if where else " WHERE"
            member = (
                f"{ref[0]} IN (SELECT {inner[0]} FROM {t} {s.alias}{where} "
                f"{key[0]} = {outer[0]})"
            )
        sql = g.choice(
            [f"CASE WHEN {member} THEN 'in' ELSE 'out' END", member, f"NOT {member}"]
        )
    g.q.items = _pick_columns(g, 2) + [Part(sql, frozenset({atom.alias}))]


@production("select", weight=1.5)
def select_distinct(g):
    g.q.items = _pick_columns(g, 3)
    g.q.distinct = True


def _aggregate(g: Gen) -> Part:
    every = _everything(g)
    nums = [e for e in every if e[1] in NUMERIC]
    kind = g.choice(
        ["COUNT(*)", "COUNT", "SUM", "AVG", "MIN", "MAX", "COUNT DISTINCT", "SUM2"]
        + ["MEDIAN", "QUANTILE", "STRING_AGG", "SUM DISTINCT", "AVG DISTINCT"]
        + ["PAIRED"]
    )
    if kind == "COUNT(*)" or not nums:
        return Part("COUNT(*)")
    exact = [e for e in nums if e[1] != "dbl"]
    if kind == "PAIRED" and exact:  # CORR, COVAR, REGR_* of exact numbers
        (y, _, a), (x, _, b) = g.choice(exact), g.choice(exact)
        func = g.choice(
            ["CORR", "COVAR_POP", "COVAR_SAMP", "REGR_SLOPE", "REGR_INTERCEPT"]
            + ["REGR_R2", "REGR_COUNT", "REGR_AVGX", "REGR_SXX", "REGR_SXY"]
        )
        return Part(f"{func}({y}, {x})", frozenset({a.alias, b.alias}))
    if kind == "PAIRED":  # over DOUBLEs only: a plain sum
        kind = "SUM"
    texts = [e for e in every if e[1] not in ("dec", "dbl")]
    if kind == "STRING_AGG" and texts:  # ordered by its argument
        ref, _, a = g.choice(texts)
        distinct = "DISTINCT " if g.chance(0.3) else ""
        desc = " DESC" if g.chance(0.3) else ""
        sql = f"STRING_AGG({distinct}{ref}, '|' ORDER BY {ref}{desc})"
        return Part(sql, frozenset({a.alias}))
    if kind == "QUANTILE":  # of any type (DISC), or interpolated (CONT)
        q = g.choice(["0", "0.1", "0.25", "0.3", "0.75", "0.9", "1"])
        if g.chance(0.5):
            ref, _, a = g.choice(every)
            return Part(f"QUANTILE_DISC({ref}, {q})", frozenset({a.alias}))
        ref, _, a = g.choice(nums)
        return Part(f"QUANTILE_CONT({ref}, {q})", frozenset({a.alias}))
    if kind == "SUM2":  # a sum of a product (of one or two atoms)
        (x, _, a), (y, _, b) = g.choice(nums), g.choice(nums)
        return Part(f"SUM({x} * {y})", frozenset({a.alias, b.alias}))
    ref, _, a = g.choice(
        every if kind in ("MIN", "MAX", "COUNT", "COUNT DISTINCT") else nums
    )
    if kind.endswith(" DISTINCT"):
        return Part(f"{kind.split()[0]}(DISTINCT {ref})", frozenset({a.alias}))
    return Part(f"{kind}({ref})", frozenset({a.alias}))


def _group(g: Gen, keys: list[Part]) -> None:
    g.q.grouped = True
    g.q.group_by = list(keys)
    aggs = [_aggregate(g) for _ in range(g.rng.randint(1, 3))]
    # the keys are selected (or, sometimes, one is left out)
    shown = list(keys)
    if shown and g.chance(0.15):
        shown.pop(g.rng.randrange(len(shown)))
    g.q.items = shown + aggs


@production("select", weight=4)
def group_by_columns(g):
    every = _everything(g)
    picked = g.rng.sample(every, min(len(every), g.rng.randint(1, 2)))
    _group(g, [Part(ref, frozenset({a.alias})) for ref, _, a in picked])


def _grouped_by_columns(g) -> list:
    """GROUP BY one or two of the query's columns; all its columns."""
    every = _everything(g)
    keys = g.rng.sample(every, min(len(every), g.rng.randint(1, 2)))
    g.q.grouped = True
    g.q.group_by = [Part(ref, frozenset({a.alias})) for ref, _, a in keys]
    return every


def _order_way(g) -> str:
    """An ORDER BY key's direction and NULLs, as people leave them out."""
    return g.choice(["", " DESC"]) + g.choice(["", "", " NULLS FIRST", " NULLS LAST"])


def _maybe_filtered(g, every: list, sql: str, aliases: set) -> Part:
    """The aggregate `sql`, FILTER (WHERE y > n) at times."""
    nums = [e for e in every if e[1] in ("int", "dec")]
    if nums and g.chance(0.3):
        y, _, c = g.choice(nums)
        sql += f" FILTER (WHERE {y} > {g.rng.randint(0, 5)})"
        aliases = aliases | {c.alias}
    return Part(sql, frozenset(aliases))


@production("select", weight=0)  # drawn with --weight: earlier seeds keep their queries
def ordered_pick_per_key(g):
    """GROUP BY columns with FIRST/LAST(x ORDER BY k [DESC] [NULLS …], x …)
    [FILTER (WHERE …)]: the x of an order's first or last row per group (the
    latest value as people write it), the order ending on x itself, so rows
    tied on every key give the same x and DuckDB's pick is the view's."""
    every = _grouped_by_columns(g)
    picks = []
    for _ in range(g.rng.randint(1, 2)):
        (x, _, a), (k, _, b) = g.choice(every), g.choice(every)
        way = _order_way(g)
        sql = f"{g.choice(['FIRST', 'LAST'])}({x} ORDER BY {k}{way}, {x}{way})"
        picks.append(_maybe_filtered(g, every, sql, {a.alias, b.alias}))
    g.q.items = list(g.q.group_by) + picks


@production("select", weight=0)  # drawn with --weight: earlier seeds keep their queries
def list_per_key(g):
    """GROUP BY columns with ARRAY_AGG/LIST([DISTINCT] x ORDER BY [k …,] x …)
    [FILTER (WHERE …)]: every value of a group in an order (the history of
    a key as people write it), the order ending on x itself, so rows tied on
    every key are equal elements and DuckDB's list is the view's."""
    every = _grouped_by_columns(g)
    lists = []
    for _ in range(g.rng.randint(1, 2)):
        (x, _, a), (k, _, b) = g.choice(every), g.choice(every)
        way = _order_way(g)
        name = g.choice(["ARRAY_AGG", "LIST"])
        if g.chance(0.25):
            sql, aliases = f"{name}(DISTINCT {x} ORDER BY {x}{way})", {a.alias}
        else:
            sql, aliases = f"{name}({x} ORDER BY {k}{way}, {x}{way})", {
                a.alias,
                b.alias,
            }
        lists.append(_maybe_filtered(g, every, sql, aliases))
    g.q.items = list(g.q.group_by) + lists


@production("select", weight=0)  # drawn with --weight: earlier seeds keep their queries
def bits_per_key(g):
    """GROUP BY columns with BIT_OR/BIT_AND/BIT_XOR(x) of an INTEGER column
    or an expression of one (negatives too) [FILTER (WHERE …)], at times in
    HAVING."""
    every = _grouped_by_columns(g)
    ints = [e for e in every if e[1] == "int"]
    if not ints:
        return False
    folds = []
    for _ in range(g.rng.randint(1, 3)):
        x, _, a = g.choice(ints)
        arg = g.choice([x, f"{x} - {g.rng.randint(1, 4)}", f"{x} * 3"])
        name = g.choice(["BIT_OR", "BIT_AND", "BIT_XOR"])
        folds.append(_maybe_filtered(g, every, f"{name}({arg})", {a.alias}))
    g.q.items = list(g.q.group_by) + folds
    if g.chance(0.3):
        x, _, a = g.choice(ints)
        g.q.having.append(
            Part(f"BIT_OR({x}) > {g.rng.randint(0, 6)}", frozenset({a.alias}))
        )


@production("select", weight=0)  # drawn with --weight: earlier seeds keep their queries
def having_over_the_total(g):
    """GROUP BY columns HAVING SUM(x) * k > (SELECT SUM(x) [- SUM(y)] FROM …
    WHERE …) over the query's own FROM and WHERE, word for word (TPC-H Q11's
    threshold): the sum of the groups' sums, its view fed their changes."""
    nums = [e for e in _everything(g) if e[1] in NUMERIC]
    if not nums:
        return False
    group_by_columns(g)
    (ref, _, a), (other, _, b) = g.choice(nums), g.choice(nums)
    total = f"SUM({ref})" + (f" - SUM({other})" if g.chance(0.4) else "")
    g.q.having.append(
        Part(
            f"SUM({ref}) * {g.rng.randint(2, 6)} > (SELECT {total} {SAME_ROWS})",
            frozenset({a.alias, b.alias}),
        )
    )


@production("select", weight=1)
def group_by_expression(g):
    every = _everything(g)
    ints = [e for e in every if e[1] == "int"]
    dates = [e for e in every if e[1] == "date"]
    strs = [e for e in every if e[1] == "str"]
    forms = []
    if ints:
        forms += ["mod", "case"]
    if dates:
        forms.append("extract")
    if strs:
        forms.append("substr")
    if not forms:
        return False
    form = g.choice(forms)
    if form == "mod":
        ref, _, a = g.choice(ints)
        sql = f"{ref} % 2"
    elif form == "case":
        ref, _, a = g.choice(ints)
        sql = f"CASE WHEN {ref} > 1 THEN 'hi' ELSE 'lo' END"
    elif form == "extract":
        ref, _, a = g.choice(dates)
        sql = f"EXTRACT(DAY FROM {ref})"
    else:
        ref, _, a = g.choice(strs)
        sql = f"SUBSTRING({ref}, 1, 1)"
    _group(g, [Part(sql, frozenset({a.alias}), g.base(a, ref))])


@production("select", weight=1)
def group_around_an_outer_join(g):
    """GROUP BY columns of the other tables, COUNT/SUM/AVG (and COUNT(*)) of
    an outer-joined one: a LEFT JOINed table read only in sums is a
    NULL-padded leaf (docs/design.md §5)."""
    outer = [a for a in g.q.atoms if a.outer]
    if not outer:
        return False
    b = g.choice(outer)
    every = _everything(g)
    kept = [e for e in every if e[2] is not b]
    mine = [e for e in every if e[2] is b]
    if not kept or not mine:
        return False
    picked = g.rng.sample(kept, min(len(kept), g.rng.randint(1, 2)))
    aggs = []
    for _ in range(g.rng.randint(1, 3)):
        ref, kind, _ = g.choice(mine)
        func = g.choice(["COUNT", "SUM", "AVG"] if kind in NUMERIC else ["COUNT"])
        aggs.append(Part(f"{func}({ref})", frozenset({b.alias})))
    if g.chance(0.3):
        aggs.append(Part("COUNT(*)"))
    g.q.grouped = True
    g.q.group_by = [Part(ref, frozenset({a.alias})) for ref, _, a in picked]
    g.q.items = list(g.q.group_by) + aggs


@production("select", weight=2)
def global_aggregates(g):
    _group(g, [])


@production("select", weight=0)
def spread_aggregates(g):
    """VARIANCE, VAR_POP, STDDEV_SAMP, STDDEV_POP, SKEWNESS, KURTOSIS and
    KURTOSIS_POP of INTEGER and DECIMAL columns per group, or over a
    window's partition (exact: a group of equal values has 0, or NULL).
    Weight 0 unless given (the shapes since seed 2987)."""
    nums = [e for e in _everything(g) if e[1] in ("int", "dec")]
    if not nums:
        return False
    funcs = ["VARIANCE", "VAR_POP", "STDDEV_SAMP", "STDDEV_POP"]
    funcs += ["SKEWNESS", "KURTOSIS", "KURTOSIS_POP"]
    ref, _, a = g.choice(nums)
    keys = [Part(ref, frozenset({a.alias}))] if g.chance(0.7) else []
    items = []
    for _ in range(g.rng.randint(1, 3)):
        x, _, b = g.choice(nums)
        items.append(Part(f"{g.choice(funcs)}({x})", frozenset({b.alias})))
    if g.chance(0.3):  # over a window: each row its partition's spread
        over = f" OVER (PARTITION BY {ref})" if keys else " OVER ()"
        seen = frozenset({a.alias}) if keys else frozenset()
        g.q.items = keys + [Part(i.sql + over, i.aliases | seen) for i in items]
        return None
    g.q.grouped = True
    g.q.group_by = keys
    g.q.items = keys + items


@production("select", weight=0.7)
def aggregate_arithmetic(g):
    """Arithmetic over aggregates (SUM(x) + COUNT(*), SUM(x) / COUNT(*))."""
    nums = [e for e in _everything(g) if e[1] in ("int", "dec")]
    if not nums:
        return False
    ref, _, a = g.choice(nums)
    keys = [Part(ref, frozenset({a.alias}))] if g.chance(0.6) else []
    g.q.grouped = True
    g.q.group_by = keys
    x, _, b = g.choice(nums)
    op = g.choice(["+", "-", "*", "/"])
    g.q.items = keys + [Part(f"SUM({x}) {op} COUNT(*)", frozenset({b.alias}))]


@production("select", weight=0.0)
def real_arithmetic(g):
    """REAL (DuckDB's FLOAT, a 4-byte float) values as people write them:
    x::FLOAT / y over rows, SUM(x)::FLOAT / COUNT(*) over groups, ROUND,
    CASE and the text of a REAL (weight 0 unless given)."""
    nums = [e for e in _everything(g) if e[1] in ("int", "dec")]
    if not nums:
        return False
    (x, _, a), (y, _, b) = g.choice(nums), g.choice(nums)
    op = g.choice(["+", "-", "*", "/"])
    if g.chance(0.5):  # over groups
        ref, _, k = g.choice(_everything(g))
        keys = [Part(ref, frozenset({k.alias}))] if g.chance(0.6) else []
        g.q.grouped = True
        g.q.group_by = keys
        value = g.choice(
            [
                f"SUM({x})::FLOAT {op} COUNT(*)",
                f"COUNT({x})::FLOAT / COUNT(*)",
                f"MAX(CAST({x} AS REAL)) {op} 3",
                f"ROUND(AVG({x})::FLOAT, 2)",
            ]
        )
        g.q.items = keys + [Part(value, frozenset({a.alias}))]
        return None
    value = g.choice(
        [
            f"{x}::FLOAT {op} {y}",
            f"CAST({x} AS REAL) * 1.1 - 0.2",
            f"ROUND(CAST({x} AS REAL) / 3, 2)",
            f"CASE WHEN {y} > 0 THEN CAST({x} AS FLOAT4) ELSE 0.1 END / 7",
            f"CAST(CAST({x} AS REAL) / 7 AS VARCHAR)",
        ]
    )
    g.q.items = _pick_columns(g, 2) + [Part(value, frozenset({a.alias, b.alias}))]


@production("select", weight=0.7)
def aggregate_of_nan_producing(g):
    """SUM/AVG/MIN/MAX of x / y: ±inf and NaN entering and leaving a sum."""
    e = _nan_expression(g)
    if e is None:
        return False
    g.q.grouped = True
    every = _everything(g)
    ref, _, a = g.choice(every)
    keys = [Part(ref, frozenset({a.alias}))] if g.chance(0.6) else []
    g.q.group_by = keys
    agg = g.choice(["SUM", "AVG", "MIN", "MAX"])
    g.q.items = keys + [Part(f"{agg}({e.sql})", e.aliases), Part("COUNT(*)")]


def _window(g: Gen, inner: str | None = None) -> Part:
    """AGG(x) OVER ([PARTITION BY k, …]); `inner`: the argument (an
    aggregate, over groups) instead of a column."""
    every = _everything(g)
    nums = [e for e in every if e[1] in ("int", "dec")]
    agg = g.choice(["SUM", "COUNT", "AVG", "MIN", "MAX", "COUNT(*)"])
    aliases = set()
    if inner is not None:
        arg = inner
    elif agg == "COUNT(*)" or not nums:
        agg, arg = "COUNT", "*"
    else:
        ref, _, a = g.choice(nums if agg in ("SUM", "AVG") else every)
        arg, aliases = ref, {a.alias}
    keys = (
        []
        if g.chance(0.2)
        else g.rng.sample(every, min(len(every), g.rng.randint(1, 2)))
    )
    aliases |= {a.alias for _, _, a in keys}
    over = "PARTITION BY " + ", ".join(ref for ref, _, _ in keys) if keys else ""
    return Part(f"{agg}({arg}) OVER ({over})", frozenset(aliases))


@production("select", weight=1.2)
def window_aggregates(g):
    """Columns and aggregate windows over whole partitions (NULL keys form
    one partition)."""
    g.q.items = _pick_columns(g, 3) + [_window(g) for _ in range(g.rng.randint(1, 2))]


def _ordered_over(g: Gen) -> tuple[str, set]:
    """[PARTITION BY k] ORDER BY one or two keys, ASC/DESC, NULLS FIRST/LAST
    or the default; and the aliases it reads."""
    every = _everything(g)
    keys = g.rng.sample(every, min(len(every), g.rng.randint(1, 2)))
    order = []
    for ref, _, _ in keys:
        order.append(
            ref
            + g.choice(["", " DESC"])
            + g.choice(["", "", " NULLS FIRST", " NULLS LAST"])
        )
    aliases = {a.alias for _, _, a in keys}
    over = ""
    if g.chance(0.7):
        ref, _, a = g.choice(every)
        over, aliases = f"PARTITION BY {ref} ", aliases | {a.alias}
    return f"{over}ORDER BY {', '.join(order)}", aliases


def _ranking(g: Gen) -> Part:
    """RANK()/DENSE_RANK() over an order."""
    over, aliases = _ordered_over(g)
    func = g.choice(
        ["RANK", "DENSE_RANK", "RANK", "DENSE_RANK", "PERCENT_RANK", "CUME_DIST"]
    )
    return Part(f"{func}() OVER ({over})", frozenset(aliases))


@production("select", weight=0.4)
def window_ends(g):
    """Columns and FIRST_VALUE/LAST_VALUE of the first ORDER BY key or the
    PARTITION BY key (the default frame or the whole partition): rows
    that tie agree on it, so the value is determined while they tie."""
    over, aliases = _ordered_over(g)
    keys = over.split("ORDER BY ", 1)[1].split(", ")[0].split(" ")[0]
    if over.startswith("PARTITION BY ") and g.chance(0.3):
        keys = over.removeprefix("PARTITION BY ").split(" ")[0]
    frame = g.choice(
        [
            "",
            " ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING",
            " RANGE BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING",
        ]
    )
    items = [
        Part(f"{func}({keys}) OVER ({over}{frame})", frozenset(aliases))
        for func in g.rng.sample(["FIRST_VALUE", "LAST_VALUE"], g.rng.randint(1, 2))
    ]
    g.q.items = _pick_columns(g, 3) + items


@production("select", weight=0.8)
def window_running(g):
    """Columns and running aggregates: AGG(x) OVER ([PARTITION BY k] ORDER BY
    …), the default frame (the rows up to the current one and its peers)."""
    every = _everything(g)
    nums = [e for e in every if e[1] in ("int", "dec")]
    items = []
    for _ in range(g.rng.randint(1, 2)):
        agg = g.choice(["SUM", "COUNT", "AVG", "MIN", "MAX", "COUNT(*)"])
        if agg == "COUNT(*)" or not nums:
            arg, aliases = "COUNT(*", set()
        else:
            ref, _, a = g.choice(nums if agg in ("SUM", "AVG") else every)
            arg, aliases = f"{agg}({ref}", {a.alias}
        over, more = _ordered_over(g)
        items.append(Part(f"{arg}) OVER ({over})", frozenset(aliases | more)))
    g.q.items = _pick_columns(g, 3) + items


@production("select", weight=0.5)
def window_sliding(g):
    """Columns and an aggregate over a sliding RANGE frame around one ORDER
    BY key: numbers around an INTEGER or DECIMAL key, INTERVALs around a
    DATE (a NULL key frames its peers)."""
    every = _everything(g)
    keys = [e for e in every if e[1] in ("int", "dec", "date")]
    if not keys:
        return False
    key, kind, a = g.choice(keys)
    n, m = sorted(g.rng.sample(range(0, 4), 2))
    unit = (lambda k: f"INTERVAL {k} DAY") if kind == "date" else str
    start, end = g.choice(
        [
            (f"{unit(m)} PRECEDING", "CURRENT ROW"),
            (f"{unit(n)} PRECEDING", f"{unit(m)} FOLLOWING"),
            (f"{unit(m)} PRECEDING", f"{unit(n)} PRECEDING"),
            (f"{unit(n)} FOLLOWING", f"{unit(m)} FOLLOWING"),
            ("CURRENT ROW", f"{unit(m)} FOLLOWING"),
        ]
    )
    nums = [e for e in every if e[1] in ("int", "dec")]
    agg = g.choice(["SUM", "COUNT", "AVG", "MIN", "MAX", "COUNT(*)"])
    aliases = {a.alias}
    if agg == "COUNT(*)" or not nums:
        arg = "COUNT(*"
    else:
        ref, _, b = g.choice(nums if agg in ("SUM", "AVG") else every)
        arg, aliases = f"{agg}({ref}", aliases | {b.alias}
    over = ""
    if g.chance(0.5):
        ref, _, b = g.choice(every)
        over, aliases = f"PARTITION BY {ref} ", aliases | {b.alias}
    over += f"ORDER BY {key}{g.choice(['', ' DESC'])}"
    frame = f"RANGE BETWEEN {start} AND {end}"
    window = Part(f"{arg}) OVER ({over} {frame})", frozenset(aliases))
    g.q.items = _pick_columns(g, 3) + [window]


@production("select", weight=0.8)
def window_ranks(g):
    """Columns and a ranking of the rows (ties share a rank; NULL keys
    ordered by NULLS FIRST/LAST)."""
    g.q.items = _pick_columns(g, 3) + [_ranking(g)]


@production("select", weight=0.6)
def window_over_groups(g):
    """A grouped query with a window over its groups: SUM(SUM(x)) OVER (…)."""
    nums = [e for e in _everything(g) if e[1] in ("int", "dec")]
    if not nums:
        return False
    group_by_columns(g)
    x, _, a = g.choice(nums)
    inner = g.choice([f"SUM({x})", f"COUNT({x})", "COUNT(*)", f"MAX({x})"])
    keys = [p.sql for p in g.q.group_by]
    window = f"{g.choice(['SUM', 'MAX', 'MIN'])}({inner}) OVER ("
    if keys and g.chance(0.25):  # the previous or next group in an order
        shift = g.choice(["LAG", "LEAD", "ROW_NUMBER", "NTILE", "FIRST_VALUE"])
        if shift == "ROW_NUMBER":  # or the groups numbered, or in buckets
            shift = "ROW_NUMBER() OVER ("
        elif shift == "NTILE":
            shift = f"NTILE({g.choice([1, 2, 3, 5])}) OVER ("
        elif shift == "FIRST_VALUE":  # or the first or the row's own value
            shift = g.choice(["FIRST_VALUE", "LAST_VALUE"]) + f"({inner}) OVER ("
        else:
            shift += f"({inner}" + g.choice(["", ", 2", ", 1, 0"]) + ") OVER ("
        order = ", ".join(keys[1:] + keys[:1])
        shift += f"PARTITION BY {keys[0]} " if len(keys) > 1 else ""
        window = shift + f"ORDER BY {order}{g.choice(['', ' DESC'])})"
    elif keys and g.chance(0.4):  # running over the groups, each its own row
        order = ", ".join(keys[1:] + keys[:1])
        frame = g.choice(
            [
                "",
                " ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW",
                " ROWS BETWEEN 1 PRECEDING AND CURRENT ROW",
                " ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING",
                " ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING",
            ]
        )
        window += f"PARTITION BY {keys[0]} " if len(keys) > 1 else ""
        window += f"ORDER BY {order}{g.choice(['', ' DESC'])}{frame})"
    else:
        window += f"PARTITION BY {keys[0]})" if keys and g.chance(0.7) else ")"
    g.q.items.append(Part(window, frozenset({a.alias})))


# --- HAVING and DISTINCT over groups (applied to grouped queries) -------------------


def _having(g: Gen) -> None:
    nums = [e for e in _everything(g) if e[1] in NUMERIC]
    forms = [f"COUNT(*) > {g.rng.randint(0, 2)}"]
    al: frozenset = frozenset()
    if nums:
        ref, _, a = g.choice(nums)
        al = frozenset({a.alias})
        forms += [
            f"SUM({ref}) >= {g.rng.randint(0, 4)}",
            f"(MIN({ref}) < {g.rng.randint(1, 3)} OR COUNT(*) = 1)",
            f"AVG({ref}) > 1",
            f"COUNT({ref}) < COUNT(*)",
        ]
    sql = g.choice(forms)
    g.q.having.append(Part(sql, frozenset() if sql == forms[0] else al))
    g.q.tags.append("having")


# --- tails -----------------------------------------------------------------------


@production("tail", weight=1)
def order_by_limit(g):
    """ORDER BY every output column (ASC or DESC) [LIMIT n] [OFFSET m]: a
    window fixed up to equal rows."""
    n = len(g.q.items) or sum(len(a.columns) for a in g.q.atoms)
    order = ", ".join(f"{i + 1}{' DESC' if g.chance(0.3) else ''}" for i in range(n))
    tail = f" ORDER BY {order}"
    if g.chance(0.85):
        tail += f" LIMIT {g.rng.randint(1, 5)}"
    if g.chance(0.3):
        tail += f" OFFSET {g.rng.randint(1, 3)}"
    g.q.tail = tail


@production("tail", weight=1)
def order_by_some(g):
    """ORDER BY one or two output columns [LIMIT n]: ties broken any way
    (the harness accepts any order among equal keys and any tied rows at
    the cut); a key of one table can be enumerated from a sorted root."""
    n = len(g.q.items) or sum(len(a.columns) for a in g.q.atoms)
    keys = g.rng.sample(range(1, n + 1), min(n, g.rng.randint(1, 2)))
    order = ", ".join(f"{k}{' DESC' if g.chance(0.4) else ''}" for k in keys)
    tail = f" ORDER BY {order}"
    if g.chance(0.6):
        tail += f" LIMIT {g.rng.randint(1, 5)}"
    g.q.tail = tail


_AGGREGATE = re.compile(r"\b(SUM|AVG|MIN|MAX|COUNT)\(")
_FLOATISH = re.compile(r"/|\.w\b|\.m\b|\bAVG\(")


@production("tail", weight=1)
def set_operation(g):
    """The query UNION/INTERSECT/EXCEPT [ALL] itself with one more filter on
    its first atom (so that INTERSECT and EXCEPT are not trivial). Not over
    float aggregates: DuckDB sums the two sides' floats in different orders,
    so equal groups can differ in the last bit and the rows compare unequal."""
    if any(_AGGREGATE.search(p.sql) and _FLOATISH.search(p.sql) for p in g.q.items):
        return False
    g.q.set_op = g.choice(
        ["UNION ALL", "UNION", "INTERSECT", "INTERSECT ALL", "EXCEPT", "EXCEPT ALL"]
    )
    a = g.q.atoms[0]
    ref = g.col(a, ("int",))
    if ref is not None:
        g.q.set_filter = Part(f"{ref[0]} <> {g.literal('int')}", frozenset({a.alias}))


# --- the generator --------------------------------------------------------------------


def generate(rng: random.Random) -> Query:
    """One random query (it may still be refused: cyclic, not supported)."""
    q = Query()
    g = Gen(rng, q, {p.name for p in PRODUCTIONS if p.enabled})
    n = rng.choices([1, 2, 3, 4], [3, 4, 2.5, 1])[0]
    for i in range(n):
        _pick(g, "from", f"a{i}")
    # a random join tree: atom i hangs below an earlier atom
    for i in range(1, n):
        _pick(g, "join", q.atoms[i], q.atoms[rng.randrange(i)])
    if n >= 2 and rng.random() < 0.2:
        i, j = rng.sample(range(n), 2)
        _pick(g, "cross", q.atoms[i], q.atoms[j])
    for atom in q.atoms:
        if rng.random() < 0.25:
            _pick(g, "filter", atom)
    if rng.random() < 0.25:
        _pick(g, "subquery", rng.choice([a for a in q.atoms if a.table] or q.atoms))
    _pick(g, "select")
    if q.grouped and rng.random() < 0.3:
        _having(g)
    if q.grouped and q.items and rng.random() < 0.1:
        q.distinct = True
        q.tags.append("distinct_over_groups")
    if rng.random() < 0.1:
        _pick(g, "tail")
    return q
