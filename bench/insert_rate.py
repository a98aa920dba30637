"""Rows per second one query's trusting module takes, one insert at a time,
as the input grows: a cost per change that grows with the input shows as a
falling rate.

    .venv/bin/python bench/insert_rate.py "SELECT … FROM orders" --events 2000,60000
    .venv/bin/python bench/insert_rate.py "…" --events 2000 --repo ../old-checkout

The first N events of the TPC-H SF 0.1 insert stream (`--stream`) that
touch a relation of the query are inserted into a fresh View for each N;
the query is compiled against `tpch/schema.sql`. `--repo` imports the
compiler from another checkout (a `git worktree` of an older commit), so
two commits can be timed by the same script, alternated; the templates
come from the installed package either way, so compare commits whose
`templates/` agree.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STREAM = ROOT / "data" / "streams" / "tpch-sf0.1-all-insert-s1"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("query", help="a SELECT over the TPC-H schema")
    parser.add_argument(
        "--events", default="2000,8000", help="comma-separated event counts"
    )
    parser.add_argument("--stream", default=str(STREAM), help="a stream directory")
    parser.add_argument(
        "--repo", default=str(ROOT), help="the checkout whose compiler to import"
    )
    args = parser.parse_args(argv)
    counts = [int(n) for n in args.events.split(",")]
    sys.path.insert(0, str(Path(args.repo).resolve()))
    sys.path.insert(1, str(ROOT))  # bench.harness, if the checkout has none
    from bench import harness
    from dynyan.compiler import load
    from dynyan.compiler.frontend.statements import parse_schema

    schema = (ROOT / "tpch" / "schema.sql").read_text()
    relations = {n: r.columns for n, r in parse_schema(schema).items()}
    events = harness.decode_stream(args.stream, relations, max(counts))
    module = load(args.query, schema, trust_input=True)
    for n in counts:
        view, rows = module.View(), 0
        start = time.perf_counter()
        for rel, _, row in events[:n]:
            if rel in module.View.RELATIONS:
                view.insert(rel, row)
                rows += 1
        rate = rows / (time.perf_counter() - start)
        print(f"{n} events: {rows} rows inserted, {rate:,.0f} rows/s", flush=True)


if __name__ == "__main__":
    main()
