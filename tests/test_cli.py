"""The command line: outputs, one-line errors with exit code 2, no partial files."""

import subprocess
import sys
from pathlib import Path

import pytest

from dynyan.cli import main

ROOT = Path(__file__).resolve().parent.parent


def run(*args, cwd=ROOT):
    return subprocess.run(
        [sys.executable, str(ROOT / "cli.py"), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
    )


def test_compile_writes_module(tmp_path):
    out = tmp_path / "fq4.py"
    assert main(["compile", str(ROOT / "queries/tpch/fq4.sql"), "-o", str(out)]) == 0
    assert "class View" in out.read_text()


def test_explain_reports_simple_plan_for_fq4(capsys):
    assert main(["explain", str(ROOT / "queries/tpch/fq4.sql")]) == 0
    text = capsys.readouterr().out
    assert "simple GJT (q-hierarchical)" in text and "frontier" in text


def test_explain_reports_non_simple_plan_for_fq1(capsys):
    assert main(["explain", str(ROOT / "queries/tpch/fq1.sql")]) == 0
    assert "non-simple GJT" in capsys.readouterr().out


BAD = {
    "syntax": (
        "CREATE TABLE r (a INT);\nSELECT a FROM r WHERE a = = 1",
        "line 2, column",
    ),
    "unknown_column": (
        "CREATE TABLE r (a INT);\nSELECT zz FROM r",
        "unknown column zz",
    ),
    "unknown_table": ("CREATE TABLE r (a INT);\nSELECT * FROM q", "unknown table q"),
    "ambiguous": (
        "CREATE TABLE r (a INT); CREATE TABLE s (a INT);\nSELECT a FROM r, s",
        "ambiguous column a",
    ),
    "cyclic": (
        "CREATE TABLE r (a INT, b INT); CREATE TABLE s (b INT, c INT); CREATE TABLE t (c INT, a INT);"
        "SELECT * FROM r, s, t WHERE r.b = s.b AND s.c = t.c AND t.a = r.a",
        "cyclic",
    ),
    "outer_join": (
        "CREATE TABLE r (a INT); CREATE TABLE s (a INT);\nSELECT * FROM r LEFT JOIN s ON r.a = s.a",
        "LEFT JOIN",
    ),
    "union": (
        "CREATE TABLE r (a INT);\nSELECT a FROM r UNION SELECT a FROM r",
        "UNION",
    ),
    "two_queries": (
        "CREATE TABLE r (a INT);\nSELECT a FROM r; SELECT a FROM r",
        "several queries",
    ),
    "empty": ("", "no SELECT"),
    "order_by": ("CREATE TABLE r (a INT);\nSELECT a FROM r ORDER BY a", "ORDER BY"),
    "type_mismatch": (
        "CREATE TABLE r (a INT);\nSELECT a FROM r WHERE a = 'x'",
        "type mismatch",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_queries_fail_in_one_line_without_output(case, tmp_path):
    sql, expected = BAD[case]
    query = tmp_path / "q.sql"
    query.write_text(sql)
    out = tmp_path / "out.py"
    result = run("compile", str(query), "-o", str(out))
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert expected in lines[0]
    assert not out.exists()


def test_failed_compile_keeps_existing_output(tmp_path):
    query = tmp_path / "q.sql"
    query.write_text("CREATE TABLE r (a INT);\nSELECT zz FROM r")
    out = tmp_path / "out.py"
    out.write_text("previous")
    assert run("compile", str(query), "-o", str(out)).returncode == 2
    assert out.read_text() == "previous"
