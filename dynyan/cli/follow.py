"""`dynyan follow`: keep a query's result up to date over a PostgreSQL database.

The command compiles the query (its schema from the database's catalog when
it declares no table), loads a consistent snapshot, then applies every
committed transaction from logical replication until Ctrl-C or SIGTERM (or
``--duration``), when it writes its checkpoint and prints a summary.
``--on-delta`` prints the change of the result after each transaction as
JSON lines on stdout; progress and health go to stderr.
"""

from __future__ import annotations

import datetime
import json
import signal
import sys

from .options import positive_float, positive_int


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _json_value(value):
    if isinstance(value, datetime.date):
        return value.isoformat()
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


def row_keys(columns) -> list[str]:
    """JSON keys for the result columns: their names, a repeated one suffixed _2, _3, …"""
    keys, seen = [], {}
    for name in columns:
        seen[name] = seen.get(name, 0) + 1
        keys.append(name if seen[name] == 1 else f"{name}_{seen[name]}")
    return keys


def delta_printer(columns, out=None):
    """An ``on_commit`` that writes one JSON line per changed result row:
    ``{"lsn": …, "xid": …, "commit_time": …, "change": ±k, "row": {column: value}}``."""
    keys = row_keys(columns)
    out = out or sys.stdout

    def on_commit(commit) -> None:
        if not commit.changes:
            return
        head = {
            "lsn": commit.lsn_text,
            "xid": commit.xid,
            "commit_time": (
                None
                if commit.time is None
                else datetime.datetime.fromtimestamp(
                    commit.time, datetime.timezone.utc
                ).isoformat()
            ),
        }
        if commit.snapshot:
            head["snapshot"] = True
        lines = [
            json.dumps(
                {**head, "change": change, "row": dict(zip(keys, row))},
                default=_json_value,
            )
            for row, change in commit.changes
        ]
        out.write("\n".join(lines) + "\n")
        out.flush()

    return on_commit


def cmd_follow(args) -> int:
    from ..errors import FollowError
    from ..pipeline import follow

    if args.drop:
        if not (args.checkpoint or args.slot):
            raise FollowError("--drop needs --checkpoint DIR or --slot NAME")
        dropped = follow.drop(
            args.postgres,
            checkpoint=args.checkpoint,
            slot=args.slot,
            publication=args.publication,
        )
        _say(dropped)
        return 0
    if args.query is None:
        raise FollowError("give the QUERY to follow")
    printer = None
    if args.on_delta:
        holder = {}

        def printer(commit, _holder=holder):
            _holder["print"](commit)

    # Ctrl-C and SIGTERM stop following after the transaction in hand (and
    # write the checkpoint); one during start-up stops it as soon as it runs
    stop_requests: list[str] = []
    follower = None

    def on_signal(signum, _frame):
        stop_requests.append(signal.Signals(signum).name)
        if follower is not None:
            follower.stop(stop_requests[-1])

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        follower = follow.Follower(
            args.query,
            args.postgres,
            schema=args.schema,
            checkpoint=args.checkpoint,
            every=args.every,
            every_commits=args.every_commits,
            slot=args.slot,
            publication=args.publication,
            set_replica_identity=args.set_replica_identity,
            on_commit=printer,
            push=bool(args.on_delta),
            initial=not args.no_initial,
            duration=args.duration,
            retry_for=args.retry_for,
            progress=False if args.no_progress else None,
            status_every=None if args.no_progress else args.status_every,
            log=_say,
        )
        if args.on_delta:
            holder["print"] = delta_printer(follower.view.COLUMNS)
        if stop_requests:
            follower.stop(stop_requests[-1])
        summary = follower.run()
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    with follower.lock:
        summary.result_rows = sum(1 for _ in follower.view.rows())
    _say(str(summary))
    if args.show:
        _say("columns: " + " | ".join(follower.view.COLUMNS))
        for i, row in enumerate(follower.view.rows()):
            if i >= args.show:
                break
            _say("  " + " | ".join(str(v) for v in row))
    return 0


def add_commands(subparsers) -> None:
    """Register ``follow`` on the CLI's subparsers."""
    p = subparsers.add_parser(
        "follow",
        help="keep a query's result up to date over a PostgreSQL database",
        description="Load a consistent snapshot of the tables QUERY reads, then apply "
        "every committed transaction from PostgreSQL logical replication (a slot with "
        "the pgoutput plugin), one transaction as one atomic batch, in commit order, "
        "until Ctrl-C/SIGTERM or --duration. With --checkpoint a restart resumes "
        "exactly where the checkpoint left off (docs/follow.md).",
    )
    p.add_argument(
        "query",
        metavar="QUERY",
        nargs="?",
        help="QUERY.sql (compiled; without CREATE TABLEs the schema comes from the "
        "database's catalog), a generated module.py, or a module name",
    )
    p.add_argument(
        "--postgres",
        required=True,
        metavar="DSN",
        help="the database, as libpq takes it: 'host=… dbname=… user=…' or "
        "postgresql://user@host/db (the user needs the REPLICATION attribute)",
    )
    p.add_argument(
        "--schema",
        metavar="FILE",
        help="CREATE TABLEs for a .sql QUERY instead of the catalog (a subset of the "
        "columns is fine: columns are matched by name)",
    )
    p.add_argument(
        "--checkpoint",
        metavar="DIR",
        help="save the view with the last applied LSN in DIR and resume from it on the "
        "next start (exactly once); without it, the slot is dropped on exit",
    )
    p.add_argument(
        "--every",
        type=positive_float,
        default=10.0,
        metavar="SECONDS",
        help="checkpoint at most this often while changes arrive (default %(default)s)",
    )
    p.add_argument(
        "--every-commits",
        type=positive_int,
        metavar="N",
        help="also checkpoint after every N transactions",
    )
    p.add_argument(
        "--slot",
        metavar="NAME",
        help="replication slot name (default: derived from --checkpoint DIR)",
    )
    p.add_argument(
        "--publication",
        metavar="NAME",
        help="publication to read (default: one named like the slot, created for the "
        "query's tables)",
    )
    p.add_argument(
        "--set-replica-identity",
        action="store_true",
        help="ALTER the followed tables to REPLICA IDENTITY FULL where they are not "
        "(needed: UPDATE and DELETE must carry the whole old row)",
    )
    p.add_argument(
        "--on-delta",
        action="store_true",
        help="print each transaction's change of the result as JSON lines on stdout "
        '({"lsn", "xid", "commit_time", "change", "row"})',
    )
    p.add_argument(
        "--no-initial",
        action="store_true",
        help="with --on-delta, do not print the snapshot's result as changes",
    )
    p.add_argument(
        "--duration",
        type=positive_float,
        metavar="SECONDS",
        help="stop after this many seconds (default: run until Ctrl-C/SIGTERM)",
    )
    p.add_argument(
        "--retry-for",
        type=positive_float,
        metavar="SECONDS",
        help="give up when the connection cannot be reopened for this long "
        "(default: keep retrying, with backoff up to 30 s)",
    )
    p.add_argument(
        "--status-every",
        type=positive_float,
        default=10.0,
        metavar="SECONDS",
        help="health line on stderr (lag, changes/s) this often when stderr is not a "
        "terminal (default %(default)s); a terminal gets a progress bar",
    )
    p.add_argument(
        "--no-progress", action="store_true", help="no progress bar or health lines"
    )
    p.add_argument(
        "--show",
        type=int,
        default=0,
        metavar="N",
        help="print the first N result rows at the end (stderr)",
    )
    p.add_argument(
        "--drop",
        action="store_true",
        help="drop the slot (and the publication dynyan created) of --checkpoint DIR or "
        "--slot NAME, delete the checkpoint, and exit",
    )
    p.set_defaults(func=cmd_follow)
