"""`dynyan follow` against PostgreSQL keeping the same answer itself (issue 18).

TPC-H at a small scale factor (tpcgen-cli, as `dynyan data`) is loaded into a
throwaway PostgreSQL cluster (bench/pgcluster.py, durable: fsync on), with
primary keys and REPLICA IDENTITY FULL. A seeded random workload of small
transactions (1-3 statements: lineitem inserts, deletes and updates, orders,
customer, partsupp and supplier updates, 3% rolled back) runs against it,
and for each query (FQ4, Q3):

1. **follow throughput**: the follower is stopped (checkpoint written), N
   transactions are committed, then a follower resumes from the checkpoint
   and catches up: row changes/s and transactions/s, walsender decoding,
   pgoutput parsing, applying and the push deltas included.
2. **follow latency**: transactions at a fixed rate (``--rate``) while the
   follower runs in push mode: commit (the commit timestamp PostgreSQL puts
   in the stream) to the transaction's merged deltas in hand, median and
   99th percentile.
3. **PostgreSQL, REFRESH MATERIALIZED VIEW after every transaction** and
4. **after every 1,000 transactions**: the same workload, the query as a
   materialized view; latency is commit (client clock, when COMMIT returned)
   to the end of the refresh that includes it.

After each dynyan phase the view is compared with PostgreSQL's answer to the
query (Q3 row by row, FQ4 by count and an MD5 fingerprint of every row, see
``fingerprint``).

    .venv/bin/python -m bench.follow_latency                  # FQ4 and Q3, SF 0.01
    .venv/bin/python -m bench.follow_latency --queries q3 --txns 2000 --json out.json

Timings are of a shared 2-core machine: read them as orders of magnitude.
"""

from __future__ import annotations

import argparse
import datetime
import decimal
import hashlib
import io
import json
import random
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

KEYS = {
    "region": ("r_regionkey",),
    "nation": ("n_nationkey",),
    "supplier": ("s_suppkey",),
    "customer": ("c_custkey",),
    "part": ("p_partkey",),
    "partsupp": ("ps_partkey", "ps_suppkey"),
    "orders": ("o_orderkey",),
    "lineitem": ("l_orderkey", "l_linenumber"),
}


def query_sql(name: str) -> str:
    """The text of queries/tpch/<name>.sql (comments and the final ; dropped)."""
    text = (ROOT / "queries" / "tpch" / f"{name}.sql").read_text()
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("--")]
    return "\n".join(lines).strip().rstrip(";")


# ---------------------------------------------------------------------------
# Loading TPC-H


def load_tpch(conn, sf: float = 0.01, data_dir=None, tables=None) -> dict[str, int]:
    """Create the TPC-H tables (tpch/schema.sql) in ``conn``'s database and
    COPY the generated data in; primary keys, REPLICA IDENTITY FULL, ANALYZE."""
    import pyarrow.csv
    import pyarrow.parquet

    from dynyan.pipeline import data
    from dynyan.resources import resource_text

    dataset = data.generate("tpch", sf, data_dir or ROOT / "data", quiet=True)
    tables = list(tables or KEYS)
    schema = "\n".join(
        line.split("--")[0] for line in resource_text("tpch", "schema.sql").splitlines()
    )
    counts = {}
    with conn.cursor() as cur:
        for statement in schema.split(";"):
            name = statement.split("CREATE TABLE")[-1].split("(")[0].strip()
            if "CREATE TABLE" in statement and name in tables:
                cur.execute(statement)
        for table in tables:
            cur.execute(
                "SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass "
                "AND attnum > 0 ORDER BY attnum",
                (table,),
            )
            columns = [r[0] for r in cur.fetchall()]
            arrow = pyarrow.parquet.read_table(data.table_path(dataset, table))
            arrow = arrow.select(columns)
            arrow = arrow.cast(  # tpcgen writes string_view, which the CSV writer lacks
                pyarrow.schema(
                    [
                        (
                            f.with_type(pyarrow.string())
                            if f.type == pyarrow.string_view()
                            else f
                        )
                        for f in arrow.schema
                    ]
                )
            )
            buf = io.BytesIO()
            pyarrow.csv.write_csv(
                arrow, buf, pyarrow.csv.WriteOptions(include_header=False)
            )
            buf.seek(0)
            cur.copy_expert(f"COPY {table} FROM STDIN WITH (FORMAT csv)", buf)
            cur.execute(
                f"ALTER TABLE {table} ADD PRIMARY KEY ({', '.join(KEYS[table])})"
            )
            cur.execute(f"ALTER TABLE {table} REPLICA IDENTITY FULL")
            counts[table] = arrow.num_rows
        cur.execute("ANALYZE")
    return counts


# ---------------------------------------------------------------------------
# The workload

SEGMENTS = ["AUTOMOBILE", "BUILDING", "FURNITURE", "HOUSEHOLD", "MACHINERY"]


class TpchWorkload:
    """Seeded random small transactions over TPC-H (one connection).

    Keys of existing rows are kept in Python so that picking a row to update
    or delete costs nothing in the database; ``transaction()`` runs one
    transaction and returns (committed?, row changes, client commit time).
    """

    WEIGHTS = {
        "lineitem_insert": 24,
        "lineitem_delete": 18,
        "lineitem_update": 18,
        "orders_update": 12,
        "orders_insert": 5,
        "customer_update": 8,
        "partsupp_update": 8,
        "partsupp_replace": 4,
        "supplier_update": 1,
    }

    def __init__(self, conn, seed: int = 1, rollback: float = 0.03):
        self.conn = conn
        self.rng = random.Random(seed)
        self.rollback = rollback
        self.ops = list(self.WEIGHTS)
        self.weights = [self.WEIGHTS[o] for o in self.ops]
        with conn.cursor() as cur:
            cur.execute("SELECT l_orderkey, l_linenumber FROM lineitem ORDER BY 1, 2")
            self.lineitems = [tuple(r) for r in cur.fetchall()]
            cur.execute("SELECT o_orderkey FROM orders ORDER BY 1")
            self.orders = [r[0] for r in cur.fetchall()]
            cur.execute("SELECT c_custkey FROM customer ORDER BY 1")
            self.customers = [r[0] for r in cur.fetchall()]
            cur.execute("SELECT s_suppkey FROM supplier ORDER BY 1")
            self.suppliers = [r[0] for r in cur.fetchall()]
            cur.execute("SELECT ps_partkey, ps_suppkey FROM partsupp ORDER BY 1, 2")
            self.partsupps = [tuple(r) for r in cur.fetchall()]
        self.next_line = {}
        for orderkey, line in self.lineitems:
            self.next_line[orderkey] = max(self.next_line.get(orderkey, 0), line + 1)
        self.next_order = max(self.orders) + 1
        self.undo: list = []

    def _pick(self, items):
        return items[self.rng.randrange(len(items))]

    def _remove(self, items, index):
        items[index] = items[-1]
        items.pop()

    def statement(self, cur) -> int:
        """One random statement; the row changes it makes (UPDATE counts two)."""
        rng = self.rng
        op = rng.choices(self.ops, self.weights)[0]
        if op == "lineitem_insert":
            template = self._pick(self.lineitems)
            orderkey = self._pick(self.orders)
            line = self.next_line.get(orderkey, 1)
            self.next_line[orderkey] = line + 1
            cur.execute(
                "INSERT INTO lineitem SELECT %s, l_partkey, %s, %s, l_quantity, "
                "l_extendedprice, l_discount, l_tax, l_returnflag, l_linestatus, "
                "l_shipdate + %s, l_commitdate, l_receiptdate, l_shipinstruct, l_shipmode, "
                "l_comment FROM lineitem WHERE l_orderkey = %s AND l_linenumber = %s",
                (
                    orderkey,
                    self._pick(self.suppliers),
                    line,
                    rng.randrange(-60, 60),
                    *template,
                ),
            )
            if cur.rowcount:
                self.lineitems.append((orderkey, line))
                self.undo.append(("lineitem_del", (orderkey, line)))
            return cur.rowcount
        if op == "lineitem_delete" and len(self.lineitems) > 100:
            i = rng.randrange(len(self.lineitems))
            key = self.lineitems[i]
            cur.execute(
                "DELETE FROM lineitem WHERE l_orderkey = %s AND l_linenumber = %s", key
            )
            self._remove(self.lineitems, i)
            self.undo.append(("lineitem_add", key))
            return cur.rowcount
        if op == "lineitem_update":
            cur.execute(
                "UPDATE lineitem SET l_extendedprice = l_extendedprice + %s, "
                "l_discount = %s, l_shipdate = l_shipdate + %s "
                "WHERE l_orderkey = %s AND l_linenumber = %s",
                (
                    decimal.Decimal(rng.randrange(-500, 500)) / 100,
                    decimal.Decimal(rng.randrange(0, 11)) / 100,
                    rng.randrange(-30, 30),
                    *self._pick(self.lineitems),
                ),
            )
            return 2 * cur.rowcount
        if op == "orders_update":
            cur.execute(
                "UPDATE orders SET o_orderdate = o_orderdate + %s, o_shippriority = %s "
                "WHERE o_orderkey = %s",
                (rng.randrange(-40, 40), rng.randrange(3), self._pick(self.orders)),
            )
            return 2 * cur.rowcount
        if op == "orders_insert":
            key = self.next_order
            self.next_order += 1
            cur.execute(
                "INSERT INTO orders SELECT %s, %s, o_orderstatus, o_totalprice, "
                "o_orderdate + %s, o_orderpriority, o_clerk, o_shippriority, o_comment "
                "FROM orders WHERE o_orderkey = %s",
                (
                    key,
                    self._pick(self.customers),
                    rng.randrange(-200, 200),
                    self._pick(self.orders),
                ),
            )
            self.orders.append(key)
            self.undo.append(("orders_del", key))
            return cur.rowcount
        if op == "customer_update":
            cur.execute(
                "UPDATE customer SET c_mktsegment = %s WHERE c_custkey = %s",
                (rng.choice(SEGMENTS), self._pick(self.customers)),
            )
            return 2 * cur.rowcount
        if op == "partsupp_update":
            cur.execute(
                "UPDATE partsupp SET ps_supplycost = ps_supplycost + 0.01, "
                "ps_availqty = ps_availqty + 1 WHERE ps_partkey = %s AND ps_suppkey = %s",
                self._pick(self.partsupps),
            )
            return 2 * cur.rowcount
        if op == "partsupp_replace":  # delete one, insert it under another supplier
            i = rng.randrange(len(self.partsupps))
            part, supp = self.partsupps[i]
            new = self._pick(self.suppliers)
            cur.execute(
                "SELECT 1 FROM partsupp WHERE ps_partkey = %s AND ps_suppkey = %s",
                (part, new),
            )
            if cur.fetchone() is not None:
                return 0
            cur.execute(
                "UPDATE partsupp SET ps_suppkey = %s WHERE ps_partkey = %s AND ps_suppkey = %s",
                (new, part, supp),
            )
            self.partsupps[i] = (part, new)
            self.undo.append(("partsupp_set", i, (part, supp)))
            return 2 * cur.rowcount
        if op == "supplier_update":
            cur.execute(
                "UPDATE supplier SET s_acctbal = s_acctbal + 1 WHERE s_suppkey = %s",
                (self._pick(self.suppliers),),
            )
            return 2 * cur.rowcount
        return 0

    def transaction(self) -> tuple[bool, int, float, int]:
        """One transaction of 1-3 statements, committed (or, 3%, rolled back):
        (committed?, row changes, when COMMIT returned, xid)."""
        self.undo = []
        changes = 0
        with self.conn.cursor() as cur:
            for _ in range(self.rng.choice((1, 1, 2, 3))):
                changes += self.statement(cur)
            cur.execute("SELECT txid_current()")
            xid = cur.fetchone()[0]
        if self.rng.random() < self.rollback:
            self.conn.rollback()
            self._undo()
            return False, 0, time.time(), xid
        self.conn.commit()
        return True, changes, time.time(), xid

    def _undo(self) -> None:
        """Forget the keys a rolled-back transaction added, restore the removed ones."""
        for action in reversed(self.undo):
            if action[0] == "lineitem_del":
                self.lineitems.remove(action[1])
            elif action[0] == "lineitem_add":
                self.lineitems.append(action[1])
            elif action[0] == "orders_del":
                self.orders.remove(action[1])
            elif action[0] == "partsupp_set":
                self.partsupps[action[1]] = action[2]
        self.undo = []


# ---------------------------------------------------------------------------
# Comparing a view with PostgreSQL's answer


def fingerprint(view) -> tuple[int, int]:
    """(rows, sum of the rows' MD5 prefixes) of a view's result; a row is
    hashed as ``"|".join(map(str, row))`` (Python's own text of each value)."""
    count = total = 0
    md5 = hashlib.md5
    for row, mult in view.enumerate():
        count += mult
        total += mult * int(md5("|".join(map(str, row)).encode()).hexdigest()[:15], 16)
    return count, total


def postgres_fingerprint(conn, sql: str) -> tuple[int, int]:
    """The same fingerprint of PostgreSQL's answer to ``sql``, computed there:
    each value printed as Python prints the contract's value (numeric as the
    shortest float text, ``5.0`` for 5.00; NULL as ``None``)."""
    with conn.cursor() as cur:
        cur.execute("SET DateStyle TO ISO")
        cur.execute(f"SELECT * FROM ({sql}) q LIMIT 0")
        kinds = [d.type_code for d in cur.description]
        names = [f"c{i}" for i in range(len(kinds))]
        parts = [
            (
                f"coalesce(CASE WHEN scale(trim_scale({n})) = 0 THEN trim_scale({n})::text "
                f"|| '.0' ELSE trim_scale({n})::text END, 'None')"
                if kind == 1700
                else f"coalesce({n}::text, 'None')"
            )
            for n, kind in zip(names, kinds)
        ]
        cur.execute(
            f"SELECT count(*), coalesce(sum(('x' || substr(md5(concat_ws('|', "
            f"{', '.join(parts)})), 1, 15))::bit(60)::bigint), 0) "
            f"FROM ({sql}) q({', '.join(names)})"
        )
        count, total = cur.fetchone()
    return int(count), int(total)


def postgres_rows(conn, sql: str) -> list[tuple]:
    from dynyan.pipeline.replay import row_sort_key

    with conn.cursor() as cur:
        cur.execute(sql)
        rows = [
            tuple(float(v) if isinstance(v, decimal.Decimal) else v for v in row)
            for row in cur.fetchall()
        ]
    return sorted(rows, key=row_sort_key)


def same_answer(follower, conn, sql: str, exact: bool) -> bool:
    """Whether the follower's view holds PostgreSQL's answer to ``sql`` now."""
    from dynyan.pipeline.replay import row_sort_key

    with follower.lock:
        if exact:
            return sorted(follower.view.rows(), key=row_sort_key) == postgres_rows(
                conn, sql
            )
        mine = fingerprint(follower.view)
    return mine == postgres_fingerprint(conn, sql)


# ---------------------------------------------------------------------------
# Measurements


def percentile(values, q: float) -> float:
    values = sorted(values)
    if not values:
        return float("nan")
    k = min(len(values) - 1, max(0, round(q / 100 * (len(values) - 1))))
    return values[k]


def _current_lsn(conn) -> str:
    with conn.cursor() as cur:
        cur.execute("SELECT pg_current_wal_lsn()::text")
        return cur.fetchone()[0]


def measure_follow(
    dsn, conn, name: str, txns: int, rate: float, seed: int, log, checkpoint_every=10.0
) -> dict:
    """Phases 1 and 2 for one query; returns the numbers."""
    from dynyan.pipeline.follow import Follower, drop

    sql = query_sql(name)
    exact = name != "fq4"
    ckpt = Path(tempfile.mkdtemp(prefix=f"dynyan-follow-{name}-"))
    out: dict = {"query": name}
    # set-up: snapshot, checkpoint, stop
    t = time.perf_counter()
    first = Follower(sql, dsn, checkpoint=ckpt, push=True, initial=False, every=1e9)
    first.start()
    out["snapshot_seconds"] = round(first.summary.snapshot_seconds, 2)
    out["snapshot_rows"] = first.summary.snapshot_rows
    first.stop()
    first.join()
    log(
        f"{name}: snapshot of {out['snapshot_rows']:,} rows in {out['snapshot_seconds']} s"
    )
    # 1. throughput: a backlog of transactions, then catch up
    work = TpchWorkload(conn, seed=seed)
    committed = changes = 0
    while committed < txns:
        ok, n, _, _ = work.transaction()
        committed += ok
        changes += n
    target = _current_lsn(conn)
    catch_up = Follower(sql, dsn, checkpoint=ckpt, push=True, every=checkpoint_every)
    t = time.perf_counter()
    catch_up.start()  # restores the checkpoint, starts the stream
    out["resume_seconds"] = round(time.perf_counter() - t, 2)
    t = time.perf_counter()
    catch_up.wait_for(target)
    seconds = time.perf_counter() - t
    out["backlog_txns"] = catch_up.summary.commits
    out["backlog_changes"] = catch_up.summary.events
    out["catch_up_seconds"] = round(seconds, 3)
    out["changes_per_sec"] = round(catch_up.summary.events / seconds)
    out["txns_per_sec"] = round(catch_up.summary.commits / seconds)
    log(
        f"{name}: caught up {out['backlog_txns']:,} transactions ({out['backlog_changes']:,} "
        f"row changes) in {seconds:.2f} s: {out['changes_per_sec']:,} changes/s"
    )
    t = time.perf_counter()
    out["equal_after_catch_up"] = same_answer(catch_up, conn, sql, exact)
    log(
        f"{name}: equal to PostgreSQL: {out['equal_after_catch_up']} ({time.perf_counter() - t:.1f} s to check)"
    )
    # 2. latency at a fixed rate, follower running in push mode
    latencies: list[float] = []  # commit timestamp (server) to deltas
    applied: dict[int, float] = {}  # xid -> when the view held it
    deltas = [0]

    def on_commit(commit):
        if not commit.snapshot:
            latencies.append(commit.latency)
            applied[commit.xid] = commit.applied_at
            deltas[0] += len(commit.changes)

    catch_up.on_commit = on_commit
    committed = 0
    returned: dict[int, float] = {}  # xid -> when COMMIT returned to the writer
    t0 = time.perf_counter()
    while committed < txns:
        ok, _, at, xid = work.transaction()
        committed += ok
        if ok:
            returned[xid] = at
        ahead = committed / rate - (time.perf_counter() - t0)
        if ahead > 0:
            time.sleep(ahead)
    catch_up.wait_for(_current_lsn(conn))
    client = [applied[x] - returned[x] for x in returned if x in applied]
    out["rate_txns_per_sec"] = rate
    out["latency_txns"] = len(latencies)
    out["latency_median_ms"] = round(1000 * statistics.median(latencies), 2)
    out["latency_p99_ms"] = round(1000 * percentile(latencies, 99), 2)
    out["latency_max_ms"] = round(1000 * max(latencies), 2)
    out["client_latency_median_ms"] = round(1000 * statistics.median(client), 2)
    out["client_latency_p99_ms"] = round(1000 * percentile(client, 99), 2)
    out["result_changes"] = deltas[0]
    out["equal_after_latency"] = same_answer(catch_up, conn, sql, exact)
    log(
        f"{name}: {len(latencies):,} transactions at {rate:g}/s: commit to deltas median "
        f"{out['latency_median_ms']} ms, p99 {out['latency_p99_ms']} ms; COMMIT returned "
        f"to deltas median {out['client_latency_median_ms']} ms, p99 "
        f"{out['client_latency_p99_ms']} ms; "
        f"equal: {out['equal_after_latency']}"
    )
    catch_up.stop()
    catch_up.join()
    out["checkpoints"] = catch_up.summary.checkpoints
    out["checkpoint_pause_seconds"] = round(catch_up.summary.checkpoint_seconds, 3)
    out["checkpoint_background_seconds"] = round(
        catch_up.summary.checkpoint_background_seconds, 2
    )
    drop(dsn, checkpoint=ckpt)
    return out


def measure_refresh(
    conn, name: str, txns: int, every: int, seed: int, log, budget: float
) -> dict:
    """Phases 3/4: REFRESH MATERIALIZED VIEW after every ``every`` transactions."""
    sql = query_sql(name)
    mv = f"mv_{name}"
    with conn.cursor() as cur:
        cur.execute(f"DROP MATERIALIZED VIEW IF EXISTS {mv}")
        cur.execute(f"CREATE MATERIALIZED VIEW {mv} AS {sql}")
    conn.commit()
    work = TpchWorkload(conn, seed=seed)
    latencies, pending = [], []
    committed = changes = refreshes = 0
    refresh_seconds = 0.0
    t0 = time.perf_counter()
    while committed < txns:
        ok, n, at, _ = work.transaction()
        if not ok:
            continue
        committed += 1
        changes += n
        pending.append(at)
        if len(pending) >= every or committed == txns:
            t = time.perf_counter()
            with conn.cursor() as cur:
                cur.execute(f"REFRESH MATERIALIZED VIEW {mv}")
            conn.commit()
            refresh_seconds += time.perf_counter() - t
            refreshes += 1
            done = time.time()
            latencies += [done - c for c in pending]
            pending = []
            if time.perf_counter() - t0 > budget:
                break
    seconds = time.perf_counter() - t0
    with conn.cursor() as cur:
        cur.execute(f"DROP MATERIALIZED VIEW {mv}")
    conn.commit()
    out = {
        "query": name,
        "refresh_every": every,
        "txns": committed,
        "changes": changes,
        "refreshes": refreshes,
        "seconds": round(seconds, 2),
        "refresh_seconds_each": round(refresh_seconds / max(1, refreshes), 3),
        "txns_per_sec": round(committed / seconds, 2),
        "changes_per_sec": round(changes / seconds, 1),
        "latency_median_ms": round(1000 * statistics.median(latencies), 1),
        "latency_p99_ms": round(1000 * percentile(latencies, 99), 1),
        "stopped_at_budget": committed < txns,
    }
    log(
        f"{name}: REFRESH every {every}: {committed:,} transactions in {seconds:.1f} s "
        f"({out['txns_per_sec']} txn/s, {out['changes_per_sec']} changes/s), refresh "
        f"{out['refresh_seconds_each']} s each, latency median {out['latency_median_ms']} ms, "
        f"p99 {out['latency_p99_ms']} ms"
    )
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--sf", type=float, default=0.01, help="TPC-H scale factor (default 0.01)"
    )
    p.add_argument(
        "--queries", default="fq4,q3", help="comma-separated, default fq4,q3"
    )
    p.add_argument(
        "--txns", type=int, default=2000, help="transactions per dynyan phase"
    )
    p.add_argument(
        "--rate", type=float, default=100.0, help="transactions/s in the latency phase"
    )
    p.add_argument(
        "--refresh-txns",
        type=int,
        default=100,
        help="transactions with REFRESH after each",
    )
    p.add_argument(
        "--batch-txns",
        type=int,
        default=3000,
        help="transactions with REFRESH per 1,000",
    )
    p.add_argument(
        "--budget", type=float, default=300.0, help="seconds per REFRESH phase at most"
    )
    p.add_argument("--skip-refresh", action="store_true", help="measure dynyan only")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", metavar="FILE", help="write the numbers as JSON")
    args = p.parse_args(argv)

    import psycopg2

    from bench.pgcluster import TemporaryCluster

    def log(message):
        print(message, file=sys.stderr, flush=True)

    results = {
        "sf": args.sf,
        "started": datetime.datetime.now().isoformat(timespec="seconds"),
    }
    with TemporaryCluster(durable=True) as cluster:
        results["postgres"] = cluster.version()
        log(results["postgres"])
        for name in args.queries.split(","):
            dsn = cluster.create_database(f"tpch_{name}")
            conn = psycopg2.connect(dsn)
            t = time.perf_counter()
            counts = load_tpch(conn, args.sf)
            conn.commit()
            log(
                f"{name}: loaded TPC-H SF {args.sf:g} ({sum(counts.values()):,} rows) in {time.perf_counter() - t:.1f} s"
            )
            results[f"{name}_follow"] = measure_follow(
                dsn, conn, name, args.txns, args.rate, args.seed, log
            )
            if not args.skip_refresh:
                results[f"{name}_refresh_1"] = measure_refresh(
                    conn, name, args.refresh_txns, 1, args.seed + 1, log, args.budget
                )
                results[f"{name}_refresh_1000"] = measure_refresh(
                    conn, name, args.batch_txns, 1000, args.seed + 2, log, args.budget
                )
            conn.close()
    text = json.dumps(results, indent=1)
    if args.json:
        Path(args.json).write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
