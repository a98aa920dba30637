"""Subqueries become inner views whose results are relations of the outer query.

- A derived table `(SELECT …) AS t` becomes a virtual relation `derivedN`
  read as `t`.
- `x IN (SELECT y …)` joins the distinct `y` values (a virtual relation
  `in_N(k1)`); `EXISTS (SELECT … WHERE inner = outer …)` joins the distinct
  correlation keys (`exists_N(k1, …)`).
- `NOT IN`, `NOT EXISTS`, `EXISTS` correlated by more than equalities (or
  not at all), and comparisons with a scalar subquery (`x < (SELECT
  AVG(…) … WHERE inner = outer)`, decorrelated into a view grouped by the
  correlation key) become tests on the outer table's rows (`PendingTest`,
  built into `InnerTest`s): a change of the inner result re-checks only the
  rows it can flip.

The outer SELECT keeps only tables; the inner views are compiled on their own
(`Context.compile`) and listed in `Context.subqueries`.

>>> import sqlglot
>>> from dynyan.compiler.frontend import compile_select
>>> from dynyan.compiler.frontend.context import Context
>>> from dynyan.compiler.frontend.statements import parse_schema
>>> from dynyan.compiler.frontend.passes.qualify_names import qualify_names
>>> ctx = Context(parse_schema("CREATE TABLE p (a INT, b INT); CREATE TABLE q (b INT, c INT);"))
>>> ctx.compile = compile_select
>>> tree = sqlglot.parse_one("SELECT p.a FROM p WHERE p.b IN (SELECT q.c FROM q)", read="duckdb")
>>> print(unnest_subqueries(qualify_names(tree, ctx), ctx).sql("duckdb"))
SELECT p.a AS a FROM p AS p CROSS JOIN in_1 AS in1 WHERE p.b = in1.k1
>>> for name, view in ctx.subqueries:
...     print(name, "=", view)
in_1 = SELECT DISTINCT c AS k1
  atom q(_, c)
"""

from __future__ import annotations

import operator

from sqlglot import exp

from ...ir import (
    AggRef,
    Atom,
    NULL_ABSORBING,
    Lit,
    Op,
    Query,
    Ref,
    Relation,
    SetQuery,
    WindowQuery,
    PICKS,
    Var,
    column_of,
    query_digits,
)
from ..aggregates import is_grouped
from ..context import (
    COLUMN,
    GUARD_COLUMN,
    NATIVE,
    ROWS,
    SWAPPED,
    Context,
    PendingTest,
    from_aliases,
    reads_outer,
    sql_conjuncts,
)
from ..diagnostics import unsupported
from ..expressions import is_single
from ..types import infer_type, lit_type
from .scalar_reduction import reduce_to_read_keys
from .window_aggregates import never_null

# comparison node -> (op, op with the sides swapped)
_COMPARISONS = {
    exp.EQ: ("eq", "eq"),
    exp.NEQ: ("ne", "ne"),
    exp.LT: ("lt", "gt"),
    exp.LTE: ("le", "ge"),
    exp.GT: ("gt", "lt"),
    exp.GTE: ("ge", "le"),
}
INNER = "__inner"  # the alias of an inner view's row in a PendingTest condition


def unnest_subqueries(select: exp.Select, ctx: Context) -> exp.Select:
    from_ = select.args.get("from_") or select.args.get("from")
    sources = ([from_] if from_ is not None else []) + list(
        select.args.get("joins") or []
    )
    for holder in sources:
        sub = holder.this
        if isinstance(sub, exp.Subquery):
            if not isinstance(sub.this, (exp.Select, exp.SetOperation)):
                raise unsupported("only SELECT subqueries are supported in FROM", sub)
            text = sub.this.sql(copy=False)  # a key: generated, not kept
            if sub.this.meta.get(NATIVE) is not None:  # its windows' too
                text += f" /* {sub.this.meta[NATIVE]!r} */"
            if sub.this.meta.get(ROWS) is not None:
                # not the same as that text unguarded
                text += f" /* {sub.this.meta.get(GUARD_COLUMN, COLUMN)} */"
            if text not in ctx.derived:
                ctx.derived[text], _ = virtual(ctx, sub.this, "derived", text)
            holder.set("this", exp.table_(ctx.derived[text], alias=sub.alias))
    where = select.args.get("where")
    if where is not None:
        _exists_unions(where)
        # this SELECT's own subqueries (a nested one is its subquery's)
        for node in list(where.find_all(exp.In, exp.Exists)):
            if node.parent_select is not select:
                continue
            if isinstance(node, exp.In) and node.args.get("query") is None:
                continue  # IN (list of literals): a plain filter
            select = _membership(select, where, node, ctx)
        for node in list(where.find_all(exp.Subquery)):
            if node.parent_select is select:
                _scalar(where, node, ctx)
    for node in select.find_all(exp.Subquery, exp.Exists):
        raise unsupported(
            "a subquery is supported in FROM and as a condition of WHERE "
            "([NOT] IN, [NOT] EXISTS, a comparison with a scalar subquery); in "
            "the SELECT list, a subquery of one value over aggregates, "
            "uncorrelated, or correlated by `inner column = outer column` "
            "conditions (a COUNT, SUM, MIN or MAX also by one <, <=, >, >= "
            "between an inner and an outer column; outside the aggregates of "
            "an aggregating query by its GROUP BY keys only)",
            node,
        )
    return select


def _exists_unions(where: exp.Where) -> None:
    """`EXISTS (… WHERE i1 = o …) OR EXISTS (… WHERE i2 = o …)`, a conjunct of
    WHERE whose subqueries are each correlated by one equality with the same
    outer column `o` -> `o IN (SELECT i1 … UNION ALL SELECT i2 …)` (TPC-DS
    Q10, Q35): one membership test instead of an OR across subqueries. In a
    conjunct of WHERE both are false for a NULL `o`, so they agree."""
    for node in list(where.find_all(exp.Or)):
        if isinstance(node.parent, exp.Or):
            continue  # inside a chain: the top OR takes it
        anchor = node
        while isinstance(anchor.parent, exp.Paren):
            anchor = anchor.parent
        if not _in_conjunction(anchor, where):
            continue
        sides, outer = [], None
        for term in node.flatten():
            term = term.unnest()
            found = exists_side(term)
            if found is None or (outer is not None and found[1] != outer):
                break
            sides.append(found[0])
            outer = found[1]
        else:
            union = sides[0]
            for side in sides[1:]:
                union = exp.Union(this=union, expression=side, distinct=False)
            alias = exp.TableAlias(this=exp.to_identifier("__or"))
            members = exp.select(exp.column("k", table="__or")).from_(
                exp.Subquery(this=union, alias=alias)
            )
            anchor.replace(exp.In(this=outer.copy(), query=exp.Subquery(this=members)))


def exists_side(term: exp.Expression):
    """(SELECT i AS k … WHERE its own conditions, outer column o) for an
    `EXISTS (SELECT … WHERE i = o AND …)` correlated by that equality only;
    None for any other term."""
    if not isinstance(term, exp.Exists) or not isinstance(term.this, exp.Select):
        return None
    inner = term.this
    if any(inner.args.get(arg) for arg in ("group", "having", "limit", "offset")):
        return None
    if is_grouped(inner):
        return None
    keep, correlated, is_inner = split_correlation(inner)
    if len(correlated) != 1:
        return None
    pair = column_equality(correlated[0], is_inner)
    if pair is None:
        return None
    side = inner.copy()
    side.set("expressions", [exp.alias_(pair[0].copy(), "k")])
    side.set("where", exp.Where(this=exp.and_(*keep)) if keep else None)
    side.set("distinct", None)
    return side, pair[1]


def _membership(select, where, node, ctx: Context) -> exp.Select:
    """[NOT] IN (SELECT …) and [NOT] EXISTS (SELECT …)."""
    parent = node.parent
    negated = isinstance(parent, exp.Not)
    anchor = parent if negated else node
    if not _in_conjunction(anchor, where):
        raise unsupported("a subquery condition must be a conjunct of WHERE", anchor)
    if isinstance(node, exp.In):
        query = node.args["query"]
        inner = query.this if isinstance(query, exp.Subquery) else query
        # (a, b) IN (SELECT x, y …): a row of values, each equal to its column
        outer = (
            list(node.this.expressions)
            if isinstance(node.this, exp.Tuple)
            else [node.this]
        )
        if not isinstance(inner, exp.Select) or len(inner.expressions) != len(outer):
            raise unsupported(
                f"IN (SELECT …) must select {len(outer)} column"
                + ("s" if len(outer) > 1 else ""),
                node,
            )
        if negated and len(outer) > 1:
            test = exp.Exists(this=_row_not_in(inner, outer, select, ctx))
            anchor.replace(exp.Not(this=test))
            return _membership(select, where, test, ctx)
        if reads_outer(inner):
            exists = exp.Exists(this=_correlated_in(inner, outer, negated, node))
            node.replace(exists)
            return _membership(select, where, exists, ctx)
        inner = inner.copy()
        inner.set(
            "expressions",
            [
                exp.alias_(e.unalias(), f"k{i + 1}")
                for i, e in enumerate(inner.expressions)
            ],
        )
        grouped = is_grouped(inner)
        if grouped and not _selects_group_keys(inner):
            # (a, b) IN (SELECT a, MAX(b) … GROUP BY a): the distinct rows of
            # the grouped result
            inner = (
                exp.select(
                    *[
                        exp.alias_(exp.column(f"k{i + 1}", table="__g"), f"k{i + 1}")
                        for i in range(len(outer))
                    ]
                )
                .from_(inner.subquery("__g"))
                .distinct()
            )
            grouped = False
        if not grouped:
            inner.set("distinct", exp.Distinct())  # IN never multiplies rows
        alias = f"in{len(ctx.subqueries) + 1}"
        name, sub = virtual(ctx, inner, "in_")
        keys = [Var(v) for v in sub.group_vars]
        if grouped and any(o.expr not in keys for o in sub.outputs):
            raise unsupported(
                "IN (SELECT … GROUP BY …) must select GROUP BY columns", node
            )
        if negated:
            ctx.tests.append(PendingTest("not_in", name, [node.this.copy()], anchor))
            anchor.replace(exp.true())
            return select
        condition = exp.and_(
            *[
                exp.EQ(this=e.copy(), expression=exp.column(f"k{i + 1}", table=alias))
                for i, e in enumerate(outer)
            ]
        )
    else:
        if _aggregates_all(node.this):
            return _aggregate_exists(select, node, anchor, negated, ctx)
        bounded = bounded_exists(node.this)
        if bounded is not None:
            subquery, value, op = bounded
            _scalar_test(ctx, subquery, value, op, anchor, node, negated=negated)
            anchor.replace(exp.true())
            return select
        inner, pairs, rest, null_safe = _decorrelate(node.this)
        alias = f"exists{len(ctx.subqueries) + 1}"
        name, _ = virtual(ctx, inner, "exists_")
        if negated or rest is not None or not pairs:
            kind = "not_exists" if negated and rest is None else "exists"
            ctx.tests.append(
                PendingTest(
                    kind,
                    name,
                    pairs,
                    anchor,
                    condition=rest,
                    negated=negated and kind == "exists",
                    null_safe=null_safe,
                )
            )
            anchor.replace(exp.true())
            return select
        condition = exp.and_(
            *[
                (exp.NullSafeEQ if safe else exp.EQ)(
                    this=outer, expression=exp.column(f"k{i + 1}", table=alias)
                )
                for i, (outer, safe) in enumerate(zip(pairs, null_safe))
            ]
        )
    select = select.join(exp.table_(name, alias=alias), join_type="cross", copy=False)
    anchor.replace(condition)
    return select


def _row_not_in(inner: exp.Select, outer: list, select: exp.Select, ctx) -> exp.Select:
    """`(a, b) NOT IN (SELECT x, y …)`, a conjunct of WHERE -> the rows for
    which NOT EXISTS (SELECT … WHERE … AND (x = a OR x IS NULL OR a IS NULL)
    AND …): NOT IN holds where every row of the subquery differs in some
    column, both sides not NULL (a NULL makes a column's comparison NULL,
    so NOT IN is not true, which WHERE drops as false). A column declared
    NOT NULL needs no test that it is NULL."""
    body = inner.copy()
    if is_grouped(body) or body.args.get("distinct") or body.args.get("limit"):
        body.set(  # its rows, as a derived table
            "expressions",
            [
                exp.alias_(e.unalias(), f"k{i + 1}")
                for i, e in enumerate(body.expressions)
            ],
        )
        body = exp.select(
            *[exp.column(f"k{i + 1}", table="__rows") for i in range(len(outer))]
        ).from_(body.subquery("__rows"))
    values = [e.unalias() for e in body.expressions]
    conds = []
    for value, row in zip(values, outer):
        sides = [exp.EQ(this=value.copy(), expression=row.copy())]
        if not never_null(value, body, ctx.relations):
            sides.append(exp.Is(this=value.copy(), expression=exp.null()))
        if not never_null(row, select, ctx.relations):
            sides.append(exp.Is(this=row.copy(), expression=exp.null()))
        conds.append(exp.or_(*sides) if len(sides) > 1 else sides[0])
    where = body.args.get("where")
    body.set("expressions", [exp.Literal.number(1)])
    body.set(
        "where", exp.Where(this=exp.and_(*([where.this] if where else []), *conds))
    )
    return body


def _selects_group_keys(inner: exp.Select) -> bool:
    """Whether every column a grouped subquery selects is a GROUP BY key
    (then its rows are already distinct)."""
    group = inner.args.get("group")
    keys = {e.sql() for e in group.expressions} if group is not None else set()
    return all(e.unalias().sql() in keys for e in inner.expressions)


def _scalar(where: exp.Where, node: exp.Subquery, ctx: Context) -> None:
    """`x op (SELECT aggregate … [WHERE inner = outer …])`."""
    if isinstance(node.this, exp.Select):
        node.set("this", _merge_projection(node.this))
    node = _fold_constants(node)
    anchor = node.parent
    while isinstance(anchor, exp.Paren):
        anchor = anchor.parent
    ops = _COMPARISONS.get(type(anchor))
    if ops is None or not _in_conjunction(anchor, where):
        raise unsupported(
            "a scalar subquery is supported as one side of a comparison that is "
            "a conjunct of WHERE",
            node,
        )
    left, right = anchor.this, anchor.expression
    on_right = right.find(exp.Subquery) is node or right is node
    value, op = (left, ops[0]) if on_right else (right, ops[1])
    if value.find(exp.Subquery, exp.Select) is not None:
        raise unsupported("a comparison of two subqueries is not supported", anchor)
    _scalar_test(ctx, node.this, value, op, anchor, node)
    anchor.replace(exp.true())


def _scalar_test(ctx, subquery, value, op, anchor, node, negated=False) -> None:
    """The test `value op (subquery)` (`negated`: NOT of it, TRUE where
    either side is NULL) on the rows of the outer query."""
    inner, keys, null_safe = _decorrelate_scalar(subquery)
    inner = reduce_to_read_keys(inner, keys, null_safe, anchor, ctx)
    name, sub = virtual(ctx, inner, "scalar_")
    ctx.tests.append(
        PendingTest(
            "scalar",
            name,
            keys,
            anchor,
            value=value.copy(),
            op=op,
            default=_empty_value(sub, sub.outputs[len(keys)].expr, node),
            negated=negated,
            null_safe=null_safe,
        )
    )


# `inner_e OP outer_e` -> (the test `outer_e op' bound`, the bound's aggregate)
_BOUNDS = {
    exp.LT: ("gt", exp.Min),
    exp.LTE: ("ge", exp.Min),
    exp.GT: ("lt", exp.Max),
    exp.GTE: ("le", exp.Max),
}


def _aggregates_all(inner: exp.Expression) -> bool:
    """Whether a subquery aggregates its whole input into one row: an
    aggregate (outside a window) or HAVING, and no GROUP BY."""
    if not isinstance(inner, exp.Select) or inner.args.get("group"):
        return False
    return inner.args.get("having") is not None or any(
        agg.find_ancestor(exp.Window) is None
        for e in inner.expressions
        for agg in e.find_all(exp.AggFunc)
    )


def aggregate_exists_value(node: exp.Exists) -> exp.Expression | None:
    """`EXISTS (SELECT SUM(c) … [HAVING h])` without GROUP BY as a value
    anywhere (the SELECT list, under OR or NOT): TRUE without HAVING, else
    `(SELECT CASE WHEN h THEN 1 ELSE 0 END …) = 1`, a scalar subquery of
    its aggregates (see `_aggregate_exists`); None for any other EXISTS or
    a HAVING that reads the outer query."""
    inner = node.this
    if not _aggregates_all(inner) or any(
        inner.args.get(arg) is not None for arg in ("limit", "offset", "qualify")
    ):
        return None
    having = inner.args.get("having")
    if having is None:
        return exp.true()
    if _reads_outside(inner, having):
        return None
    return exp.EQ(
        this=exp.Subquery(this=_having_flag(inner)), expression=exp.Literal.number(1)
    )


def _reads_outside(inner: exp.Select, e: exp.Expression) -> bool:
    """Whether `e`, a part of subquery `inner`, reads an outer column."""
    local = from_aliases(inner)
    return any(c.table.lower() not in local for c in e.find_all(exp.Column))


def _aggregates_of(inner: exp.Select, value: exp.Expression) -> exp.Select:
    """Subquery `inner` selecting `value` (over its aggregates) instead,
    without its HAVING."""
    scalar = inner.copy()
    scalar.set("having", None)
    scalar.set("distinct", None)
    scalar.set("expressions", [value.copy()])
    return scalar


def _compared_aggregates(inner: exp.Select, cond: exp.Expression):
    """(the side over the subquery's aggregates, the other, the test `other
    op aggregates`) of a comparison in its HAVING whose other side reads the
    outer row and no aggregate; None for any other condition."""
    ops = _COMPARISONS.get(type(cond))
    if ops is None:
        return None
    left, right = cond.this, cond.expression

    def aggregates(e: exp.Expression) -> bool:
        return e.find(exp.AggFunc) is not None and not _reads_outside(inner, e)

    if aggregates(left) and right.find(exp.AggFunc) is None:
        return left, right, ops[1]
    if aggregates(right) and left.find(exp.AggFunc) is None:
        return right, left, ops[0]
    return None


def _having_flag(inner: exp.Select) -> exp.Select:
    """`SELECT CASE WHEN h THEN 1 ELSE 0 END …` of a subquery with HAVING h:
    whether HAVING keeps its one row (NULL as FALSE)."""
    flag = exp.Case(
        ifs=[
            exp.If(this=inner.args["having"].this.unnest(), true=exp.Literal.number(1))
        ],
        default=exp.Literal.number(0),
    )
    return _aggregates_of(inner, flag)


def _aggregate_exists(select, node, anchor, negated: bool, ctx) -> exp.Select:
    """`EXISTS (SELECT SUM(c) … [HAVING h])` without GROUP BY: an aggregate
    of the whole input has one row even over no rows (SUM NULL, COUNT 0),
    so the EXISTS holds unless HAVING drops that row. Without HAVING it is
    TRUE; with it, the test of h on the subquery's aggregates for the outer
    row (a scalar test: `(SELECT CASE WHEN h THEN 1 ELSE 0 END …) = 1`, or,
    where h compares its aggregates with the outer row, that comparison
    with the aggregate side as the scalar subquery)."""
    inner = node.this
    for arg in ("limit", "offset", "qualify"):
        if inner.args.get(arg) is not None:
            raise unsupported(
                f"{arg.upper()} in an EXISTS over an aggregate without GROUP BY",
                inner.args[arg],
            )
    having = inner.args.get("having")
    if having is None:
        anchor.replace(exp.false() if negated else exp.true())
        return select
    cond = having.this.unnest()
    if not _reads_outside(inner, cond):
        scalar, value, op = _having_flag(inner), exp.Literal.number(1), "eq"
    else:
        compared = _compared_aggregates(inner, cond)
        if compared is None:
            raise unsupported(
                "an EXISTS over an aggregate whose HAVING reads the outer query "
                "must compare the aggregates (one side) with the outer row's "
                "values (the other)",
                having,
            )
        aggregated, value, op = compared
        scalar = _aggregates_of(inner, aggregated)
    _scalar_test(ctx, scalar, value, op, anchor, node, negated=negated)
    anchor.replace(exp.true())
    return select


def bounded_exists(inner: exp.Expression):
    """`EXISTS (SELECT … WHERE <key pairs> AND inner_e < outer_e)` holds
    exactly where `outer_e > MIN(inner_e)` over the rows of the key (for
    `inner_e > outer_e`: `outer_e < MAX(inner_e)`, and so on, NULLs
    matching nothing either way): as that scalar test, a row reads one value instead
    of every inner row of its key, and a change of the bound re-checks only
    the rows between its old and new value (a window's first group in a
    partition, over a whole table). (subquery, outer_e, op) for such an
    EXISTS, else None. A quotient may be NaN, which SQL orders above every
    number but MIN/MAX keep as any other value: not rewritten."""
    if not isinstance(inner, exp.Select) or is_grouped(inner):
        return None
    shaped = ("group", "having", "limit", "offset", "qualify", "distinct")
    if any(inner.args.get(arg) for arg in shaped):
        return None
    keep, correlated, is_inner = split_correlation(inner)
    bounds = [
        c for c in correlated if column_equality(c, is_inner, null_safe=True) is None
    ]
    if len(bounds) != 1 or type(bounds[0]) not in _BOUNDS:
        return None
    (cond,) = bounds

    def reads_only(e: exp.Expression, own: bool) -> bool:
        columns = list(e.find_all(exp.Column))
        return bool(columns) and all(is_inner(c) == own for c in columns)

    if reads_only(cond.this, True) and reads_only(cond.expression, False):
        inner_e, outer_e, kind = cond.this, cond.expression, type(cond)
    elif reads_only(cond.expression, True) and reads_only(cond.this, False):
        inner_e, outer_e, kind = cond.expression, cond.this, SWAPPED[type(cond)]
    else:
        return None
    special = (exp.Subquery, exp.Select, exp.AggFunc, exp.Window, exp.Div, exp.Sqrt)
    if inner_e.find(*special) is not None or outer_e.find(*special) is not None:
        return None
    op, bound = _BOUNDS[kind]
    scalar = inner.copy()
    scalar.set("expressions", [bound(this=inner_e.copy())])
    rest = keep + [c for c in correlated if c is not cond]
    scalar.set("where", exp.Where(this=exp.and_(*rest)) if rest else None)
    return scalar, outer_e, op


_ARITHMETIC = (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Paren, exp.Neg)


def _fold_constants(node: exp.Subquery) -> exp.Subquery:
    """`0.5 * (SELECT e …)` -> `(SELECT 0.5 * (e) …)`: arithmetic with
    constants around a scalar subquery moves into its one SELECT item (one
    row gives one row, none still gives NULL), so the subquery is a side of
    the comparison."""
    top = node
    while isinstance(top.parent, _ARITHMETIC):
        others = [c for c in top.parent.iter_expressions() if c is not top]
        if any(o.find(exp.Column, exp.Subquery, exp.Select) for o in others):
            break
        top = top.parent
    inner = node.this
    if (
        top is node
        or not isinstance(inner, exp.Select)
        or len(inner.expressions) != 1
        or isinstance(inner.expressions[0], exp.Star)
        or inner.args.get("distinct") is not None
    ):
        return node
    inner = inner.copy()
    item = inner.expressions[0]
    folded = top.copy()
    folded.find(exp.Subquery).replace(exp.Paren(this=item.unalias().copy()))
    inner.set("expressions", [exp.alias_(folded, item.alias_or_name or "v")])
    new = exp.Subquery(this=inner)
    top.replace(new)
    return new


def _merge_projection(select: exp.Select) -> exp.Select:
    """`SELECT c FROM (SELECT …, e AS c, …) AS d` (nothing else: no WHERE, no
    join, no aggregate) -> `SELECT e AS c …`, the derived table's own query:
    a scalar subquery over a CTE that computes the value (TPC-DS Q23's
    `(SELECT * FROM max_store_sales)`)."""
    from_ = select.args.get("from_") or select.args.get("from")
    if (
        from_ is None
        or not isinstance(from_.this, exp.Subquery)
        or not isinstance(from_.this.this, exp.Select)
        or len(select.expressions) != 1
        or any(
            select.args.get(arg)
            for arg in ("joins", "where", "group", "having", "distinct", "limit")
        )
        or is_grouped(select)
    ):
        return select
    inner = from_.this.this
    (item,) = select.expressions
    if isinstance(item, exp.Star):
        chosen = list(inner.expressions)
    elif isinstance(item.unalias(), exp.Column):
        name = item.unalias().name.lower()
        chosen = [e for e in inner.expressions if e.alias_or_name.lower() == name]
    else:
        return select
    if len(chosen) != 1 or isinstance(chosen[0], exp.Star):
        return select
    merged = inner.copy()
    merged.set("expressions", [chosen[0].copy()])
    return _merge_projection(merged)


def virtual(
    ctx: Context, inner: exp.Expression, prefix: str, text: str | None = None
) -> tuple[str, Query]:
    """Compile `inner` as its own query and declare its result as a relation
    the outer query can join. The same text over the same relations is
    compiled once per program (a window's rewriting reads one derived table
    at several depths; `text`: `inner`'s, when the caller has it). A
    scalar subquery `single_rows` made aggregate gets its count of rows as
    a last column, the relation's `guard`."""
    count = inner.meta.get(ROWS)
    if count is not None:
        column = inner.meta.get(GUARD_COLUMN, COLUMN)
        inner = inner.copy()
        inner.append("expressions", exp.alias_(count.copy(), column))
        text = None
    key = (
        inner.sql(copy=False) if text is None else text,
        tuple((t.name, ctx.relations.get(t.name)) for t in inner.find_all(exp.Table)),
    )
    query = ctx.compiled.get(key)
    if query is None:
        query = ctx.compiled[key] = ctx.compile(inner, ctx.inner())
    name = ctx.fresh_name(prefix)
    columns = tuple(o.name for o in query.outputs)
    if len(set(columns)) != len(columns):
        raise unsupported(
            "a subquery's columns need distinct names (use aliases)", inner
        )
    types = tuple(t or "float" for t in output_types(query))  # NULL: any type
    scales = output_scales(query, types)
    guard = len(columns) - 1 if count is not None else None
    singles = output_singles(query)
    ctx.relations[name] = Relation(
        name, columns, types, scales, guard=guard, singles=singles
    )
    ctx.subqueries.append((name, query))
    return name, query


def split_correlation(inner: exp.Select):
    """The conjuncts of a subquery's WHERE split into those on its own
    tables and those that read the outer query, and whether a column is
    the subquery's own."""
    local = from_aliases(inner)

    def is_inner(col: exp.Column) -> bool:
        return col.table.lower() in local

    where = inner.args.get("where")
    conds = []
    for cond in sql_conjuncts(where.this) if where is not None else []:
        conds += _common_conjuncts(cond)
    keep, correlated = [], []
    for cond in conds:
        # a subquery in the condition reads its own tables
        nested = {
            (t.alias_or_name or "").lower()
            for t in cond.find_all(exp.Table, exp.Subquery)
        }
        if all(
            is_inner(c) or c.table.lower() in nested for c in cond.find_all(exp.Column)
        ):
            keep.append(cond)
        else:
            correlated.append(cond)
    return keep, correlated, is_inner


def _common_conjuncts(cond: exp.Expression) -> list[exp.Expression]:
    """`(a AND b) OR (a AND c)` -> `[a, b OR c]`: the conjuncts every side of
    an OR has, taken out of it (TPC-DS Q41's correlation inside each
    side); any other condition as it is."""
    sides = []
    stack = [cond]
    while stack:
        node = stack.pop()
        while isinstance(node, exp.Paren):
            node = node.this
        if isinstance(node, exp.Or):
            stack += [node.expression, node.this]
        else:
            sides.append(sql_conjuncts(node))
    if len(sides) < 2:
        return [cond]
    common = [c for c in sides[0] if all(c in side for side in sides[1:])]
    if not common:
        return [cond]
    rests = [[c for c in side if c not in common] for side in sides]
    if any(not rest for rest in rests):  # a side that is just the common part
        return [c.copy() for c in common]
    rest = exp.or_(*[exp.and_(*[c.copy() for c in r]) for r in rests])
    return [c.copy() for c in common] + [rest]


def column_equality(
    cond, is_inner, null_safe: bool = False
) -> tuple[exp.Column, exp.Column] | None:
    """`inner column = outer column` as (inner, outer), else None;
    `null_safe`: also `IS NOT DISTINCT FROM`."""
    kinds = (exp.EQ, exp.NullSafeEQ) if null_safe else exp.EQ
    if (
        isinstance(cond, kinds)
        and isinstance(cond.this, exp.Column)
        and isinstance(cond.expression, exp.Column)
        and is_inner(cond.this) != is_inner(cond.expression)
    ):
        a, b = cond.this, cond.expression
        return (a, b) if is_inner(a) else (b, a)
    return None


def keyed_equality(cond, is_inner) -> tuple[exp.Column, exp.Expression] | None:
    """`inner column = outer column`, or `= an expression of outer columns`
    (`c2.k = c.k + 1`), as (inner, outer), else None: the expression is a
    key computed from the outer row, as a column is."""
    if not isinstance(cond, exp.EQ):
        return None
    pair = column_equality(cond, is_inner)
    if pair is not None:
        return pair
    for a, b in ((cond.this, cond.expression), (cond.expression, cond.this)):
        columns = list(b.find_all(exp.Column))
        if (
            isinstance(a, exp.Column)
            and is_inner(a)
            and columns
            and not any(is_inner(c) for c in columns)
            and b.find(exp.Subquery, exp.Select, exp.AggFunc, exp.Window) is None
        ):
            return a, b
    return None


def _decorrelate(inner: exp.Expression):
    """EXISTS (SELECT … WHERE inner = outer AND …) -> a SELECT DISTINCT of the
    inner columns the correlation reads, the outer columns matched with the
    first of them (equalities), the rest of the correlation over the outer
    columns and `__inner.kN` (None when it is all equalities), and per
    equality whether it is IS NOT DISTINCT FROM (window levels' partitions:
    a key all the same, so a change re-tests only its partition's rows)."""
    if not isinstance(inner, exp.Select):
        raise unsupported("EXISTS needs a SELECT", inner)
    inner = inner.copy()
    keep, correlated, is_inner = split_correlation(inner)
    pairs, inner_cols, others, null_safe = [], [], [], []
    for cond in correlated:
        eq = column_equality(cond, is_inner, null_safe=True)
        if eq is not None:
            inner_cols.append(eq[0].copy())
            pairs.append(eq[1].copy())
            null_safe.append(isinstance(cond, exp.NullSafeEQ))
        else:
            others.append(cond)
    rest = None
    if others:
        extra: list[exp.Column] = []
        for cond in others:
            for col in cond.find_all(exp.Column):
                if is_inner(col) and col not in extra and col not in inner_cols:
                    extra.append(col.copy())
        columns = inner_cols + extra
        rest = exp.and_(*[c.copy() for c in others])
        for col in list(rest.find_all(exp.Column)):
            if is_inner(col):
                col.replace(exp.column(f"k{columns.index(col) + 1}", table=INNER))
        inner_cols = columns
    if inner.args.get("group") is not None and inner_cols:
        # a group of the subquery holds one value of each correlated column
        # for an outer row: grouped by them too, its groups are the outer
        # row's own
        having = inner.args.get("having")
        if others or (having is not None and _reads_outside(inner, having)):
            raise unsupported(
                "EXISTS (SELECT … GROUP BY …) may refer to the outer query only "
                "by `inner column = outer column` conditions of its WHERE",
                inner,
            )
        group = inner.args["group"]
        known = {e.sql() for e in group.expressions}
        for col in inner_cols:
            if col.sql() not in known:
                group.append("expressions", col.copy())
    if inner_cols:
        inner.set(
            "expressions",
            [exp.alias_(c, f"k{i + 1}") for i, c in enumerate(inner_cols)],
        )
    else:  # uncorrelated: whether the subquery has a row at all
        inner.set("expressions", [exp.alias_(exp.true(), "k1")])
    inner.set("distinct", exp.Distinct())
    inner.set("where", exp.Where(this=exp.and_(*keep)) if keep else None)
    return inner, pairs, rest, tuple(null_safe)


def _decorrelate_scalar(inner: exp.Expression):
    """A scalar subquery -> its query grouped by the inner columns of its
    correlation (k1, …, then the value), the outer columns they match and
    whether each is matched by IS NOT DISTINCT FROM."""
    if not isinstance(inner, exp.Select) or len(inner.expressions) != 1:
        raise unsupported("a scalar subquery must select one value", inner)
    if not is_grouped(inner) or inner.args.get("group") or inner.args.get("having"):
        raise unsupported(
            "a scalar subquery must compute one value with an aggregate "
            "(without GROUP BY)",
            inner,
        )
    if inner.args.get("distinct") is not None:
        raise unsupported("SELECT DISTINCT in a scalar subquery", inner)
    inner = inner.copy()
    keep, correlated, is_inner = split_correlation(inner)
    inner_cols, outer_cols, null_safe = [], [], []
    for cond in correlated:
        eq = keyed_equality(cond, is_inner) or column_equality(
            cond, is_inner, null_safe=True
        )
        if eq is None:
            raise unsupported(
                "a scalar subquery may refer to the outer query only by "
                "`inner column = outer column` (or an expression of outer "
                "columns, or IS NOT DISTINCT FROM an outer column) conditions, "
                "a COUNT, SUM, MIN or MAX also by one <, <=, >, >= between an "
                "inner and an outer column of one table",
                cond,
            )
        inner_cols.append(eq[0].copy())
        outer_cols.append(eq[1].copy())
        null_safe.append(isinstance(cond, exp.NullSafeEQ))
    value = inner.expressions[0].unalias().copy()
    inner.set(
        "expressions",
        [exp.alias_(c, f"k{i + 1}") for i, c in enumerate(inner_cols)]
        + [exp.alias_(value, "v")],
    )
    inner.set("where", exp.Where(this=exp.and_(*keep)) if keep else None)
    if inner_cols:
        inner.set("group", exp.Group(expressions=[c.copy() for c in inner_cols]))
    return inner, outer_cols, tuple(null_safe)


def _first_present(value, args):
    """COALESCE: the first operand that is not NULL."""
    return next((v for v in map(value, args) if v is not None), None)


def _case(value, args):
    """CASE WHEN c1 THEN v1 … ELSE d END: a NULL condition is not TRUE."""
    for cond, then in zip(args[:-1:2], args[1:-1:2]):
        if value(cond) is True:
            return value(then)
    return value(args[-1])


def _compared(op):
    def compare(value, args):
        a, b = map(value, args)
        return None if a is None or b is None else _COMPARE[op](a, b)

    return compare


_COMPARE = {op: getattr(operator, op) for op in ("eq", "ne", "lt", "le", "gt", "ge")}
# the operators a scalar subquery's value over no rows is computed through
# where a NULL operand need not make it NULL (COALESCE(SUM(x), 0) is 0)
_OVER_NO_ROWS = {
    "coalesce": _first_present,
    "case": _case,
    "isnull": lambda value, args: value(args[0]) is None,
    "nullif": lambda value, args: (
        None if (a := value(args[0])) is None or a == value(args[1]) else a
    ),
    "to_float": lambda value, args: (
        None if (a := value(args[0])) is None else float(a)
    ),
    **{op: _compared(op) for op in _COMPARE},
    "and": lambda value, args: _three_valued(list(map(value, args)), False),
    "or": lambda value, args: _three_valued(list(map(value, args)), True),
    "not": lambda value, args: None if (a := value(args[0])) is None else not a,
}


def _three_valued(values, decisive: bool):
    """AND (decisive FALSE) or OR (decisive TRUE) of SQL's truth values."""
    if decisive in values:
        return decisive
    return None if None in values else not decisive


def _empty_value(query: Query, expr, node):
    """The value of a scalar subquery over no rows (COUNT 0, SUM NULL, …)."""
    if isinstance(expr, Lit):
        return expr.value
    if isinstance(expr, AggRef):
        kind = query.aggregates[expr.index].kind
        return 0 if kind in ("count", "count_distinct") else None
    if isinstance(expr, Op) and expr.op in ("add", "sub", "mul", "div", "neg"):
        args = [_empty_value(query, a, node) for a in expr.args]
        if None in args:
            return None
        if expr.op == "neg":
            return -args[0]
        a, b = args
        if expr.op == "div":
            return None if b == 0 else a / b
        return a + b if expr.op == "add" else a - b if expr.op == "sub" else a * b
    if isinstance(expr, Op) and expr.op in _OVER_NO_ROWS:
        return _OVER_NO_ROWS[expr.op](lambda a: _empty_value(query, a, node), expr.args)
    if isinstance(expr, Op) and expr.op not in NULL_ABSORBING:
        # NULL where an operand is (MAX(d) - INTERVAL 1 DAY over no rows)
        args = [a for a in expr.args if not isinstance(a, Lit)]
        if any(_empty_value(query, a, node) is None for a in args):
            return None
    raise unsupported(
        "a scalar subquery's value must be arithmetic over aggregates and " "constants",
        node,
    )


def _correlated_in(
    inner: exp.Select, outer: list, negated: bool, node: exp.In
) -> exp.Select:
    """`e IN (SELECT v … WHERE <correlated>)` as the subquery of an EXISTS:
    `SELECT 1 … WHERE <correlated> AND v = e`. Under NOT, SQL's NULL rules:
    `e NOT IN S` holds where S has no v equal to e, no NULL v, and e is not
    NULL unless S is empty, so the rows that make it fail are those with
    `v = e OR v IS NULL OR e IS NULL` (NOT EXISTS of them)."""
    if is_grouped(inner):
        raise unsupported(
            "IN a correlated subquery that aggregates is not supported", node
        )
    matches = []
    for value, e in zip(inner.expressions, outer):
        value = value.unalias()
        equal = exp.EQ(this=value.copy(), expression=e.copy())
        if negated:
            equal = exp.Paren(
                this=exp.or_(
                    equal, value.copy().is_(exp.null()), e.copy().is_(exp.null())
                )
            )
        matches.append(equal)
    exists = inner.copy()
    exists.set("distinct", None)
    exists.set("expressions", [exp.Literal.number(1)])
    where = exists.args.get("where")
    conditions = ([where.this] if where is not None else []) + matches
    exists.set("where", exp.Where(this=exp.and_(*conditions)))
    return exists


def _in_conjunction(node: exp.Expression, where: exp.Where) -> bool:
    """Whether `node` is reached from WHERE through ANDs (and parentheses) only."""
    up = node.parent
    while up is not where:
        if not isinstance(up, (exp.And, exp.Paren)):
            return False
        up = up.parent
    return True


def output_types(query: Query | SetQuery) -> tuple[str, ...]:
    """The types of a query's output columns (None: a NULL, any type)."""
    if isinstance(query, (SetQuery, WindowQuery)):
        return query.types
    return tuple(output_type(query, o.expr) for o in query.outputs)


def output_scales(query: Query | SetQuery, types) -> tuple[int | None, ...]:
    """Decimal digits each output column holds exactly (0: an integer; None:
    a float), so that sums over a subquery's DECIMAL columns stay exact."""
    if isinstance(query, WindowQuery):
        return query.scales
    if isinstance(query, SetQuery):  # exact where every side is (NULLs aside)
        sides = [
            (s, output_scales(s, output_types(s))) for s in (query.left, query.right)
        ]
        out = []
        for i, t in enumerate(types):
            digits = [d[i] for s, d in sides if not _null_column(s, i)]
            if t == "int":
                out.append(0)
            else:
                out.append(max(digits) if digits and None not in digits else None)
        return tuple(out)
    return tuple(
        0 if t == "int" else query_digits(query, o.expr)
        for t, o in zip(types, query.outputs)
    )


def output_singles(query: Query | SetQuery) -> tuple[int, ...]:
    """The output columns of `query` that are REALs (DuckDB's 4-byte floats:
    a REAL column, MIN/MAX of one, REAL arithmetic), so that the query
    reading them computes with them as DuckDB does (`expressions.is_single`);
    none of a set operation or a window view (read as DOUBLEs)."""
    if not isinstance(query, Query):
        return ()
    leaves = _QuerySingles(query)
    return tuple(i for i, o in enumerate(query.outputs) if is_single(leaves, o.expr))


class _QuerySingles:
    """`expressions.is_single`'s leaves of a compiled query: its variables
    and aggregates."""

    def __init__(self, query: Query):
        self.query = query

    def single_leaf(self, e) -> bool:
        if isinstance(e, Var):
            found = column_of(self.query, e.name)
            if found is not None:
                return found[1] in found[0].singles
            computed = [
                x for a in self.query.atoms for v, x in a.derived if v == e.name
            ]
            return bool(computed) and is_single(self, computed[0])
        if isinstance(e, Ref) and 0 <= e.atom < len(self.query.atoms):
            # a column of an atom's row (in a computed variable)
            rel = self.query.relation(self.query.atoms[e.atom].relation)
            return e.column in rel.singles
        if isinstance(e, AggRef):
            agg = self.query.aggregates[e.index]
            if agg.kind not in PICKS:
                return False
            arg = agg.computed if agg.computed is not None else Var(agg.arg)
            return is_single(self, arg)
        return False


def _null_column(query: Query | SetQuery, i: int) -> bool:
    """Whether output column `i` of a set operation's side is NULL in every
    row (an outer join's padding)."""
    if isinstance(query, SetQuery):
        return _null_column(query.left, i) and _null_column(query.right, i)
    if isinstance(query, WindowQuery):
        inputs = len(query.input.outputs)
        return i < inputs and _null_column(query.input, i)
    expr = query.outputs[i].expr
    return isinstance(expr, Lit) and expr.value is None


def output_type(query: Query, expr) -> str:
    """The type of a subquery's output column, for the relation it becomes."""

    def column_type(atom: Atom, e) -> str | None:
        rel = query.relation(atom.relation)
        return rel.types[e.column] if isinstance(e, Ref) else lit_type(e)

    def leaf(e) -> str | None:
        if isinstance(e, Var):
            found = column_of(query, e.name)
            if found is not None:
                rel, column = found
                return rel.types[column]
            for atom in query.atoms:
                for var, derived in atom.derived:  # EXTRACT(…), SUBSTRING(…)
                    if var == e.name:
                        return infer_type(derived, lambda x: column_type(atom, x))
            return None
        if isinstance(e, AggRef):
            agg = query.aggregates[e.index]
            if agg.kind in ("count", "count_distinct"):
                return "int"
            if agg.kind.startswith("string_agg"):
                return "str"
            if agg.kind.startswith("array_agg"):  # what a subquery's view holds
                raise unsupported(
                    "ARRAY_AGG/LIST is supported in the outermost SELECT list "
                    "only (its value, a LIST, is no column of a subquery's view)"
                )
            if agg.kind == "sum_distinct":  # an INTEGER's is an integer
                return "int" if agg.scale == 0 else "float"
            if agg.kind in PICKS and agg.computed is not None:
                return infer_type(agg.computed, leaf)
            if agg.kind in PICKS:
                return leaf(Var(agg.arg))
            if agg.computed is not None:
                return "int" if agg.kind == "sum" and agg.scale == 0 else "float"
            scales = [query.channels[c - 1].scale if c else 0 for _, c in agg.terms]
            exact_ints = all(sc == 0 for sc in scales) and all(
                isinstance(k, int) for k, _ in agg.terms
            )
            return "int" if exact_ints and agg.kind == "sum" else "float"
        return lit_type(e)

    return infer_type(expr, leaf)
