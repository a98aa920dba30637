"""Frontend: SQL text (sqlglot) -> `dynyan.compiler.ir.Query`, as passes.

The file holds CREATE TABLE statements (or they come from a separate schema
text), CREATE VIEWs if it likes, and exactly one query (`statements`). The
query's tree then goes through `TREE_PASSES` once, and each SELECT in it
through `SELECT_PASSES` before `build` turns it into a `Query`; subqueries
become inner views compiled the same way. Each pass is one module of
`passes/` with one function named after it (as sqlglot's optimizer rules).

>>> print(parse_query(
...     "CREATE TABLE r (a INT, b INT); CREATE TABLE s (b INT, c INT);"
...     "SELECT r.a, s.c FROM r JOIN s ON r.b = s.b WHERE r.a > 3"))
SELECT a AS a, c AS c
  atom r(a, b) | (r.a > 3)
  atom s(b, c)
"""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp

from ...errors import PaddedLeafUnplaced
from ..ir import AggRef, Query, SetQuery, WindowFunction, WindowQuery, base_relations
from .build import SelectBuilder
from .context import NATIVE, Context
from .diagnostics import DIALECT, unsupported
from .expressions import shift_date
from .passes.aggregate_spellings import aggregate_spellings
from .passes.banded_subqueries import banded_subqueries
from .passes.check_supported import check_supported
from .passes.computed_correlations import computed_correlations
from .passes.correlated_derived import correlated_derived
from .passes.constant_subqueries import constant_subqueries
from .passes.decompose_cycles import choose_bags, decompose_cycles
from .passes.distinct_on import distinct_on
from .passes.first_rows import first_rows
from .passes.grouping_sets import grouping_sets
from .passes.having_subqueries import having_subqueries
from .passes.inline_views import inline_views
from .passes.joined_group_keys import joined_group_keys
from .passes.join_subqueries import join_subqueries
from .passes.keyed_picks import keyed_picks
from .passes.lateral_joins import lateral_joins
from .passes.membership_flags import membership_flags
from .passes.merge_projections import merge_projections
from .passes.name_outputs import name_outputs
from .passes.native_windows import native_windows
from .passes.named_windows import named_windows
from .passes.nested_joins import nested_joins
from .passes.null_treatment import null_treatment
from .passes.order_limit import order_limit
from .passes.outer_joins import UNPADDED, outer_joins, unpadded
from .passes.pivots import pivots
from .passes.qualify_names import qualify_names
from .passes.outer_equalities import outer_equalities
from .passes.quantified_subqueries import quantified_subqueries
from .passes.relational_division import relational_division
from .passes.scalar_items import scalar_items
from .passes.select_aliases import select_aliases
from .passes.semi_joins import semi_joins
from .passes.single_rows import single_rows
from .passes.spread_aggregates import spread_aggregates
from .passes.star_columns import star_columns
from .passes.subquery_limits import subquery_limits
from .passes.top_rows import top_rows
from .passes.unnest_subqueries import output_scales, output_types, unnest_subqueries
from .passes.unused_columns import unused_columns
from .passes.values_tables import values_tables
from .passes.window_aggregates import window_aggregates
from .passes.wrap_set_operations import wrap_set_operations
from .statements import parse_schema, read_program

# Over the whole query, once, in this order.
TREE_PASSES = (
    nested_joins,  # FROM r JOIN (s JOIN t ON …) ON … -> the joins of the FROM
    values_tables,  # VALUES in FROM -> a table of constant rows
    inline_views,  # WITH and CREATE VIEW -> derived tables
    pivots,  # PIVOT -> a grouped SELECT with FILTERs, UNPIVOT -> a UNION ALL
    semi_joins,  # a SEMI/ANTI JOIN b ON c -> WHERE [NOT] EXISTS (… b WHERE c)
    relational_division,  # NOT EXISTS (… NOT EXISTS (…)) -> keys IN (a count per key)
    star_columns,  # MAX(COLUMNS('^a')) -> MAX(r.a1) AS a1, MAX(r.a2) AS a2
    named_windows,  # OVER w … WINDOW w AS (…) -> the window spelled out
    select_aliases,  # OVER (ORDER BY a2), HAVING n > 1 -> the items a2 and n name
    null_treatment,  # IGNORE/RESPECT NULLS -> plain functions (or refused)
    distinct_on,  # DISTINCT ON (k) k, o … ORDER BY o -> GROUP BY k with MIN/MAX(o)
    subquery_limits,  # ORDER BY … LIMIT in a subquery -> ROW_NUMBER() in QUALIFY
    unused_columns,  # a windowed derived table's items nobody reads -> dropped
    aggregate_spellings,  # FILTER (WHERE …), GROUP BY ALL -> plain aggregation
    spread_aggregates,  # VARIANCE, STDDEV, CORR, REGR_* -> arithmetic over SUM, COUNT
    first_rows,  # WHERE n <= k over a derived table's ROW_NUMBER() -> QUALIFY in it
    top_rows,  # QUALIFY RANK() … <= n -> only rows up to a partition's n-th key
    native_windows,  # windows over a SELECT's rows -> a view of ordered partitions
    window_aggregates,  # AGG(x) OVER (PARTITION BY …) -> a join with the partitions
    grouping_sets,  # ROLLUP, CUBE, GROUPING SETS -> UNION ALL of GROUP BYs
    wrap_set_operations,  # a whole query that is a UNION -> a derived table
    check_supported,  # refuse what cannot be maintained, by name
    constant_subqueries,  # (SELECT 1) without FROM -> the constant
    name_outputs,  # every SELECT item gets its name as an alias
    having_subqueries,  # HAVING with a subquery -> WHERE over the groups
    correlated_derived,  # (… FROM (… WHERE s.k = r.k) t) -> (… FROM (… s.k) t WHERE t.k = r.k)
    qualify_names,  # every name resolved and qualified
    join_subqueries,  # a subquery in ON -> in WHERE, or filtering the LEFT JOIN's table
    outer_equalities,  # a subquery's inner = outer: inner in the subqueries nested in it
    merge_projections,  # (SELECT t.k AS c FROM t) AS d -> t AS d, d.c read as d.k
    lateral_joins,  # LATERAL (SELECT …) -> a join with a derived table
    computed_correlations,  # a correlation through u.d + 1 -> through a computed column
    banded_subqueries,  # (SELECT AGG … keys AND s.v < r.w) -> keyed by (keys, w)
    joined_group_keys,  # GROUP BY r.a || s.b -> groups of a derived table of the join
    keyed_picks,  # ANY_VALUE(c.x) … GROUP BY c's PRIMARY KEY -> MIN(c.x)
    quantified_subqueries,  # x op ANY/ALL (subquery) -> [NOT] EXISTS
    single_rows,  # (SELECT e …) without an aggregate -> MIN(e), its rows counted
    membership_flags,  # x IN (subquery) under OR -> a LEFT JOIN flag
    scalar_items,  # (SELECT AGG(…)) in the SELECT list -> a cross join with it
    outer_joins,  # LEFT/RIGHT/FULL JOIN -> UNION ALL of matched and unmatched rows
)
# On each SELECT, just before it is built.
SELECT_PASSES = (
    order_limit,  # ORDER BY / LIMIT / OFFSET of the outermost query
    unnest_subqueries,  # subqueries -> inner views (virtual relations)
)


def parse_query(
    sql: str,
    schema: str | None = None,
    passes=None,
    padded_leaves: bool = True,
    stats=None,
    native_windows: bool = True,
) -> Query:
    """Parse `sql` (CREATE TABLEs + one query) into a `Query` (`passes`: the
    tree passes to run, for tests; all by default; `padded_leaves`, `stats`:
    see `Context`)."""
    from ..planner import is_acyclic  # what the next stage can join decides

    program = read_program(sql, schema)
    ctx = Context(
        dict(program.relations),
        program.views,
        compile=compile_select,
        acyclic=is_acyclic,
        padded_leaves=padded_leaves,
        stats=stats,
        native_windows=native_windows,
    )
    tree = program.query.copy()
    named: list[str] = []
    for step in TREE_PASSES if passes is None else passes:
        tree = step(tree, ctx)
        if step is inline_views:
            named = [t.name.lower() for t in tree.find_all(exp.Table)]
    query = compile_select(tree, ctx)
    read = {r.name for r in base_relations(query)}
    unread = [
        program.relations[name]
        for name in dict.fromkeys(named)
        if name in program.relations and name not in read
    ]
    _check_list_order(query)
    names = tuple(program.spellings.get(o.name, o.name) for o in query.visible_outputs)
    if names != tuple(o.name for o in query.visible_outputs):
        query = replace(query, names=names)
    return replace(query, unread=tuple(unread)) if unread else query


def _check_list_order(query: Query) -> None:
    """Refuse an order over a LIST (ARRAY_AGG's value, a tuple whose NULL
    elements Python cannot compare; LIMIT without ORDER BY orders by every
    column)."""
    if query.ordering is None:
        return
    lists = {
        i
        for i, o in enumerate(query.outputs)
        if isinstance(o.expr, AggRef)
        and query.aggregates[o.expr.index].kind.startswith("array_agg")
    }
    if any(key.position in lists for key in query.ordering.keys):
        implied = " (LIMIT without ORDER BY orders by every column)"
        raise unsupported(
            "ORDER BY a LIST (ARRAY_AGG's value) is not supported"
            + (implied if query.ordering.implied else "")
        )


def compile_select(tree: exp.Expression, ctx: Context) -> Query | SetQuery:
    """One (qualified) query of the tree -> its `Query` (a `SetQuery` for a
    UNION/INTERSECT/EXCEPT), inner views included."""
    if isinstance(tree, exp.Subquery):
        return compile_select(tree.this, ctx)
    if isinstance(tree, exp.SetOperation):
        return _set_query(tree, ctx)
    if isinstance(tree, exp.Select) and tree.meta.get(NATIVE) is not None:
        return _window_query(tree, ctx)
    if not isinstance(tree, exp.Select):
        raise unsupported(f"{type(tree).__name__.upper()} is not supported", tree)
    state = _state(ctx) if tree.meta.get(UNPADDED) is not None else None
    # the passes rewrite the SELECT in place; a copy only where the fallback
    # below compiles it again as it was (copying at every level of nesting
    # copied a deep query's subqueries once per level around them)
    select = tree.copy() if state is not None else tree
    for step in SELECT_PASSES:
        select = step(select, ctx)
    query = SelectBuilder(ctx.relations, ctx.tests).build(select)
    cyclic = ctx.acyclic is not None and not ctx.acyclic(query)
    if cyclic and any(a.padded for a in query.atoms):
        raise PaddedLeafUnplaced("a NULL-padded table in a cyclic join")
    # bags of tables as inner views, after which the planner can tree the join
    if cyclic and choose_bags(query, ctx.acyclic) is not None:
        select = unnest_subqueries(decompose_cycles(select, ctx, query), ctx)
        query = SelectBuilder(ctx.relations, ctx.tests).build(select)
    elif cyclic and state is not None:
        _restore(ctx, state)  # its LEFT JOINs as UNION ALLs: a join fewer
        return compile_select(unpadded(tree, ctx), ctx)
    if ctx.subqueries:
        query = replace(query, subqueries=tuple(ctx.subqueries))
    if ctx.ordering is not None:
        query = replace(query, ordering=ctx.ordering)
    return query


def _state(ctx: Context) -> tuple:
    """What compiling one SELECT adds to `ctx`, as it is before."""
    return (
        list(ctx.subqueries),
        list(ctx.tests),
        dict(ctx.derived),
        dict(ctx.relations),
        ctx.ordering,
    )


def _restore(ctx: Context, state: tuple) -> None:
    subqueries, tests, derived, relations, ordering = state
    ctx.subqueries[:] = subqueries
    ctx.tests[:] = tests
    ctx.derived.clear()
    ctx.derived.update(derived)
    ctx.relations.clear()
    ctx.relations.update(relations)
    ctx.ordering = ordering


def _set_query(tree: exp.SetOperation, ctx: Context) -> SetQuery:
    kind = {exp.Union: "union", exp.Intersect: "intersect", exp.Except: "except"}
    word = kind.get(type(tree))
    if tree.args.get("by_name") and word is not None:
        _by_name(tree)
    if word is None or tree.args.get("by_name") or tree.args.get("side"):
        raise unsupported(f"{tree.key.upper()} of this form is not supported", tree)
    state, given = _state(ctx), (tree.this.copy(), tree.expression.copy())
    left = compile_select(tree.this, ctx.inner())
    right = compile_select(tree.expression, ctx.inner())
    if len(left.outputs) != len(right.outputs):
        raise unsupported(
            f"the sides of {word.upper()} have {len(left.outputs)} and "
            f"{len(right.outputs)} columns",
            tree,
        )
    sides = (output_types(left), output_types(right))
    dates = [
        (i, given[0] if a == "date" else given[1])
        for i, (a, b) in enumerate(zip(*sides))
        if {a, b} == {"date", "timestamp"}
    ]
    if dates:  # DuckDB's column of DATEs and TIMESTAMPs: TIMESTAMPs
        _restore(ctx, state)  # (compiling changed the sides: again as given)
        for column, side in dates:
            _as_timestamps(side, column)
        tree.set("this", given[0])
        tree.set("expression", given[1])
        left = compile_select(tree.this, ctx.inner())
        right = compile_select(tree.expression, ctx.inner())
        sides = (output_types(left), output_types(right))
    types = []
    for column, (a, b) in enumerate(zip(*sides)):
        if a != b and {a, b} <= {"int", "float"}:
            types.append("float")
        elif a != b and None not in (a, b):
            raise unsupported(
                f"column {column + 1} of {word.upper()} is {a} on one side and "
                f"{b} on the other",
                tree,
            )
        else:
            types.append(a or b)
    return SetQuery(
        word,
        not tree.args.get("distinct"),
        left,
        right,
        _set_text(word, bool(tree.args.get("distinct")), left, right),
        tuple(types),
        sides,
    )


def _as_timestamps(side: exp.Expression, column: int) -> None:
    """Column `column` of a set operation's side, a DATE, CAST to TIMESTAMP
    in each of its SELECTs."""
    if isinstance(side, exp.Subquery):
        side = side.this
    if isinstance(side, exp.SetOperation):
        _as_timestamps(side.this, column)
        _as_timestamps(side.expression, column)
        return
    item = side.expressions[column]
    value = exp.Cast(this=item.unalias().copy(), to=exp.DataType.build("TIMESTAMP"))
    item.replace(exp.alias_(value, item.alias_or_name) if item.alias_or_name else value)


def _by_name(tree: exp.SetOperation) -> None:
    """DuckDB's `UNION [ALL] BY NAME`: the columns of both sides matched by
    name, those of the left side first, then the right side's others, a
    side without one giving NULL there; as a UNION by position of the
    SELECTs so completed and reordered (a left side that is itself a set
    operation first, each of its SELECTs completed)."""
    left, right = tree.this, tree.expression
    if isinstance(left, exp.SetOperation) and left.args.get("by_name"):
        _by_name(left)
    names = [_names(left), _names(right)]
    if not isinstance(right, exp.Select) or None in names:
        raise unsupported(
            f"{tree.key.upper()} BY NAME is supported with one SELECT on its "
            "right and distinct column names on each side",
            tree,
        )
    order = names[0] + [n for n in names[1] if n not in names[0]]
    _complete(left, names[0], order)
    _complete(right, names[1], order)
    tree.set("by_name", None)


def _names(side: exp.Expression) -> list[str] | None:
    """The output names of a SELECT (of a set operation: its first SELECT's);
    None where they are not distinct."""
    while isinstance(side, exp.SetOperation) and not side.args.get("by_name"):
        side = side.this
    if not isinstance(side, exp.Select):
        return None
    names = [e.alias_or_name.lower() for e in side.expressions]
    if not names or "*" in names or len(set(names)) != len(names):
        return None
    return names


def _complete(side: exp.Expression, names: list[str], order: list[str]) -> None:
    """Each SELECT of `side`, whose columns are `names` (by position, as a
    set operation has its first SELECT's), with its items in the order of
    `order`, NULL for a name it does not have."""
    if isinstance(side, exp.SetOperation):
        _complete(side.this, names, order)
        _complete(side.expression, names, order)
        return
    items = dict(zip(names, side.expressions))
    side.set(
        "expressions",
        [items.get(n) or exp.alias_(exp.Null(), n, quoted=True) for n in order],
    )


def _check_band(spec: dict, key_type: str | None) -> None:
    """Refuse a RANGE frame whose offsets do not fit its ORDER BY key:
    numbers around a number, whole numbers (days, as DuckDB) around a DATE,
    INTERVALs of DAYs or WEEKs around a DATE or TIMESTAMP."""
    ends = [end for end in spec["band"] if end is not None]
    units = {end[1] for end in ends}
    if units == {""}:  # numbers; around a DATE, whole days (as DuckDB)
        days = all(type(end[0]) is int for end in ends)
        fits = ("int", "float", "date") if days else ("int", "float")
    else:
        fits = ("date", "timestamp")
    if key_type not in fits or len(units) > 1:
        raise unsupported(
            "a RANGE frame's offsets must fit its ORDER BY key: numbers around "
            "a number, whole numbers or INTERVALs of DAYs or WEEKs around a "
            "DATE, INTERVALs of DAYs or WEEKs around a TIMESTAMP"
        )
    if key_type in ("date", "timestamp") and max(e[0] for e in ends) > 3_000_000:
        raise unsupported(
            "a RANGE frame's offset of more than 3,000,000 days reaches past "
            "the dates Python has (years 1 to 9999)"
        )


def _window_query(tree: exp.Select, ctx: Context) -> WindowQuery:
    """The `__windowed` SELECT of `passes/native_windows`: its rows without
    the placeholder columns, compiled, and the windows over its columns."""
    specs = tree.meta[NATIVE]
    placeholders = {s["name"] for s in specs} | {
        s["found"] for s in specs if s["found"]
    }
    rows = tree.copy()
    rows.meta.pop(NATIVE)
    rows.set(
        "expressions",
        [e for e in rows.expressions if e.alias_or_name not in placeholders],
    )
    source = compile_select(rows, ctx)
    names = [o.name for o in source.outputs]
    types = list(output_types(source))
    scales = list(output_scales(source, [t or "float" for t in types]))
    functions = []
    for s in specs:
        arg = names.index(s["arg"]) if s["arg"] is not None else None
        kind = s["kind"]
        arg_type = types[arg] if arg is not None else None
        fold_scale = None  # QUANTILE_CONT of a DECIMAL: its digits
        if kind == "quantile_cont":
            if s["median"] and arg_type == "str":
                kind = "quantile_disc"  # a string's MEDIAN: DuckDB picks one
            elif arg_type not in ("int", "float"):
                raise unsupported(
                    f"MEDIAN and QUANTILE_CONT of a {arg_type or 'NULL'} are not "
                    "supported (they interpolate between two values); "
                    "QUANTILE_DISC picks one"
                )
            elif arg_type == "float":
                fold_scale = scales[arg]
        if kind in ("row_number", "rank", "dense_rank", "ntile", "count"):
            kind_type, scale = "int", 0
        elif kind in ("percent_rank", "cume_dist", "avg"):
            kind_type, scale = "float", None
        elif kind == "quantile_cont":  # a DOUBLE, or a DECIMAL of a DECIMAL
            kind_type, scale = "float", fold_scale
        elif kind == "string_agg":
            kind_type, scale = "str", None
        elif kind == "sum":
            kind_type = "int" if arg_type in ("int", "bool") else "float"
            scale = scales[arg]
        else:  # a value of the argument's column
            kind_type, scale = arg_type, scales[arg]
        if s["band"] is not None:
            _check_band(s, types[names.index(s["order"][0][0])])
        functions.append(
            WindowFunction(
                s["name"],
                kind,
                arg,
                tuple(names.index(k) for k in s["partition"]),
                tuple((names.index(k), d, n) for k, d, n in s["order"]),
                running=s["running"],
                rows_frame=s["rows_frame"],
                sliding=s["sliding"],
                band=s["band"],
                offset=s["offset"],
                buckets=s["buckets"],
                scale=(
                    scales[arg]
                    if kind in ("sum", "avg", "string_agg") and arg is not None
                    else fold_scale
                ),
                guarded=s["guarded"],
                ignore_nulls=s["ignore_nulls"],
                distinct=s["distinct"],
                param=(
                    names.index(s["param"])
                    if kind in ("arg_max", "arg_min")
                    else s["param"]
                ),
                found=False,
                cap=s["cap"],
            )
        )
        types.append(kind_type)
        scales.append(scale)
        if s["found"]:
            functions.append(
                WindowFunction(
                    s["found"],
                    "found_" + kind,
                    None,
                    functions[-1].partition,
                    functions[-1].order,
                    offset=s["offset"],
                    guarded=s["guarded"],
                    found=True,
                )
            )
            types.append("int")
            scales.append(0)
    return WindowQuery(
        source,
        tuple(functions),
        f"WINDOWS OVER ({source.sql})",
        tuple(types),
        tuple(scales),
    )


def _set_text(word: str, distinct: bool, left, right) -> str:
    """The text of a set operation from its compiled sides' (each names the
    inner views it reads): the SQL of the whole tree as the earlier passes
    rewrote it can run to megabytes (windows become joins of their frames)."""
    word = word.upper() + ("" if distinct else " ALL")
    return f"({left.sql})\n{word}\n({right.sql})"


__all__ = ["parse_query", "parse_schema", "shift_date", "DIALECT"]
