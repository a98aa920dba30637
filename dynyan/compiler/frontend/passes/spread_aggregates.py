"""VARIANCE, STDDEV, COVAR, CORR, REGR_*, SKEWNESS and KURTOSIS as
arithmetic over SUM and COUNT.

A view maintains SUM and COUNT under inserts and deletes; the spread of a
group follows from three of them: with n = COUNT(x), s = SUM(x) and
q = SUM(x * x), the population variance is (q - s * s / n) / n and the
sample variance (q - s * s / n) / (n - 1). So

- `VAR_POP(x)` is `CASE WHEN COUNT(x) > 0 THEN GREATEST((q - s * s / n) / n, 0.0) END`,
- `VAR_SAMP(x)` (`VARIANCE`) likewise over `n - 1`, NULL below two values,
- `STDDEV_POP(x)` and `STDDEV_SAMP(x)` (`STDDEV`) are their `SQRT`.

GREATEST keeps a float residue of an all-equal group from going below
zero. Over DOUBLE the formula loses digits when the spread is tiny against
the mean (DuckDB uses Welford's update, which a view cannot reverse on
delete). Over a column of a declared table that holds s exact decimal
digits (INTEGER: 0, DECIMAL(p, s)) the sums are of its scaled integers
X = x * 10^s, and n * SUM(X * X) - SUM(X)² is exact, divided once by
n² * 10^(2s) (n (n - 1) 10^(2s)): a group of equal values has the
variance 0, as DuckDB gives it, not a rounding residue (STDDEV_POP of
six 2.49 had been 2.7e-08).

The aggregates of two arguments (`CORR(y, x)`, `COVAR_POP`, `COVAR_SAMP`,
`REGR_SLOPE(y, x)`, `REGR_INTERCEPT`, `REGR_R2`, `REGR_COUNT`, `REGR_AVGX`,
`REGR_AVGY`, `REGR_SXX`, `REGR_SYY`, `REGR_SXY`) read the rows where both are
non-NULL: over x' = `CASE WHEN y IS NOT NULL THEN x END` and y' likewise, with
n = COUNT(x'), the sums of x', y', x'x', y'y', x'y', and the scaled co-moments
dx = n SUM(x'x') - SUM(x')², dy likewise, dxy = n SUM(x'y') - SUM(x') SUM(y')
(where both are columns of declared tables holding exact digits, INTEGER
or DECIMAL, the sums are of their scaled integers and each co-moment is
exact, divided once by its unit; otherwise in floats, and a co-moment of
values that do not vary may keep a rounding residue), each is a CASE over
them with DuckDB's edge cases: NULL
over no pair; CORR and REGR_SLOPE NaN where x (for CORR also y) does not
vary, REGR_INTERCEPT and REGR_R2 NULL there, REGR_R2 1 where only y does
not vary. Whether a value varies is MIN(x') = MAX(x'), exact where the
co-moment is not (a quotient by its residue is noise: REGR_SLOPE 1.0 for
NaN over one row of a DECIMAL).

>>> import sqlglot
>>> from dynyan.compiler.frontend.context import Context
>>> tree = sqlglot.parse_one("SELECT STDDEV_SAMP(x) AS sd FROM t", read="duckdb")
>>> print(spread_aggregates(tree, Context({})).sql())
SELECT SQRT(CASE WHEN COUNT(x) > 1 THEN GREATEST((SUM(x * x) - SUM(x) * SUM(x) / COUNT(x)) / (COUNT(x) - 1), 0.0) END) AS sd FROM t
"""

from __future__ import annotations

import re

import sqlglot
from sqlglot import exp

from ..context import Context, declared_digits
from ..diagnostics import DIALECT, ONLY_DISTINCT, unsupported

# aggregate -> (sample variance?, square root?)
_SPREADS = {
    exp.Variance: (True, False),
    exp.VariancePop: (False, False),
    exp.Stddev: (True, True),
    exp.StddevSamp: (True, True),
    exp.StddevPop: (False, True),
}


# aggregate of (y, x) -> its value over n, sx, sy, sxx, syy, sxy, dx, dy, dxy
# (NaN is SQRT(-1.0), as in DuckDB)
_PAIRED = {
    exp.CovarPop: "CASE WHEN n > 0 THEN CAST(dxy AS DOUBLE) / (n * n) END",
    exp.CovarSamp: "CASE WHEN n > 1 THEN CAST(dxy AS DOUBLE) / (n * (n - 1)) END",
    exp.Corr: "CASE WHEN n > 0 THEN CASE WHEN fx OR fy THEN"
    " SQRT(-1.0) ELSE CAST(dxy AS DOUBLE) / SQRT(CAST(dx AS DOUBLE))"
    " / SQRT(CAST(dy AS DOUBLE)) END END",
    exp.RegrSlope: "CASE WHEN n > 0 THEN CASE WHEN fx THEN"
    " SQRT(-1.0) ELSE CAST(dxy AS DOUBLE) / dx END END",
    exp.RegrIntercept: "CASE WHEN n > 0 AND NOT fx THEN CAST(sy AS DOUBLE) / n"
    " - CAST(dxy AS DOUBLE) / dx * (CAST(sx AS DOUBLE) / n) END",
    exp.RegrR2: "CASE WHEN n > 0 AND NOT fx THEN CASE WHEN fy THEN 1.0"
    " ELSE CAST(dxy AS DOUBLE) / dx * (CAST(dxy AS DOUBLE) / dy) END END",
    exp.RegrCount: "n",
    exp.RegrAvgx: "CASE WHEN n > 0 THEN CAST(sx AS DOUBLE) / n END",
    exp.RegrAvgy: "CASE WHEN n > 0 THEN CAST(sy AS DOUBLE) / n END",
    exp.RegrSxx: "CASE WHEN n > 0 THEN GREATEST(CAST(dx AS DOUBLE) / n, 0.0) END",
    exp.RegrSyy: "CASE WHEN n > 0 THEN GREATEST(CAST(dy AS DOUBLE) / n, 0.0) END",
    exp.RegrSxy: "CASE WHEN n > 0 THEN CAST(dxy AS DOUBLE) / n END",
}
# the co-moments, as the names of _PAIRED read them
_MOMENTS = {
    "dx": "(n * sxx - sx * sx)",
    "dy": "(n * syy - sy * sy)",
    "dxy": "(n * sxy - sx * sy)",
    # x (y) does not vary: its co-moment is 0, which the sums give only up
    # to a rounding residue once a DECIMAL's scaled sums are divided back
    # to floats (DOUBLE's always), and a quotient by it is then noise
    "fx": "(minx = maxx)",
    "fy": "(miny = maxy)",
}


# SKEWNESS, KURTOSIS (sample, excess) and KURTOSIS_POP over n = COUNT(x),
# s1..s4 = SUM(x), …, SUM(x^4) as DuckDB defines them: with b = n^2 m2,
# a = n^3 m3 and c = n^4 m4 (m2..m4 the central moments), m3 / m2^1.5 is
# a / b^1.5 and m4 / m2^2 is c / b^2, whatever unit x is scaled by; NULL
# where x does not vary (MIN = MAX: exact, where b may keep a residue)
_SHAPES = {
    "skewness": "CASE WHEN n > 2 AND NOT fx THEN SQRT(CAST(n * (n - 1) AS DOUBLE))"
    " / (n - 2) * (CAST(a AS DOUBLE) / (CAST(b AS DOUBLE) * SQRT(CAST(b AS DOUBLE))))"
    " END",
    "kurtosis": "CASE WHEN n > 3 AND NOT fx THEN (n - 1) * ((n + 1) * (CAST(c AS DOUBLE)"
    " / (CAST(b AS DOUBLE) * b)) - 3 * (n - 1)) / ((n - 2) * (n - 3)) END",
    "kurtosis_pop": "CASE WHEN n > 0 AND NOT fx THEN CAST(c AS DOUBLE)"
    " / (CAST(b AS DOUBLE) * b) - 3 END",
}
_SHAPE_MOMENTS = {
    "a": "(n * n * s3 - 3 * n * s2 * s1 + 2 * s1 * s1 * s1)",
    "b": "(n * s2 - s1 * s1)",
    "c": "(n * n * n * s4 - 4 * n * n * s3 * s1 + 6 * n * s2 * s1 * s1"
    " - 3 * s1 * s1 * s1 * s1)",
    "fx": "(minx = maxx)",
}


# over scaled integers (x * 10^a, y * 10^b): each co-moment exact, then
# divided once by its unit
_EXACT_MOMENTS = {
    "dx": "((n * sxx - sx * sx) / ux)",
    "dy": "((n * syy - sy * sy) / uy)",
    "dxy": "((n * sxy - sx * sy) / uxy)",
}


def spread_aggregates(tree: exp.Expression, ctx: Context) -> exp.Expression:
    shapes = [
        node
        for node in tree.find_all(exp.Skewness, exp.Kurtosis, exp.Anonymous)
        if _shape_name(node) in _SHAPES
    ]
    for node in list(tree.find_all(*_SPREADS, *_PAIRED)) + shapes:
        if isinstance(node.this, exp.Distinct):
            raise unsupported(ONLY_DISTINCT, node)
        select = node.find_ancestor(exp.Select)
        name = _shape_name(node)
        if name in _SHAPES:
            x = node.expressions[0] if isinstance(node, exp.Anonymous) else node.this
            scale = declared_digits(x, select, ctx.relations)
            value = _shape(name, x, scale)
        elif type(node) in _PAIRED:
            digits = (
                declared_digits(node.this, select, ctx.relations),
                declared_digits(node.expression, select, ctx.relations),
            )
            value = _paired(type(node), node.this, node.expression, digits)
        else:
            scale = declared_digits(node.this, select, ctx.relations)
            value = _spread(node.this, *_SPREADS[type(node)], scale)
        window = node.parent
        if isinstance(window, exp.Window) and window.this is node:
            # AGG(x) OVER (w): each SUM, COUNT, MIN and MAX of its
            # arithmetic over w
            for part in list(value.find_all(exp.Count, exp.Sum, exp.Min, exp.Max)):
                if part.find_ancestor(exp.AggFunc) is None:
                    over = window.copy()
                    over.set("this", part.copy())
                    part.replace(over)
            node = window
        if isinstance(node.parent, exp.Select):  # an item: named as written
            value = exp.alias_(value, node.sql(dialect=DIALECT), quoted=True)
        node.replace(value)
    return tree


def _shape_name(node: exp.Expression) -> str:
    """The lower-case name of SKEWNESS, KURTOSIS or KURTOSIS_POP (sqlglot
    knows the first two)."""
    if isinstance(node, exp.Anonymous):
        return node.name.lower()
    return node.sql_name().lower()


def _shape(name: str, x: exp.Expression, scale: int | None) -> exp.Expression:
    """SKEWNESS/KURTOSIS/KURTOSIS_POP of x from its power sums (`_SHAPES`),
    of its scaled integers where x holds `scale` exact digits (each moment
    then exact, the quotient rounded once)."""
    if scale is not None:
        x = _scaled(x, scale)
    power = x.copy()
    sums = {"n": exp.Count(this=x.copy()), "s1": exp.Sum(this=x.copy())}
    for k in (2, 3, 4):
        power = exp.Mul(this=power, expression=x.copy())
        sums[f"s{k}"] = exp.Sum(this=power.copy())
    sums.update(minx=exp.Min(this=x.copy()), maxx=exp.Max(this=x.copy()))
    text = _SHAPES[name]
    for moment, body in _SHAPE_MOMENTS.items():
        text = re.sub(rf"\b{moment}\b", body, text)
    return exp.Paren(this=_filled(text, sums))


def _paired(
    kind: type, y: exp.Expression, x: exp.Expression, digits=(None, None)
) -> exp.Expression:
    """An aggregate of the pairs (y, x) where both are non-NULL (`digits`:
    the exact digits of y and x, `declared_digits`; where both are known the
    sums are of their scaled integers and the co-moments exact)."""
    ydigits, xdigits = digits
    exact = xdigits is not None and ydigits is not None
    units = {}
    if exact:
        x, y = _scaled(x, xdigits), _scaled(y, ydigits)
        units = {
            "usx": 10**xdigits,
            "usy": 10**ydigits,
            "ux": 10 ** (2 * xdigits),
            "uy": 10 ** (2 * ydigits),
            "uxy": 10 ** (xdigits + ydigits),
        }
    xp = exp.Case(ifs=[exp.If(this=y.copy().is_(exp.null()).not_(), true=x.copy())])
    yp = exp.Case(ifs=[exp.If(this=x.copy().is_(exp.null()).not_(), true=y.copy())])
    parts = {
        "n": exp.Count(this=xp.copy()),
        "sx": exp.Sum(this=xp.copy()),
        "sy": exp.Sum(this=yp.copy()),
        "sxx": exp.Sum(this=exp.Mul(this=xp.copy(), expression=xp.copy())),
        "syy": exp.Sum(this=exp.Mul(this=yp.copy(), expression=yp.copy())),
        "sxy": exp.Sum(this=exp.Mul(this=xp.copy(), expression=yp.copy())),
        "minx": exp.Min(this=xp.copy()),
        "maxx": exp.Max(this=xp.copy()),
        "miny": exp.Min(this=yp.copy()),
        "maxy": exp.Max(this=yp.copy()),
    }
    text = _PAIRED[kind]
    moments = _MOMENTS
    if exact:  # the sums scaled back where read alone, the co-moments once
        text = re.sub(r"\bsx\b", "(sx / usx)", text)
        text = re.sub(r"\bsy\b", "(sy / usy)", text)
        moments = {**_MOMENTS, **_EXACT_MOMENTS}
        parts.update((u, exp.Literal.number(v)) for u, v in units.items())
    for name, moment in moments.items():
        text = re.sub(rf"\b{name}\b", moment, text)
    return exp.Paren(this=_filled(text, parts))


def _filled(text: str, parts: dict) -> exp.Expression:
    """SQL `text` with each of its bare names replaced by that part (the
    whole of it too: `n` alone is REGR_COUNT)."""
    value = exp.Paren(this=sqlglot.parse_one(text, read=DIALECT))
    for column in list(value.find_all(exp.Column)):
        column.replace(parts[column.name].copy())
    return value.this


def _scaled(x: exp.Expression, digits: int) -> exp.Expression:
    """A column holding `digits` exact decimal digits as the integer
    x * 10^digits (itself where it is an INTEGER)."""
    if not digits:
        return x.copy()
    unit = exp.Literal.number(10**digits)
    scaled = exp.Round(this=exp.Mul(this=x.copy(), expression=unit))
    return exp.Cast(this=scaled, to=exp.DataType.build("BIGINT"))


def _exact_spread(x: exp.Expression, sample: bool, scale: int) -> exp.Expression:
    """VAR_POP/VAR_SAMP of a column holding `scale` exact digits, over its
    scaled integers (see the module's docstring)."""
    x = _scaled(x, scale)
    text = (
        "CASE WHEN n > 1 THEN (n * qq - ss * ss) / (n * (n - 1) * u) END"
        if sample
        else "CASE WHEN n > 0 THEN (n * qq - ss * ss) / (n * n * u) END"
    )
    parts = {
        "n": exp.Count(this=x.copy()),
        "ss": exp.Sum(this=x.copy()),
        "qq": exp.Sum(this=exp.Mul(this=x.copy(), expression=x.copy())),
        "u": exp.Literal.number(10 ** (2 * scale)),
    }
    return _filled(text, parts)


def _spread(
    x: exp.Expression, sample: bool, root: bool, scale: int | None = None
) -> exp.Expression:
    if scale is not None:
        value = _exact_spread(x, sample, scale)
        return exp.Sqrt(this=value) if root else value
    n = exp.Count(this=x.copy())
    s = exp.Sum(this=x.copy())
    q = exp.Sum(this=exp.Mul(this=x.copy(), expression=x.copy()))
    spread = exp.Sub(
        this=q,
        expression=exp.Div(this=exp.Mul(this=s, expression=s.copy()), expression=n),
    )
    divisor = exp.Paren(this=exp.Sub(this=n.copy(), expression=exp.Literal.number(1)))
    variance = exp.Greatest(
        this=exp.Div(
            this=exp.Paren(this=spread), expression=divisor if sample else n.copy()
        ),
        expressions=[exp.Literal.number("0.0")],
    )
    least = exp.Literal.number(1 if sample else 0)
    value = exp.Case(
        ifs=[exp.If(this=exp.GT(this=n.copy(), expression=least), true=variance)]
    )
    return exp.Sqrt(this=value) if root else value
