"""Partitioned replay on Spark against one view: events/s per query.

    .venv/bin/python -m bench.partitioned --stream data/streams/tpch-sf1-all-insert-s1 \\
        --events 2000000 --out bench/results/partitioned-tpch-sf1-insert.json

For each query: one view in one process with the arrow reader (`dynyan
replay`), then `dynyan replay --engine spark --partitions P` for each P
(Spark `local[2]`); the first `--events` stream positions (the whole stream
without it), pull mode, result rows not counted. Prints a Markdown table
(events/s, speedup over the arrow reader, the share of the query's events
every partition applies, the cost model's prediction) and writes the figures
as JSON. Events/s is stream events over wall time: for Spark the whole job
(reading, shuffling, sorting, converting and applying), without the Spark
start-up and the compilation.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dynyan.pipeline import partitioned, replay, streams  # noqa: E402

DEFAULT_QUERIES = ("fq1", "fq2", "fq3", "fq4", "q3", "q18")


def measure(query: Path, stream: Path, events: int | None, parts, spark, log) -> dict:
    """One query: the arrow reader, then Spark with each number of partitions."""
    row: dict = {"query": str(query.relative_to(ROOT / "queries").with_suffix(""))}
    gc.collect()
    log(f"{row['query']}: one view, arrow reader")
    own = None  # the query's events among the first `events` stream positions
    if events is not None:
        data = streams.Stream(stream)
        mine = data.select(replay.load_query(query).View.RELATIONS)
        own = data.count_after(mine, -1) - data.count_after(mine, events - 1)
    single = replay.replay_query(
        query, stream, limit=own, count_result=False, progress=False
    )
    row["arrow"] = {
        "events": single.events,
        "seconds": single.seconds,
        "events_per_sec": single.events_per_sec,
        "peak_rss_mib": single.peak_rss_bytes / 2**20,
    }
    del single
    gc.collect()
    for p in parts:
        log(f"{row['query']}: Spark, {p} partition(s)")
        summary = partitioned.replay_partitioned(
            query, stream, p, limit=events, result="none", spark=spark
        )
        scheme = summary.partitioning
        row.setdefault("variable", scheme.variable)
        row.setdefault("replicated", list(scheme.replicated))
        row.setdefault("replicated_share", scheme.replicated_share)
        row.setdefault("merge", scheme.merge)
        row.setdefault("reason", None if scheme.split else scheme.reason)
        row[f"spark{p}"] = {
            "partitions_used": summary.used,
            "events": summary.events,
            "applied": summary.applied,
            "seconds": summary.seconds,
            "events_per_sec": summary.events_per_sec,
            "apply_seconds": [q.apply_seconds for q in summary.parts],
            "apply_cpu_seconds": [q.apply_cpu_seconds for q in summary.parts],
            "cpu_seconds": [q.cpu_seconds for q in summary.parts],
            "task_seconds": [q.seconds for q in summary.parts],
            "peak_worker_rss_mib": summary.peak_rss_bytes / 2**20,
            "predicted_speedup": scheme.speedup(summary.used),
        }
        summary.result.close()
    return row


def table(rows: list[dict], parts) -> str:
    """The Markdown table of BENCHMARKS.md."""
    head = ["query", "events", "partition variable", "replicated", "arrow, 1 view"]
    head += [f"Spark P={p}" for p in parts]
    head += [f"P={p} ÷ P=1" for p in parts if p > 1]
    head += [
        "busiest view's CPU s in View.update: " + " → ".join(f"P={p}" for p in parts)
    ]
    head += [f"that, P={p} ÷ P=1 (predicted)" for p in parts if p > 1]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        var = r["variable"] or "one partition"
        cells = [
            r["query"],
            f"{r['arrow']['events']:,}",
            var,
            "–" if r["variable"] is None else f"{r['replicated_share']:.1%}",
            f"{r['arrow']['events_per_sec']:,.0f}",
        ]
        cells += [f"{r[f'spark{p}']['events_per_sec']:,.0f}" for p in parts]
        base = r[f"spark{parts[0]}"]["events_per_sec"]
        cells += [
            f"{r[f'spark{p}']['events_per_sec'] / base:.2f}×" for p in parts if p > 1
        ]
        slowest = {p: max(r[f"spark{p}"]["apply_cpu_seconds"]) for p in parts}
        cells.append(" → ".join(f"{slowest[p]:.1f}" for p in parts))
        for p in parts:
            if p > 1:
                got = slowest[parts[0]] / slowest[p]
                cells.append(f"{got:.2f}× ({r[f'spark{p}']['predicted_speedup']:.2f}×)")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--stream", required=True, help="a stream directory (dynyan stream build)"
    )
    p.add_argument(
        "--queries",
        default=",".join(DEFAULT_QUERIES),
        help="query names under queries/tpch (or paths), comma-separated",
    )
    p.add_argument("--events", type=int, help="the first N stream positions only")
    p.add_argument(
        "--partitions", default="1,2", help="numbers of partitions, e.g. 1,2"
    )
    p.add_argument("--out", help="write the figures as JSON here")
    args = p.parse_args(argv)
    parts = [int(x) for x in args.partitions.split(",")]
    log = lambda msg: print(
        f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr
    )  # noqa: E731
    spark = streams.spark_session(app="dynyan-bench-partitioned")
    # the first job of a session starts Spark's Python workers: not measured
    warm = ROOT / "queries/tpch/fq4.sql"
    partitioned.replay_partitioned(
        warm, args.stream, 2, limit=10_000, result="none", spark=spark
    ).result.close()
    rows = []
    for name in args.queries.split(","):
        path = (
            Path(name)
            if name.endswith(".sql")
            else ROOT / "queries/tpch" / f"{name}.sql"
        )
        rows.append(
            measure(path.resolve(), Path(args.stream), args.events, parts, spark, log)
        )
        print(json.dumps(rows[-1]), file=sys.stderr)
    print(table(rows, parts))
    if args.out:
        doc = {
            "stream": args.stream,
            "events": args.events,
            "partitions": parts,
            "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
            "load_average": os.getloadavg(),
            "date": time.strftime("%Y-%m-%d %H:%M"),
            "rows": rows,
        }
        Path(args.out).write_text(json.dumps(doc, indent=2) + "\n")
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
