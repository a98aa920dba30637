"""Docstring examples are executed: every module's doctests must pass."""

import doctest
import importlib
import pkgutil

import pytest

import dynyan

MODULES = sorted(
    info.name
    for info in pkgutil.walk_packages(dynyan.__path__, "dynyan.")
    if not info.name.endswith("__main__")
)


def test_the_frontend_passes_have_examples():
    passes = [m for m in MODULES if ".frontend.passes." in m]
    assert len(passes) >= 4, passes


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    result = doctest.testmod(
        importlib.import_module(name), optionflags=doctest.ELLIPSIS
    )
    assert result.failed == 0
