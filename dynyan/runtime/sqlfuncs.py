"""SQL functions whose semantics take more than one Python expression.

Generated modules get the ones they call inlined (`inline.helper_source`);
the benchmark peers call them from here, so every system computes the same
values (`dynyan.compiler.functions` is the registry of what each SQL
function or operator becomes).
"""

import datetime
import math


class ViewError(ValueError):
    """Stands in for the generated module's own ViewError (a bad update)."""


def _div(a, b):
    """SQL division as DuckDB does it: NULL in, NULL out; by zero, an
    infinity with the sign of a / b (NaN for 0 / 0)."""
    if a is None or b is None:
        return None
    if b == 0:
        # NaN is the one object math.nan: a row holding it finds itself again
        if a == 0 or a != a:
            return math.nan
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


def _intdiv(a, b):
    """a // b of integers as DuckDB: truncated toward zero; NULL in, NULL
    out; by zero an error."""
    if a is None or b is None:
        return None
    if b == 0:
        raise ZeroDivisionError(f"SQL integer division of {a!r} by zero")
    q = abs(a) // abs(b)
    return -q if (a < 0) != (b < 0) else q


def _substr(s, start, length=None):
    """SUBSTRING(s, start[, length]) as DuckDB: 1-based; a negative start
    counts from the end, 0 is just before the first character; a negative
    length takes the characters before the start. NULL in, NULL out."""
    if s is None:
        return None
    begin = start - 1 if start > 0 else (-1 if start == 0 else len(s) + start)
    if length is None:
        return s[max(begin, 0) :]
    if length < 0:
        begin, length = begin + length, -length
    return s[max(begin, 0) : max(begin + length, 0)]


def _round(x, digits, exact=None):
    """ROUND(x, digits) as DuckDB: halves away from zero, an INTEGER stays
    one; a DOUBLE too large to scale (or inf, NaN) is returned as it is.
    `exact`: the decimal digits a DECIMAL `x` holds, so it is rounded as
    the decimal it stands for (1.005 to 1.01), not as its nearest double;
    CAST(x AS DECIMAL(p, digits)) rounds the same way. NULL in, NULL out."""
    if x is None:
        return None
    if type(x) is int:
        if digits >= 0:
            return x
        unit = 10**-digits
        q = (abs(x) + unit // 2) // unit * unit
        return q if x >= 0 else -q
    if exact is not None:
        if digits >= exact:
            return x
        n = round(x * 10**exact)  # the decimal's digits, exactly
        unit = 10 ** (exact - digits)
        q = (abs(n) + unit // 2) // unit
        q = q if n >= 0 else -q
        return q / 10**digits if digits >= 0 else float(q * 10**-digits)
    scaled = x * 10.0**digits if digits >= 0 else x / 10.0**-digits
    if scaled - scaled != 0:
        return x
    whole = int(scaled)  # toward zero
    if abs(scaled - whole) >= 0.5:
        whole += 1 if scaled > 0 else -1
    out = whole / 10.0**digits if digits >= 0 else whole * 10.0**-digits
    return out if out - out == 0 else x


def _to_int(x):
    """CAST(x AS INTEGER) of a DOUBLE as DuckDB: the nearest integer, halves
    to even (inf and NaN are errors); a BOOLEAN 1 or 0 (a DECIMAL is
    `_round`ed to 0 digits first). NULL in, NULL out."""
    if x is None or type(x) is int:
        return x
    if x - x != 0:
        raise ValueError(f"CAST of {x} to an integer is out of range")
    return round(x)


def _sqrt(x):
    """SQRT as DuckDB: NaN below zero (and of NaN). NULL in, NULL out."""
    if x is None:
        return None
    return x**0.5 if x >= 0 else math.nan


def _finite_part(x):
    """x when it is finite, else 0: a float sum keeps its infinities and
    NaNs as counts beside it (`_ieee_total`), so a delete restores it exactly."""
    return x if x - x == 0 else 0.0


def _exact(x):
    """A finite number as an integer count of 2**-1074, which every double
    is: float sums kept in these units are exact, so a SUM's value depends on
    the rows present, never on the order of the updates that left them."""
    try:
        n, d = x.as_integer_ratio()
    except (OverflowError, ValueError):
        raise ViewError(
            f"cannot add {x!r} to an exact float SUM/AVG: an input value that "
            "is infinite or NaN is not supported there"
        ) from None
    return n << (1075 - d.bit_length())


def _inexact(n, factors=1):
    """The double nearest to a sum of `_exact` values (of products of
    `factors` of them): one rounding, at the end; ±inf beyond the doubles,
    as a float sum overflows."""
    try:
        return n / (1 << 1074 * factors)
    except OverflowError:
        return math.inf if n > 0 else -math.inf


def _ieee_total(finite, pos, neg, nan):
    """A float SUM from its finite part and the numbers of +inf, -inf and
    NaN terms in it (IEEE: inf - inf and anything + NaN are NaN)."""
    if nan or (pos and neg):
        return math.nan
    if pos:
        return math.inf
    if neg:
        return -math.inf
    return finite


def _nan_key(x):
    """A MIN/MAX/COUNT(DISTINCT) multiset's key for a value that may be NaN:
    NaN equals no value, itself included, so it is kept as (1,), above every
    number (0, x), as DuckDB orders it; None stays None."""
    if x is None:
        return None
    return (1,) if x != x else (0, x)


def _nan_value(key):
    """The value of a `_nan_key` key."""
    return key[1] if key[0] == 0 else math.nan


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


def _replace(string, old, new):
    """REPLACE as DuckDB: every occurrence; an empty `old` replaces nothing."""
    return string.replace(old, new) if old else string


def _right(string, n):
    """RIGHT(s, n): the last n characters; n < 0: all but the first -n."""
    return string[-n:] if n else ""


def _to_str(value):
    """CAST(value AS VARCHAR) of an INTEGER, BOOLEAN, DATE or TIMESTAMP, as
    DuckDB spells them (a TIMESTAMP's fraction of a second without trailing
    zeros)."""
    if value is True or value is False:
        return "true" if value else "false"
    if type(value) is int:
        return str(value)
    if type(value) is datetime.datetime:
        text = value.isoformat(sep=" ")
        return text.rstrip("0") if value.microsecond else text
    return value.isoformat()


def _date_trunc(unit, date):
    """DATE_TRUNC of a DATE: the first day of its year, quarter, month or
    ISO week (a Monday), or the day itself; of a TIMESTAMP the first instant
    of that day, or of its hour, minute or second."""
    if type(date) is datetime.datetime:
        if unit == "second":
            return date.replace(microsecond=0)
        if unit == "minute":
            return date.replace(second=0, microsecond=0)
        if unit == "hour":
            return date.replace(minute=0, second=0, microsecond=0)
        day = _date_trunc(unit, date.date())
        return datetime.datetime(day.year, day.month, day.day)
    if unit == "month":
        return date.replace(day=1)
    if unit == "year":
        return date.replace(month=1, day=1)
    if unit == "quarter":
        return date.replace(month=(date.month - 1) // 3 * 3 + 1, day=1)
    if unit == "week":
        return date - datetime.timedelta(days=date.weekday())
    return date


def _add_months(date, months):
    """date + INTERVAL 'months' MONTH, clamped to the end of the month (a
    TIMESTAMP keeps its time of day)."""
    total = date.year * 12 + date.month - 1 + months
    year, month = divmod(total, 12)
    for day in (date.day, 30, 29, 28):
        try:
            return date.replace(year=year, month=month + 1, day=day)
        except ValueError:
            continue


def _quantile_cont(values, q, scale=None):
    """QUANTILE_CONT(x, q) (MEDIAN: q = 0.5) of the sorted `values`, as
    DuckDB computes it: the value at position (n - 1) * q, interpolated
    between its neighbours; a DOUBLE, or a DECIMAL of `scale` digits whose
    interpolated units are truncated toward zero. None for no values.

    >>> _quantile_cont([1, 2, 4, 9], 0.5), _quantile_cont([2.05, 3.1], 0.5, 2)
    (3.0, 2.57)
    """
    n = len(values)
    if not n:
        return None
    pos = (n - 1) * q
    lo = math.floor(pos)
    a = values[lo]
    if lo == pos:
        return a if scale is not None else float(a)
    b = values[lo + 1]
    if scale is None:
        a = float(a)
        return a + (float(b) - a) * (pos - lo)
    # a + (b - a) * f in units of 10**-scale, rounded once (DuckDB's build
    # fuses the multiply-add), then truncated: exact over integers, as an
    # int / int division rounds correctly
    unit = 10**scale
    a, b = round(a * unit), round(b * unit)
    num, den = (pos - lo).as_integer_ratio()
    return int((a * den + (b - a) * num) / den) / unit


def _quantile_disc(values, q):
    """QUANTILE_DISC(x, q) of the sorted `values`, as DuckDB computes it:
    the value at index ceil(n * q) - 1 (the first for q = 0). None for no
    values.

    >>> _quantile_disc(["a", "b", "c", "d"], 0.5), _quantile_disc([1, 2, 3], 0.9)
    ('b', 3)
    """
    n = len(values)
    if not n:
        return None
    return values[max(math.ceil(n * q) - 1, 0)]


def _and3(*values):
    """SQL AND of values: FALSE if one is FALSE, else NULL if one is NULL,
    else TRUE (a number is TRUE when it is not 0)."""
    unknown = False
    for x in values:
        if x is None:
            unknown = True
        elif not x:
            return False
    return None if unknown else True


def _or3(*values):
    """SQL OR of values: TRUE if one is TRUE, else NULL if one is NULL, else
    FALSE."""
    unknown = False
    for x in values:
        if x is None:
            unknown = True
        elif x:
            return True
    return None if unknown else False


def _regexp_extract(regex, string, group):
    """REGEXP_EXTRACT: the first match's `group` (0: all of it), '' when
    nothing matches or the group took no part."""
    m = regex.search(string)
    return "" if m is None else m.group(group) or ""
