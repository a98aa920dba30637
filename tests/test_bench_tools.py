"""The benchmark's diagnostic scripts (bench/work_growth.py,
bench/retained.py) on tiny inputs."""

from __future__ import annotations

import sys
from pathlib import Path

import dynyan

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import retained  # noqa: E402
import work_growth  # noqa: E402

SQL = (
    "CREATE TABLE r (a INTEGER, b INTEGER); CREATE TABLE s (b INTEGER, c INTEGER);"
    "SELECT r.a, s.c FROM r, s WHERE r.b = s.b"
)


def test_lines_per_event_follow_the_work_of_the_join():
    """An r row with no s row to meet stops at its leaf; once every s row is
    in, each r row reaches the root: more lines per event, counted only in
    the module's code."""
    module = dynyan.load(SQL, trust_input=True)
    lonely = [("r", 1, (i, i)) for i in range(100)]
    partners = [("s", 1, (i, i)) for i in range(100, 200)]
    met = [("r", 1, (i, i)) for i in range(100, 200)]
    events = lonely + partners + met
    lines = work_growth.lines_per_event(module, events, span=100, sample=5)
    assert len(lines) == 3 and all(n > 0 for n in lines)
    assert lines[2] > lines[0]
    rates = work_growth.timed(module, events, span=100)
    assert len(rates) == 3 and all(r > 0 for r in rates)


def test_retained_memory_counts_the_input_rows_a_system_keeps():
    """Rows are decoded inside the traced window: a system that keeps the
    rows it is given retains their memory, one that drops them does not."""

    class Keeper:
        def __init__(self):
            self.events, self.rows = [], []

        def apply(self, lo, hi):
            self.rows.extend(row for _, _, row in self.events[lo:hi])

    class Dropper(Keeper):
        def apply(self, lo, hi):
            pass

    events = [("r", 1, ("x" * 100 + str(i), i)) for i in range(20_000)]

    def build(system, sink):
        return Keeper() if system == "keep" else Dropper()

    kept, peak = retained.retained(build, "keep", events, push=False)
    dropped, _ = retained.retained(build, "drop", events, push=False)
    assert kept > 2.0 and peak >= kept  # MiB: 20,000 rows of ~230 bytes
    assert dropped < 0.5
