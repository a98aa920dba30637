"""Per-update cost of a generated module on a random TPC-H-like stream, and the
memory of its view against the raw rows it holds (issue 2's measurement).

    .venv/bin/python bench/spine.py --query fq1 --events 100000 --runs 3

Rows are drawn like TPC-H SF ~0.01 keys (orders 15k, parts 2k, suppliers 100),
20% of events delete a random live row. Times only the View calls; the stream
is built beforehand. Memory: tracemalloc of the view's structures after the
stream, against a dict of the same live rows (the "store only" floor).
"""

from __future__ import annotations

import argparse
import datetime
import random
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dynyan.compiler import import_file  # noqa: E402

DAY = datetime.date(1995, 1, 1)


def make_row(rel: str, rnd: random.Random, i: int) -> tuple:
    if rel == "orders":
        return (
            rnd.randint(1, 15000),
            rnd.randint(1, 1500),
            "O",
            1000.0 + i % 97,
            DAY,
            "1-URGENT",
            "Clerk#1",
            0,
            "c",
        )
    if rel == "lineitem":
        return (
            rnd.randint(1, 15000),
            rnd.randint(1, 2000),
            rnd.randint(1, 100),
            i,
            17.0,
            1234.5,
            0.05,
            0.02,
            "N",
            "O",
            DAY,
            DAY,
            DAY,
            "NONE",
            "AIR",
            "c",
        )
    if rel == "part":
        return (rnd.randint(1, 2000), "p", "m", "Brand#1", "t", 5, "box", 900.0, "c")
    if rel == "partsupp":
        return (rnd.randint(1, 2000), rnd.randint(1, 100), 10, 3.5, "c")
    if rel == "supplier":
        return (rnd.randint(1, 100), "s", "a", 1, "p", 10.0, "c")
    if rel == "customer":
        return (
            rnd.randint(1, 1500),
            "n",
            "a",
            rnd.randint(0, 24),
            "p",
            1.0,
            "BUILDING",
            "c",
        )
    if rel == "nation":
        return (rnd.randint(0, 24), "N", 1, "c")
    raise KeyError(rel)


WEIGHTS = {
    "lineitem": 60,
    "orders": 15,
    "partsupp": 8,
    "part": 2,
    "customer": 2,
    "supplier": 1,
    "nation": 1,
}


def stream(relations, n: int, seed: int = 0, delete_fraction: float = 0.2):
    rnd = random.Random(seed)
    rels = [r for r in WEIGHTS if r in relations]
    weights = [WEIGHTS[r] for r in rels]
    live: list[tuple[str, tuple]] = []
    events = []
    for i in range(n):
        if live and rnd.random() < delete_fraction:
            j = rnd.randrange(len(live))
            live[j], live[-1] = live[-1], live[j]
            rel, row = live.pop()
            events.append((rel, row, -1))
        else:
            rel = rnd.choices(rels, weights)[0]
            row = make_row(rel, rnd, i)
            live.append((rel, row))
            events.append((rel, row, 1))
    return events, live


def run(module, events) -> float:
    view = module.View()
    insert, delete = view.insert, view.delete
    start = time.perf_counter()
    for rel, row, op in events:
        if op > 0:
            insert(rel, row)
        else:
            delete(rel, row)
    return len(events) / (time.perf_counter() - start)


def memory(module, events, live) -> tuple[int, int]:
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    view = module.View()
    for rel, row, op in events:
        (view.insert if op > 0 else view.delete)(rel, row)
    used = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    # The floor: the same live rows, one dict per relation (rows counted too).
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    stores: dict = {}
    for rel, row in live:
        store = stores.setdefault(rel, {})
        row = tuple(row)  # a fresh tuple, as the view's own copy would be
        store[row] = store.get(row, 0) + 1
    floor = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    del view
    return used, floor


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--query", default="fq1")
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    module = import_file(str(ROOT / "generated" / "tpch" / f"{args.query}.py"))
    events, live = stream(module.View.RELATIONS, args.events)
    rates = [run(module, events) for _ in range(args.runs)]
    used, floor = memory(module, events, live)
    print(
        f"{args.query}: {args.events} events ({sum(op < 0 for *_, op in events)} deletes), "
        f"median {statistics.median(rates):,.0f} events/s over {args.runs} runs "
        f"(min {min(rates):,.0f}, max {max(rates):,.0f}); view {used / 1e6:.1f} MB for "
        f"{len(live)} live rows, whose dicts alone take {floor / 1e6:.1f} MB "
        f"({used / floor:.2f}x)"
    )


if __name__ == "__main__":
    main()
