"""The data-pipeline commands of the ``dynyan`` CLI: ``data``, ``stream``, ``replay``, ``demo``.

``dynyan.cli`` calls ``add_commands(subparsers)``. Handlers are thin: they
parse options, call one library function (``dynyan.pipeline.data``,
``.streams``, ``.replay``) and print; user errors are ``PipelineError``s, which the CLI
prints on one line (exit 2).
"""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

from ..errors import PipelineError
from ..resources import CHECKOUT
from .options import (
    chunk_events_option,
    data_dir_option,
    non_negative_int,
    positive_float,
    positive_int,
)

DEMO_SF = 0.01
DEMO_WINDOW = 10_000
DEMO_SEED = 42
DEMO_QUERY = "queries/tpch/fq4.sql"
# used only if queries/tpch/fq4.sql is not there (e.g. an installed package)
DEMO_QUERY_FALLBACK = """\
-- FQ4 (Idris et al., DYN): lineitem, supplier and partsupp joined on the supplier key.
SELECT *
FROM lineitem, supplier, partsupp
WHERE l_suppkey = s_suppkey
  AND s_suppkey = ps_suppkey;
"""


def _say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _timed_log():
    t0 = time.perf_counter()

    def log(msg: str) -> None:
        _say(f"  [{time.perf_counter() - t0:6.1f} s] {msg}")

    return log


# --------------------------------------------------------------------------
# data


def cmd_data(args) -> int:
    from ..pipeline import data

    sf = (
        args.sf
        if args.sf is not None
        else (1.0 if args.benchmark == "tpcds" else DEMO_SF)
    )
    target = data.dataset_dir(args.benchmark, sf, args.data_dir)
    cached = data.is_complete(target) and not args.force
    t = time.perf_counter()
    path = data.generate(args.benchmark, sf, args.data_dir, force=args.force)
    rows = data.table_rows(path)
    how = "cached" if cached else f"generated in {time.perf_counter() - t:.1f} s"
    print(f"{args.benchmark} SF {sf:g}: {path} ({how}), {sum(rows.values()):,} rows")
    for table, n in rows.items():
        print(f"  {table:24s} {n:>12,}")
    return 0


# --------------------------------------------------------------------------
# stream


def _spec_from_args(args):
    from ..pipeline.streams import StreamSpec

    static = None
    if args.no_static:
        static = ()
    elif args.static is not None:
        static = tuple(s for s in args.static.split(",") if s)
    return StreamSpec(
        variant=args.variant,
        seed=args.seed,
        window=args.window,
        delete_fraction=args.delete_fraction,
        static=static,
        chunk_events=args.chunk_events,
    )


def cmd_stream_build(args) -> int:
    from ..pipeline import data, replay, streams

    spec = _spec_from_args(args)
    if args.query and args.tables:
        raise PipelineError("give either --query or --tables, not both")
    relations = None
    name = "all"
    if args.query:
        query = replay.load_query(
            args.query, schema=args.schema, benchmark=args.benchmark
        )
        relations = dict(query.View.RELATIONS)
        name = query.name
    elif args.tables:
        relations = {t: None for t in args.tables.split(",") if t}
        name = "-".join(relations)
    log = _timed_log()
    sf = args.sf
    source = data.dataset_dir(args.benchmark, sf, args.data_dir)
    if not data.is_complete(source):
        log(f"generating {args.benchmark} SF {sf:g} into {source}")
    source = data.generate(args.benchmark, sf, args.data_dir)
    out = (
        Path(args.out)
        if args.out
        else streams.default_stream_dir(args.benchmark, sf, spec, name, args.data_dir)
    )
    manifest = streams.build_stream(
        source, out, relations, spec, query=args.query, force=args.force, log=log
    )
    print_manifest(out, manifest)
    return 0


def print_manifest(out, m) -> None:
    """The summary of a stream's manifest (``dynyan stream info``): Spark-built
    streams name their dataset, synthetic ones their generator."""
    params = ", ".join(f"{k}={v}" for k, v in m["params"].items())
    src = m["source"]
    generator = src.get("generator")
    print(
        f"{out}: {m['events']:,} events, "
        + (f"{generator} generator, " if generator else "")
        + f"variant {m['variant']}"
        + (f" ({params})" if params else "")
        + f", seed {m['seed']}, {m['chunks']} chunk(s) of <= {m['chunk_events']:,}"
    )
    if src.get("scale_factor") is not None:
        print(
            f"  source: {src['benchmark']} SF {src['scale_factor']:g} ({src['path']})"
        )
    elif m.get("query"):
        print(f"  source: {src.get('benchmark')}, for {m['query']}")
    if m.get("static"):
        print(
            f"  static (loaded first): {', '.join(m['static'])}, {m['static_events']:,} events"
        )
    for rel, info in m["relations"].items():
        print(f"  {rel:24s} +{info['inserts']:>11,} -{info['deletes']:>11,}")
    if m.get("build_seconds") is not None:
        print(f"  built in {m['build_seconds']:.1f} s")


def cmd_stream_validate(args) -> int:
    check_stream(args.stream)
    return 0


def check_stream(directory) -> None:
    """Validate a stream and print the report; a PipelineError if it is invalid."""
    from ..pipeline import streams

    t = time.perf_counter()
    report = streams.validate_stream(directory)
    print(report)
    print(f"  checked in {time.perf_counter() - t:.1f} s")
    if not report.ok:
        raise PipelineError(
            f"stream {directory} is invalid ({len(report.problems)} problem(s) above)"
        )


def cmd_stream_info(args) -> int:
    from ..pipeline import streams

    print_manifest(args.stream, streams.read_manifest(args.stream))
    return 0


# --------------------------------------------------------------------------
# replay


def _show_rows(view, summary, limit: int) -> None:
    """Print up to ``limit`` result rows, one line each (long rows cut in the middle)."""
    if limit <= 0 or summary.result_rows == 0:
        return
    width = max(60, shutil.get_terminal_size((120, 20)).columns - 1)
    columns = getattr(view, "COLUMNS", None)
    if columns:
        print(_fit("columns: " + " | ".join(columns), width))
    print(f"first {limit} result rows:")
    for i, row in enumerate(view.rows()):
        if i >= limit:
            break
        print(_fit(f"  {' | '.join(str(v) for v in row)}", width))


def _fit(text: str, width: int) -> str:
    if len(text) <= width:
        return text
    half = (width - 5) // 2
    return text[:half] + " ... " + text[-half:]


def cmd_replay(args) -> int:
    from ..pipeline import replay
    from .compile import read_stats

    if args.huge_pages:
        _on_huge_pages()
    if args.partitions is not None:
        return _replay_partitioned(args)
    summary = replay.replay_query(
        args.query,
        args.stream,
        schema=args.schema,
        push=args.push,
        stats=read_stats(args.stats),
        trust_input=args.trust_input,
        batch=args.batch,
        engine=args.engine,
        checkpoint=args.checkpoint,
        every=args.every,
        resume=args.resume,
        progress=False if args.no_progress else None,
        rate=args.rate,
        limit=args.limit,
        count_result=not args.no_count,
        trace_memory=args.tracemalloc,
        gc_freeze_every=args.gc_freeze_every,
        log=_say,
    )
    print(summary)
    if args.save_rows:
        n = replay.save_rows(summary.view, args.save_rows)
        print(f"saved {n:,} sorted result rows to {args.save_rows}")
    _show_rows(summary.view, summary, args.show)
    return 0


def _on_huge_pages() -> None:
    """Restart under the huge-page heap policy unless already under it; on a
    machine without huge pages, say so and go on."""
    from ..pipeline import hugepages

    if hugepages.active():
        _say("heap: glibc malloc on transparent huge pages")
        return
    reason = hugepages.unsupported()
    if reason is not None:
        _say(f"--huge-pages ignored: {reason}")
        return
    try:
        hugepages.reexec()
    except OSError as err:  # nothing was replayed yet: go on as asked without
        _say(f"--huge-pages ignored: cannot restart {sys.executable}: {err}")


def _replay_partitioned(args) -> int:
    """`replay --engine spark --partitions P`: P views inside Spark tasks."""
    from ..pipeline import partitioned, replay
    from .compile import read_stats

    if args.engine != "spark":
        raise PipelineError("--partitions needs --engine spark")
    if args.rate is not None or args.tracemalloc:
        raise PipelineError(
            "--rate and --tracemalloc apply to one view, not to --partitions"
        )
    wants_rows = args.save_rows or args.show > 0
    summary = partitioned.replay_partitioned(
        args.query,
        args.stream,
        args.partitions,
        schema=args.schema,
        stats=read_stats(args.stats),
        push=args.push,
        batch=args.batch,
        checkpoint=args.checkpoint,
        every=args.every,
        resume=args.resume,
        limit=args.limit,
        result="rows" if wants_rows else "none" if args.no_count else "count",
        log=_say,
    )
    try:
        print(summary)
        if args.save_rows:
            n = replay.save_rows(summary.view, args.save_rows)
            print(f"saved {n:,} sorted result rows to {args.save_rows}")
        _show_rows(summary.view, summary, args.show)
    finally:
        summary.result.close()
    return 0


# --------------------------------------------------------------------------
# demo


def cmd_demo(args) -> int:
    from ..pipeline import data, replay, streams

    t_all = time.perf_counter()
    log = _timed_log()
    sf = args.sf
    _say(f"[1/4] TPC-H data at SF {sf:g} (tpcgen-cli, local, cached)")
    source = data.dataset_dir("tpch", sf, args.data_dir)
    if data.is_complete(source):
        log(f"{source} is already there")
    else:
        t = time.perf_counter()
        source = data.generate("tpch", sf, args.data_dir)
        log(f"generated {source} in {time.perf_counter() - t:.1f} s")

    query_path = Path(args.query) if args.query else CHECKOUT / DEMO_QUERY
    _say(f"[2/4] compiling {_display(query_path) if query_path.exists() else 'FQ4'}")
    if query_path.exists():
        query = replay.load_query(query_path, schema=args.schema, benchmark="tpch")
    elif args.query:
        raise PipelineError(f"query file {args.query} does not exist")
    else:
        import dynyan

        schema = replay.default_schema("tpch")
        module = dynyan.load(DEMO_QUERY_FALLBACK, schema=schema)
        from ..pipeline.checkpoint import source_fingerprint

        query = replay.Query(
            "fq4",
            module,
            source_fingerprint(dynyan.compile_sql(DEMO_QUERY_FALLBACK, schema)),
        )
    relations = dict(query.View.RELATIONS)
    log(f"View over {', '.join(relations)}; result columns: {len(query.View.COLUMNS)}")

    spec = streams.StreamSpec(variant="window", window=args.window, seed=args.seed)
    out = streams.default_stream_dir("tpch", sf, spec, query.name, args.data_dir)
    _say(
        f"[3/4] update stream with Spark: random insert order, each tuple deleted "
        f"again after {args.window:,} later inserts (seed {args.seed})"
    )
    manifest = streams.build_stream(
        source, out, relations, spec, query=str(query_path), force=args.force, log=log
    )
    counts = ", ".join(
        f"{r} +{i['inserts']:,}/-{i['deletes']:,}"
        for r, i in manifest["relations"].items()
    )
    log(f"{manifest['events']:,} events: {counts}")

    _say(f"[4/4] replaying {out} into the view (batches of {args.batch})")
    summary = replay.replay_query(
        query, out, batch=args.batch, engine=args.engine, log=_say
    )
    print(summary)
    _show_rows(summary.view, summary, args.show)
    print(f"demo done in {time.perf_counter() - t_all:.1f} s")
    return 0


def _display(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def add_commands(subparsers) -> None:
    """Register ``data``, ``stream``, ``replay`` and ``demo`` on the CLI's subparsers."""
    _add_data(subparsers)
    _add_stream(subparsers)
    _add_replay(subparsers)
    _add_demo(subparsers)


def _add_data(subparsers) -> None:
    p = subparsers.add_parser(
        "data",
        help="generate TPC-H/TPC-DS tables as Parquet (cached)",
        description="Generate benchmark tables with tpcgen-cli into "
        "DATA_DIR/<benchmark>/sf<SF>/<table>/ (skipped if already complete).",
    )
    p.add_argument(
        "benchmark", choices=["tpch", "tpcds"], help="which tables: tpch or tpcds"
    )
    p.add_argument(
        "--sf",
        type=positive_float,
        help="scale factor (default 0.01 for tpch, 1 for tpcds)",
    )
    p.add_argument("--force", action="store_true", help="regenerate even if present")
    data_dir_option(p)
    p.set_defaults(func=cmd_data)


def _add_stream(subparsers) -> None:
    from ..pipeline import streams as _streams_mod  # cheap: no pyspark import

    p = subparsers.add_parser(
        "stream", help="build, validate or describe update streams (PySpark)"
    )
    ssub = p.add_subparsers(dest="stream_command", required=True, metavar="ACTION")
    b = ssub.add_parser(
        "build",
        help="build an update stream from generated tables",
        description="Turn benchmark tables into a seq-ordered update stream "
        "(docs/streams.md). Spark runs locally on 2 cores.",
    )
    b.add_argument(
        "--benchmark",
        choices=["tpch", "tpcds"],
        default="tpch",
        help="tables to stream: tpch or tpcds (default %(default)s)",
    )
    b.add_argument(
        "--sf",
        type=positive_float,
        default=DEMO_SF,
        help="scale factor (default 0.01)",
    )
    b.add_argument(
        "--query",
        metavar="Q",
        help="only the relations/columns this query reads (.sql, .py or module)",
    )
    b.add_argument(
        "--schema",
        metavar="FILE",
        help="schema for a .sql --query without CREATE TABLEs",
    )
    b.add_argument("--tables", metavar="T1,T2", help="only these tables (default: all)")
    b.add_argument(
        "--variant",
        choices=_streams_mod.VARIANTS,
        default="insert",
        help="insert: every row once; window: each row deleted again --window "
        "inserts later; random-delete: a share of the rows deleted later "
        "(choices: %(choices)s; default %(default)s)",
    )
    b.add_argument(
        "--window",
        type=positive_int,
        help=f"window variant: tuples stay live for this many later inserts (default {_streams_mod.DEFAULT_WINDOW})",
    )
    b.add_argument(
        "--delete-fraction",
        type=float,
        metavar="P",
        help=f"random-delete variant: share of tuples deleted later (default {_streams_mod.DEFAULT_DELETE_FRACTION})",
    )
    b.add_argument("--seed", type=int, default=DEMO_SEED, help=f"default {DEMO_SEED}")
    b.add_argument(
        "--static",
        metavar="T1,T2",
        help="relations inserted first and never deleted (default: nation, region, date_dim if read)",
    )
    b.add_argument("--no-static", action="store_true", help="stream every relation")
    chunk_events_option(b)
    b.add_argument("--out", metavar="DIR", help="default: DATA_DIR/streams/<name>")
    b.add_argument("--force", action="store_true", help="rebuild / replace DIR")
    data_dir_option(b)
    b.set_defaults(func=cmd_stream_build)
    v = ssub.add_parser(
        "validate", help="check a stream (dense seq, deletes after inserts, ...)"
    )
    v.add_argument("stream", metavar="DIR", help="the stream's directory")
    v.set_defaults(func=cmd_stream_validate)
    i = ssub.add_parser("info", help="print a stream's manifest summary")
    i.add_argument("stream", metavar="DIR", help="the stream's directory")
    i.set_defaults(func=cmd_stream_info)


def _add_replay(subparsers) -> None:
    from ..pipeline.gcpolicy import FREEZE_EVERY
    from ..pipeline.replay import DEFAULT_BATCH, ENGINES

    r = subparsers.add_parser(
        "replay",
        help="replay an update stream into a compiled view",
        description="Apply a stream's events in seq order to a query's View, in batches; "
        "progress bar on a terminal, summary at the end.",
    )
    r.add_argument(
        "query",
        metavar="QUERY",
        help="QUERY.sql (compiled), module.py, or a module name",
    )
    r.add_argument(
        "stream", metavar="STREAM_DIR", help="a stream from `dynyan stream build`"
    )
    r.add_argument(
        "--schema",
        metavar="FILE",
        help="schema for a .sql QUERY without CREATE TABLEs (default: as for `dynyan "
        "compile`: a `-- schema: PATH` line, schema.sql beside QUERY, tpch/schema.sql "
        "above it; else the stream's benchmark schema)",
    )
    r.add_argument(
        "--stats",
        metavar="STATS.json",
        help="table sizes for the planner of a .sql QUERY (see `dynyan stats`)",
    )
    r.add_argument(
        "--trust-input",
        action="store_true",
        help="compile a .sql QUERY to trust the stream (no copy of whole rows; "
        "see `dynyan compile --trust-input`)",
    )
    r.add_argument(
        "--batch",
        type=positive_int,
        default=DEFAULT_BATCH,
        help="events per batch (default %(default)s)",
    )
    r.add_argument(
        "--push",
        action="store_true",
        help="push mode: View(on_delta=...), count result deltas",
    )
    r.add_argument(
        "--engine",
        choices=ENGINES,
        default="arrow",
        help="what reads the Parquet stream: arrow (pyarrow, in this process) or "
        "spark (a local SparkSession); default %(default)s",
    )
    r.add_argument(
        "--partitions",
        type=positive_int,
        metavar="P",
        help="with --engine spark: maintain P views inside Spark tasks, the stream "
        "split by the partition variable `dynyan explain --partitions` shows "
        "(checkpoints: one per partition in --checkpoint DIR)",
    )
    r.add_argument("--checkpoint", metavar="DIR", help="write checkpoints into DIR")
    r.add_argument(
        "--every",
        type=positive_int,
        metavar="K",
        help="checkpoint every K events (and at the end)",
    )
    r.add_argument(
        "--resume",
        action="store_true",
        help="continue from the checkpoint in --checkpoint DIR",
    )
    r.add_argument(
        "--rate",
        type=positive_float,
        metavar="EPS",
        help="at most EPS events/s (simulate a live feed)",
    )
    r.add_argument(
        "--limit",
        type=positive_int,
        metavar="N",
        help="stop after about N events (at a batch boundary); resumable",
    )
    r.add_argument(
        "--save-rows", metavar="FILE", help="pickle sorted(view.rows()) to FILE"
    )
    r.add_argument(
        "--show", type=int, default=0, metavar="N", help="print the first N result rows"
    )
    r.add_argument(
        "--no-progress", action="store_true", help="no progress bar on stderr"
    )
    r.add_argument(
        "--no-count", action="store_true", help="do not count result rows at the end"
    )
    r.add_argument(
        "--tracemalloc",
        action="store_true",
        help="also measure the Python heap peak (slower)",
    )
    r.add_argument(
        "--gc-freeze-every",
        type=non_negative_int,
        default=FREEZE_EVERY,
        metavar="N",
        help="GC policy: gc.freeze() the surviving heap every N events, so full "
        "collections skip the view's state (default %(default)s; 0: CPython's "
        "default collector)",
    )
    r.add_argument(
        "--huge-pages",
        action="store_true",
        help="back the heap with transparent huge pages (Linux, glibc >= 2.35): "
        "the replay restarts itself with PYTHONMALLOC=malloc and "
        "GLIBC_TUNABLES=glibc.malloc.hugetlb=1; faster on views of millions "
        "of rows, whose dicts span more pages than the TLB maps",
    )
    r.set_defaults(func=cmd_replay)


def _add_demo(subparsers) -> None:
    from ..pipeline.replay import DEFAULT_BATCH, ENGINES

    d = subparsers.add_parser(
        "demo",
        help="the main job in one command: data -> Spark stream -> compile FQ4 -> replay",
        description="Generate TPC-H at a tiny scale factor, build a windowed update "
        "stream (inserts and deletes) with Spark, compile queries/tpch/fq4.sql, "
        "replay the stream with a progress bar, print result rows and throughput.",
    )
    d.add_argument(
        "--sf", type=positive_float, default=DEMO_SF, help="default %(default)s"
    )
    d.add_argument(
        "--window", type=positive_int, default=DEMO_WINDOW, help="default %(default)s"
    )
    d.add_argument("--seed", type=int, default=DEMO_SEED, help="default %(default)s")
    d.add_argument("--query", metavar="Q.sql", help=f"default {DEMO_QUERY}")
    d.add_argument("--schema", metavar="FILE", help="default tpch/schema.sql")
    d.add_argument(
        "--batch", type=positive_int, default=DEFAULT_BATCH, help="default %(default)s"
    )
    d.add_argument(
        "--engine",
        choices=ENGINES,
        default="arrow",
        help="replay reader: arrow or spark (default %(default)s)",
    )
    d.add_argument(
        "--show",
        type=int,
        default=5,
        metavar="N",
        help="result rows to print (default 5)",
    )
    d.add_argument("--force", action="store_true", help="rebuild the stream")
    data_dir_option(d)
    d.set_defaults(func=cmd_demo)
