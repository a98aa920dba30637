"""How much of a long replay's slowdown is the stream's own work.

    .venv/bin/python bench/work_growth.py tpch/fq1 --stream data/streams/tpch-sf0.1-all-insert-s1 --span 100000
    .venv/bin/python bench/work_growth.py tpch/fq1 --span 1000000 --huge-pages

On an insert stream whose tables arrive interleaved, an event does more as
the joins fill: early on a lineitem finds no order and stops at its leaf,
late it reaches the root. A rate per million events that falls may be that
work, not the view getting slower at what it does. This replays the stream
into the query's trusting module twice: once timed (events/s per span, the
GC policy of `dynyan replay`), once counting the lines of the module's code
that every `--sample`-th event executes (a line tracer on those events
only), and prints per span the rate, the lines per event and the time per
line (µs): a flat time per line means the slowdown is the work.
`--huge-pages` re-executes the script under dynyan.pipeline.hugepages.
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
from dynyan.pipeline import hugepages  # noqa: E402
from dynyan.pipeline.gcpolicy import GCPolicy  # noqa: E402


def timed(module, events, span: int) -> list[float]:
    """Events/s of each span of a fresh view's replay."""
    view = module.View()
    insert, delete = view.insert, view.delete
    policy = GCPolicy()
    policy.start()
    rates = []
    for lo in range(0, len(events), span):
        chunk = events[lo : lo + span]
        t0 = time.perf_counter()
        for rel, op, row in chunk:
            insert(rel, row) if op > 0 else delete(rel, row)
        rates.append(len(chunk) / (time.perf_counter() - t0))
        policy.step(lo + len(chunk))
    policy.release()
    return rates


def lines_per_event(module, events, span: int, sample: int) -> list[float]:
    """Per span, the lines of the module's code a sampled event executes."""
    view = module.View()
    insert, delete = view.insert, view.delete
    filename = module.View.insert.__code__.co_filename
    count = [0]

    def local(frame, what, arg):
        if what == "line":
            count[0] += 1
        return local

    def tracer(frame, what, arg):
        return local if frame.f_code.co_filename == filename else None

    policy = GCPolicy()
    policy.start()
    out = []
    for lo in range(0, len(events), span):
        chunk = events[lo : lo + span]
        count[0], traced = 0, 0
        for i, (rel, op, row) in enumerate(chunk):
            if i % sample == 0:
                sys.settrace(tracer)
                insert(rel, row) if op > 0 else delete(rel, row)
                sys.settrace(None)
                traced += 1
            else:
                insert(rel, row) if op > 0 else delete(rel, row)
        out.append(count[0] / traced)
        policy.step(lo + len(chunk))
    policy.release()
    return out


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
    p.add_argument("--huge-pages", action="store_true")
    args = p.parse_args(argv)
    if args.huge_pages and not hugepages.active():
        reason = hugepages.unsupported()
        if reason:
            print(f"huge pages: {reason}; going on without", file=sys.stderr)
        else:
            hugepages.reexec()

    (query,) = bench.discover_queries(ROOT / "queries", [args.query])
    events = bench.decode_stream(args.stream, query.relations, args.events)
    gc.collect()
    gc.freeze()  # the stream is this script's data, not the view's
    module = load(query.sql, query.schema, trust_input=True)
    rates = timed(module, events, args.span)
    gc.collect()
    lines = lines_per_event(module, events, args.span, args.sample)
    print(f"{args.query}, {len(events):,} events, spans of {args.span:,}:")
    print("span  events/s  lines/event  µs/line")
    for i, (rate, n) in enumerate(zip(rates, lines), start=1):
        print(f"{i:4d}  {rate:8,.0f}  {n:11.1f}  {1e6 / rate / n:7.3f}")
    per_line = [1 / (rate * n) for rate, n in zip(rates, lines)]
    print(
        f"last span / first: rate {rates[0] / rates[-1]:.1f}x lower, lines per "
        f"event {lines[-1] / lines[0]:.1f}x, time per line {per_line[-1] / per_line[0]:.1f}x"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
