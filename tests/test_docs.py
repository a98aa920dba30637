"""Docstring examples are executed: every module's doctests must pass."""

import doctest
import importlib

import pytest

MODULES = [
    "dynyan",
    "dynyan.compiler.frontend",
    "dynyan.compiler.planner",
    "dynyan.compiler.ir",
    "dynyan.compiler.render",
]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    result = doctest.testmod(
        importlib.import_module(name), optionflags=doctest.ELLIPSIS
    )
    assert result.failed == 0
