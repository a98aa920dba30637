"""Machine instructions generated modules execute over a stream, counted by
valgrind: a code change's cost, before against after, where time on a noisy
machine cannot tell a few per cent apart (the count is the same every run).

    .venv/bin/python -m dynyan.cli compile queries/tpch/q16.sql --trust-input -o /tmp/after.py
    (the same at the commit before, -o /tmp/before.py)
    .venv/bin/python bench/instructions.py tpch/q16 /tmp/before.py /tmp/after.py

`--batch N` feeds each N events as one `update()` call per relation (as
`bench/modules_ab.py --batch` and the harness's dynyan-batch system do).
The events are decoded once and handed to a bare interpreter under
`valgrind --tool=callgrind` (hash seed fixed, GC frozen as the harness's
policy does), which builds a View and applies them; a second run applies
none, and the difference is the replay's. About a minute per module for
100,000 events (valgrind runs ~50x slower). Needs valgrind on PATH.
"""

from __future__ import annotations

import argparse
import os
import pickle
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# run by the bare interpreter under valgrind: argv = events file, module, k,
# push; the file holds events (relation, op, row) or update() calls
# (relation, rows, mults), and k counts the items applied
_REPLAY = """
import gc, pickle, sys, types
events_file, path, k, push = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1"
with open(events_file, "rb") as f:
    batch, items = pickle.load(f)
module = types.ModuleType("replayed")
with open(path) as f:
    exec(compile(f.read(), path, "exec"), module.__dict__)
changes = [0]
def sink(row, change):
    changes[0] += 1
view = module.View(on_delta=sink) if push else module.View()
ops = {1: view.insert, -1: view.delete}
gc.collect()
gc.freeze()
if batch:
    for relation, rows, mults in items[:k]:
        view.update(relation, rows, mults)
else:
    for relation, op, row in items[:k]:
        ops[op](relation, row)
"""


def count(events_file: str, module: str, k: int, push: bool) -> int:
    """Instructions of one run of the replay (k events applied)."""
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "replay.py"
        script.write_text(_REPLAY)
        done = subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                "--callgrind-out-file=/dev/null",
                sys.executable,
                str(script),
                events_file,
                module,
                str(k),
                "1" if push else "0",
            ],
            env={**os.environ, "PYTHONHASHSEED": "0"},
            capture_output=True,
            text=True,
        )
    if done.returncode:
        sys.exit(f"replay of {module} failed:\n{done.stderr[-2000:]}")
    found = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
    return int(found.group(1).replace(",", ""))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "query", help="a query name under queries/, e.g. tpch/q16, or a .sql file"
    )
    p.add_argument("modules", nargs="+", help="generated module files")
    p.add_argument(
        "--stream", default=str(ROOT / "data/streams/tpch-sf0.1-all-insert-s1")
    )
    p.add_argument("--events", type=int, default=100_000, help="the first N events")
    p.add_argument("--push", action="store_true", help="push mode (counting sink)")
    p.add_argument("--batch", type=int, help="update() per relation per N events")
    args = p.parse_args(argv)
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not on PATH")

    sys.path.insert(0, str(ROOT))
    from bench import harness
    from bench.batches import batched

    if args.query.endswith(".sql"):  # any query: the relations its module reads
        from dynyan.compiler import import_source

        relations = import_source(Path(args.modules[0]).read_text()).View.RELATIONS
    else:
        (query,) = harness.discover_queries(ROOT / "queries", [args.query])
        relations = query.relations
    events = harness.decode_stream(args.stream, relations, args.events)
    items = batched(events, args.batch) if args.batch else events
    with tempfile.NamedTemporaryFile(suffix=".pickle") as f:
        pickle.dump((bool(args.batch), items), f)
        f.flush()
        base = None
        print(f"{args.query}: {len(events):,} events")
        for module in args.modules:
            path = str(Path(module).resolve())
            spent = count(f.name, path, len(items), args.push) - count(
                f.name, path, 0, args.push
            )
            base = base or spent
            print(
                f"  {module}: {spent / len(events):,.0f} instructions per event, "
                f"{spent / base:.3f}x the first"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
