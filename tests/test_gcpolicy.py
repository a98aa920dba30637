"""The GC policy of long replays (dynyan.pipeline.gcpolicy) and the
harness's events/s per million events."""

import gc

import pytest

from bench.harness import rates_per_million
from dynyan.pipeline.gcpolicy import GCPolicy


@pytest.fixture
def unfrozen():
    gc.unfreeze()
    yield
    gc.unfreeze()


def test_policy_freezes_every_n_events(unfrozen):
    policy = GCPolicy(10)
    policy.start()
    frozen = gc.get_freeze_count()
    assert frozen > 0
    keep = [[i] for i in range(1000)]  # new containers, tracked
    policy.step(5)
    # not yet (frozen objects may still be freed: the count can only drop)
    assert gc.get_freeze_count() <= frozen
    policy.step(12)
    assert gc.get_freeze_count() >= frozen + len(keep)
    assert policy.next == 20
    policy.release()
    assert gc.get_freeze_count() == 0


def test_zero_keeps_the_default_collector(unfrozen):
    policy = GCPolicy(0)
    policy.start()
    policy.step(10**9)
    assert gc.get_freeze_count() == 0
    with pytest.raises(ValueError):
        GCPolicy(-1)


def test_rates_per_million():
    flat = [(i * 5000, i * 0.5) for i in range(1, 501)]  # 10,000 events/s
    assert rates_per_million(flat) == [10000.0, 10000.0, 10000.0]
    slower = flat[:200] + [(1_000_000 + i * 5000, 100 + i) for i in range(1, 241)]
    assert rates_per_million(slower) == [10000.0, 5000.0, 5000.0]
    assert rates_per_million([(50_000, 1.0)]) == []  # too short to say
