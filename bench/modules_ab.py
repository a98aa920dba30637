"""Generated modules of one query alternated over its stream: a code change's
speed, before against after, on a noisy machine.

    .venv/bin/python -m dynyan.cli compile queries/tpch/q13.sql --trust-input -o /tmp/after.py
    (the same at the commit before, -o /tmp/before.py)
    .venv/bin/python bench/modules_ab.py tpch/q13 /tmp/before.py /tmp/after.py --push
    .venv/bin/python bench/modules_ab.py top3.sql /tmp/before.py /tmp/after.py

Every round builds a fresh View of each module and applies the whole stream
(the order reversed every other round, under the harness's GC policy:
the surviving heap frozen every 10,000 events); the median rate of each module and its ratio to the first
are printed. `--enumerate` times reading the result at the end too;
`--batch N` feeds each N events as one `update()` call per relation, as the
harness's dynyan-batch system does.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))

from bench import harness  # noqa: E402
from bench.batches import batched  # noqa: E402
from dynyan.compiler import import_source  # noqa: E402
from dynyan.pipeline.gcpolicy import FREEZE_EVERY, GCPolicy  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "query",
        help="a query name under queries/, e.g. tpch/q13, or a .sql file (the "
        "stream's relations the first module reads)",
    )
    p.add_argument("modules", nargs="+", help="generated module files")
    p.add_argument(
        "--stream", default=str(ROOT / "data/streams/tpch-sf0.1-all-insert-s1")
    )
    p.add_argument("--events", type=int, help="only the first N events")
    p.add_argument("--runs", type=int, default=7)
    p.add_argument("--push", action="store_true", help="push mode (counting sink)")
    p.add_argument("--enumerate", action="store_true", help="read the result too")
    p.add_argument("--batch", type=int, help="update() per relation per N events")
    args = p.parse_args(argv)

    modules = [import_source(Path(f).read_text()) for f in args.modules]
    if args.query.endswith(".sql"):  # any query: the relations its module reads
        relations = modules[0].View.RELATIONS
    else:
        (query,) = harness.discover_queries(ROOT / "queries", [args.query])
        relations = query.relations
    events = harness.decode_stream(args.stream, relations, args.events)
    calls = batched(events, args.batch) if args.batch else None
    seconds: list[list[float]] = [[] for _ in modules]
    collector = GCPolicy(FREEZE_EVERY)  # the harness's GC policy
    for r in range(args.runs):
        order = list(range(len(modules)))
        for i in order if r % 2 == 0 else order[::-1]:
            sink = harness.CountingSink() if args.push else None
            view = modules[i].View(on_delta=sink) if sink else modules[i].View()
            ops = {1: view.insert, -1: view.delete}
            collector.start()
            t0 = time.perf_counter()
            if calls is not None:
                update = view.update
                done = 0
                for rel, rows, mults in calls:
                    update(rel, rows, mults)
                    done += len(rows)
                    collector.step(done)
            else:
                for done, (rel, op, row) in enumerate(events, 1):
                    ops[op](rel, row)
                    if done % 1000 == 0:
                        collector.step(done)
            if args.enumerate:
                sum(1 for _ in view.enumerate())
            seconds[i].append(time.perf_counter() - t0)
            collector.release()
            del view
    base = statistics.median(seconds[0])
    print(f"{args.query}: {len(events):,} events, {args.runs} rounds")
    for path, spent in zip(args.modules, seconds):
        med = statistics.median(spent)
        runs = " ".join(f"{len(events) / t:,.0f}" for t in spent)
        print(
            f"  {path}: {len(events) / med:,.0f} events/s, "
            f"{base / med:.2f}x the first (runs: {runs})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
