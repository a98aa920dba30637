"""The pipeline in one place: sql -> plan -> codegen -> module."""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import linecache
import sys
import types

from ..errors import (
    CompilerBug,
    DynyanError,
    PaddedLeafUnplaced,
    UnsupportedQueryError,
)
from .plan import Plan, complexity
from .planner import estimated_work, plan_query
from .stats import Stats


@contextlib.contextmanager
def _nesting_limit():
    """Parsing, planning and rendering recurse over the query's expressions:
    one nested too deeply (hundreds of ANDs) is refused, not a traceback;
    any other failure that is not a refusal is a `CompilerBug`."""
    try:
        yield
    except DynyanError:
        raise
    except RecursionError:
        raise UnsupportedQueryError(
            "query too deeply nested (hundreds of nested conditions or terms); "
            "simplify the expression"
        ) from None
    except Exception as err:
        raise CompilerBug(err) from err


def compile_query(
    sql: str, schema: str | None = None, stats: Stats | None = None
) -> Plan:
    """Parse and plan `sql` (with table statistics, when given); the plan
    carries its query."""
    from .frontend import parse_query  # sqlglot: only when compiling

    with _nesting_limit():
        try:
            return plan_query(parse_query(sql, schema, stats=stats), stats)
        except PaddedLeafUnplaced:  # its padded rows as a UNION ALL instead
            query = parse_query(sql, schema, padded_leaves=False, stats=stats)
            return plan_query(query, stats)


def compile_sql(
    sql: str,
    schema: str | None = None,
    source: str = "<string>",
    stats: Stats | None = None,
    trust_input: bool = False,
    formatted: bool = True,
) -> str:
    """The generated module's source for `sql`. `trust_input`: the module
    keeps no copy of whole input rows and takes deletes to be of present
    rows (change-data-capture streams); by default (strict) it counts every
    whole row, refuses a delete of an absent one and `multiplicity()` is
    exact for any sequence of calls. `formatted=False`: the text as the
    templates render it, without black (the same code; black only lays it
    out for readers, and takes most of a compile's time)."""
    from .render import render_module  # black and jinja2: only when compiling

    plan = compile_query(sql, schema, stats)
    with _nesting_limit():
        return render_module(
            plan, source=source, trust_input=trust_input, formatted=formatted
        )


def check_sql(sql: str, schema: str | None = None) -> None:
    """Return if `sql` compiles, else raise the compiler's refusal (a
    DynyanError). Parses, plans and renders like `compile_sql` but skips
    black, which refuses nothing and takes most of the time: the SQL support
    table (scripts/tpcds_support.py) checks ~120 queries this way."""
    from .render import render_module

    plan = compile_query(sql, schema)
    with _nesting_limit():
        render_module(plan, formatted=False)


def load(
    sql: str,
    schema: str | None = None,
    stats: Stats | None = None,
    trust_input: bool = False,
) -> types.ModuleType:
    """Compile `sql` and import the generated module (see `import_source`;
    `trust_input`: see `compile_sql`). The module lives in memory only, so
    its text is not black-formatted: `dynyan compile` writes the readable
    file."""
    source = compile_sql(
        sql, schema, stats=stats, trust_input=trust_input, formatted=False
    )
    return import_source(source)


def import_source(source: str) -> types.ModuleType:
    """Import a generated module's source (registered in sys.modules under its
    digest, with the source in linecache so tracebacks show generated lines)."""
    digest = hashlib.sha256(source.encode()).hexdigest()[:12]
    name = f"dynyan_generated_{digest}"
    if name in sys.modules:
        return sys.modules[name]
    filename = f"<dynyan {name}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    module = types.ModuleType(name)
    module.__file__ = filename
    exec(compile(source, filename, "exec"), module.__dict__)
    sys.modules[name] = module
    return module


def import_file(path: str) -> types.ModuleType:
    """Import a generated module from a file path."""
    name = "dynyan_file_" + hashlib.sha256(str(path).encode()).hexdigest()[:12]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _sections(plan) -> list[str]:
    """Fan-out of a non-simple tree, unread tables, ORDER BY, a decomposed
    cycle, the inner views and the rows that wait, each with its cost
    (`compiler/explain_sections.py`), after a blank line each."""
    from .explain_sections import (
        decomposition_lines,
        fan_out_lines,
        inner_view_lines,
        ordering_lines,
        unread_lines,
        waiting_lines,
    )

    out = []
    for lines in (
        fan_out_lines(plan),
        unread_lines(plan),
        ordering_lines(plan),
        decomposition_lines(plan),
        inner_view_lines(plan),
        waiting_lines(plan),
    ):
        if lines:
            out += ["", *lines]
    return out


def explain(sql: str, schema: str | None = None, stats: Stats | None = None) -> str:
    """IR, chosen tree, N and frontier, and complexity, as text."""
    plan = compile_query(sql, schema, stats)
    query = plan.query
    frontier = ", ".join(plan.label(n) for n in plan.frontier())
    return "\n".join(
        [
            "Query (GCQ):",
            *("  " + line for line in str(query).splitlines()),
            "",
            "GJT pair (T, N): children guard first; * marks N",
            *("  " + line for line in str(plan).splitlines()),
            "",
            f"N: {len(plan.in_n)} nodes; frontier: {frontier}",
            f"Complexity: {complexity(plan)}",
        ]
        + _sections(plan)
        + (
            [
                f"Estimated work (insert every row once): {estimated_work(plan, stats):,.0f}"
            ]
            if stats is not None
            else []
        )
    )
