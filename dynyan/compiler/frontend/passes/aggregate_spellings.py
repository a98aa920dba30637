"""Other spellings of aggregation -> the plain forms.

- `AGG(x) FILTER (WHERE c)` -> `AGG(CASE WHEN c THEN x END)` (`COUNT(*)`
  counts `CASE WHEN c THEN 1 END`): the aggregates skip NULL, so only the
  rows where `c` holds count, as SQL defines FILTER.
- DuckDB's aggregates composed of others: `FSUM`/`KAHAN_SUM`/`FAVG` ->
  SUM/AVG of DOUBLEs, `SEM(x)` -> `STDDEV_POP(x) / SQRT(COUNT(x))`,
  `GEOMEAN(x)` -> `EXP(AVG(LN(x)))`, `WEIGHTED_AVG(x, w)` ->
  `SUM(x * w) / SUM(w)` over rows with both (`_composed`).
- `BOOL_AND(c)` (also `EVERY(c)`), `BOOL_OR(c)` -> `MIN(c)`, `MAX(c)`
  (false sorts before true); `COUNT_IF(c)` -> `SUM(CAST(c AS INTEGER))` (DuckDB's: NULL where
  no condition is true or false).
- `PERCENTILE_CONT(q) WITHIN GROUP (ORDER BY x)` (and _DISC) ->
  `QUANTILE_CONT(x, q)`; DuckDB's `QUANTILE(x, q)` -> `QUANTILE_DISC(x, q)`
  (APPROX_QUANTILE, an estimate, is refused).
- `MIN(DISTINCT x)`, `MAX(DISTINCT x)` -> `MIN(x)`, `MAX(x)`: the
  smallest value is the smallest of the distinct values.
- `GROUP BY ALL` (DuckDB) -> GROUP BY every SELECT item without an
  aggregate (none: one global group).
- `SUM(x ORDER BY y)` (and COUNT, AVG, MIN, MAX, BOOL_AND, BOOL_OR,
  COUNT_IF) -> `SUM(x)`: their value does not depend on the order.

>>> import sqlglot
>>> from dynyan.compiler.frontend.context import Context
>>> tree = sqlglot.parse_one(
...     "SELECT k, COUNT(*) FILTER (WHERE v > 0) AS n FROM t GROUP BY ALL",
...     read="duckdb")
>>> print(aggregate_spellings(tree, Context({})).sql("duckdb"))
SELECT k, COUNT(CASE WHEN v > 0 THEN 1 END) AS n FROM t GROUP BY k
"""

from __future__ import annotations

from sqlglot import exp

from ..context import Context
from ..diagnostics import unsupported
from .name_outputs import named

# aggregates spelled as others: class -> a function of the argument
_RESPELLED = {
    exp.LogicalAnd: lambda c: exp.Min(this=c),
    exp.LogicalOr: lambda c: exp.Max(this=c),
    # DuckDB's COUNT_IF: NULL where no row's condition is true or false
    exp.CountIf: lambda c: exp.Sum(this=exp.cast(c, exp.DataType.Type.INT)),
}
_SPELLINGS = (exp.Filter, exp.WithinGroup, exp.Quantile, *_RESPELLED)
# aggregates whose value is the same in any order of their rows
_UNORDERED = (exp.Sum, exp.Count, exp.Avg, exp.Min, exp.Max, *_RESPELLED)


# DuckDB's aggregates that are others over their arguments: name -> arity
_COMPOSED = {
    **dict.fromkeys(("EVERY", "FSUM", "KAHAN_SUM", "SUMKAHAN", "FAVG"), 1),
    **dict.fromkeys(("SEM", "GEOMEAN", "GEOMETRIC_MEAN"), 1),
    **dict.fromkeys(("WEIGHTED_AVG", "WAVG"), 2),
}


def aggregate_spellings(tree: exp.Expression, ctx: Context) -> exp.Expression:
    for node in tree.find_all(exp.ArrayAgg):  # its value is a result column only
        if isinstance(node.find_ancestor(exp.Window, exp.Select), exp.Window):
            raise unsupported("ARRAY_AGG/LIST over a window is not supported", node)
    for node in list(tree.find_all(exp.Anonymous)):
        name = node.name.upper()
        if _COMPOSED.get(name) == len(node.expressions):
            select = node.parent_select
            if select is not None:
                select.set("expressions", [named(e) for e in select.expressions])
            node.replace(_composed(name, node))
    ordered = [
        node for node in tree.find_all(*_UNORDERED) if isinstance(node.this, exp.Order)
    ]
    inside = {id(node) for node in ordered}

    def respelled(e: exp.Expression) -> bool:
        return e.find(*_SPELLINGS) is not None or any(
            id(a) in inside for a in e.find_all(*_UNORDERED)
        )

    for select in tree.find_all(exp.Select):  # items keep the names as written
        if any(respelled(e) for e in select.expressions):
            select.set(
                "expressions",
                [named(e) if respelled(e) else e for e in select.expressions],
            )
    for node in ordered:
        node.set("this", node.this.this.copy())
    for node in list(tree.find_all(*_RESPELLED)):
        node.replace(_RESPELLED[type(node)](node.this.copy()))
    for node in list(tree.find_all(exp.Min, exp.Max)):
        arg = node.this
        if isinstance(arg, exp.Distinct) and len(arg.expressions) == 1:
            node.set("this", arg.expressions[0].copy())
    for node in list(tree.find_all(exp.Filter)):
        node.replace(_filtered(node))
    for node in list(tree.find_all(exp.Quantile)):
        if isinstance(node, exp.ApproxQuantile):
            raise unsupported(
                "APPROX_QUANTILE is not supported: DuckDB's is an estimate (a "
                "t-digest) that a view cannot reproduce; QUANTILE_CONT(x, q) "
                "and QUANTILE_DISC(x, q) are exact",
                node,
            )
        q = node.args.get("quantile")
        node.replace(exp.PercentileDisc(this=node.this.copy(), expression=q.copy()))
    for node in list(tree.find_all(exp.WithinGroup)):
        node.replace(_within_group(node))
    for select in tree.find_all(exp.Select):
        group = select.args.get("group")
        if group is not None and group.args.get("all"):
            keys = [
                e.unalias().copy()
                for e in select.expressions
                if e.find(exp.AggFunc) is None and not isinstance(e, exp.Star)
            ]
            select.set("group", exp.Group(expressions=keys) if keys else None)
    return tree


# FSUM and the like: a plain aggregate of the values as DOUBLEs
_OF_DOUBLES = {
    "FSUM": exp.Sum,
    "KAHAN_SUM": exp.Sum,
    "SUMKAHAN": exp.Sum,
    "FAVG": exp.Avg,
}


def _composed(name: str, node: exp.Anonymous) -> exp.Expression:
    """EVERY(c): BOOL_AND(c). FSUM, KAHAN_SUM (SUMKAHAN), FAVG: SUM and AVG
    of the values as DOUBLEs (DuckDB's compensated sums; a SUM here is
    exact, then rounded). SEM(x): STDDEV_POP(x) / SQRT(COUNT(x)).
    GEOMEAN(x): EXP(AVG(LN(x))), as DuckDB computes it. WEIGHTED_AVG(x, w):
    SUM(x * w) / SUM(w) over the rows where neither is NULL."""
    x = node.expressions[0]
    double = exp.cast(x.copy(), exp.DataType.Type.DOUBLE)
    if name == "EVERY":
        return exp.LogicalAnd(this=x.copy())
    if name in _OF_DOUBLES:
        return _OF_DOUBLES[name](this=double)
    if isinstance(node.parent, exp.Window):
        raise unsupported(f"{node.name} over a window is not supported", node)
    if name == "SEM":
        count = exp.Count(this=x.copy())
        return exp.Div(
            this=exp.StddevPop(this=x.copy()), expression=exp.Sqrt(this=count)
        )
    if name in ("GEOMEAN", "GEOMETRIC_MEAN"):
        return exp.Exp(this=exp.Avg(this=exp.Ln(this=double)))
    weight = node.expressions[1]
    present = exp.Not(this=exp.Is(this=x.copy(), expression=exp.Null()))
    return exp.Div(
        this=exp.Sum(this=exp.Mul(this=double, expression=weight.copy())),
        expression=exp.Sum(this=_when(present, weight)),
    )


def _filtered(node: exp.Filter) -> exp.Expression:
    agg, condition = node.this, node.expression.this
    if not isinstance(agg, exp.AggFunc):
        raise unsupported("FILTER is supported on aggregates", node)
    agg = agg.copy()
    arg = agg.this
    whole = (
        isinstance(agg, (exp.First, exp.Last, exp.ArrayAgg))
        and isinstance(arg, exp.Order)
    ) or (isinstance(arg, exp.Distinct) and isinstance(arg.expressions[0], exp.Tuple))
    if whole and isinstance(node.parent, exp.Window):
        raise unsupported(
            f"{agg.sql_name()} … FILTER (WHERE …) over a window is not supported", node
        )
    if whole:  # its value is never NULL: the row is left out (`Grouping`)
        agg.set("where", condition.copy())
    elif isinstance(arg, exp.Order):  # STRING_AGG(x ORDER BY …): x filtered
        value = (
            arg.this.expressions[0] if isinstance(arg.this, exp.Distinct) else arg.this
        )
        for key in arg.expressions:  # ordered by x: by the filtered x, still x
            if key.this == value:
                key.set("this", _when(condition, value))
        holder = arg.this if isinstance(arg.this, exp.Distinct) else arg
        if holder is arg:
            arg.set("this", _when(condition, value))
        else:
            holder.set("expressions", [_when(condition, value)])
    elif isinstance(arg, exp.Distinct):
        (inner,) = arg.expressions
        arg.set("expressions", [_when(condition, inner)])
    elif arg is None or isinstance(arg, exp.Star):
        agg.set("this", _when(condition, exp.Literal.number(1)))
    else:
        agg.set("this", _when(condition, arg))
    return agg


def _when(condition: exp.Expression, value: exp.Expression) -> exp.Case:
    return exp.Case(ifs=[exp.If(this=condition.copy(), true=value.copy())])


def _within_group(node: exp.WithinGroup) -> exp.Expression:
    """`PERCENTILE_CONT(q) WITHIN GROUP (ORDER BY x)` -> `QUANTILE_CONT(x, q)`."""
    func, order = node.this, node.expression
    keys = order.expressions if isinstance(order, exp.Order) else []
    if not isinstance(func, (exp.PercentileCont, exp.PercentileDisc)):
        raise unsupported(f"{func.sql_name()} WITHIN GROUP is not supported", node)
    if len(keys) != 1 or keys[0].args.get("desc"):
        raise unsupported(
            "WITHIN GROUP takes one ascending ORDER BY key here (for DESC, "
            "use 1 - q)",
            node,
        )
    return type(func)(this=keys[0].this.copy(), expression=func.this.copy())
