"""No SQL text may become code: names and literals round-trip as data."""

import ast
import datetime

import pytest

import dynyan
from dynyan.compiler import compile_sql

NASTY = [
    "it's",
    'say "hi"',
    "back\\slash",
    "new\nline",
    '"""',
    "'''",
    "__import__('os').system('echo pwned')",
    "\\'; import os #",
    "tab\tand\rreturn",
]


@pytest.mark.parametrize("text", NASTY)
def test_string_literals_round_trip_as_data(text):
    literal = "'" + text.replace("'", "''") + "'"
    sql = f"CREATE TABLE r (a INT, s VARCHAR); SELECT a, s FROM r WHERE s = {literal} OR s LIKE {literal}"
    view = dynyan.load(sql).View()
    view.insert("r", (1, text))
    view.insert("r", (2, text + "x"))
    assert list(view.rows()) == [(1, text)]


@pytest.mark.parametrize(
    "name",
    [
        'weird "name"',
        "class",
        "line\nbreak",
        "naïve",
        "x; import os",
        "__import__",
        "1abc",
        "d",
    ],
)
def test_quoted_identifiers_round_trip(name):
    quoted = '"' + name.replace('"', '""') + '"'
    sql = f"CREATE TABLE {quoted} ({quoted} INT, b INT); SELECT {quoted}, b FROM {quoted} WHERE b > 1"
    module = dynyan.load(sql)
    lowered = name.lower()
    assert list(module.View.RELATIONS) == [lowered]
    view = module.View()
    view.insert(lowered, (5, 2))
    view.insert(lowered, (6, 1))
    assert list(view.rows()) == [(5, 2)]
    assert module.View.COLUMNS[0] == lowered


def test_user_text_appears_only_in_string_literals_and_comments():
    payload = "__import__('os').system('x')"
    sql = f"CREATE TABLE r (a INT, s VARCHAR); SELECT a FROM r WHERE s <> '{payload.replace(chr(39), chr(39) * 2)}'"
    source = compile_sql(sql)
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            assert node.func.id != "__import__"
    code_lines = [l for l in source.splitlines() if not l.lstrip().startswith("#")]
    for line in code_lines:
        if payload in line:
            assert repr(payload) in line  # inside a repr'd literal


def test_dates_are_literals():
    view = dynyan.load(
        "CREATE TABLE r (a INT, d DATE); SELECT a FROM r WHERE d >= DATE '1995-03-15' + INTERVAL '1' MONTH"
    ).View()
    view.insert("r", (1, datetime.date(1995, 4, 15)))
    view.insert("r", (2, datetime.date(1995, 4, 14)))
    assert list(view.rows()) == [(1,)]
