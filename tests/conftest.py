"""Shared fixtures. The SparkSession is created once per test session (per
xdist worker), lazily: only tests that ask for ``spark`` pay its start-up."""

from __future__ import annotations

import shutil

import pytest


@pytest.fixture(scope="session")
def spark():
    """One SparkSession for the whole run: local[2], 2 shuffle partitions, no UI."""
    pytest.importorskip("pyspark", reason="pyspark not installed (extra 'test')")
    if shutil.which("java") is None:
        pytest.skip("Spark needs Java 17+ and there is no `java` on PATH")
    from dynyan.pipeline.streams import spark_session

    session = spark_session(app="dynyan-tests")
    yield session
    session.stop()


def pytest_collection_modifyitems(config, items):
    """Long tests (``@pytest.mark.slow``) run only when asked for: ``-m slow``."""
    if "slow" in (config.getoption("markexpr") or ""):
        return
    skip = pytest.mark.skip(reason="slow: run with -m slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
