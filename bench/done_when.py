"""The table of issue 16's first "done when": per query and mode, dynyan
(trusting, strict beside it) against the first-order IVM and DuckDB
recomputing, from one result file of `python -m bench run`.

    .venv/bin/python bench/done_when.py bench/results/done-when-tpch-sf0.1-insert.json

Rates are events/s (pull: applying the stream; push: applying it with every
change sent to a sink); ratios are trusting dynyan's rate over the peer's;
memory is tracemalloc's peak of the system's structures. "met" says whether
trusting dynyan is at least as fast as both peers and keeps no more memory
than the IVM. A peer that ran out of its budget is shown by the rate it had
reached when stopped ("<"), an upper bound of its rate over the whole
stream: trusting dynyan having finished faster than that counts as ahead.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

SYSTEMS = ("dynyan-trust", "dynyan", "ivm", "recompute")


def table(path: Path, subject: str = "dynyan-trust") -> str:
    data = json.loads(path.read_text())
    by = {
        (r["query"], r["mode"], r["system"]): r
        for r in data["results"]
        if r.get("status") == "ok"
    }
    stopped = {
        (r["query"], r["mode"], r["system"]): r["partial_events_per_s"]
        for r in data["results"]
        if r.get("status") == "timeout" and r.get("partial_events_per_s")
    }
    queries = list(dict.fromkeys(r["query"] for r in data["results"]))
    lines = [
        "| query | mode | dynyan trusting | dynyan strict | IVM | DuckDB | × IVM "
        f"| × DuckDB | traced {subject} / IVM (MB) | met |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    met_count = total = 0
    for query in queries:
        for mode in ("pull", "push"):
            rows = {s: by.get((query, mode, s)) for s in SYSTEMS}
            if rows[subject] is None:
                continue
            rate = {s: (r["events_per_s"] if r else None) for s, r in rows.items()}
            bound = {s for s in SYSTEMS if (query, mode, s) in stopped}
            rate.update({s: stopped[(query, mode, s)] for s in bound})
            mem = {s: (r.get("traced_peak_mb") if r else None) for s, r in rows.items()}
            ivm_x = _ratio(rate[subject], rate["ivm"])
            duck_x = _ratio(rate[subject], rate["recompute"])
            lean = (
                mem[subject] is not None
                and mem["ivm"] is not None
                and mem[subject] <= mem["ivm"] + 0.5
            )
            met = all(x is not None and x >= 1.0 for x in (ivm_x, duck_x)) and lean
            met_count += met
            total += 1
            lines.append(
                f"| {query.split('/')[-1].upper()} | {mode} | "
                + " | ".join(_rate(rate[s], s in bound) for s in SYSTEMS)
                + f" | {_x(ivm_x, 'ivm' in bound)} | {_x(duck_x, 'recompute' in bound)} | "
                f"{_mb(mem[subject])} / {_mb(mem['ivm'])} | "
                f"{'yes' if met else 'no'} |"
            )
    lines.append("")
    lines.append(f"met on {met_count} of {total} (query, mode) pairs")
    return "\n".join(lines)


def _ratio(a, b):
    return None if a is None or not b else a / b


def _rate(r, stopped: bool = False) -> str:
    return "—" if r is None else f"{'< ' if stopped else ''}{r:,.0f}"


def _x(x, stopped: bool = False) -> str:
    return "—" if x is None else f"{'> ' if stopped else ''}{x:.2f}×"


def _mb(m) -> str:
    return "—" if m is None else f"{m:,.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("result", type=Path, help="a result file of bench run")
    parser.add_argument(
        "--subject",
        default="dynyan-trust",
        help="the dynyan system the ratios are of (dynyan: strict; result "
        "files from before --trust-input have only that)",
    )
    args = parser.parse_args()
    print(table(args.result, args.subject))


if __name__ == "__main__":
    main()
