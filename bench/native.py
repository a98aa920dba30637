"""A generated module compiled to a C extension with Cython vs the pure module.

    .venv/bin/pip install cython==3.3.1
    .venv/bin/python bench/native.py --events 200000 --runs 3
    .venv/bin/python bench/native.py --trust-input --queries q1,spec/q13

For each query of the TPC-H set, the module `dynyan compile` writes is
built unchanged as an extension module (Cython 3, language level 3, the
C compiler of the machine, -O2), both are imported into this process and
replay the first `--events` events of the TPC-H SF 0.1 insert stream, one
`insert` call per event as the harness does, alternating pure and native
runs; the medians of `--runs` runs are compared. `--trust-input`: the
modules compiled trusting their input (`dynyan compile --trust-input`). The stream is built by
`python -m bench run --sf 0.1` (or `dynyan stream build`, docs/streams.md).
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import harness as bench  # noqa: E402
from dynyan.compiler import compile_sql, import_source  # noqa: E402

TPCH = ["fq1", "fq2", "fq3", "fq4", "q1", "q3", "q4", "q6", "q9", "q12", "q13"]
TPCH += ["q16", "q18"]


def build_extension(source: str, name: str, workdir: Path):
    """The module `source` compiled by Cython into an extension module and
    imported (raises if Cython or the C compiler fails)."""
    from Cython.Build import cythonize
    from setuptools import Distribution, Extension
    from setuptools.command.build_ext import build_ext

    pyx = workdir / f"{name}.py"
    pyx.write_text(source)
    ext = Extension(name, [str(pyx)], extra_compile_args=["-O2"])
    modules = cythonize(
        [ext],
        compiler_directives={"language_level": 3},
        quiet=True,
        build_dir=str(workdir / "c"),
    )
    cmd = build_ext(Distribution({"ext_modules": modules}))
    cmd.build_lib = str(workdir / "lib")
    cmd.build_temp = str(workdir / "tmp")
    cmd.ensure_finalized()
    cmd.run()
    (path,) = (workdir / "lib").glob(f"{name}.*.so")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def replay(module, events) -> float:
    """Events/s of one replay into a fresh view (collections as in the
    harness's default GC policy are not applied: the stream is short)."""
    view = module.View()
    insert, delete = view.insert, view.delete
    gc.collect()
    t0 = time.perf_counter()
    for rel, op, row in events:
        insert(rel, row) if op > 0 else delete(rel, row)
    return len(events) / (time.perf_counter() - t0)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--events", type=int, default=200_000, help="stream prefix")
    p.add_argument("--runs", type=int, default=3, help="runs per module (median)")
    p.add_argument(
        "--queries", default=",".join(TPCH), help="names under queries/tpch/"
    )
    p.add_argument(
        "--trust-input", action="store_true", help="modules compiled trusting"
    )
    p.add_argument(
        "--stream", default=str(ROOT / "data/streams/tpch-sf0.1-all-insert-s1")
    )
    args = p.parse_args(argv)
    print(
        f"# {platform.node()}, {platform.processor() or platform.machine()}, "
        f"Python {platform.python_version()}"
    )
    print(f"{'query':<6} {'pure ev/s':>11} {'native ev/s':>12} {'speed-up':>8}")
    ratios = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.queries.split(","):
            (query,) = bench.discover_queries(ROOT / "queries", [f"tpch/{name}"])
            events = bench.decode_stream(args.stream, query.relations, args.events)
            source = compile_sql(query.sql, query.schema, trust_input=args.trust_input)
            pure = import_source(source)
            try:
                native = build_extension(
                    source, "dyn_" + name.replace("/", "_"), Path(tmp)
                )
            except Exception as err:  # noqa: BLE001 - report and go on
                print(f"{name:<6} native build failed: {err}")
                continue
            a, b = [], []
            for _ in range(args.runs):
                a.append(replay(pure, events))
                b.append(replay(native, events))
            ratio = statistics.median(b) / statistics.median(a)
            ratios.append(ratio)
            print(
                f"{name:<6} {statistics.median(a):>11,.0f} "
                f"{statistics.median(b):>12,.0f} {ratio:>7.2f}x",
                flush=True,
            )
    if ratios:
        print(f"geometric mean speed-up: {statistics.geometric_mean(ratios):.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
