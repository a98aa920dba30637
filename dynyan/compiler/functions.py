"""The one registry of SQL scalar functions and aggregate semantics.

Generated modules (`render.Expressions`) and every benchmark peer
(bench/peers: the first-order IVM, pydbsp and Pathway adapters) turn SQL
functions and aggregates into Python through this module, so they compute
the same values by construction:

- `SCALARS`: per IR operator, the Python expression over rendered operands,
  and the runtime helper (`dynyan.runtime.sqlfuncs`) it calls when one
  expression is not enough. Generated modules get the helper inlined; a
  peer evaluates rendered code in `peer_namespace`.
- `aggregate_value`: an aggregate's SQL value from what a system keeps per
  group (non-NULL argument count, running sum, extreme, distinct count).

The semantics are DuckDB's (tests/test_functions.py runs every entry
through the generated code, each peer and DuckDB): NULL in, NULL out; `/`
is true division, by zero an IEEE infinity (NaN for 0 / 0); `%` takes the
dividend's sign and is an error by zero; `+ INTERVAL n MONTH` clamps to the
end of the month; SUM, AVG, MIN and MAX of no non-NULL value are NULL,
COUNT of none is 0. Where DuckDB has a value the Python does not reproduce
(LN of a negative number: a NaN, which compares unlike DuckDB's; a spelling
of a number or date that DuckDB's CAST reads and the helpers do not), the
helper raises, as DuckDB raises where it has no value: an error, never
another value.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable
from dataclasses import dataclass

from ..runtime import inline, sqlfuncs
from .ir import C_MATH, TRIGONOMETRY


@dataclass(frozen=True)
class Scalar:
    """One SQL function or operator on values."""

    op: str  # the IR operator (dynyan.compiler.ir.Op.op)
    python: str  # Python over the operands {0}, {1}, … (rendered, atomic)
    helper: str | None = None  # the dynyan.runtime.sqlfuncs function it calls
    uses_datetime: bool = False
    variadic: bool = False  # {0} stands for all operands, comma-separated

    def render(self, args: list[str]) -> str:
        if self.variadic:
            return self.python.format(", ".join(args))
        return self.python.format(*args)


SCALARS = {
    s.op: s
    for s in (
        Scalar("div", "_div({0}, {1})", helper="_div"),
        Scalar("mod", "_mod({0}, {1})", helper="_mod"),
        Scalar("intdiv", "_intdiv({0}, {1})", helper="_intdiv"),
        Scalar(
            "add_months",
            "_add_months({0}, {1})",
            helper="_add_months",
            uses_datetime=True,
        ),
        Scalar(
            "add_days",
            "({0} + datetime.timedelta(days={1}))",
            uses_datetime=True,
        ),
        Scalar(
            "date_trunc",
            "_date_trunc({0}, {1})",
            helper="_date_trunc",
            uses_datetime=True,
        ),
        Scalar(
            "strftime",
            "_strftime({0}, {1})",
            helper="_strftime",
            uses_datetime=True,
        ),
        Scalar(
            "add_seconds",
            "({0} + datetime.timedelta(seconds={1}))",
            uses_datetime=True,
        ),
        Scalar(
            "to_timestamp",
            "datetime.datetime.combine({0}, datetime.time())",
            uses_datetime=True,
        ),
        Scalar("to_date", "{0}.date()"),
        Scalar("to_time", "{0}.time()"),
        Scalar("local_time", "_local_time({0}, {1})", helper="_local_time"),
        Scalar(
            "utc_instant",
            "{0}.replace(tzinfo=datetime.timezone.utc)",
            uses_datetime=True,
        ),
        Scalar("days_between", "({0} - {1}).days"),
        Scalar("hour", "{0}.hour"),
        Scalar("minute", "{0}.minute"),
        Scalar("second", "{0}.second"),
        Scalar(
            "epoch",
            "({0} - datetime.datetime(1970, 1, 1)).total_seconds()",
            uses_datetime=True,
        ),
        Scalar("interval_epoch", "{0}.total_seconds()"),
        Scalar("year", "{0}.year"),
        Scalar("month", "{0}.month"),
        Scalar("day", "{0}.day"),
        Scalar("quarter", "(({0}.month - 1) // 3 + 1)"),
        Scalar("dayofweek", "({0}.isoweekday() % 7)"),
        Scalar("dayofyear", "{0}.timetuple().tm_yday"),
        Scalar("week", "{0}.isocalendar()[1]"),
        Scalar("isodow", "{0}.isoweekday()"),
        Scalar("isoyear", "{0}.isocalendar()[0]"),
        Scalar("yearweek", "_yearweek({0})", helper="_yearweek"),
        Scalar("decade", "({0}.year // 10)"),
        Scalar("century", "(({0}.year - 1) // 100 + 1)"),
        Scalar("millennium", "(({0}.year - 1) // 1000 + 1)"),
        Scalar("millisecond", "_millisecond({0})", helper="_millisecond"),
        Scalar("microsecond", "_microsecond({0})", helper="_microsecond"),
        Scalar("length", "len({0})"),
        Scalar("to_float", "float({0})"),
        Scalar("round", "_round({0})", helper="_round", variadic=True),
        Scalar("to_decimal", "_round({0})", helper="_round", variadic=True),
        Scalar("to_int", "_to_int({0})", helper="_to_int", variadic=True),
        Scalar("to_single", "_to_single({0})", helper="_to_single", variadic=True),
        Scalar("sqrt", "_sqrt({0})", helper="_sqrt"),
        Scalar("trim", "{0}.strip(' ')"),
        Scalar("replace", "_replace({0}, {1}, {2})", helper="_replace"),
        Scalar("left", "{0}[:{1}]"),
        Scalar("right", "_right({0}, {1})", helper="_right"),
        Scalar("strpos", "({0}.find({1}) + 1)"),
        Scalar("to_str", "_to_str({0})", helper="_to_str", variadic=True),
        Scalar("real_to_str", "_real_text({0})", helper="_real_text"),
        Scalar("greatest", "_greatest({0})", helper="_greatest", variadic=True),
        Scalar("least", "_least({0})", helper="_least", variadic=True),
        Scalar("upper", "_upper({0})", helper="_upper"),
        Scalar("lower", "_lower({0})", helper="_lower"),
        Scalar("abs", "abs({0})"),
        Scalar("neg", "(-{0})"),
        Scalar("concat", "(str({0}) + str({1}))"),
        Scalar("exact_double", "_exact_double({0}, {1})", helper="_exact_double"),
        Scalar("ceil", "_ceil_number({0})", helper="_ceil_number", variadic=True),
        Scalar("floor", "_floor_number({0})", helper="_floor_number", variadic=True),
        Scalar("trunc", "_trunc({0})", helper="_trunc", variadic=True),
        Scalar("sign", "(({0} > 0) - ({0} < 0))"),
        Scalar("isnan", "({0} != {0})"),
        Scalar("isinf", "({0} == {0} and {0} - {0} != 0)"),
        Scalar("isfinite", "({0} - {0} == 0)"),
        Scalar("gcd", "_gcd({0}, {1})", helper="_gcd"),
        Scalar("lcm", "_lcm({0}, {1})", helper="_lcm"),
        Scalar("translate", "_translate({0}, {1}, {2})", helper="_translate"),
        Scalar("bit_and", "({0} & {1})"),
        Scalar("bit_or", "({0} | {1})"),
        Scalar("bit_xor", "({0} ^ {1})"),
        Scalar("ln", "_ln({0})", helper="_ln"),
        Scalar("log10", "_log10({0})", helper="_log10"),
        Scalar("log2", "_log2({0})", helper="_log2"),
        Scalar("exp", "_exp({0})", helper="_exp"),
        Scalar("power", "_power({0}, {1})", helper="_power"),
        *(
            Scalar(op, f"_trig({op!r}, {{0}})", helper="_trig", variadic=True)
            for op in TRIGONOMETRY
        ),
        *(Scalar(op, f"_c_math({op!r}, {{0}})", helper="_c_math") for op in C_MATH),
        Scalar("even", "_even({0})", helper="_even"),
        Scalar("fdiv", "_fdiv({0}, {1})", helper="_fdiv"),
        Scalar("fmod", "_fmod({0}, {1})", helper="_fmod"),
        Scalar("factorial", "_factorial({0})", helper="_factorial"),
        Scalar("shift_left", "_shift_left({0}, {1}, {2})", helper="_shift_left"),
        Scalar("shift_right", "_shift_right({0}, {1}, {2})", helper="_shift_right"),
        Scalar("bit_count", "_bit_count({0}, {1})", helper="_bit_count"),
        Scalar("signbit", "_signbit({0})", helper="_signbit"),
        Scalar("trim_chars", "{0}.strip({1})"),
        Scalar("ltrim", "{0}.lstrip({1})"),
        Scalar("rtrim", "{0}.rstrip({1})"),
        Scalar("lpad", "_lpad({0}, {1}, {2})", helper="_lpad"),
        Scalar("overlay", "_overlay({0}, {1}, {2}, {3})", helper="_overlay"),
        Scalar("rpad", "_rpad({0}, {1}, {2})", helper="_rpad"),
        Scalar("repeat", "_repeat({0}, {1})", helper="_repeat"),
        Scalar("split_part", "_split_part({0}, {1}, {2})", helper="_split_part"),
        Scalar("split_count", "_split_count({0}, {1})", helper="_split_count"),
        Scalar("printf_value", "({1} % {0})"),
        Scalar("printf_fixed", "_printf_fixed({0}, {1})", helper="_printf_fixed"),
        Scalar("starts_with", "{0}.startswith({1})"),
        Scalar("ends_with", "{0}.endswith({1})"),
        Scalar("contains", "({1} in {0})"),
        Scalar("reverse", "_reverse({0})", helper="_reverse"),
        Scalar("ascii", "_ascii({0})", helper="_ascii"),
        Scalar("unicode", "_unicode({0})", helper="_unicode"),
        Scalar("octet_length", "len({0}.encode())"),
        Scalar("levenshtein", "_levenshtein({0}, {1})", helper="_levenshtein"),
        Scalar("string_at", "_string_at({0}, {1})", helper="_string_at"),
        Scalar("string_slice", "_string_slice({0}, {1}, {2})", helper="_string_slice"),
        Scalar("hamming", "_hamming({0}, {1})", helper="_hamming"),
        Scalar("jaccard", "_jaccard({0}, {1})", helper="_jaccard"),
        Scalar("like_match", "_like_match({0}, {1})", helper="_like_match"),
        Scalar(
            "time_bucket",
            "_time_bucket({0}, {1}, {2})",
            helper="_time_bucket",
            uses_datetime=True,
        ),
        Scalar("chr", "_chr({0})", helper="_chr"),
        Scalar("md5", "_digest('md5', {0})", helper="_digest"),
        Scalar("sha256", "_digest('sha256', {0})", helper="_digest"),
        Scalar("date_diff", "_date_diff({0}, {1}, {2})", helper="_date_diff"),
        Scalar("date_sub", "_date_sub({0}, {1}, {2})", helper="_date_sub"),
        Scalar("last_day", "_last_day({0})", helper="_last_day", uses_datetime=True),
        Scalar(
            "make_date",
            "_make_date({0}, {1}, {2})",
            helper="_make_date",
            uses_datetime=True,
        ),
        Scalar(
            "from_epoch",
            "_from_epoch({0}, {1})",
            helper="_from_epoch",
            uses_datetime=True,
        ),
        Scalar(
            "strptime",
            "_text_strptime({0}, {1})",
            helper="_text_strptime",
            uses_datetime=True,
        ),
        Scalar(
            "is_strptime",
            "_is_strptime_text({0}, {1})",
            helper="_is_strptime_text",
            uses_datetime=True,
        ),
        Scalar(
            "epoch_instant",
            "_epoch_instant({0})",
            helper="_epoch_instant",
            uses_datetime=True,
        ),
        Scalar(
            "difference_part",
            "_difference_part({0}, {1})",
            helper="_difference_part",
        ),
        Scalar(
            "epoch_units",
            "_epoch_units({0}, {1})",
            helper="_epoch_units",
            uses_datetime=True,
        ),
        Scalar(
            "make_timestamp",
            "_make_timestamp({0}, {1}, {2}, {3}, {4}, {5})",
            helper="_make_timestamp",
            uses_datetime=True,
        ),
        Scalar(
            "dayname",
            "('Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday',"
            " 'Sunday')[{0}.weekday()]",
        ),
        Scalar(
            "monthname",
            "('January', 'February', 'March', 'April', 'May', 'June', 'July',"
            " 'August', 'September', 'October', 'November', 'December')"
            "[{0}.month - 1]",
        ),
        Scalar("text_to_int", "_text_to_int({0}, {1})", helper="_text_to_int"),
        Scalar("is_int_text", "_is_int_text({0}, {1})", helper="_is_int_text"),
        Scalar("text_to_float", "_text_to_float({0})", helper="_text_to_float"),
        Scalar("is_float_text", "_is_float_text({0})", helper="_is_float_text"),
        Scalar(
            "text_to_date",
            "_text_to_date({0})",
            helper="_text_to_date",
            uses_datetime=True,
        ),
        Scalar(
            "is_date_text",
            "_is_date_text({0})",
            helper="_is_date_text",
            uses_datetime=True,
        ),
        Scalar(
            "text_to_timestamp",
            "_text_to_timestamp({0})",
            helper="_text_to_timestamp",
            uses_datetime=True,
        ),
        Scalar(
            "is_timestamp_text",
            "_is_timestamp_text({0})",
            helper="_is_timestamp_text",
            uses_datetime=True,
        ),
    )
}

# The STRFTIME specifiers `sqlfuncs._strftime` fills in (each also as %-x,
# without zero padding, where it is a number); DuckDB's others are refused.
STRFTIME_CODES = "aAbBpYmdyHIMSfjwuGVUW%"
# the specifiers STRPTIME reads (runtime.sqlfuncs._strptime_of)
STRPTIME_CODES = "YymdjHIMSfgbBaAp%"

# (top_cut: no SQL function, the threshold of a top-n, passes/top_rows.py)
QUANTILE_KINDS = ("quantile_cont", "quantile_disc", "top_cut")
# BIT_OR, BIT_AND (of the distinct values) and BIT_XOR (of every value,
# copies too) of INTEGERs, folded over the group's values when read
BIT_KINDS = ("bit_or_agg", "bit_and_agg", "bit_xor_agg")
# the aggregates that read every value of their argument in order
RANKED_KINDS = (*QUANTILE_KINDS, "string_agg", "array_agg", "bit_xor_agg")
# ... or its distinct values in order
DISTINCT_ORDERED_KINDS = (
    "string_agg_distinct",
    "array_agg_distinct",
    "bit_or_agg",
    "bit_and_agg",
)
ORDERED_KINDS = (*RANKED_KINDS, *DISTINCT_ORDERED_KINDS)
# SUM/AVG(DISTINCT x): the sum of the multiset's keys, kept as they come
# and go (DECIMAL keys scaled to integers, so the sum is exact)
DISTINCT_SUM_KINDS = ("sum_distinct", "avg_distinct")
# the aggregates kept as a multiset of their argument's values per group
# ARG_MIN/ARG_MAX(x, k): MIN/MAX of the pairs (k, x), then its x
PICK_KINDS = ("arg_min", "arg_max")
MULTISET_KINDS = (
    "min",
    "max",
    *PICK_KINDS,
    "count_distinct",
    *DISTINCT_SUM_KINDS,
    *ORDERED_KINDS,
)

#: The runtime helpers by name, as peers call them.
SQLFUNCS_HELPERS = tuple(h for h in inline.HELPERS if h.module == "sqlfuncs")
HELPERS: dict[str, Callable] = {
    s.helper: getattr(sqlfuncs, s.helper) for s in SCALARS.values() if s.helper
} | {f"_{kind}": getattr(sqlfuncs, f"_{kind}") for kind in QUANTILE_KINDS}


def peer_namespace(constants=()) -> dict:
    """Globals for code a peer renders with `render.Expressions`: the
    helpers, the modules rendered code names, and the expressions'
    `constants` ((name, source) pairs: compiled LIKE patterns). Besides the
    functions' helpers, rendered code calls others of `sqlfuncs` itself
    (`_nan_key` in a comparison of quotients): all of them."""
    ns = {h.name: getattr(sqlfuncs, h.source_name) for h in SQLFUNCS_HELPERS}
    ns |= {**HELPERS, "datetime": datetime, "re": re}
    for name, source in constants:
        ns[name] = eval(source, ns)  # re.compile(<literal>), see Expressions._like
    return ns


# --- aggregates ----------------------------------------------------------------------

# the aggregates SQL names (TOP_CUT is made by a pass, never written)
AGGREGATES = (
    "count",
    "sum",
    "avg",
    "min",
    "max",
    *PICK_KINDS,
    "count_distinct",
    *DISTINCT_SUM_KINDS,
    *(kind for kind in RANKED_KINDS if kind != "top_cut"),
    *DISTINCT_ORDERED_KINDS,
)


def aggregate_value(
    kind: str,
    nonnull: str,
    total: str = "None",
    extreme: str = "None",
    distinct: str = "0",
    empty: str | None = None,
    ranked: str = "()",
    fraction: float | None = None,
    place: int | None = None,
    scale: int | None = None,
    separator: str | None = None,
    descending: bool = False,
    as_text: bool = False,
    keyed: bool = False,
) -> str:
    """Python for aggregate `kind`'s SQL value in one group, from Python
    expressions for: the number of rows whose argument is not NULL
    (`nonnull`; COUNT(*): all rows), the sum of those arguments (`total`),
    their MIN or MAX (`extreme`, read only when there is one), the number
    of distinct ones (`distinct`; SUM/AVG(DISTINCT): `total` is their sum)
    and, for a quantile at `fraction` (of a
    DECIMAL of `scale` digits) or TOP_CUT's value at `place`, all of them in
    order (`ranked`). `empty`: a
    cheaper test that there is no non-NULL argument, if the system has one
    (default `nonnull == 0`)."""
    empty = empty or f"{nonnull} == 0"
    if kind in BIT_KINDS:
        return f"(None if {empty} else _{kind}({ranked}))"
    if kind in ("array_agg", "array_agg_distinct"):
        # the sorted pairs' values (`aggregates._ordered_pair`), a tuple
        pairs = f"reversed({ranked})" if descending else ranked
        return f"(None if {empty} else tuple([pair[1] for pair in {pairs}]))"
    if keyed:  # STRING_AGG(x ORDER BY k): the sorted (k, x) pairs' x's
        return (
            f"(None if {empty} else _string_agg_keyed({ranked}, {separator!r}, "
            f"{descending}, {as_text}))"
        )
    if kind in ("string_agg", "string_agg_distinct"):
        # every value (each distinct one) in order, cast to VARCHAR if it
        # is no string, joined
        values = f"reversed({ranked})" if descending else ranked
        if as_text and scale is not None:  # a DECIMAL's every digit
            values = f"(_to_str(v, {scale}) for v in {values})"
        elif as_text:
            values = f"map(_to_str, {values})"
        return f"(None if {empty} else {separator!r}.join({values}))"
    if kind == "quantile_cont":
        return (
            f"(None if {empty} else _quantile_cont({ranked}, {fraction!r}, {scale!r}))"
        )
    if kind == "quantile_disc":
        return f"(None if {empty} else _quantile_disc({ranked}, {fraction!r}))"
    if kind == "top_cut":
        return f"(None if {empty} else _top_cut({ranked}, {place!r}, {descending}))"
    if kind == "count":
        return nonnull
    if kind == "count_distinct":
        return distinct
    if kind in ("sum", "sum_distinct"):
        return f"(None if {empty} else {total})"
    if kind == "avg":
        return f"(None if {empty} else {total} / {nonnull})"
    if kind == "avg_distinct":
        return f"(None if {empty} else {total} / {distinct})"
    if kind in ("min", "max"):
        return f"(None if {empty} else {extreme})"
    if kind in PICK_KINDS:  # the extreme pair (key, value): its value
        return f"(None if {empty} else {extreme}[1])"
    raise NotImplementedError(f"aggregate {kind}")


def linear_total(terms, divisor: str | None = None) -> str:
    """Python for Σ coef * value of (coef, value expression, decimal scale)
    `terms`, divided by `divisor` (AVG's count) when given. Integer terms
    (counts, exact DECIMAL sums kept scaled by 10^scale; scale None: a
    float) with integer coefficients are brought to one scale and divided
    once, so the value is their exact quotient rounded once: equal averages
    are equal floats (2.97 / 3 and 1.98 / 2 both 0.99)."""
    if terms and all(s is not None and type(c) is int for c, _, s in terms):
        top = max(s for _, _, s in terms)
        parts = []
        for coef, value, scale in terms:
            coef *= 10 ** (top - scale)
            parts.append(value if coef == 1 else f"{coef!r} * {value}")
        total = " + ".join(parts)
        below = [d for d in (divisor, str(10**top) if top else None) if d]
        if not below:
            return f"({total})"
        if len(parts) > 1:
            total = f"({total})"
        unit = " * ".join(below)
        return f"({total} / {f'({unit})' if len(below) > 1 else unit})"
    parts = []
    for coef, value, scale in terms:
        term = value if coef == 1 else f"{coef!r} * {value}"
        if scale:
            term = f"{term} / {10 ** scale}"
        parts.append(term)
    total = "(" + (" + ".join(parts) or "0") + ")"
    return f"({total} / {divisor})" if divisor else total


def aggregate_function(kind: str) -> Callable:
    """`aggregate_value` as a Python function f(nonnull, total, extreme,
    distinct), for engines that apply a function per group (Pathway)."""
    body = aggregate_value(kind, "n", "total", "extreme", "distinct")
    return eval(f"lambda n, total=None, extreme=None, distinct=0: {body}")
