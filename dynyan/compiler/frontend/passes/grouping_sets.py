"""GROUP BY ROLLUP, CUBE and GROUPING SETS -> a UNION ALL of plain GROUP BYs.

Each grouping set is the query grouped by its keys, with the other keys
NULL in its rows and `GROUPING(k, …)` the bit mask of the keys rolled up
(as DuckDB and PostgreSQL give them); the empty set is a global aggregate, so
the grand total has its row even over no input. Each branch is an ordinary
grouped query, maintained as one side of a set operation; a subquery in
WHERE or HAVING is in every branch, each with its own view of it (TPC-DS
Q14a, Q70: state and work grow with the number of grouping sets).

>>> import sqlglot
>>> from dynyan.compiler.frontend.context import Context
>>> tree = sqlglot.parse_one(
...     "SELECT a, b, SUM(v) AS s, GROUPING(a, b) AS g FROM t GROUP BY ROLLUP (a, b)",
...     read="duckdb")
>>> print(grouping_sets(tree, Context({})).sql("duckdb"))
SELECT a, b, SUM(v) AS s, 0 AS g FROM t GROUP BY a, b UNION ALL SELECT a, NULL AS b, SUM(v) AS s, 1 AS g FROM t GROUP BY a UNION ALL SELECT NULL AS a, NULL AS b, SUM(v) AS s, 3 AS g FROM t
"""

from __future__ import annotations

import itertools

from sqlglot import exp

from ..context import Context
from ..diagnostics import unsupported

# How many grouping sets one query may expand to (CUBE of n keys: 2^n).
MAX_SETS = 64


def grouping_sets(tree: exp.Expression, ctx: Context) -> exp.Expression:
    for group in tree.find_all(exp.Group):
        _with_rollup(group)
    if tree.find(exp.Window) is not None:
        return tree  # refused as written (check_supported), not as expanded
    for select in reversed(list(tree.find_all(exp.Select))):
        group = select.args.get("group")
        if group is None or not any(
            isinstance(e, (exp.Rollup, exp.Cube, exp.GroupingSets))
            for e in group.expressions
        ):
            _no_sets(select, group)
            continue
        _spell_out(select, group, ctx)
        sets = _sets(group)
        union = _expand(select, sets)
        if select is tree:
            tree = union
        else:
            select.replace(union)
    return tree


def _no_sets(select: exp.Select, group: exp.Group | None) -> None:
    """GROUPING(k, …) of a plain GROUP BY's keys: 0, no key is rolled up."""
    keys = group.expressions if group is not None else []
    for node in list(select.find_all(exp.Grouping, exp.GroupingId)):
        if node.parent_select is select and all(k in keys for k in node.expressions):
            node.replace(exp.Literal.number(0))


def _with_rollup(group: exp.Group) -> None:
    """MySQL's `GROUP BY a, b WITH ROLLUP` (and `WITH CUBE`) as the
    standard `GROUP BY ROLLUP (a, b)`."""
    for arg, kind in (("rollup", exp.Rollup), ("cube", exp.Cube)):
        if group.args.get(arg) and not any(
            e.expressions for e in group.args[arg] if isinstance(e, kind)
        ):
            keys = [e.pop() for e in list(group.expressions)]
            group.set(arg, None)
            group.set("expressions", [kind(expressions=keys)])


def _spell_out(select: exp.Select, group: exp.Group, ctx: Context) -> None:
    """Keys inside ROLLUP, CUBE and GROUPING SETS that name a SELECT item
    by position (`ROLLUP (1, 2)`) or by alias (`ROLLUP (month)`, where no
    table has such a column) become the item's expression, as for a plain
    GROUP BY key: each grouping set then groups by expressions. As DuckDB,
    a number is a position only where the clause is all of GROUP BY (beside
    other elements DuckDB groups by it as a constant)."""
    items = list(select.expressions)
    positional = len(group.expressions) == 1
    aliases = {i.alias.lower(): i.this for i in items if isinstance(i, exp.Alias)}
    columns = {c.lower() for r in ctx.relations.values() for c in r.columns}

    def spell(node):
        if positional and isinstance(node, exp.Literal) and not node.is_string:
            if node.name.isdigit() and 1 <= int(node.name) <= len(items):
                return items[int(node.name) - 1].unalias().copy()
        if isinstance(node, exp.Column) and not node.table:
            name = node.name.lower()
            if name in aliases and name not in columns:
                return aliases[name].copy()
        return node

    for e in group.expressions:
        if isinstance(e, (exp.Rollup, exp.Cube, exp.GroupingSets)):
            for part in list(e.expressions):
                if isinstance(part, (exp.Tuple, exp.Paren)):
                    part.transform(spell, copy=False)
                else:
                    part.replace(spell(part))


def _sets(group: exp.Group) -> list[list[exp.Expression]]:
    """The grouping sets of a GROUP BY clause: the cross product of its
    elements' sets (a plain key is in every set)."""
    choices = []
    for e in group.expressions:
        if isinstance(e, exp.Rollup):
            keys = list(e.expressions)
            choices.append([keys[:n] for n in range(len(keys), -1, -1)])
        elif isinstance(e, exp.Cube):
            keys = list(e.expressions)
            choices.append(
                [
                    [k for k, keep in zip(keys, mask) if keep]
                    for mask in itertools.product((True, False), repeat=len(keys))
                ]
            )
        elif isinstance(e, exp.GroupingSets):
            choices.append([_set_keys(s) for s in e.expressions])
        else:
            choices.append([[e]])
    sets = [
        [k for part in combination for k in part]
        for combination in itertools.product(*choices)
    ]
    if len(sets) > MAX_SETS:
        raise unsupported(
            f"GROUP BY expands to {len(sets)} grouping sets (at most {MAX_SETS})",
            group,
        )
    return sets


def _set_keys(s: exp.Expression) -> list[exp.Expression]:
    if isinstance(s, exp.Tuple):
        return list(s.expressions)
    if isinstance(s, exp.Paren):
        return _set_keys(s.this)
    if isinstance(s, (exp.Rollup, exp.Cube, exp.GroupingSets)):
        raise unsupported("ROLLUP/CUBE inside GROUPING SETS is not supported", s)
    return [s]


def _expand(select: exp.Select, sets: list[list[exp.Expression]]) -> exp.Expression:
    keys = list(dict.fromkeys(k for s in sets for k in s))
    moved = {arg: select.args.get(arg) for arg in ("order", "limit", "offset")}
    branches = []
    for kept in sets:
        rolled = [k for k in keys if k not in kept]
        branch = select.copy()
        for arg in moved:
            branch.set(arg, None)
        branch.set(
            "expressions",
            [_named(_fill(e.copy(), keys, rolled), e) for e in select.expressions],
        )
        branch.set(
            "group",
            (
                exp.Group(expressions=[k.copy() for k in dict.fromkeys(kept)])
                if kept
                else None
            ),
        )
        having = select.args.get("having")
        if having is not None:
            branch.set(
                "having", exp.Having(this=_fill(having.this.copy(), keys, rolled))
            )
        branches.append(branch)
    union = branches[0]
    for branch in branches[1:]:
        union = exp.Union(this=union, expression=branch, distinct=False)
    for arg, value in moved.items():
        if value is not None:
            if arg == "order":
                value = _unqualified(value.copy())
            union.set(arg, value)
    return union


def _fill(e: exp.Expression, keys, rolled) -> exp.Expression:
    """`e` in the rows of one grouping set: a rolled-up key (outside an
    aggregate) is NULL, GROUPING(k, …) (GROUPING_ID) the mask of the
    rolled-up keys."""
    if isinstance(e, (exp.Grouping, exp.GroupingId)):
        mask = 0
        for k in e.expressions:
            if k not in keys:
                raise unsupported("GROUPING takes GROUP BY keys only", k)
            mask = 2 * mask + (k in rolled)
        return exp.Literal.number(mask)
    if isinstance(e, exp.AggFunc):
        return e
    if e in rolled:
        return exp.Null()
    for name, value in list(e.args.items()):
        if isinstance(value, exp.Expression):
            e.set(name, _fill(value, keys, rolled))
        elif isinstance(value, list):
            e.set(
                name,
                [
                    _fill(v, keys, rolled) if isinstance(v, exp.Expression) else v
                    for v in value
                ],
            )
    return e


def _named(new: exp.Expression, old: exp.Expression) -> exp.Expression:
    """A SELECT item keeps its output name when a key in it became NULL."""
    if isinstance(new, exp.Alias) or new == old:
        return new
    return exp.alias_(new, old.alias_or_name) if old.alias_or_name else new


def _unqualified(order: exp.Order) -> exp.Order:
    """ORDER BY of the union: it names output columns, not tables."""
    for column in order.find_all(exp.Column):
        column.set("table", None)
    return order
