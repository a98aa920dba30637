"""The trigger program (dynyan/compiler/triggers.py): the structures and the
steps of an update that the renderer turns into code and `explain --triggers`
prints."""

import re
from pathlib import Path

import pytest
from differential import rows_of

from dynyan.cli import main
from dynyan.compiler import compile_query, compile_sql, load
from dynyan.compiler.render import _computed_once, _reuse_values
from dynyan.compiler.source import read_query
from dynyan.compiler.triggers import (
    Count,
    Emit,
    Filter,
    Payload,
    Project,
    Propagate,
    Update,
    Weigh,
    trigger_program,
)

ROOT = Path(__file__).resolve().parent.parent
QUERIES = sorted(
    q
    for folder in ("tpch", "gcq", "tpch/spec")
    for q in (ROOT / "queries" / folder).glob("*.sql")
    if q.name != "schema.sql"
)


def plan_of(name: str):
    sql, schema = read_query(str(ROOT / "queries" / f"{name}.sql"), None)
    return compile_query(sql, schema)


def steps_of(program, relation: str) -> list:
    (trigger,) = [t for t in program.triggers if t.relation == relation]
    return list(trigger.steps)


def test_q3_weighs_by_lookup_up_the_guards_and_loops_below_a_non_guard():
    program = trigger_program(plan_of("tpch/q3"))
    orders = steps_of(program, "orders")
    assert [type(s) for s in orders[:4]] == [Filter, Project, Payload, Count]
    weighs = [s for s in orders if isinstance(s, Weigh)]
    assert [w.how for w in weighs] == ["lookup", "lookup"]
    customer = [s for s in steps_of(program, "customer") if isinstance(s, Weigh)]
    assert customer[0].how == "loop"  # binds the orders of the customer
    assert customer[0].structure.entry == (
        "o_orderkey",
        "o_orderdate",
        "o_shippriority",
    )
    assert isinstance(steps_of(program, "lineitem")[-1], Emit)


def test_an_inequality_edge_is_weighed_by_a_range_sum_or_a_sorted_loop():
    program = trigger_program(plan_of("gcq/gcq1"))
    s_weighs = [w for w in steps_of(program, "s") if isinstance(w, Weigh)]
    assert [w.how for w in s_weighs] == ["range", "range"]
    assert all(w.structure.kind == "rangesum" for w in s_weighs)
    t_weighs = [w for w in steps_of(program, "t") if isinstance(w, Weigh)]
    assert t_weighs[0].how == "loop" and t_weighs[0].structure.kind == "sorted"
    assert str(t_weighs[0].theta) == "g > e"


@pytest.mark.parametrize(
    "name, kept", [("gcq/gcq7", True), ("tpch/q16", True), ("tpch/q3", False)]
)
def test_emit_runs_on_every_update_exactly_when_the_result_is_kept(name, kept):
    """Not free-connex (GCQ7), COUNT(DISTINCT) (Q16): the module keeps the
    result and follows N's deltas in pull mode too, and explain says so in
    the emit step and the cost; otherwise only push mode emits."""
    sql, schema = read_query(str(ROOT / "queries" / f"{name}.sql"), None)
    plan = compile_query(sql, schema)
    assert plan.materialised is kept
    for trigger in trigger_program(plan).triggers:
        (emit,) = [s for s in trigger.steps if isinstance(s, Emit)]
        assert emit.always is kept
        assert ("pull mode too" in trigger.cost()) is kept
        assert ("(push mode)" in str(emit)) is not kept
    pull_view = load(sql, schema).View()
    assert (pull_view._pending is not None) is kept


@pytest.mark.parametrize("name, kept", [("tpch/q16", True), ("tpch/q3", False)])
def test_a_kept_result_needs_no_root_totals_and_only_presence_below(name, kept):
    """Where the module keeps the result, nothing reads the totals of a root
    without an atom: it keeps none, and its two children (both in N) gate
    each other's emit by whether the other has tuples at the key, read from
    the other's groups; the weights indexes go."""
    plan = plan_of(name)
    program = trigger_program(plan)
    assert (not program.nodes[plan.root].structures) is kept
    source = compile_sql(*read_query(str(ROOT / "queries" / f"{name}.sql"), None))
    root = f"self.{program.nodes[plan.root].name}_root = {{}}"
    assert (root not in source) is kept
    for relation in ("partsupp", "part") if kept else ():
        (weigh,) = [s for s in steps_of(program, relation) if isinstance(s, Weigh)]
        assert weigh.how == "present" and weigh.structure.kind == "groups"
        assert f"Δ only where {weigh.structure.attr}" in str(weigh)
        assert f"in {weigh.structure.attr}:" in source
    assert ("_count_by_" not in source) is kept


@pytest.mark.parametrize("query", QUERIES, ids=lambda q: q.stem)
def test_a_loop_step_is_exactly_a_non_guard_hop(query):
    """The cost model multiplies by a fan-out at each loop step: those must
    be the hops where the child does not hold its parent's variables."""
    sql, schema = read_query(str(query), None)
    plan = compile_query(sql, schema)
    for trigger in trigger_program(plan).triggers:
        node, looped = trigger.leaf, False
        for step in trigger.steps:
            if isinstance(step, Weigh):
                looped = step.how == "loop"
            if isinstance(step, Propagate):
                assert looped == (not plan.is_guard(node)), (trigger.relation, node)
                node, looped = step.node, False


@pytest.mark.parametrize(
    "name", ["tpch/q3", "tpch/fq1", "gcq/gcq1", "gcq/gcq2", "tpch/spec/q15"]
)
def test_the_module_keeps_exactly_the_programs_structures(name):
    """Every structure of the program is an attribute of the module the
    renderer writes, each update step writes to it, and nothing else is kept
    per node."""
    sql, schema = read_query(str(ROOT / "queries" / f"{name}.sql"), None)
    plan = compile_query(sql, schema)
    program = trigger_program(plan)
    source = compile_sql(sql, schema)
    attrs = set(re.findall(r"        # .*\n        self\.(\w+) = \{\}\n", source))
    structures = {s.attr for keeps in program.nodes for s in keeps.structures}
    assert structures <= attrs
    for trigger in program.triggers:
        for step in trigger.steps:
            if isinstance(step, Update):
                assert f"self.{step.structure.attr}" in source


def test_explain_triggers_prints_every_relation_and_step(capsys):
    assert main(["explain", "--triggers", str(ROOT / "queries/tpch/q3.sql")]) == 0
    out = capsys.readouterr().out
    program = out[out.index("Triggers") :]
    for relation in ("orders", "customer", "lineitem"):
        assert f"on {relation}:" in program
    assert "weigh    Δ × customer_count_by_c_custkey[c_custkey]  (O(1))" in program
    assert "filter   (lineitem.l_shipdate > DATE '1995-03-15')" in program
    assert "payload  Δ = m × (1, (lineitem.l_extendedprice" in program


def test_explain_triggers_names_the_dicts_shared_with_inner_views(capsys):
    """Q18's lineitem leaf reads its IN subquery view's sums: explain says
    so, and a query without such a dict says nothing of it."""
    assert main(["explain", "--triggers", str(ROOT / "queries/tpch/q18.sql")]) == 0
    out = capsys.readouterr().out
    assert (
        "lineitem_count_by_o_orderkey: the dict lineitem_2_root of inner view in_1"
        in out
    )
    assert main(["explain", "--triggers", str(ROOT / "queries/tpch/q3.sql")]) == 0
    assert "One dict with an inner view's" not in capsys.readouterr().out


def test_an_inner_view_reading_a_derived_table_again_is_fed_its_changes(capsys):
    """Q15's scalar subquery reads revenue0 as the query does: its view takes
    the changes of the query's revenue0 view (one view takes the lineitem
    rows), explain says so; Q3 has no such view."""
    from dynyan.compiler import compile_sql

    assert main(["explain", "--triggers", str(ROOT / "queries/tpch/spec/q15.sql")]) == 0
    out = capsys.readouterr().out
    assert "inner view scalar_2 takes the changes of inner view derived1" in out
    source = compile_sql(*read_query(str(ROOT / "queries/tpch/spec/q15.sql"), None))
    outer = source[source.index("\nclass View:") :]  # the query's own view
    assert outer.count("sub._apply_lineitem(row, d)") == 1
    assert "reads this result too" in outer
    assert main(["explain", "--triggers", str(ROOT / "queries/tpch/q3.sql")]) == 0
    assert "Inner views fed" not in capsys.readouterr().out


@pytest.mark.parametrize(
    "name", ["tpch/spec/q2", "tpch/spec/q13", "tpch/spec/q15", "tpch/spec/q22"]
)
def test_explain_triggers_covers_inner_views(name, capsys):
    assert main(["explain", "--triggers", str(ROOT / "queries" / f"{name}.sql")]) == 0
    out = capsys.readouterr().out
    assert "Inner view " in out and out.count("Triggers (") >= 2


def test_the_design_documents_example_is_what_explain_prints(capsys):
    """docs/design.md §5 shows Q3's customer trigger: it must stay true."""
    design = (ROOT / "docs" / "design.md").read_text()
    start = design.index("```text\non customer:")
    shown = design[start + len("```text\n") : design.index("```", start + 7)]
    program = trigger_program(plan_of("tpch/q3"))
    (customer,) = [t for t in program.triggers if t.relation == "customer"]
    assert shown == str(customer) + "\n"


def test_a_test_index_keeps_one_row_inline():
    """A test's index of rows by key (and compared value) keeps a group of
    one row as the pair (row, count), a dict from its second row and the
    pair again when deletes leave one; the tests flip all the same."""
    sql = (
        "CREATE TABLE r (k INT NOT NULL, v INT NOT NULL);"
        "CREATE TABLE s (k INT NOT NULL, w INT NOT NULL);"
        "SELECT r.k, COUNT(*) AS n FROM r "
        "WHERE NOT EXISTS (SELECT * FROM s WHERE s.k = r.k AND s.w < 0) "
        "AND r.v > (SELECT MIN(s.w) FROM s WHERE s.k = r.k) GROUP BY r.k"
    )
    for trust in (False, True):
        view = load(sql, trust_input=trust).View()
        exists, scalar = (
            getattr(view, name)
            for kind in ("r_by_exists", "r_by_scalar")
            for name in vars(view)
            if name.startswith(kind)
        )
        view.insert("r", (1, 5))
        assert exists == {1: ((1, 5), 1)} and scalar == {1: {5: ((1, 5), 1)}}
        view.update("r", [(1, 5), (1, 7)])
        assert exists == {1: {(1, 5): 2, (1, 7): 1}}
        assert scalar == {1: {5: ((1, 5), 2), 7: ((1, 7), 1)}}
        assert list(view.rows()) == []
        view.insert("s", (1, 6))
        assert list(view.rows()) == [(1, 1)]
        view.update("r", [(1, 5), (1, 5)], [-1, -1])
        assert exists == {1: ((1, 7), 1)} and scalar == {1: {7: ((1, 7), 1)}}
        view.delete("s", (1, 6))
        view.insert("s", (1, 4))
        assert list(view.rows()) == [(1, 1)]
        view.insert("s", (1, -1))
        assert list(view.rows()) == []
        view.delete("s", (1, -1))
        assert list(view.rows()) == [(1, 1)]
        view.delete("r", (1, 7))
        assert exists == {} and scalar == {} and list(view.rows()) == []


def test_a_group_of_one_entry_is_kept_inline():
    """An index group is the pair (tuple, multiplicity) while it holds one
    entry, a dict from its second, a pair again when deletes leave one; the
    result and the state follow the rows, whatever the form."""
    from dynyan.compiler import load

    sql = """CREATE TABLE r (a INTEGER, b INTEGER); CREATE TABLE s (b INTEGER, c INTEGER);
        SELECT r.a, s.c FROM r, s WHERE r.b = s.b"""
    view = load(sql).View()
    groups = next(
        name
        for name, value in vars(view).items()
        if name.startswith("r_by_") and isinstance(value, dict)
    )
    view.insert("s", (1, 10))
    view.insert("r", (5, 1))
    assert getattr(view, groups) == {1: ((5, 1), 1)}
    view.insert("r", (6, 1))
    view.insert("r", (6, 1))
    assert getattr(view, groups) == {1: {(5, 1): 1, (6, 1): 2}}
    assert sorted(view.rows()) == [(5, 10), (6, 10), (6, 10)]
    view.delete("r", (5, 1))
    assert getattr(view, groups) == {1: ((6, 1), 2)}
    view.delete("r", (6, 1))
    assert getattr(view, groups) == {1: ((6, 1), 1)}
    assert list(view.rows()) == [(6, 10)]
    view.delete("r", (6, 1))
    assert getattr(view, groups) == {}
    assert list(view.rows()) == []


@pytest.mark.parametrize("trust_input", [False, True])
def test_a_distinct_subquerys_view_returns_the_change_of_its_row(trust_input):
    """The view of EXISTS over one table counts rows per key and its trigger
    returns the key's change when the count reaches or leaves 0 (no queued
    deltas); a relation the outer view keeps no rows of passes through it,
    and the result follows the rows."""
    from collections import Counter

    from dynyan.compiler import load

    sql = """CREATE TABLE r (a INTEGER, b INTEGER); CREATE TABLE s (b INTEGER, c INTEGER);
        SELECT r.a, COUNT(*) FROM r
        WHERE EXISTS (SELECT * FROM s WHERE s.b = r.b AND s.c > 0) GROUP BY r.a"""
    source = compile_sql(sql, trust_input=trust_input)
    assert "return (v_" in source and ", -1" in source
    view = load(sql, trust_input=trust_input).View(on_delta=lambda row, m: None)
    view.update("r", [(1, 7), (2, 7), (2, 8)])
    view.insert("s", (7, 1))
    view.insert("s", (7, 2))
    view.insert("s", (8, 0))  # filtered out: no change
    assert sorted(view.rows()) == [(1, 1), (2, 1)]
    assert Counter(view.deltas()) == Counter()
    view.delete("s", (7, 1))  # 7 still has a row
    assert sorted(view.rows()) == [(1, 1), (2, 1)]
    view.delete("s", (7, 2))  # 7 has none left
    assert sorted(view.deltas()) == [((1, 1), -1), ((2, 1), -1)]
    assert list(view.rows()) == []
    with pytest.raises(Exception, match="cannot delete"):
        view.delete("s", (7, 2))
    assert list(view.rows()) == []
    view.insert("s", (8, 3))
    assert list(view.rows()) == [(2, 1)]


def test_a_grouped_subquerys_view_returns_the_change_of_its_group():
    """A derived table's GROUP BY view whose paths have no loops returns the
    change of the one group an update reaches (its old and new rows), where
    its outer view applies it; a path that loops still queues deltas."""
    source = compile_sql(
        (ROOT / "tests/fixtures/agg/28_derived_aggregate.sql").read_text()
    )
    for rel in ("customer", "orders"):
        assert f"changes = sub._apply_{rel}(row, d)" in source
    # one row at a time nothing is queued (a batch still queues: see below)
    triggers = [m for m in source.split("\n    def ") if m.startswith("_apply_")]
    assert triggers and not any("_changes_of(sub._pending)" in m for m in triggers)


def test_push_mode_reports_a_groups_change_from_the_trigger_itself():
    """In push mode, insert() and delete() of a relation whose update reaches
    one group call a trigger that returns that group's change (no queued
    delta, no _flush); pull mode and update() keep the queuing trigger. Both
    report the same changes."""
    sql = (ROOT / "tests/fixtures/agg/06_having.sql").read_text()
    module = load(sql)
    assert "def _report_r(self, row, d):" in compile_sql(sql)
    pull, push, batched = module.View(), module.View(push=True), module.View(push=True)
    # (in place once the first row shows the view's own classes: see _decide)
    assert pull._direct["_triggers"]["r"] == pull._apply_r
    assert push._direct["_triggers"]["r"] == push._report_r
    rows = [(i, i, "ab"[i % 2], 0.75 * i, None) for i in range(6)]
    reported = 0
    for step, row in enumerate(rows + rows[::2]):
        if step < len(rows):
            push.insert("r", row)
            batched.update("r", [row])
        else:
            push.delete("r", row)
            batched.update("r", [row], [-1])
        assert push.deltas() == batched.deltas()
        reported += len(push.deltas())
    assert reported >= 6, "groups entered, changed and left the result"
    assert sorted(push.rows()) == sorted(batched.rows())


def test_a_one_group_trigger_reads_the_payload_it_wrote():
    """The report after an update of the root's flat index takes the entry
    the update wrote (None where it deleted it) rather than looking the
    group up again; an AVG of a DECIMAL divides its exact scaled sum once
    (not SUM's value, already rounded)."""
    sql = (
        "CREATE TABLE r (k INTEGER, v DECIMAL(10, 2) NOT NULL);\n"
        "SELECT k, SUM(v) AS s, AVG(v) AS a, COUNT(*) AS n FROM r GROUP BY k"
    )
    source = compile_sql(sql)
    start = source.index("def _report_r(")
    trigger = source[start : source.index("\n    def ", start)]
    (root,) = re.findall(r"self\.(\w+_root) = \{\}", source)
    assert f"self.{root}.get(" not in trigger.split("# atom r")[1]
    (sum_local,) = re.findall(r"(_a\d) = p\[1\] / 100\n", trigger)
    assert sum_local
    assert re.search(r"_a\d = p\[1\] / \(p\[0\] \* 100\)\n", trigger)
    view, reference = load(sql).View(push=True), load(sql).View()
    rows = [(1, 0.5), (1, 1.25), (2, 3.0), (1, 0.5)]
    for row, m in [(r, 1) for r in rows] + [(rows[2], -1), (rows[0], -1)]:
        before = {r[0]: r for r in reference.rows()}
        (view.insert if m > 0 else view.delete)("r", row)
        (reference.insert if m > 0 else reference.delete)("r", row)
        after = {r[0]: r for r in reference.rows()}
        expected = [(before[row[0]], -1)] if row[0] in before else []
        expected += [(after[row[0]], 1)] if row[0] in after else []
        assert view.deltas() == expected
    assert sorted(view.rows()) == sorted(reference.rows())


def test_an_aggregate_reuses_an_earlier_ones_value_only_as_a_whole():
    """`_reuse_values` replaces an earlier value's whole expression, in
    parentheses, by its local: not a call's arguments, not text with a
    string literal in it."""
    reused = _reuse_values(
        [
            ("_a0", "(p[1] / 100)"),
            ("_a1", "(p[1] / 100) / p[0]"),
            ("_a2", "f(p[1] / 100)"),
            ("_a3", "((p[1] / 100)) + (p[1] / 1000)"),
            ("_a4", "(p[2] + len('(x'))"),
            ("_a5", "(p[2] + len('(x')) * 2"),
        ]
    )
    assert [value for _, value in reused] == [
        "(p[1] / 100)",
        "_a0 / p[0]",
        "f(p[1] / 100)",
        "(_a0) + (p[1] / 1000)",
        "(p[2] + len('(x'))",
        "(p[2] + len('(x')) * 2",
    ]


def test_a_trusting_leaf_and_its_tests_index_keep_one_tuple_per_row():
    """Trusting mode: the index of a NOT IN test keeps of a row only the
    columns read (here the leaf's tuple), and the leaf's index holds that
    same object; a batch and a flip of the test keep the two in step."""
    sql = (
        "CREATE TABLE r (a INT NOT NULL, b INT NOT NULL, pad VARCHAR);"
        "CREATE TABLE s (b INT NOT NULL, bad INT);"
        "SELECT a, COUNT(DISTINCT b) FROM r "
        "WHERE b NOT IN (SELECT b FROM s WHERE bad = 1) GROUP BY a"
    )
    module = load(sql, trust_input=True)
    source = compile_sql(sql, trust_input=True)
    assert "_r = (row[0], row[1])" in source and "= _r\n" in source
    view = module.View()
    view.insert("r", (1, 10, "x" * 50))
    view.update("r", [(1, 11, "y"), (2, 10, "z")])
    (index,) = [v for k, v in vars(view).items() if k.startswith("r_by_in_")]
    kept = next(iter(index[10]))
    assert kept == (1, 10)
    assert any(entry is kept for entry in view.r_root)  # the leaf's tuples
    # the rows of the batch too: one tuple keys its sums, the test's changes,
    # then both indexes
    batched = [*rows_of(index[11]), *(k for k in index[10] if k == (2, 10))]
    assert batched == [(1, 11), (2, 10)]
    for kept in batched:
        assert any(entry is kept for entry in view.r_root), kept
    assert "_r = _k  # the leaf's tuple" in source
    view.insert("s", (10, 1))  # b = 10 is now excluded: rows withdrawn
    assert sorted(view.rows()) == [(1, 1)]
    view.delete("s", (10, 1))  # and applied again
    assert sorted(view.rows()) == [(1, 2), (2, 1)]


def test_a_payload_computes_a_shared_subexpression_once():
    """`_computed_once`: a parenthesised subexpression two payload entries
    compute is bound by its first occurrence and read by the later ones;
    entries that may skip part of their text (a NULL guard, `or`) keep it."""
    parts = [
        "d",
        "d * _floor((a * (1 - b)) * 100 + 0.5)",
        "d * _floor(((a * (1 - b)) * (1 + c)) * 100 + 0.5)",
        "(d * (a * (1 - b)) if a is not None else 0)",
        "d * (x or (a * (1 - b)))",
        "d * ((x, y) + (x, y))",
    ]
    assert _computed_once(parts) == [
        "d",
        "d * _floor((_x1 := a * (1 - b)) * 100 + 0.5)",
        "d * _floor((_x1 * (1 + c)) * 100 + 0.5)",
        *parts[3:],
    ]
    env = {"d": -1, "a": 12.5, "b": 0.25, "c": 0.5, "x": 0, "y": 1, "_floor": int}
    # the entries evaluated in order, as a tuple literal does: the same values
    assert eval("(" + ", ".join(_computed_once(parts)) + ",)", dict(env)) == eval(
        "(" + ", ".join(parts) + ",)", dict(env)
    )
    source = compile_sql(
        "CREATE TABLE l (k INTEGER, p DECIMAL(12, 2) NOT NULL, "
        "t DECIMAL(4, 2) NOT NULL, x DECIMAL(4, 2) NOT NULL);\n"
        "SELECT k, SUM(p * (1 - t)) AS a, SUM(p * (1 - t) * (1 + x)) AS b "
        "FROM l GROUP BY k"
    )
    assert "(_x1 := c_l_p * (1.0 - c_l_t))" in source.replace("\n", " ")


def test_a_batch_adds_a_row_of_multiplicity_one_without_a_product():
    """A batch adds a row inserted or deleted once to its key's sums with no
    product by d (`+=`/`-=` of the factors), and a single update's payload
    of a row inserted once is its factors; any other multiplicity keeps the
    product. Rows of every kind and many per key: the batch ends where the
    same changes applied one at a time end, sums exact."""
    sql = (
        "CREATE TABLE l (k INTEGER NOT NULL, p DECIMAL(12, 2) NOT NULL, "
        "t DECIMAL(4, 2) NOT NULL, n DECIMAL(6, 2));"
        "SELECT k, SUM(p * (1 - t)) AS a, SUM(n) AS b, COUNT(*) AS c "
        "FROM l GROUP BY k"
    )
    source = compile_sql(sql, trust_input=True)
    batch = source[source.index("def _batch_l") :]
    one = batch[batch.index("elif d == 1:") : batch.index("elif d == -1:")]
    assert "d *" not in one and "_o[0] += 1" in one
    assert "_floor(c_l_n * 100.0 + 0.5) if c_l_n is not None else 0" in one
    apply = source[source.index("def _apply_l") : source.index("def _batch_l")]
    # (the payload's entries as locals, each multiplied by d unless d is 1)
    assert "if d != 1:" in apply and "= d * _pv" in apply
    rows = [
        (i % 3, 10.25 + i, (i % 7) / 100, None if i % 4 == 0 else i / 4)
        for i in range(40)
    ]
    for trust_input in (False, True):
        module = load(sql, trust_input=trust_input)
        batched, single, each = module.View(), module.View(), module.View()
        batched.update("l", rows + rows, [1] * 40 + [2] * 40)
        mults = [-1 if i % 2 else -2 for i in range(40)] + [1] * 5 + [0] * 5
        changes = rows + rows[:10]
        batched.update("l", changes, mults)
        for row in rows:
            for _ in range(3):
                single.insert("l", row)
        for row, m in zip(changes, mults):
            for _ in range(abs(m)):
                (single.insert if m > 0 else single.delete)("l", row)
        for row in rows:  # one row per update(): its multiplicity as it is
            each.update("l", [row], [3])
        for row, m in zip(changes, mults):
            each.update("l", [row], [m])
        assert sorted(batched.rows()) == sorted(single.rows())
        assert sorted(each.rows()) == sorted(single.rows())
        assert len(list(batched.rows())) == 3


def test_an_integer_literal_beside_a_decimal_is_written_as_a_float():
    """`Expressions._float_literals`: beside a DECIMAL or DOUBLE operand an
    integer literal is a float literal (CPython's float-only fast path);
    beside an INTEGER it stays an int. The values are those of SQL either
    way, also when an application gives a DECIMAL column an int."""
    sql = (
        "CREATE TABLE r (k INTEGER NOT NULL, x DECIMAL(8, 2) NOT NULL, "
        "i INTEGER NOT NULL);"
        "CREATE TABLE s (x DECIMAL(8, 2) NOT NULL, y DOUBLE NOT NULL);"
        "SELECT r.k, r.x * 2 AS dbl, 1 - r.x AS rest, s.y + 1 AS up "
        "FROM r, s WHERE r.x = s.x AND r.x < 24 AND r.i > 3 AND s.y >= 0"
    )
    source = " ".join(compile_sql(sql).split())
    for text in ("* 2.0", "(1.0 -", "+ 1.0", "< 24.0", ">= 0.0"):
        assert text in source, text
    assert "> 3)" in source and "> 3.0" not in source
    module = load(sql)
    as_floats, as_ints = module.View(), module.View()
    as_floats.insert("r", (1, 5.0, 4))
    as_floats.insert("s", (5.0, 0.0))
    as_ints.insert("r", (1, 5, 4))
    as_ints.insert("s", (5, 0))
    expected = [(1, 10.0, -4.0, 1.0)]
    for view in (as_floats, as_ints):
        assert list(view.rows()) == expected
        assert [type(v) for v in next(view.rows())] == [int, float, float, float]


PADDED_SQL = """
CREATE TABLE c (k INTEGER, g VARCHAR);
CREATE TABLE o (id INTEGER, k INTEGER, x INTEGER NOT NULL);
SELECT c.g, COUNT(*) AS rows_, COUNT(o.id) AS n, SUM(o.x) AS total
FROM c LEFT JOIN o ON o.k = c.k AND o.x > 0 GROUP BY c.g
"""


def _padded_run(module) -> list:
    """The result after each step of a stream that gives keys their first
    match, takes it away again and pads a NULL key."""
    import duckdb

    con = duckdb.connect()
    con.execute(PADDED_SQL[: PADDED_SQL.index("SELECT")])
    query = PADDED_SQL[PADDED_SQL.index("SELECT") :]
    view, seen = module.View(), []
    steps = [
        ("insert", "c", (1, "a")),
        ("insert", "c", (2, "a")),
        ("insert", "c", (None, "b")),
        ("insert", "o", (10, 1, 5)),
        ("insert", "o", (11, 1, -5)),  # fails the ON condition: still padded
        ("insert", "o", (12, 2, 7)),
        ("insert", "o", (13, 9, 7)),  # matches no c row
        ("delete", "o", (10, 1, 5)),  # key 1 padded again
        ("insert", "o", (None, 2, 1)),  # COUNT(o.id) leaves it out
        ("delete", "c", (2, "a")),
        ("delete", "o", (12, 2, 7)),
    ]
    for op, rel, row in steps:
        getattr(view, op)(rel, row)
        values = ", ".join("?" * len(row))
        if op == "insert":
            con.execute(f"INSERT INTO {rel} VALUES ({values})", list(row))
        else:
            cols = view.RELATIONS[rel]
            where = " AND ".join(f"{col} IS NOT DISTINCT FROM ?" for col in cols)
            con.execute(
                f"DELETE FROM {rel} WHERE rowid = (SELECT MIN(rowid) FROM {rel} "
                f"WHERE {where})",
                list(row),
            )
        got = sorted(view.rows(), key=repr)
        assert got == sorted(map(tuple, con.execute(query).fetchall()), key=repr)
        seen.append(got)
    return seen


def test_a_left_joined_table_read_only_in_sums_is_a_padded_leaf(monkeypatch, capsys):
    """A LEFT JOINed table read only in COUNT/SUM is a leaf whose missing
    keys weigh as one row of NULLs (no inner view; explain says so); where
    no join tree holds such a leaf, the query compiles with the padded rows
    as a UNION ALL instead; both follow DuckDB through matches coming and
    going, a NULL key and a NOT NULL column of the padded table."""
    from dynyan.compiler import explain, planner

    text = explain(PADDED_SQL)
    assert "(else one row of NULLs)" in text and "UNION ALL" not in text
    program = trigger_program(compile_query(PADDED_SQL))
    (weigh,) = [s for s in steps_of(program, "c") if isinstance(s, Weigh)]
    assert weigh.structure.padded and "a NULL-padded row where none" in str(weigh)
    padded = [load(PADDED_SQL), load(PADDED_SQL, trust_input=True)]
    assert "_PAD_" in compile_sql(PADDED_SQL)

    monkeypatch.setattr(planner, "_padded_leaves_fit", lambda plan: False)
    assert "UNION ALL" in explain(PADDED_SQL)
    source = compile_sql(PADDED_SQL)
    assert "_PAD_" not in source
    unioned = load(PADDED_SQL)
    results = [_padded_run(m) for m in [*padded, unioned]]
    assert results[0] == results[1] == results[2]
    assert ("b", 1, 0, None) in results[0][-1]  # the NULL key, padded


def test_a_trusting_batch_sums_repeated_rows_and_keeps_types_apart():
    """`update()` of a relation that feeds a subquery (a DISTINCT view, whose
    counted trigger takes rows one by one) applies its rows one by one
    after `_merged` sums each row's changes: a batch of distinct rows goes
    as it is, a row inserted and deleted in one batch nets out, and rows
    equal but for a value's type (1 and 1.0) stay apart as one-by-one
    application sees them. Every batch ends where the same changes applied
    one at a time end, or is refused whole where those would be refused."""
    sql = (
        "CREATE TABLE r (a INTEGER NOT NULL, k INTEGER NOT NULL, "
        "x DECIMAL(8, 2) NOT NULL);"
        "SELECT k, COUNT(*) AS n, SUM(x) AS s FROM r WHERE EXISTS "
        "(SELECT * FROM r r2 WHERE r2.k = r.k AND r2.a <> r.a) GROUP BY k"
    )
    module = load(sql, trust_input=True)
    source = compile_sql(sql, trust_input=True)
    outer = source[source.index("\nclass View:") :]  # (its inner view has one)
    assert "def _batch_r" not in outer and "_merged(rows, mults)" in outer
    rows = [(i, i % 3, 1.5 * i) for i in range(12)]
    batches = [
        (rows, [1] * 12),  # distinct rows
        (rows[:4] * 3, [1, -1, 1, 1, -1, 1, 1, 1, -1, 1, 1, 1]),  # repeated
        ([(3, 0, 4.5), (3.0, 0, 4.5)], [1, -1]),  # equal but for a type
        ([rows[5], rows[5], rows[5]], [-1, -1, -1]),  # over-delete: refused
        ([rows[6], rows[6], rows[7]], [1, -1, -1]),
    ]
    batched = module.View()
    applied = []  # the changes of the batches taken, for a fresh view
    refusals = 0
    for changes, mults in batches:
        single = module.View()
        try:
            for row, m in applied + list(zip(changes, mults)):
                for _ in range(abs(m)):
                    (single.insert if m > 0 else single.delete)("r", row)
        except module.ViewError:
            refusals += 1
            before = sorted(batched.rows())
            with pytest.raises(module.ViewError):
                batched.update("r", changes, mults)
            assert sorted(batched.rows()) == before
            continue
        batched.update("r", changes, mults)
        applied += zip(changes, mults)
        assert sorted(batched.rows()) == sorted(single.rows())
    assert refusals == 1 and sorted(batched.rows())
    merged = module._merged  # what the loop is given
    assert merged(rows, [1] * 12) == (rows, [1] * 12)  # no row twice: as it is
    assert merged([(1, 2), (1.0, 2), (1, 2)], [1, -1, 1]) == (
        [(1, 2), (1.0, 2)],
        [2, -1],
    )
    assert merged([(1, 2), [1, 2], (3, 4)], [1, -1, 5]) == ([(1, 2), (3, 4)], [0, 5])
    assert merged([(1, [2]), (1, [2])], [1, 1])[1] == [1, 1]  # not a key: as it is


@pytest.mark.parametrize("aggregate", ["MAX(v)", "SUM(v)", "AVG(v)", "COUNT(*)"])
def test_a_relation_only_an_inner_view_reads_is_batched_by_that_view(aggregate):
    """A batch of a relation that only one inner view reads (here a derived
    table) goes to that view's batcher whole, and the changes of its result
    come back once (where the view's trigger returns the change of the one
    group a row reaches, as for SUM, a batch queues its deltas all the same):
    the batch ends where the same rows applied one at a time end, and a batch
    with a bad row or an over-delete changes nothing."""
    sql = (
        "CREATE TABLE r (k INTEGER NOT NULL, v INTEGER NOT NULL);"
        "CREATE TABLE s (k INTEGER NOT NULL, name VARCHAR NOT NULL);"
        f"SELECT s.name, d.total FROM s, (SELECT k, {aggregate} AS total "
        "FROM r GROUP BY k) d WHERE s.k = d.k"
    )
    rows = [(i % 4, 100 - i) for i in range(20)]
    for trust_input in (False, True):
        source = compile_sql(sql, trust_input=trust_input)
        returned = "changes = sub._apply_r(row, d)" in source  # one row
        assert returned == (aggregate != "MAX(v)")  # (MAX keeps a multiset)
        assert "sums a batch itself" in source
        module = load(sql, trust_input=trust_input)
        for push in (False, True):
            batched, single = module.View(push=push), module.View(push=push)
            for view in (batched, single):
                view.update("s", [(0, "a"), (1, "b"), (2, "c")])
            batched.update("r", rows)
            changes = []
            for row in rows:
                single.insert("r", row)
                changes += single.deltas() if push else []
            assert sorted(batched.rows()) == sorted(single.rows())
            if push:  # the batch's changes, merged: the single updates' net
                net = {}
                for row, change in changes:
                    net[row] = net.get(row, 0) + change
                assert sorted(batched.deltas()) == sorted(
                    (row, c) for row, c in net.items() if c
                )
            batched.update("r", rows[:6], [-1] * 6)
            for row in rows[:6]:
                single.delete("r", row)
            assert sorted(batched.rows()) == sorted(single.rows())
            assert len(list(batched.rows())) == 3
            before = sorted(batched.rows())
            with pytest.raises(module.ViewError):
                batched.update("r", [(0, 100), (1, 2, 3)])  # wrong arity
            with pytest.raises(module.ViewError):  # key 3 keeps 4 rows
                batched.update("r", [(1, 200)] + [rows[7]] * 5, [1] + [-1] * 5)
            assert sorted(batched.rows()) == before
            batched.update("r", [(3, 7), (0, 1), (2, 5)], [1, 1, 0])
            single.update("r", [(3, 7)])
            single.insert("r", (0, 1))
            assert sorted(batched.rows()) == sorted(single.rows())


@pytest.mark.parametrize(
    "test, bad, batchers",
    [  # bad: a batch whose row of a bad type the atom takes after the batch;
        # batchers: the modes (trusting?) where the relation has a batcher
        (
            "r.k IN (SELECT r2.k FROM r r2 WHERE r2.v > 2)",
            [(7, 4, "x"), (0, 0, 1.0)],
            {False},  # trusting, the IN's view checks a row first
        ),
        (
            "EXISTS (SELECT r2.k FROM r r2 WHERE r2.k = r.k "
            "GROUP BY r2.k HAVING SUM(r2.v) > 3)",
            [(7, 4, "x"), (7, 0, 1.0)],
            {False},
        ),
        (
            "r.v >= (SELECT MIN(r2.v) + 1 FROM r r2 WHERE r2.k = r.k)",
            [(7, 4, 1.0), (7, 6, "x")],
            {False, True},
        ),
        (  # a DISTINCT view's counted trigger: rows one by one
            "NOT EXISTS (SELECT * FROM r r2 WHERE r2.k = r.k AND r2.v <> r.v)",
            [(7, 4, "x"), (0, 0, 1.0)],
            set(),
        ),
    ],
)
def test_a_batch_of_a_relation_its_own_subquery_tests_is_summed_after_it(
    test, bad, batchers
):
    """A batch of a relation whose rows are tested against a subquery of the
    same relation goes to that subquery's view first, then the view's own
    atom reads the tests with the new results: the batch ends where the same
    rows applied one at a time end (pull and push, strict and trusting), and
    a row refused only after the subquery has taken the batch (a payload of
    a bad type, checked where the atom keeps the row) leaves every view as
    it was."""
    sql = (
        "CREATE TABLE r (k INTEGER NOT NULL, v INTEGER NOT NULL, x DOUBLE);"
        f"SELECT k, COUNT(*) AS n, SUM(x) AS s FROM r WHERE {test} GROUP BY k"
    )
    rows = [(i % 3, i % 5, 0.5 * i) for i in range(24)]
    for trust_input in (False, True):
        source = compile_sql(sql, trust_input=trust_input)
        outer = source[source.index("\nclass View:") :]
        batcher = trust_input in batchers
        assert ("def _batch_r" in outer) == ("def _pass_on_r" in outer) == batcher
        module = load(sql, trust_input=trust_input)
        for push in (False, True):
            batched, single = module.View(push=push), module.View(push=push)
            for chunk, mults in [
                (rows, [1] * 24),
                (rows[::2], [-1] * 12),
                (rows[:5] + rows[1:3], [1, -1, 1, 1, 1, 1, 1]),
            ]:
                batched.update("r", chunk, mults)
                for row, m in zip(chunk, mults):
                    (single.insert if m > 0 else single.delete)("r", row)
                assert sorted(batched.rows()) == sorted(single.rows())
            before = sorted(batched.rows())
            state = batched.snapshot()
            with pytest.raises(TypeError):  # x is no number
                batched.update("r", bad)
            assert sorted(batched.rows()) == before
            assert batched.snapshot() == state
            batched.update("r", [(2, 4, 2.0)])
            single.insert("r", (2, 4, 2.0))
            assert sorted(batched.rows()) == sorted(single.rows())


@pytest.mark.parametrize(
    "test",
    [
        "EXISTS (SELECT * FROM r r2 WHERE r2.k = r.k AND r2.v <> r.v)",
        "NOT EXISTS (SELECT * FROM r r2 WHERE r2.k = r.k AND r2.v <> r.v "
        "AND r2.x > 1)",
        # a condition read by scanning the key's result rows
        "EXISTS (SELECT * FROM r r2 WHERE r2.k = r.k "
        "AND (r2.v <> r.v OR r2.s LIKE 'a%'))",
        "EXISTS (SELECT * FROM r r2 WHERE r2.k = r.k AND r2.s <> r.s AND r2.x > 0.5)",
        # beside an aggregate's view: a batch of r is summed, its counts too
        "EXISTS (SELECT * FROM r r2 WHERE r2.k = r.k AND r2.v <> r.v) "
        "AND r.v < (SELECT MAX(r3.v) FROM r r3 WHERE r3.k = r.k)",
        # TPC-H Q21's shape: the tested atom's own condition, which its
        # test index keeps only the rows passing of (trusting)
        "r.x > 0.5 AND EXISTS (SELECT * FROM r r2 WHERE r2.k = r.k "
        "AND r2.v <> r.v) AND NOT EXISTS (SELECT * FROM r r3 WHERE "
        "r3.k = r.k AND r3.v <> r.v AND r3.x > 0.5)",
    ],
)
def test_a_subquery_of_the_tested_table_is_counted_in_the_test_state(
    test, tmp_path, capsys
):
    """A subquery projecting the tested table itself (TPC-H Q21's) has no
    view of its own: the table's trigger counts its rows per result row in
    the test's state. The view matches DuckDB batch by batch (inserts and
    deletes, NULLs in the compared columns, strict and trusting, pull and
    push), and explain says what it keeps."""
    from differential import QuerySpec, run_differential

    text = (
        "CREATE TABLE r (k INTEGER, v INTEGER, x DOUBLE, s VARCHAR);\n"
        f"SELECT k, v, COUNT(*) AS n FROM r WHERE {test} GROUP BY k, v"
    )
    spec = QuerySpec.parse(text)
    for trust_input in (False, True):
        source = compile_sql(text, trust_input=trust_input)
        assert "rows counted by their row of its result" in source
        assert "self.sub_exists" not in source  # no view of the EXISTS
        module = load(text, trust_input=trust_input)
        for seed, push in ((1, False), (2, True)):
            run_differential(
                spec,
                module,
                seed=seed,
                n_events=400,
                push=push,
                null_rate=0.2,
                target_rows=10,
            )
    path = tmp_path / "q.sql"
    path.write_text(text)
    assert main(["explain", str(path)]) == 0
    assert "no view of its own" in capsys.readouterr().out


def test_a_trusting_test_index_keeps_only_the_rows_its_atom_can_take():
    """Trusting, where the inner views reading the tested table count its
    rows in the tests' states (TPC-H Q21's shape): the tests' index keeps
    only the rows the atom's own condition takes, and a delete of another row
    is checked against the states' counts: refused where it would drive one
    below zero, the view unchanged; taken where the row is there."""
    sql = (
        "CREATE TABLE r (k INTEGER NOT NULL, v INTEGER NOT NULL, x DOUBLE, s TEXT);"
        "SELECT k, v, COUNT(*) AS n FROM r WHERE r.x > 0.5 AND EXISTS "
        "(SELECT * FROM r r2 WHERE r2.k = r.k AND r2.v <> r.v) AND NOT EXISTS "
        "(SELECT * FROM r r3 WHERE r3.k = r.k AND r3.v <> r.v AND r3.x > 0.5) "
        "GROUP BY k, v"
    )
    source = compile_sql(sql, trust_input=True)
    assert "those the atom can take" in source
    assert "those the atom can take" not in compile_sql(sql)  # strict: every row
    module = load(sql, trust_input=True)
    view = module.View()
    view.update(
        "r", [(1, 1, 0.9, "a"), (1, 2, 0.1, "a"), (2, 1, 0.1, "a"), (2, 1, 0.2, "a")]
    )
    assert sorted(view.rows()) == [(1, 1, 1)]
    (index,) = (v for k, v in vars(view).items() if k.startswith("r_by_"))
    assert list(index) == [1]  # k = 2's rows fail x > 0.5: not kept
    state = view.snapshot()
    for bad in [(2, 2, 0.1, "a"), (3, 1, 0.1, "a")]:  # no (k, v) of them counted
        with pytest.raises(module.ViewError, match="keeps no row"):
            view.delete("r", bad)
        with pytest.raises(module.ViewError, match="keeps no row"):
            view.update("r", [(1, 2, 0.1, "a"), bad], [-1, -1])
        assert view.snapshot() == state
    view.delete("r", (1, 2, 0.1, "a"))  # the other v goes: the EXISTS fails
    assert list(view.rows()) == []
    view.update("r", [(2, 1, 0.3, "a"), (1, 3, 0.2, "a")], [-1, 1])
    assert sorted(view.rows()) == [(1, 1, 1)]


def test_desc_sorts_numbers_negated_and_other_values_wrapped():
    """ORDER BY … DESC keys: a number is negated (compared in C), a string or
    a date wrapped; ints and floats mix, NaN (0.0 / 0.0: an input NaN is
    refused) sorts first and NULL last (or first with NULLS FIRST), as
    DuckDB orders them."""
    import datetime
    import duckdb

    sql = (
        "CREATE TABLE t (k INTEGER NOT NULL, x DOUBLE, s VARCHAR, d DATE);"
        "SELECT k, x / CASE WHEN s = 'n' THEN 0.0 ELSE 1.0 END AS y, s, d FROM t "
        "ORDER BY y DESC NULLS FIRST, s DESC, d DESC, k"
    )
    day = datetime.date(2024, 1, 1)
    rows = [
        (i, x, s, day + datetime.timedelta(days=i % 3))
        for i, (x, s) in enumerate(
            [(2, "b"), (2.5, "a"), (None, "c"), (0.0, "n"), (2.0, "c")]
            + [(-1, None), (2, "b"), (0.0, "z"), (-0.5, "y"), (None, None)]
        )
    ]
    module = load(sql, trust_input=True)
    view = module.View()
    view.update("t", rows)
    db = duckdb.connect()
    db.execute("CREATE TABLE t (k INTEGER NOT NULL, x DOUBLE, s VARCHAR, d DATE)")
    db.executemany("INSERT INTO t VALUES (?, ?, ?, ?)", rows)
    expected = db.execute(sql.split(";")[1]).fetchall()
    assert [r[0] for r in view.rows()] == [r[0] for r in expected]


def test_a_batch_of_distinct_keys_goes_row_by_row_checked_first():
    """A trusting batch of a one-atom relation whose last batch had nearly as
    many keys as rows is checked whole, then applied row by row rather than
    summed per key (`_batch_<relation>_direct`: the next eight insert-only
    batches; a batch that deletes is summed, and measures again): every
    batch ends where the same rows applied one at a time end, pull and
    push, and a batch with a bad row anywhere changes nothing."""
    sql = (
        "CREATE TABLE r (k INTEGER NOT NULL, v INTEGER, x DECIMAL(8, 2));"
        "CREATE TABLE s (k INTEGER NOT NULL, g INTEGER NOT NULL);"
        "SELECT s.g, COUNT(*) AS n, SUM(r.x) AS t, AVG(r.v) AS a FROM r, s "
        "WHERE r.k = s.k AND r.v > 2 GROUP BY s.g"
    )
    module = load(sql, trust_input=True)
    assert "_batch_r_direct = 0" in compile_sql(sql, trust_input=True)
    distinct = [(i, 3 + i % 7 - (i % 9 == 0) * 3, 0.25 * i) for i in range(40)]
    for push in (False, True):
        batched, single = module.View(push=push), module.View(push=push)
        for view in (batched, single):
            view.update("s", [(i, i % 4) for i in range(0, 60, 2)])
        steps = [
            (distinct[:20], [1] * 20, 8),  # distinct keys: the next go row by row
            (distinct[20:], [1] * 20, 7),
            ([(1, None, 1.0), (3, 5, None), (5, 6, 2.5)], [2, 1, 0], 6),
            (distinct[:10] * 2, [1] * 20, 5),  # still row by row
            (distinct[::3], [-1] * 14, 8),  # deletes: summed, measured again
            ([(2, 3, 1.0)] * 12, [1] * 12, 7),
        ]
        for rows, mults, left in steps:
            batched.update("r", rows, mults)
            for row, m in zip(rows, mults):
                for _ in range(abs(m)):
                    (single.insert if m > 0 else single.delete)("r", row)
            assert batched._batch_r_direct == left
            assert sorted(batched.rows()) == sorted(single.rows())
        state, before = batched.snapshot(), sorted(batched.rows())
        # a NULL key or a short row (checked first), a value that fails the
        # arithmetic or the filter of its row (after rows before it went in)
        for bad in (
            [(4, 3, 1.0), (None, 3, 1.0)],
            [(4, 3, 1.0), (4, 3)],
            [(6, 3, 1.0), (8, 4, 2.5), (10, 5, "a")],
            [(6, 3, 1.0), (8, "x", 2.5)],
        ):
            assert batched._batch_r_direct
            with pytest.raises((module.ViewError, TypeError)):
                batched.update("r", bad)
            assert batched.snapshot() == state and sorted(batched.rows()) == before
