"""`python -m bench run` and `python -m bench report`: thin commands over
`bench.harness` (measuring) and `bench.report` (tables and charts).

The harness is not part of the installed product: run it from a checkout.
"""

from __future__ import annotations

import argparse
import datetime
import sys
from pathlib import Path

from dynyan.errors import DynyanError
from dynyan.pipeline.gcpolicy import FREEZE_EVERY

QUICK = {
    "sf": [0.01],
    "runs": 1,
    "max_events": 10_000,
    "budget": 60.0,
    "gcq_events": 600,
    "gcq_window": 200,
    "fraud_events": 2_000,
}


def _csv(choices):
    def parse(text: str) -> tuple[str, ...]:
        items = tuple(x.strip() for x in text.split(",") if x.strip())
        bad = [x for x in items if x not in choices]
        if bad:
            raise argparse.ArgumentTypeError(
                f"unknown {', '.join(bad)}; choose from {', '.join(choices)}"
            )
        return items

    return parse


def _say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def cmd_bench(args) -> int:
    from . import harness as bench

    if args.quick:
        for key, value in QUICK.items():
            if getattr(args, key) is None:
                setattr(args, key, value)
    sfs = args.sf or [0.01]
    runs = args.runs or 3
    budget = args.budget or 180.0
    window = args.window or 10_000
    names = [n for n in (args.queries or "").split(",") if n] or None
    queries = bench.discover_queries(args.query_dir, names)
    for q in queries:
        if q.status != "ok":
            _say(f"skipping {q.name}: {q.reason}")
    config = bench.BenchConfig(
        systems=args.systems,
        modes=args.modes,
        runs=runs,
        recompute_batch=args.recompute_batch,
        chunk=args.chunk,
        gc_freeze_every=args.gc_freeze_every,
        huge_pages=args.huge_pages,
        peer_batch=args.peer_batch,
        pathway_max_events=(
            bench.PATHWAY_MAX_EVENTS
            if args.pathway_max_events is None
            else args.pathway_max_events
        ),
        budget_s=budget,
        mem_budget_mb=args.mem_budget_mb,
        latency=not (args.no_latency or args.quick),
        tracemalloc=not (args.no_tracemalloc or args.quick),
    )
    streams = []
    suites = args.suite
    if args.random:
        info = bench.StreamInfo(
            f"random-{args.random}", "random", "random-delete", seed=args.seed
        )
        streams.append(
            (info, lambda q, n=args.random: bench.random_events(q, n, seed=args.seed))
        )
    if not args.random and "tpch" in suites:
        for sf in sfs:
            for variant in args.variants:
                path = bench.tpch_stream(
                    sf,
                    variant,
                    window,
                    seed=args.seed,
                    data_dir=args.data_dir,
                    log=_say,
                )
                label = f"tpch-sf{sf:g}-{variant}" + (
                    f"-w{window}" if variant == "window" else ""
                )
                if args.max_events:
                    label += f"-first{args.max_events}"
                stats_dir = None
                if args.planner_stats:
                    from dynyan.pipeline import data

                    label += "-planner-stats"
                    stats_dir = str(data.dataset_dir("tpch", sf, args.data_dir))
                info = bench.StreamInfo(
                    label,
                    "parquet",
                    variant,
                    benchmark="tpch",
                    sf=sf,
                    window=window if variant == "window" else None,
                    seed=args.seed,
                    path=str(path),
                    max_events=args.max_events,
                    stats_dir=stats_dir,
                )
                streams.append(
                    (
                        info,
                        lambda q, p=path: bench.decode_stream(
                            p, q.relations, args.max_events
                        ),
                    )
                )
    if not args.random and "tpcds" in suites:
        streams += _tpcds_streams(args, window)
    if not args.random and "gcq" in suites:
        streams += _gcq_streams(args)
    if not args.random and "fraud" in suites:
        streams += _fraud_streams(args)
    out = args.out or Path("bench/results") / (
        datetime.datetime.now().strftime("%Y%m%d-%H%M%S") + ".json"
    )
    doc = bench.run_bench(
        queries, streams, config, out=out, log=_say, command=sys.argv[:]
    )
    _say(f"wrote {out}")
    if args.report:
        from . import report

        print(report.report([doc]))
    bad = [r for r in doc["results"] if r.get("status") in ("mismatch", "error")]
    for r in bad:
        _say(
            f"{r['status']}: {r['query']} {r['system']} {r['mode']}: {r.get('reason', '')}"
        )
    return 1 if bad else 0


def _tpcds_streams(args, window: int) -> list:
    """TPC-DS streams (`bench.tpcds_stream`, Spark): one per scale factor and
    variant. Each query gets the rows of its static dimension tables (they
    come first), then the first `--tpcds-events` streamed events of its
    relations; `--max-events` caps the total."""
    from . import harness as bench

    n = bench.DEFAULT_TPCDS_EVENTS if args.tpcds_events is None else args.tpcds_events
    if n <= 0:  # 0: the whole stream
        n = None
    out = []
    for sf in args.tpcds_sf or [1.0]:
        for variant in args.variants:
            path = bench.tpcds_stream(
                sf, variant, window, seed=args.seed, data_dir=args.data_dir, log=_say
            )
            label = f"tpcds-sf{sf:g}-{variant}" + (
                f"-w{window}" if variant == "window" else ""
            )
            if n is not None:
                label += f"-first{n}"
            if args.max_events:
                label += f"-max{args.max_events}"
            info = bench.StreamInfo(
                label,
                "parquet",
                variant,
                benchmark="tpcds",
                sf=sf,
                window=window if variant == "window" else None,
                seed=args.seed,
                path=str(path),
                max_events=n,
            )

            def make(q, p=path):
                limit = None
                if n is not None:
                    limit = bench.static_events(p, q.relations) + n
                if args.max_events:
                    limit = min(limit or args.max_events, args.max_events)
                return bench.decode_stream(p, q.relations, limit)

            out.append((info, make))
    return out


def _gcq_streams(args) -> list:
    """GCQ1-GCQ8 streams (dynyan.pipeline.synthetic): per query its own stream, by
    default of the IEDyn paper's size (GCQ1 12,000 inserts, GCQ2/3/5/7 2,700,
    GCQ4/6/8 21,000); the window variant deletes each tuple after the
    `--gcq-window`-th later insert."""
    from dynyan.pipeline import synthetic

    from . import harness as bench

    out = []
    size = "paper" if args.gcq_events is None else f"n{args.gcq_events}"
    for variant in args.variants:
        window = (args.gcq_window or 1_000) if variant == "window" else None
        label = f"gcq-{size}-{variant}" + (f"-w{window}" if window else "")
        info = bench.StreamInfo(
            label, "synthetic", variant, benchmark="gcq", window=window, seed=args.seed
        )

        def make(q, variant=variant, window=window):
            return synthetic.gcq_events(
                Path(q.name).name,
                events=args.gcq_events,
                variant=variant,
                window=window,
                seed=args.seed,
            )

        out.append((info, make))
    return out


def _fraud_streams(args) -> list:
    """The fraud query's transaction stream (dynyan.pipeline.synthetic.fraud_events):
    insert-only, and with every transaction deleted one hour after it."""
    from dynyan.pipeline import synthetic

    from . import harness as bench

    n = args.fraud_events or synthetic.DEFAULT_FRAUD_EVENTS
    out = []
    for variant in args.variants:
        seconds = 3600 if variant == "window" else None
        label = f"fraud-n{n}-" + ("window1h" if seconds else "insert")
        info = bench.StreamInfo(
            label, "synthetic", variant, benchmark="fraud", seed=args.seed
        )

        def make(q, seconds=seconds):
            return synthetic.fraud_events(n, seed=args.seed, window_seconds=seconds)

        out.append((info, make))
    return out


def cmd_report(args) -> int:
    from . import report

    docs = report.load_results(args.results)
    text = report.report(docs, full=args.full)
    if args.markdown:
        report.update_markdown(args.markdown, text)
        _say(f"updated {args.markdown}")
    else:
        print(text)
    if args.charts:
        for path in report.charts(docs, args.charts):
            _say(f"wrote {path}")
    return 0


def add_commands(subparsers) -> None:
    from .harness import DEFAULT_SYSTEMS, MODES, SYSTEMS, VARIANTS

    p = subparsers.add_parser(
        "run",
        help="benchmark dynyan against first-order IVM, DuckDB recompute and Pathway",
        description=(
            "Run every query on update streams (TPC-H, TPC-DS, synthetic GCQ and "
            "fraud; --suite) in pull and push mode against the baselines; write a "
            "JSON result file. See BENCHMARKS.md."
        ),
    )
    p.add_argument(
        "--queries", metavar="NAMES", help="comma-separated query stems (default: all)"
    )
    p.add_argument(
        "--query-dir", default="queries", metavar="DIR", help="default: queries"
    )
    p.add_argument(
        "--sf",
        type=float,
        nargs="+",
        metavar="SF",
        help="TPC-H scale factors (default 0.01)",
    )
    p.add_argument(
        "--variants",
        type=_csv(VARIANTS),
        default=VARIANTS,
        help="stream variants: insert,window (default both)",
    )
    p.add_argument(
        "--window",
        type=int,
        metavar="W",
        help="window of the TPC-H and TPC-DS deletion streams (default 10000)",
    )
    p.add_argument(
        "--seed",
        type=int,
        default=1,
        help="seed of the streams' interleaving and of the synthetic and random "
        "streams (default %(default)s)",
    )
    p.add_argument(
        "--suite",
        type=_csv(("tpch", "tpcds", "gcq", "fraud")),
        default=("tpch",),
        metavar="LIST",
        help="stream families: tpch (TPC-H, Spark), tpcds (TPC-DS, Spark; "
        "--tpcds-sf, --tpcds-events), gcq (synthetic R, S, T at the IEDyn "
        "paper's sizes), fraud (synthetic transactions); default tpch",
    )
    p.add_argument(
        "--tpcds-sf",
        type=float,
        nargs="+",
        metavar="SF",
        help="TPC-DS scale factors (default 1; tpcgen accepts smaller ones, "
        "but date_dim and customer_demographics keep their SF 1 size)",
    )
    p.add_argument(
        "--tpcds-events",
        type=int,
        metavar="N",
        help="per TPC-DS query: the rows of its static dimension tables, then "
        "only the first N streamed events of its relations (default 300000; "
        "0: all; --max-events caps the total)",
    )
    p.add_argument(
        "--gcq-events",
        type=int,
        metavar="N",
        help="inserts per GCQ stream (default: the paper's size per query)",
    )
    p.add_argument(
        "--gcq-window",
        type=int,
        metavar="W",
        help="window of the GCQ deletion streams (default 1000)",
    )
    p.add_argument(
        "--fraud-events",
        type=int,
        metavar="N",
        help="transactions in the fraud stream (default 20000)",
    )
    p.add_argument(
        "--max-events",
        type=int,
        metavar="N",
        help="only the first N events of each stream",
    )
    p.add_argument(
        "--random",
        type=int,
        metavar="N",
        help="a random stream of N inserts (with deletes) instead of TPC-H",
    )
    p.add_argument(
        "--systems",
        type=_csv(SYSTEMS),
        default=DEFAULT_SYSTEMS,
        metavar="LIST",
        help="comma-separated systems among " + ",".join(SYSTEMS) + " (store: "
        "the store-only floor; dynyan-batch: trusting dynyan fed update() "
        "per --recompute-batch events (push: a report per run of one relation); ivm: first-order IVM; "
        "recompute: DuckDB recomputing every --recompute-batch events); "
        "default all but dynyan-batch",
    )
    p.add_argument(
        "--modes",
        type=_csv(MODES),
        default=MODES,
        metavar="LIST",
        help="comma-separated modes among " + ",".join(MODES) + " (pull: apply, "
        "then enumerate the result; push: every change to a sink); default both",
    )
    p.add_argument(
        "--runs", type=int, help="timing runs per measurement (median; default 3)"
    )
    p.add_argument(
        "--recompute-batch",
        type=int,
        default=10_000,
        metavar="N",
        help="events between two recomputations of DuckDB recompute (default "
        "10,000)",
    )
    p.add_argument(
        "--chunk",
        type=int,
        default=5_000,
        metavar="N",
        help="events between budget checks of the per-event systems (default "
        "5000; smaller for streams where one event can take seconds)",
    )
    p.add_argument(
        "--gc-freeze-every",
        type=int,
        default=FREEZE_EVERY,
        metavar="N",
        help="GC policy for every Python system: gc.freeze() the surviving heap "
        "every N events of a timing run, so full collections skip the state "
        "(default %(default)s; 0: CPython's default collector)",
    )
    p.add_argument(
        "--huge-pages",
        action="store_true",
        help="heap policy for every worker: glibc malloc on transparent huge "
        "pages (dynyan.pipeline.hugepages; Linux, glibc >= 2.35)",
    )
    p.add_argument(
        "--pathway-max-events",
        type=int,
        metavar="N",
        help="Pathway, which cannot be stopped at the budget, gets only the first N "
        "events of a longer stream and is reported as stopped there "
        "(default 300,000; 0: no limit)",
    )
    p.add_argument(
        "--peer-batch",
        type=int,
        default=1_000,
        metavar="N",
        help="events per Pathway timestamp and per pydbsp step (default 1,000)",
    )
    p.add_argument(
        "--budget",
        type=float,
        metavar="S",
        help="seconds per system and mode (default 180)",
    )
    p.add_argument(
        "--mem-budget-mb",
        type=int,
        default=8_000,
        metavar="MB",
        help="RSS growth per system and mode over the loaded stream (default 8,000)",
    )
    p.add_argument(
        "--planner-stats",
        action="store_true",
        help="TPC-H: dynyan's planner gets the tables' sizes (`dynyan stats`); "
        "the stream label says so",
    )
    p.add_argument(
        "--no-latency", action="store_true", help="skip the per-update latency runs"
    )
    p.add_argument(
        "--no-tracemalloc", action="store_true", help="skip the tracemalloc runs"
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="smoke test: SF 0.01, first 10,000 events, 1 run, no latency/tracemalloc runs",
    )
    p.add_argument("--data-dir", metavar="DIR", help="data directory (default ./data)")
    p.add_argument(
        "--out", metavar="FILE.json", help="default bench/results/<timestamp>.json"
    )
    p.add_argument(
        "--report", action="store_true", help="print the Markdown tables at the end"
    )
    p.set_defaults(func=cmd_bench)

    r = subparsers.add_parser(
        "report",
        help="Markdown tables and charts from benchmark result files",
    )
    r.add_argument(
        "results",
        nargs="+",
        metavar="RESULT.json",
        help="result files of `python -m bench run` (bench/results/*.json)",
    )
    r.add_argument(
        "--markdown",
        metavar="FILE.md",
        help="update the tables between the bench markers of FILE.md",
    )
    r.add_argument(
        "--charts", metavar="DIR", help="write PNG charts into DIR (e.g. docs)"
    )
    r.add_argument(
        "--full",
        action="store_true",
        help="every figure of every system (memory, enumeration, latency, "
        "checks), not the compact per-stream ratios",
    )
    r.set_defaults(func=cmd_report)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench",
        description="Benchmark dynyan against its peers (BENCHMARKS.md).",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    add_commands(sub)
    args = parser.parse_args(argv)
    try:
        return args.func(args) or 0
    except DynyanError as err:
        print(f"bench: error: {err}", file=sys.stderr)
        return 2
