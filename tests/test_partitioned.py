"""Partitioned maintenance: the partition analysis and the replay of P views in Spark.

The reference for results is DuckDB running the query's SQL on the database
the stream leaves behind (``streams.materialize``); the reference for push
mode is one view fed the same batches (``seq // batch``), whose net change
per batch the merged change stream must equal. Streams are small, seeded and
written here with pyarrow from the query's own value domains
(tests/differential.py mixes the query's literals into the columns they are
compared with), so joins, filters, HAVING and NULLs all get exercised.

The default run covers every query once, with 2 or 4 partitions, on an
insert or a window stream; ``-m slow`` runs P = 1, 2, 4 on both streams.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
import zlib
from collections import Counter
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dynyan.cli import main as cli_main
from dynyan.compiler import compile_query, import_source, compile_sql
from dynyan.compiler import partition as part
from dynyan.compiler.source import read_query
from dynyan.errors import PipelineError
from dynyan.pipeline import partitioned, streams
from tests.differential import (
    _BASE_FLOATS,
    _BASE_STRINGS,
    QuerySpec,
    norm_bag,
    norm_row,
)

ROOT = Path(__file__).resolve().parent.parent
QUERIES = ROOT / "queries"
TPCH_SCHEMA = (ROOT / "tpch" / "schema.sql").read_text()


def ir(path: str):
    sql, schema = read_query(str(QUERIES / path), None)
    return compile_query(sql, schema).query


def ir_of(text: str):
    return compile_query(text).query


# --------------------------------------------------------------------------
# the analysis (no Spark)


def test_fq1_is_split_by_the_order_key_and_explain_says_so(capsys):
    scheme = part.choose_partitioning(ir("tpch/fq1.sql"))
    assert scheme.variable == "o_orderkey"
    assert dict(scheme.columns) == {"orders": "o_orderkey", "lineitem": "l_orderkey"}
    assert set(scheme.replicated) == {"part", "partsupp"}
    assert scheme.merge == part.UNION and scheme.carried
    assert 0.11 < scheme.replicated_share < 0.13
    assert scheme.speedup(1) == 1.0
    assert 1.7 < scheme.speedup(2) < 1.85 and scheme.speedup(64) < 1 / 0.11
    assert cli_main(["explain", str(QUERIES / "tpch/fq1.sql"), "--partitions"]) == 0
    out = capsys.readouterr().out
    assert "partition variable: o_orderkey (every result row carries it)" in out
    assert "orders by o_orderkey, lineitem by l_orderkey" in out
    assert "replicated to every partition: part, partsupp" in out


def test_weights_decide_between_variables():
    fq1 = ir("tpch/fq1.sql")
    # a stream where part and partsupp carry most events: the part key wins
    sizes = {"orders": 10, "lineitem": 40, "part": 100, "partsupp": 100}
    scheme = part.choose_partitioning(fq1, sizes, "test")
    assert scheme.variable == "l_partkey"
    assert set(scheme.columns) == {"lineitem", "part", "partsupp"}
    assert scheme.replicated == ("orders",)


def test_single_relation_and_unsplittable_queries_run_as_one_partition(capsys):
    q1 = part.choose_partitioning(ir("tpch/q1.sql"))
    assert not q1.split and "one relation (lineitem)" in q1.reason
    assert q1.speedup(8) == 1.0 and q1.replicated_share == 0.0
    q13 = part.choose_partitioning(ir("tpch/q13.sql"))  # counts computed by a subquery
    assert not q13.split and "c_count" in q13.reason
    assert cli_main(["explain", str(QUERIES / "tpch/q13.sql"), "--partitions"]) == 0
    assert "one partition: no variable can split it" in capsys.readouterr().out


def test_subqueries_are_split_along_or_kept_whole():
    q18 = part.choose_partitioning(ir("tpch/q18.sql"))  # IN (… GROUP BY l_orderkey)
    assert q18.variable == "o_orderkey" and q18.merge == part.UNION
    assert dict(q18.columns) == {"orders": "o_orderkey", "lineitem": "l_orderkey"}
    q4 = part.choose_partitioning(ir("tpch/q4.sql"))  # EXISTS keyed by the order
    assert q4.variable == "o_orderkey" and q4.merge == part.AGGREGATE
    q16 = part.choose_partitioning(ir("tpch/q16.sql"))  # NOT IN over supplier
    assert q16.variable == "ps_partkey" and q16.replicated == ("supplier",)
    by_supplier = next(c for c in q16.candidates if c.variable == "ps_suppkey")
    assert by_supplier.usable and "supplier" not in by_supplier.columns


def test_not_in_subqueries_stay_whole_and_self_joins_split_consistently():
    schema = "CREATE TABLE r (a INT, b INT); CREATE TABLE s (b INT, c INT);"
    not_in = ir_of(
        schema + "SELECT r.a, r.b FROM r, s WHERE r.b = s.b "
        "AND r.b NOT IN (SELECT b FROM s WHERE c > 3)"
    )
    # s is read by the NOT IN subquery too: it goes to every partition
    for c in part.choose_partitioning(not_in, {"r": 1, "s": 100}).candidates:
        assert "s" not in c.columns
    self_join = ir_of(
        schema + "SELECT r1.a, r2.b FROM r r1, r r2, s WHERE r1.b = r2.a AND r2.b = s.b"
    )
    # r1 and r2 bind the join variable at different columns of r: r stays whole
    scheme = part.choose_partitioning(self_join, {"r": 100, "s": 1})
    assert scheme.columns == {"s": "b"} and scheme.replicated == ("r",)
    assert all("r" not in c.columns for c in scheme.candidates)


def test_group_merge_kinds_and_the_partial_query():
    schema = (
        "CREATE TABLE r (a INT, b INT, x DECIMAL(15,2)); CREATE TABLE s (b INT, c INT);"
    )
    grouped = ir_of(
        schema + "SELECT c, SUM(x), AVG(x), MIN(a), COUNT(DISTINCT a) FROM r, s "
        "WHERE r.b = s.b GROUP BY c HAVING COUNT(*) > 1"
    )
    scheme = part.choose_partitioning(grouped, {"r": 10, "s": 10})
    assert scheme.variable == "b" and scheme.merge == part.AGGREGATE
    partial, layout = part.partial_query(grouped)
    assert partial.group_vars == ("c", "a") and partial.having is None
    assert layout.distinct_args == ("a",) and layout.channels == 1 + len(
        grouped.channels
    )
    assert layout.extremes == ()  # MIN(a) comes from a's values, grouped by a
    module = import_source(compile_sql_ir(partial))
    assert module.View.COLUMNS[:2] == ("g_c", "g_a")
    by_group = ir_of(
        schema + "SELECT r.b, SUM(x) FROM r, s WHERE r.b = s.b GROUP BY r.b"
    )
    assert part.choose_partitioning(by_group, {"r": 1, "s": 1}).merge == part.UNION
    distinct = ir_of(schema + "SELECT DISTINCT c FROM r, s WHERE r.b = s.b")
    assert part.choose_partitioning(distinct, {"r": 1, "s": 1}).merge == part.DISTINCT


def compile_sql_ir(query) -> str:
    from dynyan.compiler.planner import plan_query
    from dynyan.compiler.render import render_module

    return render_module(plan_query(query))


def test_a_query_feature_the_analysis_does_not_know_means_one_partition(monkeypatch):
    q = ir("tpch/q18.sql")
    monkeypatch.setattr(
        part, "_KNOWN_QUERY_FIELDS", part._KNOWN_QUERY_FIELDS - {"having"}
    )
    scheme = part.choose_partitioning(q)
    assert not scheme.split and "having" in scheme.reason


# --------------------------------------------------------------------------
# streams for the Spark tests


def spec_of(path: Path) -> tuple[QuerySpec, dict]:
    """The query as the differential harness sees it, and the NOT NULL
    columns of its relations."""
    sql, schema = read_query(str(path), None)
    body = "\n".join(ln for ln in sql.splitlines() if not ln.lstrip().startswith("--"))
    spec = QuerySpec.parse((schema or "") + "\n" + body, name=path.stem)
    notnull: dict[str, set] = {}

    def walk(q):
        for r in q.relations:
            notnull[r.name] = {c for i, c in enumerate(r.columns) if r.is_notnull(i)}
        for _, sub in q.subqueries:
            walk(sub)

    walk(compiled(path)[0])
    return spec, notnull


def compiled(path: Path):
    """(IR, module source) as the partitioned replay compiles them (cached)."""
    sql, schema = read_query(str(path), None)
    return partitioned._compile(sql, schema, str(path), None)


def random_events(spec, notnull, n, keys, seed, variant):
    """`n` inserts of random rows in random relation order: values from the
    query's domains (half the time one of the query's own literals, where a
    column is compared with some), integers also from range(keys), a few
    NULLs; the window variant deletes each insert n/2 inserts later."""
    rng = random.Random(seed)
    window = n // 2
    domains = {}
    for rel in spec.relations:
        for c in spec.tables[rel]:
            values = set(spec.domains[(rel, c.name)])
            plain = set(_BASE_STRINGS) | set(_BASE_FLOATS) | set(range(12))
            literals = sorted(v for v in values if v not in plain and c.kind != "date")
            if c.kind == "int":
                values |= set(range(keys))
            elif c.kind == "float":
                values |= {x * 2.5 for x in range(40)}
            domains[rel, c.name] = (sorted(values), literals)

    def value(rel, c):
        if c.name not in notnull.get(rel, ()) and rng.random() < 0.03:
            return None
        values, literals = domains[rel, c.name]
        return rng.choice(literals if literals and rng.random() < 0.5 else values)

    inserts = []
    for _ in range(n):
        rel = rng.choice(spec.relations)
        inserts.append((rel, tuple(value(rel, c) for c in spec.tables[rel])))
    events = []
    for j, (rel, row) in enumerate(inserts):
        events.append((rel, 1, row))
        if variant == "window" and j >= window:
            events.append((inserts[j - window][0], -1, inserts[j - window][1]))
    return events


def arrow_type(c):
    if c.kind == "int":
        return pa.int64()
    if c.kind == "float":
        return pa.decimal128(15, c.scale) if c.scale is not None else pa.float64()
    return pa.date32() if c.kind == "date" else pa.string()


def write_stream(directory: Path, spec, events, chunk_events=1_000_000) -> Path:
    """`events` (seq = position) in the stream layout of docs/streams.md."""
    infos = {}
    for rel in spec.relations:
        cols = spec.tables[rel]
        mine = [(s, op, row) for s, (r, op, row) in enumerate(events) if r == rel]
        types = [arrow_type(c) for c in cols]
        for chunk in sorted({s // chunk_events for s, _, _ in mine}):
            rows = [e for e in mine if e[0] // chunk_events == chunk]
            arrays = [
                pa.array([e[0] for e in rows], pa.int64()),
                pa.array([e[1] for e in rows], pa.int8()),
            ]
            for j, t in enumerate(types):
                values = [e[2][j] for e in rows]
                if pa.types.is_decimal(t):
                    values = [
                        None if v is None else Decimal(f"{v:.{t.scale}f}")
                        for v in values
                    ]
                arrays.append(pa.array(values, t))
            path = directory / rel / f"chunk={chunk:05d}" / "part-0.parquet"
            path.parent.mkdir(parents=True, exist_ok=True)
            names = ["seq", "op", *[c.name for c in cols]]
            pq.write_table(pa.table(arrays, names=names), path)
        inserts = sum(1 for e in mine if e[1] > 0)
        infos[rel] = {
            "columns": [c.name for c in cols],
            "types": [str(t) for t in types],
            "static": False,
            "rows": inserts,
            "inserts": inserts,
            "deletes": len(mine) - inserts,
        }
    manifest = {
        "format": streams.FORMAT,
        "version": streams.VERSION,
        "source": {"benchmark": "test"},
        "variant": "test",
        "params": {},
        "seed": 0,
        "static": [],
        "static_events": 0,
        "events": len(events),
        "chunk_events": chunk_events,
        "chunks": 1 + (len(events) - 1) // chunk_events,
        "relations": infos,
        "identity": {"test": str(directory)},
    }
    (directory / streams.MANIFEST).write_text(json.dumps(manifest))
    return directory


class Case:
    """One query with a stream, DuckDB's result and one view's changes per batch."""

    BATCH = 40

    def __init__(self, query: str, variant: str, directory: Path):
        self.path = QUERIES / query
        spec, notnull = spec_of(self.path)
        seed = zlib.crc32(query.encode())
        n, keys = CASES[query]
        self.events = random_events(spec, notnull, n, keys, seed, variant)
        self.stream = write_stream(directory, spec, self.events)
        con = streams.materialize(self.stream)
        self.expected = norm_bag(con.execute(self.path.read_text()).fetchall())
        con.close()
        self.module = import_source(compiled(self.path)[1])
        self.changes = single_view_changes(self.module, self.events, self.BATCH)


def single_view_changes(module, events, size) -> dict[int, Counter]:
    """The net change of one view's result per batch (seq // size), batch -1
    being what the view reports when it is created."""
    view = module.View(push=True)
    out = {-1: Counter(dict(view.deltas()))}
    for start in range(0, len(events), size):
        net = Counter()
        for rel, op, row in events[start : start + size]:
            view.update(rel, [row], [op])
            for r, c in view.deltas():
                net[r] += c
        out[start // size] = net
    return {b: Counter({r: c for r, c in net.items() if c}) for b, net in out.items()}


def normalise_changes(changes: dict[int, Counter]) -> dict[int, Counter]:
    out = {}
    for b, net in changes.items():
        norm = Counter()
        for row, c in net.items():
            norm[norm_row(row)] += c
        norm = Counter({r: c for r, c in norm.items() if c})
        if norm:
            out[b] = norm
    return out


def check(summary, case: Case) -> None:
    assert norm_bag(summary.result.rows()) == case.expected
    merged = {b: Counter(dict(ch)) for b, ch in summary.result.changes()}
    assert all(c != 0 for ch in merged.values() for c in ch.values())
    assert normalise_changes(merged) == normalise_changes(case.changes)
    assert summary.deltas == sum(len(ch) for ch in merged.values())


# query: (inserts, integer domain): results of a few hundred to a few
# thousand rows (Q18's HAVING needs several lineitems per order)
CASES = {
    "tpch/fq1.sql": (1000, 40),
    "tpch/fq2.sql": (1000, 150),
    "tpch/fq3.sql": (1000, 200),
    "tpch/fq4.sql": (1000, 200),
    "tpch/q3.sql": (1000, 50),
    "tpch/q18.sql": (1000, 40),
    "gcq/gcq2.sql": (300, 40),
    "tpcds/q7.sql": (1000, 40),
    "tpch/q4.sql": (1000, 50),
    "tpch/q16.sql": (1000, 50),
}


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    made = {}

    def get(query: str, variant: str) -> Case:
        if (query, variant) not in made:
            directory = tmp_path_factory.mktemp(Path(query).stem + "-" + variant)
            made[query, variant] = Case(query, variant, directory)
        return made[query, variant]

    return get


# (query, partitions, variant): each query once by default, 2 or 4
# partitions, insert or window stream, in turn
DEFAULT = [
    (q, (2, 4)[i % 2], ("insert", "window")[i // 2 % 2]) for i, q in enumerate(CASES)
]
FULL = [(q, p, v) for q in CASES for p in (1, 2, 4) for v in ("insert", "window")]


def _replay_case(spark, case: Case, partitions: int):
    return partitioned.replay_partitioned(
        case.path,
        case.stream,
        partitions,
        batch=Case.BATCH,
        push=True,
        spark=spark,
    )


@pytest.mark.spark
@pytest.mark.parametrize("query,partitions,variant", DEFAULT)
def test_partitions_match_duckdb_and_one_view(spark, cases, query, partitions, variant):
    case = cases(query, variant)
    summary = _replay_case(spark, case, partitions)
    try:
        assert summary.events == len(case.events)
        if summary.partitioning.split:
            assert len(summary.parts) == partitions
            assert summary.applied >= summary.events
        check(summary, case)
    finally:
        summary.result.close()
    assert not summary.result.work.exists()  # the temporary work directory is gone


# Every query × 1, 2 and 4 partitions × both streams: offline (-m long, about
# 4 minutes); CI runs DEFAULT, each query once with each split and stream in turn.
@pytest.mark.spark
@pytest.mark.long
@pytest.mark.parametrize("query,partitions,variant", FULL)
def test_partitions_match_duckdb_and_one_view_everywhere(
    spark, cases, query, partitions, variant
):
    case = cases(query, variant)
    summary = _replay_case(spark, case, partitions)
    try:
        check(summary, case)
    finally:
        summary.result.close()


@pytest.mark.spark
def test_one_partition_for_a_module_or_a_single_relation(spark, cases, tmp_path):
    case = cases("tpch/fq4.sql", "window")
    module_file = tmp_path / "fq4.py"
    sql, schema = read_query(str(case.path), None)
    module_file.write_text(compile_sql(sql, schema))
    summary = partitioned.replay_partitioned(
        module_file, case.stream, 3, batch=Case.BATCH, push=True, spark=spark
    )
    try:
        assert summary.used == 1 and len(summary.parts) == 1
        assert "compiled module" in summary.partitioning.reason
        assert "1 partition (" in str(summary)
        check(summary, case)
    finally:
        summary.result.close()


@pytest.mark.spark
def test_stopping_and_resuming_loses_and_duplicates_nothing(spark, cases, tmp_path):
    case = cases("tpch/q3.sql", "window")
    ckpt = tmp_path / "ckpt"
    first = partitioned.replay_partitioned(
        case.path,
        case.stream,
        2,
        batch=Case.BATCH,
        push=True,
        checkpoint=ckpt,
        every=200,
        limit=700,
        spark=spark,
    )
    assert first.events == 720  # up to the first batch boundary at or after 700
    con = streams.materialize(case.stream, upto_seq=719)
    assert norm_bag(first.result.rows()) == norm_bag(
        con.execute(case.path.read_text()).fetchall()
    )
    assert (
        json.loads((ckpt / partitioned.PARTITIONING_FILE).read_text())["done_seq"]
        == 719
    )
    rest = partitioned.replay_partitioned(
        case.path,
        case.stream,
        2,
        batch=Case.BATCH,
        push=True,
        checkpoint=ckpt,
        every=200,
        resume=True,
        spark=spark,
    )
    assert rest.resumed_after == 719 and rest.events == len(case.events) - 720
    assert all(p.resumed_after is not None for p in rest.parts if p.events_before)
    check(rest, case)  # the change stream covers the whole run, across the stop
    with pytest.raises(PipelineError, match="3 partitions|2 partitions"):
        partitioned.replay_partitioned(
            case.path,
            case.stream,
            3,
            batch=Case.BATCH,
            checkpoint=ckpt,
            resume=True,
            spark=spark,
        )


@pytest.fixture(scope="module")
def long_stream(tmp_path_factory):
    """GCQ4 (S ⋈ T on k, e < g) over 300,000 window events: long enough to
    kill a worker in the middle."""
    from dynyan.pipeline import synthetic

    out = tmp_path_factory.mktemp("gcq4") / "stream"
    synthetic.build_gcq_stream(
        out, "gcq4", events=300_000, variant="window", window=2000, key_domain=5000
    )
    return out


@pytest.mark.spark
def test_a_killed_worker_is_retried_from_its_partitions_checkpoint(
    spark, long_stream, tmp_path
):
    query = QUERIES / "gcq/gcq4.sql"
    ckpt = tmp_path / "ckpt"
    out: dict = {}

    def run():
        try:
            out["summary"] = partitioned.replay_partitioned(
                query,
                long_stream,
                2,
                batch=500,
                checkpoint=ckpt,
                every=20_000,
                push=True,
                spark=spark,
            )
        except BaseException as exc:  # reported below
            out["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    status = ckpt / "part-00000" / partitioned.STATUS_FILE
    killed = None
    deadline = time.monotonic() + 300
    while thread.is_alive() and time.monotonic() < deadline:
        try:
            info = json.loads(status.read_text())
        except (OSError, ValueError):
            info = {}
        if info.get("checkpointed_seq", -1) >= 40_000:
            os.kill(info["pid"], signal.SIGKILL)  # the Python worker of task 0
            killed = info
            break
        time.sleep(0.02)
    thread.join()
    assert "error" not in out, out.get("error")
    assert killed is not None, "the replay ended before a worker could be killed"
    summary = out["summary"]
    (p0,) = [p for p in summary.parts if p.part == 0]
    assert p0.attempt >= 1 and p0.resumed_after is not None
    assert p0.resumed_after >= killed["checkpointed_seq"]
    assert "ran on a retried task" in str(summary)
    reference = single_view_rows(query, long_stream)
    assert Counter(summary.result.rows()) == reference
    total = Counter()
    for _, changes in summary.result.changes():
        for row, c in changes:
            total[row] += c
    assert +total == reference


def single_view_rows(query: Path, stream: Path) -> Counter:
    from dynyan.pipeline import replay

    return Counter(replay.replay_query(query, stream, progress=False).view.rows())


@pytest.mark.spark
def test_cli_replays_with_partitions_and_refuses_them_without_spark(
    cases, tmp_path, capsys
):
    case = cases("tpch/q18.sql", "insert")
    rows = tmp_path / "rows.pkl"
    code = cli_main(
        [
            "replay",
            str(case.path),
            str(case.stream),
            "--engine",
            "spark",
            "--partitions",
            "2",
            "--batch",
            "40",
            "--show",
            "2",
            "--save-rows",
            str(rows),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert "2 partitions by o_orderkey" in out and "result:" in out
    import pickle

    assert norm_bag(pickle.loads(rows.read_bytes())) == case.expected
    code = cli_main(["replay", str(case.path), str(case.stream), "--partitions", "2"])
    assert code == 2
    assert "--partitions needs --engine spark" in capsys.readouterr().err
    # explain weighs the relations by the stream's events
    assert cli_main(["explain", str(case.path), "--stream", str(case.stream)]) == 0
    out = capsys.readouterr().out
    assert f"event weights: events of {case.stream}" in out
    assert "partition variable: o_orderkey" in out


@pytest.mark.spark
@pytest.mark.long  # minutes: offline (a killed worker's retry runs in CI)
def test_a_killed_replay_is_resumed_from_the_partitions_checkpoints(
    long_stream, tmp_path
):
    """SIGKILL of the whole replay (driver, JVM and workers), then --resume."""
    query = QUERIES / "gcq/gcq4.sql"
    ckpt = tmp_path / "ckpt"
    cmd = [
        sys.executable,
        "-m",
        "dynyan.cli",
        "replay",
        str(query),
        str(long_stream),
        "--engine",
        "spark",
        "--partitions",
        "2",
        "--batch",
        "500",
        "--checkpoint",
        str(ckpt),
        "--every",
        "20000",
        "--no-progress",
    ]
    proc = subprocess.Popen(
        cmd,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        status = ckpt / "part-00001" / partitioned.STATUS_FILE
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                if json.loads(status.read_text())["checkpointed_seq"] >= 40_000:
                    break
            except (OSError, ValueError, KeyError):
                pass
            time.sleep(0.05)
        assert proc.poll() is None, "the replay ended before it could be killed"
        os.killpg(proc.pid, signal.SIGKILL)  # its own session: driver, JVM, workers
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    resumed = subprocess.run(
        cmd + ["--resume", "--save-rows", str(tmp_path / "rows.pkl")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert "resumed from their checkpoints" in resumed.stdout
    import pickle

    rows = Counter(pickle.loads((tmp_path / "rows.pkl").read_bytes()))
    assert rows == single_view_rows(query, long_stream)
