"""The runtime helpers (dynyan/runtime) on their own: the range-sum B-tree,
the sorted group and the SQL functions against naive models, both as
ordinary modules (int payloads) and as inlined into a generated module
(specialised to tuple payloads), and the inliner itself."""

from __future__ import annotations

import ast
import builtins
import calendar
import datetime
import math
import re
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dynyan
from dynyan.compiler.render import Ring
from dynyan.runtime import inline, payload, rangesum, sortedgroup, sqlfuncs

ROOT = Path(__file__).resolve().parent.parent
GENERATED = sorted((ROOT / "generated").rglob("*.py"))

# --- payload models ------------------------------------------------------------------

WIDTHS = [1, 3]


def pay(width: int, k: int, x: int):
    """A payload of count k whose channels are k times a value (so they
    vanish with the count, as in a view)."""
    return k if width == 1 else (k, k * x, k * (x % 7 - 3))


def padd(width, a, b):
    return a + b if width == 1 else tuple(p + q for p, q in zip(a, b))


def zero(width):
    return 0 if width == 1 else (0,) * width


def classes(width: int, fanout: int):
    """(_RangeSum with a small FANOUT to exercise splits, _SortedGroup) as a
    generated module with payloads of `width` holds them."""
    if width == 1:  # the ordinary modules
        base, group = rangesum._RangeSum, sortedgroup._SortedGroup
    else:
        ns = inline.namespace(["_RangeSum", "_SortedGroup"], Ring(width))
        base, group = ns["_RangeSum"], ns["_SortedGroup"]
    return type("SmallRangeSum", (base,), {"FANOUT": fanout}), group


# one operation: (value, count change k >= 1, delete one instead?); the
# channels of a value's payload are multiples of the value itself
OPS = st.lists(
    st.tuples(st.integers(-20, 20), st.integers(1, 3), st.booleans()), max_size=150
)


def check_tree(rs, model, width):
    """B-tree invariants: sorted keys, every inner key the largest value
    below it, every inner sum its child's total, nodes not overfull."""
    leaves = []

    def walk(node, depth):
        assert node.keys == sorted(node.keys)
        assert len(node.keys) <= 2 * rs.FANOUT
        assert len(node.keys) == len(node.sums)
        if node.kids is None:
            leaves.append(depth)
            return list(zip(node.keys, node.sums))
        items = []
        for key, total, kid in zip(node.keys, node.sums, node.kids):
            below = walk(kid, depth + 1)
            assert below and below[-1][0] == key
            acc = zero(width)
            for _, p in below:
                acc = padd(width, acc, p)
            assert acc == total
            items += below
        return items

    items = walk(rs.root, 0)
    assert len(set(leaves)) <= 1, "leaves at different depths"
    assert dict(items) == {v: p for v, p in model.items()}


@pytest.mark.parametrize("width", WIDTHS)
@settings(max_examples=60, deadline=None)
@given(ops=OPS, probes=st.lists(st.integers(-22, 22), min_size=1, max_size=6))
def test_range_sum_matches_a_dict(width, ops, probes):
    RangeSum, _ = classes(width, fanout=2)
    rs, model = RangeSum(), {}
    for value, k, delete in ops:
        d = pay(width, -1 if delete and value in model else k, value)
        left = rs.add(value, d)
        new = padd(width, model.get(value, zero(width)), d)
        if (new if width == 1 else new[0]) == 0:
            model.pop(value, None)
        else:
            model[value] = new
        assert left == bool(model)
    check_tree(rs, model, width)

    def total(pred):
        acc = zero(width)
        for v, p in model.items():
            if pred(v):
                acc = padd(width, acc, p)
        return acc

    for p in probes:
        assert rs.below(p, False) == total(lambda v: v < p)
        assert rs.below(p, True) == total(lambda v: v <= p)
        assert rs.besides(p) == total(lambda v: v != p)
        for q in probes:
            for lo_incl in (False, True):
                for hi_incl in (False, True):
                    expected = total(
                        lambda v: (v > p or (lo_incl and v == p))
                        and (v < q or (hi_incl and v == q))
                    )
                    assert rs.range(p, lo_incl, q, hi_incl) == expected
            assert rs.range(None, True, q, False) == total(lambda v: v < q)
            assert rs.range(p, False, None, True) == total(lambda v: v > p)
        assert rs.range(None, True, None, True) == total(lambda v: True)


@pytest.mark.parametrize("width", WIDTHS)
def test_range_sum_grows_and_empties(width):
    """Thousands of values at the real fanout: several levels, then every
    value deleted again leaves an empty tree."""
    RangeSum = classes(width, fanout=rangesum._RangeSum.FANOUT)[0]
    rs, model = RangeSum(), {}
    values = [(i * 7919) % 20011 for i in range(20000)]
    for v in values:
        rs.add(v, pay(width, 1, v))
        model[v] = pay(width, 1, v)
    assert rs.root.kids is not None and rs.root.kids[0].kids is not None
    check_tree(rs, model, width)
    expected = zero(width)
    for v in model:
        if 100 <= v < 5000:
            expected = padd(width, expected, model[v])
    assert rs.range(100, True, 5000, False) == expected
    for v in values:
        left = rs.add(v, pay(width, -1, v))
    assert not left and rs.root.keys == [] and rs.root.kids is None


@pytest.mark.parametrize("small", [2, 32])  # a plain list turning into a SortedKeyList
@pytest.mark.parametrize("width", WIDTHS)
@settings(max_examples=60, deadline=None)
@given(
    ops=st.lists(
        st.tuples(
            st.integers(0, 9), st.integers(0, 3), st.integers(1, 2), st.booleans()
        ),
        max_size=80,
    ),
    bounds=st.tuples(
        st.none() | st.integers(-1, 10),
        st.booleans(),
        st.none() | st.integers(-1, 10),
        st.booleans(),
    ),
)
def test_sorted_group_matches_a_dict(small, width, ops, bounds):
    _, group_class = classes(width, fanout=2)
    SortedGroup = type("SmallGroup", (group_class,), {"SMALL": small})
    group, model = SortedGroup(), {}  # entry -> (value, payload)
    for value, tag, k, delete in ops:
        entry = (value, tag)  # an entry's order value is part of it
        if delete and entry in model:
            d = padd(width, zero(width), model[entry][1])
            d = -d if width == 1 else tuple(-c for c in d)
        else:
            d = pay(width, k, tag)
        left = group.add(value, entry, d)
        new = padd(width, model.get(entry, (value, zero(width)))[1], d)
        if (new if width == 1 else new[0]) == 0:
            model.pop(entry, None)
        else:
            model[entry] = (value, new)
        assert left == bool(model)
        assert group.get(entry) == (model[entry][1] if entry in model else None)
    lo, lo_incl, hi, hi_incl = bounds

    def inside(v):
        return (lo is None or v > lo or (lo_incl and v == lo)) and (
            hi is None or v < hi or (hi_incl and v == hi)
        )

    scanned = list(group.scan(lo, lo_incl, hi, hi_incl))
    assert [model[e][0] for e, _ in scanned] == sorted(model[e][0] for e, _ in scanned)
    assert dict(scanned) == {e: p for e, (v, p) in model.items() if inside(v)}
    state = group.__getstate__()
    copy = SortedGroup.__new__(SortedGroup)
    copy.__setstate__(state)
    assert list(copy.scan(None, True, None, True)) == list(
        group.scan(None, True, None, True)
    )


@given(st.lists(st.tuples(st.integers(-9, 9), st.integers(-9, 9)), max_size=10))
def test_psum_is_the_element_wise_sum(pairs):
    ns = inline.namespace(["_psum"], Ring(2))
    expected = (sum(a for a, _ in pairs), sum(b for _, b in pairs)) if pairs else (0, 0)
    assert ns["_psum"](pairs) == expected
    assert payload._psum([a for a, _ in pairs]) == expected[0]


# --- SQL functions ---------------------------------------------------------------------


@given(st.integers(-50, 50) | st.floats(-1e6, 1e6), st.integers(-5, 5))
def test_div_is_true_division_with_ieee_values_by_zero(a, b):
    q = sqlfuncs._div(a, b)
    if b:
        assert q == a / b
    elif a == 0:
        assert math.isnan(q)
    else:
        assert q == (math.inf if (a > 0) == (b >= 0) else -math.inf)
    assert sqlfuncs._div(None, b) is None and sqlfuncs._div(a, None) is None


@given(st.integers(-50, 50), st.integers(-9, 9).filter(bool))
def test_mod_takes_the_sign_of_the_dividend(a, b):
    r = sqlfuncs._mod(a, b)
    assert r == int(math.fmod(a, b))
    assert sqlfuncs._mod(None, b) is None


@given(st.lists(st.floats(-1e300, 1e300), max_size=12))
def test_exact_float_sums_forget_the_update_history(xs):
    """A sum kept in `_exact` units is the exact sum rounded once: the same
    whatever was added and taken away before, and exact for one value."""
    exact, inexact = sqlfuncs._exact, sqlfuncs._inexact
    total = sum(exact(x) for x in xs)
    noisy = sum(exact(x) for x in xs + [1e300, -0.1, 5e-324])
    noisy -= exact(1e300) + exact(-0.1) + exact(5e-324)
    assert total == noisy
    assert inexact(total) == math.fsum(xs)  # fsum: also correctly rounded
    for x in xs:
        assert inexact(exact(x)) == x
        assert inexact(exact(x) * exact(2.0), 2) == x * 2.0  # inf past 1.8e308


def test_exact_sums_overflow_to_infinity_as_float_sums_do():
    exact, inexact = sqlfuncs._exact, sqlfuncs._inexact
    assert inexact(exact(1.7e308) + exact(1.7e308)) == math.inf
    assert inexact(-exact(1e200) * exact(1e200), 2) == -math.inf


@pytest.mark.parametrize("bad", [math.inf, -math.inf, math.nan])
def test_exact_refuses_what_no_integer_holds(bad):
    with pytest.raises(sqlfuncs.ViewError, match="infinite or NaN"):
        sqlfuncs._exact(bad)


def test_mod_by_zero_is_an_error():
    with pytest.raises(ZeroDivisionError):
        sqlfuncs._mod(7, 0)


@given(
    st.dates(datetime.date(1, 12, 1), datetime.date(9998, 1, 31)), st.integers(-11, 11)
)
def test_add_months_clamps_to_the_end_of_the_month(date, months):
    out = sqlfuncs._add_months(date, months)
    year, month = divmod(date.year * 12 + date.month - 1 + months, 12)
    last = calendar.monthrange(year, month + 1)[1]
    assert out == datetime.date(year, month + 1, min(date.day, last))


@given(st.integers(-(10**12), 10**12), st.integers(0, 4), st.integers(-3, 5))
def test_decimals_are_rounded_as_the_decimals_they_stand_for(units, exact, digits):
    """CEIL, FLOOR, TRUNC of a DECIMAL of `exact` digits held as a float
    (maybe off in the last bit: p * 0.5 computed in floats) round the
    decimal itself."""
    from fractions import Fraction

    value = Fraction(units, 10**exact)
    x = units / 10**exact * (1 + 2**-52)  # off by a bit
    assert sqlfuncs._exact_double(x, exact) == float(value)
    assert sqlfuncs._ceil_number(x, exact) == math.ceil(value)
    assert sqlfuncs._floor_number(x, exact) == math.floor(value)
    scale = Fraction(10) ** digits
    if digits < exact:  # (else the DECIMAL is its own TRUNC: not called)
        assert sqlfuncs._trunc(x, digits, exact) == float(
            math.trunc(value * scale) / scale
        )
    whole = units if digits >= 0 else math.trunc(units * scale) / scale
    assert sqlfuncs._trunc(units, digits) == whole


@pytest.mark.parametrize(
    "x, ceil, floor, trunc",
    [
        (-0.5, -0.0, -1.0, -0.0),
        (0.5, 1.0, 0.0, 0.0),
        (-0.0, -0.0, -0.0, -0.0),
        (1e300, 1e300, 1e300, 1e300),
        (-math.inf, -math.inf, -math.inf, -math.inf),
    ],
)
def test_rounding_of_doubles_keeps_c_s_signed_zeros(x, ceil, floor, trunc):
    for fn, want in (
        (sqlfuncs._ceil_number, ceil),
        (sqlfuncs._floor_number, floor),
        (lambda v: sqlfuncs._trunc(v, 0), trunc),
    ):
        got = fn(x)
        assert got == want and math.copysign(1, got) == math.copysign(1, want)


def test_logarithms_and_powers_give_c_s_infinities_and_refuse_nan():
    assert sqlfuncs._ln(0) == sqlfuncs._log10(0.0) == sqlfuncs._log2(0) == -math.inf
    assert sqlfuncs._log10(1000) == 3.0 and sqlfuncs._log2(8) == 3.0
    assert sqlfuncs._exp(1000) == math.inf and sqlfuncs._exp(-1000) == 0.0
    assert sqlfuncs._power(0, -1) == math.inf
    assert sqlfuncs._power(-0.0, -3) == -math.inf
    assert (
        sqlfuncs._power(-10, 401) == -math.inf and sqlfuncs._power(-10, 400) == math.inf
    )
    assert sqlfuncs._power(-2, 3) == -8.0
    for nan in (sqlfuncs._ln(math.nan), sqlfuncs._power(math.nan, 2)):
        assert nan is math.nan
    for call in (
        lambda: sqlfuncs._ln(-1),
        lambda: sqlfuncs._log10(-0.5),
        lambda: sqlfuncs._log2(-math.inf),
        lambda: sqlfuncs._power(-8, 1 / 3),
    ):
        with pytest.raises(ValueError, match="NaN"):
            call()


@given(st.text(max_size=6), st.integers(-3, 12), st.text(max_size=3))
def test_pad_cuts_or_fills_to_the_width(s, width, fill):
    for pad, left in ((sqlfuncs._lpad, True), (sqlfuncs._rpad, False)):
        if width > len(s) and not fill:
            with pytest.raises(ValueError, match="Insufficient padding"):
                pad(s, width, fill)
            continue
        if width <= len(s):
            assert pad(s, width, fill) == s[: max(width, 0)]
            continue
        filler = (fill * width)[: width - len(s)]
        assert pad(s, width, fill) == (filler + s if left else s + filler)


@given(st.lists(st.sampled_from(["a", "b", ""]), max_size=4), st.integers(-6, 6))
def test_split_part_counts_from_either_end(parts, index):
    string = ",".join(parts)
    pieces = string.split(",")
    want = "" if index == 0 or abs(index) > len(pieces) else pieces[index - (index > 0)]
    assert sqlfuncs._split_part(string, ",", index) == want
    chars = sqlfuncs._split_part(string, "", index)
    assert chars == (
        "" if index == 0 or abs(index) > len(string) else string[index - (index > 0)]
    )


def test_repeat_refuses_what_duckdb_cannot_hold():
    assert sqlfuncs._repeat("ab", 3) == "ababab" and sqlfuncs._repeat("ab", -1) == ""
    assert sqlfuncs._repeat("", 10**12) == ""
    with pytest.raises(ValueError, match="Cannot create a string"):
        sqlfuncs._repeat("ab", 2**31)


def test_reverse_refuses_text_whose_characters_join():
    assert sqlfuncs._reverse("a\r\nb") == "b\n\ra"  # ASCII: by bytes, as DuckDB
    assert sqlfuncs._reverse("Añö 日本") == "本日 öñA"
    for joined in ("e\u0301", "a\r\né", "\U0001f1eb\U0001f1f7", "\u1100\u1161"):
        with pytest.raises(ValueError, match="grapheme cluster"):
            sqlfuncs._reverse(joined)


@given(
    st.datetimes(datetime.datetime(1900, 1, 1), datetime.datetime(2100, 1, 1)),
    st.datetimes(datetime.datetime(1900, 1, 1), datetime.datetime(2100, 1, 1)),
)
def test_date_diff_counts_boundaries_crossed(start, end):
    def floor(t, unit):  # whole units since the epoch
        return (t - datetime.datetime(1970, 1, 1)) // datetime.timedelta(seconds=unit)

    months = (end.year - start.year) * 12 + end.month - start.month
    days = (end.date() - start.date()).days
    want = {
        "year": end.year - start.year,
        "quarter": (end.year * 12 + end.month - 1) // 3
        - (start.year * 12 + start.month - 1) // 3,
        "month": months,
        "week": int(days / 7),
        "day": days,
        "hour": floor(end, 3600) - floor(start, 3600),
        "minute": floor(end, 60) - floor(start, 60),
        "second": floor(end, 1) - floor(start, 1),
    }
    for unit, count in want.items():
        assert sqlfuncs._date_diff(unit, start, end) == count, unit


@given(st.dates(datetime.date(1, 1, 1), datetime.date(9999, 12, 31)))
def test_last_day_and_make_date(date):
    last = calendar.monthrange(date.year, date.month)[1]
    assert sqlfuncs._last_day(date) == date.replace(day=last)
    assert sqlfuncs._make_date(date.year, date.month, date.day) == date
    with pytest.raises(ValueError, match="Date out of range"):
        sqlfuncs._make_date(date.year, date.month, last + 1)


@given(st.decimals(-(10**20), 10**20, allow_nan=False, places=3))
def test_text_to_integer_rounds_halves_away_from_zero(value):
    import decimal

    text = f" {value:f}\t"
    rounded = int(value.quantize(decimal.Decimal(1), rounding=decimal.ROUND_HALF_UP))
    for bits in (32, 64):
        fits = -(2 ** (bits - 1)) <= rounded < 2 ** (bits - 1)
        assert sqlfuncs._int_of_text(text, bits) == (rounded if fits else None)
        assert sqlfuncs._is_int_text(text, bits) == fits


@given(st.floats(allow_nan=False))
def test_text_to_double_reads_repr_back(x):
    assert sqlfuncs._text_to_float(repr(x)) == x
    assert sqlfuncs._text_to_float(f"{x:.20e}") == float(f"{x:.20e}")


@given(st.dates(datetime.date(1, 1, 1), datetime.date(9999, 12, 31)))
def test_text_to_date_reads_iso_dates_back(date):
    assert sqlfuncs._text_to_date(date.isoformat()) == date
    assert sqlfuncs._text_to_date(f"{date.year}/{date.month}/{date.day}") == date


@pytest.mark.parametrize(
    "text, integer, double, date",
    [
        ("abc", None, None, None),
        ("", None, None, None),
        ("1,5", None, None, None),
        ("\u00a012", None, None, None),  # not DuckDB's white space
        ("2021-02-29", "error", "error", None),
        ("epoch", None, None, datetime.date(1970, 1, 1)),
        ("-inf", None, -math.inf, "error"),
        ("0x1F", "error", "error", None),  # DuckDB reads 31 as an integer
        ("1e3", "error", 1000.0, None),
        ("nan", None, "error", None),  # a NaN: refused
        ("2020-01-02 10:00", None, None, "error"),  # DuckDB: the day
    ],
)
def test_text_casts_refuse_spellings_not_matched(text, integer, double, date):
    """None: DuckDB cannot read it either (TRY_CAST is NULL); "error": DuckDB
    reads it, in a way not reproduced here."""
    for read, want in (
        (lambda s: sqlfuncs._int_of_text(s, 32), integer),
        (sqlfuncs._float_of_text, double),
        (sqlfuncs._date_of_text, date),
    ):
        if want == "error":
            with pytest.raises(ValueError, match="not supported"):
                read(text)
        else:
            assert read(text) == want


# --- the inliner -------------------------------------------------------------------------


@pytest.mark.parametrize("helper", inline.HELPERS, ids=lambda h: h.name)
def test_helpers_use_only_what_a_module_provides(helper):
    """A helper's free names: builtins, the module's imports and `_ZERO`
    (inline.MODULE_GLOBALS), other helpers, and its own locals (a module of
    the standard library it imports itself among them: a generated module
    imports nothing else)."""
    _, node = inline._definition(helper.module, helper.source_name)
    loaded = {
        n.id
        for n in ast.walk(node)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    }
    local = {
        n.id
        for n in ast.walk(node)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }
    local |= {n.arg for n in ast.walk(node) if isinstance(n, ast.arg)}
    local |= {n.name for n in ast.walk(node) if isinstance(n, ast.ExceptHandler)}
    imported = {
        (a.asname or a.name).split(".")[0]
        for n in ast.walk(node)
        if isinstance(n, ast.Import)
        for a in n.names
    }
    assert imported <= sys.stdlib_module_names
    local |= imported
    payload_calls = {"_padd", "_psub", "_pcount", "_psum"}
    allowed = set(dir(builtins)) | inline.MODULE_GLOBALS | set(inline.BY_NAME)
    assert loaded - local - allowed - payload_calls == set()


@pytest.mark.parametrize("width", [1, 2, 4])
def test_specialised_source_has_no_payload_calls_and_is_deterministic(width):
    names = [h.name for h in inline.HELPERS]
    text = inline.helper_source(names, Ring(width))
    assert text == inline.helper_source(list(reversed(names)), Ring(width))
    called = {
        n.func.id
        for n in ast.walk(ast.parse(text))
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
    }
    assert not called & {"_padd", "_psub", "_pcount"}
    assert ("_psum" in called) == (width > 1)
    assert ("def _psum" in text) == (width > 1)


def test_closure_adds_what_a_helper_uses():
    assert inline.closure(["_RangeSum"], 1) == {"_RangeSum", "_RangeNode"}
    assert inline.closure(["_RangeSum"], 3) == {"_RangeSum", "_RangeNode", "_psum"}
    assert inline.closure(["_div"], 2) == {"_div"}


def test_int_payload_source_is_the_hand_written_one():
    """Width 1 inlines plain int arithmetic: no tuple, no call."""
    text = inline.helper_source(["_RangeSum"], Ring(1))
    assert "sums[i] = sums[i] + d" in text
    assert "if new:" in text and "return total - at" in text
    assert "[sum(root.sums)]" in text


@pytest.mark.parametrize(
    "path", GENERATED, ids=lambda p: p.relative_to(ROOT).as_posix()
)
def test_generated_modules_define_exactly_the_helpers_they_use(path):
    """Each scope defines the helpers its code uses: the module, and each
    inner view's factory function (`_inner_view_…`, a set operation's
    sides' `_make_…`), which carries its own."""

    def check(body):
        defined = {
            n.name
            for n in body
            if isinstance(n, (ast.FunctionDef, ast.ClassDef))
            and n.name in inline.BY_NAME
        }
        rest = [
            n
            for n in body
            if not (
                isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name in defined
            )
        ]
        factories = [
            n
            for n in rest
            if isinstance(n, ast.FunctionDef)
            and n.name.startswith(("_make_", "_inner_view_"))
        ]
        used = {
            n.id
            for r in rest
            if r not in factories
            for n in ast.walk(r)
            if isinstance(n, ast.Name)
        }
        width = 1 if "_psum" not in defined else 2
        assert defined == inline.closure(used & set(inline.BY_NAME), width)
        for factory in factories:
            check(factory.body)

    check(ast.parse(path.read_text()).body)


RANGE_SQL = """
CREATE TABLE r (a INTEGER, b INTEGER); CREATE TABLE s (b INTEGER, c INTEGER);
SELECT s.c, COUNT(*) AS n, SUM(r.a) AS x FROM r, s WHERE r.b < s.b GROUP BY s.c
"""


def test_layout_id_follows_the_helper_code(monkeypatch):
    """A snapshot holds _RangeSum objects: changing their code must change
    LAYOUT_ID, so an old snapshot is refused rather than misread."""
    before = dynyan.load(RANGE_SQL).View.LAYOUT_ID
    original = inline._module_source

    def patched(module):
        text, _ = original(module)
        if module == "rangesum":
            text = text.replace("FANOUT = 64", "FANOUT = 32")
        return text, ast.parse(text)

    monkeypatch.setattr(inline, "_module_source", patched)
    module = dynyan.load(RANGE_SQL)
    assert module._RangeSum.FANOUT == 32
    assert module.View.LAYOUT_ID != before


def test_an_empty_range_weighs_nothing():
    """`c > d + 3 AND c < d + 1` is never true: a range sum over it must be
    zero, not the negative difference of two prefix sums (found by
    test_range_sum_matches_a_dict)."""
    import duckdb

    schema = (
        "CREATE TABLE r (a INTEGER, b INTEGER); CREATE TABLE s (b INTEGER, c INTEGER);"
        " CREATE TABLE t (c INTEGER, d INTEGER);"
    )
    rows = {"r": [(1, 1)], "t": [(5, 5), (5, 2), (5, 3)], "s": [(1, 5), (1, 9)]}
    con = duckdb.connect()
    con.execute(schema)
    for rel, rs in rows.items():
        con.executemany(f"INSERT INTO {rel} VALUES (?, ?)", rs)
    for where in ("s.c > t.d AND s.c < t.d", "s.c > t.d + 3 AND s.c < t.d + 1"):
        sql = f"SELECT COUNT(*) AS n FROM r, s, t WHERE r.b = s.b AND {where}"
        view = dynyan.load(schema + sql).View()
        for rel, rs in rows.items():  # t before s: s's insert sums t's range
            view.update(rel, rs)
        assert list(view.rows()) == con.execute(sql).fetchall() == [(0,)]


@pytest.mark.parametrize(
    "text, upper, lower",
    [
        ("abc", "ABC", "abc"),
        ("straße", "STRAẞE", "straße"),  # one character for one, as DuckDB
        ("ﬁŉ", "ﬁŉ", "ﬁŉ"),  # no simple upper case: kept
        ("İstanbul", "İSTANBUL", "istanbul"),
        ("ΟΔΟΣ", "ΟΔΟΣ", "οδοσ"),  # no final sigma
    ],
)
def test_case_mapping_is_one_character_for_one(text, upper, lower):
    assert sqlfuncs._upper(text) == upper
    assert sqlfuncs._lower(text) == lower


@pytest.mark.parametrize(
    "value, low, high, expected",
    [
        (2.5, None, None, 2),  # halves to even
        (127.4, -128, 127, 127),
        (-128.5, -128, 127, -128),
        (True, -128, 127, 1),
        (None, -128, 127, None),
    ],
)
def test_to_int_in_range(value, low, high, expected):
    assert sqlfuncs._to_int(value, low, high) == expected


@pytest.mark.parametrize(
    "value, low, high",
    [(127.6, -128, 127), (300, -128, 127), (-1, 0, 2**64 - 1), (math.inf, None, None)],
)
def test_to_int_out_of_range_raises(value, low, high):
    with pytest.raises(ValueError, match="out of range"):
        sqlfuncs._to_int(value, low, high)


@settings(max_examples=300, deadline=None)
@given(st.text("ab%_\\", max_size=8), st.text("ab%_\\", max_size=8))
def test_like_match_is_the_like_regex(string, pattern):
    """The wildcard walk of a computed LIKE pattern matches as the regex of a
    literal one: `%` any run, `_` one character, no escape."""
    regex = "".join(
        ".*" if c == "%" else "." if c == "_" else re.escape(c) for c in pattern
    )
    expected = re.fullmatch(regex, string, re.DOTALL) is not None
    assert sqlfuncs._like_match(string, pattern) == expected


@settings(max_examples=400, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False) | st.integers(-(2**60), 2**60))
def test_reals_stored_as_a_c_float_rounds(x):
    """A REAL column's value is the nearest 4-byte float (ties to even,
    subnormals, the sign of zero), as C's (and struct's) float conversion;
    beyond that range an error, as DuckDB's."""
    import struct

    try:
        want = struct.unpack("f", struct.pack("f", x))[0]
    except OverflowError:
        want = math.inf
    if abs(want) == math.inf:
        with pytest.raises(sqlfuncs.ViewError, match="out of the range of a REAL"):
            sqlfuncs._as_stored("r", (x,), 1, (0,), ())
        return
    (got,) = sqlfuncs._as_stored("r", (x,), 1, (0,), ())
    assert got == want and math.copysign(1, got) == math.copysign(1, want)


def test_reals_stored_leave_other_values_and_columns():
    row = (0.1, "0.1", None, True, math.inf, 0.1)
    assert sqlfuncs._as_stored("r", row, 7, (5,), ()) == row  # another length
    assert sqlfuncs._as_stored("r", row, 6, (1, 2, 3, 4, 5), ()) == (
        0.1,
        "0.1",
        None,
        True,
        math.inf,
        0.10000000149011612,
    )


def test_timestamptz_stored_as_the_same_instant_in_utc():
    """A TIMESTAMPTZ column's datetime is the same instant in UTC; one
    without a time zone is refused (DuckDB would read it in its session's
    zone); other values are left to the view's checks."""
    utc = datetime.timezone.utc
    east = datetime.timezone(datetime.timedelta(hours=5, minutes=30))
    row = (1, datetime.datetime(2024, 1, 31, 10, 0, tzinfo=east), None, "x")
    got = sqlfuncs._as_stored("r", row, 4, (), (1, 2, 3))
    assert got == (1, datetime.datetime(2024, 1, 31, 4, 30, tzinfo=utc), None, "x")
    assert got[1].tzinfo is utc
    with pytest.raises(sqlfuncs.ViewError, match="has no time zone"):
        sqlfuncs._as_stored("r", (1, datetime.datetime(2024, 1, 31)), 2, (), (1,))
