"""Planner unit tests on known acyclic, free-connex and cyclic hypergraphs."""

from pathlib import Path

import pytest

from dynyan.compiler import compile_query
from dynyan.errors import CyclicQueryError, UnsupportedQueryError
from dynyan.compiler.plan import Plan

ROOT = Path(__file__).resolve().parent.parent
TPCH = (ROOT / "tpch" / "schema.sql").read_text()
RST = "CREATE TABLE r (a INT, b INT); CREATE TABLE s (b INT, c INT); CREATE TABLE t (c INT, d INT);"


def plan_of(sql: str, schema: str | None = None) -> Plan:
    return compile_query(sql, schema)


def check_gjt(plan: Plan) -> None:
    """The GJT invariants of docs/design.md §2."""
    nodes = plan.nodes
    for n in nodes:
        if n.children:  # guard: the label lies within the first child
            assert set(n.vars) <= set(nodes[n.children[0]].vars), plan
    # Every variable occupies a connected part of the tree.
    for var in {v for n in nodes for v in n.vars}:
        holders = [n.id for n in nodes if var in n.vars]
        tops = [
            h
            for h in holders
            if plan.parent(h) is None or var not in nodes[plan.parent(h)].vars
        ]
        assert len(tops) == 1, (var, plan)
    # N is connex (contains the root, closed upwards) and sibling-closed.
    assert plan.root in plan.in_n
    for n in plan.in_n:
        p = plan.parent(n)
        assert p is None or p in plan.in_n
        s = plan.sibling(n)
        assert s is None or s in plan.in_n
    # var(N) is exactly the output.
    assert {v for n in plan.in_n for v in nodes[n].vars} == set(plan.query.output_vars)


@pytest.mark.parametrize("name", ["fq1", "fq2", "fq3", "fq4"])
def test_tpch_full_joins_have_valid_trees(name):
    plan = plan_of((ROOT / "queries" / "tpch" / f"{name}.sql").read_text(), TPCH)
    check_gjt(plan)
    assert plan.simple == (name == "fq4")  # only FQ4 is q-hierarchical


def test_chain_is_not_simple_and_star_is():
    chain = plan_of(RST + "SELECT * FROM r, s, t WHERE r.b = s.b AND s.c = t.c")
    check_gjt(chain)
    assert not chain.simple
    star = plan_of(RST + "SELECT * FROM r, s, t WHERE r.b = s.b AND s.b = t.c")
    check_gjt(star)
    assert star.simple


def test_free_connex_projection_keeps_guard_only():
    plan = plan_of(RST + "SELECT r.a, r.b FROM r, s WHERE r.b = s.b")
    check_gjt(plan)
    assert plan.in_n == {plan.root}


def test_not_free_connex_widens_the_output():
    plan = plan_of(RST + "SELECT r.a, s.c FROM r, s WHERE r.b = s.b")
    assert plan.widened == ("b",)
    nodes = plan.nodes
    assert {v for n in plan.in_n for v in nodes[n].vars} == {"a", "b", "c"}


def test_free_connex_classification_of_the_design_examples():
    schema = (
        "CREATE TABLE r (a INT, b INT, c INT); CREATE TABLE s (d INT, e INT, f INT);"
        "CREATE TABLE t (g INT, h INT, i INT);"
    )
    free = plan_of(schema + "SELECT a, b, d, e FROM r, s, t WHERE a < d AND e < g")
    assert free.widened == ()
    widened = plan_of(schema + "SELECT a, g FROM r, s, t WHERE a < d AND e < g")
    assert widened.widened


def test_inequality_across_a_chain_rides_the_edge_of_a_bag():
    """r - s - t with x < u: no tree of the three tables has r next to t, but
    a bag of r and s (an inner view) has, and its edge to t carries x < u."""
    sql = (
        "CREATE TABLE r (x INT, y INT); CREATE TABLE s (y INT, z INT); CREATE TABLE t (z INT, u INT);"
        "SELECT * FROM r, s, t WHERE r.y = s.y AND s.z = t.z AND x < u"
    )
    plan = plan_of(sql)
    check_gjt(plan)
    assert {str(p) for n in plan.nodes for p in n.predicates} == {"r__x < u"}


def test_inequality_that_fits_no_edge_is_refused():
    """A chain of seven tables with an inequality between its ends: bags of
    at most three tables leave a table between the ends' bags."""
    tables = "".join(
        f"CREATE TABLE r{i} (a{i} INT, a{i + 1} INT);" for i in range(1, 8)
    )
    joins = " AND ".join(f"r{i}.a{i + 1} = r{i + 1}.a{i + 1}" for i in range(1, 7))
    sql = f"{tables} SELECT * FROM r1, r2, r3, r4, r5, r6, r7 WHERE {joins} AND a1 < a8"
    with pytest.raises(UnsupportedQueryError, match="a1 < a8"):
        plan_of(sql)


def test_worked_example_of_the_design():
    sql = (
        "CREATE TABLE r (x INT, y INT); CREATE TABLE s (y INT, z INT, w INT); CREATE TABLE t (u INT, v INT);"
        "SELECT s.y, z, w, u FROM r, s, t WHERE r.y = s.y AND x < z AND w < u"
    )
    plan = plan_of(sql)
    check_gjt(plan)
    edges = {str(p) for n in plan.nodes for p in n.predicates}
    assert edges == {"x < z", "w < u"}


def test_cartesian_product_gets_an_empty_root():
    plan = plan_of(RST + "SELECT * FROM r, t")
    check_gjt(plan)
    assert plan.nodes[plan.root].vars == ()
    assert len(plan.nodes[plan.root].children) == 2


def test_triangle_is_decomposed_into_a_bag():
    """The triangle's cycle: two of its tables joined in an inner view (a
    bag), the outer tree joins the bag and the third table."""
    sql = (
        "CREATE TABLE r (a INT, b INT); CREATE TABLE s (b INT, c INT); CREATE TABLE t (c INT, a INT);"
        "SELECT * FROM r, s, t WHERE r.b = s.b AND s.c = t.c AND t.a = r.a"
    )
    plan = plan_of(sql)
    check_gjt(plan)
    ((_, bag),) = plan.subplans
    assert len(bag.query.atoms) == 2
    assert len(plan.query.atoms) == 2


def test_tpch_q5_join_graph_is_decomposed():
    sql = """SELECT n_name FROM customer, orders, lineitem, supplier, nation, region
    WHERE c_custkey = o_custkey AND l_orderkey = o_orderkey AND l_suppkey = s_suppkey
      AND c_nationkey = s_nationkey AND s_nationkey = n_nationkey
      AND n_regionkey = r_regionkey AND r_name = 'ASIA'"""
    plan = plan_of(sql, TPCH)
    check_gjt(plan)
    assert plan.subplans
    assert all(len(p.query.atoms) <= 3 for _, p in plan.subplans)


def test_cycle_no_bags_of_three_tables_break_is_refused_naming_it():
    n = 12
    sql = "".join(
        f"CREATE TABLE t{i} (a{i} INT, a{(i + 1) % n} INT);" for i in range(n)
    )
    sql += "SELECT COUNT(*) AS c FROM " + ", ".join(f"t{i}" for i in range(n))
    sql += " WHERE " + " AND ".join(
        f"t{i}.a{(i + 1) % n} = t{(i + 1) % n}.a{(i + 1) % n}" for i in range(n)
    )
    with pytest.raises(
        CyclicQueryError, match=r"cyclic: t0, t1, .*t11 join in a cycle"
    ):
        plan_of(sql)


def test_self_join_has_one_leaf_per_atom():
    plan = plan_of(RST + "SELECT * FROM r r1, r r2 WHERE r1.b = r2.a")
    check_gjt(plan)
    assert sum(n.is_leaf for n in plan.nodes) == 2


def test_plans_print_deterministically():
    sql = (ROOT / "queries" / "tpch" / "fq1.sql").read_text()
    assert str(plan_of(sql, TPCH)) == str(plan_of(sql, TPCH))


def test_an_inner_view_read_at_several_depths_is_compiled_and_rendered_once(
    monkeypatch,
):
    """A window's rewriting into joins (`window_aggregates`, where the view
    of ordered partitions does not take it) reads one derived table at
    several depths: the frontend compiles each distinct subquery once and
    the module defines one class per distinct inner view (the module of this
    query was 4.8 MB of text, 162 nested classes, before)."""
    import re

    from dynyan.compiler import compile_sql
    from dynyan.compiler.plan import SetPlan

    path = ROOT / "tests/fixtures/sql/109_lag_over_a_derived_table_of_groups.sql"
    sql = path.read_text()

    reads = []

    def walk(plan):
        for side in plan.plans() if isinstance(plan, SetPlan) else [plan]:
            for _, sub in side.subplans:
                reads.append(sub)
                walk(sub)

    from dynyan.compiler import frontend

    calls = []
    compile_select = frontend.compile_select

    def counted(tree, ctx):
        calls.append(tree)
        return compile_select(tree, ctx)

    monkeypatch.setattr(frontend, "compile_select", counted)
    parse_query = frontend.parse_query
    monkeypatch.setattr(  # the windows rewritten into joins
        frontend,
        "parse_query",
        lambda *args, **kwargs: parse_query(*args, native_windows=False, **kwargs),
    )
    walk(compile_query(sql))
    assert len(calls) < len(reads) / 2  # each distinct subquery's text once
    distinct = []
    for sub in reads:
        if sub not in distinct:
            distinct.append(sub)
    assert len(reads) > 3 * len(distinct)  # the same views, read again and again
    text = compile_sql(sql, formatted=False)
    bodies = re.split(r"\n(?=def _inner_view_\d+\(\):\n)", text)[1:]
    assert len(bodies) <= len(distinct)
    assert len(set(bodies)) == len(bodies)  # no inner view written twice
    assert len(text) < 2_000_000


def test_a_repeated_scalar_subquery_is_joined_once():
    """REGR_R2 over a LATERAL's aggregate expands into some thirty reads of
    one correlated scalar subquery: they share one LEFT JOIN (a join each,
    rewritten as outer joins one after another, made the compile run for
    minutes and gigabytes; fuzz seed 2741, query 270)."""
    import sqlglot

    from dynyan.compiler.frontend.context import Context
    from dynyan.compiler.frontend.passes.qualify_names import qualify_names
    from dynyan.compiler.frontend.passes.scalar_items import scalar_items
    from dynyan.compiler.frontend.statements import parse_schema

    ctx = Context(
        parse_schema("CREATE TABLE r (a INT, b INT); CREATE TABLE s (b INT, c INT);")
    )
    sql = (
        "SELECT r.a, (SELECT MAX(s.c) FROM s WHERE s.b = r.b) AS m, "
        "r.a + (SELECT MAX(s.c) FROM s WHERE s.b = r.b) AS n, "
        "(SELECT SUM(s.c) FROM s WHERE s.b = r.b) AS t FROM r"
    )
    tree = scalar_items(qualify_names(sqlglot.parse_one(sql, read="duckdb"), ctx), ctx)
    joined = [j.this.alias for j in tree.args["joins"]]
    assert joined == ["__scalar1", "__scalar2"]
    assert tree.sql("duckdb").count("__scalar1.v") == 2


def test_left_joins_of_a_fact_table_grow_linearly():
    """A fact table LEFT JOINed to n dimensions on their keys: each
    dimension is padded with the fact's keys it lacks (the fact table read
    once more per join), not each join nested in the next (2^n copies of
    the fact table, and of its state)."""
    from dynyan.compiler.frontend import parse_query

    n = 5
    schema = "CREATE TABLE f (id INT, " + ", ".join(f"k{i} INT" for i in range(n))
    schema += ");" + "".join(f"CREATE TABLE d{i} (k INT, v INT);" for i in range(n))
    sql = "SELECT f.id, " + ", ".join(f"d{i}.v AS v{i}" for i in range(n))
    sql += " FROM f " + " ".join(f"LEFT JOIN d{i} ON d{i}.k = f.k{i}" for i in range(n))
    text = str(parse_query(schema + sql))
    assert text.count("atom f(") == n + 1
    assert all(text.count(f"atom d{i}(") == 2 for i in range(n))


def test_an_or_of_cases_repeating_the_join_is_planned_as_the_join():
    """TPC-H Q19 as written: the equality every case holds joins lineitem and
    part, each table gets the OR of its own conditions as a filter at its
    leaf, and only the cases' OR is checked on the joined rows."""
    sql = (ROOT / "queries" / "tpch" / "spec" / "q19.sql").read_text()
    plan = plan_of(sql, TPCH)
    query = plan.query
    root = plan.nodes[plan.root]
    assert root.vars == ("l_partkey",)
    lineitem, part = query.atoms
    assert "l_shipinstruct = 'DELIVER IN PERSON'" in " ".join(
        map(str, lineitem.filters)
    )
    assert "p_size >= 1" in " ".join(map(str, part.filters))
    (residual,) = query.residual
    assert "l_partkey" not in str(residual) and "p_partkey" not in str(residual)


def test_an_or_is_factored_up_to_the_order_of_symmetric_operands():
    """`r.b = s.b` and `s.b = r.b`, `s.c > r.a` and `r.a < s.c` are one
    condition; a case holding only shared conditions absorbs the others."""
    plan = plan_of(
        RST + "SELECT r.a, s.c FROM r, s WHERE (r.b = s.b AND s.c > r.a AND r.a = 1)"
        " OR (s.b = r.b AND r.a < s.c AND s.c = 2) OR (r.b = s.b AND r.a < s.c)"
    )
    query = plan.query
    r, s = query.atoms
    assert set(r.variables) & set(s.variables) == {"b"}  # one join variable
    assert [str(p) for p in query.predicates] == ["c > a"]
    assert not query.residual  # (A AND B) OR A is A
    assert not r.filters and not s.filters


def test_a_scalar_subquerys_view_is_kept_only_at_keys_the_outer_filter_passes():
    """TPC-H Q17: the AVG per part is maintained only for the parts of the
    brand and container the outer query reads (a semi-join with them)."""
    sql = (ROOT / "queries" / "tpch" / "spec" / "q17.sql").read_text()
    query = plan_of(sql, TPCH).query
    ((name, inner),) = query.subqueries
    assert name.startswith("scalar_")
    relations = [a.relation for a in inner.atoms]
    assert relations[0] == "lineitem" and relations[1].startswith("in_")
    ((_, semi),) = inner.subqueries
    (part,) = semi.atoms
    assert part.relation == "part"
    assert "p_brand = 'Brand#23'" in " ".join(map(str, part.filters))
