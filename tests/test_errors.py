"""The compiler's input corpus: every file in tests/fixtures/errors/ must be
refused by `dynyan compile` cleanly.

Each fixture holds one bad query. Its first line is ``-- expect: TEXT`` (a
substring of the error message); an optional second line ``-- xfail: WHY``
marks a known, reported compiler bug (the test is a strict xfail, so it fails
loudly once the bug is fixed and the marker can go). For every fixture the
real command runs in a subprocess and must

* exit with code 2,
* print nothing on stdout and exactly one line on stderr, ``dynyan: error: …``
  containing the expected text, with no traceback,
* leave an existing output file untouched and create no other file (no
  partial module, no leftover temporary file).

The corpus runs through the command's entry point (`dynyan.cli.main`) in
this process, one fixture after another: an exception that escapes it is
what would print a traceback and exit 1. A few fixtures also run as real
subprocesses (`test_default_output_path_is_not_created`; tests/test_cli.py
runs more), so the process boundary is covered without paying an
interpreter start-up per fixture.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
import traceback
from pathlib import Path

import pytest

from dynyan.cli import main

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "errors"
SENTINEL = "# previous contents, must survive a failed compile\n"


def read_header(path: Path) -> tuple[str, str | None]:
    """(expected text, xfail reason or None) from a fixture's first lines."""
    lines = path.read_bytes().decode("utf-8", errors="replace").splitlines()
    m = re.fullmatch(r"-- expect: (.*\S)", lines[0]) if lines else None
    assert m, f"{path.name}: first line must be '-- expect: <text>'"
    xfail = None
    if len(lines) > 1 and lines[1].startswith("-- xfail:"):
        xfail = lines[1][len("-- xfail:") :].strip()
    return m.group(1), xfail


CASES = sorted(FIXTURES.glob("*.sql"))


def compile_cmd(query: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "dynyan.cli", "compile", str(query), *extra]


def run_case(query: Path, workdir: Path) -> dict:
    """`dynyan compile QUERY -o OUT` with OUT an existing file inside
    `workdir`, as the command runs it: exit code, output, what is left."""
    workdir.mkdir(parents=True, exist_ok=True)
    out = workdir / "out.py"
    out.write_text(SENTINEL)
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        try:
            returncode = main(["compile", str(query), "-o", str(out)])
        except SystemExit as exit_:  # argparse
            returncode = exit_.code
        except BaseException:  # noqa: BLE001 - what the interpreter would print
            traceback.print_exc()
            returncode = 1
    return {
        "returncode": returncode,
        "stdout": stdout.getvalue(),
        "stderr": stderr.getvalue(),
        "out": out.read_text(),
        "files": sorted(p.name for p in workdir.iterdir()),
    }


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """Every fixture compiled once."""
    base = tmp_path_factory.mktemp("errors")
    return {q.name: run_case(q, base / q.stem) for q in CASES}


def test_corpus_is_well_formed():
    assert len(CASES) >= 60
    numbers = [p.name.split("_", 1)[0] for p in CASES]
    assert len(set(numbers)) == len(numbers), "fixture numbers must be unique"
    for path in CASES:
        assert re.fullmatch(r"\d\d+_[a-z0-9_]+\.sql", path.name), path.name
        read_header(path)


def _params():
    out = []
    for path in CASES:
        _, xfail = read_header(path)
        marks = [pytest.mark.xfail(reason=xfail, strict=True)] if xfail else []
        out.append(pytest.param(path, id=path.stem, marks=marks))
    return out


@pytest.mark.parametrize("path", _params())
def test_refused_in_one_line(path, results):
    expected, _ = read_header(path)
    r = results[path.name]
    detail = f"exit {r['returncode']}\nstdout: {r['stdout']!r}\nstderr:\n{r['stderr']}"
    assert "Traceback" not in r["stderr"], detail
    assert r["returncode"] == 2, detail
    assert r["stdout"] == "", detail
    lines = r["stderr"].splitlines()
    assert len(lines) == 1, detail
    assert lines[0].startswith("dynyan: error: "), detail
    assert expected in lines[0], f"expected {expected!r} in the message\n{detail}"
    for internal in ("sqlglot", "<class ", "<Token ", "Required keyword"):
        assert internal not in lines[0], f"sqlglot's internals in the message\n{detail}"
    assert r["out"] == SENTINEL, "the existing output file was overwritten"
    assert r["files"] == ["out.py"], f"stray files: {r['files']}"


def fixture(stem_suffix: str) -> Path:
    """The fixture whose name ends in `stem_suffix` (numbers may shift)."""
    (path,) = [p for p in CASES if p.stem.split("_", 1)[1] == stem_suffix]
    return path


@pytest.mark.parametrize("name", ["unknown_table", "inequality_triangle", "empty_file"])
def test_default_output_path_is_not_created(name, tmp_path):
    """Without -o the module would go to ./generated/<stem>.py: not on failure."""
    proc = subprocess.run(
        compile_cmd(fixture(name)),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        timeout=300,
    )
    assert proc.returncode == 2, proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_syntax_error_position_is_the_faulty_token(results):
    """Line and column count from 1 in the file as written (header included):
    the second AND of `WHERE r.b = s.b AND AND s.e = 1` is at line 8."""
    path = fixture("syntax_double_and")
    m = re.search(r"line (\d+), column (\d+):", results[path.name]["stderr"])
    assert m, results[path.name]["stderr"]
    line, col = int(m.group(1)), int(m.group(2))
    text = path.read_text().splitlines()[line - 1]
    assert text.startswith("WHERE r.b = s.b AND AND")
    assert text[col - 3 : col] == "AND" and col > len("WHERE r.b = s.b AND")


TYPED = "CREATE TABLE r (a INTEGER, b INTEGER, c VARCHAR, d DATE, p DECIMAL(10, 2));"


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT a * p AS x, a / 2 AS y, -p AS z, ABS(a - p) AS w FROM r",
        "SELECT a FROM r WHERE a",  # DuckDB reads a number as a condition
        "SELECT a FROM r WHERE p > 1 AND a = 1.0",
        "SELECT CASE WHEN a > 1 THEN p ELSE 0 END AS x FROM r",
        "SELECT CASE WHEN a > 1 THEN 'x' END AS x FROM r",  # ELSE NULL
        "SELECT a FROM r WHERE d IN ('2020-01-02', DATE '2020-01-03')",
        "SELECT a FROM r WHERE d + INTERVAL 1 DAY > '2020-01-02'",
        "SELECT a || c AS x FROM r",  # DuckDB casts || operands to VARCHAR
        "SELECT EXTRACT(YEAR FROM d) AS y, SUM(p * (1 - a)) AS s FROM r "
        "GROUP BY EXTRACT(YEAR FROM d)",
        "SELECT b, MAX(d) AS m FROM r GROUP BY b HAVING MAX(d) > '2020-01-01'",
        "SELECT COUNT(*) AS n FROM r HAVING COUNT(*) > 1",
        "SELECT a FROM r WHERE SUBSTRING(UPPER(c), 1, 1) = 'X' AND c LIKE 'x%'",
        "SELECT a FROM r WHERE a IN (b, b + 1, 3) AND (a, c) IN ((1, 'x'), (b, c))",
        "SELECT d FROM r WHERE d IN (d + 1, '2020-01-01')",  # a string read as DATE
        "SELECT TRY_CAST(c AS INTEGER) + a AS x, CAST(c AS DATE) AS y FROM r",
        "SELECT DATE_DIFF('month', d, DATE '2020-01-01') AS x, LN(p) AS y FROM r",
        "SELECT LPAD(c, a, '0') AS x, CONCAT_WS('-', c, a, d) AS y FROM r",
    ],
)
def test_valid_mixes_of_types_compile(sql):
    """The type check refuses only what DuckDB refuses or what the generated
    Python would compute differently: these all compile (TPC-H and TPC-DS in
    queries/ are checked by the other tests)."""
    from dynyan.compiler import compile_query

    compile_query(TYPED + sql)


def test_a_table_in_a_default_schema_is_the_declared_table():
    """`public.r` (PostgreSQL's default schema, as a query `dynyan follow`
    reads may name it) and `main.r` (DuckDB's) are the declared table r; a
    table of another schema is not (fixture 224 checks main.r against
    DuckDB)."""
    from dynyan.compiler import load
    from dynyan.errors import SqlError

    schema = "CREATE TABLE r (a INTEGER, b INTEGER);"
    plain = load(schema + "SELECT a, SUM(b) AS s FROM r GROUP BY a").View()
    named = load(
        schema + "SELECT r.a, SUM(x.b) AS s FROM public.r JOIN main.r AS x "
        "ON x.a = r.a GROUP BY r.a"
    ).View()
    for view in (plain, named):
        view.update("r", [(1, 2), (1, 3), (2, 5)])
    assert sorted(plain.rows()) == [(1, 5), (2, 5)]
    assert sorted(named.rows()) == [(1, 10), (2, 5)]  # two rows of a = 1 each
    with pytest.raises(SqlError, match="unknown table other.r"):
        load(schema + "SELECT a FROM other.r")
