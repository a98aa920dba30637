"""Windows that number or shift rows (ROW_NUMBER, NTILE, LAG, LEAD,
FIRST_VALUE and LAST_VALUE but of a key tied rows agree on, ROWS frames)
over an order the compiler cannot prove tie-free: the value where no two
rows of a partition tie, no result while two do (SQL leaves their order open; DuckDB picks any). The
differential fixtures 126 and 127 compare with DuckDB on random streams
(their `-- ties:` query says when rows tie); these pin the module's
behaviour around the error: reads raise, updates are taken, push mode
reports the net change once no two rows tie, nothing is lost on the way."""

import pytest

import dynyan

SCHEMA = "CREATE TABLE r (a INT, c VARCHAR);"
NUMBERED = (
    "SELECT r.c, r.a, ROW_NUMBER() OVER (PARTITION BY r.c ORDER BY r.a) AS rn FROM r"
)
# the rows carry a value the order leaves out: two may tie and differ
SCHEMA_V = "CREATE TABLE r (a INT, c VARCHAR, v INT);"
NUMBERED_V = (
    "SELECT r.c, r.a, r.v, ROW_NUMBER() OVER (PARTITION BY r.c ORDER BY r.a) AS rn "
    "FROM r"
)


def _error(view) -> str | None:
    try:
        sorted(view.rows())
    except ValueError as e:
        return str(e)
    return None


def test_reads_fail_while_two_different_rows_of_a_partition_tie():
    view = dynyan.load(SCHEMA_V + NUMBERED_V).View()
    view.update("r", [(1, "x", 0), (2, "x", 0), (2, "y", 0)])
    assert sorted(view.rows()) == [("x", 1, 0, 1), ("x", 2, 0, 2), ("y", 2, 0, 1)]
    view.insert("r", (2, "x", 5))  # ties with (2, "x", 0)
    assert "rows tie in the order of a window function" in _error(view)
    with pytest.raises(ValueError, match="rows tie"):
        view.multiplicity(("x", 1, 0, 1))
    view.insert("r", (0, "x", 0))  # taken while reads fail
    view.delete("r", (2, "x", 0))
    assert sorted(view.rows()) == [
        ("x", 0, 0, 1),
        ("x", 1, 0, 2),
        ("x", 2, 5, 3),
        ("y", 2, 0, 1),
    ]


def test_equal_rows_that_tie_are_numbered_in_either_order():
    """Equal rows give the same output rows whichever comes first: no tie,
    also beside different peers that come and go."""
    view = dynyan.load(SCHEMA + NUMBERED).View()
    view.update("r", [(1, "x"), (2, "x"), (2, "x"), (3, "x")])
    assert sorted(view.rows()) == [("x", 1, 1), ("x", 2, 2), ("x", 2, 3), ("x", 3, 4)]
    numbered = dynyan.load(SCHEMA_V + NUMBERED_V).View()
    numbered.update("r", [(2, "x", 0), (2, "x", 0)])
    assert sorted(numbered.rows()) == [("x", 2, 0, 1), ("x", 2, 0, 2)]
    numbered.insert("r", (2, "x", 1))  # a different row among the peers
    assert "rows tie" in _error(numbered)
    numbered.delete("r", (2, "x", 0))
    assert "rows tie" in _error(numbered)
    numbered.delete("r", (2, "x", 1))  # equal peers alone again
    assert sorted(numbered.rows()) == [("x", 2, 0, 1)]
    numbered.update("r", [(2, "x", 0), (2, "x", 0), (2, "x", 3)], [1, -1, 1])
    assert "rows tie" in _error(numbered)
    numbered.delete("r", (2, "x", 0))
    assert sorted(numbered.rows()) == [("x", 2, 3, 1)]


def test_top_places_tie_only_where_different_rows_meet_at_a_place_kept():
    """Capped at place 2: equal peers across the cut, or different ones
    past it, leave the output determined; different peers across it not."""
    view = dynyan.load(
        SCHEMA_V + "SELECT r.c, r.a, r.v FROM r QUALIFY ROW_NUMBER() OVER "
        "(PARTITION BY r.c ORDER BY r.a) <= 2"
    ).View()
    view.update("r", [(1, "x", 0), (2, "x", 0), (2, "x", 0)])
    assert sorted(view.rows()) == [("x", 1, 0), ("x", 2, 0)]
    view.insert("r", (2, "x", 7))  # a different peer of place 2, at place 4
    assert "rows tie" in _error(view)
    view.delete("r", (2, "x", 7))
    view.update("r", [(3, "x", 7), (3, "x", 8)])  # tied past the places kept
    assert sorted(view.rows()) == [("x", 1, 0), ("x", 2, 0)]
    view.delete("r", (1, "x", 0))
    view.delete("r", (2, "x", 0))  # (2, 0) at place 1, (3, 7) and (3, 8) tie at 2
    assert "rows tie" in _error(view)
    view.delete("r", (3, "x", 8))
    assert sorted(view.rows()) == [("x", 2, 0), ("x", 3, 7)]


def test_rows_tied_in_different_partitions_are_no_tie():
    view = dynyan.load(SCHEMA + NUMBERED).View()
    view.update("r", [(1, "x"), (1, "y"), (1, None)])
    assert sorted(view.rows(), key=repr) == sorted(
        [("x", 1, 1), ("y", 1, 1), (None, 1, 1)], key=repr
    )


def test_push_reports_the_net_change_once_no_two_rows_tie():
    module = dynyan.load(SCHEMA_V + NUMBERED_V)
    pushed = {}

    def on_delta(row, change):
        pushed[row] = pushed.get(row, 0) + change
        if not pushed[row]:
            del pushed[row]

    view = module.View(on_delta=on_delta)
    view.insert("r", (5, "x", 0))
    assert pushed == {("x", 5, 0, 1): 1}
    view.insert("r", (5, "x", 1))  # a tie: nothing reported
    view.insert("r", (3, "x", 0))
    assert pushed == {("x", 5, 0, 1): 1}
    view.delete("r", (5, "x", 0))  # no tie again: the net change at once
    assert pushed == {("x", 3, 0, 1): 1, ("x", 5, 1, 2): 1}
    assert pushed == {row: 1 for row in view.rows()}


@pytest.mark.parametrize(
    "window, rows",
    [
        ("LAG(r.a) OVER (ORDER BY r.a)", [(1, None), (2, 1)]),
        ("NTILE(2) OVER (ORDER BY r.a)", [(1, 1), (2, 2)]),
        ("FIRST_VALUE(r.c) OVER (ORDER BY r.a DESC)", [(1, "y"), (2, "y")]),
        (
            "SUM(r.a) OVER (ORDER BY r.a ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)",
            [(1, 1), (2, 3)],
        ),
    ],
    ids=["lag", "ntile", "first_value", "rows_frame"],
)
def test_every_numbering_or_shifting_window_is_guarded(window, rows):
    view = dynyan.load(SCHEMA + f"SELECT r.a, {window} AS w, r.c FROM r").View()
    view.update("r", [(1, "x"), (2, "y")])
    assert sorted(view.rows()) == [(*row, c) for row, c in zip(rows, "xy")]
    view.insert("r", (2, "z"))
    assert "rows tie" in _error(view)


def test_an_order_proved_tie_free_has_no_guard():
    sql = (
        "SELECT r.c, COUNT(*) AS n, ROW_NUMBER() OVER (ORDER BY r.c) AS rn "
        "FROM r GROUP BY r.c"
    )
    view = dynyan.load(SCHEMA + sql).View()
    view.update("r", [(1, "x"), (2, "x"), (3, "y")])
    assert sorted(view.rows()) == [("x", 2, 1), ("y", 1, 2)]
    assert "__ties" not in dynyan.compile_sql(SCHEMA + sql)


def test_first_value_of_the_order_key_stands_while_rows_tie():
    """Rows that tie agree on the first ORDER BY key (and the PARTITION BY
    keys): FIRST_VALUE and LAST_VALUE of it are read, no guard."""
    view = dynyan.load(
        SCHEMA + "SELECT r.c, FIRST_VALUE(r.a) OVER (PARTITION BY r.c ORDER BY r.a "
        "DESC) AS top, LAST_VALUE(r.c) OVER (PARTITION BY r.c ORDER BY r.a) AS c2 "
        "FROM r"
    ).View()
    view.update("r", [(1, "x"), (2, "x"), (2, "x"), (3, "y")])
    assert sorted(view.rows()) == [("x", 2, "x")] * 3 + [("y", 3, "y")]
