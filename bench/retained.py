"""Memory each Python system keeps after a stream, its input rows counted.

    .venv/bin/python bench/retained.py tpch/q9
    .venv/bin/python bench/retained.py tpch/q9 --systems dynyan-trust,dynyan,ivm,store

`bench run` traces memory while a system applies rows that were decoded
before tracing started: a system that keeps the input rows themselves (the
first-order IVM's indexes hold whole rows, the store-only floor holds them
all) pays there only for its dict slots, one that keeps projections (dynyan)
for every tuple it builds. Here every chunk of events is decoded again
inside the traced window, as rows arriving from a source are new objects,
and what is still allocated after the last chunk is the system's retained
state, the input rows it keeps included (`retained`); `peak` adds the one
chunk in flight. tracemalloc sees Python allocations only: DuckDB and
Pathway (native memory) are not measured.
"""

from __future__ import annotations

import argparse
import gc
import pickle
import sys
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))

from bench import harness  # noqa: E402
from bench.interleaved import _engines  # noqa: E402

SYSTEMS = ("dynyan-trust", "dynyan", "ivm")
CHUNK = 5_000


def retained(build, system: str, events: list, push: bool) -> tuple[float, float]:
    """(retained, peak) MiB of one fresh system over `events`, each chunk of
    rows unpickled inside the traced window."""
    chunks = [
        pickle.dumps(events[lo : lo + CHUNK], 5) for lo in range(0, len(events), CHUNK)
    ]
    gc.collect()
    tracemalloc.start()
    engine = build(system, harness.CountingSink() if push else None)
    for blob in chunks:
        engine.events = pickle.loads(blob)
        engine.apply(0, len(engine.events))
    engine.events = []
    gc.collect()
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del engine
    return current / 2**20, peak / 2**20


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("query", help="a query name under queries/, e.g. tpch/q9")
    p.add_argument(
        "--stream", default=str(ROOT / "data/streams/tpch-sf0.1-all-insert-s1")
    )
    p.add_argument("--events", type=int, help="only the first N events")
    p.add_argument("--modes", default="pull")
    p.add_argument("--systems", default=",".join(SYSTEMS))
    args = p.parse_args(argv)

    (query,) = harness.discover_queries(ROOT / "queries", [args.query])
    events = harness.decode_stream(args.stream, query.relations, args.events)
    systems = [s for s in args.systems.split(",") if s]
    build = _engines(query, events, systems, 10_000)
    print(f"{args.query}: {len(events):,} events, rows decoded while traced")
    for mode in args.modes.split(","):
        for system in systems:
            kept, peak = retained(build, system, events, mode == "push")
            print(
                f"  {mode:4} {system:12} retained {kept:8.1f} MiB  peak {peak:8.1f} MiB"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
