"""Window functions -> joins with the aggregates of the partitions.

`AGG(x) OVER (PARTITION BY p, …)` (SUM, COUNT, AVG, MIN or MAX; no ORDER BY,
no frame) gives each row the aggregate over the rows of its partition. The
SELECT without its windows becomes a derived table `__windowed` that also
outputs the windows' arguments and partition keys; each distinct PARTITION
BY list becomes `__windowed` grouped by those keys, joined back on them with
IS NOT DISTINCT FROM (NULL keys form one partition, as in SQL). Windows
with ORDER BY (RANK(), DENSE_RANK(), PERCENT_RANK(), CUME_DIST(), running
aggregates, LAG/LEAD; ROW_NUMBER() as RANK() where no two rows tie) join
one table per window, built from one table per ORDER BY level
(window_orders.py). A window that numbers or shifts rows over an order
that may tie also joins its groups of peers, marked as a guard (`TIES`):
the View reads nothing while one has several rows. Where the only window
is a ROW_NUMBER() that QUALIFY tests `= 1` (the first row per key), no
rank is kept: the first rows are those at the extreme of every level of
the order, one partition aggregate per level (`_Rewrite._first_place`),
taken DISTINCT, and only the first place is guarded. Windows are computed
before QUALIFY (a WHERE over the join), DISTINCT, ORDER BY and LIMIT, which
stay on the outer query.

>>> import sqlglot
>>> from dynyan.compiler.frontend.context import Context
>>> tree = sqlglot.parse_one(
...     "SELECT k, v, SUM(v) OVER (PARTITION BY k) AS total FROM t", read="duckdb")
>>> print(window_aggregates(tree, Context({})).sql("duckdb"))
SELECT __windowed.__c1 AS k, __windowed.__c2 AS v, __partition1.__w1 AS total FROM (SELECT k AS __c1, v AS __c2 FROM t) AS __windowed JOIN (SELECT __rows.__c1 AS __c1, SUM(__rows.__c2) AS __w1 FROM (SELECT k AS __c1, v AS __c2 FROM t) AS __rows GROUP BY __rows.__c1) AS __partition1 ON __windowed.__c1 IS NOT DISTINCT FROM __partition1.__c1
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp

from ..aggregates import AGGREGATES
from ..context import (
    GUARD_COLUMN,
    ROWS,
    TIES,
    Context,
    declared_digits,
    from_items,
    sql_conjuncts,
)
from .name_outputs import named
from .qualify_names import expand_stars
from .window_orders import (
    COUNT_ROWS,
    Measure,
    RANKINGS,
    band_table,
    ordered_table,
    order_levels,
    running_measures,
    rows_band_table,
    running_value,
    same_keys,
    shifted_table,
)

# the functions a window over whole partitions may compute
WINDOW_AGGREGATES = (exp.Sum, exp.Count, exp.Avg, exp.Min, exp.Max)
# the value of another row of the order (FIRST_VALUE: the first row's;
# LAST_VALUE in the default frame: the row's own, where rows never tie)
SHIFTS = (exp.Lag, exp.Lead, exp.FirstValue, exp.LastValue, exp.NthValue)
# why a window that only the windows' view computes is refused elsewhere
VIEW_ONLY = (
    "is kept by the windows' view only, which takes a SELECT where it keeps "
    "every window (not beside an aggregate other than COUNT, SUM, AVG, MIN, "
    "MAX over whole partitions or a RANGE frame of months)"
)
# aggregates of the frame's values in a list, computed by the windows' view
# alone over an order (`folded_window`)
FOLDS = (
    exp.Median,
    exp.PercentileCont,
    exp.PercentileDisc,
    exp.GroupConcat,
    exp.ArgMax,
    exp.ArgMin,
)


def window_aggregates(tree: exp.Expression, ctx: Context) -> exp.Expression:
    for select in reversed(list(tree.find_all(exp.Select))):
        windows = [
            w
            for w in select.find_all(exp.Window)
            if w.find_ancestor(exp.Select) is select
        ]
        if not windows or not expand_stars(select, ctx):
            continue  # none, or refused by check_supported, by name
        if not all(_supported(w, select) for w in windows):
            continue
        rewritten = _Rewrite(select, ctx.relations).query()
        if select is tree:
            tree = rewritten
        else:
            select.replace(rewritten)
    return tree


def _supported(window: exp.Window, select: exp.Select) -> bool:
    """A window this pass rewrites: its function and frame maintainable, in
    the SELECT list, QUALIFY or ORDER BY (check_supported names the rest)."""
    if function_refusal(window, select) is not None:
        return False
    if window.this.args.get("expressions"):
        return False
    return in_select_list(window)


def function_refusal(window: exp.Window, select: exp.Select) -> str | None:
    """Why the window's function over its order and frame cannot be
    maintained, None if it can: aggregates over partitions or running in an
    order, rankings over an order, LAG/LEAD over an order without ties."""
    func = window.this
    order, spec = window.args.get("order"), window.args.get("spec")
    ignore = isinstance(func, exp.IgnoreNulls)
    if picked_value(window, select) is not None and (
        ignore or frame(window, select) == "rows"
    ):  # (NTH_VALUE elsewhere: also as joins, below)
        name = (func.this if ignore else func).sql_name()
        what = f"{name}(… IGNORE NULLS)" if ignore else f"{name} over this frame"
        return f"{what} {VIEW_ONLY}"
    exclude = spec.args.get("exclude") if spec is not None else None
    if exclude is not None and exclude.name.upper() != "NO OTHERS":
        return (
            f"a frame's EXCLUDE {exclude.name.upper()} is not supported (the frame "
            "with all its rows is)"
        )
    if isinstance(func, (exp.RowNumber, exp.Ntile)):
        name = "ROW_NUMBER()" if isinstance(func, exp.RowNumber) else "NTILE(n)"
        n = func.this
        if isinstance(func, exp.Ntile) and not (n is not None and n.is_int):
            return "NTILE needs a constant number of buckets"
        if isinstance(func, exp.Ntile) and int(n.name) < 1:
            return "NTILE needs at least one bucket"
        if order and not spec:
            return None  # from RANK(), where no two rows tie (else guarded)
        return f"{name} needs ORDER BY in its window and no frame"
    if isinstance(func, RANKINGS):
        name = func.sql(dialect="duckdb")
        if not order:
            return f"{name} needs ORDER BY in its window"
        return f"{name} takes no frame" if spec else None
    if isinstance(func, SHIFTS):
        return shift_refusal(window, select)
    if not isinstance(func, WINDOW_AGGREGATES):
        if isinstance(func, AGGREGATES) and not order and frame(window, select):
            return None  # over whole partitions: grouped as any aggregate
        if folded_window(window, select):
            return f"{func.sql_name()} over an order {VIEW_ONLY}"
        name = func.sql_name() if isinstance(func, exp.Func) else func.key.upper()
        return f"window function {name} is not supported"
    if frame(window, select) is None:
        return (
            "this window frame is not supported: running aggregates take the "
            "default frame, RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW, or "
            "ROWS up to the current row; sliding frames: RANGE BETWEEN constant "
            "offsets (n or INTERVAL PRECEDING or FOLLOWING, CURRENT ROW) over one "
            "ORDER BY key, and ROWS BETWEEN any bounds (ROWS frames read nothing "
            "while two rows of a partition tie in the order)"
        )
    if order and isinstance(func.this, exp.Distinct):
        return f"{func.sql_name()}(DISTINCT …) over an order {VIEW_ONLY}"
    return None


def frame(window: exp.Window, select: exp.Select) -> str | None:
    """What an aggregate window's rows are: "partition" (no ORDER BY, or a
    frame over the whole partition), "running" (ORDER BY with the default
    frame, or ROWS up to the current row where the ORDER BY keys tell every
    row of a partition apart), "band" (RANGE between offsets around one
    ORDER BY key: `band_bounds`), None for any other frame."""
    spec = window.args.get("spec")
    if not window.args.get("order"):
        return "partition" if spec is None or _whole(spec) else None
    if spec is None:
        return "running"
    if _whole(spec):
        return "partition"
    if band_bounds(window) is not None:
        return "band"
    if band_bounds(window, "ROWS") is not None:
        return "rows"
    start, end = _bound(spec, "start"), _bound(spec, "end")
    if start != ("UNBOUNDED", "PRECEDING") or end not in (None, ("CURRENT ROW", None)):
        return None
    return "running"


def band_bounds(window: exp.Window, kind: str = "RANGE"):
    """The (start, end) bounds of a sliding `kind` frame (RANGE or ROWS),
    each None (CURRENT ROW), "UNBOUNDED" (ROWS only) or (offset,
    following); None for any other frame. A RANGE frame
    orders by one key and offsets it by numbers or INTERVALs (an unbounded
    side would reach the NULL keys, which DuckDB orders last); a ROWS frame
    counts rows, by whole numbers."""
    spec, order = window.args.get("spec"), window.args.get("order")
    if spec is None or order is None or _text(spec.args.get("kind")) != kind:
        return None
    if kind == "RANGE" and len(order.expressions) != 1:
        return None
    bounds = []
    for side in ("start", "end"):
        bound = _bound(spec, side)
        if bound == ("CURRENT ROW", None) or (bound is None and side == "end"):
            bounds.append(None)  # `RANGE 3 PRECEDING`: … AND CURRENT ROW
            continue
        if bound is None:
            return None
        if isinstance(spec.args.get(side), str):  # UNBOUNDED
            if kind != "ROWS":
                return None
            bounds.append("UNBOUNDED")
            continue
        offset = spec.args[side]
        if kind == "ROWS":
            if not (isinstance(offset, exp.Literal) and offset.name.isdigit()):
                return None
        elif not isinstance(offset, (exp.Literal, exp.Interval)) or (
            isinstance(offset, exp.Literal) and offset.is_string
        ):
            return None
        bounds.append((offset, bound[1] == "FOLLOWING"))
    if kind == "RANGE" and bounds == [None, None]:
        return None  # the peers only: refused with the other RANGE frames
    if kind == "ROWS" and bounds in ([None, None], ["UNBOUNDED", None]):
        return None  # the current row; a running aggregate
    return tuple(bounds)


def _bound(spec: exp.WindowSpec, side: str):
    """A frame bound as (UNBOUNDED | CURRENT ROW | the offset's SQL,
    PRECEDING | FOLLOWING | None), upper-cased as SQL is case-blind; None
    when absent."""
    value = spec.args.get(side)
    if value is None:
        return None
    text = _text(value) if isinstance(value, str) else value.sql()
    return text, _text(spec.args.get(f"{side}_side")) or None


def _text(value) -> str:
    return value.upper() if isinstance(value, str) else ""


def shift_refusal(window: exp.Window, select: exp.Select) -> str | None:
    """Why LAG/LEAD cannot be maintained here, None if it can: over an order
    that tells the rows of a partition apart, by a constant offset."""
    func = window.this
    name = func.key.upper()
    offset = func.args.get("offset")
    if isinstance(func, exp.NthValue) and nth_place(func) is None:
        return "NTH_VALUE needs a constant place of at least 1"
    if isinstance(func, (exp.FirstValue, exp.LastValue, exp.NthValue)):
        name = func.sql_name()
        if not window.args.get("order"):
            return f"{name} needs ORDER BY in its window"
        framed = frame(window, select)
        if framed not in ("running", "partition"):
            return (
                f"{name} is supported with the default frame, a ROWS frame or the "
                "whole partition"
            )
    elif not window.args.get("order") or window.args.get("spec"):
        return f"{name} needs ORDER BY in its window and no frame"
    if offset is not None and not (offset.is_int and int(offset.name) >= 0):
        return f"{name} needs a constant offset"
    return None


def picked_value(window: exp.Window, select: exp.Select) -> tuple | None:
    """A value the windows' view picks from a frame, as (kind, place, frame,
    ignore_nulls): "frame_first" (the row `place` from the frame's start)
    or "frame_last" (from its end), among the rows whose value is not NULL
    where `ignore_nulls`. `frame`: "peers" (the default RANGE frame, from
    the partition's start to the row's last peer) or a ROWS frame's first
    and last row as offsets from the row (None: UNBOUNDED). FIRST_VALUE,
    LAST_VALUE and NTH_VALUE (the n-th from the start) over a ROWS frame,
    or IGNORE NULLS in the default frame; NTH_VALUE in the default frame and
    over the whole partition (also IGNORE NULLS); LAG and LEAD IGNORE NULLS:
    the n-th before (after) the row. None for any other window (FIRST_VALUE
    and LAST_VALUE without IGNORE NULLS in the default frame, and over the
    whole partition, have ways of their own)."""
    func, ignore = window.this, isinstance(window.this, exp.IgnoreNulls)
    func = func.this if ignore else func
    spec = window.args.get("spec")
    if not window.args.get("order"):
        return None
    if isinstance(func, (exp.Lag, exp.Lead)):
        offset = func.args.get("offset")
        if not ignore or spec is not None or not (offset is None or offset.is_int):
            return None
        place = 1 if offset is None else int(offset.name)
        if place < 1:
            return None
        if isinstance(func, exp.Lag):
            return ("frame_last", place, (None, -1), True)
        return ("frame_first", place, (1, None), True)
    if not isinstance(func, (exp.FirstValue, exp.LastValue, exp.NthValue)):
        return None
    kind = "frame_last" if isinstance(func, exp.LastValue) else "frame_first"
    nth = isinstance(func, exp.NthValue)
    place = nth_place(func) if nth else 1  # NTH_VALUE: from the frame's start
    if place is None:
        return None
    framed = frame(window, select)
    if framed == "running" and (ignore or nth):
        rows = spec is not None and _text(spec.args.get("kind")) == "ROWS"
        return (kind, place, (None, 0) if rows else "peers", ignore)
    if framed == "partition" and nth:
        return (kind, place, (None, None), ignore)  # (FIRST/LAST: reordered)
    offsets = rows_offsets(window)
    if framed != "rows" or offsets is None:
        return None
    return (kind, place, offsets, ignore)


def nth_place(func: exp.NthValue) -> int | None:
    """NTH_VALUE(x, n)'s place n, a constant of at least 1 (else None)."""
    offset = func.args.get("offset")
    if offset is not None and offset.is_int and int(offset.name) >= 1:
        return int(offset.name)
    return None


def rows_offsets(window: exp.Window) -> tuple[int | None, int | None] | None:
    """A ROWS frame as the offsets of its first and last row from the row's
    position (`ROWS BETWEEN 2 PRECEDING AND 1 FOLLOWING`: (-2, 1)), None
    for an UNBOUNDED end (not both: the whole partition); None for any
    other frame."""
    bounds = band_bounds(window, "ROWS")
    if bounds is None:
        return None
    first, last = (
        (
            None
            if b == "UNBOUNDED"
            else 0 if b is None else int(b[0].name) * (1 if b[1] else -1)
        )
        for b in bounds
    )
    return first, last


def folded_window(window: exp.Window, select: exp.Select) -> bool:
    """MEDIAN, QUANTILE_CONT/_DISC(x, q), STRING_AGG(x[, sep]) (joined in
    the frame's order) or ARG_MAX/ARG_MIN(x, y) (the first best in it) over
    an order, in the default frame, a ROWS frame or a RANGE frame between
    offsets: the windows' view keeps the frame's values (sorted, or in
    order) per row. A constant q and separator; no DISTINCT, no ORDER BY
    of the aggregate's own."""
    func = window.this
    if type(func) not in FOLDS or window.args.get("order") is None:
        return False
    if frame(window, select) not in ("running", "rows", "band"):
        return False
    if isinstance(func, exp.GroupConcat):
        sep = func.args.get("separator")
        if isinstance(func.this, (exp.Order, exp.Distinct)):
            return False
        return sep is None or (isinstance(sep, exp.Literal) and sep.is_string)
    if isinstance(func, (exp.Median, exp.ArgMax, exp.ArgMin)):
        return True
    q = func.args.get("expression")
    return isinstance(q, exp.Literal) and not q.is_string and 0 <= float(q.name) <= 1


def needs_apart(
    window: exp.Window, select: exp.Select, relations: dict | None = None
) -> bool:
    """Whether the window's value depends on which of two tied rows comes
    first (ROW_NUMBER, NTILE, LAG, LEAD, FIRST_VALUE, LAST_VALUE, a ROWS
    frame) while its order may tie: the rewrite then keeps the groups of
    peers under a guard (`TIES`), and the View reads nothing while two rows
    of a partition tie (SQL leaves their order, so the result, open)."""
    func, spec = window.this, window.args.get("spec")
    if not window.args.get("order") or _unique_order(window, select, relations):
        return False
    if isinstance(func, (exp.IgnoreNulls, exp.GroupConcat, exp.ArgMax, exp.ArgMin)):
        return True  # the n-th value not NULL; joined, or the first best, in order
    if isinstance(func, (exp.FirstValue, exp.LastValue)) and _peers_agree(window):
        return False
    if isinstance(func, (exp.RowNumber, exp.Ntile, *SHIFTS)):
        return True
    return (
        spec is not None
        and _text(spec.args.get("kind")) == "ROWS"
        and frame(window, select) in ("rows", "running")
    )


def _first_of_reversed(window: exp.Window) -> exp.Window:
    """LAST_VALUE(x) over a whole partition as FIRST_VALUE(x) over the
    order reversed (each key's direction and NULLs' place flipped)."""
    order = [
        exp.Ordered(
            this=o.this.copy(),
            desc=not o.args.get("desc"),
            nulls_first=not o.args.get("nulls_first"),
        )
        for o in window.args["order"].expressions
    ]
    return exp.Window(
        this=exp.FirstValue(this=window.this.this.copy()),
        partition_by=[k.copy() for k in window.args.get("partition_by") or []],
        order=exp.Order(expressions=order),
    )


def _ntile(n: int, rank: exp.Expression, rows: exp.Expression) -> exp.Expression:
    """NTILE(n) of the row ranked `rank` (from 1) among `rows`, as DuckDB
    numbers them: min(n, rows) buckets, the first rows % buckets of them one
    row larger."""

    # i: the row's index from 0; buckets: at most one per row; size: the
    # rows of a small bucket; large: the buckets a row larger; small: the
    # first index in a small bucket
    names = {"i": rank, "n": exp.Literal.number(n), "rows": rows}
    for name, text in (
        ("i", "i - 1"),
        ("buckets", "LEAST(n, rows)"),
        ("size", "rows // buckets"),
        ("large", "rows - buckets * size"),
        ("small", "large * (size + 1)"),
        (
            "tile",
            "CASE WHEN i < small THEN 1 + i // (size + 1) "
            "ELSE 1 + large + (i - small) // size END",
        ),
    ):
        part = sqlglot.parse_one(text, read="duckdb")
        for col in list(part.find_all(exp.Column)):
            col.replace(names[col.name].copy())
        names[name] = exp.paren(part)
    return names["tile"]


def _whole(spec: exp.WindowSpec) -> bool:
    return _bound(spec, "start") == ("UNBOUNDED", "PRECEDING") and _bound(
        spec, "end"
    ) == ("UNBOUNDED", "FOLLOWING")


def _peers_agree(window: exp.Window) -> bool:
    """Whether FIRST_VALUE(x)'s or LAST_VALUE(x)'s argument is a PARTITION
    BY key or the first ORDER BY key (`FIRST_VALUE(d) OVER (PARTITION BY k
    ORDER BY d)`, the first date per key): rows that tie agree on it, so
    which comes first does not change the value (`_Rewrite._end_key`)."""
    partition = list(window.args.get("partition_by") or [])
    return window.this.this in [*partition, window.args["order"].expressions[0].this]


def _unique_order(
    window: exp.Window, select: exp.Select, relations: dict | None = None
) -> bool:
    """Whether no two rows of a partition tie on the ORDER BY keys, so ROWS
    and RANGE frames agree: over groups whose GROUP BY keys (also named by
    position or alias) are all among the PARTITION BY and ORDER BY
    expressions, or over the rows of one derived table that are its groups
    (or DISTINCT) whose key columns are all among them."""
    keys = list(window.args.get("partition_by") or []) + [
        o.this for o in window.args["order"].expressions
    ]
    named = {k.sql() for k in keys}
    group = select.args.get("group")
    if group is not None:
        if any(group.args.get(k) for k in ("rollup", "cube", "grouping_sets")):
            return False
        spelled = [spelled_key(g, select) for g in group.expressions]
        return bool(spelled) and all(g.sql() in named for g in spelled)
    columns = _key_columns_of_source(select, relations or {})
    names = {k.name.lower() for k in keys if isinstance(k, exp.Column)}
    return bool(columns) and columns <= names


def spelled_key(key: exp.Expression, select: exp.Select) -> exp.Expression:
    """A GROUP BY key as the expression it names: `GROUP BY 1` the first
    SELECT item's, `GROUP BY y` an item aliased `y` (that is no column)."""
    items = select.expressions
    if isinstance(key, exp.Literal) and not key.is_string and key.name.isdigit():
        if 1 <= int(key.name) <= len(items):
            return items[int(key.name) - 1].unalias()
    if isinstance(key, exp.Column) and not key.table:
        for item in items:
            if isinstance(item, exp.Alias) and item.alias.lower() == key.name.lower():
                inner = item.this
                if not (isinstance(inner, exp.Column) and inner.name == key.name):
                    return inner
    return key


def _key_columns_of_source(select: exp.Select, relations: dict) -> set[str]:
    """The output columns that tell apart the rows of `select`'s one source
    when it is a derived table of groups (its GROUP BY keys, each an output
    column) or a SELECT DISTINCT (all its columns), or a table with a
    declared PRIMARY KEY (its key columns); empty otherwise."""
    source = select.args.get("from_") or select.args.get("from")
    if source is None or select.args.get("joins"):
        return set()
    inner = source.this
    if isinstance(inner, exp.Table):
        relation = relations.get(inner.name.lower())
        return set(relation.key) if relation is not None else set()
    if not (isinstance(inner, exp.Subquery) and isinstance(inner.this, exp.Select)):
        return set()
    inner = inner.this
    outputs = {}
    for item in inner.expressions:
        if isinstance(item, exp.Star) or not item.alias_or_name:
            return set()
        outputs[item.unalias().sql()] = item.alias_or_name.lower()
    distinct = inner.args.get("distinct")
    if distinct is not None and not distinct.args.get("on"):
        return set(outputs.values())
    group = inner.args.get("group")
    if group is None or not group.expressions:
        return set()
    if any(group.args.get(k) for k in ("rollup", "cube", "grouping_sets")):
        return set()
    spelled = [spelled_key(g, inner).sql() for g in group.expressions]
    if not all(g in outputs for g in spelled):
        return set()
    return {outputs[g] for g in spelled}


def never_null(key: exp.Expression, select: exp.Select, relations: dict) -> bool:
    """Whether `key` is a column declared NOT NULL of a table `select`
    reads directly, not from the side of an outer join that pads rows with
    NULLs."""
    found = table_column(key, select, relations)
    return found is not None and found[0].is_notnull(found[1])


def table_column(key: exp.Expression, select: exp.Select, relations: dict):
    """(relation, column index) of `key` where it is a column of a table
    `select` reads directly, not from the side of an outer join that pads
    rows with NULLs; else None."""
    if not isinstance(key, exp.Column):
        return None
    from_ = select.args.get("from_") or select.args.get("from")
    joins = select.args.get("joins") or []
    if from_ is None or any(j.args.get("side") in ("RIGHT", "FULL") for j in joins):
        return None
    sources = [from_.this] + [j.this for j in joins if not j.args.get("side")]
    tables = [
        (t.alias_or_name.lower(), relations[t.name.lower()])
        for t in sources
        if isinstance(t, exp.Table) and t.name.lower() in relations
    ]
    name = key.name.lower()
    if key.table:
        found = [rel for alias, rel in tables if alias == key.table.lower()]
    elif len(tables) == 1 + len(joins):  # every source a table: no other has it
        found = [rel for _, rel in tables if name in rel.columns]
    else:
        return None
    if len(found) != 1 or name not in found[0].columns:
        return None
    return found[0], found[0].columns.index(name)


def has_column(select: exp.Select, name: str, relations: dict) -> bool:
    """Whether a table or derived table `select` reads is known to have a
    column `name` (DuckDB's QUALIFY and WHERE then read it, not an output
    of that name)."""
    name = name.lower()
    for item in from_items(select):
        if isinstance(item, exp.Table):
            relation = relations.get(item.name.lower())
            if relation is not None and name in relation.columns:
                return True
        elif isinstance(item, exp.Subquery) and isinstance(item.this, exp.Select):
            alias = item.args.get("alias")
            names = (
                [c.name.lower() for c in alias.columns]
                if alias is not None and alias.columns
                else [e.alias_or_name.lower() for e in item.this.expressions]
            )
            if name in names:
                return True
    return False


def in_select_list(window: exp.Window) -> bool:
    """Whether the window is (inside) an item of its SELECT's list, its
    QUALIFY condition or its ORDER BY."""
    select = window.find_ancestor(exp.Select)
    item = window
    while item.parent is not None and item.parent is not select:
        item = item.parent
    return item.arg_key in ("expressions", "qualify", "order")


class _Rewrite:
    """One SELECT with windows -> the outer query over `__windowed`."""

    def __init__(self, select: exp.Select, relations: dict):
        self.select = select
        self.relations = relations  # the declared tables (NOT NULL columns)
        self.columns: dict[str, str] = {}  # SQL of a base expression -> its column
        self.base_items: list[exp.Expression] = []
        # PARTITION BY list (SQL) -> (alias, key columns, window items)
        self.partitions: dict[tuple, tuple[str, list[str], list[exp.Expression]]] = {}
        # a ranking's or running aggregate's signature -> its table's alias
        # and `ordered_table`'s arguments but the rows
        self.ordered: dict[tuple, tuple[str, tuple]] = {}
        # LAG/LEAD's signature -> its table's alias, the rank's arguments,
        # the argument's column and the offset (negative: LEAD)
        self.shifted: dict[tuple, tuple[str, tuple, str, int]] = {}
        # a RANGE frame's signature -> its table's alias and `band_table`'s
        # arguments but the rows
        self.banded: dict[tuple, tuple[str, tuple]] = {}
        # a ROWS frame's signature -> its table's alias and
        # `rows_band_table`'s arguments but the rows
        self.rows_banded: dict[tuple, tuple[str, tuple]] = {}
        # the PARTITION BY lists (SQL) of tables of peers under a tie guard
        self.guarded: set[tuple] = set()
        # the window is one ROW_NUMBER() that QUALIFY tests `= 1`
        # (`_first_rows_only`): the first rows are those at every level's
        # extreme (`_first_place`), and only they may not tie
        self.first_rows = False
        # the conditions that keep the first rows, over `__windowed` and the
        # partitions' aggregates, and the partition's columns where the
        # order may tie (None: it tells the rows apart)
        self.first_place: list[exp.Expression] = []
        self.first_guard: list[str] | None = None

    def query(self) -> exp.Select:
        select = self.select
        items = [named(e.copy()) for e in select.expressions]
        qualify = select.args.get("qualify")
        if qualify is not None:
            # QUALIFY, as WHERE, reads a table's column before an output name
            spelled = [
                i for i in items if not has_column(select, i.alias, self.relations)
            ]
            qualify = _with_items(qualify.this, spelled)
            self.first_rows = _first_rows_only(qualify, select)
        outer_items = [
            exp.alias_(self._outer(item.this), item.alias, quoted=_quoted(item))
            for item in items
        ]
        if qualify is not None:
            qualify = self._outer(qualify)
        order = select.args.get("order")
        if order is not None:
            order = self._order(order.copy(), items)
        base = select.copy()
        for arg in ("order", "limit", "offset", "distinct", "qualify"):
            base.set(arg, None)
        if self.first_rows:  # rows equal on all the query reads: one first row
            base.set("distinct", exp.Distinct())
        base.set("expressions", self.base_items)
        outer = exp.select(*outer_items).from_(
            exp.Subquery(this=base, alias=exp.TableAlias(this=_name("__windowed")))
        )
        joins = []  # (table, alias, the __windowed columns it joins on, kind)
        for signature, (alias, keys, windows) in self.partitions.items():
            grouped = exp.select(
                *[exp.alias_(exp.column(k, table="__rows"), k) for k in keys],
                *windows,
            ).from_(_rows(base))
            if keys:
                grouped = grouped.group_by(
                    *[exp.column(k, table="__rows") for k in keys]
                )
            if signature in self.guarded:
                grouped.meta[ROWS] = exp.Count(this=exp.Star())
                grouped.meta[GUARD_COLUMN] = TIES
            joins.append((grouped, alias, keys, None))
        for alias, args in self.ordered.values():
            table = ordered_table(_rows(base), *args)
            joins.append((table, alias, _order_keys(args), None))
        for alias, args in self.banded.values():
            table = band_table(_rows(base), *args)
            keys = args[0] + [args[1]] if args[1] not in args[0] else args[0]
            joins.append((table, alias, keys, None))
        for alias, args in self.rows_banded.values():
            table = rows_band_table(_rows(base), *args)
            joins.append((table, alias, _order_keys(args[0]), None))
        for alias, args, column, offset in self.shifted.values():
            table = shifted_table(_rows(base), args, column, offset)
            joins.append((table, alias, _order_keys(args), "left"))
        if self.first_guard is not None:
            guard = self._first_guard(base, joins, self.first_guard)
            joins.append((guard, "__first", self.first_guard, None))
        for table, alias, keys, kind in joins:
            on = same_keys(keys, "__windowed", alias)
            outer = outer.join(
                table.subquery(alias), on=exp.and_(*on) if on else None, join_type=kind
            )
        if self.first_rows:
            one = lambda x: isinstance(x, exp.Literal) and x.name == "1"  # noqa: E731
            kept = [c for c in sql_conjuncts(qualify) if not keeps_first(c, one)]
            kept = [c.copy() for c in self.first_place] + kept
            qualify = exp.and_(*kept) if kept else None
        if qualify is not None:
            outer = outer.where(qualify)
        for arg in ("distinct", "limit", "offset"):
            if select.args.get(arg) is not None:
                outer.set(arg, select.args[arg].copy())
        if order is not None:
            outer.set("order", order)
        return outer

    def _column(self, node: exp.Expression, prefix: str) -> str:
        """The column of `__windowed` that outputs `node` (added once)."""
        key = node.sql()
        if key not in self.columns:
            name = f"__{prefix}{len(self.base_items) + 1}"
            self.columns[key] = name
            self.base_items.append(exp.alias_(node.copy(), name))
        return self.columns[key]

    def _outer(self, body: exp.Expression, prefix: str = "c") -> exp.Expression:
        """A SELECT item over `__windowed` and the partitions' aggregates."""
        if body.find(exp.Window) is None:
            return exp.column(self._column(body, prefix), table="__windowed")

        def lift(node):
            if isinstance(node, exp.Window):
                return self._window(node)
            if isinstance(node, (exp.AggFunc, exp.Column)):
                return exp.column(self._column(node, "c"), table="__windowed")
            return node

        return body.copy().transform(lift)

    def _window(self, window: exp.Window) -> exp.Expression:
        if self.first_rows and isinstance(window.this, exp.RowNumber):
            return self._first_place(window)
        if needs_apart(window, self.select, self.relations):
            self._tie_guard(window)
        if isinstance(window.this, (exp.RowNumber, exp.Ntile)):  # rows never tie
            ranked = window.copy()
            ranked.set("this", exp.Rank())
            if isinstance(window.this, exp.RowNumber):
                return self._rank(ranked)
            count = exp.Count(this=exp.Star())
            partition = window.args.get("partition_by")
            rows = self._window(exp.Window(this=count, partition_by=partition))
            return _ntile(int(window.this.this.name), self._rank(ranked), rows)
        if isinstance(window.this, RANKINGS):
            return self._rank(window)
        if isinstance(window.this, (exp.FirstValue, exp.LastValue)) and _peers_agree(
            window
        ):
            return self._end_key(window)
        if isinstance(window.this, exp.LastValue):
            if frame(window, self.select) == "running":  # default frame, no ties
                return self._outer(window.this.this)  # the row's own value
            return self._shift(_first_of_reversed(window))  # the partition's last
        if isinstance(window.this, SHIFTS):
            return self._shift(window)
        framed = frame(window, self.select)
        if framed == "running":
            return self._running(window)
        if framed == "band":
            return self._band(window)
        if framed == "rows":
            return self._rows_band(window)
        keys = list(window.args.get("partition_by") or [])
        signature = tuple(k.sql() for k in keys)
        if signature not in self.partitions:
            alias = f"__partition{len(self.partitions) + 1}"
            columns = [self._column(k, "k") for k in keys]
            self.partitions[signature] = (alias, columns, [])
        alias, _, windows = self.partitions[signature]
        agg = window.this.copy()
        arg = agg.this
        if not isinstance(agg, WINDOW_AGGREGATES):  # MEDIAN, STRING_AGG, …
            # what it reads (columns, aggregates of the groups) from __rows
            def read(n):
                if n is not agg and isinstance(n, (exp.Column, exp.AggFunc)):
                    return exp.column(self._column(n, "x"), table="__rows")
                return n

            agg = agg.transform(read, copy=False)
        elif isinstance(arg, exp.Distinct):
            (inner,) = arg.expressions
            arg.set(
                "expressions", [exp.column(self._column(inner, "x"), table="__rows")]
            )
        elif arg is not None and not isinstance(arg, exp.Star):
            agg.set("this", exp.column(self._column(arg, "x"), table="__rows"))
        for done in windows:  # the same aggregate twice: one column
            if done.this == agg:
                return exp.column(done.alias, table=alias)
        name = f"__w{sum(len(w) for _, _, w in self.partitions.values()) + 1}"
        windows.append(exp.alias_(agg, name))
        return exp.column(name, table=alias)

    def _tie_guard(self, window: exp.Window) -> None:
        """The rows' groups of peers (PARTITION BY and ORDER BY keys) as a
        table joined like a partition's, its COUNT(*) the guard (`TIES`); a
        key named twice (`ORDER BY x DESC, x NULLS FIRST`) groups once."""
        keys = list(window.args.get("partition_by") or []) + [
            o.this for o in window.args["order"].expressions
        ]
        keys = list({k.sql(): k for k in keys}.values())
        count = exp.Count(this=exp.Star())
        self._window(exp.Window(this=count, partition_by=keys))
        self.guarded.add(tuple(k.sql() for k in keys))

    def _first_place(self, window: exp.Window) -> exp.Expression:
        """ROW_NUMBER() of a row the query keeps only where it is 1: the row
        is first where, level by level of the order (`order_levels`), its
        key is the extreme (MIN, or MAX for DESC) over the rows of its
        partition equal to it on the levels before, a partition aggregate
        each: no ranks to maintain. Where the order may tie, the rows that
        pass are counted per partition (`_first_guard`)."""
        if self.first_place or self.first_guard is not None:
            return exp.Literal.number(1)  # the one window, met again
        partition = list(window.args.get("partition_by") or [])
        keys, levels = self._levels(window)
        expressions = {item.alias: item.this for item in self.base_items}
        above = [*partition]
        for level in levels:
            key = expressions[level.column]
            extreme = (exp.Max if level.descending else exp.Min)(this=key.copy())
            value = self._window(
                exp.Window(this=extreme, partition_by=[k.copy() for k in above])
            )
            self.first_place.append(
                exp.NullSafeEQ(
                    this=exp.column(level.column, table="__windowed"), expression=value
                )
            )
            above.append(key)
        if needs_apart(window, self.select, self.relations):
            self.first_guard = keys
        return exp.Literal.number(1)

    def _first_guard(self, base: exp.Select, joins: list, keys: list[str]):
        """The first rows (`first_place`) counted per partition (`keys`), the
        count a guard (`TIES`): the View reads nothing while two different
        rows share a partition's first place; ties further down do not
        matter. `joins`: the partitions' tables the conditions read."""
        first = exp.select(
            *[exp.column(k, table="__windowed") for k in keys] or ["1"]
        ).from_(
            exp.Subquery(
                this=base.copy(), alias=exp.TableAlias(this=_name("__windowed"))
            )
        )
        for table, alias, on_keys, _ in joins:
            on = same_keys(on_keys, "__windowed", alias)
            first = first.join(
                table.copy().subquery(alias), on=exp.and_(*on) if on else None
            )
        if self.first_place:  # else every row of a partition is first
            first = first.where(exp.and_(*[c.copy() for c in self.first_place]))
        count = exp.Count(this=exp.Star())
        guard = exp.select(
            *[exp.alias_(exp.column(k, table="__top"), k) for k in keys],
            exp.alias_(count, "__first"),
        ).from_(first.subquery("__top"))
        if keys:
            guard = guard.group_by(*[exp.column(k, table="__top") for k in keys])
        guard.meta[ROWS] = count.copy()
        guard.meta[GUARD_COLUMN] = TIES
        return guard

    def _rank(self, window: exp.Window) -> exp.Expression:
        """1 + the rows (keys) before the row's, summed over the levels;
        PERCENT_RANK() and CUME_DIST() from RANK() or the running COUNT(*),
        over the partition's COUNT(*)."""
        func = window.this
        if isinstance(func, (exp.PercentRank, exp.CumeDist)):
            over = {k: window.args.get(k) for k in ("partition_by", "order")}
            count = exp.Count(this=exp.Star())
            rows = self._window(
                exp.Window(this=count, partition_by=over["partition_by"])
            )
            if isinstance(func, exp.CumeDist):
                upto = self._window(exp.Window(this=count.copy(), **over))
                return exp.Div(this=exp.Paren(this=upto), expression=rows)
            rank = self._rank(exp.Window(this=exp.Rank(), **over))
            share = exp.Div(
                this=exp.Paren(
                    this=exp.Sub(this=rank, expression=exp.Literal.number(1))
                ),
                expression=exp.Paren(
                    this=exp.Sub(this=rows.copy(), expression=exp.Literal.number(1))
                ),
            )
            more = exp.GT(this=rows.copy(), expression=exp.Literal.number(1))
            return exp.Paren(
                this=exp.case().when(more, share).else_(exp.Literal.number("0.0"))
            )
        keys, levels = self._levels(window)
        if not levels:  # every row of a partition ties
            return exp.Literal.number(1)
        dense = isinstance(window.this, exp.DenseRank)
        return self._ordered(
            ("rank", tuple(keys), levels, dense), _rank_args(keys, levels, dense)
        )

    def _end_key(self, window: exp.Window) -> exp.Expression:
        """FIRST_VALUE or LAST_VALUE of a key the rows' peers agree on
        (`_peers_agree`): a PARTITION BY key or, for LAST_VALUE in the
        default frame, the row's own; else the first ORDER BY key's MIN or
        MAX over the partition, or NULL where NULLs sort first and the
        partition has one."""
        x = window.this.this
        partition = list(window.args.get("partition_by") or [])
        if x in partition or (
            isinstance(window.this, exp.LastValue)
            and frame(window, self.select) == "running"
        ):
            return self._outer(x)
        if isinstance(window.this, exp.LastValue):
            window = _first_of_reversed(window)
        first = window.args["order"].expressions[0]
        end = exp.Max if first.args.get("desc") else exp.Min
        value = self._window(
            exp.Window(this=end(this=x.copy()), partition_by=partition)
        )
        if not first.args.get("nulls_first"):
            return value  # NULLs last: the MIN or MAX, NULL if every x is
        rows, known = (
            self._window(exp.Window(this=count, partition_by=partition))
            for count in (exp.Count(this=exp.Star()), exp.Count(this=x.copy()))
        )
        return exp.Paren(
            this=exp.case()
            .when(exp.GT(this=rows, expression=known), exp.null())
            .else_(value)
        )

    def _shift(self, window: exp.Window) -> exp.Expression:
        """LAG/LEAD: the argument of the row whose rank is the row's less
        (LAG) or plus (LEAD) the offset, its DEFAULT where there is none;
        FIRST_VALUE: of the row ranked 1; NTH_VALUE(x, n): of the row ranked
        n (in the default frame, for the rows ranked n or later)."""
        func = window.this
        keys, levels = self._levels(window)
        column = self._column(func.this, "x")
        if isinstance(func, exp.FirstValue):
            offset = ("place", 1, False)  # the row ranked first
        elif isinstance(func, exp.NthValue):  # the row ranked n, in the frame
            running = frame(window, self.select) == "running"
            offset = ("place", nth_place(func), running)
        else:
            offset = int(func.args["offset"].name) if func.args.get("offset") else 1
            offset = offset if isinstance(func, exp.Lag) else -offset
        signature = (tuple(keys), levels, column, offset)
        if signature not in self.shifted:
            alias = f"__shifted{len(self.shifted) + 1}"
            rank = _rank_args(keys, levels, dense=False)
            self.shifted[signature] = (alias, rank, column, offset)
        alias = self.shifted[signature][0]
        value = exp.column("__x", table=alias)
        default = func.args.get("default")
        if default is None:
            return value
        none = exp.Is(this=exp.column("__found", table=alias), expression=exp.null())
        return exp.Paren(this=exp.case().when(none, default.copy()).else_(value))

    def _running(self, window: exp.Window) -> exp.Expression:
        """The aggregate over the rows before the row's, level by level, and
        over its peers."""
        func, keys, levels, column = self._aggregate_over(window)
        measures = running_measures(func, column)
        digits = self._digits(func)
        args = (
            keys,
            levels,
            measures,
            lambda tables: running_value(func, column, tables, digits),
            False,
            True,
        )
        return self._ordered(("running", func.key, tuple(keys), levels, column), args)

    def _band(self, window: exp.Window) -> exp.Expression:
        """The aggregate over the rows whose key is within the frame's
        offsets of the row's (`band_table`)."""
        func = window.this
        keys = [self._column(k, "k") for k in window.args.get("partition_by") or []]
        (ordered,) = window.args["order"].expressions
        key = self._column(ordered.this, "k")
        arg = func.this
        column = None
        if arg is not None and not isinstance(arg, exp.Star):
            column = self._column(arg, "x")
        bounds = band_bounds(window)
        descending = bool(ordered.args.get("desc"))
        digits = self._digits(func)
        signature = (
            func.key,
            tuple(keys),
            key,
            descending,
            tuple(None if b is None else (b[0].sql(), b[1]) for b in bounds),
            column,
        )
        if signature not in self.banded:
            args = (
                keys,
                key,
                descending,
                bounds,
                running_measures(func, column),
                lambda tables: running_value(func, column, tables, digits),
            )
            self.banded[signature] = (f"__band{len(self.banded) + 1}", args)
        return exp.column("__value", table=self.banded[signature][0])

    def _digits(self, func: exp.Expression) -> int | None:
        """The exact digits of an aggregate's argument where it is a DECIMAL
        or INTEGER column of a declared table (`running_value`'s AVG)."""
        return declared_digits(func.this, self.select, self.relations)

    def _aggregate_over(self, window: exp.Window) -> tuple:
        """An aggregate window's function, its partition's key columns, the
        levels of its order and the column of its argument (None: none, or
        `*`)."""
        func = window.this
        keys, levels = self._levels(window)
        arg = func.this
        column = None
        if arg is not None and not isinstance(arg, exp.Star):
            column = self._column(arg, "x")
        return func, keys, levels, column

    def _rows_band(self, window: exp.Window) -> exp.Expression:
        """The aggregate over the rows whose rank is within the frame's
        offsets of the row's (`rows_band_table`; the order tells the rows
        apart)."""
        func, keys, levels, column = self._aggregate_over(window)
        bounds = band_bounds(window, "ROWS")
        if not levels:  # every partition one row (its keys all ORDER BY's)
            return self._own_row(window, bounds)
        shown = tuple(
            b if not isinstance(b, tuple) else (b[0].sql(), b[1]) for b in bounds
        )
        signature = (func.key, tuple(keys), levels, shown, column)
        if signature not in self.rows_banded:
            x = "__x" if column is not None else None
            digits = self._digits(func)
            measures = (
                running_measures(func, x) if x else (Measure("__n", "count", "__x"),)
            )
            args = (
                _rank_args(keys, levels, dense=False),
                column,
                bounds,
                measures,
                lambda tables: running_value(func, x, tables, digits),
            )
            alias = f"__rows_band{len(self.rows_banded) + 1}"
            self.rows_banded[signature] = (alias, args)
        return exp.column("__value", table=self.rows_banded[signature][0])

    def _own_row(self, window: exp.Window, bounds: tuple) -> exp.Expression:
        """A ROWS frame over partitions of one row: the aggregate over the
        partition where the frame holds the current row, else over none."""
        lower, upper = (
            (
                0
                if b is None
                else None if b == "UNBOUNDED" else int(b[0].name) * (1 if b[1] else -1)
            )
            for b in bounds
        )
        if (lower is None or lower <= 0) and (upper is None or upper >= 0):
            partition = window.args.get("partition_by")
            return self._window(exp.Window(this=window.this, partition_by=partition))
        if isinstance(window.this, exp.Count):
            return exp.Literal.number(0)
        return exp.null()

    def _levels(self, window: exp.Window) -> tuple[list[str], tuple]:
        """The window's partition key columns and the levels of its order
        (a key never NULL needs no level for where NULLs sort)."""
        keys = [self._column(k, "k") for k in window.args.get("partition_by") or []]
        levels = order_levels(
            window,
            self._column,
            keys,
            lambda key: never_null(key, self.select, self.relations),
        )
        return keys, levels

    def _ordered(self, signature: tuple, args: tuple) -> exp.Column:
        """The value of an ordered window (one table per signature)."""
        if signature not in self.ordered:
            self.ordered[signature] = (f"__ordered{len(self.ordered) + 1}", args)
        return exp.column("__value", table=self.ordered[signature][0])

    def _order(self, order: exp.Order, items: list[exp.Alias]) -> exp.Order:
        """ORDER BY over the outer query: output names and positions stay,
        other expressions (output names in them spelled out) are computed
        as SELECT items are."""
        outputs = {item.alias for item in items}
        for ordered in order.expressions:
            key = ordered.this
            if isinstance(key, exp.Literal) or (
                isinstance(key, exp.Column) and not key.table and key.name in outputs
            ):
                continue
            ordered.set("this", self._outer(_with_items(key, items), "o"))
        return order


def _first_rows_only(qualify: exp.Expression, select: exp.Select) -> bool:
    """Whether the SELECT's windows are all one ROW_NUMBER() that QUALIFY
    tests `= 1` in one of its conjuncts (DISTINCT ON's rewrite, the first row
    per key): at most one row of a partition passes, and rows equal on every
    column the query reads after the window would give the same output
    whichever came first, so the rows are taken DISTINCT before they are
    numbered, and exact duplicates of a row no longer tie (nor trip the
    guard). `qualify`: the condition with the SELECT items it names spelled
    out."""
    windows = [
        w for w in select.find_all(exp.Window) if w.find_ancestor(exp.Select) is select
    ]
    if not windows or any(
        not isinstance(w.this, exp.RowNumber) or w != windows[0] for w in windows
    ):
        return False
    first = windows[0]
    return any(keeps_first(c, lambda x: x == first) for c in sql_conjuncts(qualify))


def keeps_first(test: exp.Expression, numbered) -> bool:
    """Whether `test` is `x = 1`, `x <= 1` or `x < 2` (either way round) for
    an `x` that `numbered(x)` accepts (a row number)."""
    return top_bound(test, numbered) == 1


def top_bound(test: exp.Expression, numbered) -> int | None:
    """The last place `test` keeps where it is `x <= n`, `x < n` or `x = n`
    (either way round) for an `x` that `numbered(x)` accepts, else None."""
    flipped = {exp.GTE: exp.LTE, exp.GT: exp.LT, exp.EQ: exp.EQ}
    kind = type(test)
    left, right = test.args.get("this"), test.args.get("expression")
    if kind in flipped and isinstance(left, exp.Literal):
        kind, left, right = flipped[kind], right, left
    if kind not in (exp.LTE, exp.LT, exp.EQ) or left is None or not numbered(left):
        return None
    if not (isinstance(right, exp.Literal) and right.is_int):
        return None
    return int(right.name) - (1 if kind is exp.LT else 0)


def _rows(base: exp.Select) -> exp.Subquery:
    """The SELECT without its windows, as the rows a window table reads."""
    return exp.Subquery(this=base.copy(), alias=exp.TableAlias(this=_name("__rows")))


def _order_keys(args: tuple) -> list[str]:
    """The columns an ordered window's table is keyed by: its partition and
    every level of its order (`ordered_table`'s first two arguments)."""
    partition, levels = args[:2]
    return partition + [level.column for level in levels]


def _rank_args(keys: list[str], levels: tuple, dense: bool) -> tuple:
    """`ordered_table`'s arguments but the rows for RANK (DENSE_RANK)."""
    return (keys, levels, (COUNT_ROWS,), _rank_value, dense)


def _rank_value(tables: list[str]) -> exp.Expression:
    """1 + the rows before, summed over the level tables."""
    value: exp.Expression = exp.Literal.number(1)
    for table in tables:
        value = exp.Add(this=value, expression=exp.column("__before", table=table))
    return value


def _with_items(condition: exp.Expression, items: list[exp.Alias]) -> exp.Expression:
    """A QUALIFY or ORDER BY expression with the SELECT items it names by
    alias spelled out (as DuckDB resolves those names)."""
    named = {item.alias: item.this for item in items}

    def spell(node):
        if isinstance(node, exp.Column) and not node.table and node.name in named:
            item = named[node.name]
            if not (isinstance(item, exp.Column) and item.name == node.name):
                return item.copy()
        return node

    return condition.copy().transform(spell)


def _name(text: str) -> exp.Identifier:
    return exp.to_identifier(text)


def _quoted(item: exp.Alias) -> bool:
    alias = item.args.get("alias")
    return bool(alias is not None and alias.args.get("quoted"))
