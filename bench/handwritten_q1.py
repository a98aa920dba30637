"""TPC-H Q1's generated trusting module against hand-written trigger
programs for it, in one process on the same decoded stream.

    .venv/bin/python bench/handwritten_q1.py --events 100000 --runs 9
    .venv/bin/python bench/handwritten_q1.py --stream data/streams/tpch-sf0.1-all-window-w10000-s1

Q1 is the small aggregate where DuckDB recomputing every 10,000 events keeps
up with single-row updates (BENCHMARKS.md): this measures how far the
generated code is from what a careful engineer would write by hand for it.
Two hand-written programs, both keeping per group the count and the five
sums in fixed point (the generated module's DECIMAL arithmetic, exact under
deletes): `bare` checks nothing; `checked` also refuses a row of the wrong
arity, a NULL in a column it reads and a delete of a group it does not have,
as the trusting module does. Push: every change of a group goes to a sink,
its old row -1 and its new row +1, from all three alike. Beside them DuckDB
recomputing every 10,000 events, built and timed as bench/interleaved.py
does. The systems take turns (the order reversed every other round), the
GC off while one runs; medians, and each system's time over the generated
module's.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import statistics
import sys
import time
from math import floor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import harness  # noqa: E402

SHIPPED_BY = datetime.date(1998, 9, 2)  # DATE '1998-12-01' - INTERVAL 90 DAY


class Bare:
    """Q1 by hand: a dict from (returnflag, linestatus) to (count, sum of
    quantity, of price, of discounted price, of charge, of discount), the
    sums scaled to integers; in push mode the group's row last reported and
    its new one (deletes of rows not there are not checked: `d` of -1 takes
    the group to be there)."""

    def __init__(self, on_delta=None):
        self.groups = {}
        self.shown = {}  # push mode: group key -> the row last reported
        self.on_delta = on_delta

    def insert(self, relation, row):
        self._apply(row, 1)

    def delete(self, relation, row):
        self._apply(row, -1)

    def _apply(self, row, d):
        if row[10] > SHIPPED_BY:
            return
        price, discount = row[5], row[6]
        discounted = price * (1.0 - discount)
        q = floor(row[4] * 100.0 + 0.5)
        e = floor(price * 100.0 + 0.5)
        x = floor(discounted * 10000.0 + 0.5)
        c = floor(discounted * (1.0 + row[7]) * 1000000.0 + 0.5)
        t = floor(discount * 100.0 + 0.5)
        key = (row[8], row[9])
        groups = self.groups
        old = groups.get(key)
        if d == 1:
            if old is None:
                groups[key] = new = (1, q, e, x, c, t)
            else:
                groups[key] = new = (
                    old[0] + 1,
                    old[1] + q,
                    old[2] + e,
                    old[3] + x,
                    old[4] + c,
                    old[5] + t,
                )
        else:
            new = (
                old[0] + d,
                old[1] - q,
                old[2] - e,
                old[3] - x,
                old[4] - c,
                old[5] - t,
            )
            if new[0]:
                groups[key] = new
            else:
                del groups[key]
        on_delta = self.on_delta
        if on_delta is not None:
            shown = self.shown
            if old is not None:
                on_delta(shown[key], -1)
            if new[0]:
                shown[key] = row = _row(key, new)
                on_delta(row, 1)
            else:
                del shown[key]

    def rows(self):
        return [_row(key, p) for key, p in self.groups.items()]


class Checked(Bare):
    """Bare, refusing what the trusting module refuses: a row of the wrong
    arity, a NULL in a column Q1 reads, a delete of a group not kept."""

    def _apply(self, row, d):
        if len(row) != 16:
            raise ValueError(f"lineitem rows have 16 columns, got {len(row)}")
        if (
            row[4] is None
            or row[5] is None
            or row[6] is None
            or row[7] is None
            or row[8] is None
            or row[9] is None
            or row[10] is None
        ):
            raise ValueError(f"a NULL in a column Q1 reads: {row!r}")
        if d < 0 and (row[8], row[9]) not in self.groups and row[10] <= SHIPPED_BY:
            raise ValueError(f"cannot delete {row!r}: not in the view")
        Bare._apply(self, row, d)


def _row(key, p):
    n = p[0]
    return (
        *key,
        p[1] / 100,
        p[2] / 100,
        p[3] / 10000,
        p[4] / 1000000,
        p[1] / (n * 100),
        p[2] / (n * 100),
        p[5] / (n * 100),
        n,
    )


def _same_rows(a, b) -> bool:
    a, b = sorted(a), sorted(b)
    return len(a) == len(b) and all(
        x[:2] == y[:2]
        and all(abs(u - v) <= 1e-9 * max(1, abs(u)) for u, v in zip(x[2:], y[2:]))
        for x, y in zip(a, b)
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--stream", default=str(ROOT / "data/streams/tpch-sf0.1-all-insert-s1")
    )
    p.add_argument("--events", type=int, default=100_000)
    p.add_argument("--runs", type=int, default=9)
    p.add_argument("--modes", default="pull,push")
    p.add_argument("--recompute-batch", type=int, default=10_000)
    args = p.parse_args(argv)

    from dynyan.compiler import load
    from bench.interleaved import _engines

    (query,) = harness.discover_queries(ROOT / "queries", ["tpch/spec/q1"])
    events = harness.decode_stream(args.stream, query.relations, args.events)
    module = load(query.sql, query.schema, trust_input=True)
    systems = {"generated": module.View, "checked": Checked, "bare": Bare}
    duckdb = _engines(query, events, ["recompute"], args.recompute_batch)
    print(f"tpch/spec/q1: {len(events):,} events of {args.stream}, {args.runs} rounds")
    for mode in args.modes.split(","):
        seconds = {name: [] for name in [*systems, "duckdb"]}
        finals = {}
        for r in range(args.runs):
            order = [*systems.items(), ("duckdb", None)]
            for name, cls in order if r % 2 == 0 else order[::-1]:
                sink = harness.CountingSink() if mode == "push" else None
                gc.collect()
                gc.disable()
                if cls is None:  # DuckDB recomputing, as bench/interleaved.py runs it
                    engine = duckdb("recompute", sink)
                    spent = 0.0
                    for lo, hi in engine.chunks():
                        t0 = time.perf_counter()
                        engine.apply(lo, hi)
                        spent += time.perf_counter() - t0
                    seconds[name].append(spent)
                    gc.enable()
                    continue
                view = cls(on_delta=sink) if sink is not None else cls()
                ins, dele = view.insert, view.delete
                t0 = time.perf_counter()
                for rel, op, row in events:
                    if op > 0:
                        ins(rel, row)
                    else:
                        dele(rel, row)
                seconds[name].append(time.perf_counter() - t0)
                gc.enable()
                finals[name] = list(view.rows())
        for name in ("checked", "bare"):
            if not _same_rows(finals[name], finals["generated"]):
                raise SystemExit(f"{name}: its result differs from the module's")
        base = statistics.median(seconds["generated"])
        for name in seconds:
            med = statistics.median(seconds[name])
            print(
                f"  {mode:4} {name:9} {len(events) / med:>11,.0f} events/s  "
                f"{med / base:5.2f}x the generated module's time"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
