"""The benchmark harness on a tiny in-memory stream: no Spark, a few seconds.

Checks that every system's result agrees with dynyan's (the harness's own
cross-check), that the result file has the documented fields, and that the
baselines agree on the differential corpora: the first-order IVM (which
evaluates expressions on its own, bench/peers/sqlexpr.py) and dynyan with
DuckDB, and DuckDB recomputing with dynyan, at many points of each stream,
not only at its end, on streams whose values come from the query's literals
so the checks see non-empty results. Timing values are never asserted on
(docs/design.md §9).
"""

from __future__ import annotations

import collections
import importlib.util
import json
from pathlib import Path

import pytest

from bench import harness as bench
from bench import report
from bench.peers.common import assign_ids
from bench.peers.ivm import FirstOrderIVM
from bench.peers.recompute import DuckDBRecompute
from dynyan.compiler import load
from dynyan.compiler.frontend import parse_query

ROOT = Path(__file__).resolve().parent.parent
CORPUS = sorted((ROOT / "tests" / "fixtures" / "spj").glob("*.sql"))
AGG_CORPUS = sorted((ROOT / "tests" / "fixtures" / "agg").glob("*.sql"))
HAVE_PATHWAY = importlib.util.find_spec("pathway") is not None


def tiny(q):
    return bench.random_events(q, 120, seed=2, domain=6)


@pytest.fixture(scope="module")
def fq4():
    (q,) = bench.discover_queries(ROOT / "queries", ["fq4"])
    assert q.status == "ok", q.reason
    return q


@pytest.fixture(scope="module")
def q16():
    """An aggregate query with a NOT IN subquery and COUNT(DISTINCT)."""
    (q,) = bench.discover_queries(ROOT / "queries", ["q16"])
    assert q.status == "ok", q.reason
    assert q.grouped and set(q.relations) == {"partsupp", "part", "supplier"}
    return q


@pytest.fixture(scope="module")
def doc(fq4, q16, tmp_path_factory):
    # (pydbsp runs under its own Python: test_pydbsp_agrees_with_dynyan)
    systems = ["store", "dynyan", "ivm", "recompute", "pyflink"]
    if HAVE_PATHWAY:
        systems.append("pathway")
    else:
        print("Pathway is not installed: its part of the run is skipped")
    config = bench.BenchConfig(
        systems=tuple(systems),
        runs=2,
        recompute_batch=40,
        peer_batch=20,
        chunk=20,  # push-mode checkpoints every 40 events
        budget_s=60,
        mem_budget_mb=2_000,
    )
    out = tmp_path_factory.mktemp("bench") / "result.json"
    info = bench.StreamInfo("tiny", "random", "random-delete")
    bench.run_bench([fq4, q16], [(info, tiny)], config, out=out)
    return json.loads(out.read_text())


def result(doc, system, mode, query="tpch/fq4"):
    return next(
        r
        for r in doc["results"]
        if r["system"] == system and r["mode"] == mode and r["query"] == query
    )


def test_result_file_fields(doc):
    for key in ("schema", "started", "finished", "machine", "config", "streams"):
        assert key in doc
    assert doc["machine"]["cores"] >= 1
    assert doc["streams"][0]["label"] == "tiny"
    r = result(doc, "dynyan", "pull")
    assert r["status"] == "ok", r
    for key in (
        "events",
        "inserts",
        "deletes",
        "apply_s",
        "runs_apply_s",
        "events_per_s",
        "enum_s",
        "tuples_per_s",
        "result_rows",
        "rss_peak_mb",
        "rss_delta_mb",
        "traced_peak_mb",
        "digest",
    ):
        assert key in r, key
    assert len(r["runs_apply_s"]) == 2
    assert r["events"] == r["inserts"] + r["deletes"] and r["deletes"] > 0
    assert r["check"] == "reference"
    # per-update latency is a push-mode metric: the time to report a change
    assert "latency" not in r
    push = result(doc, "dynyan", "push")
    assert push["latency"]["unit"] == "event" and push["latency"]["p99_us"] > 0


@pytest.mark.parametrize("query", ["tpch/fq4", "tpch/q16"])
@pytest.mark.parametrize("system", ["ivm", "recompute", "pathway"])
@pytest.mark.parametrize("mode", ["pull", "push"])
def test_peers_agree_with_dynyan(doc, system, mode, query):
    if system == "pathway" and not HAVE_PATHWAY:
        pytest.skip("pathway is not installed (optional extra 'peers')")
    r = result(doc, system, mode, query)
    assert r["status"] == "ok", r
    assert r["check"] == "ok", r
    if mode == "pull":
        dyn = result(doc, "dynyan", "pull", query)
        assert r["result_rows"] == dyn["result_rows"] > 0
    else:
        assert r["deltas"] > 0


@pytest.mark.parametrize("query", ["tpch/fq4", "tpch/q16"])
def test_push_results_agree_along_the_stream(doc, query):
    """In push mode every system's result is compared with dynyan's every
    40 events (a multiple of every system's chunk and batch), not only at
    the end; the checkpoints see non-empty results."""
    dyn = result(doc, "dynyan", "push", query)
    n = dyn["events"]
    assert len(dyn["trail"]) == -(-n // 40) and dyn["trail_nonempty"] >= 2
    for system in ("ivm", "recompute"):
        r = result(doc, system, "push", query)
        assert r["check"] == "ok" and r["trail_check"] == "ok", r


def test_compare_trails():
    ref = [[3, 11], [5, 12], [0, 0]]
    assert bench.compare_trails(ref, [[3, 11], [5, 12], [0, 0]]) is None
    assert "checkpoint 2 of 3" in bench.compare_trails(ref, [[3, 11], [5, 13], [0, 0]])
    assert "checkpoints" in bench.compare_trails(ref, [[0, 0]])
    # a result equal only up to float rounding: row counts at every point
    assert bench.compare_trails(ref, [[3, 1], [5, 2], [0, 0]], hashes=False) is None
    assert bench.compare_trails(ref, [[3, 1], [4, 2], [0, 0]], hashes=False)
    # rounding: a float sum off in the last bits digests alike
    a, b = bench.DigestSink(keep=True), bench.DigestSink(keep=True)
    a(("x", 0.1 + 0.2, 2), 1)
    b(("x", 0.3, 2.0), 1)
    a.checkpoint()
    b.checkpoint()
    assert a.trail == b.trail


def test_dynyan_push_is_measured_or_reported(doc):
    r = result(doc, "dynyan", "push")
    if r["status"] == "unavailable":
        assert "push" in r["reason"]
    else:
        assert r["status"] == "ok" and r["check"] == "ok", r


def test_floor_and_skips_are_reported(doc):
    floor = result(doc, "store", "pull")
    assert floor["status"] == "ok" and floor["events_per_s"] > 0
    # a peer that cannot run is listed with its reason, never dropped
    for system in ("pyflink",):
        r = result(doc, system, "pull")
        assert r["status"] == "skipped" and r["reason"]
        assert system in doc["skipped_systems"]


@pytest.fixture(scope="module")
def dbsp_doc(tmp_path_factory):
    """pydbsp (Python >= 3.12, in .venv-dbsp, made on first use) on tiny
    streams: an SPJ query, NOT IN with COUNT(DISTINCT), a derived table and
    a global aggregate."""
    from bench.peers.dbsp import dbsp_python

    exe, reason = dbsp_python(create=True)
    if exe is None:
        pytest.skip(f"pydbsp cannot run here: {reason}")
    queries = bench.discover_queries(ROOT / "queries", ["fq4", "q16", "q13", "q6"])
    assert all(q.status == "ok" for q in queries)
    config = bench.BenchConfig(
        systems=("dynyan", "pydbsp"),
        runs=1,
        peer_batch=25,
        budget_s=60,
        mem_budget_mb=2_000,
        latency=False,
    )
    out = tmp_path_factory.mktemp("bench-dbsp") / "result.json"
    info = bench.StreamInfo("tiny", "random", "random-delete")
    bench.run_bench(queries, [(info, tiny)], config, out=out)
    return json.loads(out.read_text())


@pytest.mark.slow
@pytest.mark.parametrize("query", ["tpch/fq4", "tpch/q16", "tpch/q13", "tpch/q6"])
@pytest.mark.parametrize("mode", ["pull", "push"])
def test_pydbsp_agrees_with_dynyan(dbsp_doc, mode, query):
    assert "pydbsp" not in dbsp_doc["skipped_systems"], dbsp_doc["skipped_systems"]
    r = result(dbsp_doc, "pydbsp", mode, query)
    assert r["status"] == "ok", r
    assert r["check"] == "ok", r
    assert r["batch"] == 25 and r["events_per_s"] > 0
    if mode == "pull":
        dyn = result(dbsp_doc, "dynyan", "pull", query)
        assert r["result_rows"] == dyn["result_rows"] > 0
    else:
        assert r["deltas"] > 0 and "traced_peak_mb" in r


def test_report_and_charts(doc, tmp_path):
    text = report.report([doc])
    assert "| tpch/fq4 |" in text and "first-order IVM" in text
    assert "### Runs" in text and "### Standing" in text
    commit = doc["git"]["commit"]
    assert commit is None or commit[:7] in text  # every run named by its commit
    full = report.report([doc], full=True)
    assert "| tpch/fq4 |" in full and "peak RSS" in full
    md = tmp_path / "B.md"
    md.write_text("# B\n\nintro\n")
    report.update_markdown(md, text)
    report.update_markdown(md, text)  # idempotent between the markers
    assert md.read_text().count("<!-- bench:begin -->") == 1
    if importlib.util.find_spec("matplotlib") is None:
        pytest.skip("matplotlib is not installed (optional extra 'peers')")
    paths = report.charts([doc], tmp_path)
    assert paths and all(p.stat().st_size > 0 for p in paths)


def _row(system, status="ok", rate=None, partial=None, mode="pull"):
    return {
        "stream": "s",
        "query": "tpch/q",
        "mode": mode,
        "system": system,
        "status": status,
        "events_per_s": rate,
        "apply_s": 100 / rate if rate else None,
        "partial_events_per_s": partial,
        "result_rows": 3,
    }


def test_compact_report_cells_say_how_a_ratio_was_measured():
    """dynyan's rate ÷ the peer's; ≥ where the peer was stopped at its budget
    (its rate until then), ≈ where dynyan was stopped too."""
    doc = {
        "file": "r.json",
        "started": "2026-11-23T10:00:00+00:00",
        "git": {"commit": "abcdef0123", "dirty": True},
        "config": {"budget_s": 30},
        "streams": [{"label": "s"}],
        "results": [
            _row("dynyan", rate=1000.0),
            _row("ivm", rate=250.0),
            _row("recompute", "timeout", partial=100.0),
            _row("pathway", "memory"),
            _row("dynyan", "timeout", partial=50.0, mode="push"),
            _row("ivm", "timeout", partial=100.0, mode="push"),
        ],
    }
    text = report.report([doc])
    assert "`r.json` (2026-11-23, abcdef0+)" in text
    (line,) = [l for l in text.splitlines() if l.startswith("| tpch/q |")]
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[:6] == ["tpch/q", "3", "1,000", "4.0×", "≥10×", "memory"]
    assert cells[6:8] == ["timeout ≈50", "≈0.5×"]


def test_queries_that_do_not_compile_are_skipped_with_reason(tmp_path):
    schema = "CREATE TABLE x (a INT, b INT); CREATE TABLE y (b INT, c INT);"
    (tmp_path / "ok.sql").write_text(
        schema + "SELECT x.a, y.c FROM x, y WHERE x.b = y.b"
    )
    (tmp_path / "agg.sql").write_text(schema + "SELECT count(*) FROM x")
    (tmp_path / "bad.sql").write_text(
        schema + "SELECT x.a FROM x WHERE nosuchcolumn = 1"
    )
    found = {q.name: q for q in bench.discover_queries(tmp_path)}
    assert found["bad"].status == "skipped" and "compile" in found["bad"].reason
    assert found["agg"].grouped
    # compiles, but no benchmark stream has tables x and y
    assert (
        found["ok"].status == "skipped" and "no benchmark stream" in found["ok"].reason
    )


CHECK_EVERY = 15  # events between the agreement checks


def _agreement(path: Path, seed: int) -> tuple[int, int]:
    """Stream random events into dynyan (push mode) and the first-order IVM
    (push mode) and, every CHECK_EVERY events and at the end, compare both
    with DuckDB evaluating the query on the current database: the IVM's
    result, dynyan's, and the sums of both systems' pushed deltas. Returns
    (checks, checks whose result is non-trivial: not the empty database's)."""
    from differential import Database, QuerySpec, reference_result

    sql = path.read_text()
    spec = QuerySpec.parse(sql, name=path.stem)
    events = _events(spec, seed)
    pushed, deltas = collections.Counter(), collections.Counter()
    view = load(sql).View(on_delta=lambda row, c: pushed.update({row: c}))
    ivm = FirstOrderIVM(
        parse_query(sql, padded_leaves=False),
        on_delta=lambda row, c: deltas.update({row: c}),
    )
    db = Database(spec.relations)
    empty = reference_result(spec, db)
    checks = nontrivial = 0
    for i, (rel, op, row) in enumerate(events, start=1):
        for target in (view, ivm):
            (target.insert if op > 0 else target.delete)(rel, row)
        db.rels[rel][row] += op
        db.rels[rel] = +db.rels[rel]
        if i % CHECK_EVERY and i != len(events):
            continue
        expected = reference_result(spec, db)
        where = f"{path.stem} after {i} of {len(events)} events"
        for name, got in (
            ("IVM", ivm.enumerate()),
            ("IVM deltas", (+deltas).items()),
            ("dynyan", collections.Counter(view.rows()).items()),
            ("dynyan deltas", (+pushed).items()),
        ):
            diff = bench.compare_bags(expected.items(), norm_bag_pairs(got))
            assert diff is None, f"{where}: {name} differs from DuckDB: {diff}"
        checks += 1
        nontrivial += expected != empty
    return checks, nontrivial


def _events(spec, seed: int, n: int = 150) -> list[tuple[str, int, tuple]]:
    """Single-row events from the differential harness's stream for `spec`:
    values from the query's own literals and LIKE patterns (so filters
    pass), joins hitting, duplicates and deletes of present rows."""
    from differential import UpdateStream

    stream = UpdateStream(spec, seed, target_rows=10, warm=True)
    return [
        (b.relation, 1 if m > 0 else -1, row)
        for b in stream.batches(n)
        for row, m in b.changes()
        for _ in range(abs(m))
    ]


def norm_bag_pairs(pairs):
    """(row, multiplicity) pairs with values normalised as DuckDB's are."""
    from differential import norm_row

    out = collections.Counter()
    for row, m in pairs:
        out[norm_row(row)] += m
    return out.items()


@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_ivm_and_dynyan_agree_with_duckdb(path):
    """SPJ corpus: the IVM (its own expression evaluation, bench/peers/
    sqlexpr.py) and dynyan both equal DuckDB at every check, and the checks
    see non-trivial results."""
    checks, nontrivial = _agreement(path, seed=5)
    assert nontrivial >= 1, f"{path.stem}: all {checks} checks saw empty results"


@pytest.mark.parametrize("path", AGG_CORPUS, ids=[p.stem for p in AGG_CORPUS])
def test_ivm_and_dynyan_agree_with_duckdb_on_aggregates(path):
    """Aggregates (GROUP BY, HAVING, MIN/MAX, COUNT(DISTINCT), subqueries):
    the IVM sums in floats, dynyan exactly, so floats agree up to rounding."""
    checks, nontrivial = _agreement(path, seed=5)
    assert nontrivial >= 1, f"{path.stem}: all {checks} checks saw empty results"


def test_agreement_checks_see_results():
    """Over the corpora, most agreement checks see a non-trivial result."""
    total = hit = 0
    for path in CORPUS[::6] + AGG_CORPUS[::6]:
        checks, nontrivial = _agreement(path, seed=5)
        total, hit = total + checks, hit + nontrivial
    assert hit >= 0.6 * total, f"{hit} of {total} checks non-trivial"


def test_ivm_is_a_second_opinion(monkeypatch):
    """A bug planted in dynyan's code generator (LIKE always true) makes
    dynyan wrong; the IVM, which renders expressions on its own, stays
    right: the cross-check catches it instead of repeating it."""
    from dynyan.compiler import render

    monkeypatch.setattr(render.Expressions, "_like", lambda self, s, p: "True")
    path = ROOT / "tests" / "fixtures" / "spj" / "04_single_like.sql"
    with pytest.raises(AssertionError, match="dynyan differs from DuckDB"):
        _agreement(path, seed=5)
    from differential import QuerySpec

    sql = path.read_text()
    events = _events(QuerySpec.parse(sql), seed=5)
    view = load(sql).View()
    ivm = FirstOrderIVM(parse_query(sql, padded_leaves=False))
    for rel, op, row in events:
        for target in (view, ivm):
            (target.insert if op > 0 else target.delete)(rel, row)
    assert collections.Counter(view.rows()) != collections.Counter(ivm.rows())


def test_compare_bags():
    a = [(("x", 1, 0.1 + 0.2), 1), (("y", 2, 1.0), 2)]
    assert bench.compare_bags(a, [(("y", 2, 1.0), 2), (("x", 1, 0.3), 1)]) is None
    assert bench.compare_bags(a, [(("y", 2.0, 1), 2), (("x", 1, 0.3), 1)]) is None
    assert "expected" in bench.compare_bags(a, [(("y", 2, 1.0), 2)])
    assert bench.compare_bags(a, [(("y", 2, 1.0), 2), (("x", 1, 0.31), 1)])


@pytest.mark.parametrize("path", CORPUS[::5], ids=[p.stem for p in CORPUS[::5]])
def test_duckdb_recompute_agrees_with_dynyan(path):
    """After every recompute batch (20 events), DuckDB's result and its
    pushed deltas equal dynyan's at the same point of the stream; streams
    are drawn (seeds 7, 8, 9) until one has non-empty results."""
    for seed in (7, 8, 9):
        if _recompute_agreement(path, seed):
            return
    pytest.fail("every batch of three streams ended with an empty result")


def _recompute_agreement(path: Path, seed: int) -> int:
    from differential import QuerySpec

    sql = path.read_text()
    events = _events(QuerySpec.parse(sql), seed=seed)
    view = load(sql).View()
    deltas = collections.Counter()

    def sink(row, change):
        deltas[row] += change

    batch = 20
    duck = DuckDBRecompute(
        parse_query(sql, padded_leaves=False), on_delta=sink, sql_text=sql
    )
    duck.prepare(events, assign_ids(events), batch)
    nonempty = 0
    for b in range(len(duck.batches)):
        for rel, op, row in events[b * batch : (b + 1) * batch]:
            (view.insert if op > 0 else view.delete)(rel, row)
        duck.apply_batch(b)
        got = collections.Counter()
        for row, m in duck.enumerate():
            got[row] += m
        expected = collections.Counter(view.rows())
        assert got == expected, f"seed {seed}, after batch {b}"
        assert +deltas == expected, f"seed {seed}, after batch {b}"
        nonempty += bool(expected)
    return nonempty


def test_assign_ids_deletes_one_copy():
    events = [("r", 1, (1,)), ("r", 1, (1,)), ("r", -1, (1,)), ("r", 1, (1,))]
    assert assign_ids(events) == [0, 1, 0, 3]


@pytest.mark.skipif(not HAVE_PATHWAY, reason="Pathway is not installed")
def test_pathway_gets_a_prefix_of_a_long_stream(fq4, tmp_path):
    """Pathway cannot be stopped at the budget: past --pathway-max-events it
    runs the first events and is reported as stopped there, with a rate."""
    config = bench.BenchConfig(
        systems=("dynyan", "pathway"),
        modes=("pull",),
        runs=1,
        peer_batch=25,
        pathway_max_events=50,
        latency=False,
        tracemalloc=False,
    )
    info = bench.StreamInfo("tiny", "random", "random-delete")
    doc = bench.run_bench([fq4], [(info, tiny)], config)
    r = result(doc, "pathway", "pull")
    assert r["status"] == "timeout" and r["events_done"] == 50, r
    assert "--pathway-max-events" in r["reason"] and r["partial_events_per_s"] > 0
    assert r["check"] == "unchecked"


def test_merged_takes_a_peer_measured_in_another_run():
    """A peer "unavailable" in the run with the most systems is taken from a
    run that measured it, compared with that run's own dynyan."""

    def row(system, status="ok", **kw):
        return {"stream": "s", "query": "q", "system": system, "mode": "pull"} | {
            "status": status,
            **kw,
        }

    main = {
        "results": [
            row("dynyan", events_per_s=10),
            row("ivm", events_per_s=5),
            row("pathway", "unavailable", reason="cap"),
        ]
    }
    other = {
        "results": [row("dynyan", events_per_s=12), row("pathway", events_per_s=1)]
    }
    (rows,) = report._merged([main, other]).values()
    by = {r["system"]: r for r in rows}
    assert by["dynyan"]["events_per_s"] == 10 and by["ivm"]["events_per_s"] == 5
    assert by["pathway"]["status"] == "ok"
    assert by["pathway"]["ref"]["events_per_s"] == 12


def test_planner_statistics_reach_the_dynyan_worker(tmp_path):
    """With a stream's `stats_dir`, dynyan's worker plans with those sizes
    (FQ3 then changes its tree) and still agrees with the IVM."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    sizes = {  # table: (rows, {key column: distinct values})
        "lineitem": (600, {"l_orderkey": 140, "l_suppkey": 10}),
        "orders": (150, {"o_orderkey": 140, "o_custkey": 97}),
        "partsupp": (80, {"ps_suppkey": 10}),
        "supplier": (10, {"s_suppkey": 10}),
        "customer": (150, {"c_custkey": 145}),
    }
    for table, (rows, keys) in sizes.items():
        cols = {c: [i % d for i in range(rows)] for c, d in keys.items()}
        pq.write_table(pa.table(cols), tmp_path / f"{table}.parquet")
    doc = _fq3_dynyan_and_ivm(stats_dir=str(tmp_path))
    assert doc["streams"][0]["stats_dir"] == str(tmp_path)
    dyn = result(doc, "dynyan", "pull", "tpch/fq3")
    assert dyn["check"] == "reference"
    assert "join tree rooted at [l_suppkey]" in " ".join(dyn["notes"])
    assert result(doc, "ivm", "pull", "tpch/fq3")["check"] == "ok"


def _fq3_dynyan_and_ivm(
    stats_dir: str | None = None,
    systems: tuple[str, ...] = ("dynyan", "ivm"),
    modes: tuple[str, ...] = ("pull",),
    **options,
) -> dict:
    """One run of FQ3 by dynyan and the IVM (or `systems`) on the tiny stream."""
    (q,) = bench.discover_queries(ROOT / "queries", ["fq3"])
    config = bench.BenchConfig(
        systems=systems,
        modes=modes,
        runs=1,
        latency=False,
        tracemalloc=False,
        **options,
    )
    info = bench.StreamInfo("tiny", "random", "random-delete", stats_dir=stats_dir)
    return bench.run_bench([q], [(info, tiny)], config)


def test_speed_ratios_need_a_passed_check():
    """A peer's time counts as a speed only when its result passed the check
    against dynyan's; a peer stopped at its budget is a lower bound."""

    def row(system, check=None, status="ok", **kw):
        r = {"stream": "s", "query": "q", "system": system, "mode": "pull"}
        r |= {"status": status, **kw}
        if check is not None:
            r["check"] = check
        return r

    doc = {
        "streams": [{"label": "s"}],
        "config": {"budget_s": 60},
        "results": [
            row("dynyan", "reference", apply_s=1.0, events_per_s=100),
            row("ivm", "ok", apply_s=2.0, events_per_s=50),
            row("recompute", "unchecked", apply_s=4.0, events_per_s=25),
            row("pydbsp", "mismatch", apply_s=8.0, events_per_s=12),
            row(
                "pathway",
                "unchecked",
                status="timeout",
                partial_events_per_s=10,
                reason="stopped",
            ),
        ],
    }
    ratios = {r["peer"]: r for r in report.speed_ratios([doc])}
    assert set(ratios) == {"ivm", "pathway"}
    assert ratios["ivm"]["x"] == 2.0 and not ratios["ivm"]["bound"]
    assert ratios["pathway"]["x"] == 10.0 and ratios["pathway"]["bound"]
    table = report.summary([doc], "pull")
    assert "(2.0×)" in table and "(check unchecked)" in table
    assert "(check mismatch)" in table and "4.0×" not in table


# The TPC-H queries as the specification writes them (queries/tpch/spec/):
# ORDER BY/LIMIT, scalar subqueries, EXISTS, a view, an outer join, a cycle.
SPEC_SLICE = ["q2", "q13", "q15", "q17", "q21"]


def _spec_events(name: str, seed: int = 5, n: int = 160):
    """The query, its schema and a stream from the differential suite's
    domains for that query (tests/test_queries.py), so results are not empty."""
    from differential import UpdateStream
    from test_queries import _query_sources, _query_spec

    spec = _query_spec(name)
    sql, schema = _query_sources(name)
    events = [
        (b.relation, 1 if m > 0 else -1, row)
        for b in UpdateStream(spec, seed, target_rows=10, warm=True).batches(n)
        for row, m in b.changes()
        for _ in range(abs(m))
    ]
    return spec, sql, schema, events


@pytest.mark.parametrize("query", SPEC_SLICE)
def test_ivm_agrees_with_duckdb_on_specification_queries(query):
    """The first-order IVM (inner views for subqueries, tested atoms re-checked
    by key, the ordered window in push mode) equals DuckDB every 10 events,
    its result and its summed pushed changes."""
    from differential import Database, norm_row, reference_result

    from bench.peers.ivm import make_ivm

    # (Q21 needs three lineitem rows of one order and a late one: a longer stream)
    n = 400 if query == "q21" else 160
    spec, sql, schema, events = _spec_events(f"tpch/spec/{query}", n=n)
    pushed = collections.Counter()
    ivm = make_ivm(
        parse_query(sql, schema, padded_leaves=False),
        on_delta=lambda r, c: pushed.update({r: c}),
    )
    db = Database(spec.relations)
    nontrivial = 0
    for i, (rel, op, row) in enumerate(events, start=1):
        (ivm.insert if op > 0 else ivm.delete)(rel, row)
        db.rels[rel][row] += op
        db.rels[rel] = +db.rels[rel]
        if i % 10 and i != len(events):
            continue
        expected = reference_result(spec, db)
        for label, got in (("IVM", ivm.enumerate()), ("IVM deltas", (+pushed).items())):
            diff = bench.compare_bags(expected.items(), norm_bag_pairs(got))
            assert diff is None, f"{query} after {i} events: {label}: {diff}"
        nontrivial += bool(expected)
    assert nontrivial >= 2, f"{query}: the checks saw empty results"


@pytest.mark.parametrize("query", ["q2", "q15"])
def test_duckdb_recompute_runs_specification_texts(query):
    """DuckDB recomputes the file as written: Q15's CREATE VIEW … DROP VIEW,
    Q2's ORDER BY … LIMIT; its result after every batch is dynyan's."""
    import dynyan

    _spec, sql, schema, events = _spec_events(f"tpch/spec/{query}")
    view = dynyan.load(sql, schema).View()
    batch = 20
    duck = DuckDBRecompute(parse_query(sql, schema, padded_leaves=False), sql_text=sql)
    duck.prepare(events, assign_ids(events), batch)
    nonempty = 0
    for b in range(len(duck.batches)):
        for rel, op, row in events[b * batch : (b + 1) * batch]:
            (view.insert if op > 0 else view.delete)(rel, row)
        duck.apply_batch(b)
        expected = list(view.enumerate())
        diff = bench.compare_bags(expected, list(duck.enumerate()))
        assert diff is None, f"{query}, batch {b}: {diff}"
        nonempty += bool(expected)
    assert nonempty >= 2


@pytest.mark.parametrize(
    "query, reason",
    [
        ("q2", "a scalar subquery"),
        ("q13", "UNION ALL"),
        ("q21", "EXISTS"),
        ("q18", "LIMIT"),
    ],
)
def test_dataflow_peers_say_why_they_cannot_run(query, reason):
    """pydbsp and Pathway adapters refuse what they do not build with a
    reason (the harness reports them "unavailable"), never a crash."""
    from bench.peers.common import require_plain_query
    from bench.peers.dbsp import DBSPEngine
    from dynyan.compiler.source import read_query

    sql, schema = read_query(
        str(ROOT / "queries" / "tpch" / "spec" / f"{query}.sql"), None
    )
    ir = parse_query(sql, schema, padded_leaves=False)
    with pytest.raises(NotImplementedError, match=reason):
        DBSPEngine(ir)
    with pytest.raises(NotImplementedError, match="Pathway adapter"):
        require_plain_query(ir, "Pathway adapter")


def test_huge_pages_and_batches_reach_their_workers():
    """`--huge-pages`: each worker runs under the heap policy and says so
    (where the machine has huge pages). `dynyan-batch`, fed update() per
    batch, agrees with dynyan in pull and push mode (a report per batch)."""
    from dynyan.pipeline import hugepages

    huge = hugepages.unsupported() is None
    doc = _fq3_dynyan_and_ivm(
        systems=("dynyan", "dynyan-batch", "ivm"),
        modes=("pull", "push"),
        recompute_batch=7,
        huge_pages=huge,
    )
    assert doc["config"]["huge_pages"] is huge
    for system in ("dynyan", "dynyan-batch", "ivm"):
        for mode in ("pull", "push"):
            r = result(doc, system, mode, "tpch/fq3")
            assert r["status"] == "ok"
            reference = system == "dynyan" and mode == "pull"
            assert r["check"] == ("reference" if reference else "ok"), (system, mode)
            notes = r.get("notes", [])
            assert ("heap: glibc malloc on transparent huge pages" in notes) is huge
    for mode in ("pull", "push"):
        batch = result(doc, "dynyan-batch", mode, "tpch/fq3")
        assert batch["latency"]["unit"] == "batch" and batch["latency"]["batch"] == 7
