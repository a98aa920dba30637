"""Time generated modules of bench/float_sum.sql on the same rows.

Usage: python bench/float_sum.py MODULE.py [MODULE.py ...] (alternate
them to even out drift); prints the median of 3 runs per module.
"""

import importlib.util
import random
import sys
import time


def load(path):
    spec = importlib.util.spec_from_file_location(f"m{abs(hash(path))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(paths):
    rng = random.Random(1)
    rows = [
        (rng.randrange(100), rng.uniform(-1e3, 1e3), rng.uniform(0, 10))
        for _ in range(200_000)
    ]
    for path in paths:
        module, times = load(path), []
        for _ in range(3):
            view, start = module.View(), time.perf_counter()
            for i in range(0, len(rows), 1000):
                view.update("r", rows[i : i + 1000])
            for row in rows[:100_000]:
                view.insert("r", row)
            times.append(time.perf_counter() - start)
        print(path, "median %.3f s" % sorted(times)[1])


if __name__ == "__main__":
    main(sys.argv[1:])
