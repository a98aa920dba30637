"""How much of a long replay's slowdown is the stream's own work.

    .venv/bin/python bench/work_growth.py tpch/fq1 --stream data/streams/tpch-sf0.1-all-insert-s1 --span 100000
    PYTHONMALLOC=malloc GLIBC_TUNABLES=glibc.malloc.hugetlb=1 \
        .venv/bin/python bench/work_growth.py tpch/fq1 --span 1000000

On an insert stream whose tables arrive interleaved, an event does more as
the joins fill: early on a lineitem finds no order and stops at its leaf,
late it reaches the root. A rate per million events that falls may be that
work, not the view getting slower at what it does. This replays the stream
into the query's trusting module twice: once timed (events/s per span, the
GC policy of `dynyan replay`), once counting the lines of the module's code
that every `--sample`-th event executes (a line tracer on those events
only), and prints per span the rate, the lines per event and the time per
line (µs): a flat time per line means the slowdown is the work. (Huge
pages: the variables of dynyan.pipeline.hugepages, as above.)
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
from dynyan.pipeline.gcpolicy import GCPolicy  # noqa: E402


def _per_span(module, events, span: int, measure) -> list[float]:
    """`measure(view, chunk)` of each span of a fresh view's replay, under
    the GC policy of `dynyan replay`."""
    view = module.View()
    policy = GCPolicy()
    policy.start()
    out = []
    for lo in range(0, len(events), span):
        chunk = events[lo : lo + span]
        out.append(measure(view, chunk))
        policy.step(lo + len(chunk))
    policy.release()
    return out


def timed(module, events, span: int) -> list[float]:
    """Events/s of each span."""

    def rate(view, chunk):
        insert, delete = view.insert, view.delete
        t0 = time.perf_counter()
        for rel, op, row in chunk:
            insert(rel, row) if op > 0 else delete(rel, row)
        return len(chunk) / (time.perf_counter() - t0)

    return _per_span(module, events, span, rate)


def lines_per_event(module, events, span: int, sample: int) -> list[float]:
    """Per span, the lines of the module's code a sampled event executes."""
    filename = module.View.insert.__code__.co_filename
    count = [0]

    def local(frame, what, arg):
        if what == "line":
            count[0] += 1
        return local

    def tracer(frame, what, arg):
        return local if frame.f_code.co_filename == filename else None

    def lines(view, chunk):
        insert, delete = view.insert, view.delete
        count[0] = 0
        for i, (rel, op, row) in enumerate(chunk):
            if i % sample == 0:
                sys.settrace(tracer)
            insert(rel, row) if op > 0 else delete(rel, row)
            sys.settrace(None)
        return count[0] / len(range(0, len(chunk), sample))

    return _per_span(module, events, span, lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("query", help="a query name under queries/, e.g. tpch/fq1")
    p.add_argument(
        "--stream", default=str(ROOT / "data/streams/tpch-sf1-all-insert-s1")
    )
    p.add_argument("--events", type=int, default=None, help="default: all")
    p.add_argument("--span", type=int, default=1_000_000, help="events per span")
    p.add_argument(
        "--sample", type=int, default=50, help="trace every N-th event (default 50)"
    )
    args = p.parse_args(argv)

    (query,) = bench.discover_queries(ROOT / "queries", [args.query])
    events = bench.decode_stream(args.stream, query.relations, args.events)
    gc.collect()
    gc.freeze()  # the stream is this script's data, not the view's
    module = load(query.sql, query.schema, trust_input=True)
    rates = timed(module, events, args.span)
    gc.collect()
    lines = lines_per_event(module, events, args.span, args.sample)
    per_line = [1e6 / (rate * n) for rate, n in zip(rates, lines)]  # µs
    print(f"{args.query}, {len(events):,} events, spans of {args.span:,}:")
    print("span  events/s  lines/event  µs/line")
    for i, (rate, n, us) in enumerate(zip(rates, lines, per_line), start=1):
        print(f"{i:4d}  {rate:8,.0f}  {n:11.1f}  {us:7.3f}")
    print(
        f"last span / first: rate {rates[0] / rates[-1]:.1f}x lower, lines per "
        f"event {lines[-1] / lines[0]:.1f}x, time per line {per_line[-1] / per_line[0]:.1f}x"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
