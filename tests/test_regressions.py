"""Regression fixtures: shrunk failures of the differential fuzzer.

Each file in tests/fixtures/regressions/ is a query file (first line: what
it tests) whose comment lines give the mode (`-- mode: pull|push`), the
updates (`-- update REL [(row, mult), ...]`, one batch per line) and, for a
bug that is not fixed yet, `-- xfail: <the bug>`. The test replays the
updates and checks the view against DuckDB after every batch
(tests/fuzzrun.py `check_fixture`); an xfail is strict, so a fixed bug
shows up as XPASS: then delete its xfail line and its entry in
tests/fuzzrun.py KNOWN_BUGS.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from differential import DifferentialFailure
from fuzzrun import check_fixture, parse_fixture

FIXTURES = sorted((Path(__file__).parent / "fixtures" / "regressions").glob("*.sql"))


def _param(path: Path):
    fx = parse_fixture(path.read_text())
    marks = []
    if fx["xfail"]:  # the bug is seen by the harness, not another crash
        marks.append(
            pytest.mark.xfail(
                strict=True, raises=DifferentialFailure, reason=fx["xfail"]
            )
        )
    return pytest.param(path, id=path.stem, marks=marks)


def test_there_are_regression_fixtures():
    assert FIXTURES


@pytest.mark.parametrize("path", [_param(p) for p in FIXTURES])
def test_regression_fixture(path):
    text = path.read_text()
    assert text.startswith("-- "), f"{path.name}: first line must say what it tests"
    check_fixture(text)
