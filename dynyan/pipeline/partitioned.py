"""Partitioned replay: P views maintained inside Spark tasks.

``replay_partitioned(query, stream, partitions=P)`` asks the compiler's
partition analysis (`dynyan.compiler.partition`) for a partition variable x,
then runs one Spark job over the stream's Parquet files:

    read each relation ─▶ tag its events with a partition: hash(x) mod P for
    the relations split by x, every partition (explode) for the others
    ─▶ repartition(P) so partition p is task p ─▶ sortWithinPartitions(seq)
    ─▶ mapInArrow: task p applies its events in seq order to its own View

Each task groups its events into the stream's batches (``seq // batch``: the
same batch boundaries in every task), applies a batch relation by relation
(inserts, then deletes) as ``dynyan replay`` does, and writes into its
partition's directory of the work directory (the ``--checkpoint`` directory,
or a temporary one):

- ``checkpoint.pkl`` every ``every`` stream positions and at the end (the
  view's snapshot, the last seq it applied, the length of its delta log);
- ``deltas.log`` in push mode: per batch, the net change of its result;
- ``rows.pkl`` at the end in pull mode: its result (row, multiplicity);
- ``status.json``: its process id, attempt and last checkpointed seq.

A task that starts where a checkpoint of its partition exists restores it,
cuts its delta log back to the checkpoint's length and applies only the
events after its seq. So a task or executor that dies is retried by Spark
(``local[2,4]``: up to 4 attempts) from its partition's last checkpoint, and
a replay stopped by anything is continued with ``resume=True``; the output
loses and duplicates nothing either way.

The driver then merges (`dynyan.compiler.partition` says how): pull mode
gathers the partitions' rows (or merges their groups); push mode merges the
partitions' changes batch by batch into the change stream one view would
report for the same batches. The work directory must be on a file system
the driver and every executor share (any local directory for ``local[N]``).
Pickles there are read back only by this code: keep the directory private,
as a checkpoint.
"""

from __future__ import annotations

import bisect
import functools
import heapq
import json
import os
import pickle
import resource
import shutil
import tempfile
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from . import checkpoint as _ckpt
from ..compiler import partition as _part
from ..errors import PipelineError
from .streams import Stream

PARTITIONING_FILE = "partitioning.json"
STATUS_FILE = "status.json"
DELTA_LOG = "deltas.log"
ROWS_FILE = "rows.pkl"
ROWS_PER_CHUNK = 20_000
MARKER_SEQ = 1 << 62  # one marker row per partition: every task sees its partition
RESULT_MODES = ("rows", "count", "none")
# Events per Arrow batch handed to a task (Spark's default is 10,000): fewer,
# larger conversions, as the arrow reader's 64 Ki-row slices.
ARROW_BATCH_CONF = "spark.sql.execution.arrow.maxRecordsPerBatch"
ARROW_BATCH_ROWS = 65_536


def partition_dir(work: str | Path, part: int) -> Path:
    return Path(work) / f"part-{part:05d}"


# --------------------------------------------------------------------------
# What a task needs (pickled to the executors)


@dataclass(frozen=True)
class TaskConfig:
    source: str  # the module the views run (the partial query's, to merge groups)
    fingerprint: str  # of the module and the partitioning: checkpoints refuse others
    stream_id: str
    relations: tuple[tuple[str, tuple[str, ...]], ...]  # (view relation, fields)
    batch: int
    partitions: int
    work: str
    every: int | None
    checkpoint: bool  # write checkpoints (else a retried task starts over)
    push: bool
    rows: str  # "write" | "count" | "none"


def _run_task(cfg: TaskConfig, batches) -> Iterator:
    """mapInArrow body: events of one or more partitions, sorted by
    (partition, seq), in; one record per partition with its figures out."""
    import numpy as np

    from ..compiler import import_source

    try:
        from pyspark import TaskContext

        ctx = TaskContext.get()
        attempt = ctx.attemptNumber() if ctx is not None else 0
    except ImportError:  # pragma: no cover - run outside Spark
        attempt = 0
    module = import_source(cfg.source)
    run = None
    for rb in batches:
        n = rb.num_rows
        if not n:
            continue
        parts = rb.column("_part").to_numpy(zero_copy_only=False)
        cuts = [0, *(np.flatnonzero(np.diff(parts)) + 1).tolist(), n]
        for lo, hi in zip(cuts, cuts[1:]):
            p = int(parts[lo])
            if run is None or run.part != p:
                if run is not None:
                    yield run.finish()
                run = _PartitionRun(cfg, module, p, attempt)
            run.feed(rb.slice(lo, hi - lo))
    if run is not None:
        yield run.finish()


class _PartitionRun:
    """One partition's view inside a task: restore, apply, checkpoint, output."""

    def __init__(self, cfg: TaskConfig, module, part: int, attempt: int):
        self.cfg, self.part, self.attempt = cfg, part, attempt
        self.dir = partition_dir(cfg.work, part)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.names = [name for name, _ in cfg.relations]
        self.view = module.View(push=True) if cfg.push else module.View()
        self.fingerprint = f"{cfg.fingerprint}/{part}"
        saved = None
        if cfg.checkpoint:
            saved = _ckpt.load_checkpoint(
                self.dir, fingerprint=self.fingerprint, stream_id=cfg.stream_id
            )
        log_bytes = 0
        self.last_seq = -1
        self.events_before = 0
        self.resumed_after = None
        if saved is not None:
            self.view.restore(saved["state"]["view"])
            self.last_seq = saved["last_seq"]
            self.events_before = saved["events"]
            self.resumed_after = self.last_seq
            log_bytes = saved["state"]["log_bytes"]
        self.log = None
        if cfg.push:
            path = self.dir / DELTA_LOG
            self.log = open(path, "r+b" if path.exists() else "w+b")
            self.log.truncate(log_bytes)
            self.log.seek(log_bytes)
            if saved is None:
                first = self.view.deltas()  # a global aggregate's row of nothing
                if first:
                    pickle.dump((-1, first), self.log, protocol=5)
        self.events = 0
        self.batches = 0
        self.apply_seconds = 0.0
        self.apply_cpu_seconds = 0.0
        self.checkpoints = 0
        self.checkpoint_seconds = 0.0
        self.first_seq = None
        self.batch_id = None
        self.batch_last = -1
        self.pending = [([], []) for _ in self.names]
        every = cfg.every
        self.next_ckpt = ((self.last_seq + 1) // every + 1) * every if every else None
        self.t0 = time.perf_counter()
        self.cpu0 = time.process_time()
        self._status(self.last_seq)

    def feed(self, rb) -> None:
        """Add a slice of this partition's events (sorted by seq) to its
        batches, applying each batch once the next one begins."""
        import numpy as np
        import pyarrow as pa

        from .streams import to_python

        rels = rb.column("_rel").to_numpy(zero_copy_only=False)
        seqs = rb.column("seq").to_numpy(zero_copy_only=False)
        live = (rels >= 0) & (seqs > self.last_seq)  # the marker row has _rel -1
        if not live.any():
            return
        events = []  # per relation: (seqs, ops, rows), and a read position
        for i, (_, fields) in enumerate(self.cfg.relations):
            mask = live & (rels == i)
            if mask.all():
                events.append(to_python(rb, fields))
            elif mask.any():
                mine = rb.select(["seq", "op", *fields]).filter(pa.array(mask))
                events.append(to_python(mine, fields))
            else:
                events.append(([], [], []))
        pos = [0] * len(events)
        if self.first_seq is None:
            self.first_seq = int(seqs[live].min())
        size = self.cfg.batch
        for b in np.unique(seqs[live] // size).tolist():
            if b != self.batch_id:
                self._flush()
                self.batch_id = b
            end = (b + 1) * size
            for i, (s, ops, rows) in enumerate(events):
                lo = pos[i]
                if lo >= len(s) or s[lo] >= end:
                    continue
                hi = bisect.bisect_left(s, end, lo)
                ins, dels = self.pending[i]
                for k in range(lo, hi):
                    (ins if ops[k] > 0 else dels).append(rows[k])
                if s[hi - 1] > self.batch_last:
                    self.batch_last = s[hi - 1]
                pos[i] = hi

    def _flush(self) -> None:
        if self.batch_id is None:
            return
        view, push = self.view, self.cfg.push
        net: dict = {}
        n = 0
        t, cpu = time.perf_counter(), time.process_time()
        for name, (ins, dels) in zip(self.names, self.pending):
            for rows, mults in ((ins, None), (dels, -1)):
                if not rows:
                    continue
                view.update(name, rows, None if mults is None else [-1] * len(rows))
                n += len(rows)
                if push:
                    for row, change in view.deltas():
                        net[row] = net.get(row, 0) + change
        self.apply_seconds += time.perf_counter() - t
        self.apply_cpu_seconds += time.process_time() - cpu
        self.pending = [([], []) for _ in self.names]
        if push:
            changes = [(row, c) for row, c in net.items() if c]
            if changes:
                pickle.dump((self.batch_id, changes), self.log, protocol=5)
        self.events += n
        self.batches += 1
        self.last_seq = self.batch_last
        end = (self.batch_id + 1) * self.cfg.batch
        self.batch_id = None
        if self.next_ckpt is not None and end >= self.next_ckpt:
            self._save()
            self.next_ckpt = (end // self.cfg.every + 1) * self.cfg.every

    def _save(self) -> None:
        t = time.perf_counter()
        log_bytes = 0
        if self.log is not None:
            self.log.flush()
            os.fsync(self.log.fileno())
            log_bytes = self.log.tell()
        _ckpt.save_checkpoint(
            self.dir,
            state={"view": self.view.snapshot(), "log_bytes": log_bytes},
            last_seq=self.last_seq,
            events=self.events_before + self.events,
            fingerprint=self.fingerprint,
            stream_id=self.cfg.stream_id,
        )
        self.checkpoints += 1
        self.checkpoint_seconds += time.perf_counter() - t
        self._status(self.last_seq)

    def _status(self, saved_seq: int) -> None:
        _write_json(
            self.dir / STATUS_FILE,
            {
                "pid": os.getpid(),
                "attempt": self.attempt,
                "checkpointed_seq": saved_seq,
                "time": time.time(),
            },
        )

    def finish(self):
        import pyarrow as pa

        self._flush()
        if self.cfg.checkpoint and self.events:
            self._save()
        if self.log is not None:
            self.log.flush()
            os.fsync(self.log.fileno())
            self.log.close()
        seconds = time.perf_counter() - self.t0
        result_rows = None
        if self.cfg.rows == "write":
            result_rows = _write_rows(self.dir / ROWS_FILE, self.view.enumerate())
        elif self.cfg.rows == "count":
            result_rows = sum(m for _, m in self.view.enumerate())
        info = {
            "part": self.part,
            "events": self.events,
            "events_before": self.events_before,
            "batches": self.batches,
            "seconds": seconds,
            "apply_seconds": self.apply_seconds,
            "apply_cpu_seconds": self.apply_cpu_seconds,
            "cpu_seconds": time.process_time() - self.cpu0,
            "first_seq": self.first_seq,
            "last_seq": self.last_seq,
            "resumed_after": self.resumed_after,
            "checkpoints": self.checkpoints,
            "checkpoint_seconds": self.checkpoint_seconds,
            "result_rows": result_rows,
            "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
            "attempt": self.attempt,
            "pid": os.getpid(),
        }
        return pa.RecordBatch.from_pydict(
            {"part": [self.part], "info": [json.dumps(info)]},
            schema=pa.schema([("part", pa.int32()), ("info", pa.string())]),
        )


def _write_rows(path: Path, pairs) -> int:
    """Pickle (row, multiplicity) pairs in chunks into `path` (atomically);
    returns the number of rows with their multiplicities."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    total = 0
    with open(tmp, "wb") as fh:
        chunk = []
        for pair in pairs:
            chunk.append(pair)
            total += pair[1]
            if len(chunk) >= ROWS_PER_CHUNK:
                pickle.dump(chunk, fh, protocol=5)
                chunk = []
        if chunk:
            pickle.dump(chunk, fh, protocol=5)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    return total


def _records(path: Path) -> Iterator:
    """The pickled records of a rows file or delta log, in order."""
    if not path.exists():
        return
    with open(path, "rb") as fh:
        while True:
            try:
                yield pickle.load(fh)
            except EOFError:
                return


def _write_json(path: Path, obj) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(obj, indent=2) + "\n")
    os.replace(tmp, path)


# --------------------------------------------------------------------------
# Merging the partitions' results in the driver


class _UnionMerge:
    """Rows built in exactly one partition (or counted by join rows): gather."""

    def rows(self, parts: dict[int, Iterator]) -> Iterator[tuple]:
        for pairs in parts.values():
            for chunk in pairs:
                for row, m in chunk:
                    for _ in range(m):
                        yield row

    def batch(self, changes: list[tuple[int, tuple, int]], first: bool) -> list:
        net: dict = {}
        for _, row, c in changes:
            net[row] = net.get(row, 0) + c
        return [(row, c) for row, c in net.items() if c]


class _DistinctMerge:
    """DISTINCT rows that may come from several partitions: a row is in the
    result while some partition has it."""

    def __init__(self):
        self.holders: dict = {}

    def rows(self, parts: dict[int, Iterator]) -> Iterator[tuple]:
        seen = set()
        for pairs in parts.values():
            for chunk in pairs:
                for row, _ in chunk:
                    if row not in seen:
                        seen.add(row)
                        yield row

    def batch(self, changes, first: bool) -> list:
        net: dict = {}
        for _, row, c in changes:
            net[row] = net.get(row, 0) + c
        out = []
        for row, c in net.items():
            old = self.holders.get(row, 0)
            new = old + c
            if new:
                self.holders[row] = new
            else:
                self.holders.pop(row, None)
            if (old == 0) != (new == 0):
                out.append((row, 1 if new else -1))
        return out


class _AggregateMerge:
    """Groups merged from the partitions' partial rows (see
    `dynyan.compiler.partition.partial_query`); the output row of a group is
    computed by the original query's module from the merged payload."""

    def __init__(self, query, layout: "_part.PartialLayout", module):
        self.layout = layout
        self.extras = tuple(query.extra_vars)
        self.sorted_extras = {
            a.arg for a in query.aggregates if a.kind in ("min", "max")
        }
        self.global_ = not query.group_vars
        self.distinct = query.distinct
        self.group_row = module.View._group_row
        self.zero = 0 if layout.channels == 1 else (0,) * layout.channels
        self.groups: dict[tuple, dict] = {}
        self.holders: dict = {}  # DISTINCT: output row -> groups giving it

    def _apply(self, part: int, row: tuple, change: int) -> None:
        lay = self.layout
        g = row[: lay.groups]
        k = lay.groups + len(lay.distinct_args)
        entries = self.groups.setdefault(g, {})
        key = (part, row[lay.groups : k])
        if change > 0:
            entries[key] = row[k:]
        else:
            entries.pop(key, None)
            if not entries:
                del self.groups[g]

    def _row(self, g: tuple):
        lay = self.layout
        entries = self.groups.get(g)
        if not entries:
            return self.group_row(None, *g, self.zero, None) if self.global_ else None
        width = lay.channels
        totals = [0] * width
        for vals in entries.values():
            for c in range(width):
                totals[c] += vals[c]
        payload = totals[0] if width == 1 else tuple(totals)
        e = None
        if self.extras:
            from sortedcontainers import SortedDict

            e = [payload]
            for v in self.extras:
                ms = SortedDict() if v in self.sorted_extras else {}
                if v in lay.distinct_args:
                    k = lay.distinct_args.index(v)
                    for (_, d), vals in entries.items():
                        if d[k] is not None:
                            ms[d[k]] = ms.get(d[k], 0) + vals[0]
                else:
                    for j, (w, _) in enumerate(lay.extremes):
                        if w != v:
                            continue
                        for vals in entries.values():
                            x = vals[width + j]
                            if x is not None:
                                ms[x] = ms.get(x, 0) + 1
                e.append(ms)
        return self.group_row(None, *g, payload, e)

    def _keys(self):
        keys = list(self.groups)
        if self.global_ and () not in self.groups:
            keys.append(())
        return keys

    def rows(self, parts: dict[int, Iterator]) -> Iterator[tuple]:
        for part, pairs in parts.items():
            for chunk in pairs:
                for row, m in chunk:
                    for _ in range(m):
                        self._apply(part, row, 1)
        seen = set()
        for g in self._keys():
            out = self._row(g)
            if out is None:
                continue
            if self.distinct:
                if out in seen:
                    continue
                seen.add(out)
            yield out

    def batch(self, changes, first: bool) -> list:
        touched = dict.fromkeys(row[: self.layout.groups] for _, row, _ in changes)
        if self.global_:
            touched.setdefault(())
        before = {g: None if first else self._row(g) for g in touched}
        for part, row, c in sorted(changes, key=lambda x: x[2]):  # removals first
            self._apply(part, row, c)
        out = []
        for g, old in before.items():
            new = self._row(g)
            if old != new:
                if old is not None:
                    out.append((old, -1))
                if new is not None:
                    out.append((new, 1))
        if not self.distinct:
            return out
        net: dict = {}
        for row, c in out:
            net[row] = net.get(row, 0) + c
        merged = []
        for row, c in net.items():
            if not c:
                continue
            old = self.holders.get(row, 0)
            new = old + c
            if new:
                self.holders[row] = new
            else:
                del self.holders[row]
            if (old == 0) != (new == 0):
                merged.append((row, 1 if new else -1))
        return merged


class PartitionedResult:
    """The merged result of a partitioned replay, read from its work directory.

    ``rows()``: the result rows (pull mode; needs ``result="rows"``).
    ``changes()``: ``(batch, [(row, change), ...])`` in batch order, the
    merged change stream (push mode); batch -1 holds what the views report
    when they are created (a global aggregate's row of an empty database).
    """

    def __init__(self, work: Path, parts: list[int], columns, make_merge, temporary):
        self.work = Path(work)
        self.parts = parts
        self.COLUMNS = columns
        self._make_merge = make_merge
        self._cleanup = (
            weakref.finalize(self, shutil.rmtree, str(work), True)
            if temporary
            else None
        )

    def rows(self) -> Iterator[tuple]:
        parts = {
            p: _records(partition_dir(self.work, p) / ROWS_FILE) for p in self.parts
        }
        missing = [
            p
            for p in self.parts
            if not (partition_dir(self.work, p) / ROWS_FILE).exists()
        ]
        if missing:
            raise PipelineError(
                "the partitions wrote no result rows (replayed with result='count' "
                "or 'none')"
            )
        return self._make_merge().rows(parts)

    def changes(self) -> Iterator[tuple[int, list]]:
        merge = self._make_merge()
        streams = [self._log(part) for part in self.parts]
        current, pending = None, []
        for batch, part, changes in heapq.merge(*streams, key=lambda r: r[0]):
            if batch != current and pending:
                out = merge.batch(pending, current == -1)
                if out:
                    yield current, out
                pending = []
            current = batch
            pending += [(part, row, c) for row, c in changes]
        if pending:
            out = merge.batch(pending, current == -1)
            if out:
                yield current, out

    def _log(self, part: int) -> Iterator[tuple[int, int, list]]:
        for batch, changes in _records(partition_dir(self.work, part) / DELTA_LOG):
            yield batch, part, changes

    def close(self) -> None:
        """Remove a temporary work directory now (else when garbage collected)."""
        if self._cleanup is not None:
            self._cleanup()


# --------------------------------------------------------------------------
# Summary


@dataclass
class PartitionStats:
    """One partition's figures, as its task reported them."""

    part: int
    events: int
    events_before: int
    batches: int
    seconds: float  # from the partition's first event to its output, wall clock
    apply_seconds: float  # in View.update, wall clock
    apply_cpu_seconds: float  # in View.update, CPU time of the worker
    cpu_seconds: float  # the partition's CPU time in all (conversion, output)
    first_seq: int | None
    last_seq: int
    resumed_after: int | None
    checkpoints: int
    checkpoint_seconds: float
    result_rows: int | None
    peak_rss_bytes: int
    attempt: int
    pid: int


@dataclass
class PartitionedSummary:
    """What a partitioned replay did; ``str()`` is the CLI's summary."""

    stream: str
    batch: int
    partitions: int  # requested
    partitioning: "_part.Partitioning"
    engine: str = "spark"
    events: int = 0  # stream events replayed (each once)
    seconds: float = 0.0  # the Spark job, wall clock
    merge_seconds: float = 0.0
    parts: list[PartitionStats] = field(default_factory=list)
    result_rows: int | None = None
    deltas: int | None = None
    resumed_after: int | None = None
    result: PartitionedResult | None = field(default=None, repr=False)

    @property
    def used(self) -> int:
        """Partitions actually used (1 when the query cannot be split)."""
        return self.partitions if self.partitioning.split else 1

    @property
    def applied(self) -> int:
        """Events applied by all views (replicated events once per view)."""
        return sum(p.events for p in self.parts)

    @property
    def events_per_sec(self) -> float:
        return self.events / self.seconds if self.seconds > 0 else float("inf")

    @property
    def checkpoints(self) -> int:
        return sum(p.checkpoints for p in self.parts)

    @property
    def peak_rss_bytes(self) -> int:
        return max((p.peak_rss_bytes for p in self.parts), default=0)

    @property
    def view(self):
        """The merged result (rows(), COLUMNS), where a replay has its view."""
        return self.result

    def __str__(self) -> str:
        part = self.partitioning
        if part.split:
            how = (
                f"{self.used} partitions by {part.variable} "
                f"({part.replicated_share:.1%} of the events replicated)"
            )
        else:
            how = f"1 partition ({part.reason})"
        lines = [
            f"replayed {self.events:,} events in batches of <= {self.batch} on Spark, "
            f"{how}, in {self.seconds:.2f} s: {self.events_per_sec:,.0f} events/s",
            f"views applied {self.applied:,} events; slowest partition "
            + (
                f"{max(p.apply_seconds for p in self.parts):.2f} s applying"
                if self.parts
                else "-"
            )
            + f"; peak RSS of a worker {self.peak_rss_bytes / 2**20:,.0f} MiB",
        ]
        resumed = [p for p in self.parts if p.resumed_after is not None]
        if resumed:
            lines.append(
                f"{len(resumed)} partition(s) resumed from their checkpoints (after seq "
                + ", ".join(f"{p.resumed_after:,}" for p in resumed)
                + ")"
            )
        retried = [p for p in self.parts if p.attempt]
        if retried:
            lines.append(
                f"{len(retried)} partition(s) ran on a retried task (attempt "
                + ", ".join(str(p.attempt + 1) for p in retried)
                + ")"
            )
        if self.checkpoints:
            lines.append(f"{self.checkpoints} partition checkpoint(s) written")
        if self.deltas is not None:
            lines.append(f"{self.deltas:,} result deltas pushed (merged)")
        if self.result_rows is not None:
            lines.append(f"result: {self.result_rows:,} rows")
        return "\n".join(lines)


# --------------------------------------------------------------------------
# The driver


def replay_partitioned(
    query,
    stream_dir: str | Path,
    partitions: int,
    *,
    schema: str | Path | None = None,
    stats=None,
    push: bool = False,
    on_delta: Callable | None = None,
    batch: int = 1000,
    checkpoint: str | Path | None = None,
    every: int | None = None,
    resume: bool = False,
    limit: int | None = None,
    result: str = "rows",
    spark=None,
    log: Callable[[str], None] | None = None,
) -> PartitionedSummary:
    """Replay `stream_dir` into `partitions` views of `query` inside Spark.

    `query`: a .sql file (analysed and compiled here), or a generated module
    (.py or module name; it carries no query to analyse: one partition).
    `push`: the views report changes; the merged change stream is counted
    (``summary.deltas``), passed to `on_delta(row, change)` in batch order,
    and kept for ``summary.result.changes()``. `result`: "rows" (the merged
    rows are available from ``summary.result.rows()``), "count" (only their
    number), "none". `checkpoint`: the work directory (kept; ``every``
    stream positions per checkpoint; ``resume`` continues a stopped run),
    else a temporary one removed with ``summary.result``. `limit`: stop at
    the first batch boundary at or after that many stream positions.
    """
    log = log or (lambda msg: None)
    if partitions < 1:
        raise PipelineError(f"partitions must be >= 1, got {partitions}")
    if batch < 1:
        raise PipelineError(f"batch size must be >= 1, got {batch}")
    if result not in RESULT_MODES:
        raise PipelineError(f"result must be one of {', '.join(RESULT_MODES)}")
    if (every is not None or resume) and checkpoint is None:
        raise PipelineError("--every and --resume need --checkpoint DIR")
    if every is not None and every < 1:
        raise PipelineError(f"checkpoint interval must be >= 1 event, got {every}")
    if limit is not None and limit < 1:
        raise PipelineError(f"limit must be >= 1 event, got {limit}")
    stream = Stream(stream_dir)
    plan = _prepare(query, stream, schema, stats)
    scheme = plan.partitioning
    used = partitions if scheme.split else 1
    if not scheme.split and partitions > 1:
        log(f"one partition: {scheme.reason}")
    elif scheme.split:
        log(
            f"{used} partitions by {scheme.variable}; replicated: "
            f"{', '.join(scheme.replicated) or 'nothing'} "
            f"({scheme.replicated_share:.1%} of the events)"
        )
    module = plan.task_module
    selected = stream.select(module.View.RELATIONS)
    view_names = list(module.View.RELATIONS)
    fingerprint = _ckpt.source_fingerprint(
        plan.task_source
        + json.dumps([used, scheme.variable, sorted(scheme.columns.items()), batch])
    )

    temporary = checkpoint is None
    work = (
        Path(tempfile.mkdtemp(prefix="dynyan-partitions-"))
        if temporary
        else Path(checkpoint)
    )
    meta = {
        "format": "dynyan-partitions",
        "partitions": used,
        "variable": scheme.variable,
        "columns": dict(scheme.columns),
        "merge": scheme.merge,
        "batch": batch,
        "fingerprint": fingerprint,
        "stream_id": stream.stream_id,
    }
    after = _prepare_work(work, meta, resume, used, log)

    size = batch
    start = after + 1
    stop = None
    if limit is not None:
        stop = -(-(start + limit) // size) * size
    events = stream.count_after(selected, after)
    if stop is not None:
        events -= stream.count_after(selected, stop - 1)
    rows_mode = {
        "rows": "write",
        "count": "count" if scheme.merge in (None, _part.UNION) else "write",
        "none": "none",
    }[result]
    cfg = TaskConfig(
        source=plan.task_source,
        fingerprint=fingerprint,
        stream_id=stream.stream_id,
        relations=tuple(
            (name, tuple(f"c{i}_{j}" for j in range(len(cols))))
            for i, (name, cols) in enumerate(zip(view_names, selected.values()))
        ),
        batch=batch,
        partitions=used,
        work=str(work),
        every=every,
        checkpoint=not temporary,
        push=push,
        rows=rows_mode,
    )
    if spark is None:
        from .streams import spark_session

        log("starting Spark")
        spark = spark_session()
    frame = _events_frame(
        spark, stream, selected, plan.split_columns, used, after, stop
    )
    t0 = time.perf_counter()
    conf = spark.conf
    before = conf.get(ARROW_BATCH_CONF, None)
    conf.set(ARROW_BATCH_CONF, str(ARROW_BATCH_ROWS))
    try:
        records = frame.mapInArrow(
            functools.partial(_run_task, cfg), "part int, info string"
        ).collect()
    except Exception as exc:  # a task failed for good: say what, keep the state
        if temporary:
            shutil.rmtree(work, ignore_errors=True)
        raise PipelineError(_task_error(exc, checkpoint)) from None
    finally:
        if before is None:
            conf.unset(ARROW_BATCH_CONF)
        else:
            conf.set(ARROW_BATCH_CONF, before)
    seconds = time.perf_counter() - t0
    done = stream.events - 1 if stop is None else min(stop, stream.events) - 1
    _write_json(work / PARTITIONING_FILE, {**meta, "done_seq": max(done, after)})

    parts = sorted(
        (PartitionStats(**json.loads(r["info"])) for r in records),
        key=lambda p: p.part,
    )
    summary = PartitionedSummary(
        stream=str(stream.dir),
        batch=batch,
        partitions=partitions,
        partitioning=scheme,
        events=events,
        seconds=seconds,
        parts=parts,
        resumed_after=after if after >= 0 else None,
    )
    summary.result = PartitionedResult(
        work,
        list(range(used)),
        plan.columns,
        plan.make_merge,
        temporary,
    )
    t = time.perf_counter()
    if push:
        count = 0
        for _, changes in summary.result.changes():
            count += len(changes)
            if on_delta is not None:
                for row, change in changes:
                    on_delta(row, change)
        summary.deltas = count
    if rows_mode != "none" and scheme.merge in (None, _part.UNION):
        summary.result_rows = sum(p.result_rows or 0 for p in parts)
    elif rows_mode == "write":
        summary.result_rows = sum(1 for _ in summary.result.rows())
    summary.merge_seconds = time.perf_counter() - t
    return summary


@dataclass
class _Prepared:
    partitioning: "_part.Partitioning"
    task_source: str
    task_module: object
    columns: tuple
    split_columns: dict  # view relation -> column hashed
    make_merge: Callable


def _prepare(query, stream: Stream, schema, stats) -> _Prepared:
    """Compile the query, choose its partitioning with the stream's event
    counts as weights, and build what the tasks run and the driver merges."""
    from ..compiler import import_source
    from .replay import Query, load_query, read_sql_query

    sizes = {
        rel: info["inserts"] + info["deletes"]
        for rel, info in stream.manifest["relations"].items()
    }
    benchmark = stream.manifest.get("source", {}).get("benchmark")
    path = Path(query) if not isinstance(query, Query) else None
    if path is None or path.suffix != ".sql":
        loaded = (
            query if isinstance(query, Query) else load_query(query, schema, benchmark)
        )
        source = _module_source(loaded.module)
        module = import_source(source)
        reason = (
            f"{loaded.name} is a compiled module: the partitioner reads the "
            "query itself (give the .sql file)"
        )
        scheme = _part.Partitioning(
            None, {}, tuple(module.View.RELATIONS), None, False, reason, {}, "-"
        )
        return _Prepared(scheme, source, module, module.View.COLUMNS, {}, _UnionMerge)
    if not path.is_file():
        raise PipelineError(f"query file {path} does not exist")
    sql, schema_text = read_sql_query(path, schema, benchmark)
    compile_ = _compile if stats is None else _compile.__wrapped__
    query_ir, source = compile_(sql, schema_text, str(path), stats)
    scheme = _part.choose_partitioning(query_ir, sizes, "the stream's events")
    original = import_source(source)
    if scheme.merge == _part.AGGREGATE:
        partial, layout = _part.partial_query(query_ir)
        task_source = compile_(sql, schema_text, str(path), stats, partial=True)[1]
        task_module = import_source(task_source)
        make_merge = functools.partial(_AggregateMerge, query_ir, layout, original)
    else:
        task_source, task_module = source, original
        make_merge = _DistinctMerge if scheme.merge == _part.DISTINCT else _UnionMerge
    return _Prepared(
        scheme,
        task_source,
        task_module,
        original.View.COLUMNS,
        dict(scheme.columns),
        make_merge,
    )


@functools.lru_cache(maxsize=64)
def _compile(sql: str, schema: str | None, name: str, stats, partial: bool = False):
    """(query IR, module source) of `sql`, or of its partial query
    (`dynyan.compiler.partition.partial_query`); cached without statistics."""
    from ..compiler import compile_query
    from ..compiler.planner import plan_query
    from ..compiler.render import render_module

    plan = compile_query(sql, schema, stats)
    if partial:
        plan = plan_query(_part.partial_query(plan.query)[0], stats)
    return plan.query, render_module(plan, source=name)


def _module_source(module) -> str:
    source = getattr(module, "__dynyan_source__", None)
    if source:
        return source
    path = getattr(module, "__file__", None)
    if path and Path(path).is_file():
        return Path(path).read_text()
    import inspect

    try:
        return inspect.getsource(module)
    except (OSError, TypeError) as exc:
        raise PipelineError(
            f"cannot read the source of module {module.__name__} to ship it to Spark"
        ) from exc


def _prepare_work(work: Path, meta: dict, resume: bool, used: int, log) -> int:
    """Set up the work directory; returns the seq every partition is past
    (-1: from the beginning)."""
    work.mkdir(parents=True, exist_ok=True)
    meta_path = work / PARTITIONING_FILE
    if resume and meta_path.exists():
        try:
            old = json.loads(meta_path.read_text())
        except ValueError as exc:
            raise PipelineError(f"cannot read {meta_path}: {exc}") from None
        for key, what in (
            ("stream_id", "another stream"),
            ("partitions", f"{old.get('partitions')} partitions"),
            ("variable", f"partition variable {old.get('variable')}"),
            ("batch", f"batches of {old.get('batch')}"),
            ("fingerprint", "another query module"),
        ):
            if old.get(key) != meta[key]:
                raise PipelineError(
                    f"the checkpoints in {work} were written for {what}; resume "
                    "with the same query, stream, --partitions and --batch, or drop --resume"
                )
        seqs = []
        for p in range(used):
            status = partition_dir(work, p) / STATUS_FILE
            try:
                seqs.append(json.loads(status.read_text())["checkpointed_seq"])
            except (OSError, ValueError, KeyError):
                seqs.append(-1)
        after = max(min(seqs), old.get("done_seq", -1))
        log(f"resuming {used} partitions from their checkpoints in {work}")
        return after
    if resume:
        log(f"no partitioned checkpoints in {work}; starting from the beginning")
    for old in work.glob("part-[0-9]*"):
        if old.is_dir():
            shutil.rmtree(old)
    _write_json(meta_path, meta)
    return -1


def _events_frame(spark, stream: Stream, selected, split_columns, parts, after, stop):
    """All events of the selected relations, tagged with their partition,
    one Spark partition per view, sorted by (partition, seq). Built from SQL
    expression strings: every Column object would be a round trip to the JVM."""
    from pyspark.sql import types as T

    split_lower = {r.lower(): c.lower() for r, c in split_columns.items()}
    frames, keys = [], []
    where = f"seq > {int(after)}" + ("" if stop is None else f" AND seq < {int(stop)}")
    for i, (rel, cols) in enumerate(selected.items()):
        files = [
            str(path)
            for chunk, path in stream.files(rel)
            if (chunk + 1) * stream.chunk_events - 1 > after
            and (stop is None or chunk * stream.chunk_events < stop)
        ]
        if not files:
            continue
        df = _read(spark, files, ["seq", "op", *cols])
        key = split_lower.get(rel.lower())
        key = next((c for c in cols if c.lower() == key), None)
        frames.append((i, df, cols, key))
        if key is not None:
            keys.append(df.schema[key].dataType)
    cast = _key_type(T, keys)
    types = {}  # wide column -> its type, for the NULLs of the other relations
    for i, df, cols, _ in frames:
        for j, c in enumerate(cols):
            types[f"c{i}_{j}"] = df.schema[c].dataType.simpleString()
    out = []
    for i, df, cols, key in frames:
        if parts == 1:
            part = "0"
        elif key is not None:
            part = f"pmod(hash(CAST({_ident(key)} AS {cast})), {parts})"
        else:
            part = f"explode(sequence(0, {parts - 1}))"
        mine = {f"c{i}_{j}": _ident(c) for j, c in enumerate(cols)}
        out.append(
            df.where(where).selectExpr(
                "CAST(seq AS BIGINT) AS seq",
                "CAST(op AS TINYINT) AS op",
                f"{i} AS _rel",
                (
                    f"CAST({part} AS INT) AS _part"
                    if "explode" not in part
                    else f"{part} AS _part"
                ),
                *[
                    f"{mine[w]} AS {w}" if w in mine else f"CAST(NULL AS {t}) AS {w}"
                    for w, t in types.items()
                ],
            )
        )
    markers = [f"CAST(NULL AS {t}) AS {w}" for w, t in types.items()]
    out.append(
        spark.range(parts).selectExpr(
            f"CAST({MARKER_SEQ} AS BIGINT) AS seq",
            "CAST(0 AS TINYINT) AS op",
            "-1 AS _rel",
            "CAST(id AS INT) AS _part",
            *markers,
        )
    )
    events = out[0]
    for df in out[1:]:
        events = events.union(df)
    slots = ", ".join(str(k) for k in _slot_keys(spark, parts))
    return (
        events.selectExpr("*", f"element_at(array({slots}), _part + 1) AS _slot")
        .repartition(parts, "_slot")
        .sortWithinPartitions("_part", "seq")
        .drop("_slot")
    )


def _ident(name: str) -> str:
    """A column name quoted for Spark SQL."""
    return "`" + name.replace("`", "``") + "`"


def _read(spark, files: list[str], columns: list[str]):
    """The columns of a relation's chunk files, with the schema taken from
    the first file's footer (Spark's own inference costs a job per read)."""
    import pyarrow.parquet as pq

    try:
        from pyspark.sql.pandas.types import from_arrow_schema

        arrow = pq.read_schema(files[0])
        schema = from_arrow_schema(arrow.__class__([arrow.field(c) for c in columns]))
    except Exception:  # a type pyspark cannot map: let Spark infer it
        return spark.read.parquet(*files).select(*[f"`{c}`" for c in columns])
    return spark.read.schema(schema).parquet(*files)


def _key_type(T, types: list) -> str:
    """One type to hash the partition column as, so equal values of columns
    of different types (INTEGER and BIGINT keys) land in the same partition."""
    if not types:
        return "long"
    if all(isinstance(t, T.IntegralType) for t in types):
        return "long"
    if all(isinstance(t, T.NumericType) for t in types):
        return "double"
    if len({t.simpleString() for t in types}) == 1:
        return types[0].simpleString()
    return "string"


def _slot_keys(spark, parts: int) -> list[int]:
    """Per partition p, an int whose Spark hash partitioning sends it to
    partition p: ``repartition(P, key)`` then gives task p exactly the
    events of view p (two views in one task would still be correct, but
    would run one after the other)."""
    from pyspark.sql import functions as F

    if parts in _SLOTS:
        return _SLOTS[parts]
    found: dict[int, int] = {}
    n = 16 * parts
    while len(found) < parts:
        rows = (
            spark.range(n)
            .select(
                F.col("id").cast("int").alias("k"),
                F.pmod(F.hash(F.col("id").cast("int")), F.lit(parts)).alias("p"),
            )
            .collect()
        )
        for row in rows:
            found.setdefault(row["p"], row["k"])
        n *= 4
    _SLOTS[parts] = [found[p] for p in range(parts)]
    return _SLOTS[parts]


_SLOTS: dict[int, list[int]] = {}  # Spark's hash is fixed: the same in every session


def _task_error(exc: Exception, checkpoint) -> str:
    """One line for a failed Spark job: the Python error of the task if any."""
    text = str(exc)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    python = [ln for ln in lines if "Error:" in ln or "Exception:" in ln]
    detail = python[-1] if python else (lines[0] if lines else type(exc).__name__)
    hint = (
        f"; continue with --resume (checkpoints in {checkpoint})"
        if checkpoint is not None
        else ""
    )
    return f"partitioned replay failed in Spark: {detail[:500]}{hint}"
