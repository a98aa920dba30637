"""Generated code against a careful hand-written trigger program for the same
query, in one process on the same pre-built stream (the 1.5x budget).

    .venv/bin/python bench/handwritten.py --events 200000 --runs 5

Query: SELECT COUNT(*) FROM r, s, t WHERE r.b = s.b AND s.c = t.c, single-tuple
inserts and deletes (20%) with keys drawn from 1..1000.
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

    def __init__(self):
        self.rows = {"r": {}, "s": {}, "t": {}}
        self.r_by_b, self.t_by_c = {}, {}
        self.s_c_by_b, self.s_b_by_c = {}, {}
        self.sw = {}  # b -> sum over s(b, c) of |t with c|
        self.sr = {}  # c -> sum over s(b, c) of |r with b|
        self.count = 0

    def apply(self, rel, row, d):
        store = self.rows[rel]
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

    def insert(self, rel, row):
        self.apply(rel, row, 1)

    def delete(self, rel, row):
        self.apply(rel, row, -1)


def stream(n, seed=0, keys=1000):
    rnd = random.Random(seed)
    live, events = [], []
    for i in range(n):
        if live and rnd.random() < 0.2:
            j = rnd.randrange(len(live))
            live[j], live[-1] = live[-1], live[j]
            events.append((*live.pop(), -1))
        else:
            rel = rnd.choice("rst")
            row = (rnd.randint(1, keys), rnd.randint(1, keys))
            live.append((rel, row))
            events.append((rel, row, 1))
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    module = dynyan.load(SQL)
    events = stream(args.events)
    gen, hand = [], []
    for _ in range(args.runs):  # alternate, so both see the same machine
        view = module.View()
        gen.append(timed(view, events))
        h = HandWritten()
        hand.append(timed(h, events))
        assert list(view.rows()) == [(h.count,)], (list(view.rows()), h.count)
    g, h = statistics.median(gen), statistics.median(hand)
    print(
        f"generated {g:,.0f} events/s, hand-written {h:,.0f} events/s (medians of {args.runs}); hand/generated = {h / g:.2f}x"
    )


if __name__ == "__main__":
    main()
