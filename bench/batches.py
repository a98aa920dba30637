"""Events/s of dynyan's `update()` by batch size, strict and trusting.

    .venv/bin/python bench/batches.py tpch/q3 tpch/q6 --sizes 1 100 10000 --runs 3

Replays the stream (default: the SF 0.1 insert stream) as `dynyan replay`
does: batches of `size` events in seq order, each relation's events of a
batch in one `view.update(rel, rows, mults)` call, which sums the rows'
payloads per key before they propagate. Size 1 is one `update` per event.
The stream is decoded before anything is timed; the first-order IVM
(`bench/peers/ivm.py`, one call per event) runs in the same script for a
ratio. Prints the median of `--runs` timings per (query, system, size), and
checks that every batch size gives dynyan's one-by-one result.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import harness as bench  # noqa: E402
from dynyan.compiler import compile_query, import_source  # noqa: E402
from dynyan.compiler.render import render_module  # noqa: E402


def batched(events, size: int):
    """(relation, rows, mults) calls: `size` events at a time, per relation
    in seq order (the order `dynyan.pipeline.replay` applies them in)."""
    calls = []
    for start in range(0, len(events), size):
        per_rel: dict[str, tuple[list, list]] = {}
        for rel, op, row in events[start : start + size]:
            rows, mults = per_rel.setdefault(rel, ([], []))
            rows.append(row)
            mults.append(op)
        calls.extend((rel, rows, mults) for rel, (rows, mults) in per_rel.items())
    return calls


def time_view(module, calls) -> tuple[float, Counter]:
    view = module.View()
    update = view.update
    gc.collect()
    t0 = time.perf_counter()
    for rel, rows, mults in calls:
        update(rel, rows, mults)
    seconds = time.perf_counter() - t0
    return seconds, Counter(dict(view.enumerate()))


def time_ivm(ir, events) -> float:
    from bench.peers.ivm import FirstOrderIVM

    ivm = FirstOrderIVM(ir)
    ops = {1: ivm.insert, -1: ivm.delete}
    gc.collect()
    t0 = time.perf_counter()
    for rel, op, row in events:
        ops[op](rel, row)
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "queries", nargs="+", help="query names under queries/, e.g. tpch/q3"
    )
    p.add_argument(
        "--sizes", type=int, nargs="+", default=[1, 100, 10_000], help="batch sizes"
    )
    p.add_argument(
        "--runs", type=int, default=3, help="timings per measurement (median)"
    )
    p.add_argument("--events", type=int, help="only the stream's first N events")
    p.add_argument(
        "--stream",
        default=str(ROOT / "data/streams/tpch-sf0.1-all-insert-s1"),
        help="a stream directory from `dynyan stream`",
    )
    args = p.parse_args(argv)
    from dynyan.compiler.frontend import parse_query

    for query in bench.discover_queries(ROOT / "queries", args.queries):
        events = bench.decode_stream(args.stream, query.relations, args.events)
        plan = compile_query(query.sql, query.schema)
        ir = parse_query(  # the peers'
            query.sql, query.schema, padded_leaves=False, native_windows=False
        )
        modules = {
            mode: import_source(render_module(plan, trust_input=mode == "trust"))
            for mode in ("strict", "trust")
        }
        n = len(events)
        ivm = statistics.median(time_ivm(ir, events) for _ in range(args.runs))
        print(f"{query.name}: {n:,} events; first-order IVM {n / ivm:,.0f} events/s")
        reference = None
        for size in args.sizes:
            calls = batched(events, size)
            for mode, module in modules.items():
                times = []
                for _ in range(args.runs):
                    seconds, result = time_view(module, calls)
                    times.append(seconds)
                    if reference is None:
                        reference = result
                    else:
                        diff = bench.compare_bags(reference.items(), result.items())
                        if diff:
                            raise SystemExit(f"{query.name} batch {size}: {diff}")
                rate = n / statistics.median(times)
                print(
                    f"  {mode:6} batch {size:>6,}: {rate:>10,.0f} events/s "
                    f"({rate * ivm / n:.2f}x IVM)",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
