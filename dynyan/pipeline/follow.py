"""Live views over PostgreSQL: a view follows every committed change.

``follow(view, dsn)`` takes a consistent snapshot of the tables the view
reads, then applies each transaction that PostgreSQL commits, in commit
order, as one atomic batch, read from a logical replication slot with the
``pgoutput`` plugin over the streaming replication protocol (docs/follow.md
says why: pushed within a millisecond of the commit, no polling, the
decoding PostgreSQL's own logical replication uses, in every build of the
server and on managed services).

Set-up on a fresh start: the tables are looked up in the catalog (and the
schema derived from it when the query declares none), each must have
``REPLICA IDENTITY FULL`` (an UPDATE or DELETE then carries the whole old
row, which the view needs to take the row out), a publication lists them,
and ``CREATE_REPLICATION_SLOT … LOGICAL pgoutput`` exports the snapshot at
the slot's consistent point: ``COPY`` reads the tables inside a transaction
that uses exactly that snapshot, so every transaction is either in the
snapshot or streamed afterwards, never both, never neither.

Changes: an INSERT adds the row, a DELETE takes it out, an UPDATE does both
(old row out, new row in), a TRUNCATE takes out every row of the relation.
Within a transaction the changes are summed per row, then applied with one
``view.update(relation, rows, mults)`` per relation; if one fails, the
batches already applied are undone, so a transaction is applied entirely or
not at all. DDL that changes a followed table (its columns, its name, its
replica identity) arrives as a new Relation message: following stops there
with a message saying what changed.

Exactly once: with ``checkpoint=DIR`` the view's ``snapshot()`` is saved
with the end LSN of the last transaction applied (``dynyan.pipeline.checkpoint``:
atomic, fsynced), and the slot is acknowledged only up to that LSN, so
PostgreSQL keeps everything after it. A restart restores the view and asks
for the transactions after that LSN; a dropped connection is reopened with
exponential backoff and resumes from the last transaction applied.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import hashlib
import os
import re
import select
import signal
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Callable

from . import checkpoint as _ckpt
from . import pgoutput as pgo
from ..errors import FollowError
from .pgcatalog import (
    Table,
    _catalog_entry,
    _CatalogEntry,
    _connect,
    _driver,
    _pg_message,
    _resolve_target,
    _transient,
)

DEFAULT_EVERY_SECONDS = 10.0  # checkpoint interval
DEFAULT_STATUS_SECONDS = 10.0  # a health line on stderr (not on a terminal)
FEEDBACK_SECONDS = 1.0  # standby status updates to the server
HEALTH_SECONDS = 5.0  # catalog check and the server's WAL position
MAX_BACKOFF_SECONDS = 30.0
FIRST_BACKOFF_SECONDS = 0.5
MIN_SERVER_VERSION = 120000
_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}\Z")


# ---------------------------------------------------------------------------
# What a commit looks like from the outside


@dataclasses.dataclass
class Commit:
    """One transaction applied to the view (or the initial snapshot).

    ``changes``: the change of the query result, merged over the whole
    transaction (row, +k or -k), when the view is in push mode, else None.
    ``lsn``: the commit's LSN (for the snapshot, the slot's consistent point);
    LSNs of later commits are larger, so a consumer that remembers the last
    one it handled can drop the commits a resumed follower reports again.
    """

    lsn: int
    end_lsn: int
    xid: int | None
    time: float | None  # commit time, Unix seconds (None for the snapshot)
    applied_at: float  # Unix seconds when the view held it
    events: int  # row changes read (UPDATE counts two)
    changes: list | None
    snapshot: bool = False

    @property
    def lsn_text(self) -> str:
        return pgo.format_lsn(self.lsn)

    @property
    def latency(self) -> float | None:
        """Seconds from the commit to the view holding it."""
        return None if self.time is None else self.applied_at - self.time


@dataclasses.dataclass
class FollowSummary:
    """What a follower did; ``str()`` is the human summary."""

    database: str = ""
    slot: str = ""
    commits: int = 0
    events: int = 0
    snapshot_rows: int = 0
    snapshot_seconds: float = 0.0
    seconds: float = 0.0
    resumed_from: int | None = None
    applied_lsn: int = 0
    checkpoints: int = 0
    checkpoint_seconds: float = 0.0  # following paused for checkpoints
    checkpoint_background_seconds: float = 0.0  # written by forked copies meanwhile
    reconnects: int = 0
    result_rows: int | None = None
    stopped_by: str = ""

    @property
    def events_per_sec(self) -> float:
        return self.events / self.seconds if self.seconds > 0 else 0.0

    def __str__(self) -> str:
        lines = []
        if self.resumed_from is not None:
            lines.append(f"resumed after LSN {pgo.format_lsn(self.resumed_from)}")
        else:
            lines.append(
                f"snapshot: {self.snapshot_rows:,} rows in {self.snapshot_seconds:.2f} s"
            )
        lines.append(
            f"followed {self.commits:,} commits ({self.events:,} row changes) in "
            f"{self.seconds:.1f} s: {self.events_per_sec:,.0f} changes/s; "
            f"applied up to LSN {pgo.format_lsn(self.applied_lsn)} (slot {self.slot})"
        )
        if self.checkpoints:
            lines.append(
                f"checkpoints: {self.checkpoints} (following paused {self.checkpoint_seconds:.2f} s"
                + (
                    f"; written in the background in {self.checkpoint_background_seconds:.2f} s)"
                    if self.checkpoint_background_seconds
                    else ")"
                )
            )
        if self.reconnects:
            lines.append(f"reconnects: {self.reconnects}")
        if self.stopped_by:
            lines.append(f"stopped: {self.stopped_by}")
        if self.result_rows is not None:
            lines.append(f"result: {self.result_rows:,} rows")
        return "\n".join(lines)


# ---------------------------------------------------------------------------
# The follower


class _Txn:
    """The changes of one transaction, summed per relation and row."""

    __slots__ = ("commit_lsn", "time", "xid", "net", "events", "skip")

    def __init__(self, commit_lsn: int, commit_time: int, xid: int, skip: bool):
        self.commit_lsn = commit_lsn
        self.time = commit_time
        self.xid = xid
        self.net: dict[str, dict[tuple, int]] = {}
        self.events = 0
        self.skip = skip


_STOPPED = object()


class Follower:
    """Keeps ``view`` equal to a query over a PostgreSQL database.

    Run it with ``run()`` (blocks until ``stop()``, ``duration`` or an
    error), or ``start()`` it on a background thread. While it runs, read
    the view under ``follower.lock``; ``wait_for(lsn)`` waits until the view
    holds everything committed up to an LSN; ``async for commit in
    follower.commits()`` receives the commits in an asyncio program.
    """

    def __init__(
        self,
        target,
        dsn: str,
        *,
        schema: str | Path | None = None,
        checkpoint: str | Path | None = None,
        every: float | None = DEFAULT_EVERY_SECONDS,
        every_commits: int | None = None,
        slot: str | None = None,
        publication: str | None = None,
        set_replica_identity: bool = False,
        on_commit: Callable[[Commit], None] | None = None,
        on_delta: Callable[[tuple, int], None] | None = None,
        push: bool | None = None,
        initial: bool = True,
        duration: float | None = None,
        retry_for: float | None = None,
        progress: bool | None = False,
        status_every: float | None = None,
        log: Callable[[str], None] | None = None,
        health_every: float = HEALTH_SECONDS,
        background_checkpoints: bool | None = None,
    ):
        """See ``follow()`` for the options; ``health_every``: seconds between
        checks that the followed tables still exist (and of the server's WAL
        position, for the lag)."""
        for name, value in (("slot", slot), ("publication", publication)):
            if value is not None and not _NAME.match(value):
                raise FollowError(
                    f"{name} name {value!r} must be lower-case letters, digits and _ "
                    "(at most 63, not starting with a digit)"
                )
        if every is not None and every < 0:
            raise FollowError(f"checkpoint interval must be >= 0 s, got {every}")
        if every_commits is not None and every_commits < 1:
            raise FollowError(f"every_commits must be >= 1, got {every_commits}")
        _driver()
        self.dsn = dsn
        self.checkpoint = Path(checkpoint) if checkpoint is not None else None
        self.every = every
        self.every_commits = every_commits
        self.on_commit = on_commit
        self.on_delta = on_delta
        self.initial = initial
        self.duration = duration
        self.retry_for = retry_for
        self.set_replica_identity = set_replica_identity
        self.progress = progress
        self.status_every = status_every
        self.health_every = health_every
        # a forked copy writes the checkpoint: following does not pause for it
        self.background_checkpoints = (
            hasattr(os, "fork")
            if background_checkpoints is None
            else background_checkpoints
        )
        self._child = None  # (pid, LSN, pipe, start) of a checkpoint being written
        self.log = log or (lambda message: None)
        self.lock = threading.RLock()
        self.summary = FollowSummary()
        self.error: BaseException | None = None
        self.ready = (
            threading.Event()
        )  # the snapshot is loaded or the checkpoint restored

        self._conn = _connect(dsn)
        try:
            want_push = bool(on_delta or on_commit) if push is None else push
            resolved = _resolve_target(target, self._conn, schema, want_push)
        except BaseException:
            self._conn.close()
            raise
        self.view = resolved.view
        self.fingerprint = resolved.fingerprint
        self.name = resolved.name
        self._declared = resolved.declared
        self._strict = resolved.strict
        relations = getattr(self.view, "RELATIONS", None)
        if not isinstance(relations, dict) or not relations:
            raise FollowError(
                "the view has no RELATIONS mapping (is it a dynyan View?)"
            )
        self._relations = {rel: tuple(cols) for rel, cols in relations.items()}
        self._push = getattr(self.view, "_pending", None) is not None
        if (on_delta or push) and not self._push:
            raise FollowError("deltas need a view in push mode: View(push=True)")
        self.slot = slot
        self.publication = publication
        self._own_publication = False
        self._temporary_slot = False

        self.tables: dict[int, Table] = {}
        self.mirror: dict[str, dict[tuple, int]] = {rel: {} for rel in self._relations}
        self._bindings: dict[int, tuple[str, Callable, Table]] = {}
        self._encoding = "utf-8"
        self.system_id = ""
        self.database = ""
        self.applied_lsn = 0  # end LSN of the last transaction applied
        self.applied_commit_lsn = 0
        self.acked_lsn = 0  # what the slot may forget: durably applied
        self.server_lsn = 0
        self._idle_lsn = 0  # the server's sent position when nothing was in flight
        self.consistent_point = 0
        self._txn: _Txn | None = None
        self._rconn = None
        self._rcur = None
        self._streaming = False
        self._in_apply = False
        self._stop = threading.Event()
        self._stop_reason = ""
        # stop() wakes the loop through this pair (sockets: once closed, a
        # late stop() fails harmlessly instead of writing to a reused fd)
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._applied = threading.Condition(self.lock)
        self._listeners: list[Callable] = []
        self._thread: threading.Thread | None = None
        self._latencies: collections.deque = collections.deque(maxlen=10_000)
        self._commits_since_ckpt = 0
        self._last_ckpt = time.monotonic()
        self._bar = None
        try:  # refuse what cannot work before anything is created
            self._check_server()
            self.tables = self._lookup_tables()
        except BaseException:
            self._conn.close()
            self._wake_r.close()
            self._wake_w.close()
            raise

    # -- public API -----------------------------------------------------------

    def run(self) -> FollowSummary:
        """Follow until ``stop()``, ``duration`` or an error (a FollowError);
        the final checkpoint is written in every case but a crash."""
        t0 = time.perf_counter()
        started = time.monotonic()
        self._deadline = None if self.duration is None else started + self.duration
        try:
            self._setup()
            self.ready.set()
            self._follow()
        except BaseException as exc:
            self.error = exc
            raise
        finally:
            self.summary.seconds = (
                time.perf_counter() - t0 - self.summary.snapshot_seconds
            )
            self.summary.applied_lsn = self.applied_lsn
            self.summary.stopped_by = self._stop_reason or (
                f"error: {self.error}" if self.error is not None else ""
            )
            self._finish()
        return self.summary

    def start(self) -> "Follower":
        """Run on a daemon thread; returns once the view holds the snapshot
        (or the checkpoint), or raises the error that stopped it before."""
        self._thread = threading.Thread(
            target=self._run_quietly, name="dynyan-follow", daemon=True
        )
        self._thread.start()
        while not self.ready.wait(0.05):
            if not self._thread.is_alive():
                break
        if self.error is not None:
            raise self.error
        return self

    def stop(self, reason: str = "stopped") -> None:
        """Ask the follower to stop after the transaction it is applying."""
        if not self._stop.is_set():
            self._stop_reason = reason
            self._stop.set()
        try:
            self._wake_w.send(b"x")
        except OSError:  # full (already woken) or closed (already ended)
            pass

    def join(self, timeout: float | None = None) -> FollowSummary:
        """Wait for a ``start()``ed follower to end; re-raise its error."""
        if self._thread is not None:
            self._thread.join(timeout)
        if self.error is not None:
            raise self.error
        return self.summary

    def close(self) -> None:
        """Stop, wait for the thread, and close the catalog connection."""
        self.stop("closed")
        if self._thread is not None:
            self._thread.join()
        try:
            self._conn.close()
        except Exception:
            pass
        self._wake_r.close()
        self._wake_w.close()

    def __enter__(self) -> "Follower":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def wait_for(self, lsn: int | str, timeout: float | None = None) -> bool:
        """Wait until the view holds every transaction committed before ``lsn``
        (e.g. ``SELECT pg_current_wal_lsn()`` after a commit); False on timeout."""
        target = pgo.parse_lsn(lsn) if isinstance(lsn, str) else int(lsn)
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._applied:
            while self.position < target:
                if self.error is not None:
                    raise self.error
                if self._thread is not None and not self._thread.is_alive():
                    return False
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._applied.wait(0.1 if left is None else min(left, 0.1))
        return True

    @property
    def position(self) -> int:
        """How far the stream has been applied: the end of the last commit
        applied or, when no transaction was in flight after the last message,
        everything the server had sent by then (it skips other tables' WAL)."""
        return max(self.applied_lsn, self._idle_lsn)

    def commits(self):
        """The commits applied from now on, for asyncio code (call it inside
        the event loop): ``async for commit in follower.commits(): ...``; the
        iteration ends when the follower stops (raising its error, if any)."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue = asyncio.Queue()

        def deliver(item):
            loop.call_soon_threadsafe(queue.put_nowait, item)

        self._listeners.append(deliver)
        if self._stop.is_set() and not self.running:
            deliver(_STOPPED)

        async def iterate():
            try:
                while True:
                    item = await queue.get()
                    if item is _STOPPED:
                        if self.error is not None:
                            raise self.error
                        return
                    yield item
            finally:
                self._listeners.remove(deliver)

        return iterate()

    def drop(self) -> str:
        """Drop this follower's slot (and the publication it created) and
        delete its checkpoint: following ends for good (see ``drop()``)."""
        return drop(
            self.dsn,
            checkpoint=self.checkpoint,
            slot=self.slot,
            publication=self.publication if self._own_publication else None,
        )

    # -- set-up ---------------------------------------------------------------

    def _setup(self) -> None:
        saved = None
        if self.checkpoint is not None:
            saved = _ckpt.load_checkpoint(self.checkpoint)
        if saved is not None:
            self._resume(saved)
            return
        self._fresh_start()

    def _check_server(self) -> None:
        with self._conn.cursor() as cur:
            cur.execute(
                "SELECT current_setting('server_version_num')::int, "
                "current_setting('wal_level'), current_database(), "
                "pg_encoding_to_char(encoding) FROM pg_database "
                "WHERE datname = current_database()"
            )
            version, wal_level, database, encoding = cur.fetchone()
        if version < MIN_SERVER_VERSION:
            raise FollowError(
                f"PostgreSQL {version} is too old: dynyan follow needs 12 or later"
            )
        if wal_level != "logical":
            raise FollowError(
                f"wal_level is {wal_level}: logical replication needs wal_level = logical "
                "(ALTER SYSTEM SET wal_level = logical, then restart PostgreSQL)"
            )
        self.database = database
        self.summary.database = database
        from psycopg2.extensions import encodings

        self._encoding = encodings.get(encoding, "utf-8")

    def _lookup_tables(
        self, expected: dict[str, Table] | None = None
    ) -> dict[int, Table]:
        """The followed tables from the catalog; checks columns, types, replica identity."""
        tables: dict[int, Table] = {}
        with self._conn.cursor() as cur:
            for rel, view_columns in self._relations.items():
                entry = _catalog_entry(cur, rel)
                if (
                    expected is not None
                    and rel in expected
                    and expected[rel].oid != entry.oid
                ):
                    raise FollowError(
                        f"table {entry.qualified} is not the table the checkpoint followed "
                        f"(oid {entry.oid}, was {expected[rel].oid}): it was dropped and "
                        "created again; start over with a fresh checkpoint directory"
                    )
                columns = tuple(
                    pgo.Column(name, type_oid, typmod)
                    for name, type_oid, typmod, _nn, generated, _t in entry.columns
                    if not generated
                )
                generated = {c[0] for c in entry.columns if c[4]}
                table = Table(
                    rel,
                    entry.oid,
                    entry.schema,
                    entry.name,
                    columns,
                    view_columns,
                    self._strict,
                )
                for col in view_columns:
                    if col in generated:
                        raise FollowError(
                            f"{entry.qualified}.{col} is a generated column, which logical "
                            "replication does not send"
                        )
                positions = table.read_columns()
                declared = self._declared.get(rel, {})
                for pos, col in zip(positions, view_columns):
                    column = columns[pos]
                    kind = pgo.python_type(column.type_oid)
                    type_text = next(c[5] for c in entry.columns if c[0] == column.name)
                    if kind is None:
                        raise FollowError(
                            f"{entry.qualified}.{column.name} has type {type_text}, which "
                            "dynyan cannot hold (INTEGER, DECIMAL/DOUBLE, CHAR/VARCHAR/TEXT, DATE)"
                        )
                    want = declared.get(col)
                    if (
                        want is not None
                        and want != kind
                        and not (want == "float" and kind == "int")
                    ):
                        raise FollowError(
                            f"{entry.qualified}.{column.name} is {type_text} in PostgreSQL "
                            f"({kind} values) but the query's schema declares it {want}"
                        )
                if entry.replident != "f":
                    self._replica_identity(cur, entry)
                tables[entry.oid] = table
        return tables

    def _replica_identity(self, cur, entry: _CatalogEntry) -> None:
        current = {"d": "DEFAULT", "n": "NOTHING", "i": "USING INDEX"}.get(
            entry.replident, entry.replident
        )
        if not self.set_replica_identity:
            raise FollowError(
                f"table {entry.qualified} has REPLICA IDENTITY {current}: PostgreSQL then "
                "logs only the key of an updated or deleted row, and the view needs the whole "
                f"old row. Run ALTER TABLE {entry.qualified} REPLICA IDENTITY FULL "
                "(or let dynyan do it: --set-replica-identity)"
            )
        from psycopg2 import sql

        self.log(f"setting REPLICA IDENTITY FULL on {entry.qualified}")
        try:
            cur.execute(
                sql.SQL("ALTER TABLE {}.{} REPLICA IDENTITY FULL").format(
                    sql.Identifier(entry.schema), sql.Identifier(entry.name)
                )
            )
        except _driver().Error as exc:
            raise FollowError(
                f"cannot set REPLICA IDENTITY FULL on {entry.qualified}: {_pg_message(exc)}"
            ) from None

    def _default_slot(self) -> str:
        if self.checkpoint is None:
            self._temporary_slot = True
            return f"dynyan_{os.getpid()}_{os.urandom(4).hex()}"
        return checkpoint_slot(self.checkpoint)

    def _fresh_start(self) -> None:
        slot_given = self.slot is not None
        self.slot = self.slot or self._default_slot()
        self.publication = self.publication or self.slot
        self.summary.slot = self.slot
        self._ensure_publication()
        existing = self._slot_state()
        if existing is not None:
            if slot_given or self.checkpoint is None:
                raise FollowError(
                    f"replication slot {self.slot} already exists and "
                    f"{'there is no checkpoint to resume from' if self.checkpoint else 'nothing resumes from it'}: "
                    f"drop it (SELECT pg_drop_replication_slot('{self.slot}')) or choose another --slot"
                )
            if existing["active"]:
                raise FollowError(
                    f"replication slot {self.slot} is in use by another process"
                )
            # our own slot, left by a start interrupted before its first checkpoint
            self.log(f"dropping slot {self.slot}, left by an interrupted start")
            self._drop_slot()
        self._open_replication()
        try:
            self._rcur.execute(f"CREATE_REPLICATION_SLOT {self.slot} LOGICAL pgoutput")
            _, consistent_point, snapshot_name, _ = self._rcur.fetchone()
        except _driver().Error as exc:
            raise FollowError(
                f"cannot create replication slot {self.slot}: {_pg_message(exc)}"
            ) from None
        self.consistent_point = pgo.parse_lsn(consistent_point)
        self.log(
            f"slot {self.slot} created at {consistent_point}; reading the snapshot"
        )
        t = time.perf_counter()
        rows = self._read_snapshot(snapshot_name)
        self._load(rows)
        self.summary.snapshot_seconds = time.perf_counter() - t
        self.applied_lsn = self.applied_commit_lsn = self.consistent_point
        if self.checkpoint is not None:
            self._checkpoint()
        else:
            self.acked_lsn = self.applied_lsn
        self._start_streaming()

    def _resume(self, saved: dict) -> None:
        state = saved["state"]
        current = {t.relation: t for t in self.tables.values()}
        for before in state["tables"]:
            now = current.get(before.relation)
            change = (
                None if now is None else _ddl_change(before, now.as_relation_message())
            )
            if change is not None:
                raise FollowError(
                    f"table {before.qualified} changed ({change}) since the checkpoint in "
                    f"{self.checkpoint} was written: following stops; start over (dynyan "
                    "follow --drop, then follow again)"
                )
        if saved["fingerprint"] != self.fingerprint:
            raise FollowError(
                f"checkpoint {self.checkpoint} was written for another query (module "
                f"fingerprint {saved['fingerprint']}, this one is {self.fingerprint}); "
                "use another checkpoint directory"
            )
        if state.get("push", False) != self._push:
            modes = {True: "push mode (deltas)", False: "pull mode"}
            raise FollowError(
                f"checkpoint {self.checkpoint} was written in {modes[not self._push]} and "
                f"this follower runs in {modes[self._push]}: a view keeps push-only counts "
                "for some queries, so each mode needs its own checkpoint directory"
            )
        if self.slot is not None and self.slot != state["slot"]:
            raise FollowError(
                f"checkpoint {self.checkpoint} follows slot {state['slot']}, not {self.slot}"
            )
        self.slot = state["slot"]
        self.publication = state["publication"]
        self._own_publication = state.get("own_publication", False)
        self.summary.slot = self.slot
        self._open_replication()
        expected = (
            f"postgresql {self.system_id} database {self.database} slot {self.slot}"
        )
        if saved["stream_id"] != expected:
            raise FollowError(
                f"checkpoint {self.checkpoint} belongs to another database or slot "
                f"({saved['stream_id']}; this is {expected})"
            )
        if self._slot_state() is None:
            raise FollowError(
                f"replication slot {self.slot} no longer exists, so the changes after LSN "
                f"{pgo.format_lsn(saved['last_seq'])} are lost; remove {self.checkpoint} "
                "to start over from a new snapshot"
            )
        saved_tables = {t.relation: t for t in state["tables"]}
        self._lookup_tables(
            expected=saved_tables
        )  # the tables still exist, identity FULL
        self.tables = {t.oid: t for t in state["tables"]}
        with self.lock:
            restored = self.view.restore(state["view"])
            if (
                restored is not None
                and restored is not self.view
                and hasattr(restored, "update")
            ):
                self.view = restored
            self.mirror = state["mirror"]
        self.applied_lsn = self.acked_lsn = saved["last_seq"]
        self.applied_commit_lsn = state["commit_lsn"]
        self.consistent_point = state["consistent_point"]
        self.summary.resumed_from = self.applied_lsn
        self.summary.commits = 0
        self.log(
            f"resumed from {self.checkpoint} after LSN {pgo.format_lsn(self.applied_lsn)}"
        )
        self._start_streaming()

    def _ensure_publication(self) -> None:
        from psycopg2 import sql

        oids = sorted(self.tables)
        with self._conn.cursor() as cur:
            cur.execute(
                "SELECT pubinsert AND pubupdate AND pubdelete AND pubtruncate, puballtables "
                "FROM pg_publication WHERE pubname = %s",
                (self.publication,),
            )
            found = cur.fetchone()
            if found is None:
                names = sql.SQL(", ").join(
                    sql.SQL("{}.{}").format(
                        sql.Identifier(t.schema), sql.Identifier(t.name)
                    )
                    for t in (self.tables[o] for o in oids)
                )
                try:
                    cur.execute(
                        sql.SQL("CREATE PUBLICATION {} FOR TABLE {}").format(
                            sql.Identifier(self.publication), names
                        )
                    )
                except _driver().Error as exc:
                    raise FollowError(
                        f"cannot create publication {self.publication}: {_pg_message(exc)}"
                    ) from None
                self._own_publication = True
                return
            publishes_all, all_tables = found
            if not publishes_all:
                raise FollowError(
                    f"publication {self.publication} does not publish every kind of change "
                    "(insert, update, delete, truncate)"
                )
            if all_tables:
                return
            cur.execute(
                "SELECT c.oid FROM pg_publication_tables p JOIN pg_namespace n ON n.nspname = p.schemaname "
                "JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = p.tablename "
                "WHERE p.pubname = %s",
                (self.publication,),
            )
            have = {row[0] for row in cur.fetchall()}
        missing = [self.tables[o].qualified for o in oids if o not in have]
        if missing:
            raise FollowError(
                f"publication {self.publication} does not include {', '.join(missing)}"
            )

    def _slot_state(self) -> dict | None:
        with self._conn.cursor() as cur:
            cur.execute(
                "SELECT plugin, active, confirmed_flush_lsn::text, database FROM pg_replication_slots "
                "WHERE slot_name = %s",
                (self.slot,),
            )
            found = cur.fetchone()
        if found is None:
            return None
        plugin, active, confirmed, database = found
        if plugin != "pgoutput" or database != self.database:
            raise FollowError(
                f"replication slot {self.slot} belongs to another consumer "
                f"(plugin {plugin}, database {database})"
            )
        return {"active": active, "confirmed": confirmed}

    def _read_snapshot(self, snapshot_name: str) -> dict[str, list[tuple]]:
        """Every followed table as of the slot's exported snapshot."""
        psycopg2 = _driver()
        from psycopg2 import sql

        conn = _connect(self.dsn)
        rows: dict[str, list[tuple]] = {}
        try:
            conn.autocommit = False
            conn.set_session(isolation_level="REPEATABLE READ", readonly=True)
            with conn.cursor() as cur:
                cur.execute("SET TRANSACTION SNAPSHOT %s", (snapshot_name,))
                for table in self.tables.values():
                    positions = table.read_columns()
                    names = [table.columns[p].name for p in positions]
                    decode = pgo.row_decoder(
                        list(range(len(names))),
                        [
                            pgo.value_decoder(table.columns[p].type_oid, self._encoding)
                            for p in positions
                        ],
                    )
                    sink = _CopySink(decode, table)
                    statement = sql.SQL("COPY {}.{} ({}) TO STDOUT").format(
                        sql.Identifier(table.schema),
                        sql.Identifier(table.name),
                        sql.SQL(", ").join(map(sql.Identifier, names)),
                    )
                    cur.copy_expert(statement.as_string(conn), sink)
                    rows[table.relation] = sink.rows
            conn.rollback()
        except psycopg2.Error as exc:
            raise FollowError(
                f"cannot read the initial snapshot: {_pg_message(exc)}"
            ) from None
        finally:
            conn.close()
        return rows

    def _load(self, rows: dict[str, list[tuple]]) -> None:
        """Apply the snapshot to the (empty) view: one batch per relation."""
        # the snapshot's changes are the whole result: merged only to report them
        merged: dict | None = {} if self._push and self.initial else None
        total = 0
        with self.lock:
            for rel, batch in rows.items():
                if not batch:
                    continue
                counts: dict[tuple, int] = {}
                for row in batch:
                    counts[row] = counts.get(row, 0) + 1
                distinct = list(counts)
                try:
                    self.view.update(rel, distinct, [counts[r] for r in distinct])
                except Exception as exc:
                    raise FollowError(
                        f"the view refuses the snapshot of {rel}: {exc}"
                    ) from None
                self.mirror[rel] = counts
                total += len(batch)
                if merged is not None:
                    _merge(merged, self.view.deltas())
        self.summary.snapshot_rows = total
        self.log(f"snapshot: {total:,} rows")
        commit = Commit(
            lsn=self.consistent_point,
            end_lsn=self.consistent_point,
            xid=None,
            time=None,
            applied_at=time.time(),
            events=total,
            changes=(
                None if merged is None else [(r, c) for r, c in merged.items() if c]
            ),
            snapshot=True,
        )
        if self.initial:
            self._deliver(commit)

    # -- streaming ------------------------------------------------------------

    def _open_replication(self) -> None:
        self._rconn = _connect(self.dsn, replication=True)
        self._rcur = self._rconn.cursor()
        self._rcur.execute("IDENTIFY_SYSTEM")
        system_id, _timeline, _xlogpos, _dbname = self._rcur.fetchone()
        self.system_id = str(system_id)

    def _close_replication(self) -> None:
        self._streaming = False
        conn, self._rconn, self._rcur = self._rconn, None, None
        if conn is not None:
            try:
                conn.close()
            except Exception:
                pass

    def _start_streaming(self) -> None:
        self._bindings = {}
        self._txn = None
        try:
            self._rcur.start_replication(
                slot_name=self.slot,
                decode=False,
                start_lsn=self.applied_lsn,
                options={"proto_version": "1", "publication_names": self.publication},
                status_interval=10,
            )
            self._streaming = True
        except _driver().Error as exc:
            if _transient(exc):
                raise
            raise FollowError(
                f"cannot start replication from slot {self.slot}: {_pg_message(exc)}"
            ) from None

    def _follow(self) -> None:
        """The main loop, with reconnects."""
        self._progress_start()
        failed_since = None
        attempt = 0
        while not self._stop.is_set():
            try:
                if self._rcur is None:
                    self._open_replication()
                    self._start_streaming()
                    self.summary.reconnects += 1
                    self.log(
                        f"reconnected; resuming after LSN {pgo.format_lsn(self.applied_lsn)}"
                    )
                self._stream()
                failed_since, attempt = None, 0
            except FollowError:
                raise
            except Exception as exc:
                psycopg2 = _driver()
                if not isinstance(exc, psycopg2.Error) or not _transient(exc):
                    raise
                self._close_replication()
                self._txn = None
                now = time.monotonic()
                failed_since = failed_since or now
                if self.retry_for is not None and now - failed_since > self.retry_for:
                    raise FollowError(
                        f"lost the connection to PostgreSQL and could not get it back within "
                        f"{self.retry_for:g} s: {_pg_message(exc)}"
                    ) from None
                delay = min(MAX_BACKOFF_SECONDS, FIRST_BACKOFF_SECONDS * 2**attempt)
                attempt += 1
                self.log(
                    f"connection lost ({_pg_message(exc)}); reconnecting in {delay:.1f} s"
                )
                self._sleep(delay)

    def _sleep(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while not self._stop.is_set():
            left = deadline - time.monotonic()
            if left <= 0 or (
                self._deadline is not None and time.monotonic() >= self._deadline
            ):
                return
            select.select([self._wake_r], [], [], min(left, 0.5))
            self._drain_wake()

    def _drain_wake(self) -> None:
        try:
            while self._wake_r.recv(64):
                pass
        except (BlockingIOError, OSError):
            pass

    def _stream(self) -> None:
        cur, conn = self._rcur, self._rconn
        now = time.monotonic()
        next_tick = now
        self._next_feedback = self._next_health = now
        self._next_status = now + (self.status_every or DEFAULT_STATUS_SECONDS)
        read = cur.read_message
        handle = self._handle
        while not self._stop.is_set():
            msg = read()
            if self._txn is None:
                self._idle_lsn = cur.wal_end  # read on this thread, after the apply
            if msg is not None:
                handle(msg.payload)
                if self._txn is None:
                    self._idle_lsn = cur.wal_end
                    self._applied.acquire()
                    self._applied.notify_all()
                    self._applied.release()
                if time.monotonic() < next_tick:
                    continue
            now = time.monotonic()
            if now >= next_tick:
                self._tick(now)
                next_tick = now + 0.2
            if msg is None:
                select.select([conn, self._wake_r], [], [], max(0.0, next_tick - now))
                self._drain_wake()

    def _handle(self, buf) -> None:
        kind = buf[0]
        txn = self._txn
        if kind == 0x49:  # I
            oid, values = pgo.decode_insert(buf)
            binding = self._bindings.get(oid)
            if binding is None or txn is None or txn.skip:
                return
            rel, decode, table = binding
            row = self._decode(decode, values, table)
            net = txn.net.get(rel)
            if net is None:
                net = txn.net[rel] = {}
            net[row] = net.get(row, 0) + 1
            txn.events += 1
        elif kind == 0x55:  # U
            oid, old_kind, old, new = pgo.decode_update(buf)
            binding = self._bindings.get(oid)
            if binding is None or txn is None or txn.skip:
                return
            rel, decode, table = binding
            if old_kind != "O":
                raise FollowError(_no_old_row("UPDATE", table))
            if pgo.UNCHANGED in new:
                new = [o if n is pgo.UNCHANGED else n for n, o in zip(new, old)]
            before = self._decode(decode, old, table)
            after = self._decode(decode, new, table)
            net = txn.net.get(rel)
            if net is None:
                net = txn.net[rel] = {}
            net[before] = net.get(before, 0) - 1
            net[after] = net.get(after, 0) + 1
            txn.events += 2
        elif kind == 0x44:  # D
            oid, old_kind, old = pgo.decode_delete(buf)
            binding = self._bindings.get(oid)
            if binding is None or txn is None or txn.skip:
                return
            rel, decode, table = binding
            if old_kind != "O":
                raise FollowError(_no_old_row("DELETE", table))
            row = self._decode(decode, old, table)
            net = txn.net.get(rel)
            if net is None:
                net = txn.net[rel] = {}
            net[row] = net.get(row, 0) - 1
            txn.events += 1
        elif kind == 0x42:  # B
            commit_lsn, commit_time, xid = pgo.decode_begin(buf)
            # a transaction the checkpoint already holds (commit before its end LSN)
            self._txn = _Txn(
                commit_lsn, commit_time, xid, commit_lsn < self.applied_lsn
            )
        elif kind == 0x43:  # C
            commit_lsn, end_lsn, commit_time = pgo.decode_commit(buf)
            self._txn = None
            if txn is None or txn.skip:
                return
            self._apply(txn, end_lsn)
        elif kind == 0x52:  # R
            self._relation(pgo.decode_relation(buf))
        elif kind == 0x54:  # T
            if txn is None or txn.skip:
                return
            for oid in pgo.decode_truncate(buf):
                binding = self._bindings.get(oid) or (
                    (self.tables[oid].relation, None, self.tables[oid])
                    if oid in self.tables
                    else None
                )
                if binding is None:
                    continue
                rel = binding[0]
                txn.net[rel] = {row: -count for row, count in self.mirror[rel].items()}
                txn.events += len(self.mirror[rel])
        # Y (type), O (origin), M (message): nothing to do

    def _decode(self, decode, values, table: Table) -> tuple:
        try:
            return decode(values)
        except (ValueError, TypeError, IndexError) as exc:
            raise FollowError(
                f"cannot follow {table.qualified}: {exc} (in the transaction committed "
                f"at LSN {pgo.format_lsn(self._txn.commit_lsn) if self._txn else '?'})"
            ) from None

    def _relation(self, msg: pgo.RelationMessage) -> None:
        table = self.tables.get(msg.oid)
        if table is None:
            return
        change = _ddl_change(table, msg)
        if change is not None:
            at = pgo.format_lsn(self._txn.commit_lsn) if self._txn else "?"
            raise FollowError(
                f"table {table.qualified} changed ({change}) in the transaction committed at "
                f"LSN {at}: following stops here; the view holds every transaction before it "
                f"(up to LSN {pgo.format_lsn(self.applied_lsn)}). To follow the new table, "
                "start over: drop the slot and remove the checkpoint (dynyan follow --drop)"
            )
        positions = table.read_columns(msg.columns)
        decoders = [
            pgo.value_decoder(msg.columns[p].type_oid, self._encoding)
            for p in positions
        ]
        self._bindings[msg.oid] = (
            table.relation,
            pgo.row_decoder(positions, decoders),
            table,
        )

    def _apply(self, txn: _Txn, end_lsn: int) -> None:
        """Apply one transaction to the view, all or nothing."""
        view = self.view
        done = []
        merged: dict | None = {} if self._push else None
        with self.lock:
            self._in_apply = True
            try:
                for rel, net in txn.net.items():
                    rows = [row for row, m in net.items() if m]
                    if not rows:
                        continue
                    mults = [net[row] for row in rows]
                    view.update(rel, rows, mults)
                    done.append((rel, rows, mults))
                    if merged is not None:
                        _merge(merged, view.deltas())
            except BaseException as exc:
                for rel, rows, mults in reversed(done):
                    view.update(rel, rows, [-m for m in mults])
                self._in_apply = False
                if isinstance(exc, Exception):
                    raise FollowError(
                        f"the view refuses the transaction committed at LSN "
                        f"{pgo.format_lsn(txn.commit_lsn)} (xid {txn.xid}): {exc}; it holds every "
                        f"transaction up to LSN {pgo.format_lsn(self.applied_lsn)}"
                    ) from None
                raise
            mirror = self.mirror
            for rel, rows, mults in done:
                counts = mirror[rel]
                for row, m in zip(rows, mults):
                    c = counts.get(row, 0) + m
                    if c:
                        counts[row] = c
                    else:
                        del counts[row]
            self.applied_lsn = end_lsn
            self.applied_commit_lsn = txn.commit_lsn
            self.summary.commits += 1
            self.summary.events += txn.events
            self._commits_since_ckpt += 1
            self._in_apply = False
            if self.checkpoint is None:
                self.acked_lsn = end_lsn
            self._applied.notify_all()
        applied_at = time.time()
        commit_time = pgo.pg_time(txn.time)
        self._latencies.append(applied_at - commit_time)
        commit = Commit(
            lsn=txn.commit_lsn,
            end_lsn=end_lsn,
            xid=txn.xid,
            time=commit_time,
            applied_at=applied_at,
            events=txn.events,
            changes=(
                None if merged is None else [(r, c) for r, c in merged.items() if c]
            ),
        )
        self._deliver(commit)
        if self.checkpoint is not None and (
            (
                self.every_commits is not None
                and self._commits_since_ckpt >= self.every_commits
            )
            or (
                self.every is not None
                and time.monotonic() - self._last_ckpt >= self.every
            )
        ):
            self._checkpoint()

    def _deliver(self, commit: Commit) -> None:
        if self.on_commit is not None:
            self.on_commit(commit)
        if self.on_delta is not None and commit.changes:
            for row, change in commit.changes:
                self.on_delta(row, change)
        for listener in list(self._listeners):
            listener(commit)

    # -- housekeeping ---------------------------------------------------------

    def _tick(self, now: float) -> None:
        if now >= self._next_feedback:
            self._feedback()
            self._next_feedback = now + FEEDBACK_SECONDS
        if now >= self._next_health:
            self._health()
            self._next_health = now + self.health_every
        if (
            self.checkpoint is not None
            and self.every is not None
            and self._commits_since_ckpt
            and now - self._last_ckpt >= self.every
            and self._txn is None
        ):
            self._checkpoint()
        if self._child is not None:
            self._reap()
        self._progress_update(now)
        if self._deadline is not None and now >= self._deadline:
            self.stop(f"after {self.duration:g} s")

    def _feedback(self, force: bool = True) -> None:
        cur = self._rcur
        if cur is None or not self._streaming:
            return
        cur.send_feedback(
            write_lsn=self.position,
            flush_lsn=self.acked_lsn,
            apply_lsn=self.applied_lsn,
            force=force,
        )

    def _health(self) -> None:
        """The server's WAL position (for the lag) and the followed tables
        still there; a lost catalog connection is reopened next time."""
        try:
            with self._conn.cursor() as cur:
                cur.execute(
                    "SELECT (CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() "
                    "ELSE pg_current_wal_lsn() END - '0/0'::pg_lsn)::bigint, "
                    "ARRAY(SELECT oid::bigint FROM pg_class WHERE oid = ANY(%s::oid[]))",
                    (list(self.tables),),
                )
                self.server_lsn, present = cur.fetchone()
        except _driver().Error:
            try:
                self._conn.close()
            except Exception:
                pass
            try:
                self._conn = _connect(self.dsn)
            except FollowError:
                pass
            return
        missing = [
            t.qualified for oid, t in self.tables.items() if oid not in set(present)
        ]
        if missing:
            raise FollowError(
                f"table {', '.join(missing)} was dropped: following stops; the view holds "
                f"every transaction up to LSN {pgo.format_lsn(self.applied_lsn)}"
            )

    def lag(self) -> tuple[int, float]:
        """(bytes of WAL the view is behind the server, seconds from the last
        commit applied to its application)."""
        behind = max(0, self.server_lsn - self.position)
        latency = self._latencies[-1] if self._latencies else 0.0
        return behind, latency

    def _checkpoint(self) -> None:
        """Save the view with the LSN it holds; the slot is acknowledged up
        to it once the file is durable. In the background (a forked copy of
        the process writes it while following goes on) where fork exists."""
        t = time.perf_counter()
        self._commits_since_ckpt = 0
        self._last_ckpt = time.monotonic()
        if not self.background_checkpoints:
            self._write_checkpoint()
            self.acked_lsn = self.applied_lsn
            self.summary.checkpoints += 1
            self.summary.checkpoint_seconds += time.perf_counter() - t
            self._feedback()
            return
        if self._child is not None:
            self._reap(block=True)  # one at a time, in order
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: write, report, exit without any clean-up
            code = 1
            try:
                os.close(read_end)
                signal.signal(signal.SIGINT, signal.SIG_IGN)
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                self._write_checkpoint()
                code = 0
            except BaseException as exc:
                os.write(write_end, f"{type(exc).__name__}: {exc}".encode()[:4000])
            finally:
                os._exit(code)
        os.close(write_end)
        self._child = (pid, self.applied_lsn, read_end, time.perf_counter())
        self.summary.checkpoint_seconds += time.perf_counter() - t

    def _reap(self, block: bool = False) -> None:
        """Collect a background checkpoint; acknowledge what it made durable."""
        pid, lsn, read_end, started = self._child
        done, status = os.waitpid(pid, 0 if block else os.WNOHANG)
        if done == 0:
            return
        self._child = None
        try:
            message = os.read(read_end, 4096).decode(errors="replace")
        finally:
            os.close(read_end)
        if os.waitstatus_to_exitcode(status) != 0:
            raise FollowError(
                f"cannot write the checkpoint in {self.checkpoint}: "
                f"{message or 'the writing process ended with status ' + str(status)}"
            )
        self.acked_lsn = max(self.acked_lsn, lsn)
        self.summary.checkpoints += 1
        self.summary.checkpoint_background_seconds += time.perf_counter() - started
        self._feedback()

    def _write_checkpoint(self) -> None:
        state = {
            "view": self.view.snapshot(),
            "mirror": self.mirror,
            "tables": list(self.tables.values()),
            "slot": self.slot,
            "publication": self.publication,
            "own_publication": self._own_publication,
            "commit_lsn": self.applied_commit_lsn,
            "consistent_point": self.consistent_point,
            "push": self._push,
        }
        try:
            _ckpt.save_checkpoint(
                self.checkpoint,
                state=state,
                last_seq=self.applied_lsn,
                events=self.summary.events,
                fingerprint=self.fingerprint,
                stream_id=f"postgresql {self.system_id} database {self.database} slot {self.slot}",
            )
        except OSError as exc:
            raise FollowError(
                f"cannot write the checkpoint in {self.checkpoint}: {exc}"
            ) from None

    def _progress_start(self) -> None:
        self._status_t = time.monotonic()
        self._status_events = self.summary.events
        show_bar = self.progress if self.progress is not None else sys.stderr.isatty()
        if show_bar:
            from tqdm import tqdm

            self._bar = tqdm(
                unit="ev",
                unit_scale=True,
                dynamic_ncols=True,
                file=sys.stderr,
                desc="follow",
            )
            self._bar_events = self.summary.events

    def _progress_update(self, now: float) -> None:
        behind, latency = self.lag()
        if self._bar is not None:
            self._bar.update(self.summary.events - self._bar_events)
            self._bar_events = self.summary.events
            self._bar.set_postfix_str(
                f"{self.summary.commits:,} commits, lag {_bytes(behind)} {latency * 1000:.1f} ms",
                refresh=False,
            )
            return
        if self.status_every is None or now < self._next_status:
            return
        rate = (self.summary.events - self._status_events) / max(
            1e-9, now - self._status_t
        )
        self._status_t, self._status_events = now, self.summary.events
        self._next_status = now + self.status_every
        self.log(self.status_line(rate))

    def status_line(self, rate: float | None = None) -> str:
        """One line of health: commits, changes, rate, lag, position."""
        behind, latency = self.lag()
        recent = sorted(self._latencies)
        median = recent[len(recent) // 2] if recent else 0.0
        return (
            f"follow: {self.summary.commits:,} commits, {self.summary.events:,} changes"
            + (f", {rate:,.0f} changes/s" if rate is not None else "")
            + f"; lag {_bytes(behind)}, last commit {latency * 1000:.1f} ms "
            f"(median {median * 1000:.1f} ms); at LSN {pgo.format_lsn(self.applied_lsn)}"
        )

    def _finish(self) -> None:
        """Final checkpoint (unless interrupted mid-transaction), feedback, clean-up."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        try:
            if self._child is not None:
                self._reap(block=True)
            if (
                self.checkpoint is not None
                and self.ready.is_set()
                and not self._in_apply
                and self.acked_lsn < self.applied_lsn
            ):
                self.background_checkpoints = False  # the last one: wait for it
                self._checkpoint()
            if self._rcur is not None and self.ready.is_set():
                try:
                    self._feedback(force=True)
                except Exception:
                    pass
        finally:
            self._close_replication()
            if self._temporary_slot:
                try:
                    self._drop_slot_and_publication()
                except Exception as exc:  # the session is ending: say so, do not mask
                    self.log(f"could not drop slot {self.slot}: {exc}")
            try:
                self._conn.close()
            except Exception:
                pass
            for listener in list(self._listeners):
                listener(_STOPPED)
            self._wake_r.close()
            self._wake_w.close()
            with self._applied:
                self._applied.notify_all()

    def _drop_slot(self) -> None:
        _drop_slot(self._conn, self.slot)

    def _drop_slot_and_publication(self) -> None:
        if self._conn.closed:
            self._conn = _connect(self.dsn)
        _drop_slot(self._conn, self.slot)
        if self._own_publication:
            _drop_publication(self._conn, self.publication)

    def _run_quietly(self) -> None:
        try:
            self.run()
        except BaseException:
            pass  # kept in self.error; join() re-raises


def checkpoint_slot(directory) -> str:
    """The slot name a checkpoint directory uses unless told otherwise."""
    where = str(Path(directory).resolve())
    return "dynyan_" + hashlib.sha256(where.encode()).hexdigest()[:16]


def _drop_slot(conn, slot: str) -> bool:
    """Drop ``slot`` if it exists (waiting for a closing walsender to let go)."""
    for attempt in range(50):
        try:
            with conn.cursor() as cur:
                cur.execute(
                    "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots "
                    "WHERE slot_name = %s",
                    (slot,),
                )
                return cur.rowcount > 0
        except _driver().Error as exc:
            if getattr(exc, "pgcode", None) != "55006" or attempt == 49:
                raise FollowError(
                    f"cannot drop slot {slot}: {_pg_message(exc)}"
                ) from None
            time.sleep(0.1)
    return False


def _drop_publication(conn, publication: str) -> bool:
    from psycopg2 import sql

    with conn.cursor() as cur:
        cur.execute("SELECT 1 FROM pg_publication WHERE pubname = %s", (publication,))
        if cur.fetchone() is None:
            return False
        cur.execute(sql.SQL("DROP PUBLICATION {}").format(sql.Identifier(publication)))
    return True


def drop(
    dsn: str,
    *,
    checkpoint: str | Path | None = None,
    slot: str | None = None,
    publication: str | None = None,
) -> str:
    """End following for good: drop the replication slot (PostgreSQL keeps
    WAL for a slot until it is dropped), the publication dynyan created for
    it (or ``publication``), and the checkpoint. Says what it dropped."""
    if checkpoint is not None:
        saved = _ckpt.load_checkpoint(checkpoint)
        if saved is not None:
            state = saved["state"]
            if slot is not None and slot != state["slot"]:
                raise FollowError(
                    f"checkpoint {checkpoint} follows slot {state['slot']}, not {slot}"
                )
            slot = state["slot"]
            if publication is None and state.get("own_publication"):
                publication = state["publication"]
        elif slot is None:  # an interrupted first start: the default names
            slot = publication = checkpoint_slot(checkpoint)
    if slot is None:
        raise FollowError("nothing to drop: give the checkpoint directory or the slot")
    conn = _connect(dsn)
    try:
        done = [f"slot {slot}" if _drop_slot(conn, slot) else f"no slot {slot}"]
        if publication is not None:
            dropped = _drop_publication(conn, publication)
            done.append(
                f"publication {publication}"
                if dropped
                else f"no publication {publication}"
            )
    finally:
        conn.close()
    path = _ckpt.checkpoint_path(checkpoint) if checkpoint is not None else None
    if path is not None and path.exists():
        path.unlink()
        done.append(f"checkpoint {path}")
    return "dropped " + ", ".join(done)


def _merge(merged: dict, deltas) -> None:
    for row, change in deltas:
        merged[row] = merged.get(row, 0) + change


def _no_old_row(what: str, table: Table) -> str:
    return (
        f"an {what} on {table.qualified} carries only the row's key, not the whole old row: "
        f"run ALTER TABLE {table.qualified} REPLICA IDENTITY FULL (or --set-replica-identity), "
        "then start over"
    )


def _ddl_change(table: Table, msg: pgo.RelationMessage) -> str | None:
    """What changed about a followed table in a Relation message (None: nothing that matters)."""
    if (msg.namespace, msg.name) != (table.schema, table.name):
        return f"renamed to {msg.namespace}.{msg.name}"
    if msg.replica_identity != "f":
        return "its REPLICA IDENTITY is no longer FULL"
    old = {c.name: c for c in table.columns}
    new = {c.name: c for c in msg.columns}
    watched = (
        [c.name for c in table.columns]
        if table.strict
        else [table.columns[p].name for p in table.read_columns()]
    )
    for name in watched:
        if name not in new:
            return f"column {name} dropped or renamed"
        if (new[name].type_oid, new[name].typmod) != (
            old[name].type_oid,
            old[name].typmod,
        ):
            return f"column {name} changed its type"
    if table.strict:
        added = [c.name for c in msg.columns if c.name not in old]
        if added:
            return f"column {', '.join(added)} added"
    return None


def _bytes(n: int) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    return f"{n} B"


class _CopySink:
    """The file ``COPY … TO STDOUT`` writes to: each line becomes a view row."""

    def __init__(self, decode, table: Table):
        self.decode = decode
        self.table = table
        self.rows: list[tuple] = []
        self.partial = b""

    def write(self, data) -> None:
        if self.partial:
            data, self.partial = self.partial + data, b""
        if not data.endswith(b"\n"):  # psycopg2 writes whole rows; be safe anyway
            data, _, self.partial = data.rpartition(b"\n")
            if not data:
                return
            data += b"\n"
        try:
            if data.count(b"\n") == 1:
                self.rows.append(self.decode(pgo.copy_line(data[:-1])))
            else:
                self.rows += map(
                    self.decode, map(pgo.copy_line, data[:-1].split(b"\n"))
                )
        except (ValueError, TypeError) as exc:
            raise FollowError(f"cannot follow {self.table.qualified}: {exc}") from None


# ---------------------------------------------------------------------------
# The one-call API


def follow(
    target,
    dsn: str,
    *,
    background: bool = False,
    **options,
) -> Follower:
    """Keep a view equal to a query over the PostgreSQL database at ``dsn``.

    ``target``: a View (``View(push=True)`` for deltas), a generated module,
    a ``.sql`` file or SQL text (compiled; without CREATE TABLEs or
    ``schema=``, the schema comes from the database's catalog).

    Options: ``checkpoint=DIR`` (exactly once across restarts; resumes when
    DIR holds a checkpoint), ``every=SECONDS`` / ``every_commits=N`` (how
    often to checkpoint, default every 10 s), ``slot=``, ``publication=``
    (names; default derived from DIR), ``set_replica_identity=True`` (ALTER
    the tables to REPLICA IDENTITY FULL), ``on_commit(commit)`` and
    ``on_delta(row, change)`` (called on the follower's thread after each
    transaction, with the changes merged over it; they put a view compiled
    here in push mode, as ``push=True`` does for ``follower.commits()``),
    ``initial=False`` (do not report the snapshot as changes),
    ``schema=`` (CREATE TABLEs instead of the catalog), ``duration=SECONDS``,
    ``retry_for=SECONDS``
    (give up reconnecting; default never), ``progress=True`` (a bar on
    stderr), ``status_every=SECONDS`` with ``log=`` (health lines).

    ``background=False`` follows on the calling thread until ``duration``,
    an error or Ctrl-C (the checkpoint is written), then returns the
    follower (``Follower(...).run()`` keeps a handle for ``stop()`` from
    another thread); ``background=True`` returns as soon as the view holds
    the snapshot, the follower running on its own thread
    (``follower.stop()``, ``follower.join()``, ``with follower: ...``).
    """
    follower = Follower(target, dsn, **options)
    if background:
        return follower.start()
    follower.run()
    return follower
