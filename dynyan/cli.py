"""The `dynyan` command. Commands are thin: each parses options and calls one
library function; `DynyanError`s become one line on stderr and exit code 2."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import logging
import os
import re
import sys
import tempfile
from pathlib import Path

from .errors import DynyanError, SqlError

EXIT_USER_ERROR = 2


def read_query(path: str, schema: str | None) -> tuple[str, str | None]:
    """The query text and the schema text to compile it with.

    Without --schema, a query file that declares no table uses the file named
    by a `-- schema: PATH` comment line (relative to the query), else
    `schema.sql` beside it, else the nearest `tpch/schema.sql` above it.
    """
    sql = read_text(path, path)
    if schema is not None:
        return sql, read_text(schema, f"schema {schema}")
    if "create table" in sql.lower():
        return sql, None
    here = Path(path).resolve().parent
    named = re.search(r"^--\s*schema:\s*(\S+)", sql, flags=re.MULTILINE)
    if named:
        schema_path = here / named.group(1)
        return sql, read_text(schema_path, f"schema {named.group(1)} named in {path}")
    candidates = [here / "schema.sql"] + [
        p / "tpch" / "schema.sql" for p in [here, *here.parents]
    ]
    for candidate in candidates:
        if candidate.is_file():
            return sql, read_text(candidate, f"schema {candidate}")
    return sql, None


def read_text(path, what: str) -> str:
    """The UTF-8 text of a file (newlines as `read_text` gives them), or a
    one-line SqlError saying why not."""
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        raise SqlError(f"cannot read {what}: {err.strerror}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        col = err.start - data.rfind(b"\n", 0, err.start)
        raise SqlError(
            f"cannot read {what}: not UTF-8 text (byte 0x{data[err.start]:02x} "
            f"at line {line}, column {col})"
        ) from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def display_path(path: str) -> str:
    """`path` relative to the working directory when inside it (no absolute
    paths in generated files: output must not depend on the checkout)."""
    try:
        return Path(path).resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return Path(path).name


def write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def default_output(query: str) -> Path:
    """generated/ mirrors queries/ (queries/tpch/fq4.sql -> generated/tpch/fq4.py);
    a query elsewhere goes to generated/<stem>.py."""
    path = Path(query).resolve()
    parts = path.parts
    if "queries" in parts:
        at = len(parts) - 1 - parts[::-1].index("queries")
        return Path("generated", *parts[at + 1 :]).with_suffix(".py")
    return Path("generated") / (path.stem + ".py")


def read_stats(path: str | None):
    """Planner statistics from `dynyan stats`, or None (plan by shape)."""
    if path is None:
        return None
    from .stats import load_stats

    return load_stats(path)


def cmd_compile(args) -> int:
    from .compiler import compile_sql

    sql, schema = read_query(args.query, args.schema)
    source = compile_sql(
        sql, schema, source=display_path(args.query), stats=read_stats(args.stats)
    )
    out = Path(args.output) if args.output else default_output(args.query)
    write_atomically(out, source)
    print(f"wrote {out}")
    return 0


def cmd_explain(args) -> int:
    from .compiler import explain

    sql, schema = read_query(args.query, args.schema)
    print(explain(sql, schema, read_stats(args.stats)))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dynyan",
        description="Compile SQL into incremental views maintained by the Dynamic Yannakakis algorithm.",
    )
    parser.add_argument(
        "--debug", action="store_true", help="show tracebacks and debug logs"
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def query_command(name, help_, func):
        p = sub.add_parser(name, help=help_, description=help_)
        p.add_argument(
            "query", metavar="QUERY.sql", help="CREATE TABLEs (optional) and one SELECT"
        )
        p.add_argument(
            "--schema",
            metavar="FILE",
            help="CREATE TABLE statements, if not in QUERY.sql",
        )
        p.add_argument(
            "--stats",
            metavar="STATS.json",
            help="table sizes from `dynyan stats`: the planner then picks the "
            "join tree with the least estimated update work",
        )
        p.set_defaults(func=func)
        return p

    p = query_command(
        "compile", "write the generated Python module for a query", cmd_compile
    )
    p.add_argument(
        "-o",
        "--output",
        metavar="OUT.py",
        help="default: generated/ mirroring queries/, else generated/<stem>.py",
    )
    query_command(
        "explain",
        "show the query's GCQ, its GJT pair (T, N) and complexity",
        cmd_explain,
    )
    # The data pipeline, benchmarks and synthetic streams register their own
    # commands; each module keeps its heavy imports inside its functions.
    for name in COMMAND_MODULES:
        if importlib.util.find_spec(f"dynyan.{name}") is not None:
            importlib.import_module(f"dynyan.{name}").add_commands(sub)
    return parser


COMMAND_MODULES = ("pipeline_cli", "bench_cli", "synthetic", "stats")


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.debug else logging.WARNING)
    try:
        return args.func(args) or 0
    except DynyanError as err:
        if args.debug:
            raise
        print(f"dynyan: error: {err}", file=sys.stderr)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        print("dynyan: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
