"""Table statistics for the planner: rows per table, distinct values per column.

Without statistics the planner ranks join trees by their shape alone
(`Plan.cost`), which cannot tell a non-guard edge that fans an update out to
4 parent tuples from one that fans it out to 600 (TPC-H FQ3: orders per
supplier against suppliers per order). Given `Stats`, it ranks them by
`plan.estimated_work` first. A statistics file is JSON::

    {"relations": {"lineitem": {"rows": 6001215,
                                "distinct": {"l_orderkey": 1500000, ...}}, ...}}

`dynyan stats DIR` writes one from a directory of Parquet tables (one
subdirectory or file per table, as `dynyan data` makes them), counting with
DuckDB. Only sizes are read: no value of the data reaches the plan or the
generated code.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from .errors import DynyanError


class StatsError(DynyanError):
    """A statistics file that cannot be used."""


@dataclass(frozen=True)
class Stats:
    """Row counts by relation and distinct counts by (relation, column), all
    names lower case. Unknown relations and columns have no figure (None)."""

    rows: Mapping[str, int] = field(default_factory=dict)
    distinct: Mapping[tuple[str, str], int] = field(default_factory=dict)

    def table_rows(self, relation: str) -> int | None:
        return self.rows.get(relation.lower())

    def ndv(self, relation: str, column: str) -> int | None:
        return self.distinct.get((relation.lower(), column.lower()))

    @classmethod
    def from_dict(cls, doc: object) -> "Stats":
        """Validate the JSON document described in the module docstring."""
        rels = doc.get("relations") if isinstance(doc, dict) else None
        if not isinstance(rels, dict):
            raise StatsError('statistics: expected {"relations": {name: {...}}}')
        rows: dict[str, int] = {}
        distinct: dict[tuple[str, str], int] = {}
        for name, entry in rels.items():
            if not isinstance(entry, dict) or not _count(entry.get("rows")):
                raise StatsError(
                    f"statistics for {name!r}: 'rows' must be a count (an integer >= 0)"
                )
            rows[name.lower()] = entry["rows"]
            cols = entry.get("distinct", {})
            if not isinstance(cols, dict) or not all(map(_count, cols.values())):
                raise StatsError(
                    f"statistics for {name!r}: 'distinct' must map columns to counts"
                )
            for col, n in cols.items():
                distinct[name.lower(), col.lower()] = n
        return cls(rows, distinct)

    def to_dict(self) -> dict:
        rels: dict[str, dict] = {
            r: {"rows": n, "distinct": {}} for r, n in self.rows.items()
        }
        for (r, c), n in self.distinct.items():
            rels.setdefault(r, {"rows": 0, "distinct": {}})["distinct"][c] = n
        return {"relations": rels}


def _count(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and x >= 0


def load_stats(path: str | Path) -> Stats:
    try:
        doc = json.loads(Path(path).read_text())
    except OSError as err:
        raise StatsError(f"cannot read statistics {path}: {err.strerror}") from None
    except ValueError as err:
        raise StatsError(f"statistics {path} is not JSON: {err}") from None
    return Stats.from_dict(doc)


def collect(directory: str | Path) -> Stats:
    """Rows and (approximate, HyperLogLog) distinct counts of every column of
    the Parquet tables under `directory`."""
    import duckdb

    root = Path(directory)
    tables = sorted(p for p in root.iterdir() if p.is_dir() or p.suffix == ".parquet")
    if not tables:
        raise StatsError(f"no Parquet tables in {root}")
    rows: dict[str, int] = {}
    distinct: dict[tuple[str, str], int] = {}
    con = duckdb.connect()
    for path in tables:
        name = path.stem.lower()
        source = str(path / "**" / "*.parquet") if path.is_dir() else str(path)
        try:
            cols = [
                r[0]
                for r in con.execute(
                    "SELECT name FROM parquet_schema(?) WHERE num_children IS NULL",
                    [source],
                ).fetchall()
            ]
        except duckdb.Error:
            continue  # not a Parquet table
        quoted = ('"' + c.replace('"', '""') + '"' for c in cols)
        counts = ", ".join(
            ["count(*)"] + [f"approx_count_distinct({q})" for q in quoted]
        )
        n, *ndv = con.execute(
            f"SELECT {counts} FROM read_parquet(?)", [source]
        ).fetchone()
        rows[name] = int(n)
        for col, d in zip(cols, ndv):
            distinct[name, col.lower()] = min(int(d), int(n))
    if not rows:
        raise StatsError(f"no Parquet tables in {root}")
    return Stats(rows, distinct)


def cmd_stats(args) -> int:
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
