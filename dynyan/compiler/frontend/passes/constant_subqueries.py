"""Subqueries without FROM are constants: `x IN (SELECT 1)` is `x IN (1)`,
`(SELECT 5)` is `5`, `EXISTS (SELECT 1)` is TRUE.

Only a SELECT of one constant item with no WHERE, GROUP BY, HAVING or
LIMIT is folded; anything else keeps its refusal. A derived table of one
such row (a CTE of parameters, `WITH p AS (SELECT 0.05 AS rate) SELECT
x * p.rate FROM r, p`) cross-joined with the query's other tables is
dropped and its columns become their constants.

>>> import sqlglot
>>> from dynyan.compiler.frontend.context import Context
>>> tree = sqlglot.parse_one(
...     "SELECT a FROM r WHERE a IN (SELECT 1) AND b > (SELECT 2)", read="duckdb"
... )
>>> print(constant_subqueries(tree, Context({})).sql("duckdb"))
SELECT a FROM r WHERE a IN (1) AND b > (2)
"""

from __future__ import annotations

from sqlglot import exp

from ..context import Context

_CLAUSES = ("where", "group", "having", "limit", "offset", "joins", "qualify")


def constant_subqueries(tree: exp.Expression, ctx: Context) -> exp.Expression:
    for select in list(tree.find_all(exp.Select)):
        _drop_constant_tables(select, ctx)
    for select in list(tree.find_all(exp.Select)):
        value = _constant(select)
        if value is None or select is tree:
            continue
        # the node that stands for the subquery: its Subquery wrapper, if any
        node = select.parent if isinstance(select.parent, exp.Subquery) else select
        holder = node.parent
        if isinstance(holder, exp.In) and holder.args.get("query") is node:
            holder.set("query", None)
            holder.set("expressions", [value])
        elif isinstance(holder, exp.Exists):
            holder.replace(exp.true())
        elif (
            node is not select
            and holder is not None
            and not isinstance(holder, (exp.From, exp.Join))
            and not node.alias
        ):
            node.replace(exp.Paren(this=value))
    return tree


def _constant(select: exp.Select):
    """The one constant item of a SELECT without FROM, else None."""
    if select.args.get("from_") or select.args.get("from"):
        return None
    if any(select.args.get(c) for c in _CLAUSES) or len(select.expressions) != 1:
        return None
    item = select.expressions[0]
    value = item.this if isinstance(item, exp.Alias) else item
    if value.find(exp.Column, exp.AggFunc, exp.Star, exp.Select):
        return None
    return value.copy()


def _constant_row(select: exp.Select) -> dict | None:
    """The columns of a SELECT without FROM of constant items, by name."""
    if select.args.get("from_") or select.args.get("from"):
        return None
    if any(select.args.get(c) for c in _CLAUSES) or select.args.get("distinct"):
        return None
    row = {}
    for item in select.expressions:
        value = item.this if isinstance(item, exp.Alias) else item
        if not item.alias_or_name or value.find(
            exp.Column, exp.AggFunc, exp.Star, exp.Select
        ):
            return None
        row[item.alias_or_name.lower()] = value
    return row


def _drop_constant_tables(select: exp.Select, ctx: Context) -> None:
    """Drop the derived tables of one constant row that `select` joins
    without a condition (a comma or CROSS JOIN), spelling out their
    columns: `p.rate`, or `rate` where no table has such a column."""
    key = "from_" if select.args.get("from_") is not None else "from"
    joins = list(select.args.get("joins") or [])
    if select.args.get(key) is None or not joins:
        return
    sources = [select.args[key]] + joins
    columns = {c.lower() for r in ctx.relations.values() for c in r.columns}
    for source in list(sources):
        sub = source.this
        if not (isinstance(sub, exp.Subquery) and isinstance(sub.this, exp.Select)):
            continue
        row = _constant_row(sub.this)
        alias = (sub.alias or "").lower()
        if row is None or not alias or len(sources) < 2:
            continue
        if isinstance(source, exp.Join) and (
            source.args.get("on") or source.args.get("using") or source.side
        ):
            continue
        if source is sources[0] and (
            sources[1].args.get("on") or sources[1].args.get("using") or sources[1].side
        ):
            continue

        def spell(node, row=row, alias=alias):
            if not isinstance(node, exp.Column) or node.name.lower() not in row:
                return node
            table = (node.table or "").lower()
            if table == alias or (not table and node.name.lower() not in columns):
                return exp.Paren(this=row[node.name.lower()].copy())
            return node

        for part in [*select.expressions, *[s for s in sources if s is not source]]:
            part.transform(spell, copy=False)
        for arg in ("where", "group", "having", "qualify", "order"):
            if select.args.get(arg) is not None:
                select.args[arg].transform(spell, copy=False)
        sources.remove(source)
        if source is select.args.get(key):
            first = sources[0]
            select.set(key, exp.From(this=first.this))
            sources[0] = select.args[key]
        select.set("joins", sources[1:] or None)
