"""The `dynyan` command. Commands are thin: each parses options and calls one
library function; `DynyanError`s become one line on stderr and exit code 2.

Each command group lives in its own module and registers its subcommands
with `add_commands`; heavy imports (sqlglot, PySpark, DuckDB) stay inside
the command functions, so `dynyan --help` starts fast.
"""

from __future__ import annotations

import argparse
import logging
import sys

from ..errors import DynyanError
from . import compile as compile_commands
from . import follow, pipeline, stats, synthetic

EXIT_USER_ERROR = 2
COMMAND_GROUPS = (compile_commands, pipeline, synthetic, stats, follow)
DEBUG_HELP = "show tracebacks and debug logs"
# Modules that only an extra installs -> the extra that brings them.
EXTRAS = {
    "pyarrow": "pipeline",
    "duckdb": "pipeline",
    "tqdm": "pipeline",
    "pyspark": "spark",
    "psycopg2": "postgres",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dynyan",
        description="Compile SQL into incremental views maintained by the Dynamic Yannakakis algorithm.",
    )
    parser.add_argument("--debug", action="store_true", help=DEBUG_HELP)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for group in COMMAND_GROUPS:
        group.add_commands(sub)
    _accept_debug_anywhere(sub)
    return parser


def _accept_debug_anywhere(sub: argparse._SubParsersAction) -> None:
    """`--debug` after the subcommand too (`dynyan compile q.sql --debug`).
    SUPPRESS keeps a subcommand that was not given it from resetting the
    top-level flag."""
    for command in sub.choices.values():
        command.add_argument(
            "--debug", action="store_true", default=argparse.SUPPRESS, help=DEBUG_HELP
        )
        for action in command._actions:
            if isinstance(action, argparse._SubParsersAction):
                _accept_debug_anywhere(action)


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
    except ModuleNotFoundError as err:
        extra = EXTRAS.get((err.name or "").split(".")[0])
        if extra is None or args.debug:
            raise
        print(
            f"dynyan: error: `dynyan {args.command}` needs {err.name}, which comes "
            f"with the extra '{extra}': pip install 'dynyan[{extra}]'",
            file=sys.stderr,
        )
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        print("dynyan: interrupted", file=sys.stderr)
        return 130
