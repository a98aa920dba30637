"""A LATERAL subquery -> a join with a derived table, or scalar subqueries.

`FROM r, LATERAL (SELECT … FROM s WHERE s.k = r.k AND …) AS x` reads, for
each row of r, the rows of its subquery. Correlated by `inner column = outer
column` conditions (or not at all), it is the derived table of those rows
for every key, joined on the key:

    FROM r JOIN (SELECT s.k AS __k1, … FROM s WHERE …) AS x ON x.__k1 = r.k

(`LEFT JOIN LATERAL (…) ON c` keeps the rows of r without one: a LEFT JOIN
ON the keys AND c). A GROUP BY in it groups by the keys too; DISTINCT is
over the keys and the items, the same rows per key. A subquery that
aggregates without GROUP BY has exactly one row per outer row, also over
no rows: correlated by equalities only, each item one COUNT, SUM, MIN, MAX
or AVG, it is LEFT JOINed grouped by the keys (`COALESCE(x.c, 0)` read
for a COUNT); otherwise each column it gives, `x.c`, is read as the scalar
subquery `(SELECT <c's expression> FROM s WHERE …)` (which `scalar_items`
joins, 0 for a COUNT over no rows), and the join goes.

Other conditions with the tables before it (`s.v > r.a`) join the ON
condition, over the inner columns they read (`x.__c1 > r.a`), where the
subquery neither groups nor is DISTINCT. Refused (with what is supported):
LIMIT/OFFSET or a window function in it, a grouped or DISTINCT one
correlated otherwise than by equalities, a LATERAL that is not a SELECT,
a COUNT of one read where a RIGHT or FULL JOIN after it pads it (its
`COALESCE(x.c, 0)` would read 0 on the padded rows, not NULL). Runs after `qualify_names` (columns carry their
tables).

>>> import sqlglot
>>> from dynyan.compiler.frontend.context import Context
>>> tree = sqlglot.parse_one(
...     "SELECT r.a AS a, x.v AS v FROM r AS r, LATERAL (SELECT s.v AS v FROM s AS s "
...     "WHERE s.k = r.k AND s.v > 1) AS x", read="duckdb")
>>> print(lateral_joins(tree, Context({})).sql("duckdb"))
SELECT r.a AS a, x.v AS v FROM r AS r JOIN (SELECT s.k AS __k1, s.v AS v FROM s AS s WHERE s.v > 1) AS x ON x.__k1 = r.k
"""

from __future__ import annotations

from sqlglot import exp

from ..context import Context
from ..diagnostics import unsupported
from .unnest_subqueries import column_equality, split_correlation


def lateral_joins(tree: exp.Expression, ctx: Context) -> exp.Expression:
    for join in list(tree.find_all(exp.Join)):
        lateral = join.this
        if not isinstance(lateral, exp.Lateral):
            continue
        body = lateral.this.this if isinstance(lateral.this, exp.Subquery) else None
        if not isinstance(body, exp.Select):
            raise unsupported("LATERAL of a SELECT only is supported", lateral)
        if (join.side or "").upper() in ("RIGHT", "FULL"):
            raise unsupported(  # as DuckDB: its rows depend on the rows before it
                "a LATERAL subquery joins as INNER or LEFT JOIN only", join
            )
        for arg in ("limit", "offset"):
            if body.args.get(arg) is not None:
                raise unsupported(
                    f"{arg.upper()} in a LATERAL subquery is not supported (a view "
                    "of the first rows per outer row)",
                    body.args[arg],
                )
        if body.find(exp.Window) is not None:
            raise unsupported(
                "a window function in a LATERAL subquery is not supported", body
            )
        outer = join.parent_select
        alias = lateral.alias
        pairs, others, keep, is_inner = _correlation(body, lateral)
        if _one_row(body):
            if not _as_groups(outer, join, body, alias, pairs, others, keep):
                _as_scalars(outer, join, body, alias)
            continue
        if others and (body.args.get("group") or body.args.get("distinct")):
            raise unsupported(
                "a grouped or DISTINCT LATERAL subquery may refer to the tables "
                "before it only by `inner column = outer column` conditions",
                others[0],
            )
        _as_join(join, body, alias, pairs, keep, _on_outer(others, is_inner, alias))
    return tree


def _correlation(body: exp.Select, lateral: exp.Lateral):
    """The (inner, outer) column equalities that correlate `body` with the
    tables before it, and its other conditions; refused if it reads them
    otherwise."""
    keep, correlated, is_inner = split_correlation(body)
    pairs, others = [], []
    for cond in correlated:
        pair = column_equality(cond, is_inner)
        if pair is None:
            others.append(cond)
        else:
            pairs.append(pair)
    outside = [
        c
        for item in [*body.expressions, body.args.get("group"), body.args.get("having")]
        if item is not None
        for c in item.find_all(exp.Column)
        if not is_inner(c) and c.find_ancestor(exp.Subquery) is lateral.this
    ]
    if outside:
        raise unsupported(
            "a LATERAL subquery may refer to the tables before it only in "
            "conditions of its WHERE",
            outside[0],
        )
    return pairs, others, keep, is_inner


def _one_row(body: exp.Select) -> bool:
    """An aggregate without GROUP BY: one row, also over no rows."""
    own = [a for a in body.find_all(exp.AggFunc) if a.parent_select is body]
    return bool(own) and body.args.get("group") is None


def _on_outer(others: list, is_inner, alias: str):
    """Conditions between the subquery's rows and the tables before it ->
    (the inner columns they read, as `__cN` columns of the derived table;
    the conditions over `alias.__cN`), for the join's ON."""
    columns: list[exp.Column] = []
    conds = []
    for cond in others:
        cond = cond.copy()
        for col in list(cond.find_all(exp.Column)):
            if is_inner(col):
                if col not in columns:
                    columns.append(col.copy())
                col.replace(exp.column(f"__c{columns.index(col) + 1}", table=alias))
        conds.append(cond)
    return columns, conds


def _as_join(join: exp.Join, body: exp.Select, alias: str, pairs, keep, others) -> None:
    derived = body.copy()
    extra, conds = others
    keys = [exp.alias_(i.copy(), f"__k{j}") for j, (i, _) in enumerate(pairs, 1)]
    keys += [exp.alias_(c.copy(), f"__c{j}") for j, c in enumerate(extra, 1)]
    derived.set("expressions", keys + [e.copy() for e in derived.expressions])
    derived.set("where", exp.Where(this=exp.and_(*keep)) if keep else None)
    group = derived.args.get("group")
    if group is not None and pairs:
        group.set("expressions", [i.copy() for i, _ in pairs] + group.expressions)
    on = [
        exp.EQ(this=exp.column(f"__k{j}", table=alias), expression=o.copy())
        for j, (_, o) in enumerate(pairs, 1)
    ] + conds
    condition = _on_condition(join)
    if condition is not None:
        on.append(condition)
    join.set("this", derived.subquery(alias, copy=False))
    join.set("on", exp.and_(*on) if on else None)
    if not on and not join.args.get("side"):
        join.set("kind", "CROSS")


def _on_condition(join: exp.Join) -> exp.Expression | None:
    """The join's ON condition; None without one or for ON TRUE."""
    condition = join.args.get("on")
    if isinstance(condition, exp.Boolean) and condition.this:
        return None
    return condition


# Aggregates a LATERAL's groups may hold: NULL over no rows, but COUNT's 0.
_GROUPED = (exp.Count, exp.Sum, exp.Min, exp.Max, exp.Avg)


def _as_groups(outer, join, body, alias, pairs, others, keep) -> bool:
    """A LATERAL aggregate correlated by equalities only, each item one
    aggregate -> a LEFT JOIN with its groups by the inner columns; outer
    rows without one read NULL, 0 for a COUNT. False (nothing changed)
    where it has another form."""
    items = [e.unalias() for e in body.expressions]
    if not pairs or others or body.args.get("having") is not None:
        return False
    if not all(type(e) in _GROUPED for e in items):
        return False
    condition = _on_condition(join)
    if condition is not None:
        if join.args.get("side"):
            return False  # refused by `_as_scalars`, saying why
        outer.where(condition.copy(), copy=False)
    join.set("on", None)
    counts = {
        e.alias_or_name.lower()
        for e, item in zip(body.expressions, items)
        if isinstance(item, exp.Count)
    }
    reads = [
        c
        for c in outer.find_all(exp.Column)
        if c.table.lower() == alias.lower()
        and c.name.lower() in counts
        and c.find_ancestor(exp.Lateral) is not join.this
    ]
    joins = outer.args.get("joins") or []
    later = joins[joins.index(join) + 1 :] if join in joins else []
    padding = [j for j in later if (j.side or "").upper() in ("RIGHT", "FULL")]
    if reads and padding:
        # x.c read as COALESCE(x.c, 0) would be 0, not NULL, where the join
        # after it pads x; nor is a scalar subquery read in its ON
        raise unsupported(
            "a COUNT of a LATERAL subquery followed by a RIGHT or FULL JOIN is "
            "not supported (the outer join's NULL rows would read 0)",
            padding[0],
        )
    _as_join(join, body, alias, pairs, keep, ([], []))
    derived = join.this.this
    derived.set("group", exp.Group(expressions=[i.copy() for i, _ in pairs]))
    join.set("side", "LEFT")
    join.set("kind", None)
    for col in reads:
        col.replace(exp.Coalesce(this=col.copy(), expressions=[exp.Literal.number(0)]))
    return True


def _as_scalars(outer: exp.Select, join: exp.Join, body: exp.Select, alias) -> None:
    """Each `alias.c` of the outer query -> the correlated scalar subquery of
    c's expression; the join is dropped (its ON condition, of an inner
    join, joins WHERE)."""
    condition = _on_condition(join)
    if condition is not None:
        if join.args.get("side"):
            raise unsupported(
                "an outer join of an aggregating LATERAL subquery is supported "
                "ON TRUE only (it has one row for every outer row)",
                condition,
            )
        outer.where(condition.copy(), copy=False)
    items = {e.alias_or_name.lower(): e.unalias() for e in body.expressions}
    lateral = join.this
    for col in list(outer.find_all(exp.Column)):
        if col.table.lower() != alias.lower():
            continue
        if col.find_ancestor(exp.Lateral) is lateral:  # the body's own `alias`
            continue
        expr = items.get(col.name.lower())
        if expr is None:
            raise unsupported(f"the LATERAL subquery {alias} has no column", col)
        sub = body.copy()
        sub.set("expressions", [exp.alias_(expr.copy(), col.name)])
        col.replace(exp.Subquery(this=sub))
    join.pop()
