"""Enumeration touches only tuples that contribute to the result.

Black-box and time-independent: run `view.enumerate()` (and `view.rows()`)
under `sys.settrace` and count the Python line events executed in the
generated module's frames (tests/tracing.py). The count is deterministic, so
adding 10,000 dangling tuples (tuples that join with nothing, or only part of
the way) must leave it exactly unchanged. A view that scans a relation or
filters at enumeration time would execute lines per dangling tuple and fail.
"""

from __future__ import annotations

from collections import Counter

import pytest

from tracing import count_lines

TWO_WAY = """
CREATE TABLE r (a INTEGER NOT NULL, b INTEGER NOT NULL);
CREATE TABLE s (b INTEGER NOT NULL, c INTEGER NOT NULL);
SELECT * FROM r, s WHERE r.b = s.b;
"""

PROJECTED = """
CREATE TABLE r (a INTEGER NOT NULL, b INTEGER NOT NULL);
CREATE TABLE s (b INTEGER NOT NULL, c INTEGER NOT NULL);
SELECT r.a, r.b FROM r, s WHERE r.b = s.b;
"""

CHAIN = """
CREATE TABLE r (a INTEGER NOT NULL, b INTEGER NOT NULL);
CREATE TABLE s (b INTEGER NOT NULL, c INTEGER NOT NULL);
CREATE TABLE t (c INTEGER NOT NULL, d INTEGER NOT NULL);
SELECT * FROM r, s, t WHERE r.b = s.b AND s.c = t.c;
"""


def load(sql: str):
    import dynyan  # a missing compiler is a failure, not a skip

    return dynyan.load(sql)


def visits(view) -> tuple[int, int, Counter]:
    n_enum, pairs = count_lines(lambda: list(view.enumerate()))
    n_rows, rows = count_lines(lambda: list(view.rows()))
    assert sum(m for _, m in pairs) == len(rows)
    return n_enum, n_rows, Counter(rows)


def two_way_core(view) -> None:
    # 10 joining r tuples over b in 0..2, and s tuples for b in 0..2.
    view.update("r", [(i, i % 3) for i in range(10)])
    view.update("s", [(b, 100 + b) for b in range(3)] + [(1, 200)])


@pytest.mark.parametrize(
    "sql, dangling",
    [
        (TWO_WAY, "r"),
        (TWO_WAY, "s"),
        (TWO_WAY, "both"),
        (PROJECTED, "r"),
        (PROJECTED, "s"),
    ],
    ids=["join-r", "join-s", "join-both", "projection-r", "projection-s"],
)
def test_dangling_tuples_are_not_visited(sql, dangling):
    module = load(sql)

    def build(n_dangling: int):
        view = module.View()
        half = n_dangling // 2
        if dangling in ("r", "both"):
            view.update("r", [(-i, 10_000 + i) for i in range(half)])
        if dangling in ("s", "both"):
            view.update("s", [(50_000 + i, i) for i in range(half)])
        two_way_core(view)
        if dangling in ("r", "both"):
            view.update("r", [(-i, 10_000 + i) for i in range(half, n_dangling)])
        if dangling in ("s", "both"):
            view.update("s", [(50_000 + i, i) for i in range(half, n_dangling)])
        return view

    small = visits(build(10))
    large = visits(build(10_010))
    assert small[2] == large[2], "the dangling tuples changed the result"
    assert sum(small[2].values()) > 0
    assert large[0] == small[0], (
        f"enumerate() executed {small[0]} lines with 10 dangling tuples "
        f"and {large[0]} with 10,010"
    )
    assert (
        large[1] == small[1]
    ), f"rows() executed {small[1]} lines with 10 dangling tuples and {large[1]} with 10,010"


def test_partially_joining_tuples_are_not_visited():
    """3-chain: s tuples that join r but not t (and r tuples that join only
    such s tuples) are dangling too; enumeration must not touch them."""
    module = load(CHAIN)

    def build(n_dangling: int):
        view = module.View()
        view.update("r", [(i, i % 3) for i in range(10)])
        view.update("s", [(b, 50 + b) for b in range(3)])
        view.update("t", [(50 + c, c) for c in range(3)] + [(51, 7)])
        # s tuples joining r (b in 0..2) but no t tuple (c >= 1000)
        view.update("s", [(i % 3, 1000 + i) for i in range(n_dangling // 2)])
        # r tuples joining only dangling s tuples, and t tuples joining nothing
        view.update("s", [(5000 + i, 1000 + i) for i in range(n_dangling // 4)])
        view.update("r", [(-i, 5000 + i) for i in range(n_dangling // 4)])
        view.update("t", [(9000 + i, i) for i in range(n_dangling - n_dangling // 2)])
        return view

    small = visits(build(10))
    large = visits(build(10_010))
    assert small[2] == large[2]
    assert sum(small[2].values()) == 10 + 3  # each r tuple once, b=1 twice
    assert large[0] == small[0], (
        f"enumerate() executed {small[0]} lines with 10 dangling tuples "
        f"and {large[0]} with 10,010"
    )
    assert large[1] == small[1]


def test_visits_grow_with_the_result_not_the_database():
    """Sanity check of the counter itself: more result tuples, more lines."""
    module = load(TWO_WAY)
    view = module.View()
    two_way_core(view)
    before = visits(view)
    view.update("r", [(100 + i, 0) for i in range(50)])
    after = visits(view)
    assert after[0] > before[0]
