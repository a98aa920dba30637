"""SQL functions whose semantics take more than one Python expression.

Generated modules get the ones they call inlined (`inline.helper_source`);
the benchmark peers call them from here, so every system computes the same
values (`dynyan.compiler.functions` is the registry of what each SQL
function or operator becomes).
"""

import datetime
import math
from collections.abc import Mapping, Set


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


def _to_int(x, low=None, high=None):
    """CAST(x AS INTEGER) of a DOUBLE as DuckDB: the nearest integer, halves
    to even; a BOOLEAN 1 or 0 (a DECIMAL is `_round`ed to 0 digits first).
    Out of the integer type's range [low, high] (inf, NaN) an error, as
    DuckDB's. NULL in, NULL out."""
    if x is None:
        return x
    if type(x) is not int:
        if x - x != 0:
            raise ValueError(f"CAST of {x} to an integer is out of range")
        x = round(x)
    if low is not None and not low <= x <= high:
        raise ValueError(f"CAST of {x} to an integer is out of range")
    return x


def _to_single(x, cast=False):
    """`x` as a REAL (FLOAT) value of DuckDB's: the nearest 4-byte float
    (`_single`). Beyond their range ±inf, as REAL arithmetic overflows; an
    error for a CAST (`cast`), as DuckDB's. NULL in, NULL out."""
    if x is None:
        return None
    single = _single(x)
    if single is None:
        if cast:
            raise ValueError(f"CAST of {x} to REAL is out of range")
        return math.copysign(math.inf, x)
    return single


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


def _upper(s):
    """UPPER as DuckDB: each character's simple upper case, one character
    for one ('ß' -> 'ẞ'; 'ﬁ' stays), not Python's full mapping ('SS',
    'FI')."""
    if s.isascii():
        return s.upper()
    return "".join(
        u if len(u := c.upper()) == 1 else "\u1e9e" if c == "\xdf" else c for c in s
    )


def _lower(s):
    """LOWER as DuckDB: each character's simple lower case, one for one
    ('İ' -> 'i'), a final 'Σ' too ('σ': Python's str.lower makes it 'ς')."""
    if s.isascii():
        return s.lower()
    return "".join(
        low if len(low := c.lower()) == 1 else "i" if c == "\u0130" else c for c in s
    )


def _to_str(value, scale=None):
    """CAST(value AS VARCHAR) of an INTEGER, BOOLEAN, DATE, TIMESTAMP, TIME,
    DOUBLE or DECIMAL with `scale` digits, as DuckDB spells them (a TIMESTAMP's
    fraction of a second without trailing zeros, a DOUBLE's shortest
    repr, a DECIMAL's every digit: 1.50, never -0.00)."""
    if scale is not None:
        text = f"{value:.{scale}f}"
        return text[1:] if text[0] == "-" and not text.strip("-0.") else text
    if value is True or value is False:
        return "true" if value else "false"
    if type(value) is int:
        return str(value)
    if type(value) is float:
        return repr(value)
    if type(value) is datetime.datetime:
        text = value.isoformat(sep=" ")
        return text.rstrip("0") if value.microsecond else text
    text = value.isoformat()  # a DATE, or a TIME (its fraction as a TIMESTAMP's)
    return text.rstrip("0") if getattr(value, "microsecond", 0) else text


def _real_text(v):
    """CAST of a REAL to VARCHAR as DuckDB spells it: the fewest digits that
    read back as the same 4-byte float, written as a DOUBLE's (0.1 for the
    0.100000001490116… a REAL keeps, 1e+20)."""
    if v - v == 0:  # finite (inf and nan are spelt as a DOUBLE's)
        for digits in range(1, 10):  # 9 always do
            shorter = float(f"{v:.{digits}g}")
            if _single(shorter) == v:
                return repr(shorter)
    return repr(v)


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


def _strftime(fmt, t):
    """STRFTIME(t, fmt) as DuckDB spells it: the specifiers of `fmt` (checked
    when the query is compiled: `functions.STRFTIME_CODES`) filled in from a
    DATE (at midnight) or TIMESTAMP, `%-x` without zero padding."""
    if type(t) is datetime.date:
        t = datetime.datetime(t.year, t.month, t.day)
    days = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
    days += ("Sunday",)
    months = ("January", "February", "March", "April", "May", "June", "July")
    months += ("August", "September", "October", "November", "December")
    out = []
    i = 0
    while i < len(fmt):
        if fmt[i] != "%":
            out.append(fmt[i])
            i += 1
            continue
        pad = fmt[i + 1] != "-"
        code = fmt[i + 1] if pad else fmt[i + 2]
        i += 2 if pad else 3
        if code in "aA":
            name = days[t.weekday()]
            out.append(name[:3] if code == "a" else name)
        elif code in "bB":
            name = months[t.month - 1]
            out.append(name[:3] if code == "b" else name)
        elif code == "p":
            out.append("PM" if t.hour >= 12 else "AM")
        elif code == "%":
            out.append("%")
        else:
            value, width = {
                "Y": (t.year, 4),
                "m": (t.month, 2),
                "d": (t.day, 2),
                "y": (t.year % 100, 2),
                "H": (t.hour, 2),
                "I": ((t.hour - 1) % 12 + 1, 2),
                "M": (t.minute, 2),
                "S": (t.second, 2),
                "f": (t.microsecond, 6),
                "j": (t.timetuple().tm_yday, 3),
                "w": (t.isoweekday() % 7, 1),
                "u": (t.isoweekday(), 1),
                "G": (t.isocalendar()[0], 4),
                "V": (t.isocalendar()[1], 2),
                # weeks that start on Sunday (U) or Monday (W), week 0 first
                "U": ((t.timetuple().tm_yday + 6 - t.isoweekday() % 7) // 7, 2),
                "W": ((t.timetuple().tm_yday + 6 - t.weekday()) // 7, 2),
            }[code]
            out.append(f"{value:0{width}d}" if pad else str(value))
    return "".join(out)


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


def _gcd(a, b):
    """GCD(a, b) of integers, never negative (GCD(0, 0) is 0), as DuckDB."""
    return math.gcd(a, b)


def _lcm(a, b):
    """LCM(a, b) of integers, never negative (0 where either is), as DuckDB."""
    return math.lcm(a, b)


def _translate(text, source, target):
    """TRANSLATE(text, source, target): each character of `source` in text
    becomes the one at its place in `target`, or is dropped past target's
    end; a character repeated in source keeps its first place.

    >>> _translate('hello', 'lol', 'xy')
    'hexxy'
    """
    table = {}
    for i, ch in enumerate(source):
        table.setdefault(ord(ch), target[i] if i < len(target) else None)
    return text.translate(table)


def _string_agg_keyed(pairs, separator, descending, as_text):
    """STRING_AGG(x, separator ORDER BY k) from a group's sorted pairs
    ((k's NULL test, k), x): the x's in k's order (`descending`: reversed),
    cast to VARCHAR where `as_text`; rows that tie on k in the order of
    their x's (SQL joins them in any order).

    >>> _string_agg_keyed([((False, 1), 'b'), ((False, 2), 'a')], ',', False, False)
    'b,a'
    """
    pairs = reversed(pairs) if descending else pairs
    if as_text:
        return separator.join([_to_str(pair[1]) for pair in pairs])
    return separator.join([pair[1] for pair in pairs])


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


def _bit_or_agg(values):
    """BIT_OR of INTEGER `values` (at least one): Python's | of two's
    complement integers is DuckDB's over the type's bits.

    >>> _bit_or_agg([1, 4, 4]), _bit_or_agg([-8, 3])
    (5, -5)
    """
    out = 0
    for v in values:
        out |= v
    return out


def _bit_and_agg(values):
    """BIT_AND of INTEGER `values` (at least one).

    >>> _bit_and_agg([7, 13]), _bit_and_agg([-1, 6])
    (5, 6)
    """
    out = -1
    for v in values:
        out &= v
    return out


def _bit_xor_agg(values):
    """BIT_XOR of INTEGER `values` (at least one), every copy counted.

    >>> _bit_xor_agg([5, 3, 3]), _bit_xor_agg([-2, 1])
    (5, -1)
    """
    out = 0
    for v in values:
        out ^= v
    return out


def _top_cut(values, place, descending):
    """The value at `place` (from 1) of the sorted `values` read in the
    order (from the end where `descending`), or the last one when there are
    fewer: the threshold that keeps a partition's top `place` rows
    (passes/top_rows.py). None for no values.

    >>> _top_cut([1, 2, 3], 2, False), _top_cut([1, 2, 3], 2, True), _top_cut([5], 3, False)
    (2, 2, 5)
    """
    n = len(values)
    if not n:
        return None
    return values[max(n - place, 0)] if descending else values[min(place, n) - 1]


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


def _exact_double(x, exact):
    """A DECIMAL of `exact` digits (a float computed from DECIMALs, maybe off
    in the last bit: 0.45 as 0.44999999999999996) as the double nearest to
    the decimal it stands for, as DuckDB casts it."""
    scaled = x * 10**exact
    return round(scaled) / 10**exact if scaled - scaled == 0 else x


def _ceil_number(x, exact=None):
    """CEIL of a DOUBLE as DuckDB: a DOUBLE (-0.0 for -1 < x <= -0.0; inf
    and NaN as they are). `exact`: the digits of a DECIMAL `x`, ceiled as
    the decimal it stands for (2.0000000000000004, a float computation's
    2.00, stays 2)."""
    if exact is not None:
        units = round(x * 10**exact)
        return float(-(-units // 10**exact))
    if x - x != 0:
        return x
    return math.copysign(float(math.ceil(x)), x)


def _floor_number(x, exact=None):
    """FLOOR of a DOUBLE as DuckDB, as `_ceil_number` (-0.0 stays -0.0)."""
    if exact is not None:
        units = round(x * 10**exact)
        return float(units // 10**exact)
    if x - x != 0:
        return x
    return math.copysign(float(math.floor(x)), x)


def _trunc(x, digits, exact=None):
    """TRUNC(x, digits) as DuckDB: toward zero at 10**-digits. An INTEGER
    stays one; a DECIMAL (`exact` digits) is cut as the decimal it stands
    for; a DOUBLE is scaled in double arithmetic (x * 10**digits, or x /
    10**-digits) and given back as it is when that overflows."""
    if type(x) is int:
        if digits >= 0:
            return x
        unit = 10**-digits
        q = abs(x) // unit * unit
        return q if x >= 0 else -q
    if exact is not None:
        if digits >= exact:
            return x
        units = round(x * 10**exact)
        unit = 10 ** (exact - digits)
        q = abs(units) // unit
        q = q if units >= 0 else -q
        return q / 10**digits if digits >= 0 else float(q * 10**-digits)
    try:
        scale = 10.0 ** abs(digits)
    except OverflowError:
        scale = math.inf
    scaled = x * scale if digits >= 0 else x / scale
    if scaled - scaled == 0:
        scaled = math.copysign(float(math.trunc(scaled)), scaled)
    out = scaled / scale if digits >= 0 else scaled * scale
    return out if out - out == 0 else x


def _ln(x):
    """LN as DuckDB: -inf at 0; of a negative number DuckDB gives NaN, which
    is refused (an error), as a NaN compares unlike DuckDB's."""
    if x > 0:
        return math.log(float(x))
    if x == 0:
        return -math.inf
    if x != x:
        return x
    raise ValueError(f"LN of the negative number {x!r} is NaN: not supported")


def _log10(x):
    """LOG10 (and LOG) as DuckDB, as `_ln`."""
    if x > 0:
        return math.log10(float(x))
    if x == 0:
        return -math.inf
    if x != x:
        return x
    raise ValueError(f"LOG10 of the negative number {x!r} is NaN: not supported")


def _log2(x):
    """LOG2 as DuckDB, as `_ln`."""
    if x > 0:
        return math.log2(float(x))
    if x == 0:
        return -math.inf
    if x != x:
        return x
    raise ValueError(f"LOG2 of the negative number {x!r} is NaN: not supported")


def _trig(name, *args):
    """SIN, COS, TAN, ASIN, ACOS, ATAN, ATAN2, RADIANS, DEGREES as DuckDB,
    whose C functions Python's math calls (the same doubles); where DuckDB
    gives NaN (ASIN(2), SIN(inf)) an error, as a NaN compares unlike
    DuckDB's. NaN in, NaN out."""
    if any(a != a for a in args):
        return math.nan
    try:
        return getattr(math, name)(*map(float, args))
    except ValueError:
        raise ValueError(f"{name.upper()}{args!r} is NaN: not supported") from None


def _c_math(name, x):
    """CBRT, COT, SINH, COSH, TANH, ASINH, ACOSH, ATANH as DuckDB's C
    functions give them. Python raises where C returns ±inf (a pole, an
    overflow): the infinity is given here; where C returns NaN (ACOSH(0.5),
    ATANH(2)) an error, as `_trig`. NaN in, NaN out."""
    x = float(x)
    if x != x:
        return x
    try:
        if name == "cot":
            t = math.tan(x)
            return 1.0 / t if t else math.copysign(math.inf, t)
        return getattr(math, name)(x)
    except OverflowError:
        return math.copysign(math.inf, x) if name == "sinh" else math.inf
    except ValueError:
        if name == "atanh" and abs(x) == 1:
            return x * math.inf
        raise ValueError(f"{name.upper()}({x!r}) is NaN: not supported") from None


def _even(x):
    """EVEN as DuckDB: away from zero to the next even integer, a DOUBLE."""
    x = float(x)
    if x - x != 0:  # ±inf, NaN
        return x
    n = math.ceil(x) if x >= 0 else math.floor(x)
    if n % 2:
        n += 1 if x >= 0 else -1
    return float(n)


def _fdiv(x, y):
    """FDIV(x, y) as DuckDB: FLOOR(x / y) in doubles (±inf for x / 0); NaN
    (0 / 0, inf / inf) refused, as elsewhere."""
    q = _floored_quotient(float(x), float(y))
    if q != q:
        raise ValueError(f"FDIV({x!r}, {y!r}) is NaN: not supported")
    return q


def _fmod(x, y):
    """FMOD(x, y) as DuckDB computes it: x - FLOOR(x / y) * y in doubles
    (the sign of y's, not C's fmod); NaN (y = 0, an infinity) refused."""
    x, y = float(x), float(y)
    out = x - _floored_quotient(x, y) * y
    if out != out:
        raise ValueError(f"FMOD({x!r}, {y!r}) is NaN: not supported")
    return out


def _floored_quotient(x, y):
    """FLOOR(x / y) of doubles as C computes it: ±inf or NaN by zero, and
    an infinite or NaN quotient, kept."""
    if y:
        q = x / y
    elif x != x or x == 0:
        return math.nan
    else:
        return math.copysign(math.inf, x) * math.copysign(1.0, y)
    return float(math.floor(q)) if q - q == 0 else q


def _signbit(x):
    """SIGNBIT of a DOUBLE as C's: set for -0.0 and -inf too."""
    return math.copysign(1.0, x) < 0


def _factorial(n):
    """FACTORIAL as DuckDB: a HUGEINT, so 33! at most; of a negative number
    an error."""
    if n < 0:
        raise ValueError(f"factorial of a negative number is undefined ({n})")
    if n > 33:
        raise ValueError(f"Value out of range: FACTORIAL({n}) is beyond HUGEINT")
    return math.factorial(n)


def _shift_left(x, n, bits):
    """x << n of `bits`-bit signed INTEGERs as DuckDB: an error for a
    negative x or n, for n of the width or more (but of 0) and where the
    result overflows. NULL in, NULL out.

    >>> _shift_left(3, 4, 32), _shift_left(0, 40, 32)
    (48, 0)
    """
    if x is None or n is None:
        return None
    if x < 0:
        raise ValueError(f"Out of Range: Cannot left-shift negative number {x}")
    if n < 0:
        raise ValueError(f"Out of Range: Cannot left-shift by negative number {n}")
    if n >= bits:
        if x == 0:
            return 0
        raise ValueError(f"Out of Range: Left-shift value {n} is out of range")
    if n and x >= 1 << (bits - n - 1):
        raise ValueError(f"Out of Range: Overflow in left shift ({x} << {n})")
    return x << n


def _shift_right(x, n, bits):
    """x >> n of `bits`-bit INTEGERs as DuckDB: 0 for n negative or of the
    width or more, else arithmetic (a negative x stays negative). NULL in,
    NULL out.

    >>> _shift_right(-8, 1, 32), _shift_right(-8, 32, 32)
    (-4, 0)
    """
    if x is None or n is None:
        return None
    return 0 if n < 0 or n >= bits else x >> n


def _bit_count(x, bits):
    """BIT_COUNT of a `bits`-bit INTEGER: the ones of its two's complement
    (-1 of an INTEGER: 32). NULL in, NULL out.

    >>> _bit_count(5, 32), _bit_count(-1, 8)
    (2, 8)
    """
    return None if x is None else bin(x & ((1 << bits) - 1)).count("1")


def _exp(x):
    """EXP as DuckDB: inf beyond the doubles."""
    try:
        return math.exp(x) if x == x else x
    except OverflowError:
        return math.inf


def _power(x, y):
    """POWER(x, y) (and x ** y, x ^ y) as DuckDB's C pow: a DOUBLE; ±inf
    beyond the doubles and for 0 to a negative power (-inf only for -0.0
    to an odd one). A negative base to a fractional power is NaN in
    DuckDB: refused (an error), as a NaN compares unlike DuckDB's."""
    try:
        out = math.pow(x, y)
        return out if out == out else math.nan  # of a NaN operand
    except OverflowError:
        odd = y % 2 == 1
        return -math.inf if x < 0 and odd else math.inf
    except ValueError:
        if x == 0:
            odd = y % 2 == 1
            return math.copysign(math.inf, x) if odd else math.inf
        raise ValueError(
            f"POWER({x!r}, {y!r}) is NaN (a negative number to a fractional "
            "power): not supported"
        ) from None


def _overlay(string, r, start, n):
    """OVERLAY(string PLACING r FROM start FOR n) as DuckDB: the characters
    before `start` (1-based; none for start <= 1), r, then those from
    start + n on (from the first where that is <= 1); n < 0 stands for r's
    length, as does a missing FOR."""
    if n < 0:
        n = len(r)
    return string[: max(start - 1, 0)] + r + string[max(start - 1 + n, 0) :]


def _lpad(string, width, fill):
    """LPAD as DuckDB: `string` cut or padded on the left with `fill`
    (repeated) to `width` characters; an error when padding is needed and
    `fill` is empty."""
    if width <= len(string):
        return string[: max(width, 0)]
    if not fill:
        raise ValueError("Insufficient padding in LPAD")
    missing = width - len(string)
    return (fill * (missing // len(fill) + 1))[:missing] + string


def _rpad(string, width, fill):
    """RPAD as DuckDB, as `_lpad` on the right."""
    if width <= len(string):
        return string[: max(width, 0)]
    if not fill:
        raise ValueError("Insufficient padding in RPAD")
    missing = width - len(string)
    return string + (fill * (missing // len(fill) + 1))[:missing]


def _repeat(string, count):
    """REPEAT as DuckDB: '' for a count below 1; an error beyond DuckDB's
    largest string (4294967295 bytes)."""
    if count > 0 and len(string) * count > 1 << 30:
        size = len(string.encode()) * count
        if size > 4294967295:
            raise ValueError(f"Cannot create a string of size: '{size}'")
    return string * count


def _split_part(string, separator, index):
    """SPLIT_PART as DuckDB: the index-th part (1-based; negative from the
    end), '' beyond them or at 0; an empty separator splits into
    characters."""
    parts = string.split(separator) if separator else list(string)
    if index > 0:
        return parts[index - 1] if index <= len(parts) else ""
    if index < 0:
        return parts[index] if -index <= len(parts) else ""
    return ""


def _split_count(string, separator):
    """LEN(STRING_SPLIT(s, sep)) as DuckDB: the parts, one of ''; an empty
    separator splits into characters."""
    if separator:
        return string.count(separator) + 1
    return len(string) or 1


def _printf_fixed(x, spec):
    """PRINTF's %f of a double as C's printf (Python's % formatting); from
    1e30 on DuckDB's digits stray from the exact ones C prints: an error."""
    if -1e30 < x < 1e30 or x != x or x - x != 0:
        return spec % x
    raise ValueError(f"PRINTF {spec} of {x!r} (1e30 or more) is not supported")


def _yearweek(date):
    """YEARWEEK(d) as DuckDB: the ISO year * 100 + the ISO week."""
    year, week, _ = date.isocalendar()
    return year * 100 + week


def _millisecond(moment):
    """EXTRACT(millisecond …) as DuckDB: the seconds with their fraction, in
    whole milliseconds."""
    return moment.second * 1000 + moment.microsecond // 1000


def _microsecond(moment):
    """EXTRACT(microsecond …) as DuckDB: the seconds with their fraction, in
    microseconds."""
    return moment.second * 1000000 + moment.microsecond


def _time_bucket(seconds, months, moment):
    """TIME_BUCKET(width, t) as DuckDB: the start of the bucket of `width`
    (`seconds`, or `months`) holding t, buckets counted from 2000-01-03, a
    Monday (of months: from 2000-01-01); of a DATE the date of its
    midnight's bucket."""
    is_date = type(moment) is datetime.date
    if months:
        index = (moment.year - 2000) * 12 + moment.month - 1
        year, month = divmod(index - index % months, 12)
        bucket = datetime.datetime(2000 + year, month + 1, 1)
    else:
        t = datetime.datetime.combine(moment, datetime.time()) if is_date else moment
        width = datetime.timedelta(seconds=seconds)
        origin = datetime.datetime(2000, 1, 3)
        bucket = origin + (t - origin) // width * width
    return bucket.date() if is_date else bucket


def _like_match(string, pattern):
    """`string LIKE pattern` for a pattern computed per row: `%` any run of
    characters, `_` one, every other character itself (DuckDB has no
    default escape). The wildcard walk: on a mismatch, the last `%` takes
    one more character; no regex is built per row."""
    s = p = 0
    star = taken = -1
    n, m = len(string), len(pattern)
    while s < n:
        if p < m and pattern[p] == "%":
            star, taken, p = p, s, p + 1
        elif p < m and (pattern[p] == "_" or pattern[p] == string[s]):
            s, p = s + 1, p + 1
        elif star >= 0:
            taken += 1
            s, p = taken, star + 1
        else:
            return False
    while p < m and pattern[p] == "%":
        p += 1
    return p == m


def _ascii(string):
    """ASCII(s) as DuckDB: the code point of the first character, 0 of ''."""
    return ord(string[0]) if string else 0


def _unicode(string):
    """UNICODE(s) and ORD(s) as DuckDB: the code point of the first
    character, -1 of ''."""
    return ord(string[0]) if string else -1


def _chr(code):
    """CHR(n) as DuckDB: the character of code point n; an error outside
    Unicode's code points and for surrogates, which are no characters."""
    if not 0 <= code <= 0x10FFFF or 0xD800 <= code <= 0xDFFF:
        raise ValueError(f"Invalid UTF8 Codepoint {code}")
    return chr(code)


def _digest(name, string):
    """MD5(s), SHA256(s) as DuckDB: the digest `name` of the text's UTF-8
    bytes in lower-case hex."""
    import hashlib

    return hashlib.new(name, string.encode()).hexdigest()


def _reverse(string):
    """REVERSE as DuckDB, which reverses the bytes of ASCII text and the
    grapheme clusters of other text (a letter and its accents move
    together): reversed by characters where no two can join into one
    cluster (ASCII, Latin, Greek, Cyrillic, CJK, kana, Hangul syllables,
    common punctuation), an error elsewhere (combining marks, jamo, emoji
    sequences, CR LF, ...)."""
    if string.isascii():
        return string[::-1]
    for ch in string:
        code = ord(ch)
        if 0x20 <= code < 0x7F or code in (0x09, 0x0A):
            continue
        for low, high in (
            (0x00A0, 0x024F),  # Latin-1, Latin Extended-A and B
            (0x0370, 0x0482),  # Greek, Cyrillic (before its combining marks)
            (0x048A, 0x04FF),
            (0x2010, 0x2027),  # general punctuation
            (0x2030, 0x205E),
            (0x20A0, 0x20BF),  # currency signs
            (0x3041, 0x3096),  # hiragana
            (0x30A1, 0x30FA),  # katakana
            (0x4E00, 0x9FFF),  # CJK ideographs
            (0xAC00, 0xD7A3),  # Hangul syllables (jamo join them)
            (0xFF01, 0xFF5E),  # fullwidth forms
        ):
            if low <= code <= high:
                break
        else:
            raise ValueError(
                f"REVERSE of {string!r}: text whose characters may join into "
                "one grapheme cluster is not supported"
            )
    return string[::-1]


def _date_diff(unit, start, end):
    """DATE_DIFF(unit, start, end) as DuckDB: the number of unit boundaries
    crossed from start to end (negative backwards); 'week' counts whole
    weeks of days (toward zero), hours, minutes and seconds count from
    TIMESTAMPs."""
    if unit == "year":
        return end.year - start.year
    if unit == "quarter":
        return (
            (end.year - start.year) * 4 + (end.month - 1) // 3 - (start.month - 1) // 3
        )
    if unit == "month":
        return (end.year - start.year) * 12 + end.month - start.month
    days = end.toordinal() - start.toordinal()
    if unit == "day":
        return days
    if unit == "week":
        return days // 7 if days >= 0 else -(-days // 7)
    hours = days * 24 + end.hour - start.hour
    if unit == "hour":
        return hours
    minutes = hours * 60 + end.minute - start.minute
    if unit == "minute":
        return minutes
    return minutes * 60 + end.second - start.second


def _date_sub(unit, start, end):
    """DATE_SUB(unit, start, end) as DuckDB: the number of whole units from
    start to end (toward zero, negative backwards), a DATE at its midnight.
    Months count whole months of the calendar: from the 31st to the last day
    of a shorter month is one, from the 15th to the 14th of the next none;
    quarters and years are whole months over 3 and 12."""
    start, end = (
        (
            v
            if v.__class__ is datetime.datetime
            else datetime.datetime(v.year, v.month, v.day)
        )
        for v in (start, end)
    )
    if unit in ("year", "quarter", "month"):
        sign, early, late = (1, start, end) if start <= end else (-1, end, start)
        last = _last_day(late).day
        if late.day == last and early.day > last:  # to the end of a shorter month
            early = early.replace(day=last)
        months = (late.year - early.year) * 12 + late.month - early.month
        if (late.day, late.time()) < (early.day, early.time()):
            months -= 1
        return sign * (months // {"year": 12, "quarter": 3, "month": 1}[unit])
    step = {"week": 604800, "day": 86400, "hour": 3600, "minute": 60, "second": 1}[unit]
    micros = (end - start) // datetime.timedelta(microseconds=1)
    whole = abs(micros) // (step * 1000000)
    return whole if micros >= 0 else -whole


def _last_day(date):
    """LAST_DAY of a DATE or TIMESTAMP: the last day of its month, a DATE."""
    if date.month == 12:
        return datetime.date(date.year, 12, 31)
    return datetime.date(date.year, date.month + 1, 1) - datetime.timedelta(days=1)


def _make_date(year, month, day):
    """MAKE_DATE(year, month, day): an error for a day that does not exist,
    as in DuckDB, and for years DuckDB has but Python's dates do not (before
    1 and after 9999)."""
    try:
        return datetime.date(year, month, day)
    except (ValueError, OverflowError):
        raise ValueError(
            f"Date out of range: {year}-{month}-{day} (or outside the years 1 to 9999)"
        ) from None


def _from_epoch(count, micros):
    """EPOCH_MS(ms), MAKE_TIMESTAMP(µs): the TIMESTAMP `count` units of
    `micros` microseconds after 1970-01-01 (an error outside the years
    Python's datetimes hold)."""
    try:
        return datetime.datetime(1970, 1, 1) + datetime.timedelta(
            microseconds=count * micros
        )
    except OverflowError:
        raise ValueError(f"timestamp out of range: {count} after 1970-01-01") from None


def _string_at(s, i):
    """s[i] (ARRAY_EXTRACT) of a string as DuckDB's: its i-th character
    counting from 1, or from the end for a negative i; '' past either end
    and for 0."""
    if 0 < i <= len(s):
        return s[i - 1]
    if 0 < -i <= len(s):
        return s[i]
    return ""


def _string_slice(s, a, b):
    """s[a:b] (ARRAY_SLICE) of a string as DuckDB's: its characters a to b,
    both included, counting from 1, a negative bound from the end (-1 the
    last); '' where none lie between."""
    n = len(s)
    if a < 0:
        a += n + 1
    if b < 0:
        b += n + 1
    return s[max(a, 1) - 1 : max(b, 0)]


def _levenshtein(a, b):
    """LEVENSHTEIN(a, b) as DuckDB's: the fewest insertions, deletions and
    substitutions of bytes of their UTF-8 that turn one into the other."""
    a, b = a.encode(), b.encode()
    if len(a) < len(b):
        a, b = b, a
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        last, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            last, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, last + (x != y))
    return row[-1]


def _hamming(a, b):
    """HAMMING(a, b) (MISMATCHES) as DuckDB's: the positions where the
    UTF-8 bytes of two strings of as many bytes differ; an error for
    strings of other lengths or empty ones."""
    a, b = a.encode(), b.encode()
    if len(a) != len(b) or not a:
        raise ValueError(
            "Mismatch Function: Strings must be of equal length and not empty"
        )
    return sum(x != y for x, y in zip(a, b))


def _jaccard(a, b):
    """JACCARD(a, b) as DuckDB's: the share of the distinct bytes of either
    string that both have; an error for an empty one."""
    a, b = set(a.encode()), set(b.encode())
    if not a or not b:
        raise ValueError("Jaccard Function: An argument too short!")
    return len(a & b) / len(a | b)


def _local_time(t, zone):
    """t AT TIME ZONE zone of a TIMESTAMPTZ: the TIMESTAMP its clocks show
    there (zone an IANA name, checked by the compiler; 'UTC' without the
    rules)."""
    if zone == "UTC":
        return t.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    import zoneinfo

    return t.astimezone(zoneinfo.ZoneInfo(zone)).replace(tzinfo=None)


def _epoch_instant(seconds):
    """TO_TIMESTAMP(seconds): the TIMESTAMPTZ that many seconds after
    1970-01-01 UTC, to the microsecond nearest seconds × 10^6 as a DOUBLE
    (ties to even), as DuckDB's."""
    try:
        return datetime.datetime(
            1970, 1, 1, tzinfo=datetime.timezone.utc
        ) + datetime.timedelta(microseconds=seconds * 1_000_000)
    except OverflowError:
        raise ValueError(f"timestamp out of range: {seconds} seconds") from None


def _epoch_units(t, per_second):
    """EPOCH_MS/EPOCH_US/EPOCH_NS(t): the whole units since 1970-01-01 (of
    `per_second` per second), rounded down as DuckDB's; of a TIMESTAMPTZ
    the instant's."""
    if t.tzinfo is not None:
        t = t.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    micros = (t - datetime.datetime(1970, 1, 1)) // datetime.timedelta(microseconds=1)
    return micros * per_second // 1_000_000


def _single(v):
    """The 4-byte float nearest the number `v` (ties to even, subnormals
    down to 2^-149, the sign of zero kept), as C's conversion gives it;
    None beyond that range."""
    if not v or v != v or v == math.inf or v == -math.inf:
        return float(v)  # (0, NaN, infinities: themselves)
    try:
        m, e = math.frexp(v)
    except OverflowError:  # an int beyond the doubles
        return None
    if e > 128:
        return None
    bits = min(24, e + 149)  # 24 bits; fewer below 2^-126, down to 2^-149
    single = math.ldexp(round(math.ldexp(m, bits)), e - bits)
    if abs(single) > 3.4028234663852886e38:
        return None
    return math.copysign(single, v)


def _tupled(row):
    """A row given as another sequence (a list), as a tuple. A str, bytes,
    mapping or set is refused: its items are not the row's values in
    column order (a dict's would be its keys)."""
    if type(row) is list:
        return tuple(row)
    if not isinstance(row, (str, bytes, bytearray, Mapping, Set)):
        try:
            return tuple(row)
        except TypeError:
            pass
    raise TypeError(
        "a row is a tuple (or list) of its relation's values in the order of "
        f"View.RELATIONS, not a {type(row).__name__}: {row!r}"
    )


def _as_stored(relation, row, arity, singles, zoned):
    """`row` with its values as DuckDB stores them: the numbers in its REAL
    (FLOAT) columns at `singles` rounded to the nearest 4-byte float (ties
    to even, subnormals too; an error beyond that range, as DuckDB's), the
    datetimes in its TIMESTAMPTZ columns at `zoned` as the same instants in
    UTC (an error for one without a time zone, which DuckDB would read in
    the session's). Anything else (a row of another length, a value of
    another type) is left to the view's checks, which name it as it was
    given."""
    if type(row) is not tuple:
        try:
            row = _tupled(row)
        except TypeError:
            return row  # not a row: the view's checks say so
    if len(row) != arity:
        return row
    values = None
    for i in singles:
        v = row[i]
        if not (v.__class__ is float or v.__class__ is int) or not v:
            continue  # (a zero is itself)
        single = _single(v)
        if single is None:
            raise ViewError(
                f"{relation}: {v!r} is out of the range of a REAL (4-byte "
                "float) column"
            )
        if values is None:
            values = list(row)
        values[i] = single
    for i in zoned:
        v = row[i]
        if v.__class__ is not datetime.datetime or v.tzinfo is datetime.timezone.utc:
            continue
        if v.utcoffset() is None:
            raise ViewError(
                f"{relation}: {v!r} has no time zone; a TIMESTAMPTZ column takes "
                "a datetime with one (tzinfo=datetime.timezone.utc, …)"
            )
        if values is None:
            values = list(row)
        values[i] = v.astimezone(datetime.timezone.utc)
    return row if values is None else tuple(values)


# the parts EXTRACT takes of a difference of TIMESTAMPs (`_difference_part`)
DIFFERENCE_PARTS = ("day", "hour", "minute", "second", "millisecond", "microsecond")


def _difference_part(delta, part):
    """EXTRACT(part FROM t1 - t2) of two TIMESTAMPs, as DuckDB holds their
    difference: whole days and the microseconds left, each with the sign of
    the whole (an hour is of that rest, not of a day of 24 hours), the
    milliseconds and microseconds with the seconds'."""
    micros = (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds
    days, rest = divmod(abs(micros), 86_400_000_000)
    if part == "day":
        value = days
    elif part == "hour":
        value = rest // 3_600_000_000
    elif part == "minute":
        value = rest // 60_000_000 % 60
    elif part == "second":
        value = rest // 1_000_000 % 60
    elif part == "millisecond":
        value = rest // 1_000 % 60_000
    else:
        value = rest % 60_000_000
    return -value if micros < 0 else value


def _make_timestamp(year, month, day, hour, minute, second):
    """MAKE_TIMESTAMP(y, m, d, h, min, s): s with its fraction rounded to
    the microsecond; an error for a day or a time that does not exist, as
    DuckDB's (also for years outside 1 to 9999)."""
    date = _make_date(year, month, day)
    if not (0 <= hour < 24 and 0 <= minute < 60 and 0 <= second < 60):
        raise ValueError(f"Time out of range: {hour}:{minute}:{second}")
    return datetime.datetime(
        date.year, date.month, date.day, hour, minute
    ) + datetime.timedelta(microseconds=round(second * 1_000_000))


def _plain_number(body):
    """(sign, digits, fraction digits) of `body` when it is
    [+-]digits[.digits] in ASCII (either part may be empty, not both), else
    None."""
    sign = body[:1] if body[:1] in ("+", "-") else ""
    whole, _, fraction = body[len(sign) :].partition(".")
    if not (whole or fraction) or not body.isascii():
        return None
    for part in (whole, fraction):
        if part and not part.isdigit():
            return None
    return sign, whole, fraction


def _maybe_number(body, letters):
    """Whether DuckDB may read `body` as a number spelled otherwise than
    `_plain_number` (hex, binary, exponents, '_' between digits): it is
    ASCII digits, `letters`, '_', '.', '+' and '-', with a digit among
    them."""
    if not body.isascii() or not any(c.isdigit() for c in body):
        return False
    return all(c.isdigit() or c in letters or c in "_.+-" for c in body)


def _int_of_text(text, bits):
    """CAST(text AS INTEGER) (an integer of `bits` bits) as DuckDB reads it:
    the value of [+-]digits[.digits] between white space (' \t\n\v\f\r'),
    its fraction rounded half away from zero, or None where DuckDB cannot
    read one (or it is out of range); an error for spellings DuckDB reads
    that are not supported here (hex, binary, exponents, '_')."""
    body = text.strip(" \t\n\v\f\r")
    parts = _plain_number(body)
    if parts is None:
        if _maybe_number(body, "abcdefABCDEFxX"):
            raise ValueError(f"CAST of {text!r} to an integer is not supported")
        return None
    sign, whole, fraction = parts
    value = int(whole or "0") + (1 if fraction[:1] >= "5" else 0)
    value = -value if sign == "-" else value
    return value if -(1 << (bits - 1)) <= value < 1 << (bits - 1) else None


def _text_to_int(text, bits):
    """CAST(text AS INTEGER/BIGINT/...): an error where DuckDB has one."""
    value = _int_of_text(text, bits)
    if value is None:
        raise ValueError(f"Could not convert string {text!r} to INT{bits}")
    return value


def _is_int_text(text, bits):
    """Whether TRY_CAST(text AS INTEGER/...) is not NULL."""
    return _int_of_text(text, bits) is not None


def _float_of_text(text):
    """CAST(text AS DOUBLE) as DuckDB reads it: the value of
    [+-]digits[.digits][e[+-]digits] between white space (correctly
    rounded, ±inf beyond the doubles) and of inf or infinity (any case), or
    None where DuckDB cannot read one; an error for a NaN (it compares
    unlike DuckDB's) and for spellings not supported here ('_' between
    digits, nan(…))."""
    body = text.strip(" \t\n\v\f\r")
    mantissa, e, exponent = body.replace("E", "e").partition("e")
    digits = exponent[1:] if exponent[:1] in ("+", "-") else exponent
    if _plain_number(mantissa) is not None and (
        not e or (digits.isascii() and digits.isdigit())
    ):
        return float(body)
    word = body.lstrip("+-").lower()
    signs = len(body) - len(word)
    if signs <= 1 and word in ("inf", "infinity"):
        return -math.inf if body[:1] == "-" else math.inf
    if word.startswith(("inf", "nan")) and (signs > 1 or word[:4] in ("nan", "nan(")):
        raise ValueError(f"CAST of {text!r} to DOUBLE is not supported (or NaN)")
    if _maybe_number(body, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"):
        raise ValueError(f"CAST of {text!r} to DOUBLE is not supported")
    return None


def _text_to_float(text):
    """CAST(text AS DOUBLE): an error where DuckDB has one."""
    value = _float_of_text(text)
    if value is None:
        raise ValueError(f"Could not convert string {text!r} to DOUBLE")
    return value


def _is_float_text(text):
    """Whether TRY_CAST(text AS DOUBLE) is not NULL."""
    return _float_of_text(text) is not None


def _date_of_text(text):
    """CAST(text AS DATE) as DuckDB reads it: the date of year, month and
    day (digits: any number of them, then one or two, one or two) with the
    same separator ('-', '/', ' ' or '\\') twice, between white space, and
    of 'epoch'; None where DuckDB cannot read a date (or the day does not
    exist); an error for what DuckDB reads that is not supported here (a
    time after the date, '(BC)', negative years, years before 1 or after
    9999, infinity)."""
    body = text.strip(" \t\n\v\f\r")
    negative = body[:1] == "-"
    rest = body[1:] if negative else body
    fields, separator, pos = [], None, 0
    while len(fields) < 3:
        start = pos
        while pos < len(rest) and "0" <= rest[pos] <= "9":
            pos += 1
        fields.append(rest[start:pos])
        if len(fields) < 3:
            if pos == len(rest) or rest[pos] != (separator or rest[pos]):
                break
            separator = rest[pos]
            if separator not in ("-", "/", " ", "\\"):
                break
            pos += 1
    year = fields[0]
    if not year:  # no digit first: a word
        word = rest.lower()
        if word == "epoch":
            return datetime.date(1970, 1, 1)
        if word in ("inf", "infinity"):
            raise ValueError(f"CAST of {text!r} to DATE is infinite: not supported")
        return None
    if len(fields) < 3 or not all(1 <= len(f) <= 2 for f in fields[1:]):
        return None
    if pos < len(rest) or negative or not 1 <= int(year) <= 9999:
        raise ValueError(f"CAST of {text!r} to DATE is not supported")
    try:
        return datetime.date(int(year), int(fields[1]), int(fields[2]))
    except ValueError:
        return None


def _timestamp_of_text(text):
    """CAST(text AS TIMESTAMP) as DuckDB reads it: after white space, a date
    as `_date_of_text` reads one, then nothing (midnight) or white space or
    a 'T' and H[H…]:[M[M][:[S[S][.fraction]]]] (the fraction cut to
    microseconds; 24:00:00 the next midnight), then white space or a 'Z';
    None where DuckDB has NULL; an error for a time zone or an offset
    (which a TIMESTAMP here does not take), for spellings DuckDB reads that
    this does not (a space after the 'T', text after the time and a space)
    and where `_date_of_text` has one. Compared with DuckDB's TRY_CAST on
    random spellings: every value and NULL agrees."""
    spaces = " \t\n\v\f\r"
    body = text.lstrip(spaces)
    if body.rstrip(spaces).lower() == "epoch":
        return datetime.datetime(1970, 1, 1)
    # the date: digits, then one or two twice, after the same separator
    pos, lengths, separator = 1 if body[:1] == "-" else 0, [], None
    for field in range(3):
        start = pos
        while pos < len(body) and "0" <= body[pos] <= "9":
            pos += 1
        lengths.append(pos - start)
        if field < 2:
            if pos == len(body) or body[pos] not in (separator or "-/ \\"):
                break
            separator = body[pos]
            pos += 1
    if (
        len(lengths) < 3
        or not lengths[0]
        or not 1 <= min(lengths[1:]) <= max(lengths[1:]) <= 2
    ):
        _date_of_text(body)  # an error where DuckDB reads what is not supported
        return None
    date, rest = _date_of_text(body[:pos]), body[pos:]
    if date is None or not rest:
        return (
            None if date is None else datetime.datetime(date.year, date.month, date.day)
        )
    unread = f"CAST of {text!r} to TIMESTAMP: this spelling is not supported"
    if rest[0] == "T":
        rest = rest[1:]
        if rest[:1] in tuple(spaces):
            raise ValueError(unread)  # DuckDB reads some of these
    elif rest[0] in spaces:
        rest = rest.lstrip(spaces)
        if not rest:
            return None  # white space after a date alone
    else:
        return None
    # the time: hours:minutes[:seconds[.fraction]]
    numbers, pos = [], 0
    for mark in ("", ":", ":", "."):
        if mark and rest[pos : pos + 1] != mark:
            break
        start = pos = pos + len(mark)
        while pos < len(rest) and "0" <= rest[pos] <= "9":
            pos += 1
        numbers.append(rest[start:pos])
    hours, minutes, seconds, fraction = (numbers + ["", "", ""])[:4]
    if not hours or len(numbers) < 2 or len(minutes) > 2 or len(seconds) > 2:
        return None  # no ':' after the hours, or three digits
    if (not minutes and len(numbers) > 2) or (not seconds and len(numbers) > 3):
        return None  # a field left empty before another ('3::4'; '3:' is 3:00)
    rest = rest[pos:]
    if rest.rstrip(spaces) not in ("", "Z"):
        if rest.lstrip(spaces)[:1] in ("+", "-") or rest.strip(spaces).isalpha():
            raise ValueError(
                f"CAST of {text!r} to TIMESTAMP: a time zone is not supported"
            )
        if rest[0] in spaces:  # DuckDB reads some text after a time and a space
            raise ValueError(unread)
        return None
    h, m, s = int(hours), int(minutes or 0), int(seconds or 0)
    micros = int((fraction + "000000")[:6])
    if h == 24 and m == s == micros == 0:
        h, date = 0, date + datetime.timedelta(days=1)
    if h > 23 or m > 59 or s > 59:
        return None
    return datetime.datetime(date.year, date.month, date.day, h, m, s, micros)


def _strptime_of(text, fmt):
    """STRPTIME(text, fmt) as DuckDB parses it: white space skipped at both
    ends, a run of spaces in `fmt` matching one or more in `text`, other
    characters matching themselves; each number of one digit up to its
    specifier's width (%Y 4, %j 3, %f 6 and %g 3 scaled to microseconds,
    others 2) within its range; month and day names (%b, %B, %a, %A: the
    day names skipped) and AM/PM (%p) in any case. None where DuckDB cannot
    parse it or the date does not exist (TRY_STRPTIME's NULL); an error for a
    year before 1, which DuckDB reads (BC) and a datetime does not hold.
    `fmt` was checked by the compiler (`STRPTIME_CODES` only, %j without
    a month or day)."""
    spaces = " \t\n\v\f\r"
    # a number's specifier -> (its most digits, least, greatest)
    limits = {"Y": (4, 0, 9999), "y": (2, 0, 99), "m": (2, 1, 12), "d": (2, 1, 31)}
    limits.update(j=(3, 1, 366), H=(2, 0, 23), I=(2, 1, 12), M=(2, 0, 59))
    limits.update(S=(2, 0, 59), f=(6, 0, 999999), g=(3, 0, 999))
    got = {"Y": 1900, "m": 1, "d": 1}
    pos, end, i = 0, len(text), 0
    while pos < end and text[pos] in spaces:
        pos += 1
    while i < len(fmt):
        c = fmt[i]
        if c in spaces:  # one or more spaces
            if pos >= end or text[pos] not in spaces:
                return None
            while pos < end and text[pos] in spaces:
                pos += 1
            while i < len(fmt) and fmt[i] in spaces:
                i += 1
            continue
        if c != "%" or fmt[i + 1] == "%":
            if pos >= end or text[pos] != c:
                return None
            pos += 1
            i += 2 if c == "%" else 1
            continue
        code = fmt[i + 1] if fmt[i + 1] != "-" else fmt[i + 2]
        i += 2 if fmt[i + 1] != "-" else 3
        if code in "bBaA":
            if code == "b":
                names = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug")
                names += ("sep", "oct", "nov", "dec")
            elif code == "B":
                names = ("january", "february", "march", "april", "may", "june")
                names += ("july", "august", "september", "october", "november")
                names += ("december",)
            elif code == "a":
                names = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
            else:
                names = ("sunday", "monday", "tuesday", "wednesday", "thursday")
                names += ("friday", "saturday")
            for n, name in enumerate(names):
                if text[pos : pos + len(name)].lower() == name:
                    pos += len(name)
                    if code in "bB":
                        got["m"] = n + 1
                    break
            else:
                return None
            continue
        if code == "p":
            half = text[pos : pos + 2].upper()
            if half not in ("AM", "PM"):
                return None
            got["p"] = half
            pos += 2
            continue
        width, low, high = limits[code]
        start, stop = pos, min(end, pos + width)
        while pos < stop and "0" <= text[pos] <= "9":
            pos += 1
        if pos == start:
            return None
        number = int(text[start:pos])
        if not low <= number <= high:
            return None
        if code in "fg":  # a fraction: its digits scaled to microseconds
            number *= 10 ** (width - (pos - start)) * (1000 if code == "g" else 1)
            code = "f"
        elif code == "y":
            code, number = "Y", number + (2000 if number < 69 else 1900)
        got[code] = number
    while pos < end and text[pos] in spaces:
        pos += 1
    if pos != end:
        return None
    hour = got.get("H", got.get("I", 0))
    if "p" in got:
        if hour > 12:  # (%H beside %p)
            return None
        hour = hour % 12 + (12 if got["p"] == "PM" else 0)
    if got["Y"] < 1:
        raise ValueError(f"STRPTIME: year {got['Y']} of {text!r} is not supported")
    try:
        if "j" in got:
            day = datetime.date(got["Y"], 1, 1) + datetime.timedelta(days=got["j"] - 1)
        else:
            day = datetime.date(got["Y"], got["m"], got["d"])
        minute, second, micro = got.get("M", 0), got.get("S", 0), got.get("f", 0)
        return datetime.datetime(
            day.year, day.month, day.day, hour, minute, second, micro
        )
    except (ValueError, OverflowError):
        return None


def _text_strptime(text, fmt):
    """STRPTIME(text, fmt): an error where DuckDB has one."""
    value = _strptime_of(text, fmt)
    if value is None:
        raise ValueError(
            f"Could not parse string {text!r} according to format specifier {fmt!r}"
        )
    return value


def _is_strptime_text(text, fmt):
    """Whether TRY_STRPTIME(text, fmt) is not NULL."""
    return _strptime_of(text, fmt) is not None


def _text_to_timestamp(text):
    """CAST(text AS TIMESTAMP): an error where DuckDB has one."""
    value = _timestamp_of_text(text)
    if value is None:
        raise ValueError(f"Could not convert string {text!r} to TIMESTAMP")
    return value


def _is_timestamp_text(text):
    """Whether TRY_CAST(text AS TIMESTAMP) is not NULL."""
    return _timestamp_of_text(text) is not None


def _text_to_date(text):
    """CAST(text AS DATE): an error where DuckDB has one."""
    value = _date_of_text(text)
    if value is None:
        raise ValueError(f"Could not convert string {text!r} to DATE")
    return value


def _is_date_text(text):
    """Whether TRY_CAST(text AS DATE) is not NULL."""
    return _date_of_text(text) is not None
