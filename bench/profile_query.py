"""Where the time goes in one generated module: cProfile over a stream.

    .venv/bin/python bench/profile_query.py queries/gcq/gcq1.sql --events 4000
    .venv/bin/python bench/profile_query.py queries/tpch/fq1.sql \
        --stream data/streams/tpch-sf0.1-all-insert-s1 --events 300000
    .venv/bin/python bench/profile_query.py queries/tpch/spec/q11.sql \
        --stream data/streams/tpch-sf0.1-all-insert-s1 --trust-input --batch 10000

GCQ and fraud queries get their synthetic stream (dynyan.pipeline.synthetic), TPC-H
queries the events of their relations from a stream directory. The apply
(and, with --enumerate, the enumeration) runs under cProfile; the top
functions by own time are printed, the generated module's under `<view>`.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import harness as bench  # noqa: E402
from bench.batches import batched  # noqa: E402
from dynyan.pipeline import synthetic  # noqa: E402
from dynyan.compiler import load  # noqa: E402


def events_for(query: bench.BenchQuery, stream: str | None, n: int) -> list:
    """The first `n` events of the query's relations."""
    if query.benchmark == "gcq":
        return synthetic.gcq_events(Path(query.name).name, events=n)[:n]
    if query.benchmark == "fraud":
        return synthetic.fraud_events(n)[:n]
    if stream is None:
        raise SystemExit(f"{query.name}: give --stream DIR (a TPC-H stream)")
    return bench.decode_stream(stream, query.relations, n)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "query", help="a .sql file under queries/ (e.g. queries/gcq/gcq1.sql)"
    )
    p.add_argument("--stream", help="stream directory (TPC-H queries)")
    p.add_argument("--events", type=int, default=100_000)
    p.add_argument("--enumerate", action="store_true", help="profile enumerate() too")
    p.add_argument("--push", action="store_true", help="push mode (counting sink)")
    p.add_argument(
        "--trust-input", action="store_true", help="compile the module trusting"
    )
    p.add_argument(
        "--batch",
        type=int,
        help="feed update() per relation per N events, as the harness's "
        "dynyan-batch system does",
    )
    p.add_argument("--top", type=int, default=15)
    args = p.parse_args(argv)

    path = Path(args.query).resolve()
    root = ROOT / "queries"
    (query,) = bench.discover_queries(
        root, [path.relative_to(root).with_suffix("").as_posix()]
    )
    if query.status != "ok":
        raise SystemExit(f"{query.name}: {query.reason}")
    events = events_for(query, args.stream, args.events)
    module = load(query.sql, query.schema, trust_input=args.trust_input)
    sink = bench.CountingSink() if args.push else None
    view = module.View(on_delta=sink) if sink else module.View()
    ops = {1: view.insert, -1: view.delete}

    def apply():
        for rel, op, row in events:
            ops[op](rel, row)

    if args.batch:
        calls = batched(events, args.batch)

        def apply():  # noqa: F811 - the batched form replaces the per-event one
            update = view.update
            for rel, rows, mults in calls:
                update(rel, rows, mults)

    profiler = cProfile.Profile()
    t0 = time.perf_counter()
    profiler.runcall(apply)
    apply_s = time.perf_counter() - t0
    rows = 0
    if args.enumerate:
        t1 = time.perf_counter()
        rows = profiler.runcall(lambda: sum(1 for _ in view.enumerate()))
        print(f"enumerate: {rows:,} entries in {time.perf_counter() - t1:.2f} s")
    print(
        f"{query.name}: {len(events):,} events in {apply_s:.2f} s under cProfile "
        f"({len(events) / apply_s:,.0f} events/s)"
        + (f", {sink.calls:,} deltas" if sink else "")
    )
    stats = pstats.Stats(profiler)
    stats.sort_stats("tottime").print_stats(args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
