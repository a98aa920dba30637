"""The benchmark queries as the specifications write them (queries/tpch/spec/,
queries/tpcds/spec/) and the support table made from them
(docs/sql-support.md, by scripts/tpcds_support.py).

Every text must run in DuckDB against its schema (empty tables), so that a
typo in a text fails here and not in the table; the table must be what the
current compiler says, so that it fills itself as features land."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import duckdb
import pytest

from dynyan.cli.compile import default_output
from dynyan.compiler.source import read_query

ROOT = Path(__file__).resolve().parent.parent
TPCH = sorted((ROOT / "queries" / "tpch" / "spec").glob("*.sql"))
TPCDS = sorted((ROOT / "queries" / "tpcds" / "spec").glob("*.sql"))
TWO_STATEMENTS = {14, 23, 24, 39}  # TPC-DS queries with two queries (a, b)


def _support_script():
    spec = importlib.util.spec_from_file_location(
        "tpcds_support", ROOT / "scripts" / "tpcds_support.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_the_spec_directories_hold_every_query():
    assert {p.stem for p in TPCH} == {f"q{n}" for n in range(1, 23)}
    expected = {
        name
        for n in range(1, 100)
        for name in (
            [f"q{n:02d}a", f"q{n:02d}b"] if n in TWO_STATEMENTS else [f"q{n:02d}"]
        )
    }
    assert {p.stem for p in TPCDS} == expected


@pytest.mark.parametrize(
    "path", TPCH + TPCDS, ids=lambda p: f"{p.parent.parent.name}/{p.stem}"
)
def test_spec_query_has_a_header_and_runs_in_duckdb(path):
    sql, schema = read_query(str(path), None)
    benchmark = "TPC-DS" if path.parent.parent.name == "tpcds" else "TPC-H"
    number = int(re.match(r"q(\d+)", path.stem).group(1))
    first = sql.splitlines()[0]
    assert first.startswith(f"-- {benchmark} Q{number}"), first
    assert "specification" in first, first
    assert schema is not None, f"{path}: no schema found"
    con = duckdb.connect()
    con.execute(schema)
    results = [con.execute(s.query) for s in con.extract_statements(sql)]
    assert results and results[-1].description is not None  # ends in a query
    con.close()


def test_support_table_is_fresh(monkeypatch):
    support = _support_script()
    # A query with a committed module compiles (tests/test_generated.py checks
    # that exactly those do, and that each module is fresh): only the others
    # are compiled here, for their refusals.
    refusal = support.refusal
    monkeypatch.setattr(
        support,
        "refusal",
        lambda path: (
            None if (ROOT / default_output(str(path))).exists() else refusal(path)
        ),
    )
    text = support.render(support.verdicts(ROOT))
    committed = (ROOT / "docs" / "sql-support.md").read_text()
    assert (
        committed == text
    ), "docs/sql-support.md is stale: run scripts/tpcds_support.py"


def test_refusal_kind_drops_position_and_quote():
    support = _support_script()
    message = (
        "line 3, column 9: ORDER BY (a view's result is unordered) is not "
        "supported (ORDER BY COUNT(DISTINCT x))"
    )
    assert support.reason(message) == (
        "ORDER BY (a view's result is unordered) is not supported"
    )
    cut = "subqueries are not supported ((SELECT AVG(x) FROM t WHERE y )"
    assert support.reason(cut) == "subqueries are not supported"
    assert support.reason("LIMIT is not supported") == "LIMIT is not supported"
    assert support.shown("a | b") == "a \\| b"


def test_q1_with_the_specifications_interval_precision():
    """The specification writes Q1's `interval ':1' day (3)`: a leading field
    precision that DuckDB's parser refuses (queries/tpch/spec/q1.sql drops
    it) and dynyan reads as the most digits the amount may have. Rows shipped
    on either side of 1998-09-02 land in the same groups either way."""
    import datetime

    from dynyan.compiler import load

    sql, schema = read_query(str(ROOT / "queries" / "tpch" / "spec" / "q1.sql"), None)
    assert "interval '90' day\n" in sql
    views = [
        load(text, schema, trust_input=True).View()
        for text in (sql, sql.replace("interval '90' day", "interval '90' day (3)"))
    ]
    for day in (1, 2, 3):  # 1998-09-02 is the last date taken
        row = [0, 0, 0, 0, 2.0, 10.0, 0.1, 0.0, "A", "F"]
        row += [datetime.date(1998, 9, day), None, None, "", "", ""]
        for view in views:
            view.insert("lineitem", tuple(row))
    ours, specs = (list(view.rows()) for view in views)
    assert ours == specs
    assert [row[-1] for row in specs] == [2]  # count_order: two rows taken
    with pytest.raises(Exception, match="precision in parentheses"):
        load(sql.replace("interval '90' day", "interval '1000' day (3)"), schema)
