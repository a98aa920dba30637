"""`dynyan synthetic gcq|fraud`: seeded synthetic update streams (dynyan.pipeline.synthetic)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Callable

from ..pipeline.synthetic import (
    DEFAULT_ACCOUNTS,
    DEFAULT_DOMAIN,
    DEFAULT_FRAUD_EVENTS,
    DEFAULT_KEY_DOMAIN,
    DEFAULT_LARGE_FRACTION,
    DEFAULT_MEAN_GAP,
    DEFAULT_MEDIUM_FRACTION,
    DEFAULT_SEED,
    DEFAULT_WINDOW_SECONDS,
    GCQ_VARIANTS,
    PAPER_EVENTS,
    build_fraud_stream,
    build_gcq_stream,
    default_stream_dir,
    gcq_query_name,
)
from .options import chunk_events_option, data_dir_option, positive_int
from .pipeline import check_stream, print_manifest


def _say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _build(args, label: str, build: Callable[..., dict], **options) -> int:
    """Write the stream to --out (default: DATA_DIR/streams/synthetic-<label>)
    with ``build``, print its summary (as ``dynyan stream info``) and, with
    --validate, check it (as ``dynyan stream validate``)."""

    out = Path(args.out) if args.out else default_stream_dir(label, args.data_dir)
    manifest = build(
        out,
        seed=args.seed,
        chunk_events=args.chunk_events,
        force=args.force,
        log=_say,
        **options,
    )
    print_manifest(out, manifest)
    if args.validate:
        check_stream(out)
    return 0


def cmd_synthetic_gcq(args) -> int:
    name = gcq_query_name(args.query)
    relations = args.relations.split(",") if args.relations else None
    n = args.events if args.events is not None else PAPER_EVENTS[name]
    label = f"{name}-{args.variant}"
    if args.variant == "window":
        label += f"-w{args.window}"
    return _build(
        args,
        f"{label}-n{n}-s{args.seed}",
        build_gcq_stream,
        query=name,
        events=n,
        variant=args.variant,
        window=args.window,
        domain=args.domain,
        key_domain=args.key_domain,
        relations=relations,
    )


def cmd_synthetic_fraud(args) -> int:
    window = None if args.no_deletes else args.window_seconds
    label = f"fraud-n{args.events}-a{args.accounts}" + (
        "-nodel" if window is None else f"-w{window}s"
    )
    return _build(
        args,
        f"{label}-s{args.seed}",
        build_fraud_stream,
        events=args.events,
        accounts=args.accounts,
        mean_gap=args.mean_gap,
        large_fraction=args.large_fraction,
        medium_fraction=args.medium_fraction,
        window_seconds=window,
    )


def add_commands(subparsers, name: str = "synthetic") -> None:
    """Register ``<name> gcq|fraud`` on an argparse subparsers object.

    Works at the top level (``dynyan synthetic …``) and under ``stream``
    (``dynyan stream synthetic …``): pass the ``stream`` command's subparsers.
    """

    def common(p):
        p.add_argument(
            "--seed", type=int, default=DEFAULT_SEED, help="default %(default)s"
        )
        chunk_events_option(p)
        p.add_argument(
            "--out", metavar="DIR", help="default: DATA_DIR/streams/synthetic-<label>"
        )
        data_dir_option(p)
        p.add_argument("--force", action="store_true", help="replace DIR")
        p.add_argument(
            "--validate",
            action="store_true",
            help="run `dynyan stream validate` on the result",
        )

    p = subparsers.add_parser(
        name,
        help="write synthetic update streams (GCQ relations, fraud transactions)",
        description="Seeded synthetic streams in the Parquet stream layout "
        "(docs/streams.md), pure Python + pyarrow; replay them with `dynyan replay`.",
    )
    sub = p.add_subparsers(dest="synthetic_command", required=True, metavar="KIND")
    g = sub.add_parser(
        "gcq",
        help="R(a,b,c), S(d,e,f,k), T(g,h,i,k) with uniform random integers",
        description="Uniform random integers for the relations a GCQ query reads; "
        "by default the IEDyn paper's stream size (GCQ1 12k, GCQ2/3/5/7 2.7k, "
        "GCQ4/6/8 21k events).",
    )
    g.add_argument(
        "--query",
        default="gcq1",
        help="gcq1..gcq8 or its .sql path: picks relations and the default size",
    )
    g.add_argument(
        "--relations", metavar="R,S", help="override the relations (among r, s, t)"
    )
    g.add_argument(
        "--events",
        type=positive_int,
        help="number of inserts (default: the paper's size for the query)",
    )
    g.add_argument(
        "--variant",
        choices=GCQ_VARIANTS,
        default="insert",
        help="insert only, or window: each tuple deleted --window inserts later "
        "(choices: %(choices)s; default %(default)s)",
    )
    g.add_argument(
        "--window",
        type=positive_int,
        help="window variant: each tuple is deleted after this many later inserts",
    )
    g.add_argument(
        "--domain",
        type=positive_int,
        default=DEFAULT_DOMAIN,
        help="values uniform in 1..D (default %(default)s)",
    )
    g.add_argument(
        "--key-domain",
        type=positive_int,
        default=DEFAULT_KEY_DOMAIN,
        help="the join column k uniform in 1..K (default %(default)s)",
    )
    common(g)
    g.set_defaults(func=cmd_synthetic_gcq)
    f = sub.add_parser(
        "fraud",
        help="transactions(ts, acc, amnt), each deleted one hour later",
        description="Credit-card transactions for queries/fraud.sql: increasing "
        "timestamps, a small pool of accounts, mostly small amounts with occasional "
        "large ones; every transaction is deleted --window-seconds after it happened.",
    )
    f.add_argument(
        "--events",
        type=positive_int,
        default=DEFAULT_FRAUD_EVENTS,
        help="transactions (inserts), default %(default)s",
    )
    f.add_argument(
        "--accounts",
        type=positive_int,
        default=DEFAULT_ACCOUNTS,
        help="default %(default)s",
    )
    f.add_argument(
        "--mean-gap",
        type=float,
        default=DEFAULT_MEAN_GAP,
        help="mean seconds between transactions (>= 1), default %(default)s",
    )
    f.add_argument(
        "--large-fraction",
        type=float,
        default=DEFAULT_LARGE_FRACTION,
        help="share of amounts in 1000.01..5000 (default %(default)s)",
    )
    f.add_argument(
        "--medium-fraction",
        type=float,
        default=DEFAULT_MEDIUM_FRACTION,
        help="share of amounts in 100..1000 (default %(default)s)",
    )
    f.add_argument(
        "--window-seconds",
        type=positive_int,
        default=DEFAULT_WINDOW_SECONDS,
        help="delete each transaction this long after it (default %(default)s)",
    )
    f.add_argument("--no-deletes", action="store_true", help="inserts only")
    common(f)
    f.set_defaults(func=cmd_synthetic_fraud)
