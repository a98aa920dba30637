"""A query's plan without and with table statistics, replayed side by side.

    .venv/bin/dynyan stats data/tpch/sf0.1 -o /tmp/sf0.1.json
    .venv/bin/python bench/stats_plans.py tpch/fq3 --stats /tmp/sf0.1.json --events 850000

Both modules are rendered by the same code generator; only the join tree
differs (`plan_query` ranks trees by shape alone, or by `estimated_work`
under the statistics). Replays the first `--events` events of the stream's
relations into each and prints events/s (and, up to 200,000 events, the
result size of both, which must agree).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import harness as bench  # noqa: E402
from dynyan.compiler.render import render_module  # noqa: E402
from dynyan.compiler import compile_query, import_source  # noqa: E402
from dynyan.compiler.planner import estimated_work  # noqa: E402
from dynyan.compiler.stats import load_stats  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("query", help="a query name under queries/, e.g. tpch/fq3")
    p.add_argument("--stats", required=True, metavar="STATS.json")
    p.add_argument("--events", type=int, default=200_000)
    p.add_argument(
        "--stream", default=str(ROOT / "data/streams/tpch-sf0.1-all-insert-s1")
    )
    args = p.parse_args(argv)

    (query,) = bench.discover_queries(ROOT / "queries", [args.query])
    stats = load_stats(args.stats)
    events = bench.decode_stream(args.stream, query.relations, args.events)
    for name, plan in (
        ("by shape", compile_query(query.sql, query.schema)),
        ("by stats", compile_query(query.sql, query.schema, stats)),
    ):
        print(f"{name}: estimated work {estimated_work(plan, stats):,.0f}\n{plan}")
        view = import_source(render_module(plan, source=name)).View()
        ops = {1: view.insert, -1: view.delete}
        t0 = time.perf_counter()
        for rel, op, row in events:
            ops[op](rel, row)
        seconds = time.perf_counter() - t0
        size = ""
        if len(events) <= 200_000:
            size = f", {sum(m for _, m in view.enumerate()):,} result rows"
        print(
            f"  {len(events):,} events: {len(events) / seconds:,.0f} events/s{size}\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
