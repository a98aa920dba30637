#!/usr/bin/env python
"""Soak test: long random update streams with deletions through generated views.

For each module (default: the committed fq1, fq4, gcq1, q3 — a grouped
aggregate — and fraud from generated/) the script

1. streams ``--events`` random events (default 1,000,000 per module) in calls
   of 1 to 32 events (``insert``/``delete`` for one, ``update`` with ±1
   multiplicities otherwise; a batch may delete a row it inserted). Each
   relation keeps about ``window`` live rows: once full, inserts and deletes
   balance. Join keys drift (``base + randrange(keys)`` with ``base`` growing
   with the event count), so the streams keep meeting new key values: a view
   that kept empty groups or zero entries would grow without bound;
2. compares the view with DuckDB evaluating the same SELECT on the live
   database every ``--check-every`` events (default 50,000), at the end of
   the stream, and once more after step 3 (``rows()`` as a bag; in
   ``--push`` mode also the sum of all reported deltas);
3. deletes every live row, then checks that the result is empty, that every
   container of the view's state (``snapshot()``) is empty, and that the
   memory traced by ``tracemalloc`` is back at its starting level.

Memory: tracing runs during the whole stream. The starting level is taken
after a warm-up (a few thousand events, a DuckDB check, everything deleted
again). CPython dicts do not shrink when their keys are deleted, so both the
starting level and the end level are measured after compacting the view's
containers with ``view.restore(view.snapshot())`` (the end level before
compaction is reported too). A leak is reported when the end level exceeds
the start by more than ``--tolerance`` KiB (default 64: interpreter free
lists and DuckDB's Python objects, not proportional to the stream).

Usage::

    .venv/bin/python scripts/soak.py                      # 1M events per module
    .venv/bin/python scripts/soak.py --events 200000
    .venv/bin/python scripts/soak.py --quick              # CI size: 20k events, check every 5k
    .venv/bin/python scripts/soak.py --only gcq1,fraud --push

Exit code 0 when every check passed, 1 otherwise.
"""

from __future__ import annotations

import argparse
import gc
import random
import re
import sys
import time
import tracemalloc
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from dynyan.compiler.source import read_query  # noqa: E402
from dynyan.compiler import import_file  # noqa: E402
from differential import Database, DuckMirror, QuerySpec, norm_bag  # noqa: E402


@dataclass
class Soak:
    """One module under soak and the shape of its stream."""

    name: str  # generated/<name>.py and queries/<name>.sql
    window: int  # live rows per relation
    keys: int  # width of the drifting key range
    drift: int = 20  # the key range moves up by one every `drift` events
    sliding: str = r"key$"  # int columns (regex on the name) with drifting values
    fixed: dict[str, range] = field(default_factory=dict)  # column -> value range


MODULES = [
    Soak("tpch/fq1", window=300, keys=40, drift=60),
    Soak("tpch/fq4", window=300, keys=150),
    Soak("gcq/gcq1", window=40, keys=60, sliding=r"."),
    Soak("tpch/q3", window=300, keys=100, drift=40),
    Soak("fraud", window=200, keys=400, sliding=r"^ts$", fixed={"acc": range(25)}),
]


def strip_comments(sql: str) -> str:
    sql = re.sub(r"/\*.*?\*/", "", sql, flags=re.DOTALL)
    return "\n".join(l for l in sql.splitlines() if not l.lstrip().startswith("--"))


class Stream:
    """Random events for the relations of one view, with a live multiset per
    relation kept as a list (deletes pick a uniformly random live row)."""

    def __init__(self, spec: QuerySpec, relations, soak: Soak, seed: int):
        self.rng = random.Random(f"soak/{soak.name}/{seed}")
        self.soak = soak
        self.relations = list(relations)
        self.live: dict[str, list[tuple]] = {r: [] for r in self.relations}
        self.events = 0
        self.gens = {}
        for rel in self.relations:
            gens = []
            for col in spec.tables[rel]:
                if col.name in soak.fixed:
                    gens.append(("fixed", list(soak.fixed[col.name])))
                elif col.kind == "int" and re.search(soak.sliding, col.name):
                    gens.append(("slide", None))
                else:
                    gens.append(("fixed", list(spec.domains[(rel, col.name)])))
            self.gens[rel] = gens

    def row(self, rel: str) -> tuple:
        rng = self.rng
        base = self.events // self.soak.drift
        return tuple(
            (
                base + rng.randrange(self.soak.keys)
                if kind == "slide"
                else rng.choice(pool)
            )
            for kind, pool in self.gens[rel]
        )

    def step(self):
        """(relation, rows, mults) of the next call; updates the live rows."""
        rng = self.rng
        rel = rng.choice(self.relations)
        live = self.live[rel]
        n = rng.choice((1, 1, 1, 2, 8, 32))
        rows, mults = [], []
        w = self.soak.window
        for _ in range(n):
            p_insert = (
                0.75 if len(live) < 0.9 * w else (0.25 if len(live) > 1.1 * w else 0.5)
            )
            if not live or rng.random() < p_insert:
                row = self.row(rel)
                live.append(row)
                rows.append(row)
                mults.append(1)
            else:
                i = rng.randrange(len(live))
                live[i], live[-1] = live[-1], live[i]
                rows.append(live.pop())
                mults.append(-1)
            self.events += 1
        return rel, rows, mults

    def database(self) -> Database:
        db = Database(self.relations)
        for rel, rows in self.live.items():
            db.rels[rel] = Counter(rows)
        return db


def apply(view, rel, rows, mults):
    if len(rows) == 1:
        (view.insert if mults[0] > 0 else view.delete)(rel, rows[0])
    else:
        view.update(rel, rows, mults)


def state_entries(x) -> int:
    """Entries held by (part of) a snapshot's state, recursively: dict items,
    list items, and the contents of helper objects (sorted indexes, range sums)."""
    if isinstance(x, dict):
        return len(x) + sum(state_entries(v) for v in x.values())
    if isinstance(x, list):
        return len(x) + sum(state_entries(v) for v in x)
    if isinstance(x, tuple):
        return sum(state_entries(v) for v in x)
    if isinstance(x, (int, float, str, bytes, type(None))) or not hasattr(
        x, "__class__"
    ):
        return 0
    getstate = getattr(type(x), "__getstate__", None)
    if getstate is not None and getstate is not object.__getstate__:
        return state_entries(x.__getstate__())
    slots = getattr(type(x), "__slots__", ())
    if slots:
        return sum(state_entries(getattr(x, s)) for s in slots)
    return len(x) if hasattr(x, "__len__") else 0


def nonempty_containers(state: dict) -> dict[str, int]:
    """Top-level containers of a snapshot's state that hold anything (a
    sub-view's snapshot is searched in turn); numbers count when non-zero."""
    out = {}
    for name, value in state.items():
        if name.startswith("sub:") and isinstance(value, dict) and "state" in value:
            out.update(
                {
                    f"{name}/{k}": n
                    for k, n in nonempty_containers(value["state"]).items()
                }
            )
        elif isinstance(value, (int, float)):
            if value:
                out[name] = 1
        elif hasattr(value, "__len__") and len(value):
            out[name] = len(value)
    return out


# Allocations of the DuckDB check (the harness keeps a few Python objects per
# registered Arrow table) and of tracemalloc itself are not the view's.
HARNESS = [
    tracemalloc.Filter(False, "*/differential.py"),
    tracemalloc.Filter(False, "*/duckdb/*"),
    tracemalloc.Filter(False, "*/pyarrow/*"),
    tracemalloc.Filter(False, tracemalloc.__file__),
]


def traced() -> tuple[int, tracemalloc.Snapshot]:
    """Traced memory outside the DuckDB harness, after a full collection."""
    gc.collect()
    snap = tracemalloc.take_snapshot().filter_traces(HARNESS)
    return sum(stat.size for stat in snap.statistics("filename")), snap


def kib(n: int) -> str:
    return f"{n / 1024:,.1f} KiB"


@dataclass
class Report:
    name: str
    events: int = 0
    calls: int = 0
    checks: int = 0
    failures: list[str] = field(default_factory=list)
    seconds: float = 0.0
    max_result: int = 0
    max_entries: int = 0
    mem_start: int = 0
    mem_peak: int = 0
    mem_end_raw: int = 0
    mem_end: int = 0
    leftovers: dict = field(default_factory=dict)
    growth: list = field(
        default_factory=list
    )  # largest allocation growth, start -> end


def soak_one(
    soak: Soak,
    events: int,
    check_every: int,
    seed: int,
    push: bool,
    tolerance: int,
    log,
):
    gen_paths = sorted((ROOT / "generated").glob(f"{soak.name}.py"))
    if not gen_paths:
        raise SystemExit(f"generated/{soak.name}.py not found (run scripts/regen.sh)")
    module = import_file(str(gen_paths[0]))
    sql, schema = read_query(str(ROOT / "queries" / f"{soak.name}.sql"), None)
    spec = QuerySpec.parse((schema or "") + "\n" + strip_comments(sql), name=soak.name)
    relations = list(module.View.RELATIONS)
    mirror = DuckMirror(spec)
    report = Report(soak.name)
    reported = Counter()

    def on_delta(row, change):
        # the running sum of all pushed changes, without zero entries (a result
        # row that comes and goes must not stay behind in the harness)
        n = reported[row] + change
        if n:
            reported[row] = n
        else:
            del reported[row]

    view = module.View(on_delta=on_delta) if push else module.View()
    stream = Stream(spec, relations, soak, seed)

    def check(label):
        mirror.load(stream.database())
        expected = norm_bag(mirror.query())
        got = norm_bag(view.rows())
        report.checks += 1
        report.max_result = max(report.max_result, sum(got.values()))
        if got != expected:
            diff_missing = expected - got
            diff_extra = got - expected
            report.failures.append(
                f"{label}: view != DuckDB; missing {sum(diff_missing.values())} "
                f"(e.g. {list(diff_missing)[:2]}), extra {sum(diff_extra.values())} "
                f"(e.g. {list(diff_extra)[:2]})"
            )
        if push and norm_bag(reported.elements()) != got:
            report.failures.append(f"{label}: the sum of pushed deltas != rows()")

    def empty_all():
        for rel in relations:
            rows = stream.live[rel]
            counts = Counter(rows)
            distinct = list(counts)
            for i in range(0, len(distinct), 500):
                chunk = distinct[i : i + 500]
                view.update(rel, chunk, [-counts[r] for r in chunk])
                report.calls += 1
            stream.live[rel] = []

    tracemalloc.start()
    # warm-up: every code path once, then back to empty
    while stream.events < min(5000, events // 4 or 1):
        apply(view, *stream.step())
    check("warm-up")
    empty_all()
    view.update(relations[0], [])  # drops the last call's deltas (push mode)
    view.restore(view.snapshot())
    reported.clear()
    report.checks = 0
    traced()  # fills the filters' pattern caches
    report.mem_start, start_snapshot = traced()
    tracemalloc.reset_peak()
    stream.events = 0

    t0 = time.perf_counter()
    next_check = check_every
    last_log = t0
    while stream.events < events:
        apply(view, *stream.step())
        report.calls += 1
        if stream.events >= next_check:
            check(f"after {stream.events:,} events")
            entries = state_entries(view.snapshot()["state"])
            report.max_entries = max(report.max_entries, entries)
            next_check += check_every
        now = time.perf_counter()
        if now - last_log > 10:
            last_log = now
            rate = stream.events / (now - t0)
            log(f"  {soak.name}: {stream.events:,}/{events:,} events ({rate:,.0f}/s)")
    check(f"end of stream ({stream.events:,} events)")
    report.events = stream.events
    empty_all()
    report.seconds = time.perf_counter() - t0
    check("after deleting every live row")
    if any(True for _ in view.rows()):
        report.failures.append("the result is not empty after deleting every row")
    report.leftovers = nonempty_containers(view.snapshot()["state"])
    if report.leftovers:
        report.failures.append(
            f"state not empty after deleting every row: {report.leftovers}"
        )
    report.mem_peak = tracemalloc.get_traced_memory()[1]
    # push mode keeps the last call's changes for deltas(); an empty call
    # replaces them with []
    view.update(relations[0], [])
    report.mem_end_raw, _ = traced()
    view.restore(view.snapshot())
    reported.clear()
    report.mem_end, end_snapshot = traced()
    report.growth = [
        str(st) for st in end_snapshot.compare_to(start_snapshot, "lineno")[:5]
    ]
    if report.mem_end - report.mem_start > tolerance * 1024:
        top = report.growth
        report.failures.append(
            f"memory did not return: start {kib(report.mem_start)}, end {kib(report.mem_end)}; "
            "largest growth: " + "; ".join(str(s) for s in top)
        )
    tracemalloc.stop()
    mirror.close()
    return report


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--events", type=int, default=1_000_000, help="events per module"
    )
    parser.add_argument(
        "--check-every", type=int, default=50_000, help="DuckDB check period"
    )
    parser.add_argument(
        "--quick", action="store_true", help="CI size: 20k events, check every 5k"
    )
    parser.add_argument("--only", help="comma-separated module names (e.g. fq1,gcq1)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--push", action="store_true", help="push mode: also check summed deltas"
    )
    parser.add_argument(
        "--tolerance", type=int, default=64, help="allowed memory growth, KiB"
    )
    parser.add_argument(
        "--show-growth",
        action="store_true",
        help="print the allocation sites whose memory grew most from start to end",
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.events, args.check_every = 20_000, 5_000
    modules = MODULES
    if args.only:
        wanted = set(args.only.split(","))
        modules = [
            m for m in MODULES if m.name.split("/")[-1] in wanted or m.name in wanted
        ]

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    reports = []
    for soak in modules:
        log(f"{soak.name}: {args.events:,} events, check every {args.check_every:,}")
        reports.append(
            soak_one(
                soak,
                args.events,
                args.check_every,
                args.seed,
                args.push,
                args.tolerance,
                log,
            )
        )
        r = reports[-1]
        log(
            f"  {soak.name}: {'ok' if not r.failures else 'FAILED'} in {r.seconds:.1f}s"
        )

    mode = "push" if args.push else "pull"
    print(f"\nsoak ({mode} mode, seed {args.seed}, tracemalloc on):")
    header = (
        f"{'module':10} {'events':>10} {'calls':>9} {'checks':>6} {'ev/s':>8} "
        f"{'max result':>10} {'max state':>9} {'mem start':>12} {'mem peak':>12} "
        f"{'end (raw)':>12} {'end':>12}  status"
    )
    print(header)
    for r in reports:
        print(
            f"{r.name.split('/')[-1]:10} {r.events:>10,} {r.calls:>9,} {r.checks:>6} "
            f"{r.events / max(r.seconds, 1e-9):>8,.0f} {r.max_result:>10,} {r.max_entries:>9,} "
            f"{kib(r.mem_start):>12} {kib(r.mem_peak):>12} {kib(r.mem_end_raw):>12} "
            f"{kib(r.mem_end):>12}  {'ok' if not r.failures else 'FAILED'}"
        )
    total = sum(r.events for r in reports)
    checks = sum(r.checks for r in reports)
    print(f"total: {len(reports)} queries, {total:,} events, {checks} DuckDB checks")
    if args.show_growth:
        for r in reports:
            print(f"{r.name}: largest growth from start to end (tracemalloc):")
            for line in r.growth:
                print("   ", line)
    failed = [f"{r.name}: {f}" for r in reports for f in r.failures]
    for f in failed:
        print("FAIL", f)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
