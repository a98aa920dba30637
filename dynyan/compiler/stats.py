"""Table statistics for the planner: rows per table, distinct values per column.

Without statistics the planner ranks join trees by their shape alone
(`Plan.cost`), which cannot tell a non-guard edge that fans an update out to
4 parent tuples from one that fans it out to 600 (TPC-H FQ3: orders per
supplier against suppliers per order). Given `Stats`, it ranks them by
`plan.estimated_work` first. A statistics file is JSON::

    {"relations": {"lineitem": {"rows": 6001215,
                                "distinct": {"l_orderkey": 1500000, ...}}, ...}}

`dynyan stats DIR` (dynyan.pipeline.stats) writes one from a directory of Parquet tables (one
subdirectory or file per table, as `dynyan data` makes them), counting with
DuckDB. Only sizes are read: no value of the data reaches the plan or the
generated code.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from ..errors import DynyanError


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
