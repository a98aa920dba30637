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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dynyan",
        description="Compile SQL into incremental views maintained by the Dynamic Yannakakis algorithm.",
    )
    parser.add_argument(
        "--debug", action="store_true", help="show tracebacks and debug logs"
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for group in COMMAND_GROUPS:
        group.add_commands(sub)
    return parser


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
