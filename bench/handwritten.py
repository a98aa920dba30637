"""Generated code against a careful hand-written trigger program for the same
query, in one process on the same pre-built stream.

    .venv/bin/python bench/handwritten.py --inserts 20000 --deletes 5000 --runs 5
    .venv/bin/python bench/handwritten.py --inserts 20000 --deletes 5000 --push

Query: SELECT COUNT(*) FROM r, s, t WHERE r.b = s.b AND s.c = t.c, single-tuple
inserts and deletes of live rows (interleaved at random) with keys drawn from
1..1000. Pull: apply the stream, read the count. Push: every change of the
result goes to a sink (the old count -1, the new +1), by the generated
module's `on_delta` and by the hand-written program alike. Both check every
delete (the hand-written one counts whole rows, as a strict module does);
`--trust-input` compiles the module trusting deletes (then it counts no
whole rows while the hand-written program still does).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import dynyan  # noqa: E402

SQL = """
CREATE TABLE r (a INTEGER, b INTEGER);
CREATE TABLE s (b INTEGER, c INTEGER);
CREATE TABLE t (c INTEGER, d INTEGER);
SELECT COUNT(*) FROM r, s, t WHERE r.b = s.b AND s.c = t.c
"""


class HandWritten:
    """COUNT(*) of R ⋈ S ⋈ T maintained by hand: per-key counts, S indexed
    both ways, and the two partial sums a trigger program needs."""

    def __init__(self, on_delta=None):
        self.on_delta = on_delta
        self.rows = {"r": {}, "s": {}, "t": {}}
        self.r_by_b, self.t_by_c = {}, {}
        self.s_c_by_b, self.s_b_by_c = {}, {}
        self.sw = {}  # b -> sum over s(b, c) of |t with c|
        self.sr = {}  # c -> sum over s(b, c) of |r with b|
        self.count = 0

    def apply(self, rel, row, d):
        store = self.rows[rel]
        before = self.count
        n = store.get(row, 0) + d
        if n < 0:
            raise ValueError("absent")
        if n:
            store[row] = n
        else:
            del store[row]
        if rel == "r":
            b = row[1]
            self.count += d * self.sw.get(b, 0)
            self.r_by_b[b] = self.r_by_b.get(b, 0) + d
            for c, m in self.s_c_by_b.get(b, {}).items():
                self.sr[c] = self.sr.get(c, 0) + d * m
        elif rel == "t":
            c = row[0]
            self.count += d * self.sr.get(c, 0)
            self.t_by_c[c] = self.t_by_c.get(c, 0) + d
            for b, m in self.s_b_by_c.get(c, {}).items():
                self.sw[b] = self.sw.get(b, 0) + d * m
        else:
            b, c = row
            rb, tc = self.r_by_b.get(b, 0), self.t_by_c.get(c, 0)
            self.count += d * rb * tc
            self.sw[b] = self.sw.get(b, 0) + d * tc
            self.sr[c] = self.sr.get(c, 0) + d * rb
            g = self.s_c_by_b.setdefault(b, {})
            g[c] = g.get(c, 0) + d
            g = self.s_b_by_c.setdefault(c, {})
            g[b] = g.get(b, 0) + d
        if self.on_delta is not None and self.count != before:
            self.on_delta((before,), -1)
            self.on_delta((self.count,), 1)

    def insert(self, rel, row):
        self.apply(rel, row, 1)

    def delete(self, rel, row):
        self.apply(rel, row, -1)


def stream(inserts, deletes, seed=0, keys=1000):
    """`inserts` inserts and `deletes` deletes of live rows, interleaved at
    random (a delete never before its row's insert)."""
    rnd = random.Random(seed)
    live, events = [], []
    while inserts or deletes:
        if live and deletes and rnd.random() < deletes / (inserts + deletes):
            j = rnd.randrange(len(live))
            live[j], live[-1] = live[-1], live[j]
            events.append((*live.pop(), -1))
            deletes -= 1
        else:
            rel = rnd.choice("rst")
            row = (rnd.randint(1, keys), rnd.randint(1, keys))
            live.append((rel, row))
            events.append((rel, row, 1))
            inserts -= 1
    return events


def timed(view, events):
    insert, delete = view.insert, view.delete
    start = time.perf_counter()
    for rel, row, op in events:
        if op > 0:
            insert(rel, row)
        else:
            delete(rel, row)
    return len(events) / (time.perf_counter() - start)


class Sink:
    """Counts the changes a push-mode view reports."""

    def __init__(self):
        self.changes = 0

    def __call__(self, row, mult):
        self.changes += 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inserts", type=int, default=160_000)
    parser.add_argument("--deletes", type=int, default=40_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--push", action="store_true", help="report every change to a sink"
    )
    parser.add_argument(
        "--trust-input", action="store_true", help="compile the module trusting"
    )
    args = parser.parse_args()
    module = dynyan.load(SQL, trust_input=args.trust_input)
    events = stream(args.inserts, args.deletes)
    gen, hand = [], []
    for _ in range(args.runs):  # alternate, so both see the same machine
        sinks = (Sink(), Sink()) if args.push else (None, None)
        view = module.View(on_delta=sinks[0], push=args.push)
        if args.push:  # not the empty table's (0,), reported on construction
            sinks[0].changes = 0
        gen.append(timed(view, events))
        h = HandWritten(on_delta=sinks[1])
        hand.append(timed(h, events))
        assert list(view.rows()) == [(h.count,)], (list(view.rows()), h.count)
        if args.push:
            assert sinks[0].changes == sinks[1].changes, [s.changes for s in sinks]
    g, h = statistics.median(gen), statistics.median(hand)
    mode = "push" if args.push else "pull"
    print(
        f"{mode}, {len(events):,} events: generated {g:,.0f} events/s, "
        f"hand-written {h:,.0f} events/s (medians of {args.runs}); "
        f"generated time / hand-written time = {h / g:.2f}"
    )


if __name__ == "__main__":
    main()
