"""FQ3 under the planner's tree and under the best tree rooted at [l_suppkey].

    .venv/bin/python bench/fq3_plans.py --events 850000

Both modules are rendered by the same code generator from a plan of
`dynyan.plan`'s candidate search; only the tree differs. Replays the first
`--events` events of the SF 0.1 insert stream into each and prints
events/s (and, up to 200,000 events, the result size of both).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dynyan import bench  # noqa: E402
from dynyan import plan as planner  # noqa: E402
from dynyan.codegen import render_module  # noqa: E402
from dynyan.sql import parse_query  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--events", type=int, default=200_000)
    p.add_argument(
        "--stream", default=str(ROOT / "data/streams/tpch-sf0.1-all-insert-s1")
    )
    args = p.parse_args(argv)

    (query,) = bench.discover_queries(ROOT / "queries", ["tpch/fq3"])
    ir = parse_query(query.sql, query.schema)
    candidates, _ = planner._plans_for(ir, frozenset(ir.plan_vars))
    alternative = min(
        (c for c in candidates if c.nodes[c.root].vars == ("l_suppkey",)),
        key=lambda c: (c.cost, c.draw()),
    )
    events = bench.decode_stream(args.stream, query.relations, args.events)
    for name, plan in (
        ("chosen", planner.plan_query(ir)),
        ("[l_suppkey]", alternative),
    ):
        namespace: dict = {}
        exec(compile(render_module(plan, source=name), f"<{name}>", "exec"), namespace)
        view = namespace["View"]()
        ops = {1: view.insert, -1: view.delete}
        t0 = time.perf_counter()
        for rel, op, row in events:
            ops[op](rel, row)
        seconds = time.perf_counter() - t0
        size = ""
        if len(events) <= 200_000:
            size = f", {sum(m for _, m in view.enumerate()):,} result rows"
        print(
            f"{name:12s} cost {plan.cost}: {len(events) / seconds:,.0f} events/s{size}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
