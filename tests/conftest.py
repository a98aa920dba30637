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
