"""A fact table LEFT JOINed to n dimensions: compile time, module size,
update rate and traced memory (BENCHMARKS.md, "LEFT JOINs on keys").

    python bench/star_left_joins.py --dims 2,4,8 --runs 3

The query is `SELECT f.id, d0.v AS v0, … FROM f LEFT JOIN d0 ON d0.k = f.k0
LEFT JOIN d1 …`; the stream inserts dimension rows (80 % of 2,000 keys per
dimension) and fact rows (keys drawn from 2,500, so some find nothing),
shuffled, into a trusting view. Run it with PYTHONPATH pointing at another
checkout to measure that one's compiler.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
import tracemalloc


def query(n: int) -> str:
    schema = "CREATE TABLE f (id INTEGER, "
    schema += ", ".join(f"k{i} INTEGER" for i in range(n)) + ", x INTEGER);\n"
    schema += "".join(f"CREATE TABLE d{i} (k INTEGER, v INTEGER);\n" for i in range(n))
    select = "SELECT f.id, " + ", ".join(f"d{i}.v AS v{i}" for i in range(n))
    select += " FROM f " + " ".join(
        f"LEFT JOIN d{i} ON d{i}.k = f.k{i}" for i in range(n)
    )
    return schema + select + ";\n"


def events(n: int, facts: int, seed: int = 1) -> list[tuple[str, tuple]]:
    rnd = random.Random(seed)
    out = [
        (f"d{j}", (i, rnd.randrange(100)))
        for i in range(2000)
        for j in range(n)
        if rnd.random() < 0.8
    ]
    out += [
        ("f", (i, *(rnd.randrange(2500) for _ in range(n)), rnd.randrange(9)))
        for i in range(facts)
    ]
    rnd.shuffle(out)
    return out


def run(n: int, facts: int, traced: bool) -> dict:
    import dynyan
    from dynyan.compiler import compile_query
    from dynyan.compiler.render import render_module

    sql = query(n)
    start = time.perf_counter()
    source = render_module(compile_query(sql), formatted=False)
    compiled = time.perf_counter() - start
    view = dynyan.load(sql, trust_input=True).View()
    stream = events(n, facts)
    if traced:
        tracemalloc.start()
    start = time.perf_counter()
    for relation, row in stream:
        view.insert(relation, row)
    elapsed = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1] if traced else 0
    tracemalloc.stop()
    return {
        "compile_s": compiled,
        "lines": source.count("\n"),
        "events_per_s": len(stream) / elapsed,
        "peak_mb": peak / 1e6,
        "rows": sum(1 for _ in view.rows()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dims", default="2,4,8", help="numbers of dimensions")
    parser.add_argument("--facts", type=int, default=60000, help="fact rows")
    parser.add_argument("--runs", type=int, default=3, help="runs (medians)")
    args = parser.parse_args()
    print("dims  compile s  lines  events/s  traced peak MB  result rows")
    for n in [int(x) for x in args.dims.split(",")]:
        runs = [run(n, args.facts, traced=False) for _ in range(args.runs)]
        memory = run(n, args.facts, traced=True)
        median = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        print(
            f"{n:4d}  {median['compile_s']:9.1f}  {median['lines']:5.0f}"
            f"  {median['events_per_s']:8,.0f}  {memory['peak_mb']:14.1f}"
            f"  {median['rows']:11,.0f}"
        )


if __name__ == "__main__":
    main()
