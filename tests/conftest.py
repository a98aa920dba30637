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


@pytest.fixture(scope="session", autouse=True)
def _black_formats_each_text_once():
    """black takes most of a compile's time, and the suite compiles the same
    queries in many files. `black.format_str` is a pure function of the text
    and the mode, so each text is formatted once per worker; the renderer's
    output (and so every determinism and golden-file check) is unchanged."""
    import black

    original = black.format_str
    formatted: dict[tuple[str, str, tuple], str] = {}

    def format_str(src_contents: str, *, mode: black.Mode, lines=()) -> str:
        key = (src_contents, mode.get_cache_key(), tuple(lines))
        if key not in formatted:
            formatted[key] = original(src_contents, mode=mode, lines=lines)
        return formatted[key]

    black.format_str = format_str
    yield
    black.format_str = original


def pytest_collection_modifyitems(config, items):
    """Offline tests (``@pytest.mark.long``, minutes each) run only when asked
    for: ``-m long``. (``slow`` tests, tens of seconds, run in CI.)"""
    if "long" in (config.getoption("markexpr") or ""):
        return
    skip = pytest.mark.skip(reason="long: run with -m long")
    for item in items:
        if "long" in item.keywords:
            item.add_marker(skip)
