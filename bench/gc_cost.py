"""What CPython's cyclic garbage collector costs a large view.

    .venv/bin/python bench/gc_cost.py tpch/fq1 --events 2000000
    .venv/bin/python bench/gc_cost.py tpch/fq1 --events 2000000 --freeze 100000

Replays the first `--events` events of the TPC-H SF 1 insert stream into the
query's module (default GC settings, as in `python -m bench run`) and prints
events/s, the collections per generation and the time spent in full
(generation 2) collections; with `--freeze N`, `gc.freeze()` every N events.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import harness as bench  # noqa: E402
from dynyan.compiler import load  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("query", help="a query name under queries/, e.g. tpch/fq1")
    p.add_argument("--events", type=int, default=2_000_000)
    p.add_argument("--freeze", type=int, metavar="N", help="gc.freeze() every N events")
    p.add_argument(
        "--stream", default=str(ROOT / "data/streams/tpch-sf1-all-insert-s1")
    )
    args = p.parse_args(argv)

    (query,) = bench.discover_queries(ROOT / "queries", [args.query])
    gc.disable()  # decoding: as in the harness, then the stream is frozen
    events = bench.decode_stream(args.stream, query.relations, args.events)
    gc.enable()
    gc.collect()
    gc.freeze()
    view = load(query.sql, query.schema).View()

    full = {"s": 0.0, "t0": 0.0}

    def timer(phase, info):
        if info["generation"] == 2:
            if phase == "start":
                full["t0"] = time.perf_counter()
            else:
                full["s"] += time.perf_counter() - full["t0"]

    gc.callbacks.append(timer)
    before = [g["collections"] for g in gc.get_stats()]
    insert, every = view.insert, args.freeze or 0
    t0 = time.perf_counter()
    for i, (rel, op, row) in enumerate(events):
        insert(rel, row) if op > 0 else view.delete(rel, row)
        if every and not i % every:
            gc.freeze()
    seconds = time.perf_counter() - t0
    counts = [g["collections"] - b for g, b in zip(gc.get_stats(), before)]
    print(
        f"{len(events):,} events: {len(events) / seconds:,.0f} events/s; collections "
        f"per generation {counts}; full collections {full['s']:.1f} of {seconds:.1f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
