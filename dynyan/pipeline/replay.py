"""Replay an update stream into a compiled view.

``replay(view, stream_dir)`` reads the relations the view declares in
``View.RELATIONS`` (only those, only those columns, in that order) in ``seq``
order and applies them in batches of ``batch`` events: within a batch, each
relation's inserts go in one ``view.update(rel, rows)`` call and its deletes
in one ``view.update(rel, rows, [-1, ...])`` call after them. A batch never
applies a delete before the insert it undoes, so multiplicities never go
negative; with ``batch=1`` events are applied one by one in ``seq`` order.

Engines: ``arrow`` reads the Parquet chunks with pyarrow (fast); ``spark``
reads the same chunks through Spark (``toArrow`` per chunk) and then shares
the conversion and batching code, so both give identical results.

Checkpoints (``checkpoint=DIR, every=K``): after the batch that completes
every K-th event, and at the end, ``view.snapshot()`` and the last applied
``seq`` are written atomically (see ``dynyan.pipeline.checkpoint``); ``resume=True``
restores the view and continues with the first event after that ``seq``.
"""

from __future__ import annotations

import bisect
import importlib
import importlib.util
import pickle
import re
import resource
import sys
import time
import tracemalloc
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from . import checkpoint as _ckpt
from .gcpolicy import FREEZE_EVERY, GCPolicy
from ..errors import PipelineError
from ..resources import resource_text
from .streams import Stream, to_python

ENGINES = ("arrow", "spark")
DEFAULT_BATCH = 1000
SLICE_ROWS = 65_536
_CREATE_TABLE = re.compile(r"\bcreate\s+table\b", re.IGNORECASE)


# --------------------------------------------------------------------------
# Loading a query


@dataclass
class Query:
    """A loaded query module: ``Query.View`` is the class to instantiate."""

    name: str
    module: object
    fingerprint: str

    @property
    def View(self):  # noqa: N802 - mirrors the module attribute
        try:
            return self.module.View
        except AttributeError:
            raise PipelineError(f"module {self.name} defines no View class") from None


def default_schema(benchmark: str | None = "tpch") -> str:
    """The schema text of a benchmark's queries: ``tpch/schema.sql`` or
    ``tpch/tpcds_schema.sql`` (shipped with the package)."""
    name = "tpcds_schema.sql" if benchmark == "tpcds" else "schema.sql"
    return resource_text("tpch", name)


def load_query(
    target: str | Path,
    schema: str | Path | None = None,
    benchmark: str | None = None,
    stats=None,
    trust_input: bool = False,
) -> Query:
    """Load a query as a View module.

    ``target`` is a ``.sql`` file (compiled with ``dynyan.load``, its schema
    resolved as ``read_sql_query`` says, planned with `stats` when given,
    trusting its input with `trust_input`), a ``.py`` file (imported), or a
    dotted module name (imported).
    """
    path = Path(target)
    if path.suffix == ".sql":
        if not path.is_file():
            raise PipelineError(f"query file {path} does not exist")
        sql, schema_text = read_sql_query(path, schema, benchmark)
        from ..compiler import compile_sql, import_source

        source = compile_sql(
            sql, schema=schema_text, stats=stats, trust_input=trust_input
        )
        module = import_source(source)
        return Query(path.stem, module, _ckpt.source_fingerprint(source))
    if path.suffix == ".py":
        if not path.is_file():
            raise PipelineError(f"module file {path} does not exist")
        source = path.read_bytes()
        name = f"dynyan_query_{path.stem}_{_ckpt.source_fingerprint(source)}"
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except Exception:
            del sys.modules[name]
            raise
        return Query(path.stem, module, _ckpt.source_fingerprint(source))
    try:
        module = importlib.import_module(str(target))
    except ImportError as exc:
        raise PipelineError(
            f"{target!r} is neither a .sql/.py file nor an importable module ({exc})"
        ) from exc
    return Query(str(target), module, _ckpt.module_fingerprint(module))


def read_sql_query(
    path: str | Path,
    schema: str | Path | None = None,
    benchmark: str | None = None,
) -> tuple[str, str | None]:
    """The query text and the schema text to compile it with.

    Resolved as ``dynyan compile`` does (``dynyan.cli.read_query``): ``schema``,
    else none if the query has CREATE TABLEs, else the file named by a
    ``-- schema: PATH`` line, ``schema.sql`` beside the query (e.g.
    queries/gcq/schema.sql) or the nearest ``tpch/schema.sql`` above it; only
    if that finds nothing, the default schema of ``benchmark`` (the stream's).
    """
    from ..compiler.source import read_query

    sql, schema_text = read_query(str(path), None if schema is None else str(schema))
    if schema_text is None and not _CREATE_TABLE.search(sql):
        schema_text = default_schema(benchmark)
    return sql, schema_text


# --------------------------------------------------------------------------
# Reading events in seq order


class _Buffer:
    """Converted, seq-ordered events of one relation, refilled slice by slice."""

    __slots__ = ("rel", "it", "seq", "op", "rows", "pos", "done")

    def __init__(self, rel: str, slices: Iterator[tuple[list, list, list]]):
        self.rel = rel
        self.it = slices
        self.seq: list[int] = []
        self.op: list[int] = []
        self.rows: list[tuple] = []
        self.pos = 0
        self.done = False

    def fill(self) -> bool:
        """Append the next non-empty slice; False (and ``done``) when exhausted."""
        for seqs, ops, rows in self.it:
            if not seqs:
                continue
            if self.pos:
                del self.seq[: self.pos], self.op[: self.pos], self.rows[: self.pos]
                self.pos = 0
            self.seq += seqs
            self.op += ops
            self.rows += rows
            return True
        self.done = True
        return False


def merge_batches(
    slices: dict[str, Iterator[tuple[list, list, list]]], batch: int
) -> Iterator[tuple[int, int, int, list[tuple[str, list, list]]]]:
    """Merge per-relation ``(seqs, ops, rows)`` slices into batches of ``batch`` events.

    Yields ``(events, first_seq, last_seq, parts)`` where ``parts`` lists
    ``(relation, rows, ops)`` with each relation's events of the batch in seq
    order. Batches hold exactly ``batch`` events except the last.
    """
    if batch < 1:
        raise PipelineError(f"batch size must be >= 1, got {batch}")
    buffers = [_Buffer(rel, it) for rel, it in slices.items()]
    for b in buffers:
        b.fill()
    while True:
        for b in buffers:
            while not b.done and b.pos >= len(b.seq):
                b.fill()
        live = [b for b in buffers if b.pos < len(b.seq)]
        if not live:
            return
        pending = [b for b in buffers if not b.done]
        # every event with seq <= bound is buffered, in every relation
        bound = min(b.seq[-1] for b in pending) if pending else None
        merged: list[int] = []
        for b in live:
            hi = (
                len(b.seq)
                if bound is None
                else bisect.bisect_right(b.seq, bound, b.pos)
            )
            merged += b.seq[b.pos : hi]
        merged.sort()
        usable = len(merged) if bound is None else len(merged) - len(merged) % batch
        for start in range(0, usable, batch):
            stop = min(start + batch, usable)
            last = merged[stop - 1]
            parts = []
            for b in live:
                hi = bisect.bisect_right(b.seq, last, b.pos)
                if hi > b.pos:
                    parts.append((b.rel, b.rows[b.pos : hi], b.op[b.pos : hi]))
                    b.pos = hi
            yield stop - start, merged[start], last, parts
        if bound is None:
            return
        for b in pending:
            if b.seq[-1] == bound:
                b.fill()


def _arrow_slices(stream: Stream, rel: str, columns, after_seq: int):
    for batch in stream.arrow_batches(rel, columns, after_seq, SLICE_ROWS):
        yield to_python(batch, columns)


def _spark_slices(spark, stream: Stream, rel: str, columns, after_seq: int):
    from pyspark.sql import functions as F

    wanted = [F.col(f"`{c}`") for c in ("seq", "op", *columns)]
    for chunk, path in stream.files(rel):
        if (chunk + 1) * stream.chunk_events - 1 <= after_seq:
            continue
        table = (
            spark.read.parquet(str(path))
            .where(F.col("seq") > after_seq)
            .select(*wanted)
            .coalesce(1)
            .sortWithinPartitions("seq")
            .toArrow()
        )
        for offset in range(0, table.num_rows, SLICE_ROWS):
            yield to_python(table.slice(offset, SLICE_ROWS), columns)


# --------------------------------------------------------------------------
# Replay


@dataclass
class ReplaySummary:
    """What a replay did; ``str()`` is the human summary the CLI prints."""

    stream: str
    engine: str
    batch: int
    events: int = 0
    batches: int = 0
    seconds: float = 0.0
    first_seq: int | None = None
    last_seq: int | None = None
    resumed_after: int | None = None  # seq of the checkpoint resumed from
    events_before: int = 0  # events applied before the resume
    checkpoints: int = 0
    checkpoint_seconds: float = 0.0
    peak_rss_bytes: int = 0
    peak_traced_bytes: int | None = None
    result_rows: int | None = None
    deltas: int | None = None
    view: object = field(default=None, repr=False)

    @property
    def events_per_sec(self) -> float:
        return self.events / self.seconds if self.seconds > 0 else float("inf")

    def __str__(self) -> str:
        lines = [
            f"replayed {self.events:,} events in {self.batches:,} batches of <= {self.batch} "
            f"({self.engine} engine) in {self.seconds:.2f} s: {self.events_per_sec:,.0f} events/s"
        ]
        if self.resumed_after is not None:
            lines.append(
                f"resumed after seq {self.resumed_after:,} "
                f"({self.events_before:,} events applied before the restart)"
            )
        mem = f"peak RSS {self.peak_rss_bytes / 2**20:,.0f} MiB"
        if self.peak_traced_bytes is not None:
            mem += f", peak Python heap {self.peak_traced_bytes / 2**20:,.1f} MiB (tracemalloc)"
        lines.append(mem)
        if self.checkpoints:
            lines.append(
                f"{self.checkpoints} checkpoint(s) written in {self.checkpoint_seconds:.2f} s"
            )
        if self.deltas is not None:
            lines.append(f"{self.deltas:,} result deltas pushed")
        if self.result_rows is not None:
            lines.append(f"result: {self.result_rows:,} rows")
        return "\n".join(lines)


def replay(
    view,
    stream_dir: str | Path,
    *,
    batch: int = DEFAULT_BATCH,
    engine: str = "arrow",
    checkpoint: str | Path | None = None,
    every: int | None = None,
    resume: bool = False,
    fingerprint: str | None = None,
    progress: bool | None = None,
    rate: float | None = None,
    limit: int | None = None,
    count_result: bool = True,
    trace_memory: bool = False,
    gc_freeze_every: int = FREEZE_EVERY,
    spark=None,
    log: Callable[[str], None] | None = None,
) -> ReplaySummary:
    """Apply the events of ``stream_dir`` to ``view``; return a summary.

    ``progress``: tqdm bar on stderr (None: only on a terminal). ``rate``:
    at most that many events per second (simulates a live feed). ``limit``:
    stop at the first batch boundary at or after that many events (the final
    checkpoint then lets a later ``resume`` continue from there). With
    ``resume`` the view must be fresh; its state is restored from the
    checkpoint (the summary's ``view`` is the view that holds the result).
    ``gc_freeze_every``: the GC policy (`gcpolicy.GCPolicy`; 0: CPython's
    default collector).
    """
    log = log or (lambda msg: None)
    if engine not in ENGINES:
        raise PipelineError(
            f"unknown engine {engine!r}; choose one of {', '.join(ENGINES)}"
        )
    if batch < 1:
        raise PipelineError(f"batch size must be >= 1, got {batch}")
    if (every is not None or resume) and checkpoint is None:
        raise PipelineError("--every and --resume need --checkpoint DIR")
    if every is not None and every < 1:
        raise PipelineError(f"checkpoint interval must be >= 1 event, got {every}")
    stream = Stream(stream_dir)
    relations = getattr(view, "RELATIONS", None)
    if not isinstance(relations, dict) or not relations:
        raise PipelineError("the view has no RELATIONS mapping (is it a dynyan View?)")
    selected = stream.select(relations)
    view_name = {have: want for want, have in zip(relations, selected)}
    if checkpoint is not None:
        fingerprint = fingerprint or _ckpt.module_fingerprint(view)

    summary = ReplaySummary(stream=str(stream.dir), engine=engine, batch=batch)
    after_seq = -1
    if resume:
        saved = _ckpt.load_checkpoint(
            checkpoint, fingerprint=fingerprint, stream_id=stream.stream_id
        )
        if saved is None:
            log(f"no checkpoint in {checkpoint}; starting from the beginning")
        else:
            restored = _require(view, "restore")(saved["state"])
            if (
                restored is not None
                and restored is not view
                and hasattr(restored, "update")
            ):
                view = restored
            after_seq = saved["last_seq"]
            summary.resumed_after = after_seq
            summary.events_before = saved["events"]
            log(f"resumed from {checkpoint} after seq {after_seq:,}")
    summary.view = view
    if checkpoint is not None:
        _require(view, "snapshot")

    if engine == "spark":
        if spark is None:
            from .streams import spark_session

            spark = spark_session()
        sources = {
            rel: _spark_slices(spark, stream, rel, cols, after_seq)
            for rel, cols in selected.items()
        }
    else:
        sources = {
            rel: _arrow_slices(stream, rel, cols, after_seq)
            for rel, cols in selected.items()
        }
    total = stream.count_after(selected, after_seq)
    if limit is not None:
        if limit < 1:
            raise PipelineError(f"limit must be >= 1 event, got {limit}")
        total = min(total, limit)

    from tqdm import tqdm

    bar = tqdm(
        total=total,
        unit="ev",
        unit_scale=True,
        dynamic_ncols=True,
        disable=(None if progress is None else not progress),
        smoothing=0.1,
        file=sys.stderr,
        desc="replay",
    )
    if trace_memory:
        tracemalloc.start()
    update = view.update
    events = summary.events_before
    next_ckpt = (events // every + 1) * every if every else None
    pending_bar = 0
    collector = GCPolicy(gc_freeze_every)
    collector.start()
    t0 = time.perf_counter()
    try:
        for n, first, last, parts in merge_batches(sources, batch):
            for rel, rows, ops in parts:
                name = view_name[rel]
                if -1 in ops:
                    ins = [r for r, o in zip(rows, ops) if o > 0]
                    dels = [r for r, o in zip(rows, ops) if o < 0]
                    if ins:
                        update(name, ins)
                    if dels:
                        update(name, dels, [-1] * len(dels))
                else:
                    update(name, rows)
            if summary.first_seq is None:
                summary.first_seq = first
            summary.events += n
            collector.step(summary.events)
            summary.batches += 1
            summary.last_seq = last
            events += n
            pending_bar += n
            if pending_bar >= 4096:
                bar.update(pending_bar)
                pending_bar = 0
            if next_ckpt is not None and events >= next_ckpt:
                summary.checkpoint_seconds += _save(
                    view, checkpoint, last, events, fingerprint, stream
                )
                summary.checkpoints += 1
                next_ckpt = (events // every + 1) * every
            if rate:
                ahead = summary.events / rate - (time.perf_counter() - t0)
                if ahead > 0:
                    time.sleep(ahead)
            if limit is not None and summary.events >= limit:
                break
        if checkpoint is not None and summary.events:
            summary.checkpoint_seconds += _save(
                view, checkpoint, summary.last_seq, events, fingerprint, stream
            )
            summary.checkpoints += 1
        summary.seconds = time.perf_counter() - t0
    finally:
        collector.release()
        bar.update(pending_bar)
        bar.close()
        if trace_memory:
            summary.peak_traced_bytes = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
    summary.peak_rss_bytes = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    if count_result:
        summary.result_rows = sum(1 for _ in view.rows())
    return summary


def _save(view, directory, last_seq, events, fingerprint, stream) -> float:
    t = time.perf_counter()
    _ckpt.save_checkpoint(
        directory,
        state=view.snapshot(),
        last_seq=last_seq,
        events=events,
        fingerprint=fingerprint,
        stream_id=stream.stream_id,
    )
    return time.perf_counter() - t


def _require(view, method: str):
    fn = getattr(view, method, None)
    if fn is None:
        raise PipelineError(
            f"the view has no {method}() method; checkpoints need a module generated "
            "by a dynyan version with snapshot()/restore()"
        )
    return fn


def replay_query(
    query: str | Path | Query,
    stream_dir: str | Path,
    *,
    schema: str | Path | None = None,
    push: bool = False,
    stats=None,
    trust_input: bool = False,
    **kwargs,
) -> ReplaySummary:
    """Load ``query`` (see ``load_query``), build a View (push mode counts deltas) and replay."""
    if not isinstance(query, Query):
        benchmark = Stream(stream_dir).manifest.get("source", {}).get("benchmark")
        query = load_query(
            query,
            schema=schema,
            benchmark=benchmark,
            stats=stats,
            trust_input=trust_input,
        )
    deltas = [0]
    if push:

        def on_delta(row, change, _d=deltas):
            _d[0] += 1

        try:
            view = query.View(on_delta=on_delta)
        except NotImplementedError as exc:
            raise PipelineError(f"push mode: {exc}") from None
    else:
        view = query.View()
    summary = replay(view, stream_dir, fingerprint=query.fingerprint, **kwargs)
    if push:
        summary.deltas = deltas[0]
    return summary


def row_sort_key(row: tuple):
    """Sort key that orders rows with NULLs (None) without comparing None to values."""
    return tuple((v is None, v) for v in row)


def save_rows(view, path: str | Path) -> int:
    """Pickle ``sorted(view.rows())`` (NULL-safe order) to ``path``; return the row count."""
    rows = sorted(view.rows(), key=row_sort_key)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:
        pickle.dump(rows, fh, protocol=pickle.HIGHEST_PROTOCOL)
    return len(rows)
