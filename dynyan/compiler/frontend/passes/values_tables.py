"""VALUES in FROM -> a table of constant rows.

`FROM r JOIN (VALUES ('A', 1), ('B', 2)) AS t(code, rank) ON r.c = t.code`:
the VALUES list becomes a relation of its own (`__values1`, with the
columns the alias names, else col0, col1, … as DuckDB), whose rows the
generated View holds from the start (`Relation.rows`); an application cannot
update it (it is not among `View.RELATIONS`). The values must be constants
(numbers, strings, NULL, TRUE/FALSE, DATE and TIMESTAMP literals); a
column's type is theirs (INTEGER, DECIMAL with the most digits after the
point, DOUBLE for an exponent, VARCHAR, DATE, TIMESTAMP, BOOLEAN; a column
of NULLs only has none, as DuckDB's NULL type: it compares with any). Runs
first: a WITH or a view of VALUES is then a query of that table. `x IN
(VALUES …)` is the IN list of its rows.

>>> import sqlglot
>>> from dynyan.compiler.frontend.context import Context
>>> ctx = Context({})
>>> tree = sqlglot.parse_one(
...     "SELECT t.k FROM (VALUES (1, 'a'), (2, NULL)) AS t(k, name)", read="duckdb")
>>> print(values_tables(tree, ctx).sql("duckdb"))
SELECT t.k FROM __values1 AS t
>>> print(ctx.relations["__values1"], ctx.relations["__values1"].rows)
__values1(k int, name str) ((1, 'a'), (2, None))
"""

from __future__ import annotations

import datetime

from sqlglot import exp

from ...ir import Relation
from ..context import Context
from ..diagnostics import unsupported
from ..expressions import interval_parts, shift_date
from ..statements import TYPES
from ..types import parse_date, parse_timestamp


def values_tables(tree: exp.Expression, ctx: Context) -> exp.Expression:
    for view in ctx.views.values():  # CREATE VIEW bodies, inlined next
        _in_lists(view)
        _tables(view, ctx)
    _in_lists(tree)
    _series(tree, ctx)
    return _tables(tree, ctx)


def _in_lists(tree: exp.Expression) -> None:
    """`x IN (VALUES (1), (2))` and `(x, y) IN (VALUES (1, 'a'), …)` are the
    IN lists of those rows."""
    for node in list(tree.find_all(exp.In)):
        given = node.expressions
        if len(given) == 1 and isinstance(given[0], exp.Values):
            node.set(
                "expressions",
                [
                    (
                        row.expressions[0].copy()
                        if len(row.expressions) == 1
                        else row.copy()
                    )
                    for row in given[0].expressions
                ],
            )


def _tables(tree: exp.Expression, ctx: Context) -> exp.Expression:
    for values in list(tree.find_all(exp.Values)):
        holder = values.parent
        node = holder if isinstance(holder, exp.Subquery) else values
        if not isinstance(node.parent, (exp.From, exp.Join)):
            raise unsupported("VALUES is supported as a table in FROM", values)
        alias = node.args.get("alias") or values.args.get("alias")
        if alias is None or not alias.name:
            raise unsupported("VALUES in FROM needs an alias: AS t(a, b)", values)
        cells = [_row(t) for t in values.expressions]
        width = len(cells[0])
        if any(len(r) != width for r in cells):
            raise unsupported("the rows of VALUES differ in length", values)
        names = (
            [c.name.lower() for c in alias.columns]
            or _cte_names(node)
            or [f"col{i}" for i in range(width)]
        )
        if len(names) != width:
            raise unsupported(
                f"VALUES has {width} columns, its alias names {len(names)}", alias
            )
        types, scales = [], []
        for i in range(width):
            kind, scale = _column_type([r[i] for r in cells], values)
            types.append(kind)
            scales.append(scale)
        rows = [
            tuple(
                float(v) if t == "float" and v is not None else v
                for (v, _, _), t in zip(r, types)
            )
            for r in cells
        ]
        _hold(ctx, node, alias.name, names, types, scales, rows)
    return tree


def _hold(
    ctx: Context,
    node: exp.Expression,
    alias: str,
    columns: list,
    types: list,
    scales: list,
    rows: list,
) -> None:
    """`rows` as a constant table of the query, read as `alias` where
    `node` was."""
    name = f"__values{sum(n.startswith('__values') for n in ctx.relations) + 1}"
    ctx.relations[name] = Relation(
        name, tuple(columns), tuple(types), tuple(scales), rows=tuple(rows)
    )
    node.replace(
        exp.Table(
            this=exp.to_identifier(name),
            alias=exp.TableAlias(this=exp.to_identifier(alias)),
        )
    )


# Rows a constant table function may give: they are written into the module.
SERIES_ROWS = 100_000


def _series(tree: exp.Expression, ctx: Context) -> None:
    """generate_series, range and unnest of a constant list in FROM -> a
    constant table; a column named by the alias's column, else by the
    alias, else by the function, as DuckDB names it (`t.range` and `range`
    also read the column of `range(…) AS t`)."""
    for node in list(tree.find_all(exp.GenerateSeries, exp.Unnest)):
        holder = node.parent if isinstance(node.parent, exp.Table) else node
        if not isinstance(holder.parent, (exp.From, exp.Join)):
            continue  # in an expression: a LIST, refused where it is read
        if holder.args.get("ordinality") or node.args.get("offset"):
            raise unsupported("WITH ORDINALITY is not supported", node)
        if isinstance(node, exp.GenerateSeries):
            function = (
                "range" if node.args.get("is_end_exclusive") else "generate_series"
            )
            kind, values = _series_rows(node)
            scale = 0 if kind == "int" else None
        else:
            function = "unnest"
            kind, scale, values = _unnest_rows(node)
        alias = holder.args.get("alias")
        columns = [c.name.lower() for c in alias.columns] if alias else []
        name = alias.name if alias is not None and alias.name else function
        column = columns[0] if columns else name
        _hold(ctx, holder, name, [column], [kind], [scale], [(v,) for v in values])
        if column != function and not columns:
            _rename(tree, name, function, column)


def _rename(tree: exp.Expression, table: str, old: str, new: str) -> None:
    """`t.range` (and `range`) of `range(…) AS t`: its column, `t`."""
    for col in list(tree.find_all(exp.Column)):
        if col.name.lower() == old and col.table.lower() in ("", table.lower()):
            col.set("this", exp.to_identifier(new))


def _series_rows(node: exp.GenerateSeries) -> tuple[str, list]:
    for arg in ("start", "end", "step"):
        if node.args.get(arg) is not None and any(
            node.args[arg].find_all(exp.Column, exp.Select)
        ):
            raise unsupported(
                "a series' bounds and step are constants (a series per row is "
                "not supported)",
                node.args[arg],
            )
    start = _constant(node.args["start"])
    end = _constant(node.args["end"])
    step = node.args.get("step")
    exclusive = bool(node.args.get("is_end_exclusive"))
    kinds = {start[1], end[1]} - {None}
    if kinds <= {"int"}:
        amount, kind, _ = (1, "int", 0) if step is None else _constant(step)
        if kind not in ("int", None):
            raise unsupported("an INTEGER series takes an INTEGER step", step)
        if amount == 0:
            raise unsupported("a series' step cannot be 0", step)
        if None in (start[0], end[0], amount):
            return "int", []
        stop = end[0] + (0 if exclusive else (1 if amount > 0 else -1))
        if (stop - start[0]) // amount > SERIES_ROWS:
            raise _too_long(node)
        return "int", list(range(start[0], stop, amount))
    if not kinds <= {"date", "timestamp"} or step is None:
        raise unsupported(
            "a series is of INTEGERs, or of DATEs or TIMESTAMPs by an INTERVAL "
            "step, all constants",
            node,
        )
    sign, interval = (-1, step.this) if isinstance(step, exp.Neg) else (1, step)
    if not isinstance(interval, exp.Interval):
        raise unsupported("a series of DATEs or TIMESTAMPs steps by an INTERVAL", step)
    op, amount = interval_parts(interval)
    amount *= sign
    if amount == 0:
        raise unsupported("a series' step cannot be 0", step)
    first, last = (_as_timestamp(v) for v, _, _ in (start, end))
    values = []
    while first is not None and last is not None:
        if amount > 0 and (first > last or exclusive and first == last):
            break
        if amount < 0 and (first < last or exclusive and first == last):
            break
        if len(values) == SERIES_ROWS:
            raise _too_long(node)
        values.append(first)
        first = shift_date(first, op, amount)
    return "timestamp", values


def _as_timestamp(value):
    if value is None or isinstance(value, datetime.datetime):
        return value
    return datetime.datetime(value.year, value.month, value.day)


def _too_long(node: exp.Expression) -> Exception:
    return unsupported(
        f"a series of more than {SERIES_ROWS:,} rows is not supported (its rows "
        "are written into the module)",
        node,
    )


def _unnest_rows(node: exp.Unnest) -> tuple[str | None, int | None, list]:
    given = node.expressions
    if len(given) != 1 or not isinstance(given[0], exp.Array):
        raise unsupported(
            "UNNEST is supported of a list of constants in FROM, unnest([1, 2])",
            node,
        )
    cells = [_constant(v) for v in given[0].expressions]
    if len(cells) > SERIES_ROWS:
        raise _too_long(node)
    kind, scale = _column_type(cells, node)
    values = [float(v) if kind == "float" and v is not None else v for v, _, _ in cells]
    return kind, scale, values


def _cte_names(node: exp.Expression) -> list[str]:
    """`WITH t (a, b) AS (VALUES …)` (sqlglot reads `SELECT * FROM (VALUES
    …) AS _values`): the CTE's column names, and its `*` spelled out as
    them, so that the CTE's query names its columns."""
    select = node.parent.parent
    cte = select.parent
    if not (
        isinstance(cte, exp.CTE)
        and cte.args.get("alias") is not None
        and cte.args["alias"].columns
        and isinstance(select, exp.Select)
        and len(select.expressions) == 1
        and isinstance(select.expressions[0], exp.Star)
        and not select.args.get("joins")
    ):
        return []
    names = [c.name.lower() for c in cte.args["alias"].columns]
    select.set(
        "expressions", [exp.column(n, table=node.args["alias"].name) for n in names]
    )
    return names


def _row(item: exp.Expression) -> tuple:
    values = item.expressions if isinstance(item, exp.Tuple) else [item]
    return tuple(_constant(v) for v in values)


def _constant(node: exp.Expression):
    """A constant of VALUES as (Python value, type, digits after the point)."""
    if isinstance(node, exp.Paren):
        return _constant(node.this)
    if isinstance(node, exp.Null):
        return (None, None, None)
    if isinstance(node, exp.Boolean):
        return (bool(node.this), "bool", 0)
    if isinstance(node, exp.Neg):
        value, kind, scale = _constant(node.this)
        if kind in ("int", "float"):
            return (-value, kind, scale)
    if isinstance(node, exp.Literal):
        text = node.this
        if node.is_string:
            return (text, "str", None)
        if "e" in text.lower():
            return (float(text), "float", None)
        if "." in text:
            return (float(text), "float", len(text.split(".")[1]))
        return (int(text), "int", 0)
    if (
        isinstance(node, exp.Cast)
        and isinstance(node.this, exp.Literal)
        and node.this.is_string
    ):
        kind = TYPES.get(node.to.this.name)
        try:
            if kind == "date":
                return (parse_date(node.this.this), "date", None)
            if kind == "timestamp":
                return (parse_timestamp(node.this.this), "timestamp", None)
        except ValueError:
            raise unsupported(f"not a {kind} literal", node) from None
    raise unsupported(
        "VALUES holds constants only (numbers, strings, NULL, TRUE/FALSE, DATE "
        "and TIMESTAMP literals)",
        node,
    )


def _column_type(cells: list, node) -> tuple[str, int | None]:
    """One column's type and exact digits from its constants."""
    kinds = {kind for _, kind, _ in cells if kind is not None}
    if not kinds:  # NULLs only: no type, compared or combined with any
        return None, None
    if kinds <= {"int", "float"}:
        scales = [scale for _, kind, scale in cells if kind is not None]
        if "float" not in kinds:
            return "int", 0
        return "float", None if None in scales else max(scales)
    if len(kinds) > 1:
        raise unsupported(
            "a column of VALUES mixes types: " + ", ".join(sorted(kinds)), node
        )
    (kind,) = kinds
    return kind, 0 if kind == "bool" else None
