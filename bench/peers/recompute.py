"""DuckDB recomputing the whole query after every batch."""

from __future__ import annotations


from collections.abc import Iterator

from dynyan.compiler.ir import Query

from .common import base_relations

_DUCK_TYPES = {"int": "BIGINT", "float": "DOUBLE", "str": "VARCHAR", "date": "DATE"}


class DuckDBRecompute:
    """Tables kept in sync per batch; the query re-evaluated after each batch.

    ``prepare`` turns the stream into per-batch Arrow tables (outside the
    timed part, like the decoding of the stream for the other engines);
    ``apply_batch(b)`` loads batch b (inserts, then deletes by row id) and
    recomputes the result into a DuckDB table; in push mode it also diffs the
    new result against the previous one (``EXCEPT ALL`` both ways) and calls
    ``on_delta`` for every changed row.
    """

    def __init__(
        self,
        query: Query,
        on_delta=None,
        threads: int = 1,
        sql_text: str | None = None,
    ):
        import duckdb

        self.query = query
        self.on_delta = on_delta
        self.con = duckdb.connect(config={"threads": threads})
        # every stored relation is a table with a row id, seen by the query
        # through a view of its own columns (so SELECT * means the same)
        self.relations = base_relations(query)
        for rel in self.relations:
            cols = ", ".join(
                f"{_ident(c)} {_DUCK_TYPES[t]}" for c, t in zip(rel.columns, rel.types)
            )
            table = _ident("_t_" + rel.name)
            self.con.execute(f"CREATE TABLE {table} (_id BIGINT, {cols})")
            names = ", ".join(_ident(c) for c in rel.columns)
            self.con.execute(
                f"CREATE VIEW {_ident(rel.name)} AS SELECT {names} FROM {table}"
            )
        views: list[str] = []
        if sql_text:
            views, self.select = duckdb_program(sql_text)
        else:
            self.select = query.sql
        for view in views:  # CREATE VIEW statements of the query file
            self.con.execute(view)
        self.con.execute(f"CREATE TABLE _result AS SELECT * FROM ({self.select}) LIMIT 0")
        self.batches: list = []

    def prepare(self, events, ids, batch: int) -> None:
        import pyarrow as pa

        arrow_types = {
            "int": pa.int64(),
            "float": pa.float64(),
            "str": pa.string(),
            "date": pa.date32(),
        }
        schemas = {
            rel.name: pa.schema(
                [("_id", pa.int64())]
                + [(c, arrow_types[t]) for c, t in zip(rel.columns, rel.types)]
            )
            for rel in self.relations
        }
        self.batches = []
        for start in range(0, len(events), batch):
            ins: dict[str, list] = {}
            dels: dict[str, list] = {}
            for i in range(start, min(start + batch, len(events))):
                rel, op, row = events[i]
                if op > 0:
                    ins.setdefault(rel, []).append((ids[i], *row))
                else:
                    dels.setdefault(rel, []).append(ids[i])
            part = []
            for rel, rows in ins.items():
                cols = list(zip(*rows))
                table = pa.Table.from_arrays(
                    [pa.array(c, type=f.type) for c, f in zip(cols, schemas[rel])],
                    schema=schemas[rel],
                )
                part.append(("ins", rel, table))
            for rel, rid in dels.items():
                part.append(("del", rel, pa.table({"_id": pa.array(rid, pa.int64())})))
            self.batches.append((min(batch, len(events) - start), part))

    def apply_batch(self, b: int) -> None:
        con = self.con
        for kind, rel, table in self.batches[b][1]:
            con.register("_batch", table)
            table = _ident("_t_" + rel)
            if kind == "ins":
                con.execute(f"INSERT INTO {table} SELECT * FROM _batch")
            else:
                con.execute(
                    f"DELETE FROM {table} WHERE _id IN (SELECT _id FROM _batch)"
                )
            con.unregister("_batch")
        if self.on_delta is None:
            con.execute(f"CREATE OR REPLACE TABLE _result AS {self.select}")
            return
        con.execute(f"CREATE OR REPLACE TABLE _new AS {self.select}")
        emit = self.on_delta
        for sign, sql in (
            (1, "SELECT * FROM _new EXCEPT ALL SELECT * FROM _result"),
            (-1, "SELECT * FROM _result EXCEPT ALL SELECT * FROM _new"),
        ):
            cur = con.execute(sql)
            while chunk := cur.fetchmany(10_000):
                for row in chunk:
                    emit(row, sign)
        con.execute("DROP TABLE _result")
        con.execute("ALTER TABLE _new RENAME TO _result")

    def enumerate(self) -> Iterator[tuple[tuple, int]]:
        cur = self.con.execute("SELECT * FROM _result")
        while chunk := cur.fetchmany(10_000):
            for row in chunk:
                yield row, 1

    def memory_bytes(self) -> int | None:
        try:
            (n,) = self.con.execute(
                "SELECT sum(memory_usage_bytes) FROM duckdb_memory()"
            ).fetchone()
            return int(n) if n is not None else None
        except Exception:  # noqa: BLE001 - older DuckDB: no duckdb_memory()
            return None


def duckdb_select(sql_text: str) -> str:
    """The query of a query file (its last query statement), as DuckDB SQL:
    subqueries and all, as the user wrote it."""
    return duckdb_program(sql_text)[1]


def duckdb_program(sql_text: str) -> tuple[list[str], str]:
    """The CREATE VIEW statements of a query file (TPC-H Q15 defines a view,
    queries it and drops it) and its last query statement, as DuckDB SQL;
    CREATE TABLE and DROP statements are left out."""
    import sqlglot
    from sqlglot import exp

    views, queries = [], []
    for s in sqlglot.parse(sql_text, read="duckdb"):
        if isinstance(s, exp.Create) and (s.args.get("kind") or "").upper() == "VIEW":
            views.append(s.sql(dialect="duckdb"))
        elif isinstance(s, exp.Query):
            queries.append(s)
    return views, queries[-1].sql(dialect="duckdb")


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'
