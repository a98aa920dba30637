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

>>> import sqlglot
>>> from dynyan.compiler.frontend.context import Context
>>> from dynyan.compiler.frontend.statements import parse_schema
>>> from dynyan.compiler.frontend.passes.qualify_names import qualify_names
>>> ctx = Context(parse_schema("CREATE TABLE p (a INT, b INT); CREATE TABLE q (b INT, c INT);"))
>>> tree = sqlglot.parse_one("SELECT p.a, q.c FROM p LEFT JOIN q ON p.b = q.b", read="duckdb")
>>> print(outer_joins(qualify_names(tree, ctx), ctx).sql("duckdb"))
SELECT __oj1.p__a AS a, __oj1.q__c AS c FROM (SELECT p.a AS p__a, q.c AS q__c FROM p AS p JOIN q AS q ON p.b = q.b UNION ALL SELECT p.a AS p__a, NULL AS q__c FROM p AS p WHERE NOT EXISTS(SELECT 1 FROM q AS q WHERE p.b = q.b)) AS __oj1
"""

from __future__ import annotations

from sqlglot import exp

from ..context import Context
from ..diagnostics import unsupported

_SIDES = ("LEFT", "RIGHT", "FULL")


def outer_joins(tree: exp.Expression, ctx: Context) -> exp.Expression:
    for select in reversed(list(tree.find_all(exp.Select))):  # inner first
        count = 0
        while True:
            joins = select.args.get("joins") or []
            at = next(
                (i for i, j in enumerate(joins) if (j.side or "").upper() in _SIDES),
                None,
            )
            if at is None:
                break
            count += 1
            _rewrite(select, at, f"__oj{count}")
    return tree


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
    moved = {id(n) for part in [from_, *joins[: at + 1]] for n in part.walk()}
    outside = [
        c
        for c in select.find_all(exp.Column)
        if id(c) not in moved
        and c.table.lower() in prefix | {other}
        and not _shadowed(c, select)
    ]
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
