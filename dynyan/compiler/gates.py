"""Rows that wait for a partner: which relations' rows a View may keep in a
plain log instead of its indexes.

A row of relation R (one that its inner views read or that a test on an
inner view keeps indexed: what a row costs there) whose join key no row of a filtered relation G has ever
had (taken by G's filters) can reach no result: every result tuple joins an R
row with a G row of the same key. Its View keeps it counted in a log by that
key, and moves the key's rows into its indexes (and to its inner views) the
first time a G row that its filters take arrives. TPC-H Q17's lineitem waits
for a part of Brand#23 in a MED BOX (one part in a thousand), Q2's partsupp
for a part of size 15 made of brass: a row's cost is one dict entry, not the
inner view's aggregate and the test's sorted index.

The inner views that read R get its rows only once their key is awake, so
each must read R in one atom whose key column is one of its result's key
columns, and the View must read that result only at the same key (a test on
an atom of key k, or a join on k): then a result missing the waiting rows is
read nowhere. The same holds, inside, of the inner views of such a view
that read R. When the key wakes, the result changes and the tests that read
it are checked again, as for any change of an inner view.
"""

from __future__ import annotations

from dataclasses import dataclass

from dynyan.compiler.ir import InnerTest, Op, Query, Ref, Var, reads_a_view


@dataclass(frozen=True)
class Gate:
    """Rows of `relation` wait, by their column `column`, for a row of
    `gate` whose filters hold with the same value in its column
    `gate_column`."""

    relation: str
    column: int
    gate: str
    gate_column: int


def gates(query: Query) -> tuple[Gate, ...]:
    """The gates of `query`'s View: per relation at most one, and no gate's
    own rows wait (a relation waiting for one waiting for it would wait for
    ever)."""
    if not isinstance(query, Query) or query.unread:
        return ()
    virtual = {name for name, _ in query.subqueries}
    uses: dict[str, int] = {}
    for atom in query.atoms:
        uses[atom.relation] = uses.get(atom.relation, 0) + 1
    found: list[Gate] = []
    for r_index, r_atom in enumerate(query.atoms):
        if not _plain(query, r_atom, virtual, uses):
            continue
        if any(g.gate == r_atom.relation for g in found):
            continue  # it gates another relation: its rows never wait
        if not (
            any(reads_a_view(f) for f in r_atom.filters)
            or any(_reads(sub, r_atom.relation) for _, sub in query.subqueries)
        ):
            continue  # a row costs little more than its entry in the log
        for g_atom in query.atoms:
            if g_atom is r_atom or not _plain(query, g_atom, virtual, uses):
                continue
            if not g_atom.filters or any(reads_a_view(f) for f in g_atom.filters):
                continue  # nothing selective to wait for, or not known at once
            if any(g.relation == g_atom.relation for g in found):
                continue
            gate = _shared_key(query, r_index, r_atom, g_atom)
            if gate is not None:
                found.append(gate)
                break
    return tuple(found)


def _plain(query: Query, atom, virtual: set, uses: dict) -> bool:
    """A stored relation read once, by an inner join."""
    if atom.relation in virtual or uses[atom.relation] != 1 or atom.padded:
        return False
    relation = query.relation(atom.relation)
    return relation.guard is None and relation.rows is None


def _shared_key(query: Query, r_index: int, r_atom, g_atom) -> Gate | None:
    """The gate of `r_atom`'s rows on a variable it shares with `g_atom`,
    if every inner view reading its relation allows it."""
    for column, var in enumerate(r_atom.variables):
        if var is None or var in query.null_safe or var not in g_atom.variables:
            continue
        if not all(
            _keyed_by(query, name, sub, r_atom.relation, column, var)
            for name, sub in query.subqueries
            if _reads(sub, r_atom.relation)
        ):
            return None
        return Gate(
            r_atom.relation, column, g_atom.relation, g_atom.variables.index(var)
        )
    return None


def _reads(query, relation: str) -> bool:
    """Whether a query (or a set operation's sides, or an inner view of it)
    reads `relation`."""
    if not isinstance(query, Query):  # a set operation's sides, windows' rows
        return any(_reads(side, relation) for side in query.sides)
    virtual = {name for name, _ in query.subqueries}
    if any(a.relation == relation and a.relation not in virtual for a in query.atoms):
        return True
    return any(_reads(sub, relation) for _, sub in query.subqueries)


def _keyed_by(query: Query, name: str, sub, relation: str, column, var) -> bool:
    """Whether the inner view `name` (query `sub`) reads `relation` in one
    atom whose `column` is a key column of its result, and the View reads
    that result only where that key is `var`."""
    if not isinstance(sub, Query):
        return False
    atoms = [a for a in sub.atoms if a.relation == relation]
    if len(atoms) != 1 or atoms[0].padded or atoms[0].variables[column] is None:
        return False
    inner_var = atoms[0].variables[column]
    keys = set(sub.group_vars) if sub.grouped else set()
    if sub.distinct and not sub.grouped:
        keys = {o.expr.name for o in sub.outputs if isinstance(o.expr, Var)}
    position = next(
        (
            i
            for i, o in enumerate(sub.outputs)
            if isinstance(o.expr, Var) and o.expr.name == inner_var
        ),
        None,
    )
    if inner_var not in keys or position is None:
        return False
    if not all(  # its own inner views that read the relation: the same, inside
        _keyed_by(sub, n, s, relation, column, inner_var)
        for n, s in sub.subqueries
        if _reads(s, relation)
    ):
        return False
    elsewhere = [e for a in query.atoms for _, e in a.derived] + list(query.residual)
    if any(t.view == name for t in _tests(elsewhere)):
        return False
    read = False
    for atom in query.atoms:
        if atom.relation == name:
            if len(atom.variables) <= position or atom.variables[position] != var:
                return False
            read = True
        for test in _tests(atom.filters):
            if test.view != name:
                continue
            if len(test.keys) <= position or test.matches_null(position):
                return False
            key = test.keys[position]
            if (
                not isinstance(key, Ref)
                or query.atoms[key.atom].variables[key.column] != var
            ):
                return False
            read = True
    return read  # (read nowhere else: the consumers are atoms and tests)


def _tests(exprs) -> list[InnerTest]:
    """The tests on inner views inside some conditions."""
    out = []
    for expr in exprs:
        if isinstance(expr, InnerTest):
            out.append(expr)
        elif isinstance(expr, Op):
            out += _tests(expr.args)
    return out
