"""`dynyan explain` on the specification texts of TPC-H: what ORDER BY/LIMIT,
a decomposed cycle and the inner views cost (dynyan/compiler/explain_sections.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dynyan.cli import main

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def explained():
    """The explain text of a specification query, by name."""
    import io
    from contextlib import redirect_stdout

    cache = {}

    def text(name: str) -> str:
        if name not in cache:
            out = io.StringIO()
            with redirect_stdout(out):
                assert (
                    main(["explain", str(ROOT / f"queries/tpch/spec/{name}.sql")]) == 0
                )
            cache[name] = out.getvalue()
        return cache[name]

    return text


def section(text: str, title: str) -> str:
    """The lines of one section (from its title to the next blank line)."""
    start = text.index(title)
    end = text.find("\n\n", start)
    return text[start : end if end >= 0 else None]


def test_q5_shows_the_decomposition(explained):
    """Q5's cycle (customer, orders, lineitem, supplier, nation): two bags of
    two tables, each materialised, bounded by the product of its relations."""
    part = section(explained("q5"), "Cycle decomposition")
    assert "width 2" in part and "limit is 3" in part
    assert "customer ⋈ orders" in part and "lineitem ⋈ supplier" in part
    assert "at most |customer| · |orders| rows" in part
    assert "the product of its relations" in part
    assert "memory: O(|db|^2)" in part
    assert "update: a row of a bag's table changes up to" in part
    # the bags are inner views, listed with what they keep
    views = section(explained("q5"), "Inner views")
    assert "a bag of the decomposition (__bag1)" in views


def test_q5_ordering_of_groups(explained):
    part = section(explained("q5"), "Ordering:")
    assert "ORDER BY revenue DESC" in part and "LIMIT" not in part
    assert "the groups, each with its multiplicity, sorted" in part
    assert "when read" in part and "memory: one entry per group" in part
    assert "O(1) per changed output row" in part
    assert "constant delay in ORDER BY order once the moved rows" in part


def test_q1_ordering_by_group_columns(explained):
    """Ordered by group columns only: the live groups stay sorted."""
    part = section(explained("q1"), "Ordering:")
    assert "sorted index" in part and "of the live groups" in part
    assert "O(log n) when a group appears or disappears" in part
    assert "no sorting on read" in part


def test_q2_ordering_limit_and_scalar_subquery(explained):
    """Q2: a LIMIT over a result that is not grouped (materialised, all rows
    in the index), and the correlated MIN subquery as a tested inner view."""
    text = explained("q2")
    part = section(text, "Ordering:")
    assert "ORDER BY s_acctbal DESC, n_name, s_name, p_partkey LIMIT 100" in part
    assert "distinct result rows" in part and "the result is materialised" in part
    assert "not only the 100 shown" in part
    assert "only the first 100 rows" in part and "O(100) more" in part
    views = section(text, "Inner views")
    assert "scalar_1 (grouped by ps_partkey)" in views
    assert "tested by (partsupp.ps_supplycost = scalar_1" in views
    assert "the subquery's value per key" in views
    assert "the rows of partsupp by the test's key" in views
    assert "Cycle decomposition" not in text  # acyclic


def test_q18_in_subquery_joined_and_top_100(explained):
    text = explained("q18")
    part = section(text, "Ordering:")
    assert "ORDER BY o_totalprice DESC, o_orderdate LIMIT 100" in part
    assert "of the live groups" in part and "only the first 100 rows" in part
    views = section(text, "Inner views")
    assert "in_1 (grouped by l_orderkey): joined as a relation" in views


def test_no_sections_for_a_plain_query(explained):
    """Q6 has no ORDER BY, cycle or subquery: explain stays as it was."""
    text = explained("q6")
    for title in ("Ordering:", "Cycle decomposition", "Inner views", "Fan-out"):
        assert title not in text


def test_fan_out_of_a_non_simple_tree(capsys):
    """GCQ1's tree is not simple: an update of t or r changes the weight of
    every group its sibling has past the inequality, and explain says which
    (no lazy weights defer that work); a simple tree (FQ4) has no such line."""
    assert main(["explain", str(ROOT / "queries/gcq/gcq1.sql")]) == 0
    part = section(capsys.readouterr().out, "Fan-out")
    assert "an update of t visits every (d, e) of s where e < g" in part
    assert "one weight update each (up to all of them)" in part
    assert "an update of r visits every (d) of [d, e] where a < d" in part
    assert "an update of s" not in part
    assert main(["explain", str(ROOT / "queries/tpch/fq4.sql")]) == 0
    assert "Fan-out" not in capsys.readouterr().out
    assert main(["explain", str(ROOT / "queries/tpch/fq1.sql")]) == 0
    part = section(capsys.readouterr().out, "Fan-out")
    assert "an update of orders visits every" in part
    assert "of lineitem with the same o_orderkey" in part
    assert "(one if the key is unique)" in part


def test_q15_ranked_enumeration(explained):
    """Q15 orders by s_suppkey, the variable of its root: enumeration walks
    the root's tuples in order, no sorted copy of the result is kept."""
    part = section(explained("q15"), "Ordering:")
    assert "ORDER BY s_suppkey" in part
    assert "ranked enumeration: the root *[s_suppkey]" in part
    assert "one entry per root tuple (not per result row)" in part
    assert "distinct result rows" not in part


def test_ranked_root_is_chosen_over_a_cheaper_tree():
    """ORDER BY a column of one table of a join: the planner puts it at the
    root (one non-guard hop more) rather than keep a sorted result."""
    from dynyan.compiler import compile_query
    from dynyan.compiler.plan import ranked_root

    schema = "CREATE TABLE r (a INT, b INT); CREATE TABLE s (b INT, e INT);"
    ordered = compile_query("SELECT * FROM r, s WHERE r.b = s.b ORDER BY r.a", schema)
    assert ranked_root(ordered)
    assert "a" in ordered.nodes[ordered.root].vars
    plain = compile_query("SELECT * FROM r, s WHERE r.b = s.b", schema)
    assert not plain.nodes[plain.root].vars or "a" not in plain.nodes[plain.root].vars
    # an expression or an aggregate order is not ranked
    for sql in [
        "SELECT r.a + 1 AS x, s.e, r.b FROM r, s WHERE r.b = s.b ORDER BY x",
        "SELECT r.a, COUNT(*) FROM r, s WHERE r.b = s.b GROUP BY r.a ORDER BY 2",
    ]:
        assert not ranked_root(compile_query(sql, schema)), sql
