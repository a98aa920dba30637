"""A scalar subquery correlated by keys and one inequality -> one keyed by
equalities over an inner view of the outer values.

`(SELECT COUNT(*) FROM s WHERE s.k = r.k AND s.v > r.w)` (the rows above a
row in its group: top-N per group before window functions), `(SELECT
SUM(s.x) … AND s.d <= r.d)` (a running total), `(SELECT MAX(s.d) … AND
s.d < r.d)` (the previous date): the value depends on the outer row only
through `(r.k, r.w)`. So the subquery becomes one correlated by equalities
with an inner view holding it per distinct `(k, w)` of the outer table,
which the later passes take as any other:

    (SELECT MAX(__b.a) FROM (
       SELECT d.k1, d.w, SUM(h.a) AS a
       FROM (SELECT DISTINCT r.k AS k1, r.w AS w FROM r) AS d
       JOIN (SELECT s.k AS k1, s.v AS v, COUNT(*) AS a FROM s GROUP BY s.k, s.v) AS h
         ON h.k1 = d.k1 AND h.v > d.w
       GROUP BY d.k1, d.w) AS __b
     WHERE __b.k1 = r.k AND __b.w = r.w)

(`COALESCE(…, 0)` for a COUNT, which is 0 over no rows). The inequality
join is maintained as any other (IEDyn): a change of `s` updates the
values of the outer keys whose range it falls in. A NULL key or bound
meets no row, as the comparison it stands for. Taken for COUNT, SUM, MIN
and MAX (not DISTINCT, but for `COUNT(DISTINCT v)` of the bounded inner
column v: top-N distinct values per group) of a subquery without GROUP BY, whose correlation
is `inner column = outer column` pairs and one `<`, `<=`, `>` or `>=`
between an inner and an outer column, every outer column of one table or
derived table of the enclosing SELECT. Runs after `qualify_names`.
"""

from __future__ import annotations

from sqlglot import exp

from ..context import SWAPPED, Context, from_items
from .unnest_subqueries import column_equality, split_correlation

# COUNT, SUM, MIN, MAX -> how the per-value parts combine over a range
_COMBINE = {exp.Count: exp.Sum, exp.Sum: exp.Sum, exp.Min: exp.Min, exp.Max: exp.Max}
_BOUNDS = (exp.GT, exp.GTE, exp.LT, exp.LTE)


def banded_subqueries(tree: exp.Expression, ctx: Context) -> exp.Expression:
    count = 0
    for node in list(tree.find_all(exp.Subquery)):
        select = node.parent_select
        if select is None or in_from(node):
            continue
        rewritten = _banded(node.this, select, f"__band{count + 1}")
        if rewritten is not None:
            count += 1
            node.replace(rewritten)
    return tree


def in_from(node: exp.Subquery) -> bool:
    """A derived table or the query of IN/EXISTS, not a scalar subquery."""
    kinds = (exp.From, exp.Join, exp.Lateral, exp.In, exp.Exists, exp.Any, exp.All)
    return isinstance(node.parent, kinds)


def _banded(inner, select: exp.Select, alias: str) -> exp.Expression | None:
    if not isinstance(inner, exp.Select) or len(inner.expressions) != 1:
        return None
    shaped = ("group", "having", "limit", "offset", "qualify", "distinct", "joins")
    if any(inner.args.get(arg) for arg in shaped):
        return None
    value = inner.expressions[0].unalias()
    if type(value) not in _COMBINE:
        return None
    if value.find(exp.Subquery, exp.Window) is not None:
        return None
    keep, correlated, is_inner = split_correlation(inner)
    pairs = [column_equality(c, is_inner) for c in correlated]
    bounds = [c for c, p in zip(correlated, pairs) if p is None]
    if len(bounds) != 1 or type(bounds[0]) not in _BOUNDS:
        return None
    bound = bounds[0]
    pairs = [p for p in pairs if p is not None]
    a, b = bound.this, bound.expression
    if not (isinstance(a, exp.Column) and isinstance(b, exp.Column)):
        return None
    if is_inner(a) and not is_inner(b):
        v, w, kind = a, b, type(bound)
    elif is_inner(b) and not is_inner(a):
        v, w, kind = b, a, SWAPPED[type(bound)]
    else:
        return None
    if isinstance(value.this, exp.Distinct) and not _distinct_bound(value, v):
        return None
    outer_columns = [o for _, o in pairs] + [w]
    source = _source(select, {c.table.lower() for c in outer_columns})
    if source is None:
        return None
    keys = [(f"__k{j}", i, o) for j, (i, o) in enumerate(pairs, 1)]
    # the outer table again, under its own alias (the outer one is read
    # by the correlation, which must not look like the subquery's own)
    table, own = source.copy(), f"{alias}_outer"
    table.set("alias", exp.TableAlias(this=exp.to_identifier(own)))
    d = exp.select(
        *[exp.alias_(exp.column(o.name, table=own), name) for name, _, o in keys],
        exp.alias_(exp.column(w.name, table=own), "__w"),
    ).from_(table)
    d.set("distinct", exp.Distinct())
    part = value.copy()
    h = inner.copy()
    h.set(
        "expressions",
        [exp.alias_(i.copy(), name) for name, i, _ in keys]
        + [exp.alias_(v.copy(), "__v"), exp.alias_(part, "__a")],
    )
    h.set(
        "where", exp.Where(this=exp.and_(*[c.copy() for c in keep])) if keep else None
    )
    h.set("group", exp.Group(expressions=[i.copy() for _, i, _ in keys] + [v.copy()]))
    on = [
        exp.EQ(
            this=exp.column(name, table="__h"), expression=exp.column(name, table="__d")
        )
        for name, _, _ in keys
    ] + [
        kind(
            this=exp.column("__v", table="__h"),
            expression=exp.column("__w", table="__d"),
        )
    ]
    g = (
        exp.select(
            *[exp.alias_(exp.column(name, table="__d"), name) for name, _, _ in keys],
            exp.alias_(exp.column("__w", table="__d"), "__w"),
            exp.alias_(
                _COMBINE[type(value)](this=exp.column("__a", table="__h")), "__a"
            ),
        )
        .from_(d.subquery("__d", copy=False))
        .join(h.subquery("__h", copy=False), on=exp.and_(*on))
        .group_by(
            *[exp.column(name, table="__d") for name, _, _ in keys],
            exp.column("__w", table="__d"),
        )
    )
    match = [
        exp.EQ(this=exp.column(name, table=alias), expression=o.copy())
        for name, _, o in keys
    ] + [exp.EQ(this=exp.column("__w", table=alias), expression=w.copy())]
    scalar = (
        exp.select(exp.alias_(exp.Max(this=exp.column("__a", table=alias)), "__a"))
        .from_(g.subquery(alias, copy=False))
        .where(exp.and_(*match))
    )
    out: exp.Expression = exp.Subquery(this=scalar)
    if isinstance(value, exp.Count):  # over no rows: 0
        out = exp.Coalesce(this=out, expressions=[exp.Literal.number(0)])
    return out


def _distinct_bound(value: exp.Expression, v: exp.Column) -> bool:
    """`COUNT(DISTINCT v)` of the bounded column itself: each value of v is
    a group of its own, counted once, so the count over a range is the SUM
    of the groups' (the distinct salaries above one's own: its place by
    DENSE_RANK). Any other DISTINCT aggregate counts a value in several
    groups."""
    return isinstance(value, exp.Count) and value.this.expressions == [v]


def _source(select: exp.Select, aliases: set[str]) -> exp.Expression | None:
    """The one table or derived table of `select`'s FROM that every outer
    column reads (None: several, or of an enclosing query)."""
    if len(aliases) != 1:
        return None
    (alias,) = aliases
    for item in from_items(select):
        if isinstance(item, (exp.Table, exp.Subquery)) and (
            (item.alias_or_name or "").lower() == alias
        ):
            return item
    return None
