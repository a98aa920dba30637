"""A scalar subquery without an aggregate: the value of its one row, NULL
over none, an error over several (DuckDB's "More than one row returned by a
subquery used as an expression"). The differential fixtures 112–114 compare
with DuckDB on random streams; these pin the module's behaviour around the
error: reads raise, updates are taken, push mode reports the net change once
there is a value again, nothing is lost on the way."""

import pytest

import dynyan

SCHEMA = "CREATE TABLE r (a INT, b INT); CREATE TABLE s (k INT, v INT);"
UNCORRELATED = "SELECT r.a FROM r WHERE r.b = (SELECT v FROM s WHERE k = 1)"


def _module(sql: str):
    return dynyan.load(SCHEMA + sql)


def _error(view) -> str | None:
    try:
        sorted(view.rows())
    except ValueError as e:
        return str(e)
    return None


def test_reads_fail_while_the_subquery_has_several_rows():
    view = _module(UNCORRELATED).View()
    view.update("r", [(1, 10), (2, 11)])
    view.insert("s", (1, 10))
    assert sorted(view.rows()) == [(1,)]
    view.insert("s", (1, 11))
    assert "more than one row returned by a subquery" in _error(view)
    with pytest.raises(ValueError, match="more than one row"):
        view.multiplicity((1,))
    view.delete("s", (1, 10))
    assert sorted(view.rows()) == [(2,)]
    view.delete("s", (1, 11))
    assert sorted(view.rows()) == []  # no row: NULL, which equals nothing


@pytest.mark.parametrize(
    "sql",
    [
        UNCORRELATED,
        "SELECT x.a FROM (SELECT r.a FROM r WHERE r.b = "
        "(SELECT v FROM s WHERE k = 1)) AS x",  # in an inner view
        "SELECT r.a FROM r WHERE r.b = (SELECT v FROM s WHERE k = 1) "
        "UNION ALL SELECT r.a FROM r WHERE r.a = 7",  # in a side of a UNION
        "SELECT r.a, (SELECT v FROM s WHERE s.k = r.a) AS w FROM r",  # SELECT list
    ],
    ids=["where", "derived", "union", "select"],
)
def test_push_reports_the_net_change_once_there_is_a_value_again(sql):
    module = _module(sql)
    pushed = {}

    def on_delta(row, change):
        pushed[row] = pushed.get(row, 0) + change

    view = module.View(on_delta=on_delta)
    pull = module.View()
    steps = [
        ("r", [(1, 10), (2, 11), (7, 0)], None),
        ("s", [(1, 10)], None),
        ("s", [(1, 11)], None),  # two rows at k = 1
        ("r", [(3, 11), (1, 10)], [1, -1]),
        ("s", [(1, 10)], [-1]),  # one again
    ]
    for rel, rows, mults in steps:
        view.update(rel, rows, mults)
        pull.update(rel, rows, mults)
        if _error(pull) is None:
            current = {}
            for row in pull.rows():
                current[row] = current.get(row, 0) + 1
            assert {r: m for r, m in pushed.items() if m} == current
        else:
            assert _error(view) == _error(pull)
            assert view.deltas() == []


def test_a_refused_call_keeps_the_changes_waiting_to_be_reported():
    module = _module(UNCORRELATED)
    pushed = []
    view = module.View(on_delta=lambda row, change: pushed.append((row, change)))
    view.update("r", [(1, 10), (2, 11)])
    view.update("s", [(1, 10), (1, 11)])  # several rows: nothing reported
    assert pushed == []
    view.delete("r", (1, 10))  # waits too
    with pytest.raises(module.ViewError):
        view.insert("r", (1,))  # wrong arity: refused, nothing lost
    with pytest.raises(module.ViewError, match="no snapshot"):
        view.snapshot()
    view.delete("s", (1, 10))
    assert sorted(pushed) == [((2,), 1)]
    assert sorted(view.rows()) == [(2,)]
    copy = module.View()
    copy.restore(view.snapshot())
    assert sorted(copy.rows()) == [(2,)]


def test_distinct_counts_null_as_one_of_its_values():
    module = _module("SELECT r.a FROM r WHERE r.b = (SELECT DISTINCT v FROM s)")
    view = module.View()
    view.update("r", [(1, 10)])
    view.update("s", [(1, 10), (2, 10)])  # one distinct value
    assert sorted(view.rows()) == [(1,)]
    view.insert("s", (3, None))  # NULL is a second one
    assert _error(view) is not None
    view.delete("s", (3, None))
    assert sorted(view.rows()) == [(1,)]


def test_the_subquery_reads_only_keys_of_outer_rows_that_pass_their_conditions():
    # DuckDB fails only where an outer row reads a key with several rows
    module = _module(
        "SELECT r.a FROM r WHERE r.a > 0 AND r.b < (SELECT v FROM s WHERE s.k = r.a)"
    )
    view = module.View()
    view.update("s", [(0, 5), (0, 6), (1, 20)])
    view.update("r", [(1, 10), (0, 1)])  # r.a = 0 fails r.a > 0: not read
    assert sorted(view.rows()) == [(1,)]
    view.insert("s", (1, 21))
    assert _error(view) is not None


def test_a_key_computed_from_the_outer_row():
    # `s.k = r.a + 1`: the outer row reads the key its expression gives
    module = _module(
        "SELECT r.a FROM r WHERE r.b = (SELECT v FROM s WHERE s.k = r.a + 1)"
    )
    view = module.View()
    view.update("r", [(1, 10), (2, 20), (None, 10)])
    view.update("s", [(2, 10), (3, 21), (9, 1), (9, 2)])  # k = 9: no row reads it
    assert sorted(view.rows()) == [(1,)]
    view.insert("s", (3, 20))  # two rows where r.a = 2 reads
    assert _error(view) is not None
    view.delete("s", (3, 21))
    assert sorted(view.rows()) == [(1,), (2,)]
