"""PIVOT and UNPIVOT -> a grouped SELECT and a UNION ALL.

`FROM t PIVOT (SUM(x) [AS s], … FOR k IN ('a', 'b' [AS bee]))` is, as DuckDB
computes it, `t` grouped by every column it has besides `k` and those the
aggregates read, each aggregate once per value under `FILTER (WHERE k =
value)` (a COUNT 0, a SUM NULL where a group has no row of that value),
named by the value (`a`; `a_s` where the aggregate is named or there are
several; an aliased value by its alias). DuckDB's statement `PIVOT t ON k
IN (…) USING SUM(x) GROUP BY g` groups by `g` alone. Without an IN list
the columns would depend on the data, so it is refused.

`FROM t UNPIVOT [INCLUDE NULLS] (v FOR n IN (c1, c2))` (or `UNPIVOT t ON
c1, c2 INTO NAME n VALUE v`) is one SELECT per column, `SELECT <the other
columns>, 'c1' AS n, c1 AS v FROM t WHERE c1 IS NOT NULL`, under UNION ALL
(NULLs dropped unless INCLUDE NULLS, as DuckDB). Runs after `inline_views`:
a CTE read by PIVOT is a derived table whose columns are named.

>>> import sqlglot
>>> from dynyan.compiler.frontend.context import Context
>>> from dynyan.compiler.ir import Relation
>>> ctx = Context({"t": Relation("t", ("g", "k", "x"), ("int", "str", "int"))})
>>> tree = sqlglot.parse_one(
...     "SELECT * FROM t PIVOT (SUM(x) FOR k IN ('a', 'b'))", read="duckdb")
>>> print(pivots(tree, ctx).sql("duckdb"))
SELECT * FROM (SELECT g, SUM(x) FILTER(WHERE k = 'a') AS a, SUM(x) FILTER(WHERE k = 'b') AS b FROM t GROUP BY g) AS t
"""

from __future__ import annotations

from sqlglot import exp

from ..context import Context, output_names
from ..diagnostics import unsupported


def pivots(tree: exp.Expression, ctx: Context) -> exp.Expression:
    for node in list(tree.find_all(exp.Table, exp.Subquery)):
        found = node.args.get("pivots")
        if not found:
            continue
        if len(found) > 1:
            raise unsupported("one PIVOT or UNPIVOT per table is supported", found[1])
        (pivot,) = found
        source = node.copy()
        source.set("pivots", None)
        names = output_names(source, ctx.relations)
        if names is None:
            raise unsupported(
                "PIVOT and UNPIVOT need the columns of what they read (name a "
                "derived table's columns instead of *)",
                pivot,
            )
        alias = pivot.args.get("alias") or node.args.get("alias")
        if alias is None:
            alias = exp.TableAlias(this=exp.to_identifier(node.alias_or_name))
        build = _unpivot if pivot.args.get("unpivot") else _pivot
        node.replace(exp.Subquery(this=build(pivot, source, names), alias=alias))
    return tree


def statement(stmt: exp.Pivot) -> exp.Select:
    """DuckDB's PIVOT and UNPIVOT statements as `SELECT * FROM t PIVOT (…)`."""
    table = stmt.this.copy()
    if stmt.args.get("unpivot"):
        into = stmt.args.get("into")
        if into is None or len(into.expressions) != 1:
            raise unsupported(
                "UNPIVOT … ON columns INTO NAME n VALUE v is supported (one "
                "VALUE column)",
                stmt,
            )
        field = exp.In(
            this=exp.to_identifier(into.this.name),
            expressions=[c.copy() for c in stmt.expressions],
        )
        value = exp.to_identifier(into.expressions[0].name)
        pivot = exp.Pivot(expressions=[value], fields=[field], unpivot=True)
    else:
        using = stmt.args.get("using") or []
        if not using:
            raise unsupported("PIVOT … USING an aggregate is supported", stmt)
        pivot = exp.Pivot(
            expressions=[u.copy() for u in using],
            fields=[f.copy() for f in stmt.expressions],
            group=stmt.args["group"].copy() if stmt.args.get("group") else None,
        )
    table.set("pivots", [pivot])
    return exp.select("*").from_(table)


def _field(pivot: exp.Pivot) -> exp.In:
    fields = pivot.args.get("fields") or []
    if len(fields) != 1 or not isinstance(fields[0], exp.In):
        raise unsupported(
            "PIVOT and UNPIVOT are supported FOR one column IN a list of values "
            "(without one, the columns would depend on the data)",
            pivot,
        )
    return fields[0]


def _pivot(pivot: exp.Pivot, source: exp.Expression, names: list[str]):
    field = _field(pivot)
    key = field.this
    if not isinstance(key, exp.Column):
        raise unsupported("PIVOT … FOR a column IN (…) is supported", key)
    aggregates = list(pivot.expressions)
    if len(aggregates) > 1 and not all(isinstance(a, exp.Alias) for a in aggregates):
        raise unsupported(
            "a PIVOT of several aggregates needs a name for each (SUM(x) AS s)", pivot
        )
    read = {key.name.lower()} | {
        c.name.lower() for a in aggregates for c in a.find_all(exp.Column)
    }
    group = pivot.args.get("group")
    if group is not None:
        keys = [g.copy() for g in group.expressions]
    else:
        keys = [exp.column(n) for n in names if n.lower() not in read]
    items = list(keys)
    for value in field.expressions:
        label = _label(value)
        constant = value.this if isinstance(value, exp.PivotAlias) else value
        for agg in aggregates:
            body = agg.unalias() if isinstance(agg, exp.Alias) else agg
            if not isinstance(body, exp.AggFunc):
                raise unsupported("a PIVOT computes aggregates", agg)
            test = exp.EQ(this=key.copy(), expression=constant.copy())
            filtered = exp.Filter(this=body.copy(), expression=exp.Where(this=test))
            name = f"{label}_{agg.alias}" if isinstance(agg, exp.Alias) else label
            items.append(exp.alias_(filtered, name, quoted=not name.isidentifier()))
    select = exp.select(*items).from_(source)
    if keys:
        select = select.group_by(*[k.copy() for k in keys])
    return select


def _label(value: exp.Expression) -> str:
    """The column name of one PIVOT value: its alias, else its text."""
    if isinstance(value, exp.PivotAlias):
        return value.alias
    if isinstance(value, exp.Literal):
        return value.name
    if isinstance(value, exp.Boolean):
        return "true" if value.this else "false"
    raise unsupported(
        "PIVOT … IN a list of constants (strings, numbers, booleans) is supported",
        value,
    )


def _unpivot(pivot: exp.Pivot, source: exp.Expression, names: list[str]):
    field = _field(pivot)
    values = pivot.expressions
    columns = field.expressions
    if len(values) != 1 or not all(isinstance(c, exp.Column) for c in columns):
        raise unsupported(
            "UNPIVOT (v FOR n IN (c1, c2, …)) of plain columns into one value "
            "column is supported",
            pivot,
        )
    unpivoted = {c.name.lower() for c in columns}
    others = [exp.column(n) for n in names if n.lower() not in unpivoted]
    sides = []
    for column in columns:
        side = exp.select(
            *[o.copy() for o in others],
            exp.alias_(exp.Literal.string(column.name), field.this.name),
            exp.alias_(exp.column(column.name), values[0].name),
        ).from_(source.copy())
        if not pivot.args.get("include_nulls"):
            side = side.where(exp.column(column.name).is_(exp.null()).not_())
        sides.append(side)
    union = sides[0]
    for side in sides[1:]:
        union = exp.union(union, side, distinct=False)
    return union
