"""Systems alternated in one process: ratios that a noisy machine moves less.

    .venv/bin/python bench/interleaved.py tpch/q13 --runs 7
    .venv/bin/python bench/interleaved.py tpch/q16 --modes push --systems dynyan-trust,ivm

`bench run` times each system in a worker of its own, one after the other,
so a load spike on a shared machine lands on one system and not the next;
on streams of a few hundred thousand events (a second per run) the ratios
of two runs of the same code then differ by 1.5x. Here every timing run
builds the system afresh (the harness's engine classes, its GC policy) and
applies the whole stream, the systems taking turns (the order reversed every
other round), and the median of each system's runs is reported with its
ratio to the first system's (dynyan trusting unless --systems says otherwise). No memory or latency measurements: `bench run`.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))

from bench import harness  # noqa: E402
from dynyan.pipeline.gcpolicy import FREEZE_EVERY, GCPolicy  # noqa: E402

SYSTEMS = ("dynyan-trust", "dynyan", "ivm", "recompute")


def _engines(query, events, systems, batch):
    """One engine factory per system, everything compiled up front."""
    from dynyan.compiler import load
    from dynyan.compiler.frontend import parse_query
    from bench.peers.common import base_relations

    ir = parse_query(  # as the peers read it
        query.sql, query.schema, padded_leaves=False, native_windows=False
    )
    spec = {
        "sql": query.sql,
        "schema": query.schema,
        "recompute_batch": batch,
        "duckdb_threads": 1,
        "chunk": 5_000,
    }
    made = {}
    for system in systems:
        q = type("Q", (), {})()  # the query as the harness's engines see it
        q.ir = ir
        q.relations_names = [r.name for r in base_relations(ir)]
        if system.startswith("dynyan"):
            q.module = load(query.sql, query.schema, trust_input=system != "dynyan")
        made[system] = (harness._ENGINES[system], q)

    def build(system, sink):
        cls, q = made[system]
        engine = cls(spec, q, events)
        engine.build(sink)
        return engine

    return build


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("query", help="a query name under queries/, e.g. tpch/q13")
    p.add_argument(
        "--stream", default=str(ROOT / "data/streams/tpch-sf0.1-all-insert-s1")
    )
    p.add_argument("--events", type=int, help="only the first N events")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--modes", default="pull,push")
    p.add_argument("--systems", default=",".join(SYSTEMS))
    p.add_argument("--recompute-batch", type=int, default=10_000)
    args = p.parse_args(argv)

    (query,) = harness.discover_queries(ROOT / "queries", [args.query])
    gc.disable()
    events = harness.decode_stream(args.stream, query.relations, args.events)
    gc.enable()
    systems = [s for s in args.systems.split(",") if s]
    build = _engines(query, events, systems, args.recompute_batch)
    collector = GCPolicy(FREEZE_EVERY)
    print(f"{args.query}: {len(events):,} events, {args.runs} rounds")
    for mode in args.modes.split(","):
        seconds = {s: [] for s in systems}
        for r in range(args.runs):
            for system in systems if r % 2 == 0 else systems[::-1]:
                gc.collect()
                sink = harness.CountingSink() if mode == "push" else None
                engine = build(system, sink)
                collector.start()
                spent = 0.0
                for lo, hi in engine.chunks():
                    t0 = time.perf_counter()
                    engine.apply(lo, hi)
                    spent += time.perf_counter() - t0
                    collector.step(hi)
                seconds[system].append(spent)
                collector.release()
                del engine
        base = statistics.median(seconds[systems[0]])
        for system in systems:
            med = statistics.median(seconds[system])
            runs = " ".join(f"{len(events) / t:,.0f}" for t in seconds[system])
            print(
                f"  {mode:4} {system:12} {len(events) / med:>11,.0f} events/s  "
                f"{systems[0]} at {med / base:5.2f}x this rate  (runs: {runs})"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
