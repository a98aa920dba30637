"""sqlglot expression nodes -> IR expressions, one small converter per node type.

`CONVERTERS` maps a node class to `convert(fe, node)`, where `fe` resolves
what a converter cannot see on its own: `fe.expr(node)` converts a child,
`fe.column(node)` a column reference, `fe.type_of(e)` types an IR expression.
Literal arithmetic is folded exactly (in decimal) and dates are shifted at
compile time, as SQL does.
"""

from __future__ import annotations

import datetime
import decimal
import functools
import math
import re
from collections.abc import Callable

from sqlglot import exp

from ...runtime import sqlfuncs
from ...runtime.sqlfuncs import _to_str
from ..functions import STRFTIME_CODES, STRPTIME_CODES
from ..ir import C_MATH, TRIGONOMETRY, Lit, Op, Ref
from .diagnostics import sql_error, unsupported
from .statements import INTEGER_BITS, TYPES, declared_scale
from .statements import _single as single_type
from .types import (
    PARSERS,
    TIME_PART_OPS,
    TIMES,
    ZONE_DEPENDENT,
    coerce_literals,
    parse_date,
    parsed_literal,
    parse_timestamp,
    to_timestamp,
)


def _binary(op: str) -> Callable:
    return lambda fe, node: _typed_arith(
        fe, op, fe.expr(node.this), fe.expr(node.expression)
    )


def _typed_arith(fe, op: str, left, right):
    """`_arith`, or REAL arithmetic (`single_arith`) where DuckDB's is."""
    single = single_arith(fe, op, left, right)
    return _arith(op, left, right) if single is None else single


def single_arith(fe, op: str, left, right):
    """`left op right` in DuckDB's REAL (4-byte float) arithmetic, where an
    operand is a REAL and none a DOUBLE: the others cast to REAL and the
    result rounded to one, as DuckDB computes it (in doubles, then rounded:
    for + - * / as exact as in 4-byte floats, 53 bits being more than
    2 * 24 + 2). None where the arithmetic is not a REAL's."""
    if op not in ("add", "sub", "mul", "div", "mod"):
        return None
    singles = [is_single(fe, x) for x in (left, right)]
    if not any(singles) or any(
        _is_double(fe, x) for x, single in zip((left, right), singles) if not single
    ):
        return None
    left, right = (
        x if single else _to_single(x) for x, single in zip((left, right), singles)
    )
    return Op("to_single", (_arith(op, left, right),))


def is_single(fe, e) -> bool:
    """Whether `e` is a REAL (FLOAT) value: a CAST to REAL, REAL arithmetic,
    or a leaf `fe.single_leaf` says is (a table's or derived table's REAL
    column; over groups a REAL key, MIN or MAX of a REAL). (A set operation's
    or a window function's view gives DOUBLEs.)"""
    if isinstance(e, Op):
        if e.op in ("neg", "abs", "nullif"):
            return is_single(fe, e.args[0])
        if e.op in ("pair", "keyed_pair", "ordered_pair"):  # ARG_MAX's (key, value)
            return is_single(fe, e.args[1])
        if e.op in ("case", "coalesce", "greatest", "least"):  # `widen`ed to REALs
            results = e.args[1::2] + e.args[-1:] if e.op == "case" else e.args
            known = [a for a in results if not (isinstance(a, Lit) and a.value is None)]
            return any(is_single(fe, a) for a in known) and all(
                _single_or_literal(fe, a) for a in known
            )
        return e.op == "to_single"
    leaf = getattr(fe, "single_leaf", None)
    return leaf is not None and leaf(e)


def _single_or_literal(fe, e) -> bool:
    """Whether `e` is a REAL or a number literal a REAL holds exactly."""
    if isinstance(e, Lit) and type(e.value) in (int, float):
        return sqlfuncs._single(e.value) == e.value
    return is_single(fe, e)


def _is_double(fe, e) -> bool:
    """Whether `e` is a DOUBLE: a float that is neither a REAL nor a DECIMAL."""
    if fe.type_of(e) != "float" or is_single(fe, e):
        return False
    return fe.digits_of(e) is None


def _to_single(e):
    """`e`, a number, as a REAL (a literal now)."""
    if isinstance(e, Op) and e.op == "to_single":
        return e
    if isinstance(e, Lit) and type(e.value) in (int, float):
        single = sqlfuncs._single(e.value)
        if single is not None:
            return Lit(single)
    return Op("to_single", (e,))


def _arith(op: str, left, right):
    """`left op right`, folded when both are numeric literals: exactly, in
    decimal, as SQL computes DECIMAL literals (0.06 + 0.01 is 0.07)."""
    numbers = (int, float)
    if (
        op in ("add", "sub", "mul")
        and isinstance(left, Lit)
        and isinstance(right, Lit)
        and type(left.value) in numbers
        and type(right.value) in numbers
    ):
        a, b = decimal.Decimal(repr(left.value)), decimal.Decimal(repr(right.value))
        value = a + b if op == "add" else a - b if op == "sub" else a * b
        both_int = type(left.value) is int and type(right.value) is int
        return Lit(int(value) if both_int else float(value))
    return Op(op, (left, right))


def _literal(fe, node: exp.Literal) -> Lit:
    text = str(node.this)
    if node.is_string:
        return Lit(text)
    if re.fullmatch(r"[+-]?\d+", text):
        return Lit(int(text))
    try:
        return Lit(float(text))
    except ValueError:
        raise unsupported(f"cannot read the number {text}", node) from None


def _cast(fe, node: exp.Cast):
    target = node.to.this.name
    inner = fe.expr(node.this)
    wanted = TYPES.get(target)
    safe = isinstance(node, exp.TryCast)  # NULL where CAST is an error
    if isinstance(inner, Lit) and inner.value is None and wanted is not None:
        return inner  # NULL::INTEGER: a NULL of any type is NULL
    literal_text = isinstance(inner, Lit) and isinstance(inner.value, str)
    if wanted in PARSERS and literal_text and not safe:
        return parsed_literal(wanted, inner.value, node, " literal")
    source = fe.type_of(inner)
    if "timestamptz" in (wanted, source) and wanted != source and source != "str":
        which = "of" if source == "timestamptz" else "to"
        raise unsupported(f"CAST {which} a TIMESTAMPTZ {ZONE_DEPENDENT}", node)
    if source == "str" and wanted != "str":
        return _cast_text(inner, node, safe)
    if safe and not _cannot_fail(source, wanted, target):
        raise unsupported(
            f"TRY_CAST of a {_SQL_TYPES.get(source, 'NULL')} to {node.to.sql()} is "
            "not supported; supported: of a VARCHAR to INTEGER, BIGINT, SMALLINT, "
            "TINYINT, DOUBLE or DATE, and the casts that cannot fail (to VARCHAR, "
            "of a number to DOUBLE or BOOLEAN, between DATE and TIMESTAMP)",
            node,
        )
    if wanted == "timestamp" and source == "date":
        return to_timestamp(inner)
    if wanted == "date" and source == "timestamp":
        if isinstance(inner, Lit):
            return Lit(inner.value.date())
        return Op("to_date", (inner,))
    if wanted == "time" and source == "timestamp":
        if isinstance(inner, Lit):
            return Lit(inner.value.time())
        return Op("to_time", (inner,))
    if source in ("int", "float") and single_type(node.to):  # to REAL
        if is_single(fe, inner):
            return inner
        if isinstance(inner, Lit):
            single = sqlfuncs._single(inner.value)
            if single is None:
                raise sql_error(f"CAST of {inner.value} to REAL is out of range", node)
            return Lit(single)
        return Op("to_single", (inner, Lit(True)))  # out of range: an error
    if source == "float" and wanted in ("int", "float") and target != "DOUBLE":
        return _cast_number(fe, inner, node.to)
    if wanted == "int" == source and target in ("TINYINT", "SMALLINT", "UBIGINT"):
        return Op("to_int", (inner, *_int_range(node.to)))  # narrower: checked
    if wanted == source or (wanted == "float" and source == "int"):
        return _as_float(inner) if wanted == "float" else inner
    if wanted == "str" and source in ("int", "bool", "date", "timestamp", "time"):
        return Op("to_str", (inner,))
    text = (
        _number_text(fe, inner, node.this)
        if (wanted, source) == ("str", "float")
        else None
    )
    if text is not None:
        return text
    if wanted == "int" and source == "bool":
        return Op("to_int", (inner,))
    if wanted == "bool" and source in ("int", "float"):  # non-zero is true
        return Op("ne", (inner, Lit(0)))
    kind = "REAL" if is_single(fe, inner) else _SQL_TYPES.get(source, "NULL")
    if source == "float" and kind != "REAL":
        kind = "DOUBLE or DECIMAL"
    raise unsupported(
        f"CAST of a {kind} to {node.to.sql()} is not "
        "supported; supported: between numbers, DATE and TIMESTAMP, a string "
        "literal to DATE or TIMESTAMP, an INTEGER, BOOLEAN, DATE or TIMESTAMP, "
        "a DOUBLE or DECIMAL column, arithmetic of DOUBLEs, or a DECIMAL "
        "expression without a division (its literals written without trailing "
        "zeros: 1.5, not 1.50) to VARCHAR",
        node,
    )


def _cannot_fail(source: str | None, wanted: str | None, target: str) -> bool:
    """Whether CAST from `source` to `target` has a value for every input
    (TRY_CAST is then CAST)."""
    if wanted == "str":
        return True
    if source in ("int", "float"):
        return target == "DOUBLE" or wanted == "bool"
    if source == "bool":
        return wanted in ("int", "bool")
    return source in TIMES and wanted in TIMES


# the integer types a VARCHAR is cast to: sqlglot's name -> bits
_TEXT_INT_BITS = {"TINYINT": 8, "SMALLINT": 16, "INT": 32, "BIGINT": 64}


def _date_call(fe, node: exp.Date):
    """DATE(x): CAST(x AS DATE), as DuckDB reads it (`DATE('1997-09-01')`)."""
    if any(v for k, v in node.args.items() if k != "this"):
        raise unsupported("DATE(x) is supported of one value, as CAST(x AS DATE)", node)
    cast = exp.Cast(this=node.this.copy(), to=exp.DataType.build("DATE"))
    cast.meta.update(node.meta)  # errors point at the call
    return _cast(fe, cast)


def _cast_text(text, node: exp.Cast, safe: bool):
    """CAST (`safe`: TRY_CAST) of a VARCHAR to an integer, DOUBLE, DATE or
    TIMESTAMP,
    read as DuckDB reads it (`runtime.sqlfuncs._int_of_text`, …): an error
    where DuckDB has one (TRY_CAST: NULL); spellings DuckDB reads that are
    not supported (hex, exponents of integers, '(BC)', …) are an error too.
    A literal is cast now."""
    target = node.to.this.name
    if target in _TEXT_INT_BITS:
        bits = _TEXT_INT_BITS[target]
        ops, extra = ("text_to_int", "is_int_text"), (Lit(bits),)
        read = functools.partial(sqlfuncs._int_of_text, bits=bits)
    elif target == "DOUBLE":
        ops, extra, read = (
            ("text_to_float", "is_float_text"),
            (),
            sqlfuncs._float_of_text,
        )
    elif target == "DATE":
        ops, extra, read = ("text_to_date", "is_date_text"), (), sqlfuncs._date_of_text
    elif target in ("TIMESTAMP", "TIMESTAMPNTZ", "DATETIME") and isinstance(text, Lit):
        try:  # TRY_CAST: a literal whose spelling DuckDB's and ours share
            return Lit(parse_timestamp(text.value))
        except ValueError:
            raise unsupported(
                f"TRY_CAST of {text.value!r} to TIMESTAMP is not supported", node
            ) from None
    elif target in ("TIMESTAMP", "TIMESTAMPNTZ", "DATETIME"):
        ops, extra, read = (
            ("text_to_timestamp", "is_timestamp_text"),
            (),
            sqlfuncs._timestamp_of_text,
        )
    else:
        raise unsupported(
            f"CAST of a VARCHAR to {node.to.sql()} is not supported; supported: "
            "to INTEGER, BIGINT, SMALLINT, TINYINT, DOUBLE, DATE and TIMESTAMP",
            node,
        )
    if isinstance(text, Lit):
        try:
            value = read(text.value)
        except ValueError as err:
            raise unsupported(str(err), node) from None
        if value is None and not safe:
            raise sql_error(
                f"could not convert string {text.value!r} to {node.to.sql()}", node
            )
        if not (isinstance(value, float) and value - value != 0):  # inf: no literal
            return Lit(value)
    convert, converts = ops
    cast = Op(convert, (text, *extra))
    if not safe:
        return cast
    return Op("case", (Op(converts, (text, *extra)), cast, Lit(None)))


_SQL_TYPES = {
    "int": "INTEGER",
    "float": "DOUBLE",
    "str": "VARCHAR",
    "date": "DATE",
    "timestamp": "TIMESTAMP",
    "timestamptz": "TIMESTAMPTZ",
    "time": "TIME",
    "bool": "BOOLEAN",
    "interval": "INTERVAL",
}


def _cast_number(fe, inner, to: exp.DataType):
    """CAST of a DOUBLE or DECIMAL to an integer or a DECIMAL(p, s): rounded
    as DuckDB does (a DOUBLE to an integer halves to even; every other cast
    halves away from zero, a DECIMAL as the decimal it stands for)."""
    exact = fe.digits_of(inner)
    tail = () if exact is None else (Lit(exact),)
    if TYPES[to.this.name] == "int":  # a DECIMAL rounded first, as a decimal
        rounded = Op("round", (inner, Lit(0), *tail)) if tail else inner
        return Op("to_int", (rounded, *_int_range(to)))
    scale = declared_scale(to)
    if scale is None:  # FLOAT, REAL: as DOUBLE
        return inner
    if exact is not None and exact <= scale:
        return inner
    return Op("to_decimal", (inner, Lit(scale), *tail))


# an integer type's values (sqlglot's name -> lowest, highest)
_INT_RANGES = {
    "TINYINT": (-(2**7), 2**7 - 1),
    "SMALLINT": (-(2**15), 2**15 - 1),
    "INT": (-(2**31), 2**31 - 1),
    "BIGINT": (-(2**63), 2**63 - 1),
    "UBIGINT": (0, 2**64 - 1),
    "HUGEINT": (-(2**127), 2**127 - 1),
}


def _int_range(to: exp.DataType) -> tuple:
    """The bounds a CAST to integer type `to` checks (as literals): out of
    them DuckDB raises a conversion error."""
    low, high = _INT_RANGES.get(to.this.name, _INT_RANGES["BIGINT"])
    return Lit(low), Lit(high)


def _as_float(e):
    """`e` as a DOUBLE (an INTEGER value becomes a float, as SQL casts it)."""
    if isinstance(e, Lit) and isinstance(e.value, int) and e.value is not True:
        return Lit(float(e.value))
    if isinstance(e, Op) and e.op == "to_float":
        return e
    return Op("to_float", (e,))


def widen(fe, values: list) -> list:
    """Values that make one result (CASE branches, COALESCE operands): when
    one is a DOUBLE the INTEGER ones are cast to it, as SQL does; when one
    is a REAL and none a DOUBLE, the other numbers are cast to REAL."""
    types = [fe.type_of(v) for v in values]
    numbers = [v for v, t in zip(values, types) if t in ("int", "bool", "float")]
    if any(is_single(fe, v) for v in numbers) and not any(
        _is_double(fe, v) for v in numbers
    ):
        return [
            _to_single(v) if t in ("int", "bool", "float") else v
            for v, t in zip(values, types)
        ]
    if "float" not in types:
        return values
    return [_as_float(v) if t in ("int", "bool") else v for v, t in zip(values, types)]


_UNITS = {
    "SECOND": ("add_seconds", 1),
    "MINUTE": ("add_seconds", 60),
    "HOUR": ("add_seconds", 3600),
    "DAY": ("add_days", 1),
    "WEEK": ("add_days", 7),
    "MONTH": ("add_months", 1),
    "YEAR": ("add_months", 12),
}


def interval_parts(node: exp.Interval) -> tuple[str, int]:
    """(operator, amount) of an INTERVAL: `INTERVAL 'n' UNIT`, `INTERVAL 'n
    unit'`, or of several units of one kind, `INTERVAL '1 day 2 hours'` (in
    seconds; days with hours: a TIMESTAMP's, as DuckDB adds them)."""
    pairs = _interval_pairs(node)
    ops = {_UNITS[u][0] for _, u in pairs}
    if len(ops) > 1 and "add_months" in ops:
        raise unsupported(
            "an INTERVAL of months beside days or hours is not supported "
            "(add them one after the other)",
            node,
        )
    op = "add_seconds" if len(ops) > 1 else ops.pop()
    day = 86400 if op == "add_seconds" else 1
    return op, sum(
        int(n) * _UNITS[u][1] * (day if _UNITS[u][0] == "add_days" else 1)
        for n, u in pairs
    )


def _interval_pairs(node: exp.Interval) -> list[tuple[str, str]]:
    """The (number, UNIT) pairs an INTERVAL spells."""
    unit = (_interval_unit(node) or "").upper().rstrip("S")
    text = node.this.name if node.this is not None else ""
    parts = text.split()
    if not unit and len(parts) % 2 == 0:
        pairs = [
            (parts[i], parts[i + 1].upper().rstrip("S"))
            for i in range(0, len(parts), 2)
        ]
    else:
        pairs = [(text.strip(), unit)]
    if not pairs or any(
        u not in _UNITS or not re.fullmatch(r"[+-]?\d+", n) for n, u in pairs
    ):
        raise unsupported(
            "supported intervals: INTERVAL 'n' SECOND|MINUTE|HOUR|DAY|WEEK|MONTH|YEAR, "
            "INTERVAL '1 day 2 hours' (no months beside other units)",
            node,
        )
    return pairs


# the units sqlglot reads as a node of their own when a precision follows
_UNIT_NODES = (exp.Second, exp.Minute, exp.Hour, exp.Day, exp.Week, exp.Month, exp.Year)


def _interval_unit(node: exp.Interval) -> str | None:
    """The unit of `INTERVAL 'n' UNIT`, also of the SQL standard's `INTERVAL
    'n' DAY (3)` (TPC-H's text: a leading field precision, the most digits
    n may have, checked here)."""
    unit = node.args.get("unit")
    if not isinstance(unit, _UNIT_NODES):
        return node.text("unit")
    precision = unit.this.name if unit.this is not None else ""
    amount = node.this.name.strip().lstrip("+-") if node.this is not None else ""
    if not precision.isdigit() or (amount.isdigit() and len(amount) > int(precision)):
        raise unsupported(
            f"INTERVAL '{amount}' {unit.key.upper()} ({precision}): the precision "
            "in parentheses is the most digits the amount may have",
            node,
        )
    return unit.key


# TO_SECONDS(k) … TO_YEARS(k): an INTERVAL of k of the unit
_INTERVAL_FUNCTIONS = {
    f"to_{unit.lower()}s": unit for unit in _UNITS if unit != "SECOND"
} | {"to_seconds": "SECOND"}


def _interval_multiple(node) -> tuple | None:
    """(k, operator, amount) of an INTERVAL of k times a fixed one, k an
    expression: `k * INTERVAL '1 day'` (either side), `INTERVAL (k) DAY`,
    `TO_DAYS(k)` … `TO_YEARS(k)`; None for any other node."""
    if isinstance(node, exp.Paren):
        return _interval_multiple(node.this)
    if isinstance(node, exp.Mul):
        for k, interval in ((node.this, node.expression), (node.expression, node.this)):
            if isinstance(interval, exp.Interval) and _fixed(interval):
                return (k, *interval_parts(interval))
        return None
    if isinstance(node, exp.Interval) and not _fixed(node) and node.this is not None:
        unit = (node.text("unit") or "").upper().rstrip("S")
        if unit not in _UNITS:
            raise unsupported(
                "an INTERVAL of an expression is supported as INTERVAL (k) "
                "SECOND|MINUTE|HOUR|DAY|WEEK|MONTH|YEAR",
                node,
            )
        return (node.this, *_UNITS[unit])
    if isinstance(node, exp.ToDays):
        return (node.this, *_UNITS["DAY"])
    if isinstance(node, exp.Anonymous) and len(node.expressions) == 1:
        unit = _INTERVAL_FUNCTIONS.get(node.name.lower())
        if unit is not None:
            return (node.expressions[0], *_UNITS[unit])
    return None


def _fixed(node: exp.Interval) -> bool:
    """Whether an INTERVAL is written with a literal (`INTERVAL '2' DAY`)."""
    return isinstance(node.this, exp.Literal)


def _multiple_of(fe, found: tuple, node) -> tuple:
    """(operator, amount) of `_interval_multiple`'s (k, operator, amount):
    the amount k times the unit's, as an INTEGER expression."""
    k, op, amount = found
    count = fe.expr(k)
    if fe.type_of(count) not in ("int", None):
        raise unsupported(
            f"an INTERVAL of k units needs an INTEGER k, got {k.unnest().sql()} "
            f"({_SQL_TYPES[fe.type_of(count)]})",
            node,
        )
    return op, _arith("mul", count, Lit(amount))


def _interval_times(fe, node, found: tuple | None = None):
    """An INTERVAL of k units as a value, k an INTEGER expression (`found`:
    `_interval_multiple(node)`, if known): k times the unit's timedelta
    (NULL for a NULL k); of months, which have no fixed length, refused as
    a value (added to a date it is `_shift`'s)."""
    op, amount = _multiple_of(fe, found or _interval_multiple(node), node)
    if op == "add_months":
        raise unsupported(
            "an INTERVAL of months or years is supported added to a DATE or "
            "TIMESTAMP; as a value, an INTERVAL of days, hours, minutes or seconds",
            node,
        )
    unit = datetime.timedelta(seconds=86400 if op == "add_days" else 1)
    if isinstance(amount, Lit):
        return Lit(unit * amount.value)
    return Op("mul", (amount, Lit(unit)))


def _shift(fe, node, sign: int):
    """date ± INTERVAL (a DATE, or a TIMESTAMP for hours, minutes and
    seconds), date - date (days); folded at compile time over literals."""
    left, right = node.this, node.expression
    if sign > 0 and (
        isinstance(left, exp.Interval) or _interval_multiple(left) is not None
    ):
        left, right = right, left
    months = _interval_multiple(right)
    if months is not None and months[1] == "add_months":  # date ± k months
        date = fe.expr(left)
        if fe.type_of(date) not in TIMES:
            raise unsupported(
                "INTERVAL arithmetic needs a DATE or TIMESTAMP operand", node
            )
        _, amount = _multiple_of(fe, months, right)
        if sign < 0:
            amount = _arith("mul", amount, Lit(-1))
        if isinstance(date, Lit) and isinstance(amount, Lit):
            return Lit(shift_date(date.value, "add_months", amount.value))
        return Op("add_months", (date, amount))
    if not (isinstance(right, exp.Interval) and _fixed(right)):
        a, b = fe.expr(left), fe.expr(right)
        if sign > 0 and fe.type_of(b) == "date":
            a, b = b, a
        if fe.type_of(a) == "date" and _whole_literal(b):  # DATE ± n: n days
            if isinstance(a, Lit):
                return Lit(shift_date(a.value, "add_days", sign * b.value))
            return Op("add_days", (a, Lit(sign * b.value)))
        if fe.type_of(a) == "date" and fe.type_of(b) == "int":  # DATE ± k: k days
            return Op("add_days", (a, b if sign > 0 else Op("neg", (b,))))
        if sign < 0 and fe.type_of(a) == fe.type_of(b) == "date":
            if isinstance(a, Lit) and isinstance(b, Lit):
                return Lit((a.value - b.value).days)
            return Op("days_between", (a, b))
        return _typed_arith(
            fe, "add" if sign > 0 else "sub", *_timestamps(fe, a, b, sign)
        )
    date = fe.expr(left)
    if fe.type_of(date) == "interval":  # INTERVAL ± INTERVAL
        return Op("add" if sign > 0 else "sub", (date, _interval_value(fe, right)))
    op, amount = interval_parts(right)
    if fe.type_of(date) == "timestamptz" and any(
        _UNITS[u][0] != "add_seconds" for _, u in _interval_pairs(right)
    ):
        raise unsupported(
            f"an INTERVAL of days, weeks, months or years added to a TIMESTAMPTZ "
            f"{ZONE_DEPENDENT}",
            node,
        )
    if fe.type_of(date) not in TIMES | {"timestamptz"}:
        raise unsupported("INTERVAL arithmetic needs a DATE or TIMESTAMP operand", node)
    if op == "add_seconds" and fe.type_of(date) == "date":  # DuckDB: a TIMESTAMP
        date = to_timestamp(date)
    if isinstance(date, Lit):
        return Lit(shift_date(date.value, op, sign * amount))
    return Op(op, (date, Lit(sign * amount)))


def _timestamps(fe, a, b, sign: int) -> tuple:
    """The operands of `a ± b` with a DATE read as its midnight where the
    result is a TIMESTAMP or an INTERVAL (a TIMESTAMP's difference, an
    INTERVAL added), as DuckDB does."""
    kinds = (fe.type_of(a), fe.type_of(b))
    takes = (
        {"timestamp", "interval"} if sign > 0 or kinds[1] != "date" else {"timestamp"}
    )
    if kinds[0] == "date" and kinds[1] in takes:
        a = to_timestamp(a)
    if kinds[1] == "date" and kinds[0] in takes:
        b = to_timestamp(b)
    return a, b


def _interval_value(fe, node: exp.Interval) -> Lit:
    """An INTERVAL of seconds, minutes, hours, days or weeks as a value (a
    timedelta); one of months or years has no fixed length but DuckDB's
    30-day month, refused."""
    if not _fixed(node) and node.this is not None:  # INTERVAL (k) DAY
        return _interval_times(fe, node)
    op, amount = interval_parts(node)
    if op == "add_months":
        raise unsupported(
            "an INTERVAL of months or years is supported added to a DATE or "
            "TIMESTAMP; as a value, an INTERVAL of days, hours, minutes or seconds",
            node,
        )
    unit = 86400 if op == "add_days" else 1
    return Lit(datetime.timedelta(seconds=amount * unit))


def _whole_literal(e) -> bool:
    return isinstance(e, Lit) and type(e.value) is int


def shift_date(value: datetime.date, op: str, amount: int) -> datetime.date:
    """Add seconds, days or months to a date or timestamp as SQL does
    (clamping to the month's end)."""
    if op == "add_seconds":
        return value + datetime.timedelta(seconds=amount)
    if op == "add_days":
        return value + datetime.timedelta(days=amount)
    months = value.year * 12 + value.month - 1 + amount
    year, month = divmod(months, 12)
    month += 1
    for day in (value.day, 30, 29, 28):
        try:
            return value.replace(year=year, month=month, day=day)
        except ValueError:
            continue
    raise AssertionError("unreachable")


def _comparison(op: str) -> Callable:
    def convert(fe, node):
        if op in ("eq", "ne") and isinstance(node.this, exp.Tuple):
            same = _same_row(fe, node.this, node.expression, node)
            return same if op == "eq" else Op("not", (same,))
        if isinstance(node.this, exp.Tuple) or isinstance(node.expression, exp.Tuple):
            return _row_order(fe, op, node)
        left, right = fe.expr(node.this), fe.expr(node.expression)
        left, right = coerce_literals(left, right, fe.type_of, node)
        return Op(op, (_as_single(fe, right, left), _as_single(fe, left, right)))

    return convert


def _as_single(fe, column, value):
    """`value`, a DOUBLE literal compared with a REAL (FLOAT) column or
    value, as the 4-byte float DuckDB casts it to (`x = 0.1` holds for the
    0.1 such a column keeps); anything else unchanged."""
    if not (isinstance(value, Lit) and type(value.value) is float):
        return value
    if not is_single(fe, column):
        return value
    single = sqlfuncs._single(value.value)
    return value if single is None else Lit(single)


def _null_safe(fe, node):
    """`a IS [NOT] DISTINCT FROM b`: COALESCE(a = b, a IS NULL AND b IS NULL),
    never NULL. Between columns of two tables it is a join on a variable whose
    NULLs join each other (`null_safe_pair`)."""
    left, right = coerce_literals(
        fe.expr(node.this), fe.expr(node.expression), fe.type_of, node
    )
    both_null = Op("and", (Op("isnull", (left,)), Op("isnull", (right,))))
    same = Op("coalesce", (Op("eq", (left, right)), both_null))
    return Op("not", (same,)) if isinstance(node, exp.NullSafeNEQ) else same


def null_safe_pair(cond) -> tuple | None:
    """The two columns of a condition `_null_safe` made of `a IS NOT
    DISTINCT FROM b` over two columns, else None."""
    if not (isinstance(cond, Op) and cond.op == "coalesce" and len(cond.args) == 2):
        return None
    eq, both = cond.args
    if not (isinstance(eq, Op) and eq.op == "eq" and isinstance(both, Op)):
        return None
    left, right = eq.args
    nulls = (Op("isnull", (left,)), Op("isnull", (right,)))
    if both.op != "and" or both.args != nulls:
        return None
    if isinstance(left, Ref) and isinstance(right, Ref):
        return left, right
    return None


def _like(fe, node):
    name = "ILIKE" if isinstance(node, exp.ILike) else "LIKE"
    pattern = fe.expr(node.expression)
    if node.args.get("escape") is not None:
        raise unsupported(f"{name} … ESCAPE is not supported", node)
    subject = fe.expr(node.this)
    computed = not (isinstance(pattern, Lit) and isinstance(pattern.value, str))
    if isinstance(node, exp.ILike):  # case-insensitive: both sides lowered
        subject = Op("lower", (subject,))
        pattern = Op("lower", (pattern,)) if computed else Lit(pattern.value.lower())
    result = Op("like_match" if computed else "like", (subject, pattern))
    return Op("not", (result,)) if node.args.get("negate") else result


def _glob(fe, node):
    """`s GLOB p` (a constant p): all of s matched by p's `*` (any text),
    `?` (one character) and `[…]` classes (`[!…]`: not in it), the rest
    literally and case-sensitively, as the regular expression it stands for."""
    pattern = fe.expr(node.expression)
    if not (isinstance(pattern, Lit) and isinstance(pattern.value, str)):
        raise unsupported("GLOB needs a string literal pattern", node)
    text, parts, i = pattern.value, [], 0
    while i < len(text):
        ch = text[i]
        if ch == "[":
            end = text.find("]", i + 2)
            chars = text[i + 1 : end]
            if end < 0 or "\\" in chars or "[" in chars:
                raise unsupported(f"GLOB pattern {text!r} is not supported", node)
            negated = chars.startswith("!")
            chars = chars[1:] if negated else chars
            if chars.startswith("^"):
                raise unsupported(f"GLOB pattern {text!r} is not supported", node)
            parts.append(f"[{'^' if negated else ''}{chars}]")
            i = end + 1
            continue
        if ch == "\\":
            raise unsupported(f"GLOB pattern {text!r} is not supported", node)
        parts.append(".*" if ch == "*" else "." if ch == "?" else re.escape(ch))
        i += 1
    regex = rf"(?s)\A(?:{''.join(parts)})\Z"
    try:
        re.compile(regex)
    except re.error:
        raise unsupported(f"GLOB pattern {text!r} is not supported", node) from None
    return Op("regexp", (fe.expr(node.this), Lit(regex), Lit(False)))


def _regexp(fe, node):
    """REGEXP_MATCHES(s, p[, 'i']), `s ~ p` and `s ~* p` (p matches a part
    of s; ~* ignoring case), REGEXP_FULL_MATCH(s, p) and `s SIMILAR TO p`
    (all of s), with DuckDB's RE2 syntax for a constant p, as a Python
    pattern searched for."""
    name = _REGEXP_NAMES[type(node)]
    pattern = fe.expr(node.expression)
    if not (isinstance(pattern, Lit) and isinstance(pattern.value, str)):
        raise unsupported(f"{name} needs a string literal pattern", node)
    flag = node.args.get("flag")
    partial = isinstance(node, (exp.RegexpLike, exp.RegexpILike))
    ignore_case = isinstance(node, exp.RegexpILike)
    options = fe.expr(flag) if flag is not None else Lit("i" if ignore_case else "")
    if not (isinstance(options, Lit) and options.value in ("", "c", "i")):
        raise unsupported(
            f"{name}: of the options only 'i' (ignore case) and 'c' are supported",
            node,
        )
    try:
        regex = python_regex(pattern.value)
    except ValueError as err:
        raise unsupported(f"{name}: {err}", node) from None
    if not partial:  # the whole string
        regex = rf"\A(?:{regex})\Z"
        try:
            re.compile(regex)
        except re.error as err:  # (?i) is no longer at the start
            raise unsupported(f"{name}: {err}", node) from None
    result = Op("regexp", (fe.expr(node.this), Lit(regex), Lit(options.value == "i")))
    return Op("not", (result,)) if node.args.get("negate") else result


def _regexp_replace(fe, node):
    """REGEXP_REPLACE(s, p, r[, 'g' | 'i' …]): the first match (every one
    with 'g') replaced by r, whose \\1 … \\9 are the groups (\\0 the match)."""
    pattern, replacement = fe.expr(node.expression), fe.expr(node.args["replacement"])
    modifiers = node.args.get("modifiers")
    options = fe.expr(modifiers) if modifiers is not None else Lit("")
    texts = (pattern, replacement, options)
    if not all(isinstance(x, Lit) and isinstance(x.value, str) for x in texts):
        raise unsupported(
            "REGEXP_REPLACE needs string literals for its pattern, replacement "
            "and options",
            node,
        )
    if set(options.value) - set("gic"):
        raise unsupported(
            "REGEXP_REPLACE: of the options only 'g', 'i' and 'c' are supported", node
        )
    try:
        regex = python_regex(pattern.value)
        rewrite = _python_rewrite(replacement.value, re.compile(regex).groups)
    except ValueError as err:
        raise unsupported(f"REGEXP_REPLACE: {err}", node) from None
    every, icase = "g" in options.value, "i" in options.value
    args = (fe.expr(node.this), Lit(regex), Lit(rewrite), Lit(every), Lit(icase))
    return Op("regexp_replace", args)


def _regexp_extract(fe, node):
    """REGEXP_EXTRACT(s, p[, group]): the first match (or its group), '' if
    none."""
    pattern = fe.expr(node.expression)
    group = fe.expr(node.args["group"]) if node.args.get("group") else Lit(0)
    if not (isinstance(pattern, Lit) and isinstance(pattern.value, str)):
        raise unsupported("REGEXP_EXTRACT needs a string literal pattern", node)
    if not (isinstance(group, Lit) and type(group.value) is int):
        raise unsupported("REGEXP_EXTRACT needs a constant group number", node)
    try:
        regex = python_regex(pattern.value)
    except ValueError as err:
        raise unsupported(f"REGEXP_EXTRACT: {err}", node) from None
    if not 0 <= group.value <= re.compile(regex).groups:
        raise sql_error(f"REGEXP_EXTRACT: the pattern has no group {group.value}", node)
    return Op("regexp_extract", (fe.expr(node.this), Lit(regex), group))


def _overlay(fe, node):
    """OVERLAY(s PLACING r FROM start [FOR n]): s with its n characters from
    `start` replaced by r; without FOR (or n < 0, as DuckDB) n is r's length."""
    count = node.args.get("for_")
    args = (node.this, node.expression, node.args["from_"])
    return Op(
        "overlay",
        tuple(fe.expr(a) for a in args) + (fe.expr(count) if count else Lit(-1),),
    )


def _python_rewrite(rewrite: str, groups: int) -> str:
    """RE2's replacement (\\0 … \\9 the groups, \\\\ a backslash) for re.sub."""
    out, i = [], 0
    while i < len(rewrite):
        ch = rewrite[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        nxt = rewrite[i + 1 : i + 2]
        if nxt == "\\":
            out.append("\\\\")
        elif nxt.isdigit() and int(nxt) <= groups:
            out.append(f"\\g<{nxt}>")
        else:
            raise ValueError(f"invalid replacement {rewrite!r} (\\{nxt})")
        i += 2
    return "".join(out)


_REGEXP_NAMES = {
    exp.RegexpLike: "REGEXP_MATCHES",
    exp.RegexpILike: "~*",
    exp.RegexpFullMatch: "REGEXP_FULL_MATCH",
    exp.SimilarTo: "SIMILAR TO",
}


def python_regex(pattern: str) -> str:
    r"""RE2's `pattern` for Python's re, or ValueError for what the two read
    differently: `$` (RE2: the end of the text; Python: also before a final
    newline) becomes `\Z`; POSIX classes, backreferences and lookarounds
    (RE2 has none of the last two) and anything re cannot compile are
    refused."""
    out, i, in_class = [], 0, False
    # per open group: whether it repeats or alternates inside (a repetition
    # of such a group can backtrack exponentially in Python, not in RE2)
    groups: list[bool] = [False]
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            nxt = pattern[i + 1 : i + 2]
            if nxt.isdigit() and nxt != "0":
                raise ValueError("backreferences are not regular expressions (RE2)")
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if not in_class and ch == "(":
            groups.append(False)
        elif not in_class and ch in "|*+?{" and _quantifier(pattern, i):
            groups[-1] = True
        elif not in_class and ch == ")" and len(groups) > 1:
            inner = groups.pop()
            if inner and _quantifier(pattern, i + 1, after_group=True):
                raise ValueError(
                    "a repeated group that itself repeats or alternates (such as "
                    "(a+)+) can take exponential time in Python's re; RE2 does "
                    "not backtrack"
                )
            groups[-1] |= inner
        if in_class:
            if pattern.startswith("[:", i):
                raise ValueError("POSIX classes such as [[:alpha:]] are not supported")
            in_class = ch != "]" or out[-1] == "["
        elif ch == "[":
            in_class = True
            if pattern.startswith("[[:", i) or pattern.startswith("[^[:", i):
                raise ValueError("POSIX classes such as [[:alpha:]] are not supported")
        elif pattern.startswith(("(?=", "(?!", "(?<=", "(?<!"), i):
            raise ValueError("lookarounds are not regular expressions (RE2)")
        elif ch == "$":
            ch = "\\Z"
        out.append(ch)
        i += 1
    regex = "".join(out)
    try:
        re.compile(regex)
    except re.error as err:
        raise ValueError(f"invalid pattern {pattern!r} ({err})") from None
    return regex


def _quantifier(pattern: str, i: int, after_group: bool = False) -> bool:
    """Whether pattern[i] repeats what precedes it (or, not `after_group`, is
    an alternation `|`): `*`, `+`, `?` (not the `?` of `(?:` or of a lazy
    `*?`), `{n}`, `{n,}`, `{n,m}`."""
    ch = pattern[i : i + 1]
    if ch == "|":
        return not after_group
    if ch in ("*", "+"):
        return True
    if ch == "?":  # after a group: optional, not repeated
        return not after_group and (i == 0 or pattern[i - 1] not in "(*+?}")
    return ch == "{" and re.match(r"\{\d+(,\d*)?\}", pattern[i:]) is not None


def _escape(fe, node):
    """`s LIKE p ESCAPE 'c'` ([NOT] [I]LIKE): after `c`, a `%`, `_` or `c`
    is itself; the pattern becomes a regular expression of the whole
    string (`%` any characters, newlines too; `_` one)."""
    like = node.this
    if not isinstance(like, (exp.Like, exp.ILike)):
        raise unsupported("ESCAPE is supported after LIKE and ILIKE", node)
    name = "ILIKE" if isinstance(like, exp.ILike) else "LIKE"
    pattern, escape = fe.expr(like.expression), fe.expr(node.expression)
    if not all(
        isinstance(x, Lit) and isinstance(x.value, str) for x in (pattern, escape)
    ):
        raise unsupported(f"{name} … ESCAPE needs string literals", node)
    if len(escape.value) != 1:
        raise sql_error("the ESCAPE of LIKE must be one character", node)
    text, parts, i = pattern.value, [], 0
    if isinstance(like, exp.ILike):
        text = text.lower()
    while i < len(text):
        ch = text[i]
        if ch == escape.value:
            if i + 1 == len(text):
                raise sql_error("a LIKE pattern must not end with its ESCAPE", node)
            parts.append(re.escape(text[i + 1]))
            i += 2
            continue
        parts.append(".*" if ch == "%" else "." if ch == "_" else re.escape(ch))
        i += 1
    subject = fe.expr(like.this)
    if isinstance(like, exp.ILike):
        subject = Op("lower", (subject,))
    regex = rf"(?s)\A(?:{''.join(parts)})\Z"
    result = Op("regexp", (subject, Lit(regex), Lit(False)))
    return Op("not", (result,)) if like.args.get("negate") else result


def _in(fe, node):
    if node.args.get("query") is not None or node.args.get("unnest") is not None:
        raise unsupported("IN (subquery) is not supported", node)
    if isinstance(node.this, exp.Tuple):
        return _row_in(fe, node)
    if not node.expressions:
        raise unsupported("IN of an empty list is not supported", node)
    values = [fe.expr(v) for v in node.expressions]
    value = fe.expr(node.this)
    known = [v for v in values if not (isinstance(v, Lit) and v.value is None)]
    if all(isinstance(v, Lit) for v in known):
        known = [
            _as_single(fe, value, coerce_literals(value, v, fe.type_of, node)[1])
            for v in known
        ]
        found = Op("in", (value, *known)) if known else None
    else:  # x IN (a, b + 1): x = a OR x = b + 1, in three-valued logic
        tests = [Op("eq", coerce_literals(value, v, fe.type_of, node)) for v in known]
        found = _chain("or", tests)
    if len(known) == len(values):
        return found
    # a NULL in the list: TRUE where x is found, else NULL (x = NULL is
    # NULL), as a CASE, which is NULL where NOT … is too
    return Op("case", (found, Lit(True), Lit(None)) if found else (Lit(None),))


def _row_in(fe, node):
    """`(a, b) IN ((1, 'x'), (c, d))`: some row of the list is the same
    (`_same_row`), never NULL."""
    rows = node.expressions
    return _chain("or", [_same_row(fe, node.this, row, node) for row in rows])


def _same_row(fe, left: exp.Tuple, right: exp.Expression, node):
    """`(a, b) = (c, d)`: DuckDB compares rows as STRUCTs, a NULL field
    equal to a NULL and unequal to any value, so the test is never NULL:
    equal field by field (IS NOT DISTINCT FROM; between two tables'
    columns, a join whose NULLs join each other)."""
    items = right.expressions if isinstance(right, exp.Tuple) else [right]
    if len(items) != len(left.expressions):
        raise sql_error(
            f"a row of {len(left.expressions)} values compared with a row of "
            f"{len(items)}",
            right,
        )
    return _chain(
        "and",
        [
            _not_distinct(fe, fe.expr(field), fe.expr(item), node)
            for field, item in zip(left.expressions, items)
        ],
    )


def _row_order(fe, op: str, node) -> Op:
    """`(a, b) < (c, d)` (and <=, >, >=): DuckDB compares rows as STRUCTs,
    field by field in order, a NULL field above every value and equal to a
    NULL, so the test is never NULL: a < c, or a equal to c and b < d."""
    rows = [node.this, node.expression]
    if not all(isinstance(r, exp.Tuple) for r in rows):
        raise unsupported("a row is compared with a row of as many values", node)
    left, right = ([fe.expr(e) for e in r.expressions] for r in rows)
    if len(left) != len(right):
        raise sql_error(
            f"a row of {len(left)} values compared with a row of {len(right)}", node
        )
    if op in ("gt", "ge"):  # b > a is a < b
        left, right, op = right, left, "lt" if op == "gt" else "le"
    pairs = [coerce_literals(a, b, fe.type_of, node) for a, b in zip(left, right)]
    *firsts, (a, b) = pairs
    test = _below(a, b)
    if op == "le":
        test = Op("or", (test, _not_distinct(fe, a, b, node)))
    for a, b in reversed(firsts):
        same = _not_distinct(fe, a, b, node)
        test = Op("or", (_below(a, b), Op("and", (same, test))))
    return test


def _below(a, b) -> Op:
    """`a` below `b` where NULL is above every value (never NULL)."""
    below = Op("coalesce", (Op("lt", (a, b)), Lit(False)))
    null_above = Op("and", (Op("not", (Op("isnull", (a,)),)), Op("isnull", (b,))))
    return Op("or", (below, null_above))


def _not_distinct(fe, left, right, node):
    """`left IS NOT DISTINCT FROM right`, never NULL (as `_null_safe`),
    simpler against a literal."""
    left, right = coerce_literals(left, right, fe.type_of, node)
    if isinstance(left, Lit):
        left, right = right, left
    if isinstance(right, Lit) and right.value is None:
        return Op("isnull", (left,))
    if isinstance(right, Lit):
        return Op("coalesce", (Op("eq", (left, right)), Lit(False)))
    both_null = Op("and", (Op("isnull", (left,)), Op("isnull", (right,))))
    return Op("coalesce", (Op("eq", (left, right)), both_null))


def _chain(op: str, terms: list):
    """`a op b op …` of "and" or "or", nested to the left, as parsed."""
    out = terms[0]
    for term in terms[1:]:
        out = Op(op, (out, term))
    return out


def _between(fe, node):
    low = _comparison("ge")(fe, exp.GTE(this=node.this, expression=node.args["low"]))
    high = _comparison("le")(fe, exp.LTE(this=node.this, expression=node.args["high"]))
    return Op("and", (low, high))


def _case(fe, node: exp.Case):
    subject = node.this
    args = []
    for branch in node.args.get("ifs") or []:
        cond = branch.this
        if subject is not None:
            cond = exp.EQ(this=subject.copy(), expression=cond)
        args += [fe.expr(cond), fe.expr(branch.args["true"])]
    default = node.args.get("default")
    args.append(fe.expr(default) if default is not None else Lit(None))
    results = widen(fe, args[1::2] + args[-1:])
    args[1::2], args[-1] = results[:-1], results[-1]
    return Op("case", tuple(args))


# EXTRACT/DATE_PART field -> IR operator (DuckDB's names and synonyms)
DATE_PARTS = {
    "YEAR": "year",
    "MONTH": "month",
    "DAY": "day",
    "QUARTER": "quarter",
    "DOW": "dayofweek",
    "DAYOFWEEK": "dayofweek",
    "DOY": "dayofyear",
    "DAYOFYEAR": "dayofyear",
    "WEEK": "week",
    "HOUR": "hour",
    "MINUTE": "minute",
    "SECOND": "second",
    "EPOCH": "epoch",
    "ISODOW": "isodow",
    "ISOYEAR": "isoyear",
    "YEARWEEK": "yearweek",
    "DECADE": "decade",
    "CENTURY": "century",
    "MILLENNIUM": "millennium",
    "MILLISECOND": "millisecond",
    "MILLISECONDS": "millisecond",
    "MICROSECOND": "microsecond",
    "MICROSECONDS": "microsecond",
}


# the parts of a time of day (of a DATE: its midnight's)
TIME_OF_DAY = (*TIME_PART_OPS, "epoch")
# date-part functions by name (DuckDB's): the part they read
PART_FUNCTIONS = {
    "weekday": "dow",
    "isoyear": "isoyear",
    "yearweek": "yearweek",
    "decade": "decade",
    "century": "century",
    "millennium": "millennium",
    "millisecond": "millisecond",
    "microsecond": "microsecond",
}


def _date_part(fe, part: str, value, node):
    op = DATE_PARTS.get(part.upper())
    if op is None:
        raise unsupported(
            f"date part {part} is not supported; supported: "
            + ", ".join(sorted(DATE_PARTS)),
            node,
        )
    if fe.type_of(value) == "interval":
        if op == "epoch":
            return Op("interval_epoch", (value,))
        if op in sqlfuncs.DIFFERENCE_PARTS and _difference(fe, value):
            return Op("difference_part", (value, Lit(op)))
        raise unsupported(
            f"EXTRACT({part} FROM an INTERVAL) is supported of a difference of "
            "TIMESTAMPs (t1 - t2: DAY, HOUR, MINUTE, SECOND, MILLISECOND, "
            "MICROSECOND); of any INTERVAL, EPOCH(i) or EXTRACT(EPOCH FROM i) "
            "are its seconds",
            node,
        )
    if op in TIME_OF_DAY and fe.type_of(value) == "date":
        value = to_timestamp(value)  # midnight: 0
    if op == "epoch" and fe.type_of(value) == "timestamptz":  # an instant's
        return Op("interval_epoch", (Op("sub", (value, Lit(_UTC_EPOCH))),))
    return Op(op, (value,))


_UTC_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def _difference(fe, value) -> bool:
    """Whether an INTERVAL is `t1 - t2` of two TIMESTAMPs, which DuckDB
    holds as days and microseconds (`INTERVAL 36 HOUR` it holds as hours,
    a `datetime.timedelta` does not tell them apart)."""
    return (
        isinstance(value, Op)
        and value.op == "sub"
        and all(fe.type_of(a) == "timestamp" for a in value.args)
    )


def _extract(fe, node: exp.Extract):
    return _date_part(fe, node.this.name, fe.expr(node.expression), node)


def _time_bucket(fe, node: exp.DateBin):
    """TIME_BUCKET(INTERVAL …, t) (DuckDB's default origin only)."""
    width = node.this
    if not isinstance(width, exp.Interval) or any(
        node.args.get(a) for a in ("zone", "origin")
    ):
        raise unsupported(
            "TIME_BUCKET is supported as TIME_BUCKET(INTERVAL …, t)", node
        )
    op, amount = interval_parts(width)
    if amount <= 0:
        raise unsupported("TIME_BUCKET needs a positive width", node)
    seconds = amount * (86400 if op == "add_days" else 1)
    months = 0
    if op == "add_months":
        seconds, months = 0, amount
    return Op("time_bucket", (Lit(seconds), Lit(months), fe.expr(node.expression)))


def _date_add(fe, node: exp.DateAdd):
    """DATE_ADD(d, INTERVAL …): d + INTERVAL …."""
    if not isinstance(node.expression, exp.Interval):
        raise unsupported("DATE_ADD is supported with an INTERVAL", node)
    return fe.expr(exp.Add(this=node.this.copy(), expression=node.expression.copy()))


def _sha2(fe, node: exp.SHA2):
    """SHA256(s) (DuckDB's only SHA-2 length)."""
    length = node.args.get("length")
    if length is not None and length.name != "256":
        raise unsupported(f"SHA2 of length {length.name} is not supported", node)
    return Op("sha256", (fe.expr(node.this),))


def _epoch(fe, node: exp.TimeToUnix):
    """EPOCH(t): the seconds since 1970-01-01, as EXTRACT(epoch FROM t)."""
    return _date_part(fe, "epoch", fe.expr(node.this), node)


# DATE_TRUNC units (DuckDB's spellings, singular or plural)
TRUNC_UNITS = ("year", "quarter", "month", "week", "day", "hour", "minute", "second")


def _date_trunc(fe, node: exp.TimestampTrunc):
    """DATE_TRUNC('month', d): of a DATE the first day of its unit (a DATE;
    DuckDB says TIMESTAMP, at midnight of that day, as for date + INTERVAL),
    of a TIMESTAMP the first instant of its unit."""
    unit = node.text("unit").lower()
    unit = unit[:-1] if unit.endswith("s") else unit
    if unit not in TRUNC_UNITS:
        raise unsupported(
            f"DATE_TRUNC unit {node.text('unit')!r} is not supported; supported: "
            + ", ".join(TRUNC_UNITS),
            node,
        )
    return Op("date_trunc", (Lit(unit), fe.expr(node.this)))


def _strftime(fe, node: exp.TimeToStr):
    """STRFTIME(t, 'format') (or with the format first, as DuckDB also
    takes it): the format must be a string literal of the specifiers
    `functions.STRFTIME_CODES`, so that an unknown one is refused here."""
    value, fmt = node.this, node.args.get("format")
    if isinstance(value, exp.Literal) and value.is_string:
        value, fmt = fmt, value
    if not (isinstance(fmt, exp.Literal) and fmt.is_string):
        raise unsupported("STRFTIME needs a string literal format", node)
    text = fmt.this
    i = 0
    while i < len(text):
        if text[i] != "%":
            i += 1
            continue
        flag = text[i + 1 : i + 2] == "-"  # no zero padding
        code = text[i + 1 + flag : i + 2 + flag]
        if not code or code not in STRFTIME_CODES or (flag and code in "aAbBp%"):
            raise unsupported(
                f"STRFTIME format {text!r}: the specifier at position {i + 1} "
                "is not supported; supported: "
                + " ".join(f"%{c}" for c in STRFTIME_CODES),
                node,
            )
        i += 2 + flag
    return Op("strftime", (Lit(text), fe.expr(value)))


def _variadic(op: str) -> Callable:
    """COALESCE, GREATEST, LEAST: `this` and then `expressions`."""
    return lambda fe, node: Op(
        op, tuple(widen(fe, [fe.expr(a) for a in [node.this, *node.expressions]]))
    )


def _column_text(fe, column: Ref) -> Op:
    """A DOUBLE or DECIMAL column as VARCHAR: its declared type says how
    DuckDB spells it, a DECIMAL with every digit of its scale (1.50), a
    DOUBLE by its shortest repr (an expression's type is not told apart
    so surely: refused)."""
    scale = fe.digits_of(column)
    return Op("to_str", (column,) if scale is None else (column, Lit(scale)))


def _as_text(fe, value, node, name: str):
    """An argument of CONCAT, CONCAT_WS or || as VARCHAR: an INTEGER,
    BOOLEAN, DATE, TIMESTAMP or TIME, or a number `_number_text` spells, as
    DuckDB spells it (a NULL stays NULL)."""
    kind = fe.type_of(value)
    if kind in ("int", "bool", "date", "timestamp", "time"):
        if isinstance(value, Lit):
            return Lit(_to_str(value.value))
        return Op("to_str", (value,))
    text = _number_text(fe, value, node) if kind == "float" else None
    if text is not None:
        return text
    if kind in ("timestamptz", "interval"):
        raise unsupported(f"{name} of a {_SQL_TYPES[kind]} is not supported", node)
    if kind not in ("str", None):
        raise unsupported(
            f"{name} of a DOUBLE or DECIMAL expression is not supported here "
            "(DuckDB's spelling of a number as text: of a column, arithmetic of "
            "DOUBLEs or a DECIMAL expression without a division, its literals "
            "written without trailing zeros, it is; or CAST it to INTEGER first)",
            node,
        )
    return value


def _pipe(fe, node):
    """`a || b`: NULL where either is; each side cast to VARCHAR as DuckDB
    spells it (`_as_text`: 1.50 of a DECIMAL(10, 2) column, true, a
    TIMESTAMP's fraction without trailing zeros, a DOUBLE its shortest
    repr)."""
    sides = (node.this, node.expression)
    return Op("concat", tuple(_as_text(fe, fe.expr(s), s, "||") for s in sides))


def _number_text(fe, value, node: exp.Expression):
    """A REAL, DECIMAL or DOUBLE `value` (a float, written as `node`) as VARCHAR, as
    DuckDB spells it: a REAL by its fewest digits, a DECIMAL expression with
    every digit of its scale (`_decimal_text`), a DOUBLE column or
    arithmetic of DOUBLEs by its shortest repr; None where DuckDB's
    spelling is not known surely."""
    if is_single(fe, value):
        return Op("real_to_str", (value,))
    text = _decimal_text(fe, value, node)
    if text is not None:
        return text
    if isinstance(value, Ref):
        return _column_text(fe, value)
    if isinstance(value, Op) and _of_doubles(fe, value):
        return Op("to_str", (value,))  # its shortest repr, as DuckDB's
    return None


def _decimal_text(fe, value, node: exp.Expression):
    """A DECIMAL expression as VARCHAR (None if `value` is none): every
    digit of the scale DuckDB's type of it has (`price * 2` 25.00, `price *
    1.5` 18.750, `SUM(price)`, ROUND(x, 1), CEIL, MIN/MAX), which is the
    digits `digits_of` counts (a product's scales summed, the larger of a
    sum's, ROUND's n where smaller) while every number literal in it is
    written with the digits its value needs (1.5; 1.50 and 1.0 have a
    scale their values do not tell, so are refused); a literal alone is
    spelt as written."""
    if fe.type_of(value) != "float" or is_single(fe, value):
        return None
    if isinstance(node, exp.Literal) and not node.is_string:
        text = node.name  # DuckDB's DECIMAL literal: as written (1.50)
        return Lit(text) if re.fullmatch(r"\d+\.\d+", text) else None
    scale = fe.digits_of(value)
    if isinstance(node, exp.Cast) and node.to.this.name == "DECIMAL":
        scale = declared_scale(node.to)  # its type's, whatever the value needs
        node = node.this
    if scale is None or any(
        isinstance(c, exp.Cast) and c.to.this.name == "DECIMAL"
        for c in node.find_all(exp.Cast)
    ):  # (a CAST to DECIMAL inside: a scale the value may not tell)
        return None
    for literal in node.find_all(exp.Literal):
        text = literal.name
        if literal.is_string or re.fullmatch(r"\d+", text):
            continue
        written = re.fullmatch(r"\d*\.(\d*)", text)
        needed = repr(float(text)).split(".")[1].rstrip("0") if written else None
        if written is None or len(written[1]) != len(needed):
            return None
    return Op("to_str", (value, Lit(scale)))


def _of_doubles(fe, e) -> bool:
    """Whether `e` is surely a DOUBLE in DuckDB: a number computed from
    DOUBLE columns and integers only (a DECIMAL column or literal, or a CAST
    to DECIMAL, may make it a DECIMAL, whose text shows every digit of its
    scale)."""
    return fe.type_of(e) == "float" and _without_decimals(fe, e)


def _without_decimals(fe, e) -> bool:
    if isinstance(e, Lit):
        return not isinstance(e.value, float)
    if isinstance(e, Ref):
        return fe.type_of(e) != "float" or fe.digits_of(e) is None
    if isinstance(e, Op) and e.op != "to_decimal":
        return all(_without_decimals(fe, a) for a in e.args)
    return False


def _concat(fe, node):
    """CONCAT(a, b, …): NULL arguments count as '' and an INTEGER, BOOLEAN,
    DATE or TIMESTAMP is cast to VARCHAR (as DuckDB)."""
    parts = []
    for arg in node.expressions:
        value = _as_text(fe, fe.expr(arg), arg, "CONCAT")
        if isinstance(value, Lit):
            if value.value is not None:
                parts.append(value)
        else:
            parts.append(Op("coalesce", (value, Lit(""))))
    return _concatenated(parts)


def _format(fe, node: exp.Format):
    """FORMAT('…{}…', a, …) with `{}` and `{n}` fields (`{{`, `}}` for
    braces): each argument as DuckDB's FORMAT spells it (a number's shortest
    repr, a DECIMAL's as a DOUBLE's), the pieces concatenated; NULL if any
    argument is."""
    pattern = node.this
    if not (isinstance(pattern, exp.Literal) and pattern.is_string):
        raise unsupported("FORMAT needs its format as a string literal", node)
    args, parts, used, auto, manual = node.expressions, [], set(), 0, False
    for text, field in _format_fields(pattern.this, node):
        if text:
            parts.append(Lit(text))
        if field is None:
            continue
        if field == "":
            field, auto = auto, auto + 1
        else:
            manual = True
        if auto and manual:
            raise unsupported(
                "FORMAT mixes {} and {n} fields (an error in DuckDB)", node
            )
        if int(field) >= len(args):
            raise unsupported(f"FORMAT has no argument {int(field) + 1}", node)
        used.add(int(field))
        parts.append(_formatted(fe, args[int(field)], "FORMAT"))
    if used != set(range(len(args))):
        raise unsupported("FORMAT with arguments its format does not use", node)
    return _concatenated(parts)


def _format_fields(text: str, node) -> list:
    """(literal text, field or None) pairs of a FORMAT string: a field is ''
    for `{}`, its digits for `{n}`; other fields (`{:…}`) refused."""
    out, i, piece = [], 0, []
    while i < len(text):
        ch = text[i]
        if ch in "{}" and text[i : i + 2] in ("{{", "}}"):
            piece.append(ch)
            i += 2
            continue
        if ch == "}":
            raise unsupported("FORMAT: a '}' without its '{'", node)
        if ch == "{":
            end = text.find("}", i)
            field = text[i + 1 : end] if end > 0 else ":"
            if not (field == "" or field.isdigit()):
                raise unsupported(
                    f"FORMAT field {{{field}}} is not supported (only {{}} and {{n}})",
                    node,
                )
            out.append(("".join(piece), field))
            piece, i = [], end + 1
            continue
        piece.append(ch)
        i += 1
    out.append(("".join(piece), None))
    return out


def _formatted(fe, arg, name: str):
    """A FORMAT or PRINTF %s argument as text: a string as it is, an
    INTEGER, BOOLEAN, DATE, TIMESTAMP or TIME as its CAST, a DECIMAL or
    DOUBLE as the DOUBLE's shortest repr."""
    value = fe.expr(arg)
    kind = fe.type_of(value)
    if kind in ("str", None):
        return value
    if kind not in ("int", "bool", "date", "timestamp", "time", "float"):
        raise unsupported(f"{name} of a {_SQL_TYPES[kind]} is not supported", arg)
    if isinstance(value, Lit):
        return Lit(_to_str(value.value))
    return Op("to_str", (_as_double(fe, value),))


def _concatenated(parts: list):
    """The pieces' concatenation (NULL if one is)."""
    out = parts[0] if parts else Lit("")
    for part in parts[1:]:
        out = Op("concat", (out, part))
    return out


# PRINTF's specifiers: %[flags][width][.precision]conversion
_PRINTF_SPEC = re.compile(r"%(?P<spec>[-+ 0]*\d*(?:\.\d+)?)(?P<conv>[sdifeEgG])|%%")


def _printf(fe, node: exp.Anonymous):
    """PRINTF('…', a, …): %s of strings, booleans, dates and
    timestamps, %d and %i of integers, %f %e %g of numbers, with flags,
    width and precision, as C's printf (Python's % formatting is C's); an
    argument of another type is DuckDB's error, refused here."""
    pattern, *args = node.expressions
    if not (isinstance(pattern, exp.Literal) and pattern.is_string):
        raise unsupported("PRINTF needs its format as a string literal", node)
    text, parts, at, n = pattern.this, [], 0, 0
    for m in _PRINTF_SPEC.finditer(text):
        literal = text[at : m.start()]
        at = m.end()
        if "%" in literal:
            raise unsupported(f"PRINTF format {text!r} is not supported", node)
        if m.group(0) == "%%":
            parts.append(Lit(literal + "%"))
            continue
        if literal:
            parts.append(Lit(literal))
        if n >= len(args):
            raise unsupported(f"PRINTF has no argument {n + 1}", node)
        parts.append(_printf_value(fe, args[n], m.group("spec"), m.group("conv")))
        n += 1
    if "%" in text[at:]:
        raise unsupported(f"PRINTF format {text!r} is not supported", node)
    if text[at:]:
        parts.append(Lit(text[at:]))
    if n != len(args):
        raise unsupported("PRINTF with arguments its format does not use", node)
    return _concatenated(parts)


def _printf_value(fe, arg, spec: str, conv: str):
    value = fe.expr(arg)
    kind = fe.type_of(value)
    allowed = {"s": ("str", "bool", "date", "timestamp", "time"), "d": ("int", "bool")}
    kinds = allowed.get("d" if conv == "i" else conv, ("float",))
    if kind in ("timestamptz", "interval"):
        raise unsupported(f"PRINTF of a {_SQL_TYPES[kind]} is not supported", arg)
    if kind is not None and kind not in kinds:
        raise unsupported(
            f"PRINTF %{conv} of a {_SQL_TYPES.get(kind, kind)} is an error in DuckDB",
            arg,
        )
    if conv == "s":
        value = _formatted(fe, arg, "PRINTF")
    elif conv in "di":
        if "." in spec:
            raise unsupported(f"PRINTF %{spec}{conv} (a precision of an integer)", arg)
        conv = "d"
        if kind == "bool":
            value = Op("case", (value, Lit(1), Lit(0)))
    else:
        value = _as_double(fe, value)
        if conv == "f":  # beyond 1e30 DuckDB's digits are not C's
            return Op("printf_fixed", (value, Lit(f"%{spec}f")))
    return Op("printf_value", (value, Lit(f"%{spec}{conv}")))


def _concat_ws(fe, node: exp.ConcatWs):
    """CONCAT_WS(sep, a, b, …): the arguments that are not NULL, cast to
    VARCHAR as by CONCAT, joined by sep (NULL when sep is): each such
    argument as sep || argument (COALESCE … ''), all concatenated, the first
    sep cut off."""
    separator, *args = node.expressions
    sep = fe.expr(separator)
    if not args:
        raise sql_error("CONCAT_WS needs values to join after the separator", node)
    if isinstance(sep, Lit) and sep.value is None:
        return Lit(None)
    if not (isinstance(sep, Lit) and isinstance(sep.value, str)):
        raise unsupported("CONCAT_WS needs a string literal separator", separator)
    pieces = []
    for arg in args:
        value = _as_text(fe, fe.expr(arg), arg, "CONCAT_WS")
        if isinstance(value, Lit):
            if value.value is not None:
                pieces.append(Lit(sep.value + value.value))
            continue
        if sep.value:
            value = Op("concat", (Lit(sep.value), value))
        pieces.append(Op("coalesce", (value, Lit(""))))
    if not pieces:
        return Lit("")
    joined = _chain("concat", pieces)
    if not sep.value:
        return joined
    return Op("substr", (joined, Lit(len(sep.value) + 1)))


def _trim(fe, node: exp.Trim):
    """TRIM, LTRIM, RTRIM (and TRIM(LEADING | TRAILING | BOTH … FROM s)):
    spaces, or any of the given characters, at the ends."""
    side = (node.args.get("position") or "BOTH").upper()
    characters = node.args.get("expression")
    string = fe.expr(node.this)
    if characters is None and side == "BOTH":
        return Op("trim", (string,))
    characters = Lit(" ") if characters is None else fe.expr(characters)
    op = {"BOTH": "trim_chars", "LEADING": "ltrim", "TRAILING": "rtrim"}.get(side)
    if op is None:
        raise unsupported(f"TRIM({side} …) is not supported", node)
    return Op(op, (string, characters))


def _rounding(op: str) -> Callable:
    """CEIL, FLOOR: a DOUBLE, of an INTEGER too (as DuckDB); a DECIMAL is
    rounded as the decimal it stands for (its exact digits)."""

    def convert(fe, node):
        if any(node.args.get(a) is not None for a in ("decimals", "to")):
            raise unsupported(f"{op.upper()} takes one argument", node)
        value = fe.expr(node.this)
        if fe.type_of(value) == "int":
            return _as_float(value)
        if is_single(fe, value):  # a REAL (a whole one holds exactly)
            return Op("to_single", (Op(op, (value,)),))
        exact = fe.digits_of(value) if fe.type_of(value) == "float" else None
        if exact == 0:
            return value
        return Op(op, (value,) + (() if exact is None else (Lit(exact),)))

    return convert


def _trunc(fe, node: exp.Trunc):
    """TRUNC(x[, digits]): toward zero; an INTEGER stays one, a DECIMAL is
    cut as the decimal it stands for."""
    digits = node.args.get("decimals")
    digits = Lit(0) if digits is None else fe.expr(digits)
    if not (isinstance(digits, Lit) and type(digits.value) is int):
        raise unsupported("TRUNC needs an integer literal for its digits", node)
    value = fe.expr(node.this)
    if is_single(fe, value):  # a REAL's, rounded to one
        return Op("to_single", (Op("trunc", (value, digits)),))
    kind = fe.type_of(value)
    exact = fe.digits_of(value) if kind == "float" else None
    if (kind == "int" and digits.value >= 0) or (
        exact is not None and digits.value >= exact
    ):
        return value
    return Op("trunc", (value, digits) + (() if exact is None else (Lit(exact),)))


def _as_double(fe, value):
    """An operand of a function computed in DOUBLE: a DECIMAL computed from
    others (p + 1) as the double nearest to the decimal it stands for, as
    DuckDB casts it (the float computation may be off in the last bit)."""
    if not isinstance(value, Op) or fe.type_of(value) != "float":
        return value
    exact = fe.digits_of(value)
    if exact is None or value.op == "exact_double":
        return value
    return Op("exact_double", (value, Lit(exact)))


def _double_function(op: str) -> Callable:
    """SIGN, LN, EXP, POWER, SIN …: of DECIMAL operands as DuckDB casts them."""
    return lambda fe, node: Op(
        op,
        tuple(
            _as_double(fe, fe.expr(node.args[a]))
            for a in ("this", "expression")
            if node.args.get(a) is not None
        ),
    )


def _log(fe, node: exp.Log):
    """LOG(x) and LOG10(x): base 10; LOG2(x); LOG(b, x): LOG10(x) /
    LOG10(b), as DuckDB computes it (sqlglot reads LOG2(x) as LOG(2, x), its
    2 made, not written: without a position in the text)."""
    if node.expression is None:
        return Op("log10", (_as_double(fe, fe.expr(node.this)),))
    base, value = node.this, _as_double(fe, fe.expr(node.expression))
    if isinstance(base, exp.Literal) and not base.is_string:
        if base.this == "10":  # LOG10(x), or LOG(10, x): the same
            return Op("log10", (value,))
        if base.this == "2" and not base.meta:
            return Op("log2", (value,))
    base = _as_double(fe, fe.expr(base))
    return Op("div", (Op("log10", (value,)), Op("log10", (base,))))


def _pad(fe, node: exp.Pad):
    name = "LPAD" if node.args.get("is_left") else "RPAD"
    fill = node.args.get("fill_pattern")
    if fill is None:
        raise unsupported(f"{name} needs the string to pad with", node)
    args = (fe.expr(node.this), fe.expr(node.expression), fe.expr(fill))
    return Op(name.lower(), args)


# DATE_DIFF parts (DuckDB's spellings) -> the unit whose boundaries it counts
DIFF_UNITS = {
    **dict.fromkeys(("year", "years", "y", "yr", "yrs"), "year"),
    **dict.fromkeys(("quarter", "quarters"), "quarter"),
    **dict.fromkeys(("month", "months", "mon", "mons"), "month"),
    **dict.fromkeys(("week", "weeks", "w"), "week"),
    **dict.fromkeys(("day", "days", "d", "dayofmonth"), "day"),
    **dict.fromkeys(("hour", "hours", "h", "hr", "hrs"), "hour"),
    **dict.fromkeys(("minute", "minutes", "min", "mins", "m"), "minute"),
    **dict.fromkeys(("second", "seconds", "sec", "secs", "s"), "second"),
}


def _date_diff(fe, node: exp.DateDiff):
    """DATE_DIFF/DATEDIFF(part, start, end): the part's boundaries crossed
    (DuckDB: month from Jan 31 to Feb 1 is 1); a DATE beside a TIMESTAMP,
    or counted in hours, minutes or seconds, is its midnight."""
    unit = DIFF_UNITS.get(node.text("unit").lower())
    if unit is None:
        raise unsupported(
            f"DATE_DIFF part {node.text('unit')!r} is not supported; supported: "
            "year, quarter, month, week, day, hour, minute, second",
            node,
        )
    start, end = fe.expr(node.expression), fe.expr(node.this)
    start, end = coerce_literals(start, end, fe.type_of, node)  # a string literal
    kinds = (fe.type_of(start), fe.type_of(end))
    if "timestamp" in kinds or unit in ("hour", "minute", "second"):
        start, end = (
            to_timestamp(v) if kind == "date" else v
            for v, kind in zip((start, end), kinds)
        )
    return Op("date_diff", (Lit(unit), start, end))


def _date_sub(fe, node: exp.Anonymous):
    """DATE_SUB/DATESUB(part, start, end): whole parts from start to end
    (DuckDB: a month from Jan 31 to Feb 29, none from Jan 15 to Feb 14)."""
    part, start, end = node.expressions
    unit = DIFF_UNITS.get(part.name.lower()) if isinstance(part, exp.Literal) else None
    if unit is None or not part.is_string:
        raise unsupported(
            "DATE_SUB needs its part as a string literal: year, quarter, month, "
            "week, day, hour, minute or second",
            node,
        )
    start, end = coerce_literals(fe.expr(start), fe.expr(end), fe.type_of, node)
    return Op("date_sub", (Lit(unit), start, end))


def _make_date(fe, node: exp.DateFromParts):
    parts = [node.args.get(a) for a in ("year", "month", "day")]
    if None in parts or node.args.get("allow_overflow"):
        raise unsupported("MAKE_DATE needs a year, a month and a day", node)
    return Op("make_date", tuple(fe.expr(p) for p in parts))


def _make_timestamp(fe, node: exp.TimestampFromParts):
    names = ("year", "month", "day", "hour", "min", "sec")
    parts = [node.args.get(a) for a in names]
    extra = [a for a, v in node.args.items() if v is not None and a not in names]
    if None in parts or extra:
        raise unsupported(
            "MAKE_TIMESTAMP needs a year, month, day, hour, minute and seconds "
            "(or the microseconds since 1970)",
            node,
        )
    return Op("make_timestamp", tuple(fe.expr(p) for p in parts))


# EPOCH_MS/_US/_NS(t): the whole units per second since 1970-01-01
EPOCH_UNITS = {"epoch_ms": 1_000, "epoch_us": 1_000_000, "epoch_ns": 1_000_000_000}


def _epoch_units(fe, value, per_second: int) -> Op:
    """EPOCH_MS/_US/_NS(t): a DATE read as its midnight (types.py checks
    the rest)."""
    value = to_timestamp(value) if fe.type_of(value) == "date" else value
    return Op("epoch_units", (value, Lit(per_second)))


def _from_epoch(fe, node: exp.UnixToTime):
    """EPOCH_MS(ms) and MAKE_TIMESTAMP(µs): a TIMESTAMP that many units
    after 1970-01-01; EPOCH_MS(t) of a DATE or TIMESTAMP its milliseconds;
    TO_TIMESTAMP(s) the TIMESTAMPTZ s seconds after 1970-01-01 UTC."""
    scale = node.args.get("scale")
    other = [
        a for a, v in node.args.items() if v is not None and a not in ("this", "scale")
    ]
    digits = scale.name if isinstance(scale, exp.Literal) else None
    digits = int(digits) if digits in ("3", "6") else None
    value = fe.expr(node.this)
    if not other and scale is None:  # TO_TIMESTAMP(seconds): an instant
        return Op("epoch_instant", (value,))
    if other or digits not in (3, 6):
        raise unsupported(
            "supported: TO_TIMESTAMP(seconds) (a TIMESTAMPTZ), EPOCH_MS(ms) and "
            "MAKE_TIMESTAMP(µs) (a TIMESTAMP)",
            node,
        )
    if digits == 3 and fe.type_of(value) in ("date", "timestamp", "timestamptz"):
        return _epoch_units(fe, value, 1_000)  # EPOCH_MS(t)
    return Op("from_epoch", (value, Lit(10 ** (6 - digits))))


def _date_name(op: str) -> Callable:
    """DAYNAME, MONTHNAME: the English name of a DATE's (TIMESTAMP's) day
    of the week or month."""

    def convert(fe, node):
        if node.args.get("abbreviated"):
            raise unsupported(f"{op.upper()} is supported unabbreviated", node)
        return Op(op, (fe.expr(node.this),))

    return convert


def _last_day(fe, node: exp.LastDay):
    if node.args.get("unit") is not None:
        raise unsupported("LAST_DAY is supported of the month (one argument)", node)
    return Op("last_day", (fe.expr(node.this),))


_UNKNOWN_WIDTH = (
    "{} of an INTEGER expression is supported where its type's width is "
    "known (a column, a literal, a CAST: DuckDB's result depends on it): "
    "CAST it, CAST(x AS BIGINT)"
)


# INTEGER operators whose type is their operands' common one (the widest)
_INTEGER_ARITHMETIC = (
    *(exp.Add, exp.Sub, exp.Mul, exp.Mod, exp.IntDiv, exp.Neg, exp.Abs),
    *(exp.BitwiseAnd, exp.BitwiseOr, exp.BitwiseXor),
    *(exp.BitwiseLeftShift, exp.BitwiseRightShift),
)


def _int_width(fe, node: exp.Expression) -> int | str | None:
    """The bits of an INTEGER expression's type as DuckDB types it: a
    column's declared type, a CAST's, arithmetic's widest operand's;
    "literal" for an integer literal (it takes the other operand's type);
    None where not known."""
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.Literal) and not node.is_string and node.is_int:
        return "literal"
    if isinstance(node, exp.Cast):
        return INTEGER_BITS.get(node.to.this.name)
    if isinstance(node, _INTEGER_ARITHMETIC):
        sides = [_int_width(fe, a) for a in (node.this, node.expression) if a]
        if None in sides:
            return None
        known = [w for w in sides if w != "literal"]
        return max(known) if known else "literal"
    e = fe.expr(node)
    int_bits = getattr(fe, "int_bits", None)
    return None if int_bits is None or isinstance(e, Op) else int_bits(e)


def _int_literals(node: exp.Expression) -> list[int]:
    """The integer literals in `node` (as written, signs aside)."""
    return [
        int(n.name) for n in node.find_all(exp.Literal) if not n.is_string and n.is_int
    ]


def _literals_bits(node: exp.Expression) -> int:
    """The bits of an expression of integer literals alone: DuckDB's
    INTEGER, or BIGINT, HUGEINT where a literal needs one."""
    return max(
        (
            next(b for b in (32, 64, 128) if -(2 ** (b - 1)) <= v < 2 ** (b - 1))
            for v in _int_literals(node)
        ),
        default=32,
    )


def _bit_shift(fe, node: exp.Expression, op: str) -> Op:
    """`x << n`, `x >> n` of INTEGERs, as DuckDB over their common type's
    bits (a literal takes the other operand's; of two literals, INTEGER
    where both fit): an error where << overflows or shifts by too much."""
    x, n = fe.expr(node.this), fe.expr(node.expression)
    widths = [_int_width(fe, side) for side in (node.this, node.expression)]
    if None in widths:
        raise unsupported(
            _UNKNOWN_WIDTH.format("<<" if op == "shift_left" else ">>"), node
        )
    known = [w for w in widths if w != "literal"]
    literals = [v for side in (node.this, node.expression) for v in _int_literals(side)]
    bits = max(known) if known else _literals_bits(node)
    if any(not -(2 ** (bits - 1)) <= v < 2 ** (bits - 1) for v in literals):
        raise unsupported(
            f"a literal beyond the other operand's {bits}-bit INTEGER type in a "
            "shift is not supported (CAST the operand)",
            node,
        )
    return Op(op, (x, n, Lit(bits)))


def _unary(op: str) -> Callable:
    return lambda fe, node: Op(op, (fe.expr(node.this),))


def _fold_neg(fe, node):
    inner = fe.expr(node.this)
    if isinstance(inner, Lit) and isinstance(inner.value, (int, float)):
        return Lit(-inner.value)
    return Op("neg", (inner,))


def _round(fe, node):
    digits = node.args.get("decimals")
    digits = Lit(0) if digits is None else fe.expr(digits)
    if not (isinstance(digits, Lit) and type(digits.value) is int):
        raise unsupported("ROUND needs an integer literal for its digits", node)
    value = fe.expr(node.this)
    if is_single(fe, value):  # a REAL's, rounded to one
        return Op("to_single", (Op("round", (value, digits)),))
    exact = fe.digits_of(value) if fe.type_of(value) == "float" else None
    return Op("round", (value, digits) + (() if exact is None else (Lit(exact),)))


def _substring(fe, node):
    args = [fe.expr(node.this), fe.expr(node.args["start"])]
    if node.args.get("length") is not None:
        args.append(fe.expr(node.args["length"]))
    if not all(isinstance(a, Lit) and isinstance(a.value, int) for a in args[1:]):
        raise unsupported("SUBSTRING needs integer literal positions", node)
    return Op("substr", tuple(args))


def _strptime(fe, node: exp.Expression):
    """STRPTIME(text, 'format') and TRY_STRPTIME (NULL where STRPTIME is an
    error): the format a string literal of `functions.STRPTIME_CODES`, read
    as DuckDB reads it (`runtime.sqlfuncs._strptime_of`)."""
    if isinstance(node, exp.StrToTime):
        text, fmt, safe = node.this, node.args.get("format"), False
    else:
        (text, fmt), safe = node.expressions, True
    if not (isinstance(fmt, exp.Literal) and fmt.is_string):
        raise unsupported("STRPTIME needs one string literal format", node)
    codes = re.findall(r"%-?(.?)", fmt.this)
    wrong = [c for c in codes if not c or c not in STRPTIME_CODES]
    if wrong or ("j" in codes and set(codes) & set("mdbB")):
        raise unsupported(
            f"STRPTIME format {fmt.this!r}: {'%' + wrong[0] if wrong else '%j beside a month or day'} "
            "is not supported; supported: "
            + " ".join(f"%{c}" for c in STRPTIME_CODES)
            + " (%z, which gives a TIMESTAMPTZ, and week numbers are not)",
            node,
        )
    value, fmt = fe.expr(text), Lit(fmt.this)
    if not safe:
        return Op("strptime", (value, fmt))
    return Op(
        "case",
        (Op("is_strptime", (value, fmt)), Op("strptime", (value, fmt)), Lit(None)),
    )


def _bracket(fe, node: exp.Bracket):
    """A string's subscript s[i] or slice s[a:b] (of a LIST, refused by its
    type). sqlglot reads a literal subscript as 0-based (s[2] as 1, s[0]
    as -1): DuckDB's is that plus one; others and slices as written."""
    if len(node.expressions) != 1:
        raise unsupported("a subscript takes one index or one slice", node)
    arg = node.expressions[0]
    if isinstance(arg, exp.Slice):
        if isinstance(node.this, exp.Split):
            raise unsupported(
                "a slice of STRING_SPLIT is a LIST, a type views do not hold", node
            )
        value = fe.expr(node.this)
        first = Lit(1) if arg.this is None else fe.expr(arg.this)
        last = Lit(-1) if arg.expression is None else fe.expr(arg.expression)
        return Op("string_slice", (value, first, last))
    index = fe.expr(arg)
    literal = arg.this if isinstance(arg, exp.Neg) else arg
    if isinstance(literal, exp.Literal) and isinstance(index, Lit):
        index = Lit(index.value + 1)
    if isinstance(node.this, exp.Split):
        return _split_at(fe, node.this, index)
    return Op("string_at", (fe.expr(node.this), index))


def _split_parts(fe, node: exp.Split) -> tuple:
    """STRING_SPLIT(s, sep)'s operands: its separator a string literal."""
    sep = node.expression
    if not (isinstance(sep, exp.Literal) and sep.is_string):
        raise unsupported("STRING_SPLIT needs its separator as a string literal", node)
    return fe.expr(node.this), Lit(sep.this)


def _split_at(fe, split: exp.Split, index):
    """STRING_SPLIT(s, sep)[i]: its i-th part (from 1; negative from the end)
    or NULL past either end (SPLIT_PART's '' there, so the index is tested)."""
    string, sep = _split_parts(fe, split)
    inside = Op("le", (Op("abs", (index,)), Op("split_count", (string, sep))))
    if not (isinstance(index, Lit) and index.value):
        inside = Op("and", (Op("ne", (index, Lit(0))), inside))
    part = Op("split_part", (string, sep, index))
    return Op("case", (inside, part, Lit(None)))


def _split_alone(fe, node: exp.Split):
    raise unsupported(
        "STRING_SPLIT's value is a LIST, a type views do not hold; its parts are:"
        " STRING_SPLIT(s, sep)[i], LEN(STRING_SPLIT(s, sep))",
        node,
    )


def _length(fe, node: exp.Expression):
    """LENGTH(s) of a string; LEN/ARRAY_LENGTH(STRING_SPLIT(s, sep)) its
    parts."""
    if isinstance(node.this, exp.Split):
        return Op("split_count", _split_parts(fe, node.this))
    if isinstance(node, exp.ArraySize):
        raise unsupported("ARRAY_LENGTH is supported of STRING_SPLIT(s, sep)", node)
    return Op("length", (fe.expr(node.this),))


def _array_slice(fe, node: exp.ArraySlice):
    """ARRAY_SLICE(s, a, b) of a string: s[a:b]."""
    if node.args.get("is_length") or node.args.get("step") is not None:
        raise unsupported("ARRAY_SLICE is supported of a string, from a to b", node)
    bounds = (node.args.get("start"), node.args.get("end"))
    return Op("string_slice", (fe.expr(node.this), *(fe.expr(b) for b in bounds)))


def _at_time_zone(fe, node: exp.Expression):
    """`t AT TIME ZONE 'zone'` (`TIMEZONE('zone', t)`): of a TIMESTAMPTZ the
    TIMESTAMP its clocks show in the zone (an IANA name, in any case, as
    DuckDB's); of a TIMESTAMP the instant it is in UTC (other zones: a
    local time may occur twice or never, refused)."""
    if isinstance(node, exp.AtTimeZone):
        value, zone = node.this, node.args.get("zone")
    else:
        zone, value = node.expressions
    if not (isinstance(zone, exp.Literal) and zone.is_string):
        raise unsupported(
            "AT TIME ZONE needs the zone's name as a string literal", node
        )
    name = zone_name(zone.this)
    if name is None:
        raise unsupported(f"unknown time zone {zone.this!r} (IANA names)", node)
    value = fe.expr(value)
    kind = fe.type_of(value)
    if kind == "date":
        value, kind = to_timestamp(value), "timestamp"
    if kind == "timestamp" and name == "UTC":
        return Op("utc_instant", (value,))
    if kind == "timestamp":
        raise unsupported(
            "a TIMESTAMP AT TIME ZONE other than 'UTC' is not supported (a "
            "local time may occur twice or never there)",
            node,
        )
    return Op("local_time", (value, Lit(name)))


def zone_name(text: str) -> str | None:
    """The IANA name of a time zone as DuckDB takes it (any case), 'UTC'
    for UTC's; None for none known."""
    if text.strip().lower() in ("utc", "etc/utc", "gmt", "etc/gmt", "z", "zulu"):
        return "UTC"
    return _zone_names().get(text.strip().lower())


@functools.cache
def _zone_names() -> dict[str, str]:
    """Lower-case IANA zone name -> the name (read from the zone data once)."""
    import zoneinfo

    return {n.lower(): n for n in zoneinfo.available_timezones()}


def _levenshtein(fe, node: exp.Levenshtein):
    """LEVENSHTEIN(a, b) (EDITDIST3): DuckDB's takes no costs."""
    if any(
        v is not None for k, v in node.args.items() if k not in ("this", "expression")
    ):
        raise unsupported("LEVENSHTEIN is supported of two strings, no costs", node)
    return Op("levenshtein", (fe.expr(node.this), fe.expr(node.expression)))


def _function(fe, node: exp.Anonymous):
    name, args = node.name.lower(), node.expressions
    if name == "try_strptime" and len(args) == 2:
        return _strptime(fe, node)
    if name in ("date_part", "datepart") and len(args) == 2:
        part = args[0]
        if not (isinstance(part, exp.Literal) and part.is_string):
            raise unsupported("DATE_PART needs the part as a string literal", node)
        return _date_part(fe, part.this, fe.expr(args[1]), node)
    if name in PART_FUNCTIONS and len(args) == 1:
        return _date_part(fe, PART_FUNCTIONS[name], fe.expr(args[0]), node)
    if name in ("char_length", "character_length") and len(args) == 1:
        return Op("length", (fe.expr(args[0]),))
    if name == "strlen" and len(args) == 1:  # DuckDB's: bytes, not characters
        return Op("octet_length", (fe.expr(args[0]),))
    if name == "timezone" and len(args) == 2:
        return _at_time_zone(fe, node)
    if name in ("array_extract", "list_extract") and isinstance(args[0], exp.Split):
        return _split_at(fe, args[0], fe.expr(args[1]))
    if name in ("array_extract", "list_extract") and len(args) == 2:
        return Op("string_at", (fe.expr(args[0]), fe.expr(args[1])))
    if name in ("hamming", "mismatches", "jaccard") and len(args) == 2:
        op = "jaccard" if name == "jaccard" else "hamming"
        return Op(op, (fe.expr(args[0]), fe.expr(args[1])))
    if name == "ord" and len(args) == 1:
        return Op("unicode", (fe.expr(args[0]),))
    if name in ("gcd", "lcm", "greatest_common_divisor", "least_common_multiple"):
        if len(args) == 2:
            op = "gcd" if name.startswith("g") else "lcm"
            return Op(op, (fe.expr(args[0]), fe.expr(args[1])))
    if name == "bit_count" and len(args) == 1:
        x, width = fe.expr(args[0]), _int_width(fe, args[0])
        if width == "literal":  # DuckDB's INTEGER, or BIGINT where it needs one
            width = _literals_bits(args[0])
        if width is None:
            raise unsupported(_UNKNOWN_WIDTH.format("BIT_COUNT"), node)
        return Op("bit_count", (x, Lit(width)))
    if name in ("epoch_us", "epoch_ns") and len(args) == 1:
        return _epoch_units(fe, fe.expr(args[0]), EPOCH_UNITS[name])
    if name == "isfinite" and len(args) == 1:
        return Op("isfinite", (fe.expr(args[0]),))
    if name in _INTERVAL_FUNCTIONS and len(args) == 1:
        return _interval_times(fe, node)
    if name in _DOUBLE_FUNCTIONS and len(args) == _DOUBLE_FUNCTIONS[name]:
        return Op(name, tuple(_as_double(fe, fe.expr(a)) for a in args))
    if name == "printf" and args:
        return _printf(fe, node)
    if name in ("gamma", "lgamma"):
        raise unsupported(
            f"{node.name} is not supported: Python's differs from DuckDB's (C's) "
            "in the last digits",
            node,
        )
    if name == "signbit" and len(args) == 1:
        return _signbit(fe, fe.expr(args[0]), node)
    if name in ("date_sub", "datesub") and len(args) == 3:
        return _date_sub(fe, node)
    if name in ("suffix", "prefix") and len(args) == 2:
        op = "ends_with" if name == "suffix" else "starts_with"
        return Op(op, (fe.expr(args[0]), fe.expr(args[1])))
    raise unsupported(f"function {node.name} is not supported", node)


# the functions of DOUBLEs sqlglot does not name, by their arguments
_DOUBLE_FUNCTIONS = {
    **{op: 1 for op in C_MATH},
    "even": 1,
    "fdiv": 2,
    "fmod": 2,
}


def _signbit(fe, value, node):
    """SIGNBIT(x): of a DOUBLE its sign bit (-0.0's too); an INTEGER's or a
    DECIMAL's (which has no -0) is x < 0, as DuckDB casts it."""
    kind = fe.type_of(value)
    if kind not in ("int", "float", None):
        raise unsupported(f"SIGNBIT needs a number, got {value} ({kind})", node)
    if kind == "float" and fe.digits_of(value) is None:
        return Op("signbit", (value,))
    return Op("lt", (value, Lit(0)))


def _strpos(fe, node: exp.StrPosition):
    if any(node.args.get(a) is not None for a in ("position", "occurrence")):
        raise unsupported("STRPOS/POSITION is supported without a start", node)
    return Op("strpos", (fe.expr(node.this), fe.expr(node.args["substr"])))


def _is(fe, node):
    """`x IS [NOT] NULL`; `x IS [NOT] TRUE / FALSE`, which is never NULL:
    COALESCE(x, FALSE) (of NOT x for FALSE)."""
    if isinstance(node.expression, exp.Boolean):
        value = fe.expr(node.this)
        if not node.expression.this:
            value = Op("not", (value,))
        return Op("coalesce", (value, Lit(False)))
    if not isinstance(node.expression, exp.Null):
        raise unsupported("IS is supported as IS [NOT] NULL, TRUE or FALSE", node)
    return Op("isnull", (fe.expr(node.this),))


CONVERTERS: dict[type, Callable] = {
    exp.Column: lambda fe, node: fe.column(node),
    exp.Literal: _literal,
    exp.Boolean: lambda fe, node: Lit(bool(node.this)),
    exp.Null: lambda fe, node: Lit(None),
    exp.Paren: lambda fe, node: fe.expr(node.this),
    exp.Cast: _cast,
    exp.Date: _date_call,
    exp.Add: lambda fe, node: _shift(fe, node, +1),
    exp.Sub: lambda fe, node: _shift(fe, node, -1),
    exp.Interval: _interval_value,
    exp.ToDays: _interval_times,
    exp.DateBin: _time_bucket,
    exp.Mul: lambda fe, node: (
        _interval_times(fe, node, found)
        if (found := _interval_multiple(node)) is not None
        else _typed_arith(fe, "mul", fe.expr(node.this), fe.expr(node.expression))
    ),
    exp.Div: _binary("div"),
    exp.Mod: _binary("mod"),
    exp.IntDiv: _binary("intdiv"),
    exp.Neg: _fold_neg,
    exp.DPipe: _pipe,
    exp.Concat: _concat,
    exp.EQ: _comparison("eq"),
    exp.NullSafeEQ: _null_safe,
    exp.NullSafeNEQ: _null_safe,
    exp.NEQ: _comparison("ne"),
    exp.LT: _comparison("lt"),
    exp.LTE: _comparison("le"),
    exp.GT: _comparison("gt"),
    exp.GTE: _comparison("ge"),
    exp.And: _binary("and"),
    exp.Or: _binary("or"),
    exp.Not: lambda fe, node: Op("not", (fe.expr(node.this),)),
    exp.Like: _like,
    exp.ILike: _like,
    exp.RegexpLike: _regexp,
    exp.RegexpILike: _regexp,
    exp.RegexpFullMatch: _regexp,
    exp.SimilarTo: _regexp,
    exp.RegexpReplace: _regexp_replace,
    exp.RegexpExtract: _regexp_extract,
    exp.Escape: _escape,
    exp.In: _in,
    exp.Between: _between,
    exp.Case: _case,
    exp.If: lambda fe, node: Op(
        "case",
        (
            fe.expr(node.this),
            fe.expr(node.args["true"]),
            fe.expr(node.args["false"]) if node.args.get("false") else Lit(None),
        ),
    ),
    exp.Extract: _extract,
    exp.TimeToUnix: _epoch,
    exp.UnixToTime: _from_epoch,
    exp.TimestampFromParts: _make_timestamp,
    exp.Replace: lambda fe, node: Op(
        "replace",
        tuple(fe.expr(node.args[a]) for a in ("this", "expression", "replacement")),
    ),
    exp.Left: lambda fe, node: Op(
        "left", (fe.expr(node.this), fe.expr(node.expression))
    ),
    exp.Right: lambda fe, node: Op(
        "right", (fe.expr(node.this), fe.expr(node.expression))
    ),
    exp.Overlay: _overlay,
    exp.StrPosition: _strpos,
    exp.TimestampTrunc: _date_trunc,
    exp.TimeToStr: _strftime,
    exp.StrToTime: _strptime,
    exp.Levenshtein: _levenshtein,
    exp.AtTimeZone: _at_time_zone,
    exp.Bracket: _bracket,
    exp.ArraySlice: _array_slice,
    exp.DateTrunc: _date_trunc,
    exp.Substring: _substring,
    exp.Anonymous: _function,
    exp.Upper: lambda fe, node: Op("upper", (fe.expr(node.this),)),
    exp.Lower: lambda fe, node: Op("lower", (fe.expr(node.this),)),
    exp.Abs: lambda fe, node: Op("abs", (fe.expr(node.this),)),
    exp.Round: _round,
    exp.Sqrt: lambda fe, node: Op("sqrt", (fe.expr(node.this),)),
    exp.Is: _is,
    exp.Coalesce: _variadic("coalesce"),
    exp.Greatest: _variadic("greatest"),
    exp.Least: _variadic("least"),
    exp.Nullif: lambda fe, node: Op(
        "nullif",
        coerce_literals(fe.expr(node.this), fe.expr(node.expression), fe.type_of, node),
    ),
    exp.Year: lambda fe, node: Op("year", (fe.expr(node.this),)),
    exp.Month: lambda fe, node: Op("month", (fe.expr(node.this),)),
    exp.Day: lambda fe, node: Op("day", (fe.expr(node.this),)),
    exp.Hour: lambda fe, node: _date_part(fe, "hour", fe.expr(node.this), node),
    exp.Minute: lambda fe, node: _date_part(fe, "minute", fe.expr(node.this), node),
    exp.Second: lambda fe, node: _date_part(fe, "second", fe.expr(node.this), node),
    exp.Quarter: lambda fe, node: Op("quarter", (fe.expr(node.this),)),
    exp.DayOfWeek: lambda fe, node: Op("dayofweek", (fe.expr(node.this),)),
    exp.DayOfYear: lambda fe, node: Op("dayofyear", (fe.expr(node.this),)),
    exp.Week: lambda fe, node: Op("week", (fe.expr(node.this),)),
    exp.WeekOfYear: lambda fe, node: Op("week", (fe.expr(node.this),)),
    exp.DayOfMonth: lambda fe, node: Op("day", (fe.expr(node.this),)),
    exp.DayOfWeekIso: lambda fe, node: Op("isodow", (fe.expr(node.this),)),
    exp.DateAdd: _date_add,
    exp.Length: _length,
    exp.ArraySize: _length,
    exp.Split: _split_alone,
    exp.Trim: _trim,
    exp.TryCast: _cast,
    exp.Ceil: _rounding("ceil"),
    exp.Floor: _rounding("floor"),
    exp.Trunc: _trunc,
    exp.Sign: _double_function("sign"),
    exp.Ln: _double_function("ln"),
    exp.Log: _log,
    exp.Exp: _double_function("exp"),
    **{
        getattr(exp, op.capitalize()): _double_function(op)
        for op in TRIGONOMETRY + C_MATH
        if hasattr(exp, op.capitalize())
    },
    exp.Factorial: lambda fe, node: Op("factorial", (fe.expr(node.this),)),
    exp.Pi: lambda fe, node: Lit(math.pi),
    exp.Pow: _double_function("power"),
    exp.Pad: _pad,
    exp.Repeat: lambda fe, node: Op(
        "repeat", (fe.expr(node.this), fe.expr(node.args["times"]))
    ),
    exp.SplitPart: lambda fe, node: Op(
        "split_part",
        tuple(fe.expr(node.args[a]) for a in ("this", "delimiter", "part_index")),
    ),
    exp.StartsWith: _binary("starts_with"),
    exp.EndsWith: _binary("ends_with"),
    exp.Contains: _binary("contains"),
    exp.Reverse: _unary("reverse"),
    exp.IsNan: _unary("isnan"),
    exp.Translate: lambda fe, node: Op(
        "translate", tuple(fe.expr(node.args[a]) for a in ("this", "from_", "to"))
    ),
    exp.IsInf: _unary("isinf"),
    exp.BitwiseAnd: lambda fe, node: Op(
        "bit_and", (fe.expr(node.this), fe.expr(node.expression))
    ),
    exp.BitwiseOr: lambda fe, node: Op(
        "bit_or", (fe.expr(node.this), fe.expr(node.expression))
    ),
    exp.BitwiseXor: lambda fe, node: Op(
        "bit_xor", (fe.expr(node.this), fe.expr(node.expression))
    ),
    exp.BitwiseLeftShift: lambda fe, node: _bit_shift(fe, node, "shift_left"),
    exp.BitwiseRightShift: lambda fe, node: _bit_shift(fe, node, "shift_right"),
    exp.Glob: _glob,
    exp.Ascii: _unary("ascii"),
    exp.Unicode: _unary("unicode"),
    exp.BitLength: lambda fe, node: Op(
        "mul", (Op("octet_length", (fe.expr(node.this),)), Lit(8))
    ),
    exp.Chr: lambda fe, node: Op("chr", (fe.expr(node.expressions[0]),)),
    exp.MD5: _unary("md5"),
    exp.SHA2: _sha2,
    exp.ConcatWs: _concat_ws,
    exp.Format: _format,
    exp.DateDiff: _date_diff,
    exp.LastDay: _last_day,
    exp.DateFromParts: _make_date,
    exp.Dayname: _date_name("dayname"),
    exp.Monthname: _date_name("monthname"),
}
