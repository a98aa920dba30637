"""Code generation: a `Plan` -> the source of one Python module (docs/design.md §4-5).

The trigger program (`dynyan.compiler.triggers`) has chosen what every node
keeps and the steps of each relation's update; the renderer names them
(`_Layout`), turns each step into Python and hands the template ready
identifiers and steps; templates only loop and substitute. Enumeration is
nested loops over N in preorder, multiplying the frontier's multiplicities.

No SQL text reaches the module except through `repr` of parsed values.
"""

from __future__ import annotations

import ast
import functools
import datetime
import hashlib
import logging
import re
import warnings
from dataclasses import dataclass, field, fields, is_dataclass, replace

import black
import jinja2

from ..errors import DynyanError, UnsupportedQueryError
from ..resources import resource_text
from ..runtime import inline
from . import functions
from .functions import (
    BIT_KINDS,
    DISTINCT_ORDERED_KINDS,
    DISTINCT_SUM_KINDS,
    ORDERED_KINDS,
    PICK_KINDS,
    QUANTILE_KINDS,
    RANKED_KINDS,
)
from .ir import (
    GUARD_ROWS,
    GUARD_TIES,
    COMPARISONS,
    FLIPPED,
    NULL_ABSORBING,
    AggRef,
    Query,
    SetQuery,
    WindowQuery,
    Channel,
    InnerTest,
    Lit,
    Op,
    Ref,
    Var,
    ViewColumn,
    base_relations,
    column_of,
    exact_digits,
    may_be_nonfinite,
    query_digits,
    refs,
    var_refs,
)
from .gates import gates
from .names import Names
from .plan import (
    Plan,
    SetPlan,
    WindowPlan,
    complexity,
    counted_in_state,
    orders_groups,
)
from .triggers import (
    NodeKeeps,
    Propagate,
    Structure,
    Theta,
    Update,
    trigger_program,
)

log = logging.getLogger("dynyan.render")

BLACK_MODE = black.Mode(
    target_versions={black.TargetVersion.PY311},
    line_length=88,
    magic_trailing_comma=False,
)


class RenderError(DynyanError):
    """The renderer produced invalid Python: a compiler bug, never user error."""


def tup(names: list[str] | tuple[str, ...]) -> str:
    """A key or entry: the bare value for one name, a tuple otherwise."""
    if len(names) == 1:
        return names[0]
    if not names:
        return "()"
    return "(" + ", ".join(names) + ")"


def tuple_literal(items: list[str]) -> str:
    """A tuple display: `()`, `(x,)` or `(a, b)`."""
    if len(items) == 1:
        return f"({items[0]},)"
    return "(" + ", ".join(items) + ")"


def targets(items: list[str]) -> str:
    """An assignment target list that unpacks a tuple of len(items)."""
    return f"({items[0]},)" if len(items) == 1 else ", ".join(items)


def py(value) -> str:
    """A Python literal for a parsed SQL value; refuses anything else."""
    if value is None or isinstance(value, (bool, int, str)):
        return repr(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise UnsupportedQueryError(f"cannot use the number {value} in a query")
        return repr(value)
    if isinstance(value, datetime.datetime):
        parts = [value.year, value.month, value.day, value.hour, value.minute]
        parts += [value.second, value.microsecond]
        if value.tzinfo is datetime.timezone.utc:  # a TIMESTAMPTZ's instant
            parts.append("tzinfo=datetime.timezone.utc")
        elif value.tzinfo is not None:
            raise RenderError(f"no literal for {value!r} (not in UTC)")
        return f"datetime.datetime({', '.join(map(str, parts))})"
    if isinstance(value, datetime.date):
        return f"datetime.date({value.year}, {value.month}, {value.day})"
    if isinstance(value, datetime.time) and value.tzinfo is None:
        parts = (value.hour, value.minute, value.second, value.microsecond)
        return f"datetime.time({', '.join(map(str, parts))})"
    if isinstance(value, datetime.timedelta):
        parts = (value.days, value.seconds, value.microseconds)
        return f"datetime.timedelta({', '.join(map(str, parts))})"
    raise RenderError(f"no literal for {type(value).__name__}")


# --- scalar expressions -----------------------------------------------------------

# Operators whose Python handles a NULL (None) operand as SQL does itself:
# logic (three-valued in `condition`), CASE, and the helpers _div and _mod.
_NULL_AWARE = {"and", "or", "not", "case", "div", "mod", "intdiv", "isnull"}
# Operators whose value need not be NULL when an operand is (ir.py): their
# operands are never taken as NULL guards of a condition (`_leaves`).
_NULL_AWARE |= NULL_ABSORBING
# the parts of a float SUM's term (`split_nonfinite`), under its channel's
# non-NULL guard
_NONFINITE_PARTS = {
    "finite_part": "_finite_part({})",
    "is_posinf": "({} == math.inf)",
    "is_neginf": "({} == -math.inf)",
    "is_nan": "math.isnan({})",
}
_NULL_AWARE |= set(_NONFINITE_PARTS)

# DECIMAL arithmetic, rounded once at the root of a chain (`_decimal`)
_ARITHMETIC = frozenset({"add", "sub", "mul", "neg"})
# operators whose value is one of their operands' (a scaled value's roots
# below them are scaled with it, `Expressions.scaled`)
_PASSES_VALUES = _ARITHMETIC | {"case", "coalesce", "greatest", "least"}


def _inexact(e) -> bool:
    """Whether float arithmetic may round `e` (+, - or * below a unary -)."""
    if not isinstance(e, Op):
        return False
    return e.op in ("add", "sub", "mul") or (e.op == "neg" and _inexact(e.args[0]))


_INFIX_PY = {
    "add": "+",
    "sub": "-",
    "mul": "*",
    "eq": "==",
    "ne": "!=",
    "lt": "<",
    "le": "<=",
    "gt": ">",
    "ge": ">=",
    "and": "and",
    "or": "or",
}


@dataclass
class Expressions:
    """Renders IR expressions to Python over local names; collects the module
    constants and helpers they need."""

    constants: list[tuple[str, str]] = field(default_factory=list)  # (name, source)
    helpers: set[str] = field(default_factory=set)
    uses_datetime: bool = False
    uses_re: bool = False
    uses_floor: bool = False  # DECIMAL factors scaled to integers (`_scaled`)
    # inner view -> what the module keeps of its result (see `_inner_tests`)
    tests: dict = field(default_factory=dict)
    fresh: int = 0  # names made for values inside expressions (walrus)
    # (atom, column) pairs declared NOT NULL whose values the module checks
    # before using them: no `is not None` test for them.
    notnull: set = field(default_factory=set)
    # Variables no row of the result holds NULL in, and the kind of each
    # aggregate (COUNT is never NULL): where SQL's NULL must propagate
    # through arithmetic and where it cannot arise.
    nonnull_vars: set = field(default_factory=set)
    agg_kinds: list = field(default_factory=list)
    # Inside `condition`: its plain column and variable leaves are tested for
    # NULL before the condition is evaluated.
    guarded: bool = False
    # (atom, column) pairs and variables of DECIMAL or DOUBLE columns: an
    # integer literal beside one is written as a float (`x * 100.0`,
    # `1.0 - x`), where CPython's arithmetic and comparisons of two floats
    # take their fast path; the value is the same (see `_float_literals`).
    floats: set = field(default_factory=set)
    # (atom, column) pairs and variables -> the decimal digits their values
    # hold exactly (DECIMAL(p, s): s; INTEGER: 0; DOUBLE: absent). SQL's
    # DECIMAL arithmetic is exact and Python's floats are not (0.1 + 0.2):
    # an arithmetic root whose digits are known is rounded to them once
    # (`_decimal`), so `x + y = 0.3` holds where SQL says it does.
    digits: dict = field(default_factory=dict)
    agg_digits: list = field(default_factory=list)  # of each aggregate's value
    in_arithmetic: bool = False  # rendering an operand of + - * or unary -
    # rendering a value the caller scales to an integer (`render_unrounded`),
    # through CASE's, COALESCE's … values too: no root of it is rounded
    scaled: bool = False

    def may_be_null(self, e) -> bool:
        """Whether the SQL value of `e` can be NULL (conservatively)."""
        if isinstance(e, Lit):
            return e.value is None
        if isinstance(e, Ref):
            return (e.atom, e.column) not in self.notnull
        if isinstance(e, Var):
            return e.name not in self.nonnull_vars
        if isinstance(e, AggRef):
            kinds = self.agg_kinds  # unknown kinds: may be NULL
            return e.index >= len(kinds) or kinds[e.index] not in (
                "count",
                "count_distinct",
            )
        if isinstance(e, InnerTest):
            return False
        if isinstance(e, Op) and e.op == "case":
            return any(self.may_be_null(v) for v in (*e.args[1:-1:2], e.args[-1]))
        if isinstance(e, Op) and e.op == "isnull":
            return False
        if isinstance(e, Op) and e.op == "nullif":
            return True
        if isinstance(e, Op) and e.op in ("coalesce", "greatest", "least"):
            return all(self.may_be_null(a) for a in e.args)
        if isinstance(e, Op):
            return any(self.may_be_null(a) for a in e.args)
        return True

    def render(self, e, env) -> str:
        if isinstance(e, Ref):
            return env[(e.atom, e.column)]
        if isinstance(e, Var):
            return env[e.name]
        if isinstance(e, AggRef):
            return env[("agg", e.index)]
        if isinstance(e, ViewColumn):
            return f"_c[{e.index}]"
        if isinstance(e, InnerTest):
            return self._inner_test(e, env)
        if isinstance(e, Lit):
            if isinstance(e.value, (datetime.date, datetime.time, datetime.timedelta)):
                self.uses_datetime = True
                return self._constant("_DATE", py(e.value))
            return py(e.value)
        root = not self.in_arithmetic  # the operands of + - * are not rounded
        scaled = self.scaled
        self.in_arithmetic = e.op in _ARITHMETIC
        self.scaled = scaled and e.op in _PASSES_VALUES
        try:
            a = self._operands(e, env)
            # what `_op` renders (a CASE's conditions …) stands alone
            self.in_arithmetic = self.scaled = False
            if e.op in ("and", "or", "not") and any(map(self.may_be_null, e.args)):
                return self._logic_value(e.op, a)
            text = self._op(e, a, env)
        finally:
            self.in_arithmetic, self.scaled = not root, scaled
        if root and e.op in _ARITHMETIC and not scaled:
            text = self._decimal(e, text)
        if e.op in _NULL_AWARE:
            return text
        # SQL: NULL in, NULL out (leaves `condition` tested are not again)
        if any(isinstance(x, Lit) and x.value is None for x in e.args):
            return "None"
        nullable = [
            test
            for x, t in zip(e.args, a)
            for test in self._null_tests(x, t, env)
            if not (self.guarded and next(_leaves(x), None) is x)
        ]
        if not nullable:
            return text
        tests = " or ".join(f"{t} is None" for t in dict.fromkeys(nullable))
        return f"(None if {tests} else {text})"

    def _null_tests(self, x, text: str, env) -> list[str]:
        """What to test for None to know whether operand `x` (rendered
        `text`) is NULL: + - * over columns is NULL exactly where one of
        them is, so those are tested rather than the value computed again
        (a chain of n sums had 2^n copies of its first)."""
        if not self.may_be_null(x):
            return []
        leaves = _arithmetic_leaves(x)
        if leaves is None:
            return [text]
        return [
            self.render(leaf, env)
            for leaf in leaves
            if self.may_be_null(leaf)
            and not (self.guarded and next(_leaves(leaf), None) is leaf)
        ]

    def render_unrounded(self, e, env) -> str:
        """`e` as `render` has it, a DECIMAL root left unrounded: for a caller
        that scales the value to an integer, which rounds it anyway."""
        outer, self.scaled = self.scaled, True
        try:
            return self.render(e, env)
        finally:
            self.scaled = outer

    def _decimal(self, e: Op, text: str) -> str:
        """`text`, the float of DECIMAL arithmetic `e`, rounded to the digits
        SQL's exact result has: k / 10^d is the float nearest that decimal."""
        if not self.is_float(e) or not _inexact(e):
            return text
        d = exact_digits(e, self._leaf_digits)
        if d is None:  # a DOUBLE among the operands: float arithmetic is SQL's
            return text
        if d > 6:  # 10^d times a value past 10^9 leaves the exact integers
            return f"round({text}, {d})"
        self.uses_floor = True
        return f"(_floor({text} * {10 ** d}.0 + 0.5) / {10 ** d}.0)"

    def _leaf_digits(self, e) -> int | None:
        if isinstance(e, Ref):
            return self.digits.get((e.atom, e.column))
        if isinstance(e, Var):
            return self.digits.get(e.name)
        if isinstance(e, AggRef) and e.index < len(self.agg_digits):
            return self.agg_digits[e.index]
        return None

    def _operands(self, e: Op, env) -> list:
        """The rendered operands of `e` (None for a CASE's conditions)."""
        if e.op in NULL_ABSORBING:  # operands may be NULL: render their tests
            outer, self.guarded = self.guarded, False
            try:
                # CASE tests its conditions (`condition`), it needs no values
                a = [
                    (
                        None
                        if e.op == "case" and i % 2 == 0 and i < len(e.args) - 1
                        else self.render(x, env)
                    )
                    for i, x in enumerate(e.args)
                ]
            finally:
                self.guarded = outer
            return a
        return [self.render(x, env) for x in e.args]

    def _like_in_order(self, subject: str, parts: list[str]) -> str:
        """LIKE with `%` alone ('%special%requests%'): the parts found in
        order, each leftmost after the one before (which is how a match can
        be found if there is one), by str methods: half a regex's time."""
        first, *middle, last = parts
        middle = [m for m in middle if m]  # '%%' is '%'
        if subject.isidentifier():
            s = bind = subject
        else:  # an expression: computed once
            self.fresh += 1
            s = f"_t{self.fresh}"
            bind = f"({s} := {subject})"
        terms, pos = [], len(first)
        if first:
            terms.append(f"{bind}.startswith({py(first)})")
            bind = s
        for k, part in enumerate(middle):
            find = f"{bind}.find({py(part)}{f', {pos}' if pos else ''})"
            if k == len(middle) - 1 and not last:
                terms.append(f"{find} >= 0")
            else:
                self.fresh += 1
                at = f"_t{self.fresh}"
                terms.append(f"({at} := {find}) >= 0")
                pos = f"{at} + {len(part)}"
            bind = s
        if last:
            terms.append(f"{bind}.endswith({py(last)})")
            terms.append(f"len({s}) - {len(last)} >= {pos}")
        return "(" + " and ".join(terms) + ")" if terms else "True"

    def _constant(self, prefix: str, source: str) -> str:
        """A module constant's name for the value of `source`, made once (a
        date literal is not built again on every row)."""
        for name, known in self.constants:
            if known == source:
                return name
        name = f"{prefix}_{len(self.constants)}"
        self.constants.append((name, source))
        return name

    def _op(self, e: Op, a: list[str], env) -> str:
        """Python for operator `e` over its rendered arguments `a`."""
        op = e.op
        if op in COMPARISONS and any(_divides(x) for x in e.args):
            # a quotient may be NaN (0 / 0), which SQL orders above every
            # number and equal to itself
            self.helpers.add("nan_key")
            return f"(_nan_key({a[0]}) {_INFIX_PY[op]} _nan_key({a[1]}))"
        if op in _INFIX_PY:
            if op not in ("and", "or"):
                a = self._float_literals(e, a)
            return "(" + f" {_INFIX_PY[op]} ".join(a) + ")"
        scalar = functions.SCALARS.get(op)
        if scalar is not None:  # SQL functions: one registry (functions.py)
            if scalar.helper:
                self.helpers.add(scalar.helper.removeprefix("_"))
            self.uses_datetime |= scalar.uses_datetime
            return scalar.render(a)
        if op == "not":
            return f"(not {a[0]})"
        if op == "pair":
            return f"({a[0]}, {a[1]})"
        if op == "row":
            return f"({', '.join(a)})"
        if op == "ordered_pair":  # NULLs ranked by their flags, never compared
            keys = [a[0], *a[3::2]]
            flags = [f.value for f in e.args[2::2]]
            parts = [f"({k} is None) is {flag}, {k}" for k, flag in zip(keys, flags)]
            return f"(({', '.join(parts)}, {a[1]} is None), {a[1]})"
        if op == "keyed_pair":  # NULL keys first or last, never compared
            return f"(None if {a[1]} is None else ((({a[0]} is None) is {a[2]}, {a[0]}), {a[1]}))"
        if op == "in":
            return f"({a[0]} in ({', '.join(a[1:])},))"
        if op == "case":  # a WHEN that is NULL is not TRUE
            out = a[-1]
            for cond, val in reversed(list(zip(e.args[:-1:2], a[1:-1:2]))):
                out = f"({val} if {self.condition(cond, env)} else {out})"
            return out
        if op == "substr":  # SQL positions are 1-based; a start below 1 eats length
            start = e.args[1].value
            length = e.args[2].value if len(a) == 3 else None
            if start < 0 or (length is not None and length < 0):
                self.helpers.add("substr")  # from the end, or backwards: DuckDB's
                return f"_substr({', '.join(a)})"
            stop = "" if length is None else str(max(0, start - 1 + length))
            return f"{a[0]}[{max(0, start - 1)}:{stop}]"
        if op in _NONFINITE_PARTS:  # a float SUM's term, see split_nonfinite
            if op == "finite_part":
                self.helpers.add("finite_part")
            return _NONFINITE_PARTS[op].format(a[0])
        if op == "like":
            return self._like(a[0], e.args[1].value)
        if op in ("regexp", "regexp_replace", "regexp_extract"):
            return self._regexp(e, a[0])
        if op == "isnull":
            if isinstance(e.args[0], Lit):  # `'x' is None` warns, and is known
                return str(e.args[0].value is None)
            if not self.may_be_null(e.args[0]):  # a column checked at its leaf
                return "False"
            return f"({a[0]} is None)"
        if op == "coalesce":  # the first operand that is not NULL, each once
            out = a[-1]
            for arg, x in reversed(list(zip(e.args[:-1], a[:-1]))):
                if isinstance(arg, Lit):  # known: a constant or NULL
                    out = out if arg.value is None else x
                    continue
                name, first = self._once(x)
                out = f"({name} if {first} is not None else {out})"
            return out
        if op == "nullif":
            if isinstance(e.args[0], Lit) and e.args[0].value is None:
                return "None"
            (x, x_first), (y, y_first) = self._once(a[0]), self._once(a[1])
            if isinstance(e.args[0], Lit):
                return f"(None if {x} == {y_first} else {x})"
            return f"(None if {x_first} is None or {x} == {y_first} else {x})"
        raise RenderError(f"no Python for operator {op}")

    def _float_literals(self, e: Op, a: list[str]) -> list[str]:
        """Rendered operands of arithmetic or a comparison, an integer literal
        beside a DECIMAL or DOUBLE operand as a float: an int converts to the
        float of equal value below 2**53, which CPython would do anyway."""
        out = list(a)
        for i, x in enumerate(e.args):
            if (
                isinstance(x, Lit)
                and type(x.value) is int
                and abs(x.value) < 2**53
                and any(self.is_float(y) for j, y in enumerate(e.args) if j != i)
            ):
                out[i] = py(float(x.value))
        return out

    def is_float(self, e) -> bool:
        """Whether `e` is a DECIMAL or DOUBLE value (a float, or None)."""
        if isinstance(e, Ref):
            return (e.atom, e.column) in self.floats
        if isinstance(e, Var):
            return e.name in self.floats
        if isinstance(e, Lit):
            return type(e.value) is float
        if isinstance(e, AggRef):  # a DECIMAL's SUM, MIN …
            return bool(self._leaf_digits(e))
        if isinstance(e, Op) and e.op in ("add", "sub", "mul", "neg"):
            return any(self.is_float(x) for x in e.args)
        return False

    def _inner_test(self, e: InnerTest, env) -> str:
        """Python that is true exactly when an `InnerTest` is TRUE, reading
        what the module keeps of the inner view's result."""
        state = f"self.{self.tests[e.view]['state']}"
        # keys and the compared value are tested for NULL here: their leaves
        # are not guarded by the condition around the test
        other = self.tests[e.view]["other_than"]
        outer, self.guarded = self.guarded, False
        try:
            keys = [self.render(k, env) for k in e.keys]
            value = e.value if other is None else other
            x = self.render(value, env) if value is not None else None
        finally:
            self.guarded = outer
        key = tup(keys)
        # a NULL key matches nothing, except by IS NOT DISTINCT FROM
        plain = [
            k
            for i, k in enumerate(keys)
            if not e.matches_null(i) and self.may_be_null(e.keys[i])
        ]
        nulls = " or ".join(f"{k} is None" for k in plain)
        if e.kind == "not_in":
            # x NOT IN (subquery), SQL's three-valued logic: TRUE when the
            # subquery is empty; else NULL (dropped) when x is NULL or the
            # subquery gives a NULL; else x is not among its values.
            (x,) = keys
            return (
                f"(not {state} or ({x} is not None and None not in {state}"
                f" and {x} not in {state}))"
            )
        if e.kind == "not_exists":
            # NULL = anything is never true: an outer key with a NULL matches
            # no inner row.
            if not plain:
                return f"({key} not in {state})"
            return f"({nulls} or {key} not in {state})"
        if e.kind == "exists":
            if e.condition is None:
                found = f"({key} in {state})" if keys else f"bool({state})"
            elif other is not None:
                # EXISTS (… WHERE inner.c <> x) over rows (key…, c): the key's
                # distinct values of c, less x's row and a NULL's, in O(1)
                nullable = self.may_be_null(other)
                x, first = self._once(x) if nullable else (x, x)
                self.fresh += 1
                g = f"_t{self.fresh}"
                found = (
                    f"len({g} := {state}.get({key}, _EMPTY))"
                    f" - ({x} in {g}) - (None in {g}) > 0"
                )
                if nullable:  # c <> NULL is never TRUE
                    found = f"{first} is not None and {found}"
                found = f"({found})"
            else:
                rows = f"{state}.get({key}, _EMPTY)"
                cond = self.condition(e.condition, env)
                found = f"any({cond} for _c in {rows})"
            if plain:
                found = f"(not ({nulls}) and {found})"
            return f"(not {found})" if e.negated else found
        # scalar: value op (the subquery's value at the key)
        self.fresh += 1
        t = f"_t{self.fresh}"
        default = py(e.default)
        lookup = f"{state}.get({key}, {default})"
        if plain:
            lookup = f"({default} if {nulls} else {lookup})"
        known = self.nonnull(e.value, env) if isinstance(e.value, Lit) else None
        x_nonnull = "" if known == "True" else f" and {x} is not None"
        test = (
            f"(({t} := {lookup}) is not None{x_nonnull} and {x} {_INFIX_PY[e.op]} {t})"
        )
        return f"(not {test})" if e.negated else test

    def _regexp(self, e: Op, subject: str) -> str:
        """A regular expression's test, replacement or extraction; the
        pattern compiled once, a module constant (\\d, \\w, \\s and \\b of
        ASCII only, as in RE2)."""
        icase = e.args[-1].value if e.op != "regexp_extract" else False
        flags = "re.ASCII | re.IGNORECASE" if icase else "re.ASCII"
        rx = self._constant("_REGEX", f"re.compile({py(e.args[1].value)}, {flags})")
        self.uses_re = True
        if e.op == "regexp":
            return f"({rx}.search({subject}) is not None)"
        if e.op == "regexp_replace":
            count = 0 if e.args[3].value else 1
            return f"{rx}.sub({py(e.args[2].value)}, {subject}, {count})"
        self.helpers.add("regexp_extract")
        return f"_regexp_extract({rx}, {subject}, {e.args[2].value})"

    def _logic_value(self, op: str, a: list[str]) -> str:
        """AND, OR, NOT as values (a SELECT item, a comparison's operand) in
        SQL's three-valued logic: NOT NULL is NULL, FALSE AND NULL is FALSE,
        TRUE OR NULL is TRUE, the rest with a NULL is NULL (`condition`
        tests conditions, which need only TRUE)."""
        if op == "not":
            name, first = self._once(a[0])
            return f"(None if {first} is None else not {name})"
        self.helpers.add(f"{op}3")
        return f"_{op}3({', '.join(a)})"

    def _once(self, text: str) -> tuple[str, str]:
        """(a name for the value of Python `text`, the expression to use at
        its first evaluation): a temporary bound there, unless `text` is a
        name or a constant already."""
        if re.fullmatch(r"[A-Za-z_][A-Za-z_0-9]*|-?[0-9.e]+|'[^']*'", text):
            return text, text
        self.fresh += 1
        t = f"_t{self.fresh}"
        return t, f"({t} := {text})"

    def nonnull(self, e, env) -> str:
        """Python that is true exactly when the SQL value of `e` is not NULL
        ("True" when it never is). AND/OR/NOT are refused by the frontend."""
        if isinstance(e, Ref) and (e.atom, e.column) in self.notnull:
            return "True"
        if isinstance(e, (Ref, Var, AggRef)):
            return f"{self.render(e, env)} is not None"
        if isinstance(e, Lit):
            return "False" if e.value is None else "True"
        if isinstance(e, InnerTest) or e.op == "isnull":
            return "True"
        if e.op in NULL_ABSORBING and e.op != "case":
            return f"{self.render(e, env)} is not None"
        if e.op == "case":
            out = self.nonnull(e.args[-1], env)
            for cond, val in reversed(list(zip(e.args[:-1:2], e.args[1:-1:2]))):
                out = (
                    f"({self.nonnull(val, env)} if {self.condition(cond, env)}"
                    f" else {out})"
                )
            return out
        parts = [self.nonnull(a, env) for a in e.args]
        parts = list(dict.fromkeys(p for p in parts if p != "True"))
        if "False" in parts:
            return "False"
        return " and ".join(parts) or "True"

    def condition(self, e, env, negate: bool = False) -> str:
        """Python that is true exactly when SQL condition `e` is TRUE (with
        `negate`: FALSE); a comparison with a NULL (None) is neither."""
        if isinstance(e, Op) and e.op == "not":
            return self.condition(e.args[0], env, not negate)
        if isinstance(e, Op) and e.op in ("and", "or"):
            joint = e.op if not negate else {"and": "or", "or": "and"}[e.op]
            if joint == "or":
                parts = [self.condition(a, env, negate) for a in e.args]
                return "(" + " or ".join(parts) + ")"
            parts = [self.condition(a, env, negate) for a in e.args if _logical(a)]
            plain = [a for a in e.args if not _logical(a)]  # NULL checks once
        else:
            parts, plain = [], [e]
        guards = dict.fromkeys(
            (
                self.nonnull(x, env)  # a CASE: NULL only by the branch taken
                if isinstance(x, (Op, Lit))  # (a literal: known now)
                else f"{self.render(x, env)} is not None"
            )
            for a in plain
            for x in _leaves(a)
            if not (isinstance(x, Ref) and (x.atom, x.column) in self.notnull)
        )
        guards.pop("True", None)
        outer, self.guarded = self.guarded, True
        try:
            tests = [self.render(a, env) for a in plain]
        finally:
            self.guarded = outer
        if negate:  # FALSE, not NULL: a NULL literal inside may make it NULL
            tests = [
                (
                    str(t == "False")  # known now (a column checked)
                    if t in ("True", "False")
                    else f"({t} == False)" if _holds_null(a) else f"not {t}"
                )
                for a, t in zip(plain, tests)
            ]
        # a TRUE conjunct (a subquery test's place in WHERE) adds nothing
        terms = [t for t in (*guards, *tests, *parts) if t != "True"]
        return "(" + " and ".join(terms) + ")" if terms else "True"

    def _like(self, subject: str, pattern: str) -> str:
        if "_" not in pattern:
            parts = pattern.split("%")
            if len(parts) == 1:
                return f"({subject} == {py(pattern)})"
            if len(parts) == 2 and not parts[1]:
                return f"{subject}.startswith({py(parts[0])})"
            if len(parts) == 2 and not parts[0]:
                return f"{subject}.endswith({py(parts[1])})"
            if len(parts) == 3 and not parts[0] and not parts[2]:
                return f"({py(parts[1])} in {subject})"
            return self._like_in_order(subject, parts)
        regex = "".join(
            ".*" if ch == "%" else "." if ch == "_" else re.escape(ch) for ch in pattern
        )
        name = self._constant("_LIKE", f"re.compile({py(regex)}, re.DOTALL)")
        self.uses_re = True
        return f"({name}.fullmatch({subject}) is not None)"


def _logical(e) -> bool:
    return isinstance(e, Op) and e.op in ("and", "or", "not")


def _holds_null(e) -> bool:
    """Whether a NULL literal is inside `e` (its value may then be NULL
    where its leaves are not)."""
    if isinstance(e, Lit):
        return e.value is None
    return isinstance(e, Op) and any(_holds_null(a) for a in e.args)


def _divides(e) -> bool:
    """Whether `e` computes a quotient or a square root (a value that may be
    NaN: 0 / 0, SQRT(-1))."""
    return isinstance(e, Op) and (
        e.op in ("div", "sqrt") or any(_divides(a) for a in e.args)
    )


def _arithmetic_leaves(e) -> list | None:
    """The column and variable leaves of `e` where it is + - * over them
    and constants that are not NULL (it is NULL where one of them is);
    None where it is anything else."""
    if not (isinstance(e, Op) and e.op in _ARITHMETIC):
        return None
    out = []
    for a in e.args:
        if isinstance(a, (Ref, Var, AggRef)):
            out.append(a)
        elif isinstance(a, Lit):
            if a.value is None:
                return None
        else:
            inner = _arithmetic_leaves(a)
            if inner is None:
                return None
            out += inner
    return out


def _leaves(e):
    """The column and variable references of an expression (may be NULL),
    and its CASEs whole: a NULL inside a CASE need not make it NULL (a NULL
    WHEN selects the next branch)."""
    if isinstance(e, (Ref, Var, AggRef)) or (isinstance(e, Op) and e.op == "case"):
        yield e
    elif isinstance(e, Op) and e.op not in NULL_ABSORBING:  # IS NULL takes a NULL
        for a in e.args:
            yield from _leaves(a)


# --- layout: what each node keeps ----------------------------------------------------


# --- inequality edges -----------------------------------------------------------


def _range_on(theta: Theta, var: str, local) -> tuple[str, str, str, str]:
    """Bounds (lo, lo_incl, hi, hi_incl) on `var` (child or parent side),
    the other side bound to its local; None where unbounded."""
    other = theta.parent if var == theta.child else theta.child
    lo = hi = None
    for op, k in theta.bounds:
        if var != theta.child:  # child op parent + k  <=>  parent op' child - k
            op, k = FLIPPED[op], -k
        value = local(other) if not k else f"{local(other)} + {_shift(k)}"
        if op in ("gt", "ge"):
            lo = (value, op == "ge") if lo is None else lo
        else:
            hi = (value, op == "le") if hi is None else hi
    return (
        lo[0] if lo else "None",
        str(lo[1]) if lo else "True",
        hi[0] if hi else "None",
        str(hi[1]) if hi else "True",
    )


def _excluded(theta: Theta, point, local) -> str:
    """The child's value that `point` (`Theta.point`) excludes, the parent
    side bound."""
    k = point[1]
    return local(theta.parent) if not k else f"{local(theta.parent)} + {_shift(k)}"


def _extra_check(theta: Theta, local) -> str | None:
    checks = []
    for p in theta.extra:
        k = f" + {_shift(p.offset)}" if p.offset else ""
        checks.append(f"({local(p.left)} {_INFIX_PY[p.op]} {local(p.right)}{k})")
    return " and ".join(checks) or None


def _holds(theta: Theta, local) -> str:
    """The whole edge condition, both sides bound."""
    checks = [
        f"({local(theta.child)} {_INFIX_PY[op]} {local(theta.parent)}{f' + {_shift(k)}' if k else ''})"
        for op, k in theta.bounds
    ]
    extra = _extra_check(theta, local)
    return " and ".join(checks + ([extra] if extra else []))


def _shift(k) -> str:
    """A θ-predicate's offset as Python: a number, or the name of the module
    constant holding a DATE's or TIMESTAMP's shift (`_shift_constants`)."""
    if isinstance(k, datetime.timedelta):
        return f"_SHIFT_{k.days}_{k.seconds}_{k.microseconds}".replace("-", "m")
    return py(k)


def _shift_constants(query) -> list[tuple[str, str]]:
    """The module constants `_shift` names: each timedelta offset of the
    query's θ-predicates, both signs (an edge is read from either side)."""
    out = {}
    for p in query.predicates:
        if isinstance(p.offset, datetime.timedelta):
            for k in (p.offset, -p.offset):
                out[_shift(k)] = py(k)
    return sorted(out.items())


class _Layout:
    """The trigger program's structures with the module's names: every
    variable's local and every structure's attribute."""

    def __init__(self, plan: Plan, names: Names):
        self.plan = plan
        self.program = trigger_program(plan)
        self.ranked = self.program.ranked
        self.var_local = {v: names.new("v_" + v) for v in plan.query.all_vars}
        # variables bound only to columns declared NOT NULL
        self.never_null = _declared_not_null(plan.query)

        self._named: dict[int, Structure] = {}  # id of the program's -> named

        def named(s: Structure | None) -> Structure | None:
            if s is None:
                return None
            self._named[id(s)] = replace(s, attr=names.new(s.attr))
            return self._named[id(s)]

        self.info: list[NodeKeeps] = [
            replace(
                keeps,
                root_index=named(keeps.root_index),
                parent_index=named(keeps.parent_index),
                sibling_index=named(keeps.sibling_index),
            )
            for keeps in self.program.nodes
        ]
        # node of a NULL-padded leaf -> the constant holding its padded
        # row's payload (set by `render_module`, see `_pad_payload`)
        self.pads: dict[int, str] = {}

    def named(self, s: Structure) -> Structure:
        """The module's copy of one of the program's structures."""
        return self._named[id(s)]

    def structures(self) -> list[Structure]:
        out = []
        for info in self.info:
            for s in (info.root_index, info.parent_index, info.sibling_index):
                if s is not None:
                    out.append(s)
        return out

    def local(self, vars_) -> list[str]:
        return [self.var_local[v] for v in vars_]

    def bare(self, s: Structure) -> bool:
        """Whether a groups index keeps a group of one entry of count 1 as
        the bare entry, without the pair (entry, 1) around it (56 bytes per
        key, most keys of a near-unique index): where payloads are counts
        and a bare entry cannot be taken for a pair or for no group (an entry
        of one value is never a tuple, and here never NULL; one of k values
        is a k-tuple, so not for k = 2)."""
        if s.kind != "groups" or self.plan.query.channels or len(s.entry) == 2:
            return False
        return len(s.entry) != 1 or s.entry[0] in self.never_null


# --- payloads ------------------------------------------------------------------------


class Ring:
    """Payload arithmetic rendered for one width: an int count (width 1) or a
    tuple (count, channel 1, …) whose entries add and multiply element-wise."""

    def __init__(self, width: int):
        self.width = width

    def _each(self, fmt: str, *names: str) -> str:
        parts = [fmt.format(*(f"{n}[{i}]" for n in names)) for i in range(self.width)]
        return "(" + ", ".join(parts) + ")"

    def add(self, a: str, b: str) -> str:
        return f"{a} + {b}" if self.width == 1 else self._each("{} + {}", a, b)

    def sub(self, a: str, b: str) -> str:
        return f"{a} - {b}" if self.width == 1 else self._each("{} - {}", a, b)

    def neg(self, a: str) -> str:
        return f"-{a}" if self.width == 1 else self._each("-{}", a)

    def mul(self, *names: str) -> str:
        if len(names) == 1:
            return names[0]
        if self.width == 1:
            return " * ".join(names)
        return self._each(" * ".join(["{}"] * len(names)), *names)

    def count(self, a: str) -> str:
        return a if self.width == 1 else f"{a}[0]"

    @property
    def zero(self) -> str:
        return "0" if self.width == 1 else tuple_literal(["0"] * self.width)


# --- update paths ---------------------------------------------------------------------


class _Counter:
    def __init__(self):
        self.n = 0

    def __call__(self, prefix: str) -> str:
        self.n += 1
        return f"_{prefix}{self.n}"


def _enum_loops(
    layout: _Layout,
    skip: set[int],
    fresh: _Counter,
    base_depth: int = 0,
    around: int = 0,
):
    """Nested loops over the nodes of N not in `skip`, in preorder: each binds
    its node's variables (through its parent index) and names its payload
    (`around`: the loops they are nested in). Returns (loops, payload names
    of the frontier nodes visited)."""
    plan = layout.plan
    frontier = set(plan.frontier())
    loops, mults = [], []
    depth = base_depth
    for n in plan.preorder():
        if n not in plan.in_n or n in skip:
            continue
        info = layout.info[n]
        s = info.root_index or info.parent_index
        if s is None:
            continue
        m = fresh("m")
        if n in frontier:
            mults.append(m)
        target = tup(layout.local(info.tuple_vars))
        if info.root_index is not None or s.kind in ("groups", "sorted"):
            source = f"self.{s.attr}"
            check = None
            if info.root_index is not None and layout.ranked:
                source = f"_in_order({source}, self._ordered.order)"
            elif info.root_index is not None:
                source += ".items()"
            elif s.kind == "sorted":
                bounds = _range_on(
                    info.theta, info.theta.child, lambda v: layout.var_local[v]
                )
                source += f"[{tup(layout.local(s.key))}].scan({', '.join(bounds)})"
                check = _extra_check(info.theta, lambda v: layout.var_local[v])
            group = None
            if info.root_index is None and s.kind != "sorted":
                g, value = fresh("g"), f"{source}[{tup(layout.local(s.key))}]"
                source = group_items(g, value, layout.bare(s))
                # (a generator's clauses cannot assign: `for g in (value,)`)
                group = (g, value, group_items(g, bare=layout.bare(s)))
            loops.append(
                {
                    "kind": "loop",
                    "target": target,
                    "source": source,
                    "m": m,
                    "depth": depth,
                    "check": check,
                    "group": group,
                }
            )
            depth += 1
        else:
            loops.append(
                {
                    "kind": "lookup",
                    "source": f"self.{s.attr}[{target}]",
                    "m": m,
                    "depth": depth,
                }
            )
        loops[-1]["binds"] = [*layout.local(info.tuple_vars), m]
    if depth - base_depth + around > MAX_NESTED_LOOPS and len(loops) > 1:
        # enumerate() keeps its first loop (the root's: ordered output
        # marks each root tuple there)
        kept = [] if around else loops[:1]
        below = base_depth + sum(step["kind"] == "loop" for step in kept)
        flat = _flat_loop(loops[len(kept) :], below)
        return [*kept, flat], mults, below + 1
    return loops, mults, depth


# Python refuses a function with more than 20 nested blocks (loops count):
# past this many, the loops below the first are one over a generator.
MAX_NESTED_LOOPS = 12


def _flat_loop(loops: list[dict], depth: int) -> dict:
    """Nested loops as one: `for names in (names for … for … if …)` (a
    generator expression nests no blocks in the function). A join variable
    bound before the loops is read there from the function, so it is not a
    target in the generator (where it would shadow the function's)."""
    clauses, names, inside, outside = [], [], set(), set()
    for step in loops:
        texts = [step["source"], step.get("check") or ""]
        outside |= set(re.findall(r"\bv_\w+", " ".join(texts))) - inside
        kept = [n if n not in outside else "_" for n in step["binds"][:-1]]
        target, m = tup(kept), step["m"]
        if step["kind"] == "loop" and step["group"]:
            g, value, pairs = step["group"]
            clauses.append(f"for {g} in ({value},)")
            clauses.append(f"for {target}, {m} in {pairs}")
        elif step["kind"] == "loop":
            clauses.append(f"for {target}, {m} in {step['source']}")
        else:
            clauses.append(f"for {m} in ({step['source']},)")
        if step.get("check"):
            clauses.append(f"if {step['check']}")
        bound = [n for n in [*kept, m] if n != "_"]
        inside.update(bound)
        names += bound
    bound = "(" + ", ".join(dict.fromkeys(names)) + ",)"
    return {
        "kind": "flat",
        "target": bound,
        "source": f"({bound} {' '.join(clauses)})",
        "depth": depth,
    }


def theta_node(layout: _Layout, a: int, b: int) -> int | None:
    """Which of two siblings carries the inequality edge (None: neither)."""
    if layout.info[a].theta is not None:
        return a
    if layout.info[b].theta is not None:
        return b
    return None


def _path_steps(
    layout: _Layout, ring: Ring, leaf: int, leaf_tuple: str | None, emit: dict | None
):
    """The trigger program's path from `leaf` rendered: the steps that carry
    one leaf tuple's delta (payload `_p`) up to the root, the push-mode
    emission at the root, and the variables they read."""
    plan = layout.plan
    fresh = _Counter()
    steps: list[dict] = []
    uses: set[str] = set()
    local = layout.var_local.__getitem__
    # A tuple of several variables is built once per update (a "let" step
    # before its first use) and shared by every structure that keys or
    # holds it: one object, not one per structure.
    shared: dict[tuple[str, ...], str] = {}

    def key(vars_) -> str:
        uses.update(vars_)
        if len(vars_) < 2:
            return tup(layout.local(vars_))
        name = shared.get(tuple(vars_))
        if name is None:
            name = shared[tuple(vars_)] = fresh("t")
            steps.append(
                {"kind": "let", "name": name, "value": tup(layout.local(vars_))}
            )
        return name

    def node_tuple(node, vars_) -> str:
        whole = node == leaf and leaf_tuple and vars_ == layout.info[node].tuple_vars
        return leaf_tuple if whole else key(vars_)

    d, anchor, path = "_p", None, [leaf]
    for step in layout.program.path(leaf):
        if isinstance(step, Propagate):
            path.append(step.node)
            if anchor is None and step.node in plan.in_n:
                if not layout.info[step.node].structures:  # (a root kept no totals)
                    anchor = d
                    uses.update(layout.info[step.node].tuple_vars)
            continue
        if isinstance(step, Update):
            if anchor is None and step.node in plan.in_n:
                anchor = d  # the first node of N on the path: its delta is the result's
                uses.update(layout.info[step.node].tuple_vars)
            out = _update_step(layout, ring, step, d, key, node_tuple)
            if step.structure.padded:
                # up the tree: the new weight less the old, the padded
                # row's where the key had none or has none
                pad, d = layout.pads[step.node], fresh("d")
                out.update(
                    pad=pad,
                    d_new=d,
                    created=ring.sub(out["d"], pad),
                    removed=ring.sub(pad, "_o"),
                )
            steps.append(out)
            continue
        # Weigh: by the sibling's index, as the layout named it
        si, theta, node = layout.named(step.structure), step.theta, path[-1]
        w = fresh("w")
        common = {
            "index": si.attr,
            "key": key(si.key),
            "w": w,
            "d": d,
            "d_new": fresh("d"),
            "mul": ring.mul(d, w),
            "nonzero_w": ring.count(w),
            "psum": "sum" if ring.width == 1 else "_psum",
        }
        if theta is not None:
            carrier = theta_node(layout, node, step.node)
            uses.add(theta.child if node == carrier else theta.parent)
            uses.update(
                v
                for pr in theta.extra
                for v in pr.vars
                if v in layout.info[node].tuple_vars
            )
        if step.how == "present":  # Δ unchanged: the sibling only gates it
            steps.append({**common, "kind": "present"})
            continue
        if step.how == "lookup":
            pad = layout.pads.get(step.node) if si.padded else None
            steps.append({**common, "kind": "weight", "pad": pad})
        elif step.how in ("range", "besides"):
            call = (
                f"range({', '.join(_range_on(theta, theta.child, local))})"
                if step.how == "range"
                else f"besides({_excluded(theta, theta.point(), local)})"
            )
            steps.append(
                {**common, "kind": "rangeweight", "call": call, "rs": fresh("rs")}
            )
        elif step.how == "scan":
            steps.append(
                {
                    **common,
                    "kind": "scanweight",
                    "g": fresh("g"),
                    "target": tup(layout.local(si.entry)),
                    "bounds": ", ".join(_range_on(theta, theta.child, local)),
                    "check": _extra_check(theta, local) or "True",
                }
            )
        else:  # loop: the parent's other variables are bound here
            source_bounds = check = None
            if si.kind == "sorted":
                source_bounds = ", ".join(_range_on(theta, theta.parent, local))
                check = _extra_check(theta, local)
            g = fresh("g")
            steps.append(
                {
                    **common,
                    "kind": "loop",
                    "g": g,
                    "target": tup(layout.local(si.entry)),
                    "pairs": (
                        f"{g}.scan({source_bounds})"
                        if source_bounds
                        else group_items(g, bare=layout.bare(si))
                    ),
                    "check": check,
                    # a bare entry may be falsy (0, ''): test for a group
                    "present": f"{g} is not None" if layout.bare(si) else g,
                }
            )
        d = common["d_new"]
    if emit is not None:
        around = sum(step["kind"] == "loop" for step in steps)
        loops, mults, depth = _enum_loops(layout, set(path), fresh, around=around)
        uses.update(
            v for n in path if n in plan.in_n for v in layout.info[n].tuple_vars
        )
        steps.append(
            {
                "kind": "emit",
                "loops": loops,
                "depth": depth,
                "key": emit["key"],
                "residual": emit["residual"],
                "value": ring.mul(anchor, *mults),
                "add": ring.add("_o", "_v"),
                "flips": None,  # _queue_only_flips
            }
        )
    return steps, uses


def group_items(g: str, value: str | None = None, bare: bool = False) -> str:
    """The (entry, payload) pairs of the index group held in `g` (assigned
    `value` first, when given): its one pair kept inline, a bare entry of
    count 1 (`_Layout.bare`), or a dict's items (see `_entry` in the
    module)."""
    held = g if value is None else f"({g} := {value})"
    if bare:
        return (
            f"({g}.items() if type({held}) is dict else ({g},) "
            f"if type({g}) is tuple and len({g}) == 2 else (({g}, 1),))"
        )
    return f"(({g},) if type({held}) is tuple else {g}.items())"


def _update_step(layout, ring, step: Update, d: str, key, node_tuple) -> dict:
    """An `Update` rendered: add `d` to one structure of the node."""
    s = layout.named(step.structure)
    out = {
        "node": step.node,
        "index": s.attr,
        "d": d,
        "add": ring.add("_o", d),
        "nonzero": ring.count("_n"),
    }
    if s.kind in ("sorted", "rangesum"):
        key([s.order])
        out["order"] = layout.var_local[s.order]
    if s.kind in ("groups", "sorted"):
        return {
            **out,
            "kind": s.kind,
            "key": key(s.key),
            "entry": node_tuple(step.node, s.entry),
            "bare": layout.bare(s),
        }
    if s.kind == "rangesum":
        return {**out, "kind": "rangesum", "key": key(s.key)}
    entry = node_tuple(step.node, s.key)
    # the ORDER BY index of the root's tuples holds tuples (a NaN in one is
    # found again by identity)
    out["ranked"] = None
    if s is layout.info[step.node].root_index and layout.ranked:
        out["ranked"] = f"({entry},)" if len(s.key) == 1 else entry
    return {
        **out,
        "kind": "flat",
        "key": entry,
        "vars": tuple(s.key),
        "keep": None,
        "pad": None,
    }


# --- the module -----------------------------------------------------------------------


def comment(text: str) -> str:
    """`text` as comment lines: no character of it can end a comment early."""
    return "\n".join("# " + oneline(line) for line in str(text).splitlines())


def oneline(text: str) -> str:
    """`text` with every line break (and NUL) replaced, safe inside a comment."""
    return "".join(
        "?" if ch == "\x00" else ch for ch in " ".join(str(text).splitlines())
    )


def unself(text: str, attrs) -> str:
    """`text` with `self.<attr>` read as the local `<attr>`, for each attr
    (a batch's loop reads its dicts into locals once)."""
    if not attrs:
        return text
    pattern = r"\bself\.(" + "|".join(map(re.escape, attrs)) + r")\b"
    return re.sub(pattern, r"\1", text)


TEMPLATE_FILTERS = {"comment": comment, "oneline": oneline, "unself": unself}


@functools.cache
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FunctionLoader(lambda name: resource_text("templates", name)),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
        autoescape=False,
    )
    env.filters.update(TEMPLATE_FILTERS)
    return env


def _factor(expressions: Expressions, channel, expr, scale: int | None, env) -> str:
    """One atom's factor of a payload channel; exact channels scale to ints
    (DECIMAL: by 10^scale; DOUBLE: to counts of 2**-1074, `_exact`)."""
    text = expressions.render_unrounded(expr, env)
    if channel.exact_float:
        expressions.helpers |= {"exact", "inexact"}
        return f"_exact({text})"
    if scale is None:
        return text
    return _scaled(expressions, text, scale)


def _pad_payload(query, atom: int, ring: "Ring", expressions: Expressions) -> str:
    """The payload of atom `atom`'s NULL-padded row (`Atom.padded`): count 1
    and, per channel, the atom's factor of a row of NULLs (0 where its
    guard tests a column for NULL, as SQL leaves the row out of the sum)."""
    if ring.width == 1:
        return "1"
    width = len(query.relation(query.atoms[atom].relation).columns)
    env = {(atom, c): "None" for c in range(width)}
    units = ["1"]
    for channel in query.channels:
        unit = "1"
        for (a, expr), scale in zip(channel.factors, channel.factor_scales):
            if a == atom:
                unit = _factor(expressions, channel, expr, scale, env)
        guards = [e for a, es in channel.guards if a == atom for e in es]
        if any(isinstance(e, Ref) for e in guards):  # a column: NULL there
            unit = "0"
        elif guards:
            nn = " and ".join(
                dict.fromkeys(expressions.nonnull(e, env) for e in guards)
            )
            unit = f"({unit} if {nn} else 0)"
        units.append(unit)
    return tuple_literal(units)


def _computed_once(parts: list[str]) -> list[str]:
    """A row's payload entries with a parenthesised subexpression that more
    than one of them computes (TPC-H Q1's `l_extendedprice * (1 -
    l_discount)` in two SUMs) computed once: its first occurrence binds it
    (`(_x1 := …)`), the later ones read the name. The entries are evaluated
    in order, in a tuple or list literal or in statements one after the
    other, so the name is bound before it is read. Only entries that always
    evaluate all of their text take part: not one guarded by a NULL test
    (`(… if … else 0)`) or with `and`/`or`, nor one with a string literal
    or a nested scope."""
    eligible = [
        i
        for i, part in enumerate(parts)
        if not re.search(r"[\"']|\b(if|and|or|lambda|for)\b", part)
    ]
    seen: dict[str, int] = {}
    for i in eligible:
        for inner in _parenthesised(parts[i]):
            # an operation (not a name), not a tuple, not a binding already
            if re.search(r"[-+*/%]", inner) and not re.search(",|:=", inner):
                seen[inner] = seen.get(inner, 0) + 1
    out = list(parts)
    n = 0
    for inner in sorted(seen, key=len, reverse=True):
        pattern = _in_parentheses(inner)
        if sum(len(pattern.findall(out[i])) for i in eligible) < 2:
            continue  # (a longer one took its occurrences)
        n += 1
        name, first = f"_x{n}", True
        for i in eligible:

            def bind(_match, name=name):
                nonlocal first
                text, first = (f"({name} := {inner})" if first else name), False
                return text

            out[i] = pattern.sub(bind, out[i])
    return out


# what may stand before a call's (or a subscript's) opening parenthesis
_CALLED = r"[\w)\]]"


def _in_parentheses(text: str) -> re.Pattern:
    """`text` as a whole parenthesised expression, not as a call's argument
    list (`f(text)`): where a local holding its value may replace it."""
    return re.compile(rf"(?<!{_CALLED})\(" + re.escape(text) + r"\)")


def _parenthesised(text: str) -> list[str]:
    """The text inside each pair of parentheses of `text` that is not a
    call's (or a subscript's) argument list."""
    found, opened = [], []
    for i, c in enumerate(text):
        if c == "(":
            call = i > 0 and re.match(_CALLED, text[i - 1]) is not None
            opened.append((i, call))
        elif c == ")" and opened:
            start, call = opened.pop()
            if not call:
                found.append(text[start + 1 : i])
    return found


def _scaled(expressions: Expressions, text: str, scale: int) -> str:
    """A DECIMAL value of `scale` digits as its integer number of units. The
    float times 10^scale lies within a rounding error of that integer, so
    floor(x + 0.5) finds it, at half the cost of round(); an INTEGER
    (scale 0) stays exact through round()."""
    if scale == 0:
        return f"round({text})"
    expressions.uses_floor = True
    return f"_floor({text} * {10 ** scale}.0 + 0.5)"  # (floats: the fast path)


def _join_vars(query, atom) -> list[str]:
    """The atom's variables that join (with another atom or in an inequality).
    SQL: NULL never joins, so a row with None in one of them takes no part in
    the atom (it still counts in the relation) — except on a variable joined
    by IS NOT DISTINCT FROM only, where None joins None. A derived variable
    joins where another atom holds it too (`r.a = s.b + 1`)."""
    return [
        v
        for v in atom.vars
        if (sum(v in a.vars for a in query.atoms) > 1 and v not in query.null_safe)
        or any(v in p.vars for p in query.predicates)
    ]


# Value checks: the Python classes a column's values must have where the
# module computes with them (compares, adds, multiplies) after its first
# change. Exact classes, so `x.__class__ in _NUM` is one set lookup; bool is
# an int in Python (and in these sums), a BOOLEAN column holds bools only;
# DATE excludes datetime.datetime, whose
# comparison with a date raises. Column type -> (set name, the kind `_classes`
# knows, description).
_CHECK_SETS = {
    "int": ("_NUM", "number", "a number"),
    "float": ("_NUM", "number", "a number"),
    "str": ("_STR", "str", "a str"),
    "date": ("_DATE", "date", "a datetime.date"),
    "bool": ("_BOOL", "bool", "a bool"),
    "timestamp": ("_TIMESTAMP", "timestamp", "a datetime.datetime"),
    "timestamptz": ("_TIMESTAMP", "timestamp", "a datetime.datetime"),
    "time": ("_TIME", "time", "a datetime.time"),
}


def _value_checks(query) -> dict[int, dict[int, bool]]:
    """Per atom (by index): the columns whose class matters once the atom
    takes a row (its condition holds) -> whether None is fine there.

    Everything else about a value is hashed or compared before the first
    change of an update, where an error is harmless. These are used after it:
    inequality columns (sorted and range-summed on), MIN/MAX arguments (kept
    in a sorted multiset), variables of a SELECT/HAVING expression (computed
    on each delta) or of a condition on result rows (which guards None), and
    the columns of a payload factor that is summed in floats (DOUBLE:
    `d * 'x'` is 'x') or computed after the first change (a relation with
    several atoms). A row with None in a join column is not taken (see
    `_join_vars`), so it is not checked."""
    computed: dict[str, bool] = {}  # variable -> None is fine wherever it is used
    for c in getattr(query, "residual", ()):
        for v in var_refs(c):
            computed[v.name] = True
    for p in query.predicates:
        for v in p.vars:
            computed[v] = False
    # SELECT and HAVING expressions propagate NULL as SQL does (Expressions)
    for o in query.outputs:
        if not isinstance(o.expr, Var):
            for v in var_refs(o.expr):
                computed.setdefault(v.name, True)
    if query.having is not None:
        for v in var_refs(query.having):
            computed.setdefault(v.name, True)
    kept = ("min", "max", *PICK_KINDS, *DISTINCT_SUM_KINDS, *ORDERED_KINDS)
    for a in query.aggregates:  # kept in a sorted multiset, NULLs left out
        if a.kind in kept and a.arg in query.extra_vars:
            computed.setdefault(a.arg, True)
    out: dict[int, dict[int, bool]] = {}
    for i, atom in enumerate(query.atoms):
        cols: dict[int, bool] = {}
        for c, v in enumerate(atom.variables):
            if v in computed and atom.variables.index(v) == c:
                cols[c] = computed[v]
        many = sum(a.relation == atom.relation for a in query.atoms) > 1
        for channel in query.channels:
            guarded = any(a == i for a, _ in channel.guards)
            for (a, expr), scale in zip(channel.factors, channel.factor_scales):
                if a == i and (scale is None or many):
                    for r in refs(expr):  # a guarded NULL adds 0
                        cols[r.column] = cols.get(r.column, True) and guarded
        if cols:
            out[i] = cols
    return out


def _subquery_value_checks(plan: Plan) -> dict[str, set[int]]:
    """Per base relation: the columns its subqueries' inner views check (at
    any depth). An outer view that reads the relation too checks them before
    its first change (it forwards the row to the inner views after it)."""
    out: dict[str, set[int]] = {}
    for sub in _inner_plans(plan):
        for i, cols in _value_checks(sub.query).items():
            out.setdefault(sub.query.atoms[i].relation, set()).update(cols)
        for rel, cols in _subquery_value_checks(sub).items():
            out.setdefault(rel, set()).update(cols)
    return out


def _inner_columns_read(plan: Plan) -> dict[str, set[int]]:
    """Per relation: the columns its subqueries' inner views read (at any
    depth): bound to a variable, or named by a condition, a derived value,
    a payload. A trusting outer view whose tests keep at least these of a
    row can check a delete for all of them."""
    out: dict[str, set[int]] = {}
    for sub in _inner_plans(plan):
        # its own inner views' results are its own (their names may be
        # another view's too)
        own = {name for name, _ in getattr(sub.query, "subqueries", ())}
        for rel, cols in _columns_read(sub.query).items():
            if rel not in own:
                out.setdefault(rel, set()).update(cols)
        for rel, cols in _inner_columns_read(sub).items():
            out.setdefault(rel, set()).update(cols)
    return out


def _columns_read(query) -> dict[str, set[int]]:
    """Per relation: the columns `query` itself reads (not its subqueries)."""
    out: dict[str, set[int]] = {}
    named = [  # its own subqueries' atoms are numbered apart
        r
        for f in fields(query)
        if f.name != "subqueries"
        for r in _refs_in(getattr(query, f.name))
    ]
    for i, atom in enumerate(query.atoms):
        cols = out.setdefault(atom.relation, set())
        cols.update(c for c, v in enumerate(atom.variables) if v is not None)
        cols.update(r.column for r in named if r.atom == i)
    return out


def _refs_in(obj):
    """Every column reference in the IR objects `obj` holds, queries aside."""
    if isinstance(obj, Ref):
        yield obj
    elif isinstance(obj, (tuple, list, frozenset)):
        for item in obj:
            yield from _refs_in(item)
    elif is_dataclass(obj) and not isinstance(
        obj, (type, Query, SetQuery, WindowQuery)
    ):
        for f in fields(obj):
            yield from _refs_in(getattr(obj, f.name))


def _inner_plans(plan: Plan) -> list[Plan]:
    """The plans of the inner views of `plan` (a set operation's sides)."""
    out = []
    for _, sub in plan.subplans:
        out += sub.plans() if isinstance(sub, (SetPlan, WindowPlan)) else [sub]
    return out


def _type_check(rel, checked: dict[int, bool], loaded: dict[int, str], sets: dict):
    """The value check of some columns of `rel` (`checked`: column -> None is
    fine), as {"cond": true when every value has its column's class, "spec":
    the columns for `_type_error`}, or None. Adds the class sets it uses to
    `sets` (name -> the kinds `_classes` unites)."""
    conds, spec = [], []
    for c in sorted(checked):
        kind = rel.types[c] if c < len(rel.types) else None
        if kind not in _CHECK_SETS:
            continue
        name, kinds, what = _CHECK_SETS[kind]
        kinds = (kinds,)
        if checked[c]:
            name, kinds, what = name + "_OR_NULL", kinds + ("none",), what + " or None"
        sets[name] = kinds
        conds.append(f"{loaded.get(c, f'row[{c}]')}.__class__ in {name}")
        spec.append(tuple_literal([str(c), py(rel.columns[c]), name, py(what)]))
    if not conds:
        return None
    return {"cond": " and ".join(conds), "spec": tuple_literal(spec)}


def _float_typed(query) -> set:
    """The (atom, column) pairs of DECIMAL and DOUBLE columns, and the
    variables bound to such columns only (`Expressions.floats`)."""
    columns, kinds = set(), {}
    for i, atom in enumerate(query.atoms):
        types = query.relation(atom.relation).types
        for c, v in enumerate(atom.variables):
            is_float = c < len(types) and types[c] == "float"
            if is_float:
                columns.add((i, c))
            if v is not None:
                kinds[v] = kinds.get(v, True) and is_float
    return columns | {v for v, is_float in kinds.items() if is_float}


def _exact_columns(query) -> dict:
    """(atom, column) pairs and variables -> the decimal digits their values
    hold exactly (`Expressions.digits`); a variable bound to several columns
    holds the most of them, one bound to a DOUBLE is absent."""
    columns, bound = {}, {}
    for i, atom in enumerate(query.atoms):
        scales = query.relation(atom.relation).scales
        for c, v in enumerate(atom.variables):
            d = scales[c] if c < len(scales) else None
            if d is not None:
                columns[(i, c)] = d
            if v is not None:
                bound.setdefault(v, []).append(d)
    variables = {v: max(ds) for v, ds in bound.items() if None not in ds}
    return columns | variables


def _declared_not_null(query) -> set[str]:
    """Variables bound to columns, every one of them declared NOT NULL: no
    value any structure holds for them is NULL."""
    bound: dict[str, bool] = {}
    for atom in query.atoms:
        rel = query.relation(atom.relation)
        for c, v in enumerate(atom.variables):
            if v is not None:
                bound[v] = bound.get(v, True) and rel.is_notnull(c)
    return {v for v, notnull in bound.items() if notnull}


def _nonnull_vars(query) -> set[str]:
    """Variables no result row holds NULL in: bound to a column declared NOT
    NULL, or joining two atoms (NULL never joins) or in an inequality."""
    out = set()
    for atom in query.atoms:
        rel = query.relation(atom.relation)
        for c, v in enumerate(atom.variables):
            if v is not None and rel.is_notnull(c) and not atom.padded:
                out.add(v)
        out |= set(_join_vars(query, atom))
    return out


def _used_columns(query, i: int) -> set[int]:
    """The columns of atom `i` whose values the view reads (binds to a
    variable, filters on, derives from, sums or tests for NULL)."""
    atom = query.atoms[i]
    cols = {c for c, v in enumerate(atom.variables) if v is not None}
    cols |= {r.column for f in atom.filters for r in refs(f)}
    cols |= {r.column for _, e in atom.derived for r in refs(e)}
    for channel in query.channels:
        cols |= {r.column for a, e in channel.factors if a == i for r in refs(e)}
        cols |= {
            r.column for a, es in channel.guards if a == i for e in es for r in refs(e)
        }
    return cols


def _subquery_null_checks(plan: Plan) -> dict[str, set[int]]:
    """Per base relation: its NOT NULL columns its subqueries' inner views
    read (at any depth), checked by an outer view that changes first."""
    out: dict[str, set[int]] = {}
    for sub in _inner_plans(plan):
        for i, atom in enumerate(sub.query.atoms):
            rel = sub.query.relation(atom.relation)
            used = {c for c in _used_columns(sub.query, i) if rel.is_notnull(c)}
            out.setdefault(atom.relation, set()).update(used)
        for rel, cols in _subquery_null_checks(sub).items():
            out.setdefault(rel, set()).update(cols)
    return out


def _null_check(rel, columns, locals_=None, doubles=()) -> dict | None:
    """The check that no column of `columns` (declared NOT NULL) holds None
    and no DOUBLE column of `doubles` holds NaN in a row, as {"cond": true
    when one does, "spec": (position, column[, NOT NULL]) entries for
    `_null_error`, the third one a DOUBLE's}, or None. `locals_`: names the
    values are loaded into (`row[i]` otherwise). A few `is None` and
    `v != v` tests: nearly free.

    NaN is refused because SQL keys and compares it as a value equal to
    itself and above every number, where Python's `nan != nan` would split
    its groups, miss its joins and deletes and drop it from comparisons."""
    columns, doubles = set(columns), set(doubles)
    if not columns and not doubles:
        return None
    conds, spec = [], []
    for c in sorted(columns | doubles):
        v = locals_[c] if locals_ and locals_[c] else f"row[{c}]"
        entry = [str(c), py(rel.columns[c])]
        if c in columns:
            conds.append(f"{v} is None")
        if c in doubles:
            conds.append(f"{v} != {v}")
            entry.append(py(c in columns))
        spec.append(tuple_literal(entry))
    return {"cond": " or ".join(conds), "spec": tuple_literal(spec)}


def _doubles(rel, columns) -> set[int]:
    """The DOUBLE (REAL, FLOAT) columns among `columns` of `rel`: those a
    NaN can reach (a DECIMAL holds none)."""
    return {
        c
        for c in columns
        if c < len(rel.types)
        and rel.types[c] == "float"
        and (c >= len(rel.scales) or rel.scales[c] is None)
    }


def _leaf_blocks(
    layout, ring, expressions, rel_name, names, emit, checks, sets, virtual=False
):
    """Per atom of relation `rel_name`: which columns to load from the row, its
    filter, the check of the values it computes with (`checks`: see
    `_value_checks`; class sets it uses go to `sets`), its payload, and the
    path that carries its delta to the root. `virtual`: an inner view's
    result, whose values are computed (a NaN there is SQL's, not input)."""
    plan = layout.plan
    query = plan.query
    blocks = []
    for node in plan.nodes:
        if not node.is_leaf or query.atoms[node.atom].relation != rel_name:
            continue
        rel = query.relation(rel_name)
        columns = rel.columns
        atom = query.atoms[node.atom]
        identity = list(atom.variables) == list(atom.vars) and len(atom.variables) > 1
        steps, uses = _path_steps(
            layout, ring, node.id, "row" if identity else None, emit
        )
        factors = [
            (channel, expr, scale)
            for channel in query.channels
            for (a, expr), scale in zip(channel.factors, channel.factor_scales)
            if a == node.atom
        ]
        guards = {
            channel: exprs
            for channel in query.channels
            for a, exprs in channel.guards
            if a == node.atom
        }
        needed_cols = {r.column for f in atom.filters for r in refs(f)}
        needed_cols |= {r.column for _, e in atom.derived for r in refs(e)}
        needed_cols |= {r.column for _, e, _ in factors for r in refs(e)}
        needed_cols |= {r.column for es in guards.values() for e in es for r in refs(e)}
        # SQL: NULL never joins. A row whose join variable is NULL (None)
        # takes no part in this atom (it still counts in the relation).
        shared = _join_vars(query, atom)
        computed = {v for v, _ in atom.derived}
        needed_cols |= {atom.variables.index(v) for v in shared if v not in computed}
        checked = checks.get(node.atom, {})
        needed_cols |= set(checked)
        locals_, env, seen = [], {}, set()
        for c, v in enumerate(atom.variables):
            if v is not None and v not in seen:
                seen.add(v)
                local = layout.var_local[v]
                needed = v in uses or c in needed_cols
            else:
                local = names.new(f"c_{atom.alias}_{columns[c]}")
                needed = c in needed_cols
            env[(node.atom, c)] = local
            locals_.append(local if needed else None)
        wanted = [i for i, local in enumerate(locals_) if local]
        # One UNPACK beats subscripts only where every column is read: it
        # touches each column's object (its reference count), and a column
        # the query does not read is mostly cold, a comment string (TPC-H
        # Q11's partsupp, 4 of 5 columns: subscripts 1.08x)
        if len(wanted) == len(columns):
            loads = (
                [targets([local or "_" for local in locals_]) + " = row"]
                if wanted
                else []
            )
        else:
            loads = [f"{locals_[i]} = row[{i}]" for i in wanted]
        null_columns = [i for i in wanted if rel.is_notnull(i)]
        nan_columns = set() if virtual else _doubles(rel, wanted)
        null_check = _null_check(rel, null_columns, locals_, nan_columns)
        derives = [
            f"{layout.var_local[v]} = {expressions.render(e, env)}"
            for v, e in atom.derived
        ]
        conds = [
            f"{layout.var_local[v]} is not None"
            for v in shared
            if v not in computed and not rel.is_notnull(atom.variables.index(v))
        ]
        # what the atom's rows must pass besides its tests (a test's index
        # need keep no other row: it can never be taken)
        own_filters = [f for f in atom.filters if not isinstance(f, InnerTest)]
        local_cond = None  # (an atom without tests: its `cond`)
        if len(own_filters) < len(atom.filters) and not derives:
            own = (
                [expressions.condition(Op("and", own_filters), env)]
                if own_filters
                else []
            )
            local_cond = " and ".join(conds + own) or None
        if atom.filters:
            conds.append(expressions.condition(Op("and", atom.filters), env))
        cond = " and ".join(c for c in conds if c != "True") or None
        joins = [f"{layout.var_local[v]} is not None" for v in shared if v in computed]
        keep = names.new(f"keep_{layout.info[node.id].name}") if cond or joins else None
        if keep and derives and cond:
            # SQL computes GROUP BY and SELECT expressions only for the rows
            # WHERE keeps (10 % a under a <> 0 never divides by zero); a row
            # whose computed join value is NULL joins nothing
            derives = [f"{keep} = {cond}"] + [
                f"{line} if {keep} else None" for line in derives
            ]
            cond = None
        if joins:
            cond = " and ".join(joins)
        # a tuple payload's entries (a batch adds them in place), and the
        # same of a row inserted once (d = 1: no product by d)
        parts = units = None
        if ring.width == 1:
            payload = "d"
        else:
            by_channel = {ch: (e, sc) for ch, e, sc in factors}
            parts, units = ["d"], ["1"]
            for channel in query.channels:
                part, unit = "d", "1"
                if channel in by_channel:
                    expr, scale = by_channel[channel]
                    unit = _factor(expressions, channel, expr, scale, env)
                    part = f"d * {unit}"
                if channel in guards:  # SQL: a row with a NULL argument adds 0
                    nn = " and ".join(
                        dict.fromkeys(
                            expressions.nonnull(e, env) for e in guards[channel]
                        )
                    )
                    if nn != "True":  # (else its columns are checked at the leaf)
                        part = f"({part} if {nn} else 0)"
                        unit = f"({unit} if {nn} else 0)"
                parts.append(part)
                units.append(unit)
            parts, units = _computed_once(parts), _computed_once(units)
            payload = tuple_literal(parts)
            if set(parts) == {"d"}:  # a row adds only its count: one shared tuple
                payload = f"(_ONE if d == 1 else {payload})"
            else:  # a row inserted once: its factors, no product by d
                payload = f"({tuple_literal(units)} if d == 1 else {payload})"
        info = layout.info[node.id]
        # What a batch sums payloads by: the values of the row its path reads
        # (loop variables further up are bound by the path itself).
        own = [v for v in dict.fromkeys(atom.variables) if v is not None]
        own += [v for v, _ in atom.derived]
        group = (["row"] if identity else []) + [
            layout.var_local[v] for v in dict.fromkeys(own) if v in uses
        ]
        group_key = tup(group)
        group_unpack = f"{', '.join(group)} = _k" if group else None
        if identity and not any(v in uses for v, _ in atom.derived):
            # whole rows: the row is the key, its columns loaded again
            group_key = "row"
            group_unpack = "\n".join(["row = _k", *loads])
        own_steps = [s for s in steps if s.get("node") == node.id]
        flat = own_steps[0] if len(own_steps) == 1 else None
        signature = (
            _flat_signature(
                rel_name,
                locals_,
                [layout.var_local[v] for v, _ in atom.derived] + [keep],
                flat["vars"],
                layout,
                expressions,
                [payload, cond or "", *derives],
            )
            if flat
            and flat["kind"] == "flat"
            and not flat["ranked"]
            and not flat["pad"]
            else None
        )
        blocks.append(
            {
                # its one flat index and what it holds, by the relation's
                # columns: another view's leaf of the same signature keeps
                # the same dict (`_share_leaves`)
                "shareable": (flat["index"], signature) if signature else None,
                "name": info.name,
                "node": node.id,
                "group_key": group_key,
                "group_unpack": group_unpack,
                "kept": _kept_count(steps, ring),
                "loads": loads,
                "columns": wanted,  # the positions of the row it reads
                "column_locals": {i: locals_[i] for i in wanted},
                "kept_tuple": None,  # see _alias_kept_tuple
                "type_check_indexed": None,  # or where a summed index takes it
                "batch_steps": None,  # a batch's path where it differs (_return_changes)
                "key_is_kept": False,  # the batch's sums key is that tuple too
                "null_check": null_check,
                "null_columns": null_columns,
                "nan_columns": nan_columns,
                "derives": derives,
                "type_check": _type_check(
                    query.relation(rel_name),
                    checked,
                    {i: locals_[i] for i in wanted},
                    sets,
                ),
                "keep": keep,
                "cond": cond,  # None when `derives` computes `keep` first
                # its conditions but its tests on inner views (None: none, or
                # it reads values computed from the row)
                "local_cond": local_cond,
                "payload": payload,
                "payload_parts": parts,
                "payload_units": units,
                "steps": steps,
                "count": _count_from_index(
                    info, identity and cond is None, layout, ring
                ),
                "atom": node.atom,
                # the index attributes its steps use, loaded into locals
                "locals": sorted({s["index"] for s in steps if "index" in s}),
            }
        )
    return blocks


def _flat_signature(
    rel_name, columns, derived, key_vars, layout, expressions, texts
) -> tuple | None:
    """A leaf's flat index described by its relation's columns rather than
    the locals one module named them: the key (columns or derived values)
    and the code that filters, derives and weighs a row. Two leaves with the
    same signature, in a view and in its subquery's view, hold equal dicts.
    `columns`: the local of each column (None if unread); `derived`: the
    locals a leaf computes (its derived variables, its filter's flag); the
    module's constants are named by their source."""
    canon = {name: f"<{source}>" for name, source in expressions.constants}
    canon.update({local: f"${c}" for c, local in enumerate(columns) if local})
    canon.update({local: f"$d{i}" for i, local in enumerate(derived) if local})
    named = re.compile(r"\b(" + "|".join(map(re.escape, canon)) + r")\b")

    def norm(text: str) -> str:
        return named.sub(lambda m: canon[m[1]], text) if canon else text

    key = tuple(canon.get(layout.var_local[v]) for v in key_vars)
    if None in key:  # keyed by a value the signature does not know
        return None
    return (rel_name, key, *map(norm, texts))


def _shareable(relations: list[dict]) -> dict:
    """Per relation of a subquery's view whose trigger returns the change of
    its one group: (the flat index its one leaf keeps, its signature). The
    outer view's leaf of the same signature uses that dict (`_share_leaves`)."""
    return {
        r["name"]: r["leaves"][0]["shareable"]
        for r in relations
        if r.get("returns") == "list" and r["leaves"][0]["shareable"]
    }


def _share_leaves(relations: list[dict]) -> list[dict]:
    """Leaves whose flat index holds what an index of the subquery's view
    they forward to holds (the same signature: Q18's lineitem summed per
    order key, outside and inside its IN): the view keeps no copy, it reads
    the inner view's dict and leaves the update to it. The inner view changes
    the dict when the row is forwarded (before this view propagates the row,
    when it checks first): the row's delta then weighs the inner result as
    it was, and the inner result's change the leaf as it is, so every joined
    tuple is counted once. Returns per shared dict this view's index, the
    inner view's attribute and name, and its index."""
    shared = []
    for r in relations:
        if len(r["leaves"]) != 1 or r["test_indexes"] or r["reunpack"]:
            continue
        leaf = r["leaves"][0]
        mine = leaf["shareable"]
        for fw in r["forwards"]:
            share = fw["share"]  # offered only by a trigger that returns a list
            if mine is None or share is None or share[1] != mine[1]:
                continue
            rest = [s for s in leaf["steps"] if s.get("node") != leaf["node"]]
            if all(s["kind"] == "let" for s in rest):
                continue  # nothing else to do: keep the path as it is
            leaf["steps"] = rest
            r["locals"] = sorted({s["index"] for s in rest if "index" in s})
            r["shares"] = True
            r["batch"] = None  # the inner view updates the shared dict first
            shared.append(
                {
                    "attr": mine[0],
                    "sub": fw["attr"],
                    "view": fw["relation"],
                    "index": share[0],
                }
            )
            break
    return shared


def _return_changes(
    query,
    relations: list[dict],
    ring: Ring,
    plain: bool,
    ordered: bool = False,
    outermost: bool = False,
) -> None:
    """A subquery's view whose every update changes at most one row or group
    of its result returns that change from its trigger, a list of (row,
    change), instead of queuing deltas for `_flush`: its outer view applies
    it at once. SELECT DISTINCT over one relation (EXISTS, IN, NOT IN): its
    one index counts the rows of each result row, (row, +1) or (row, -1)
    when the count leaves or reaches 0. GROUP BY: a path without loops ends
    at one group, whose row is compared with the one reported. A relation
    in any other shape keeps queuing deltas. Each relation's "returns" says
    which: "row" (one change or None), "list", or None (queued). A batch of
    a "list" relation queues its summed deltas (`batch_steps`): one read of
    the changed groups after the batch beats a call per row; a "row"
    relation's count is cheaper applied row by row. `ordered`: the view's
    ORDER BY, if any, takes a report's changes (`_reports_in_order`).
    `outermost` (push mode's own triggers): an aggregate without GROUP BY,
    whose one row exists even over no rows, reports it too (`one_group`)."""
    if query.ordering is not None and not ordered:
        return
    one_group = outermost and query.ordering is None and not query.group_vars
    for rel in relations:
        if one_group and query.grouped and not query.distinct:
            _report_one_group(rel)
            continue
        if len(rel["leaves"]) != 1:
            continue
        leaf = rel["leaves"][0]
        lets = [s for s in leaf["steps"] if s["kind"] == "let"]
        path = [s for s in leaf["steps"] if s["kind"] != "let"]
        if not path or path[-1]["kind"] != "emit":
            continue
        emit = path[-1]
        if emit["loops"] or emit["residual"]:
            continue
        if query.grouped and query.group_vars and not query.distinct:
            if any(s["kind"] == "loop" for s in path):
                continue
            report = {
                "kind": "report",
                "key": emit["key"],
                "value": emit["value"],
                "written": False,  # _report_reads_written
                "one_group": False,
            }
            leaf["steps"] = lets + path[:-1] + [report]
            rel["returns"] = "list"
            # a batch (its rows summed per key first) still queues its
            # deltas: the outer view reads them once, after the whole batch
            leaf["batch_steps"] = lets + path
        elif plain and query.distinct and ring.width == 1 and len(relations) == 1:
            if [s["kind"] for s in path] != ["flat", "emit"] or path[0]["ranked"]:
                continue
            flat = path[0]
            leaf["steps"] = lets + [
                {
                    "kind": "counted",
                    "index": flat["index"],
                    "key": flat["key"],
                    "d": flat["d"],
                    "row": emit["key"],
                }
            ]
            rel["returns"] = "row"
            rel["batch"] = None  # rows one by one: each returns its change


def _report_one_group(rel: dict) -> None:
    """Push mode's trigger of an aggregate without GROUP BY returns the
    change of its one row (which exists even over no rows). A path without
    loops from the relation's one leaf reports where it reaches the root, as
    a group's does; paths with loops (or several leaves) may reach the root
    many times, so the row is read once after them all (`report_after`)."""
    paths = []  # (leaf, its lets, its path)
    for leaf in rel["leaves"]:
        path = [s for s in leaf["steps"] if s["kind"] != "let"]
        if not path or path[-1]["kind"] != "emit":
            return
        if path[-1]["loops"] or path[-1]["residual"]:
            return
        paths.append((leaf, [s for s in leaf["steps"] if s["kind"] == "let"], path))
    report = {
        "kind": "report",
        "key": "()",
        "value": None,  # (the old row is the one reported)
        "written": False,  # _report_reads_written
        "one_group": True,
    }
    looped = len(paths) > 1 or any(s["kind"] == "loop" for s in paths[0][2])
    for leaf, lets, path in paths:
        # a batch still queues its summed deltas, read once after it
        leaf["batch_steps"] = leaf["steps"]
        leaf["steps"] = lets + path[:-1] + ([] if looped else [report])
    rel["report_after"] = report if looped else None
    rel["returns"] = "list"


def _reports_in_order(ordering: dict | None) -> bool:
    """Whether push mode's one-group triggers can report under the view's
    ORDER BY (see `_ordering`): by group columns alone, showing every row,
    the report keeps the group's place in the sorted live groups itself; by
    computed values, its changes go through `_Ordered.apply` as queued ones
    do. Not the root's own order, nor groups cut by LIMIT/OFFSET."""
    if ordering is None:
        return True
    if ordering["by_group"]:
        return not (ordering["window"] or ordering["hidden"])
    return not ordering["by_root"]


def _after_payload_written(relations: list[dict], checks: list[dict]):
    """(steps, i) per step `steps[i]` that follows the update of the entry
    holding a group's whole payload: the lookup has one check, an entry of
    one flat index by its whole key, and `steps[i - 1]` updates that entry.
    Such a step can read the entry the update wrote (`keep`) instead of
    looking it up again."""
    if len(checks) != 1 or checks[0]["holds"] or not checks[0]["written_by"]:
        return
    attr, tuple_vars = checks[0]["written_by"]
    for rel in relations:
        for leaf in rel["leaves"]:
            steps = leaf["steps"]
            for i in range(1, len(steps)):
                before = steps[i - 1]
                if (
                    before["kind"] == "flat"
                    and not before.get("pad")
                    and before.get("index") == attr
                    and before.get("vars") == tuple_vars
                    and not before.get("ranked")
                ):
                    yield steps, i


def _report_reads_written(relations: list[dict], checks: list[dict]) -> None:
    """A one-group trigger whose group's payload is the entry updated by the
    step just before its report takes the payload that update wrote (None
    when it deleted it) instead of looking it up again: the update step
    keeps it in the lookup's local."""
    for steps, i in _after_payload_written(relations, checks):
        if steps[i]["kind"] == "report":
            # copies: the queuing trigger shares the update step
            steps[i - 1] = {**steps[i - 1], "keep": checks[0]["name"]}
            steps[i] = {**steps[i], "written": True}


def _queue_only_flips(relations: list[dict], checks: list[dict]) -> None:
    """Pull mode's queue of a view ordered by group columns serves only to
    move groups in and out of the sorted live groups (`_follow_groups`):
    where a group's payload is the entry updated by the step just before
    the queuing, a group whose entry neither appeared nor went away is not
    queued (push mode, which reports every changed group, still queues them
    all)."""
    for steps, i in _after_payload_written(relations, checks):
        step = steps[i]
        if step["kind"] == "emit" and not step["loops"] and not step["residual"]:
            steps[i - 1] = {**steps[i - 1], "keep": checks[0]["name"]}
            steps[i] = {**step, "flips": checks[0]["name"]}


def _count_from_index(
    info: NodeKeeps, whole_row: bool, layout: _Layout, ring: Ring
) -> str | None:
    """An expression for a row's current multiplicity read from the leaf's own
    index, when that index holds whole rows (then no separate row store)."""
    if not whole_row:
        return None
    for s in (info.root_index, info.parent_index):
        if s is None:
            continue
        if s.kind == "flat" and s.key == info.tuple_vars:
            return ring.count(f"self.{s.attr}.get(row, _ZERO)")
        if s.kind == "groups" and s.entry == info.tuple_vars:
            key = tup(layout.local(s.key))
            return ring.count(f"_entry(self.{s.attr}.get({key}), row, _ZERO)")
    return None


def _count_from_tests(tests: list[dict], kept: str = "row") -> str | None:
    """An expression for a row's current multiplicity read from a test's index
    of the relation's rows by the test's key, when that index holds every row
    (then no separate row store). `kept`: what the index keeps of the row (in
    trusting mode its projection `_r`, whose count is a kept count)."""
    for t in tests:
        if _holds_every_row(t):
            return f"_entry(self.{t['rows']}.get({t['row_key']}), {kept}, 0)"
    return None


def _share_test_indexes(tests: list[dict]) -> None:
    """Tests of one relation whose indexes would hold the same rows by the
    same key (TPC-H Q21's EXISTS and NOT EXISTS by l_orderkey) read the
    first one's: the others keep no index of their own (`shares_rows`)."""
    first: dict = {}
    for t in tests:
        if t["kind"] == "scalar":  # indexed by compared value too
            continue
        same = first.setdefault(
            (t["row_key"], t["key_nulls"], t["kind"] == "not_in"), t
        )
        if same is not t:
            t["rows"], t["shares_rows"] = same["rows"], True


def _indexed_only_taken(
    leaves: list[dict], feeds: list[dict], tests: list[dict], kept_row
) -> str | None:
    """Trusting mode, where every inner view that reads the relation counts
    its rows in a test's state (TPC-H Q21's EXISTS and NOT EXISTS over
    lineitem): the tests' indexes keep only the rows the tested atom's own
    conditions take (`local_cond`; the others can never be taken, nor flip),
    and a delete of another row is checked against those states' counts.
    The condition, or None where the indexes keep every row."""
    if not (kept_row and len(leaves) == 1 and feeds and tests):
        return None
    if not all(fw.get("counted") for fw in feeds):
        return None
    if any(t["kind"] == "scalar" or t["summed"] for t in tests):
        return None
    return leaves[0]["local_cond"]


def _kept_in_states(local: str, feeds: list[dict]) -> list[str]:
    """Python true where deleting `d` copies of a row the tests' indexes do
    not keep (`local` false) would drive its count in a test's state below
    zero (`_indexed_only_taken`)."""
    checks = []
    for fw in feeds:
        c = fw["counted"]
        if c["one"]:
            at = f"self.{c['state']}.get({c['row_key']}, _EMPTY).get({c['row_entry']}, 0)"
        else:
            key = re.sub(r"\bsub_row\b", lambda _: c["row"], c["key"])
            at = f"self.{c['state']}.get({key}, _EMPTY).get({c['row']}, 0)"
        cond = f" and ({c['cond']})" if c["cond"] else ""
        checks.append(f"not ({local}){cond} and {at} + d < 0")
    return checks


def _holds_every_row(t: dict) -> bool:
    """Whether a test's index of the relation's rows holds every row (a
    scalar's skips NULL values, the others NULL keys, but NOT IN's)."""
    return t["kind"] != "scalar" and (t["kind"] == "not_in" or not t["key_nulls"])


def _indexes_taken_rows(tests: list[dict]) -> bool:
    """Whether a row the tested atom takes is in some test's index: one that
    holds every row, or a scalar compared by =, <, <=, >, >= (a NULL or NaN
    value, which its index skips, fails it)."""
    return any(
        _holds_every_row(t)
        or (
            t["kind"] == "scalar"
            and not t["test"].negated
            and t["test"].op in ("eq", "lt", "le", "gt", "ge")
        )
        for t in tests
    )


def _test_kept_check(t: dict) -> str:
    """Python that is true where deleting `d` copies of a row would drive
    its kept count in a test's index of rows below zero (trusting mode: the
    index counts projections `_r`; a row it does not index, never), for an
    index that skips some rows (one that holds every row is the relation's
    count, checked already). The leaves' own checks see only rows their
    atom takes."""
    if t["summed"]:
        return f"{t['summed']['indexed']} and {t['summed']['count_at']} + d < 0"
    if t["kind"] == "scalar":
        found = f"self.{t['rows']}.get({t['row_key']}, _EMPTY).get(_x)"
        nulls = f" and not ({t['key_nulls']})" if t["key_nulls"] else ""
        return (
            f"(_x := {t['row_value']}) is not None and _x == _x{nulls}"
            f" and _entry({found}, _r, 0) + d < 0"
        )
    below = f"_entry(self.{t['rows']}.get({t['row_key']}), _r, 0) + d < 0"
    return f"not ({t['key_nulls']}) and {below}"


def _projected_row(
    rel, leaves: list[dict], tests: list[dict], inner: set[int]
) -> list[int] | None:
    """In trusting mode, what the indexes of the tests on inner views keep of
    a row of `rel`: the columns its atoms read, the tests' keys and compared
    values read, and the columns `inner` its inner views read, in column
    order (a row comes back from there only to be applied to its atom again
    when its test flips). None when there is no such index, or every column
    is read."""
    if not tests:
        return None
    read = {c for leaf in leaves for c in leaf["columns"]} | inner
    for t in tests:
        text = f"{t['row_key']} {t['row_value'] or ''}"
        read |= {int(c) for c in re.findall(r"\brow\[(\d+)\]", text)}
    if len(read) == len(rel.columns):
        return None
    return sorted(read)


def _alias_kept_tuple(leaf: dict, kept: list[int]) -> None:
    """Trusting mode: where a leaf's tuple is what a test's index keeps of
    the row (the same columns in the same order), its index holds that one
    tuple, `_r`, not a second, equal one (a tuple less per row to allocate,
    keep and have the collector visit). `leaf["kept_tuple"]`: how the
    batch, which has no `_r`, builds it; `leaf["key_is_kept"]`: the batch
    sums the leaf's payloads by that tuple, so one tuple per row keys the
    sums, the test's changes and, after, the leaf's index."""
    if not set(kept) <= leaf["column_locals"].keys():
        return  # it keeps columns only a test reads
    value = tup([leaf["column_locals"][c] for c in kept])
    for s in leaf["steps"]:
        if s["kind"] == "let" and s["value"] == value:
            leaf["kept_tuple"] = value
            leaf["key_is_kept"] = leaf["group_key"] == value
            s["value"] = "_r"
            return


def _summed_test(t: dict, leaf: dict, query, ring, inner_read: set) -> dict | None:
    """A scalar test whose index can keep, per key and compared value, the
    summed payload of the rows there instead of the rows (trusting mode):
    where the test is the atom's only filter and its path reads nothing of a
    row but the key's columns, the rows of one key and value flip together
    and weigh as their sum (TPC-H Q17's lineitem by part and quantity). The
    sum's count is what a delete is checked against, so what the inner views
    read of the relation must be among the key's and the value's columns
    (then they hold at least as many rows agreeing on it). None otherwise."""
    test = t["test"]
    atom = query.atoms[t["atom"]]
    if (
        t["kind"] != "scalar"
        or test.negated
        or any(test.null_safe)
        or test.guard is not None
        or not test.keys
        or leaf["derives"]
    ):
        return None
    columns = [*test.keys, test.value]
    if not all(isinstance(k, Ref) and k.atom == t["atom"] for k in columns):
        return None
    if not all(f is test or f == Lit(True) for f in atom.filters):
        return None
    keys = [k.column for k in test.keys]
    locals_ = leaf["column_locals"]
    if not set(keys) <= set(locals_) or not inner_read <= {k.column for k in columns}:
        return None
    others = ["row", *(name for c, name in locals_.items() if c not in keys)]
    texts = [str(v) for step in leaf["steps"] for v in step.values()]
    if any(re.search(rf"\b{re.escape(n)}\b", x) for n in others for x in texts):
        return None
    nulls = f" and not ({t['key_nulls']})" if t["key_nulls"] else ""

    def kept_at(key: str) -> str:  # the index's sum at a key and value `_x`
        return f"(self.{t['rows']}.get({key}, _EMPTY).get(_x) or _ZERO)"

    # a batch's key and value (`_key`, `_x`) as a row, its other columns None
    at = {k: "_key" if len(keys) == 1 else f"_key[{i}]" for i, k in enumerate(keys)}
    at[test.value.column] = "_x"
    width = len(query.relation(atom.relation).columns)
    return {
        "payload": leaf["payload"],
        "indexed": f"(_x := {t['row_value']}) is not None and _x == _x{nulls}",
        "add": ring.add("_at", "_q"),
        "count": ring.count("_n"),
        "count_at": ring.count(kept_at(t["row_key"])),
        # a batch's sum of one key and value (`_q`), what the index keeps there
        "count_q": ring.count("_q"),
        "count_kept": ring.count(kept_at("_key")),
        "expand": tuple_literal([at.get(c, "None") for c in range(width)]),
        "neg": ring.neg("sums"),
        "bind": (
            ", ".join(locals_[c] for c in keys)
            + " = key"  # a key of one column: itself
        ),
    }


def _kept_loads(leaf: dict, kept: list[int] | None) -> dict:
    """A test's re-check hands its leaf a kept row (`_projected_row`): the
    leaf's columns are read from their places in it, not from the whole row
    it would otherwise rebuild with NULLs around them (which the leaf needs
    only where its steps or conditions read `row` itself)."""
    if not kept or not set(leaf["columns"]) <= set(kept):
        return {}
    texts = [leaf["cond"] or "", leaf["payload"], *leaf["derives"]]
    texts += [str(v) for s in leaf["steps"] for v in s.values()]
    if any(re.search(r"\brow\b", text) for text in texts):
        return {}
    at = {c: i for i, c in enumerate(kept)}
    locals_ = leaf["column_locals"]
    if [at[c] for c in leaf["columns"]] == list(range(len(kept))):
        loads = [targets([locals_[c] for c in leaf["columns"]]) + " = row"]
    else:
        loads = [f"{locals_[c]} = row[{at[c]}]" for c in leaf["columns"]]
    if leaf["kept_tuple"]:  # the kept row is the leaf's tuple too
        loads.insert(0, "_r = row")
    return {"loads": loads, "expand": None}


def _on_kept(text: str | None, kept: list[int] | None) -> str | None:
    """`text`, which reads columns of a row as `row[c]`, rewritten for a kept
    row (`_projected_row`: only the columns `kept`, in that order; None:
    whole rows are kept, `text` stands)."""
    if text is None or not kept:
        return text
    at = {c: j for j, c in enumerate(kept)}
    return re.sub(r"\brow\[(\d+)\]", lambda m: f"row[{at[int(m.group(1))]}]", text)


def _kept_count(steps: list[dict], ring: Ring) -> str | None:
    """An expression for what a leaf keeps of one row (trusting mode): the
    count of its tuple, projected on the columns the query reads, in the
    leaf's own first index (the first step of its path, before the update).
    A delete that would drive it below zero is refused; None where the leaf
    has no index of its own."""
    lets = {s["name"]: s["value"] for s in steps if s["kind"] == "let"}
    steps = [s for s in steps if s["kind"] != "let"]
    if not steps:
        return None
    # run before the path: the tuples its steps share are not built yet
    s = {k: lets.get(v, v) if isinstance(v, str) else v for k, v in steps[0].items()}
    index = f"self.{s['index']}"
    if s["kind"] == "flat":
        return ring.count(f"{index}.get({s['key']}, _ZERO)")
    if s["kind"] == "groups":
        return ring.count(f"_entry({index}.get({s['key']}), {s['entry']}, _ZERO)")
    if s["kind"] == "sorted":  # _SortedGroup.get: None if absent
        return ring.count(
            f"(({index}.get({s['key']}) or _EMPTY).get({s['entry']}) or _ZERO)"
        )
    if s["kind"] == "rangesum":
        value = s["order"]
        return ring.count(
            f"({index}[{s['key']}].range({value}, True, {value}, True) "
            f"if {s['key']} in {index} else _ZERO)"
        )
    return None


def _fused_refusal(rel: dict, leaf: dict, ring: Ring) -> dict | None:
    """A trusting leaf's check of a delete, taken into its first step where
    that step is the trigger's first change (the relation's one leaf, no
    test index or inner view changed before it) and reads the count it
    checks (a flat index): the step's own lookup refuses a count that would
    go below zero, where a check before it looked the key up once more
    (TPC-H Q1's window stream 1.06x). None where the check stays in front."""
    if len(rel["leaves"]) != 1 or rel["test_indexes"] or rel["forward_first"]:
        return None
    steps = [s for s in leaf["steps"] if s["kind"] != "let"]
    if not leaf["kept_check"] or not steps:
        return None
    if steps[0]["kind"] != "flat" or steps[0].get("pad"):
        return None
    return {
        "raise": f"raise ViewError(_kept_message({rel['literal']}, row))",
        "positive": f"{ring.count('_n')} > 0",
    }


def _unpacked_payload(rel: dict, leaf: dict, ring: Ring) -> dict | None:
    """A tuple payload that a flat index takes first, computed into one local
    per entry: the step adds them to the old entries, the steps after it
    read them, and no payload tuple is built and read back for every row
    (TPC-H Q1 trusting 1.01-1.10x, BENCHMARKS.md). None where a payload
    tuple is needed or the payload is read otherwise."""
    units = leaf["payload_units"]
    if units is None or len(rel["leaves"]) != 1 or rel["reunpack"]:
        return None
    if rel["test_indexes"] or rel["store"] or rel["count"] or rel["forwards"]:
        return None  # (also: a keeping leaf's `_p` is built only when kept)
    if leaf["keep"] and not (leaf["cond"] and not rel["type_check"]):
        return None
    steps = [s for s in leaf["steps"] if s["kind"] != "let"]
    if not steps or steps[0]["kind"] != "flat" or steps[0].get("pad"):
        return None
    first = steps[0]
    if first["d"] != "_p" or first["add"] != ring.add("_o", "_p"):
        return None
    if re.search(r"\b_p\b", str(rel.get("report_after"))):
        return None
    values = ["d" if unit == "1" else f"_pv{i}" for i, unit in enumerate(units)]
    entry = re.compile(r"\b_p\[(\d+)\]")
    whole = re.compile(r"\b_p\b")

    def read(text):  # `_p[i]` its local, `_p` itself the tuple of them
        if not isinstance(text, str):
            return text
        text = entry.sub(lambda m: values[int(m[1])], text)
        return whole.sub(tuple_literal(values), text)

    computed = [(v, u) for v, u in zip(values, units) if v != "d"]
    lines = [f"{v} = {u}" for v, u in computed]
    if computed:  # a row inserted once: no product by d
        lines.append("if d != 1:")
        lines += [f"    {v} = d * {v}" for v, _ in computed]
    return {
        "lines": lines,
        "steps": [
            {k: read(v) for k, v in s.items()} if s["kind"] != "let" else s
            for s in leaf["steps"]
        ],
    }


def _lookup(layout: _Layout, ring: Ring):
    """Steps of `_lookup(key variables)`: the payload of one output tuple, by
    the same path as enumeration, in O(1); None when it is not in the result."""
    plan = layout.plan
    checks = []
    fresh = _Counter()
    frontier = set(plan.frontier())
    for n in plan.preorder():
        if n not in plan.in_n:
            continue
        info = layout.info[n]
        s = info.root_index or info.parent_index
        if s is None:
            continue
        target = tup(layout.local(info.tuple_vars))
        source = f"self.{s.attr}"
        if s.kind in ("groups", "sorted") and info.root_index is None:
            g = fresh("g")
            checks.append(
                {
                    "name": g,
                    "source": f"{source}.get({tup(layout.local(s.key))})",
                    "mult": False,
                    "holds": None,
                }
            )
            source = g
        holds = (
            _holds(info.theta, lambda v: layout.var_local[v])
            if s.kind == "sorted"
            else None
        )
        checks.append(
            {
                "name": fresh("m"),
                "source": (
                    f"_entry({source}, {target})"
                    if s.kind == "groups" and info.root_index is None
                    else f"{source}.get({target})"
                ),
                "mult": n in frontier,
                "holds": holds,
                # a flat index read by its whole key: what an update of it
                # just wrote (_report_reads_written)
                "written_by": (
                    (s.attr, tuple(info.tuple_vars)) if s.kind == "flat" else None
                ),
            }
        )
    product = (
        ring.mul(*[c["name"] for c in checks if c["mult"]]) if checks else ring.zero
    )
    return checks, product


def query_id(plan: Plan) -> str:
    text = plan.query.sql + "\n" + "\n".join(map(str, plan.query.relations))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# a MIN/MAX multiset is a plain dict up to this many distinct values, then a
# SortedDict (`_group_slots`)
GROWN = 16


def _group_slots(query, expressions: Expressions) -> dict:
    """What a materialised group keeps beside its payload, slot by slot
    (`entry[1:]`): one multiset per MIN/MAX/COUNT(DISTINCT) argument (its
    value taken from the row's key, or computed from it), then a [total,
    non-NULL count] per computed COUNT/SUM/AVG argument, then the sum of
    the keys of each multiset a SUM/AVG(DISTINCT) reads (its keys a
    DECIMAL's values scaled to integers, so that sum is exact). `slot`:
    aggregate index -> its multiset's or sum's slot."""
    group, extras = list(query.group_vars), list(query.extra_vars)
    env = {v: f"key[{i}]" for i, v in enumerate(group + extras)}
    multisets, sums, slot = [], [], {}
    where: dict[str, int] = {}  # argument (its Python) -> slot
    for i, agg in enumerate(query.aggregates):
        if agg.kind in (*QUANTILE_KINDS, *BIT_KINDS):
            expressions.helpers.add(agg.kind)
        if agg.keyed:
            expressions.helpers.add("string_agg_keyed")
        if agg.cast_text:  # (_to_str names datetime: imported, see uses_datetime)
            expressions.helpers.add("to_str")
        if agg.computed is None and (agg.arg is None or agg.arg not in extras):
            continue
        # a computed DECIMAL summed: scaled to an integer (`_scaled` rounds it)
        scaled = (
            agg.computed is not None
            and agg.kind in ("count", "sum", "avg")
            and bool(agg.scale)
        )
        render = expressions.render_unrounded if scaled else expressions.render
        x = render(agg.computed or Var(agg.arg), env)
        if scaled:
            x = f"(None if {x} is None else {_scaled(expressions, x, agg.scale)})"
        if agg.kind in RANKED_KINDS:  # every value, in order, to index
            key = "ranked " + x
            if key not in where:
                where[key] = len(multisets)
                if may_be_nonfinite(_argument(query, agg)):
                    raise UnsupportedQueryError(
                        f"{agg.text}: an argument that may be NaN (x / 0) is "
                        "not supported"
                    )
                multisets.append(
                    {
                        "sorted": False,  # a list, not a SortedDict
                        "ranked": True,
                        "nan": False,
                        "x": x,
                        "nullable": agg.computed is not None
                        or expressions.may_be_null(Var(agg.arg)),
                    }
                )
            slot[i] = ("multiset", where[key])
        elif agg.kind in DISTINCT_SUM_KINDS:
            scaled = bool(agg.scale)  # a DECIMAL: its keys are integers
            key = (f"scaled {agg.scale} " if scaled else "multiset ") + x
            if key not in where:
                where[key] = len(multisets)
                multisets.append(
                    {
                        "sorted": False,
                        "nan": False,  # refused (frontend `_distinct_sum`)
                        "x": x,
                        "nullable": agg.computed is not None
                        or expressions.may_be_null(Var(agg.arg)),
                    }
                )
            m = multisets[where[key]]
            if scaled:
                m["scaled"] = _scaled(expressions, "_x", agg.scale)
            # a DOUBLE's keys are summed exactly (`_exact`), ±inf and NaN counted
            m["total"] = "ieee" if agg.scale is None else "exact"
            if agg.scale is None:
                expressions.helpers |= {"exact", "inexact", "ieee_total"}
            slot[i] = ("multiset", where[key])
        elif agg.kind in (
            "min",
            "max",
            *PICK_KINDS,
            "count_distinct",
            *DISTINCT_ORDERED_KINDS,
        ):
            key = "multiset " + x
            if key not in where:
                where[key] = len(multisets)
                nan = may_be_nonfinite(_argument(query, agg))
                if nan:  # NaN: a key equal to itself, above every number
                    expressions.helpers |= {"nan_key", "nan_value"}
                multisets.append(
                    {
                        "sorted": False,
                        "nan": nan,
                        "x": f"_nan_key({x})" if nan else x,
                        "nullable": agg.computed is not None
                        or expressions.may_be_null(Var(agg.arg)),
                    }
                )
            if agg.kind != "count_distinct":  # in order
                multisets[where[key]]["sorted"] = True
            if agg.kind in DISTINCT_ORDERED_KINDS:  # reads the keys in order
                multisets[where[key]]["keys"] = True
            slot[i] = ("multiset", where[key])
        else:
            key = "sum " + x
            if key not in where:
                where[key] = len(sums)
                sums.append({"x": x, "total": False, "ieee": False})
            s = sums[where[key]]
            s["total"] |= agg.kind != "count"  # COUNT(x) reads only n
            # a float total: exact (`_exact`), with counts of +inf, -inf, NaN
            s["ieee"] |= agg.nonfinite is True
            slot[i] = ("sum", where[key])
    for s in sums:
        s["zero"] = "0, 0, 0, 0" if s["ieee"] else "0"
        if s["ieee"]:
            expressions.helpers |= {"exact", "inexact"}
    for j, m in enumerate(multisets):
        m.setdefault("ranked", False)
        m.setdefault("scaled", None)
        m.setdefault("total", None)
        # read only at its ends (MIN, MAX, ARG_MIN/MAX) or by its size: a dict
        # while it holds few values (most groups hold one; a SortedDict costs
        # about 15 us to make), sorted once it outgrows GROWN
        m["grows"] = m["sorted"] and not (m["ranked"] or m["total"] or m.get("keys"))
        m["entry"] = 1 + j
        m["ctor"] = (
            "[]"  # a plain sorted list until it outgrows GROWN values
            if m["ranked"]
            else "SortedDict()" if m["sorted"] and not m["grows"] else "{}"
        )
    for k, (kind, j) in slot.items():
        slot[k] = 1 + j if kind == "multiset" else 1 + len(multisets) + j
    for j, s in enumerate(sums):
        s["slot"] = 1 + len(multisets) + j
    totals = [m for m in multisets if m["total"]]
    for j, m in enumerate(totals):
        m["total_slot"] = 1 + len(multisets) + len(sums) + j
        m["total_zero"] = "[0, 0, 0, 0]" if m["total"] == "ieee" else "0"
    return {"multisets": multisets, "sums": sums, "slot": slot, "totals": totals}


def _ranked_options(agg) -> dict:
    """What `functions.aggregate_value` needs of a quantile or STRING_AGG."""
    return {
        "fraction": agg.fraction,
        "place": agg.place,
        "scale": agg.scale,
        "separator": agg.separator,
        "descending": agg.descending,
        "as_text": agg.cast_text,
        "keyed": agg.keyed,
    }


def _argument(query, agg):
    """The expression a MIN/MAX/COUNT(DISTINCT) aggregates (None: a column)."""
    if agg.computed is not None:
        return agg.computed
    for atom in query.atoms:
        for var, e in atom.derived:
            if var == agg.arg:
                return e
    return None


def _aggregate_values(query, ring: Ring, payload: str, layout, slots) -> list[str]:
    """Each aggregate's value from a group's payload and, for MIN/MAX/COUNT
    DISTINCT and computed arguments, the group's entry `e` (`_group_slots`;
    SQL semantics: functions.py)."""
    count = ring.count(payload)
    values = []
    extras = list(query.extra_vars)
    # A group of GROUP BY is read only while it has rows (its count is
    # never 0 where it is kept): an argument never NULL is never empty there.
    nonempty = query.grouped and bool(query.group_vars)
    for i, agg in enumerate(query.aggregates):
        if agg.computed is not None and agg.kind in ("count", "sum", "avg"):
            total, n = f"e[{slots['slot'][i]}][0]", f"e[{slots['slot'][i]}][1]"
            kind = agg.kind
            if kind == "avg" and agg.scale is not None and not agg.nonfinite:
                # divided once (functions.linear_total)
                total = functions.linear_total([(1, total, agg.scale)], n)
                kind = "sum"
            elif agg.scale:
                total = f"{total} / {10 ** agg.scale}"
            if agg.nonfinite:
                total = f"_inexact({total})"
                s = f"e[{slots['slot'][i]}]"
                total, kind = _ieee_value(kind, total, n, f"{s}[2], {s}[3], {s}[4]")
            empty = f"e is None or not {n}"
            values.append(
                f"(0 if {empty} else {n})"
                if agg.kind == "count"
                else functions.aggregate_value(kind, n, total=total, empty=empty)
            )
            continue
        # the rows whose argument is not NULL (all rows when it never is)
        nonnull = f"{payload}[{agg.nonnull}]" if agg.nonnull else count
        value = functools.partial(functions.aggregate_value, agg.kind, nonnull)
        if agg.kind == "count":
            values.append(value())
        elif agg.computed is None and agg.arg is not None and agg.arg not in extras:
            # a group variable: constant in its group
            local = layout.var_local[agg.arg]
            if agg.kind in DISTINCT_SUM_KINDS:  # its one value
                values.append(
                    value(
                        total=local,
                        distinct="1",
                        empty=f"{count} == 0 or {local} is None",
                    )
                )
                continue
            if agg.kind in ORDERED_KINDS:
                # the key once (a quantile, the distinct ones), or per row
                many = agg.kind in ("string_agg", "array_agg", "bit_xor_agg")
                values.append(
                    value(
                        ranked=f"[{local}] * {count}" if many else f"({local},)",
                        empty=f"{count} == 0 or {local} is None",
                        **_ranked_options(agg),
                    )
                )
                continue
            values.append(
                value(
                    extreme=local,
                    distinct=f"(0 if {count} == 0 or {local} is None else 1)",
                    empty=f"{count} == 0",
                )
            )
        elif agg.kind in DISTINCT_SUM_KINDS:
            values.append(_distinct_sum(agg, slots, i, nonnull))
        elif agg.kind in ORDERED_KINDS:
            ms = f"e[{slots['slot'][i]}]"
            distinct = agg.kind in DISTINCT_ORDERED_KINDS  # a SortedDict's keys
            values.append(
                value(
                    ranked=f"{ms}.keys()" if distinct else ms,
                    empty=f"e is None or not {ms}",
                    **_ranked_options(agg),
                )
            )
        elif agg.arg is not None or agg.computed is not None:
            ms = f"e[{slots['slot'][i]}]"
            end = 0 if agg.kind in ("min", "arg_min") else -1
            extreme = f"{ms}.peekitem({end})[0]"
            multiset = slots["multisets"][slots["slot"][i] - 1]
            if multiset["grows"]:  # a dict at first
                least = "min" if end == 0 else "max"
                extreme = f"({least}({ms}) if type({ms}) is dict else {extreme})"
            if multiset["nan"]:
                extreme = f"_nan_value({extreme})"
            values.append(
                value(
                    extreme=extreme,
                    distinct=f"(0 if e is None else len({ms}))",
                    empty=f"e is None or not {ms}",
                )
            )
        else:
            terms = [
                _term(query, coef, channel, count, payload)
                for coef, channel in agg.terms
            ]
            if agg.kind == "avg" and not agg.nonfinite:  # divided once
                total = functions.linear_total(terms, nonnull)
                value = functools.partial(functions.aggregate_value, "sum", nonnull)
            else:
                total = functions.linear_total(terms)
            if (
                nonempty
                and agg.kind in ("sum", "avg")
                and not (agg.nonnull or agg.nonfinite)
            ):
                values.append(total)
                continue
            if agg.nonfinite:  # see Aggregate.nonfinite
                counts = [
                    (
                        "(" + " + ".join(f"{payload}[{ch}]" for ch in chs) + ")"
                        if chs
                        else "0"
                    )
                    for chs in agg.nonfinite
                ]
                total, kind = _ieee_value(agg.kind, total, nonnull, ", ".join(counts))
                value = functools.partial(functions.aggregate_value, kind, nonnull)
            values.append(value(total=total))
    return values


def _distinct_sum(agg, slots, i: int, nonnull: str) -> str:
    """SUM/AVG(DISTINCT x) from its group's multiset and the sum of its
    keys (`_group_slots`): an integer, a DECIMAL's scaled integer divided
    back once, or a DOUBLE's exact sum rounded once, ±inf and NaN as IEEE
    adds them."""
    ms = f"e[{slots['slot'][i]}]"
    t = f"e[{slots['multisets'][slots['slot'][i] - 1]['total_slot']}]"
    n = f"len({ms})"
    kind = agg.kind
    if agg.scale is None:
        finite = f"_inexact({t}[0])"
        if kind == "avg_distinct":  # divided first: NaN is the one math.nan
            finite, kind = f"{finite} / {n}", "sum_distinct"
        total = f"_ieee_total({finite}, {t}[1], {t}[2], {t}[3])"
    elif kind == "avg_distinct":  # divided once (functions.linear_total)
        total, kind = functions.linear_total([(1, t, agg.scale)], n), "sum_distinct"
    else:
        total = f"{t} / {10 ** agg.scale}" if agg.scale else t
    return functions.aggregate_value(
        kind, nonnull, total=total, distinct=n, empty=f"e is None or not {ms}"
    )


def _term(query, coef, channel: int, count: str, payload: str) -> tuple:
    """(coefficient, value, decimal scale) of one channel in a SUM/AVG
    (`functions.linear_total`); an exact float channel is rounded here."""
    if channel == 0:
        return coef, count, 0
    ch = query.channels[channel - 1]
    value = f"{payload}[{channel}]"
    if ch.exact_float:
        k = len(ch.factors)
        return coef, f"_inexact({value}{', %d' % k if k > 1 else ''})", None
    return coef, value, ch.scale


def _ieee_value(kind: str, finite: str, n: str, counts: str) -> tuple[str, str]:
    """A float SUM/AVG with ±inf/NaN counts (`Aggregate.nonfinite`): the
    Python of its value when there are non-NULL terms, and the aggregate kind
    that reads it as is (AVG divides before `_ieee_total`, so that a NaN
    result is the one object math.nan)."""
    if kind == "avg":
        return f"_ieee_total({finite} / {n}, {counts})", "sum"
    return f"_ieee_total({finite}, {counts})", kind


def split_nonfinite(query):
    """`query` with each float channel of one table's factor that may be
    ±inf or NaN (a division) summed as its finite part, beside channels
    counting its +inf, -inf and NaN values (`Aggregate.nonfinite`): a
    running float sum would keep inf - inf = NaN after the infinite row left.
    (A product with another table's factor stays a plain float channel.)"""
    channels = list(query.channels)
    counts = {}  # channel -> its (+inf, -inf, NaN) channels
    for i, ch in enumerate(query.channels):
        if len(ch.factors) != 1 or ch.scale is not None:
            continue
        ((atom, e),) = ch.factors
        if not may_be_nonfinite(e):
            continue
        channels[i] = Channel(((atom, Op("finite_part", (e,))),), (None,), ch.guards)
        counts[i + 1] = []
        for op in ("is_posinf", "is_neginf", "is_nan"):
            channels.append(Channel(((atom, Op(op, (e,))),), (0,), ch.guards))
            counts[i + 1].append(len(channels))
    if not counts:
        return query
    aggregates = []
    for agg in query.aggregates:
        split = [(c, ch) for c, ch in agg.terms if ch in counts]
        if agg.kind in ("sum", "avg") and split:
            pos = tuple(counts[ch][0 if c > 0 else 1] for c, ch in split)
            neg = tuple(counts[ch][1 if c > 0 else 0] for c, ch in split)
            nan = tuple(counts[ch][2] for _, ch in split)
            agg = replace(agg, nonfinite=(pos, neg, nan))
        aggregates.append(agg)
    return replace(query, channels=tuple(channels), aggregates=tuple(aggregates))


def render_module(
    plan: Plan,
    source: str = "<string>",
    inner: bool = False,
    formatted: bool = True,
    trust_input: bool = False,
    returns: dict | None = None,
    inner_views: InnerViews | None = None,
    shares: dict | None = None,
    shared: list | None = None,
    appliers: dict | None = None,
    checkable: set | None = None,
) -> str:
    """The module's source for `plan`, black-formatted and compile-checked
    (`inner`: raw text of a subquery's view, to be nested in its outer module;
    `formatted=False`: compile-checked but not black-formatted, for a verdict
    without black's cost; `trust_input`: keep no copy of whole input rows,
    deletes are taken to be of present rows, see `_kept_count`; `returns`:
    filled with what each relation's trigger of a subquery's view returns,
    see `_return_changes`; `inner_views`: the outer module's, where an inner
    view registers its own; `shares`: filled with the indexes an outer view
    may keep as its own, see `_shareable`; `shared`: filled with the dicts
    this view reads from its inner views, see `_share_leaves`; `appliers`:
    filled with the method applying each relation's rows, virtual ones too;
    `checkable`: filled with the relations whose batcher takes a batch its
    outer view checked without checking its rows again, `checked=True`)."""
    if inner_views is None:
        inner_views = InnerViews()
    plan = replace(plan, query=split_nonfinite(plan.query))
    query = plan.query
    names = Names()
    layout = _Layout(plan, names)
    expressions = Expressions()
    # Declared NOT NULL columns are checked at the leaf before any use.
    expressions.notnull = {
        (i, c)
        for i, atom in enumerate(query.atoms)
        for c in _used_columns(query, i)
        if query.relation(atom.relation).is_notnull(c) and not atom.padded
    }
    expressions.nonnull_vars = _nonnull_vars(query)
    expressions.floats = _float_typed(query)
    expressions.digits = _exact_columns(query)
    if any(a.nonfinite for a in query.aggregates):
        expressions.helpers.add("ieee_total")
    expressions.agg_kinds = [a.kind for a in query.aggregates]
    expressions.agg_digits = [
        query_digits(query, AggRef(i)) for i in range(len(query.aggregates))
    ]
    ring = Ring(1 + len(query.channels))
    layout.pads = {
        node.id: expressions._constant(
            "_PAD", _pad_payload(query, node.atom, ring, expressions)
        )
        for node in plan.nodes
        if node.is_leaf and query.atoms[node.atom].padded
    }
    # A padded atom's real rows are checked at its leaf as any atom's are;
    # only its padded row (above) holds NULLs, and it is a constant.
    expressions.notnull |= {
        (i, c)
        for i, atom in enumerate(query.atoms)
        if atom.padded
        for c in _used_columns(query, i)
        if query.relation(atom.relation).is_notnull(c)
    }
    # groups keep entries (their slots) when an aggregate's argument is
    # computed, even from group variables alone (SUM(k / k): a NaN channel)
    materialized = plan.materialised
    shifts = _shift_constants(query)  # a DATE's shifts on θ-edges
    key_vars = list(plan.n_vars)
    key_locals = layout.local(key_vars)
    group_locals = layout.local(query.output_vars)

    out_env = dict(layout.var_local)
    agg_names = [f"_a{i}" for i in range(len(query.aggregates))]
    out_env.update({("agg", i): n for i, n in enumerate(agg_names)})
    outputs = [expressions.render(o.expr, out_env) for o in query.outputs]
    having = (  # SQL: a comparison with a NULL aggregate is not TRUE
        expressions.condition(query.having, out_env)
        if query.having is not None
        else None
    )
    plain = not query.grouped and all(isinstance(o.expr, Var) for o in query.outputs)
    extra_locals = layout.local(query.extra_vars)
    emit_key = (
        tuple_literal(group_locals + extra_locals)
        if query.grouped
        else tuple_literal(outputs)
    )

    emit = {"key": emit_key, "residual": None}
    if query.residual:
        emit["residual"] = " and ".join(
            expressions.condition(c, layout.var_local) for c in query.residual
        )
    subviews, forwards = _subviews(plan, names, source, trust_input, inner_views)
    tests = _inner_tests(plan, names, expressions)
    subplans = dict(plan.subplans)
    for fw in (fw for fws in forwards.values() for fw in fws if fw.get("counted")):
        name = fw["relation"]
        fw["counted"] = _counted_rows(subplans[name], tests[name], expressions)
    virtual = {name for name, _ in plan.subplans} - set(tests)
    base = [r for r in query.relations if r.name not in virtual]
    base += [r for r in _inner_relations(plan) if r not in base]
    base += [r for r in query.unread if r not in base]

    value_checks = _value_checks(query)
    inner_checks = _subquery_value_checks(plan)
    inner_read = _inner_columns_read(plan)
    own_read = _columns_read(query)
    inner_null_checks = _subquery_null_checks(plan)
    class_sets: dict[str, tuple[str, ...]] = {}  # for the value checks
    relations = []
    for rel in [r for r in query.relations if r.name in virtual] + base:
        # A subquery's result is computed from checked values: no checks.
        checks = {} if rel.name in virtual else value_checks
        leaves = _leaf_blocks(
            layout,
            ring,
            expressions,
            rel.name,
            names,
            emit,
            checks,
            class_sets,
            virtual=rel.name in virtual,
        )
        # Columns its inner views check, when the outer view changes first
        # (it reads the relation too, or it forwards to several inner views).
        # None is let through: the inner view's condition may drop it.
        checked = dict.fromkeys(inner_checks.get(rel.name, ()), True)
        if not leaves and len(forwards.get(rel.name, [])) < 2:
            checked = {}
        type_check = _type_check(rel, checked, {}, class_sets)
        # the columns a value of the wrong class can fail in (`_retyped`)
        read = own_read.get(rel.name, set()) | inner_read.get(rel.name, set())
        null_check = None
        if rel.name not in virtual and (leaves or len(forwards.get(rel.name, [])) > 1):
            own = {c for leaf in leaves for c in leaf["null_columns"]}
            # NaN: in the columns read, or anywhere in a whole row kept
            nans = _doubles(rel, range(len(rel.columns)) if not trust_input else read)
            nans -= {c for leaf in leaves for c in leaf["nan_columns"]}
            null_check = _null_check(
                rel, inner_null_checks.get(rel.name, set()) - own, doubles=nans
            )
        count = leaves[0]["count"] if len(leaves) == 1 else None
        test_indexes = [t for t in tests.values() if t["relation"] == rel.name]
        _share_test_indexes(test_indexes)
        # Trusting the input drops the copy of whole rows, except where
        # several inner views would each check the row their own way. A
        # relation read by one inner view passes its rows there first: that
        # view checks, and refuses, before this one changes. Where the view
        # tests its rows against inner views it changes first (a test's value
        # is read before the inner view changes): the tests' indexes keep of
        # a row the columns read again when its test flips and every column
        # an inner view reads (`_projected_row`), so that the view's check of
        # a delete against their kept counts stands for the inner views'.
        feeds = forwards.get(rel.name, [])
        forward_first = (
            trust_input and bool(leaves) and len(feeds) == 1 and not test_indexes
        )
        trusted = (
            trust_input
            and rel.name not in virtual
            and (
                not feeds
                or forward_first
                or (len(leaves) == 1 and _indexes_taken_rows(test_indexes))
            )
        )
        for t in test_indexes:
            t["summed"] = (
                _summed_test(t, leaves[0], query, ring, inner_read.get(rel.name, set()))
                if trusted and len(leaves) == 1 and len(test_indexes) == 1
                else None
            )
        summed = any(t["summed"] for t in test_indexes)
        if summed:  # a row of a bad type is refused where the index sums it
            leaves[0]["type_check_indexed"] = test_indexes[0]["summed"]["indexed"]
        kept = (
            _projected_row(rel, leaves, test_indexes, inner_read.get(rel.name, set()))
            if trusted and not summed
            else None
        )
        kept_row = tuple_literal([f"row[{c}]" for c in kept]) if kept else None
        if test_indexes and trusted and kept_row is None and not summed:
            trusted = False  # the tests read every column: whole rows, counted
        if count is None:
            count = _count_from_tests(test_indexes, "_r" if kept_row else "row")
        if kept and len(leaves) == 1:
            _alias_kept_tuple(leaves[0], kept)
        for t in test_indexes:  # its expressions where `row` is a kept row
            t["on_kept"] = {
                part: _on_kept(t[part], kept)
                for part in ("row_key", "row_value", "key_nulls", "row_other")
            }
            # x of a row kept alone inline as the pair `ix` (a counted test)
            t["on_kept"]["sole_other"] = t["on_kept"]["row_other"] and re.sub(
                r"\brow\[", "ix[0][", t["on_kept"]["row_other"]
            )
        if rel.name in virtual:  # an inner view's changes: always valid
            count = None
        for leaf in leaves:
            leaf["kept_check"] = leaf["kept"] if trusted and not count else None
            leaf["refusal"] = None  # (`_fused_refusal`, once the steps are final)
        test_kept_checks = [
            _test_kept_check(t)
            for t in test_indexes
            if (kept_row or t["summed"])
            and not _holds_every_row(t)
            and not t["shares_rows"]
        ]
        local = _indexed_only_taken(leaves, feeds, test_indexes, kept_row)
        count_when = None
        if local:
            for t in test_indexes:
                t["local"] = local
            count_when = local if count else None
            test_kept_checks = [f"({local}) and {c}" for c in test_kept_checks]
            test_kept_checks += _kept_in_states(local, feeds)
        # A batch of rows is summed per key before it propagates; the
        # indexes of its tests on inner views take each row's summed change,
        # and the inner views that read the relation take the batch after
        # this view (where a trusting view lets its one inner view check
        # first, rows go one by one).
        batched = (
            bool(leaves)
            and rel.name not in virtual
            and not (trusted and forward_first)
            # tested against DISTINCT views only, whose counted triggers go
            # row by row in a batch too: the re-checks a batch saves cost less
            # than its sums (TPC-H Q21's whole insert stream ran 0.84-0.92x)
            and not (
                test_indexes and feeds and all(f["returns"] == "row" for f in feeds)
            )
        )
        relations.append(
            {
                "name": rel.name,
                "literal": py(rel.name),
                "columns": tuple_literal([py(c) for c in rel.columns]),
                "arity": len(rel.columns),
                "method": "_" + names.new(f"apply_{rel.name}"),
                "batch": "_" + names.new(f"batch_{rel.name}") if batched else None,
                # a batch passed on to the inner views that read the relation
                "pass_on": None,  # (set below, once every batch is settled)
                "forward_batch": False,  # see below: read by one inner view
                "late": False,  # its batch summed after the inner views take it
                "each": None,  # a batch row by row, the trigger inlined (below)
                "each_locals": (),  # the dicts its loop reads into locals
                # One atom holding whole rows in its index: that index is the store.
                "store": (
                    None
                    if count or trusted or rel.name in virtual
                    else names.new(f"{rel.name}_rows")
                ),
                "count": count,
                "count_when": count_when,  # the rows the count is kept of
                # a batch checks the count from its leaf's sums: keyed by
                # the row, every row the atom's, they are the rows' changes
                "count_summed": bool(
                    count
                    and len(leaves) == 1
                    and leaves[0]["group_key"] == "row"
                    and leaves[0]["cond"] is None
                    and not leaves[0]["keep"]
                    and not test_indexes
                ),
                "leaves": leaves,
                "reunpack": len(leaves) > 1,
                "virtual": rel.name in virtual,
                "checked_inside": False,  # see _checked_inside (set below)
                "report_after": None,  # see _report_one_group
                # VALUES: its rows, which the outermost View applies at start
                "constant": (
                    None
                    if rel.rows is None
                    else tuple_literal(
                        [tuple_literal([py(v) for v in r]) for r in rel.rows]
                    )
                ),
                "type_check": type_check,
                # each column's declared kind, to name a value of another
                # class when Python's TypeError does not (`_retyped`)
                "kinds": tuple_literal(
                    [
                        py(
                            _CHECK_SETS[k][1]
                            if k in _CHECK_SETS and c in read
                            else None
                        )
                        for c, k in enumerate(rel.types)
                    ]
                ),
                # each column's kind for values given as other classes
                # (`_own_row`: a Decimal, a NumPy scalar, a pandas Timestamp)
                "own_kinds": py(_own_kinds(rel, read if trust_input else None)),
                "null_check": null_check,
                "forwards": feeds,
                "forward_first": trusted and forward_first,
                "shares": False,  # its leaf's index is an inner view's
                "test_indexes": test_indexes,
                # its one test whose index sums payloads (_summed_test)
                "summed_test": next((t for t in test_indexes if t["summed"]), None),
                # what the tests' indexes keep of a row (trusting), as `_r`
                "kept_row": kept_row,
                "kept": kept,
                "test_kept_checks": test_kept_checks,
                # the same read from a kept row (a batch's summed changes)
                "kept_count": _on_kept(count, kept),
                "kept_checks": [_on_kept(c, kept) for c in test_kept_checks],
                # a kept row as the relation's row (its other columns None),
                # for the atom it is applied to again when its test flips
                "kept_expand": (
                    tuple_literal(
                        [
                            f"row[{kept.index(c)}]" if c in kept else "None"
                            for c in range(len(rel.columns))
                        ]
                    )
                    if kept
                    else None
                ),
                "locals": sorted(
                    {
                        s["index"]
                        for leaf in leaves
                        for s in leaf["steps"]
                        if "index" in s
                    }
                ),
            }
        )

    ordering = _ordering(layout)
    reporting = []  # push mode's triggers that return their change (see below)
    if returns is not None:  # a subquery's view: its outer view reads them
        if not plan.subplans and not tests and not materialized:
            _return_changes(query, relations, ring, plain)
        returns.update((r["name"], r.get("returns")) for r in relations)
        if appliers is not None:
            appliers.update((r["name"], r["method"]) for r in relations)
        if shares is not None:
            shares.update(_shareable(relations))
    elif not plan.subplans and not tests and not materialized:
        # In push mode, a relation whose update reaches one group reports
        # that group's change from a trigger of its own (insert() and
        # delete() call it): no queued delta, no _flush pass. Pull mode and
        # update() keep the queuing trigger.
        copies = [
            {**r, "leaves": [dict(leaf) for leaf in r["leaves"]]} for r in relations
        ]
        ordered = _reports_in_order(ordering)
        _return_changes(query, copies, ring, plain, ordered=ordered, outermost=True)
        for rel in copies:
            if rel.get("returns") == "list":
                rel["queuing"] = rel["method"]  # the trigger it stands in for
                rel["method"] = "_" + names.new(f"report_{rel['name']}")
                reporting.append(rel)
    if query.grouped and not materialized and key_locals != group_locals:
        # _changes_of reads a group's payload and row from one unpacked key
        raise AssertionError(f"group key {group_locals} is not N's {key_locals}")
    slots = _group_slots(query, expressions)
    loops, mults, inner_depth = _enum_loops(layout, set(), _Counter())
    checks, check_payload = _lookup(layout, ring)
    _report_reads_written(relations + reporting, checks)
    if (
        ordering
        and ordering["by_group"]
        and returns is None
        and not (plan.subplans or tests or materialized)
    ):
        _queue_only_flips(relations, checks)
    for rel in relations + reporting:  # the first steps as rendered now
        for leaf in rel["leaves"]:
            leaf["refusal"] = _fused_refusal(rel, leaf, ring)
            leaf["unpacked"] = _unpacked_payload(rel, leaf, ring)
    sorted_runtime = any(x.kind in ("sorted", "rangesum") for x in layout.structures())
    sorted_dict = any(m["sorted"] for m in slots["multisets"])
    sorted_list = any(m["ranked"] for m in slots["multisets"])
    aggregates = list(
        zip(agg_names, _aggregate_values(query, ring, "p", layout, slots))
    )
    old_from_payload = _old_from_payload(
        query, materialized, [value for _, value in aggregates]
    )
    # the REAL and read TIMESTAMPTZ columns of the relations insert() and
    # update() take, stored there as DuckDB stores them (an inner view takes
    # the outer view's rows)
    stored = None if inner else _stored_columns(base, own_read, inner_read)
    # a TIME column: its class named in the checks (`_retyped`, `_classes`)
    time_checks = any("time" in r.types for r in base)
    waits = (
        []
        if inner or reporting
        else _gate_blocks(
            query, relations, trust_input, own_read, inner_read, class_sets, names
        )
    )
    runtime = _runtime_source(layout, ring, expressions, relations, stored, inner)
    context = {
        "inner": inner,  # a subquery's view: raises the outer module's ViewError
        "strict": not trust_input,
        "source": source,
        "sql": query.sql,
        "plan": str(plan),
        "complexity": complexity(plan),
        "relations": relations,
        "reporting": reporting,
        "columns": tuple_literal(
            [py(n) for n in query.names or [o.name for o in query.visible_outputs]]
        ),
        "ordering": ordering,
        # pull mode: an ORDER BY kept beside the result (not the root's own
        # order) takes the changes when the result is read
        "lazy_order": bool(
            ordering and not ordering["by_root"] and not materialized and not inner
        ),
        # push mode reports each group's old row as it was reported, unless
        # that row is cheap to build again from the old payload
        "old_from_payload": old_from_payload,
        # the report reads a changed group's row from its payload and the row
        # last reported: the pending deltas need only its key
        "pending_keys": query.grouped and not materialized and not old_from_payload,
        "exact_groups": query.grouped and not old_from_payload,
        "structures": layout.structures(),
        "query_id": py(query_id(plan)),
        "ring": ring,
        "zero": ring.zero,
        # the shared payload of a row that adds only its count (_leaf_blocks)
        "one": (
            tuple_literal(["1"] * ring.width)
            if any("_ONE" in leaf["payload"] for r in relations for leaf in r["leaves"])
            else None
        ),
        "loops": loops,
        "inner_depth": inner_depth,
        "payload": ring.mul(*mults) if mults else ring.zero,
        "count": ring.count,
        "p_count": ring.count("_p"),
        "p_add": ring.add("_o", "_p"),
        "output": tuple_literal(outputs),
        "grouped": query.grouped,
        "global_aggregate": query.grouped and not query.group_vars,
        "distinct_changes": query.grouped and query.distinct,
        "group_positions": _group_positions(query, layout),
        "materialized": materialized,
        "group_params": ", ".join(group_locals),
        "group_tuple": tuple_literal(group_locals),
        "aggregates": _reuse_values(aggregates),
        "n_group": len(group_locals),
        # Per MIN/MAX/COUNT(DISTINCT) argument a (sorted) multiset, per
        # computed COUNT/SUM/AVG argument its total (SQL: NULLs left out).
        "multisets": slots["multisets"],
        "grown": GROWN,
        "sums": slots["sums"],
        # per multiset a SUM/AVG(DISTINCT) reads, the sum of its keys
        "totals": slots["totals"],
        "having": having,
        "nan_free": _nan_free(query),
        "inline_groups": any(x.kind == "groups" for x in layout.structures()),
        "key_params": ", ".join(key_locals),
        "key_tuple": tuple_literal(key_locals),
        "distinct": query.distinct,
        "dedupe": query.distinct and not plain and not materialized,
        "plain": plain and not materialized,
        "row_targets": (
            targets([layout.var_local[o.expr.name] for o in query.outputs])
            if plain
            else None
        ),
        "row_arity": len(query.outputs),
        "repeated_checks": _repeated_output_checks(query) if plain else [],
        "checks": checks,
        "check_payload": check_payload,
        "constants": expressions.constants + shifts,
        "type_checks": bool(class_sets),
        "null_checks": any(
            r["null_check"] or any(leaf["null_check"] for leaf in r["leaves"])
            for r in relations
        ),
        "class_sets": [
            (name, ", ".join(map(py, kinds)))
            for name, kinds in sorted(class_sets.items())
        ],
        "date_checks": any(
            {"date", "timestamp"} & set(kinds) for kinds in class_sets.values()
        ),
        "time_checks": time_checks,
        "sorted_runtime": sorted_runtime,
        "sorted_dict": sorted_dict,
        "sorted_list": sorted_list,
        "sorted_imports": [
            name
            for name, used in (
                ("SortedDict", sorted_dict),
                ("SortedList", sorted_list),
                ("SortedKeyList", sorted_runtime or query.ordering is not None),
            )
            if used
        ],
        "helpers": sorted(expressions.helpers),
        "runtime": runtime,
        "stored": stored,
        "uses_datetime": expressions.uses_datetime
        or bool(shifts)
        or re.search(r"\bdatetime\.", runtime) is not None  # inlined helpers
        or any({"date", "timestamp"} & set(kinds) for kinds in class_sets.values())
        or time_checks
        or any("timestamptz" in r.types for r in base)  # stored as UTC
        or any(  # VALUES rows holding dates
            isinstance(v, datetime.date)
            for rel in base
            for row in rel.rows or ()
            for v in row
        ),
        "uses_re": expressions.uses_re,
        "uses_floor": expressions.uses_floor,
        # relations whose rows wait for a gate's row (dynyan.compiler.gates)
        "waits": waits,
        "wakers": _wakers(waits, names),
        "keyed": (
            [] if inner or trust_input else _keyed_relations(base, relations, names)
        ),
    }
    # the inlined helpers that call math (_div's infinities, _sqrt, quantiles),
    # and the counts of infinities beside a float SUM (_NONFINITE_PARTS)
    context["uses_math"] = "finite_part" in expressions.helpers or (
        re.search(r"\bmath\.", context["runtime"]) is not None
    )
    methods = {r["name"]: r["method"] for r in relations}

    def guard_of(name: str) -> int | None:
        """The column of a virtual relation counting its subquery's rows."""
        if name in tests:
            return tests[name]["test"].guard
        rel = next((r for r in query.relations if r.name == name), None)
        return None if rel is None else rel.guard

    def receiver(f: dict) -> dict:
        """Forward `f` with the method here that takes its view's changes."""
        return {
            **f,
            "method": (
                tests[f["relation"]]["handler"]
                if f["relation"] in tests
                else methods[f["relation"]]
            ),
            "batch": f["relation"] in tests,  # the handler takes all changes
            "guard": guard_of(f["relation"]),
        }

    for r in relations:
        r["forwards"] = [
            {
                **receiver(f),
                "feeds": [receiver(g) for g in f["feeds"]],
                # the inner view's trigger, called by name where it is known
                "trigger": (
                    f"sub.{f['applies']}"
                    if f["applies"]
                    else f"sub._appliers[{r['literal']}]"
                ),
            }
            for f in r["forwards"]
        ]
        # Read by subqueries only: they validate, unless several trusting
        # views would each check their own projection (one may refuse a row
        # another has taken); then whole rows are checked first, here. (A
        # table read by nothing, `Query.unread`, keeps its store.)
        feeds = r["forwards"]
        if not r["leaves"] and feeds and (not trust_input or len(feeds) < 2):
            r["store"] = None
            r["batch"] = None
            # read by one inner view that queues its changes (a trigger that
            # returns its group's change queues them in a batch): a batch goes
            # to that view's batcher whole (where it has one), its changes
            # come back once
            if len(feeds) == 1 and feeds[0]["pending"] and feeds[0]["returns"] != "row":
                r["forward_batch"] = True
        r["checked_inside"] = _checked_inside(r)
    context["shared"] = _share_leaves(relations)
    if shared is not None:
        shared.extend(context["shared"])
    leaves = {leaf["atom"]: leaf for r in relations for leaf in r["leaves"]}
    flips = {}  # atom -> the leaf a test's handler re-applies rows to
    for t in tests.values():
        leaf = leaves[t["atom"]]
        if t["summed"]:  # the atom's one test: its own method
            flips[t["atom"]] = {
                **leaf,
                "method": "_" + names.new(f"sums_of_{leaf['name']}"),
                "summed": t["summed"],
            }
        elif t["atom"] not in flips:
            rel = next(r for r in relations if r["name"] == t["relation"])
            flips[t["atom"]] = {
                **leaf,
                "method": "_" + names.new(f"rows_of_{leaf['name']}"),
                "expand": rel["kept_expand"],
                "summed": None,
                **_kept_loads(leaf, rel["kept"]),
            }
        t["leaf"] = flips[t["atom"]]["method"]
    context["tests"] = list(tests.values())
    for r in relations:
        if (r["batch"] and r["forwards"]) or r["forward_batch"]:
            r["pass_on"] = "_" + names.new(f"pass_on_{r['name']}")
        # its rows' tests read the inner views the batch goes to first (see
        # the template's batchers); such a batch that deletes goes row by row
        r["late"] = bool(r["batch"] and r["forwards"] and r["test_indexes"])
        # a batch of one leaf that keeps no rows, has no tests and feeds no
        # inner view may go row by row after one of nearly distinct keys
        r["direct"] = bool(
            r["batch"]
            and len(r["leaves"]) == 1
            and not (
                r["late"]
                or r["forwards"]
                or r["store"]
                or r["count"]
                or r["test_indexes"]
                or r["count_summed"]
                or r["kept_row"]
                or r["leaves"][0]["key_is_kept"]
            )
        )
    if checkable is not None:  # (a subquery's view: its direct batches)
        checkable.update(r["name"] for r in relations if r["direct"])
    for r in relations:
        # a batch that goes row by row (no batcher, or a late one's batch
        # that deletes) runs the trigger inlined in one loop: no call per
        # row, the indexes read into locals once (TPC-H Q21's lineitem: 1.06x)
        r["each"] = (
            "_" + names.new(f"each_{r['name']}")
            if not inner
            and r["leaves"]
            and (r["late"] or not r["batch"])
            and not (r["virtual"] or r["constant"] or r.get("returns"))
            else None
        )
        # the tests' states and indexes it reads, read into locals too
        r["each_locals"] = sorted(
            {t["rows"] for t in r["test_indexes"]}
            | {t["state"] for t in tests.values() if t["relation"] == r["name"]}
            | {fw["counted"]["state"] for fw in r["forwards"] if fw.get("counted")}
        )
    _row_by_row_helpers(context, relations)
    context["flip_leaves"] = list(flips.values())
    context["scalar_tests"] = any(t["kind"] == "scalar" for t in tests.values())
    ranged = any(t["kind"] == "scalar" and t["ranged"] for t in tests.values())
    context["ranged_tests"] = ranged
    if ranged and "SortedDict" not in context["sorted_imports"]:
        context["sorted_imports"] = ["SortedDict", *context["sorted_imports"]]
    # what feeds each inner view's virtual relation (a join or a test)
    context["subview_feeds"] = [
        {
            "attr": sub["attr"],
            "method": (
                tests[sub["name"]]["handler"]
                if sub["name"] in tests
                else methods[sub["name"]]
            ),
            "batch": sub["name"] in tests,
            "guard": guard_of(sub["name"]),
        }
        for sub in subviews
    ]
    context["subviews"] = subviews
    context["values_tables"] = any(r["constant"] for r in relations)
    context["counts_many"] = any(guard_of(sub["name"]) is not None for sub in subviews)
    context["many_rows"] = many_rows(plan)
    context["many_message"] = py(many_message(context["many_rows"]))
    context["inner_views"] = [] if inner else inner_views.entries
    context["trusting"] = any(
        leaf["kept_check"] for r in relations for leaf in r["leaves"]
    ) or any(r["kept_row"] and r["count"] for r in relations)
    context["state_entries"] = _state_entries(context)
    context["layout_id"] = _LAYOUT_PLACEHOLDER
    context["digest"] = _DIGEST_PLACEHOLDER

    def rendered() -> str:
        text = _environment().get_template("module.py.jinja").render(**context)
        text = text.replace(
            _LAYOUT_PLACEHOLDER, py(_layout_id(text, context, query)), 1
        )
        if inner:
            return text
        return text.replace(
            _DIGEST_PLACEHOLDER,
            f"render {_digest(text)}, module {_MODULE_PLACEHOLDER}",
            1,
        )

    text = rendered()
    if inner:
        return text
    try:  # compiled before black (which keeps the AST): fails sooner
        with warnings.catch_warnings():  # a SyntaxWarning would greet the user
            warnings.simplefilter("error", SyntaxWarning)
            try:
                compile(text, source, "exec")
            except SyntaxError as err:
                if _NESTED not in str(err) or not any(r["each"] for r in relations):
                    raise
                # a batch's loop nests the trigger two blocks deeper: its
                # rows go through the trigger's method instead
                for r in relations:
                    r["each"] = None
                _row_by_row_helpers(context, relations)
                text = rendered()
                compile(text, source, "exec")
        module = black.format_str(text, mode=BLACK_MODE) if formatted else text
    except Exception as err:  # a compiler bug: show the raw text to debug
        if _NESTED in str(err):  # Python's limit
            raise UnsupportedQueryError(
                "the query joins too many tables in one chain: an update of the "
                "farthest would run more nested loops than Python allows in one "
                "function (20); join fewer tables, or aggregate part of the chain "
                "in a subquery first"
            ) from None
        log.error("rendered module does not compile:\n%s", text)
        raise RenderError(
            f"generated code is invalid ({err}); this is a dynyan bug"
        ) from err
    if formatted:
        module = module.replace(_MODULE_PLACEHOLDER, _digest(module), 1)
    return module


_NESTED = "too many statically nested blocks"  # Python's limit (20)


def _row_by_row_helpers(context: dict, relations: list[dict]) -> None:
    """Which helpers of batches applied a row at a time the module needs (a
    batch of a relation with a PRIMARY KEY may go row by row: `keyed`)."""
    keyed = bool(context.get("keyed"))
    context["one_by_one"] = keyed or any(r["late"] and not r["each"] for r in relations)
    context["undo"] = keyed or any(
        r["late"] or r["direct"] or r["each"] for r in relations
    )


# A module's header carries two digests: of the text the templates rendered
# (before black) and of the module itself (with its own digest blanked).
# They let a check that the committed modules are fresh render without black,
# which takes nine tenths of the time of compiling a large query.
_DIGEST_PLACEHOLDER = "<dynyan digest>"
_MODULE_PLACEHOLDER = "<unformatted>"
_DIGEST_LINE = re.compile(r"^# Digest: render (\w+), module (\S+)$", re.M)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def render_digest(module: str) -> str | None:
    """The digest of the render a module came from (`render_module` with
    `formatted=False` gives the same), or None if the module's text is not
    what black made of that render (edited since, or no digest)."""
    found = _DIGEST_LINE.search(module)
    if found is None:
        return None
    if found[2] != _MODULE_PLACEHOLDER:
        blanked = (
            module[: found.start(2)] + _MODULE_PLACEHOLDER + module[found.end(2) :]
        )
        if found[2] != _digest(blanked):
            return None
    return found[1]


def _own_kinds(rel, read=None) -> str:
    """The kinds `dynyan.runtime.ownvalues._own_value` converts a value to,
    one letter per column of `rel`: "i" INTEGER, "n" DECIMAL, "r" REAL, "d"
    DATE, "z" TIMESTAMPTZ, "." any other, "-" one the view neither reads
    nor keeps (a trusting view's column not in `read`)."""
    scales = rel.scales or (None,) * len(rel.types)
    letters = {"int": "i", "date": "d", "timestamptz": "z"}

    def kind(i, type_, scale):
        if read is not None and i not in read:
            return "-"
        if i in rel.singles:
            return "r"
        if type_ == "float" and scale is not None:
            return "n"
        return letters.get(type_, ".")

    return "".join(kind(i, t, s) for i, (t, s) in enumerate(zip(rel.types, scales)))


def _stored_columns(base, *reads: dict[str, set[int]]) -> str | None:
    """`_STORED` of the module, relation -> (arity, REAL columns, TIMESTAMPTZ
    columns read), for the relations with either; None if none has."""
    entries = []
    for r in base:
        read = set().union(*(got.get(r.name, ()) for got in reads))
        zoned = [i for i in sorted(read) if r.types[i] == "timestamptz"]
        if r.singles or zoned:
            columns = [
                tuple_literal([py(i) for i in got]) for got in (r.singles, zoned)
            ]
            entries.append(f"{py(r.name)}: ({len(r.columns)}, {', '.join(columns)})")
    return "{" + ", ".join(entries) + "}" if entries else None


def _runtime_source(
    layout, ring, expressions, relations, stored=None, inner=False
) -> str:
    """The runtime helpers the module uses (dynyan.runtime), as source
    specialised to its payloads (`stored`: columns to store as DuckDB does;
    `inner`: an inner view's, which finds the module's own at its top)."""
    kinds = {s.kind for s in layout.structures()}
    steps = {
        step["kind"]
        for r in relations
        for leaf in r["leaves"]
        for step in leaf["steps"]
    }
    used = {"_SortedGroup"} if "sorted" in kinds else set()
    used |= {"_RangeSum"} if "rangesum" in kinds else set()
    used |= {"_psum"} if "scanweight" in steps else set()
    used |= {f"_{name}" for name in expressions.helpers}
    used |= {"_tupled"}  # a row given as a list (insert, update, multiplicity)
    if not inner:  # values of other classes (a Decimal, NumPy, pandas)
        used |= {"_own_classes", "_foreign", "_foreign_hint", "_FirstRows"}
        used |= {"_Converting", "_foreign_at"}
    used |= {"_as_stored"} if stored else set()
    return inline.helper_source(used, ring)


# Bump when the meaning of a snapshot's parts changes in a way the layout
# description below does not show (e.g. how payloads or multisets are kept).
SNAPSHOT_FORMAT = 3  # 2: an index group of one entry is kept inline; 3: bare if count 1
_LAYOUT_PLACEHOLDER = '"<dynyan layout id>"'


def _state_entries(context) -> list[tuple[str, str]]:
    """The parts of a snapshot: (key literal, expression of the View)."""
    attrs = [r["store"] for r in context["relations"] if r["store"]]
    shared = {s["attr"] for s in context["shared"]}  # an inner view's: its part
    attrs += [s.attr for s in context["structures"] if s.attr not in shared]
    if context["dedupe"] or context["distinct_changes"]:
        attrs.append("_distinct_rows")
    if context["materialized"]:
        attrs.append("_result")
    if context["ordering"]:
        attrs.append("_ordered")
    if context["exact_groups"]:
        attrs.append("_reported")
    if context["counts_many"]:
        attrs.append("_many")
    for w in context["waits"]:
        attrs += [w["awake"], w["waiting"]]
    attrs += [k["by_key"] for k in context["keyed"]]
    entries = [(py(a), f"self.{a}") for a in attrs]
    entries += [
        (py(f"sub:{sub['attr']}"), f"self.{sub['attr']}.snapshot()")
        for sub in context["subviews"]
    ]
    for test in context["tests"]:
        kept = (
            (test["state"],) if test["shares_rows"] else (test["state"], test["rows"])
        )
        entries += [(py(a), f"self.{a}") for a in kept]
    return entries


def _gate_blocks(query, relations, trust_input, own_read, inner_read, sets, names):
    """What the View's code needs of each relation whose rows wait for a
    gate's row of their key (`gates`): the checks a waiting row passes
    first (as the trigger's, so that it goes in without fail when its key
    wakes), the log's key of a row (strict: the row; trusting: the columns
    read, the row rebuilt from them with None elsewhere) and the gate's
    filter."""
    by_name = {r["name"]: r for r in relations}
    blocks = []
    for gate in gates(query):
        rel, by = by_name.get(gate.relation), by_name.get(gate.gate)
        if (
            rel is None
            or by is None
            or len(rel["leaves"]) != 1
            or len(by["leaves"]) != 1
            or by["leaves"][0]["cond"] is None
        ):
            continue
        ir_rel = query.relation(gate.relation)
        leaf = rel["leaves"][0]
        lit = rel["literal"]
        checks = [
            f"if len(row) != {rel['arity']}:",
            f"    raise ViewError(_arity_message({lit}, {rel['arity']}, row))",
            *leaf["loads"],
        ]
        for null_check in (leaf["null_check"], rel["null_check"]):
            if null_check:
                checks += [
                    f"if {null_check['cond']}:",
                    f"    raise _null_error({lit}, row, {null_check['spec']})",
                ]
        read = sorted(
            own_read.get(gate.relation, set()) | inner_read.get(gate.relation, set())
        )
        type_check = _type_check(ir_rel, dict.fromkeys(read, True), {}, sets)
        if type_check:
            checks += [
                f"if not ({type_check['cond']}):",
                f"    raise _type_error({lit}, row, {type_check['spec']})",
            ]
        # a row is logged whole where the view keeps whole rows (strict, or
        # several inner views check it), else the columns read but the key
        whole = (
            not trust_input
            or bool(rel["store"])
            or not set(rel["kept"] or ()) | set(leaf["columns"]) <= set(read)
        )
        kept = [c for c in read if c != gate.column]  # (the key: the log's)
        at = {c: f"_v[{i}]" for i, c in enumerate(kept)}
        at[gate.column] = "key"
        rebuilt = [at.get(c, "None") for c in range(rel["arity"])]
        by_leaf = by["leaves"][0]
        blocks.append(
            {
                "name": gate.relation,
                "literal": lit,
                "by": gate.gate,
                "by_literal": by["literal"],
                "by_arity": by["arity"],
                "by_loads": by_leaf["loads"],
                "by_cond": by_leaf["cond"],
                "by_key": f"row[{gate.gate_column}]",
                "checks": checks,
                "key": f"row[{gate.column}]",
                "kept": "row" if whole else tuple_literal([f"row[{c}]" for c in kept]),
                "rebuilt": "_v" if whole else tuple_literal(rebuilt),
                "absent": "_absent_message" if whole else "_kept_message",
                "awake": names.new(f"awake_{gate.relation}"),
                "waiting": names.new(f"waiting_{gate.relation}"),
                "ungated": names.new(f"ungated_{gate.relation}"),
                "one": "_" + names.new(f"gate_{gate.relation}"),
                "many": "_" + names.new(f"gate_batch_{gate.relation}"),
                "wake": "_" + names.new(f"wake_{gate.relation}"),
            }
        )
    return blocks


def _keyed_relations(base, relations: list[dict], names) -> list[dict]:
    """Per input relation with a declared PRIMARY KEY (strict mode): what the
    View needs to refuse a second row of one key, as SQL refuses it. The
    planner takes such a key to tell rows apart (a window's order that ends
    with it does not tie), so rows that break it must not get in."""
    declared_in = {r.name: r for r in base}
    keyed = []
    for rel in relations:
        declared = declared_in.get(rel["name"])
        if rel["virtual"] or rel["constant"] or declared is None or not declared.key:
            continue
        at = [declared.columns.index(c) for c in declared.key]
        name = rel["name"]
        keyed.append(
            {
                "name": name,
                "literal": rel["literal"],
                "arity": rel["arity"],
                "key": tuple_literal([f"row[{i}]" for i in at]),
                "columns": tuple_literal([py(c) for c in declared.key]),
                "by_key": names.new(f"{name}_keys"),
                "unkeyed": names.new(f"unkeyed_{name}"),
                "one": "_" + names.new(f"keyed_{name}"),
                "report": "_" + names.new(f"keyed_report_{name}"),
                "many": "_" + names.new(f"keyed_batch_{name}"),
            }
        )
    return keyed


def _wakers(waits, names) -> list[dict]:
    """Per gate relation: the relations whose rows wait for its rows."""
    out: dict[str, dict] = {}
    for w in waits:
        if w["by"] not in out:
            out[w["by"]] = {
                "name": w["by"],
                "literal": w["by_literal"],
                "arity": w["by_arity"],
                "loads": w["by_loads"],
                "cond": w["by_cond"],
                "waits": [],
                "ungated": names.new(f"ungated_{w['by']}"),
                "one": "_" + names.new(f"wake_by_{w['by']}"),
                "many": "_" + names.new(f"wake_by_batch_{w['by']}"),
                "check": "_" + names.new(f"wakes_{w['by']}"),
            }
        out[w["by"]]["waits"].append(w)
    return list(out.values())


def _layout_id(text: str, context, query) -> str:
    """A hash of what a snapshot's state means: its parts and the structure
    each is (kind, key and entry variables, order), the payload's channels,
    the multisets, and the code of the module's helper classes whose objects
    are in the state (`_SortedGroup`, `_RangeSum`: compared as syntax trees,
    so formatting does not count). A subquery's view checks its own part."""
    helpers = [
        ast.dump(node) for node in _top_level_classes(text, skip=("View", "ViewError"))
    ]
    parts = [
        f"format {SNAPSHOT_FORMAT}",
        "state " + " ".join(name for name, _ in context["state_entries"]),
        *(
            f"structure {s.attr} {s.kind} key={s.key} entry={s.entry} order={s.order}"
            for s in context["structures"]
        ),
        f"payload width {context['ring'].width} scales "
        + " ".join(str(c.scale) for c in query.channels),
        "multisets "
        + " ".join(
            m["ctor"]
            + (" grows" if m["grows"] else "")
            + (f" summed {m['total']}" if m["total"] else "")
            for m in context["multisets"]
        ),
        f"sums {len(context['sums'])}",
        f"materialized {context['materialized']} grouped {context['grouped']}",
        *(  # what the indexes of tests keep of a row (trusting)
            f"kept rows {r['name']} {r['kept_row']}"
            for r in context["relations"]
            if r["kept_row"]
        ),
        *(f"summed rows {t['rows']}" for t in context["tests"] if t["summed"]),
        *helpers,
    ]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def _top_level_classes(text: str, skip: tuple[str, ...]) -> list[ast.ClassDef]:
    """The classes a module defines at its top level but those named in
    `skip`, parsed one by one (the whole module, with its View and the text
    of its inner views, is many times larger). A block that does not parse
    alone (a string running past a line at column 0) falls back to parsing
    the whole text."""
    blocks = [
        block
        for block in re.split(r"(?m)^(?=\S)", text)
        if (name := re.match(r"class (\w+)", block)) and name[1] not in skip
    ]
    try:
        return [node for block in blocks for (node,) in [ast.parse(block).body]]
    except (SyntaxError, ValueError):
        tree = ast.parse(text)
        return [
            n for n in tree.body if isinstance(n, ast.ClassDef) and n.name not in skip
        ]


def _inner_tests(plan: Plan, names: Names, expressions: Expressions) -> dict:
    """Per inner view read by an `InnerTest` (NOT IN, [NOT] EXISTS, a scalar
    subquery): what the module keeps of its result (`state`), the tested
    atom's rows by the test's key (`rows`, so that a change of the result at
    a key re-checks only the rows it can flip) and the handler of its
    changes. Registers them with `expressions` for rendering the tests."""
    tests = {}
    subplans = dict(plan.subplans)
    for i, atom in enumerate(plan.query.atoms):
        rel = plan.query.relation(atom.relation)
        env = {(i, c): f"row[{c}]" for c in range(len(rel.columns))}
        for f in atom.filters:
            if not isinstance(f, InnerTest):
                continue
            n = len(f.keys)
            ranged = f.kind == "scalar" and f.op in ("lt", "le", "gt", "ge")
            other = _other_than(f, subplans[f.view], expressions)
            tests[f.view] = {
                "test": f,
                "kind": f.kind,
                "atom": i,
                "relation": atom.relation,
                "state": names.new(f"{f.view}_result"),
                "rows": names.new(f"{atom.relation}_by_{f.view}"),
                "handler": "_" + names.new(f"on_{f.view}"),
                "shares_rows": False,  # another test's index (_share_test_indexes)
                "summed": None,  # its index sums payloads, not rows (_summed_test)
                "leaf": None,  # set with the atom's leaf block
                "local": None,  # its index keeps only rows passing it (trusting)
                # the key of a row of the atom, of a row of the inner view
                "row_key": tup([expressions.render(k, env) for k in f.keys]),
                "view_key": (
                    "()" if not n else "sub_row[0]" if n == 1 else f"sub_row[:{n}]"
                ),
                "key_nulls": " or ".join(
                    f"{expressions.render(k, env)} is None"
                    for j, k in enumerate(f.keys)
                    if not f.matches_null(j) and expressions.may_be_null(k)
                ),
                # scalar: the compared value of a row, the view row's value
                "row_value": (
                    expressions.render(f.value, env) if f.value is not None else None
                ),
                "view_value": f"sub_row[{n}]",
                "default": py(f.default),
                "ranged": ranged,
                "compare": (
                    f"_x {_INFIX_PY[f.op]} {{}}" if f.kind == "scalar" else None
                ),
                "whole_rows": f.kind == "exists" and f.condition is not None,
                "other_than": other,
                # its x of a row: a row whose x is the value coming or going
                # keeps its test (the handler's one-change method)
                "row_other": expressions.render(other, env) if other else None,
                # a sub_row's entry in its key's group of the state: a
                # counted test's groups are keyed by the value alone
                "entry": f"sub_row[{n}]" if other else "sub_row",
            }
    for info in tests.values():
        expressions.tests[info["test"].view] = info
    return tests


def _other_than(test: InnerTest, view: Plan | SetPlan, expressions: Expressions):
    """The outer operand x of an EXISTS whose only condition past the key is
    `inner.c <> x`, where the view's rows are (key…, c) and x is no float (a
    NaN is unequal to itself): such a test counts the key's rows instead of
    scanning them. None for any other test."""
    cond, n = test.condition, len(test.keys)
    if not (
        test.kind == "exists"
        and isinstance(cond, Op)
        and cond.op == "ne"
        and len(view.query.outputs) == n + 1
    ):
        return None
    for inner, other in (cond.args, cond.args[::-1]):
        if (
            inner == ViewColumn(n)
            and not _reads_view_columns(other)
            and not expressions.is_float(other)
        ):
            return other
    return None


def _reads_view_columns(e) -> bool:
    if isinstance(e, ViewColumn):
        return True
    return isinstance(e, Op) and any(_reads_view_columns(a) for a in e.args)


def _ops(e):
    if isinstance(e, Op):
        yield e
        for a in e.args:
            yield from _ops(a)


def _inner_relations(plan: Plan) -> list:
    """Base relations the subqueries read (recursively), in order."""
    out = []
    for _, sub in plan.subplans:
        out += [r for r in base_relations(sub.query) if r not in out]
    return out


class InnerViews:
    """The inner views of one module, each rendered once and defined at the
    module's top level: a window's rewriting reads one derived table many
    times, at several depths, and the modules nested it once per read."""

    def __init__(self):
        self.entries: list[dict] = []  # in order of definition: children first

    def of(self, plan: Plan | SetPlan, source: str, trust_input: bool) -> dict:
        """The entry of `plan`'s inner view (`cls`: the class its outer views
        instantiate, `returns`: see `_return_changes`), rendered on first use."""
        for entry in self.entries:
            if entry["trust_input"] == trust_input and entry["plan"] == plan:
                return entry
        returns: dict = {}
        shares: dict = {}
        appliers: dict = {}
        checkable: set = set()
        text = (
            render_set_view(plan, source, self)
            if isinstance(plan, SetPlan)
            else (
                render_window_view(plan, source, self, trust_input)
                if isinstance(plan, WindowPlan)
                else render_module(
                    plan,
                    source=source,
                    inner=True,
                    trust_input=trust_input,
                    returns=returns,
                    inner_views=self,
                    shares=shares,
                    appliers=appliers,
                    checkable=checkable,
                )
            )
        )
        k = len(self.entries) + 1
        entry = {
            "plan": plan,
            "trust_input": trust_input,
            "factory": f"_inner_view_{k}",
            "cls": f"_InnerView{k}",
            "source": text,
            "returns": returns,
            "shares": shares,
            "appliers": appliers,
            "checkable": checkable,
        }
        self.entries.append(entry)
        return entry


def many_rows(plan: Plan | SetPlan) -> frozenset[str]:
    """The guards the plan reads, itself or in an inner view, by the name
    of their column (`Relation.guard`): the view of a scalar subquery
    without an aggregate ("__rows"), the groups of peers of a window's
    order that may tie ("__ties"). Its module counts the groups with
    several rows, and a View reads nothing then (SQL's value is an error,
    or not determined). Empty: none."""
    if isinstance(plan, SetPlan):
        return many_rows(plan.left) | many_rows(plan.right)
    if isinstance(plan, WindowPlan):
        ties = frozenset([GUARD_TIES]) if plan.query.guarded else frozenset()
        return many_rows(plan.input) | ties
    query = plan.query
    tests = [f for atom in query.atoms for f in atom.filters]
    kinds = {r.columns[r.guard] for r in query.relations if r.guard is not None}
    if any(isinstance(f, InnerTest) and f.guard is not None for f in tests):
        kinds.add(GUARD_ROWS)
    for _, sub in plan.subplans:
        kinds |= many_rows(sub)
    return frozenset(kinds)


def many_message(kinds: frozenset[str]) -> str:
    """What a View's read says while a guard of `kinds` has a group of
    several rows."""
    why = []
    if GUARD_ROWS in kinds:
        why.append(
            "more than one row returned by a subquery used as an expression: the "
            "result has no value until that subquery has one row again"
        )
    if GUARD_TIES in kinds:
        why.append(
            "rows tie in the order of a window function that numbers or shifts "
            "them (ROW_NUMBER, NTILE, LAG, LEAD, FIRST_VALUE, LAST_VALUE, a ROWS "
            "frame): SQL leaves their order open, so the result is not "
            "determined until no two rows of a partition tie"
        )
    return "; or ".join(why)


def _checked_inside(rel: dict) -> bool:
    """Whether `rel`'s trigger only passes the row on, its first step the
    trigger of an inner view that checks the row's arity first: the check
    here would run twice per update (TPC-H Q11's partsupp, Q13's orders)."""
    return (
        not (rel["leaves"] or rel["store"] or rel["count"] or rel["virtual"])
        and not (rel["null_check"] or rel["type_check"] or rel["kept_row"])
        and not (rel["test_kept_checks"] or rel["test_indexes"])
        and bool(rel["forwards"])
        and not rel["forwards"][0]["counted"]
        and rel["forwards"][0]["applies"] is not None
    )


def _subviews(
    plan: Plan, names: Names, source: str, trust_input: bool, inner_views: InnerViews
):
    """Inner views read by the module, and per base relation the inner views
    an update must be forwarded to (with the virtual relation they feed).
    A subquery's view trusts the input when its outer view does (it sees the
    same rows); the views of a set operation's sides check whole rows. An
    inner view that reads only derived tables this view reads too (a CTE
    read by the query and by its subquery: TPC-H Q15's revenue0) is fed
    their changes (`feeds` of the forward that makes them) instead of the
    base rows, which its own copies of them would take again."""
    subviews, forwards, feeds = [], {}, {}
    for name, sub in plan.subplans:
        if counted_in_state(plan, name, sub):  # no view: see _counted_rows
            (rel,) = base_relations(sub.query)
            forwards.setdefault(rel.name, []).append(
                {
                    "attr": None,
                    "relation": name,
                    "pending": False,
                    "returns": "row",
                    "applies": None,
                    "share": None,
                    "counted": True,  # the rows, set by _counted_rows
                }
            )
            continue
        entry = inner_views.of(sub, f"{source} (subquery {name})", trust_input)
        returns = entry["returns"]
        attr = names.new(f"sub_{name}")
        subviews.append(
            {
                "name": name,
                "attr": attr,
                "cls": entry["cls"],
                "many_rows": many_rows(sub),
            }
        )
        siblings = _read_from_siblings(plan, name, sub)
        for own, sibling in (siblings or {}).items():
            feeds.setdefault(sibling, []).append(
                {"attr": attr, "relation": name, "applies": entry["appliers"][own]}
            )
        reads = {r.name for r in base_relations(sub.query)}
        for rel in sorted(reads) if siblings is None else ():
            forwards.setdefault(rel, []).append(
                # "pending": a subquery's view without ORDER BY, whose changes
                # are read from its pending deltas (else its _flush makes
                # them); "returns": what its trigger returns (_return_changes)
                {
                    "attr": attr,
                    "relation": name,
                    "pending": not isinstance(sub, (SetPlan, WindowPlan))
                    and sub.query.ordering is None,
                    "returns": returns.get(rel),
                    # its trigger of the relation (None: a set operation's view)
                    "applies": entry["appliers"].get(rel),
                    # an index of its trigger's that this view may share
                    "share": entry["shares"].get(rel),
                    # its batcher takes a batch this view checked as checked
                    "checkable": rel in entry["checkable"],
                    "counted": None,  # a view (see counted_in_state)
                }
            )
    for fw in (fw for fws in forwards.values() for fw in fws):
        fw["feeds"] = feeds.get(fw["relation"], [])
    return subviews, forwards


def _counted_rows(sub: Plan, test: dict, expressions: Expressions) -> dict:
    """What a relation's trigger computes of a row for an inner view it
    counts in a test's state (`counted_in_state`): whether the subquery's
    filter takes the row (`cond`, None: every row) and its result row."""
    q = sub.query
    atom = q.atoms[0]
    env = {(0, c): f"row[{c}]" for c in range(len(atom.variables))}
    env.update({v: f"row[{c}]" for c, v in enumerate(atom.variables) if v is not None})
    # the subquery's expressions, rendered with this module's constants
    inner = Expressions(
        constants=expressions.constants,
        helpers=expressions.helpers,
        fresh=expressions.fresh,
        floats=_float_typed(q),
        digits=_exact_columns(q),
    )
    cond = inner.condition(Op("and", atom.filters), env) if atom.filters else None
    expressions.fresh = inner.fresh
    expressions.uses_datetime |= inner.uses_datetime
    expressions.uses_re |= inner.uses_re
    expressions.uses_floor |= inner.uses_floor
    parts = [env[o.expr.name] for o in q.outputs]
    n = len(test["test"].keys)
    return {
        "cond": None if cond == "True" else cond,
        "row": tuple_literal(parts),
        # a counted test's key and value of the row, without its result row
        "row_key": parts[0] if n == 1 else tuple_literal(parts[:n]),
        "row_entry": parts[n] if test["other_than"] is not None else None,
        "state": test["state"],
        "key": test["view_key"],
        "one": test["other_than"] is not None,  # its handler of one change
        "test": test,
    }


def read_from_siblings(plan: Plan | SetPlan) -> list[tuple[str, dict]]:
    """The inner views of `plan` and of its inner views that are fed another
    inner view's changes (`_subviews`), with what `_read_from_siblings`
    says of each."""
    if isinstance(plan, (SetPlan, WindowPlan)):
        return [x for side in plan.plans() for x in read_from_siblings(side)]
    out = []
    for name, sub in plan.subplans:
        siblings = _read_from_siblings(plan, name, sub)
        if siblings is not None:
            out.append((name, siblings))
        out += read_from_siblings(sub)
    return out


def _read_from_siblings(plan: Plan, name: str, sub) -> dict | None:
    """Per relation of subquery `name`'s view, the subquery of `plan` with the
    same plan, when it reads nothing else (no base relation, no test, no
    ORDER BY) and those subqueries are fed base rows; else None."""
    if isinstance(sub, (SetPlan, WindowPlan)) or not sub.subplans:
        return None
    query = sub.query
    own = dict(sub.subplans)
    if (
        query.ordering is not None
        or query.unread
        or any(r.name not in own for r in query.relations)
        or any(
            f for atom in query.atoms for f in atom.filters if isinstance(f, InnerTest)
        )
        or len(own) != len(query.relations)
    ):
        return None
    out = {}
    for rel, inner in own.items():
        out[rel] = next(
            (
                other
                for other, p in plan.subplans
                if other != name
                and p == inner
                and _read_from_siblings(plan, other, p) is None
            ),
            None,
        )
        if out[rel] is None:
            return None
    return out


# ORDER BY: per direction and NULL placement, the sort key of one value.
# NaN sorts above every number and NULL last unless NULLS FIRST, as DuckDB.
_SORT_KEYS = {
    (False, False): (
        "_asc",
        "(2,) if v is None else (1,) if v != v else (0, v)",
        "ORDER BY … ASC: values, then NaN, then NULL.",
    ),
    (False, True): (
        "_asc_nulls_first",
        "(-1,) if v is None else (1,) if v != v else (0, v)",
        "ORDER BY … ASC NULLS FIRST: NULL, values, then NaN.",
    ),
    (True, False): (
        "_desc",
        "(2,) if v is None else (0,) if v != v else (1, _reversed(v))",
        "ORDER BY … DESC: NaN, values from the largest, then NULL.",
    ),
    (True, True): (
        "_desc_nulls_first",
        "(-1,) if v is None else (0,) if v != v else (1, _reversed(v))",
        "ORDER BY … DESC NULLS FIRST: NULL, NaN, then values from the largest.",
    ),
}


def _ordering(layout: _Layout) -> dict | None:
    """What the template needs of ORDER BY / LIMIT / OFFSET, or None."""
    plan = layout.plan
    query = plan.query
    ordering = query.ordering
    if ordering is None:
        return None
    helpers, parts = {}, []
    for key in ordering.keys:
        name, body, doc = _SORT_KEYS[key.descending, key.nulls_first]
        helpers[name] = (name, body, doc)
        parts.append(f"{name}(row[{key.position}])")
    # ORDER BY only group columns: the groups keep their places while they
    # live, so the index holds groups and rows are computed when read
    by_group = None
    if orders_groups(query):
        group_index = {v: i for i, v in enumerate(query.output_vars)}
        by_group = tuple_literal(
            [
                f"{_SORT_KEYS[key.descending, key.nulls_first][0]}"
                f"(group[{group_index[query.outputs[key.position].expr.name]}])"
                for key in ordering.keys
            ]
        )
    # ORDER BY only variables of the root: its tuples are kept sorted (a
    # tuple of the root's variables, in the root's order)
    root_key = None
    if layout.ranked:
        root_vars = plan.nodes[plan.root].vars
        positions, used = [], set()
        for key in ordering.keys:
            name = _SORT_KEYS[key.descending, key.nulls_first][0]
            at = root_vars.index(query.outputs[key.position].expr.name)
            positions.append(f"{name}(key[{at}])")
            used.add(at)
        # then the root's other variables: a total order, so a restored view
        # shows the same rows at a LIMIT that cuts through ties
        name, body, doc = _SORT_KEYS[False, False]
        rest = [f"{name}(key[{at}])" for at in range(len(root_vars)) if at not in used]
        root_key = tuple_literal(positions + rest)
        if rest or ordering.limit is not None or ordering.offset:
            helpers[name] = (name, body, doc)  # (ties at a cut: rows in row order)
    return {
        "key": tuple_literal(parts),
        "by_group": by_group is not None,
        "group_key": by_group,
        "by_root": root_key is not None,
        "root_key": root_key,
        "root_arity": len(plan.nodes[plan.root].vars),
        "root_index": (
            layout.info[plan.root].root_index.attr if root_key is not None else None
        ),
        "helpers": sorted(helpers.values()),
        "desc": any(k.descending for k in ordering.keys),
        "limit": ordering.limit,
        "offset": ordering.offset,
        "window": ordering.limit is not None or ordering.offset > 0,
        "hidden": ordering.hidden,
        "visible": len(query.outputs) - ordering.hidden,
    }


def _group_positions(query, layout) -> str | None:
    """For a grouped query whose SELECT names every group variable: the group
    key as an expression over `row`, so multiplicity(row) is a lookup."""
    if not query.grouped:
        return None
    where = {}
    for i, o in enumerate(query.outputs):
        if isinstance(o.expr, Var):
            where.setdefault(o.expr.name, i)
    if not all(v in where for v in query.group_vars):
        return None
    return tuple_literal([f"row[{where[v]}]" for v in query.group_vars])


def _reuse_values(named: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Aggregate values that read an earlier one's whole expression take its
    local instead (an AVG's `(p[1] / 100) / p[0]` reads `_a0`, SUM's value):
    each is computed in order and unconditionally (`group_row`), and every
    value is pure, so the row is the same, computed once. A parenthesised
    occurrence only, not a call's argument list (`f(…)`)."""
    out, bare = [], []
    for name, value in named:
        for earlier, text in bare:
            value = _in_parentheses(text).sub(earlier, value)
        out.append((name, value))
        text = _unwrapped(value)
        # a local already: nothing to save; a string literal's parentheses
        # would fool _unwrapped
        if not text.isidentifier() and not re.search("[\"']", text):
            bare.append((name, text))
    return out


def _unwrapped(text: str) -> str:
    """`text` without parentheses around the whole of it."""
    while text.startswith("(") and text.endswith(")"):
        depth = 0
        for i, c in enumerate(text):
            depth += c == "("
            depth -= c == ")"
            if depth == 0 and i < len(text) - 1:
                return text  # `(a) / (b)`: the first closes before the end
        text = text[1:-1]
    return text


def _old_from_payload(query, materialized: bool, aggregates: list[str]) -> bool:
    """Whether push mode computes a group's old row from its old payload (the
    new one less the change: integers, so exactly the payload it was
    reported from) instead of keeping every reported row: GROUP BY keys, a
    payload of exact channels alone, no output that can be NaN (a row is
    then the same as the one reported when it is equal to it), and a row
    that is cheap to build again: each aggregate read off the payload as it
    is (COUNT, an integer SUM) and each output a column or an aggregate.
    Otherwise one lookup of the reported row costs less than a second
    computation (TPC-H Q1's AVGs and scaled sums: 0.75x the speed)."""
    return (
        all(re.fullmatch(r"p(\[\d+\])?", value) for value in aggregates)
        and all(isinstance(o.expr, (Var, AggRef)) for o in query.outputs)
        and query.grouped
        and bool(query.group_vars)
        and not query.distinct
        and not materialized
        and not any(a.nonfinite for a in query.aggregates)
        and all(c.scale is not None or c.exact_float for c in query.channels)
        and _nan_free(query)
    )


def _nan_free(query) -> bool:
    """Whether no output value can be NaN, so that two rows of a group are
    the same exactly when they are equal and push mode compares them with
    `!=` alone (`_same` otherwise: SQL takes NaN equal to NaN). Conservative:
    each output is a column of a non-float type, a constant, COUNT, an exact
    (fixed-point) SUM or AVG, or MIN/MAX of such a column."""
    kinds: dict[str, set[str | None]] = {}
    for atom in query.atoms:
        types = query.relation(atom.relation).types
        for c, v in enumerate(atom.variables):
            if v is not None:
                kinds.setdefault(v, set()).add(types[c] if c < len(types) else None)

    def column(name: str) -> bool:  # an unknown type (None) may be a float
        return bool(kinds.get(name)) and kinds[name] <= {
            "int",
            "bool",
            "str",
            "date",
            "timestamp",
            "timestamptz",
            "time",
        }

    def exact(channel: int) -> bool:
        return channel == 0 or query.channels[channel - 1].scale is not None

    def aggregate(a) -> bool:
        # (ARRAY_AGG's values: columns, never NaN, or refused where they may be)
        if a.kind in ("count", "count_distinct", "string_agg", "array_agg"):
            return True
        if a.kind in BIT_KINDS:  # of INTEGERs
            return True
        if a.kind in DISTINCT_ORDERED_KINDS:
            return True
        if a.kind == "quantile_cont" and a.scale is not None:  # a DECIMAL's
            return True
        if a.kind in ("min", "max", *PICK_KINDS, *QUANTILE_KINDS):
            return column(a.arg)
        if a.kind in DISTINCT_SUM_KINDS:  # a DOUBLE's may be NaN (inf - inf)
            return a.scale is not None
        if a.nonfinite:
            return False
        if a.computed is not None:
            return a.scale is not None
        return all(exact(k) for _, k in a.terms)

    def value(e) -> bool:
        if isinstance(e, Var):
            return column(e.name)
        if isinstance(e, AggRef):
            return aggregate(query.aggregates[e.index])
        if isinstance(e, Lit):
            return not isinstance(e.value, float) or e.value - e.value == 0
        return False

    return all(value(o.expr) for o in query.outputs)


def _repeated_output_checks(query) -> list[str]:
    """A SELECT naming one variable twice: positions that must agree."""
    first: dict[str, int] = {}
    checks = []
    for i, o in enumerate(query.outputs):
        if o.expr.name in first:
            checks.append(f"row[{first[o.expr.name]}] != row[{i}]")
        else:
            first[o.expr.name] = i
    return checks


# A row's multiplicity in a set operation's result from its multiplicities
# `c` (a list, one per side; None: in neither) in the two sides.
_SET_MULTIPLICITY = {
    ("union", False): "1 if c else 0",
    ("intersect", True): "min(c) if c else 0",
    ("intersect", False): "1 if c and c[0] and c[1] else 0",
    ("except", True): "max(c[0] - c[1], 0) if c else 0",
    ("except", False): "1 if c and c[0] and not c[1] else 0",
}


def render_set_view(plan: SetPlan, source: str, inner_views: InnerViews) -> str:
    """The raw text of the inner view of a UNION/INTERSECT/EXCEPT, nested in
    its outer module like a subquery's view (it defines `View`); the inner
    views of its sides are registered in `inner_views`."""
    query = plan.query
    names = Names()
    sides = []
    for i, side in enumerate((plan.left, plan.right)):
        where = f"{source} side {i + 1}"
        # SQL casts a side's INTEGER column where the result's is a float
        casts = [
            c
            for c, (t, mine) in enumerate(zip(query.types, query.side_types[i]))
            if t == "float" and mine == "int"
        ]
        sides.append(
            {
                "index": i,
                "factory": "_" + names.new(f"make_side{i + 1}"),
                "cls": "_" + names.new(f"side{i + 1}_view"),
                "source": (
                    render_set_view(side, where, inner_views)
                    if isinstance(side, SetPlan)
                    else render_module(
                        side, source=where, inner=True, inner_views=inner_views
                    )
                ),
                "reads": {r.name for r in base_relations(side.query)},
                "many_rows": many_rows(side),
                "cast": (
                    tuple_literal(
                        [
                            (
                                f"(None if row[{c}] is None else float(row[{c}]))"
                                if c in casts
                                else f"row[{c}]"
                            )
                            for c in range(len(query.types))
                        ]
                    )
                    if casts
                    else None
                ),
            }
        )
    relations = [
        {
            "literal": py(rel.name),
            "method": "_" + names.new(f"apply_{rel.name}"),
            "sides": [i for i, side in enumerate(sides) if rel.name in side["reads"]],
        }
        for rel in query.relations
    ]
    return (
        _environment()
        .get_template("set_view.py.jinja")
        .render(
            source=source,
            sql=query.sql,
            word=query.kind.upper() + (" ALL" if query.all else ""),
            sides=sides,
            relations=relations,
            multiplicity=_SET_MULTIPLICITY.get((query.kind, query.all)),
            many_rows=many_rows(plan),
            query_id=py(hashlib.sha256(query.sql.encode()).hexdigest()[:16]),
        )
    )


def render_window_view(
    plan: WindowPlan, source: str, inner_views: InnerViews, trust_input: bool
) -> str:
    """The raw text of the inner view of a `WindowQuery`, nested in its outer
    module like a subquery's view (it defines `View`): the view of its input
    rows, nested in it, and the windows' code, specialised to its functions
    (`templates/window_view.py.jinja`)."""
    query = plan.query
    side = plan.input
    where = f"{source} windows' rows"
    input_source = (
        render_set_view(side, where, inner_views)
        if isinstance(side, SetPlan)
        else render_module(
            side,
            source=where,
            inner=True,
            trust_input=trust_input,
            inner_views=inner_views,
        )
    )
    functions = [f for f in query.functions if not f.found]
    ordered = next((f for f in query.functions if f.order), None)
    partition = query.functions[0].partition
    order = ordered.order if ordered is not None else ()
    code = _WindowCode(query.types)
    if len(order) == 1:  # RANGE frames: a value's sort key
        c, d, n = order[0]
        never = _never_null(query.input, c)
        code.sort_key = lambda v: _window_sort_key_of(v, d, n, query.types[c], never)
        code.key_kind = query.types[c]
    names = Names()
    for f in query.functions:
        code.add(f)
    capped = next((f for f in query.functions if f.cap is not None), None)
    order_key = tuple_literal(
        [
            _window_sort_key(c, d, n, query.types[c], _never_null(query.input, c))
            for c, d, n in order
        ]
    )
    return (
        _environment()
        .get_template("window_view.py.jinja")
        .render(
            source=source,
            sql=query.input.sql,
            functions=[{"text": str(f)} for f in functions],
            factory="_" + names.new("make_window_rows"),
            input_cls="_" + names.new("window_rows_view"),
            input_source=input_source,
            input_many=bool(many_rows(side)),
            guarded=query.guarded,
            desc="_window_reversed(" in order_key,
            uses_floor=code.uses_floor,
            uses_insort=code.uses_insort,
            runtime=inline.helper_source({f"_{h}" for h in code.helpers}, Ring(1)),
            constants=[(name, expr) for expr, name in code.constants.items()],
            query_id=py(hashlib.sha256(str(query).encode()).hexdigest()[:16]),
            partition_key=(
                f"row[{partition[0]}]"
                if len(partition) == 1
                else tuple_literal([f"row[{c}]" for c in partition])
            ),
            order_key=order_key,
            extremes=code.extremes,
            spans=code.spans(),
            prelude=code.prelude,
            body=code.body,
            values=tuple_literal(code.values),
            cap=_window_cap(capped) if capped is not None else None,
            **_window_ties(query.functions, capped),
        )
    )


def _window_ties(functions, capped) -> dict:
    """Where the windows' view looks for rows that tie (`tie_end`: the
    places whose order decides a value, all where None) and how two tied
    rows differ (`tie_differ`): up to the last place output where a
    ROW_NUMBER or RANK caps the view; the first peers' values of x where
    every guarded window is a FIRST_VALUE(x) (the first row's x is all it
    reads of the order); else any two different rows anywhere."""
    differ = "rows[i] != rows[i + 1]"
    if capped is not None:
        return {"tie_end": _window_cap(capped), "tie_differ": differ}
    guarded = [f for f in functions if f.guarded]
    if guarded and all(f.kind == "first_value" for f in guarded):
        args = sorted({f.arg for f in guarded})
        differ = " or ".join(f"rows[i][{c}] != rows[i + 1][{c}]" for c in args)
        return {"tie_end": "1", "tie_differ": differ}
    return {"tie_end": None, "tie_differ": differ}


def _window_cap(f) -> str:
    """The positions of a partition of `n` rows (sort keys `keys`) whose
    rows are output: those up to place `f.cap` of a ROW_NUMBER or RANK."""
    if f.kind == "row_number":
        return f"n if n < {f.cap} else {f.cap}"
    return f"n if n <= {f.cap} else bisect_right(keys, keys[{f.cap - 1}])"


def _window_sort_key(
    column: int, desc: bool, nulls_first: bool, kind: str | None, never_null: bool
) -> str:
    """The sort key of one ORDER BY value of a window, as `_SORT_KEYS`; the
    value itself (negated, or wrapped, for DESC) where it is never NULL nor
    NaN."""
    return _window_sort_key_of(f"row[{column}]", desc, nulls_first, kind, never_null)


def _window_sort_key_of(
    v: str, desc: bool, nulls_first: bool, kind: str | None, never_null: bool
) -> str:
    """`_window_sort_key` of the value `v` (a name or a subscript)."""
    if never_null and kind in (
        "int",
        "str",
        "date",
        "timestamp",
        "timestamptz",
        "time",
        "bool",
    ):
        if not desc:
            return v
        if kind == "int":
            return f"-{v}"
        if kind == "date":  # a day number: compared in C, not by a wrapper
            return f"-{v}.toordinal()"
        return f"_window_reversed({v})"
    body = _SORT_KEYS[(desc, nulls_first)][1]  # over `v`, as ORDER BY's keys
    body = re.sub(r"\bv\b", v, body).replace("_reversed(", "_window_reversed(")
    return f"({body})"


def _never_null(query, column: int) -> bool:
    """Whether output `column` of a windows' input rows is a column declared
    NOT NULL of a table the input reads directly (not NULL-padded)."""
    if not isinstance(query, Query):
        return False
    expr = query.outputs[column].expr
    if not isinstance(expr, Var) or any(
        a.padded for a in query.atoms if expr.name in a.variables
    ):
        return False
    found = column_of(query, expr.name)
    return found is not None and found[0].is_notnull(found[1])


def _rows_bounds(first: int | None, last: int | None) -> tuple[str, str]:
    """The first position of row i's ROWS frame from offset `first` to
    `last` (None: UNBOUNDED) and the position past its last, within 0..n."""
    lo = (
        "0"
        if first is None
        else f"max(0, i - {-first})" if first < 0 else f"max(0, i + {first})"
    )
    hi = (
        "n"
        if last is None
        else f"min(n, i + {last + 1})" if last >= 0 else f"min(n, i - {-last - 1})"
    )
    return lo, hi


class _WindowCode:
    """The code of a window view's output rows at some positions of a
    partition (`prelude`, `body`, `values`) and of the span of a change (the
    positions it can alter), function by function."""

    def __init__(self, types: tuple = ()):
        self.types = types  # the type of each input column (and window)
        self.prelude: list[str] = []
        self.body: list[str] = []
        self.values: list[str] = []
        self.lows: list[str] = ["p"]
        self.highs: list[str] = ["p + gone"]
        self.first_at_zero = False
        self.uses_floor = False
        self._peers = False  # `new_peer` computed in the loop
        self._rank = False
        self._dense = False
        self._cursors: set[str] = set()
        # whole-partition MIN/MAX kept per partition: (kind, argument column)
        self.extremes: list[tuple[str, int]] = []
        # the sort key of a value of the one ORDER BY key, and its kind
        # (RANGE frames)
        self.sort_key = None
        self.key_kind = None
        self.span_prelude: list[str] = []  # lines the span's ends read
        self.constants: dict[str, str] = {}  # an offset's value -> its name
        self.helpers: set[str] = set()  # runtime helpers (dynyan.runtime)
        self.uses_insort = False

    def spans(self) -> list[str]:
        lows = list(dict.fromkeys(self.lows))
        highs = list(dict.fromkeys(self.highs))
        lines = list(self.span_prelude)
        if "0" in lows:
            lines.append("lo = 0")
        elif len(lows) > 1:
            lines.append(f"lo = min({', '.join(lows)})")
        if "n" in highs:
            lines.append("hi = n")
        elif len(highs) > 1:
            lines.append(f"hi = max({', '.join(highs)})")
        if self.first_at_zero and not ("0" in lows and "n" in highs):
            lines.append("if p == 0:  # the first row changes: every row's first value")
            lines.append("    lo, hi = 0, n")
        return lines

    def _new_peer(self) -> None:
        if not self._peers:
            self._peers = True
            self.body.insert(0, "new_peer = i > lo and keys[i] != keys[i - 1]")

    def add(self, f) -> None:
        kind, j = f.kind, len(self.values)
        if kind == "row_number":
            self.highs.append("n")
            self.values.append("i + 1")
        elif kind in ("rank", "percent_rank"):
            self._track_rank()
            if kind == "rank":
                self.highs.append("n")
                self.values.append("rank")
            else:
                self.lows.append("0")
                self.highs.append("n")
                self.values.append("(rank - 1) / (n - 1) if n > 1 else 0.0")
        elif kind == "dense_rank":
            self.highs.append("n")
            if not self._dense:
                self._dense = True
                self._new_peer()
                self.prelude += [
                    "dense = 1",
                    "for j in range(1, lo + 1):",
                    "    if keys[j] != keys[j - 1]:",
                    "        dense += 1",
                ]
                self.body.append("if new_peer:")
                self.body.append("    dense += 1")
            self.values.append("dense")
        elif kind == "cume_dist":
            self.lows.append("0")
            self.highs.append("n")
            self.values.append("bisect_right(keys, keys[i]) / n")
        elif kind == "ntile":
            self.lows.append("0")
            self.highs.append("n")
            self.prelude += [
                f"buckets{j} = min({f.buckets}, n)",
                f"size{j} = n // buckets{j}",
                f"large{j} = n - buckets{j} * size{j}",
                f"small{j} = large{j} * (size{j} + 1)",
            ]
            self.values.append(
                f"1 + i // (size{j} + 1) if i < small{j} "
                f"else 1 + large{j} + (i - small{j}) // size{j}"
            )
        elif kind in ("lag", "found_lag"):
            k = f.offset
            self.highs.append(f"min(n, p + {k} + gone)")
            value = f"rows[i - {k}][{f.arg}]" if kind == "lag" else "1"
            self.values.append(f"{value} if i >= {k} else None")
        elif kind in ("lead", "found_lead"):
            k = f.offset
            self.lows.append(f"max(0, p - {k})")
            value = f"rows[i + {k}][{f.arg}]" if kind == "lead" else "1"
            self.values.append(f"{value} if i + {k} < n else None")
        elif kind == "first_value":
            self.first_at_zero = True
            self.values.append(f"rows[0][{f.arg}]")
        elif kind == "last_value":
            self.lows.append("a")
            self.highs.append("b")
            self.values.append(f"rows[bisect_right(keys, keys[i]) - 1][{f.arg}]")
        elif kind in ("frame_first", "frame_last"):
            self._picked(f, j)
        elif f.sliding is not None:
            self._sliding(f, j)
        elif f.band is not None:
            self._band(f, j)
        elif f.running:
            self._running(f, j)
        else:
            self._whole(f, j)

    def _picked(self, f, j: int) -> None:
        """The row `f.offset` places from the start (frame_first) or the end
        (frame_last) of the row's frame, positions lo_j to hi_j - 1 (to the
        row's last peer, or a ROWS frame's offsets), NULL where the frame has
        fewer rows; IGNORE NULLS: among the positions of the values that are
        not NULL, listed once per span. A change at p alters the rows whose
        frame reaches p (as `_sliding`)."""
        k, x = f.offset, f"rows[b{j}][{f.arg}]"
        if f.sliding is None:  # from the partition's start to the last peer
            self.lows.append("a")
            self.highs.append("n")
            lo, hi = "0", "bisect_right(keys, keys[i])"
        else:
            self._rows_span(*f.sliding)
            lo, hi = _rows_bounds(*f.sliding)
        if lo != "0":
            self.body.append(f"lo{j} = {lo}")
            lo = f"lo{j}"
        self.body.append(f"hi{j} = {hi}")
        hi = f"hi{j}"
        if not f.ignore_nulls:
            if f.kind == "frame_first":
                self.body.append(f"b{j} = {lo} + {k - 1}" if k > 1 else f"b{j} = {lo}")
                self.values.append(f"{x} if b{j} < {hi} else None")
            else:
                self.body.append(f"b{j} = {hi} - {k}")
                self.values.append(f"{x} if b{j} >= {lo} else None")
            return
        found = f"nn{j}"
        self.prelude.append(
            f"{found} = [q for q in range(n) if rows[q][{f.arg}] is not None]"
        )
        x = f"rows[{found}[c{j}]][{f.arg}]"
        if f.kind == "frame_first":
            self.body.append(f"c{j} = bisect_left({found}, {lo}) + {k - 1}")
            self.values.append(
                f"{x} if c{j} < len({found}) and {found}[c{j}] < {hi} else None"
            )
        else:
            self.body.append(f"c{j} = bisect_left({found}, {hi}) - {k}")
            self.values.append(f"{x} if c{j} >= 0 and {found}[c{j}] >= {lo} else None")

    def _track_rank(self) -> None:
        if self._rank:
            return
        self._rank = True
        self._new_peer()
        self.prelude.append("rank = bisect_left(keys, keys[lo]) + 1")
        self.body.append("if new_peer:")
        self.body.append("    rank = i + 1")

    def _accumulate(
        self, f, j: int, x: str, backward: bool = False
    ) -> tuple[list[str], list[str], str]:
        """An aggregate's start, its step over value `x`, and its value
        (`backward`: the rows come from the frame's end)."""
        kind, scale = f.kind, f.scale
        if kind in ("quantile_cont", "quantile_disc"):  # the values sorted
            self.helpers.add(kind)
            self.uses_insort = True
            step = [f"if {x} is not None:", f"    insort(v{j}, {x})"]
            args = f"v{j}, {f.param!r}"
            if kind == "quantile_cont" and scale:
                args += f", {scale}"
            return [f"v{j} = []"], step, f"_{kind}({args})"
        if kind in ("arg_max", "arg_min"):  # the first best y in frame order
            op = (">" if kind == "arg_max" else "<") + ("=" if backward else "")
            step = [
                f"if {x} is not None and y{j} is not None and "
                f"(m{j} is None or y{j} {op} m{j}):",
                f"    m{j} = y{j}",
                f"    v{j} = {x}",
            ]
            return [f"m{j} = v{j} = None"], step, f"v{j}"
        if kind == "string_agg":  # the strings in the frame's order
            if f.scale is not None or self.types[f.arg] != "str":
                self.helpers.add("to_str")
                text = f"_to_str({x}{f', {scale}' if scale else ''})"
            else:
                text = x
            step = [f"if {x} is not None:", f"    v{j}.append({text})"]
            joined = f"reversed(v{j})" if backward else f"v{j}"
            return [f"v{j} = []"], step, f"{f.param!r}.join({joined}) if v{j} else None"
        if f.distinct:  # the frame's distinct values: a set beside the sums
            start, step, value = self._accumulate(replace(f, distinct=False), j, x)
            # (step: `if x is not None:` and its body); NaN kept as None, one
            # value, as DuckDB's DISTINCT (NaN equals no float, itself neither)
            key = f"({x} if {x} == {x} else None)"
            first = [
                f"if {x} is not None and {key} not in u{j}:",
                f"    u{j}.add({key})",
            ]
            return [f"u{j} = set()", *start], first + step[1:], value
        if kind == "count":
            step = (
                [f"c{j} += 1"]
                if f.arg is None
                else [f"if {x} is not None:", f"    c{j} += 1"]
            )
            return [f"c{j} = 0"], step, f"c{j}"
        if kind in ("min", "max"):
            op = "<" if kind == "min" else ">"
            step = [
                f"if {x} is not None and (m{j} is None or {x} {op} m{j}):",
                f"    m{j} = {x}",
            ]
            return [f"m{j} = None"], step, f"m{j}"
        scaled = scale is not None and scale > 0
        # exact units of the DECIMAL, as elsewhere (sets `uses_floor`)
        term = _scaled(self, x, scale) if scaled else x
        step = [f"if {x} is not None:", f"    s{j} += {term}", f"    c{j} += 1"]
        if kind == "sum":
            value = (
                f"(s{j} / {10 ** scale} if c{j} else None)"
                if scaled
                else f"(s{j} if c{j} else None)"
            )
        else:  # avg
            value = (
                f"(s{j} / (c{j} * {10 ** scale}) if c{j} else None)"
                if scaled
                else f"(s{j} / c{j} if c{j} else None)"
            )
        return [f"s{j} = 0", f"c{j} = 0"], step, value

    def _running(self, f, j: int) -> None:
        """An aggregate over the rows up to the row's last peer (RANGE) or the
        row (ROWS): a cursor from the partition's first row."""
        self.highs.append("n")
        if not f.rows_frame:
            self.lows.append("a")
        if f.rows_frame:
            self._cursor(f, j, "jw", "i + 1")
        else:
            self._cursor(f, j, "jr", "bisect_right(keys, keys[i])")

    def _cursor(self, f, j: int, cursor: str, end: str) -> None:
        """The aggregate over the partition's rows up to position `end` (an
        expression of `i`, growing with it, at most n): `cursor` carries the
        sums from one row to the next, shared by the aggregates of one end."""
        x = f"rows[{cursor}][{f.arg}]" if f.arg is not None else None
        start, step, value = self._accumulate(f, j, f"x{j}")
        if cursor not in self._cursors:
            self._cursors.add(cursor)
            self.prelude.append(f"{cursor} = 0")
            self.body.append(f"end_{cursor} = {end}")
            self.body.append(f"while {cursor} < end_{cursor}:")
            self.body.append(f"    {cursor} += 1")
        self.prelude += start
        # the step goes into the cursor's loop: just before its `+= 1`
        at = self.body.index(f"    {cursor} += 1")
        lines = [f"    x{j} = {x}"] if x is not None else []
        if f.kind in ("arg_max", "arg_min"):  # and the value compared
            lines.append(f"    y{j} = rows[{cursor}][{f.param}]")
        lines += ["    " + line for line in step]
        self.body[at:at] = lines
        self.values.append(value)

    def _sliding(self, f, j: int) -> None:
        """An aggregate over a sliding ROWS frame (offsets `first`, `last`
        from the row): summed over the frame for each row. A change at p
        alters the frames that reach p: those of the rows p - last to
        p - first (the rows after them see the same rows, moved). From
        UNBOUNDED PRECEDING (`first` None): a cursor, as `_running`; to
        UNBOUNDED FOLLOWING (`last` None): the partition's suffixes summed
        from its end once per call."""
        first, last = f.sliding
        self._rows_span(first, last)
        if last is None:
            self._suffix(f, j)
            return
        if first is None:
            if last < 0:  # up to the row |last| before
                self._cursor(
                    f, j, f"jb{-last}", f"i - {-last - 1}" if last < -1 else "i"
                )
            else:
                self._cursor(f, j, f"ja{last}", f"min(n, i + {last + 1})")
            return
        loop = "for jf in range({}, {}):".format(*_rows_bounds(first, last))
        start, lines, value = self._folded(f, j, loop, "rows[jf]")
        self.body += start + lines
        self.values.append(value)

    def _rows_span(self, first: int | None, last: int | None) -> None:
        """The positions a change at p alters for a ROWS frame from offset
        `first` to `last` (None: UNBOUNDED): the rows whose frame reaches
        p, p - last to p - first (the rows after them see the same rows,
        moved)."""
        self.lows.append(
            "0" if last is None else f"max(0, p - {last})" if last > 0 else "p"
        )
        if first is None:
            self.highs.append("n")
        elif first < 0:
            self.highs.append(f"min(n, p + {-first} + gone)")

    def _suffix(self, f, j: int) -> None:
        """An aggregate over the rows from offset `first` to the partition's
        end: every row up to p - first sees a change at p; the values of
        the suffixes, from the end back to the span's first frame, once."""
        first = f.sliding[0]
        start = f"max(0, lo - {-first})" if first < 0 else f"min(n, lo + {first})"
        loop = f"for jf in range(n - 1, {start} - 1, -1):"
        begin, lines, value = self._folded(f, j, loop, "rows[jf]", backward=True)
        self.prelude += begin + [f"suf{j} = [None] * (n + 1)", f"suf{j}[n] = {value}"]
        self.prelude += lines + [f"    suf{j}[jf] = {value}"]
        at = f"i - {-first}" if first < 0 else f"i + {first}"
        self.values.append(f"suf{j}[min(n, max(0, {at}))]")

    def _folded(self, f, j: int, loop: str, row: str, backward: bool = False):
        """An aggregate's start, the loop `loop` taking each row `row` into
        it, and its value."""
        start, step, value = self._accumulate(f, j, f"x{j}", backward)
        lines = [loop]
        if f.arg is not None:
            lines.append(f"    x{j} = {row}[{f.arg}]")
        if f.kind in ("arg_max", "arg_min"):  # and the value compared
            lines.append(f"    y{j} = {row}[{f.param}]")
        lines += ["    " + line for line in step]
        return start, lines, value

    def _band_offsets(self, f) -> tuple[tuple[int, str], tuple[int, str]]:
        """The frame's first and last value as the row's value plus an offset
        (sign, magnitude's text) in the values' own direction: ORDER BY …
        DESC turns PRECEDING into larger values."""
        out = []
        for end in f.band:
            if end is None:
                out.append((0, "0"))
                continue
            amount, unit, following = end
            sign = (1 if following else -1) * (-1 if f.order[0][1] else 1)
            text = repr(amount)
            if unit == "days" or self.key_kind == "date":  # a DATE ± n: days
                text = self._span(amount)
            out.append((sign if amount else 0, text))
        return out[0], out[1]

    def _span(self, days: int) -> str:
        """The name of a constant of `days` days, beside the last and first
        values of the key's class it can be added to or taken from (a frame
        reaching past the calendar's ends stops there, as no value lies
        beyond: `_shifted`)."""
        expr = f"_timedelta(days={days})"
        if expr not in self.constants:
            name = f"_SPAN{len(self.constants) // 3}"
            cls = "_datetime" if self.key_kind == "timestamp" else "_date"
            self.constants[expr] = name
            self.constants[f"{cls}.max - {name}"] = f"{name}_TOP"
            self.constants[f"{cls}.min + {name}"] = f"{name}_LOW"
        return self.constants[expr]

    def _shifted(self, v: str, sign: int, magnitude: str) -> str:
        """`v` plus `sign` times `magnitude`; a day span clamped to the key
        class's range, so that no value of the key makes it overflow."""
        if not sign:
            return v
        if not magnitude.startswith("_SPAN"):
            return f"{v} {'+' if sign > 0 else '-'} {magnitude}"
        cls = "_datetime" if self.key_kind == "timestamp" else "_date"
        if sign > 0:
            return f"{v} + {magnitude} if {v} <= {magnitude}_TOP else {cls}.max"
        return f"{v} - {magnitude} if {v} >= {magnitude}_LOW else {cls}.min"

    def _band(self, f, j: int) -> None:
        """An aggregate over a RANGE frame between offsets of the one ORDER
        BY key: the rows whose values lie between the row's value plus the
        two offsets (a NULL value frames its peers), found by bisection,
        summed once per group of peers. A change of value v alters the
        frames that reach v: the rows from v minus the last offset to v
        minus the first."""
        (sa, ma), (sb, mb) = self._band_offsets(f)
        c = f.order[0][0]
        sk = self.sort_key
        plus = self._shifted
        nan = " or {v} != {v}" if self.key_kind == "float" else ""  # NaN: peers
        v = f"row[{c}]"
        self.span_prelude += [  # the span's ends
            f"if {v} is None{nan.format(v=v)}:  # its peers' frames",
            f"    ra{j}, rb{j} = a, b",
            "else:",
            f"    u = {plus(v, -sb, mb)}",
            f"    ra{j} = bisect_left(keys, ({sk('u')},))",
            f"    u = {plus(v, -sa, ma)}",
            f"    rb{j} = bisect_right(keys, ({sk('u')},))",
        ]
        self.lows.append(f"ra{j}")
        self.highs.append(f"rb{j}")
        self._new_peer()
        start, lines, value = self._folded(f, j, "for jf in range(fa, fb):", "rows[jf]")
        y = f"rows[i][{c}]"
        self.body += [
            f"if i == lo or new_peer:  # the frame of a group of peers",
            f"    y = {y}",
            f"    if y is None{nan.format(v='y')}:",
            "        fa = bisect_left(keys, keys[i])",
            "        fb = bisect_right(keys, keys[i])",
            "    else:",
            f"        u = {plus('y', sa, ma)}",
            f"        fa = bisect_left(keys, ({sk('u')},))",
            f"        u = {plus('y', sb, mb)}",
            f"        fb = bisect_right(keys, ({sk('u')},))",
        ]
        self.body += ["    " + line for line in start + lines]
        self.body.append(f"    w{j} = {value}")
        self.values.append(f"w{j}")

    def _whole(self, f, j: int) -> None:
        """An aggregate over the whole partition: computed once per call; a
        MIN or MAX kept beside the partition's rows, so that a change that
        leaves it alone recomputes the changed row only."""
        if f.kind in ("min", "max") and f.arg is not None:
            self.prelude.append(f"w{j} = ext[{len(self.extremes)}]")
            self.extremes.append((f.kind, f.arg))
            self.values.append(f"w{j}")
            return
        self.lows.append("0")
        self.highs.append("n")
        start, lines, value = self._folded(f, j, "for r in rows:", "r")
        self.prelude += start + lines
        self.prelude.append(f"w{j} = {value}")
        self.values.append(f"w{j}")
