"""Docstring examples are executed: every module's doctests must pass."""

import doctest
import importlib

import pytest

MODULES = ["dynyan", "dynyan.sql", "dynyan.plan", "dynyan.ir", "dynyan.codegen"]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    result = doctest.testmod(
        importlib.import_module(name), optionflags=doctest.ELLIPSIS
    )
    assert result.failed == 0
