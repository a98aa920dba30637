"""Range-sum structures on inequality edges: cost per operation as n grows.

Compares the B-tree with per-child totals that generated modules use now
(taken from a module compiled here) with the sorted blocks it replaced
(O(sqrt n) per operation, kept below for the comparison). Each run: n random
inserts, then n mixed operations (add at a random value, range sum over a
random interval). Prints microseconds per operation.

    .venv/bin/python bench/rangesum.py --sizes 1000 10000 100000 1000000
"""

import argparse
import random
import statistics
import time
from bisect import bisect_left, bisect_right

import dynyan

SQL = """
CREATE TABLE r (a INTEGER, b INTEGER); CREATE TABLE s (b INTEGER, c INTEGER);
CREATE TABLE t (c INTEGER, d INTEGER);
SELECT COUNT(*) AS n FROM r, s, t WHERE r.b = s.b AND s.c < t.d
"""


class BlockRangeSum:
    """Weights at sorted values with sums over value ranges: sorted blocks
    with per-block totals, O(sqrt n) per operation."""

    __slots__ = ("values", "weights", "totals", "maxes")
    LOAD = 64

    def __init__(self):
        self.values, self.weights, self.totals, self.maxes = [], [], [], []

    def add(self, value, w):
        """Add weight w at value; returns whether any weight is left."""
        maxes = self.maxes
        if not maxes:
            self.values.append([value])
            self.weights.append([w])
            self.totals.append(w)
            maxes.append(value)
            return True
        i = bisect_left(maxes, value)
        if i == len(maxes):
            i -= 1
        values, weights = self.values[i], self.weights[i]
        j = bisect_left(values, value)
        if j < len(values) and values[j] == value:
            if weights[j] + w:
                weights[j] += w
            else:
                del values[j], weights[j]
                if not values:
                    del self.values[i], self.weights[i], self.totals[i], maxes[i]
                    return bool(maxes)
        else:
            values.insert(j, value)
            weights.insert(j, w)
        self.totals[i] += w
        maxes[i] = values[-1]
        if len(values) > 2 * self.LOAD:
            half = len(values) // 2
            self.values[i + 1 : i + 1] = [values[half:]]
            self.weights[i + 1 : i + 1] = [weights[half:]]
            del values[half:], weights[half:]
            self.totals[i] = sum(weights)
            self.totals.insert(i + 1, sum(self.weights[i + 1]))
            maxes[i] = values[-1]
            maxes.insert(i + 1, self.values[i + 1][-1])
        return True

    def below(self, value, inclusive):
        """Total weight at values < value (<= if inclusive)."""
        find = bisect_right if inclusive else bisect_left
        i = find(self.maxes, value)
        total = sum(self.totals[:i])
        if i < len(self.maxes):
            total += sum(self.weights[i][: find(self.values[i], value)])
        return total

    def range(self, lo, lo_incl, hi, hi_incl):
        """Total weight at lo <(=) value <(=) hi; None is unbounded."""
        total = sum(self.totals) if hi is None else self.below(hi, hi_incl)
        if lo is not None:
            total -= self.below(lo, not lo_incl)
        return total


def measure(cls, n: int, seed: int) -> float:
    """Microseconds per operation for n operations on a structure of n values."""
    rng = random.Random(seed)
    rs = cls()
    for _ in range(n):
        rs.add(rng.randrange(4 * n), 1)
    ops = [(rng.randrange(4 * n), rng.randrange(4 * n), rng.random()) for _ in range(n)]
    start = time.perf_counter()
    for x, y, p in ops:
        if p < 0.5:
            rs.add(x, 1)
        else:
            rs.range(min(x, y), True, max(x, y), False)
    return (time.perf_counter() - start) / n * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    btree = dynyan.load(SQL)._RangeSum
    print(f"{'n':>9} {'B-tree µs/op':>13} {'blocks µs/op':>13} {'ratio':>6}")
    for n in args.sizes:
        new = statistics.median(measure(btree, n, s) for s in range(args.runs))
        old = statistics.median(measure(BlockRangeSum, n, s) for s in range(args.runs))
        print(f"{n:>9} {new:>13.2f} {old:>13.2f} {old / new:>6.2f}")


if __name__ == "__main__":
    main()
