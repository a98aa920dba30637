"""Windows with ORDER BY as sums over inequality self-joins: RANK(),
DENSE_RANK() (PERCENT_RANK() and CUME_DIST() from them), running
aggregates, and LAG/LEAD as a join of the rows numbered by RANK().

A row's RANK() in its partition is 1 + the number of rows of the partition
ordered strictly before it; DENSE_RANK() counts the distinct keys instead;
a running `AGG(x) OVER (… ORDER BY …)` (the default frame: every row up to
the current one and its peers) aggregates the rows strictly before it and
its peers (the rows of equal keys). For ORDER BY k1, …, kn "strictly
before" is lexicographic, so the rows before split by the first key that
differs: for each level i the rows equal on k1 … k(i-1) and strictly before
on ki. Each level is one derived table, the groups of (partition, k1 … ki)
LEFT JOINed with themselves on the equal prefix and `<` (or `>` for DESC)
on ki, combining per group what the groups before hold (their row count,
the sum and count of x, its minimum or maximum); the view maintains it as
any grouped inequality join (IEDyn). A window's level tables (and the
table of peers) join on their keys into one table, a row per group of
equal ORDER BY keys with the window's value, which the query joins once.
Equality is IS NOT DISTINCT FROM, as windows group NULLs. A key that may
be NULL is preceded by a level of its own over `key IS NULL`, so NULLS
LAST (DuckDB's default) or NULLS FIRST orders the NULL rows, which then tie
among themselves on the key's level (a column declared NOT NULL, read
where no outer join pads it, needs none: one level table fewer).

A RANGE frame between offsets (`RANGE BETWEEN INTERVAL 6 DAY PRECEDING
AND CURRENT ROW`: a moving sum) is one table: the groups of (partition,
key) LEFT JOINed with themselves on the partition and `key - 6 days <=
other key <= key`, a band join (`band_table`).

ROW_NUMBER() is RANK() where the order tells the rows apart (GROUP BY keys
among the window's keys). Elsewhere it is RANK() too, beside a guard on the
groups of peers: among tied rows its numbers are arbitrary, so no view can
agree with a database run after run, and the View reads nothing while two
rows of a partition tie (`window_aggregates.needs_apart`).

>>> import sqlglot
>>> rows = sqlglot.parse_one("SELECT d AS k1, s AS k2 FROM emp").subquery("__rows")
>>> print(level_table(rows, ["k1"], (Level("k2", True),), 0, (COUNT_ROWS,)).sql())
SELECT __g1.k1 AS k1, __g1.k2 AS k2, COALESCE(SUM(__g2.__before), 0) AS __before FROM (SELECT __rows.k1, __rows.k2, COUNT(*) AS __before FROM (SELECT d AS k1, s AS k2 FROM emp) AS __rows GROUP BY __rows.k1, __rows.k2) AS __g1 LEFT JOIN (SELECT __rows.k1, __rows.k2, COUNT(*) AS __before FROM (SELECT d AS k1, s AS k2 FROM emp) AS __rows GROUP BY __rows.k1, __rows.k2) AS __g2 ON __g1.k1 IS NOT DISTINCT FROM __g2.k1 AND __g2.k2 > __g1.k2 GROUP BY __g1.k1, __g1.k2
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

RANKINGS = (exp.Rank, exp.DenseRank, exp.PercentRank, exp.CumeDist)


@dataclass(frozen=True)
class Level:
    """One key of the lexicographic order: the base column that holds it and
    whether larger values come first."""

    column: str
    descending: bool


@dataclass(frozen=True)
class Measure:
    """What a level table keeps per group: `kind` ("count", "sum", "min" or
    "max") of the rows' `column` (None: COUNT(*)), named `name`; over the
    groups before a row counts and sums add up (0 when there are none),
    minima and maxima combine as such (NULL when there are none)."""

    name: str
    kind: str
    column: str | None = None

    def of_rows(self, table: str) -> exp.Expression:
        if self.column is None:
            return exp.Count(this=exp.Star())
        arg = exp.column(self.column, table=table)
        if self.kind == "sum":  # 0 over NULLs: the count says whether any
            return exp.Coalesce(
                this=exp.Sum(this=arg), expressions=[exp.Literal.number(0)]
            )
        return {"count": exp.Count, "min": exp.Min, "max": exp.Max}[self.kind](this=arg)

    def of_groups(self, table: str) -> exp.Expression:
        arg = exp.column(self.name, table=table)
        if self.kind in ("min", "max"):
            return (exp.Min if self.kind == "min" else exp.Max)(this=arg)
        return exp.Coalesce(this=exp.Sum(this=arg), expressions=[exp.Literal.number(0)])


COUNT_ROWS = Measure("__before", "count")


def order_levels(
    window: exp.Window, column, partition: list[str], never_null=lambda key: False
) -> tuple[Level, ...]:
    """The levels of the window's ORDER BY; `column(expression, prefix)`
    names (and adds) the base column that outputs an expression. A key
    already in the partition or an earlier level, or a constant, is equal
    on both sides of every comparison, so it adds no level; a key that may
    be NULL adds one before its own (where its NULLs sort), unless
    `never_null(key)`."""
    levels: list[Level] = []
    for ordered in window.args["order"].expressions:
        key = ordered.this
        if isinstance(key, exp.Literal) or column(key, "k") in partition + [
            level.column for level in levels
        ]:
            continue
        if not isinstance(key, exp.Count) and not never_null(key):  # COUNT: never
            is_null = exp.case().when(
                exp.Is(this=key.copy(), expression=exp.null()), exp.Literal.number(1)
            )
            flag = is_null.else_(exp.Literal.number(0))
            # the NULL rows (flag 1) come last unless NULLS FIRST
            nulls_first = bool(ordered.args.get("nulls_first"))
            levels.append(Level(column(flag, "k"), nulls_first))
        levels.append(Level(column(key, "k"), bool(ordered.args.get("desc"))))
    return tuple(levels)


def level_table(
    rows: exp.Expression,
    partition: list[str],
    levels: tuple[Level, ...],
    depth: int,
    measures: tuple[Measure, ...],
    dense: bool = False,
    peers: bool = False,
) -> exp.Select:
    """Per group of (partition, levels[:depth + 1]) of `rows`, each measure
    over the rows (dense: distinct keys) equal on the levels above `depth`
    and strictly before on `levels[depth]`; `peers`: over the group's own
    rows instead (`depth` -1: the whole partition)."""
    keys = partition + [level.column for level in levels[: depth + 1]]
    source = rows
    if dense:  # one row per distinct key of the whole order
        every = partition + [level.column for level in levels]
        source = exp.select(*every).distinct().from_(rows).subquery("__keys")
    table = source.alias_or_name
    groups = (
        exp.select(*[exp.column(k, table=table) for k in keys])
        .select(*[exp.alias_(m.of_rows(table), m.name) for m in measures])
        .from_(source)
    )
    if keys:
        groups = groups.group_by(*[exp.column(k, table=table) for k in keys])
    if peers:
        return groups
    level = levels[depth]
    this, other = exp.column(level.column, table="__g2"), exp.column(
        level.column, table="__g1"
    )
    before = exp.GT(this=this, expression=other) if level.descending else None
    before = before or exp.LT(this=this, expression=other)
    on = same_keys(keys[:-1], "__g1", "__g2")
    return (
        exp.select(*[exp.column(k, table="__g1").as_(k) for k in keys])
        .select(*[exp.alias_(m.of_groups("__g2"), m.name) for m in measures])
        .from_(groups.subquery("__g1"))
        .join(groups.subquery("__g2"), on=exp.and_(*on, before), join_type="left")
        .group_by(*[exp.column(k, table="__g1") for k in keys])
    )


def ordered_table(
    rows: exp.Expression,
    partition: list[str],
    levels: tuple[Level, ...],
    measures: tuple[Measure, ...],
    value,
    dense: bool = False,
    peers: bool = False,
) -> exp.Select:
    """Per group of (partition, every level) of `rows`, `__value`: `value`
    (a function of the aliases of the level tables, the peers' table last)
    over the level tables joined on their keys."""
    aliases = [f"__l{depth + 1}" for depth in range(len(levels))]
    tables = [
        level_table(rows, partition, levels, depth, measures, dense)
        for depth in range(len(levels))
    ]
    if peers:
        aliases.append("__peers")
        tables.append(
            level_table(rows, partition, levels, len(levels) - 1, measures, peers=True)
        )
    keys = partition + [level.column for level in levels]
    widths = [len(partition) + d + 1 for d in range(len(levels))] + [len(keys)]
    last = aliases[-1]
    out = exp.select(
        *[exp.column(k, table=last).as_(k) for k in keys],
        exp.alias_(value(aliases), "__value"),
    ).from_(tables[-1].subquery(last))
    for alias, table, width in zip(aliases[:-1], tables[:-1], widths):
        on = same_keys(keys[:width], last, alias)
        out = out.join(table.subquery(alias), on=exp.and_(*on))
    return out


def running_measures(func: exp.Expression, column: str | None) -> tuple[Measure, ...]:
    """The measures a running `func` (SUM, COUNT, AVG, MIN, MAX of the rows'
    `column`; None: COUNT(*)) combines from."""
    if column is None:
        return (Measure("__n", "count"),)
    if isinstance(func, (exp.Min, exp.Max)):
        return (Measure("__m", "min" if isinstance(func, exp.Min) else "max", column),)
    count = Measure("__c", "count", column)
    return (
        (count,)
        if isinstance(func, exp.Count)
        else (count, Measure("__s", "sum", column))
    )


def running_value(
    func: exp.Expression, column: str | None, tables: list[str], digits=None
) -> exp.Expression:
    """`func`'s running value from the level tables' and the peers' table's
    measures (`tables`, the peers' last). AVG of a DECIMAL of `digits`
    digits divides its exact sum in units of 10^-digits by the count times
    10^digits, once, as a database's AVG does (not the sum's float by the
    count: 12.45 / 5 is 2.4899999999999998, 1245 / 500 is 2.49)."""

    def total(name: str) -> exp.Expression:
        out: exp.Expression = exp.column(name, table=tables[0])
        for t in tables[1:]:
            out = exp.Add(this=out, expression=exp.column(name, table=t))
        return exp.Paren(this=out)

    if column is None:
        return total("__n")
    if isinstance(func, (exp.Min, exp.Max)):
        parts = [exp.column("__m", table=t) for t in tables]
        if len(parts) == 1:
            return parts[0]
        extreme = exp.Least if isinstance(func, exp.Min) else exp.Greatest
        return extreme(this=parts[0], expressions=parts[1:])
    if isinstance(func, exp.Count):
        return total("__c")
    value = total("__s")
    if isinstance(func, exp.Avg):
        count = total("__c")
        if digits:
            unit = exp.Literal.number(10**digits)
            value = exp.Mul(this=value, expression=unit)
            count = exp.Paren(this=exp.Mul(this=count, expression=unit.copy()))
        value = exp.Div(this=value, expression=count)
    none = exp.EQ(this=total("__c"), expression=exp.Literal.number(0))
    return exp.Paren(this=exp.case().when(none, exp.null()).else_(value))


def band_table(
    rows: exp.Expression,
    partition: list[str],
    key: str,
    descending: bool,
    bounds: tuple,
    measures: tuple[Measure, ...],
    value,
) -> exp.Select:
    """Per group of (partition, key) of `rows`, `__value`: `value` (a
    function of the one table's alias) over the measures of the partition's
    rows whose key lies in the frame: from the start bound's position to the
    end bound's in the order's direction, each the row's key (CURRENT ROW,
    None) or the key ± an offset (`(offset, following)`). A row whose key is
    NULL has its peers as its frame, as DuckDB (NULL ± n is no position)."""
    table = rows.alias_or_name
    keys = partition + [key] if key not in partition else partition
    groups = (
        exp.select(*[exp.column(k, table=table) for k in keys])
        .select(*[exp.alias_(m.of_rows(table), m.name) for m in measures])
        .from_(rows)
        .group_by(*[exp.column(k, table=table) for k in keys])
    )
    mine, other = exp.column(key, table="__g1"), exp.column(key, table="__g2")

    def position(bound) -> exp.Expression:
        if bound is None:
            return mine.copy()
        offset, following = bound
        later = following != descending  # a larger key
        shift = exp.Add if later else exp.Sub
        return exp.Paren(this=shift(this=mine.copy(), expression=offset.copy()))

    first, last = (position(b) for b in bounds)
    low, high = (last, first) if descending else (first, last)
    inside = [
        exp.GTE(this=other.copy(), expression=low),
        exp.LTE(this=other.copy(), expression=high),
    ]
    null_key = exp.Is(this=mine.copy(), expression=exp.null())
    band = (
        exp.select(*[exp.column(k, table="__g1").as_(k) for k in keys])
        .select(
            *[
                exp.alias_(
                    exp.case()
                    .when(
                        null_key.copy(), exp.Max(this=exp.column(m.name, table="__g1"))
                    )
                    .else_(m.of_groups("__g2")),
                    m.name,
                )
                for m in measures
            ]
        )
        .from_(groups.subquery("__g1"))
        .join(
            groups.subquery("__g2"),
            on=exp.and_(*same_keys(partition, "__g1", "__g2"), *inside),
            join_type="left",
        )
        .group_by(*[exp.column(k, table="__g1") for k in keys])
    )
    return exp.select(
        *[exp.column(k, table="__b").as_(k) for k in keys],
        exp.alias_(value(["__b"]), "__value"),
    ).from_(band.subquery("__b"))


def rows_band_table(
    rows: exp.Expression,
    rank: tuple,
    column: str | None,
    bounds: tuple,
    measures: tuple[Measure, ...],
    value,
) -> exp.Select:
    """Per row of `rows` (its partition and ORDER BY keys, which tell the
    rows apart), `__value`: `value` (a function of the one table's alias)
    over `measures` of `__x` (the rows' `column`; None: 1, for COUNT(*))
    over the rows of its partition ranked from the start bound to the end
    bound around it: each its own rank (CURRENT ROW, None), the partition's
    end ("UNBOUNDED") or the rank ± an offset (`(offset, following)`).
    `rank`: `ordered_table`'s arguments of the RANK."""
    partition, levels = rank[:2]
    keys = partition + [level.column for level in levels]
    x = exp.column(column, table="__r") if column else exp.Literal.number(1)
    numbered = (
        exp.select(*[exp.column(k, table="__r").as_(k) for k in keys])
        .select(x.as_("__x"), exp.column("__value", table="__o").as_("__n"))
        .from_(rows.this.copy().subquery("__r"))
        .join(
            ordered_table(rows, *rank).subquery("__o"),
            on=exp.and_(*same_keys(keys, "__r", "__o")),
        )
    )
    mine, other = exp.column("__n", table="__cur"), exp.column("__n", table="__prev")
    inside = []
    for bound, compare in zip(bounds, (exp.GTE, exp.LTE)):
        if bound == "UNBOUNDED":
            continue
        position: exp.Expression = mine.copy()
        if bound is not None:
            offset, following = bound
            shift = exp.Add if following else exp.Sub
            position = exp.Paren(this=shift(this=position, expression=offset.copy()))
        inside.append(compare(this=other.copy(), expression=position))
    band = (
        exp.select(*[exp.column(k, table="__cur").as_(k) for k in keys])
        .select(*[exp.alias_(m.of_rows("__prev"), m.name) for m in measures])
        .from_(numbered.subquery("__cur"))
        .join(
            numbered.subquery("__prev"),
            on=exp.and_(*same_keys(partition, "__cur", "__prev"), *inside),
            join_type="left",
        )
        .group_by(*[exp.column(k, table="__cur") for k in keys])
    )
    return exp.select(
        *[exp.column(k, table="__b").as_(k) for k in keys],
        exp.alias_(value(["__b"]), "__value"),
    ).from_(band.subquery("__b"))


def shifted_table(
    rows: exp.Expression, rank: tuple, column: str, offset: int | tuple
) -> exp.Select:
    """Per row of `rows` (its partition and ORDER BY keys, which tell the
    rows apart), `__x`: the `column` of the row ranked `offset` before it in
    its partition (after it, for a negative offset; ("place", n, running):
    the row ranked n, for every row or, running, for those ranked n or
    later), and `__found` 1; no row where there is none. `rank`:
    `ordered_table`'s arguments of the RANK."""
    place = offset if isinstance(offset, tuple) else None
    partition, levels = rank[:2]
    keys = partition + [level.column for level in levels]
    ranked = rows.this.copy().subquery("__r")
    on = same_keys(keys, "__r", "__o")
    numbered = (
        exp.select(*[exp.column(k, table="__r").as_(k) for k in keys])
        .select(
            exp.column(column, table="__r").as_("__x"),
            exp.column("__value", table="__o").as_("__n"),
            exp.alias_(
                exp.Add(
                    this=exp.column("__value", table="__o"),
                    expression=exp.Literal.number(0 if place else offset),
                ),
                "__next",
            ),
        )
        .from_(ranked)
        .join(ordered_table(rows, *rank).subquery("__o"), on=exp.and_(*on))
    )
    same = same_keys(partition, "__cur", "__prev")
    same.append(
        exp.EQ(
            this=exp.column("__next", table="__prev"),
            expression=exp.column("__n", table="__cur"),
        )
        if place is None
        else exp.EQ(
            this=exp.column("__n", table="__prev"),
            expression=exp.Literal.number(place[1]),
        )
    )
    if place is not None and place[2]:  # the frame up to the row holds n rows
        same.append(
            exp.GTE(
                this=exp.column("__n", table="__cur"),
                expression=exp.Literal.number(place[1]),
            )
        )
    return (
        exp.select(*[exp.column(k, table="__cur").as_(k) for k in keys])
        .select(
            exp.column("__x", table="__prev").as_("__x"),
            exp.alias_(exp.Literal.number(1), "__found"),
        )
        .from_(numbered.subquery("__cur"))
        .join(numbered.subquery("__prev"), on=exp.and_(*same))
    )


def same_keys(keys: list[str], left: str, right: str) -> list[exp.Expression]:
    """`left.k IS NOT DISTINCT FROM right.k` for each key: windows group
    NULLs, so NULL keys match."""
    return [
        exp.NullSafeEQ(
            this=exp.column(k, table=left), expression=exp.column(k, table=right)
        )
        for k in keys
    ]
