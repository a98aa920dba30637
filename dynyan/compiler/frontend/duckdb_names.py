"""The name DuckDB gives a result column that the query leaves unnamed.

DuckDB names `SELECT a + b, COUNT(*) FROM t` by its own printing of each
expression: `(a + b)` and `count_star()`; a View's COLUMNS say the same.
Only the forms whose printing is sure are named here (columns, literals,
arithmetic, comparisons, AND/OR/NOT, IS [NOT] NULL, [NOT] LIKE, IN lists,
BETWEEN, CAST, COALESCE and COUNT/SUM/AVG/MIN/MAX [FILTER]); any other item keeps
its own text (`upper(s)`): a function's printed name is the one the query
wrote, which the parser does not keep (`len(s)` and `length(s)` parse
alike).

>>> import sqlglot
>>> [duckdb_name(e) for e in sqlglot.parse_one(
...     "SELECT a + b * 2, COUNT(*), SUM(x) / COUNT(DISTINCT y), NOT a > 1, upper(s) FROM t",
...     read="duckdb").expressions]
['(a + (b * 2))', 'count_star()', '(sum(x) / count(DISTINCT y))', '(NOT (a > 1))', None]
"""

from __future__ import annotations

from sqlglot import exp

# binary operators as DuckDB prints them: `(left op right)`
_BINARY = {
    exp.Add: "+",
    exp.Sub: "-",
    exp.Mul: "*",
    exp.Div: "/",
    exp.IntDiv: "//",
    exp.Mod: "%",
    exp.DPipe: "||",
    exp.EQ: "=",
    exp.NEQ: "!=",
    exp.GT: ">",
    exp.GTE: ">=",
    exp.LT: "<",
    exp.LTE: "<=",
    exp.Like: "~~",
    exp.ILike: "~~*",
}
_AGGREGATES = {exp.Count: "count", exp.Sum: "sum", exp.Avg: "avg"}
_AGGREGATES |= {exp.Min: "min", exp.Max: "max"}
# types as DuckDB prints them in a CAST
_TYPES = {
    "INT": "INTEGER",
    "INTEGER": "INTEGER",
    "BIGINT": "BIGINT",
    "SMALLINT": "SMALLINT",
    "TINYINT": "TINYINT",
    "DOUBLE": "DOUBLE",
    "VARCHAR": "VARCHAR",
    "DATE": "DATE",
    "BOOLEAN": "BOOLEAN",
}


def duckdb_name(e: exp.Expression) -> str | None:
    """DuckDB's name of SELECT item `e` (no alias), or None where unsure."""
    if isinstance(e, exp.Column):
        return None if e.is_star else e.name
    return _printed(e)


def _printed(e: exp.Expression) -> str | None:
    """DuckDB's printing of expression `e`, or None."""
    while isinstance(e, exp.Paren):
        e = e.this
    if isinstance(e, exp.Column):
        return None if e.is_star else e.sql(dialect="duckdb")
    if isinstance(e, exp.Literal):
        return e.sql(dialect="duckdb")
    if isinstance(e, exp.Null):
        return "NULL"
    if isinstance(e, exp.Boolean):
        return "true" if e.this else "false"
    if e.args.get("negate"):  # NOT LIKE: !~~ (another negated form: unsure)
        if not isinstance(e, (exp.Like, exp.ILike)):
            return None
        return _parts("({} !" + _BINARY[type(e)] + " {})", e.this, e.expression)
    if type(e) in _BINARY:
        return _parts("({} " + _BINARY[type(e)] + " {})", e.this, e.expression)
    if isinstance(e, (exp.And, exp.Or)):  # one list: (a AND b AND c)
        printed = [_printed(x) for x in e.flatten()]
        if None in printed:
            return None
        return "(" + f" {e.key.upper()} ".join(printed) + ")"
    if isinstance(e, exp.Neg):
        if isinstance(e.this, exp.Literal) and e.this.is_number:
            return "-" + e.this.name
        return _parts("(-({}))", e.this)
    if isinstance(e, exp.Not):
        inner = e.this.this if isinstance(e.this, exp.Paren) else e.this
        if isinstance(inner, exp.Is):
            return _parts("({} IS NOT NULL)", inner.this) if _is_null(inner) else None
        return _parts("(NOT {})", e.this)
    if isinstance(e, exp.Is):
        return _parts("({} IS NULL)", e.this) if _is_null(e) else None
    if isinstance(e, exp.In) and not e.args.get("query") and e.expressions:
        items = [_printed(x) for x in e.expressions]
        this = _printed(e.this)
        if this is None or None in items:
            return None
        return f"({this} IN ({', '.join(items)}))"
    if isinstance(e, exp.Between):
        return _parts("({} BETWEEN {} AND {})", e.this, e.args["low"], e.args["high"])
    if isinstance(e, (exp.Cast, exp.TryCast)):
        return _cast(e)
    if isinstance(e, exp.Coalesce):
        return _call("COALESCE", [e.this, *e.expressions])
    if type(e) in _AGGREGATES:
        return _aggregate(e)
    if isinstance(e, exp.Filter) and type(e.this) in _AGGREGATES:
        return _parts("{} FILTER (WHERE {})", e.this, e.expression.this)
    return None


def _parts(template: str, *parts: exp.Expression) -> str | None:
    printed = [_printed(p) for p in parts]
    return None if None in printed else template.format(*printed)


def _call(name: str, args: list) -> str | None:
    printed = [_printed(a) for a in args]
    return None if None in printed else f"{name}({', '.join(printed)})"


def _is_null(e: exp.Is) -> bool:
    return isinstance(e.expression, exp.Null)


def _cast(e: exp.Cast) -> str | None:
    to = e.to
    name = _TYPES.get(to.this.name if isinstance(to.this, exp.DataType.Type) else "")
    if to.this == exp.DataType.Type.DECIMAL and len(to.expressions) == 2:
        p, s = (x.sql(dialect="duckdb") for x in to.expressions)
        name = f"DECIMAL({p}, {s})"
    if name is None or to.expressions and not name.startswith("DECIMAL"):
        return None
    keyword = "TRY_CAST" if isinstance(e, exp.TryCast) or e.args.get("safe") else "CAST"
    return _parts(keyword + "({} AS " + name + ")", e.this)


def _aggregate(e: exp.AggFunc) -> str | None:
    """COUNT(*) is count_star(); COUNT/SUM/AVG/MIN/MAX([DISTINCT] x)."""
    name, arg = _AGGREGATES[type(e)], e.this
    if isinstance(e, exp.Count) and (arg is None or isinstance(arg, exp.Star)):
        return "count_star()"
    if isinstance(arg, exp.Distinct):
        if len(arg.expressions) != 1:
            return None
        return _parts(name + "(DISTINCT {})", arg.expressions[0])
    return _parts(name + "({})", arg)
