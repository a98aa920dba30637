"""SQL functions whose semantics take more than one Python expression.

Generated modules get the ones they call inlined (`inline.helper_source`);
the benchmark peers call them from here, so every system computes the same
values (`dynyan.compiler.functions` is the registry of what each SQL
function or operator becomes).
"""

import datetime
import math


def _div(a, b):
    """SQL division as DuckDB does it: NULL in, NULL out; by zero, an
    infinity with the sign of a / b (NaN for 0 / 0)."""
    if a is None or b is None:
        return None
    if b == 0:
        if a == 0 or a != a:
            return float("nan")
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


def _mod(a, b):
    """SQL remainder: takes the sign of the dividend; NULL in, NULL out; by
    zero an error, as in DuckDB."""
    if a is None or b is None:
        return None
    if b == 0:
        raise ZeroDivisionError(f"SQL remainder of {a!r} by zero")
    r = abs(a) % abs(b)
    return -r if a < 0 else r


def _nan_key(v):
    """A number as SQL orders it: NaN above every number, equal to itself."""
    return (1, 0) if v != v else (0, v)


def _greatest(*values):
    """GREATEST as DuckDB: NULLs are skipped (NULL when all are), NaN is
    above every number."""
    best = None
    for v in values:
        if v is not None and (best is None or v > best or v != v):
            best = v
    return best


def _least(*values):
    """LEAST as DuckDB: NULLs are skipped (NULL when all are), NaN only
    when every value is NaN."""
    best = None
    for v in values:
        if v is not None and (best is None or v < best or best != best):
            best = v
    return best


def _add_months(date, months):
    """date + INTERVAL 'months' MONTH, clamped to the end of the month."""
    total = date.year * 12 + date.month - 1 + months
    year, month = divmod(total, 12)
    for day in (date.day, 30, 29, 28):
        try:
            return datetime.date(year, month + 1, day)
        except ValueError:
            continue
