"""Planning with table statistics: the file format, `dynyan stats`, the choice
it makes on TPC-H FQ2/FQ3, and that the trees it picks stay correct
(differential runs against DuckDB, as for every benchmark query)."""

from __future__ import annotations

import json
import linecache
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import dynyan
from dynyan.cli import main
from dynyan.compiler import compile_query
from dynyan.compiler.planner import estimated_work
from dynyan.compiler.stats import Stats, StatsError, load_stats
from dynyan.pipeline.stats import collect
from test_queries import (  # noqa: F401 - the fixture checks NULL-aware types
    _differential_suite,
    _null_tolerant_harness,
    _query_sources,
    _query_spec,
)

# TPC-H at SF 0.1 as `dynyan stats data/tpch/sf0.1` counts it (keys only):
# 140 orders and 600 lineitems per supplier, 4 lineitems per order.
TPCH_SF01 = {
    "relations": {
        "customer": {"rows": 15000, "distinct": {"c_custkey": 14477}},
        "lineitem": {
            "rows": 600572,
            "distinct": {"l_orderkey": 140000, "l_partkey": 20233, "l_suppkey": 977},
        },
        "nation": {"rows": 25, "distinct": {"n_nationkey": 25}},
        "orders": {
            "rows": 150000,
            "distinct": {"o_orderkey": 140000, "o_custkey": 9732},
        },
        "part": {"rows": 20000, "distinct": {"p_partkey": 20000}},
        "partsupp": {
            "rows": 80000,
            "distinct": {"ps_partkey": 20233, "ps_suppkey": 977},
        },
        "supplier": {"rows": 1000, "distinct": {"s_suppkey": 977}},
    }
}
STATS = Stats.from_dict(TPCH_SF01)


def _plans(name: str):
    sql, schema = _query_sources(name)
    return compile_query(sql, schema), compile_query(sql, schema, STATS)


def test_fq3_puts_the_supplier_key_at_the_root():
    """By shape, FQ3 hangs [l_suppkey] under [o_orderkey, l_suppkey]: a
    partsupp insert reaches every (order, supplier) pair of its supplier
    (~600 at SF 0.1). With statistics the tree is rooted at [l_suppkey] and
    an orders insert fans out over its ~4 lineitems instead."""
    shape, stats = _plans("tpch/fq3")
    assert shape.nodes[shape.root].vars != ("l_suppkey",)
    assert stats.nodes[stats.root].vars == ("l_suppkey",)
    assert estimated_work(stats, STATS) * 10 < estimated_work(shape, STATS)


def test_statistics_change_no_q_hierarchical_plan():
    shape, stats = _plans("tpch/fq4")
    assert shape.draw() == stats.draw() and stats.simple


@pytest.mark.slow
@pytest.mark.parametrize("name", ["tpch/fq2", "tpch/fq3"])
def test_tree_chosen_by_statistics_against_duckdb(name):
    shape, stats = _plans(name)
    assert shape.draw() != stats.draw(), "statistics no longer change this plan"
    sql, schema = _query_sources(name)
    # one pull seed (test_queries runs two on the shape-planned trees), push
    # mode and bad input: what differs here is the tree, not the stream
    module = dynyan.load(sql, schema, STATS)
    _differential_suite(_query_spec(name), module, seeds=(0,))


@pytest.mark.parametrize(
    "doc, message",
    [
        ([], "expected"),
        ({"relations": {"r": {"distinct": {}}}}, "'rows' must be a count"),
        ({"relations": {"r": {"rows": -1}}}, "'rows' must be a count"),
        ({"relations": {"r": {"rows": 3, "distinct": {"a": "x"}}}}, "'distinct'"),
    ],
)
def test_bad_statistics_are_refused(doc, message):
    with pytest.raises(StatsError, match=message):
        Stats.from_dict(doc)


def test_stats_command_counts_parquet_tables(tmp_path, capsys):
    (tmp_path / "r").mkdir()
    pq.write_table(
        pa.table({"a": [1, 2, 2, 3], "b": ["x", "x", "y", "x"]}),
        tmp_path / "r" / "r.1.parquet",
    )
    # (a column name is quoted, not spliced, into DuckDB's SQL)
    pq.write_table(pa.table({'c") FROM x; --': [5] * 10}), tmp_path / "s.parquet")
    out = tmp_path / "stats.json"
    assert main(["stats", str(tmp_path), "-o", str(out)]) == 0
    stats = load_stats(out)
    assert stats.rows == {"r": 4, "s": 10}
    assert stats.ndv("R", "A") == 3 and stats.ndv("r", "b") == 2
    assert stats.ndv("s", 'c") FROM x; --') == 1
    assert collect(tmp_path) == stats


def test_compile_and_explain_take_statistics(tmp_path, capsys):
    stats = tmp_path / "stats.json"
    stats.write_text(json.dumps(TPCH_SF01))
    fq3 = str(Path(__file__).resolve().parent.parent / "queries/tpch/fq3.sql")
    assert main(["explain", fq3, "--stats", str(stats)]) == 0
    text = capsys.readouterr().out
    assert "*[l_suppkey] root" in text and "Estimated work" in text
    out = tmp_path / "fq3.py"
    assert main(["compile", fq3, "--stats", str(stats), "-o", str(out)]) == 0
    assert "class View" in out.read_text()


def test_unreadable_statistics_are_one_line_errors(tmp_path, capsys):
    fq3 = str(Path(__file__).resolve().parent.parent / "queries/tpch/fq3.sql")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert main(["explain", fq3, "--stats", str(bad)]) == 2
    assert main(["explain", fq3, "--stats", str(tmp_path / "missing.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("dynyan: error:") for line in err)


def test_replay_loads_a_query_planned_with_statistics():
    """`dynyan replay --stats`: the module (and the checkpoint fingerprint,
    which must not match a module planned otherwise) follows the statistics."""
    from dynyan.pipeline import replay

    fq3 = Path(__file__).resolve().parent.parent / "queries/tpch/fq3.sql"
    shape = replay.load_query(fq3)
    stats = replay.load_query(fq3, stats=STATS)
    assert shape.fingerprint != stats.fingerprint
    source = "".join(linecache.getlines(stats.module.__file__))
    assert "# *[l_suppkey] root" in source


def test_stats_of_a_directory_without_tables_is_an_error(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("no tables here")
    assert main(["stats", str(tmp_path)]) == 2
    assert "no Parquet tables" in capsys.readouterr().err


@pytest.mark.parametrize(
    "partition, bare, cut",
    [
        # about 15 orders a customer: the windows' view outputs the top alone
        ("PARTITION BY o_custkey", False, False),
        ("PARTITION BY o_orderstatus", False, True),  # 3 statuses: 50,000 each
        ("PARTITION BY o_clerk", False, False),  # no distinct count: as without
        ("", True, True),  # the whole table one partition: cut either way
    ],
)
def test_top_rows_cut_where_partitions_are_large(partition, bare, cut):
    sql = (
        "SELECT o_orderkey, o_orderdate FROM orders QUALIFY RANK() OVER "
        f"({partition} ORDER BY o_orderdate DESC) <= 3"
    )
    schema = (Path(dynyan.__file__).parent.parent / "tpch" / "schema.sql").read_text()
    stats = Stats.from_dict(
        {
            "relations": {
                "orders": {
                    "rows": 150000,
                    "distinct": {"o_custkey": 9732, "o_orderstatus": 3},
                }
            }
        }
    )
    plain = dynyan.explain(sql, schema)
    assert ("TOP_CUT" in plain) is bare
    assert "output up to place 3" in plain  # the windows' view's own cap
    assert ("TOP_CUT" in dynyan.explain(sql, schema, stats)) is cut
