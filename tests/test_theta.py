"""Inequality joins (IEDyn): GCQ1-GCQ8 and the fraud query against DuckDB.

* harness streams (tests/differential.py): random inserts, deletes, mixed
  batches and wipes, compared after every batch in pull mode (two seeds) and
  push mode; bad input in push mode changes nothing;
* the synthetic streams of dynyan.pipeline.synthetic (sliding windows, the fraud
  stream's one-hour deletes) applied in batches as `dynyan replay` does (a
  relation's inserts, then its deletes), compared after every batch, pull and
  push; with batches longer than the window a tuple is inserted and deleted
  in the same batch;
* the Parquet streams written by dynyan.pipeline.synthetic: `validate_stream` accepts
  them and `dynyan.pipeline.replay.replay` ends in DuckDB's answer on
  `streams.materialize`;
* enumeration with one inequality per edge visits only tuples that produce
  output: sys.settrace line counts of `enumerate()` are identical with 10
  and with 10,010 tuples that fail the inequality.
"""

from __future__ import annotations

import functools
import traceback
from collections import Counter
from pathlib import Path

import pytest

from differential import (
    Batch,
    Database,
    DifferentialFailure,
    QuerySpec,
    ViewChecker,
    _Context,
    check_atomicity,
    make_view,
    norm_bag,
    run_differential,
)
import tracing
from dynyan.pipeline import synthetic

ROOT = Path(__file__).resolve().parent.parent
GCQ = [f"gcq{i}" for i in range(1, 9)]
QUERIES = GCQ + ["fraud"]
N_EVENTS = 200


def _strip_comments(sql: str) -> str:
    # QuerySpec.parse cannot take a comment between two statements
    return "\n".join(
        line for line in sql.splitlines() if not line.lstrip().startswith("--")
    )


@functools.cache
def query_text(name: str) -> str:
    """CREATE TABLEs + the SELECT of queries/gcq/<name>.sql or queries/fraud.sql."""
    if name == "fraud":
        return _strip_comments((ROOT / "queries" / "fraud.sql").read_text())
    schema = (ROOT / "queries" / "gcq" / "schema.sql").read_text()
    sql = (ROOT / "queries" / "gcq" / f"{name}.sql").read_text()
    return _strip_comments(schema) + "\n" + _strip_comments(sql)


@functools.cache
def module_of(name: str):
    import dynyan

    return dynyan.load(query_text(name))


def spec_of(name: str) -> QuerySpec:
    """A fresh spec (callers may tune its domains)."""
    spec = QuerySpec.parse(query_text(name), name=name)
    if name == "fraud":
        # two accounts (the self-join meets), amounts on both sides of the
        # filters' bounds (< 100 and > 1000): plain domains never give a row
        spec.domains[("transactions", "acc")] = [1, 1, 2]
        spec.domains[("transactions", "amnt")] = [
            5.5,
            5.5,
            50.0,
            99.99,
            100.0,
            1000.0,
            1000.01,
            2500.5,
            2500.5,
        ]
    return spec


# ---------------------------------------------------------------------------
# Harness streams
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", QUERIES)
def test_harness_streams_against_duckdb(name):
    """Pull (seeds 0, 1), push (seed 2), bad input in push mode; all parts run."""
    spec = spec_of(name)
    module = module_of(name)
    parts = [
        ("pull seed=0", functools.partial(run_differential, seed=0)),
        ("pull seed=1", functools.partial(run_differential, seed=1)),
        ("push seed=2", functools.partial(run_differential, seed=2, push=True)),
    ]
    failures, stats = [], []
    for label, run in parts:
        try:
            stats.append(run(spec, module, n_events=N_EVENTS))
        except DifferentialFailure as e:
            failures.append(f"--- {label} ---\n{e}")
        except Exception:  # noqa: BLE001 - a crash is a failure too
            failures.append(f"--- {label} ---\n{traceback.format_exc(limit=-6)}")
    try:
        check_atomicity(spec, module, seed=8, n_events=40, push=True)
    except Exception:  # noqa: BLE001
        failures.append(f"--- bad input, push ---\n{traceback.format_exc(limit=-6)}")
    if failures:
        pytest.fail("\n".join(failures), pytrace=False)
    # the streams must say something: most batches give a non-empty result
    batches = sum(s["batches"] for s in stats)
    nonempty = sum(s["nonempty_results"] for s in stats)
    assert nonempty >= 0.3 * batches, f"{name}: {nonempty}/{batches} non-empty"


# ---------------------------------------------------------------------------
# Synthetic streams in batches
# ---------------------------------------------------------------------------


def check_event_stream(spec: QuerySpec, module, events, batch: int, push: bool) -> dict:
    """Apply `events` in replay-style batches, compare with DuckDB after each."""
    pushed: Counter | None = Counter() if push else None
    view = make_view(module, pushed)
    db = Database(spec.relations)
    checker = ViewChecker(spec, view, 0, pushed)
    ctx = _Context(spec, 0, 0, None, db)
    largest = nonempty = n = 0
    for n, calls in enumerate(synthetic.batches(events, batch), start=1):
        changed = []
        for rel, rows, mults in calls:
            b = Batch("update", rel, list(rows), list(mults))
            ctx.batch_no, ctx.batch = n, b
            try:
                b.apply(view)
            except Exception as e:  # noqa: BLE001
                ctx.fail(f"a valid batch raised {type(e).__name__}: {e}")
            db.apply(b)
            changed.append(rel)
        got = checker.check(ctx, changed)
        largest = max(largest, sum(got.values()))
        nonempty += bool(got)
    checker.mirror.close()
    return {"batches": n, "nonempty": nonempty, "largest": largest}


def small_gcq_stream(name: str, seed: int, window: int = 25) -> list:
    # small domains so that joins and inequalities meet often
    return synthetic.gcq_events(
        name,
        events=120,
        variant="window",
        window=window,
        seed=seed,
        domain=7,
        key_domain=3,
    )


def small_fraud_stream(seed: int) -> list:
    return synthetic.fraud_events(
        150,
        seed=seed,
        accounts=2,
        mean_gap=240,
        large_fraction=0.3,
        medium_fraction=0.1,
    )


@pytest.mark.parametrize("name", QUERIES)
def test_synthetic_streams_in_batches(name):
    """Window deletes, batches of 1, 7 and 40 events (40 > window: a tuple can
    be inserted and deleted in one batch), pull and push."""
    spec = spec_of(name)
    module = module_of(name)
    runs = [(1, False, 0), (7, True, 1), (40, False, 2), (40, True, 3)]
    failures = []
    for batch, push, seed in runs:
        events = (
            small_fraud_stream(seed)
            if name == "fraud"
            else small_gcq_stream(name, seed)
        )
        assert any(op < 0 for _, op, _ in events)
        try:
            stats = check_event_stream(spec, module, events, batch, push)
        except DifferentialFailure as e:
            failures.append(f"--- batch={batch} push={push} seed={seed} ---\n{e}")
            continue
        assert stats["nonempty"] >= 0.3 * stats["batches"], (name, batch, stats)
    if failures:
        pytest.fail("\n".join(failures), pytrace=False)


# ---------------------------------------------------------------------------
# Parquet streams: validate and replay
# ---------------------------------------------------------------------------


def _duck_answer(name: str, stream_dir: Path) -> Counter:
    from dynyan.pipeline import streams

    con = streams.materialize(stream_dir)
    try:
        spec = spec_of(name)
        return norm_bag(con.execute(spec.select_sql).fetchall())
    finally:
        con.close()


@pytest.mark.parametrize(
    "name, build",
    [
        (
            "gcq4",
            lambda out: synthetic.build_gcq_stream(
                out,
                "gcq4",
                events=400,
                variant="window",
                window=60,
                seed=5,
                domain=50,
                key_domain=4,
                chunk_events=150,
            ),
        ),
        (
            "gcq3",
            lambda out: synthetic.build_gcq_stream(
                out, "gcq3", events=150, seed=6, domain=100, chunk_events=1000
            ),
        ),
        (
            "fraud",
            lambda out: synthetic.build_fraud_stream(
                out,
                events=600,
                seed=7,
                accounts=3,
                mean_gap=120,
                large_fraction=0.2,
                chunk_events=250,
            ),
        ),
    ],
    ids=["gcq4-window", "gcq3-insert", "fraud"],
)
@pytest.mark.parametrize("push", [False, True], ids=["pull", "push"])
def test_written_stream_validates_and_replays(tmp_path, name, build, push):
    from dynyan.pipeline import replay, streams

    out = tmp_path / name
    manifest = build(out)
    report = streams.validate_stream(out)
    assert report.ok, str(report)
    assert manifest["events"] == report.events
    again = build(out)  # same identity: a cache hit, files untouched
    assert again == manifest
    pushed = Counter()
    module = module_of(name)
    view = make_view(module, pushed if push else None)
    summary = replay.replay(view, out, batch=64, progress=False)
    assert summary.events == manifest["events"]
    expected = _duck_answer(name, out)
    assert sum(expected.values()) > 0, "the stream should give a non-empty result"
    assert norm_bag(view.rows()) == expected
    if push:
        assert norm_bag(pushed.elements()) == expected


def test_in_memory_and_written_streams_agree(tmp_path):
    """The Parquet stream holds exactly the in-memory events, in seq order."""
    from dynyan.pipeline import replay, streams

    kwargs = dict(events=300, variant="window", window=40, seed=3, domain=20)
    events = synthetic.gcq_events("gcq1", **kwargs)
    synthetic.build_gcq_stream(tmp_path / "s", "gcq1", chunk_events=100, **kwargs)
    stream = streams.Stream(tmp_path / "s")
    merged = []
    sources = {
        rel: replay._arrow_slices(stream, rel, cols, -1)
        for rel, cols in stream.relations.items()
    }
    for _, _, _, parts in replay.merge_batches(sources, 1):
        ((rel, rows, ops),) = parts
        merged.append((rel, ops[0], rows[0]))
    assert merged == events
    fraud = synthetic.fraud_events(200, seed=1, accounts=2)
    synthetic.build_fraud_stream(tmp_path / "f", events=200, seed=1, accounts=2)
    con = streams.materialize(tmp_path / "f")
    rows = con.execute("SELECT ts, acc, amnt::DOUBLE FROM transactions").fetchall()
    final = synthetic.final_database(fraud)["transactions"]
    assert Counter(rows) == Counter(final)


def test_synthetic_stream_shapes():
    # paper sizes, split evenly over the relations the query reads
    for name in GCQ:
        ev = synthetic.gcq_events(name, seed=1)
        assert len(ev) == synthetic.PAPER_EVENTS[name]
        per = Counter(rel for rel, _, _ in ev)
        assert set(per) == set(synthetic.GCQ_RELATIONS[name])
        assert max(per.values()) - min(per.values()) <= 1
    assert synthetic.gcq_events("gcq2", seed=1) == synthetic.gcq_events("gcq2", seed=1)
    assert synthetic.gcq_events("gcq2", seed=1) != synthetic.gcq_events("gcq2", seed=2)
    # window: exactly W live tuples once full, deletes in insert order
    w = 50
    ev = synthetic.gcq_events("gcq4", events=500, variant="window", window=w)
    live: Counter = Counter()
    order = []
    for i, (rel, op, row) in enumerate(ev):
        live[(rel, row)] += op
        assert live[(rel, row)] >= 0
        if op > 0:
            order.append((rel, row))
        else:
            assert (rel, row) == order[len(order) - w - 1]
        if i >= 2 * w:
            assert sum(live.values()) in (w, w + 1)
    assert sum(live.values()) == w
    # fraud: increasing ts, each transaction deleted once >= 1 h has passed
    ev = synthetic.fraud_events(3000, seed=4)
    now = None
    inserted = {}
    for rel, op, row in ev:
        ts, acc, amnt = row
        assert rel == "transactions" and round(amnt, 2) == amnt
        if op > 0:
            assert now is None or ts > now
            now = ts
            inserted[row] = ts
        else:
            assert row in inserted
    deleted = {row for _, op, row in ev if op < 0}
    for row, ts in inserted.items():
        if row in deleted:
            assert now >= ts + 3600
        else:
            assert now < ts + 3600
    amounts = [row[2] for _, op, row in ev if op > 0]
    assert 0.02 < sum(a > 1000 for a in amounts) / len(amounts) < 0.09
    assert sum(a < 100 for a in amounts) / len(amounts) > 0.7


# ---------------------------------------------------------------------------
# Enumeration visits only output-producing tuples
# ---------------------------------------------------------------------------

THIS_FILE = __file__


def count_lines(fn):
    """Line events executed outside this file while running `fn()`."""
    return tracing.count_lines(fn, lambda filename: filename != THIS_FILE)


def enum_visits(view):
    n_enum, pairs = count_lines(lambda: list(view.enumerate()))
    n_rows, rows = count_lines(lambda: list(view.rows()))
    return n_enum, n_rows, Counter(rows), pairs


def _build(name, core, dangling, n):
    """A view with the `core` rows and `n` dangling rows (half before the
    core, half after) from `dangling(i)` -> (relation, row)."""
    return fill(module_of(name).View(), core, dangling, n)


def fill(view, core, extra, n):
    """Give `view` the `core` rows ({relation: rows}, one update each) and `n`
    rows from `extra(i)` -> (relation, row), half before the core, half after."""
    half = n // 2
    for i in range(half):
        view.insert(*extra(i))
    for rel, rows in core.items():
        view.update(rel, rows)
    for i in range(half, n):
        view.insert(*extra(i))
    return view


# values: core a, d, e, g in 100..200; dangling tuples fail their inequality
CORE = {
    "r": [(100 + i, i, 0) for i in range(10)],
    "s": [(105 + i, 150 + i % 3, i, i % 2) for i in range(6)],
    "t": [(160 + i, i, 0, i % 2) for i in range(4)],
}
VISIT_CASES = {
    # GCQ2 r.a < s.d: s tuples with d below every a never meet any r tuple
    "gcq2-s": ("gcq2", lambda i: ("s", (-i, i, i, 0))),
    # r tuples with a above every d
    "gcq2-r": ("gcq2", lambda i: ("r", (10_000 + i, i, i))),
    # GCQ1 a < d, e < g: t tuples with g below every e
    "gcq1-t": ("gcq1", lambda i: ("t", (-i, i, i, 0))),
    # GCQ1: s tuples with d below every a (they meet t, not r)
    "gcq1-s": ("gcq1", lambda i: ("s", (-i, 0, i, 0))),
    # GCQ3 a < d, d < g: s tuples with d above every g (they meet r, not t)
    "gcq3-s": ("gcq3", lambda i: ("s", (10_000 + i, 0, i, 0))),
    # GCQ4 s.k = t.k, e < g: same key, g below every e
    "gcq4-t": ("gcq4", lambda i: ("t", (-i, i, i, i % 2))),
}


@pytest.mark.parametrize("case", list(VISIT_CASES))
@pytest.mark.parametrize(
    # a group of up to _SortedGroup.SMALL (32) entries is a plain sorted list,
    # a larger one a SortedKeyList: each form against itself
    "few, many",
    [(10, 20), (100, 10_010)],
)
def test_enumeration_skips_tuples_failing_the_inequality(case, few, many):
    name, dangling = VISIT_CASES[case]
    rels = synthetic.GCQ_RELATIONS[name]
    core = {r: CORE[r] for r in rels}
    small = enum_visits(_build(name, core, dangling, few))
    large = enum_visits(_build(name, core, dangling, many))
    assert small[2] == large[2], "the dangling tuples changed the result"
    assert sum(small[2].values()) > 0
    assert large[0] == small[0], (
        f"{case}: enumerate() executed {small[0]} lines with {few} tuples failing "
        f"the inequality and {large[0]} with {many:,}"
    )
    assert large[1] == small[1], (
        f"{case}: rows() executed {small[1]} lines with {few} tuples failing "
        f"the inequality and {large[1]} with {many:,}"
    )


def test_enumeration_visits_grow_with_the_result():
    """Sanity check of the counter: more output, more lines."""
    core = {r: CORE[r] for r in ("r", "s")}
    view = _build("gcq2", core, lambda i: ("s", (-i, i, i, 0)), 10)
    before = enum_visits(view)
    view.update("s", [(1000 + i, 0, 0, 0) for i in range(20)])
    after = enum_visits(view)
    assert sum(after[2].values()) > sum(before[2].values())
    assert after[0] > before[0]


def test_synthetic_command(tmp_path, capsys):
    """`dynyan synthetic gcq|fraud` (dynyan.cli.synthetic, which nests under
    any subparsers with add_commands) writes valid streams."""
    import argparse

    from dynyan.cli import main
    from dynyan.cli import synthetic as synthetic_commands

    assert (
        main(
            [
                "synthetic",
                "gcq",
                "--query",
                "queries/gcq/gcq2.sql",
                "--events",
                "300",
                "--variant",
                "window",
                "--window",
                "50",
                "--chunk-events",
                "100",
                "--out",
                str(tmp_path / "g"),
                "--validate",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "550 events" in out and "ok:" in out
    assert (
        main(
            [
                "synthetic",
                "fraud",
                "--events",
                "200",
                "--out",
                str(tmp_path / "f"),
                "--validate",
            ]
        )
        == 0
    )
    assert "ok:" in capsys.readouterr().out
    # an unknown query is a one-line error, exit 2
    assert (
        main(["synthetic", "gcq", "--query", "gcq9", "--out", str(tmp_path / "x")]) == 2
    )
    assert "unknown GCQ query" in capsys.readouterr().err
    # add_commands nests under any subparsers (e.g. `dynyan stream synthetic`)
    parser = argparse.ArgumentParser()
    stream = parser.add_subparsers().add_parser("stream").add_subparsers()
    synthetic_commands.add_commands(stream)
    args = parser.parse_args(["stream", "synthetic", "fraud", "--events", "5"])
    assert args.func is synthetic_commands.cmd_synthetic_fraud and args.events == 5
