"""LEFT, RIGHT and FULL OUTER JOIN become a UNION ALL read as a derived table.

`FROM p LEFT JOIN b ON c` is the rows of `p JOIN b ON c` and, NULL-padded,
the rows of `p` no row of `b` matches:

    FROM (SELECT … FROM p JOIN b ON c
          UNION ALL
          SELECT …, NULL, … FROM p WHERE NOT EXISTS (SELECT 1 FROM b WHERE c))
         AS __oj1

(RIGHT: the other way round; FULL: both unmatched parts). `p` is everything
left of the outer join in FROM. Columns of `p` and `b` the rest of the query
reads become columns `alias__column` of `__oj1`; the NULL-padded rows come
and go with the matches, since the NOT EXISTS is a test on `p`'s rows
re-checked when `b` changes. Runs after `qualify_names` (every column has
its table).

A LEFT JOIN whose ON condition equates columns of `b` with columns of tables
left of it (`b.k = t.c`, with conditions on `b` alone beside) keeps `p` as
it is and pads `b` instead: `b` joins `p` on `b.__ojk1 IS NOT DISTINCT FROM
t.c`, read from `b`'s rows (its key not NULL) and, NULL-padded, the distinct
values of `t.c` no row of `b` matches:

    FROM p JOIN (SELECT b.k AS __ojk1, b.… FROM b WHERE b.k IS NOT NULL
                 UNION ALL
                 SELECT DISTINCT t.c, NULL, … FROM t WHERE NOT EXISTS (…)) AS b
           ON b.__ojk1 IS NOT DISTINCT FROM t.c

Every row of `p` then meets its matches or exactly one padded row, the rest
of the query reads `b`'s columns by their own names, and a fact table LEFT
JOINed to n dimensions is n such joins (the general form nests each outer
join in the next: 2^n copies of the fact table). `p RIGHT JOIN b` where `p`
is one table is read as `b LEFT JOIN p`.

>>> import sqlglot
>>> from dynyan.compiler.frontend.context import Context
>>> from dynyan.compiler.frontend.statements import parse_schema
>>> from dynyan.compiler.frontend.passes.qualify_names import qualify_names
>>> ctx = Context(parse_schema("CREATE TABLE p (a INT, b INT); CREATE TABLE q (b INT, c INT);"))
>>> tree = sqlglot.parse_one("SELECT p.a, q.c FROM p LEFT JOIN q ON p.b = q.b", read="duckdb")
>>> print(outer_joins(qualify_names(tree, ctx), ctx).sql("duckdb"))
SELECT p.a AS a, q.c AS c FROM p AS p JOIN (SELECT q.b AS __ojk1, q.c AS c FROM q AS q WHERE NOT q.b IS NULL UNION ALL SELECT DISTINCT p.b AS __ojk1, NULL AS c FROM p AS p WHERE NOT EXISTS(SELECT 1 FROM q AS q WHERE q.b = p.b)) AS q ON q.__ojk1 IS NOT DISTINCT FROM p.b
>>> tree = sqlglot.parse_one("SELECT p.a, q.c FROM p LEFT JOIN q ON p.b < q.b", read="duckdb")
>>> print(outer_joins(qualify_names(tree, ctx), ctx).sql("duckdb"))
SELECT __oj1.p__a AS a, __oj1.q__c AS c FROM (SELECT p.a AS p__a, q.c AS q__c FROM p AS p JOIN q AS q ON p.b < q.b UNION ALL SELECT p.a AS p__a, NULL AS q__c FROM p AS p WHERE NOT EXISTS(SELECT 1 FROM q AS q WHERE p.b < q.b)) AS __oj1
"""

from __future__ import annotations

from sqlglot import exp

from ..context import Context, sql_conjuncts
from ..diagnostics import unsupported

_SIDES = ("LEFT", "RIGHT", "FULL")


# The meta key of a SELECT whose LEFT JOINs were padded: its key in
# `Context.unpadded`.
UNPADDED = "dynyan_unpadded"
# The meta key of a LEFT JOINed table kept as a table whose atom reads as
# one NULL-padded row at a key none of its rows has (`Atom.padded`).
PADDED = "dynyan_padded"


def outer_joins(tree: exp.Expression, ctx: Context) -> exp.Expression:
    for select in reversed(list(tree.find_all(exp.Select))):  # inner first
        if _outer_join_at(select) is None:
            continue
        before = select.copy()
        if _outer_joins_of(select, ctx):
            ctx.unpadded[len(ctx.unpadded)] = before
            select.meta[UNPADDED] = len(ctx.unpadded) - 1
    return tree


def unpadded(select: exp.Select, ctx: Context) -> exp.Select:
    """The SELECT `select` (marked UNPADDED) was before its LEFT JOINs were
    padded, its outer joins rewritten the general way."""
    before = ctx.unpadded[select.meta[UNPADDED]].copy()
    _outer_joins_of(before, None)
    return before


def _outer_joins_of(select: exp.Select, ctx: Context | None) -> bool:
    """Rewrite the outer joins of one SELECT (`ctx` None: none padded);
    whether one was padded."""
    count, padded = 0, False
    while True:
        at = _outer_join_at(select)
        if at is None:
            return padded
        count += 1
        joins = select.args["joins"]
        if at == 0 and joins[0].side.upper() == "RIGHT":
            _swap(select)  # `p RIGHT JOIN b` of one table p: `b LEFT JOIN p`
        if ctx is not None and _padded(select, at, ctx):
            padded = True
        else:
            _rewrite(select, at, f"__oj{count}")


def _outer_join_at(select: exp.Select) -> int | None:
    """The position of the first outer join among `select`'s joins."""
    joins = select.args.get("joins") or []
    sides = [(j.side or "").upper() for j in joins]
    return next((i for i, side in enumerate(sides) if side in _SIDES), None)


def _read_outside(select: exp.Select, at: int, aliases: set[str]) -> list:
    """The columns of tables `aliases` that `select` reads outside its FROM
    up to join `at` (a nested SELECT's own table of the same alias aside)."""
    from_ = select.args.get("from_") or select.args.get("from")
    joins = select.args["joins"]
    moved = {id(n) for part in [from_, *joins[: at + 1]] for n in part.walk()}
    return [
        c
        for c in select.find_all(exp.Column)
        if id(c) not in moved
        and c.table.lower() in aliases
        and not _shadowed(c, select)
    ]


def _alias(source: exp.Expression) -> str:
    return (source.alias or source.name).lower()


def _rewrite(select: exp.Select, at: int, name: str) -> None:
    from_ = select.args.get("from_") or select.args.get("from")
    joins = select.args["joins"]
    join = joins[at]
    side = join.side.upper()
    cond = join.args.get("on")
    if cond is None:
        raise unsupported(f"{side} JOIN needs an ON condition", join)
    prefix_items = [from_.this] + [j.this for j in joins[:at]]
    prefix = {_alias(s) for s in prefix_items}
    other = _alias(join.this)
    outside = _read_outside(select, at, prefix | {other})
    columns: list[tuple[str, str]] = []  # (alias, column), in first-use order
    for col in outside:
        key = (col.table.lower(), col.name.lower())
        if key not in columns:
            columns.append(key)
    if not columns:  # e.g. COUNT(*) only: any column keeps the rows apart
        first = from_.this
        columns.append((_alias(first), _first_column(first)))

    def items(null_side: set[str]) -> list[exp.Expression]:
        return [
            exp.alias_(
                exp.Null() if a in null_side else exp.column(c, table=a),
                f"{a}__{c}",
            )
            for a, c in columns
        ]

    def source(alias_set: set[str]) -> exp.Select:
        """SELECT FROM the prefix (its joins kept) or from the joined table."""
        query = exp.Select()
        if alias_set == {other}:
            query.set("from_", exp.From(this=join.this.copy()))
        else:
            query.set("from_", from_.copy())
            query.set("joins", [j.copy() for j in joins[:at]])
        return query

    def unmatched(keep: set[str], absent: set[str]) -> exp.Select:
        """The rows of `keep` no row of `absent` matches, NULL-padded."""
        query = source(keep)
        query.set("expressions", items(absent))
        probe = source(absent)
        probe.set("expressions", [exp.Literal.number(1)])
        probe.set("where", exp.Where(this=cond.copy()))
        query.set("where", exp.Where(this=exp.Not(this=exp.Exists(this=probe))))
        return query

    matched = source(prefix)
    matched.set("expressions", items(set()))
    matched.set(
        "joins",
        [j.copy() for j in joins[:at]]
        + [exp.Join(this=join.this.copy(), on=cond.copy())],
    )
    branches = [matched]
    if side in ("LEFT", "FULL"):
        branches.append(unmatched(prefix, {other}))
    if side in ("RIGHT", "FULL"):
        branches.append(unmatched({other}, prefix))
    union = branches[0]
    for branch in branches[1:]:
        union = exp.Union(this=union, expression=branch, distinct=False)
    for col in outside:
        col.replace(exp.column(f"{col.table.lower()}__{col.name.lower()}", table=name))
    select.set(
        "from_",
        exp.From(
            this=exp.Subquery(
                this=union, alias=exp.TableAlias(this=exp.to_identifier(name))
            )
        ),
    )
    select.set("joins", joins[at + 1 :])


def _swap(select: exp.Select) -> None:
    from_ = select.args.get("from_") or select.args.get("from")
    join = select.args["joins"][0]
    first = from_.this
    from_.set("this", join.this)
    join.set("this", first)
    join.set("side", "LEFT")


def _padded(select: exp.Select, at: int, ctx: Context) -> bool:
    """Rewrite the LEFT JOIN `at` of `select` by padding its table (see the
    module's docstring) when its ON condition has that form; else False."""
    from_ = select.args.get("from_") or select.args.get("from")
    joins = select.args["joins"]
    join = joins[at]
    cond = join.args.get("on")
    if join.side.upper() != "LEFT" or cond is None or join.args.get("using"):
        return False
    prefix = {_alias(s): s for s in [from_.this] + [j.this for j in joins[:at]]}
    other = _alias(join.this)
    if other in prefix:
        return False
    keys: list[tuple[exp.Column, exp.Column]] = []  # (b's column, p's column)
    local: list[exp.Expression] = []  # conditions on b alone
    for term in sql_conjuncts(cond):
        tables = {c.table.lower() for c in term.find_all(exp.Column)}
        if tables <= {other} and not term.find(exp.Select):
            local.append(term)
            continue
        if not isinstance(term, exp.EQ):
            return False
        sides = [term.this.unnest(), term.expression.unnest()]
        if not all(isinstance(s, exp.Column) for s in sides):
            return False
        if sides[1].table.lower() == other:
            sides.reverse()
        mine, theirs = sides
        if mine.table.lower() != other or theirs.table.lower() not in prefix:
            return False
        if not _same_type(mine, join.this, theirs, prefix[theirs.table.lower()], ctx):
            return False
        first = next((m for m, t in keys if t == theirs), None)
        if first is not None:  # b.x = t.c AND b.y = t.c: b.y = b.x, on b alone
            local.append(exp.EQ(this=mine.copy(), expression=first.copy()))
            continue
        keys.append((mine, theirs))
    if not keys:
        return False

    present = [
        exp.Not(this=exp.Is(this=m.copy(), expression=exp.Null())) for m, _ in keys
    ]
    keyed = {m.name.lower() for m, _ in keys}
    if ctx.padded_leaves and _only_summed(select, at, join.this, keyed):
        # b stays a table, marked: its leaf reads as one NULL-padded row at
        # a key none of its rows has (planner `padded_leaves_fit`)
        table = join.this.copy()
        table.meta[PADDED] = True
        on = exp.and_(
            *[t.copy() for t in local],
            *present,
            *[exp.NullSafeEQ(this=m.copy(), expression=t.copy()) for m, t in keys],
        )
        joins[at] = exp.Join(this=table, on=on)
        select.set("joins", joins)
        return True

    # b's columns the rest of the query reads
    columns = list(
        dict.fromkeys(c.name.lower() for c in _read_outside(select, at, {other}))
    )
    names = [f"__ojk{i}" for i in range(1, len(keys) + 1)]

    matched = exp.Select(
        expressions=[exp.alias_(m.copy(), n) for (m, _), n in zip(keys, names)]
        + [exp.alias_(exp.column(c, table=other), c) for c in columns]
    )
    matched.set("from_", exp.From(this=join.this.copy()))
    matched.set("where", exp.Where(this=exp.and_(*[t.copy() for t in local], *present)))

    tables = {t.table.lower() for _, t in keys}
    if len(tables) == 1:  # that table's values: the prefix's among them
        (table,) = tables
        source = prefix[table].copy()
        values = [t.copy() for _, t in keys]
    else:  # the prefix's values, as one derived table the test reads
        table = "__ojp"
        inner = exp.Select(
            expressions=[exp.alias_(t.copy(), n) for (_, t), n in zip(keys, names)]
        )
        inner.set("from_", from_.copy())
        inner.set("joins", [j.copy() for j in joins[:at]])
        source = inner.subquery(table, copy=False)
        values = [exp.column(n, table=table) for n in names]
    probe = exp.Select(expressions=[exp.Literal.number(1)])
    probe.set("from_", exp.From(this=join.this.copy()))
    matches = [
        exp.EQ(this=m.copy(), expression=v.copy()) for (m, _), v in zip(keys, values)
    ]
    probe.set("where", exp.Where(this=exp.and_(*[t.copy() for t in local], *matches)))
    unmatched = exp.Select(
        expressions=[exp.alias_(v, n) for v, n in zip(values, names)]
        + [exp.alias_(exp.Null(), c) for c in columns],
        distinct=exp.Distinct(),
    )
    unmatched.set("from_", exp.From(this=source))
    unmatched.set("where", exp.Where(this=exp.Not(this=exp.Exists(this=probe))))

    padded = exp.Subquery(
        this=exp.Union(this=matched, expression=unmatched, distinct=False),
        alias=exp.TableAlias(this=exp.to_identifier(other)),
    )
    on = exp.and_(
        *[
            exp.NullSafeEQ(this=exp.column(n, table=other), expression=t.copy())
            for (_, t), n in zip(keys, names)
        ]
    )
    joins[at] = exp.Join(this=padded, on=on)
    select.set("joins", joins)
    return True


def _only_summed(
    select: exp.Select, at: int, table: exp.Expression, keyed: set[str]
) -> bool:
    """Whether the rest of `select` reads the LEFT JOINed `table` (a declared
    table) only inside its own COUNT, SUM and AVG (not DISTINCT, not a
    window), and none of its columns `keyed` by the ON equalities: a
    NULL-padded row then changes only what they add up, and `table` can
    stay a leaf of the join tree that reads as that row where it has none
    (no UNION, no NOT EXISTS). (A key column is one variable with the other
    table's: read on the padded row, it would be that value, not NULL.)"""
    if not isinstance(table, exp.Table):
        return False
    for col in _read_outside(select, at, {_alias(table)}):
        if col.name.lower() in keyed:
            return False
        agg = col.find_ancestor(exp.AggFunc, exp.Select)
        if not isinstance(agg, (exp.Count, exp.Sum, exp.Avg)):
            return False
        if agg.find(exp.Distinct) or isinstance(
            agg.find_ancestor(exp.Window, exp.Select), exp.Window
        ):
            return False
        if agg.find_ancestor(exp.Select) is not select:
            return False
    return True


def _same_type(mine, source, theirs, their_source, ctx: Context) -> bool:
    """Whether two key columns have one type, where both are declared
    tables' (the padded rows' key is the other table's column); derived
    tables' are left to the UNION's own check."""
    types = []
    for col, src in ((mine, source), (theirs, their_source)):
        if not isinstance(src, exp.Table):
            return True
        relation = ctx.relations.get(src.name.lower())
        if relation is None or col.name.lower() not in relation.columns:
            return True
        types.append(relation.types[relation.columns.index(col.name.lower())])
    return types[0] == types[1]


def _shadowed(col: exp.Column, select: exp.Select) -> bool:
    """Whether a SELECT nested in `select` around `col` has a table of the
    same alias: the column is that table's, not the outer one's (an inner
    query rewritten first has its own `__oj1`)."""
    node = col.parent
    while node is not None and node is not select:
        if isinstance(node, exp.Select):
            sources = [node.args.get("from_") or node.args.get("from")]
            sources += node.args.get("joins") or []
            if any(
                s is not None and _alias(s.this) == col.table.lower() for s in sources
            ):
                return True
        node = node.parent
    return False


def _first_column(source: exp.Expression) -> str:
    if isinstance(source, exp.Subquery):
        return source.this.expressions[0].alias_or_name
    raise unsupported("an outer join whose columns the query never reads", source)
