"""Push latency, throughput and memory of inequality-join views (issue 5, item 5).

Two measurements, each on streams generated in Python (seeded):

* **latency**: a push-mode view (``View(push=True)``), one event per call,
  ``time.perf_counter_ns`` around each ``insert``/``delete``; reports median,
  p90, p99, max and the number of result changes. Queries: FQ4
  (generated/tpch/fq4.py) on a random TPC-H-like stream (supplier : partsupp
  : lineitem = 1 : 80 : 600 as in TPC-H, random interleaving, default 50,000
  events), and GCQ1 on its synthetic stream (dynyan.pipeline.synthetic, default the
  paper's 12,000 events).
* **memory**: pull mode, the stream applied in batches of 1,000 (as
  ``dynyan replay`` does): events/s (without tracemalloc), then the view's
  Python heap with tracemalloc (a second run), the result size (exact, by
  counting over the final database with bisect, and by ``enumerate()`` with a
  time budget: rows/s) against what the materialised result would take. The
  final state is loaded relation by relation, children of the join tree
  first (the representation depends only on the database), so memory is
  measured at the full stream size even when the stream's own order is too
  slow to finish within the budget.
  Queries: GCQ1 and GCQ4 at the paper's stream sizes.

Every run has a wall-clock budget (``--budget`` seconds, default 600); a run
that exceeds it stops at the next event/batch and reports how far it got.

    .venv/bin/python bench/theta_latency.py                 # everything
    .venv/bin/python bench/theta_latency.py --only latency --fq4-events 50000
    .venv/bin/python bench/theta_latency.py --only memory --json out.json

Timings are not asserted anywhere; the machine is shared, so read them as
orders of magnitude.
"""

from __future__ import annotations

import argparse
import bisect
import datetime
import gc
import json
import platform
import random
import statistics
import sys
import time
import tracemalloc
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dynyan.pipeline import synthetic  # noqa: E402


def load_module(*candidates: str):
    """Import the first existing generated module among `candidates`
    (paths relative to the repository)."""
    from dynyan.compiler import import_file

    for rel in candidates:
        path = ROOT / rel
        if path.is_file():
            return import_file(str(path))
    raise SystemExit(f"none of {candidates} exists: run scripts/regen.sh")


def fq4_module():
    return load_module("generated/tpch/fq4.py", "generated/fq4.py")


def gcq_module(name: str):
    return load_module(f"generated/gcq/{name}.py", f"generated/{name}.py")


# --------------------------------------------------------------------------
# A TPC-H-like stream for FQ4 (lineitem, supplier, partsupp)

_WORDS = "furious quick final pending regular express special bold even ironic".split()
_MODES = ["AIR", "FOB", "MAIL", "RAIL", "REG AIR", "SHIP", "TRUCK"]
_INSTRUCT = ["COLLECT COD", "DELIVER IN PERSON", "NONE", "TAKE BACK RETURN"]


def _comment(rng) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(rng.randint(2, 5)))


def _money(rng, lo, hi) -> float:
    return rng.randint(int(lo * 100), int(hi * 100)) / 100


def fq4_events(
    n: int = 50_000, seed: int = 0, window: int | None = None
) -> list[tuple[str, int, tuple]]:
    """Random TPC-H-like inserts into supplier, partsupp and lineitem with the
    TPC-H ratios 1 : 80 : 600 (so ~6.8 k lineitems per 100 events... scaled to
    `n` inserts), randomly interleaved; `window`: delete each tuple after the
    `window`-th later insert (as dynyan.pipeline.synthetic's window variant)."""
    rng = random.Random(f"fq4/{seed}")
    n_supp = max(1, round(n / 681))
    n_ps = round(n * 80 / 681)
    n_li = n - n_supp - n_ps
    n_part = max(1, n_ps // 4)
    base = datetime.date(1992, 1, 1)
    sups = [
        (
            k,
            f"Supplier#{k:09d}",
            _comment(rng),
            rng.randint(0, 24),
            f"{rng.randint(10, 34)}-{rng.randint(100, 999)}-{rng.randint(100, 999)}-{rng.randint(1000, 9999)}",
            _money(rng, -999.99, 9999.99),
            _comment(rng),
        )
        for k in range(1, n_supp + 1)
    ]
    pss = []
    seen = set()
    while len(pss) < n_ps:
        part, supp = rng.randint(1, n_part), rng.randint(1, n_supp)
        if (part, supp) in seen:
            continue
        seen.add((part, supp))
        pss.append(
            (part, supp, rng.randint(1, 9999), _money(rng, 1, 1000), _comment(rng))
        )
    lis = []
    for i in range(n_li):
        ship = base + datetime.timedelta(days=rng.randint(0, 2400))
        lis.append(
            (
                i // 4 + 1,
                rng.randint(1, n_part),
                rng.randint(1, n_supp),
                i % 4 + 1,
                float(rng.randint(1, 50)),
                _money(rng, 900, 105_000),
                rng.randint(0, 10) / 100,
                rng.randint(0, 8) / 100,
                rng.choice("ANR"),
                rng.choice("OF"),
                ship,
                ship + datetime.timedelta(days=rng.randint(-60, 60)),
                ship + datetime.timedelta(days=rng.randint(1, 30)),
                rng.choice(_INSTRUCT),
                rng.choice(_MODES),
                _comment(rng),
            )
        )
    inserts = (
        [("supplier", r) for r in sups]
        + [("partsupp", r) for r in pss]
        + [("lineitem", r) for r in lis]
    )
    rng.shuffle(inserts)
    if window is None:
        return [(rel, 1, row) for rel, row in inserts]
    return synthetic._count_window(inserts, window)


# --------------------------------------------------------------------------
# Latency (push mode)


def _pct(sorted_ns: list[int], p: float) -> float:
    if not sorted_ns:
        return float("nan")
    i = min(len(sorted_ns) - 1, max(0, round(p / 100 * (len(sorted_ns) - 1))))
    return sorted_ns[i] / 1000.0  # microseconds


def _summary(xs: list[int]) -> dict:
    xs = sorted(xs)
    return {
        "median_us": round(_pct(xs, 50), 2),
        "p90_us": round(_pct(xs, 90), 2),
        "p99_us": round(_pct(xs, 99), 2),
        "max_us": round(xs[-1] / 1000, 1) if xs else None,
        "mean_us": round(statistics.fmean(xs) / 1000, 2) if xs else None,
    }


def push_latency(module, events, budget: float) -> dict:
    """Per-call latency in push mode: wall clock (perf_counter_ns) and the
    thread's CPU time (thread_time_ns, less disturbed on a shared machine)."""
    view = module.View(push=True)
    insert, delete, deltas = view.insert, view.delete, view.deltas
    wall: list[int] = []
    cpu: list[int] = []
    by_rel: dict[str, list[int]] = defaultdict(list)
    changes = 0
    clock, cpu_clock = time.perf_counter_ns, time.thread_time_ns
    gc.collect()
    start = time.perf_counter()
    deadline = start + budget
    done = 0
    for rel, op, row in events:
        c = cpu_clock()
        t = clock()
        if op > 0:
            insert(rel, row)
        else:
            delete(rel, row)
        dt = clock() - t
        cpu.append(cpu_clock() - c)
        wall.append(dt)
        by_rel[rel].append(dt)
        changes += len(deltas())
        done += 1
        if done % 256 == 0 and time.perf_counter() > deadline:
            break
    elapsed = time.perf_counter() - start
    out = {
        "events": done,
        "of": len(events),
        "complete": done == len(events),
        "seconds": round(elapsed, 3),
        **_summary(wall),
        "cpu": _summary(cpu),
        "result_changes": changes,
        "per_relation": {},
    }
    for rel, xs in by_rel.items():
        out["per_relation"][rel] = {"events": len(xs), **_summary(xs)}
    return out


# --------------------------------------------------------------------------
# Throughput and memory (pull mode)


def exact_result_size(name: str, db: dict) -> int:
    """|result| of GCQ1/GCQ4 over the final database, by bisect (no join)."""
    bag = lambda rel: db.get(rel, {}).items()  # noqa: E731
    if name == "gcq1":  # a < d AND e < g
        a_sorted = sorted(a for (a, _, _), m in bag("r") for _ in range(m))
        g_sorted = sorted(g for (g, _, _, _), m in bag("t") for _ in range(m))
        total = 0
        for (d, e, _, _), m in bag("s"):
            below = bisect.bisect_left(a_sorted, d)
            above = len(g_sorted) - bisect.bisect_right(g_sorted, e)
            total += m * below * above
        return total
    if name == "gcq4":  # s.k = t.k AND e < g
        by_k: dict[int, list[int]] = defaultdict(list)
        for (g, _, _, k), m in bag("t"):
            by_k[k].extend([g] * m)
        for v in by_k.values():
            v.sort()
        total = 0
        for (_, e, _, k), m in bag("s"):
            gs = by_k.get(k, [])
            total += m * (len(gs) - bisect.bisect_right(gs, e))
        return total
    raise ValueError(name)


def apply_batches(view, events, batch: int, budget: float) -> tuple[int, float]:
    """Apply in replay-style batches; returns (events applied, CPU seconds)."""
    cpu0 = time.process_time()
    start = time.perf_counter()
    deadline = start + budget
    done = 0
    update = view.update
    for calls in synthetic.batches(events, batch):
        for rel, rows, mults in calls:
            update(rel, rows, mults)
        done = min(len(events), done + batch)
        if time.perf_counter() > deadline:
            break
    return done, time.process_time() - cpu0


def load_final_database(module, name: str, db: dict):
    """A fresh view holding `db`, loaded one relation at a time, children of
    the join tree first (for GCQ1: t, s, r), so that no update meets a large
    sibling. The (T, N)-representation is a function of the database, so the
    state equals the one the stream leaves behind."""
    view = module.View()
    for rel in reversed(synthetic.GCQ_RELATIONS[name]):
        bag = db.get(rel, {})
        view.update(rel, list(bag), list(bag.values()))
    return view


def pull_memory(
    name: str, module, events, batches: list[int], budget: float, enum_budget: float
) -> dict:
    """Throughput of the stream per batch size (each run within `budget`),
    then memory, result size and enumeration of the state the whole stream
    leaves behind."""
    out: dict = {"of": len(events), "throughput": {}}
    for batch in batches:
        view = module.View()
        gc.collect()
        done, secs = apply_batches(view, events, batch, budget)
        out["throughput"][batch] = {
            "events": done,
            "complete": done == len(events),
            "cpu_seconds": round(secs, 3),
            "events_per_cpu_s": round(done / secs) if secs else None,
        }
        del view
    db = synthetic.final_database(events)
    out["database_tuples"] = sum(sum(b.values()) for b in db.values())
    out["result_rows_exact"] = exact_result_size(name, db)
    # memory of the final state, with tracemalloc
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    c0 = time.process_time()
    view = load_final_database(module, name, db)
    out["bulk_load_cpu_seconds"] = round(time.process_time() - c0, 3)
    gc.collect()
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    out["view_bytes"] = current - base
    out["peak_bytes_during_load"] = peak - base
    out["bytes_per_db_tuple"] = round(
        (current - base) / max(1, out["database_tuples"]), 1
    )
    # a materialised result: at least one tuple object per row (ints shared)
    width = len(module.View.COLUMNS)
    per_row = sys.getsizeof(tuple(range(width)))
    out["materialised_result_bytes_at_least"] = per_row * out["result_rows_exact"]
    # enumeration: rows/s over the first `enum_budget` seconds (or all rows)
    rows = 0
    t0 = time.perf_counter()
    c0 = time.process_time()
    finished = True
    for i, (_, m) in enumerate(view.enumerate()):
        rows += m
        if i % 4096 == 0 and time.perf_counter() - t0 > enum_budget:
            finished = False
            break
    et = time.process_time() - c0
    out["enumerated_rows"] = rows
    out["enumeration_complete"] = finished
    out["enumeration_cpu_seconds"] = round(et, 3)
    out["enumeration_rows_per_cpu_s"] = round(rows / et) if et else None
    if finished:
        assert rows == out["result_rows_exact"], (rows, out["result_rows_exact"])
    return out


# --------------------------------------------------------------------------


def _fmt_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(n) < 1024:
            return f"{n:,.1f} {unit}"
        n /= 1024
    return f"{n:,.1f} EiB"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", choices=["latency", "memory", "all"], default="all")
    p.add_argument("--fq4-events", type=int, default=50_000)
    p.add_argument(
        "--fq4-window", type=int, default=None, help="window variant for FQ4"
    )
    p.add_argument("--gcq1-events", type=int, default=synthetic.PAPER_EVENTS["gcq1"])
    p.add_argument(
        "--gcq1-window",
        type=int,
        default=None,
        help="latency: GCQ1's window variant (each tuple deleted after W inserts)",
    )
    p.add_argument("--gcq4-events", type=int, default=synthetic.PAPER_EVENTS["gcq4"])
    p.add_argument("--seed", type=int, default=42)
    p.add_argument(
        "--batches",
        default="1,1000",
        help="pull mode: batch sizes to time (comma-separated; the last one also "
        "builds the view that is enumerated and measured), default %(default)s",
    )
    p.add_argument("--budget", type=float, default=600.0, help="seconds per run")
    p.add_argument(
        "--enum-budget", type=float, default=20.0, help="seconds of enumeration"
    )
    p.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    args = p.parse_args(argv)

    results: dict = {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "command": " ".join(["bench/theta_latency.py", *(argv or sys.argv[1:])]),
        "seed": args.seed,
    }
    if args.only in ("latency", "all"):
        fq4 = fq4_events(args.fq4_events, args.seed, args.fq4_window)
        r = push_latency(fq4_module(), fq4, args.budget)
        results["latency_fq4"] = r
        _show_latency(f"FQ4, TPC-H-like, {len(fq4):,} events", r)
        window = args.gcq1_window
        g1 = synthetic.gcq_events(
            "gcq1",
            events=args.gcq1_events,
            seed=args.seed,
            variant="insert" if window is None else "window",
            window=window,
        )
        r = push_latency(gcq_module("gcq1"), g1, args.budget)
        results["latency_gcq1"] = r
        how = "" if window is None else f", window {window}"
        _show_latency(f"GCQ1, synthetic{how}, {len(g1):,} events", r)
    if args.only in ("memory", "all"):
        for name, n in (("gcq1", args.gcq1_events), ("gcq4", args.gcq4_events)):
            ev = synthetic.gcq_events(name, events=n, seed=args.seed)
            r = pull_memory(
                name,
                gcq_module(name),
                ev,
                [int(b) for b in args.batches.split(",")],
                args.budget,
                args.enum_budget,
            )
            results[f"memory_{name}"] = r
            _show_memory(f"{name.upper()}, synthetic, {len(ev):,} events", r)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
        print(f"wrote {args.json}")
    return 0


def _show_latency(title: str, r: dict) -> None:
    done = (
        ""
        if r["complete"]
        else f" (stopped by the budget after {r['events']:,} of {r['of']:,})"
    )
    print(
        f"push latency, {title}{done}: {r['events']:,} events in {r['seconds']:.1f} s, "
        f"{r['result_changes']:,} result changes"
    )
    for label, x in (("wall", r), ("cpu ", r["cpu"])):
        print(
            f"  {label}: median {x['median_us']:,.1f} us, p90 {x['p90_us']:,.1f} us, "
            f"p99 {x['p99_us']:,.1f} us, max {x['max_us']:,.0f} us, "
            f"mean {x['mean_us']:,.1f} us"
        )
    for rel, x in r["per_relation"].items():
        print(
            f"    {rel:10s} {x['events']:>7,} events  wall median "
            f"{x['median_us']:>10,.1f} us  p99 {x['p99_us']:>12,.1f} us"
        )


def _show_memory(title: str, r: dict) -> None:
    print(f"pull mode, {title}:")
    for batch, t in r["throughput"].items():
        part = (
            ""
            if t["complete"]
            else f" (stopped by the budget after {t['events']:,} of {r['of']:,})"
        )
        print(
            f"  batches of {batch:>5}: {t['events_per_cpu_s']:>10,} events per CPU "
            f"second ({t['cpu_seconds']:.1f} s CPU){part}"
        )
    print(
        f"  final state: view heap {_fmt_bytes(r['view_bytes'])} for "
        f"{r['database_tuples']:,} tuples ({r['bytes_per_db_tuple']:,.0f} B/tuple; "
        f"bulk load {r['bulk_load_cpu_seconds']:.1f} s CPU)"
    )
    enum = "all" if r["enumeration_complete"] else f"first {r['enumerated_rows']:,}"
    print(
        f"  result {r['result_rows_exact']:,} rows (materialised >= "
        f"{_fmt_bytes(r['materialised_result_bytes_at_least'])}); enumerate(): {enum} "
        f"rows in {r['enumeration_cpu_seconds']:.1f} s CPU = "
        f"{r['enumeration_rows_per_cpu_s']:,} rows/s"
    )


if __name__ == "__main__":
    raise SystemExit(main())
