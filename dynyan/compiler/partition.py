"""Partitioned maintenance: the variable that splits a query's work over P views.

A *partitioning* of a query by a variable x sends the events of every
relation that binds x (at the same column in every atom that reads it) to
view number ``hash(value) mod P``, and the events of every other relation to
all P views. Each view then holds, for the split relations, only the tuples
whose x-value hashes to its number, and everything of the others.

Why the views' results add up to the query's result: a row of the join has
exactly one value of x (every atom that binds x binds the same value), so it
is built in exactly one view, from tuples all of which that view holds: the
split ones hash like the row's x-value and the replicated ones are
everywhere. The join (and its projection, with bag semantics) is therefore
the disjoint union of the P views' joins. What the views report still has to
be merged when a result row does not determine x:

- ``union``: rows are gathered as they are. Each row of a SELECT without
  DISTINCT counts its join rows, and those are split disjointly; a grouped
  query grouped by x keeps each group whole in one view; a DISTINCT row that
  carries x lives in one view only.
- ``distinct``: a DISTINCT row that does not carry x may come from several
  views: it is in the result while at least one view has it.
- ``aggregate``: a grouped query not grouped by x. Each view maintains a
  rewritten query (`partial_query`) grouped by the same keys (and by each
  COUNT(DISTINCT) argument) whose outputs are the raw payload channels
  (COUNT(*), the sums behind SUM/AVG/COUNT(x) as exact integers of units)
  and the current MIN/MAX; the driver adds the channels, takes the extreme
  of the extremes, counts the distinct values over the views, and computes
  AVG, HAVING and the SELECT list once, from the merged figures, exactly as
  one view would.

Subqueries (inner views) partition along: an inner view that reads a split
relation must be split by the variable of the output column its outer atom
(or its NOT EXISTS filter) binds to x, and grouped by it, so that each
partition's inner result is the global one restricted to its keys; an inner
view that reads only replicated relations is complete everywhere. A NOT IN
subquery must be complete everywhere (its result being empty changes every
row). Anything else, a query of one relation, or a query the analysis does
not know (IR fields it does not read), runs as one partition, and
`describe` says why.

Choosing x: among the usable variables, the one whose split relations carry
the most events (weights from the stream's manifest, `--stats`, or nominal
TPC sizes): on P machines a replay costs about ``replicated × P + split``
event applications in all, ``replicated + split / P`` on each.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Mapping

from .ir import Aggregate, AggRef, Atom, Op, Output, Query, Ref, Var
from .ir import base_relations as ir_base_relations

UNION = "union"
DISTINCT = "distinct"
AGGREGATE = "aggregate"

# Rows per table at scale factor 1 (TPC-H specification 4.2.5; TPC-DS
# specification table 3-2): the weights when neither a stream nor statistics
# are given. Other relations weigh 1 row.
NOMINAL_ROWS = {
    "lineitem": 6_001_215,
    "orders": 1_500_000,
    "partsupp": 800_000,
    "part": 200_000,
    "customer": 150_000,
    "supplier": 10_000,
    "nation": 25,
    "region": 5,
    "store_sales": 2_880_404,
    "inventory": 11_745_000,
    "catalog_sales": 1_441_548,
    "web_sales": 719_384,
    "store_returns": 287_514,
    "catalog_returns": 144_067,
    "web_returns": 71_763,
    "customer_demographics": 1_920_800,
    "customer_address": 50_000,
    "household_demographics": 7_200,
    "date_dim": 73_049,
    "time_dim": 86_400,
    "item": 18_000,
    "promotion": 300,
    "store": 12,
    "warehouse": 5,
}

# The IR fields this analysis reads. A field added to the IR later (an ORDER
# BY, an outer join, ...) that is set on a query means: one partition, until
# the analysis learns what it does to a split result.
_KNOWN_QUERY_FIELDS = {
    "relations",
    "atoms",
    "predicates",
    "outputs",
    "distinct",
    "sql",
    "grouped",
    "group_vars",
    "channels",
    "aggregates",
    "having",
    "subqueries",
    "residual",
    "null_safe",  # NULL keys hash to one partition like any value
    "names",  # the result columns' spelling: the same in every partition
}
_KNOWN_ATOM_FIELDS = {
    "alias",
    "relation",
    "variables",
    "filters",
    "derived",
    # a NULL-padded atom binds only its join key, which the table it pads
    # for binds too: split by it, both are; by another variable, the padded
    # table is whole in every view, its padded rows found where the rows
    # they pad for are
    "padded",
}
_KNOWN_AGGREGATES = {"count", "sum", "avg", "min", "max", "count_distinct"}


class _Unusable(Exception):
    """A candidate variable that cannot split the query (the message says why)."""


@dataclass(frozen=True)
class Candidate:
    """One variable considered: the relations it splits, or why it cannot."""

    variable: str
    columns: Mapping[str, str]  # split relation -> the column hashed
    replicated: tuple[str, ...]
    merge: str | None
    carried: bool  # every result row shows its value
    split_weight: float
    replicated_weight: float
    problem: str | None = None

    @property
    def usable(self) -> bool:
        return self.problem is None


@dataclass(frozen=True)
class Partitioning:
    """How a query's events are split over P views, and how results merge.

    ``variable`` is None when the query runs as one partition (``reason``).
    """

    variable: str | None
    columns: Mapping[str, str]  # split relation -> column hashed
    replicated: tuple[str, ...]  # relations whose events go to every view
    merge: str | None  # UNION, DISTINCT or AGGREGATE (None: one partition)
    carried: bool
    reason: str
    weights: Mapping[str, float]
    weight_source: str
    candidates: tuple[Candidate, ...] = ()

    @property
    def split(self) -> bool:
        return self.variable is not None

    @property
    def replicated_share(self) -> float:
        """The share of the stream's events that every view applies."""
        if not self.split:
            return 0.0
        rep = sum(self.weights.get(r, 0) for r in self.replicated)
        total = rep + sum(self.weights.get(r, 0) for r in self.columns)
        return rep / total if total else 0.0

    def speedup(self, partitions: int) -> float:
        """Predicted speedup on `partitions` machines (one view each): the
        events one view applies fall from all of them to ``replicated +
        split / P``."""
        if not self.split or partitions <= 1:
            return 1.0
        r = self.replicated_share
        return 1.0 / (r + (1.0 - r) / partitions)


# --- the analysis ----------------------------------------------------------------


def base_relations(query: Query) -> list[str]:
    """The stored relations the query (and its subqueries) read, by first use."""
    if not isinstance(query, Query):  # a set operation's sides, windows' rows
        return [r.name for r in ir_base_relations(query)]
    seen: dict[str, None] = {}
    virtual = dict(query.subqueries)
    for atom in query.atoms:
        if atom.relation not in virtual:
            seen.setdefault(atom.relation)
    for _, sub in query.subqueries:
        for name in base_relations(sub):
            seen.setdefault(name)
    return list(seen)


def relation_weights(
    query: Query, sizes: Mapping[str, float] | None
) -> tuple[dict[str, float], str]:
    """Per base relation, its events (or rows) in `sizes` (names matched
    without case), else the nominal TPC rows at SF 1, else 1."""
    lower = {k.lower(): v for k, v in (sizes or {}).items()}
    weights, nominal = {}, False
    for rel in base_relations(query):
        if rel.lower() in lower:
            weights[rel] = float(lower[rel.lower()])
        else:
            nominal = True
            weights[rel] = float(NOMINAL_ROWS.get(rel.lower(), 1))
    if sizes is None:
        source = "nominal TPC rows at SF 1 (1 for other relations)"
    elif nominal:
        source = "given sizes (nominal TPC rows at SF 1 for the others)"
    else:
        source = "given sizes"
    return weights, source


def choose_partitioning(
    query: Query,
    sizes: Mapping[str, float] | None = None,
    source: str | None = None,
) -> Partitioning:
    """The usable variable whose split relations weigh most (ties: a variable
    the result rows carry, a cheaper merge, first in the query)."""
    weights, weight_source = relation_weights(query, sizes)
    if source is not None:
        weight_source = source

    def single(reason: str, candidates=()) -> Partitioning:
        return Partitioning(
            None,
            {},
            tuple(weights),
            None,
            False,
            reason,
            weights,
            weight_source,
            tuple(candidates),
        )

    unknown = _unknown_features(query)
    if unknown:
        return single(
            f"the query uses {unknown}, which partitioned replay does not handle yet"
        )
    rels = base_relations(query)
    if len(rels) < 2:
        return single(
            f"the query reads one relation ({', '.join(rels)}): there is no join "
            "variable to split its events by"
        )
    candidates = [_candidate(query, x, weights) for x in _variables(query)]
    usable = [c for c in candidates if c.usable]
    if not usable:
        why = "; ".join(f"{c.variable}: {c.problem}" for c in candidates)
        return single("no variable can split it (" + (why or "none") + ")", candidates)
    order = {v: i for i, v in enumerate(_variables(query))}
    cost = {UNION: 0, DISTINCT: 1, AGGREGATE: 2}
    best = min(
        usable,
        key=lambda c: (
            -c.split_weight,
            not c.carried,
            cost[c.merge],
            order[c.variable],
        ),
    )
    reason = (
        f"{best.variable} splits {len(best.columns)} of {len(rels)} relations, "
        "the most events of any variable"
    )
    return Partitioning(
        best.variable,
        dict(best.columns),
        best.replicated,
        best.merge,
        best.carried,
        reason,
        weights,
        weight_source,
        tuple(candidates),
    )


def _unknown_features(query: Query) -> str | None:
    """IR fields set on the query (or its atoms, or its subqueries) that this
    analysis does not read, as text; None when there are none."""
    if not isinstance(query, Query):  # UNION and the like, windows' views
        return f"a {type(query).__name__}"
    found = []
    for f in dataclasses.fields(query):
        if f.name not in _KNOWN_QUERY_FIELDS and _is_set(query, f):
            found.append(f.name)
    for atom in query.atoms:
        for f in dataclasses.fields(atom):
            if f.name not in _KNOWN_ATOM_FIELDS and _is_set(atom, f):
                found.append(f"atom {f.name}")
    found += [
        f"{a.kind} aggregates"
        for a in query.aggregates
        if a.kind not in _KNOWN_AGGREGATES
    ]
    for _, sub in query.subqueries:
        inner = _unknown_features(sub)
        if inner:
            found.append(inner + " (in a subquery)")
    return ", ".join(dict.fromkeys(found)) or None


def _is_set(obj, f: dataclasses.Field) -> bool:
    value = getattr(obj, f.name)
    if f.default is not dataclasses.MISSING:
        return value != f.default
    if f.default_factory is not dataclasses.MISSING:
        return value != f.default_factory()
    return True


def _variables(query: Query) -> list[str]:
    """Variables bound to a column of some atom, in order of first use."""
    seen: dict[str, None] = {}
    for atom in query.atoms:
        for v in atom.variables:
            if v is not None:
                seen.setdefault(v)
    return list(seen)


def _candidate(query: Query, x: str, weights: Mapping[str, float]) -> Candidate:
    columns: dict[str, int | None] = {}
    _assign(query, x, columns)
    chosen = {rel: min(cols) for rel, cols in columns.items() if cols}
    split = {rel: _relation_of(query, rel).columns[col] for rel, col in chosen.items()}
    replicated = tuple(r for r in base_relations(query) if r not in split)
    carried = _carried(query, x)
    merge, problem = None, None
    try:
        if not _check(query, x, chosen, outer=True):
            raise _Unusable("no stored relation can be split by it")
        merge = _merge_kind(query, x, carried)
    except _Unusable as err:
        problem = str(err)
    return Candidate(
        x,
        split if problem is None else {},
        replicated if problem is None else tuple(base_relations(query)),
        merge,
        carried,
        sum(weights.get(r, 0) for r in split) if problem is None else 0.0,
        sum(weights.get(r, 0) for r in replicated),
        problem,
    )


def _relation_of(query: Query, name: str):
    for rel in query.relations:
        if rel.name == name:
            return rel
    for _, sub in query.subqueries:
        found = _relation_of(sub, name)
        if found is not None:
            return found
    return None


def _antis(atom: Atom):
    """(virtual relation, key expressions) of the NOT IN/NOT EXISTS filters."""
    for f in atom.filters:
        for e in _walk(f):
            if isinstance(e, Op) and e.op == "anti":
                yield e.args[0].value, e.args[1:]


def _walk(e):
    yield e
    if isinstance(e, Op):
        for a in e.args:
            yield from _walk(a)


def _aligned_output(sub: Query, positions: list[int]) -> str | None:
    """The inner variable of the first of `positions` the inner view outputs
    as a plain column."""
    for j in positions:
        if j < len(sub.outputs) and isinstance(sub.outputs[j].expr, Var):
            return sub.outputs[j].expr.name
    return None


def _anti_positions(query: Query, keys, y: str | None) -> list[int]:
    """Positions of the anti-join keys that are columns bound to `y`."""
    out = []
    for j, k in enumerate(keys):
        if y is not None and isinstance(k, Ref):
            if query.atoms[k.atom].variables[k.column] == y:
                out.append(j)
    return out


def _assign(query: Query, y: str | None, columns: dict) -> None:
    """Collect, per base relation, the columns every atom reading it binds to
    its level's partition variable (None: some atom does not, so its events
    must go everywhere)."""
    virtual = dict(query.subqueries)
    used = set()
    for atom in query.atoms:
        if atom.relation in virtual:
            used.add(atom.relation)
            positions = [j for j, v in enumerate(atom.variables) if y and v == y]
            z = _aligned_output(virtual[atom.relation], positions)
            _assign(virtual[atom.relation], z, columns)
        else:
            mine = {i for i, v in enumerate(atom.variables) if y and v == y}
            if not mine:
                columns[atom.relation] = None
            elif atom.relation not in columns:
                columns[atom.relation] = mine
            elif columns[atom.relation] is not None:
                columns[atom.relation] = columns[atom.relation] & mine or None
        for name, keys in _antis(atom):
            used.add(name)
            sub = virtual[name]
            z = None
            if not name.startswith("in_"):
                z = _aligned_output(sub, _anti_positions(query, keys, y))
            _assign(sub, z, columns)
    for name, sub in query.subqueries:
        if name not in used:
            _assign(sub, None, columns)


def _check(query: Query, y: str | None, chosen: Mapping[str, int], outer: bool) -> bool:
    """Whether this level is split by `y` (True) or complete in every view
    (False); raises _Unusable when it would be neither."""
    virtual = dict(query.subqueries)
    split_atoms = 0
    for atom in query.atoms:
        if atom.relation in virtual:
            sub = virtual[atom.relation]
            positions = [j for j, v in enumerate(atom.variables) if y and v == y]
            z = _aligned_output(sub, positions)
            if _check(sub, z, chosen, outer=False):
                if z is None:
                    raise _Unusable(
                        f"the subquery behind {atom.alias} is split, but its result "
                        "is joined without the partition variable"
                    )
                split_atoms += 1
        elif atom.relation in chosen:
            col = chosen[atom.relation]
            if y is None or atom.variables[col] != y:
                raise _Unusable(
                    f"{atom.alias} reads {atom.relation} without binding its "
                    "split column to the partition variable"
                )
            split_atoms += 1
        for name, keys in _antis(atom):
            sub = virtual[name]
            z = None
            if not name.startswith("in_"):
                z = _aligned_output(sub, _anti_positions(query, keys, y))
            if _check(sub, z, chosen, outer=False):
                if name.startswith("in_"):
                    raise _Unusable(
                        "a NOT IN subquery would be split (it must be complete in "
                        "every view: its emptiness decides every row)"
                    )
                if z is None:
                    raise _Unusable(
                        "a NOT EXISTS subquery would be split, but is not keyed "
                        "by the partition variable"
                    )
    if not split_atoms:
        return False
    if not outer:
        if y is None:  # pragma: no cover - an atom split by no variable raised above
            raise _Unusable("a subquery is split by no variable")
        if query.grouped and y not in query.group_vars:
            raise _Unusable("a split subquery does not group by the partition variable")
    return True


def _carried(query: Query, x: str) -> bool:
    """Every result row shows x: a SELECT item is x itself."""
    return any(isinstance(o.expr, Var) and o.expr.name == x for o in query.outputs)


def _merge_kind(query: Query, x: str, carried: bool) -> str:
    if query.grouped and x not in query.group_vars:
        return AGGREGATE
    if query.distinct and not carried:
        return DISTINCT
    return UNION


# --- the partial query of an aggregate merge ----------------------------------------


@dataclass(frozen=True)
class PartialLayout:
    """Where the merge finds things in a row of `partial_query`: the group
    values, the COUNT(DISTINCT) arguments, one value per payload channel
    (0: COUNT(*)), then (variable, "min"|"max") extremes."""

    groups: int
    distinct_args: tuple[str, ...]
    channels: int  # payload width: 1 + len(query.channels)
    extremes: tuple[tuple[str, str], ...]


def partial_query(query: Query) -> tuple[Query, PartialLayout]:
    """The query each view of an aggregate merge maintains: grouped by the
    same keys and by each COUNT(DISTINCT) argument, outputting the raw payload
    channels (exact integers where the channel is scaled) and, per MIN/MAX
    argument, its current extreme; no HAVING, no DISTINCT."""
    extras = query.extra_vars
    distinct_args = tuple(
        v
        for v in extras
        if any(a.kind == "count_distinct" and a.arg == v for a in query.aggregates)
    )
    extremes = tuple(
        (v, kind)
        for v in extras
        if v not in distinct_args
        for kind in ("min", "max")
        if any(a.kind == kind and a.arg == v for a in query.aggregates)
    )
    group_vars = tuple(query.group_vars) + distinct_args
    width = 1 + len(query.channels)
    aggregates = tuple(
        # kind "count" with `nonnull` = c outputs channel c's raw total
        Aggregate("count", (), f"channel {c}", None, c)
        for c in range(width)
    ) + tuple(Aggregate(kind, (), f"{kind.upper()}({v})", v) for v, kind in extremes)
    outputs = tuple(Output(f"g_{v}", Var(v)) for v in group_vars) + tuple(
        Output(f"p{i}", AggRef(i, a.text)) for i, a in enumerate(aggregates)
    )
    partial = dataclasses.replace(
        query,
        outputs=outputs,
        distinct=False,
        grouped=True,
        group_vars=group_vars,
        aggregates=aggregates,
        having=None,
        sql=query.sql,
        names=(),  # its own outputs, named by themselves
    )
    layout = PartialLayout(len(query.group_vars), distinct_args, width, extremes)
    return partial, layout


# --- explain ------------------------------------------------------------------------


EXPLAIN_PARTITIONS = (2, 4, 8, 16, 64)


def describe(part: Partitioning) -> str:
    """The partitioning as `dynyan explain --partitions` prints it."""
    lines = ["Partitioning (dynyan replay --engine spark --partitions P):"]
    if not part.split:
        lines.append(f"  one partition: {part.reason}")
    else:
        total = sum(part.weights.values()) or 1.0

        def share(rels) -> str:
            w = sum(part.weights.get(r, 0) for r in rels)
            return f"{w / total:.1%} of the events"

        split = ", ".join(f"{r} by {c}" for r, c in part.columns.items())
        lines.append(
            f"  partition variable: {part.variable}"
            + (" (every result row carries it)" if part.carried else "")
        )
        lines.append(f"  split by its hash: {split} ({share(part.columns)})")
        lines.append(
            "  replicated to every partition: "
            + (
                f"{', '.join(part.replicated)} ({share(part.replicated)})"
                if part.replicated
                else "none"
            )
        )
        lines.append("  results: " + _MERGE_TEXT[part.merge])
        lines.append(
            "  predicted speedup on P machines (replicated x P + split events): "
            + ", ".join(f"P={p} {part.speedup(p):.2f}x" for p in EXPLAIN_PARTITIONS)
        )
    lines.append(f"  event weights: {part.weight_source}")
    total = sum(part.weights.values()) or 1.0
    others = sorted(
        (c for c in part.candidates if c.usable and c.variable != part.variable),
        key=lambda c: -c.split_weight,
    )
    for c in others[:SHOWN_ALTERNATIVES]:
        lines.append(
            f"  also possible: {c.variable} (splits {', '.join(c.columns)}; "
            f"{c.replicated_weight / total:.1%} replicated)"
        )
    if len(others) > SHOWN_ALTERNATIVES:
        lines.append(
            f"  ... and {len(others) - SHOWN_ALTERNATIVES} more variables that "
            "split fewer events"
        )
    for c in part.candidates:
        if not c.usable and part.split:
            lines.append(f"  not {c.variable}: {c.problem}")
    return "\n".join(lines)


SHOWN_ALTERNATIVES = 3


_MERGE_TEXT = {
    UNION: "gathered from the partitions (each result row is built in exactly one)",
    DISTINCT: "union of the partitions' DISTINCT rows (a row may come from several)",
    AGGREGATE: "groups merged by their payloads (COUNT/SUM add, AVG from sum and "
    "count, MIN/MAX from the partitions' extremes, COUNT(DISTINCT) from "
    "per-partition values); HAVING and the SELECT list applied after the merge",
}
