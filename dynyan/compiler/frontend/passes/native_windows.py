"""Window functions over a SELECT's rows -> an inner view that keeps each
partition's rows in order (`ir.WindowQuery`), instead of joins.

`window_aggregates` turns a window into joins with aggregates of the rows
before each row (a rank is 1 + the rows before it): a row inserted early in
a partition changes the rank of every row after it, and each change flows
through several inner views. Here the SELECT without its windows becomes the
derived table `__windowed` (as there): a SELECT of its rows' columns, read
from them as the derived table `__rows` (later passes may turn the rows'
SELECT into a UNION: ROLLUP, outer joins), with one placeholder column per
window (`NULL AS __nw1`) and, in its `meta`, what each computes over the
other columns (`NATIVE`). `compile_select` builds that into a
`WindowQuery`, whose view recomputes only the rows of a partition whose
values can change (a LAG's next rows, a rank's rows from the change on) and
reports the difference.

Taken where every window of the SELECT is one this view computes: rankings,
NTILE, LAG/LEAD, FIRST_VALUE/LAST_VALUE in the default frame, and COUNT,
SUM, AVG, MIN, MAX over the whole partition, running up to the current
row, over a ROWS frame (of bounded ends, or one end unbounded), or over a RANGE frame
between offsets (numbers, or DAYs and WEEKs) of its one ORDER BY key, all
over one PARTITION BY and one ORDER BY (or none). Some only this view
computes (`_only_here`): FIRST_VALUE, LAST_VALUE, NTH_VALUE over ROWS
frames and IGNORE NULLS, LAG/LEAD IGNORE NULLS, NTH_VALUE (the n-th row of
a frame, `picked_value`), COUNT/SUM/AVG(DISTINCT x) over an order (a set
of the frame's values beside its sums; over whole partitions
`window_aggregates`' groups keep them), MEDIAN, QUANTILE_CONT/_DISC,
STRING_AGG and ARG_MAX/ARG_MIN over an order (`folded_window`: the frame's
values kept). A
QUALIFY (or the outer query's test) that keeps places up to n of a
ROW_NUMBER() or RANK() computed here (`rn <= n`, as `top_rows` reads it)
caps the view: it outputs only the rows up to that place, so that a change
past them recomputes nothing and ties further down refuse no read; the
first row per key too (`rn = 1`, 3.4x `window_aggregates`' partition
aggregates on the latest order per customer), but where a partition may be
large (one partition, or 10,000 rows by the statistics: a list takes an
insert in time linear in its rows), where `window_aggregates` keeps it
without ranks. RANGE frames by months or years are left to it as well.

>>> import sqlglot
>>> from dynyan.compiler.frontend.context import Context
>>> tree = sqlglot.parse_one(
...     "SELECT k, v - LAG(v) OVER (PARTITION BY k ORDER BY d) AS dv FROM t",
...     read="duckdb")
>>> out = native_windows(tree, Context({}))
>>> print(out.sql("duckdb"))
SELECT __windowed.__c1 AS k, __windowed.__c2 - __windowed.__nw4 AS dv FROM (SELECT __rows.__c1 AS __c1, __rows.__c2 AS __c2, __rows.__k3 AS __k3, NULL AS __nw4 FROM (SELECT k AS __c1, v AS __c2, d AS __k3 FROM t) AS __rows) AS __windowed
>>> [(w["kind"], w["arg"], w["partition"], w["order"]) for w in out.find(exp.Subquery).this.meta[NATIVE]]
[('lag', '__c2', ['__c1'], [('__k3', False, False)])]
"""

from __future__ import annotations

from sqlglot import exp

from ..context import NATIVE, Context, sql_conjuncts
from .qualify_names import expand_stars
from .window_aggregates import (
    _first_of_reversed,
    _first_rows_only,
    _name,
    _Rewrite,
    _supported,
    band_bounds,
    _with_items,
    folded_window,
    frame,
    has_column,
    in_select_list,
    needs_apart,
    picked_value,
    rows_offsets,
    top_bound,
)
from .name_outputs import named
from .top_rows import large_partitions

_RANKINGS = {
    exp.RowNumber: "row_number",
    exp.Rank: "rank",
    exp.DenseRank: "dense_rank",
    exp.PercentRank: "percent_rank",
    exp.CumeDist: "cume_dist",
    exp.Ntile: "ntile",
}
_SHIFTS = {
    exp.Lag: "lag",
    exp.Lead: "lead",
    exp.FirstValue: "first_value",
    exp.LastValue: "last_value",
}
_AGGREGATES = {
    exp.Count: "count",
    exp.Sum: "sum",
    exp.Avg: "avg",
    exp.Min: "min",
    exp.Max: "max",
}
# the frame's values kept in a list (`folded_window`); MEDIAN: q = 0.5
_FOLDS = {
    exp.Median: "quantile_cont",
    exp.PercentileCont: "quantile_cont",
    exp.PercentileDisc: "quantile_disc",
    exp.GroupConcat: "string_agg",
    exp.ArgMax: "arg_max",
    exp.ArgMin: "arg_min",
}


def native_windows(tree: exp.Expression, ctx: Context) -> exp.Expression:
    if not ctx.native_windows:
        return tree
    for select in reversed(list(tree.find_all(exp.Select))):
        _partition_ends(select)
        # one order's windows at a time: the others stay on the query over
        # their rows, taken in the next round
        while True:
            windows = [
                w
                for w in select.find_all(exp.Window)
                if w.find_ancestor(exp.Select) is select
            ]
            if not windows or not expand_stars(select, ctx):
                break
            computed = [_computed(w, select) for w in windows]
            if not all(computed) and not _beside_mine(windows, computed, select):
                break
            if _first_rows(select, ctx) and large_partitions(select, windows, ctx):
                break  # window_aggregates keeps no ranks for it, nor a list
            rewritten = _Native(select, ctx.relations, _first_order(windows)).query()
            if select is tree:
                tree = rewritten
            else:
                select.replace(rewritten)
            select = rewritten
    return tree


def _partition_ends(select: exp.Select) -> None:
    """FIRST_VALUE over a frame from the partition's start and LAST_VALUE
    over the whole partition as the view computes them: FIRST_VALUE in the
    default frame (the same first row), and FIRST_VALUE over the order
    reversed (the partition's last row first)."""
    for window in list(select.find_all(exp.Window)):
        if window.find_ancestor(exp.Select) is not select or not window.args.get(
            "spec"
        ):
            continue
        framed = frame(window, select)
        if isinstance(window.this, exp.FirstValue) and framed in (
            "running",
            "partition",
        ):
            window.set("spec", None)
        elif isinstance(window.this, exp.LastValue) and framed == "partition":
            window.replace(_first_of_reversed(window))


def _order_of(window: exp.Window) -> tuple:
    """A window's PARTITION BY and ORDER BY, as SQL (None: no ORDER BY)."""
    partition = tuple(k.sql() for k in window.args.get("partition_by") or [])
    order = window.args.get("order")
    return partition, order.sql() if order is not None else None


def _first_order(windows: list[exp.Window]) -> tuple:
    """The PARTITION BY and ORDER BY of the first window with an ORDER BY
    (else of the first): its windows, and those over the whole of the same
    partitions, are computed together."""
    orders = [_order_of(w) for w in windows]
    return next((o for o in orders if o[1] is not None), orders[0])


def _computed(window: exp.Window, select: exp.Select) -> bool:
    """Whether the window is one the view computes (and maintainable at all)."""
    func = window.this
    if _only_here(window, select):
        return in_select_list(window) and _framed(window, select)
    if not _supported(window, select):
        return False
    if type(func) in _RANKINGS:
        return True
    if type(func) in _SHIFTS:
        if isinstance(func, (exp.FirstValue, exp.LastValue)):
            return window.args.get("spec") is None
        return True
    if type(func) in _AGGREGATES:
        if isinstance(func.this, exp.Distinct):  # over whole partitions:
            return False  # window_aggregates' groups, no list of rows
        return _framed(window, select)
    return False


def _beside_mine(windows: list, computed: list, select: exp.Select) -> bool:
    """Whether the windows this view does not take are DISTINCT aggregates
    over whole partitions (kept by `window_aggregates`' groups, with no list
    of rows), beside a window only this view computes: the view takes the
    SELECT, those are left for `window_aggregates` over its rows when their
    partition is not the view's, else computed here too."""
    return any(_only_here(w, select) for w in windows) and all(
        done
        or (
            type(w.this) in _AGGREGATES
            and isinstance(w.this.this, exp.Distinct)
            and in_select_list(w)
            and frame(w, select) == "partition"
        )
        for w, done in zip(windows, computed)
    )


def _only_here(window: exp.Window, select: exp.Select) -> bool:
    """A window that only this view computes: a value picked from a frame
    (`picked_value`), a DISTINCT aggregate over an order, or the frame's
    values folded (`folded_window`)."""
    return (
        picked_value(window, select) is not None
        or _distinct_in_order(window)
        or folded_window(window, select)
    )


def _distinct_in_order(window: exp.Window) -> bool:
    """COUNT, SUM, AVG, MIN or MAX (DISTINCT x) over an order (a running
    count of distinct users), which only this view computes."""
    func = window.this
    return (
        type(func) in _AGGREGATES
        and isinstance(func.this, exp.Distinct)
        and len(func.this.expressions) == 1
        and window.args.get("order") is not None
    )


def _framed(window: exp.Window, select: exp.Select) -> bool:
    """Whether the view computes the window's frame (a pick's: always)."""
    if type(window.this) not in (*_AGGREGATES, *_FOLDS):
        return True
    framed = frame(window, select)
    return (
        framed in ("partition", "running")
        or (framed == "rows" and rows_offsets(window) is not None)
        or (framed == "band" and _band(window) is not None)
    )


_DAYS = {"DAY": 1, "DAYS": 1, "WEEK": 7, "WEEKS": 7}


def _band(window: exp.Window) -> tuple | None:
    """A RANGE frame between offsets of its one ORDER BY key as its two
    ends, each None (CURRENT ROW) or (amount, unit, FOLLOWING): a number
    (unit "") or whole days (unit "days", an INTERVAL of DAYs or WEEKs);
    None for any other offset (months and years have no fixed length)."""
    bounds = band_bounds(window)
    if bounds is None:
        return None
    ends = []
    for bound in bounds:
        if bound is None:
            ends.append(None)
            continue
        offset, following = bound
        if isinstance(offset, exp.Interval):
            unit = offset.args.get("unit")
            amount = offset.this
            days = _DAYS.get(unit.name.upper()) if unit is not None else None
            if days is None or not (
                isinstance(amount, exp.Literal) and amount.name.isdigit()
            ):
                return None
            ends.append((int(amount.name) * days, "days", following))
        else:
            text = offset.name
            ends.append((int(text) if text.isdigit() else float(text), "", following))
    return tuple(ends)


def _first_rows(select: exp.Select, ctx: Context) -> bool:
    """Whether QUALIFY keeps only the first row per key (as `_Rewrite` finds)."""
    qualify = select.args.get("qualify")
    if qualify is None:
        return False
    items = [named(e.copy()) for e in select.expressions]
    spelled = [i for i in items if not has_column(select, i.alias, ctx.relations)]
    return _first_rows_only(_with_items(qualify.this, spelled), select)


class _Native(_Rewrite):
    """`_Rewrite`'s outer query over `__windowed`, each window one of its
    columns that the `WindowQuery` computes."""

    def __init__(self, select: exp.Select, relations: dict, order: tuple):
        super().__init__(select, relations)
        self.order = order  # the windows computed here: `_first_order`
        self.native: list[dict] = []
        self.specs: dict[str, dict] = {}  # a window's SQL -> its entry of `native`

    def _mine(self, window: exp.Window) -> bool:
        partition, order = _order_of(window)
        return partition == self.order[0] and order in (None, self.order[1])

    def query(self) -> exp.Select:
        outer = super().query()
        later = outer.find(exp.Window) is not None  # windows of other orders
        where = outer.args.get("where")
        if where is not None and later:
            # QUALIFY filters the rows once every window is computed
            outer.set("where", None)
            outer.set("qualify", exp.Qualify(this=where.this))
        windowed = outer.args["from_"].this
        base = windowed.this
        # The windows' SELECT reads the rows as a derived table of their own:
        # later passes may turn `base` into a UNION (ROLLUP, outer joins),
        # whose sides must not each carry the windows.
        items = [
            exp.alias_(exp.column(e.alias, table="__rows"), e.alias)
            for e in base.expressions
        ]
        for spec in self.native:
            items.append(exp.alias_(exp.null(), spec["name"]))
            if spec["found"]:
                items.append(exp.alias_(exp.null(), spec["found"]))
        if not later and where is not None:
            self._cap(where.this)
        rows = exp.Subquery(this=base, alias=exp.TableAlias(this=_name("__rows")))
        select = exp.select(*items).from_(rows)
        select.meta[NATIVE] = self.native
        windowed.set("this", select)
        return outer

    def _cap(self, test: exp.Expression) -> None:
        """A place test of the last windows (`rn <= n`, as `top_rows` reads
        it) on ROW_NUMBER() or RANK() over the view's order: the view then
        outputs only the rows up to that place, and a change past them costs
        no recomputation. The test itself stays on the outer query."""
        ranks = {
            s["name"]: s
            for s in self.native
            if s["kind"] in ("row_number", "rank") and s["order"]
        }

        def numbered(x: exp.Expression) -> bool:
            return (
                isinstance(x, exp.Column)
                and x.table == "__windowed"
                and (x.name in ranks)
            )

        places = []
        for c in sql_conjuncts(test):
            place = top_bound(c, numbered)
            if place is not None and place >= 1:
                places.append((place, ranks[c.find(exp.Column).name]["name"]))
        if places:
            place, name = min(places)
            ranks[name]["cap"] = place

    def _window(self, window: exp.Window) -> exp.Expression:
        if not self._mine(window):  # over `__windowed`'s columns, for later
            return window.copy().transform(self._lift)
        key = window.sql()
        func = window.this
        default = func.args.get("default") if type(func) in _SHIFTS else None
        if key not in self.specs:
            self.specs[key] = self._spec(window, default is not None)
        spec = self.specs[key]
        value = exp.column(spec["name"], table="__windowed")
        if default is None:
            return value
        found = exp.column(spec["found"], table="__windowed")
        none = exp.Is(this=found, expression=exp.null())
        lifted = self._outer(default) if default.find(exp.Column) else default.copy()
        return exp.Paren(this=exp.case().when(none, lifted).else_(value))

    def _lift(self, node: exp.Expression) -> exp.Expression:
        """Inside a window computed later: a column, or an aggregate of the
        SELECT's groups, as the column of `__windowed` that outputs it (the
        window itself and its function stay)."""
        if isinstance(node, (exp.Window, exp.IgnoreNulls)) or (
            isinstance(node.parent, (exp.Window, exp.IgnoreNulls))
            and node.arg_key == "this"
        ):
            return node
        if isinstance(node, (exp.AggFunc, exp.Column)):
            return exp.column(self._column(node, "c"), table="__windowed")
        return node

    def _spec(self, window: exp.Window, with_default: bool) -> dict:
        """The window's entry of `native` (its columns made `__windowed`'s)."""
        func = window.this
        partition = [
            self._column(k, "k") for k in window.args.get("partition_by") or []
        ]
        order_by = window.args.get("order")
        order = [
            (
                self._column(o.this, "k"),
                bool(o.args.get("desc")),
                bool(o.args.get("nulls_first")),
            )
            for o in (order_by.expressions if order_by is not None else [])
        ]
        arg, offset, buckets, param = None, 1, 0, None
        picked = picked_value(window, self.select)
        if picked is not None:  # the n-th row of a frame (whose x is not NULL)
            kind, offset, picked, ignore = picked
            arg = self._column((func.this if ignore else func).this, "x")
        else:
            kind = (_RANKINGS | _SHIFTS | _AGGREGATES | _FOLDS)[type(func)]
            if kind == "string_agg":  # its separator (DuckDB's default ',')
                sep = func.args.get("separator")
                param = sep.name if sep is not None else ","
            elif kind in ("arg_max", "arg_min"):  # the column compared
                param = self._column(func.expression, "x")
            elif type(func) in _FOLDS:  # q (MEDIAN's 0.5)
                q = func.args.get("expression")
                param = 0.5 if isinstance(func, exp.Median) else float(q.name)
            if kind == "ntile":
                buckets = int(func.this.name)
            elif isinstance(func.this, exp.Distinct):  # COUNT(DISTINCT x) …
                arg = self._column(func.this.expressions[0], "x")
            elif type(func) not in _RANKINGS and not isinstance(
                func.this, (exp.Star, type(None))
            ):
                arg = self._column(func.this, "x")
            if func.args.get("offset") is not None:  # LAG, LEAD
                offset = int(func.args["offset"].name)
        if kind in (*_AGGREGATES.values(), *_FOLDS.values()):
            framed = frame(window, self.select)
        else:  # a pick up to the row's last peer: as a running aggregate
            framed = "running" if picked == "peers" else None
        spec = window.args.get("spec")
        number = len(self.base_items) + len(self.native) + 1
        name = f"__nw{number}"
        self.native.append(
            {
                "name": name,
                "kind": kind,
                "arg": arg,
                "partition": partition,
                "order": order,
                "running": framed == "running",
                "sliding": (
                    picked
                    if isinstance(picked, tuple)
                    else rows_offsets(window) if framed == "rows" else None
                ),
                "band": _band(window) if framed == "band" else None,
                "rows_frame": spec is not None
                and (spec.args.get("kind") or "").upper() == "ROWS",
                "offset": offset,
                "buckets": buckets,
                "guarded": needs_apart(window, self.select, self.relations),
                "ignore_nulls": isinstance(func, exp.IgnoreNulls),
                # MIN and MAX of the distinct values: of the values
                "distinct": kind in ("count", "sum", "avg")
                and isinstance(func.this, exp.Distinct),
                # MEDIAN, QUANTILE_CONT/_DISC: q; STRING_AGG: its separator
                "param": param,
                "median": isinstance(func, exp.Median),
                "found": f"__nf{number}" if with_default else None,
                "cap": None,  # the last place the outer query keeps: `_cap`
            }
        )
        return self.native[-1]
