"""The differential fuzzer: (query, stream) pairs against DuckDB, shrinking,
regression fixtures.

`run_query(index, config)` draws query number `index` of a seeded sequence
(tests/fuzzgen.py), compiles it once and runs `config.streams` update
streams against it (alternating pull and push mode), each checked against
DuckDB after every batch (tests/differential.py). A refusal
(`DynyanError`) is counted by kind; any other exception while compiling is
a failure, as is any disagreement with DuckDB.

A failure is shrunk (`shrink`): the batches by delta debugging (drop
halves, quarters, … of the batches, then single rows of a batch; a
candidate that deletes an absent row is skipped), then the query (drop a
WHERE/HAVING conjunct, an atom with everything that mentions it, a SELECT
item, a GROUP BY key, DISTINCT), as long as the same complaint remains, and
once more the batches. `fixture_text` writes the result as a self-contained
regression fixture (tests/fixtures/regressions/*.sql: the query file with
its mode and updates in comment lines), which tests/test_regressions.py
replays.

Known compiler bugs (`KNOWN_BUGS`) are recognised by their complaint and
query and counted apart, so that a long run goes on finding new ones.
"""

from __future__ import annotations

import ast
import contextlib
import datetime
import random
import re
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Callable

import fuzzgen
from differential import (
    Batch,
    DifferentialFailure,
    DuckMirror,
    QuerySpec,
    run_batches,
    run_differential,
)


@dataclass
class Config:
    seed: int = 0
    streams: int = 8  # streams per compiled query (pull and push alternate)
    events: int = 60  # row changes per stream
    target_rows: int = 12  # rows per relation the streams hover around
    null_rate: float = 0.1  # NULLs where the contract allows them
    shrink: bool = True
    max_shrinks: int = 3  # failures shrunk per complaint (the rest: raw)
    trust_input: bool = False  # compile the views to trust their input


# --- known bugs: (name, predicate over (select sql, failure text)) --------------------

# Each has a strict xfail fixture in tests/fixtures/regressions/ (named in
# the comment); when it flips to XPASS, delete the entry here.
KNOWN_BUGS: dict[str, Callable[[str, str], bool]] = {}


def known_bug(select_sql: str, failure: str) -> str | None:
    for name, hits in KNOWN_BUGS.items():
        if hits(select_sql, failure):
            return name
    return None


# --- compiling ------------------------------------------------------------------------


@contextlib.contextmanager
def unformatted():
    """Compile without black's formatting (80% of the compile time): black
    only re-lays out the module's text, which must already be valid Python
    (tests/test_generated.py checks the formatted modules)."""
    from dynyan.compiler import render

    saved = render.black.format_str
    render.black.format_str = lambda text, mode=None: text
    try:
        yield
    finally:
        render.black.format_str = saved


_COMPILED: dict[str, tuple] = {}  # query text -> (module, refusal), while shrinking


def compile_query(text: str, cache: bool = False, trust_input: bool = False):
    """(module, None), or (None, refusal message); other exceptions propagate."""
    import dynyan
    from dynyan.errors import CompilerBug, DynyanError

    if cache and (text, trust_input) in _COMPILED:
        return _COMPILED[text, trust_input]
    try:
        out = dynyan.load(text, trust_input=trust_input), None
    except CompilerBug as err:  # a crash inside the compiler, not a refusal
        raise err.__cause__ or err
    except DynyanError as err:
        out = None, f"{type(err).__name__}: {err}"
    if cache:
        if len(_COMPILED) > 200:
            _COMPILED.clear()
        _COMPILED[text, trust_input] = out
    return out


def refusal_kind(message: str) -> str:
    """A refusal without its query-specific details (for the tally)."""
    first = re.sub(r"line \d+, column \d+: ", "", message.splitlines()[0])
    first = re.sub(r"\(.*", "", first)
    first = re.sub(r"\b[ar]\d+(\.\w+)?\b|\bs\d+\b|\bi?a\d\b", "_", first)
    return re.split(r": |; ", first, maxsplit=2)[:2][-1][:80].strip()


# --- running pairs ------------------------------------------------------------------

INT_VALUES = range(0, 5)  # integer values of the fuzzer's streams


def fuzz_spec(text: str, name: str) -> QuerySpec:
    """The query's spec, its integer domains cut to INT_VALUES (the literals
    the generator writes are 0..4): fewer values, more join partners, more
    checks with non-empty results."""
    spec = QuerySpec.parse(text, name=name)
    for key, pool in spec.domains.items():
        if pool and all(isinstance(v, int) for v in pool):
            spec.domains[key] = [v for v in pool if v in INT_VALUES] or pool
    return spec


@dataclass
class Failure:
    index: int  # query number
    stream: int  # stream number (-1: the compile failed)
    push: bool
    query: fuzzgen.Query
    what: str  # the complaint
    detail: str  # the whole failure message
    batches: list = field(default_factory=list)
    known: str | None = None
    trust_input: bool = False  # the view was compiled to trust its input


def pair_seed(config: Config, index: int, stream: int) -> int:
    return config.seed * 1_000_003 + index * 101 + stream


def query_of(config: Config, index: int) -> fuzzgen.Query:
    return fuzzgen.generate(random.Random(f"fuzz/{config.seed}/{index}"))


def run_query(index: int, config: Config) -> dict:
    """Query `index`: compile it, run its streams. Returns its counts and
    failures (as `Failure`s, not shrunk)."""
    q = query_of(config, index)
    text = q.text()
    out = {
        "index": index,
        "tags": sorted(set(q.tags)),
        "pairs": 0,
        "updates": 0,
        "events": 0,
        "checks": 0,
        "nontrivial": 0,
        "failures": [],
    }
    try:
        module, refusal = compile_query(text, trust_input=config.trust_input)
    except Exception as err:  # noqa: BLE001 - a compiler crash is a failure
        what = f"compiling raised {type(err).__name__}: {err}"
        out["compiled"] = False
        out["failures"].append(Failure(index, -1, False, q, what, what))
        return out
    if module is None:
        out["compiled"] = False
        out["refusal"] = refusal_kind(refusal)
        return out
    out["compiled"] = True
    spec = fuzz_spec(text, f"q{index}")
    no_null = q.no_null()
    mirror = DuckMirror(spec)
    for s in range(config.streams):
        push = s % 2 == 1
        try:
            stats = run_differential(
                spec,
                module,
                seed=pair_seed(config, index, s),
                n_events=config.events,
                push=push,
                target_rows=config.target_rows,
                null_rate=config.null_rate,
                no_null=no_null,
                mirror=mirror,
                warm=s % 4 != 3,  # every fourth stream starts from empty
            )
        except DifferentialFailure as err:
            f = Failure(index, s, push, q, err.what, str(err), list(err.batches))
            f.trust_input = config.trust_input
            f.known = known_bug(q.select_sql(), str(err))
            out["failures"].append(f)
            stats = {"batches": err.batch_no, "events": 0, "nontrivial": 0}
        except Exception as err:  # noqa: BLE001 - reported, not fatal to the run
            what = f"harness raised {type(err).__name__}: {err}"
            out["failures"].append(Failure(index, s, push, q, what, what))
            stats = {"batches": 0, "events": 0, "nontrivial": 0}
        out["pairs"] += 1
        out["updates"] += stats["batches"]
        out["events"] += stats["events"]
        out["checks"] += stats["batches"] + 1
        out["nontrivial"] += stats["nontrivial"]
    mirror.close()
    return out


# --- replaying and shrinking ----------------------------------------------------------


def signature(what: str) -> str:
    """The kind of a complaint: without rows, values and numbers."""
    what = re.sub(r"\(.*", "", what)
    what = re.sub(r"\d+", "N", what)
    return what.strip()[:60]


def replay(
    q: fuzzgen.Query, batches: list[Batch], push: bool, trust_input: bool = False
):
    """The complaint of replaying `batches` on query `q` (None: it passes; ""
    when the candidate is not a valid test: refused query, invalid stream)."""
    text = q.text()
    try:
        module, refusal = compile_query(text, cache=True, trust_input=trust_input)
    except Exception as err:  # noqa: BLE001
        return f"compiling raised {type(err).__name__}: {err}"
    if module is None:
        return ""
    try:
        spec = fuzz_spec(text, "shrink")
    except Exception:  # noqa: BLE001 - DuckDB refuses the candidate
        return ""
    rels = set(spec.relations)
    batches = [b for b in batches if b.relation in rels]
    if not valid(batches, spec.relations):
        return ""
    try:
        run_batches(spec, module, batches, push=push)
    except DifferentialFailure as err:
        if "DuckDB refused" in err.what:
            return ""
        return err.what
    except Exception as err:  # noqa: BLE001
        return f"harness raised {type(err).__name__}: {err}"
    return None


def valid(batches: list[Batch], relations) -> bool:
    """No batch deletes more copies of a row than the database holds."""
    db: dict[str, Counter] = {r: Counter() for r in relations}
    for b in batches:
        c = db[b.relation]
        for row, m in b.changes():
            c[row] += m
            if c[row] < 0:
                return False
    return True


def _ddmin(items: list, fails: Callable[[list], bool]) -> list:
    """Delta debugging: a 1-minimal sublist of `items` that still fails."""
    n = 2
    while len(items) >= 2:
        chunk = max(1, len(items) // n)
        reduced = False
        for start in range(0, len(items), chunk):
            rest = items[:start] + items[start + chunk :]
            if rest and fails(rest):
                items, n, reduced = rest, max(n - 1, 2), True
                break
        if not reduced:
            if n >= len(items):
                break
            n = min(len(items), n * 2)
    return items


def _shrink_batches(q, batches, push, same, trust_input=False) -> list[Batch]:
    batches = _ddmin(list(batches), lambda bs: same(replay(q, bs, push, trust_input)))
    # then the rows inside each batch
    for i in range(len(batches)):
        b = batches[i]
        changes = b.changes()
        if len(changes) < 2:
            continue

        def fails(subset, i=i):
            trial = batches[:i] + [_batch(b.relation, subset)] + batches[i + 1 :]
            return same(replay(q, trial, push, trust_input))

        kept = _ddmin(changes, fails)
        batches[i] = _batch(b.relation, kept)
    return batches


def _batch(relation: str, changes: list[tuple[tuple, int]]) -> Batch:
    if len(changes) == 1 and abs(changes[0][1]) == 1:
        row, m = changes[0]
        return Batch("insert" if m > 0 else "delete", relation, [row])
    return Batch("update", relation, [r for r, _ in changes], [m for _, m in changes])


def _query_candidates(q: fuzzgen.Query):
    for i in range(len(q.where)):
        yield replace(q, where=q.where[:i] + q.where[i + 1 :])
    for i in range(len(q.having)):
        yield replace(q, having=q.having[:i] + q.having[i + 1 :])
    for a in q.atoms:
        smaller = q.without_atom(a.alias)
        if smaller is not None:
            yield smaller
    if len(q.items) > 1:
        for i in range(len(q.items)):
            yield replace(q, items=q.items[:i] + q.items[i + 1 :])
    for i in range(len(q.group_by)):
        key = q.group_by[i]
        yield replace(
            q,
            group_by=q.group_by[:i] + q.group_by[i + 1 :],
            items=[p for p in q.items if p != key] or q.items,
        )
    if q.distinct:
        yield replace(q, distinct=False)
    if q.tail:
        yield replace(q, tail="")
    if q.set_op:
        yield replace(q, set_op="", set_filter=None)
    if q.set_filter:
        yield replace(q, set_filter=None)
    if q.ctes:  # a CTE nobody reads (its atom was dropped)
        for i in range(len(q.ctes)):
            yield replace(q, ctes=q.ctes[:i] + q.ctes[i + 1 :])


def shrink(f: Failure, budget_s: float = 300.0) -> Failure:
    """A smaller query and update sequence with the same complaint."""
    want = signature(f.what)
    deadline = time.monotonic() + budget_s

    def same(what) -> bool:
        return bool(what) and signature(what) == want and time.monotonic() < deadline

    q, batches, trust = f.query, list(f.batches), f.trust_input
    if f.stream >= 0:
        batches = _shrink_batches(q, batches, f.push, same, trust)
    changed = True
    while changed and time.monotonic() < deadline:
        changed = False
        for cand in _query_candidates(q):
            if same(replay(cand, batches, f.push, trust)):
                q, changed = cand, True
                rels = set(QuerySpec.parse(q.text()).relations)
                batches = [b for b in batches if b.relation in rels]
                break
    if f.stream >= 0:
        batches = _shrink_batches(q, batches, f.push, same, trust)
    what = replay(q, batches, f.push, trust) or f.what
    return replace(f, query=q, batches=batches, what=what)


# --- regression fixtures --------------------------------------------------------------

_RELS = re.compile(r"CREATE TABLE (\w+)")


def fixture_text(f: Failure, description: str, origin: str, xfail: str = "") -> str:
    """A self-contained regression fixture: comment header, the schema of
    the tables the query reads, the SELECT, the updates as comments."""
    q = f.query
    spec = QuerySpec.parse(q.text())
    schema = [
        line
        for line in fuzzgen.SCHEMA.splitlines()
        if _RELS.match(line).group(1) in spec.relations
    ]
    lines = [f"-- {description}", f"-- found by {origin}"]
    lines.append(f"-- mode: {'push' if f.push else 'pull'}")
    if xfail:
        lines.append(f"-- xfail: {xfail}")
    lines += [f"-- complaint: {f.what.splitlines()[0][:200]}"]
    # the updates come before the SQL: a comment after the last statement
    # is refused by the compiler's query-file reader
    for b in f.batches:
        lines.append(f"-- update {b.relation} {_pylit(b.changes())}")
    lines += schema + [q.select_sql() + ";"]
    return "\n".join(lines) + "\n"


def _pylit(value) -> str:
    """repr, with NaN and infinities spelled so that `_literal` reads them."""
    if isinstance(value, float) and (value != value or value in (_INF, -_INF)):
        return "float('nan')" if value != value else f"float('{value}')"
    if isinstance(value, tuple):
        inner = ", ".join(_pylit(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(_pylit(v) for v in value) + "]"
    return repr(value)


_INF = float("inf")


def parse_fixture(text: str) -> dict:
    """The header fields, the query text and the batches of a fixture."""
    header: dict = {"xfail": None, "mode": "pull", "trust_input": False}
    batches = []
    for line in text.splitlines():
        if line.startswith("--") and "compiled with --trust-input" in line:
            header["trust_input"] = True
        m = re.match(r"-- (mode|xfail|complaint): (.*)", line)
        if m:
            header[m.group(1)] = m.group(2).strip()
        m = re.match(r"-- update (\w+) (.*)", line)
        if m:
            batches.append(_batch(m.group(1), _literal(m.group(2))))
    header["batches"] = batches
    header["push"] = header["mode"] == "push"
    return header


def _literal(text: str):
    """A Python literal of tuples, lists, numbers, strings, None, dates and
    float('nan'/'inf'); nothing else is evaluated."""

    def ev(node):
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, (ast.Tuple, ast.List)):
            items = [ev(e) for e in node.elts]
            return tuple(items) if isinstance(node, ast.Tuple) else items
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -ev(node.operand)
        if isinstance(node, ast.Call) and not node.keywords:
            name = ast.unparse(node.func)
            args = [ev(a) for a in node.args]
            if name == "datetime.date" and all(isinstance(a, int) for a in args):
                return datetime.date(*args)
            if name == "float" and args in (["nan"], ["inf"], ["-inf"]):
                return float(args[0])
        raise ValueError(f"not a fixture literal: {ast.unparse(node)}")

    return ev(ast.parse(text, mode="eval").body)


def check_fixture(text: str) -> None:
    """Replay a regression fixture against DuckDB (raises DifferentialFailure)."""
    import dynyan

    fx = parse_fixture(text)
    spec = QuerySpec.parse(text, name="regression")
    module = dynyan.load(text, trust_input=fx["trust_input"])
    assert valid(fx["batches"], spec.relations), "the fixture's updates are invalid"
    run_batches(spec, module, fx["batches"], push=fx["push"])
