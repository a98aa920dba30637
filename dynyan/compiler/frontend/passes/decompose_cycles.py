"""Cyclic joins: a generalized hypertree decomposition into inner views.

A SELECT whose join hypergraph is cyclic (TPC-H Q5: customer, orders,
lineitem and supplier join in a ring) gets some of its tables grouped into
bags; each bag is a derived table (an inner view, its join materialised) and
the outer query over the bags is acyclic, so DYN maintains it. The bags are
the fewest of the smallest width (tables per bag) that make the hypergraph
acyclic, searched among the tables of its cyclic core; refused beyond
`MAX_WIDTH` tables per bag, naming the cycle.

The bag's columns are those of its tables that the rest of the query reads,
named `alias__column`; conditions on its tables alone move into it.

>>> from dynyan.compiler.frontend import parse_query
>>> q = parse_query(
...     "CREATE TABLE r (a INT, b INT); CREATE TABLE s (b INT, c INT);"
...     "CREATE TABLE t (c INT, a INT); SELECT COUNT(*) AS n FROM r, s, t"
...     " WHERE r.b = s.b AND s.c = t.c AND t.a = r.a"
... )
>>> print(q)
SELECT COUNT(*) AS n
  atom t(c, a)
  atom derived1 __bag1(c, a)
  group by ()
  relation derived1 := inner view
    SELECT c AS s__c, a AS r__a
      atom r(a, b)
      atom s(b, c)
"""

from __future__ import annotations

import itertools
from dataclasses import replace

from sqlglot import exp

from ...ir import Query
from ..context import Context, sql_conjuncts

MAX_WIDTH = 3  # tables in one bag
MAX_BAGS = 3


def cyclic_core(edges: list[frozenset]) -> list[int]:
    """GYO reduction: the indexes of the hyperedges left when the hypergraph
    is reduced as far as it goes (empty: acyclic)."""
    live = dict(enumerate(edges))
    changed = True
    while changed:
        changed = False
        for i in list(live):
            others = [e for j, e in live.items() if j != i]
            alone = {v for v in live[i] if not any(v in e for e in others)}
            if alone:
                live[i] = live[i] - alone
                changed = True
            if any(live[i] <= e for e in others) or not live[i]:
                del live[i]
                changed = True
    return sorted(live) if len(live) > 1 else []


def hyperedges(query: Query) -> list[frozenset]:
    """Per atom its variables, then per θ-predicate its two variables."""
    edges = [frozenset(a.vars) for a in query.atoms]
    edges += [p.vars for p in query.predicates]
    return edges


def choose_bags(query: Query, acyclic) -> list[list[int]] | None:
    """Atom indexes grouped into bags that make the query acyclic; None when
    it is acyclic already, or when no bags within the limits do (then the
    planner refuses it, naming the cycle). `acyclic(query)`: the planner's
    test, which places an inequality on the edge between its two tables'
    nodes (counted as a hyperedge of its own, an inequality between the
    ends of a chain would need a bag of the whole chain)."""
    core = cyclic_core(hyperedges(query))
    if not core:
        return None
    atoms = [i for i in core if i < len(query.atoms)]
    best = None
    for width in range(2, MAX_WIDTH + 1):
        for count in range(1, MAX_BAGS + 1):
            for bags in _partitions(atoms, width, count):
                if not all(_connected(query, b) for b in bags):
                    continue
                if any(len(b) == len(query.atoms) for b in bags):
                    continue  # one bag of everything decomposes nothing
                if acyclic(_merged_query(query, bags)):
                    best = bags
                    break
            if best:
                return [list(b) for b in best]
    return None


def _partitions(atoms: list[int], width: int, count: int):
    """Groups of `count` disjoint bags of 2..width atoms each."""
    bags = [
        c for size in range(2, width + 1) for c in itertools.combinations(atoms, size)
    ]
    for combo in itertools.combinations(bags, count):
        flat = [a for b in combo for a in b]
        if len(flat) == len(set(flat)) and max(len(b) for b in combo) == width:
            yield combo


def _merged_query(query: Query, bags) -> Query:
    """`query` with each bag's atoms as one atom over all their variables
    (what the planner sees of the bags' inner views)."""
    inside = {i for b in bags for i in b}
    atoms = [a for i, a in enumerate(query.atoms) if i not in inside]
    for bag in bags:
        variables = tuple(dict.fromkeys(v for i in bag for v in query.atoms[i].vars))
        atoms.append(replace(query.atoms[bag[0]], variables=variables, derived=()))
    return replace(query, atoms=tuple(atoms))


def _connected(query: Query, bag) -> bool:
    seen, todo = {bag[0]}, [bag[0]]
    while todo:
        i = todo.pop()
        for j in bag:
            if j not in seen and set(query.atoms[i].vars) & set(query.atoms[j].vars):
                seen.add(j)
                todo.append(j)
    return len(seen) == len(bag)


def decompose_cycles(select: exp.Select, ctx: Context, query: Query) -> exp.Select:
    """`select` with the tables of each bag `choose_bags` picks moved into a
    derived table `__bagN` (then compiled as an inner view by the caller's
    unnest step); unchanged when the query is acyclic."""
    bags = choose_bags(query, ctx.acyclic)
    if bags is None:
        return select
    _inline_join_conditions(select)
    for n, bag in enumerate(bags, start=1):
        aliases = {query.atoms[i].alias for i in bag}
        select = _bag(select, aliases, f"__bag{n}", ctx)
    return select


def _sources(select: exp.Select) -> list[exp.Expression]:
    from_ = select.args.get("from_") or select.args.get("from")
    return [from_.this] + [j.this for j in select.args.get("joins") or []]


def _inline_join_conditions(select: exp.Select) -> None:
    """Inner joins' ON conditions into WHERE, so FROM is a list of tables."""
    conds = []
    for join in select.args.get("joins") or []:
        if join.args.get("on") is not None:
            conds.append(join.args["on"])
            join.set("on", None)
        join.set("kind", None)
    if conds:
        where = select.args.get("where")
        if where is not None:
            conds.insert(0, where.this)
        select.set("where", exp.Where(this=exp.and_(*conds)))


def _bag(select: exp.Select, aliases: set[str], name: str, ctx: Context):
    where = select.args.get("where")
    conds = sql_conjuncts(where.this) if where is not None else []
    inside = [c for c in conds if _reads_only(c, aliases)]
    outside = [c for c in conds if c not in inside]
    sources = _sources(select)
    bag_sources = [s for s in sources if (s.alias or s.name).lower() in aliases]
    rest = [s for s in sources if s not in bag_sources]
    # columns of the bag's tables read outside it (tests of subqueries too)
    reads = [
        c
        for part in [*outside, *select.expressions, *_clauses(select)]
        for c in part.find_all(exp.Column)
        if c.table.lower() in aliases
    ]
    for test in ctx.tests:
        for part in [*test.keys, test.value, test.condition]:
            if part is not None:
                reads += [
                    c for c in part.find_all(exp.Column) if c.table.lower() in aliases
                ]
    columns: list[tuple[str, str]] = []
    for col in reads:
        key = (col.table.lower(), col.name.lower())
        if key not in columns:
            columns.append(key)
    inner = exp.Select(
        expressions=[
            exp.alias_(exp.column(c, table=a), f"{a}__{c}") for a, c in columns
        ]
        or [exp.alias_(exp.Literal.number(1), "__one")]
    )
    inner.set("from_", exp.From(this=bag_sources[0].copy()))
    inner.set("joins", [exp.Join(this=s.copy()) for s in bag_sources[1:]])
    if inside:
        inner.set("where", exp.Where(this=exp.and_(*[c.copy() for c in inside])))
    for col in reads:
        col.replace(_bag_column(col, name))
    for test in ctx.tests:  # a key or value that is a column has no parent
        test.keys = [_bag_column(k, name, aliases) for k in test.keys]
        test.value = _bag_column(test.value, name, aliases)
    derived = exp.Subquery(
        this=inner, alias=exp.TableAlias(this=exp.to_identifier(name))
    )
    items = rest + [derived]
    select.set("from_", exp.From(this=items[0]))
    select.set("joins", [exp.Join(this=s) for s in items[1:]])
    select.set("where", exp.Where(this=exp.and_(*outside)) if outside else None)
    return select


def _bag_column(col, name: str, aliases: set[str] | None = None):
    """Column `col` of a table in bag `name` as the bag's column (with
    `aliases`: any other expression as it is)."""
    if aliases is not None and not (
        isinstance(col, exp.Column) and col.table.lower() in aliases
    ):
        return col
    return exp.column(f"{col.table.lower()}__{col.name.lower()}", table=name)


def _clauses(select: exp.Select) -> list[exp.Expression]:
    return [
        select.args[arg]
        for arg in ("group", "having", "order")
        if select.args.get(arg) is not None
    ]


def _reads_only(cond: exp.Expression, aliases: set[str]) -> bool:
    cols = list(cond.find_all(exp.Column))
    return bool(cols) and all(c.table.lower() in aliases for c in cols)


__all__ = ["choose_bags", "cyclic_core", "decompose_cycles"]
