"""Update streams: built from benchmark tables with PySpark, read back with pyarrow.

A stream is a global sequence of events ``(seq, relation, op, row)`` with a
dense ``seq`` (0..n-1) and ``op`` +1 (insert) or -1 (delete). On disk
(see docs/streams.md)::

    STREAM/manifest.json                               # written last
    STREAM/<relation>/chunk=<k:05d>/part-*.parquet    # seq:int64, op:int8, row columns

One dataset per relation, each row carrying the global ``seq``; chunk ``k``
holds the events with ``k*chunk_events <= seq < (k+1)*chunk_events`` and every
file is sorted by ``seq``. A query that reads three of eight relations opens
three datasets; replay merges them by ``seq`` without sorting anything.

Variants (``variant=``):

- ``insert``: every tuple inserted once, in a seeded uniformly random order
  (a random interleaving of the relations, as in the DYN papers);
- ``window``: the same inserts, and each inserted tuple is deleted again right
  after the ``window``-th later insert, so at most ``window`` streamed tuples
  are live (a count-based sliding window);
- ``random-delete``: the same inserts, and each tuple is, with probability
  ``delete_fraction``, deleted again at a uniformly random later point.

Static relations (by default ``nation``, ``region``, ``date_dim`` when read)
are inserted first, before every streamed event, and never deleted.

pyspark is imported inside the functions that need it, so importing this
module (and starting the ``dynyan`` CLI) stays cheap.
"""

from __future__ import annotations

import bisect
import concurrent.futures
import datetime
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator, Mapping, Sequence

from . import data as _data
from ..errors import PipelineError

FORMAT = "dynyan-stream"
VERSION = 1
MANIFEST = "manifest.json"
VARIANTS = ("insert", "window", "random-delete")
DEFAULT_STATIC = ("nation", "region", "date_dim")
DEFAULT_CHUNK_EVENTS = 1_000_000
DEFAULT_WINDOW = 10_000
DEFAULT_DELETE_FRACTION = 0.5
LAYOUT = (
    "<relation>/chunk=<k:05d>/part-*.parquet; columns seq:int64, op:int8, then the "
    "relation's columns; each file sorted by seq; chunk k holds "
    "k*chunk_events <= seq < (k+1)*chunk_events"
)

_CHUNK_DIR = re.compile(r"^chunk=(\d+)$")
_ROWS_PER_RANGE_PARTITION = 250_000


# --------------------------------------------------------------------------
# Spark


# Attempts per task: a task whose worker dies is retried (a partitioned
# replay's task then resumes from its partition's checkpoint).
TASK_ATTEMPTS = 4


def spark_session(app: str = "dynyan", driver_memory: str = "4g"):
    """The pipeline's SparkSession: ``local[2]`` (each task tried up to
    TASK_ATTEMPTS times), 2 shuffle partitions, no UI.

    Reuses a running session. Workers run this interpreter (``PYSPARK_PYTHON``).
    """
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    try:
        with warnings.catch_warnings():
            # pyspark warns about pandas >= 3 on import; dynyan does not use pandas
            warnings.simplefilter("ignore", FutureWarning)
            from pyspark.sql import SparkSession
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise PipelineError(
            "pyspark is not installed; install the extra: pip install -e '.[spark]'"
        ) from exc
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        raise PipelineError("Spark needs Java 17+: no `java` on PATH and no JAVA_HOME")
    builder = (
        SparkSession.builder.master(f"local[2,{TASK_ATTEMPTS}]")
        .appName(app)
        .config("spark.sql.shuffle.partitions", "2")
        # tpcgen writes one file per table: read it in 8 MB splits so both
        # cores work on the scan and hash of a big table
        .config("spark.sql.files.maxPartitionBytes", str(8 << 20))
        .config("spark.default.parallelism", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", driver_memory)
        .config("spark.sql.session.timeZone", "UTC")
        .config(
            "spark.hadoop.mapreduce.fileoutputcommitter.marksuccessfuljobs", "false"
        )
        .config("spark.hadoop.parquet.enable.summary-metadata", "false")
        .config(
            "spark.driver.extraJavaOptions",
            f"-Dlog4j2.configurationFile={_log4j_config()}",
        )
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


_LOG4J = """\
# root and repl loggers at the same level: Spark then prints no "Setting
# default log level" banner; spark_session() lowers everything to ERROR once up
rootLogger.level = warn
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
logger.repl.name = org.apache.spark.repl.Main
logger.repl.level = warn
logger.native.name = org.apache.hadoop.util.NativeCodeLoader
logger.native.level = error
logger.utils.name = org.apache.spark.util.Utils
logger.utils.level = error
"""


def _log4j_config() -> Path:
    """A log4j2 config that keeps Spark's JVM quiet (errors only) from startup on."""
    path = Path(tempfile.gettempdir()) / "dynyan-log4j2.properties"
    if not path.exists() or path.read_text() != _LOG4J:
        tmp = path.with_name(f"{path.name}.{os.getpid()}")
        tmp.write_text(_LOG4J)
        os.replace(tmp, path)
    return path


# --------------------------------------------------------------------------
# Building


@dataclass(frozen=True)
class StreamSpec:
    """Everything that determines a stream's content (its cache identity)."""

    variant: str = "insert"
    seed: int = 0
    window: int | None = None
    delete_fraction: float | None = None
    static: tuple[str, ...] | None = None  # None: DEFAULT_STATIC among the relations
    chunk_events: int = DEFAULT_CHUNK_EVENTS

    def __post_init__(self):
        if self.variant not in VARIANTS:
            raise PipelineError(
                f"unknown stream variant {self.variant!r}; choose one of {', '.join(VARIANTS)}"
            )
        if self.variant == "window":
            if self.window is None:
                object.__setattr__(self, "window", DEFAULT_WINDOW)
            if self.window < 1:
                raise PipelineError(f"window must be >= 1, got {self.window}")
        elif self.window is not None:
            raise PipelineError(
                "a window (--window) only applies to the 'window' variant"
            )
        if self.variant == "random-delete":
            if self.delete_fraction is None:
                object.__setattr__(self, "delete_fraction", DEFAULT_DELETE_FRACTION)
            if not 0.0 <= self.delete_fraction <= 1.0:
                raise PipelineError(
                    f"delete fraction must lie in [0, 1], got {self.delete_fraction}"
                )
        elif self.delete_fraction is not None:
            raise PipelineError(
                "a delete fraction (--delete-fraction) only applies to the "
                "'random-delete' variant"
            )
        if self.chunk_events < 1:
            raise PipelineError(f"chunk_events must be >= 1, got {self.chunk_events}")

    def params(self) -> dict:
        if self.variant == "window":
            return {"window": self.window}
        if self.variant == "random-delete":
            return {"delete_fraction": self.delete_fraction}
        return {}

    def label(self) -> str:
        """Short name used in default stream directory names."""
        extra = ""
        if self.variant == "window":
            extra = f"-w{self.window}"
        elif self.variant == "random-delete":
            extra = f"-d{self.delete_fraction:g}"
        return f"{self.variant}{extra}-s{self.seed}"


def default_stream_dir(
    benchmark: str,
    sf: float,
    spec: StreamSpec,
    name: str = "all",
    data_dir: str | Path | None = None,
) -> Path:
    """``data/streams/<benchmark>-sf<sf>-<name>-<variant…>-s<seed>``."""
    base = Path(data_dir) if data_dir is not None else _data.default_data_dir()
    return base / "streams" / f"{benchmark}-{_data.sf_label(sf)}-{name}-{spec.label()}"


def resolve_relations(
    source: str | Path, relations: Mapping[str, Sequence[str] | None] | None
) -> dict[str, tuple[str, ...]]:
    """Map requested relations/columns (any case) onto the dataset's tables/columns.

    ``relations`` is e.g. a compiled ``View.RELATIONS``; ``None`` selects every
    table with all its columns; a ``None`` column list selects all columns.
    """
    import pyarrow.parquet as pq

    available = _data.table_rows(source)
    by_lower = {t.lower(): t for t in available}
    if relations is None:
        relations = {t: None for t in available}
    out: dict[str, tuple[str, ...]] = {}
    for rel, cols in relations.items():
        table = by_lower.get(rel.lower())
        if table is None:
            raise PipelineError(
                f"relation {rel!r} is not a table of {source} "
                f"(tables: {', '.join(sorted(available))})"
            )
        files = sorted(_data.table_path(source, table).glob("*.parquet"))
        names = pq.read_schema(files[0]).names
        if cols is None:
            out[table] = tuple(names)
            continue
        lower = {n.lower(): n for n in names}
        missing = [c for c in cols if c.lower() not in lower]
        if missing:
            raise PipelineError(
                f"relation {rel!r}: no column(s) {', '.join(missing)} in the data "
                f"(columns: {', '.join(names)})"
            )
        out[table] = tuple(lower[c.lower()] for c in cols)
    if not out:
        raise PipelineError("no relations selected for the stream")
    return out


def build_stream(
    source: str | Path,
    out: str | Path,
    relations: Mapping[str, Sequence[str] | None] | None = None,
    spec: StreamSpec = StreamSpec(),
    *,
    query: str | None = None,
    force: bool = False,
    spark=None,
    log: Callable[[str], None] | None = None,
) -> dict:
    """Build the stream of ``relations`` from the dataset ``source`` into ``out``.

    Returns the manifest. If ``out`` already holds a complete stream with the
    same source, relations and spec, it is returned untouched (cache hit);
    a different complete stream there is an error unless ``force``.
    """
    log = log or (lambda msg: None)
    source = Path(source)
    out = Path(out)
    rels = resolve_relations(source, relations)
    source_marker = json.loads((source / _data.MARKER).read_text())
    static = _static_relations(rels, spec.static)
    identity = _identity(source_marker, rels, spec, static)
    existing = cached_manifest(out, identity, force, log)
    if existing is not None:
        return existing

    t0 = time.perf_counter()
    if spark is None:
        log("starting Spark (local[2])")
        spark = spark_session()
    rows = _data.table_rows(source)
    with _data.staging_dir(out) as tmp:
        _write_events(spark, source, tmp, rels, static, spec, rows, log)
        manifest = _make_manifest(
            tmp, source, source_marker, rels, static, spec, identity
        )
        manifest["query"] = query
        manifest["build_seconds"] = round(time.perf_counter() - t0, 3)
        write_manifest(tmp, manifest)
    log(
        f"stream {out}: {manifest['events']:,} events in "
        f"{manifest['build_seconds']:.1f} s"
    )
    return manifest


def cached_manifest(
    out: Path, identity: dict, force: bool, log: Callable[[str], None]
) -> dict | None:
    """The manifest of the stream in ``out`` if it has ``identity`` (a cache
    hit, never with ``force``), else None: build it. Raises if ``out`` holds
    another stream or other files, unless ``force``."""
    existing = _read_manifest_or_none(out)
    if existing is not None:
        if existing.get("identity") == identity and not force:
            log(f"stream {out} is up to date (cached)")
            return existing
        if not force:
            raise PipelineError(
                f"{out} already holds a different stream; choose another --out or use --force"
            )
    elif out.exists() and any(out.iterdir()) and not force:
        raise PipelineError(
            f"{out} exists and is not a stream; use --force to replace it"
        )
    return None


def _static_relations(rels, requested) -> tuple[str, ...]:
    if requested is None:
        return tuple(r for r in rels if r in DEFAULT_STATIC)
    by_lower = {r.lower(): r for r in rels}
    unknown = [r for r in requested if r.lower() not in by_lower]
    if unknown:
        raise PipelineError(
            f"static relation(s) {', '.join(unknown)} are not in the stream "
            f"(relations: {', '.join(rels)})"
        )
    return tuple(by_lower[r.lower()] for r in requested)


def _identity(source_marker, rels, spec: StreamSpec, static) -> dict:
    return {
        "benchmark": source_marker.get("benchmark"),
        "scale_factor": source_marker.get("scale_factor"),
        "tables": source_marker.get("tables"),
        "relations": {r: list(c) for r, c in rels.items()},
        "variant": spec.variant,
        "params": spec.params(),
        "seed": spec.seed,
        "static": list(static),
        "chunk_events": spec.chunk_events,
    }


def _write_events(spark, source, tmp, rels, static, spec: StreamSpec, rows, log):
    """The Spark job: rank tuples in a seeded random order, derive events, write."""
    from pyspark.sql import functions as F

    names = list(rels)
    n_static = sum(rows[r] for r in static)
    n_dyn = sum(rows[r] for r in names if r not in static)
    n_total = n_static + n_dyn
    # one range partition per 250k tuples: below that, one sorted partition
    # is cheaper than sampling range bounds
    partitions = max(1, -(-n_total // _ROWS_PER_RANGE_PARTITION))

    parts = []
    for i, rel in enumerate(names):
        df = spark.read.parquet(str(_data.table_path(source, rel)))
        cols = [F.col(f"`{c}`") for c in rels[rel]]
        salt = [F.lit(spec.seed), F.lit(rel)]
        select = [c.alias(f"c{i}_{j}") for j, c in enumerate(cols)]
        select += [
            F.lit(i).cast("int").alias("_rel"),
            F.lit(0 if rel in static else 1).cast("int").alias("_phase"),
            F.xxhash64(*salt, *cols).alias("_k"),
        ]
        if spec.variant == "random-delete":
            select += [
                _uniform(F, F.xxhash64(*salt, F.lit("deleted?"), *cols)).alias("_v"),
                _uniform(F, F.xxhash64(*salt, F.lit("when?"), *cols)).alias("_w"),
            ]
        parts.append(df.select(*select))
    wide = parts[0]
    for part in parts[1:]:
        wide = wide.unionByName(part, allowMissingColumns=True)

    log(f"ranking {n_total:,} tuples of {', '.join(names)} (seed {spec.seed})")
    ranked, cached = _dense_index(F, wide, ["_phase", "_k", "_rel"], "_i", partitions)
    to_free = [cached]

    j = F.col("_i") - F.lit(n_static)
    is_static = F.col("_phase") == 0
    if spec.variant == "insert":
        events = ranked.select(F.col("_i").alias("seq"), F.lit(1).alias("op"), "*")
    elif spec.variant == "window":
        w = spec.window
        ins_seq = F.when(is_static, F.col("_i")).otherwise(
            F.lit(n_static) + j + F.greatest(F.lit(0), j - F.lit(w))
        )
        inserts = ranked.select(ins_seq.alias("seq"), F.lit(1).alias("op"), "*")
        deletes = ranked.where(~is_static & (j + F.lit(w) < F.lit(n_dyn))).select(
            (F.lit(n_static + w + 1) + j * 2).alias("seq"), F.lit(-1).alias("op"), "*"
        )
        events = inserts.unionByName(deletes)
    else:
        p = spec.delete_fraction
        dyn = ranked.where(~is_static)
        ins = dyn.select(
            j.alias("_pos"), F.lit(1).alias("_kind"), F.lit(1).alias("op"), "*"
        )
        # deleted right before the d-th insert (d = n_dyn: after the last one)
        d = j + F.lit(1) + F.floor(F.col("_w") * (F.lit(n_dyn) - j)).cast("long")
        dels = dyn.where(F.col("_v") < F.lit(p)).select(
            d.alias("_pos"), F.lit(0).alias("_kind"), F.lit(-1).alias("op"), "*"
        )
        log("ordering inserts and random deletes")
        mixed, cached2 = _dense_index(
            F,
            ins.unionByName(dels),
            ["_pos", "_kind", "_k", "_rel"],
            "_e",
            partitions,
        )
        to_free.append(cached2)
        statics = ranked.where(is_static).select(
            F.col("_i").alias("seq"), F.lit(1).alias("op"), "*"
        )
        events = statics.unionByName(
            mixed.select((F.col("_e") + F.lit(n_static)).alias("seq"), "*"),
            allowMissingColumns=True,
        )

    chunk = F.format_string("%05d", F.expr(f"seq div {spec.chunk_events}"))

    def write(i: int, rel: str) -> None:
        cols = [F.col(f"c{i}_{j}").alias(c) for j, c in enumerate(rels[rel])]
        (
            events.where(F.col("_rel") == i)
            .select(
                F.col("seq").cast("long").alias("seq"),
                F.col("op").cast("byte").alias("op"),
                *cols,
                chunk.alias("chunk"),
            )
            .repartition("chunk")
            .sortWithinPartitions("chunk", "seq")
            .write.partitionBy("chunk")
            .parquet(str(tmp / rel))
        )

    # one Spark job per relation, submitted concurrently: small relations'
    # jobs then fill the cores while the big one runs
    log(f"writing {', '.join(names)}")
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(names)) as pool:
        for job in [pool.submit(write, i, rel) for i, rel in enumerate(names)]:
            job.result()
    for df in to_free:
        df.unpersist()
    for crc in tmp.rglob(".*.crc"):
        crc.unlink()


def _uniform(F, h):
    """A 64-bit hash column mapped to a double uniform in [0, 1)."""
    return F.shiftrightunsigned(h, 11).cast("double") / float(1 << 53)


def _dense_index(F, df, keys, name, partitions):
    """Add ``name`` = 0-based rank of each row in ``keys`` order, without a 1-partition sort.

    Range-partition and sort, take ``monotonically_increasing_id`` (partition
    id in the upper bits, position in the sorted partition in the lower 33),
    count rows per partition, and add each partition's offset.
    """
    from pyspark import StorageLevel

    ranged = (
        df.repartitionByRange(partitions, *keys)
        .sortWithinPartitions(*keys)
        .withColumn("_mid", F.monotonically_increasing_id())
        .persist(StorageLevel.MEMORY_AND_DISK)
    )
    counts = {
        row["p"]: row["n"]
        for row in ranged.groupBy(F.shiftright("_mid", 33).alias("p"))
        .agg(F.count(F.lit(1)).alias("n"))
        .collect()
    }
    offsets, total = [], 0
    for p in range(max(counts, default=-1) + 1):
        offsets.append(total)
        total += counts.get(p, 0)
    pid = F.shiftright("_mid", 33).cast("int")
    local = F.col("_mid").bitwiseAND(F.lit((1 << 33) - 1))
    offset = F.element_at(F.array(*[F.lit(o).cast("long") for o in offsets]), pid + 1)
    return ranged.withColumn(name, offset + local).drop("_mid"), ranged


def _make_manifest(tmp, source, source_marker, rels, static, spec, identity) -> dict:
    import pyarrow.compute as pc
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    relations = {}
    events = chunks = 0
    for rel, cols in rels.items():
        files = _chunk_files(tmp / rel)
        inserts = deletes = 0
        types: list[str] = []
        for chunk, path in files:
            chunks = max(chunks, chunk + 1)
            counts = pc.value_counts(pq.read_table(path, columns=["op"])["op"])
            for item in counts.to_pylist():
                if item["values"] > 0:
                    inserts += item["counts"]
                else:
                    deletes += item["counts"]
            if not types:
                schema = pq.read_schema(path)
                types = [str(schema.field(c).type) for c in cols]
        if not types:
            types = [
                str(ds.dataset(_data.table_path(source, rel)).schema.field(c).type)
                for c in cols
            ]
        relations[rel] = {
            "columns": list(cols),
            "types": types,
            "static": rel in static,
            "rows": _data.table_rows(source)[rel],
            "inserts": inserts,
            "deletes": deletes,
        }
        events += inserts + deletes
    return {
        "format": FORMAT,
        "version": VERSION,
        "source": {
            "benchmark": source_marker.get("benchmark"),
            "scale_factor": source_marker.get("scale_factor"),
            "path": str(source),
        },
        "variant": spec.variant,
        "params": spec.params(),
        "seed": spec.seed,
        "static": list(static),
        "static_events": sum(relations[r]["inserts"] for r in static),
        "events": events,
        "chunk_events": spec.chunk_events,
        "chunks": chunks,
        "relations": relations,
        "layout": LAYOUT,
        "identity": identity,
    }


def write_manifest(directory: Path, manifest: dict) -> None:
    """Write ``directory/manifest.json`` (fsync'ed; last, once the data is there)."""
    _write_json_atomic(directory / MANIFEST, manifest)


def _write_json_atomic(path: Path, obj) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w") as fh:
        json.dump(obj, fh, indent=2)
        fh.write("\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def _read_manifest_or_none(directory: Path) -> dict | None:
    try:
        return json.loads((directory / MANIFEST).read_text())
    except (OSError, ValueError):
        return None


def _chunk_files(rel_dir: Path) -> list[tuple[int, Path]]:
    """``(chunk, file)`` pairs of one relation's dataset, in seq order."""
    files = []
    if not rel_dir.is_dir():
        return files
    for sub in rel_dir.iterdir():
        m = _CHUNK_DIR.match(sub.name)
        if m and sub.is_dir():
            for f in sorted(sub.glob("*.parquet")):
                files.append((int(m.group(1)), f))
    files.sort(key=lambda cf: (cf[0], cf[1].name))
    return files


# --------------------------------------------------------------------------
# Reading


def to_python(table, columns: Sequence[str]) -> tuple[list, list, list]:
    """``(seqs, ops, rows)`` of an Arrow table/batch, rows converted per the contract.

    DECIMAL -> float (correctly rounded, equal to ``float(Decimal(text))``),
    DATE -> datetime.date, integers -> int, strings -> str, NULL -> None.
    """
    seqs = _plain_list(table.column("seq"))
    ops = _plain_list(table.column("op"))
    cols = [column_to_python(table.column(c)) for c in columns]
    return seqs, ops, list(zip(*cols)) if cols else [()] * len(seqs)


def column_to_python(array) -> list:
    """One Arrow column as a list of contract values (see ``to_python``)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    t = array.type
    if pa.types.is_decimal(t):
        if t.precision <= 18:
            # arrow's decimal->float cast is not correctly rounded (it yields
            # 24710.350000000002); unscaled int -> float is exact below 2**53,
            # and one IEEE division by 10**scale is correctly rounded
            unscaled = pc.cast(
                pc.multiply(array, pa.scalar(10**t.scale, pa.int64())), pa.int64()
            )
            return _plain_list(
                pc.divide(pc.cast(unscaled, pa.float64()), float(10**t.scale))
            )
        return [
            None if s is None else float(s)
            for s in pc.cast(array, pa.string()).to_pylist()
        ]
    if pa.types.is_date32(t):
        # to_pylist builds a datetime.date per value (~2 us); a table of the
        # distinct days is ~20x faster and shares one object per day
        days = pc.cast(array, pa.int32())
        epoch = datetime.date(1970, 1, 1)
        table = {
            d: epoch + datetime.timedelta(days=d)
            for d in pc.unique(days).to_pylist()
            if d is not None
        }
        table[None] = None
        return list(map(table.__getitem__, days.to_pylist()))
    if _is_string(pa, t) and len(array) >= 256:
        # low-cardinality strings (flags, modes, names): decode each distinct
        # value once; the view then shares one str object per value
        if pc.count_distinct(array.slice(0, 256)).as_py() <= 64:
            encoded = pc.dictionary_encode(array)
            if isinstance(encoded, pa.ChunkedArray):
                encoded = encoded.combine_chunks()
            values = encoded.dictionary.to_pylist()
            values.append(None)
            indices = pc.fill_null(encoded.indices, len(values) - 1)
            return list(map(values.__getitem__, _plain_list(indices)))
    if pa.types.is_integer(t) or pa.types.is_floating(t):
        return _plain_list(array)
    return array.to_pylist()


def _plain_list(array) -> list:
    """A numeric Arrow column as a Python list (through numpy when it is there: ~3x faster)."""
    global _HAVE_NUMPY
    if _HAVE_NUMPY is None:
        # numpy comes with pyspark and pandas, but is not required; import it
        # here, not at module level, so the CLI starts fast
        try:
            import numpy  # noqa: F401
        except ImportError:  # pragma: no cover
            _HAVE_NUMPY = False
        else:
            _HAVE_NUMPY = True
    if _HAVE_NUMPY and array.null_count == 0:
        return array.to_numpy().tolist()
    return array.to_pylist()


_HAVE_NUMPY: bool | None = None


def _is_string(pa, t) -> bool:
    return (
        pa.types.is_string(t)
        or pa.types.is_large_string(t)
        or pa.types.is_string_view(t)
    )


class Stream:
    """A stream directory opened for reading (pyarrow only, no Spark)."""

    def __init__(self, directory: str | Path):
        self.dir = Path(directory)
        manifest = _read_manifest_or_none(self.dir)
        if manifest is None:
            what = (
                "does not exist"
                if not self.dir.exists()
                else "has no readable manifest.json (incomplete build?)"
            )
            raise PipelineError(f"stream {self.dir} {what}")
        if manifest.get("format") != FORMAT or manifest.get("version") != VERSION:
            raise PipelineError(
                f"{self.dir}/manifest.json is not a {FORMAT} v{VERSION} manifest"
            )
        self.manifest = manifest
        self.events: int = manifest["events"]
        self.chunk_events: int = manifest["chunk_events"]
        self.relations: dict[str, tuple[str, ...]] = {
            r: tuple(info["columns"]) for r, info in manifest["relations"].items()
        }

    @property
    def stream_id(self) -> str:
        """Hash of the manifest's identity: checkpoints refuse another stream."""
        return stream_id(self.manifest)

    def select(self, wanted: Mapping[str, Sequence[str]]) -> dict[str, tuple[str, ...]]:
        """Map a query's ``RELATIONS`` (any case) onto stream relations/columns."""
        by_lower = {r.lower(): r for r in self.relations}
        out = {}
        for rel, cols in wanted.items():
            have = by_lower.get(rel.lower())
            if have is None:
                raise PipelineError(
                    f"the query reads {rel!r} but stream {self.dir} has only "
                    f"{', '.join(self.relations)}; build it with that relation"
                )
            lower = {c.lower(): c for c in self.relations[have]}
            missing = [c for c in cols if c.lower() not in lower]
            if missing:
                raise PipelineError(
                    f"stream relation {have!r} lacks column(s) {', '.join(missing)} the query reads"
                )
            out[have] = tuple(lower[c.lower()] for c in cols)
        return out

    def files(self, rel: str) -> list[tuple[int, Path]]:
        return _chunk_files(self.dir / rel)

    def count_after(self, rels: Iterable[str], after_seq: int) -> int:
        """Number of events of ``rels`` with seq > ``after_seq`` (from metadata when possible)."""
        total = 0
        for rel in rels:
            info = self.manifest["relations"][rel]
            if after_seq < 0:
                total += info["inserts"] + info["deletes"]
                continue
            for chunk, path in self.files(rel):
                if (chunk + 1) * self.chunk_events - 1 <= after_seq:
                    continue
                if chunk * self.chunk_events > after_seq:
                    total += _num_rows(path)
                else:
                    seqs = _read_columns(path, ["seq"]).column("seq").to_pylist()
                    total += len(seqs) - bisect.bisect_right(seqs, after_seq)
        return total

    def arrow_batches(
        self,
        rel: str,
        columns: Sequence[str],
        after_seq: int = -1,
        batch_rows: int = 65_536,
    ) -> Iterator:
        """Arrow record batches (seq, op, columns) of ``rel`` with seq > ``after_seq``, in order."""
        import pyarrow.parquet as pq

        wanted = ["seq", "op", *columns]
        for chunk, path in self.files(rel):
            if (chunk + 1) * self.chunk_events - 1 <= after_seq:
                continue
            pf = pq.ParquetFile(path)
            for batch in pf.iter_batches(batch_size=batch_rows, columns=wanted):
                if (
                    after_seq >= 0
                    and batch.num_rows
                    and batch.column(0)[0].as_py() <= after_seq
                ):
                    seqs = batch.column(0).to_pylist()
                    batch = batch.slice(bisect.bisect_right(seqs, after_seq))
                if batch.num_rows:
                    yield batch


def _num_rows(path: Path) -> int:
    import pyarrow.parquet as pq

    return pq.read_metadata(path).num_rows


def _read_columns(path: Path, columns):
    import pyarrow.parquet as pq

    return pq.read_table(path, columns=list(columns))


def read_manifest(directory: str | Path) -> dict:
    return Stream(directory).manifest


def stream_id(manifest: dict) -> str:
    """Short SHA-256 of a manifest's ``identity`` (``Stream.stream_id``)."""
    blob = json.dumps(manifest["identity"], sort_keys=True).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


# --------------------------------------------------------------------------
# Validation and materialisation (DuckDB reads the Parquet files directly)


def _duckdb():
    import duckdb

    return duckdb.connect()


def _sql_str(value) -> str:
    return "'" + str(value).replace("'", "''") + "'"


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _scan(stream: Stream, rel: str, extra: str = "") -> str:
    """A DuckDB table expression over one relation's chunk files (no files: empty)."""
    files = [str(p) for _, p in stream.files(rel)]
    if not files:
        return None
    listing = "[" + ", ".join(_sql_str(f) for f in files) + "]"
    return f"read_parquet({listing}{extra})"


@dataclass
class ValidationReport:
    directory: Path
    events: int = 0
    per_relation: dict[str, dict[str, int]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def __str__(self) -> str:
        head = f"{self.directory}: {self.events:,} events, " + ", ".join(
            f"{r} +{c['inserts']:,}/-{c['deletes']:,}"
            for r, c in self.per_relation.items()
        )
        if self.ok:
            return "ok: " + head
        return "\n".join(["INVALID: " + head, *("  " + p for p in self.problems)])


def validate_stream(directory: str | Path, examples: int = 3) -> ValidationReport:
    """Check a stream with DuckDB; the report lists every kind of problem found.

    Checks: manifest readable; each file sorted by seq and inside its chunk's
    seq range, one file per chunk; op is +1 or -1; seq dense 0..n-1 over all
    relations (no gap, no duplicate); per relation and full row, the running
    multiplicity never drops below 0 (so no delete precedes its insert);
    static relations only insert, before every streamed event; counts match
    the manifest.
    """
    stream = Stream(directory)
    report = ValidationReport(stream.dir)
    problems = report.problems
    con = _duckdb()
    n = stream.events
    c = stream.chunk_events
    static = set(stream.manifest.get("static", []))
    static_events = stream.manifest.get("static_events", 0)
    seq_scans = []
    for rel, cols in stream.relations.items():
        info = stream.manifest["relations"][rel]
        counts = {"inserts": 0, "deletes": 0}
        report.per_relation[rel] = counts
        scan = _scan(stream, rel, ", filename=true, file_row_number=true")
        if scan is None:
            if info.get("inserts") or info.get("deletes"):
                problems.append(f"{rel}: no files, but the manifest counts events")
            continue
        seq_scans.append(_scan(stream, rel))
        con.execute(f"CREATE OR REPLACE TEMP VIEW ev AS SELECT * FROM {scan}")
        for op, k in con.execute("SELECT op, count(*) FROM ev GROUP BY op").fetchall():
            if op == 1:
                counts["inserts"] = k
            elif op == -1:
                counts["deletes"] = k
            else:
                problems.append(f"{rel}: {k} events with op {op} (must be +1 or -1)")
        for key in ("inserts", "deletes"):
            if counts[key] != info.get(key):
                problems.append(
                    f"{rel}: {counts[key]} {key}, but the manifest says {info.get(key)}"
                )
        chunk_of = {str(p): k for k, p in stream.files(rel)}
        if len(set(chunk_of.values())) != len(chunk_of):
            problems.append(f"{rel}: several files in one chunk")
        con.execute(
            "CREATE OR REPLACE TEMP TABLE chunk_of (filename VARCHAR, chunk BIGINT)"
        )
        con.executemany("INSERT INTO chunk_of VALUES (?, ?)", list(chunk_of.items()))
        bad = con.execute(f"""
            SELECT ev.filename, seq, prev, chunk FROM (
                SELECT filename, seq, lag(seq) OVER (
                    PARTITION BY filename ORDER BY file_row_number) AS prev
                FROM ev) ev JOIN chunk_of USING (filename)
            WHERE prev >= seq OR seq // {c} <> chunk
            ORDER BY seq LIMIT {examples}""").fetchall()
        for filename, seq, prev, chunk in bad:
            if prev is not None and prev >= seq:
                problems.append(
                    f"{rel}: seq {seq} follows {prev} in {Path(filename).name}: "
                    "file not sorted by seq"
                )
            else:
                problems.append(f"{rel}: seq {seq} lies outside its chunk {chunk}")
        colnames = ", ".join(_quote(x) for x in cols)
        negative = con.execute(f"""
            SELECT seq, running, {colnames} FROM (
                SELECT seq, {colnames}, sum(op) OVER (
                    PARTITION BY {colnames} ORDER BY seq
                    ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS running
                FROM ev)
            WHERE running < 0 ORDER BY seq LIMIT {examples}""").fetchall()
        for seq, running, *row in negative:
            problems.append(
                f"{rel}: the delete at seq {seq} takes the multiplicity of "
                f"{tuple(row)!r} to {running} (delete before insert?)"
            )
        if rel in static:
            k = con.execute(
                f"SELECT count(*) FROM ev WHERE op <> 1 OR seq >= {static_events}"
            ).fetchone()[0]
            if k:
                problems.append(
                    f"{rel} is static but has {k} events that are deletes or come "
                    f"after the first {static_events} (static) events"
                )
    report.events = sum(
        x["inserts"] + x["deletes"] for x in report.per_relation.values()
    )
    if seq_scans:
        union = " UNION ALL ".join(f"SELECT seq FROM {s}" for s in seq_scans)
        total, distinct, lo, hi = con.execute(
            f"SELECT count(*), count(DISTINCT seq), min(seq), max(seq) FROM ({union})"
        ).fetchone()
        if (total, distinct, lo, hi) != (n, n, 0 if n else None, n - 1 if n else None):
            detail = con.execute(f"""
                SELECT 'duplicate', seq FROM ({union}) GROUP BY seq HAVING count(*) > 1
                UNION ALL
                SELECT 'missing', r.range FROM range({n}) r
                    ANTI JOIN ({union}) u ON u.seq = r.range
                ORDER BY 2 LIMIT {examples}""").fetchall()
            problems.append(
                f"seq is not dense 0..{n - 1}: {total} events, {distinct} distinct, "
                f"min {lo}, max {hi}; e.g. "
                + ", ".join(f"{kind} {seq}" for kind, seq in detail)
            )
    elif n:
        problems.append(f"the manifest counts {n} events but there are no files")
    con.close()
    return report


def materialize(
    stream_dir: str | Path,
    con=None,
    *,
    upto_seq: int | None = None,
    relations: Iterable[str] | None = None,
):
    """Load the database a stream leaves behind into DuckDB tables, one per relation.

    Each table has the relation's stored columns and types (DECIMAL stays
    DECIMAL) and holds every row with its final multiplicity (events with
    ``seq <= upto_seq`` only, if given). This is computed by DuckDB straight
    from the Parquet files, independently of the replay code, so it serves as
    the reference database for checking views and for recomputation baselines.
    Returns the connection.
    """
    stream = Stream(stream_dir)
    con = con if con is not None else _duckdb()
    wanted = list(relations) if relations is not None else list(stream.relations)
    for rel in wanted:
        if rel not in stream.relations:
            raise PipelineError(f"stream {stream.dir} has no relation {rel!r}")
        cols = ", ".join(_quote(x) for x in stream.relations[rel])
        scan = _scan(stream, rel)
        name = _quote(rel)
        if scan is None:  # no events at all: an empty table typed like the source
            con.execute(
                f"CREATE OR REPLACE TABLE {name} AS SELECT {cols} "
                f"FROM read_parquet({_sql_str(_source_files(stream, rel))}) LIMIT 0"
            )
            continue
        where = f"WHERE seq <= {int(upto_seq)}" if upto_seq is not None else ""
        con.execute(f"""
            CREATE OR REPLACE TABLE {name} AS
            SELECT {cols} FROM (
                SELECT {cols}, sum(op) AS m FROM {scan} {where} GROUP BY ALL
            ) t, range(t.m::BIGINT) WHERE t.m > 0""")
    return con


def _source_files(stream: Stream, rel: str) -> str:
    source = Path(stream.manifest.get("source", {}).get("path") or "") / rel
    if not any(source.glob("*.parquet")):
        raise PipelineError(
            f"relation {rel!r} has no events in {stream.dir} and its source "
            f"table {source} is gone: cannot tell its column types"
        )
    return str(source / "*.parquet")
