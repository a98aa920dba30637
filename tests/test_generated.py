"""`generated/` is the golden record: every committed module must equal what
the compiler produces now, be black-clean, import, and work.

Freshness is checked through the digests in a module's header (see
`dynyan.compiler.render.render_digest`): the render's digest must be what the
compiler renders now, and the module's own digest must match its text, so
the check renders without black (nine tenths of a large query's compile
time); a few modules are compiled in full and checked against black."""

import functools
import importlib.util
import typing
from pathlib import Path

import black
import pytest

from dynyan.cli.compile import default_output
from dynyan.compiler.source import read_query
from dynyan.compiler.render import BLACK_MODE, render_digest, render_module
from dynyan.compiler import compile_query, compile_sql
from dynyan.errors import DynyanError

ROOT = Path(__file__).resolve().parent.parent
QUERIES = sorted((ROOT / "queries").rglob("*.sql"))


def module_path(query: Path) -> Path:
    return ROOT / default_output(str(query))


COMPILED = [q for q in QUERIES if module_path(q).exists()]


def source_for(query: Path) -> str:
    sql, schema = read_query(str(query), None)
    return compile_sql(sql, schema, source=query.relative_to(ROOT).as_posix())


@functools.cache
def rendered_digest(query: Path) -> str | None:
    """The digest of the module's render (not formatted), or None if the
    compiler refuses the query: once per query and test process."""
    sql, schema = read_query(str(query), None)
    try:
        text = render_module(
            compile_query(sql, schema),
            source=query.relative_to(ROOT).as_posix(),
            formatted=False,
        )
    except DynyanError:
        return None
    return render_digest(text)


def compiles(query: Path) -> bool:
    return rendered_digest(query) is not None


@pytest.mark.parametrize(
    "query",
    [q for q in QUERIES if q.name != "schema.sql"],
    ids=lambda q: q.relative_to(ROOT / "queries").as_posix(),
)
def test_a_module_is_committed_exactly_for_queries_that_compile(query):
    committed = module_path(query).exists()
    assert committed == compiles(query), "run scripts/regen.sh"


@pytest.mark.parametrize(
    "query", COMPILED, ids=lambda q: q.relative_to(ROOT / "queries").as_posix()
)
def test_committed_module_is_fresh(query):
    committed = render_digest(module_path(query).read_text())
    assert committed is not None, f"{module_path(query)} was edited by hand"
    assert committed == rendered_digest(
        query
    ), f"{module_path(query)} is stale: run scripts/regen.sh"


def test_a_module_edited_by_hand_or_rendered_differently_is_caught():
    query = ROOT / "queries" / "tpch" / "q6.sql"
    text = module_path(query).read_text()
    assert render_digest(text) == rendered_digest(query)
    assert render_digest(text.replace("SUM", "SUm", 1)) is None
    assert render_digest(text + "\n") is None
    sql, schema = read_query(str(query), None)
    other = render_module(compile_query(sql, schema), source="x", formatted=False)
    assert render_digest(other) != rendered_digest(query)


@pytest.mark.parametrize(
    "query",
    COMPILED[:3] + [ROOT / "queries" / "tpch" / "q18.sql"],
    ids=lambda q: q.relative_to(ROOT / "queries").as_posix(),
)
def test_generation_is_deterministic_black_clean_and_committed(query):
    first = source_for(query)
    assert first == source_for(query)
    assert black.format_str(first, mode=BLACK_MODE) == first
    assert first == module_path(query).read_text()


@pytest.mark.parametrize(
    "query", COMPILED, ids=lambda q: q.relative_to(ROOT / "queries").as_posix()
)
def test_module_imports_only_stdlib_and_sortedcontainers(query):
    path = module_path(query)
    imports = {
        line.split()[1].split(".")[0]
        for line in path.read_text().splitlines()
        if line.startswith(("import ", "from "))
    }
    assert imports <= {
        "datetime",
        "collections",
        "copy",
        "decimal",
        "numbers",
        "math",
        "re",
        "bisect",
        "operator",
        "sortedcontainers",
    }, imports
    spec = importlib.util.spec_from_file_location(f"golden_{query.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    view = module.View()
    assert len(list(view.rows())) <= 1  # a global aggregate has its one row
    assert set(view.RELATIONS) and view.COLUMNS
    # readable without building a View, and the public methods are typed
    assert module.RELATIONS is module.View.RELATIONS
    assert module.COLUMNS is module.View.COLUMNS
    assert module.View.STRICT is True
    for name in ("insert", "delete", "update", "rows", "enumerate", "deltas"):
        hints = typing.get_type_hints(getattr(module.View, name))
        assert "return" in hints, name
