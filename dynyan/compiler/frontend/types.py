"""Types of IR expressions, checked bottom-up at compile time.

Operands the generated Python would reject at run time (or combine unlike
SQL: `'1' = 1` never matches) are refused where the query says them. Types
are "int", "float", "bool", "str", "date", "timestamp", "timestamptz" (an
instant, an aware datetime.datetime), "time" (a time of day, a
datetime.time), "interval" (a TIMESTAMP's difference,
a datetime.timedelta: days and microseconds, never months); None is unknown
(NULL).
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable

from sqlglot import exp

from ...errors import UnsupportedQueryError
from ..ir import C_MATH, COMPARISONS, INFIX, TRIGONOMETRY, Lit, Op
from .diagnostics import sql_error, unsupported

NUMERIC = {"int", "float", "bool"}
# the parts of a DATE (or a TIMESTAMP's date) EXTRACT reads, each an INTEGER
DATE_PART_OPS = (
    "year",
    "month",
    "day",
    "quarter",
    "dayofweek",
    "dayofyear",
    "week",
    "isodow",
    "isoyear",
    "yearweek",
    "decade",
    "century",
    "millennium",
)
# the parts of a time of day EXTRACT reads (of a TIMESTAMP), each an INTEGER
TIME_PART_OPS = ("hour", "minute", "second", "millisecond", "microsecond")
TIMES = {"date", "timestamp"}
# What a TIMESTAMPTZ takes: what does not depend on the session's time zone
# (DuckDB reads its calendar parts, casts, days and months in it).
ZONE_FREE = {
    "in",
    "sub",
    "add_seconds",
    "epoch",
    "epoch_units",
    "case",
    "coalesce",
    "greatest",
    "least",
    "nullif",
    "isnull",
    "local_time",
    "pair",
    "keyed_pair",
    "ordered_pair",
    "row",
    *COMPARISONS,
}
ZONE_DEPENDENT = (
    "depends on the session's time zone (DuckDB's TimeZone setting), which a "
    "view does not follow; a TIMESTAMPTZ is compared, ordered, grouped on, "
    "taken MIN/MAX of, shifted by hours, minutes or seconds, subtracted and "
    "read as EPOCH(t) (seconds since 1970); `t AT TIME ZONE 'UTC'` (or a "
    "zone's name) is the TIMESTAMP its clocks show there, which takes the rest"
)
DATE_ARITHMETIC = (
    "DATE arithmetic is not supported; supported: DATE ± an INTEGER (days), DATE - DATE "
    "(days), DATE or TIMESTAMP ± INTERVAL 'n' DAY|WEEK|MONTH|YEAR (a TIMESTAMP also "
    "HOUR|MINUTE|SECOND) and comparisons"
)


class ExprError(UnsupportedQueryError):
    """An expression the type check refuses; `typed` adds where it is."""


def lit_type(e) -> str | None:
    if not isinstance(e, Lit) or e.value is None:
        return None
    if isinstance(e.value, datetime.datetime):
        return "timestamp" if e.value.tzinfo is None else "timestamptz"
    if isinstance(e.value, datetime.timedelta):
        return "interval"
    if isinstance(e.value, datetime.time):
        return "time"
    if isinstance(e.value, datetime.date):
        return "date"
    return {bool: "bool", int: "int", float: "float", str: "str"}.get(type(e.value))


def infer_type(e, leaf: Callable) -> str | None:
    """The type ("int", "float", "bool", "str", "date"; None: unknown, NULL)
    of `e`, whose non-operator leaves `leaf` types."""
    if not isinstance(e, Op):
        return leaf(e)
    types = [infer_type(a, leaf) for a in e.args]
    if "list" in types:
        raise ExprError(
            "a LIST (ARRAY_AGG's value) is supported as a result column only, "
            "not inside an expression"
        )
    return op_type(e, types)


def typed(type_of: Callable, e, node: exp.Expression) -> str | None:
    """`type_of(e)`, a refusal located at `node`."""
    try:
        return type_of(e)
    except ExprError as err:
        raise unsupported(str(err), node) from None


def check_condition(t: str | None, e, node: exp.Expression) -> None:
    if t is not None and t not in NUMERIC:
        raise unsupported(
            f"type mismatch: {e} ({t}) is not a condition (true or false)", node
        )


def check_comparable(a, ta: str | None, b, tb: str | None) -> None:
    if ta and tb and ta != tb and not (ta in NUMERIC and tb in NUMERIC):
        raise ExprError(f"type mismatch: cannot compare {a} ({ta}) with {b} ({tb})")


def op_type(e: Op, types: list) -> str | None:
    """The type of operator `e` over arguments of `types`; `ExprError` for
    operands that do not fit (DuckDB refuses them, or converts them in ways
    the generated Python does not)."""
    op, args = e.op, e.args

    def need(kinds: set, what: str, *positions: int) -> None:
        for i in positions:
            if types[i] is not None and types[i] not in kinds:
                raise ExprError(f"type mismatch: {what}, got {args[i]} ({types[i]})")

    if op in COMPARISONS or op == "in":
        for b, tb in zip(args[1:], types[1:]):
            check_comparable(args[0], types[0], b, tb)
        return "bool"
    if "timestamptz" in types and op not in ZONE_FREE:
        raise ExprError(f"{_described(e)} of a TIMESTAMPTZ {ZONE_DEPENDENT}")
    if op in ("add", "sub", "mul", "div", "mod"):
        if "interval" in types or (
            op == "sub" and types[0] == types[1] and types[0] in _INSTANTS
        ):
            return _interval_arithmetic(op, types)
        if "date" in types or "timestamp" in types:
            raise ExprError(DATE_ARITHMETIC)
        need(NUMERIC, f"{INFIX[op]} needs numbers", 0, 1)
        divisor = args[1]
        if (
            op in ("div", "mod")
            and isinstance(divisor, Lit)
            and type(divisor.value) in (int, float)
            and divisor.value == 0
        ):
            raise ExprError("division by zero")
        return "float" if op == "div" or "float" in types else "int"
    if op in ("gcd", "lcm"):
        need({"int"}, f"{op.upper()} needs integers", 0, 1)
        return "int"
    if op in ("printf_value", "printf_fixed"):
        return "str"
    if op == "factorial":
        need({"int"}, "FACTORIAL needs an INTEGER", 0)
        return "int"
    if op in ("shift_left", "shift_right"):
        need({"int"}, f"{'<<' if op == 'shift_left' else '>>'} needs integers", 0, 1)
        return "int"
    if op == "bit_count":
        need({"int"}, "BIT_COUNT needs an INTEGER", 0)
        return "int"
    if op in ("bit_and", "bit_or", "bit_xor"):
        need({"int"}, f"{_BITWISE[op]} needs integers", 0, 1)
        return "int"
    if op == "intdiv":  # DuckDB's // of integers (of others it is /)
        need({"int"}, "// needs integers (use / for numbers)", 0, 1)
        if isinstance(args[1], Lit) and args[1].value == 0:
            raise ExprError("division by zero")
        return "int"
    if op in ("pair", "keyed_pair", "ordered_pair"):  # typed as its value
        return types[1]
    if op == "row":  # only counted (COUNT(DISTINCT (a, b))): compared as a whole
        return "str"
    if op == "sqrt":
        need(NUMERIC, "SQRT needs a number", 0)
        return "float"
    if op == "round":
        need(NUMERIC, "ROUND needs a number", 0)
        return types[0]
    if op == "to_single":
        need(NUMERIC, "a REAL needs a number", 0)
        return "float"
    if op in ("to_decimal", "to_int"):
        need(NUMERIC, "CAST to a number needs a number", 0)
        return "float" if op == "to_decimal" else "int"
    if op in ("neg", "abs"):
        need(NUMERIC, f"{'ABS' if op == 'abs' else 'unary -'} needs a number", 0)
        return types[0]
    if op in ("and", "or", "not"):
        need(NUMERIC, f"{op.upper()} needs conditions", *range(len(args)))
        return "bool"
    if op == "like":
        need({"str"}, "LIKE needs a string", 0)
        return "bool"
    if op == "regexp":
        need({"str"}, "a regular expression matches strings", 0)
        return "bool"
    if op in ("regexp_replace", "regexp_extract"):
        need({"str"}, "a regular expression matches strings", 0)
        return "str"
    if op in DATE_PART_OPS:
        need(TIMES, "EXTRACT needs a DATE or TIMESTAMP", 0)
        return "int"
    if op in TIME_PART_OPS:
        need({"timestamp", "time"}, "EXTRACT of a time of day needs a TIMESTAMP", 0)
        return "int"
    if op == "epoch":
        need(_INSTANTS, "EXTRACT(EPOCH …) needs a DATE or TIMESTAMP", 0)
        return "float"
    if op == "interval_epoch":
        need({"interval"}, "EPOCH of an INTERVAL needs an INTERVAL", 0)
        return "float"
    if op == "to_timestamp":
        need({"date"}, "CAST to TIMESTAMP needs a DATE", 0)
        return "timestamp"
    if op == "local_time":
        need({"timestamptz"}, "AT TIME ZONE of an instant needs a TIMESTAMPTZ", 0)
        return "timestamp"
    if op == "utc_instant":
        need({"timestamp"}, "AT TIME ZONE 'UTC' needs a TIMESTAMP or TIMESTAMPTZ", 0)
        return "timestamptz"
    if op == "to_time":
        need({"timestamp"}, "CAST to TIME needs a TIMESTAMP", 0)
        return "time"
    if op == "to_date":
        need({"timestamp"}, "CAST to DATE needs a TIMESTAMP", 0)
        return "date"
    if op == "days_between":
        need({"date"}, "DATE - DATE needs dates", 0, 1)
        return "int"
    if op == "add_seconds":
        need(_INSTANTS, "INTERVAL of hours, minutes or seconds needs a TIMESTAMP", 0)
        return types[0]
    if op in ("substr", "upper", "lower", "trim"):
        need({"str"}, f"{op.upper()} needs a string", 0)
        return "str"
    if op == "replace":
        need({"str"}, "REPLACE needs strings", 0, 1, 2)
        return "str"
    if op in ("left", "right"):
        need({"str"}, f"{op.upper()} needs a string", 0)
        need({"int"}, f"{op.upper()} needs an INTEGER length", 1)
        return "str"
    if op == "strpos":
        need({"str"}, "STRPOS needs strings", 0, 1)
        return "int"
    if op == "real_to_str":
        need({"float"}, "a REAL's text needs a REAL", 0)
        return "str"
    if op == "to_str":
        return "str"
    if op == "to_float":
        need(NUMERIC, "CAST to DOUBLE needs a number", 0)
        return "float"
    if op == "length":
        need({"str"}, "LENGTH needs a string", 0)
        return "int"
    if op == "case":
        need(NUMERIC, "CASE WHEN needs conditions", *range(0, len(args) - 1, 2))
        return common_type("CASE results", types[1:-1:2] + types[-1:])
    if op in ("coalesce", "greatest", "least"):
        return common_type(f"{op.upper()} arguments", types)
    if op == "nullif":
        check_comparable(args[0], types[0], args[1], types[1])
        return types[0]
    if op in ("add_days", "add_months"):
        need(TIMES, "INTERVAL arithmetic needs a DATE or TIMESTAMP", 0)
        return types[0]
    if op == "strftime":
        need(TIMES, "STRFTIME needs a DATE or TIMESTAMP", 1)
        return "str"
    if op == "time_bucket":
        need(TIMES, "TIME_BUCKET needs a DATE or TIMESTAMP", 2)
        return types[2]
    if op == "date_trunc":
        need(TIMES, "DATE_TRUNC needs a DATE or TIMESTAMP", 1)
        if types[1] == "date" and args[0].value in ("hour", "minute", "second"):
            raise ExprError(f"DATE_TRUNC to the {args[0].value} needs a TIMESTAMP")
        return types[1]
    if op in _NUMBER_FUNCTIONS:  # DuckDB has no BOOLEAN overload
        name, result = _NUMBER_FUNCTIONS[op]
        need({"int", "float"}, f"{name} needs a number", *range(len(args)))
        if op == "trunc":
            return types[0]
        return result
    if op in _STRING_FUNCTIONS:
        name, kinds, result = _STRING_FUNCTIONS[op]
        for i, kind in enumerate(kinds):
            what = "an INTEGER" if kind == "int" else "a string"
            need({kind}, f"{name} needs {what} as argument {i + 1}", i)
        return result
    if op in ("date_diff", "date_sub"):
        need(TIMES, f"{op.upper()} needs a DATE or TIMESTAMP", 1, 2)
        return "int"
    if op in ("last_day", "dayname", "monthname"):
        need(TIMES, f"{op.upper()} needs a DATE or TIMESTAMP", 0)
        return "date" if op == "last_day" else "str"
    if op == "make_date":
        need({"int"}, "MAKE_DATE needs INTEGER year, month and day", 0, 1, 2)
        return "date"
    if op == "make_timestamp":
        need({"int"}, "MAKE_TIMESTAMP needs INTEGER year … minute", *range(5))
        need(NUMERIC, "MAKE_TIMESTAMP needs a number of seconds", 5)
        return "timestamp"
    if op == "from_epoch":
        need({"int"}, "EPOCH_MS/MAKE_TIMESTAMP needs an INTEGER count", 0)
        return "timestamp"
    if op in ("strptime", "is_strptime"):
        need({"str"}, "STRPTIME needs a string", 0)
        return "timestamp" if op == "strptime" else "bool"
    if op == "epoch_instant":
        need({"int", "float"}, "TO_TIMESTAMP needs a number of seconds", 0)
        return "timestamptz"
    if op == "difference_part":
        need({"interval"}, "EXTRACT(… FROM t1 - t2) needs an INTERVAL", 0)
        return "int"
    if op == "epoch_units":
        need(_INSTANTS, "EPOCH_MS/_US/_NS needs a DATE or TIMESTAMP", 0)
        return "int"
    if op in _TEXT_CASTS:
        need({"str"}, "a string to convert", 0)
        return _TEXT_CASTS[op]
    if op == "isnull":
        return "bool"
    if op == "concat":
        if "interval" in types:  # DuckDB's text of one is not Python's
            raise ExprError("an INTERVAL has no text here (EPOCH(i) is its seconds)")
        if "time" in types:  # (nor of a TIME's fraction of a second)
            raise ExprError(
                "a TIME has no text here (HOUR(t), MINUTE(t) are its parts)"
            )
        return "str"  # rendered as str(a) + str(b), as DuckDB casts to VARCHAR
    return "bool"  # anti


def _interval_arithmetic(op: str, types: list) -> str:
    """TIMESTAMP - TIMESTAMP is an INTERVAL; TIMESTAMP ± INTERVAL a
    TIMESTAMP, INTERVAL ± INTERVAL (or NULL) an INTERVAL; nothing else."""
    pair = tuple(types)
    if op == "sub" and pair in (("timestamp",) * 2, ("timestamptz",) * 2):
        return "interval"
    if op in ("add", "sub") and pair == ("timestamp", "interval"):
        return "timestamp"
    if op == "add" and pair == ("interval", "timestamp"):
        return "timestamp"
    if op in ("add", "sub") and set(pair) <= {"interval", None}:
        return "interval"
    if op == "mul" and pair in (("int", "interval"), ("interval", "int")):
        return "interval"  # k * INTERVAL '1 day': k days
    raise ExprError(
        "INTERVAL arithmetic is not supported here; supported: TIMESTAMP - "
        "TIMESTAMP (an INTERVAL), TIMESTAMP ± INTERVAL, INTERVAL ± INTERVAL, "
        "comparisons, MIN/MAX and EPOCH(i) (its seconds)"
    )


# the types whose values are instants on one line of microseconds
_INSTANTS = {"timestamp", "timestamptz"}


def _described(e: Op) -> str:
    """How a refusal names operator `e`: a function by its SQL name."""
    infix = INFIX.get(e.op)
    return f"'{infix}'" if infix else e.op.upper()


# operator -> (SQL name, result type) of the functions of numbers
_NUMBER_FUNCTIONS = {
    "ceil": ("CEIL", "float"),
    "floor": ("FLOOR", "float"),
    "exact_double": ("a DOUBLE function", "float"),
    "trunc": ("TRUNC", None),  # of an INTEGER an INTEGER
    "sign": ("SIGN", "int"),
    "isnan": ("ISNAN", "bool"),
    "isinf": ("ISINF", "bool"),
    "isfinite": ("ISFINITE", "bool"),
    "ln": ("LN", "float"),
    "log10": ("LOG", "float"),
    "log2": ("LOG2", "float"),
    "exp": ("EXP", "float"),
    "power": ("POWER", "float"),
    **{op: (op.upper(), "float") for op in TRIGONOMETRY + C_MATH},
    "even": ("EVEN", "float"),
    "fdiv": ("FDIV", "float"),
    "fmod": ("FMOD", "float"),
    "signbit": ("SIGNBIT", "bool"),
}
_BITWISE = {"bit_and": "&", "bit_or": "|", "bit_xor": "XOR"}
# operator -> (SQL name, argument types, result type) of the string functions
_STRING_FUNCTIONS = {
    "trim_chars": ("TRIM", ("str", "str"), "str"),
    "ltrim": ("LTRIM", ("str", "str"), "str"),
    "rtrim": ("RTRIM", ("str", "str"), "str"),
    "lpad": ("LPAD", ("str", "int", "str"), "str"),
    "rpad": ("RPAD", ("str", "int", "str"), "str"),
    "overlay": ("OVERLAY", ("str", "str", "int", "int"), "str"),
    "repeat": ("REPEAT", ("str", "int"), "str"),
    "split_part": ("SPLIT_PART", ("str", "str", "int"), "str"),
    "split_count": ("STRING_SPLIT", ("str", "str"), "int"),
    "starts_with": ("STARTS_WITH", ("str", "str"), "bool"),
    "ends_with": ("ENDS_WITH", ("str", "str"), "bool"),
    "contains": ("CONTAINS", ("str", "str"), "bool"),
    "reverse": ("REVERSE", ("str",), "str"),
    "translate": ("TRANSLATE", ("str", "str", "str"), "str"),
    "ascii": ("ASCII", ("str",), "int"),
    "unicode": ("UNICODE", ("str",), "int"),
    "octet_length": ("STRLEN", ("str",), "int"),
    "levenshtein": ("LEVENSHTEIN", ("str", "str"), "int"),
    "string_at": ("a subscript s[i]", ("str", "int"), "str"),
    "string_slice": ("a slice s[a:b]", ("str", "int", "int"), "str"),
    "hamming": ("HAMMING", ("str", "str"), "int"),
    "jaccard": ("JACCARD", ("str", "str"), "float"),
    "like_match": ("LIKE", ("str", "str"), "bool"),
    "chr": ("CHR", ("int",), "str"),
    "md5": ("MD5", ("str",), "str"),
    "sha256": ("SHA256", ("str",), "str"),
}
# CAST of a VARCHAR: operator -> result type
_TEXT_CASTS = {
    "text_to_int": "int",
    "is_int_text": "bool",
    "text_to_float": "float",
    "is_float_text": "bool",
    "text_to_date": "date",
    "is_date_text": "bool",
    "text_to_timestamp": "timestamp",
    "is_timestamp_text": "bool",
}


def common_type(what: str, types: list) -> str | None:
    """The type of values that may come from any of `types` (CASE results,
    COALESCE arguments): the widest number, or the one other type."""
    results = [t for t in types if t is not None]
    if results and all(t in NUMERIC for t in results):
        return next((t for t in ("float", "int") if t in results), "bool")
    if len(set(results)) > 1:
        raise ExprError(
            f"type mismatch: {what} of different types "
            f"({', '.join(dict.fromkeys(results))})"
        )
    return results[0] if results else None


def parse_date(text: str) -> datetime.date:
    """A date literal as DuckDB reads it: YYYY-MM-DD, month and day also with
    one digit ('1999-2-01'); ValueError for anything else."""
    m = re.fullmatch(r"\s*(\d{4})-(\d{1,2})-(\d{1,2})\s*", text)
    if m is None:
        raise ValueError(text)
    return datetime.date(*map(int, m.groups()))


def parse_timestamp(text: str) -> datetime.datetime:
    """A timestamp literal: a date, then optionally HH:MM[:SS[.ffffff]]
    after a space or T; ValueError for anything else (a time zone too)."""
    m = re.fullmatch(
        r"\s*(\d{4})-(\d{1,2})-(\d{1,2})"
        r"(?:[ T](\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?)?\s*",
        text,
    )
    if m is None:
        raise ValueError(text)
    year, month, day, hour, minute, second, fraction = m.groups()
    micro = int((fraction or "0").ljust(6, "0"))
    return datetime.datetime(
        int(year),
        int(month),
        int(day),
        int(hour or 0),
        int(minute or 0),
        int(second or 0),
        micro,
    )


def parse_time(text: str) -> datetime.time:
    """A TIME literal: H[H]:MM[:SS[.ffffff]]; ValueError for anything else
    (24:00:00 too, which DuckDB holds and a datetime.time does not)."""
    m = re.fullmatch(r"\s*(\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?\s*", text)
    if m is None:
        raise ValueError(text)
    hour, minute, second, fraction = m.groups()
    micro = int((fraction or "0").ljust(6, "0"))
    return datetime.time(int(hour), int(minute), int(second or 0), micro)


def parse_timestamptz(text: str) -> datetime.datetime:
    """A TIMESTAMPTZ literal, as UTC: a timestamp's date and time of day,
    then its offset from UTC (`Z`, `+HH`, `+HH:MM`, `+HHMM`); ValueError
    without one, as DuckDB would read it in the session's time zone."""
    m = re.fullmatch(
        r"\s*(\d{4}-\d{1,2}-\d{1,2}[ T]\d{1,2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?)"
        r"\s*(?:(Z)|([+-])(\d{1,2})(?::?(\d{2}))?)\s*",
        text,
        re.I,
    )
    if m is None:
        raise ValueError(
            ": a TIMESTAMPTZ literal gives a time of day and its offset "
            "('2024-01-31 10:00:00+00'); without one DuckDB reads it in the "
            "session's time zone"
        )
    local, _, sign, hours, minutes = m.groups()
    offset = datetime.timedelta(hours=int(hours or 0), minutes=int(minutes or 0))
    if offset >= datetime.timedelta(hours=24):
        raise ValueError(": an offset under 24 hours")
    zone = datetime.timezone(-offset if sign == "-" else offset)
    utc = datetime.timezone.utc
    return parse_timestamp(local).replace(tzinfo=zone).astimezone(utc)


# a string literal compared with a column of the type: the value it spells
PARSERS = {
    "date": parse_date,
    "timestamp": parse_timestamp,
    "timestamptz": parse_timestamptz,
    "time": parse_time,
}


def parsed_literal(kind: str, text: str, node: exp.Expression, what: str = "") -> Lit:
    """A string literal read as a value of `kind` (`PARSERS`); an error
    naming it (`what`: how, after the type) where it spells none, and why
    for a TIMESTAMPTZ."""
    try:
        return Lit(PARSERS[kind](text))
    except ValueError as error:
        why = error.args[0] if kind == "timestamptz" else ""
        raise sql_error(f"invalid {kind}{what} {text!r}{why}", node) from None


def coerce_literals(left, right, type_of: Callable, node: exp.Expression):
    """DuckDB casts a string literal compared with a DATE or TIMESTAMP to
    one, and a DATE compared with a TIMESTAMP to its midnight; a string
    literal compared with a number or a BOOLEAN to the value it spells
    (`id = '5'`; here only plain decimals, `'12'`, `' -1.5 '`, and DuckDB's
    words for booleans; other spellings stay a type mismatch)."""
    for a, b in ((left, right), (right, left)):
        kind = type_of(a)
        if kind in NUMERIC and isinstance(b, Lit) and isinstance(b.value, str):
            value = _spelled(b.value, kind)
            if value is not None:
                left, right = (value, right) if b is left else (left, value)
        elif kind in PARSERS and isinstance(b, Lit) and isinstance(b.value, str):
            value = parsed_literal(kind, b.value, node)
            left, right = (value, right) if b is left else (left, value)
        elif kind == "timestamp" and type_of(b) == "date":
            value = to_timestamp(b)
            left, right = (value, right) if b is left else (left, value)
    return left, right


_BOOLEAN_WORDS = {
    **dict.fromkeys(("true", "t", "1", "yes", "y"), True),
    **dict.fromkeys(("false", "f", "0", "no", "n"), False),
}


def _spelled(text: str, kind: str) -> Lit | None:
    """The number or boolean a string literal spells, for a column of
    `kind`; None for a spelling not taken."""
    text = text.strip()
    if kind == "bool":
        value = _BOOLEAN_WORDS.get(text.lower())
        return None if value is None else Lit(value)
    if re.fullmatch(r"[+-]?\d+", text):
        return Lit(int(text))
    if re.fullmatch(r"[+-]?(\d+\.\d*|\.\d+)", text):
        return Lit(float(text))
    return None


def to_timestamp(e):
    """A DATE as the TIMESTAMP of its midnight (folded for a literal)."""
    if isinstance(e, Lit):
        return Lit(datetime.datetime(e.value.year, e.value.month, e.value.day))
    return Op("to_timestamp", (e,))
