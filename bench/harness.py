"""Benchmark harness: dynyan against baselines and real incremental engines.

`run_bench(...)` runs, for every query, stream and system, the *pull* mode
(apply the whole stream, then enumerate the result) and the *push* mode
(apply the stream, every result delta going into a counting sink). All
systems read the same stream, decoded into Python tuples once, before any
timing; each measurement runs in a fresh worker process
(``python -m bench.harness --worker SPEC``) so the process RSS belongs to the
one system measured and a runaway baseline can be stopped without losing
the rest. A worker does, in order:

1. timing runs (``runs``, median reported): only the system's own work is
   inside the clock (`apply_s`), then the enumeration of the result in pull
   mode (`enum_s`); the first run also gives the peak RSS above the
   process's baseline;
2. an untimed pass computing an order-independent digest of the result bag
   (pull) — the parent compares every peer's digest with dynyan's, and only
   a matching peer's time counts; in push mode the first timing run's sink
   digests the summed deltas, and also the whole result every
   `check_every` events (between chunks, outside the clock; a multiple of
   every system's chunk and batch), so the peers are compared with dynyan
   along the stream (`trail`), not only at its end, where a window stream
   leaves most join results empty;
3. a latency run timing every update on its own (per event; engines that
   work in batches report per batch);
4. a tracemalloc run: peak Python memory of the system's data structures
   (engines that keep their data in native memory show their RSS instead);
   in push mode its sink sums the deltas, which must add up to dynyan's
   result bag.

Results go to a JSON file (`bench/results/<timestamp>.json`); `bench.report`
turns result files into Markdown tables and PNG charts.
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

from dynyan.errors import DynyanError, PipelineError
from dynyan.pipeline.gcpolicy import FREEZE_EVERY, GCPolicy

SYSTEMS = (
    "store",
    "dynyan",
    "dynyan-trust",
    "dynyan-batch",
    "ivm",
    "recompute",
    "pathway",
    "pyflink",
    "pydbsp",
)
DEFAULT_SYSTEMS = (
    "store",
    "dynyan",
    "dynyan-trust",
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
DYNYAN = ("dynyan", "dynyan-trust", "dynyan-batch")  # compiled modules

SYSTEM_TITLES = {
    "store": "store only (floor)",
    "dynyan": "dynyan",
    "dynyan-trust": "dynyan --trust-input",
    "dynyan-batch": "dynyan --trust-input, update() per batch",
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
    reason. `names` are paths under `root` without ``.sql`` (``tpch/spec/q2``)
    or bare names, which stand for ``<benchmark>/<name>`` (``q16`` is
    ``tpch/q16``, not ``tpch/spec/q16``)."""
    from .peers.common import base_relations
    from dynyan.compiler.source import read_query
    from dynyan.compiler import compile_sql
    from dynyan.compiler.frontend import parse_query

    root = Path(root)
    wanted = {n.lower() for n in names} if names else None
    found = []
    for path in sorted(root.rglob("*.sql")):
        if path.name == "schema.sql" or "schema" in path.stem:
            continue
        rel_name = path.relative_to(root).with_suffix("").as_posix()
        by_stem = rel_name.count("/") <= 1 and path.stem.lower()
        if (
            wanted is not None
            and by_stem not in wanted
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
    from .peers.common import base_relations
    from dynyan.compiler.frontend import parse_query

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
    from dynyan.pipeline import data, streams

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
    # the ranking caches 8.7 M rows of a 61-column union at SF 1: Spark's
    # default 4 GB heap ran out on 2026-11-25 (8 GB: 173 s)
    spark = streams.spark_session(driver_memory="8g") if sf >= 1 else None
    streams.build_stream(source, out, None, spec, query="bench", spark=spark, log=log)
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
    from dynyan.pipeline import data, streams

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
    ``(relation, op, row)`` in seq order, rows converted per docs/design.md §6.

    With `max_events`, only the first `max_events` of those events: the
    cut-off seq is found from the seq columns alone (`seq_cutoff`), and the
    Arrow batches are cut there before anything is converted to Python, so
    a prefix of a large relation (TPC-DS inventory, 11.7 M rows at SF 1)
    costs only the rows kept."""
    from dynyan.pipeline.streams import Stream, to_python

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
    from dynyan.pipeline.streams import Stream

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
    from dynyan.compiler.frontend import parse_query

    from .peers.common import base_relations

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
    whose float aggregates differ in the last bits can still be compared.

    `checkpoint()` (called by the worker every `check_every` events, between
    chunks, outside the clock) appends the digest of the current result to
    `trail`: [rows, hash] with floats rounded to 9 significant digits (when
    the bag is kept; else the exact hash), so the parent compares every
    system's result at the same points of the stream, not only at its end,
    where a window stream leaves most join results empty."""

    __slots__ = ("calls", "net", "h", "bag", "trail")

    def __init__(self, keep: bool = False):
        self.calls = 0
        self.net = 0
        self.h = 0
        self.bag: dict | None = {} if keep else None
        self.trail: list = []

    def checkpoint(self) -> None:
        if self.bag is None:
            self.trail.append([self.net, self.h % _MOD, "exact"])
            return
        h = 0
        for row, m in self.bag.items():
            h += m * hash(_rounded(row))
        self.trail.append([self.net, h % _MOD])

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


def _rounded(row) -> tuple:
    """A row with its floats rounded to 9 significant digits and NaN as a
    string (hash(nan) differs per object): equal up to float rounding,
    equal hashes (2.0 and 2 hash alike)."""
    return tuple(
        ("NaN" if x != x else float(f"{x:.9g}")) if isinstance(x, float) else x
        for x in row
    )


def compare_trails(expected: list, got: list, hashes: bool = True) -> str | None:
    """None if two push-mode trails (`DigestSink.trail`) agree at every
    checkpoint (row counts, and with `hashes` the digests); else which
    checkpoint differs first. Without `hashes` for a result whose floats
    differ from dynyan's in the last bits (sums in floats against exact
    ones), which rounding to 9 digits does not always even out."""
    if len(expected) != len(got):
        return f"{len(got)} checkpoints, dynyan has {len(expected)}"
    width = 2 if hashes else 1
    for i, (a, b) in enumerate(zip(expected, got)):
        if a[:width] != b[:width]:
            return f"result differs from dynyan's at checkpoint {i + 1} of {len(got)}"
    return None


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
        return self._spans(self.spec.get("chunk", 5000))

    def _spans(self, step: int) -> list[tuple[int, int]]:
        """The events cut into [lo, hi) spans of `step`."""
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
        from .peers.store import StoreOnly

        self.target = StoreOnly(self.query.relations_names)

    def enumerate(self):
        return iter(())


class _Dynyan(_Engine):
    def build(self, sink):
        from dynyan.compiler import load

        module = getattr(self.query, "module", None)
        if module is None:  # compile once per worker, outside every measurement
            module = self.query.module = load(self.spec["sql"], self.spec["schema"])
        self.query_id = getattr(module.View, "QUERY_ID", None)
        self.target = module.View() if sink is None else module.View(on_delta=sink)


class _DynyanBatch(_Dynyan):
    """dynyan trusting, fed the way DuckDB is: each `recompute_batch` events
    as one `update(relation, rows, mults)` call per relation, its rows in
    stream order, the relations in the order they first appear (DuckDB loads
    a batch per relation too; the state after the batch is the same in any
    order: a relation's inserts and deletes of one row are summed in its
    call). The calls are cut once per worker, untimed and before tracemalloc
    starts, as DuckDB's batches are built untimed. In push mode each call
    reports its net change: never less often than DuckDB's diff per batch
    (once per batch on a stream of one relation)."""

    per_event = False

    def build(self, sink):
        super().build(sink)
        if not hasattr(self.query, "batch_runs"):
            self.query.batch_runs = {}
            for lo, hi in self.chunks():
                calls = {}
                for rel, op, row in self.events[lo:hi]:
                    rows, mults = calls.setdefault(rel, ([], []))
                    rows.append(row)
                    mults.append(op)
                runs = [(rel, rows, mults) for rel, (rows, mults) in calls.items()]
                self.query.batch_runs[lo] = runs
        self.runs = self.query.batch_runs

    def chunks(self):
        return self._spans(self.spec["recompute_batch"])

    def apply(self, lo, hi):
        update = self.target.update
        for rel, rows, mults in self.runs[lo]:
            update(rel, rows, mults)


class _IVM(_Engine):
    def build(self, sink):
        from .peers.ivm import make_ivm

        self.target = make_ivm(self.query.ir, on_delta=sink)


class _Recompute(_Engine):
    per_event = False

    def build(self, sink):
        from .peers.common import assign_ids
        from .peers.recompute import DuckDBRecompute

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
        return self._spans(self.spec["recompute_batch"])

    def apply(self, lo, hi):
        self.target.apply_batch(lo // self.spec["recompute_batch"])

    def native_bytes(self):
        return self.target.memory_bytes()


class _Pathway(_Engine):
    per_event = False

    def build(self, sink):
        from .peers.common import assign_ids
        from .peers.pathway import PathwayEngine

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
        from .peers.dbsp import DBSPEngine

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
    "dynyan-trust": _Dynyan,  # compiled with trust_input (see _worker)
    "dynyan-batch": _DynyanBatch,  # the same, update() per batch
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


MILLION = 1_000_000


def rates_per_million(marks: list[tuple[int, float]]) -> list[float]:
    """Events/s of each million events of a run (and of the last part, if
    at least 100,000 events), from (events applied, seconds) at chunk ends:
    a flat list means no slowdown as the state grows."""
    rates, start = [], (0, 0.0)
    for done, seconds in marks:
        last = done == marks[-1][0]
        if done - start[0] >= MILLION or (last and done - start[0] >= MILLION // 10):
            if seconds > start[1]:
                rates.append((done - start[0]) / (seconds - start[1]))
            start = (done, seconds)
    return rates


def _worker(spec_path: str) -> int:
    """Entry point of a worker process: prints one JSON object per line."""
    spec = json.loads(Path(spec_path).read_text())

    def say(**record):
        print(json.dumps(record), flush=True)

    from dynyan.compiler.frontend import parse_query

    gc.disable()  # millions of tuples: collections during the load only cost time
    with open(spec["events"], "rb") as f:
        events = pickle.load(f)
    gc.enable()
    # the peers read LEFT JOINs as UNION ALLs: dynyan's NULL-padded leaves
    # (Atom.padded) are its own
    ir = parse_query(
        spec["sql"], spec["schema"], padded_leaves=False, native_windows=False
    )

    class Q:  # the query as engines see it
        pass

    query = Q()
    query.ir = ir
    from .peers.common import base_relations

    query.relations_names = [r.name for r in base_relations(ir)]
    system, mode = spec["system"], spec["mode"]
    if system in DYNYAN:  # compile before anything is measured
        from dynyan.compiler.render import render_module
        from dynyan.compiler import compile_query, import_source
        from dynyan.compiler.stats import Stats

        stats = Stats.from_dict(spec["stats"]) if spec.get("stats") else None
        plan = compile_query(spec["sql"], spec["schema"], stats)
        query.module = import_source(
            render_module(plan, trust_input=system != "dynyan")
        )
        if stats is not None:
            say(
                phase="note",
                text="planned with table statistics: join tree rooted at "
                f"[{', '.join(plan.nodes[plan.root].vars)}]",
            )
    if spec.get("huge_pages"):
        from dynyan.pipeline.hugepages import active

        say(
            phase="note",
            text=(
                "heap: glibc malloc on transparent huge pages"
                if active()
                else "heap: --huge-pages asked for, but this worker runs without"
            ),
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
    budget = spec["budget_s"] * (4 if system in DYNYAN + ("store",) else 1)
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
        from .peers.pathway import PathwayEngine

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

    # 1. timing runs, under one GC policy for every Python system
    collector = GCPolicy(spec.get("gc_freeze_every", FREEZE_EVERY))
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
        marks = []  # (events applied, apply seconds) after each chunk
        elapsed = 0.0
        chunks = engine.chunks()
        every = spec.get("check_every") or n
        collector.start()
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
                if digest_now and (hi % every == 0 or hi == n):
                    sink.checkpoint()  # outside the clock
                marks.append((hi, elapsed))
                collector.step(hi)
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
                rates_per_million=rates_per_million(marks),
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
        if run == 0 and n >= MILLION:
            record["rates_per_million"] = rates_per_million(marks)
        if push:
            record["deltas"] = sink.calls
            record["net"] = sink.net
            if digest_now:
                record["digest"] = sink.digest()
                record["trail"] = sink.trail
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
        collector.release()  # the engine's cycles (a View and its appliers)
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
    if spec.get("huge_pages"):
        from dynyan.pipeline.hugepages import environment

        env = environment(env)
    env.setdefault("PATHWAY_MONITORING_SERVER", "")
    root = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    log_path = workdir / f"worker-{spec['system']}-{spec['mode']}.log"
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            [python, "-m", "bench.harness", "--worker", str(spec_path)],
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
            if x.get("rates_per_million"):
                r["rates_per_million"] = x["rates_per_million"]
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
        for k in (
            "rss_base_mb",
            "rss_peak_mb",
            "rss_end_mb",
            "native_mb",
            "latency",
            "rates_per_million",
        ):
            if k in first:
                r[k] = first[k]
        if "rss_peak_mb" in first:
            r["rss_delta_mb"] = first["rss_peak_mb"] - first["rss_base_mb"]
        if "digest" in first:
            r["digest"] = first["digest"]
        if "trail" in first:
            r["trail"] = first["trail"]
            r["trail_nonempty"] = sum(1 for rows, *_ in first["trail"] if rows)
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
    for pydbsp and it does not exist yet (bench.peers.dbsp)."""
    from .peers.pathway import pathway_available
    from .peers.dbsp import dbsp_python

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
    # the GC policy of every Python system (dynyan.pipeline.gcpolicy): freeze
    # the surviving heap every N events of a timing run (0: CPython's default)
    gc_freeze_every: int = FREEZE_EVERY
    # the heap policy of every worker (dynyan.pipeline.hugepages): glibc
    # malloc on transparent huge pages
    huge_pages: bool = False
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
    if config.huge_pages:
        from dynyan.pipeline.hugepages import unsupported

        reason = unsupported()
        if reason is not None:
            raise BenchError(f"--huge-pages: {reason}")
    avail = peer_availability(config.python, config.systems, log)
    dbsp_python = None
    if "pydbsp" in config.systems and avail.get("pydbsp") is None:
        from .peers.dbsp import dbsp_python as find_dbsp

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
                from dynyan.pipeline.stats import collect

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
                trail = None  # dynyan's push-mode trail
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
                            "gc_freeze_every": config.gc_freeze_every,
                            "huge_pages": config.huge_pages,
                            "duckdb_threads": config.duckdb_threads,
                            "check_every": check_every(config),
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
                            if system == "dynyan":
                                trail = r.get("trail")
                            elif r.get("trail") and trail and r["check"] == "ok":
                                # the whole run, not only its end
                                rounded = (
                                    r.get("check_detail")
                                    == "equal up to float rounding"
                                )
                                diff = compare_trails(
                                    trail, r["trail"], hashes=not rounded
                                )
                                if diff is not None and not rounded:
                                    # an equal end, float values off in the
                                    # last bits on the way (a SUM/AVG in
                                    # doubles, e.g. TPC-H Q17 in DuckDB)
                                    if (
                                        compare_trails(trail, r["trail"], hashes=False)
                                        is None
                                    ):
                                        diff, rounded = None, True
                                if diff is None:
                                    r["trail_check"] = "ok"
                                    if rounded:
                                        r["trail_detail"] = "row counts only"
                                elif len(r["trail"]) != len(trail):
                                    r["trail_check"] = f"unchecked ({diff})"
                                else:
                                    r["check"], r["check_detail"] = "mismatch", diff
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


def check_every(config: BenchConfig) -> int:
    """Events between the push-mode checkpoints: a multiple of every
    system's chunk or batch, so each reaches every checkpoint between two
    of its own steps."""
    import math

    return math.lcm(config.chunk, config.recompute_batch, config.peer_batch)


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


def _per_million(r: dict) -> str:
    rates = r.get("rates_per_million")
    if not rates or len(rates) < 2:
        return ""
    return " (per million events: " + " ".join(f"{x / 1000:,.0f}k" for x in rates) + ")"


def _one_line(r: dict) -> str:
    head = f"{r['system']:>9} {r['mode']:<4}"
    if r["status"] != "ok":
        return f"{head} {r['status']}: {r.get('reason', '')}{_per_million(r)}"
    parts = [
        (f"{r['events_per_s']:,.0f} ev/s" if r.get("events_per_s") else "-")
        + _per_million(r)
    ]
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


if __name__ == "__main__":  # python -m bench.harness --worker SPEC (see _run_worker)
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        sys.exit(_worker(sys.argv[2]))
    sys.exit(
        "usage: python -m bench.harness --worker SPEC (run benchmarks with python -m bench)"
    )
