"""The intermediate representation: a generalized conjunctive query (GCQ).

Frozen dataclasses that print readably. The frontend (`dynyan.compiler.frontend`) builds a
`Query`; the planner (`dynyan.compiler.planner`) reads its hypergraph; code generation
(`dynyan.compiler.render`) renders its expressions. Nothing here knows about SQL text
or Python source.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from dataclasses import dataclass

# --- scalar expressions -----------------------------------------------------


@dataclass(frozen=True)
class Ref:
    """Column `column` (position in its relation) of atom number `atom`."""

    atom: int
    column: int
    name: str  # for printing only: "alias.column"

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Lit:
    """A constant, already parsed into the Python value the module will use."""

    value: object

    def __str__(self) -> str:
        if isinstance(self.value, datetime.datetime):
            return f"TIMESTAMP '{self.value.isoformat(sep=' ')}'"
        if isinstance(self.value, datetime.date):
            return f"DATE '{self.value.isoformat()}'"
        if isinstance(self.value, str):
            return "'" + self.value.replace("'", "''") + "'"
        if self.value is None:
            return "NULL"
        return repr(self.value)


# Operator name -> SQL spelling for printing; the same names key the Python
# emitters in dynyan.compiler.render, so both tables must list the same operators.
INFIX = {
    "add": "+",
    "sub": "-",
    "mul": "*",
    "div": "/",
    "mod": "%",
    "intdiv": "//",
    "eq": "=",
    "ne": "<>",
    "lt": "<",
    "le": "<=",
    "gt": ">",
    "ge": ">=",
    "and": "AND",
    "or": "OR",
    "concat": "||",
}
PREFIX = {"neg": "-", "not": "NOT "}
# SIN … DEGREES: the functions of DOUBLEs `sqlfuncs._trig` computes (ATAN2
# of two)
TRIGONOMETRY = (
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "atan2",
    "radians",
    "degrees",
)
# CBRT, COT and the hyperbolic functions: C's functions of DOUBLEs with
# their infinities (`sqlfuncs._c_math`; GAMMA and LGAMMA are not: Python's
# differ from C's in the last bit)
C_MATH = (
    "cbrt",
    "cot",
    "sinh",
    "cosh",
    "tanh",
    "asinh",
    "acosh",
    "atanh",
)
FUNCTIONS = {
    "like",  # (value, Lit(pattern))
    "regexp",  # (value, Lit(Python pattern), Lit(ignore case)): re.search
    # (value, Lit(pattern), Lit(re.sub replacement), Lit(every match), Lit(icase))
    "regexp_replace",
    "regexp_extract",  # (value, Lit(pattern), Lit(group)): '' without a match
    "in",  # (value, lit1, lit2, ...)
    "case",  # (cond1, val1, cond2, val2, ..., default)
    "add_days",  # (date, Lit(int) or an INTEGER expression)
    "add_months",  # (date, Lit(int))
    "date_trunc",  # (Lit(unit), date): the first day of its year, …, ISO week
    "strftime",  # (Lit(format), date or timestamp): its text, as DuckDB spells it
    "year",
    "month",
    "day",
    "substr",  # (string, Lit(start, 1-based), Lit(length) or absent)
    "upper",
    "lower",
    "abs",
    "isnull",  # (value,): TRUE exactly when the value is NULL
    "coalesce",  # (v1, v2, ...): the first that is not NULL
    "nullif",  # (a, b): NULL when a = b, else a
    "greatest",  # (v1, v2, ...): NULLs skipped, NaN above every number
    "least",
    "quarter",
    "dayofweek",  # Sunday 0 ... Saturday 6
    "dayofyear",
    "week",  # ISO week
    "isodow",  # Monday 1 ... Sunday 7
    "isoyear",  # the year of the ISO week
    "yearweek",  # ISO year * 100 + ISO week
    "decade",  # year // 10
    "century",  # (year - 1) // 100 + 1
    "millennium",  # (year - 1) // 1000 + 1
    "millisecond",  # of a TIMESTAMP: seconds * 1000 + its milliseconds
    "microsecond",  # of a TIMESTAMP: seconds * 1000000 + its microseconds
    "length",
    "trim",  # spaces at both ends
    "replace",  # (string, from, to): every occurrence; an empty `from` none
    "left",  # (string, n): the first n characters (n < 0: all but the last -n)
    "right",  # (string, n): the last n characters (n < 0: all but the first -n)
    "strpos",  # (string, part): 1-based position of its first occurrence, 0 if none
    "to_str",  # CAST(x AS VARCHAR) (x[, the DECIMAL's scale])
    "real_to_str",  # CAST(x AS VARCHAR) of a REAL: its shortest digits as a REAL
    "to_timestamp",  # CAST(DATE AS TIMESTAMP): its midnight
    "to_date",  # CAST(TIMESTAMP AS DATE)
    "days_between",  # DATE - DATE: days
    "add_seconds",  # TIMESTAMP ± INTERVAL of hours, minutes, seconds (in seconds)
    "hour",
    "minute",
    "second",
    "epoch",  # (timestamp): seconds since 1970-01-01 00:00:00, a DOUBLE
    "interval_epoch",  # (interval): its length in seconds, a DOUBLE
    "sqrt",
    "round",  # (number, Lit(digits)[, Lit(exact digits of a DECIMAL)]): halves away from zero
    "to_decimal",  # CAST(DOUBLE or DECIMAL AS DECIMAL(p, s)): (x, Lit(s)[, Lit(exact)]), as round
    "to_int",  # CAST(DOUBLE AS INTEGER), halves to even (a DECIMAL: of its round)
    "to_float",  # CAST(number AS DOUBLE), and an INTEGER among DOUBLE results
    # (x[, Lit(True): a CAST, out of range an error]): REAL arithmetic's
    # rounding to the nearest 4-byte float (beyond their range ±inf)
    "to_single",
    # a float SUM's term split (Aggregate.nonfinite): its finite part (0
    # when it is not), and whether it is +inf, -inf, NaN
    "finite_part",
    "is_posinf",
    "is_neginf",
    "is_nan",
    # (number[, Lit(exact digits of a DECIMAL)]): a DOUBLE (an INTEGER is
    # cast to one first)
    "ceil",
    "floor",
    # (DECIMAL, Lit(its exact digits)): the DOUBLE nearest to the decimal it
    # stands for, as DuckDB casts it (a float computation may be off in the
    # last bit)
    "exact_double",
    "trunc",  # (number, Lit(digits)[, Lit(exact digits)]): toward zero
    "sign",  # -1, 0 or 1 (0 for NaN)
    "isnan",  # ISNAN, ISINF, ISFINITE of a number (an INTEGER's: finite)
    "isinf",
    "isfinite",
    "gcd",  # GCD, LCM of INTEGERs (non-negative, as DuckDB)
    "lcm",
    "translate",  # (string, from, to): each character of from as to's, or gone
    "bit_and",  # &, |, XOR of INTEGERs
    "bit_or",
    "bit_xor",
    "shift_left",  # (x, n, bits): << and >> of `bits`-bit INTEGERs, as DuckDB
    "shift_right",
    "bit_count",  # (x, bits): the ones of a `bits`-bit INTEGER
    "ln",
    "log10",
    "log2",
    "exp",
    "power",  # (base, exponent): a DOUBLE, as C's pow
    "trim_chars",  # (string, characters): any of them at both ends
    "ltrim",  # (string, characters): at the start
    "rtrim",  # (string, characters): at the end
    "lpad",  # (string, width, fill)
    "overlay",  # (string, r, start, n): n characters from start replaced by r
    "rpad",
    "repeat",  # (string, count)
    "split_part",  # (string, separator, index): 1-based, negative from the end
    "split_count",  # (string, separator): LEN(STRING_SPLIT(…)), its parts
    "printf_value",  # (value, Lit(C printf specifier)): PRINTF's, as Python's %
    "printf_fixed",  # (double, Lit('%…f')): the same, an error from 1e30 on
    "starts_with",
    "ends_with",
    "contains",  # (string, part)
    "reverse",
    *TRIGONOMETRY,  # SIN … DEGREES: C's (and math's) functions of DOUBLEs
    *C_MATH,  # CBRT, COT, SINH … ATANH: likewise, with their infinities
    "even",  # away from zero to an even integer, a DOUBLE
    "fdiv",  # (x, y): FLOOR(x / y) in doubles
    "fmod",  # (x, y): x - FLOOR(x / y) * y in doubles
    "factorial",  # of an INTEGER up to 33 (a HUGEINT)
    "signbit",  # whether a DOUBLE's sign bit is set (-0.0 too)
    "time_bucket",  # (Lit(seconds), Lit(months), date or timestamp): TIME_BUCKET
    "like_match",  # (string, pattern): LIKE with a pattern computed per row
    "ascii",  # the code point of the first character (0 of '')
    "unicode",  # the code point of the first character (-1 of '')
    "octet_length",  # the bytes of the text's UTF-8 (STRLEN)
    "levenshtein",  # (a, b): edits between their UTF-8 bytes
    "string_at",  # (s, i): s[i], the i-th character (from the end if negative)
    "string_slice",  # (s, a, b): s[a:b], characters a to b, both included
    "hamming",  # (a, b): bytes that differ (an error unless of one length)
    "jaccard",  # (a, b): |shared bytes| / |bytes of either| (an error for '')
    "chr",  # the character of a code point
    "md5",  # MD5 of the text's UTF-8 bytes, lower-case hex
    "sha256",  # SHA-256 of the text's UTF-8 bytes, lower-case hex
    "date_diff",  # (Lit(unit), start, end): unit boundaries crossed
    "date_sub",  # (Lit(unit), start, end): whole units from start to end
    "last_day",
    "make_date",  # (year, month, day)
    "make_timestamp",  # (year, month, day, hour, minute, seconds)
    "from_epoch",  # (count, Lit(µs per unit)): EPOCH_MS(ms), MAKE_TIMESTAMP(µs)
    "epoch_instant",  # (seconds): TO_TIMESTAMP(s), a TIMESTAMPTZ
    "to_time",  # (timestamp): CAST(t AS TIME), its time of day
    "local_time",  # (timestamptz, Lit(zone)): t AT TIME ZONE zone, a TIMESTAMP
    "utc_instant",  # (timestamp): ts AT TIME ZONE 'UTC', a TIMESTAMPTZ
    "strptime",  # (text, Lit(format)): STRPTIME, an error where it does not parse
    "is_strptime",  # (text, Lit(format)): whether it parses (TRY_STRPTIME)
    "epoch_units",  # (timestamp, Lit(units per second)): EPOCH_MS/_US/_NS(t)
    "difference_part",  # (t1 - t2, Lit(part)): EXTRACT(DAY … FROM t1 - t2)
    "dayname",
    "monthname",
    # CAST of a VARCHAR (an error where it does not convert) and whether
    # it converts (TRY_CAST: CASE WHEN is_… THEN text_to_… END); an integer
    # of Lit(bits) bits
    "text_to_int",
    "is_int_text",
    "text_to_float",
    "is_float_text",
    "text_to_date",
    "is_date_text",
    "text_to_timestamp",
    "is_timestamp_text",
    # (key, value): ARG_MIN/ARG_MAX's argument, ordered by the key, then the
    # value (the value of a row among those tied on the key: the largest)
    "pair",
    # (a, b, …): a row of values, never NULL itself (COUNT(DISTINCT (a, b)))
    "row",
    # ((key's NULL test, key), value): STRING_AGG(value ORDER BY key)'s
    # argument, NULL only where the value is; its third operand, a Lit(bool):
    # whether NULL keys sort after every other key
    "keyed_pair",
    # (key1, value, Lit(flag1), key2, Lit(flag2), …): FIRST/LAST(value ORDER
    # BY key1, …)'s argument, never NULL: (((key1 IS NULL) is flag1, key1,
    # …, value IS NULL), value), so MIN (MAX) of them is the first row's,
    # NULL keys where the flags put them and a NULL value kept
    "ordered_pair",
}
COMPARISONS = {"eq", "ne", "lt", "le", "gt", "ge"}
# Operators whose value need not be NULL when an operand is: a NULL operand
# proves nothing about the result (every other operator is NULL-strict, but
# AND/OR/NOT, three-valued, are handled apart).
NULL_ABSORBING = {
    "row",
    "isnull",
    "case",
    "coalesce",
    "nullif",
    "greatest",
    "least",
    "keyed_pair",
    "ordered_pair",
}
FLIPPED = {"eq": "eq", "ne": "ne", "lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}


@dataclass(frozen=True)
class Op:
    """An operator applied to arguments; `op` is a key of INFIX, PREFIX or FUNCTIONS."""

    op: str
    args: tuple

    def __post_init__(self):
        if self.op not in INFIX and self.op not in PREFIX and self.op not in FUNCTIONS:
            raise ValueError(f"unknown operator {self.op!r}")

    def __str__(self) -> str:
        if self.op in INFIX:
            return "(" + f" {INFIX[self.op]} ".join(map(str, self.args)) + ")"
        if self.op in PREFIX:
            return f"{PREFIX[self.op]}{self.args[0]}"
        if self.op == "case":
            whens = " ".join(
                f"WHEN {c} THEN {v}"
                for c, v in zip(self.args[:-1:2], self.args[1:-1:2])
            )
            return f"CASE {whens} ELSE {self.args[-1]} END"
        return f"{self.op.upper()}({', '.join(map(str, self.args))})"


@dataclass(frozen=True)
class ViewColumn:
    """Column `index` of an inner view's row, inside an `InnerTest`'s
    condition (EXISTS correlated by more than equalities)."""

    index: int

    def __str__(self) -> str:
        return f"inner.{self.index + 1}"


@dataclass(frozen=True)
class InnerTest:
    """A condition on one atom's rows that reads the result of an inner view
    (the virtual relation `view`): the first columns of that result are
    matched with `keys`, expressions over the atom.

    - "not_in" / "not_exists": no result row has the key (NOT IN follows
      SQL's three-valued logic: NULLs on either side);
    - "exists": some result row has the key (and satisfies `condition`, over
      the atom and `ViewColumn`s of the result row, when there is one);
      `negated`: NOT EXISTS of the same;
    - "scalar": `value op result`, where the result row with the key holds the
      subquery's value after the key columns (`default` where it has no row:
      the value of the subquery over no rows); `negated`: NOT of it, TRUE
      where either side is NULL (NOT EXISTS of a bound, `bounded_exists`).

    The generated module keeps the atom's rows by key, so that when the inner
    view's result changes at a key only the rows whose test can change are
    checked again (for a scalar compared by <, <=, >, >=: a range scan)."""

    kind: str
    view: str
    keys: tuple = ()
    value: object = None
    op: str = ""
    default: object = None
    condition: object = None
    negated: bool = False
    guard: int | None = None  # the view's `Relation.guard`
    # per key, whether NULL matches NULL (IS NOT DISTINCT FROM); () or False:
    # `=`, where an atom's NULL key matches no result row
    null_safe: tuple = ()

    @property
    def args(self) -> tuple:
        """The expressions over the atom, in a fixed order."""
        out = list(self.keys)
        if self.value is not None:
            out.append(self.value)
        if self.condition is not None:
            out.append(self.condition)
        return tuple(out)

    def with_args(self, args) -> "InnerTest":
        """The same test over rewritten expressions (see `args`)."""
        args = list(args)
        keys = tuple(args[: len(self.keys)])
        rest = args[len(self.keys) :]
        value = rest.pop(0) if self.value is not None else None
        condition = rest.pop(0) if self.condition is not None else None
        return InnerTest(
            self.kind,
            self.view,
            keys,
            value,
            self.op,
            self.default,
            condition,
            self.negated,
            self.guard,
            self.null_safe,
        )

    def matches_null(self, i: int) -> bool:
        """Whether key `i` matches a NULL with a NULL."""
        return i < len(self.null_safe) and self.null_safe[i]

    def __str__(self) -> str:
        keys = ", ".join(
            f"{k} null-safe" if self.matches_null(i) else str(k)
            for i, k in enumerate(self.keys)
        )
        if self.kind == "scalar":
            where = f" at ({keys})" if self.keys else ""
            test = f"({self.value} {INFIX[self.op]} {self.view}{where})"
            return f"NOT {test}" if self.negated else test
        word = {"not_in": "NOT IN", "not_exists": "NOT EXISTS"}.get(self.kind)
        if word is None:
            word = "NOT EXISTS" if self.negated else "EXISTS"
        cond = f" WHERE {self.condition}" if self.condition is not None else ""
        return f"{word} {self.view}({keys}){cond}"


Expr = Ref | Lit | Op | InnerTest


def refs(expr: Expr) -> list[Ref]:
    """Every column reference in `expr`, left to right."""
    if isinstance(expr, Ref):
        return [expr]
    if isinstance(expr, (Op, InnerTest)):
        return [r for arg in expr.args for r in refs(arg)]
    return []


def reads_a_view(expr) -> bool:
    """Whether `expr` holds a subquery's test (`InnerTest`) or reads an inner
    view's row (`ViewColumn`)."""
    if isinstance(expr, (InnerTest, ViewColumn)):
        return True
    return isinstance(expr, Op) and any(reads_a_view(a) for a in expr.args)


def conjuncts(expr: Expr) -> list[Expr]:
    """Split a condition on AND."""
    if isinstance(expr, Op) and expr.op == "and":
        return [c for arg in expr.args for c in conjuncts(arg)]
    return [expr]


# --- the query ---------------------------------------------------------------


# The names of a guard's column (`Relation.guard`): what a View says when it
# reads nothing because a group of it has several rows.
GUARD_ROWS = "__rows"
GUARD_TIES = "__ties"


@dataclass(frozen=True)
class Relation:
    """An input relation as declared by CREATE TABLE."""

    name: str
    columns: tuple[str, ...]
    types: tuple[str, ...]  # "int", "float", "str", "date", "bool"
    # Decimal digits after the point where exact (INTEGER 0, DECIMAL(p, s) s),
    # None for DOUBLE and non-numeric columns.
    scales: tuple[int | None, ...] = ()
    # Per column: declared NOT NULL (or PRIMARY KEY); () when none is. Such a
    # column never holds NULL (the generated module refuses a None there).
    notnull: tuple[bool, ...] = ()
    # An inner view of a scalar subquery without an aggregate: the column
    # counting its rows (the subquery's value is an error where it is > 1),
    # named GUARD_ROWS; of the groups of peers of a window's order that may
    # tie: the rows of each, named GUARD_TIES (the order is open where > 1).
    guard: int | None = None
    # A table of constant rows (VALUES in FROM): the View holds them from the
    # start, and no update reaches it.
    rows: tuple[tuple, ...] | None = None
    # The columns of its declared PRIMARY KEY (none: ()): a row's other
    # columns are one value per key.
    key: tuple[str, ...] = ()
    # The positions of its REAL (FLOAT, FLOAT4) columns: DuckDB keeps their
    # values as 4-byte floats, and so does the view (`_singles`).
    singles: tuple[int, ...] = ()
    # Per column: the bits of a signed INTEGER type (TINYINT 8 … HUGEINT
    # 128), else None; () where not known (a subquery's view): what << and
    # BIT_COUNT read (DuckDB's results depend on the width).
    bits: tuple[int | None, ...] = ()

    def __str__(self) -> str:
        cols = ", ".join(
            f"{c} {t}" + (" NOT NULL" if self.is_notnull(i) else "")
            for i, (c, t) in enumerate(zip(self.columns, self.types))
        )
        return f"{self.name}({cols})"

    def is_notnull(self, column: int) -> bool:
        """Whether column `column` is declared NOT NULL (or PRIMARY KEY)."""
        return column < len(self.notnull) and self.notnull[column]


@dataclass(frozen=True)
class Atom:
    """One occurrence of a relation in FROM.

    `variables[i]` is the variable bound to column i, or None when the column
    matters only to the atom's local filters (it is projected away at the leaf).
    """

    alias: str
    relation: str
    variables: tuple[str | None, ...]
    filters: tuple[Expr, ...]
    # Variables computed from the row (e.g. EXTRACT(YEAR FROM d) in GROUP BY).
    derived: tuple[tuple[str, Expr], ...] = ()
    # The table of a LEFT JOIN read only in COUNT/SUM/AVG: at a value of its
    # variables (the join key) none of its rows has, it holds one row of
    # NULLs (SQL's padded row); its columns are NULL-able there.
    padded: bool = False

    @property
    def vars(self) -> tuple[str, ...]:
        """The atom's distinct variables, in column order, then derived ones."""
        columns = (v for v in self.variables if v is not None)
        return tuple(dict.fromkeys([*columns, *(v for v, _ in self.derived)]))

    def __str__(self) -> str:
        cols = ", ".join(v or "_" for v in self.variables)
        cols += "".join(f", {v} := {e}" for v, e in self.derived)
        where = " | " + " AND ".join(map(str, self.filters)) if self.filters else ""
        name = (
            self.relation
            if self.alias == self.relation
            else f"{self.relation} {self.alias}"
        )
        padded = " (else one row of NULLs)" if self.padded else ""
        return f"{name}({cols}){where}{padded}"


@dataclass(frozen=True)
class Predicate:
    """A θ-predicate between two variables: `left op right + offset`."""

    left: str
    op: str  # "lt" | "le" | "gt" | "ge"
    right: str
    offset: int | float | datetime.timedelta = 0  # a DATE's shift: timedelta

    @property
    def vars(self) -> frozenset[str]:
        return frozenset((self.left, self.right))

    def oriented(self, var: str) -> tuple[str, str, int | float]:
        """The same predicate as `var op other + k`: (op, other, k)."""
        if var == self.left:
            return self.op, self.right, self.offset
        return FLIPPED[self.op], self.left, -self.offset

    def __str__(self) -> str:
        text = f"{self.left} {INFIX[self.op]} {self.right}"
        k = self.offset
        if not k:
            return text
        sign = "-" if k < type(k)() else "+"
        k = abs(k)
        if isinstance(k, datetime.timedelta):  # a DATE's or TIMESTAMP's shift
            whole_days = not (k.seconds or k.microseconds)
            k = (
                f"INTERVAL '{k.days}' DAY"
                if whole_days
                else f"INTERVAL '{k.total_seconds():g}' SECOND"
            )
        return f"{text} {sign} {k}"


@dataclass(frozen=True)
class Var:
    """A variable reference inside an output expression or θ-predicate."""

    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Output:
    """One SELECT item: its column name and its expression over variables."""

    name: str
    expr: object  # Expr whose leaves are Var and Lit

    def __str__(self) -> str:
        return f"{self.expr} AS {self.name}"


@dataclass(frozen=True)
class Channel:
    """A multiplicative payload channel (docs/design.md §2, generalised): each atom
    tuple contributes a factor (1 where the atom has none), a join multiplies,
    a projection adds. Channel 0 of every payload is the plain count."""

    factors: tuple[tuple[int, Expr], ...]  # (atom index, expression over that atom)
    # Per factor: decimal digits it holds exactly (the leaf scales it to an
    # int), or None when the channel is computed in floats.
    factor_scales: tuple[int | None, ...]
    # SQL NULL: (atom index, expressions over that atom) that must all be
    # non-NULL for a row to contribute; the atom's factor is 0 otherwise (1
    # when the atom has no factor). Empty when no argument can be NULL.
    guards: tuple[tuple[int, tuple[Expr, ...]], ...] = ()

    @property
    def scale(self) -> int | None:
        return None if None in self.factor_scales else sum(self.factor_scales)

    @property
    def exact_float(self) -> bool:
        """A float channel whose factors are always finite: each factor is
        kept as an integer count of 2**-1074 (every double is one), so its
        sums are exact and forget the order of the updates."""
        return self.scale is None and not any(
            may_be_nonfinite(e) for _, e in self.factors
        )

    def __str__(self) -> str:
        text = " * ".join(str(e) for _, e in self.factors) or "1"
        if self.guards:
            nn = " AND ".join(
                f"{e} IS NOT NULL" for _, exprs in self.guards for e in exprs
            )
            text += f" where {nn} (else 0)"
        return text


@dataclass(frozen=True)
class Aggregate:
    """COUNT/SUM/AVG as a linear combination of channels (coefficient, channel);
    MIN/MAX/COUNT(DISTINCT)/SUM(DISTINCT)/AVG(DISTINCT) and the quantiles over
    the variable `arg`, kept per group in a (sorted) multiset of its values
    (NULLs left out)."""

    # "count" | "sum" | "avg" | "min" | "max" | "count_distinct" |
    # "sum_distinct" | "avg_distinct" |
    # "quantile_cont" | "quantile_disc" (MEDIAN: a quantile at 0.5) |
    # "top_cut" (the value at place n of the order, or the last: a top-n's
    # threshold, passes/top_rows.py) |
    # "string_agg" | "string_agg_distinct" (ordered by the argument)
    kind: str
    terms: tuple[tuple[int | float, int], ...]
    text: str
    arg: str | None = None
    # SQL NULL: the channel counting the rows whose COUNT/SUM/AVG argument is
    # not NULL (0, the count channel, when it never is): COUNT(x) is its
    # value, SUM is NULL and AVG divides by it.
    nonnull: int = 0
    # An argument over several tables that is no sum of per-table products
    # (CASE over two tables, a condition times a product …): an expression
    # over variables, computed on each row of the widened result and
    # aggregated in the materialised groups. `scale`: decimal digits it holds
    # exactly (summed as an integer), None when it is summed in floats; of
    # SUM/AVG(DISTINCT), computed or not, likewise the digits its distinct
    # values are kept in (0: an integer, None: a DOUBLE).
    computed: object = None
    scale: int | None = None
    # A float SUM/AVG whose terms may be ±inf or NaN (x / 0): its channels
    # hold the finite parts, and these (+inf, -inf, NaN) channel tuples count
    # the terms that are not, so a delete restores the sum exactly (made by
    # the renderer, `render.split_nonfinite`; a computed argument: True, its
    # group keeps the counts beside its total).
    nonfinite: tuple | bool = ()
    # A quantile's q, in [0, 1].
    fraction: float | None = None
    # TOP_CUT's n (its order descending where `descending`).
    place: int | None = None
    # STRING_AGG's separator, whether its ORDER BY is DESC, and whether its
    # values are cast to VARCHAR (no strings) after they are ordered;
    # `keyed`: ordered by another key, its values are keyed pairs.
    separator: str | None = None
    descending: bool = False
    cast_text: bool = False
    keyed: bool = False

    def __str__(self) -> str:
        return self.text


# functions whose value can be ±inf or NaN for finite operands (SQRT(-1),
# LN(0), EXP(1000), POWER(0, -1)) or for a text ('inf')
NONFINITE_FUNCTIONS = (
    *("sqrt", "ln", "log10", "log2", "exp", "power", "text_to_float"),
    *("cot", "sinh", "cosh", "atanh", "fdiv", "fmod"),
)


def may_be_nonfinite(e) -> bool:
    """Whether expression `e` can be ±inf or NaN: it divides by something
    that can be 0 (x / 0), or calls a function that can."""
    if not isinstance(e, Op) or e.op == "finite_part":
        return False
    if e.op in NONFINITE_FUNCTIONS:
        return True
    if e.op == "div":
        divisor = e.args[1]
        if not (isinstance(divisor, Lit) and divisor.value not in (0, None)):
            return True
    return any(may_be_nonfinite(a) for a in e.args)


# operators whose value is always an INTEGER: exact (0 digits), so SUM(YEAR(d))
# or SUM(EPOCH_MS(t)) adds integers, as DuckDB's HUGEINT, not doubles
INTEGER_OPS = frozenset(
    {
        *("year", "month", "day", "quarter", "dayofweek", "dayofyear", "week"),
        *("isodow", "isoyear", "yearweek", "decade", "century", "millennium"),
        *("hour", "minute", "second", "millisecond", "microsecond"),
        *("days_between", "date_diff", "date_sub", "difference_part", "epoch_units"),
        *("strpos", "length", "ascii", "sign", "gcd", "lcm", "intdiv"),
        *("unicode", "octet_length", "levenshtein", "hamming", "split_count"),
        *("bit_and", "bit_or", "bit_xor", "factorial"),
        *("shift_left", "shift_right", "bit_count"),
    }
)


def exact_digits(e, leaf: Callable) -> int | None:
    """Decimal digits that hold `e` exactly (it is summed as an integer
    scaled by 10^digits), None if it may be inexact (a DOUBLE, a division);
    `leaf` gives the digits of the column leaves."""
    if isinstance(e, Lit):
        if isinstance(e.value, bool) or isinstance(e.value, int):
            return 0
        if isinstance(e.value, float):
            text = repr(e.value)
            if "e" in text or "inf" in text or "nan" in text:
                return None
            digits = text.split(".")[1].rstrip("0") if "." in text else ""
            return len(digits)
        return None
    if not isinstance(e, Op):
        return leaf(e)
    if e.op in INTEGER_OPS:
        return 0
    if e.op in ("add", "sub"):
        parts = [exact_digits(a, leaf) for a in e.args]
        return None if None in parts else max(parts)
    if e.op == "mul":
        parts = [exact_digits(a, leaf) for a in e.args]
        return None if None in parts else sum(parts)
    if e.op in ("neg", "abs", "nullif"):
        return exact_digits(e.args[0], leaf)
    if e.op in ("pair", "keyed_pair", "ordered_pair"):
        return exact_digits(e.args[1], leaf)
    if e.op in ("to_decimal", "to_int"):
        return e.args[1].value if e.op == "to_decimal" else 0
    if e.op == "round" and len(e.args) == 3:  # a DECIMAL's digits, rounded
        return min(e.args[2].value, max(e.args[1].value, 0))
    if e.op in ("ceil", "floor") and len(e.args) == 2:  # of a DECIMAL
        return 0
    if e.op == "exact_double":
        return e.args[1].value
    if e.op == "trunc" and len(e.args) == 3:
        return min(e.args[2].value, max(e.args[1].value, 0))
    if e.op in ("coalesce", "greatest", "least", "case"):
        branches = e.args[1::2] + (e.args[-1],) if e.op == "case" else e.args
        parts = [
            exact_digits(a, leaf)
            for a in branches
            if not (isinstance(a, Lit) and a.value is None)
        ]
        return None if None in parts or not parts else max(parts)
    return None


@dataclass(frozen=True)
class AggRef:
    """The value of aggregate number `index` inside an output expression."""

    index: int
    text: str = ""

    def __str__(self) -> str:
        return self.text or f"agg{self.index}"


@dataclass(frozen=True)
class SortKey:
    """One ORDER BY item: the output column it sorts on (by position, sort-only
    columns after the visible ones), its direction and where NULLs go."""

    position: int
    descending: bool = False
    nulls_first: bool = False

    def __str__(self) -> str:
        text = f"#{self.position + 1}" + (" DESC" if self.descending else "")
        return text + (" NULLS FIRST" if self.nulls_first else "")


@dataclass(frozen=True)
class Ordering:
    """ORDER BY … [LIMIT k] [OFFSET m]: the result in that order, only rows
    m+1 … m+k of it. The last `hidden` outputs are sort-only (ORDER BY items
    that are not SELECT items): rows carry them, the user never sees them."""

    keys: tuple[SortKey, ...]
    limit: int | None = None
    offset: int = 0
    hidden: int = 0
    # LIMIT/OFFSET without ORDER BY: SQL allows any k rows; these keys (every
    # SELECT column) pick ones that stay put while they live
    implied: bool = False

    def __str__(self) -> str:
        text = "order by " + ", ".join(map(str, self.keys))
        if self.implied:
            text += " (no ORDER BY: LIMIT takes rows in SELECT-column order)"
        if self.limit is not None:
            text += f" limit {self.limit}"
        if self.offset:
            text += f" offset {self.offset}"
        if self.hidden:
            text += f" (the last {self.hidden} outputs are sort-only)"
        return text


@dataclass(frozen=True)
class Query:
    """π_outputs( atom1 ⋈ … ⋈ atomN | predicates ), with bag or set semantics."""

    relations: tuple[Relation, ...]  # every relation the query reads, by first use
    atoms: tuple[Atom, ...]
    predicates: tuple[Predicate, ...]
    outputs: tuple[Output, ...]
    distinct: bool
    sql: str  # the SELECT as sqlglot pretty-prints it (for docstrings only)
    grouped: bool = False  # GROUP BY or aggregates: one output row per group
    group_vars: tuple[str, ...] = ()
    channels: tuple[Channel, ...] = ()  # beyond the count channel
    aggregates: tuple[Aggregate, ...] = ()
    having: object = None  # condition over group variables and AggRefs
    # Subqueries compiled as inner views: (virtual relation name, its query).
    # Their results are relations of this query, fed by their deltas.
    subqueries: tuple[tuple[str, "Query"], ...] = ()
    # Conditions across tables that fit no join tree edge (e.g. `<>`, OR):
    # checked on each row of the widened result before it is materialised.
    residual: tuple[object, ...] = ()
    # ORDER BY / LIMIT / OFFSET of the result (the outermost query only).
    ordering: Ordering | None = None
    # Join variables of IS NOT DISTINCT FROM only: their NULLs join each other.
    null_safe: frozenset[str] = frozenset()
    # Tables the SQL names that the result does not depend on (a LATERAL
    # aggregate whose values are never read): the View takes their updates,
    # checks them and keeps nothing else (the outermost query only).
    unread: tuple[Relation, ...] = ()
    # the visible outputs' names as DuckDB spells them (the outermost query
    # only; default: the outputs' own, in lower case)
    names: tuple[str, ...] = ()

    @property
    def visible_outputs(self) -> tuple[Output, ...]:
        """The outputs the user sees (sort-only outputs left out)."""
        hidden = self.ordering.hidden if self.ordering else 0
        return self.outputs[: len(self.outputs) - hidden]

    @property
    def residual_vars(self) -> tuple[str, ...]:
        """Variables the residual conditions read, not output otherwise."""
        seen = dict.fromkeys(v.name for c in self.residual for v in var_refs(c))
        before = set(self.output_vars) | set(self.extra_vars)
        return tuple(v for v in seen if v not in before)

    @property
    def extra_vars(self) -> tuple[str, ...]:
        """Variables the materialised groups need of each row, beyond the group
        variables: arguments of MIN/MAX/COUNT(DISTINCT), and what computed
        aggregate arguments read."""
        args = [a.arg for a in self.aggregates if a.arg is not None]
        for a in self.aggregates:
            if a.computed is not None:
                args += [v.name for v in var_refs(a.computed)]
        return tuple(v for v in dict.fromkeys(args) if v not in self.group_vars)

    @property
    def all_vars(self) -> tuple[str, ...]:
        """Every variable of the atoms, in order of first use: the order of
        index keys and of a module's locals."""
        return tuple(dict.fromkeys(v for atom in self.atoms for v in atom.vars))

    @property
    def plan_vars(self) -> tuple[str, ...]:
        """The variables the (T, N)-representation must output."""
        return self.output_vars + self.extra_vars + self.residual_vars

    @property
    def output_vars(self) -> tuple[str, ...]:
        """The variables the (T, N)-representation must output: the group
        variables, or those the SELECT list reads, in order of first use."""
        if self.grouped:
            return self.group_vars
        seen: dict[str, None] = {}
        for out in self.outputs:
            for v in var_refs(out.expr):
                seen.setdefault(v.name)
        return tuple(seen)

    def relation(self, name: str) -> Relation:
        return next(r for r in self.relations if r.name == name)

    def __str__(self) -> str:
        head = "SELECT DISTINCT " if self.distinct else "SELECT "
        lines = [head + ", ".join(map(str, self.outputs))]
        lines += [f"  atom {a}" for a in self.atoms]
        lines += [f"  where {p}" for p in self.predicates]
        lines += [f"  on each result row: {c}" for c in self.residual]
        if self.grouped:
            lines.append("  group by " + (", ".join(self.group_vars) or "()"))
            lines += [
                f"  payload channel {i + 1}: {c}" for i, c in enumerate(self.channels)
            ]
        if self.having is not None:
            lines.append(f"  having {self.having}")
        if self.ordering is not None:
            lines.append(f"  {self.ordering}")
        for name, sub in self.subqueries:
            lines.append(f"  relation {name} := inner view")
            lines += ["    " + line for line in str(sub).splitlines()]
        return "\n".join(lines)


def query_digits(query: "Query", expr) -> int | None:
    """Decimal digits a query's expression over its variables and aggregates
    holds exactly (an output column, or a per-row expression:
    l_extendedprice * (1 - l_discount)); None where it may be inexact."""
    return exact_digits(expr, lambda leaf: _query_leaf_digits(query, leaf))


# aggregates whose value is one of their argument's values
PICKS = ("min", "max", "quantile_disc", "top_cut")


def _query_leaf_digits(query: "Query", expr) -> int | None:
    if isinstance(expr, Var):
        found = column_of(query, expr.name)
        if found is None:
            return None
        rel, column = found
        return rel.scales[column] if rel.scales else None
    if isinstance(expr, AggRef):
        agg = query.aggregates[expr.index]
        if agg.kind in PICKS and agg.computed is None:
            return query_digits(query, Var(agg.arg))
        if agg.kind in ("quantile_cont", "sum_distinct"):  # kept in these digits
            return agg.scale
        if agg.kind != "sum":
            return None
        if agg.computed is not None:
            return agg.scale
        scales = [query.channels[c - 1].scale if c else 0 for _, c in agg.terms]
        if None in scales or not all(isinstance(k, int) for k, _ in agg.terms):
            return None
        return max(scales, default=0)
    return None


def column_of(query: "Query", var: str) -> "tuple[Relation, int] | None":
    """The first table column variable `var` stands for, if it is one."""
    for atom in query.atoms:
        if var in atom.variables:
            return query.relation(atom.relation), atom.variables.index(var)
    return None


def var_refs(expr) -> list[Var]:
    """Every variable in an output expression, left to right."""
    if isinstance(expr, Var):
        return [expr]
    if isinstance(expr, Op):
        return [v for arg in expr.args for v in var_refs(arg)]
    return []


@dataclass(frozen=True)
class SetQuery:
    """`left UNION|INTERSECT|EXCEPT [ALL] right` (columns by position, named
    by `left`), as an inner view: a row's multiplicity in the result is a
    function of its multiplicities in the two sides (UNION ALL: the sum;
    INTERSECT ALL: the smaller; EXCEPT ALL: the difference if positive; the
    forms without ALL: 1 where those are positive)."""

    kind: str  # "union" | "intersect" | "except"
    all: bool
    left: "Query | SetQuery"
    right: "Query | SetQuery"
    sql: str = ""
    # The result's column types, and each side's (a side's integer column
    # in a DOUBLE/DECIMAL result column is read as a float, as SQL casts).
    types: tuple[str, ...] = ()
    side_types: tuple[tuple[str, ...], ...] = ()

    @property
    def outputs(self) -> tuple[Output, ...]:
        return self.left.outputs

    @property
    def relations(self) -> tuple[Relation, ...]:
        """The stored relations either side reads (their inner views' too)."""
        out: dict[str, Relation] = {}
        for side in (self.left, self.right):
            for rel in base_relations(side):
                out.setdefault(rel.name, rel)
        return tuple(out.values())

    @property
    def subqueries(self) -> tuple:
        return ()

    @property
    def sides(self) -> tuple:
        return (self.left, self.right)

    def __str__(self) -> str:
        word = self.kind.upper() + (" ALL" if self.all else "")
        left = "  " + str(self.left).replace("\n", "\n  ")
        right = "  " + str(self.right).replace("\n", "\n  ")
        return f"{left}\n{word}\n{right}"


@dataclass(frozen=True)
class WindowFunction:
    """One window function computed over the rows of a `WindowQuery`'s
    input, by its columns (positions in the input's outputs)."""

    name: str  # the output column
    # row_number rank dense_rank percent_rank cume_dist ntile lag lead
    # first_value last_value count sum avg min max; quantile_cont
    # quantile_disc string_agg arg_max arg_min (the frame's values kept);
    # frame_first frame_last
    # (the `offset`-th row from a frame's start or end, `sliding` or the
    # row's peers when `running`; IGNORE NULLS: `ignore_nulls`)
    kind: str
    arg: int | None  # the argument's column (None: COUNT(*), rankings)
    partition: tuple[int, ...]
    # ORDER BY: (column, DESC, NULLS FIRST) per key
    order: tuple[tuple[int, bool, bool], ...]
    # aggregates: over the rows up to the row's last peer (RANGE) or the row
    # itself (ROWS); else over the whole partition
    running: bool = False
    rows_frame: bool = False
    # aggregates over a sliding ROWS frame: its first and last row's offsets
    # from the row (`ROWS BETWEEN 2 PRECEDING AND 1 FOLLOWING`: (-2, 1); the
    # first None for UNBOUNDED PRECEDING, the last for UNBOUNDED FOLLOWING)
    sliding: tuple[int | None, int | None] | None = None
    # aggregates over a RANGE frame between offsets of the one ORDER BY key:
    # each end None (CURRENT ROW) or (amount, unit, FOLLOWING), a number
    # (unit "") or whole days ("days")
    band: tuple | None = None
    offset: int = 1  # LAG/LEAD
    buckets: int = 0  # NTILE
    scale: int | None = None  # SUM/AVG: decimal digits summed exactly
    # the value depends on which of two tied rows comes first: the View
    # reads nothing while two rows of a partition tie (`GUARD_TIES`)
    guarded: bool = False
    # frame_first, frame_last: among the rows whose argument is not NULL
    ignore_nulls: bool = False
    # COUNT, SUM, AVG: of the frame's distinct values
    distinct: bool = False
    # quantile_cont, quantile_disc: q; string_agg: the separator; arg_max,
    # arg_min: the column compared
    param: float | str | None = None
    # LAG/LEAD with a DEFAULT: the output column is 1 where the shifted row
    # exists, NULL where not (the outer query picks the DEFAULT there)
    found: bool = False
    # ROW_NUMBER/RANK: the last place the query keeps (`rn <= n`); the view
    # outputs only the rows up to it
    cap: int | None = None

    def __str__(self) -> str:
        distinct = "DISTINCT " if self.distinct else ""
        parts = [
            (
                f"{self.kind}({distinct}#{self.arg})"
                if self.arg is not None
                else f"{self.kind}()"
            )
        ]
        if self.partition:
            parts.append("partition by " + ", ".join(f"#{c}" for c in self.partition))
        if self.order:
            keys = [
                f"#{c}" + (" DESC" if d else "") + (" NULLS FIRST" if n else "")
                for c, d, n in self.order
            ]
            parts.append("order by " + ", ".join(keys))
        if self.sliding is not None:
            first, last = self.sliding
            start = "unbounded" if first is None else "%+d" % first
            end = "unbounded" if last is None else "%+d" % last
            parts.append(f"rows {start} to {end}")
        if self.band is not None:
            ends = [
                (
                    "current row"
                    if end is None
                    else f"{end[0]}{' ' + end[1] if end[1] else ''} "
                    + ("following" if end[2] else "preceding")
                )
                for end in self.band
            ]
            parts.append("range " + " to ".join(ends))
        if self.ignore_nulls:
            parts.append("ignore nulls")
        if self.cap is not None:
            parts.append(f"output up to place {self.cap}")
        return " ".join(parts) + f" AS {self.name}"


@dataclass(frozen=True)
class WindowQuery:
    """The rows of `input` with window functions computed over them, as an
    inner view: each row's output is its columns and then its functions'
    values, maintained partition by partition (a partition's rows kept in
    its order) rather than rewritten into joins."""

    input: "Query | SetQuery"
    functions: tuple[WindowFunction, ...]
    sql: str = ""
    types: tuple[str, ...] = ()  # the output columns' types
    scales: tuple[int | None, ...] = ()

    @property
    def outputs(self) -> tuple[Output, ...]:
        extra = tuple(Output(f.name, Lit(None)) for f in self.functions)
        return tuple(self.input.outputs) + extra

    @property
    def relations(self) -> tuple[Relation, ...]:
        return tuple(base_relations(self.input))

    @property
    def subqueries(self) -> tuple:
        return ()

    @property
    def sides(self) -> tuple:
        return (self.input,)

    @property
    def guarded(self) -> bool:
        return any(f.guarded for f in self.functions)

    def __str__(self) -> str:
        lines = ["WINDOW over the rows of:"]
        lines += ["  " + line for line in str(self.input).splitlines()]
        lines += [f"  compute {f}" for f in self.functions]
        return "\n".join(lines)


def base_relations(query, outer: frozenset[str] = frozenset()) -> list[Relation]:
    """The stored relations a query reads, its inner views' included (the
    virtual relations their results are, not; nor, in an inner view, those
    of the views around it: a bag of a cyclic join inside a subquery reads
    its siblings, `outer`)."""
    virtual = outer | {name for name, _ in query.subqueries}
    out = [r for r in query.relations if r.name not in virtual]
    for _, sub in query.subqueries:
        inner = base_relations(sub, virtual)
        out += [r for r in inner if all(r.name != o.name for o in out)]
    return out
