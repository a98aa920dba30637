"""The differential fuzzer's CI slice, and tests of the fuzzer itself.

The generator (tests/fuzzgen.py) draws queries from small productions over
six tables (INTEGER, DECIMAL, DOUBLE, VARCHAR, DATE columns; one table
declared NOT NULL): joins along a random tree (equalities, inequalities,
bands, `<>`, outer joins, cartesian products, self-joins, cycles), derived
tables and CTEs, local filters of every supported form, conditions across
tables, IN/EXISTS/NOT IN/NOT EXISTS and scalar subqueries, a SELECT of `*`,
columns, expressions (also ones giving ±inf and NaN), DISTINCT, GROUP BY
with every aggregate, HAVING, and ORDER BY/LIMIT/OFFSET or a set operation.
Each compiled query gets several update streams (pull and push mode) with
NULLs, duplicates and deletions, checked against DuckDB after every batch
(tests/fuzzrun.py, tests/differential.py).

CI runs a fixed-seed slice (`SLICE_QUERIES` queries; about a minute); the
long run is offline: `python scripts/fuzz.py --pairs 100000` (docs/fuzzing.md).
`DYNYAN_FUZZ_QUERIES=N` changes the slice. A failure of a known bug
(tests/fuzzrun.py KNOWN_BUGS, each with a strict xfail fixture in
tests/fixtures/regressions/) is counted, not failed on.
"""

from __future__ import annotations

import os
import random
from collections import Counter

import duckdb
import pytest

import fuzzgen
import fuzzrun
from differential import DifferentialFailure, QuerySpec, run_differential
from fuzzgen import SCHEMA

SLICE_SEED = 0
SLICE_QUERIES = int(os.environ.get("DYNYAN_FUZZ_QUERIES", 20))
SLICE = fuzzrun.Config(seed=SLICE_SEED, streams=4, shrink=False)


def test_fuzz_slice_against_duckdb():
    """A fixed-seed slice of the offline fuzzer: no new failures, most
    queries compile, most checks see a non-trivial result."""
    totals: Counter = Counter()
    refusals: Counter = Counter()
    new, known = [], Counter()
    with fuzzrun.unformatted():
        for index in range(SLICE_QUERIES):
            r = fuzzrun.run_query(index, SLICE)
            for k in ("pairs", "updates", "checks", "nontrivial"):
                totals[k] += r[k]
            totals["compiled"] += r["compiled"]
            if r.get("refusal"):
                refusals[r["refusal"]] += 1
            for f in r["failures"]:
                if f.known:
                    known[f.known] += 1
                else:
                    new.append(f)
    share = totals["nontrivial"] / max(1, totals["checks"])
    report = (
        f"{SLICE_QUERIES} queries, {totals['compiled']} compiled, "
        f"{totals['pairs']} pairs, {totals['updates']} updates, "
        f"{totals['checks']} checks, non-trivial {share:.0%}; "
        f"refusals {dict(refusals)}; known bugs {dict(known)}"
    )
    print(report)
    assert not new, (
        report
        + "\n\n"
        + "\n\n".join(
            f"query {f.index} stream {f.stream} ({'push' if f.push else 'pull'}):\n"
            f"{f.detail}"
            for f in new[:3]
        )
    )
    assert totals["compiled"] >= 0.75 * SLICE_QUERIES, report
    assert share >= 0.5, report


def test_generator_makes_valid_duckdb_sql():
    """Every drawn query runs in DuckDB (a generator bug would otherwise
    show up as a harness failure), and every enabled production is drawn
    (those of weight 0, drawn only when a run gives them a weight, here
    with weight 1): 600 queries run, more drawn until the rarest is (a join
    of two DATE columns comes about once in a thousand)."""
    con = duckdb.connect()
    con.execute(SCHEMA)
    tags: Counter = Counter()
    enabled = {p.name for p in fuzzgen.PRODUCTIONS if p.enabled}
    unweighted = {p.name: p.weight for p in fuzzgen.PRODUCTIONS if not p.weight}
    fuzzgen.reweight({name: 1.0 for name in unweighted})
    try:
        for i in range(6000):
            q = fuzzgen.generate(random.Random(f"valid/{i}"))
            if i < 600:
                con.execute(q.select_sql()).fetchall()
            elif enabled <= set(tags):
                break
            tags.update(q.tags)
    finally:
        fuzzgen.reweight(unweighted)
        con.close()
    assert enabled - set(tags) == set(), "productions never drawn"


def test_disabled_productions_are_still_refused():
    """A disabled production is one the compiler refuses; when it starts to
    compile, this test says so: enable it (fuzzgen `enabled=True`)."""
    from dynyan.errors import UnsupportedQueryError

    import dynyan

    disabled = [p for p in fuzzgen.PRODUCTIONS if not p.enabled]
    if not disabled:
        pytest.skip("every production of the generator is enabled")
    for p in disabled:
        fuzzgen.enable([p.name])
        try:
            for i in range(400):
                q = fuzzgen.generate(random.Random(f"disabled/{p.name}/{i}"))
                if p.name in q.tags:
                    break
            else:
                pytest.fail(f"{p.name} was never drawn")
        finally:
            p.enabled = False
        con = duckdb.connect()
        con.execute(SCHEMA)
        con.execute(q.select_sql()).fetchall()  # valid SQL
        con.close()
        with pytest.raises(UnsupportedQueryError):
            dynyan.load(q.text())


def test_shrinking_finds_a_planted_bug(monkeypatch):
    """A view that loses a row of every non-empty result: the fuzzer's
    failure shrinks to a one-atom query and a one-row update."""
    real = fuzzrun.compile_query

    def lossy(text, cache=False, trust_input=False):
        module, refusal = real(text, cache, trust_input)
        if module is None:
            return module, refusal

        class View(module.View):
            def rows(self):
                return list(super().rows())[1:]

        return type("Lossy", (), {"View": View}), None

    monkeypatch.setattr(fuzzrun, "compile_query", lossy)
    q = fuzzgen.Query(
        atoms=[fuzzgen._table_atom("r1", "a0"), fuzzgen._table_atom("r2", "a1")],
        where=[fuzzgen.Part("a1.x = a0.x", frozenset({"a0", "a1"}))],
        items=[
            fuzzgen.Part("a0.y", frozenset({"a0"})),
            fuzzgen.Part("a1.w", frozenset({"a1"})),
        ],
    )
    spec = QuerySpec.parse(q.text(), name="planted")
    module, _ = lossy(q.text())
    with pytest.raises(DifferentialFailure) as info:
        run_differential(spec, module, seed=3, n_events=60, warm=True)
    f = fuzzrun.Failure(0, 0, False, q, info.value.what, "", info.value.batches)
    small = fuzzrun.shrink(f, budget_s=120)
    assert len(small.query.atoms) == 1 and len(small.query.items) == 1
    assert len(small.batches) == 1 and len(small.batches[0].changes()) == 1
    # the fixture replays the same complaint
    text = fuzzrun.fixture_text(small, "planted", "test")
    fx = fuzzrun.parse_fixture(text)
    assert [b.changes() for b in fx["batches"]] == [b.changes() for b in small.batches]
    with pytest.raises(DifferentialFailure):
        spec = QuerySpec.parse(text, name="fixture")
        from differential import run_batches

        run_batches(spec, lossy(text)[0], fx["batches"])


def test_fixture_literals_round_trip():
    import datetime

    value = [((1, None, "a'b", 2.5, datetime.date(1995, 1, 2), float("inf")), -2)]
    back = fuzzrun._literal(fuzzrun._pylit(value))
    assert back == value
    nan = fuzzrun._literal(fuzzrun._pylit((float("nan"),)))
    assert nan[0] != nan[0]
    with pytest.raises(ValueError):
        fuzzrun._literal("__import__('os').system('true')")


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM r1 a0, r2 a1 WHERE a1.x = a0.y AND a1.w < a0.z + 1",
        "SELECT a0.x AS o0, COUNT(*) AS o1 FROM r1 a0, r1 a1 "
        "WHERE a1.y >= a0.x - 1 AND a1.y <= a0.x + 1 GROUP BY a0.x",
    ],
    ids=["eq-plus-shifted-inequality", "self-join-band-count"],
)
def test_fixed_examples(sql):
    """Two hand-written members of the family, always run (both compile today)."""
    import dynyan

    text = SCHEMA + "\n" + sql + ";"
    module = dynyan.load(text)
    spec = QuerySpec.parse(text, name="fixed")
    run_differential(spec, module, seed=0, n_events=150)
    run_differential(spec, module, seed=1, n_events=150, push=True)


# ---------------------------------------------------------------------------
# Regression tests for bugs the earlier property test found (fixed)
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
