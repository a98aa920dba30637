"""Planner statistics of Parquet tables, counted with DuckDB (`dynyan stats`)."""

from __future__ import annotations

from pathlib import Path

from ..compiler.stats import Stats, StatsError


def collect(directory: str | Path) -> Stats:
    """Rows and (approximate, HyperLogLog) distinct counts of every column of
    the Parquet tables under `directory`."""
    root = Path(directory)
    if not root.is_dir():
        what = "not a directory" if root.exists() else "no such directory"
        raise StatsError(
            f"{what}: {root} (give the folder of Parquet tables that "
            "`dynyan data` writes, e.g. data/tpch/sf0.1)"
        )
    import duckdb

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
