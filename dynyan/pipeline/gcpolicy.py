"""The garbage-collector policy of long replays (`dynyan replay`, and the
benchmark harness for every Python system alike).

A view holds millions of dicts, lists and tuples. CPython's cyclic
collector traverses every tracked container in a full (generation 2)
collection, and the more objects survive, the more such collections there
are: replaying 3 M events of TPC-H FQ1 at SF 1 spent 158 of 274 s in them
(BENCHMARKS.md, "GC policy"). Nearly none of that state is garbage in a
reference cycle; it is freed by reference counting when a row leaves.

The policy: collect once and `gc.freeze()` before the stream starts (the
loaded stream, the compiled module), then freeze again every `every`
events (default `FREEZE_EVERY`), moving what survived into the permanent
generation, which collections never traverse. Young objects are still
collected as usual. The cost: garbage in reference cycles made before a
freeze stays until `release()` (unfreeze and collect), e.g. a dropped View
(its `_appliers` hold bound methods of itself).

Why often: a freeze empties the oldest generation, and CPython runs a full
collection once the objects that reach it exceed a quarter of what it holds
-- soon after a freeze. Every full collection then traverses what survived
since the last freeze, so the interval sets its cost (BENCHMARKS.md, "GC
policy", 2026-11-25: TPC-H FQ1 about 1.2-1.5x faster every 10,000 events
than every 100,000, as fast as with the collector off). gc.freeze() itself
traverses nothing.
"""

from __future__ import annotations

import gc

FREEZE_EVERY = 10_000


class GCPolicy:
    """Freeze the surviving heap every `every` events (0: CPython's default
    collector, nothing frozen)."""

    def __init__(self, every: int = FREEZE_EVERY):
        if every < 0:
            raise ValueError(f"freeze interval must be >= 0 events, got {every}")
        self.every = every
        self.next = every

    def start(self, done: int = 0) -> None:
        """Before the stream (after loading it): collect, then freeze."""
        if self.every:
            gc.collect()
            gc.freeze()
            self.next = (done // self.every + 1) * self.every

    def step(self, done: int) -> None:
        """After `done` events in all: freeze when a multiple of `every` was
        passed (cheap: gc.freeze() moves lists, it traverses nothing)."""
        if self.every and done >= self.next:
            gc.freeze()
            self.next = (done // self.every + 1) * self.every

    def release(self) -> None:
        """After the stream: let the collector see everything again."""
        if self.every:
            gc.unfreeze()
            gc.collect()
