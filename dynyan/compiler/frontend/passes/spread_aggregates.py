"""VARIANCE and STDDEV as arithmetic over SUM and COUNT.

A view maintains SUM and COUNT under inserts and deletes; the spread of a
group follows from three of them: with n = COUNT(x), s = SUM(x) and
q = SUM(x * x), the population variance is (q - s * s / n) / n and the
sample variance (q - s * s / n) / (n - 1). So

- `VAR_POP(x)` is `CASE WHEN COUNT(x) > 0 THEN GREATEST((q - s * s / n) / n, 0.0) END`,
- `VAR_SAMP(x)` (`VARIANCE`) likewise over `n - 1`, NULL below two values,
- `STDDEV_POP(x)` and `STDDEV_SAMP(x)` (`STDDEV`) are their `SQRT`.

GREATEST keeps a float residue of an all-equal group from going below
zero. Over DECIMAL and INTEGER arguments q and s are exact; over DOUBLE the
formula loses digits when the spread is tiny against the mean (DuckDB uses
Welford's update, which a view cannot reverse on delete).

>>> import sqlglot
>>> from dynyan.compiler.frontend.context import Context
>>> tree = sqlglot.parse_one("SELECT STDDEV_SAMP(x) AS sd FROM t", read="duckdb")
>>> print(spread_aggregates(tree, Context({})).sql())
SELECT SQRT(CASE WHEN COUNT(x) > 1 THEN GREATEST((SUM(x * x) - SUM(x) * SUM(x) / COUNT(x)) / (COUNT(x) - 1), 0.0) END) AS sd FROM t
"""

from __future__ import annotations

from sqlglot import exp

from ..context import Context
from ..diagnostics import unsupported

# aggregate -> (sample variance?, square root?)
_SPREADS = {
    exp.Variance: (True, False),
    exp.VariancePop: (False, False),
    exp.Stddev: (True, True),
    exp.StddevSamp: (True, True),
    exp.StddevPop: (False, True),
}


def spread_aggregates(tree: exp.Expression, ctx: Context) -> exp.Expression:
    for node in list(tree.find_all(*_SPREADS)):
        if isinstance(node.this, exp.Distinct):
            raise unsupported("only COUNT, SUM, AVG and STRING_AGG take DISTINCT", node)
        sample, root = _SPREADS[type(node)]
        node.replace(_spread(node.this, sample, root))
    return tree


def _spread(x: exp.Expression, sample: bool, root: bool) -> exp.Expression:
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
