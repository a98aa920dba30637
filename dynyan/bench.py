"""Benchmark harness: dynyan against baselines and real incremental engines.

`run_bench(...)` runs, for every query, stream and system, the *pull* mode
(apply the whole stream, then enumerate the result) and the *push* mode
(apply the stream, every result delta going into a counting sink). All
systems read the same stream, decoded into Python tuples once, before any
timing; each measurement runs in a fresh worker process
(``python -m dynyan.bench --worker SPEC``) so the process RSS belongs to the
one system measured and a runaway baseline can be stopped without losing
the rest. A worker does, in order:

1. timing runs (``runs``, median reported): only the system's own work is
   inside the clock (`apply_s`), then the enumeration of the result in pull
   mode (`enum_s`); the first run also gives the peak RSS above the
   process's baseline;
2. an untimed pass computing an order-independent digest of the result bag
   (pull) — the parent compares every peer's digest with dynyan's, and only
   a matching peer's time counts;
3. a latency run timing every update on its own (per event; engines that
   work in batches report per batch);
4. a tracemalloc run: peak Python memory of the system's data structures
   (engines that keep their data in native memory show their RSS instead);
   in push mode its sink sums the deltas, which must add up to dynyan's
   result bag.

Results go to a JSON file (`bench/results/<timestamp>.json`); `report(...)`
turns result files into Markdown tables and `charts(...)` into PNG charts.
"""

from __future__ import annotations

import datetime
import gc
import json
import os
import pickle
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .errors import DynyanError, PipelineError

SYSTEMS = ("store", "dynyan", "ivm", "recompute", "pathway", "pyflink", "pydbsp")
DEFAULT_SYSTEMS = (
    "store",
    "dynyan",
    "ivm",
    "recompute",
    "pathway",
    "pyflink",
    "pydbsp",
)
MODES = ("pull", "push")
VARIANTS = ("insert", "window")
RESULT_SCHEMA = 1
HASH_SEED = "0"  # PYTHONHASHSEED of every worker: hash(row) agrees across processes
_MOD = 1 << 64
# Pathway runs a stream in one native call that cannot be stopped at the
# budget, so longer streams are not given to it (--pathway-max-events).
PATHWAY_MAX_EVENTS = 300_000
NATIVE = ("recompute", "pathway")  # state in native memory: RSS, not tracemalloc

SYSTEM_TITLES = {
    "store": "store only (floor)",
    "dynyan": "dynyan",
    "ivm": "first-order IVM",
    "recompute": "DuckDB recompute",
    "pathway": "Pathway",
    "pyflink": "PyFlink",
    "pydbsp": "pydbsp",
}


class BenchError(DynyanError):
    """A benchmark cannot run as asked (no data, no stream, bad option)."""


# --- queries ------------------------------------------------------------------------

TPCH_TABLES = {
    "region",
    "nation",
    "supplier",
    "customer",
    "part",
    "partsupp",
    "orders",
    "lineitem",
}


TPCDS_TABLES = {
    "date_dim",
    "store_sales",
    "item",
    "customer_demographics",
    "promotion",
    "store",
    "customer",
    "customer_address",
    "inventory",
    "warehouse",
}
GCQ_TABLES = {"r", "s", "t"}
FRAUD_TABLES = {"transactions"}
BENCHMARKS = ("tpch", "gcq", "fraud", "tpcds")


def benchmark_of(relations) -> str | None:
    """Which stream family provides these relations."""
    rels = set(relations)
    if not rels:
        return None
    if rels <= TPCH_TABLES:
        return "tpch"
    if rels <= GCQ_TABLES:
        return "gcq"
    if rels <= FRAUD_TABLES:
        return "fraud"
    if rels <= TPCDS_TABLES:
        return "tpcds"
    return None


@dataclass
class BenchQuery:
    """One query file: its text, schema, and whether the harness can run it."""

    name: str
    path: str
    sql: str = ""
    schema: str | None = None
    relations: dict[str, tuple[str, ...]] = field(default_factory=dict)
    benchmark: str | None = None
    status: str = "ok"  # "ok" or "skipped"
    reason: str = ""
    grouped: bool = False


def discover_queries(
    root: str | Path = "queries", names: Iterable[str] | None = None
) -> list[BenchQuery]:
    """Every ``root/**/*.sql`` (but schema files), compiled; a query that does
    not compile or has no stream source is kept with status "skipped" and the
    reason."""
    from .baselines import base_relations
    from .cli import read_query
    from .compiler import compile_sql
    from .sql import parse_query

    root = Path(root)
    wanted = {n.lower() for n in names} if names else None
    found = []
    for path in sorted(root.rglob("*.sql")):
        if path.name == "schema.sql" or "schema" in path.stem:
            continue
        rel_name = path.relative_to(root).with_suffix("").as_posix()
        if (
            wanted is not None
            and path.stem.lower() not in wanted
            and rel_name.lower() not in wanted
        ):
            continue
        q = BenchQuery(rel_name, path.as_posix())
        found.append(q)
        try:
            q.sql, q.schema = read_query(str(path), None)
            compile_sql(q.sql, q.schema)
            ir = parse_query(q.sql, q.schema)
        except DynyanError as err:
            q.status, q.reason = "skipped", f"does not compile: {err}"
            continue
        except Exception as err:  # noqa: BLE001 - a compiler bug must not stop the run
            q.status, q.reason = "skipped", f"compiler failed: {err!r}"
            continue
        # the stored relations (a subquery's virtual relations are not)
        q.relations = {r.name: r.columns for r in base_relations(ir)}
        q.grouped = bool(getattr(ir, "grouped", False))
        q.benchmark = benchmark_of(q.relations)
        if q.benchmark is None:
            q.status = "skipped"
            q.reason = (
                "no benchmark stream provides "
                + ", ".join(sorted(q.relations))
                + " (tpch: TPC-H tables; gcq: r, s, t; fraud: transactions; "
                "tpcds: TPC-DS tables)"
            )
    if wanted is not None:
        missing = wanted - {q.name.lower() for q in found}
        missing -= {Path(q.name).name.lower() for q in found}
        if missing:
            raise BenchError(f"no query file named {', '.join(sorted(missing))}.sql")
    return found


def query_from_text(name: str, sql: str, schema: str | None) -> BenchQuery:
    """A `BenchQuery` for SQL given as text (tests, ad-hoc runs)."""
    from .baselines import base_relations
    from .sql import parse_query

    ir = parse_query(sql, schema)
    rels = {r.name: r.columns for r in base_relations(ir)}
    return BenchQuery(
        name,
        f"<{name}>",
        sql,
        schema,
        rels,
        benchmark_of(rels),
        grouped=bool(getattr(ir, "grouped", False)),
    )


# --- streams ------------------------------------------------------------------------


@dataclass
class StreamInfo:
    """What a decoded stream is; part of every result record."""

    label: str
    kind: str  # "parquet" | "random" | "synthetic"
    variant: str
    benchmark: str | None = None  # queries of this family only (None: all)
    sf: float | None = None
    window: int | None = None
    seed: int = 0
    path: str | None = None
    max_events: int | None = None
    # Tables whose sizes dynyan's planner gets (`dynyan.stats`); None: it
    # plans by the tree's shape alone, as `dynyan compile` does by default.
    stats_dir: str | None = None


def tpch_stream(
    sf: float,
    variant: str,
    window: int,
    seed: int = 1,
    data_dir: str | Path | None = None,
    log: Callable[[str], None] = lambda m: None,
) -> Path:
    """The TPC-H stream of all eight tables at `sf` (built with Spark if it is
    not there yet; helper functions of `dynyan.data` and `dynyan.streams`)."""
    from . import data, streams

    spec = (
        streams.StreamSpec("window", seed=seed, window=window)
        if variant == "window"
        else streams.StreamSpec("insert", seed=seed)
    )
    out = streams.default_stream_dir("tpch", sf, spec, name="all", data_dir=data_dir)
    try:
        streams.Stream(out)
        return out
    except PipelineError:
        pass
    log(f"generating TPC-H SF {sf:g} and building the {spec.label()} stream")
    source = data.generate("tpch", sf, data_dir=data_dir, quiet=True)
    streams.build_stream(source, out, None, spec, query="bench", log=log)
    return out


#: TPC-DS dimension tables that are inserted first and never deleted.
TPCDS_STATIC = ("date_dim", "item", "promotion", "store", "warehouse")
DEFAULT_TPCDS_EVENTS = 300_000


def tpcds_stream(
    sf: float,
    variant: str,
    window: int,
    seed: int = 1,
    data_dir: str | Path | None = None,
    log: Callable[[str], None] = lambda m: None,
) -> Path:
    """The TPC-DS stream of the tables the queries read (`TPCDS_TABLES`, all
    their columns) at `sf`, built with Spark if it is not there yet
    (``data/streams/tpcds-sf<sf>-bench-<variant>-s<seed>``).

    The small dimension tables (`TPCDS_STATIC`: date_dim, item, promotion,
    store, warehouse; 91,366 rows at SF 1) are static: inserted first, in a
    seeded random order, and never deleted, as nation and region in the
    TPC-H stream. In a star schema they are reference data, and a query
    reads only a prefix of the stream (`--tpcds-events`): in a random
    interleaving with store_sales (2.9 M rows) and inventory (11.7 M), a
    300,000-event prefix would hold 2-8 % of the items and (Q22) none of
    the 5 warehouses, so almost every fact row would dangle and Q22's
    result would be empty. The fact tables and the large dimension tables
    (customer_demographics 1.9 M rows, customer 100 k, customer_address
    50 k) are streamed in a random interleaving (and deleted again in the
    window variant). Made static, customer_demographics alone would fill
    Q7's whole prefix with inserts before its first sale.

    With the dimension rows first, a cap on a query's events counts its
    streamed events only (`bench_cli`: its static rows, then the first
    `--tpcds-events` streamed events): otherwise any cap below ~91,000
    would give no fact rows at all.
    """
    from . import data, streams

    kw = {"window": window} if variant == "window" else {}
    spec = streams.StreamSpec(variant, seed=seed, static=TPCDS_STATIC, **kw)
    out = streams.default_stream_dir("tpcds", sf, spec, name="bench", data_dir=data_dir)
    try:
        have = streams.Stream(out)
        if set(have.relations) >= TPCDS_TABLES:
            return out
    except PipelineError:
        pass
    log(f"generating TPC-DS SF {sf:g} and building the {spec.label()} stream")
    source = data.generate("tpcds", sf, data_dir=data_dir, quiet=True)
    relations = {t: None for t in sorted(TPCDS_TABLES)}
    # the ranking caches 16.8 M rows of a 179-column union at SF 1: Spark's
    # default 4 GB heap runs out (a running session keeps its own setting)
    log("starting Spark (local[2], 8 GB heap)")
    spark = streams.spark_session(driver_memory="8g")
    streams.build_stream(
        source, out, relations, spec, query="bench", force=True, spark=spark, log=log
    )
    return out


def decode_stream(
    path: str | Path,
    relations: dict[str, tuple[str, ...]],
    max_events: int | None = None,
) -> list[tuple[str, int, tuple]]:
    """The stream's events for `relations` (query name -> columns) as
    ``(relation, op, row)`` in seq order, rows converted per DESIGN.md §4.

    With `max_events`, only the first `max_events` of those events: the
    cut-off seq is found from the seq columns alone (`seq_cutoff`), and the
    Arrow batches are cut there before anything is converted to Python, so
    a prefix of a large relation (TPC-DS inventory, 11.7 M rows at SF 1)
    costs only the rows kept."""
    from .streams import Stream, to_python

    stream = Stream(path)
    selected = stream.select(relations)
    names = {have: want for want, have in zip(relations, selected)}
    if max_events is not None and max_events <= 0:
        return []
    cutoff = (
        seq_cutoff(stream, list(selected), max_events)
        if max_events is not None
        else None
    )
    merged: list[tuple[int, str, int, tuple]] = []
    for have, cols in selected.items():
        rel = sys.intern(names[have])
        for batch in stream.arrow_batches(have, cols):
            last = False
            if cutoff is not None:
                seq = batch.column(0)
                if seq[0].as_py() > cutoff:
                    break
                if seq[len(seq) - 1].as_py() > cutoff:
                    import pyarrow.compute as pc

                    keep = pc.sum(pc.less_equal(seq, cutoff)).as_py() or 0
                    batch, last = batch.slice(0, keep), True
            seqs, ops, rows = to_python(batch, cols)
            merged.extend(zip(seqs, [rel] * len(seqs), ops, rows))
            if last:
                break
    merged.sort(key=lambda e: e[0])
    if max_events is not None:
        merged = merged[:max_events]
    return [(rel, op, row) for _, rel, op, row in merged]


def static_events(path: str | Path, relations) -> int:
    """How many events of the stream's static relations among `relations`
    (query names, any case) there are: the stream inserts the static
    relations first, so these are the first events of `relations`."""
    from .streams import Stream

    stream = Stream(path)
    info = stream.manifest["relations"]
    static = set(stream.manifest.get("static", ()))
    return sum(info[r]["inserts"] for r in stream.select(relations) if r in static)


def seq_cutoff(stream, relations: list[str], n: int) -> int | None:
    """The seq of the `n`-th event (in seq order) of the stream relations
    `relations`, or None if they have at most `n` events. Reads only the
    seq column, and of each relation only its first `n` events (each
    relation's files are in seq order)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    info = stream.manifest["relations"]
    if sum(info[r]["inserts"] + info[r]["deletes"] for r in relations) <= n:
        return None
    parts = []
    for rel in relations:
        got = 0
        for _chunk, file in stream.files(rel):
            for batch in pq.ParquetFile(file).iter_batches(
                batch_size=65_536, columns=["seq"]
            ):
                col = batch.column(0).slice(0, n - got)
                parts.append(col.cast(pa.int64()))
                got += len(col)
                if got >= n:
                    break
            if got >= n:
                break
    seqs = pa.chunked_array(parts, pa.int64())
    if len(seqs) <= n:
        return None
    first = pc.select_k_unstable(seqs, k=n, sort_keys=[("seq", "ascending")])
    return pc.max(pc.take(seqs, first)).as_py()


def random_events(
    query: BenchQuery,
    inserts: int,
    seed: int = 0,
    delete_fraction: float = 0.3,
    domain: int = 8,
) -> list[tuple[str, int, tuple]]:
    """A small random stream for `query`'s relations: values from small
    domains so the joins match, and deletes of live rows (tests, smoke runs)."""
    from .sql import parse_query

    from .baselines import base_relations

    rng = random.Random(seed)
    ir = parse_query(query.sql, query.schema)
    day0 = datetime.date(1995, 1, 1)

    def value(t: str):
        if t == "int":
            return rng.randrange(domain)
        if t == "float":
            return rng.randrange(domain) / 4
        if t == "date":
            return day0 + datetime.timedelta(days=rng.randrange(domain))
        return rng.choice("abcdefgh"[: max(1, min(domain, 8))])

    live: list[tuple[str, tuple]] = []
    events = []
    rels = base_relations(ir)
    for _ in range(inserts):
        if live and rng.random() < delete_fraction:
            rel, row = live.pop(rng.randrange(len(live)))
            events.append((rel, -1, row))
        rel = rng.choice(rels)
        row = tuple(value(t) for t in rel.types)
        live.append((rel.name, row))
        events.append((rel.name, 1, row))
    return events


def stream_counts(events) -> dict:
    inserts = sum(1 for e in events if e[1] > 0)
    return {"events": len(events), "inserts": inserts, "deletes": len(events) - inserts}


# --- worker side: one system, one mode ---------------------------------------------


class CountingSink:
    """Push-mode sink of the timing runs: counts calls and the net change."""

    __slots__ = ("calls", "net")

    def __init__(self):
        self.calls = 0
        self.net = 0

    def __call__(self, row, change):
        self.calls += 1
        self.net += change


class DigestSink:
    """Push-mode sink of the check run: the bag digest of the summed deltas,
    and (for aggregate queries) the summed deltas themselves, so a result
    whose float aggregates differ in the last bits can still be compared."""

    __slots__ = ("calls", "net", "h", "bag")

    def __init__(self, keep: bool = False):
        self.calls = 0
        self.net = 0
        self.h = 0
        self.bag: dict | None = {} if keep else None

    def __call__(self, row, change):
        self.calls += 1
        self.net += change
        self.h += change * hash(row)
        bag = self.bag
        if bag is not None:
            n = bag.get(row, 0) + change
            if n:
                bag[row] = n
            else:
                del bag[row]
            if len(bag) > DUMP_LIMIT:
                self.bag = None

    def digest(self) -> dict:
        return {"rows": self.net, "hash": self.h % _MOD}


def _number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _split_floats(row) -> tuple[tuple, tuple]:
    """(the row with numbers blanked out, its numbers as floats): an integer
    aggregate may come back as 2 from one system and 2.0 from another."""
    exact = tuple("#" if _number(x) else x for x in row)
    return exact, tuple(float(x) for x in row if _number(x))


def compare_bags(expected, got, rel_tol: float = 1e-9, abs_tol: float = 1e-6):
    """None if two result bags, given as (row, multiplicity) pairs, agree up
    to floating-point rounding in their float columns (sums kept in floats
    by one system and exactly by another); else a short description of the
    first difference. Rows are matched on their non-float values; rows with
    the same non-float values are compared in sorted order."""
    import math

    def canon(pairs):
        out: dict[tuple, list] = {}
        for row, m in pairs:
            if not m:
                continue
            exact, floats = _split_floats(row)
            out.setdefault(exact, []).extend([floats] * m)
        for v in out.values():
            v.sort()
        return out

    a, b = canon(expected), canon(got)
    for key in a.keys() | b.keys():
        xs, ys = a.get(key, []), b.get(key, [])
        if len(xs) != len(ys):
            return f"row {key}: {len(xs)} expected, {len(ys)} found"
        for x, y in zip(xs, ys):
            if not all(
                math.isclose(p, q, rel_tol=rel_tol, abs_tol=abs_tol)
                or (p != p and q != q)
                for p, q in zip(x, y)
            ):
                return f"row {key}: values {x} expected, {y} found"
    return None


DUMP_LIMIT = 200_000  # result entries kept for the tolerant comparison


def bag_digest(pairs, keep: list | None = None, stop_at: float | None = None):
    """Order-independent digest of a bag given as (row, multiplicity) pairs:
    total multiplicity and Σ m·hash(row) mod 2^64 (PYTHONHASHSEED fixed).
    With `keep` (a list), the first DUMP_LIMIT pairs are appended to it
    (cleared if there are more); past `stop_at` (perf_counter) the digest
    is abandoned and None returned."""
    n = h = 0
    clock = time.perf_counter
    for i, (row, m) in enumerate(pairs):
        n += m
        h += m * hash(row)
        if keep is not None:
            if i < DUMP_LIMIT:
                keep.append((row, m))
            elif i == DUMP_LIMIT:
                keep.clear()
                keep = None
        if stop_at is not None and not i & 0xFFFF and i and clock() > stop_at:
            return None
    return {"rows": n, "hash": h % _MOD}


class _Budget(Exception):
    def __init__(self, status: str, done: int, seconds: float):
        super().__init__(status)
        self.status, self.done, self.seconds = status, done, seconds


def _rss() -> tuple[int, int]:
    """(VmRSS, VmHWM) of this process in bytes."""
    rss = hwm = 0
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) * 1024
            elif line.startswith("VmHWM:"):
                hwm = int(line.split()[1]) * 1024
    return rss, hwm


def _reset_peak_rss() -> bool:
    """Reset VmHWM to the current RSS (Linux >= 4.0); False if not allowed."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


class _Engine:
    """Adapter giving every system the same steps: build (untimed), apply
    (timed, in chunks so budgets can be checked), enumerate (timed)."""

    per_event = True  # latency per event; else per batch

    def __init__(self, spec: dict, query, events):
        self.spec = spec
        self.query = query
        self.events = events

    def build(self, sink) -> None:
        raise NotImplementedError

    def chunks(self) -> list[tuple[int, int]]:
        step = self.spec.get("chunk", 5000)
        n = len(self.events)
        return [(lo, min(lo + step, n)) for lo in range(0, n, step)]

    def apply(self, lo: int, hi: int) -> None:
        ins, dele = self.target.insert, self.target.delete
        for rel, op, row in self.events[lo:hi]:
            if op > 0:
                ins(rel, row)
            else:
                dele(rel, row)

    def latencies(self) -> list[int]:
        """Per-event nanoseconds of a fresh full apply (per-event engines)."""
        ins, dele = self.target.insert, self.target.delete
        clock = time.perf_counter_ns
        out = [0] * len(self.events)
        for i, (rel, op, row) in enumerate(self.events):
            t0 = clock()
            if op > 0:
                ins(rel, row)
            else:
                dele(rel, row)
            out[i] = clock() - t0
        return out

    def enumerate(self):
        return self.target.enumerate()

    def native_bytes(self) -> int | None:
        return None


class _Store(_Engine):
    def build(self, sink):
        from .baselines import StoreOnly

        self.target = StoreOnly(self.query.relations_names)

    def enumerate(self):
        return iter(())


class _Dynyan(_Engine):
    def build(self, sink):
        from .compiler import load

        module = getattr(self.query, "module", None)
        if module is None:  # compile once per worker, outside every measurement
            module = self.query.module = load(self.spec["sql"], self.spec["schema"])
        self.query_id = getattr(module.View, "QUERY_ID", None)
        self.target = module.View() if sink is None else module.View(on_delta=sink)


class _IVM(_Engine):
    def build(self, sink):
        from .baselines import FirstOrderIVM

        self.target = FirstOrderIVM(self.query.ir, on_delta=sink)


class _Recompute(_Engine):
    per_event = False

    def build(self, sink):
        from .baselines import DuckDBRecompute, assign_ids

        self.target = DuckDBRecompute(
            self.query.ir,
            on_delta=sink,
            threads=self.spec.get("duckdb_threads", 1),
            sql_text=self.spec["sql"],
        )
        if not hasattr(self.query, "ids"):
            self.query.ids = assign_ids(self.events)
        self.target.prepare(self.events, self.query.ids, self.spec["recompute_batch"])

    def chunks(self):
        b = self.spec["recompute_batch"]
        n = len(self.events)
        return [(lo, min(lo + b, n)) for lo in range(0, n, b)]

    def apply(self, lo, hi):
        self.target.apply_batch(lo // self.spec["recompute_batch"])

    def native_bytes(self):
        return self.target.memory_bytes()


class _Pathway(_Engine):
    per_event = False

    def build(self, sink):
        from .baselines import PathwayEngine, assign_ids

        if not hasattr(self.query, "ids"):
            self.query.ids = assign_ids(self.events)
        if not hasattr(self.query, "pw_engine"):
            engine = PathwayEngine(self.query.ir)
            engine.prepare(self.events, self.query.ids, self.spec["peer_batch"])
            self.query.pw_engine = engine
        self.target = self.query.pw_engine
        self.sink = sink

    def chunks(self):
        return [(0, len(self.events))]

    def apply(self, lo, hi):
        if self.sink is None:
            self.target.run_pull()
        else:
            self.target.run_push(self.sink)


class _DBSP(_Engine):
    """pydbsp (runs under the Python >= 3.12 of .venv-dbsp): one circuit step
    per batch of ``peer_batch`` events, so latency is per batch."""

    per_event = False

    def build(self, sink):
        from .dbsp_engine import DBSPEngine

        batch = self.spec["peer_batch"]
        if not hasattr(self.query, "dbsp_steps"):  # untimed, once per worker
            prepared = DBSPEngine(self.query.ir)
            prepared.prepare(self.events, batch)
            self.query.dbsp_steps = prepared.steps
        self.target = DBSPEngine(self.query.ir)
        self.target.steps = self.query.dbsp_steps
        self.target.build(push=sink is not None)
        self.sink = sink

    def chunks(self):
        b = self.spec["peer_batch"]
        n = len(self.events)
        return [(lo, min(lo + b, n)) for lo in range(0, max(n, 1), b)]

    def apply(self, lo, hi):
        t = lo // self.spec["peer_batch"]
        self.target.run(t, t + 1, self.sink)


_ENGINES = {
    "store": _Store,
    "dynyan": _Dynyan,
    "ivm": _IVM,
    "recompute": _Recompute,
    "pathway": _Pathway,
    "pydbsp": _DBSP,
}


def _percentiles(ns: list[int]) -> dict:
    if not ns:
        return {"n": 0}
    s = sorted(ns)

    def pct(p):
        return s[min(len(s) - 1, int(p / 100 * len(s)))] / 1000

    return {
        "n": len(s),
        "p50_us": pct(50),
        "p99_us": pct(99),
        "max_us": s[-1] / 1000,
        "mean_us": sum(s) / len(s) / 1000,
    }


def _worker(spec_path: str) -> int:
    """Entry point of a worker process: prints one JSON object per line."""
    spec = json.loads(Path(spec_path).read_text())

    def say(**record):
        print(json.dumps(record), flush=True)

    from .sql import parse_query

    gc.disable()  # millions of tuples: collections during the load only cost time
    with open(spec["events"], "rb") as f:
        events = pickle.load(f)
    gc.enable()
    ir = parse_query(spec["sql"], spec["schema"])

    class Q:  # the query as engines see it
        pass

    query = Q()
    query.ir = ir
    from .baselines import base_relations

    query.relations_names = [r.name for r in base_relations(ir)]
    system, mode = spec["system"], spec["mode"]
    if system == "dynyan":  # compile before anything is measured
        from .codegen import render_module
        from .compiler import compile_query, import_source
        from .stats import Stats

        stats = Stats.from_dict(spec["stats"]) if spec.get("stats") else None
        plan = compile_query(spec["sql"], spec["schema"], stats)
        query.module = import_source(render_module(plan))
        if stats is not None:
            say(
                phase="note",
                text="planned with table statistics: join tree rooted at "
                f"[{', '.join(plan.nodes[plan.root].vars)}]",
            )
    gc.collect()
    gc.freeze()  # the stream is the harness's data, not the system's
    # The memory budget counts the system's growth, not the decoded stream
    # (4 GB of Python tuples at SF 1); the parent's watchdog reads the base.
    rss_floor = _rss()[0]
    if spec.get("base_file"):
        Path(spec["base_file"]).write_text(str(rss_floor))

    engine_cls = _ENGINES[system]
    push = mode == "push"
    # The budget counts apply time only: building a system (DuckDB's Arrow
    # batches, Pathway's DataFrames) is untimed and must not eat into it.
    # dynyan and the store floor are what every peer is compared with, so they
    # get four times the peers' budget before they are cut short.
    budget = spec["budget_s"] * (4 if system in ("dynyan", "store") else 1)
    spent = 0.0  # apply seconds of the finished timing runs
    first_s = 0.0  # apply seconds of the first
    mem_budget = spec["mem_budget_mb"] * 2**20
    n = len(events)

    def fresh(sink):
        e = engine_cls(spec, query, events)
        e.build(sink)
        return e

    # Pathway runs the whole stream in one native call that the budget cannot
    # stop: on a longer stream it gets the first `cap` events and is reported
    # as stopped there, like a peer that used up its budget.
    cap = spec.get("pathway_max_events", PATHWAY_MAX_EVENTS)
    capped = system == "pathway" and bool(cap) and n > cap
    if capped:
        events, n = events[:cap], cap
    if system == "pathway":
        # Fixed cost of building and starting a dataflow: the same graph on an
        # empty stream (reported apart, not subtracted).
        from .baselines import PathwayEngine

        empty = PathwayEngine(ir)
        empty.prepare([], [], spec["peer_batch"])
        t0 = time.perf_counter()
        try:
            if push:
                empty.run_push(CountingSink())
            else:
                empty.run_pull()
        except NotImplementedError as err:
            say(phase="unavailable", reason=f"{mode} mode: {err}")
            return 0
        say(phase="startup", seconds=time.perf_counter() - t0)

    def dump(pairs) -> None:
        """The result bag, for the parent's tolerant comparison."""
        if spec.get("dump") and pairs is not None:
            with open(spec["dump"], "wb") as f:
                pickle.dump(list(pairs), f, protocol=pickle.HIGHEST_PROTOCOL)

    # 1. timing runs
    skip_enum = False
    for run in range(spec["runs"]):
        gc.collect()
        # The push check digest comes from the first timing run, for every
        # system alike (DuckDB and Pathway have no tracemalloc run, and a long
        # first run leaves no time for one).
        digest_now = push and run == 0
        sink = (
            (DigestSink(keep=True) if digest_now else CountingSink()) if push else None
        )
        try:
            engine = fresh(sink)
        except NotImplementedError as err:
            say(phase="unavailable", reason=f"{mode} mode: {err}")
            return 0
        rss0, _ = _rss()
        peak_ok = _reset_peak_rss()
        clock = time.perf_counter
        batch_ns = []
        elapsed = 0.0
        chunks = engine.chunks()
        try:
            for lo, hi in chunks:
                t0 = clock()
                try:
                    engine.apply(lo, hi)
                except NotImplementedError as err:
                    say(phase="unavailable", reason=f"{mode} mode: {err}")
                    return 0
                dt = clock() - t0
                elapsed += dt
                batch_ns.append(int(dt * 1e9))
                if run == 0 and elapsed > budget and hi < n:
                    raise _Budget("timeout", hi, elapsed)
                if _rss()[0] - rss_floor > mem_budget:
                    raise _Budget("memory", hi, elapsed)
        except _Budget as b:
            say(
                phase="budget",
                status=b.status,
                events_done=b.done,
                seconds=b.seconds,
                rss_mb=_rss()[0] / 2**20,
            )
            return 0
        if capped:
            say(
                phase="budget",
                status="timeout",
                events_done=cap,
                seconds=elapsed,
                rss_mb=_rss()[0] / 2**20,
                cap=cap,
            )
            return 0
        record = {"phase": "run", "run": run, "apply_s": elapsed}
        if push:
            record["deltas"] = sink.calls
            record["net"] = sink.net
            if digest_now:
                record["digest"] = sink.digest()
                dump(None if sink.bag is None else sink.bag.items())
        elif run == 0 or not skip_enum:
            t0 = clock()
            entries = tuples = 0
            # the enumeration has its own budget: stop (and say so) when the
            # apply budget is used up and at least 60 s went into enumerating
            stop_at = t0 + max(60.0, budget - spent - elapsed)
            for _row, m in engine.enumerate():
                entries += 1
                tuples += m
                if not entries & 0xFFFF and clock() > stop_at:
                    record["enum_partial"] = True
                    break
            record["enum_s"] = clock() - t0
            record["result_entries"] = entries
            record["result_rows"] = tuples
            # a long enumeration is timed once (the apply is still timed each run)
            skip_enum = record["enum_s"] > 20.0
        rss1, hwm = _rss()
        if run == 0:
            record["rss_base_mb"] = rss0 / 2**20
            record["rss_peak_mb"] = (hwm if peak_ok else max(hwm, rss1)) / 2**20
            record["rss_end_mb"] = rss1 / 2**20
            record["peak_reset"] = peak_ok
            native = engine.native_bytes()
            if native is not None:
                record["native_mb"] = native / 2**20
            if not engine.per_event and system != "pathway":
                record["latency"] = _percentiles(batch_ns) | {
                    "unit": "batch",
                    "batch": spec[
                        "peer_batch" if system == "pydbsp" else "recompute_batch"
                    ],
                }
            if system == "pathway" and push:
                ends = engine.target.time_ends
                gaps = [int((b - a) * 1e9) for a, b in zip(ends, ends[1:])]
                record["latency"] = _percentiles(gaps) | {
                    "unit": "batch",
                    "batch": spec["peer_batch"],
                }
            if not push and system != "store" and not record.get("enum_partial"):
                # 2. the check digest (untimed, over the whole result; given
                # up, like the enumeration, when the result is too large)
                keep: list = []
                record["digest"] = bag_digest(engine.enumerate(), keep, clock() + 60.0)
                if record["digest"] is None:
                    record["digest_partial"] = True
                elif keep or not record.get("result_entries"):
                    dump(keep)
        say(**record)
        del engine
        spent += elapsed
        first_s = first_s or elapsed
        if spent > budget:
            say(phase="note", text="budget used up after this run; fewer runs")
            break
        # the remaining timing runs and the untimed runs after them (latency,
        # tracemalloc) must fit in the budget too
        later = spec["runs"] - 1
        later += bool(spec.get("latency", True) and engine_cls.per_event and push)
        later += bool(spec.get("tracemalloc", True) and system not in NATIVE)
        if run == 0 and elapsed * (1 + later) > budget:
            say(phase="note", text=f"run took {elapsed:.1f} s; no further runs")
            break

    # the untimed runs repeat the apply (tracemalloc: a few times slower); after
    # a first run longer than the peers' budget they would dominate the run
    untimed = first_s <= spec["budget_s"]
    if not untimed:
        say(
            phase="note",
            text="no latency or tracemalloc run: the apply took "
            f"{first_s:.0f} s, over the {spec['budget_s']:.0f} s budget",
        )

    # 3. latency run (per-event engines, push mode: the time to report a change)
    if (
        untimed
        and spec.get("latency", True)
        and engine_cls.per_event
        and push
        and system != "store"
    ):
        gc.collect()
        engine = fresh(CountingSink() if push else None)
        ns = engine.latencies()
        say(phase="latency", latency=_percentiles(ns) | {"unit": "event", "batch": 1})
        del engine

    # 4. tracemalloc run (and the push check)
    # (it runs even past the budget: the timing run finished, so this one,
    # a few times slower under tracemalloc, does too)
    if untimed and spec.get("tracemalloc", True) and system not in NATIVE:
        import tracemalloc

        gc.collect()
        sink = DigestSink(keep=True) if push else None
        tracemalloc.start()
        engine = fresh(sink)
        for lo, hi in engine.chunks():
            engine.apply(lo, hi)
        current, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        record = {
            "phase": "memory",
            "traced_current_mb": current / 2**20,
            "traced_peak_mb": peak / 2**20,
        }
        if push:
            record["digest"] = sink.digest()
            record["deltas"] = sink.calls
            dump(None if sink.bag is None else sink.bag.items())
        say(**record)
    return 0


# --- parent side ------------------------------------------------------------------


def _watch(
    proc: subprocess.Popen, mem_budget: int, state: dict, base_file: Path
) -> None:
    """Kill the worker if its RSS grows by more than `mem_budget` bytes over
    the base it wrote to `base_file` once the stream was loaded (engines
    whose work happens in one native call cannot check it themselves)."""
    path = f"/proc/{proc.pid}/status"
    base = None
    while proc.poll() is None:
        if base is None and base_file.exists():
            try:
                base = int(base_file.read_text())
            except ValueError:
                pass  # being written
        try:
            with open(path) as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        rss = int(line.split()[1]) * 1024
                        state["max_rss"] = max(state.get("max_rss", 0), rss)
                        if base is not None and rss - base > mem_budget:
                            state["killed"] = "memory"
                            proc.kill()
                        break
        except OSError:
            return
        time.sleep(0.2)


def _run_worker(spec: dict, workdir: Path, python: str) -> list[dict]:
    spec_path = workdir / f"spec-{spec['system']}-{spec['mode']}.json"
    base_file = workdir / f"base-{spec['system']}-{spec['mode']}"
    base_file.unlink(missing_ok=True)
    spec_path.write_text(json.dumps(spec | {"base_file": str(base_file)}))
    env = dict(os.environ, PYTHONHASHSEED=HASH_SEED)
    env.setdefault("PATHWAY_MONITORING_SERVER", "")
    root = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    log_path = workdir / f"worker-{spec['system']}-{spec['mode']}.log"
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            [python, "-m", "dynyan.bench", "--worker", str(spec_path)],
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
            env=env,
            cwd=root,
        )
        state: dict = {}
        watcher = threading.Thread(
            target=_watch,
            args=(proc, (spec["mem_budget_mb"] + 512) * 2**20, state, base_file),
            daemon=True,
        )
        watcher.start()
        # hard limit: the budget plus the untimed runs' share and start-up; an
        # engine that works in one native call gets the budget and 2 minutes
        limit = spec["budget_s"] * 4 + 300
        if spec["system"] in NATIVE:  # no latency or tracemalloc runs
            limit = spec["budget_s"] * (2 if spec["mode"] == "push" else 1) + 120
        try:
            out, _ = proc.communicate(timeout=limit)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, _ = proc.communicate()
            state["killed"] = "timeout"
    records = []
    for line in out.splitlines():
        try:
            records.append(json.loads(line))
        except ValueError:
            continue
    if state.get("killed"):
        records.append(
            {
                "phase": "killed",
                "status": state["killed"],
                "rss_mb": state.get("max_rss", 0) / 2**20,
            }
        )
    elif proc.returncode != 0:
        tail = log_path.read_text().strip().splitlines()[-3:]
        records.append({"phase": "error", "reason": " | ".join(tail)[-500:]})
    return records


def _summarise(system: str, mode: str, records: list[dict], events: int) -> dict:
    """One result record from a worker's phase records."""
    r: dict = {"system": system, "mode": mode, "status": "ok"}
    runs = [x for x in records if x["phase"] == "run"]
    for x in records:
        ph = x["phase"]
        if ph == "unavailable":
            r["status"], r["reason"] = "unavailable", x["reason"]
        elif ph == "budget":
            r["status"] = x["status"]
            r["reason"] = (
                f"stopped after {x['events_done']:,} of {events:,} events "
                f"({x['seconds']:.1f} s, RSS {x['rss_mb']:.0f} MB)"
            )
            if "cap" in x:
                r["reason"] += (
                    " at --pathway-max-events: one native call runs the whole "
                    "stream and cannot be stopped at the budget"
                )
            r["events_done"] = x["events_done"]
            r["partial_events_per_s"] = x["events_done"] / max(x["seconds"], 1e-9)
        elif ph == "killed" and r["status"] == "ok":
            r["status"] = x["status"]
            r["reason"] = (
                f"killed by the harness ({x['status']} budget; RSS {x['rss_mb']:.0f} MB)"
            )
        elif ph == "error":
            r["status"], r["reason"] = "error", x["reason"]
        elif ph == "startup":
            r["startup_s"] = x["seconds"]
        elif ph == "latency":
            r["latency"] = x["latency"]
        elif ph == "memory":
            r["traced_peak_mb"] = x["traced_peak_mb"]
            r["traced_current_mb"] = x["traced_current_mb"]
            if "digest" in x:
                r["digest"] = x["digest"]
                r["deltas"] = x["deltas"]
        elif ph == "note":
            r.setdefault("notes", []).append(x["text"])
    if runs:
        r["runs_apply_s"] = [x["apply_s"] for x in runs]
        r["apply_s"] = statistics.median(r["runs_apply_s"])
        r["events_per_s"] = events / r["apply_s"] if r["apply_s"] > 0 else None
        first = runs[0]
        for k in ("rss_base_mb", "rss_peak_mb", "rss_end_mb", "native_mb", "latency"):
            if k in first:
                r[k] = first[k]
        if "rss_peak_mb" in first:
            r["rss_delta_mb"] = first["rss_peak_mb"] - first["rss_base_mb"]
        if "digest" in first:
            r["digest"] = first["digest"]
        if mode == "pull" and "enum_s" in first:
            r["runs_enum_s"] = [x["enum_s"] for x in runs if "enum_s" in x]
            r["enum_s"] = statistics.median(r["runs_enum_s"])
            r["result_rows"] = first["result_rows"]
            if first.get("enum_partial"):
                r["enum_partial"] = True
                r.setdefault("notes", []).append(
                    "enumeration stopped at the budget: result_rows is a lower bound"
                )
            r["result_entries"] = first["result_entries"]
            r["tuples_per_s"] = (
                first["result_entries"] / r["enum_s"] if r["enum_s"] > 0 else None
            )
        if mode == "push":
            r.setdefault("deltas", first.get("deltas"))
            r["net_change"] = first.get("net")
    elif r["status"] == "ok":
        r["status"] = "error"
        r["reason"] = "the worker reported no run"
    return r


def peer_availability(
    python: str = sys.executable,
    systems: Iterable[str] = (),
    log: Callable[[str], None] | None = None,
) -> dict[str, str | None]:
    """System -> None if it can run here, else why not. pydbsp runs under its
    own Python >= 3.12 (.venv-dbsp), which is made here when `systems` asks
    for pydbsp and it does not exist yet (dynyan.dbsp_engine)."""
    from .baselines import pathway_available
    from .dbsp_engine import dbsp_python

    out: dict[str, str | None] = {s: None for s in SYSTEMS}
    out["pathway"] = pathway_available()
    out["pyflink"] = PYFLINK_SKIP
    out["pydbsp"] = dbsp_python(create="pydbsp" in systems, log=log)[1]
    return out


# Measured on this machine (see BENCHMARKS.md, "PyFlink"): why there is no
# PyFlink adapter.
PYFLINK_SKIP = (
    "apache-flink 2.3.0 pins pyarrow 16.1, pandas 2.2 and numpy 2.1, so it cannot "
    "be installed next to this project's pyarrow 26 and pandas 3 (it is not in "
    "the 'peers' extra); in a separate venv it runs on Java 17, but a changelog "
    "source fed from Python (from_collection + from_changelog_stream) applied "
    "about 100 events/s after a 27-34 s start, and a debezium-json file source "
    "did not finish 300,000 events in 10 minutes, so no adapter was written"
)


@dataclass
class BenchConfig:
    """Everything that shapes a run (recorded in the result file)."""

    systems: tuple[str, ...] = DEFAULT_SYSTEMS
    modes: tuple[str, ...] = MODES
    runs: int = 3
    recompute_batch: int = 10_000
    peer_batch: int = 1_000
    pathway_max_events: int = PATHWAY_MAX_EVENTS
    budget_s: float = 180.0
    mem_budget_mb: int = 8_000
    chunk: int = 5_000
    duckdb_threads: int = 1
    latency: bool = True
    tracemalloc: bool = True
    python: str = sys.executable


def run_bench(
    queries: list[BenchQuery],
    streams: list[tuple[StreamInfo, Callable[[BenchQuery], list]]],
    config: BenchConfig = BenchConfig(),
    out: str | Path | None = None,
    log: Callable[[str], None] = lambda m: None,
    command: list[str] | None = None,
) -> dict:
    """Run every (stream, query, system, mode) and return the result document
    (also written to `out` as JSON when given).

    `streams` pairs a `StreamInfo` with a function giving the decoded events
    for a query (so a Parquet stream is decoded per query, for its relations).
    """
    unknown = set(config.systems) - set(SYSTEMS)
    if unknown:
        raise BenchError(
            f"unknown system(s) {', '.join(sorted(unknown))}; choose from {', '.join(SYSTEMS)}"
        )
    avail = peer_availability(config.python, config.systems, log)
    dbsp_python = None
    if "pydbsp" in config.systems and avail.get("pydbsp") is None:
        from .dbsp_engine import dbsp_python as find_dbsp

        dbsp_python = find_dbsp(create=False)[0]
    doc = {
        "schema": RESULT_SCHEMA,
        "started": _now(),
        "command": command,
        "git": _git_state(),
        "machine": machine_info(),
        "config": {k: v for k, v in asdict(config).items() if k != "python"},
        "streams": [asdict(s) for s, _ in streams],
        "queries": [
            {"name": q.name, "path": q.path, "status": q.status, "reason": q.reason}
            for q in queries
        ],
        "skipped_systems": {
            s: avail[s] for s in config.systems if avail.get(s) is not None
        },
        "results": [],
    }
    runnable = [q for q in queries if q.status == "ok"]
    with tempfile.TemporaryDirectory(prefix="dynyan-bench-") as tmp:
        workdir = Path(tmp)
        for info, make_events in streams:
            stats = None
            if info.stats_dir is not None:
                from .stats import collect

                stats = collect(info.stats_dir).to_dict()
            for q in runnable:
                if info.benchmark is not None and q.benchmark != info.benchmark:
                    continue
                t0 = time.perf_counter()
                events = make_events(q)
                counts = stream_counts(events)
                log(
                    f"[{info.label}] {q.name}: {counts['events']:,} events "
                    f"(+{counts['inserts']:,}/-{counts['deletes']:,}), decoded in "
                    f"{time.perf_counter() - t0:.1f} s"
                )
                events_path = workdir / "events.pickle"
                with open(events_path, "wb") as f:
                    pickle.dump(events, f, protocol=pickle.HIGHEST_PROTOCOL)
                del events
                reference = None
                ref_dump = workdir / "dump-dynyan-pull.pickle"
                for old in workdir.glob("dump-*.pickle"):
                    old.unlink()
                for system in config.systems:
                    for mode in config.modes:
                        base = {
                            "query": q.name,
                            "stream": info.label,
                            **counts,
                        }
                        if avail.get(system) is not None:
                            doc["results"].append(
                                base
                                | {
                                    "system": system,
                                    "mode": mode,
                                    "status": "skipped",
                                    "reason": avail[system],
                                }
                            )
                            continue
                        if system == "store" and mode == "push":
                            continue  # the floor has no result to push
                        spec = {
                            "system": system,
                            "mode": mode,
                            "sql": q.sql,
                            "schema": q.schema,
                            "events": str(events_path),
                            "runs": config.runs,
                            "recompute_batch": config.recompute_batch,
                            "peer_batch": config.peer_batch,
                            "pathway_max_events": config.pathway_max_events,
                            "budget_s": config.budget_s,
                            "mem_budget_mb": config.mem_budget_mb,
                            "chunk": config.chunk,
                            "duckdb_threads": config.duckdb_threads,
                            "latency": config.latency,
                            "tracemalloc": config.tracemalloc,
                            "dump": str(workdir / f"dump-{system}-{mode}.pickle"),
                            "stats": stats,
                        }
                        t1 = time.perf_counter()
                        python = config.python
                        if system == "pydbsp":  # needs Python >= 3.12
                            python = dbsp_python or python
                        records = _run_worker(spec, workdir, python)
                        r = base | _summarise(system, mode, records, counts["events"])
                        # the machine is shared: record how busy it was
                        r["loadavg_1m"] = round(os.getloadavg()[0], 2)
                        if system == "recompute":
                            r["batch"] = config.recompute_batch
                        if system in ("pathway", "pydbsp"):
                            r["batch"] = config.peer_batch
                        if system == "dynyan" and mode == "pull":
                            reference = r.get("digest")
                            r["check"] = "reference" if reference else "unchecked"
                        elif system != "store":
                            r["check"] = _check(
                                r, reference, ref_dump, Path(spec["dump"])
                            )
                            if r["check"] == "mismatch" and r["status"] == "ok":
                                r["status"] = "mismatch"
                        doc["results"].append(r)
                        log(f"  {_one_line(r)}  [{time.perf_counter() - t1:.0f} s]")
                        if out is not None:
                            _write_json(out, doc)
    families = {info.benchmark for info, _ in streams}
    for entry, q in zip(doc["queries"], queries):
        if q.status == "ok" and None not in families and q.benchmark not in families:
            entry["status"] = "not run"
            entry["reason"] = f"no {q.benchmark} stream in this run (--suite)"
    doc["finished"] = _now()
    if out is not None:
        _write_json(out, doc)
    return doc


def _check(
    r: dict,
    reference: dict | None,
    ref_dump: Path | None = None,
    dump: Path | None = None,
) -> str:
    """ "ok" if the peer's result bag equals dynyan's: the same digest, or,
    failing that, the same rows with float values equal up to rounding
    (`compare_bags`; aggregates summed in floats by one system and exactly
    by the other); "mismatch" (with `check_detail`) or "unchecked"."""
    digest = r.get("digest")
    if reference is None or digest is None:
        return "unchecked"
    if digest == reference:
        return "ok"
    if (
        ref_dump is not None
        and dump is not None
        and ref_dump.exists()
        and dump.exists()
    ):
        with open(ref_dump, "rb") as f:
            expected = pickle.load(f)
        with open(dump, "rb") as f:
            got = pickle.load(f)
        diff = compare_bags(expected, got)
        if diff is None:
            r["check_detail"] = "equal up to float rounding"
            return "ok"
        r["check_detail"] = diff[:300]
        return "mismatch"
    r["check_detail"] = (
        f"digest {digest} differs from dynyan's {reference} (result too large "
        "to compare row by row)"
    )
    return "mismatch"


def _one_line(r: dict) -> str:
    head = f"{r['system']:>9} {r['mode']:<4}"
    if r["status"] != "ok":
        return f"{head} {r['status']}: {r.get('reason', '')}"
    parts = [f"{r['events_per_s']:,.0f} ev/s" if r.get("events_per_s") else "-"]
    if "enum_s" in r:
        parts.append(f"enum {r['enum_s']:.2f} s ({r['result_rows']:,} rows)")
    if "deltas" in r and r["mode"] == "push":
        parts.append(f"{r['deltas']:,} deltas")
    if "rss_delta_mb" in r:
        parts.append(f"+{r['rss_delta_mb']:.0f} MB RSS")
    if "traced_peak_mb" in r:
        parts.append(f"{r['traced_peak_mb']:.0f} MB traced")
    if "check" in r:
        parts.append(f"check {r['check']}")
    return f"{head} " + ", ".join(parts)


def _write_json(path: str | Path, doc: dict) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1, default=str) + "\n")
    os.replace(tmp, path)


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def _git_state() -> dict:
    root = Path(__file__).resolve().parent.parent
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain"], cwd=root, capture_output=True, text=True
        ).stdout.strip()
        return {"commit": commit, "dirty": bool(dirty)}
    except OSError:
        return {}


def machine_info() -> dict:
    """CPU model and count, memory, OS and the versions that matter."""
    info: dict = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cores": os.cpu_count(),
    }
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        info["free"] = subprocess.run(
            ["free", "-m"], capture_output=True, text=True
        ).stdout.strip()
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                info["mem_total_gb"] = round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    import importlib.metadata as md

    versions = {}
    for pkg in ("duckdb", "pathway", "apache-flink", "pyarrow", "sortedcontainers"):
        try:
            versions[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            pass
    info["packages"] = versions
    return info


# --- reports ------------------------------------------------------------------------


def load_results(paths: Iterable[str | Path]) -> list[dict]:
    return [json.loads(Path(p).read_text()) for p in paths]


def _fmt(x, digits=0, suffix="") -> str:
    if x is None:
        return "–"
    if isinstance(x, float) and digits == 0:
        return f"{x:,.0f}{suffix}"
    return f"{x:,.{digits}f}{suffix}"


def _rows_by(doc_list: list[dict]):
    for doc in doc_list:
        for r in doc["results"]:
            yield doc, r


PEERS = ("ivm", "recompute", "pathway", "pydbsp")


def speed_ratios(docs: list[dict]) -> list[dict]:
    """Per (stream, query, mode, peer): how many times faster dynyan applied
    the stream than the peer (peer time ÷ dynyan time). A peer stopped at its
    budget counts with its rate before it was stopped (a lower bound:
    ``bound`` is True)."""
    out = []
    for stream, rows in _merged(docs).items():
        for mode in MODES:
            mrows = [r for r in rows if r["mode"] == mode]
            for qn in dict.fromkeys(r["query"] for r in mrows):
                for peer in PEERS:
                    r = _find(mrows, qn, peer)
                    if r is None:
                        continue
                    dyn = r.get("ref") or _find(mrows, qn, "dynyan")
                    if dyn is None or dyn.get("status") != "ok":
                        continue
                    rec = {"stream": stream, "query": qn, "mode": mode, "peer": peer}
                    if r["status"] == "ok" and r.get("apply_s"):
                        rec |= {"x": r["apply_s"] / dyn["apply_s"], "bound": False}
                    elif r["status"] == "timeout" and r.get("partial_events_per_s"):
                        # (a run stopped by the memory budget has no rate:
                        # it may have been stopped before its first batch)
                        rec |= {
                            "x": dyn["events_per_s"] / r["partial_events_per_s"],
                            "bound": True,
                            "status": r["status"],
                        }
                    else:
                        continue
                    out.append(rec)
    return out


def wins_losses(docs: list[dict], n: int = 3) -> str:
    """The n largest wins and losses of dynyan over a peer (update time)."""
    ratios = speed_ratios(docs)
    if not ratios:
        return ""

    def line(r):
        bound = (
            f" (at least: the peer was stopped by its {r['status']} budget)"
            if r["bound"]
            else ""
        )
        x = r["x"]
        how = f"{x:,.1f}× faster" if x >= 1 else f"{1 / x:,.1f}× slower"
        return (
            f"- {Path(r['query']).name.upper()} on {r['stream']}, {r['mode']} mode: "
            f"dynyan {how} than {SYSTEM_TITLES[r['peer']]}{bound}"
        )

    ranked = sorted(ratios, key=lambda r: r["x"])
    wins = [line(r) for r in ranked[::-1][:n]]
    losses = [line(r) for r in ranked[:n] if r["x"] < 1]
    text = [f"**Largest wins** (update time, dynyan vs a peer):", "", *wins, ""]
    text += [f"**Largest losses**:", "", *(losses or ["- none"]), ""]
    return "\n".join(text) + "\n"


def report(docs: list[dict]) -> str:
    """Markdown tables of the result documents (absolute values and ratios)."""
    skipped: dict[str, str] = {}
    ran = {r["query"] for d in docs for r in d["results"]}
    for d in docs:
        for q in d.get("queries", ()):
            if q["name"] in ran:
                continue
            if q["status"] != "ok":
                skipped.setdefault(q["name"], f"{q['status']}: {q['reason']}")
            elif q["name"].startswith("tpcds/"):
                # result files from before the tpcds suite
                skipped.setdefault(q["name"], "not run: no TPC-DS stream in this run")
    lines: list[str] = [
        "#### Summary",
        "",
        wins_losses(docs),
    ]
    if skipped:
        lines += ["**Queries not measured**:", ""]
        lines += [f"- {name}: {why}" for name, why in sorted(skipped.items())]
        lines.append("")
    lines += [
        summary(docs, "pull"),
        summary(docs, "push"),
        "#### Per stream",
        "",
    ]
    for doc in docs:
        cfg = doc["config"]
        for s in doc["streams"]:
            label = s["label"]
            rows = [r for r in doc["results"] if r["stream"] == label]
            if not rows:
                continue
            lines += [
                f"### {label}",
                "",
                f"Timing runs: {cfg['runs']} (median); DuckDB recompute every "
                f"{cfg['recompute_batch']:,} events; Pathway: "
                f"{cfg['peer_batch']:,} events per timestamp; budget "
                f"{cfg['budget_s']:g} s and {cfg['mem_budget_mb']:,} MB per system "
                "and mode.",
                "",
            ]
            floors = {
                r["query"]: r
                for r in rows
                if r["system"] == "store" and r.get("status") == "ok"
            }
            for mode in MODES:
                mrows = [r for r in rows if r["mode"] == mode]
                if not mrows:
                    continue
                lines += _table(mrows, mode, floors)
    return "\n".join(lines) + "\n"


def _rate(r: dict) -> tuple[float | None, bool]:
    """Events/s of a finished run, or of a run stopped at its time budget
    until it was stopped (then True: a partial figure)."""
    if r.get("status") == "ok":
        return r.get("events_per_s"), False
    if r.get("status") == "timeout":
        return r.get("partial_events_per_s"), True
    return None, False


def _stopped(r: dict) -> str:
    rate, partial = _rate(r)
    return f"{r['status']} (≈{rate:,.0f} before)" if partial and rate else r["status"]


def summary(docs: list[dict], mode: str = "pull") -> str:
    """Compact tables: events/s and memory per stream and query, one column
    per system, with dynyan's speed-up over each peer in parentheses (a peer
    measured in another run is compared with that run's dynyan; "≈" marks a
    ratio of rates until a budget stopped one of the two)."""
    peers = PEERS
    head = (
        "| stream | query | result rows | dynyan | "
        + " | ".join(SYSTEM_TITLES[p] for p in peers)
        + " | store floor |"
    )
    sep = "|" + "---|" * (head.count("|") - 1)
    speed = [
        f"**{mode} mode, events/s** (in parentheses: dynyan's speed ÷ the peer's)",
        "",
        head,
        sep,
    ]
    mem = [
        f"**{mode} mode, memory**: tracemalloc peak MB for the Python systems "
        "(dynyan's column), peak RSS growth MB for DuckDB and Pathway; in "
        "parentheses dynyan's figure of the same kind (traced, or RSS growth) "
        "as % of the peer's",
        "",
        head,
        sep,
    ]
    budgets: dict[str, set] = {}
    for doc in docs:
        for s in doc["streams"]:
            budgets.setdefault(s["label"], set()).add(doc["config"]["budget_s"])
    for stream, all_rows in _merged(docs).items():
        b = sorted(budgets.get(stream, ()))
        label = f"{stream} ({'–'.join(f'{x:g}' for x in b)} s budget)"
        rows = [r for r in all_rows if r["mode"] == mode]
        for qn in dict.fromkeys(r["query"] for r in rows):
            get = {r["system"]: r for r in rows if r["query"] == qn}
            dyn = get.get("dynyan")
            if dyn is None:
                continue
            pulls = [r for r in all_rows if r["mode"] == "pull"]
            pull_dyn = _find(pulls, qn, "dynyan") or {}
            nrows = ("≥" if pull_dyn.get("enum_partial") else "") + _fmt(
                pull_dyn.get("result_rows")
            )
            srow = [label, Path(qn).name, nrows]
            mrow = [label, Path(qn).name, nrows]
            dyn_ok = dyn.get("status") == "ok"
            srow.append(_fmt(dyn.get("events_per_s")) if dyn_ok else _stopped(dyn))
            dyn_mem = dyn.get("traced_peak_mb")
            if not dyn_ok:
                mrow.append(dyn["status"])
            elif dyn_mem is None and dyn.get("rss_delta_mb") is not None:
                mrow.append(_fmt(dyn["rss_delta_mb"], 1) + " RSS (no traced run)")
            else:
                mrow.append(_fmt(dyn_mem, 1))
            for p in peers:
                r = get.get(p)
                if r is None:
                    srow.append("–")
                    mrow.append("–")
                    continue
                ref = r.get("ref") or dyn
                mine, mine_partial = _rate(ref)
                theirs, their_partial = _rate(r)
                if r["status"] != "ok":
                    cell = _stopped(r)
                    if mine and theirs and their_partial:
                        cell += f" ({'≈' if mine_partial else '≥'}{mine / theirs:.1f}×)"
                    srow.append(cell)
                    mrow.append(
                        f"{r['status']} (RSS {r['reason'].split('RSS ')[-1].split(')')[0]})"
                        if "RSS" in r.get("reason", "")
                        else r["status"]
                    )
                    continue
                cell = _fmt(theirs)
                if mine and theirs:
                    cell += f" ({'≈' if mine_partial else ''}{mine / theirs:.1f}×)"
                srow.append(cell)
                native = p in NATIVE or r.get("traced_peak_mb") is None
                m = r.get("rss_delta_mb") if native else r.get("traced_peak_mb")
                cell = _fmt(m, 1) + (" RSS" if native else "")
                ref_ok = ref.get("status") == "ok"
                mine_mem = (
                    ref.get("rss_delta_mb") if native else ref.get("traced_peak_mb")
                )
                if ref_ok and m and mine_mem is not None:
                    cell += f" ({100 * mine_mem / m:.0f}%)"
                mrow.append(cell)
            floor = get.get("store") or _find(all_rows, qn, "store")
            if floor is not None and floor.get("status") == "ok":
                fcell = _fmt(floor.get("events_per_s"))
                if dyn_ok and dyn.get("apply_s"):
                    fcell += (
                        f" (dynyan {dyn['apply_s'] / floor['apply_s']:.1f}× slower)"
                    )
                srow.append(fcell)
                mrow.append(_fmt(floor.get("traced_peak_mb"), 1))
            else:
                srow.append("–")
                mrow.append("–")
            speed.append("| " + " | ".join(srow) + " |")
            mem.append("| " + " | ".join(mrow) + " |")
    return "\n".join(speed + [""] + mem) + "\n"


def _table(rows: list[dict], mode: str, floor_rows: dict) -> list[str]:
    head = (
        "| query | events | system | events/s | dynyan ÷ system time | "
        "× store floor | peak RSS Δ MB | traced MB | "
        + ("enum s | tuples/s | result rows |" if mode == "pull" else "deltas |")
        + " latency p50 / p99 µs | check |"
    )
    sep = "|" + "---|" * (head.count("|") - 1)
    out = [f"**{mode} mode**", "", head, sep]
    by_query: dict[str, list[dict]] = {}
    for r in rows:
        by_query.setdefault(r["query"], []).append(r)
    for qname, qrows in by_query.items():
        dyn = next(
            (r for r in qrows if r["system"] == "dynyan" and r["status"] == "ok"), None
        )
        floor = floor_rows.get(qname)
        for r in qrows:
            if r["status"] != "ok":
                why = r.get("reason", "")
                extra = ""
                if r["status"] == "timeout" and r.get("partial_events_per_s"):
                    extra = f" (≈{r['partial_events_per_s']:,.0f} ev/s before stopping)"
                cells = [
                    qname,
                    f"{r['events']:,}",
                    SYSTEM_TITLES.get(r["system"], r["system"]),
                    f"**{r['status']}**{extra}: {why}",
                ]
                out.append(
                    "| " + " | ".join(cells) + " |" + " |" * (head.count("|") - 5)
                )
                continue
            ratio = "–"
            if (
                dyn is not None
                and r["system"] not in ("dynyan", "store")
                and r.get("apply_s")
            ):
                ratio = f"{dyn['apply_s'] / r['apply_s'] * 100:.0f}%"
            floor_x = "–"
            if floor is not None and r.get("apply_s") and r["system"] != "store":
                floor_x = f"{r['apply_s'] / floor['apply_s']:.1f}×"
            lat = r.get("latency") or {}
            lat_s = "–"
            if lat.get("n"):
                unit = (
                    ""
                    if lat.get("unit") == "event"
                    else f" (per {lat['batch']:,}-event batch)"
                )
                lat_s = f"{lat['p50_us']:,.1f} / {lat['p99_us']:,.1f}{unit}"
            rss = _fmt(r.get("rss_delta_mb"))
            if r.get("native_mb") is not None:
                rss += f" (DuckDB {r['native_mb']:.0f})"
            traced = (
                _fmt(r.get("traced_peak_mb"))
                if r["system"] not in ("recompute", "pathway")
                else "native"
            )
            cells = [
                qname,
                f"{r['events']:,}",
                SYSTEM_TITLES.get(r["system"], r["system"]),
                _fmt(r.get("events_per_s")),
                ratio,
                floor_x,
                rss,
                traced,
            ]
            if mode == "pull" and r["system"] == "store":
                cells += ["–", "–", "–"]
            elif mode == "pull":
                cells += [
                    _fmt(r.get("enum_s"), 2),
                    _fmt(r.get("tuples_per_s")),
                    ("≥" if r.get("enum_partial") else "") + _fmt(r.get("result_rows")),
                ]
            else:
                cells += [_fmt(r.get("deltas"))]
            startup = r.get("startup_s")
            check = r.get("check", "–")
            if r.get("check_detail") and check != "ok":
                check += f" ({r['check_detail']})"
            if startup is not None:
                check += f"; startup {startup:.2f} s"
            cells += [lat_s, check]
            out.append("| " + " | ".join(cells) + " |")
    out.append("")
    return out


def _merged(docs: list[dict]) -> dict[str, list[dict]]:
    """Result rows by stream label over several documents; for each (stream,
    query) the rows of the document that measured the most systems on it
    (the later one on a tie), so every ratio compares numbers from one run.
    A peer measured only in another document (e.g. pydbsp, run later), or
    only "unavailable" in the chosen one, is added with that document's
    dynyan row as its reference (``ref``)."""
    unmeasured = ("skipped", "unavailable")
    chosen: dict[tuple[str, str], list[dict]] = {}
    every: list[tuple[tuple[str, str], list[dict]]] = []
    for doc in docs:
        by_key: dict[tuple[str, str], list[dict]] = {}
        for r in doc["results"]:
            by_key.setdefault((r["stream"], r["query"]), []).append(r)
        for key, rows in by_key.items():
            if any(r["system"] == "dynyan" for r in rows):
                every.append((key, rows))
                if len(rows) >= len(chosen.get(key, ())):
                    chosen[key] = rows
    for key, rows in every:
        have = {
            (r["system"], r["mode"])
            for r in chosen[key]
            if r["status"] not in unmeasured
        }
        for r in rows:
            sm = (r["system"], r["mode"])
            if (
                sm in have
                or r["system"] in ("dynyan", "store")
                or r["status"] in unmeasured
            ):
                continue
            ref = _find([x for x in rows if x["mode"] == r["mode"]], key[1], "dynyan")
            kept = [x for x in chosen[key] if (x["system"], x["mode"]) != sm]
            chosen[key] = kept + [dict(r, ref=ref)]
            have.add(sm)
    out: dict[str, list[dict]] = {}
    for (stream, _q), rows in chosen.items():
        out.setdefault(stream, []).extend(rows)
    return out


def _mem_pair(dyn: dict, peer: dict) -> tuple[float | None, float | None]:
    """Comparable memory figures: tracemalloc peaks for two Python systems,
    else peak RSS growth."""
    if (
        peer["system"] not in NATIVE
        and peer.get("traced_peak_mb")
        and dyn.get("traced_peak_mb")
    ):
        return dyn["traced_peak_mb"], peer["traced_peak_mb"]
    return dyn.get("rss_delta_mb"), peer.get("rss_delta_mb")


def charts(docs: list[dict], outdir: str | Path, prefix: str = "bench") -> list[Path]:
    """dynyan's time and memory as % of each peer, per query (DYN-paper style):
    one PNG per (stream, mode, metric). Below 100% dynyan uses less. A peer
    stopped at its time budget gets a hatched bar from its rate until then
    (an upper bound on dynyan's share); where dynyan was stopped too, a
    cross-hatched "≈" bar compares the two rates until the stops."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    written = []
    peers = PEERS
    for label, all_rows in _merged(docs).items():
        for mode in MODES:
            rows = [r for r in all_rows if r["mode"] == mode]
            queries = list(dict.fromkeys(r["query"] for r in rows))
            if not queries:
                continue
            for metric, title in (
                ("time", "update time"),
                ("memory", "memory"),
            ):
                fig, ax = plt.subplots(figsize=(max(7, 1.0 + 0.75 * len(queries)), 3.8))
                width = 0.8 / len(peers)
                any_bar = False
                shown: list = []  # legend entries: peers with a bar
                for i, peer in enumerate(peers):
                    xs, ys, notes, bounds = [], [], [], []
                    for qi, qn in enumerate(queries):
                        pr = _find(rows, qn, peer)
                        dyn = (pr or {}).get("ref") or _find(rows, qn, "dynyan")
                        x = qi + (i - (len(peers) - 1) / 2) * width
                        if dyn is None or pr is None or pr["status"] == "skipped":
                            continue
                        if dyn["status"] != "ok":
                            # dynyan stopped too: the ratio of the two rates
                            # until each was stopped ("≈", cross-hatched)
                            mine, partial = _rate(dyn)
                            theirs, _ = _rate(pr)
                            if metric == "time" and partial and mine and theirs:
                                xs.append(x)
                                ys.append(max(100 * theirs / mine, 0.01))
                                bounds.append("≈")
                            continue
                        if (
                            metric == "time"
                            and pr["status"] == "timeout"
                            and pr.get("partial_events_per_s")
                        ):
                            # stopped at its budget: its whole run would have
                            # taken at least as long as its rate until then says
                            xs.append(x)
                            ys.append(
                                max(
                                    100
                                    * pr["partial_events_per_s"]
                                    / dyn["events_per_s"],
                                    0.01,
                                )
                            )
                            bounds.append(True)
                            continue
                        if pr["status"] != "ok":
                            notes.append((x, pr["status"]))
                            continue
                        if metric == "time":
                            mine, theirs = dyn.get("apply_s"), pr.get("apply_s")
                        else:
                            mine, theirs = _mem_pair(dyn, pr)
                        if mine is not None and theirs:
                            xs.append(x)
                            ys.append(max(100 * mine / theirs, 0.01))
                            bounds.append(False)
                    bars = ax.bar(xs, ys, width, color=f"C{i}")
                    if xs:
                        shown.append(Patch(color=f"C{i}", label=SYSTEM_TITLES[peer]))
                    any_bar = any_bar or bool(xs)
                    for b, y, bound in zip(bars, ys, bounds):
                        if bound:  # hatched: the peer was stopped, dynyan ≤ y%
                            b.set_hatch("xx" if bound == "≈" else "//")
                            b.set_alpha(0.6)
                        ax.annotate(
                            {True: "≤", "≈": "≈"}.get(bound, "")
                            + (f"{y:.0f}%" if y >= 1 else f"{y:.1f}%"),
                            (b.get_x() + b.get_width() / 2, y),
                            ha="center",
                            va="bottom",
                            fontsize=7,
                        )
                    for x, st in notes:
                        ax.annotate(
                            f"{SYSTEM_TITLES[peer]}: {st}",
                            (x, 100),
                            ha="center",
                            va="center",
                            fontsize=6,
                            rotation=90,
                        )
                if not any_bar:
                    plt.close(fig)
                    continue
                ax.axhline(100, color="grey", lw=0.8, ls="--")
                ax.set_yscale("log")
                ax.set_xticks(
                    range(len(queries)), [Path(q).name.upper() for q in queries]
                )
                ax.set_ylabel(f"dynyan {metric}, % of peer")
                ax.set_title(
                    f"{label}, {mode}: dynyan {title} as % of each peer "
                    "(below 100%: dynyan better)",
                    fontsize=9,
                )
                ax.legend(handles=shown, fontsize=7)
                fig.tight_layout()
                path = outdir / f"{prefix}-{label}-{mode}-{metric}.png"
                fig.savefig(path, dpi=110)
                plt.close(fig)
                written.append(path)
    return written


def _find(rows, query, system):
    return next(
        (r for r in rows if r["query"] == query and r["system"] == system), None
    )


def update_markdown(path: str | Path, text: str, tag: str = "bench") -> None:
    """Replace the text between ``<!-- tag:begin -->`` and ``<!-- tag:end -->``."""
    path = Path(path)
    begin, end = f"<!-- {tag}:begin -->", f"<!-- {tag}:end -->"
    old = path.read_text() if path.exists() else f"{begin}\n{end}\n"
    if begin not in old or end not in old:
        old = old.rstrip("\n") + f"\n\n{begin}\n{end}\n"
    head, rest = old.split(begin, 1)
    _, tail = rest.split(end, 1)
    path.write_text(f"{head}{begin}\n{text.rstrip()}\n{end}{tail}")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        sys.exit(_worker(sys.argv[2]))
    from .bench_cli import main

    sys.exit(main())
