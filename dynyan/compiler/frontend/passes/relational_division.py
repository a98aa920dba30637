"""Relational division, NOT EXISTS (… NOT EXISTS (…)), -> a count per key.

`SELECT c.id FROM c WHERE NOT EXISTS (SELECT 1 FROM n WHERE n.r = 1 AND NOT
EXISTS (SELECT 1 FROM o WHERE o.cid = c.id AND o.x = n.x))` (the customers
with an order for every such n) reads the outermost query from a subquery
nested in a correlated one, which no inner view can be keyed by. Where the
innermost subquery ties its table to the outer query and to `n` by
equalities of columns only, and `n`'s other conditions read `n` alone, a
key qualifies exactly when every row of `n` has a matching pair of the
innermost table's (key, x) values:

    (c.id) IN (SELECT d.k FROM n JOIN (SELECT DISTINCT o.cid AS k, o.x AS x
               FROM o WHERE <o's own conditions>) AS d ON d.x = n.x
               WHERE n.r = 1 GROUP BY d.k
               HAVING COUNT(*) = (SELECT COUNT(*) FROM n WHERE n.r = 1))
    OR (SELECT COUNT(*) FROM n WHERE n.r = 1) = 0

(each row of `n` meets at most one distinct pair of a key; no row of `n`:
every key qualifies, a NULL key too). NULLs keep SQL's meaning: a NULL never
matches, so a key with a NULL in a compared column has an unmatched row of
`n`, and a NULL outer key is in no list. Other shapes are left as they are
(and refused later, by their reason). Runs before `qualify_names`: a column
without a table belongs to the innermost FROM that has it.
"""

from __future__ import annotations

from sqlglot import exp

from ..context import Context, from_items, sql_conjuncts


def relational_division(tree: exp.Expression, ctx: Context) -> exp.Expression:
    for node in list(tree.find_all(exp.Not)):
        inner = _exists(node)
        if inner is None:
            continue
        rewritten = _division(inner, ctx)
        if rewritten is not None:
            node.replace(exp.paren(rewritten))
    return tree


def _exists(node: exp.Expression) -> exp.Select | None:
    """The SELECT of `NOT EXISTS (SELECT …)`, None for anything else."""
    test = node.this.unnest() if isinstance(node, exp.Not) else None
    if isinstance(test, exp.Exists) and isinstance(test.this, exp.Select):
        return test.this
    return None


def _table(select: exp.Select, ctx: Context):
    """(alias, relation) of a SELECT over one declared table with nothing
    but a WHERE, else None."""
    items = from_items(select)
    if len(items) != 1 or not isinstance(items[0], exp.Table):
        return None
    if any(select.args.get(a) for a in ("group", "having", "limit", "qualify")):
        return None
    if select.args.get("distinct") or select.args.get("with"):
        return None
    table = items[0]
    relation = ctx.relations.get(table.name.lower())
    if relation is None or table.args.get("db"):
        return None
    return (table.alias_or_name).lower(), relation


def _owner(col: exp.Column, scopes: list) -> int:
    """Which of `scopes` ((alias, relation), innermost first) `col` reads;
    len(scopes) for the query outside them all."""
    for i, (alias, relation) in enumerate(scopes):
        if col.table:
            if col.table.lower() == alias:
                return i
        elif col.name.lower() in relation.columns:
            return i
    return len(scopes)


def _readers(e: exp.Expression, scopes: list) -> set[int]:
    return {_owner(c, scopes) for c in e.find_all(exp.Column)}


def _division(outer_test: exp.Select, ctx: Context) -> exp.Expression | None:
    middle = _table(outer_test, ctx)
    where = outer_test.args.get("where")
    if middle is None or where is None:
        return None
    conds = sql_conjuncts(where.this)
    nested = [c for c in conds if _exists(c) is not None]
    if len(nested) != 1:
        return None
    own = [c for c in conds if c is not nested[0]]
    if any(c.find(exp.Subquery, exp.Exists, exp.Select) for c in own):
        return None
    if any(_readers(c, [middle]) - {0} for c in own):
        return None  # the middle's own conditions read only its table
    innermost = _exists(nested[0])
    inner = _table(innermost, ctx)
    inner_where = innermost.args.get("where")
    if inner is None or inner_where is None:
        return None
    scopes = [inner, middle]
    local, links, keys = [], [], []  # keys: (inner column, outer expression)
    for cond in sql_conjuncts(inner_where.this):
        if cond.find(exp.Subquery, exp.Exists, exp.Select):
            return None
        readers = _readers(cond, scopes)
        if readers <= {0}:
            local.append(cond)
            continue
        if not (
            isinstance(cond, exp.EQ)
            and all(
                isinstance(side, exp.Column) for side in (cond.this, cond.expression)
            )
        ):
            return None
        sides = sorted((cond.this, cond.expression), key=lambda c: _owner(c, scopes))
        if _owner(sides[0], scopes) != 0:
            return None
        if _owner(sides[1], scopes) == 1:
            links.append(tuple(sides))
        elif _owner(sides[1], scopes) == 2:
            keys.append(tuple(sides))
        else:
            return None
    if not keys or not links:
        return None
    return _rewritten(middle, own, inner, local, links, keys)


def _rewritten(middle, own, inner, local, links, keys) -> exp.Expression:
    (m_alias, m_rel), (i_alias, i_rel) = middle, inner
    names = [f"__k{j}" for j in range(len(keys))]
    names += [f"__x{j}" for j in range(len(links))]
    pairs = [c for c, _ in keys] + [c for c, _ in links]
    body = exp.select(
        *(exp.alias_(exp.column(c.name, i_alias), n) for c, n in zip(pairs, names))
    ).from_(_aliased(i_rel.name, i_alias))
    body = body.distinct()
    if local:
        body = body.where(exp.and_(*(c.copy() for c in local)))
    on = exp.and_(
        *(
            exp.EQ(this=exp.column(f"__x{j}", "__pairs"), expression=m.copy())
            for j, (_, m) in enumerate(links)
        )
    )

    def middle_rows(select: exp.Select) -> exp.Select:
        select = select.from_(_aliased(m_rel.name, m_alias))
        return select.where(exp.and_(*(c.copy() for c in own))) if own else select

    total = exp.Subquery(this=middle_rows(exp.select(exp.Count(this=exp.Star()))))
    grouped = [exp.column(f"__k{j}", "__pairs") for j in range(len(keys))]
    matched = (
        middle_rows(exp.select(*grouped))
        .join(
            exp.Subquery(
                this=body, alias=exp.TableAlias(this=exp.to_identifier("__pairs"))
            ),
            on=on,
        )
        .group_by(*(g.copy() for g in grouped))
        .having(exp.EQ(this=exp.Count(this=exp.Star()), expression=total.copy()))
    )
    outer = [o.copy() for _, o in keys]
    probe = outer[0] if len(outer) == 1 else exp.Tuple(expressions=outer)
    member = exp.In(this=probe, query=exp.Subquery(this=matched))
    none = exp.EQ(this=total, expression=exp.Literal.number(0))
    return exp.or_(member, none)


def _aliased(name: str, alias: str) -> exp.Table:
    return exp.Table(
        this=exp.to_identifier(name),
        alias=exp.TableAlias(this=exp.to_identifier(alias)),
    )
