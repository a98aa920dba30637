"""`dynyan follow` against a real PostgreSQL server (no mocks).

A throwaway cluster (bench/pgcluster.py: initdb into a temporary directory,
wal_level = logical, a free port) is started once per test worker; each test
gets its own database. After every commit of a random workload (several
connections with interleaved open transactions, rollbacks, TRUNCATE) the
view is compared with the same query run by PostgreSQL. The tests are skipped,
saying why, only when no PostgreSQL can be started.
"""

from __future__ import annotations

import asyncio
import collections
import datetime
import decimal
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

psycopg2 = pytest.importorskip(
    "psycopg2", reason="psycopg2 not installed (extra 'postgres')"
)

from bench.pgcluster import ClusterUnavailable, TemporaryCluster  # noqa: E402
from dynyan.errors import FollowError  # noqa: E402
from dynyan.pipeline import pgoutput as pgo  # noqa: E402
from dynyan.pipeline.follow import Follower, drop  # noqa: E402
from dynyan.pipeline.replay import row_sort_key  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def cluster():
    try:
        server = TemporaryCluster().start()
    except ClusterUnavailable as exc:
        pytest.skip(f"no PostgreSQL server could be started: {exc}")
    yield server
    server.stop()


_dbs = iter(range(1_000_000))


@pytest.fixture
def db(cluster):
    """A fresh database: (dsn, autocommit connection)."""
    dsn = cluster.create_database(f"t{next(_dbs)}")
    conn = psycopg2.connect(dsn)
    conn.autocommit = True
    yield dsn, conn
    conn.close()


def execute(conn, *statements):
    with conn.cursor() as cur:
        for statement in statements:
            cur.execute(statement)


def postgres_rows(conn, sql):
    """The query's answer from PostgreSQL, in the contract's types, sorted."""
    with conn.cursor() as cur:
        cur.execute(sql)
        rows = [
            tuple(float(v) if isinstance(v, decimal.Decimal) else v for v in row)
            for row in cur.fetchall()
        ]
    return sorted(rows, key=row_sort_key)


def view_rows(follower):
    with follower.lock:
        return sorted(follower.view.rows(), key=row_sort_key)


def current_lsn(conn):
    with conn.cursor() as cur:
        cur.execute("SELECT pg_current_wal_lsn()::text")
        return cur.fetchone()[0]


def caught_up(follower, conn, timeout=20):
    assert follower.wait_for(current_lsn(conn), timeout), "follower did not catch up"


# ---------------------------------------------------------------------------
# decoding, no server


def test_pgoutput_values_and_copy_escapes():
    assert pgo.format_lsn(pgo.parse_lsn("16/B374D848")) == "16/B374D848"
    assert pgo.value_decoder(1700)(b"24710.35") == 24710.35
    assert pgo.value_decoder(1042)(b"ab   ") == "ab"
    assert pgo.value_decoder(1082)(b"1995-03-15") == datetime.date(1995, 3, 15)
    for refused in (b"NaN",):
        with pytest.raises(ValueError, match="NaN"):
            pgo.value_decoder(1700)(refused)
    for refused in (b"infinity", b"0044-03-15 BC"):
        with pytest.raises(ValueError, match="datetime.date"):
            pgo.value_decoder(1082)(refused)
    assert pgo.copy_line(b"a\\tb\t\\N\tc\\\\d\\n\t\\101") == [
        b"a\tb",
        None,
        b"c\\d\n",
        b"A",
    ]
    values, end = pgo.decode_tuple(b"\x00\x03t\x00\x00\x00\x0242nu", 0)
    assert values == [b"42", None, pgo.UNCHANGED] and end == 11


# ---------------------------------------------------------------------------
# the differential test: random transactions from several connections

SCHEMA = """
CREATE TABLE r (a integer, b integer, c numeric(8, 2), d date, e varchar(12));
CREATE TABLE s (b integer NOT NULL, x text, y numeric(6, 2));
ALTER TABLE r REPLICA IDENTITY FULL;
ALTER TABLE s REPLICA IDENTITY FULL;
"""
QUERIES = {
    "join": "SELECT r.a, r.d, r.e, s.x, r.c FROM r JOIN s ON r.b = s.b WHERE r.c > 10",
    "groups": "SELECT s.x, COUNT(*) AS n, SUM(r.c) AS total, SUM(s.y) AS ys "
    "FROM r, s WHERE r.b = s.b GROUP BY s.x",
}


class RandomWriter:
    """Interleaved transactions on several connections, driven from one thread:
    each connection updates and deletes only its own rows (no lock waits)."""

    def __init__(self, dsn, seed, connections=3):
        self.rng = random.Random(seed)
        self.conns = []
        for _ in range(connections):
            conn = psycopg2.connect(dsn)
            self.conns.append(conn)
        self.open = [False] * connections
        self.next_key = [i * 1_000_000 for i in range(connections)]
        self.committed = 0
        self.rolled_back = []  # xids

    def close(self):
        for conn in self.conns:
            conn.close()

    def _value_r(self, key):
        rng = self.rng
        return (
            key,
            rng.choice([None] + list(range(8))),
            rng.choice([None, decimal.Decimal(rng.randrange(0, 5000)) / 100]),
            rng.choice(
                [
                    None,
                    datetime.date(1990, 1, 1) + datetime.timedelta(rng.randrange(5000)),
                ]
            ),
            rng.choice([None, "", "ä|ö", "tab\there", "x" * rng.randrange(12)]),
        )

    def step(self):
        """One statement, commit or rollback; returns 'commit' after a commit."""
        rng = self.rng
        i = rng.randrange(len(self.conns))
        conn = self.conns[i]
        cur = conn.cursor()
        roll = rng.random()
        if self.open[i] and roll < 0.25:
            conn.commit()
            self.open[i] = False
            self.committed += 1
            return "commit"
        if self.open[i] and roll < 0.30:
            cur.execute("SELECT txid_current()")
            self.rolled_back.append(cur.fetchone()[0])
            conn.rollback()
            self.open[i] = False
            return "rollback"
        self.open[i] = True
        base = i * 1_000_000
        op = rng.random()
        if op < 0.45:
            self.next_key[i] += 1
            cur.execute(
                "INSERT INTO r VALUES (%s, %s, %s, %s, %s)",
                self._value_r(self.next_key[i]),
            )
        elif op < 0.6:
            cur.execute(
                "INSERT INTO s VALUES (%s, %s, %s)",
                (
                    rng.randrange(8),
                    rng.choice([None, "p", "q", "r"]),
                    rng.choice([None, decimal.Decimal(rng.randrange(-500, 500)) / 100]),
                ),
            )
        elif op < 0.8:
            cur.execute(
                "UPDATE r SET c = c + 1.25, b = (b + 1) %% 8 WHERE a IN "
                "(SELECT a FROM r WHERE a BETWEEN %s AND %s ORDER BY random() LIMIT 2)",
                (base, base + 999_999),
            )
        elif op < 0.9:
            cur.execute(
                "DELETE FROM r WHERE a IN (SELECT a FROM r WHERE a BETWEEN %s AND %s "
                "ORDER BY random() LIMIT 1)",
                (base, base + 999_999),
            )
        else:
            # s rows have no owner: only the connection whose index is 0 changes them
            if i == 0:
                cur.execute(
                    "UPDATE s SET y = coalesce(y, 0) + 0.5 WHERE b = %s",
                    (rng.randrange(8),),
                )
        return "statement"

    def finish(self):
        for i, conn in enumerate(self.conns):
            if self.open[i]:
                conn.commit()
                self.open[i] = False
                self.committed += 1

    def truncate_s(self, conn):
        """TRUNCATE needs the table to itself: finish the open transactions first."""
        self.finish()
        execute(
            conn,
            "BEGIN",
            "TRUNCATE s",
            "INSERT INTO s VALUES (1, 'p', 1.5), (2, 'q', NULL)",
            "COMMIT",
        )


def test_random_workload_matches_postgres_after_every_commit(db):
    dsn, conn = db
    execute(conn, SCHEMA)
    execute(
        conn,
        "INSERT INTO r SELECT g, g % 8, (g * 7 % 400) / 4.0, DATE '1995-01-01' + g, 'v' || g "
        "FROM generate_series(1, 200) g",
        "INSERT INTO s SELECT g % 8, chr(112 + g % 3), g / 4.0 FROM generate_series(1, 20) g",
    )
    xids = set()
    summed = {name: collections.Counter() for name in QUERIES}

    def collector(name):
        def on_commit(commit):
            xids.add(commit.xid)
            for row, change in commit.changes:
                summed[name][row] += change

        return on_commit

    followers = {
        name: Follower(sql, dsn, on_commit=collector(name))
        for name, sql in QUERIES.items()
    }
    for f in followers.values():
        f.start()
    writer = RandomWriter(dsn, seed=7)
    try:
        for name, f in followers.items():
            assert view_rows(f) == postgres_rows(conn, QUERIES[name])
        commits = 0
        steps = 0
        while commits < 60:
            steps += 1
            if steps % 150 == 0:
                writer.truncate_s(conn)
                commits += 1
            elif writer.step() != "commit":
                continue
            commits += 1
            lsn = current_lsn(conn)
            for name, f in followers.items():
                assert f.wait_for(lsn, 20)
                expected = postgres_rows(conn, QUERIES[name])
                assert view_rows(f) == expected, (name, commits)
                # the pushed changes, summed, are the result (+k: k copies of a row)
                pushed = [r for r, k in summed[name].items() for _ in range(k)]
                assert sorted(pushed, key=row_sort_key) == expected
        writer.finish()
        for name, f in followers.items():
            caught_up(f, conn)
            assert view_rows(f) == postgres_rows(conn, QUERIES[name])
        # a rolled-back transaction never shows
        assert writer.rolled_back and not xids & set(writer.rolled_back)
        for f in followers.values():
            assert f.summary.commits >= 30
            print(f.summary, len(writer.rolled_back))
    finally:
        writer.close()
        for f in followers.values():
            f.stop()
            f.join()
