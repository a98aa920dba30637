"""Rows whose values come as a database driver's or a data frame's classes.

DuckDB's and psycopg's `fetchall()` give a DECIMAL as `decimal.Decimal`,
data frames give NumPy scalars and pandas Timestamps. A relation whose
first row holds such a value has every row converted to the view's own
classes (dynyan/runtime/ownvalues.py); checked here against DuckDB with
random streams whose rows are handed over so, and for TPC-H Q1 with the
rows as DuckDB's `fetchall()` returns them.
"""

from __future__ import annotations

import datetime
import decimal
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from differential import QuerySpec, run_differential
from dynyan.compiler import compile_sql, load
from dynyan.runtime.ownvalues import _foreign, _foreign_at, _own_row, _own_value

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "sql"
# DECIMAL sums and filters, DOUBLE, REAL, TIMESTAMP(TZ), joins, windows,
# subqueries, PRIMARY KEYs, DISTINCT
QUERIES = [
    "210_scalar_subquery_kept_at_filtered_keys.sql",
    "163_any_value_by_primary_key.sql",
    "115_lateral_joins.sql",
    "11_scalar_equal_min.sql",
    "124_correlation_and_regression.sql",
    "128_date_arithmetic_over_aggregates.sql",
    "154_epoch_and_timestamp_spans.sql",
    "309_real_columns.sql",
    "315_timestamptz.sql",
    "122_distinct_on.sql",
]


def foreign_classes(row, kinds, types):
    """`row` as a driver or a data frame gives it: DECIMAL as Decimal,
    INTEGER as NumPy's int64 (or a whole Decimal, as NUMERIC(p, 0) comes
    from PostgreSQL), DOUBLE as NumPy's float64, REAL as float32,
    TIMESTAMP(TZ) as pandas' Timestamp or NumPy's datetime64 (NaT for
    NULL), DATE as a Timestamp at midnight, VARCHAR as NumPy's str_."""
    out = []
    for i, (v, kind, type_) in enumerate(zip(row, kinds, types)):
        if v is None:
            v = pd.NaT if type_ in ("timestamp", "timestamptz") else None
        elif kind == "n" and v.__class__ in (int, float) and v == v:
            v = decimal.Decimal(repr(v))
        elif kind == "i" and v.__class__ is int:
            v = decimal.Decimal(v) if i % 2 else np.int64(v)
        elif kind == "r" and v.__class__ is float:
            v = np.float32(v)
        elif v.__class__ is float:
            v = np.float64(v)
        elif v.__class__ is datetime.datetime:
            naive = v.tzinfo is None  # (NumPy's datetime64 holds no time zone)
            v = np.datetime64(v) if naive and i % 2 else pd.Timestamp(v)
        elif v.__class__ is datetime.date:
            v = pd.Timestamp(v)  # a data frame's DATE column
        elif v.__class__ is str:
            v = np.str_(v)
        out.append(v)
    return tuple(out)


def handed_over(module, spec):
    """`module` with a View whose calls get rows in `foreign_classes`."""
    declared = {  # each column's kind as `_own_kinds` names it, read or not
        relation: "".join(
            (
                "i"
                if c.kind == "int"
                else (
                    "r"
                    if c.sql_type in ("REAL", "FLOAT", "FLOAT4")
                    else "n" if c.kind == "float" and c.scale is not None else "."
                )
            )
            for c in columns
        )
        for relation, columns in spec.tables.items()
    }

    class View(module.View):
        def _foreign(self, relation, row):
            kinds = declared.get(relation)
            if kinds is None or len(row) != len(kinds):
                return row
            return foreign_classes(row, kinds, [c.kind for c in spec.tables[relation]])

        def insert(self, relation, row):
            super().insert(relation, self._foreign(relation, row))

        def delete(self, relation, row):
            super().delete(relation, self._foreign(relation, row))

        def update(self, relation, rows, mults=None):
            rows = [self._foreign(relation, r) for r in rows]
            super().update(relation, rows, mults)

    return type("Module", (), {"View": View})


@pytest.mark.parametrize("trust", [False, True], ids=["strict", "trusting"])
@pytest.mark.parametrize("name", QUERIES)
def test_rows_of_other_classes_give_duckdbs_result(name, trust):
    path = FIXTURES / name
    spec = QuerySpec.from_file(path)
    module = handed_over(load(path.read_text(), trust_input=trust), spec)
    for seed, push, nulls in ((0, False, 0.0), (1, True, 0.15), (2, False, 0.15)):
        run_differential(
            spec, module, seed=seed, n_events=160, push=push, null_rate=nulls
        )


def test_rows_as_duckdb_fetchall_gives_them():
    """TPC-H Q1 fed lineitem as DuckDB's fetchall() returns it (DECIMAL as
    Decimal), one row at a time and in a batch: DuckDB's result."""
    import duckdb

    schema = (ROOT / "tpch" / "schema.sql").read_text()
    sql = (ROOT / "queries" / "tpch" / "spec" / "q1.sql").read_text()
    con = duckdb.connect()
    con.execute(schema)
    con.execute(
        "INSERT INTO lineitem SELECT i, i % 97, i % 13, i % 7, (i % 50) + 1, "
        "((i * 7919) % 100000) / 100.0 + 900, (i % 11) / 100.0, (i % 9) / 100.0, "
        "['A', 'N', 'R'][i % 3 + 1], ['F', 'O'][i % 2 + 1], "
        "DATE '1992-01-01' + INTERVAL (i % 2500) DAY, DATE '1992-02-01', "
        "DATE '1992-03-01', 'NONE', 'MAIL', 'c' FROM range(1, 3001) t(i)"
    )
    rows = con.execute("SELECT * FROM lineitem").fetchall()
    assert isinstance(rows[0][4], decimal.Decimal)

    def duckdb_result():
        return sorted(
            tuple(float(v) if isinstance(v, decimal.Decimal) else v for v in r)
            for r in con.execute(sql).fetchall()
        )

    def check(view, expected):
        got = sorted(view.rows())
        assert [r[:2] for r in got] == [r[:2] for r in expected]
        for g, e in zip(got, expected):
            assert g[2:] == pytest.approx(e[2:], rel=1e-9)

    expected = duckdb_result()
    views = []
    for trust in (False, True):
        module = load(schema + sql, trust_input=trust)
        one, batched = module.View(), module.View()
        for row in rows:
            one.insert("lineitem", row)
        batched.update("lineitem", rows)
        check(one, expected)
        check(batched, expected)
        views.append(one)
    con.execute("DELETE FROM lineitem WHERE l_orderkey % 2 = 1")
    for view in views:
        for row in rows[::2]:  # the odd l_orderkey
            view.delete("lineitem", row)
        check(view, duckdb_result())


SCHEMA = (
    "CREATE TABLE t (k INTEGER, x DECIMAL(10, 2), f DOUBLE, s VARCHAR, "
    "ts TIMESTAMP, d DATE);"
)


def view_of(sql, trust=False):
    namespace = {}
    exec(compile(compile_sql(sql, SCHEMA, trust_input=trust), "m", "exec"), namespace)
    return namespace["View"]


def test_first_row_of_own_classes_takes_rows_as_they_are():
    """The first row decides: one of the view's own classes puts the
    relation's trigger itself in place (nothing on the hot path), and a
    Decimal later where the view computes is refused, saying why."""
    View = view_of("SELECT k, SUM(x) FROM t GROUP BY k")
    view = View()
    view.insert("t", (1, 2.5, 0.5, "a", datetime.datetime(2024, 1, 1), None))
    assert view._appliers["t"] != view._apply_t  # a NULL does not tell
    row = (1, 2.5, 0.5, "a", datetime.datetime(2024, 1, 1), datetime.date(2024, 1, 1))
    view.insert("t", row)
    assert view._appliers["t"] == view._apply_t
    before = view.snapshot()
    with pytest.raises(TypeError, match=r"Decimal values are converted for a relation"):
        view.insert("t", (1, decimal.Decimal("2.5")) + row[2:])
    assert view.snapshot() == before


def test_null_rows_do_not_decide():
    """Rows with a NULL leave the decision open (the NULL may stand where a
    Decimal comes); the first row with a Decimal converts every later row,
    so the rows before and after meet in one group."""
    View = view_of("SELECT x, COUNT(*) FROM t GROUP BY x")
    view = View()
    view.insert("t", (1, 0.1, None, "a", None, None))
    assert view._unsure == {"t": 1}
    view.insert("t", (2, decimal.Decimal("0.1"), None, "a", None, None))
    view.update("t", [(3, decimal.Decimal("0.10"), None, "b", None, None)] * 2)
    assert sorted(view.rows()) == [(0.1, 4)]
    view.delete("t", (1, decimal.Decimal("0.1"), None, "a", None, None))
    assert sorted(view.rows()) == [(0.1, 3)]


def test_a_batch_is_decided_by_its_first_row_that_tells():
    View = view_of("SELECT k, SUM(x) FROM t GROUP BY k")
    view = View()
    rows = [
        (1, None, None, None, None, None),
        (1, decimal.Decimal("1.25"), 0.0, "", None, None),
    ]
    view.update("t", rows * 3)
    assert sorted(view.rows()) == [(1, 3.75)]


def test_values_a_column_cannot_hold_are_refused():
    View = view_of("SELECT k, SUM(x) FROM t GROUP BY k")
    for bad in (decimal.Decimal("NaN"), decimal.Decimal("-Infinity")):
        view = View()
        with pytest.raises(ValueError, match="DECIMAL column holds no NaN"):
            view.insert("t", (1, bad, None, None, None, None))
        assert list(view.rows()) == []


@pytest.mark.parametrize(
    "given, kind, own",
    [
        (decimal.Decimal("12.50"), "n", 12.5),
        (decimal.Decimal("12"), "i", 12),
        (decimal.Decimal("12.5"), "i", 12.5),
        (decimal.Decimal("0.1"), "n", 0.1),
        (np.int64(-3), "i", -3),
        (np.float64(0.25), ".", 0.25),
        (np.float32(0.1), "r", float(np.float32(0.1))),
        (np.bool_(True), ".", True),
        (np.str_("ab"), ".", "ab"),
        (
            pd.Timestamp("2024-01-02 03:04:05.000006"),
            ".",
            datetime.datetime(2024, 1, 2, 3, 4, 5, 6),
        ),
        (pd.NaT, ".", None),
        (pd.Timestamp("2024-01-02"), "d", datetime.date(2024, 1, 2)),
        (
            np.datetime64("2024-01-02T03:04:05.123456789"),
            ".",
            datetime.datetime(2024, 1, 2, 3, 4, 5, 123456),
        ),
        (np.datetime64("2024-01-02"), "d", datetime.date(2024, 1, 2)),
        (np.datetime64("2024-01-02"), ".", datetime.datetime(2024, 1, 2)),
        (np.datetime64("NaT"), ".", None),
        (
            pd.Timestamp("2024-01-02 03:00", tz="Europe/Berlin"),
            "z",
            datetime.datetime(2024, 1, 2, 2, 0, tzinfo=datetime.timezone.utc),
        ),
    ],
)
def test_own_value(given, kind, own):
    got = _own_value(given, kind)
    assert got == own and got.__class__ is own.__class__
    if got is not None and got.__class__ is datetime.datetime:
        assert got.tzinfo == own.tzinfo


def test_own_row_and_foreign():
    row = (np.int64(1), decimal.Decimal("2.50"), "x", None)
    assert _foreign(row, "in..") is True
    assert _foreign(row, "-n.-") is True
    assert _foreign(row, "i-..") is True
    assert _foreign(row, "--.-") is False  # nothing read where it comes
    assert _foreign((1, 2.5, "x", None), "in..") is None  # a NULL: cannot tell
    assert _foreign((1, 2.5, "x", None), "in.-") is False  # (not read)
    assert _foreign((1, 2.5, "x", "y"), "in..") is False
    assert _foreign((1, 2.5), "in..") is None  # not a row of the relation
    assert _foreign_at(row, "in..") == (0, 1, 3)  # NULLs too: a source's NULL
    assert _foreign_at(row, "-n..") == (1, 3)
    assert _own_row("t", row, "in..", (0, 1, 3)) == (1, 2.5, "x", None)
    assert _own_row("t", row, "in..", (1,)) == (np.int64(1), 2.5, "x", None)
    assert _own_row("t", [1, 2.5], "in", (0, 1)) == (1, 2.5)
    assert _own_row("t", (1,), "in", (0, 1)) == (1,)  # the view's checks name it
    with pytest.raises(ValueError, match=r"t: Timestamp\('2024-01-01 00:00:00'\)"):
        _own_row("t", (pd.Timestamp("2024-01-01"),), "z", (0,))
