"""What CPython's cyclic garbage collector costs a large view.

    .venv/bin/python bench/gc_cost.py tpch/fq1 --events 3000000 --freeze 0
    .venv/bin/python bench/gc_cost.py tpch/fq1 --events 3000000
    .venv/bin/python bench/gc_cost.py tpch/fq1 --events 3000000 --system ivm

Replays the first `--events` events of the TPC-H SF 1 insert stream into the
query's module (`--system ivm`: the first-order IVM) and prints events/s
(overall and per million events), the collections per generation and the
time spent in full (generation 2) collections. `--freeze N`: the GC policy
of `dynyan replay` and the harness (dynyan.pipeline.gcpolicy, gc.freeze()
every N events; default 10,000); 0: CPython's default collector.
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
from dynyan.pipeline.gcpolicy import FREEZE_EVERY, GCPolicy  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("query", help="a query name under queries/, e.g. tpch/fq1")
    p.add_argument("--events", type=int, default=2_000_000)
    p.add_argument(
        "--freeze",
        type=int,
        default=FREEZE_EVERY,
        metavar="N",
        help="gc.freeze() every N events (default %(default)s; 0: never)",
    )
    p.add_argument(
        "--stream", default=str(ROOT / "data/streams/tpch-sf1-all-insert-s1")
    )
    p.add_argument(
        "--trust-input",
        action="store_true",
        help="compile the view to trust its input (no copy of whole rows)",
    )
    p.add_argument(
        "--system",
        choices=("dynyan", "ivm"),
        default="dynyan",
        help="the view replayed: dynyan's module or the first-order IVM",
    )
    args = p.parse_args(argv)

    (query,) = bench.discover_queries(ROOT / "queries", [args.query])
    gc.disable()  # decoding: as in the harness, then the stream is frozen
    events = bench.decode_stream(args.stream, query.relations, args.events)
    gc.enable()
    gc.collect()
    gc.freeze()  # the stream is the harness's data, not the view's
    if args.system == "ivm":
        from bench.peers.ivm import make_ivm
        from dynyan.compiler.frontend import parse_query

        view = make_ivm(
            parse_query(
                query.sql, query.schema, padded_leaves=False, native_windows=False
            )
        )
    else:
        view = load(query.sql, query.schema, trust_input=args.trust_input).View()

    full = {"s": 0.0, "t0": 0.0}

    def timer(phase, info):
        if info["generation"] == 2:
            if phase == "start":
                full["t0"] = time.perf_counter()
            else:
                full["s"] += time.perf_counter() - full["t0"]

    gc.callbacks.append(timer)
    before = [g["collections"] for g in gc.get_stats()]
    insert, delete = view.insert, view.delete
    collector = GCPolicy(args.freeze)
    collector.start()
    marks, step = [], 10_000
    t0 = time.perf_counter()
    for lo in range(0, len(events), step):
        for rel, op, row in events[lo : lo + step]:
            insert(rel, row) if op > 0 else delete(rel, row)
        done = min(lo + step, len(events))
        collector.step(done)
        marks.append((done, time.perf_counter() - t0))
    seconds = time.perf_counter() - t0
    counts = [g["collections"] - b for g, b in zip(gc.get_stats(), before)]
    rates = " ".join(f"{r:,.0f}" for r in bench.rates_per_million(marks))
    print(
        f"{len(events):,} events, freeze every {args.freeze:,}: "
        f"{len(events) / seconds:,.0f} events/s (per million events: {rates}); "
        f"collections per generation {counts}; full collections {full['s']:.1f} "
        f"of {seconds:.1f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
