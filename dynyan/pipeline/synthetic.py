"""Synthetic update streams for the inequality-join experiments (pure Python + pyarrow).

Two generators, both seeded and deterministic:

- **GCQ** (``gcq_events``): relations R(a,b,c), S(d,e,f,k), T(g,h,i,k) of
  queries/gcq/schema.sql filled with uniformly random integers (every column in
  ``1..domain``, the equality-join column ``k`` in ``1..key_domain``). By
  default the stream has the IEDyn paper's size for the query (GCQ1 12,000
  events; GCQ2/3/5/7 2,700; GCQ4/6/8 21,000), split evenly over the relations
  the query reads, in a random interleaving. Variants: ``insert`` (inserts
  only) and ``window`` (each tuple is deleted right after the ``window``-th
  later insert, so exactly ``window`` streamed tuples are live once the window
  is full; the same interleaving as ``dynyan stream build --variant window``).
- **Fraud** (``fraud_events``): ``transactions(ts, acc, amnt)`` for
  queries/fraud.sql. Timestamps (integer seconds) strictly increase with
  exponential gaps, accounts come from a small pool, amounts are mostly small
  (below 100) with some medium and occasional large (above 1000) ones, in
  cents (DECIMAL(12,2); floats rounded to 2 places in memory). Every
  transaction is deleted one hour (``window_seconds`` of ``ts``) after it
  happened: its delete comes right before the first transaction with
  ``ts >= ts_old + window_seconds`` (transactions of the last hour stay).

In memory an event is ``(relation, op, row)`` with ``op`` +1 or -1; the list
index is the event's ``seq``. ``write_stream`` stores events in the Parquet
layout of docs/streams.md (``manifest.json`` + ``<relation>/chunk=<k>/part-0.parquet``
with ``seq``, ``op`` and the columns), so ``dynyan replay``,
``dynyan stream validate`` and ``dynyan.pipeline.replay.replay`` take them unchanged.

Command line (dynyan.cli.synthetic)::

    dynyan synthetic gcq --query gcq1                   # 12k inserts
    dynyan synthetic gcq --query gcq4 --variant window --window 2000
    dynyan synthetic fraud --events 20000 --validate
    dynyan replay queries/gcq/gcq1.sql data/streams/synthetic-gcq1-insert-n12000-s42
"""

from __future__ import annotations

import os
import random
import time
from decimal import Decimal
from pathlib import Path
from typing import Callable, Iterable, Iterator, Sequence

from ..errors import PipelineError

Event = tuple  # (relation, op, row)

GENERATOR_VERSION = 1

GCQ_SCHEMA: dict[str, tuple[str, ...]] = {
    "r": ("a", "b", "c"),
    "s": ("d", "e", "f", "k"),
    "t": ("g", "h", "i", "k"),
}
GCQ_RELATIONS: dict[str, tuple[str, ...]] = {
    "gcq1": ("r", "s", "t"),
    "gcq2": ("r", "s"),
    "gcq3": ("r", "s", "t"),
    "gcq4": ("s", "t"),
    "gcq5": ("r", "s", "t"),
    "gcq6": ("s", "t"),
    "gcq7": ("r", "s", "t"),
    "gcq8": ("s", "t"),
}
# stream sizes of the IEDyn experiments (events)
PAPER_EVENTS: dict[str, int] = {
    "gcq1": 12_000,
    "gcq2": 2_700,
    "gcq3": 2_700,
    "gcq4": 21_000,
    "gcq5": 2_700,
    "gcq6": 21_000,
    "gcq7": 2_700,
    "gcq8": 21_000,
}
GCQ_VARIANTS = ("insert", "window")
DEFAULT_DOMAIN = 10_000
DEFAULT_KEY_DOMAIN = 100
KEY_COLUMNS = frozenset({"k"})

FRAUD_SCHEMA: dict[str, tuple[str, ...]] = {"transactions": ("ts", "acc", "amnt")}
FRAUD_TYPES = {"ts": "int64", "acc": "int64", "amnt": "decimal128(12, 2)"}
DEFAULT_FRAUD_EVENTS = 20_000  # transactions (inserts)
DEFAULT_ACCOUNTS = 50
DEFAULT_MEAN_GAP = 10.0  # seconds between transactions
DEFAULT_LARGE_FRACTION = 0.05  # amount in [1000.01, 5000.00]
DEFAULT_MEDIUM_FRACTION = 0.15  # amount in [100.00, 1000.00]
DEFAULT_WINDOW_SECONDS = 3600
DEFAULT_START_TS = 1_700_000_000

DEFAULT_CHUNK_EVENTS = 1_000_000
DEFAULT_SEED = 42


# --------------------------------------------------------------------------
# In-memory generators


def gcq_query_name(query: str | os.PathLike) -> str:
    """``'gcq1'``, ``'GCQ1'``, ``'queries/gcq/gcq1.sql'`` -> ``'gcq1'``."""
    name = Path(str(query)).stem.lower()
    if name not in GCQ_RELATIONS:
        raise PipelineError(
            f"unknown GCQ query {query!r}; choose one of {', '.join(GCQ_RELATIONS)}"
        )
    return name


def gcq_events(
    query: str = "gcq1",
    *,
    events: int | None = None,
    variant: str = "insert",
    window: int | None = None,
    seed: int = 0,
    domain: int = DEFAULT_DOMAIN,
    key_domain: int = DEFAULT_KEY_DOMAIN,
    relations: Sequence[str] | None = None,
) -> list[Event]:
    """The GCQ stream of ``query`` as a list of ``(relation, op, row)``.

    ``events`` is the number of inserts (default: the paper's size for the
    query); the window variant adds a delete for every insert except the last
    ``window`` ones. ``relations`` overrides the relations the query reads.
    """
    rels = _gcq_relations(query, relations)
    n = PAPER_EVENTS[gcq_query_name(query)] if events is None else events
    _check_gcq(variant, window, n, domain, key_domain)
    rng = random.Random(f"dynyan-synthetic/gcq/{seed}")
    order = [rels[i % len(rels)] for i in range(n)]
    rng.shuffle(order)
    inserts = []
    randint = rng.randint
    for rel in order:
        inserts.append(
            (
                rel,
                tuple(
                    randint(1, key_domain if c in KEY_COLUMNS else domain)
                    for c in GCQ_SCHEMA[rel]
                ),
            )
        )
    if variant == "insert":
        return [(rel, 1, row) for rel, row in inserts]
    return _count_window(inserts, window)


def _gcq_relations(query: str, relations: Sequence[str] | None) -> tuple[str, ...]:
    if relations is None:
        return GCQ_RELATIONS[gcq_query_name(query)]
    rels = tuple(r.lower() for r in relations)
    unknown = [r for r in rels if r not in GCQ_SCHEMA]
    if unknown or not rels or len(set(rels)) != len(rels):
        raise PipelineError(
            f"relations must be distinct names among {', '.join(GCQ_SCHEMA)}; got {relations!r}"
        )
    return rels


def _check_gcq(variant, window, n, domain, key_domain) -> None:
    if variant not in GCQ_VARIANTS:
        raise PipelineError(
            f"unknown GCQ stream variant {variant!r}; choose one of {', '.join(GCQ_VARIANTS)}"
        )
    if variant == "window":
        if window is None or window < 1:
            raise PipelineError(f"the window variant needs a window >= 1, got {window}")
    elif window is not None:
        raise PipelineError("a window only applies to the 'window' variant")
    if n < 0:
        raise PipelineError(f"events must be >= 0, got {n}")
    if domain < 1 or key_domain < 1:
        raise PipelineError("domain and key domain must be >= 1")


def _count_window(inserts: list[tuple[str, tuple]], window: int) -> list[Event]:
    """Insert j at seq ``j + max(0, j - W)``, its delete at ``2j + W + 1``
    (for ``j + W < n``): each delete comes right after the W-th later insert."""
    out: list[Event] = []
    n = len(inserts)
    for j, (rel, row) in enumerate(inserts):
        out.append((rel, 1, row))
        i = j - window
        if i >= 0:
            old_rel, old_row = inserts[i]
            out.append((old_rel, -1, old_row))
    assert len(out) == n + max(0, n - window)
    return out


def fraud_events(
    events: int = DEFAULT_FRAUD_EVENTS,
    *,
    seed: int = 0,
    accounts: int = DEFAULT_ACCOUNTS,
    mean_gap: float = DEFAULT_MEAN_GAP,
    large_fraction: float = DEFAULT_LARGE_FRACTION,
    medium_fraction: float = DEFAULT_MEDIUM_FRACTION,
    window_seconds: int | None = DEFAULT_WINDOW_SECONDS,
    start_ts: int = DEFAULT_START_TS,
) -> list[Event]:
    """The transaction stream: ``events`` inserts into ``transactions`` and
    the deletes of every transaction ``window_seconds`` after it (None: none).

    Rows are ``(ts, acc, amnt)`` with ``ts`` strictly increasing (int), ``acc``
    in ``1..accounts`` and ``amnt`` a float with 2 decimals (DECIMAL(12,2)).
    """
    if events < 0:
        raise PipelineError(f"events must be >= 0, got {events}")
    if accounts < 1:
        raise PipelineError(f"accounts must be >= 1, got {accounts}")
    if mean_gap < 1:
        raise PipelineError(f"the mean gap must be >= 1 second, got {mean_gap}")
    if not (
        0 <= large_fraction <= 1
        and 0 <= medium_fraction <= 1
        and large_fraction + medium_fraction <= 1
    ):
        raise PipelineError("large and medium fractions must lie in [0, 1], sum <= 1")
    if window_seconds is not None and window_seconds < 1:
        raise PipelineError(f"window seconds must be >= 1, got {window_seconds}")
    rng = random.Random(f"dynyan-synthetic/fraud/{seed}")
    rel = "transactions"
    out: list[Event] = []
    live: list[tuple] = []  # inserted, not yet deleted, in ts order
    head = 0
    ts = start_ts
    extra = mean_gap - 1.0
    for _ in range(events):
        # gap >= 1 s, mean `mean_gap`
        ts += 1 + (int(rng.expovariate(1.0 / extra)) if extra > 0 else 0)
        if window_seconds is not None:
            while head < len(live) and live[head][0] + window_seconds <= ts:
                out.append((rel, -1, live[head]))
                head += 1
        u = rng.random()
        if u < large_fraction:
            cents = rng.randint(100_001, 500_000)
        elif u < large_fraction + medium_fraction:
            cents = rng.randint(10_000, 100_000)
        else:
            cents = rng.randint(50, 9_999)
        row = (ts, rng.randint(1, accounts), cents / 100)
        out.append((rel, 1, row))
        live.append(row)
    return out


# --------------------------------------------------------------------------
# Applying events to a view (tests, benchmarks)


def batches(
    events: Sequence[Event], size: int
) -> Iterator[list[tuple[str, list, list]]]:
    """Group events into batches of ``size`` as ``dynyan.pipeline.replay`` does: per
    batch and relation one list of inserts, then one list of deletes.

    Yields lists of ``(relation, rows, mults)``; applying them in order with
    ``view.update(rel, rows, mults)`` never deletes before the matching insert
    and leaves the same state as applying the events one by one.
    """
    if size < 1:
        raise PipelineError(f"batch size must be >= 1, got {size}")
    for start in range(0, len(events), size):
        ins: dict[str, list] = {}
        dels: dict[str, list] = {}
        for rel, op, row in events[start : start + size]:
            (ins if op > 0 else dels).setdefault(rel, []).append(row)
        calls = []
        for rel in dict.fromkeys([*ins, *dels]):
            if rel in ins:
                calls.append((rel, ins[rel], [1] * len(ins[rel])))
            if rel in dels:
                calls.append((rel, dels[rel], [-1] * len(dels[rel])))
        yield calls


def apply_events(view, events: Sequence[Event], batch: int = 1) -> int:
    """Apply ``events`` to ``view`` (one by one, or in batches); returns the count."""
    if batch == 1:
        insert, delete = view.insert, view.delete
        for rel, op, row in events:
            (insert if op > 0 else delete)(rel, row)
        return len(events)
    for calls in batches(events, batch):
        for rel, rows, mults in calls:
            view.update(rel, rows, mults)
    return len(events)


def final_database(events: Iterable[Event]) -> dict[str, dict[tuple, int]]:
    """The multiset each relation holds after ``events``: ``{rel: {row: mult}}``."""
    db: dict[str, dict[tuple, int]] = {}
    for rel, op, row in events:
        bag = db.setdefault(rel, {})
        m = bag.get(row, 0) + op
        if m < 0:
            raise PipelineError(f"event deletes absent row {row!r} of {rel}")
        if m:
            bag[row] = m
        else:
            del bag[row]
    return db


# --------------------------------------------------------------------------
# Parquet stream layout (docs/streams.md)


def write_stream(
    events: Sequence[Event],
    out: str | os.PathLike,
    columns: dict[str, Sequence[str]],
    types: dict[str, Sequence[str]],
    *,
    identity: dict,
    variant: str,
    params: dict,
    seed: int,
    query: str | None = None,
    generator: str = "synthetic",
    chunk_events: int = DEFAULT_CHUNK_EVENTS,
    force: bool = False,
    log: Callable[[str], None] | None = None,
) -> dict:
    """Write ``events`` (index = seq) as a stream directory; return its manifest.

    ``columns`` and ``types`` (``'int64'`` or ``'decimal128(p, s)'``) per
    relation. If ``out`` already holds a stream with the same ``identity`` it
    is kept (cache hit) unless ``force``; another stream or other files there
    are an error unless ``force``. Written into a hidden temporary directory
    that is renamed into place with the manifest last.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    from . import data as _data
    from . import streams as _streams

    log = log or (lambda msg: None)
    if chunk_events < 1:
        raise PipelineError(f"chunk_events must be >= 1, got {chunk_events}")
    out = Path(out)
    identity = {**identity, "chunk_events": chunk_events}
    existing = _streams.cached_manifest(out, identity, force, log)
    if existing is not None:
        return existing

    t0 = time.perf_counter()
    arrow_types = {rel: [_arrow_type(pa, t) for t in types[rel]] for rel in columns}
    per_rel: dict[str, tuple[list, list, list]] = {r: ([], [], []) for r in columns}
    for seq, (rel, op, row) in enumerate(events):
        try:
            seqs, ops, rows = per_rel[rel]
        except KeyError:
            raise PipelineError(f"event {seq}: unknown relation {rel!r}") from None
        if op not in (1, -1):
            raise PipelineError(f"event {seq}: op must be +1 or -1, got {op!r}")
        if len(row) != len(columns[rel]):
            raise PipelineError(
                f"event {seq}: {rel} rows have {len(columns[rel])} columns, got {row!r}"
            )
        seqs.append(seq)
        ops.append(op)
        rows.append(row)

    relations = {}
    chunks = 0
    with _data.staging_dir(out) as tmp:
        for rel, cols in columns.items():
            seqs, ops, rows = per_rel[rel]
            lo = 0
            while lo < len(seqs):
                chunk = seqs[lo] // chunk_events
                hi = lo
                limit = (chunk + 1) * chunk_events
                while hi < len(seqs) and seqs[hi] < limit:
                    hi += 1
                arrays = [
                    pa.array(seqs[lo:hi], type=pa.int64()),
                    pa.array(ops[lo:hi], type=pa.int8()),
                ]
                for j, t in enumerate(arrow_types[rel]):
                    values = [r[j] for r in rows[lo:hi]]
                    if pa.types.is_decimal(t):
                        values = [Decimal(f"{v:.{t.scale}f}") for v in values]
                    arrays.append(pa.array(values, type=t))
                table = pa.table(arrays, names=["seq", "op", *cols])
                part = tmp / rel / f"chunk={chunk:05d}"
                part.mkdir(parents=True, exist_ok=True)
                pq.write_table(table, part / "part-0.parquet")
                chunks = max(chunks, chunk + 1)
                lo = hi
            (tmp / rel).mkdir(parents=True, exist_ok=True)
            relations[rel] = {
                "columns": list(cols),
                "types": [str(t) for t in arrow_types[rel]],
                "static": False,
                "rows": sum(1 for o in ops if o > 0),
                "inserts": sum(1 for o in ops if o > 0),
                "deletes": sum(1 for o in ops if o < 0),
            }
        manifest = {
            "format": _streams.FORMAT,
            "version": _streams.VERSION,
            "source": {
                "benchmark": "synthetic",
                "scale_factor": None,
                "path": None,
                "generator": generator,
            },
            "query": query,
            "variant": variant,
            "params": params,
            "seed": seed,
            "static": [],
            "static_events": 0,
            "events": len(events),
            "chunk_events": chunk_events,
            "chunks": chunks,
            "relations": relations,
            "layout": _streams.LAYOUT,
            "identity": identity,
            "build_seconds": round(time.perf_counter() - t0, 3),
        }
        _streams.write_manifest(tmp, manifest)
    log(f"stream {out}: {len(events):,} events in {manifest['build_seconds']:.2f} s")
    return manifest


def _arrow_type(pa, name: str):
    if name == "int64":
        return pa.int64()
    if name.startswith("decimal128(") and name.endswith(")"):
        p, s = (int(x) for x in name[len("decimal128(") : -1].split(","))
        return pa.decimal128(p, s)
    raise PipelineError(f"unsupported column type {name!r} (int64 or decimal128(p, s))")


def stream_id(manifest: dict) -> str:
    """The same id ``dynyan.pipeline.streams.Stream.stream_id`` computes."""
    from .streams import stream_id as _stream_id

    return _stream_id(manifest)


# --------------------------------------------------------------------------
# Building stream directories


def build_gcq_stream(
    out: str | os.PathLike,
    query: str = "gcq1",
    *,
    events: int | None = None,
    variant: str = "insert",
    window: int | None = None,
    seed: int = DEFAULT_SEED,
    domain: int = DEFAULT_DOMAIN,
    key_domain: int = DEFAULT_KEY_DOMAIN,
    relations: Sequence[str] | None = None,
    chunk_events: int = DEFAULT_CHUNK_EVENTS,
    force: bool = False,
    log: Callable[[str], None] | None = None,
) -> dict:
    """Generate ``gcq_events(...)`` and write it to ``out``; returns the manifest."""
    name = gcq_query_name(query)
    rels = _gcq_relations(name, relations)
    n = PAPER_EVENTS[name] if events is None else events
    _check_gcq(variant, window, n, domain, key_domain)
    params = {"window": window} if variant == "window" else {}
    identity = {
        "generator": "gcq",
        "generator_version": GENERATOR_VERSION,
        "query": name,
        "relations": {r: list(GCQ_SCHEMA[r]) for r in rels},
        "inserts": n,
        "variant": variant,
        "params": params,
        "seed": seed,
        "domain": domain,
        "key_domain": key_domain,
    }
    evs = gcq_events(
        name,
        events=n,
        variant=variant,
        window=window,
        seed=seed,
        domain=domain,
        key_domain=key_domain,
        relations=rels,
    )
    return write_stream(
        evs,
        out,
        {r: GCQ_SCHEMA[r] for r in rels},
        {r: ["int64"] * len(GCQ_SCHEMA[r]) for r in rels},
        identity=identity,
        variant=variant,
        params={**params, "domain": domain, "key_domain": key_domain},
        seed=seed,
        query=f"queries/gcq/{name}.sql",
        generator="gcq",
        chunk_events=chunk_events,
        force=force,
        log=log,
    )


def build_fraud_stream(
    out: str | os.PathLike,
    *,
    events: int = DEFAULT_FRAUD_EVENTS,
    seed: int = DEFAULT_SEED,
    accounts: int = DEFAULT_ACCOUNTS,
    mean_gap: float = DEFAULT_MEAN_GAP,
    large_fraction: float = DEFAULT_LARGE_FRACTION,
    medium_fraction: float = DEFAULT_MEDIUM_FRACTION,
    window_seconds: int | None = DEFAULT_WINDOW_SECONDS,
    start_ts: int = DEFAULT_START_TS,
    chunk_events: int = DEFAULT_CHUNK_EVENTS,
    force: bool = False,
    log: Callable[[str], None] | None = None,
) -> dict:
    """Generate ``fraud_events(...)`` and write it to ``out``; returns the manifest."""
    params = {
        "accounts": accounts,
        "mean_gap": mean_gap,
        "large_fraction": large_fraction,
        "medium_fraction": medium_fraction,
        "window_seconds": window_seconds,
        "start_ts": start_ts,
    }
    identity = {
        "generator": "fraud",
        "generator_version": GENERATOR_VERSION,
        "inserts": events,
        "seed": seed,
        **params,
    }
    evs = fraud_events(events, seed=seed, **params)
    return write_stream(
        evs,
        out,
        dict(FRAUD_SCHEMA),
        {"transactions": [FRAUD_TYPES[c] for c in FRAUD_SCHEMA["transactions"]]},
        identity=identity,
        variant="insert" if window_seconds is None else "time-window",
        params=params,
        seed=seed,
        query="queries/fraud.sql",
        generator="fraud",
        chunk_events=chunk_events,
        force=force,
        log=log,
    )


def default_stream_dir(label: str, data_dir: str | os.PathLike | None = None) -> Path:
    """``DATA_DIR/streams/synthetic-<label>`` (DATA_DIR as for ``dynyan data``)."""
    from . import data as _data

    base = Path(data_dir) if data_dir is not None else _data.default_data_dir()
    return base / "streams" / f"synthetic-{label}"
