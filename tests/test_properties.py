"""Property tests: random acyclic queries, compiled and checked against DuckDB.

Hypothesis draws queries over four small tables: 2-4 atoms (self-joins
allowed), equality joins along a random tree (one or two per edge, or none:
a cartesian product), inequality predicates between two atoms' columns
(`<, <=, >, >=`, with `± k`, bands), sometimes one more inequality between
random atoms (which may make the query cyclic), random local filters
(comparisons, BETWEEN, IN, LIKE, OR), and a random SELECT: `*`, columns,
expressions, DISTINCT, or GROUP BY with COUNT/SUM/AVG/MIN/MAX/COUNT DISTINCT
(global aggregates too).

`dynyan.load` may refuse a query with a `DynyanError` (unsupported, cyclic,
not free-connex...): that is counted and `assume`d away. Any other exception
while compiling is a bug. A compiled query gets a random update stream with
deletions from the harness (tests/differential.py) in pull or push mode and
is compared with DuckDB after every batch.

Budget: a fixed seed (`derandomize=True`); 40 queries by default (the slice CI runs),
600 with `DYNYAN_LONG=1` (or `DYNYAN_PROPERTY_EXAMPLES=N`). The counts are
printed (`pytest -s`) and asserted to be non-trivial.
"""

from __future__ import annotations

import os
import re
from collections import Counter

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import differential
from differential import QuerySpec, ViewChecker, run_differential
from dynyan.errors import DynyanError

LONG = os.environ.get("DYNYAN_LONG") == "1"
EXAMPLES = int(os.environ.get("DYNYAN_PROPERTY_EXAMPLES", 600 if LONG else 40))
N_EVENTS = 150 if LONG else 90

# table -> [(column, kind)]
TABLES = {
    "r1": [("x", "int"), ("y", "int"), ("z", "int")],
    "r2": [("x", "int"), ("y", "int"), ("w", "int")],
    "r3": [("y", "int"), ("v", "int"), ("amt", "dec")],
    "r4": [("x", "int"), ("v", "int"), ("tag", "str")],
}
SQL_TYPES = {"int": "INTEGER", "dec": "DECIMAL(6, 2)", "str": "VARCHAR"}
SCHEMA = "\n".join(
    f"CREATE TABLE {t} (" + ", ".join(f"{c} {SQL_TYPES[k]}" for c, k in cols) + ");"
    for t, cols in TABLES.items()
)
INEQ_OPS = ["<", "<=", ">", ">="]


def _cols(table: str, kinds=("int",)) -> list[str]:
    return [c for c, k in TABLES[table] if k in kinds]


@st.composite
def queries(draw) -> str:
    # the shape of the SELECT first: early choices vary most
    mode = draw(st.sampled_from(["group", "cols", "distinct", "star", "group", "cols"]))
    n = draw(st.integers(2, 4))
    tables = [draw(st.sampled_from(sorted(TABLES))) for _ in range(n)]
    alias = [f"a{i}" for i in range(n)]
    where: list[str] = []

    def col(i: int, kinds=("int",)) -> str:
        return f"{alias[i]}.{draw(st.sampled_from(_cols(tables[i], kinds)))}"

    def inequality(i: int, j: int) -> str:
        op = draw(st.sampled_from(INEQ_OPS))
        k = draw(st.sampled_from([0, 0, 1, -1, 2]))
        shift = "" if k == 0 else (f" + {k}" if k > 0 else f" - {-k}")
        return f"{col(i)} {op} {col(j)}{shift}"

    # join tree: atom i hangs below an earlier atom
    for i in range(1, n):
        p = draw(st.integers(0, i - 1))
        kind = draw(
            st.sampled_from(
                [
                    *("eq", "eq", "eq", "eq2", "ineq", "ineq", "eq+ineq", "band"),
                    *("eq+ne", "none"),
                ]
            )
        )
        if kind in ("eq", "eq2", "eq+ineq", "eq+ne"):
            where.append(f"{col(i)} = {col(p)}")
        if kind == "eq+ne":  # <> on the tree edge
            where.append(f"{col(i)} <> {col(p)}")
        if kind == "eq2":
            where.append(f"{col(i)} = {col(p)}")
        if kind in ("ineq", "eq+ineq"):
            where.append(inequality(i, p))
        if kind == "band":
            a, b = col(i), col(p)
            k = draw(st.integers(0, 2))
            where.append(f"{a} >= {b} - {k}")
            where.append(f"{a} <= {b} + {draw(st.integers(0, 2))}")
    if n >= 3 and draw(st.integers(0, 4)) == 0:
        i, j = draw(st.sampled_from([(i, j) for i in range(n) for j in range(i)]))
        where.append(inequality(i, j))
    if n >= 2 and draw(st.integers(0, 4)) == 0:  # fits no edge: on result rows
        i, j = draw(st.sampled_from([(i, j) for i in range(n) for j in range(i)]))
        where.append(f"({col(i)} <> {col(j)} OR {col(i)} + {col(j)} < 3)")

    # local filters
    for i in range(n):
        if draw(st.integers(0, 3)) != 0:
            continue
        t = tables[i]
        choice = draw(st.integers(0, 5))
        if choice == 0:
            where.append(
                f"{col(i)} {draw(st.sampled_from(['=', '<>', '<', '>=']))} "
                f"{draw(st.integers(0, 4))}"
            )
        elif choice == 1:
            lo = draw(st.integers(0, 3))
            where.append(f"{col(i)} BETWEEN {lo} AND {lo + draw(st.integers(0, 2))}")
        elif choice == 2:
            vals = draw(st.lists(st.integers(0, 5), min_size=1, max_size=3))
            where.append(f"{col(i)} IN ({', '.join(map(str, vals))})")
        elif choice == 3 and "tag" in dict(TABLES[t]):
            pat = draw(st.sampled_from(["a%", "%b", "_", "ab"]))
            neg = draw(st.sampled_from(["", "NOT "]))
            where.append(f"{alias[i]}.tag {neg}LIKE '{pat}'")
        elif choice == 4 and "amt" in dict(TABLES[t]):
            where.append(f"{alias[i]}.amt > {draw(st.sampled_from(['1.0', '2.5']))}")
        else:
            a, b = col(i), col(i)
            where.append(f"({a} < {b} OR {a} = {draw(st.integers(0, 3))})")

    # SELECT
    everything = [
        (f"{alias[i]}.{c}", k) for i in range(n) for c, k in TABLES[tables[i]]
    ]
    group_by = ""
    if mode == "star":
        items = ["*"]
    elif mode in ("cols", "distinct"):
        picked = draw(
            st.lists(st.sampled_from(everything), min_size=1, max_size=4, unique=True)
        )
        items = [c for c, _ in picked]
        ints = [c for c, k in everything if k == "int"]
        if mode == "cols" and draw(st.integers(0, 3)) == 0:
            items.append(
                f"{draw(st.sampled_from(ints))} + 2 * {draw(st.sampled_from(ints))}"
            )
    else:
        keys = draw(
            st.lists(st.sampled_from(everything), min_size=0, max_size=2, unique=True)
        )
        items = [c for c, _ in keys]
        numeric = [c for c, k in everything if k in ("int", "dec")]
        for _ in range(draw(st.integers(1, 3))):
            agg = draw(
                st.sampled_from(
                    ["COUNT(*)", "COUNT", "SUM", "AVG", "MIN", "MAX", "COUNT DISTINCT"]
                )
            )
            if agg == "COUNT(*)":
                items.append(agg)
            elif agg == "COUNT DISTINCT":
                items.append(f"COUNT(DISTINCT {draw(st.sampled_from(numeric))})")
            else:
                items.append(f"{agg}({draw(st.sampled_from(numeric))})")
        if keys:
            group_by = " GROUP BY " + ", ".join(c for c, _ in keys)
    if items != ["*"]:
        items = [f"{e} AS o{j}" for j, e in enumerate(items)]
    distinct = "DISTINCT " if mode == "distinct" else ""
    sql = (
        f"SELECT {distinct}{', '.join(items)} FROM "
        + ", ".join(f"{t} {a}" for t, a in zip(tables, alias))
        + (" WHERE " + " AND ".join(where) if where else "")
        + group_by
    )
    return SCHEMA + "\n" + sql + ";"


class _NullTolerantChecker(ViewChecker):
    """NULL is a valid value in any column (SUM/AVG/MIN/MAX over no rows)."""

    def _check_types(self, ctx, rows):
        desc = self.mirror.description
        stand_in = {int: 0, float: 0.0, str: ""}
        patched = []
        for row in rows:
            if isinstance(row, tuple):
                row = tuple(
                    (
                        stand_in.get(differential._expected_pytypes(desc[i][1])[0], v)
                        if v is None and i < len(desc)
                        else v
                    )
                    for i, v in enumerate(row)
                )
            patched.append(row)
        super()._check_types(ctx, patched)


STATS: Counter = Counter()
REFUSALS: Counter = Counter()


def _select_part(text: str) -> str:
    return text.strip().splitlines()[-1]


# Bugs the property test found, reported to the compiler's owner; queries
# that hit them are `assume`d away (and counted) so that the search goes on
# finding other bugs. Each has a strict xfail regression test below: when it
# flips to XPASS, delete its entry here.
KNOWN_BUGS: dict = {}


def _refusal_kind(message: str) -> str:
    """The refusal message without its query-specific details (for the tally)."""
    first = re.sub(r"line \d+, column \d+: ", "", message.splitlines()[0])
    return re.split(r": |; ", first, maxsplit=1)[0][:90]


def _check_query(text: str, push: bool, seed: int) -> None:
    import dynyan

    STATS["tried"] += 1
    for bug, hits in KNOWN_BUGS.items():
        if hits(_select_part(text), push):
            STATS["known_bug"] += 1
            REFUSALS[f"(known bug) {bug}"] += 1
            assume(False)
    try:
        module = dynyan.load(text)
    except DynyanError as err:
        STATS["refused"] += 1
        REFUSALS[f"{type(err).__name__}: {_refusal_kind(str(err))}"] += 1
        assume(False)
    # anything else raised by dynyan.load is a bug and fails the test
    STATS["compiled"] += 1
    spec = QuerySpec.parse(text, name="random")
    stats = run_differential(spec, module, seed=seed, n_events=N_EVENTS, push=push)
    STATS["push" if push else "pull"] += 1
    STATS["updates"] += stats["batches"]
    STATS["checks"] += stats["batches"] + 1
    STATS["nonempty_checks"] += stats["nonempty_results"]
    select = _select_part(text)
    grouped = re.search(r"\b(COUNT|SUM|AVG|MIN|MAX)\(| GROUP BY ", select)
    STATS[
        "grouped" if grouped else "distinct" if "DISTINCT " in select[:16] else "spj"
    ] += 1
    if any(op in text.split("SELECT", 1)[1] for op in (" < ", " <= ", " > ", " >= ")):
        STATS["with_inequality"] += 1


@settings(
    max_examples=EXAMPLES,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[
        HealthCheck.filter_too_much,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)
@given(text=queries(), push=st.booleans(), seed=st.integers(0, 10))
def _random_queries(text, push, seed):
    _check_query(text, push, seed)


@pytest.mark.slow
def test_random_acyclic_queries_against_duckdb(monkeypatch):
    monkeypatch.setattr(differential, "ViewChecker", _NullTolerantChecker)
    STATS.clear()
    REFUSALS.clear()
    _random_queries()
    lines = [
        "random queries: "
        + ", ".join(
            f"{k} {STATS[k]}"
            for k in (
                "tried",
                "compiled",
                "refused",
                "known_bug",
                "pull",
                "push",
                "spj",
                "distinct",
                "grouped",
                "with_inequality",
                "updates",
                "checks",
                "nonempty_checks",
            )
        ),
        "refusals:",
        *(f"  {n:4d}  {kind}" for kind, n in REFUSALS.most_common()),
    ]
    print("\n".join(lines))
    assert STATS["compiled"] >= EXAMPLES // 2, "\n".join(lines)
    assert STATS["with_inequality"] >= EXAMPLES // 10, "\n".join(lines)
    assert STATS["nonempty_checks"] >= STATS["checks"] // 4, "\n".join(lines)


def test_generator_makes_valid_duckdb_sql():
    """The strategy itself: DuckDB accepts what it draws (a generator bug
    would otherwise show up as a harness failure)."""
    import duckdb

    @settings(max_examples=40, derandomize=True, database=None, deadline=None)
    @given(text=queries())
    def check(text):
        spec = QuerySpec.parse(text, name="random")
        con = duckdb.connect()
        for stmt in spec.create_sql:
            con.execute(stmt)
        con.execute(spec.select_sql).fetchall()
        con.close()

    check()


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM r1 a0, r2 a1 WHERE a1.x = a0.y AND a1.w < a0.z + 1",
        "SELECT a0.x AS o0, COUNT(*) AS o1 FROM r1 a0, r1 a1 "
        "WHERE a1.y >= a0.x - 1 AND a1.y <= a0.x + 1 GROUP BY a0.x",
    ],
    ids=["eq-plus-shifted-inequality", "self-join-band-count"],
)
def test_fixed_examples(sql, monkeypatch):
    """Two hand-written members of the family, always run (both compile today)."""
    import dynyan

    monkeypatch.setattr(differential, "ViewChecker", _NullTolerantChecker)
    text = SCHEMA + "\n" + sql + ";"
    module = dynyan.load(text)
    spec = QuerySpec.parse(text, name="fixed")
    run_differential(spec, module, seed=0, n_events=150)
    run_differential(spec, module, seed=1, n_events=150, push=True)


# ---------------------------------------------------------------------------
# Regression tests for bugs the property test found (KNOWN_BUGS: strict xfail)
# ---------------------------------------------------------------------------

TWO = "CREATE TABLE r (a INTEGER, b INTEGER); CREATE TABLE s (b INTEGER, c INTEGER);"


@pytest.mark.parametrize(
    "sql, empty",
    [
        ("SELECT MIN(r.a) FROM r", (None,)),
        ("SELECT MAX(r.a), COUNT(*) FROM r", (None, 0)),
        ("SELECT COUNT(DISTINCT r.a) FROM r", (0,)),
        ("SELECT MIN(r.a) FROM r, s WHERE r.a < s.c", (None,)),
    ],
    ids=["min", "max-count", "count-distinct", "min-inequality"],
)
def test_global_min_max_over_empty_input_has_one_row(sql, empty):
    """Found by the property test (fixed): SQL gives one row over no input."""
    import dynyan

    view = dynyan.load(TWO + sql).View()
    assert list(view.rows()) == [empty]  # SQL: one row, NULL (COUNT: 0)
    view.insert("r", (1, 1))
    view.delete("r", (1, 1))
    assert list(view.rows()) == [empty]


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT DISTINCT r.a, r.a FROM r",
        "SELECT DISTINCT r.b, s.b FROM r, s WHERE r.b = s.b",
    ],
    ids=["same-column", "equated-columns"],
)
def test_push_distinct_with_a_repeated_output_variable(sql):
    """Found by the property test (fixed): the flush looked each changed row
    up by its columns, one more than the variables when one is output twice."""
    import dynyan

    view = dynyan.load(TWO + sql).View(push=True)
    view.insert("r", (2, 2))
    if " s " in sql:
        view.insert("s", (2, 3))
    assert view.deltas() == [((2, 2), 1)]
    view.insert("r", (2, 2))  # a second copy: DISTINCT, no change
    assert view.deltas() == []
    view.update("r", [(2, 2), (2, 2)], [-1, -1])
    assert view.deltas() == [((2, 2), -1)]
