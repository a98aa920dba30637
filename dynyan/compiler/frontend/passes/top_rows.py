"""A partition's top n rows -> numbered only among the rows that can be.

`SELECT …, ROW_NUMBER() OVER (PARTITION BY p ORDER BY k DESC, …) AS rn
FROM t QUALIFY rn <= 10` (RANK() alike) numbers every row of a partition:
a row inserted near the top renumbers all those below it, a cost per change
that grows with the partition. Only rows whose first ORDER BY key reaches
the key at place n of their partition (with ties, counting every row) can
be among the first n, and every row before one of them is one of them, so
numbering those rows alone gives them the same numbers. This pass joins
the SELECT with that threshold per partition, `TOP_CUT(k, n)`, grouped
by the PARTITION BY keys:

    … FROM t JOIN (SELECT p AS __tp0, TOP_CUT(k, 10, TRUE) AS __cut FROM t
    GROUP BY p) AS __top1 ON p IS NOT DISTINCT FROM __top1.__tp0 AND k >=
    __top1.__cut

The join is an inequality the plan keeps indexed: a change moves the
threshold past the few rows at the cut, and `window_aggregates` then
numbers at most the n rows and those tied with the last. Ties further down
no longer trip its guard, as in SQL they decide nothing the query keeps.

With windows kept in order (`native_windows`, the default) the windows'
view outputs the places kept alone, a change past them recomputing
nothing, so the threshold is taken only where partitions may be large:
one partition (no PARTITION BY) without statistics, or LARGE_PARTITION
rows in the average one by them (a partition's list takes an insert in
time linear in its rows).

Taken where every window of the SELECT is ROW_NUMBER() or RANK() over one
PARTITION BY and ORDER BY, QUALIFY keeps rows up to a constant place (`rn
<= n`, `rn < n`, `rn = n`; `first_rows` moves such a test of a derived
table's number into its QUALIFY), the SELECT does not aggregate, and the
first key is a column of a table it reads: declared NOT NULL, or of a type
with a value at the end where its NULLs sort, which stands for NULL in the
threshold (a row equal to it is kept as well: only more rows are numbered;
of a DATE or text, for RANK() alone).
`ROW_NUMBER() … = 1` is left to `window_aggregates`' first place. Runs
after `first_rows`, before `window_aggregates`. Not taken where table
statistics (`dynyan compile --stats`) put fewer than SMALL_PARTITION rows
in the average partition: there numbering every row costs less than
keeping the threshold.

>>> import sqlglot
>>> from dynyan.compiler.frontend.context import Context
>>> from dynyan.compiler.frontend.statements import read_program
>>> program = read_program("CREATE TABLE t (p INTEGER, k INTEGER NOT NULL); "
...     "SELECT p, k, RANK() OVER (PARTITION BY p ORDER BY k) AS r FROM t QUALIFY r <= 3")
>>> ctx = Context(dict(program.relations), native_windows=False)
>>> tree = top_rows(program.query, ctx)
>>> print(tree.sql("duckdb"))  # doctest: +NORMALIZE_WHITESPACE
SELECT p, k, RANK() OVER (PARTITION BY p ORDER BY k) AS r FROM t JOIN (SELECT p
AS __tp0, TOP_CUT(k, 3) AS __cut FROM t GROUP BY p) AS __top1 ON p IS NOT
DISTINCT FROM __top1.__tp0 AND k <= __top1.__cut QUALIFY r <= 3
"""

from __future__ import annotations

import datetime

from sqlglot import exp

from ..aggregates import TopCut
from ..context import Context, sql_conjuncts
from .window_aggregates import has_column, table_column, top_bound

# Rows in the average partition below which the threshold costs more than it
# saves (trusting modules, one insert at a time, BENCHMARKS.md "Small sorted
# groups"): 1-3 orders a customer ran 4.6x slower with it, about 10 1.95x
# slower, 43 customers a nation 1.35x faster, 600 24x faster.
SMALL_PARTITION = 25
# Rows in the average partition (by the statistics: the whole table) from
# which a windows' view that outputs the top places alone (`native_windows`'
# cap) loses to the threshold, as its list insert moves the rows after the
# change (BENCHMARKS.md "Top places kept by the windows' view", tables
# filled by the SF 0.1 insert stream): 3,000 rows a partition at the end ran
# 1.61x faster capped, 30,000 1.54x slower, 50,000 2.7x slower.
LARGE_PARTITION = 10_000

# Per column type, the values that sort before and after every other: in
# the threshold they stand for NULL (a text has no last one). A DATE or a
# text may equal its end, whose rows then join the numbered ones: exact for
# RANK(), but ROW_NUMBER()'s guard would see their ties, so it takes an
# INTEGER's only.
_ENDS = {
    "int": (exp.Literal.number(-(10**40)), exp.Literal.number(10**40)),
    "date": (
        exp.cast(exp.Literal.string(str(datetime.date.min)), "DATE"),
        exp.cast(exp.Literal.string(str(datetime.date.max)), "DATE"),
    ),
    "str": (exp.Literal.string(""), None),
}


def top_rows(tree: exp.Expression, ctx: Context) -> exp.Expression:
    """Each SELECT that keeps a partition's top n rows joined with the
    partition's threshold (the module's docstring)."""
    cuts = 0
    for select in list(tree.find_all(exp.Select)):
        cut = _cut(select, ctx)
        if cut is None:
            continue
        cuts += 1
        partitions, key, place, descending = cut
        name = f"__top{cuts}"
        keys = [
            exp.alias_(p.copy(), f"__tp{i}", quoted=False)
            for i, p in enumerate(partitions)
        ]
        threshold = TopCut(
            this=key.copy(),
            expression=exp.Literal.number(place),
            descending=exp.true() if descending else None,
        )
        inner = exp.Select(expressions=[*keys, exp.alias_(threshold, "__cut")])
        for arg in ("from_", "from", "joins", "where"):
            if select.args.get(arg) is not None:
                inner.set(arg, select.args[arg].copy())
        if partitions:
            inner.set("group", exp.Group(expressions=[p.copy() for p in partitions]))
        compare = exp.GTE if descending else exp.LTE
        condition = compare(this=key.copy(), expression=exp.column("__cut", name))
        for i, p in reversed(list(enumerate(partitions))):
            same = exp.NullSafeEQ(
                this=p.copy(), expression=exp.column(f"__tp{i}", name)
            )
            condition = exp.and_(same, condition)
        joins = select.args.get("joins") or []
        joined = exp.Join(
            this=exp.Subquery(
                this=inner, alias=exp.TableAlias(this=exp.to_identifier(name))
            ),
            on=condition,
        )
        select.set("joins", [*joins, joined])
    return tree


def bounded(select: exp.Select, ctx: Context) -> bool:
    """Whether numbering the SELECT's rows costs a change no more than the
    rows up to the last place it keeps: this pass cuts them, or it keeps
    the first row alone (`window_aggregates`' first place)."""
    kept = _kept_places(select, ctx.relations)
    if kept is None:
        return False
    if ctx.native_windows:  # the windows' view outputs the places kept alone
        return True
    return _first_place(*kept) or _threshold(select, ctx, *kept) is not None


def _cut(select: exp.Select, ctx: Context):
    """(partition keys, threshold argument, n, descending) of a SELECT whose
    windows keep a partition's top n rows, else None (also where
    `window_aggregates` keeps the first place without ranks)."""
    kept = _kept_places(select, ctx.relations)
    if kept is None or _first_place(*kept):
        return None
    if ctx.native_windows and not large_partitions(select, kept[0], ctx):
        return None  # the windows' view outputs the places kept alone
    return _threshold(select, ctx, *kept)


def _first_place(windows: list[exp.Window], place: int) -> bool:
    """Only the first row kept, by ROW_NUMBER()s: `window_aggregates`' case."""
    return place == 1 and all(isinstance(w.this, exp.RowNumber) for w in windows)


def _threshold(select: exp.Select, ctx: Context, windows: list, place: int):
    """`_cut`'s tuple for windows kept up to `place`; None where their first
    ORDER BY key cannot be cut."""
    first = windows[0]
    ordered = first.args["order"].expressions[0]
    key, descending = ordered.this, bool(ordered.args.get("desc"))
    found = table_column(key, select, ctx.relations)
    if found is None:
        return None
    relation, column = found
    if not relation.is_notnull(column):
        kind = relation.types[column]
        if kind != "int" and not all(isinstance(w.this, exp.Rank) for w in windows):
            return None
        # NULLs last in an ascending order: after every value, as its last
        low, high = _ENDS.get(kind, (None, None))
        nulls_last = not ordered.args.get("nulls_first")
        end = high if nulls_last != descending else low
        if end is None:
            return None
        key = exp.Coalesce(this=key.copy(), expressions=[end.copy()])
    partitions = list(first.args.get("partition_by") or [])
    if _small_partitions(select, partitions, ctx):
        return None
    return partitions, key, place, descending


def _small_partitions(select: exp.Select, partitions: list, ctx: Context) -> bool:
    """Whether the statistics put fewer than SMALL_PARTITION rows in the
    average partition; False where they do not tell."""
    rows = _average_partition(select, partitions, ctx)
    return rows is not None and rows < SMALL_PARTITION


def large_partitions(select: exp.Select, windows: list, ctx: Context) -> bool:
    """Whether the windows' partitions may hold LARGE_PARTITION rows: by the
    statistics where they tell, else where there is one partition, the
    whole table (the windows' view inserts into a partition's list in time
    linear in its rows; the threshold keeps the rows it numbers few)."""
    partitions = list(windows[0].args.get("partition_by") or [])
    rows = _average_partition(select, partitions, ctx)
    if rows is None:
        return not partitions
    return rows >= LARGE_PARTITION


def _average_partition(select: exp.Select, partitions: list, ctx: Context):
    """The rows of the average partition of a SELECT from one table by the
    statistics (rows / the product of the keys' distinct counts), None
    where they do not tell."""
    from_ = select.args.get("from_") or select.args.get("from")
    if ctx.stats is None or select.args.get("joins"):
        return None
    if from_ is None or not isinstance(from_.this, exp.Table):
        return None
    rows = ctx.stats.table_rows(from_.this.name)
    if rows is None:
        return None
    groups = 1
    for p in partitions:
        found = table_column(p, select, ctx.relations)
        ndv = found and ctx.stats.ndv(found[0].name, found[0].columns[found[1]])
        if not ndv:
            return None
        groups *= ndv
    return rows / max(1, min(groups, rows))


def _kept_places(select: exp.Select, relations: dict):
    """(the windows, the last place QUALIFY keeps) of a SELECT that does not
    aggregate and whose windows all number its rows (ROW_NUMBER() or
    RANK()) over one PARTITION BY and ORDER BY, else None."""
    qualify = select.args.get("qualify")
    if qualify is None or _aggregates(select):
        return None
    windows = [
        w for w in select.find_all(exp.Window) if w.find_ancestor(exp.Select) is select
    ]
    if not windows:
        return None
    first = windows[0]
    order = first.args.get("order")
    if order is None or not order.expressions:
        return None
    for w in windows:
        if not isinstance(w.this, (exp.RowNumber, exp.Rank)) or w.args.get("spec"):
            return None
        if w.args.get("partition_by") != first.args.get("partition_by"):
            return None
        if w.args.get("order") != order:
            return None
    named = {  # QUALIFY reads a table's column before an output name
        item.alias.lower(): item.this
        for item in select.expressions
        if isinstance(item, exp.Alias) and not has_column(select, item.alias, relations)
    }

    def numbered(x: exp.Expression) -> bool:
        if isinstance(x, exp.Column) and not x.table:
            x = named.get(x.name.lower(), x)
        return any(x == w for w in windows)

    places = [top_bound(c, numbered) for c in sql_conjuncts(qualify.this)]
    places = [n for n in places if n is not None]
    if not places or min(places) < 1:
        return None
    return windows, min(places)


def _aggregates(select: exp.Select) -> bool:
    """Whether the SELECT groups its rows (a window's own function, RANK(),
    is no aggregate of it)."""
    return any(select.args.get(arg) for arg in ("group", "having")) or any(
        not isinstance(agg.parent, exp.Window)
        for item in select.expressions
        for agg in item.find_all(exp.AggFunc)
    )
