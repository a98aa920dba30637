"""The offline differential fuzzer: random queries x random update streams vs DuckDB.

    python scripts/fuzz.py --pairs 100000 --out fuzz-out [--jobs 2] [--seed 0]

Query number i of the seeded sequence (tests/fuzzgen.py) is compiled once
and run against `--streams` update streams (pull and push mode alternate);
each stream is checked against DuckDB after every batch. Every finished
query appends one JSON line to OUT/done-<job>.jsonl, so a stopped run
resumes where it was (run the same command again). Failures are shrunk to a
minimal query and update sequence and written as regression fixtures to
OUT/failures/ (copy them to tests/fixtures/regressions/ to keep them; see
docs/fuzzing.md). OUT/summary.json has the counts: queries, refusals by
kind, (query, stream) pairs, updates, checks, the share of checks with a
non-trivial expected result, failures, and the productions used.
"""

from __future__ import annotations

import argparse
import datetime
import json
import multiprocessing
import os
import platform
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

import fuzzgen  # noqa: E402
import fuzzrun  # noqa: E402


def _worker(job: int, jobs: int, args, budget_pairs: int, progress) -> None:
    config = _config(args)
    out = Path(args.out)
    done_path = out / f"done-{job}.jsonl"
    done = _read_done([done_path])
    pairs = sum(r["pairs"] for r in done.values())
    failures_dir = out / "failures"
    shrunk = Counter(
        r["signature"] for d in done.values() for r in d.get("failures", ())
    )
    index = job
    with fuzzrun.unformatted(), open(done_path, "a") as log:
        while pairs < budget_pairs:
            if index in done:
                index += jobs
                continue
            r = fuzzrun.run_query(index, config)
            records = []
            for f in r.pop("failures"):
                sig = fuzzrun.signature(f.what)
                rec = {
                    "index": f.index,
                    "stream": f.stream,
                    "push": f.push,
                    "trust_input": f.trust_input,
                    "what": f.what[:500],
                    "signature": sig,
                    "known": f.known,
                    "query": f.query.select_sql(),
                }
                if not f.known and config.shrink and shrunk[sig] < config.max_shrinks:
                    shrunk[sig] += 1
                    small = fuzzrun.shrink(f)
                    failures_dir.mkdir(parents=True, exist_ok=True)
                    path = failures_dir / f"q{f.index}-s{f.stream}.sql"
                    path.write_text(
                        fuzzrun.fixture_text(
                            small,
                            f"shrunk from query {f.index}, stream {f.stream}"
                            + (
                                " (compiled with --trust-input)"
                                if f.trust_input
                                else ""
                            ),
                            f"scripts/fuzz.py --seed {args.seed} (query {f.index}, "
                            f"stream {f.stream})",
                        )
                    )
                    rec["shrunk"] = str(path.relative_to(out))
                    rec["shrunk_query"] = small.query.select_sql()
                    rec["shrunk_batches"] = len(small.batches)
                elif not f.known:
                    failures_dir.mkdir(parents=True, exist_ok=True)
                    path = failures_dir / f"q{f.index}-s{f.stream}-raw.sql"
                    path.write_text(
                        fuzzrun.fixture_text(
                            f,
                            f"query {f.index}, stream {f.stream} (not shrunk)",
                            "fuzz",
                        )
                    )
                records.append(rec)
            r["failures"] = records
            log.write(json.dumps(r) + "\n")
            log.flush()
            pairs += r["pairs"]
            progress.put((r["pairs"], len([x for x in records if not x["known"]])))
            index += jobs
    progress.put(None)


def _config(args) -> fuzzrun.Config:
    return fuzzrun.Config(
        seed=args.seed,
        streams=args.streams,
        events=args.events,
        target_rows=args.target_rows,
        null_rate=args.null_rate,
        shrink=not args.no_shrink,
        trust_input=args.trust_input,
    )


def _read_done(paths) -> dict[int, dict]:
    done = {}
    for p in paths:
        if p.exists():
            for line in p.read_text().splitlines():
                try:
                    r = json.loads(line)
                except ValueError:  # a line cut short by a stop
                    continue
                done[r["index"]] = r
    return done


def summarise(out: Path, args, seconds: float) -> dict:
    done = _read_done(sorted(out.glob("done-*.jsonl")))
    totals = Counter()
    refusals, tags = Counter(), Counter()
    failures = []
    for r in done.values():
        totals["queries"] += 1
        totals["compiled"] += bool(r["compiled"])
        for k in ("pairs", "updates", "events", "checks", "nontrivial"):
            totals[k] += r[k]
        if r.get("refusal"):
            refusals[r["refusal"]] += 1
        if r["compiled"]:
            tags.update(r["tags"])
        failures += r["failures"]
    for f in failures:  # bugs registered since the run count as known
        f["known"] = f["known"] or fuzzrun.known_bug(f["query"], f["what"])
    new = [f for f in failures if not f["known"]]
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    ).stdout.strip()
    summary = {
        "date": datetime.date.today().isoformat(),
        "commit": commit,
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.python_version()}",
        "command": " ".join(["python scripts/fuzz.py", *sys.argv[1:]]),
        "config": vars(_config(args)),
        "enabled_off_by_default": sorted(args.enable),
        "weights": dict(args.weight),
        **totals,
        "nontrivial_share": round(totals["nontrivial"] / max(1, totals["checks"]), 4),
        "failures": len(new),
        "known_bug_failures": len(failures) - len(new),
        "failure_signatures": dict(Counter(f["signature"] for f in new)),
        "seconds_this_run": round(seconds, 1),
        "refusals": dict(refusals.most_common()),
        "productions": dict(sorted(tags.items())),
        "productions_never_compiled": sorted(
            p.name
            for p in fuzzgen.PRODUCTIONS
            if p.enabled and p.phase != "tail" and p.name not in tags
        ),
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    (out / "failures.json").write_text(json.dumps(new, indent=1) + "\n")
    return summary


SHOWN = (
    "queries",
    "compiled",
    "pairs",
    "updates",
    "checks",
    "nontrivial_share",
    "failures",
    "known_bug_failures",
)


def _weight(text: str) -> tuple[str, float]:
    """PRODUCTION=W of --weight."""
    name, _, value = text.partition("=")
    try:
        weight = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected PRODUCTION=W, got {text!r}")
    return name, weight


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--pairs", type=int, default=1000, help="(query, stream) pairs to run in all"
    )
    ap.add_argument(
        "--out", default="fuzz-out", help="output directory (resumed if it exists)"
    )
    ap.add_argument("--seed", type=int, default=0, help="seed of the query sequence")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes")
    ap.add_argument(
        "--streams",
        type=int,
        default=fuzzrun.Config.streams,
        help="update streams per compiled query",
    )
    ap.add_argument("--events", type=int, default=60, help="row changes per stream")
    ap.add_argument(
        "--target-rows",
        type=int,
        default=fuzzrun.Config.target_rows,
        help="rows per relation the streams hover around",
    )
    ap.add_argument(
        "--null-rate",
        type=float,
        default=fuzzrun.Config.null_rate,
        help="share of NULLs in columns that allow them",
    )
    ap.add_argument(
        "--trust-input",
        action="store_true",
        help="compile every view to trust its input (deletes of present rows only, "
        "as the streams are)",
    )
    ap.add_argument(
        "--no-shrink",
        action="store_true",
        help="record failures without shrinking them",
    )
    ap.add_argument(
        "--summarise",
        action="store_true",
        help="only write OUT/summary.json from what OUT holds (after a stop, or "
        "after registering known bugs)",
    )
    ap.add_argument(
        "--enable",
        action="append",
        default=[],
        metavar="PRODUCTION",
        help="switch on a production that is off by default (e.g. order_by_limit); repeatable",
    )
    ap.add_argument(
        "--weight",
        action="append",
        default=[],
        type=_weight,
        metavar="PRODUCTION=W",
        help="draw a production with weight W instead of its own (e.g. "
        "window_running=25, to exercise it often); repeatable",
    )
    args = ap.parse_args(argv)
    fuzzgen.enable(args.enable)
    fuzzgen.reweight(dict(args.weight))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.summarise:
        summary = summarise(out, args, 0.0)
        print(json.dumps({k: summary.get(k) for k in SHOWN}))
        return 1 if summary["failures"] else 0
    already = sum(r["pairs"] for r in _read_done(out.glob("done-*.jsonl")).values())
    progress = multiprocessing.Queue()
    share = -(-args.pairs // args.jobs)
    t0 = time.monotonic()
    procs = [
        multiprocessing.Process(
            target=_worker, args=(j, args.jobs, args, share, progress)
        )
        for j in range(args.jobs)
    ]
    for p in procs:
        p.start()
    pairs, failures, running = already, 0, len(procs)
    last = 0.0
    while running:
        item = progress.get()
        if item is None:
            running -= 1
            continue
        pairs += item[0]
        failures += item[1]
        now = time.monotonic()
        if now - last > 10 or not running:
            last = now
            rate = (pairs - already) / max(now - t0, 1e-9)
            print(
                f"\r{pairs:,}/{args.pairs:,} pairs, {failures} new failures, "
                f"{rate:.1f} pairs/s",
                end="",
                file=sys.stderr,
                flush=True,
            )
    for p in procs:
        p.join()
    print(file=sys.stderr)
    summary = summarise(out, args, time.monotonic() - t0)
    print(json.dumps({k: summary.get(k) for k in SHOWN}))
    return 1 if summary["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
