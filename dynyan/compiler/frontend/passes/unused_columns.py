"""A windowed derived table's SELECT items nothing outside reads -> dropped.

`SELECT k, ts FROM (SELECT t.*, ROW_NUMBER() OVER (PARTITION BY k ORDER BY
ts DESC) AS n FROM t) AS x WHERE n = 1` (the latest row per key, as people
write it) reads three of the derived table's columns. Kept whole, the
derived table makes the windows' view store every column of `t`, and two
rows that tie on the order but differ in a column nobody reads count as a
tie that leaves the result open, where SQL's result is determined (either
row gives the same output). Dropping an item leaves the derived table's
rows as they were, projected (one output row per row, as no DISTINCT is
taken).

An item stays where its name may be read: by a column of that name in the
enclosing SELECT (qualified by the derived table's alias, or not qualified
at all; subqueries inside included, so a correlated reference counts), a
USING list, or the derived SELECT itself (DuckDB reads an output name in
WHERE, GROUP BY, HAVING, QUALIFY and ORDER BY). Copies of one SELECT (a
WITH read twice) keep what any of them may be read for, so that they stay
one inner view. Nothing
is dropped where a reader takes the row whole (`*`, `x.*`, a NATURAL join,
the row as one value), the columns are renamed (`AS x(a, b)`), the SELECT
is DISTINCT, a set operation or has no window (the later passes read only
the columns used of those anyway), groups or orders by position, or
repeats an output name. At least one item stays, and an aggregate without
GROUP BY keeps one aggregate (its one row). A LATERAL subquery is pruned
alike. Runs after `subquery_limits` (whose numbering of a correlated
subquery's rows is a window) and before the window passes.

>>> import sqlglot
>>> from dynyan.compiler.frontend.context import Context
>>> tree = sqlglot.parse_one(
...     "SELECT x.k FROM (SELECT k, v, w + 1 AS u, RANK() OVER (ORDER BY v) AS r"
...     " FROM t) AS x WHERE x.v > 0", read="duckdb")
>>> print(unused_columns(tree, Context({})).sql("duckdb"))
SELECT x.k FROM (SELECT k, v FROM t) AS x WHERE x.v > 0
"""

from __future__ import annotations

from sqlglot import exp

from ..context import Context, from_items
from .qualify_names import is_star, expand_stars


def unused_columns(tree: exp.Expression, ctx: Context) -> exp.Expression:
    done: set[str] = set()  # the SELECTs (as SQL) pruned already
    while True:
        # prunable derived tables, outer ones first, copies of one SELECT
        # (a WITH read twice) together
        copies: dict[str, list[tuple[exp.Expression, exp.Select]]] = {}
        for select in tree.find_all(exp.Select):
            for item in from_items(select):
                if _prunable(_body(item), item.args.get("alias")):
                    copies.setdefault(_body(item).sql(), []).append((item, select))
        text = next((t for t in copies if t not in done), None)
        if text is None:
            return tree
        done.add(text)
        read: set[str] = set()
        for item, select in copies[text]:
            found = None
            if not _reads_whole_rows(select):
                found = _names_read(select, item.alias_or_name.lower(), skip=item)
            if found is None:
                break
            read |= found
        else:
            for item, _ in copies[text]:
                _prune(_body(item), read, ctx)
                done.add(_body(item).sql())


def _body(item: exp.Expression) -> exp.Expression | None:
    """The query of a derived table or a LATERAL subquery (None for a table)."""
    if isinstance(item, exp.Lateral) and isinstance(item.this, exp.Subquery):
        return item.this.this
    return item.this if isinstance(item, exp.Subquery) else None


def _reads_whole_rows(select: exp.Select) -> bool:
    """The SELECT reads its sources' rows whole: a star item, a NATURAL join."""
    joins = select.args.get("joins") or []
    return any(is_star(e) for e in select.expressions) or any(
        j.args.get("method") for j in joins
    )


def _prunable(inner: exp.Expression, alias: exp.TableAlias | None) -> bool:
    """A SELECT with windows whose output names are its own, not DISTINCT,
    not grouped or ordered by position."""
    if not isinstance(inner, exp.Select) or alias is None or alias.columns:
        return False
    if inner.args.get("distinct") or not inner.find(exp.Window):
        return False
    group = inner.args.get("group")
    order = inner.args.get("order")
    positional = [
        e
        for e in (group.expressions if group else [])
        + [o.this for o in (order.expressions if order else [])]
        if isinstance(e, exp.Literal) and not e.is_string
    ]
    return not positional and not (group and group.args.get("all"))


def _prune(inner: exp.Select, read: set[str], ctx: Context) -> None:
    """Drop the items of `inner` whose names are not in `read` and that it
    does not read itself."""
    spelled = inner.copy()  # stars written out, kept only if an item goes
    if any(is_star(e) for e in inner.expressions) and not (
        _declared_sources(inner, ctx) and expand_stars(spelled, ctx)
    ):
        return
    items = spelled.expressions
    names = [e.alias_or_name.lower() for e in items]
    if len(set(names)) < len(names):
        return  # a repeated name: which one the outer reads is DuckDB's choice
    kept = [
        item
        for item, name in zip(items, names)
        if name in read or _read_within(spelled, name, item)
    ]
    if len(kept) == len(items):
        return
    if not spelled.args.get("group") and any(_aggregates(e) for e in items):
        if not any(_aggregates(e) for e in kept):  # keep its one row
            kept.append(next(e for e in items if _aggregates(e)))
    kept = kept or items[:1]
    inner.set("expressions", [e for e in items if any(e is k for k in kept)])


def _declared_sources(select: exp.Select, ctx: Context) -> bool:
    """Every source of `select` a declared table or a derived table: the
    columns of its stars are known (an unknown table is refused later, by
    name)."""
    return all(
        isinstance(item, exp.Subquery)
        or (
            isinstance(item, exp.Table)
            and not item.args.get("db")
            and item.name.lower() in ctx.relations
        )
        for item in from_items(select)
    )


def _names_read(outer: exp.Select, alias: str, skip: exp.Expression) -> set[str] | None:
    """The column names `outer` may read of the source named `alias` (None
    where it reads the row as one value: `SELECT x FROM (…) AS x`)."""
    names = set()
    stack = [outer]
    while stack:
        node = stack.pop()
        if node is skip:
            continue
        if isinstance(node, exp.Column) and node.table.lower() in ("", alias):
            names.add(node.name.lower())
        for child in node.iter_expressions():
            stack.append(child)
    for join in outer.args.get("joins") or []:
        for ident in join.args.get("using") or []:
            names.add(ident.name.lower())
    return None if alias in names else names


def _read_within(inner: exp.Select, name: str, item: exp.Expression) -> bool:
    """Whether the derived SELECT may read output name `name` itself: a
    column of that name of its own scope (not of a subquery's) in another
    item or a clause (a source column of the same name as well: the item is
    kept, as nothing is lost)."""
    clauses = [e for e in inner.expressions if e is not item] + [
        inner.args.get(k) for k in ("where", "group", "having", "qualify", "order")
    ]
    return any(
        col.name.lower() == name and col.find_ancestor(exp.Select) is inner
        for clause in clauses
        if clause is not None
        for col in clause.find_all(exp.Column)
    )


def _aggregates(item: exp.Expression) -> bool:
    return any(not isinstance(a.parent, exp.Window) for a in item.find_all(exp.AggFunc))
