"""`dynyan stats`: planner statistics of a directory of Parquet tables."""

from __future__ import annotations

import json
from pathlib import Path


def cmd_stats(args) -> int:
    from ..pipeline.stats import collect

    stats = collect(args.directory)
    text = json.dumps(stats.to_dict(), indent=1, sort_keys=True) + "\n"
    if args.output:
        Path(args.output).write_text(text)
        print(f"wrote {args.output} ({len(stats.rows)} tables)")
    else:
        print(text, end="")
    return 0


def add_commands(sub) -> None:
    help_ = "write planner statistics (rows, distinct values) of Parquet tables"
    p = sub.add_parser("stats", help=help_, description=help_)
    p.add_argument("directory", metavar="DIR", help="e.g. data/tpch/sf0.1")
    p.add_argument("-o", "--output", metavar="STATS.json", help="default: stdout")
    p.set_defaults(func=cmd_stats)
