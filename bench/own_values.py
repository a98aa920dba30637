"""A generated module fed rows as the stream gives them (floats) and as
DuckDB's `fetchall()` gives them (each DECIMAL a `decimal.Decimal`), in
one process on the same decoded events.

    .venv/bin/python bench/own_values.py tpch/spec/q1 --events 100000 --runs 7

A relation whose first row holds a Decimal has every row converted to the
view's classes first (dynyan/runtime/ownvalues.py); one whose first row
holds none runs its trigger as it is. This measures what the conversion
costs. The two feeds take turns (the order reversed every other round),
the GC off while one runs; medians, and the converted feed's time over the
plain one's. The results of both are checked to agree.
"""

from __future__ import annotations

import argparse
import decimal
import gc
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import harness  # noqa: E402


def as_fetched(events, kinds):
    """`events` with each DECIMAL value a Decimal, as DuckDB returns it
    (`kinds`: a strict view's `_OWN_KINDS`, "n" for every DECIMAL column)."""
    out = []
    for rel, op, row in events:
        row = tuple(
            decimal.Decimal(repr(v)) if k == "n" and v.__class__ is float else v
            for v, k in zip(row, kinds[rel])
        )
        out.append((rel, op, row))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("query", nargs="?", default="tpch/spec/q1")
    p.add_argument(
        "--stream", default=str(ROOT / "data/streams/tpch-sf0.1-all-insert-s1")
    )
    p.add_argument("--events", type=int, default=100_000)
    p.add_argument("--runs", type=int, default=7)
    p.add_argument("--strict", action="store_true", help="the strict module")
    args = p.parse_args(argv)

    from dynyan.compiler import load

    (query,) = harness.discover_queries(ROOT / "queries", [args.query])
    events = harness.decode_stream(args.stream, query.relations, args.events)
    module = load(query.sql, query.schema, trust_input=not args.strict)
    kinds = load(query.sql, query.schema).View._OWN_KINDS
    feeds = {"plain": events, "Decimal": as_fetched(events, kinds)}
    print(f"{args.query}: {len(events):,} events of {args.stream}, {args.runs} rounds")
    seconds = {name: [] for name in feeds}
    finals = {}
    for r in range(args.runs):
        order = list(feeds.items())
        for name, feed in order if r % 2 == 0 else order[::-1]:
            gc.collect()
            gc.disable()
            view = module.View()
            ins, dele = view.insert, view.delete
            t0 = time.perf_counter()
            for rel, op, row in feed:
                if op > 0:
                    ins(rel, row)
                else:
                    dele(rel, row)
            seconds[name].append(time.perf_counter() - t0)
            gc.enable()
            finals[name] = list(view.enumerate())
    if harness.compare_bags(finals["plain"], finals["Decimal"]) is not None:
        raise SystemExit("the two feeds' results differ")
    base = statistics.median(seconds["plain"])
    for name in seconds:
        med = statistics.median(seconds[name])
        print(
            f"  {name:8} {len(events) / med:>11,.0f} events/s  "
            f"{med / base:5.2f}x the plain feed's time"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
