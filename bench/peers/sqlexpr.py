"""SQL expressions as Python, written for the baselines independently of the
code generator (`dynyan.compiler.render`).

The first-order IVM is the benchmark's second opinion on dynyan's results:
if it rendered expressions with dynyan's own renderer, a bug there (say,
LIKE always true) would be made twice and the two would still agree. This
module evaluates the same IR another way: every value expression is SQL
three-valued (None is NULL and propagates through each operator), every
condition evaluates to True, False or None and holds only when it is True;
LIKE always goes through a regular expression, division and remainder
follow DuckDB (x / 0 is ±inf, 0 / 0 NaN, x % 0 an error). The rendered
Python names only the environment's locals, `datetime` and this module's
helpers, and holds SQL values only as literals (`literal`).
"""

from __future__ import annotations

import calendar
import datetime
import decimal
import hashlib
import functools
import itertools
import operator
from fractions import Fraction
import math
import re
import struct
import unicodedata

from dynyan.compiler.frontend.types import DATE_PART_OPS, TIME_PART_OPS
from dynyan.compiler.ir import C_MATH, AggRef, InnerTest, Lit, Op, Ref, Var, ViewColumn
from dynyan.runtime import sqlfuncs

_LOCAL = re.compile(r"^[A-Za-z_]\w*(\[\d+\])?$")  # a local, or one subscript of it
_CONSTANT = re.compile(
    r"^(-?\d[\d.e+-]*|'[^'\\]*'|\"[^\"\\]*\"|True|False|None"
    r"|datetime\.date\(\d+, \d+, \d+\)|datetime\.datetime\([\d, ]+\))$"
)
_COMPARE = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_ARITH = {"add": "+", "sub": "-", "mul": "*"}


def literal(value) -> str:
    """Python source for a parsed SQL constant (refuses anything else)."""
    if value is None or isinstance(value, (bool, int, str)):
        return repr(value)
    if isinstance(value, float) and math.isfinite(value):
        return repr(value)
    if isinstance(value, (datetime.datetime, datetime.timedelta, datetime.time)):
        return repr(value)
    if isinstance(value, datetime.date):
        return f"datetime.date({value.year}, {value.month}, {value.day})"
    raise ValueError(f"no literal for {value!r}")


def like_regex(pattern: str) -> re.Pattern:
    """SQL LIKE as a regular expression: % any run, _ one character."""
    out = []
    for ch in pattern:
        out.append({"%": ".*", "_": "."}.get(ch) or re.escape(ch))
    return re.compile("".join(out), re.DOTALL)


def sql_div(a, b):
    """a / b as DuckDB computes it (NULL in, NULL out)."""
    if a is None or b is None:
        return None
    if b == 0:
        if a == 0 or a != a:
            return math.nan
        return math.inf if (a > 0) == (math.copysign(1.0, b) > 0) else -math.inf
    return a / b


def sql_intdiv(a, b):
    """a // b of integers, truncated toward zero; by zero an error."""
    if a is None or b is None:
        return None
    if b == 0:
        raise ZeroDivisionError("integer division by zero")
    return (
        int(a / b)
        if abs(a) < 2**52
        else (abs(a) // abs(b)) * (1 if (a < 0) == (b < 0) else -1)
    )


def sql_mod(a, b):
    """a % b with the sign of a; by zero an error, as in DuckDB."""
    if a is None or b is None:
        return None
    if b == 0:
        raise ZeroDivisionError("remainder by zero")
    return (
        math.fmod(a, b)
        if isinstance(a, float) or isinstance(b, float)
        else (abs(a) % abs(b) * (-1 if a < 0 else 1))
    )


def sql_add_months(d, months):
    """date + INTERVAL n MONTH: the same day, or the month's last day."""
    if d is None:
        return None
    month0 = d.month - 1 + months
    year = d.year + month0 // 12
    month = month0 % 12 + 1
    if month == 12:
        last = 31
    else:
        last = (datetime.date(year, month + 1, 1) - datetime.timedelta(days=1)).day
    if isinstance(d, datetime.datetime):
        return datetime.datetime.combine(
            datetime.date(year, month, min(d.day, last)), d.time()
        )
    return datetime.date(year, month, min(d.day, last))


def sql_round(x, digits, exact=None):
    """ROUND as DuckDB: the nearest multiple of 10^-digits, a tie away from
    zero (through Decimal, not the engine's float arithmetic). A DOUBLE is
    scaled in double arithmetic first, as DuckDB does; a DECIMAL (`exact`
    digits) is rounded as the decimal it stands for."""
    if x is None:
        return None
    if isinstance(x, float) and not math.isfinite(x):
        return x
    if isinstance(x, float) and exact is None:
        scaled = x * 10.0**digits if digits >= 0 else x / 10.0**-digits
        if not math.isfinite(scaled):
            return x
        with decimal.localcontext(decimal.Context(prec=400)):
            whole = decimal.Decimal(scaled).quantize(
                decimal.Decimal(1), rounding=decimal.ROUND_HALF_UP
            )
            return float(whole.scaleb(-digits))
    exact = decimal.Decimal(repr(x) if isinstance(x, float) else x)
    with decimal.localcontext(decimal.Context(prec=400)):
        quantum = decimal.Decimal(1).scaleb(-digits)
        rounded = (exact / quantum).quantize(
            decimal.Decimal(1), rounding=decimal.ROUND_HALF_UP
        ) * quantum
    return int(rounded) if isinstance(x, int) else float(rounded)


def sql_to_int(x, low=None, high=None):
    """CAST(number AS INTEGER) as DuckDB: a DOUBLE's exact binary value to
    the nearest integer, ties to even (a DECIMAL arrives rounded); outside
    the type's [low, high] a conversion error."""
    if x is None:
        return x
    if isinstance(x, bool):
        x = int(x)
    elif not isinstance(x, int):
        if math.isinf(x) or math.isnan(x):
            raise ValueError(f"CAST of {x} to an integer: out of range")
        x = round(Fraction(x))  # the exact binary value, ties to even
    if low is not None and (x < low or x > high):
        raise ValueError(f"CAST of {x} to an integer: out of range")
    return x


def sql_sqrt(x):
    """SQRT as DuckDB: NaN below zero."""
    if x is None:
        return None
    return math.sqrt(x) if x >= 0 else math.nan


def sql_substr(s, start, length=None):
    """SUBSTRING(s, start[, length]) as DuckDB: 1-based; a start below 1
    counts from the end when negative, and eats into the length at 0."""
    if s is None:
        return None
    n = len(s)
    if start > 0:
        begin = start - 1
    elif start == 0:
        begin = -1
    else:
        begin = n + start
    end = n if length is None else begin + length
    return s[max(begin, 0) : max(end, 0)]


def sql_extreme(largest: bool, *values):
    """GREATEST/LEAST: the largest (smallest) non-NULL value, NULL if none;
    NaN counts as larger than every number, as DuckDB orders it."""
    present = [v for v in values if v is not None]
    if not present:
        return None

    def rank(v):
        return (1, 0) if isinstance(v, float) and math.isnan(v) else (0, v)

    return (max if largest else min)(present, key=rank)


def sql_coalesce(*values):
    return next((v for v in values if v is not None), None)


def sql_date_part(part: str, d):
    if d is None:
        return None
    if part == "epoch":
        return (d - datetime.datetime(1970, 1, 1)).total_seconds()
    return {
        "year": d.year,
        "month": d.month,
        "day": d.day,
        "quarter": (d.month + 2) // 3,
        "dayofweek": (d.weekday() + 1) % 7,
        "dayofyear": d.timetuple().tm_yday,
        "week": d.isocalendar().week,
        "isodow": d.isoweekday(),
        "isoyear": d.isocalendar().year,
        "yearweek": d.isocalendar().year * 100 + d.isocalendar().week,
        "decade": d.year // 10,
        "century": (d.year - 1) // 100 + 1,
        "millennium": (d.year - 1) // 1000 + 1,
        "millisecond": getattr(d, "second", 0) * 1000
        + getattr(d, "microsecond", 0) // 1000,
        "microsecond": getattr(d, "second", 0) * 1000000 + getattr(d, "microsecond", 0),
        "hour": getattr(d, "hour", 0),
        "minute": getattr(d, "minute", 0),
        "second": getattr(d, "second", 0),
    }[part]


def sql_date_trunc(unit: str, d):
    """DATE_TRUNC of a DATE: the first day of the unit that holds it."""
    if d is None:
        return None
    if isinstance(d, datetime.datetime):
        kept = {"hour": 4, "minute": 5, "second": 6}.get(unit)
        if kept is None:
            return datetime.datetime.combine(
                sql_date_trunc(unit, d.date()), datetime.time()
            )
        parts = (d.year, d.month, d.day, d.hour, d.minute, d.second)
        return datetime.datetime(*parts[:kept])
    if unit == "week":
        return datetime.date.fromordinal(d.toordinal() - d.isocalendar().weekday + 1)
    first_month = {"year": 1, "quarter": (d.month + 2) // 3 * 3 - 2}.get(unit, d.month)
    day = d.day if unit == "day" else 1
    return datetime.date(d.year, first_month, day)


def sql_replace(s, old, new):
    if s is None or old is None or new is None:
        return None
    return new.join(s.split(old)) if old != "" else s


def _kept(s, n) -> int:
    """How many characters LEFT/RIGHT(s, n) keep: n, or all but -n."""
    return min(n if n >= 0 else max(len(s) + n, 0), len(s))


def sql_left(s, n):
    return None if s is None or n is None else s[: _kept(s, n)]


def sql_right(s, n):
    return None if s is None or n is None else s[len(s) - _kept(s, n) :]


def sql_strpos(s, part):
    if s is None or part is None:
        return None
    return s.index(part) + 1 if part in s else 0


def sql_to_str(v, scale=None):
    """CAST(v AS VARCHAR); `scale`: a DECIMAL's digits, all written."""
    if v is None:
        return None
    if scale is not None:
        text = "%.*f" % (scale, v)
        return "0" + text[2:] if text.startswith("-0") and float(text) == 0 else text
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, datetime.datetime):
        text = f"{v.year:04d}-{v.month:02d}-{v.day:02d} {v:%H:%M:%S}"
        return text + f".{v.microsecond:06d}".rstrip("0") if v.microsecond else text
    if isinstance(v, datetime.date):
        return f"{v.year:04d}-{v.month:02d}-{v.day:02d}"
    if isinstance(v, datetime.time):
        text = f"{v:%H:%M:%S}"
        return text + f".{v.microsecond:06d}".rstrip("0") if v.microsecond else text
    return repr(v) if isinstance(v, float) else str(v)


def sql_digest(name: str, text: str) -> str:
    """MD5 or SHA256 of the text's UTF-8 bytes, lower-case hex."""
    return hashlib.new(name, text.encode("utf-8")).hexdigest()


def sql_nan_rank(v):
    return (1, 0) if isinstance(v, float) and math.isnan(v) else (0, v)


def sql_exact_double(x, digits):
    """A DECIMAL computed in floats as the double nearest to the decimal of
    `digits` digits it stands for."""
    if not math.isfinite(x):
        return x
    return float(decimal.Decimal(x).quantize(decimal.Decimal(1).scaleb(-digits)))


def _signed_zero(value: float, like: float) -> float:
    """`value`, a zero taking the sign of `like` (C's ceil, floor, trunc)."""
    return math.copysign(0.0, like) if value == 0 else value


def sql_ceil_floor(up: bool, x, digits=None):
    """CEIL/FLOOR: of a DECIMAL (`digits`) exactly, through Decimal; of a
    DOUBLE as C does (-0.0 kept)."""
    if not math.isfinite(x):
        return x
    if digits is not None:
        exact = decimal.Decimal(x).quantize(decimal.Decimal(1).scaleb(-digits))
        rounding = decimal.ROUND_CEILING if up else decimal.ROUND_FLOOR
        return float(exact.to_integral_value(rounding=rounding)) + 0.0  # no -0
    return _signed_zero(float(math.ceil(x) if up else math.floor(x)), x)


def sql_trunc(x, digits, exact=None):
    """TRUNC(x, digits): an INTEGER or DECIMAL cut exactly (Decimal), a
    DOUBLE scaled in double arithmetic as DuckDB does (x as it is when that
    overflows)."""
    if isinstance(x, int):
        quantum = decimal.Decimal(1).scaleb(-min(digits, 0))
        return int(decimal.Decimal(x).quantize(quantum, rounding=decimal.ROUND_DOWN))
    if exact is not None:
        value = decimal.Decimal(x).quantize(decimal.Decimal(1).scaleb(-exact))
        quantum = decimal.Decimal(1).scaleb(-min(digits, exact))
        with decimal.localcontext(decimal.Context(prec=400)):
            return float(value.quantize(quantum, rounding=decimal.ROUND_DOWN)) + 0.0
    if not math.isfinite(x):
        return x
    scale = 10.0 ** abs(digits) if abs(digits) < 309 else math.inf
    scaled = x * scale if digits >= 0 else x / scale
    if math.isfinite(scaled):
        scaled = _signed_zero(float(math.trunc(scaled)), scaled)
    out = scaled / scale if digits >= 0 else scaled * scale
    return out if math.isfinite(out) else x


def sql_sign(x):
    return 0 if x == 0 or math.isnan(x) else (1 if x > 0 else -1)


def sql_logarithm(base: str, x):
    """LN, LOG10, LOG2: -inf at 0; a NaN (of a negative) refused."""
    if math.isnan(x):
        return x
    if x < 0:
        raise ValueError(f"the logarithm of {x} is NaN")
    if x == 0:
        return -math.inf
    return {"e": math.log, "10": math.log10, "2": math.log2}[base](float(x))


def sql_exp(x):
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


def sql_power(x, y):
    """POWER as C's pow; a negative base to a fractional power (NaN) refused."""
    if math.isnan(x) or math.isnan(y):
        return 1.0 if (x == 1 or y == 0) else math.nan
    odd = math.isfinite(y) and float(y).is_integer() and int(y) % 2 == 1
    if x < 0 and math.isfinite(x) and math.isfinite(y) and not float(y).is_integer():
        raise ValueError(f"POWER({x}, {y}) is NaN")
    if x == 0 and y < 0:
        return -math.inf if odd and math.copysign(1, x) < 0 else math.inf
    try:
        return math.pow(x, y)
    except OverflowError:
        return -math.inf if x < 0 and odd else math.inf


def sql_c_math(name, x):
    """CBRT … ATANH as C's: the poles and overflows checked before the
    call (±inf), NaN outside a function's domain refused."""
    if math.isnan(x):
        return math.nan
    if name == "cot":
        t = math.tan(x)
        return math.copysign(math.inf, t) if t == 0 else 1 / t
    if name == "atanh" and abs(x) == 1:
        return math.copysign(math.inf, x)
    if (name == "acosh" and x < 1) or (name == "atanh" and abs(x) > 1):
        raise ValueError(f"{name}({x}) is NaN")
    try:
        return getattr(math, name)(x)
    except OverflowError:
        return -math.inf if name == "sinh" and x < 0 else math.inf


def sql_printf_value(value, spec):
    """One PRINTF field as C's printf: fixed, exponent or general notation
    of a double by Python's format mini-language, integers and text padded."""
    m = re.fullmatch(r"%([-+ 0]*)(\d*)(?:\.(\d+))?([sdfeEgG])", spec)
    flags, width, precision, conv = m.groups()
    align = "<" if "-" in flags else ">"
    fill = "0" if "0" in flags and "-" not in flags and conv != "s" else ""
    sign = "+" if "+" in flags else (" " if " " in flags else "")
    if conv == "s":
        text = value if precision is None else value[: int(precision)]
        return f"{text:{align}{width or 0}}"
    pad = "0" + width if fill else align + (width or "")
    if conv == "d":
        return format(value, f"{sign}{pad}d")
    digits = "6" if precision is None else precision
    return format(value, f"{sign}{pad}.{digits}{conv}")


def sql_printf_fixed(value, spec):
    if math.isfinite(value) and abs(value) >= 1e30:
        raise ValueError(f"PRINTF {spec} of {value}: not supported")
    return sql_printf_value(value, spec)


def sql_signbit(x):
    return str(float(x)).startswith("-")


def sql_even(x):
    """EVEN: the even integers either side of x, the one away from zero."""
    if not math.isfinite(x):
        return x
    half = x / 2
    return float(2 * (math.ceil(half) if x >= 0 else math.floor(half)))


def sql_fdiv(x, y):
    """FDIV: x / y rounded down, in doubles; NaN refused."""
    q = _floored(x, y)
    if math.isnan(q):
        raise ValueError(f"FDIV({x}, {y}) is NaN")
    return q


def sql_fmod(x, y):
    """FMOD as DuckDB: x - FDIV(x, y) * y in doubles; NaN refused."""
    out = x - _floored(x, y) * y
    if math.isnan(out):
        raise ValueError(f"FMOD({x}, {y}) is NaN")
    return out


def _floored(x, y):
    """x / y rounded down as C divides doubles (±inf, NaN kept)."""
    if y != 0:
        q = x / y
        return float(math.floor(q)) if math.isfinite(q) else q
    if x == 0 or math.isnan(x):
        return math.nan
    return math.inf if (x > 0) == (math.copysign(1, y) > 0) else -math.inf


def sql_shift_left(x, n, bits):
    """x << n of `bits`-bit INTEGERs: x * 2**n, an error as DuckDB's where x
    or n is negative, n is the width or more (x not 0) or it overflows."""
    if x < 0 or n < 0:
        raise ValueError(f"Out of Range: left-shift of {x} by {n}")
    if n >= bits:
        if x:
            raise ValueError(f"Out of Range: Left-shift value {n} is out of range")
        return 0
    if x * 2**n > 2 ** (bits - 1) - 1:
        raise ValueError(f"Out of Range: Overflow in left shift ({x} << {n})")
    return x * 2**n


def sql_shift_right(x, n, bits):
    """x >> n of `bits`-bit INTEGERs: floor(x / 2**n); 0 for n out of range."""
    return x // 2**n if 0 <= n < bits else 0


def sql_bit_count(x, bits):
    """The ones of x in `bits`-bit two's complement."""
    return format(x % 2**bits, "b").count("1")


def sql_factorial(n):
    if n < 0 or n > 33:
        raise ValueError(f"FACTORIAL({n}): out of range")
    out = 1
    for i in range(2, n + 1):
        out *= i
    return out


def sql_trim(left: bool, right: bool, s, chars):
    start, end = 0, len(s)
    while left and start < end and s[start] in chars:
        start += 1
    while right and end > start and s[end - 1] in chars:
        end -= 1
    return s[start:end]


def sql_pad(left: bool, s, width, fill):
    """LPAD/RPAD: cut to `width`, or padded with `fill` repeated."""
    if width <= 0:
        return ""
    if len(s) >= width:
        return s[:width]
    if fill == "":
        raise ValueError(f"Insufficient padding in {'LPAD' if left else 'RPAD'}")
    pad = "".join(itertools.islice(itertools.cycle(fill), width - len(s)))
    return pad + s if left else s + pad


def sql_to_single(x, cast=False):
    """A REAL: the 4-byte float C's conversion gives; beyond their range
    ±inf (arithmetic) or an error (a CAST)."""
    try:
        return struct.unpack("f", struct.pack("f", x))[0]
    except OverflowError:
        if cast:
            raise ValueError(f"CAST of {x} to REAL is out of range") from None
        return math.copysign(math.inf, x)


def sql_real_text(x):
    """A REAL as VARCHAR: the shortest decimal whose 4-byte float is x's."""
    if not math.isfinite(x):
        return repr(x)
    for places in range(1, 18):
        text = f"{x:.{places}g}"
        if sql_to_single(float(text)) == x:
            return repr(float(text))
    return repr(x)


def sql_overlay(s, r, start, n):
    """OVERLAY(s PLACING r FROM start FOR n): SUBSTRING(s, 1, start - 1) ||
    r || SUBSTRING(s, start + n), a negative n read as r's length."""
    n = len(r) if n < 0 else n
    head = s[: start - 1] if start > 1 else ""
    tail = s[start - 1 + n :] if start + n > 1 else s
    return head + r + tail


def sql_repeat(s, n):
    if n > 0 and len(s.encode()) * n > 4294967295:
        raise ValueError("string too large for DuckDB")
    return "".join([s] * max(n, 0))


def sql_split_part(s, separator, index):
    parts = list(s) if separator == "" else s.split(separator)
    if index == 0 or abs(index) > len(parts):
        return ""
    return parts[index - 1] if index > 0 else parts[len(parts) + index]


_JOINING = re.compile(
    "[\u1100-\u11ff\ua960-\ua97f\ud7b0-\ud7ff\U0001f1e6-\U0001f1ff"
    "\u0d4e\u0e33\u0eb3\r\u200d\u200c]"
)


def sql_time_bucket(seconds, months, value):
    """TIME_BUCKET as DuckDB, in microseconds from its origin (2000-01-03;
    of months, month numbers from 2000-01); a DATE's bucket is a DATE."""
    day = isinstance(value, datetime.date) and not isinstance(value, datetime.datetime)
    if months:
        n = value.year * 12 + value.month - 1 - 2000 * 12
        n -= n % months
        out = datetime.datetime(2000 + n // 12, n % 12 + 1, 1)
    else:
        at = datetime.datetime(value.year, value.month, value.day) if day else value
        since = (at - datetime.datetime(2000, 1, 3)) // datetime.timedelta(
            microseconds=1
        )
        width = seconds * 1_000_000
        out = datetime.datetime(2000, 1, 3) + datetime.timedelta(
            microseconds=since - since % width
        )
    return out.date() if day else out


def sql_trig(name, *args):
    """SIN, COS, …, DEGREES through C's functions; DuckDB's NaN outside a
    function's domain (ASIN(2), SIN(inf)) is refused, as elsewhere."""
    if math.nan in args or any(a != a for a in args):
        return math.nan
    try:
        return getattr(math, name)(*args)
    except ValueError:
        raise ValueError(f"{name}{args}: NaN, not supported") from None


def sql_chr(n):
    """CHR as DuckDB: an error for a number that is no code point of a
    character."""
    if n < 0 or n > 0x10FFFF or 0xD800 <= n < 0xE000:
        raise ValueError(f"CHR({n}): not a Unicode character")
    return chr(n)


def sql_reverse(s):
    """REVERSE as DuckDB: ASCII by characters, other text by grapheme
    clusters (a character with the combining marks after it); refused where
    clusters need more of Unicode's rules (jamo, flags, joiners, CR LF,
    modifiers, unassigned or private characters)."""
    if s.isascii():
        return s[::-1]
    clusters = []
    for ch in s:
        kind = unicodedata.category(ch)
        if _JOINING.match(ch) or kind in ("Cf", "Cs", "Co", "Cn", "Sk", "Lm"):
            raise ValueError(f"REVERSE of {s!r} is not supported")
        if kind in ("Mn", "Me", "Mc") and clusters:
            clusters[-1] += ch
        else:
            clusters.append(ch)
    return "".join(reversed(clusters))


_EPOCH = datetime.datetime(1970, 1, 1)


def sql_date_diff(unit: str, start, end):
    """DATE_DIFF: unit boundaries crossed from start to end."""
    if unit in ("hour", "minute", "second"):
        step = datetime.timedelta(**{unit + "s": 1})
        return (end - _EPOCH) // step - (start - _EPOCH) // step
    months = {"year": 12, "quarter": 3, "month": 1}.get(unit)
    if months is not None:

        def index(d):
            return (d.year * 12 + d.month - 1) // months

        return index(end) - index(start)
    days = datetime.date(end.year, end.month, end.day) - datetime.date(
        start.year, start.month, start.day
    )
    return days.days if unit == "day" else int(days.days / 7)


def sql_last_day(d):
    return datetime.date(d.year, d.month, calendar.monthrange(d.year, d.month)[1])


def sql_make_date(year, month, day):
    if not 1 <= year <= 9999 or not 1 <= month <= 12:
        raise ValueError(f"no date {year}-{month}-{day}")
    if not 1 <= day <= calendar.monthrange(year, month)[1]:
        raise ValueError(f"no date {year}-{month}-{day}")
    return datetime.date(year, month, day)


_UNIX = datetime.datetime(1970, 1, 1)


def sql_from_epoch(count, micros):
    return _UNIX + datetime.timedelta(microseconds=count * micros)


def sql_epoch_instant(seconds):
    return _UNIX_UTC + datetime.timedelta(microseconds=seconds * 1_000_000)


_UNIX_UTC = _UNIX.replace(tzinfo=datetime.timezone.utc)


def sql_epoch_units(t, per_second):
    delta = t - _UNIX
    micros = (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds
    return micros * per_second // 1_000_000


def sql_difference_part(delta, part):
    """EXTRACT(part FROM t1 - t2): DuckDB's days and microseconds, each
    signed as the whole, the part read from them (truncating)."""
    total = (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds
    sign = -1 if total < 0 else 1
    days, rest = divmod(abs(total), 86_400_000_000)
    value = {
        "day": days,
        "hour": rest // 3_600_000_000,
        "minute": rest // 60_000_000 % 60,
        "second": rest // 1_000_000 % 60,
        "millisecond": rest // 1_000 % 60_000,
        "microsecond": rest % 60_000_000,
    }[part]
    return sign * value


def sql_make_timestamp(year, month, day, hour, minute, second):
    date = sql_make_date(year, month, day)
    if not (0 <= hour <= 23 and 0 <= minute <= 59 and 0 <= second < 60):
        raise ValueError(f"no time {hour}:{minute}:{second}")
    micros = round(second * 1_000_000)
    return datetime.datetime.combine(date, datetime.time(hour, minute)) + (
        datetime.timedelta(microseconds=micros)
    )


_DAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
_MONTHS = (
    "January February March April May June July August September October "
    "November December"
).split()

_SPACES = " \t\n\v\f\r"
_INT_TEXT = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?")
_FLOAT_TEXT = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")
_MAYBE_NUMBER = re.compile(r"[0-9A-Za-z_.+-]*[0-9][0-9A-Za-z_.+-]*")
_DATE_TEXT = re.compile(r"(-?)([0-9]+)([-/ \\])([0-9]*)(?:\3([0-9]*))?")


def sql_text_to_int(text, bits, try_cast=False):
    """CAST/TRY_CAST of a VARCHAR to an integer of `bits` bits: [+-]digits
    [.digits] rounded half away from zero; hex, binary, exponents and '_'
    refused (DuckDB reads them)."""
    body = text.strip(_SPACES)
    m = _INT_TEXT.fullmatch(body)
    value = None
    if m and (m.group(2) or m.group(3)):
        units = decimal.Decimal(f"{m.group(2) or 0}.{m.group(3) or 0}")
        value = int(units.quantize(decimal.Decimal(1), rounding=decimal.ROUND_HALF_UP))
        value = -value if m.group(1) == "-" else value
        if not -(2 ** (bits - 1)) <= value <= 2 ** (bits - 1) - 1:
            value = None
    elif _MAYBE_NUMBER.fullmatch(body) and re.fullmatch(r"[0-9a-fA-FxX_.+-]*", body):
        raise ValueError(f"CAST of {text!r} to an integer is not supported")
    if value is None and not try_cast:
        raise ValueError(f"cannot convert {text!r} to an integer")
    return value


def sql_text_to_float(text, try_cast=False):
    """CAST/TRY_CAST of a VARCHAR to DOUBLE; NaN and '_' refused."""
    body = text.strip(_SPACES)
    value = None
    if _FLOAT_TEXT.fullmatch(body):
        value = float(body)
    elif re.fullmatch(r"[+-]?(inf|infinity)", body, re.IGNORECASE):
        value = -math.inf if body.startswith("-") else math.inf
    elif (
        re.fullmatch(r"[+-]*nan(\(.*)?", body, re.IGNORECASE | re.DOTALL)
        or re.match(r"[+-]{2,}(inf|nan)", body, re.IGNORECASE)
        or _MAYBE_NUMBER.fullmatch(body)
    ):
        raise ValueError(f"CAST of {text!r} to DOUBLE is not supported")
    if value is None and not try_cast:
        raise ValueError(f"cannot convert {text!r} to DOUBLE")
    return value


_TIMESTAMP_TEXT = re.compile(
    r"(-?[0-9]+([-/ \\\\])[0-9]{1,2}\2[0-9]{1,2})(?![0-9])"
    r"(?:(?:T|[ \t\n\v\f\r]+)([0-9]+):(?:([0-9]{1,2})"
    r"(?::(?:([0-9]{1,2})(?:\.([0-9]*))?)?)?)?(?![0-9:])[ \t\n\v\f\r]*Z?[ \t\n\v\f\r]*)?"
)


_MONTH_NAMES = [datetime.date(2001, m, 1).strftime("%B").lower() for m in range(1, 13)]
_DAY_NAMES = [datetime.date(2001, 1, d).strftime("%A").lower() for d in range(1, 8)]
_STRPTIME_PARTS = {  # specifier -> its pattern, a number as many digits as it can
    **{c: rf"(?P<{c}>\d{{1,2}}+)" for c in "ymdHIMS"},
    "Y": r"(?P<Y>\d{1,4}+)",
    "j": r"(?P<j>\d{1,3}+)",
    "f": r"(?P<f>\d{1,6}+)",
    "g": r"(?P<g>\d{1,3}+)",
    "b": "(?P<b>" + "|".join(n[:3] for n in _MONTH_NAMES) + ")",
    "B": "(?P<B>" + "|".join(_MONTH_NAMES) + ")",
    "a": "(?:" + "|".join(n[:3] for n in _DAY_NAMES) + ")",
    "A": "(?:" + "|".join(_DAY_NAMES) + ")",
    "p": "(?P<p>am|pm)",
    "%": "%",
}


def sql_strptime(text, fmt, try_cast=False):
    """STRPTIME/TRY_STRPTIME with a format of the specifiers dynyan takes:
    the format as a regular expression without backtracking (each number
    as many digits as it can take, up to its width), white space around
    and between, then each field's range and the date checked."""
    pattern = [r"\s*"]
    for m in re.finditer(r"%-?(.)|(\s+)|(.)", fmt, re.S):
        code, space, char = m.groups()
        pattern.append(
            _STRPTIME_PARTS[code] if code else r"\s++" if space else re.escape(char)
        )
    found = re.fullmatch("".join(pattern) + r"\s*", text, re.I)
    value = None
    if found is not None:
        g = {k: v.lower() for k, v in found.groupdict().items() if v is not None}
        n = {k: int(v) for k, v in g.items() if v.isdigit()}
        year = n.get("Y", 1900)
        if "y" in n:
            year = n["y"] + (2000 if n["y"] < 69 else 1900)
        month = n.get("m", 1)
        if "b" in g:
            month = 1 + [name[:3] for name in _MONTH_NAMES].index(g["b"])
        if "B" in g:
            month = 1 + _MONTH_NAMES.index(g["B"])
        hour = n.get("H", n.get("I", 0))
        ok = 1 <= month <= 12 and 1 <= n.get("d", 1) <= 31 and hour <= 23
        ok = ok and n.get("M", 0) <= 59 and n.get("S", 0) <= 59
        ok = ok and ("I" not in n or 1 <= n["I"] <= 12)
        if "p" in g:  # a 12-hour clock's hour
            ok = ok and hour <= 12
            hour = hour % 12 + (12 if g["p"] == "pm" else 0)
        micros = int(g["f"].ljust(6, "0")) if "f" in g else 0
        micros += int(g["g"].ljust(3, "0")) * 1000 if "g" in g else 0
        if ok and year < 1:
            raise ValueError(f"STRPTIME: year {year} is not supported")
        try:
            if "j" in n:
                ok = ok and 1 <= n["j"] <= 366
                day = datetime.date(year, 1, 1) + datetime.timedelta(n["j"] - 1)
            else:
                day = datetime.date(year, month, n.get("d", 1))
            if ok:
                value = datetime.datetime.combine(day, datetime.time(hour))
                value += datetime.timedelta(
                    minutes=n.get("M", 0), seconds=n.get("S", 0), microseconds=micros
                )
        except (ValueError, OverflowError):
            pass
    if value is None and not try_cast:
        raise ValueError(f"Could not parse string {text!r} according to {fmt!r}")
    return value


def sql_string_at(s, i):
    """The i-th character from 1 (from the end for i < 0), else ''."""
    position = i - 1 if i > 0 else len(s) + i if i < 0 else -1
    return s[position] if 0 <= position < len(s) else ""


def sql_string_slice(s, a, b):
    """The characters from the a-th to the b-th, both counted as s[i]."""
    first = a if a >= 0 else len(s) + 1 + a
    last = b if b >= 0 else len(s) + 1 + b
    return "".join(s[i - 1] for i in range(max(first, 1), min(last, len(s)) + 1))


def sql_local_time(t, zone):
    """The wall clock of the instant t in the zone, without the zone."""
    import zoneinfo

    where = datetime.timezone.utc if zone == "UTC" else zoneinfo.ZoneInfo(zone)
    return t.astimezone(where).replace(tzinfo=None)


def sql_levenshtein(a, b):
    """Edits between the UTF-8 bytes, by the whole table of prefixes."""
    a, b = a.encode("utf-8"), b.encode("utf-8")
    d = [
        [i + j if i * j == 0 else 0 for j in range(len(b) + 1)]
        for i in range(len(a) + 1)
    ]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            d[i][j] = min(
                d[i - 1][j] + 1,
                d[i][j - 1] + 1,
                d[i - 1][j - 1] + (a[i - 1] != b[j - 1]),
            )
    return d[len(a)][len(b)]


def sql_hamming(a, b):
    a, b = a.encode("utf-8"), b.encode("utf-8")
    if len(a) != len(b) or len(a) == 0:
        raise ValueError("Mismatch Function: Strings must be of equal length!")
    return sum(1 for i in range(len(a)) if a[i] != b[i])


def sql_jaccard(a, b):
    a, b = frozenset(a.encode("utf-8")), frozenset(b.encode("utf-8"))
    if len(a) == 0 or len(b) == 0:
        raise ValueError("Jaccard Function: An argument too short!")
    return len(a.intersection(b)) / len(a.union(b))


def sql_text_to_timestamp(text, try_cast=False):
    """CAST/TRY_CAST of a VARCHAR to TIMESTAMP: a date as sql_text_to_date
    reads it, then [T or white space] H:M[:S[.f]] (f cut to microseconds,
    24:00:00 the next day) and white space or Z; epoch; offsets and time
    zones refused."""
    body = text.lstrip(_SPACES)
    value = None
    if body.rstrip(_SPACES).lower() == "epoch":
        return datetime.datetime(1970, 1, 1)
    m = _TIMESTAMP_TEXT.match(body)
    if m is None or m.end() < len(body):
        tail = body[m.end() :] if m else ""
        if m and (tail.lstrip(_SPACES)[:1] in "+-" or tail.strip(_SPACES).isalpha()):
            raise ValueError(f"CAST of {text!r} to TIMESTAMP: no time zones here")
        sql_text_to_date(
            body.split("T")[0].split(" ")[0] if m is None else m.group(1), True
        )
    elif m.group(3) is None and body != m.group(1):
        value = None  # white space after a date alone
    else:
        date = sql_text_to_date(m.group(1), True)
        if date is not None:
            h, mi = int(m.group(3) or 0), int(m.group(4) or 0)
            s, f = int(m.group(5) or 0), (m.group(6) or "")[:6].ljust(6, "0")
            value = datetime.datetime.combine(date, datetime.time())
            if (h, mi, s, f) == (24, 0, 0, "000000"):
                value += datetime.timedelta(days=1)
            elif h < 24 and mi < 60 and s < 60:
                value += datetime.timedelta(
                    hours=h, minutes=mi, seconds=s, microseconds=int(f)
                )
            else:
                value = None
    if value is None and not try_cast:
        raise ValueError(f"cannot convert {text!r} to TIMESTAMP")
    return value


def sql_text_to_date(text, try_cast=False):
    """CAST/TRY_CAST of a VARCHAR to DATE: Y-M-D (or / ' ' \\\\ between),
    epoch; times after the date, BC, infinity refused."""
    body = text.strip(_SPACES)
    value = None
    m = _DATE_TEXT.match(body)
    if m and m.group(5) is not None:
        sign, year, _, month, day = m.groups()
        if 1 <= len(month) <= 2 and 1 <= len(day) <= 2:
            if sign or body[m.end() :] or not 1 <= int(year) <= 9999:
                raise ValueError(f"CAST of {text!r} to DATE is not supported")
            try:
                value = datetime.date(int(year), int(month), int(day))
            except ValueError:
                value = None
    elif re.fullmatch(r"-?epoch", body, re.IGNORECASE):
        value = datetime.date(1970, 1, 1)
    elif re.fullmatch(r"-?(inf|infinity)", body, re.IGNORECASE):
        raise ValueError(f"CAST of {text!r} to DATE is not supported")
    if value is None and not try_cast:
        raise ValueError(f"cannot convert {text!r} to DATE")
    return value


def _quotient(e) -> bool:
    return isinstance(e, Op) and (e.op == "div" or any(_quotient(a) for a in e.args))


# IR operators rendered as one call of a helper over non-NULL operands (NULL
# if one is): op -> (the helper, constant arguments before the operands)
_STRICT_CALLS = {
    "upper": ("_sql_case", (True,)),
    "lower": ("_sql_case", (False,)),
    "exact_double": ("_sql_exact_double", ()),
    "ceil": ("_sql_ceil_floor", (True,)),
    "floor": ("_sql_ceil_floor", (False,)),
    "trunc": ("_sql_trunc", ()),
    "sign": ("_sql_sign", ()),
    "isnan": ("(lambda x: x != x)", ()),
    "gcd": ("_sql_gcd", ()),
    "lcm": ("_sql_lcm", ()),
    "translate": (
        "(lambda s, f, t: s.translate({ord(c): (t[i] if i < len(t) else None) "
        "for i, c in reversed(list(enumerate(f)))}))",
        (),
    ),
    "isinf": ("(lambda x: x == x and x - x != 0)", ()),
    "isfinite": ("(lambda x: x - x == 0)", ()),
    "bit_and": ("(lambda a, b: a & b)", ()),
    "bit_or": ("(lambda a, b: a | b)", ()),
    "bit_xor": ("(lambda a, b: a ^ b)", ()),
    "ln": ("_sql_logarithm", ("e",)),
    "log10": ("_sql_logarithm", ("10",)),
    "log2": ("_sql_logarithm", ("2",)),
    "exp": ("_sql_exp", ()),
    "power": ("_sql_power", ()),
    "trim_chars": ("_sql_trim", (True, True)),
    "ltrim": ("_sql_trim", (True, False)),
    "rtrim": ("_sql_trim", (False, True)),
    "lpad": ("_sql_pad", (True,)),
    "rpad": ("_sql_pad", (False,)),
    "overlay": ("_sql_overlay", ()),
    "to_single": ("_sql_to_single", ()),
    "real_to_str": ("_sql_real_text", ()),
    "repeat": ("_sql_repeat", ()),
    "split_part": ("_sql_split_part", ()),
    "printf_value": ("_sql_printf_value", ()),
    "printf_fixed": ("_sql_printf_fixed", ()),
    "split_count": (
        "(lambda s, sep: len(s.split(sep)) if sep else max(len(s), 1))",
        (),
    ),
    "starts_with": ("(lambda s, p: s[: len(p)] == p)", ()),
    "ends_with": ("(lambda s, p: s[len(s) - len(p) :] == p)", ()),
    "contains": ("(lambda s, p: s.find(p) >= 0)", ()),
    "reverse": ("_sql_reverse", ()),
    "interval_epoch": ("(lambda i: i.total_seconds())", ()),
    "like_match": ("_sql_like_match", ()),
    "time_bucket": ("_sql_time_bucket", ()),
    **{
        op: ("_sql_trig", (op,))
        for op in ("sin", "cos", "tan", "asin", "acos", "atan", "atan2")
        + ("radians", "degrees")
    },
    **{op: ("_sql_c_math", (op,)) for op in C_MATH},
    "even": ("_sql_even", ()),
    "fdiv": ("_sql_fdiv", ()),
    "fmod": ("_sql_fmod", ()),
    "factorial": ("_sql_factorial", ()),
    "shift_left": ("_sql_shift_left", ()),
    "shift_right": ("_sql_shift_right", ()),
    "bit_count": ("_sql_bit_count", ()),
    "signbit": ("_sql_signbit", ()),
    "ascii": ("(lambda s: ord(s[:1]) if s else 0)", ()),
    "unicode": ("(lambda s: ord(s[:1]) if s else -1)", ()),
    "octet_length": ("(lambda s: len(s.encode('utf-8')))", ()),
    "levenshtein": ("_sql_levenshtein", ()),
    "local_time": ("_sql_local_time", ()),
    "utc_instant": ("(lambda t: t.replace(tzinfo=datetime.timezone.utc))", ()),
    "string_at": ("_sql_string_at", ()),
    "string_slice": ("_sql_string_slice", ()),
    "hamming": ("_sql_hamming", ()),
    "jaccard": ("_sql_jaccard", ()),
    "chr": ("_sql_chr", ()),
    "md5": ("_sql_digest", ("md5",)),
    "sha256": ("_sql_digest", ("sha256",)),
    "date_diff": ("_sql_date_diff", ()),
    "date_sub": ("_sql_date_sub", ()),
    "last_day": ("_sql_last_day", ()),
    "make_date": ("_sql_make_date", ()),
    "make_timestamp": ("_sql_make_timestamp", ()),
    "from_epoch": ("_sql_from_epoch", ()),
    "epoch_instant": ("_sql_epoch_instant", ()),
    "epoch_units": ("_sql_epoch_units", ()),
    "difference_part": ("_sql_difference_part", ()),
    "strftime": ("_sql_strftime", ()),
    "dayname": ("(lambda d: _SQL_DAYS[d.weekday()])", ()),
    "monthname": ("(lambda d: _SQL_MONTHS[d.month - 1])", ()),
    "text_to_int": ("_sql_text_to_int", ()),
    "is_int_text": ("(lambda s, b: _sql_text_to_int(s, b, True) is not None)", ()),
    "text_to_float": ("_sql_text_to_float", ()),
    "is_float_text": ("(lambda s: _sql_text_to_float(s, True) is not None)", ()),
    "text_to_date": ("_sql_text_to_date", ()),
    "is_date_text": ("(lambda s: _sql_text_to_date(s, True) is not None)", ()),
    "text_to_timestamp": ("_sql_text_to_timestamp", ()),
    "strptime": ("_sql_strptime", ()),
    "is_strptime": ("(lambda s, f: _sql_strptime(s, f, True) is not None)", ()),
    "is_timestamp_text": (
        "(lambda s: _sql_text_to_timestamp(s, True) is not None)",
        (),
    ),
}

# IR operators rendered as one call of a helper that takes NULL operands
_CALLS = {
    "date_trunc": "_sql_date_trunc",
    "replace": "_sql_replace",
    "left": "_sql_left",
    "right": "_sql_right",
    "strpos": "_sql_strpos",
    "to_str": "_sql_to_str",
}


def sql_case(upper: bool, text: str) -> str:
    """UPPER/LOWER as DuckDB maps case: character by character, a character
    whose full mapping is several characters keeps itself, but for the two
    whose simple mapping differs (sharp s up to capital sharp s, dotted
    capital I down to i)."""
    special = {"\u00df": "\u1e9e"} if upper else {"\u0130": "i"}
    out = []
    for ch in text:
        mapped = ch.upper() if upper else ch.lower()
        out.append(mapped if len(mapped) == 1 else special.get(ch, ch))
    return "".join(out)


HELPERS = {
    "datetime": datetime,
    "_sql_case": sql_case,
    "_sql_nan_rank": sql_nan_rank,
    "_sql_extreme": sql_extreme,
    "_sql_coalesce": sql_coalesce,
    "_sql_date_part": sql_date_part,
    "_sql_date_trunc": sql_date_trunc,
    "_sql_strftime": sqlfuncs._strftime,
    "_sql_date_sub": sqlfuncs._date_sub,
    "_sql_replace": sql_replace,
    "_sql_left": sql_left,
    "_sql_right": sql_right,
    "_sql_strpos": sql_strpos,
    "_sql_to_str": sql_to_str,
    "_sql_div": sql_div,
    "_sql_mod": sql_mod,
    "_sql_intdiv": sql_intdiv,
    "_sql_add_months": sql_add_months,
    "_sql_substr": sql_substr,
    "_sql_round": sql_round,
    "_sql_to_int": sql_to_int,
    "_sql_sqrt": sql_sqrt,
    "_sql_exact_double": sql_exact_double,
    "_sql_ceil_floor": sql_ceil_floor,
    "_sql_trunc": sql_trunc,
    "_sql_sign": sql_sign,
    "_sql_logarithm": sql_logarithm,
    "_sql_exp": sql_exp,
    "_sql_power": sql_power,
    "_sql_trim": sql_trim,
    "_sql_pad": sql_pad,
    "_sql_repeat": sql_repeat,
    "_sql_overlay": sql_overlay,
    "_sql_to_single": sql_to_single,
    "_sql_real_text": sql_real_text,
    "_sql_split_part": sql_split_part,
    "_sql_reverse": sql_reverse,
    "_sql_chr": sql_chr,
    "_sql_time_bucket": sql_time_bucket,
    "_sql_trig": sql_trig,
    "_sql_c_math": sql_c_math,
    "_sql_even": sql_even,
    "_sql_fdiv": sql_fdiv,
    "_sql_fmod": sql_fmod,
    "_sql_factorial": sql_factorial,
    "_sql_shift_left": sql_shift_left,
    "_sql_shift_right": sql_shift_right,
    "_sql_bit_count": sql_bit_count,
    "_sql_signbit": sql_signbit,
    "_sql_printf_value": sql_printf_value,
    "_sql_printf_fixed": sql_printf_fixed,
    "_sql_gcd": math.gcd,
    "_sql_lcm": math.lcm,
    "_sql_like_match": lambda s, p: like_regex(p).fullmatch(s) is not None,
    "_sql_digest": sql_digest,
    "_sql_date_diff": sql_date_diff,
    "_sql_last_day": sql_last_day,
    "_sql_make_date": sql_make_date,
    "_sql_make_timestamp": sql_make_timestamp,
    "_sql_from_epoch": sql_from_epoch,
    "_sql_epoch_instant": sql_epoch_instant,
    "_sql_epoch_units": sql_epoch_units,
    "_sql_difference_part": sql_difference_part,
    "_sql_text_to_int": sql_text_to_int,
    "_sql_text_to_float": sql_text_to_float,
    "_sql_text_to_date": sql_text_to_date,
    "_sql_text_to_timestamp": sql_text_to_timestamp,
    "_sql_strptime": sql_strptime,
    "_sql_levenshtein": sql_levenshtein,
    "_sql_local_time": sql_local_time,
    "_sql_string_at": sql_string_at,
    "_sql_string_slice": sql_string_slice,
    "_sql_hamming": sql_hamming,
    "_sql_jaccard": sql_jaccard,
    "_SQL_DAYS": _DAYS,
    "_SQL_MONTHS": _MONTHS,
    "_sql_not_in": None,  # set below
    "_sql_scalar": None,
}


def sql_quantile(counts, q, discrete, scale=None):
    """QUANTILE_DISC/QUANTILE_CONT (MEDIAN) over a multiset of values (value
    -> count), DuckDB's definitions: DISC the value at index ceil(n q) - 1,
    CONT the value at (n - 1) q interpolated as a DOUBLE, or for a DECIMAL
    of `scale` digits in its units, rounded once then truncated."""
    values = sorted(v for v, c in counts.items() for _ in range(c))
    if not values:
        return None
    n = len(values)
    if discrete:
        return values[max(0, math.ceil(n * q) - 1)]
    pos = (n - 1) * q
    i = int(pos)
    lo, hi = values[i], values[min(i + 1, n - 1)]
    if scale is None:
        return float(lo) + (float(hi) - float(lo)) * (pos - i)
    unit = 10**scale
    a, b = round(lo * unit), round(hi * unit)
    return int(float(a + (b - a) * Fraction(pos - i))) / unit


HELPERS["_sql_quantile"] = sql_quantile


def sql_top_cut(counts, place, descending):
    """A top-n's threshold (dynyan's TOP_CUT, passes/top_rows.py) over a
    multiset of values (value -> count): the value at `place` of the order,
    or the last one."""
    values = sorted(v for v, c in counts.items() for _ in range(c))
    if descending:
        values.reverse()
    return values[min(place, len(values)) - 1] if values else None


HELPERS["_sql_top_cut"] = sql_top_cut


def sql_string_agg(counts, separator, distinct, descending, scale=None):
    """STRING_AGG([DISTINCT] x, separator ORDER BY x [DESC]) over a multiset
    of values (value -> count): NULL when it is empty (`scale`: a DECIMAL's)."""
    values = sorted(counts, reverse=descending)
    if not distinct:
        values = [v for v in values for _ in range(counts[v])]
    if not values:
        return None
    return separator.join(
        v if isinstance(v, str) else sql_to_str(v, scale) for v in values
    )


HELPERS["_sql_string_agg"] = sql_string_agg


def sql_bits(counts, kind):
    """BIT_OR/BIT_AND/BIT_XOR of a multiset of INTEGERs (value -> count):
    OR and AND of the distinct values, XOR of those counted an odd number of
    times; NULL when it is empty."""
    if not counts:
        return None
    if kind == "bit_xor_agg":
        return functools.reduce(
            operator.xor, (v for v, n in counts.items() if n % 2), 0
        )
    op = operator.or_ if kind == "bit_or_agg" else operator.and_
    return functools.reduce(op, counts)


HELPERS["_sql_bits"] = sql_bits


def sql_array_agg(counts, distinct, descending):
    """ARRAY_AGG([DISTINCT] x ORDER BY …) over a multiset of the pairs
    ((order keys, x IS NULL), x) (pair -> count): their x's sorted by the
    pairs, as a tuple; NULL when it is empty."""
    pairs = sorted(counts, reverse=descending)
    if not distinct:
        pairs = [p for p in pairs for _ in range(counts[p])]
    return tuple(p[1] for p in pairs) if pairs else None


HELPERS["_sql_array_agg"] = sql_array_agg


def sql_ordered_pair(value, *keyed):
    """The entry a group sorts for FIRST/LAST(x ORDER BY …) and ARRAY_AGG:
    ((k1's NULL rank, k1, …, x IS NULL), x) from k1, flag1, k2, flag2, …,
    never NULL; a NULL key ranks after the others where its flag is true
    and is never compared with a value."""
    parts = []
    for key, flag in zip(keyed[::2], keyed[1::2]):
        parts += [(key is None) == flag, key]
    return (tuple(parts) + (value is None,), value)


HELPERS["_sql_ordered_pair"] = sql_ordered_pair


def sql_regexp_extract(regex, string, group):
    """REGEXP_EXTRACT: the match's group, '' where there is none."""
    found = regex.search(string)
    if not found:
        return ""
    value = found.group(group)
    return "" if value is None else value


HELPERS["_sql_regexp_extract"] = sql_regexp_extract


def sql_not_in(values, x):
    """`x NOT IN (subquery)` over the subquery's values (a dict keyed by
    them), SQL's three-valued logic: TRUE on an empty subquery; else NULL
    when x is NULL or the subquery gives a NULL; else x is not among them."""
    if not values:
        return True
    if x is None or None in values:
        return None
    return x not in values


def sql_scalar(state, key, position, default):
    """The value of a scalar subquery at `key`: column `position` of the one
    inner result row with that key, `default` (the value over no rows) when
    there is none; a NULL key matches no row."""
    rows = state.get(key) if key is not None else None
    if not rows:
        return default
    if len(rows) > 1:
        raise ValueError("a scalar subquery gave more than one row")
    (row,) = rows
    return row[position]


HELPERS["_sql_not_in"] = sql_not_in
HELPERS["_sql_scalar"] = sql_scalar


class SQLPython:
    """Renders IR expressions over an environment of local names.

    `value(e, env)` is Python for e's SQL value (None for NULL);
    `truth(e, env)` for a condition's truth value (True, False or None);
    `holds(e, env)` is true exactly when the condition is TRUE. `constants`
    maps the names of compiled LIKE patterns to their regex objects, to be
    put into the namespace the rendered code runs in (with `HELPERS`);
    `tests` maps the virtual relation of a subquery read by an `InnerTest`
    to the Python expression of its current result: a dict from the key (the
    first columns of a result row: one value, a tuple, or () without keys)
    to the result rows with that key.
    """

    def __init__(self):
        self.constants: dict[str, re.Pattern] = {}
        self.tests: dict[str, str] = {}
        self._temps = 0

    def _tmp(self) -> str:
        self._temps += 1
        return f"_t{self._temps}"

    # -- values ------------------------------------------------------------------
    def value(self, e, env) -> str:
        if isinstance(e, Ref):
            return env[(e.atom, e.column)]
        if isinstance(e, Var):
            return env[e.name]
        if isinstance(e, AggRef):
            return env[("agg", e.index)]
        if isinstance(e, Lit):
            return literal(e.value)
        if isinstance(e, ViewColumn):
            return f"_c[{e.index}]"
        if isinstance(e, InnerTest):
            return self.truth(e, env)
        op, args = e.op, e.args
        if op in _COMPARE or op in ("and", "or", "not", "like", "regexp", "in"):
            return self.truth(e, env)
        if op in _ARITH:
            return self._strict(
                [self.value(a, env) for a in args], f" {_ARITH[op]} ".join
            )
        if op in ("regexp_replace", "regexp_extract"):
            name = f"_REGEX{len(self.constants)}"
            icase = op == "regexp_replace" and args[4].value
            flags = re.ASCII | (re.IGNORECASE if icase else 0)
            self.constants[name] = re.compile(args[1].value, flags)
            if op == "regexp_replace":
                count = 0 if args[3].value else 1
                rewrite = repr(args[2].value)
                body = lambda t: f"{name}.sub({rewrite}, {t[0]}, count={count})"
            else:
                group = args[2].value
                body = lambda t: f"_sql_regexp_extract({name}, {t[0]}, {group})"
            return self._strict([self.value(args[0], env)], body)
        if op == "div":
            return f"_sql_div({self.value(args[0], env)}, {self.value(args[1], env)})"
        if op == "mod":
            return f"_sql_mod({self.value(args[0], env)}, {self.value(args[1], env)})"
        if op == "intdiv":
            a, b = (self.value(x, env) for x in args)
            return f"_sql_intdiv({a}, {b})"
        if op == "neg":
            return self._strict([self.value(args[0], env)], lambda t: f"-{t[0]}")
        if op == "concat":
            return self._strict(
                [self.value(a, env) for a in args],
                lambda t: " + ".join(f"str({x})" for x in t),
            )
        if op == "case":
            out = self.value(args[-1], env)
            pairs = list(zip(args[:-1:2], args[1:-1:2]))
            for cond, val in reversed(pairs):
                out = f"({self.value(val, env)} if {self.holds(cond, env)} else {out})"
            return out
        if op == "add_days":  # a literal or an INTEGER expression of days
            return self._strict(
                [self.value(a, env) for a in args],
                lambda t: f"{t[0]} + datetime.timedelta(days={t[1]})",
            )
        if op == "add_seconds":
            seconds = literal(args[1].value)
            return self._strict(
                [self.value(args[0], env)],
                lambda t: f"{t[0]} + datetime.timedelta(seconds={seconds})",
            )
        if op == "to_timestamp":
            return self._strict(
                [self.value(args[0], env)],
                lambda t: f"datetime.datetime({t[0]}.year, {t[0]}.month, {t[0]}.day)",
            )
        if op == "to_time":
            return self._strict(
                [self.value(args[0], env)],
                lambda t: f"datetime.time({t[0]}.hour, {t[0]}.minute, {t[0]}.second, {t[0]}.microsecond)",
            )
        if op == "to_date":
            return self._strict(
                [self.value(args[0], env)],
                lambda t: f"datetime.date({t[0]}.year, {t[0]}.month, {t[0]}.day)",
            )
        if op == "days_between":
            return self._strict(
                [self.value(a, env) for a in args],
                lambda t: f"({t[0]}.toordinal() - {t[1]}.toordinal())",
            )
        if op == "add_months":  # a literal or an INTEGER expression of months
            return self._strict(
                [self.value(a, env) for a in args],
                lambda t: f"_sql_add_months({t[0]}, {t[1]})",
            )
        if op in (*DATE_PART_OPS, *TIME_PART_OPS, "epoch"):
            return f"_sql_date_part({op!r}, {self.value(args[0], env)})"
        if op in ("greatest", "least"):
            values = ", ".join(self.value(a, env) for a in args)
            return f"_sql_extreme({op == 'greatest'}, {values})"
        if op == "coalesce":
            return f"_sql_coalesce({', '.join(self.value(a, env) for a in args)})"
        if op == "nullif":
            a, b = (self.value(x, env) for x in args)
            return f"(lambda a, b: None if a is None or (b is not None and a == b) else a)({a}, {b})"
        if op == "isnull":
            return f"({self.value(args[0], env)} is None)"
        if op == "length":
            return self._strict([self.value(args[0], env)], lambda t: f"len({t[0]})")
        if op == "trim":
            return self._strict(
                [self.value(args[0], env)], lambda t: f"{t[0]}.strip(' ')"
            )
        if op == "to_float":
            return self._strict([self.value(args[0], env)], lambda t: f"float({t[0]})")
        if op == "sqrt":
            return self._strict(
                [self.value(args[0], env)], lambda t: f"_sql_sqrt({t[0]})"
            )
        if op in ("round", "to_decimal", "to_int"):
            rest = "".join(f", {a.value!r}" for a in args[1:])
            call = "_sql_to_int" if op == "to_int" else "_sql_round"
            return self._strict(
                [self.value(args[0], env)], lambda t: f"{call}({t[0]}{rest})"
            )
        if op == "substr":
            rest = ", ".join(literal(a.value) for a in args[1:])
            return f"_sql_substr({self.value(args[0], env)}, {rest})"
        if op in _STRICT_CALLS:  # NULL in, NULL out
            call, lead = _STRICT_CALLS[op]
            head = "".join(f"{x!r}, " for x in lead)
            return self._strict(
                [self.value(a, env) for a in args],
                lambda t: f"{call}({head}{', '.join(t)})",
            )
        if op in _CALLS:  # a helper that takes NULLs
            return f"{_CALLS[op]}({', '.join(self.value(a, env) for a in args)})"
        if op == "abs":
            return self._strict([self.value(args[0], env)], lambda t: f"abs({t[0]})")
        if op == "pair":  # ARG_MIN/ARG_MAX's (key, value)
            return self._strict(
                [self.value(a, env) for a in args], lambda t: f"({t[0]}, {t[1]})"
            )
        if op == "ordered_pair":  # FIRST/LAST's and ARRAY_AGG's sort entry
            keyed = [args[0], args[2], *args[3:]]  # k1, flag1, k2, flag2, …
            parts = [self.value(args[1], env), *(self.value(a, env) for a in keyed)]
            return f"_sql_ordered_pair({', '.join(parts)})"
        raise NotImplementedError(f"operator {op} in the IVM baseline")

    def _operands(self, parts: list[str], test: str = "is None"):
        """(names to use, a `test` per operand that may be NULL): a local or
        a constant is used as it is; anything else is computed once, into a
        temporary."""
        names, tests = [], []
        for p in parts:
            if _CONSTANT.match(p) and p != "None":
                names.append(p)
            elif _LOCAL.match(p):
                names.append(p)
                tests.append(f"{p} {test}")
            else:
                n = self._tmp()
                names.append(n)
                tests.append(f"({n} := {p}) {test}")
        return names, tests

    def _strict(self, parts: list[str], combine) -> str:
        """NULL if any operand is NULL, else combine(operands)."""
        if "None" in parts:
            return "None"
        names, tests = self._operands(parts)
        if not tests:
            return f"({combine(names)})"
        return f"(None if {' or '.join(tests)} else ({combine(names)}))"

    # -- conditions ----------------------------------------------------------------
    def holds(self, e, env) -> str:
        # TRUE exactly: AND when every operand is TRUE, OR when one is
        if isinstance(e, Op) and e.op in ("and", "or"):
            joint = f" {e.op} "
            return "(" + joint.join(self.holds(a, env) for a in e.args) + ")"
        if isinstance(e, Op) and e.op == "not":
            return f"({self.truth(e.args[0], env)} is False)"
        if isinstance(e, Op) and e.op in _COMPARE:  # the common case, directly
            parts = [self.value(e.args[0], env), self.value(e.args[1], env)]
            if "None" in parts:
                return "False"
            names, nonnull = self._operands(parts, "is not None")
            cmp = f"{names[0]} {_COMPARE[e.op]} {names[1]}"
            if any(_quotient(a) for a in e.args):  # NaN: above all, equal to itself
                cmp = (
                    f"_sql_nan_rank({names[0]}) {_COMPARE[e.op]} "
                    f"_sql_nan_rank({names[1]})"
                )
            return "(" + " and ".join([*nonnull, cmp]) + ")"
        return f"({self.truth(e, env)} is True)"

    def truth(self, e, env) -> str:
        if isinstance(e, InnerTest):
            return self._inner_test(e, env)
        if not isinstance(e, Op):  # a column or constant used as a condition
            return self._strict([self.value(e, env)], lambda t: f"bool({t[0]})")
        op, args = e.op, e.args
        if op in _COMPARE:
            rank = "_sql_nan_rank" if any(_quotient(a) for a in args) else ""
            return self._strict(
                [self.value(args[0], env), self.value(args[1], env)],
                lambda t: f"{rank}({t[0]}) {_COMPARE[op]} {rank}({t[1]})",
            )
        if op == "not":
            return self._strict([self.truth(args[0], env)], lambda t: f"not {t[0]}")
        if op in ("and", "or"):
            # SQL: AND is FALSE if any side is, OR TRUE if any side is;
            # otherwise NULL if any side is NULL
            decisive = "False" if op == "and" else "True"
            names = [self._tmp() for _ in args]
            first = " or ".join(
                f"({n} := {self.truth(a, env)}) is {decisive}"
                for n, a in zip(names, args)
            )
            unknown = " or ".join(f"{n} is None" for n in names)
            other = "True" if op == "and" else "False"
            # (the walrus names of skipped operands are not read: once one
            # is decisive the answer is known)
            return f"({decisive} if {first} else (None if {unknown} else {other}))"
        if op == "like":
            name = f"_LIKE{len(self.constants)}"
            self.constants[name] = like_regex(args[1].value)
            return self._strict(
                [self.value(args[0], env)],
                lambda t: f"{name}.fullmatch({t[0]}) is not None",
            )
        if op == "regexp":
            name = f"_REGEX{len(self.constants)}"
            flags = re.ASCII | (re.IGNORECASE if args[2].value else 0)
            self.constants[name] = re.compile(args[1].value, flags)
            return self._strict(
                [self.value(args[0], env)],
                lambda t: f"{name}.search({t[0]}) is not None",
            )
        if op == "in":
            items = ", ".join(self.value(a, env) for a in args[1:])
            return self._strict(
                [self.value(args[0], env)], lambda t: f"{t[0]} in ({items},)"
            )
        # a value used as a condition (CASE, arithmetic): TRUE when non-zero
        value = self.value(e, env)
        return self._strict([value], lambda t: f"bool({t[0]})")

    def _inner_test(self, e: InnerTest, env) -> str:
        """The truth value of a condition on the result of an inner view (see
        `tests`): NOT IN with SQL's NULLs, [NOT] EXISTS where a NULL key matches
        nothing, a scalar compared three-valued."""
        state = self.tests[e.view]
        keys = [self.value(k, env) for k in e.keys]
        key = (
            "()" if not keys else keys[0] if len(keys) == 1 else f"({', '.join(keys)})"
        )
        nulls = " or ".join(f"{k} is None" for k in keys) or "False"
        if e.kind == "not_in":
            return f"_sql_not_in({state}, {keys[0]})"
        if e.kind == "not_exists":
            return f"({nulls} or {key} not in {state})"
        if e.kind == "exists":
            if e.condition is None:
                found = f"({key} in {state})"
            else:
                cond = self.holds(e.condition, env)
                found = f"any({cond} for _c in {state}.get({key}, _EMPTY))"
            found = f"(not ({nulls}) and {found})"
            return f"(not {found})" if e.negated else found
        if e.kind != "scalar":
            raise NotImplementedError(f"subquery test {e.kind} in the IVM baseline")
        lookup = (
            f"_sql_scalar({state}, {'None if ' + nulls + ' else ' if keys else ''}"
            f"{key}, {len(keys)}, {literal(e.default)})"
        )
        return self._strict(
            [self.value(e.value, env), lookup],
            lambda t: f"{t[0]} {_COMPARE[e.op]} {t[1]}",
        )
