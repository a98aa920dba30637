"""Differential tests: every corpus query, random update streams, DuckDB as oracle.

The harness lives in tests/differential.py; the corpus in tests/fixtures/spj/.
Each query is compiled once per test process (`dynyan.load`). If the compiler
cannot be imported or refuses a query, the tests fail (they never skip).
"""

from __future__ import annotations

import functools
import random
import traceback
from collections import Counter
from pathlib import Path

import pytest

from differential import (
    DifferentialFailure,
    QuerySpec,
    check_atomicity,
    make_view,
    reference_result,
    run_differential,
    Database,
    norm_bag,
    rows_of,
)

CORPUS_DIR = Path(__file__).parent / "fixtures" / "spj"
CORPUS = sorted(CORPUS_DIR.glob("*.sql"))
IDS = [p.stem for p in CORPUS]
SEEDS = [0, 1, 2]
PUSH_SEED = 101
MIN_NONTRIVIAL = 0.15  # share of checks with a non-trivial result, per query
N_EVENTS = 200  # row changes per stream
N_ATOMIC = 40  # row changes before and after the bad calls


@functools.cache
def spec_of(path: Path) -> QuerySpec:
    return QuerySpec.from_file(path)


@functools.cache
def module_of(path: Path):
    import dynyan  # a missing compiler is a failure, not a skip

    return dynyan.load(path.read_text())


def test_corpus_is_big_enough():
    assert len(CORPUS) >= 25, f"only {len(CORPUS)} queries in {CORPUS_DIR}"


@pytest.mark.parametrize("path", CORPUS, ids=IDS)
def test_corpus_query_is_valid(path):
    """Each file: a shape comment, CREATE TABLEs, one SELECT that DuckDB runs."""
    text = path.read_text()
    assert text.startswith(
        "-- "
    ), f"{path.name}: first line must say what shape it tests"
    spec = spec_of(path)
    assert spec.relations, f"{path.name}: the SELECT reads no table"
    assert reference_result(spec, Database(spec.relations)) == Counter()


@pytest.mark.parametrize("path", CORPUS, ids=IDS)
def test_query_against_duckdb(path):
    """All differential checks of one query, in one test so that each query
    is compiled once per process (compiling costs more than a stream):

    * pull mode, seeds 0-2: rows(), enumerate(), multiplicity() after every batch;
    * push mode: the on_delta changes sum to rows() after every batch;
    * bad input (absent deletes, wrong arity, unknown relation) raises and
      changes nothing, in pull and in push mode;
    * the checks see results: every stream has a non-trivial result (one that
      differs from the result on the empty database) at some check, and at
      least MIN_NONTRIVIAL of all checks of the query do.

    Every part runs even if an earlier one fails; the failure lists them all.
    """
    spec = spec_of(path)
    module = module_of(path)
    parts = [
        *(
            (
                f"pull seed={seed}",
                functools.partial(run_differential, seed=seed, n_events=N_EVENTS),
            )
            for seed in SEEDS
        ),
        (
            "push",
            functools.partial(
                run_differential, seed=PUSH_SEED, n_events=N_EVENTS, push=True
            ),
        ),
        ("bad input", functools.partial(check_atomicity, seed=7, n_events=N_ATOMIC)),
        (
            "bad input, push",
            functools.partial(check_atomicity, seed=8, n_events=N_ATOMIC, push=True),
        ),
    ]
    failures = []
    checks = nontrivial = 0
    for label, run in parts:
        try:
            stats = run(spec, module)
            if isinstance(stats, dict):  # a stream (not the bad-input part)
                checks += stats["batches"] + 1
                nontrivial += stats["nontrivial"]
                if not stats["nontrivial"]:
                    failures.append(
                        f"--- {label} ---\nthe result was empty (or as on the "
                        f"empty database) at all {stats['batches'] + 1} checks"
                    )
        except DifferentialFailure as e:
            failures.append(f"--- {label} ---\n{e}")
        except Exception:  # noqa: BLE001 - a harness-level crash is a failure too
            failures.append(f"--- {label} ---\n{traceback.format_exc(limit=-6)}")
    if checks and nontrivial < MIN_NONTRIVIAL * checks:
        failures.append(
            f"--- all streams ---\nonly {nontrivial} of {checks} checks saw a "
            f"non-trivial result (at least {MIN_NONTRIVIAL:.0%} wanted)"
        )
    if failures:
        pytest.fail(
            f"{len(failures)} of {len(parts)} checks failed for {spec.name}\n"
            + "\n".join(failures),
            pytrace=False,
        )


LATER = sorted((Path(__file__).parent / "fixtures" / "spj_later").glob("*.sql"))


@pytest.mark.parametrize("path", LATER, ids=[p.stem for p in LATER])
def test_later_queries_are_refused_or_correct(path):
    """Acyclic but not free-connex queries: until they are supported they must
    be refused with UnsupportedQueryError; once compiled, they must be right."""
    import dynyan
    from dynyan.errors import UnsupportedQueryError

    spec = QuerySpec.from_file(path)
    try:
        module = dynyan.load(spec.text)
    except UnsupportedQueryError as e:
        assert "free-connex" in str(e), str(e)
        return
    run_differential(spec, module, seed=0, n_events=N_EVENTS)
    run_differential(spec, module, seed=1, n_events=N_EVENTS, push=True)


def _by_stem(stem: str) -> Path:
    (path,) = [p for p in CORPUS if p.stem == stem]
    return path


def test_empty_view_is_empty():
    path = _by_stem("14_chain3")
    view = module_of(path).View()
    assert list(view.rows()) == []
    assert list(view.enumerate()) == []


def test_insert_then_delete_same_new_row_in_one_batch():
    """A batch whose net change is valid is accepted even if a row is new."""
    path = _by_stem("11_two_way_star")
    view = module_of(path).View()
    r_row = (1, 2, "a", 1.5, __import__("datetime").date(1995, 1, 1))
    s_row = (2, 3, "p", 1.0)
    view.insert("s", s_row)
    view.update("r", [r_row, r_row], [1, -1])
    assert list(view.rows()) == []
    view.update("r", [r_row, r_row, r_row], [1, 1, -1])
    assert len(list(view.rows())) == 1


def test_delete_absent_row_raises_and_view_still_works():
    path = _by_stem("14_chain3")
    spec = spec_of(path)
    view = module_of(path).View()
    import datetime

    r_row = (1, 2, "a", 1.5, datetime.date(1995, 1, 1))
    s_row = (2, 3, "p", 1.0)
    t_row = (3, 4, "x", datetime.date(1995, 1, 2))
    view.insert("r", r_row)
    view.insert("s", s_row)
    view.insert("t", t_row)
    before = Counter(view.rows())
    assert sum(before.values()) == 1
    with pytest.raises(Exception) as info:
        view.delete("s", (2, 3, "p", 2.0))
    assert str(info.value).strip()
    assert Counter(view.rows()) == before
    view.delete("s", s_row)
    assert list(view.rows()) == []
    with pytest.raises(Exception):
        view.delete("s", s_row)
    assert list(view.rows()) == []
    db = Database(spec.relations)
    db.rels["r"][r_row] = 1
    db.rels["t"][t_row] = 1
    assert norm_bag(view.rows()) == reference_result(spec, db)


def test_harness_detects_a_wrong_view():
    """Guard against a harness that accepts anything: a view that loses one
    result row must fail the differential check."""
    path = _by_stem("11_two_way_star")
    spec = spec_of(path)
    module = module_of(path)

    class Lossy:
        def __init__(self, on_delta=None):
            self._inner = module.View(on_delta=on_delta) if on_delta else module.View()
            self.RELATIONS = module.View.RELATIONS
            self.COLUMNS = module.View.COLUMNS

        def __getattr__(self, name):
            return getattr(self._inner, name)

        def rows(self):
            rows = list(self._inner.rows())
            return rows[1:]

    class FakeModule:
        View = Lossy

    with pytest.raises(DifferentialFailure):
        run_differential(spec, FakeModule, seed=0, n_events=N_EVENTS)


@pytest.mark.parametrize(
    "wrong",
    [
        pytest.param(lambda rows: rows[1:], id="a row lost"),
        pytest.param(lambda rows: rows[::-1], id="out of order"),
    ],
)
def test_harness_detects_a_wrong_ordered_window(wrong):
    """The same guard for ORDER BY … LIMIT … OFFSET, whose window the harness
    cuts from DuckDB's whole ordered result."""
    path = Path(__file__).parent / "fixtures" / "sql" / "04_order_limit_offset.sql"
    spec = QuerySpec.from_file(path)
    assert spec.limit == 4 and spec.offset == 2
    module = module_of(path)

    class Wrong:
        RELATIONS = module.View.RELATIONS
        COLUMNS = module.View.COLUMNS

        def __init__(self, on_delta=None):
            self._inner = module.View()

        def __getattr__(self, name):
            return getattr(self._inner, name)

        def rows(self):
            return wrong(list(self._inner.rows()))

    class FakeModule:
        View = Wrong

    run_differential(spec, module, seed=0, n_events=N_EVENTS)  # the real one passes
    with pytest.raises(DifferentialFailure):
        run_differential(spec, FakeModule, seed=0, n_events=N_EVENTS)


def test_make_view_push_mode_accumulates():
    path = _by_stem("21_projection_one_atom")
    pushed: Counter = Counter()
    view = make_view(module_of(path), pushed)
    import datetime

    view.insert("r", (1, 2, "a", 1.5, datetime.date(1995, 1, 1)))
    view.insert("s", (2, 3, "p", 1.0))
    view.insert("s", (2, 4, "q", 1.0))
    assert sum(pushed.values()) == 2
    assert Counter(tuple(r) for r in view.rows()) == pushed


# Compiled to trust the input (`trust_input=True`): the same streams must give
# the same results without the copy of whole rows. A representative subset
# keeps CI time flat: single tables with filters, joins (chains, stars,
# self-joins, projections, DISTINCT) and aggregates (global, grouped,
# inequality edges, MIN/MAX, subqueries: their views trust the input too).
TRUST_CORPUS = (
    [
        CORPUS_DIR / f"{name}.sql"
        for name in (
            "01_single_eq",
            "05_single_boolean",
            "14_chain3",
            "16_star",
            "19_self_join_path3",
            "22_projection_middle",
            "24_distinct_multi",
            "37_tpch_fq1",
            "41_ne_across_tables",
        )
    ]
    + [
        CORPUS_DIR.parent / "agg" / f"{name}.sql"
        for name in (
            "02_global_empty",
            "04_join_group_sum_avg",
            "13_inequality_group",
            "16_self_join_group",
            "22_min_max",
            "26_band_count",
            "28_derived_aggregate",
            "40_exists_group",
            "41_in_having_group",
            "43_in_join_group",
            "45_sum_two_inequalities",
        )
    ]
    + [
        CORPUS_DIR.parent / "sql" / f"{name}.sql"
        for name in (
            "15_not_in_same_table",
            "09_scalar_correlated_avg",
            "13_exists_not_equal",
            "18_scalar_in_where_fixture",
            "65_in_subquery_under_or",
            "138_not_exists_null_safe_correlation",
            "141_exists_bounded_by_min_max",
            "147_window_not_null_key",
            "151_scalar_subqueries_without_from",
            "158_having_subquery_correlated_by_a_group_key",
            "160_scalar_subqueries_banded_by_an_inequality",
            "202_in_grouped_subquery_sharing_the_outer_leaf",
            "225_rows_wait_for_a_filtered_partner",
            "226_rows_wait_for_a_partner_beside_a_joined_subquery",
            "227_rows_wait_for_a_partner_under_exists",
            "228_rows_wait_for_a_partner_beside_not_in",
            "203_or_of_cases_sharing_a_join",
            "205_joins_on_expressions",
            "206_join_on_an_expression_beside_a_filter",
            "207_date_and_timestamp_bands",
            "208_date_band_without_equality_in_a_subquery",
            "209_timestamp_band_without_equality",
            "210_scalar_subquery_kept_at_filtered_keys",
            "211_expression_join_beside_an_inequality_on_its_table",
            "212_exists_another_value_at_the_key",
            "213_exists_another_value_at_two_keys",
            "216_left_join_summed_as_a_padded_leaf",
            "217_two_padded_leaves_and_having",
            "218_padded_leaf_by_two_columns_without_aggregates",
            "219_having_threshold_summing_the_same_rows",
            "220_scalar_test_summed_per_key_and_value",
            "221_scalar_test_summed_by_a_key_of_two_columns",
            "222_scalar_count_test_summed",
        )
    ]
)


@functools.cache
def trusting_module_of(path: Path):
    import dynyan

    return dynyan.load(path.read_text(), trust_input=True)


@pytest.mark.parametrize("path", TRUST_CORPUS, ids=[p.stem for p in TRUST_CORPUS])
def test_trusting_query_against_duckdb(path):
    """A trusting module on valid streams (pull, push) matches DuckDB; bad
    input (wrong arity, unknown relation, a delete of a row more often than
    the relation holds rows) raises and changes nothing."""
    spec = spec_of(path)
    module = trusting_module_of(path)
    run_differential(spec, module, seed=0, n_events=N_EVENTS)
    run_differential(spec, module, seed=PUSH_SEED, n_events=N_EVENTS, push=True)
    check_atomicity(spec, module, seed=7, n_events=N_ATOMIC, trusting=True)
    check_atomicity(spec, module, seed=8, n_events=N_ATOMIC, push=True, trusting=True)


def strict_and_trusting(sql: str):
    """Views of `sql` compiled strict and trusting."""
    import dynyan

    return dynyan.load(sql).View(), dynyan.load(sql, trust_input=True).View()


def test_trusting_module_keeps_no_whole_rows():
    """Trusting: a single-table aggregate keeps one payload per group and
    no input rows; strict: it counts every whole row."""
    sql = (
        "CREATE TABLE t (k INT, v INT, pad VARCHAR);"
        "SELECT k, SUM(v) AS s FROM t WHERE v > 0 GROUP BY k"
    )
    strict, trusting = strict_and_trusting(sql)
    assert strict.STRICT is True and trusting.STRICT is False
    rows = [(i % 3, i, "x" * i) for i in range(-5, 50)]
    for view in (strict, trusting):
        view.update("t", rows)
    assert sorted(strict.rows()) == sorted(trusting.rows())
    state = trusting.snapshot()["state"]
    assert not any(name.endswith("_rows") for name in state)
    assert sum(len(part) for part in state.values()) <= 3 + 3  # groups, reported
    assert any(name.endswith("_rows") for name in strict.snapshot()["state"])
    with pytest.raises(ValueError, match="keeps no row"):
        trusting.update("t", [(0, 3, "y")], [-100])
    assert sorted(strict.rows()) == sorted(trusting.rows())
    trusting.delete("t", (0, 3, "not the inserted pad"))  # trusted: taken
    assert sorted(trusting.rows()) != sorted(strict.rows())


def test_trusting_module_keeps_projections_for_its_subquery_tests():
    """Trusting: the index of a NOT IN test keeps of a row only the columns
    read again when its test flips; the rows flip as in a strict module, and
    a delete is checked against that projection (a kept count)."""
    sql = (
        "CREATE TABLE t (k INT, v INT, pad VARCHAR); CREATE TABLE s (x INT);"
        "SELECT t.k, COUNT(*) AS n FROM t WHERE t.v NOT IN (SELECT s.x FROM s) "
        "GROUP BY t.k"
    )
    strict, trusting = strict_and_trusting(sql)
    rows = [(i % 3, i % 5, "pad" * i) for i in range(40)]
    for view in (strict, trusting):
        view.update("t", rows)
        view.update("s", [(1,), (2,)])
        view.delete("s", (2,))
    assert sorted(strict.rows()) == sorted(trusting.rows())
    state = trusting.snapshot()["state"]
    kept = [
        row
        for part in state.values()
        if isinstance(part, dict)
        for group in part.values()
        if isinstance(group, dict)
        for row in group
        if isinstance(row, tuple)
    ]
    assert kept and all(len(row) == 2 for row in kept)  # (k, v): no pad
    with pytest.raises(ValueError, match="keeps no row"):
        trusting.update("t", [(0, 0, "x")], [-100])
    trusting.delete("t", (0, 0, "not the inserted pad"))  # trusted: taken
    strict.delete("t", (0, 0, ""))
    assert sorted(strict.rows()) == sorted(trusting.rows())
    for view in (strict, trusting):
        view.delete("s", (1,))  # the rows with v = 1 come back
    assert sorted(strict.rows()) == sorted(trusting.rows())


def test_trusting_module_keeps_projections_for_exists_reading_the_row():
    """Trusting: an EXISTS whose condition reads a column of the outer row
    (TPC-H Q21's other supplier, `s.y <> t.v`) keeps of each row the columns
    its atom and the test read, not the whole row; the rows flip as in a
    strict module as the subquery's values at a key come and go."""
    sql = (
        "CREATE TABLE t (k INT, v INT, pad VARCHAR, w INT);"
        "CREATE TABLE s (k INT, y INT);"
        "SELECT t.w, COUNT(*) AS n FROM t WHERE EXISTS (SELECT * FROM s "
        "WHERE s.k = t.k AND s.y <> t.v) AND t.w > 0 GROUP BY t.w"
    )
    strict, trusting = strict_and_trusting(sql)
    rows = [(i % 4, i % 3, "pad" * i, i % 5) for i in range(40)]
    changes = [
        ("s", [(0, 1), (1, 1), (2, None)], None),
        ("s", [(0, 2), (1, 0)], None),
        ("s", [(0, 1)], [-1]),
        ("t", rows[:10], [-1] * 10),
        ("s", [(1, 1), (2, 2)], [-1, 1]),
    ]
    for view in (strict, trusting):
        view.update("t", rows)
    for relation, batch, mults in changes:
        for view in (strict, trusting):
            view.update(relation, batch, mults)
        assert sorted(strict.rows()) == sorted(trusting.rows())
    kept = [
        row
        for part in trusting.snapshot()["state"].values()
        if isinstance(part, dict)
        for group in part.values()
        if isinstance(group, dict)
        for row in group
        if isinstance(row, tuple) and len(row) > 2
    ]
    assert kept and all(len(row) == 3 for row in kept)  # (k, v, w): no pad
    assert any(n for _, n in strict.rows())


def test_trusting_module_keeps_projections_for_a_correlated_scalar():
    """Trusting: a table tested against a scalar subquery over itself keeps
    no whole rows; the test's index keeps per key and compared value the
    summed payload of the rows there (the atom's path reads only the key),
    and a delete beyond a kept count is refused before either view changes.
    Keys of many distinct values (a sorted group) and of few (a plain one)
    flip as in a strict module and as the query defines."""
    sql = (
        "CREATE TABLE t (k INT, v INT, w INT, pad VARCHAR);"
        "SELECT t.k, COUNT(*) AS n, SUM(t.w) AS s FROM t "
        "WHERE t.v < (SELECT AVG(t2.v) FROM t t2 WHERE t2.k = t.k) GROUP BY t.k"
    )
    strict, trusting = strict_and_trusting(sql)
    rng = random.Random(3)
    rows = [(0, v, v % 7, "pad" * v) for v in range(100)]
    rows += [(1, v, 1, "x") for v in (5, 9, 20)]

    def expected(rows):
        out = {}
        for k in {r[0] for r in rows}:
            vs = [r for r in rows if r[0] == k]
            avg = sum(r[1] for r in vs) / len(vs)
            low = [r for r in vs if r[1] < avg]
            if low:
                out[k] = (k, len(low), sum(r[2] for r in low))
        return sorted(out.values())

    for view in (strict, trusting):
        view.update("t", rows)
    assert sorted(trusting.rows()) == sorted(strict.rows()) == expected(rows)
    state = trusting.snapshot()["state"]
    assert not any(name.endswith("_rows") for name in state)
    (index,) = [part for name, part in state.items() if name.startswith("t_by_")]
    # (count, Σw): the payload's first and last entries
    sums = {
        (k, v): (p[0], p[-1]) for k, group in index.items() for v, p in group.items()
    }
    assert sums == {
        (k, v): (
            sum(1 for r in rows if r[:2] == (k, v)),
            sum(r[2] for r in rows if r[:2] == (k, v)),
        )
        for k, v, _, _ in rows
    }
    before = sorted(trusting.rows())
    with pytest.raises(ValueError, match="keeps no row"):
        trusting.update("t", [(0, 3, 3, "x")], [-2])
    assert sorted(trusting.rows()) == before
    for _ in range(60):  # move the averages both ways, one row at a time
        row = rng.choice(rows)
        if rng.random() < 0.5 and len([r for r in rows if r[0] == row[0]]) > 1:
            rows.remove(row)
            for view in (strict, trusting):
                view.delete("t", row)
        else:
            row = (row[0], rng.randrange(-50, 150), rng.randrange(5), "y")
            rows.append(row)
            for view in (strict, trusting):
                view.insert("t", row)
        assert sorted(trusting.rows()) == sorted(strict.rows()) == expected(rows)


def test_tests_by_one_key_share_their_index():
    """EXISTS and NOT EXISTS of one table by the same NOT NULL key (TPC-H
    Q21's form) keep one index of its rows, which also counts them: no store
    of whole rows, strict or trusting. Both views, and views restored from
    their snapshots, agree with a brute-force evaluation as rows come and go
    (NULLs in the compared column)."""
    sql = (
        "CREATE TABLE l (o INTEGER NOT NULL, s INTEGER, late INTEGER, pad VARCHAR);"
        "SELECT l1.o, l1.s FROM l l1 WHERE"
        " EXISTS (SELECT * FROM l l2 WHERE l2.o = l1.o AND l2.s <> l1.s) AND"
        " NOT EXISTS (SELECT * FROM l l3 WHERE l3.o = l1.o AND l3.s <> l1.s"
        " AND l3.late > 0)"
    )
    rng = random.Random(5)

    def expected(rows):
        def other(r, late_only=False):
            return any(
                x[0] == r[0]
                and None not in (x[1], r[1])
                and x[1] != r[1]
                and (not late_only or (x[2] is not None and x[2] > 0))
                for x in rows
            )

        return sorted((r[0], r[1]) for r in rows if other(r) and not other(r, True))

    views = list(strict_and_trusting(sql))
    for view in views:
        state = view.snapshot()["state"]
        assert [name for name in state if "_by_exists" in name] == ["l_by_exists_1"]
        assert not any(name.endswith("_rows") for name in state)
    rows = []
    for step in range(300):
        if rows and rng.random() < 0.4:
            row = rng.choice(rows)
            rows.remove(row)
            for view in views:
                view.delete("l", row)
        else:
            s = rng.choice([None, 1, 2, 3, 4])
            row = (rng.randrange(6), s, rng.choice([None, 0, 1]), "x" * step)
            rows.append(row)
            for view in views:
                view.insert("l", row)
        for view in views:
            assert sorted(view.rows()) == expected(rows), step
        if step % 100 == 50:  # restored views go on from here
            for i, view in enumerate(views):
                views[i] = type(view)()
                views[i].restore(view.snapshot())


def test_float_sums_do_not_depend_on_the_update_history():
    """DOUBLE sums are exact (`_exact`): rows inserted and deleted again
    leave no trace in the last bits, so a HAVING boundary holds as DuckDB
    sees it on the rows present; an infinite input value is refused."""
    import random

    import duckdb

    import dynyan

    schema = "CREATE TABLE r (k INT, w DOUBLE); CREATE TABLE s (k INT, v DOUBLE);"
    select = (
        "SELECT r.k, SUM(r.w) AS t, SUM(r.w * s.v) AS p,"
        " SUM(CASE WHEN r.w > s.v THEN r.w ELSE s.v END) AS c"
        " FROM r, s WHERE r.k = s.k GROUP BY r.k HAVING AVG(r.w) >= 1"
    )
    module = dynyan.load(schema + select)
    rng = random.Random(5)
    final_r = [(k, rng.choice([0.1, 0.2, 0.3, 1.0, 0.7])) for k in (1, 2) for _ in "ab"]
    final_r += [(3, 1.0)]
    final_s = [(1, 0.1), (2, 3.0), (3, 1.0)]
    noise = [(k, rng.uniform(-1e6, 1e6)) for k in (1, 2, 3) for _ in range(20)]
    direct, noisy = module.View(), module.View()
    direct.update("s", final_s)
    direct.update("r", final_r)
    noisy.update("r", noise)
    noisy.update("s", final_s)
    for row in final_r:
        noisy.insert("r", row)
        noisy.delete("r", noise.pop())
    noisy.update("r", noise, [-1] * len(noise))
    assert sorted(noisy.rows()) == sorted(direct.rows())  # to the last bit
    db = duckdb.connect()
    db.execute(schema)
    db.executemany("INSERT INTO r VALUES (?, ?)", final_r)
    db.executemany("INSERT INTO s VALUES (?, ?)", final_s)
    expected = sorted(db.execute(select).fetchall())
    assert [row[0] for row in expected] == [row[0] for row in sorted(direct.rows())]
    assert (3, 1.0, 1.0, 1.0) in expected and (3, 1.0, 1.0, 1.0) in direct.rows()
    before = sorted(direct.rows())
    with pytest.raises(module.ViewError, match="infinite or NaN"):
        direct.insert("r", (3, float("inf")))
    assert sorted(direct.rows()) == before


@pytest.mark.parametrize(
    "written, standard",
    [
        ("GROUP BY r.k, r.a WITH ROLLUP", "GROUP BY ROLLUP (r.k, r.a)"),
        ("GROUP BY r.k, r.a WITH CUBE", "GROUP BY CUBE (r.k, r.a)"),
    ],
)
def test_mysql_with_rollup_is_the_standard_rollup(written, standard):
    """MySQL's `GROUP BY … WITH ROLLUP`, which DuckDB does not read, is
    compiled as `GROUP BY ROLLUP (…)` and compared with DuckDB running that."""
    head = "CREATE TABLE r (k INTEGER, a INTEGER, x INTEGER);\n"
    select = "SELECT r.k, r.a, COUNT(*) AS n, SUM(r.x) AS s FROM r "
    _same_as(head + select + written, head + select + standard)


def test_limit_with_ties_is_a_rank():
    """`ORDER BY x DESC LIMIT 2 WITH TIES` (PostgreSQL's FETCH FIRST 2 ROWS
    WITH TIES), which DuckDB does not read: the rows ranked up to 2."""
    head = "CREATE TABLE r (k INTEGER, x INTEGER);\nSELECT r.k, r.x FROM r "
    _same_as(
        head + "ORDER BY r.x DESC LIMIT 2 WITH TIES",
        head + "QUALIFY RANK() OVER (ORDER BY r.x DESC) <= 2 ORDER BY r.x DESC",
    )


def test_union_by_name_chains_match_columns_by_name():
    """`A UNION ALL B UNION BY NAME C` (a positional UNION on the left, its
    columns named by its first SELECT) and a chain of BY NAMEs, against
    DuckDB running the same unions written by position."""
    head = (
        "CREATE TABLE r (k INTEGER, x INTEGER);\n"
        "CREATE TABLE s (x INTEGER, k INTEGER, y INTEGER);\n"
    )
    _same_as(
        head + "SELECT r.k, r.x FROM r UNION ALL SELECT s.y, s.k FROM s "
        "UNION BY NAME SELECT s.x AS y, s.k FROM s",
        head + "SELECT r.k, r.x, NULL AS y FROM r UNION ALL SELECT s.y, s.k, NULL "
        "FROM s UNION SELECT s.k, NULL, s.x FROM s",
    )
    _same_as(
        head + "SELECT r.x FROM r UNION ALL BY NAME SELECT s.y, s.x FROM s "
        "UNION ALL BY NAME SELECT s.k, s.y AS z FROM s",
        head + "SELECT r.x, NULL AS y, NULL AS k, NULL AS z FROM r UNION ALL "
        "SELECT s.x, s.y, NULL, NULL FROM s UNION ALL SELECT NULL, NULL, s.k, s.y "
        "FROM s",
    )


def _same_as(written: str, standard: str) -> None:
    """The view compiled from `written` against DuckDB running `standard`."""
    import dynyan

    spec = QuerySpec.parse(standard, "written_otherwise")
    module = dynyan.load(written)
    for seed, push in ((0, False), (1, True)):
        run_differential(spec, module, seed=seed, n_events=N_EVENTS, push=push)
