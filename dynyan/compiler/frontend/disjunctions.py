"""A WHERE's OR-ed conditions, rewritten so that joins and filters come out.

People write a disjunction of whole cases, each repeating the join (TPC-H
Q19: `(p_partkey = l_partkey AND p_brand = 'Brand#12' AND …) OR
(p_partkey = l_partkey AND …)`). Read as it stands, such an OR fits no edge
of a join tree: it is checked on every row of the cross product. Two
rewrites, both exact in SQL's three-valued logic (AND and OR form a
distributive lattice there, so a WHERE keeps exactly the rows it kept):

- a conjunct that every disjunct holds is taken out of the OR:
  `(A AND B1) OR (A AND B2)` is `A AND (B1 OR B2)` — a join equality so
  becomes a join;
- when every disjunct holds conditions on one table alone, their OR is
  implied and is added as that table's filter: a row that passes
  `(A1 AND B1) OR (A2 AND B2)` passes `A1 OR A2`. The OR itself stays.
"""

from __future__ import annotations

from ..ir import Op, conjuncts, reads_a_view, refs


def disjuncts(expr) -> list:
    """Split a condition on OR (a loop: a chain of OR nests as deep as it is
    long)."""
    out, todo = [], [expr]
    while todo:
        e = todo.pop()
        if isinstance(e, Op) and e.op == "or":
            todo.extend(reversed(e.args))
        else:
            out.append(e)
    return out


def factor_disjunctions(conditions: list) -> list:
    """The conjuncts of a WHERE (or inner join ON) with each OR factored:
    its common conjuncts taken out, each table's implied filter added."""
    out = []
    for cond in conditions:
        parts = disjuncts(cond)
        if len(parts) < 2 or reads_a_view(cond) or len(_atoms(cond)) < 2:
            out.append(cond)  # an OR on one table is that table's filter
            continue
        common, rest = _common_conjuncts([conjuncts(d) for d in parts])
        out += common
        if any(not r for r in rest):  # A OR (A AND B) is A
            continue
        remaining = _or([_and(r) for r in rest]) if common else cond
        out.append(remaining)
        out += _implied_filters(rest, remaining)
    return out


def _atoms(expr) -> set[int]:
    return {r.atom for r in refs(expr)}


def _common_conjuncts(terms: list[list]) -> tuple[list, list[list]]:
    """The conjuncts every disjunct holds, and each disjunct without them."""
    keys = [{_key(c) for c in t} for t in terms]
    shared = set.intersection(*keys)
    common, seen = [], set()
    for c in terms[0]:
        if _key(c) in shared and _key(c) not in seen:
            seen.add(_key(c))
            common.append(c)
    rest = [[c for c in t if _key(c) not in shared] for t in terms]
    return common, rest


def _implied_filters(terms: list[list], whole) -> list:
    """Per table whose conditions appear in every disjunct: the OR of each
    disjunct's conditions on that table alone (their common part taken out
    too), unless that OR is the whole condition already."""
    atoms = sorted(_atoms(whole))
    if len(atoms) < 2:
        return []
    out = []
    for atom in atoms:
        own = [[c for c in t if _atoms(c) == {atom}] for t in terms]
        if any(not o for o in own):
            continue
        common, rest = _common_conjuncts(own)
        out += common
        if all(rest):
            out.append(_or([_and(r) for r in rest]))
    return out


def _and(terms: list):
    return _chain("and", terms)


def _or(terms: list):
    return _chain("or", terms)


def _chain(op: str, terms: list):
    """Binary operators nested to the left, as the parser builds them."""
    out = terms[0]
    for t in terms[1:]:
        out = Op(op, (out, t))
    return out


def _key(expr) -> str:
    """Identity of a condition up to the order of a symmetric operator's
    operands (`a = b` is `b = a`, `a > b` is `b < a`). The printed form
    names every column by alias and every constant with its type (1, 1.0
    and TRUE print apart)."""
    if not isinstance(expr, Op):
        return str(expr)
    op, args = expr.op, expr.args
    if op in _MIRRORED:
        op, args = _MIRRORED[op], args[::-1]
    keys = [_key(a) for a in args]
    if op in _SYMMETRIC:
        keys.sort()
    return f"{op}({', '.join(keys)})"


_SYMMETRIC = {"eq", "ne", "and", "or"}
_MIRRORED = {"gt": "lt", "ge": "le"}
