"""The tpcds suite of the benchmark harness, without Spark: a hand-made
Parquet stream of random rows of FQ5's TPC-DS relations stands in for the
stream `bench.tpcds_stream` builds. Checks that an event cap cuts the Arrow
batches before they are decoded to Python (and gives the same events as
cutting afterwards), and that `--suite tpcds` runs the TPC-DS queries only.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bench import cli as bench_cli
from bench import harness as bench
from dynyan.pipeline import streams

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def fq5():
    (q,) = bench.discover_queries(ROOT / "queries", ["fq5"])
    assert q.status == "ok", q.reason
    assert q.benchmark == "tpcds"
    return q


def write_stream(
    directory: Path, relations, events, chunk_events: int, static=()
) -> Path:
    """`events` ((rel, op, row), seq = position) in the documented layout,
    column types inferred by Arrow from the Python values; the `static`
    relations' events must come first."""
    infos = {}
    for rel, columns in relations.items():
        mine = [(seq, op, row) for seq, (r, op, row) in enumerate(events) if r == rel]
        for chunk in sorted({seq // chunk_events for seq, _, _ in mine}):
            part = [e for e in mine if e[0] // chunk_events == chunk]
            cols = {
                "seq": pa.array([e[0] for e in part], pa.int64()),
                "op": pa.array([e[1] for e in part], pa.int8()),
            }
            for i, c in enumerate(columns):
                cols[c] = pa.array([e[2][i] for e in part])
            path = directory / rel / f"chunk={chunk:05d}" / "part-0.parquet"
            path.parent.mkdir(parents=True, exist_ok=True)
            # small row groups and batches: the cut falls inside a batch
            pq.write_table(pa.table(cols), path, row_group_size=16)
        infos[rel] = {
            "columns": list(columns),
            "types": [],
            "static": rel in static,
            "rows": 0,
            "inserts": sum(1 for _, op, _ in mine if op > 0),
            "deletes": sum(1 for _, op, _ in mine if op < 0),
        }
    manifest = {
        "format": streams.FORMAT,
        "version": streams.VERSION,
        "source": {},
        "variant": "random-delete",
        "params": {},
        "seed": 0,
        "static": list(static),
        "static_events": sum(infos[r]["inserts"] for r in static),
        "events": len(events),
        "chunk_events": chunk_events,
        "chunks": 1 + (len(events) - 1) // chunk_events,
        "relations": infos,
        "identity": {"test": True},
    }
    (directory / streams.MANIFEST).write_text(json.dumps(manifest))
    return directory


@pytest.fixture(scope="module")
def tiny_stream(fq5, tmp_path_factory):
    """12 static date_dim rows first, then random store_sales and item
    events (with deletes)."""
    events = bench.random_events(fq5, 160, seed=3, domain=6)
    dates = list(dict.fromkeys(r for rel, _, r in events if rel == "date_dim"))
    events = [("date_dim", 1, r) for r in dates[:12]] + [
        e for e in events if e[0] != "date_dim"
    ]
    path = write_stream(
        tmp_path_factory.mktemp("tpcds-stream"),
        fq5.relations,
        events,
        50,
        static=("date_dim",),
    )
    return path, events


def test_cap_cuts_before_decoding(fq5, tiny_stream, monkeypatch):
    path, events = tiny_stream
    full = bench.decode_stream(path, fq5.relations)
    assert full == events  # the hand-made stream round-trips
    n = len(full)
    for cap in (0, 1, 37, 50, 51, 130, n - 1, n, n + 5):
        assert bench.decode_stream(path, fq5.relations, cap) == full[:cap], cap
    # a query reading fewer relations: the first events of its relations
    sub = {r: fq5.relations[r] for r in ("store_sales", "item")}
    mine = [e for e in full if e[0] in sub]
    for cap in (1, 29, len(mine) - 1, len(mine) + 1):
        assert bench.decode_stream(path, sub, cap) == mine[:cap], cap

    decoded = []
    to_python = streams.to_python

    def counting(batch, columns):
        decoded.append(batch.num_rows)
        return to_python(batch, columns)

    monkeypatch.setattr(streams, "to_python", counting)
    assert len(bench.decode_stream(path, fq5.relations, 37)) == 37
    assert sum(decoded) == 37  # nothing past the cut was converted
    decoded.clear()
    bench.decode_stream(path, fq5.relations)
    assert sum(decoded) == n


def test_tpcds_stream_options(monkeypatch):
    assert set(bench.TPCDS_STATIC) <= bench.TPCDS_TABLES
    assert "store_sales" not in bench.TPCDS_STATIC
    monkeypatch.setattr(bench, "tpcds_stream", lambda *a, **k: Path("/nowhere"))

    def labels(**kw):
        args = argparse.Namespace(
            tpcds_events=None,
            max_events=None,
            tpcds_sf=None,
            variants=("insert", "window"),
            seed=1,
            data_dir=None,
        )
        for key, value in kw.items():
            setattr(args, key, value)
        return [
            (info.label, info.max_events, info.benchmark)
            for info, _ in bench_cli._tpcds_streams(args, 10_000)
        ]

    assert labels() == [
        ("tpcds-sf1-insert-first300000", 300_000, "tpcds"),
        ("tpcds-sf1-window-w10000-first300000", 300_000, "tpcds"),
    ]
    assert labels(tpcds_events=0, variants=("insert",)) == [
        ("tpcds-sf1-insert", None, "tpcds")
    ]
    assert labels(max_events=500, tpcds_sf=[0.5], variants=("insert",)) == [
        ("tpcds-sf0.5-insert-first300000-max500", 300_000, "tpcds")
    ]


def test_static_rows_come_first_and_are_not_counted(fq5, tiny_stream):
    path, events = tiny_stream
    assert bench.static_events(path, fq5.relations) == 12
    assert bench.static_events(path, {"ITEM": fq5.relations["item"]}) == 0


def test_tpcds_suite_runs_tpcds_queries_only(tiny_stream, monkeypatch, tmp_path):
    path, _ = tiny_stream
    monkeypatch.setattr(bench, "tpcds_stream", lambda *a, **k: path)
    out = tmp_path / "result.json"
    rc = bench_cli.main(
        [
            "run",
            "--suite",
            "tpcds",
            "--queries",
            "fq5,fq1",
            "--variants",
            "insert",
            "--systems",
            "store,dynyan,ivm",
            "--modes",
            "pull",
            "--runs",
            "1",
            "--no-latency",
            "--no-tracemalloc",
            "--tpcds-events",
            "50",
            "--out",
            str(out),
        ]
    )
    assert rc == 0
    doc = json.loads(out.read_text())
    (stream,) = doc["streams"]
    assert stream["label"] == "tpcds-sf1-insert-first50"
    assert stream["benchmark"] == "tpcds" and stream["max_events"] == 50
    assert {r["query"] for r in doc["results"]} == {"tpcds/fq5"}
    # the 12 static date_dim rows, then 50 streamed events
    assert all(r["events"] == 62 for r in doc["results"])
    ivm = next(r for r in doc["results"] if r["system"] == "ivm")
    assert ivm["status"] == "ok" and ivm["check"] == "ok", ivm
    status = {q["name"]: q for q in doc["queries"]}
    assert status["tpch/fq1"]["status"] == "not run"
    assert "no tpch stream" in status["tpch/fq1"]["reason"]


SCHEMA = ROOT / "tpch" / "tpcds_schema.sql"
NULL_QUERIES = {
    # NULL in join, filter (also under NOT and OR) and residual-condition
    # columns, and as a group key
    "filters": "SELECT * FROM store_sales, item WHERE ss_item_sk = i_item_sk "
    "AND i_manager_id >= 1 AND NOT (i_brand = 'a') "
    "AND (ss_store_sk < 2 OR ss_promo_sk = 1)",
    "residual": "SELECT ss_item_sk, ca_zip, s_zip FROM store_sales, customer, "
    "customer_address, store WHERE ss_customer_sk = c_customer_sk "
    "AND c_current_addr_sk = ca_address_sk AND ss_store_sk = s_store_sk "
    "AND SUBSTR(ca_zip, 1, 5) <> SUBSTR(s_zip, 1, 5)",
    "grouped": "SELECT i_brand, COUNT(*) AS n FROM store_sales, item "
    "WHERE ss_item_sk = i_item_sk AND i_class <> 'a' GROUP BY i_brand",
}


def null_events(q, seed=1):
    """Random events of `q` with a fifth of the values NULL (TPC-DS rows
    have NULLs in most columns)."""
    import random

    rng = random.Random(seed)
    nulled = {}
    out = []
    for rel, op, row in bench.random_events(q, 300, seed=seed, domain=3):
        if (rel, row) not in nulled:
            nulled[rel, row] = tuple(None if rng.random() < 0.2 else v for v in row)
        out.append((rel, op, nulled[rel, row]))
    return out


@pytest.mark.skipif(
    importlib.util.find_spec("pathway") is None, reason="pathway is not installed"
)
@pytest.mark.parametrize("name", sorted(NULL_QUERIES))
def test_pathway_follows_sql_nulls(name):
    from bench.peers.common import assign_ids
    from bench.peers.ivm import FirstOrderIVM
    from bench.peers.pathway import PathwayEngine
    from dynyan.compiler.frontend import parse_query

    schema = SCHEMA.read_text()
    sql = NULL_QUERIES[name]
    events = null_events(bench.query_from_text(name, sql, schema))
    ir = parse_query(sql, schema, padded_leaves=False)
    ivm = FirstOrderIVM(ir)
    for rel, op, row in events:
        (ivm.insert if op > 0 else ivm.delete)(rel, row)
    engine = PathwayEngine(ir)
    engine.prepare(events, assign_ids(events), 50)
    engine.run_pull()
    got = list(engine.enumerate())
    assert sum(m for _, m in got) > 0
    assert bench.compare_bags(list(ivm.enumerate()), got) is None


@pytest.mark.skipif(
    importlib.util.find_spec("pathway") is None, reason="pathway is not installed"
)
def test_pathway_refuses_null_in_a_sum():
    from bench.peers.common import assign_ids
    from bench.peers.pathway import PathwayEngine
    from dynyan.compiler.frontend import parse_query

    schema = SCHEMA.read_text()
    sql = "SELECT i_brand, SUM(ss_quantity) AS s FROM store_sales, item WHERE ss_item_sk = i_item_sk GROUP BY i_brand"
    events = null_events(bench.query_from_text("sum", sql, schema))
    engine = PathwayEngine(parse_query(sql, schema, padded_leaves=False))
    engine.prepare(events, assign_ids(events), 50)
    with pytest.raises(NotImplementedError, match="ss_quantity"):
        engine.run_pull()
