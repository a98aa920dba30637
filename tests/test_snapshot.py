"""snapshot() / restore() of generated views.

For several generated modules (the committed fq1, fq4, gcq1, gcq7 and q4
from generated/, loaded with `dynyan.compiler.import_file`, and fixture
queries with MIN/MAX compiled to a file in the same way) a random update
stream (tests/differential.py, with deletions) is split in two: the first
part goes into view A, A's snapshot is pickled and unpickled and restored
into a fresh view B, and then both views get the second part; after every
step their results (rows(), enumerate(), and in push mode the reported
deltas) are identical. A snapshot is independent of the view it came from,
restoring replaces whatever the target held, and a snapshot of another
query is refused. The pickle also loads in a new process.
"""

from __future__ import annotations

import copy
import glob
import pickle
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

import dynyan
from dynyan.compiler import compile_sql, import_file
from differential import QuerySpec, UpdateStream

ROOT = Path(__file__).resolve().parent.parent
AGG = ROOT / "tests" / "fixtures" / "agg"


def _strip_comments(sql: str) -> str:
    """The differential harness cannot take a comment between statements."""
    sql = re.sub(r"/\*.*?\*/", "", sql, flags=re.DOTALL)
    return "\n".join(l for l in sql.splitlines() if not l.lstrip().startswith("--"))


def _generated_path(name: str) -> Path:
    paths = sorted(
        glob.glob(str(ROOT / "generated" / "**" / f"{name}.py"), recursive=True)
    )
    assert paths, f"generated/{name}.py not found"
    return Path(paths[0])


def _query_path(name: str) -> Path:
    paths = sorted(
        glob.glob(str(ROOT / "queries" / "**" / f"{name}.sql"), recursive=True)
    )
    assert paths, f"queries/{name}.sql not found"
    return Path(paths[0])


def _generated_case(name: str):
    from dynyan.compiler.source import read_query

    sql, schema = read_query(str(_query_path(name)), None)
    spec = QuerySpec.parse((schema or "") + "\n" + _strip_comments(sql), name=name)
    return _generated_path(name), spec


def _fixture_case(stem: str, tmp_dir: Path):
    path = AGG / f"{stem}.sql" if "/" not in stem else AGG.parent / f"{stem}.sql"
    out = tmp_dir / f"{Path(stem).name}.py"
    out.write_text(compile_sql(path.read_text(), source=path.name))
    return out, QuerySpec.from_file(path)


GENERATED = ["fq1", "fq4", "gcq1", "gcq7", "q4"]  # q4: EXISTS; gcq7: not free-connex
# sql/55, sql/57: ORDER BY (with LIMIT/OFFSET) enumerated from a sorted root
FIXTURES = [
    "22_min_max",
    "37_not_free_connex_min_max",
    "sql/55_ranked_order_by",
    "sql/57_ranked_order_by_push",
    # the outer leaf reads its subquery view's dict: restore links them again
    "sql/202_in_grouped_subquery_sharing_the_outer_leaf",
]
CASES = GENERATED + FIXTURES


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("snapshot_modules")
    out = {}
    for name in CASES:
        path, spec = (
            _generated_case(name) if name in GENERATED else _fixture_case(name, tmp)
        )
        out[name] = (import_file(str(path)), spec, path)
    return out


def stream(spec, seed, events):
    return list(UpdateStream(spec, seed=seed, target_rows=14).batches(events))


def rows(view):
    return Counter(view.rows())


def enumerated(view):
    """enumerate()'s (row, multiplicity-or-payload) pairs as a bag."""
    return Counter(repr(pair) for pair in view.enumerate())


def new_view(mod, push):
    return mod.View(push=True) if push else mod.View()


@pytest.mark.parametrize("push", [False, True], ids=["pull", "push"])
@pytest.mark.parametrize("name", CASES)
def test_restored_view_continues_identically(name, push, cases):
    mod, spec, _ = cases[name]
    batches = stream(spec, seed=11, events=500)
    half = len(batches) // 2
    a = new_view(mod, push)
    for b in batches[:half]:
        b.apply(a)
    snap = a.snapshot()
    frozen = pickle.dumps(snap)
    restored = new_view(mod, push)
    restored.restore(pickle.loads(frozen))
    assert rows(restored) == rows(a)
    assert (
        sum(1 for _ in restored.rows()) > 0 or name == "gcq7"
    ), "the snapshot should hold a result"
    for i, b in enumerate(batches[half:]):
        b.apply(a)
        b.apply(restored)
        assert rows(restored) == rows(a), f"step {half + i}: {b}"
        assert enumerated(restored) == enumerated(a), f"step {half + i}"
        if spec.ordered:  # the same rows in the same order
            assert list(restored.rows()) == list(a.rows()), f"step {half + i}"
        if push:
            assert Counter(dict(restored.deltas())) == Counter(
                dict(a.deltas())
            ), f"step {half + i}"
    # the snapshot did not follow A: restoring it again gives the state at `half`
    again = new_view(mod, push)
    again.restore(snap)
    replay = new_view(mod, push)
    for b in batches[:half]:
        b.apply(replay)
    assert rows(again) == rows(replay)


@pytest.mark.parametrize("name", CASES)
def test_restore_replaces_the_target_state(name, cases):
    mod, spec, _ = cases[name]
    source = mod.View()
    for b in stream(spec, seed=3, events=200):
        b.apply(source)
    target = mod.View()
    for b in stream(spec, seed=4, events=200):
        b.apply(target)
    target.restore(source.snapshot())
    assert rows(target) == rows(source)
    # and the target keeps no reference into the source
    for b in stream(spec, seed=5, events=100):
        b.apply(target)
    fresh = mod.View()
    fresh.restore(source.snapshot())
    assert rows(fresh) == rows(source)


@pytest.mark.parametrize("name", CASES)
def test_snapshot_does_not_alias_the_view(name, cases):
    """Changing the view after snapshot() leaves the snapshot as it was, and
    restore() copies: two views restored from one snapshot are independent."""
    mod, spec, _ = cases[name]
    view = mod.View()
    batches = stream(spec, seed=8, events=300)
    for b in batches[:20]:
        b.apply(view)
    snap = view.snapshot()
    image = pickle.dumps(snap)
    for b in batches[20:]:
        b.apply(view)
    assert pickle.dumps(snap) == image
    one, two = mod.View(), mod.View()
    one.restore(snap)
    two.restore(snap)
    for b in batches[20:]:
        b.apply(one)
    assert rows(one) == rows(view)
    assert pickle.dumps(snap) == image
    check = mod.View()
    check.restore(pickle.loads(image))
    assert rows(two) == rows(check)


def test_snapshot_of_another_query_is_refused(cases):
    views = {name: cases[name][0].View() for name in CASES}
    for name, view in views.items():
        for b in stream(cases[name][1], seed=2, events=60):
            b.apply(view)
    for name, view in views.items():
        err = sys.modules[type(view).__module__].ViewError
        before = pickle.dumps(view.snapshot())
        for other, source in views.items():
            if other == name:
                continue
            with pytest.raises(err, match="another query"):
                view.restore(source.snapshot())
        for junk in [None, {}, "snapshot", 17, {"query": "0" * 16, "state": {}}]:
            with pytest.raises(err):
                view.restore(junk)
        assert pickle.dumps(view.snapshot()) == before


def test_same_query_compiled_twice_shares_snapshots(cases):
    """QUERY_ID depends on the query, not on the file: the committed fq4 and
    a fresh compile of queries/tpch/fq4.sql exchange snapshots."""
    from dynyan.compiler.source import read_query

    committed, spec, _ = cases["fq4"]
    fresh = dynyan.load(*read_query(str(_query_path("fq4")), None))
    a = committed.View()
    for b in stream(spec, seed=6, events=200):
        b.apply(a)
    b_view = fresh.View()
    b_view.restore(a.snapshot())
    assert rows(b_view) == rows(a)


@pytest.mark.parametrize("name", ["gcq1", "22_min_max"])
def test_pickle_loads_in_a_new_process(name, cases, tmp_path):
    """A checkpoint outlives the process: the snapshot (with its sorted
    indexes) unpickles after importing the module file again."""
    mod, spec, path = cases[name]
    view = mod.View()
    for b in stream(spec, seed=9, events=300):
        b.apply(view)
    blob = tmp_path / "snap.pkl"
    blob.write_bytes(pickle.dumps(view.snapshot()))
    expected = sorted(map(repr, view.rows()))
    script = (
        "import pickle, sys\n"
        "from dynyan.compiler import import_file\n"
        f"mod = import_file({str(path)!r})\n"
        f"snap = pickle.loads(open({str(blob)!r}, 'rb').read())\n"
        "view = mod.View()\n"
        "view.restore(snap)\n"
        "print('\\n'.join(sorted(map(repr, view.rows()))))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == expected


def test_restore_refuses_a_snapshot_with_another_layout(cases):
    """QUERY_ID is a hash of the query text: a snapshot with another state
    layout (an older dynyan, a truncated file) must be refused too."""
    mod, spec, _ = cases["fq4"]
    view = mod.View()
    for b in stream(spec, seed=1, events=100):
        b.apply(view)
    snap = view.snapshot()
    damaged = copy.deepcopy(snap)
    damaged["state"].pop(sorted(damaged["state"])[0])
    target = mod.View()
    for b in stream(spec, seed=2, events=30):
        b.apply(target)
    before = pickle.dumps(target.snapshot())
    with pytest.raises(mod.ViewError, match="damaged"):
        target.restore(damaged)
    older, other = copy.deepcopy(snap), copy.deepcopy(snap)
    del older["layout"]  # a module from before snapshots carried LAYOUT_ID
    other["layout"] = "0" * 16
    for bad in (older, other):
        with pytest.raises(mod.ViewError, match="another state layout"):
            target.restore(bad)
    assert pickle.dumps(target.snapshot()) == before  # refused: nothing changed
    target.restore(snap)
    assert rows(target) == rows(view)


def test_restore_checks_a_subquery_part_before_any_change(cases):
    """q4 (EXISTS) keeps its inner view's snapshot as one part: a damaged
    inner part is refused before the outer view changes."""
    mod, spec, _ = cases["q4"]
    view = mod.View()
    for b in stream(spec, seed=3, events=200):
        b.apply(view)
    snap = view.snapshot()
    sub = next(k for k in snap["state"] if k.startswith("sub:"))
    damaged = copy.deepcopy(snap)
    damaged["state"][sub]["layout"] = "0" * 16
    target = mod.View()
    before = pickle.dumps(target.snapshot())
    with pytest.raises(mod.ViewError, match="another state layout"):
        target.restore(damaged)
    assert pickle.dumps(target.snapshot()) == before
    target.restore(snap)
    assert rows(target) == rows(view)
