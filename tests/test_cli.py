"""The command line: outputs, one-line errors with exit code 2, no partial files."""

import argparse
import os
import stat
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
    "cyclic": (  # a ring of 12 tables: no bags of 3 tables make it acyclic
        "".join(
            f"CREATE TABLE t{i} (a{i} INT, a{(i + 1) % 12} INT);" for i in range(12)
        )
        + "SELECT COUNT(*) AS n FROM "
        + ", ".join(f"t{i}" for i in range(12))
        + " WHERE "
        + " AND ".join(
            f"t{i}.a{(i + 1) % 12} = t{(i + 1) % 12}.a{(i + 1) % 12}" for i in range(12)
        ),
        "cyclic",
    ),
    "window_function": (
        "CREATE TABLE r (a INT);\nSELECT a, ROW_NUMBER() OVER () FROM r",
        "ROW_NUMBER() needs ORDER BY in its window",
    ),
    "tablesample": (
        "CREATE TABLE r (a INT);\nSELECT a FROM r TABLESAMPLE 10 PERCENT",
        "TABLESAMPLE",
    ),
    "two_queries": (
        "CREATE TABLE r (a INT);\nSELECT a FROM r; SELECT a FROM r",
        "several queries",
    ),
    "empty": ("", "no SELECT"),
    "type_mismatch": (
        "CREATE TABLE r (a INT);\nSELECT a FROM r WHERE a = 'x'",
        "type mismatch",
    ),
}


# The frontend's name pass passes sqlglot's own wording through for a column
# of a single-table SELECT list (the same column in WHERE says "unknown column").
SQLGLOT_WORDING = pytest.mark.xfail(
    strict=True, reason="'Column 'zz' could not be resolved' (frontend qualify pass)"
)


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(c, marks=SQLGLOT_WORDING) if c == "unknown_column" else c
        for c in sorted(BAD)
    ],
)
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


def test_query_without_schema_points_at_schema_options(tmp_path):
    """No CREATE TABLE, no --schema, no schema file nearby: the error says
    how to give one."""
    query = tmp_path / "q.sql"
    query.write_text("SELECT a FROM r")
    result = run("compile", str(query), "-o", str(tmp_path / "out.py"), cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    (line,) = result.stderr.splitlines()
    assert "unknown table r: no table is declared" in line
    assert "--schema FILE" in line and "-- schema: PATH" in line


SYNTAX = {
    "SELECT a FROM r WHERE a >": "`>` needs an expression on its right",
    "SELECT a FROM r WHERE a + 1 = ": "`=` needs an expression on its right",
    "SELECT a FROM r WHERE": "WHERE needs a condition after it",
    "SELECT a FROM r WHERE NOT": "NOT needs a condition after it",
    "SELECT a FROM r WHERE a BETWEEN 1": "BETWEEN needs both bounds",
    "SELECT a FROM": "expected table name, but the query ends",
    "SELECT a FROM r WHERE a IN (1, 2": "expected `)`",
    "SELECT a FROM r WHERE a > 1)": "unexpected `)`",
}


@pytest.mark.parametrize("select", sorted(SYNTAX))
def test_syntax_errors_speak_sql(select):
    """sqlglot's own terms (class names, token dumps) never reach the user."""
    from dynyan.compiler import compile_query
    from dynyan.errors import SqlError

    with pytest.raises(SqlError) as err:
        compile_query("CREATE TABLE r (a INT);\n" + select)
    message = str(err.value)
    assert message.startswith("line 2, column ") and SYNTAX[select] in message
    for internal in ("sqlglot", "<class", "<Token", "Required keyword"):
        assert internal not in message, message


def test_debug_is_accepted_before_and_after_the_subcommand():
    from dynyan.cli import build_parser

    query = str(ROOT / "queries/tpch/fq4.sql")
    parser = build_parser()
    assert parser.parse_args(["--debug", "explain", query]).debug
    assert parser.parse_args(["explain", query, "--debug"]).debug
    assert not parser.parse_args(["explain", query]).debug
    assert parser.parse_args(["stream", "validate", "DIR", "--debug"]).debug


def test_debug_after_the_subcommand_shows_the_traceback(tmp_path):
    query = tmp_path / "q.sql"
    query.write_text("CREATE TABLE r (a INT);\nSELECT zz FROM r")
    quiet = run("compile", str(query), "-o", str(tmp_path / "o.py"))
    loud = run("compile", str(query), "-o", str(tmp_path / "o.py"), "--debug")
    assert quiet.returncode == 2 and "Traceback" not in quiet.stderr
    assert loud.returncode == 1 and "Traceback" in loud.stderr
    assert "SqlError: line 2" in loud.stderr


def test_stats_of_a_missing_folder_is_one_line_exit_2(tmp_path):
    result = run("stats", str(tmp_path / "data/tpch/sf0.1"))
    assert result.returncode == 2, result.stderr
    (line,) = result.stderr.splitlines()
    assert line.startswith("dynyan: error: no such directory: ")
    assert "data/tpch/sf0.1" in line


def test_compiled_module_has_the_mode_of_an_ordinary_file(tmp_path):
    """Not mkstemp's 0600: 0666 less the umask, like any file the user writes."""
    out = tmp_path / "fq4.py"
    umask = os.umask(0o022)
    try:
        assert (
            main(["compile", str(ROOT / "queries/tpch/fq4.sql"), "-o", str(out)]) == 0
        )
    finally:
        os.umask(umask)
    assert stat.S_IMODE(out.stat().st_mode) == 0o644


def _parsers(parser, path=("dynyan",)):
    """Every (command path, parser) under `parser`, subcommands included."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, path + (name,))


def _actions_without_help(parser):
    for path, p in _parsers(parser):
        for action in p._actions:
            if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                continue
            if not action.help:
                yield " ".join(path) + " " + (
                    "/".join(action.option_strings) or action.dest
                )


def test_every_option_of_every_command_has_help():
    from dynyan.cli import build_parser

    assert list(_actions_without_help(build_parser())) == []


def test_every_bench_option_has_help_naming_its_choices():
    from bench.cli import add_commands
    from bench.harness import MODES, SYSTEMS

    parser = argparse.ArgumentParser(prog="python -m bench")
    add_commands(parser.add_subparsers())
    assert list(_actions_without_help(parser)) == []
    help_text = " ".join(
        a.help for _, p in _parsers(parser) for a in p._actions if a.help
    )
    for choice in (*SYSTEMS, *MODES):
        assert choice in help_text, choice


def test_a_crash_inside_the_compiler_is_one_line_naming_a_bug(
    tmp_path, monkeypatch, capsys
):
    """A failure the compiler does not mean (here a pass that raises
    KeyError) is no traceback but a one-line error saying it is dynyan's
    bug, with the original exception chained for --debug."""
    import dynyan
    import dynyan.compiler.frontend as frontend
    from dynyan.errors import CompilerBug

    def broken(tree, ctx):
        raise KeyError("")

    monkeypatch.setattr(frontend, "TREE_PASSES", (broken,))
    query = tmp_path / "q.sql"
    query.write_text("CREATE TABLE r (a INT);\nSELECT a FROM r")
    assert main(["compile", str(query), "-o", str(tmp_path / "o.py")]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert "dynyan failed on this query (KeyError: '')" in line
    assert "a bug in dynyan, not in the query" in line
    with pytest.raises(CompilerBug) as caught:
        dynyan.load(query.read_text())
    assert isinstance(caught.value.__cause__, KeyError)
    assert not (tmp_path / "o.py").exists()
