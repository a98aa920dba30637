"""Copy runtime helpers into a generated module, specialised to its payloads.

A generated module imports only the standard library and sortedcontainers,
so the renderer pastes the source of the helpers it uses (`helper_source`)
instead of importing them. Payload arithmetic in a helper is written as
calls of `payload._padd`, `_psub`, `_pcount` and `_psum`; each call is
replaced by the expression the module's `Ring` gives for those operands
(`a + b` for int payloads, `(a[0] + b[0], a[1] + b[1])` for pairs), so the
inlined code is what one would write by hand for that width. The output
depends only on the helpers' source and the ring: deterministic.
"""

from __future__ import annotations

import ast
import importlib.util
from dataclasses import dataclass
from functools import cache


@dataclass(frozen=True)
class Helper:
    """One top-level definition a generated module may include."""

    name: str  # its name in the generated module
    module: str  # the dynyan.runtime module defining it
    source_name: str  # its name there
    tuples_only: bool = False  # only where payloads are tuples (width > 1)


# In the order a module defines them (each after what it uses at import).
HELPERS = (
    Helper("_SortedGroup", "sortedgroup", "_SortedGroup"),
    Helper("_psum", "payload", "_psum_tuples", tuples_only=True),
    Helper("_RangeNode", "rangesum", "_RangeNode"),
    Helper("_RangeSum", "rangesum", "_RangeSum"),
    Helper("_div", "sqlfuncs", "_div"),
    Helper("_mod", "sqlfuncs", "_mod"),
    Helper("_intdiv", "sqlfuncs", "_intdiv"),
    Helper("_substr", "sqlfuncs", "_substr"),
    Helper("_round", "sqlfuncs", "_round"),
    Helper("_to_int", "sqlfuncs", "_to_int"),
    Helper("_to_single", "sqlfuncs", "_to_single"),
    Helper("_sqrt", "sqlfuncs", "_sqrt"),
    Helper("_finite_part", "sqlfuncs", "_finite_part"),
    Helper("_exact", "sqlfuncs", "_exact"),
    Helper("_inexact", "sqlfuncs", "_inexact"),
    Helper("_ieee_total", "sqlfuncs", "_ieee_total"),
    Helper("_nan_key", "sqlfuncs", "_nan_key"),
    Helper("_nan_value", "sqlfuncs", "_nan_value"),
    Helper("_add_months", "sqlfuncs", "_add_months"),
    Helper("_date_trunc", "sqlfuncs", "_date_trunc"),
    Helper("_strftime", "sqlfuncs", "_strftime"),
    Helper("_replace", "sqlfuncs", "_replace"),
    Helper("_right", "sqlfuncs", "_right"),
    Helper("_overlay", "sqlfuncs", "_overlay"),
    Helper("_to_str", "sqlfuncs", "_to_str"),
    Helper("_real_text", "sqlfuncs", "_real_text"),
    Helper("_upper", "sqlfuncs", "_upper"),
    Helper("_lower", "sqlfuncs", "_lower"),
    Helper("_greatest", "sqlfuncs", "_greatest"),
    Helper("_least", "sqlfuncs", "_least"),
    Helper("_quantile_cont", "sqlfuncs", "_quantile_cont"),
    Helper("_string_agg_keyed", "sqlfuncs", "_string_agg_keyed"),
    Helper("_quantile_disc", "sqlfuncs", "_quantile_disc"),
    Helper("_top_cut", "sqlfuncs", "_top_cut"),
    Helper("_bit_or_agg", "sqlfuncs", "_bit_or_agg"),
    Helper("_bit_and_agg", "sqlfuncs", "_bit_and_agg"),
    Helper("_bit_xor_agg", "sqlfuncs", "_bit_xor_agg"),
    Helper("_and3", "sqlfuncs", "_and3"),
    Helper("_or3", "sqlfuncs", "_or3"),
    Helper("_regexp_extract", "sqlfuncs", "_regexp_extract"),
    Helper("_exact_double", "sqlfuncs", "_exact_double"),
    Helper("_ceil_number", "sqlfuncs", "_ceil_number"),
    Helper("_floor_number", "sqlfuncs", "_floor_number"),
    Helper("_trunc", "sqlfuncs", "_trunc"),
    Helper("_ln", "sqlfuncs", "_ln"),
    Helper("_log10", "sqlfuncs", "_log10"),
    Helper("_log2", "sqlfuncs", "_log2"),
    Helper("_exp", "sqlfuncs", "_exp"),
    Helper("_power", "sqlfuncs", "_power"),
    Helper("_lpad", "sqlfuncs", "_lpad"),
    Helper("_rpad", "sqlfuncs", "_rpad"),
    Helper("_repeat", "sqlfuncs", "_repeat"),
    Helper("_split_part", "sqlfuncs", "_split_part"),
    Helper("_split_count", "sqlfuncs", "_split_count"),
    Helper("_printf_fixed", "sqlfuncs", "_printf_fixed"),
    Helper("_reverse", "sqlfuncs", "_reverse"),
    Helper("_gcd", "sqlfuncs", "_gcd"),
    Helper("_lcm", "sqlfuncs", "_lcm"),
    Helper("_translate", "sqlfuncs", "_translate"),
    Helper("_ascii", "sqlfuncs", "_ascii"),
    Helper("_like_match", "sqlfuncs", "_like_match"),
    Helper("_time_bucket", "sqlfuncs", "_time_bucket"),
    Helper("_trig", "sqlfuncs", "_trig"),
    Helper("_c_math", "sqlfuncs", "_c_math"),
    Helper("_even", "sqlfuncs", "_even"),
    Helper("_floored_quotient", "sqlfuncs", "_floored_quotient"),
    Helper("_fdiv", "sqlfuncs", "_fdiv"),
    Helper("_fmod", "sqlfuncs", "_fmod"),
    Helper("_factorial", "sqlfuncs", "_factorial"),
    Helper("_shift_left", "sqlfuncs", "_shift_left"),
    Helper("_shift_right", "sqlfuncs", "_shift_right"),
    Helper("_bit_count", "sqlfuncs", "_bit_count"),
    Helper("_signbit", "sqlfuncs", "_signbit"),
    Helper("_chr", "sqlfuncs", "_chr"),
    Helper("_yearweek", "sqlfuncs", "_yearweek"),
    Helper("_millisecond", "sqlfuncs", "_millisecond"),
    Helper("_microsecond", "sqlfuncs", "_microsecond"),
    Helper("_digest", "sqlfuncs", "_digest"),
    Helper("_date_diff", "sqlfuncs", "_date_diff"),
    Helper("_date_sub", "sqlfuncs", "_date_sub"),
    Helper("_last_day", "sqlfuncs", "_last_day"),
    Helper("_make_date", "sqlfuncs", "_make_date"),
    Helper("_from_epoch", "sqlfuncs", "_from_epoch"),
    Helper("_epoch_instant", "sqlfuncs", "_epoch_instant"),
    Helper("_local_time", "sqlfuncs", "_local_time"),
    Helper("_levenshtein", "sqlfuncs", "_levenshtein"),
    Helper("_string_at", "sqlfuncs", "_string_at"),
    Helper("_string_slice", "sqlfuncs", "_string_slice"),
    Helper("_hamming", "sqlfuncs", "_hamming"),
    Helper("_jaccard", "sqlfuncs", "_jaccard"),
    Helper("_strptime_of", "sqlfuncs", "_strptime_of"),
    Helper("_text_strptime", "sqlfuncs", "_text_strptime"),
    Helper("_is_strptime_text", "sqlfuncs", "_is_strptime_text"),
    Helper("_epoch_units", "sqlfuncs", "_epoch_units"),
    Helper("_difference_part", "sqlfuncs", "_difference_part"),
    Helper("_single", "sqlfuncs", "_single"),
    Helper("_tupled", "sqlfuncs", "_tupled"),
    Helper("_as_stored", "sqlfuncs", "_as_stored"),
    Helper("_own_classes", "ownvalues", "_own_classes"),
    Helper("_single_or_raise", "ownvalues", "_single_or_raise"),
    Helper("_own_float", "ownvalues", "_own_float"),
    Helper("_own_value", "ownvalues", "_own_value"),
    Helper("_own_row", "ownvalues", "_own_row"),
    Helper("_converts", "ownvalues", "_converts"),
    Helper("_foreign", "ownvalues", "_foreign"),
    Helper("_foreign_at", "ownvalues", "_foreign_at"),
    Helper("_foreign_hint", "ownvalues", "_foreign_hint"),
    Helper("_FirstRows", "ownvalues", "_FirstRows"),
    Helper("_Converting", "ownvalues", "_Converting"),
    Helper("_unicode", "sqlfuncs", "_unicode"),
    Helper("_make_timestamp", "sqlfuncs", "_make_timestamp"),
    Helper("_plain_number", "sqlfuncs", "_plain_number"),
    Helper("_maybe_number", "sqlfuncs", "_maybe_number"),
    Helper("_int_of_text", "sqlfuncs", "_int_of_text"),
    Helper("_text_to_int", "sqlfuncs", "_text_to_int"),
    Helper("_is_int_text", "sqlfuncs", "_is_int_text"),
    Helper("_float_of_text", "sqlfuncs", "_float_of_text"),
    Helper("_text_to_float", "sqlfuncs", "_text_to_float"),
    Helper("_is_float_text", "sqlfuncs", "_is_float_text"),
    Helper("_date_of_text", "sqlfuncs", "_date_of_text"),
    Helper("_text_to_date", "sqlfuncs", "_text_to_date"),
    Helper("_is_date_text", "sqlfuncs", "_is_date_text"),
    Helper("_timestamp_of_text", "sqlfuncs", "_timestamp_of_text"),
    Helper("_text_to_timestamp", "sqlfuncs", "_text_to_timestamp"),
    Helper("_is_timestamp_text", "sqlfuncs", "_is_timestamp_text"),
)
BY_NAME = {h.name: h for h in HELPERS}

#: Global names a helper may use that the generated module provides (its
#: imports, its constants); tests/test_runtime_lib.py checks the helpers
#: use nothing else.
MODULE_GLOBALS = frozenset(
    {
        "_ZERO",
        "ViewError",
        "SortedKeyList",
        "itemgetter",
        "bisect_left",
        "bisect_right",
        "math",
        "datetime",
        "Mapping",  # collections.abc's, which every module imports
        "Set",
        "decimal",  # imported by every module, for values of other classes
        "numbers",
        "_OWN",  # ownvalues._own_classes(), set by a module that has it
    }
)

_PAYLOAD_CALLS = ("_padd", "_psub", "_pcount", "_psum")


def helper_source(names, ring) -> str:
    """The source of the helpers `names` and of the helpers they use, in
    `HELPERS` order, specialised to `ring` (`dynyan.compiler.render.Ring`,
    or anything with its `width`, `add`, `sub` and `count`); "" for none."""
    wanted = closure(names, ring.width)
    parts = [_specialise(h, ring) for h in HELPERS if h.name in wanted]
    return "\n\n".join(parts) + ("\n" if parts else "")


def closure(names, width: int) -> set[str]:
    """`names` and the helpers they use (at any depth)."""
    todo, out = list(names), set()
    while todo:
        name = todo.pop()
        if name in out:
            continue
        helper = BY_NAME[name]  # KeyError: not a runtime helper
        if helper.tuples_only and width == 1:
            continue  # int payloads: `_psum` is the builtin sum
        out.add(name)
        node = _definition(helper.module, helper.source_name)[1]
        todo += sorted(_used_names(node) & set(BY_NAME) - out)
    return out


def namespace(names, ring) -> dict:
    """The helpers `names` executed as a generated module would hold them
    (with its imports and `_ZERO`): for tests of the specialised code."""
    import bisect
    import collections.abc
    import datetime
    import decimal
    import math
    import numbers
    import operator

    from sortedcontainers import SortedKeyList

    from . import ownvalues, sqlfuncs

    ns = {
        "_ZERO": 0 if ring.width == 1 else (0,) * ring.width,
        "SortedKeyList": SortedKeyList,
        "itemgetter": operator.itemgetter,
        "bisect_left": bisect.bisect_left,
        "bisect_right": bisect.bisect_right,
        "math": math,
        "datetime": datetime,
        "ViewError": sqlfuncs.ViewError,
        "decimal": decimal,
        "numbers": numbers,
        "_OWN": ownvalues._OWN,
        "Mapping": collections.abc.Mapping,
        "Set": collections.abc.Set,
    }
    exec(compile(helper_source(names, ring), "<dynyan runtime>", "exec"), ns)
    return ns


# --- reading and specialising the source -----------------------------------------


@cache
def _module_source(module: str) -> tuple[str, ast.Module]:
    spec = importlib.util.find_spec(f"{__package__}.{module}")
    text = spec.loader.get_source(spec.name)
    return text, ast.parse(text)


def _definition(module: str, name: str):
    """(module source, the top-level def or class `name` in it)."""
    text, tree = _module_source(module)
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == name:
            return text, node
    raise LookupError(f"dynyan.runtime.{module} defines no {name}")


def _used_names(node) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _specialise(helper: Helper, ring) -> str:
    """The helper's definition with payload calls replaced for `ring`."""
    text, node = _definition(helper.module, helper.source_name)
    data = text.encode()
    starts = [0]
    for line in data.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))

    def offset(lineno, col):  # ast columns count UTF-8 bytes
        return starts[lineno - 1] + col

    parents = {
        child: parent
        for parent in ast.walk(node)
        for child in ast.iter_child_nodes(parent)
    }

    def segment(n) -> str:
        lo, hi = offset(n.lineno, n.col_offset), offset(n.end_lineno, n.end_col_offset)
        return render(n, lo, hi)

    def render(n, lo, hi) -> str:
        """Source of data[lo:hi] (node n) with its outermost payload calls replaced."""
        if _payload_call(n):
            return call(n)
        out, pos = [], lo
        for sub in _outermost_calls(n):
            s, e = offset(sub.lineno, sub.col_offset), offset(
                sub.end_lineno, sub.end_col_offset
            )
            out += [data[pos:s].decode(), call(sub)]
            pos = e
        out.append(data[pos:hi].decode())
        return "".join(out)

    def operand(n) -> str:
        atomic = isinstance(
            n, (ast.Name, ast.Attribute, ast.Subscript, ast.Call, ast.Constant)
        )
        text = segment(n)
        return text if atomic and not _payload_call(n) else f"({text})"

    def call(n) -> str:
        fn = n.func.id
        if len(n.args) != (2 if fn in ("_padd", "_psub") else 1) or n.keywords:
            raise ValueError(f"{helper.name}: {fn} takes plain positional operands")
        args = [operand(a) for a in n.args]
        if fn == "_pcount":
            return ring.count(args[0])
        if fn == "_psum":
            return f"{'sum' if ring.width == 1 else '_psum'}({segment(n.args[0])})"
        expr = ring.add(*args) if fn == "_padd" else ring.sub(*args)
        bare = isinstance(parents.get(n), (ast.Assign, ast.Return))
        return expr if bare or expr.startswith("(") else f"({expr})"

    source = segment(node)
    if helper.source_name != helper.name:
        head = "class " if isinstance(node, ast.ClassDef) else "def "
        source = source.replace(head + helper.source_name, head + helper.name, 1)
    return source


def _payload_call(n) -> bool:
    return (
        isinstance(n, ast.Call)
        and isinstance(n.func, ast.Name)
        and n.func.id in _PAYLOAD_CALLS
    )


def _outermost_calls(node):
    """The payload calls inside `node` not nested in another one, in order."""
    found = []

    def walk(n):
        for child in ast.iter_child_nodes(n):
            if _payload_call(child):
                found.append(child)
            else:
                walk(child)

    walk(node)
    return sorted(found, key=lambda c: (c.lineno, c.col_offset))
