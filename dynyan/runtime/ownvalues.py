"""Rows whose values come as other Python classes than the view's own.

A view computes with `int`, `float`, `str`, `bool`, `None` and `datetime`'s
`date`, `datetime` and `time` (docs/design.md, "Row values"). The drivers
and libraries rows come from hand over others: `decimal.Decimal` for a
DECIMAL or NUMERIC column (DuckDB's and psycopg's `fetchall()`), NumPy
scalars and pandas `Timestamp`s from a data frame. Checking every value's
class on every update would cost the hot path, so each relation's first
rows decide (`_FirstRows`, the generated View's `_decide`): when one holds
such a value, every row of the relation is converted first
(`_Converting`, `_own_row`), else the view's triggers take the rows as
they are, at no cost. A source keeps its classes, so its first row tells.
"""

import datetime
import decimal
import math
import numbers

from .sqlfuncs import ViewError, _single, _tupled


def _own_classes():
    """The classes a view computes with as they are (`_OWN`)."""
    return frozenset(
        {
            int,
            float,
            bool,
            str,
            type(None),
            datetime.date,
            datetime.datetime,
            datetime.time,
        }
    )


_OWN = _own_classes()


def _own_value(v, kind):
    """`v` (of a class not in `_OWN`) as the view's own class, or `v` itself
    when it is of none it converts. `kind`: its column's declared kind, "i"
    INTEGER (a whole Decimal becomes an int), "n" DECIMAL (finite), "r" REAL
    (a 4-byte float), "d" DATE (a timestamp's date, as DuckDB casts it), "z"
    TIMESTAMPTZ (an instant in UTC), "." any other. Raises ValueError for a
    value the column cannot hold."""
    if v.__class__ is decimal.Decimal:  # DECIMAL/NUMERIC from a database
        if kind == "i" and v.is_finite() and v == v.to_integral_value():
            return int(v)
        v = float(v)  # correctly rounded, as DuckDB reads a DECIMAL's text
        return _own_float(v, kind)
    if type(v).__name__ == "datetime64" and type(v).__module__ == "numpy":
        if v != v:  # NumPy's NaT
            return None
        v = v.astype("datetime64[us]").item()  # a datetime (a date if whole days)
        if v.__class__ is datetime.date and kind != "d":
            v = datetime.datetime(v.year, v.month, v.day)
    if isinstance(v, numbers.Integral):  # NumPy's integers
        return int(v)
    if isinstance(v, numbers.Real):  # NumPy's floats, fractions
        return _own_float(float(v), kind)
    if isinstance(v, datetime.datetime):  # pandas' Timestamp
        if v != v:  # pandas' NaT: its NULL
            return None
        own = datetime.datetime(
            v.year, v.month, v.day, v.hour, v.minute, v.second, v.microsecond
        )
        own = own.replace(tzinfo=v.tzinfo, fold=v.fold)
        if kind == "d":
            return own.date()
        if kind != "z":
            return own
        if own.utcoffset() is None:
            raise ValueError("a TIMESTAMPTZ column takes a datetime with a time zone")
        return own.astimezone(datetime.timezone.utc)
    if isinstance(v, datetime.date):
        return datetime.date(v.year, v.month, v.day)
    if isinstance(v, datetime.time):
        return datetime.time(
            v.hour, v.minute, v.second, v.microsecond, v.tzinfo, fold=v.fold
        )
    if isinstance(v, str):  # NumPy's str_
        return str(v)
    item = getattr(v, "item", None)  # NumPy's bool_
    if item is not None and type(v).__module__ == "numpy":
        own = item()
        if own.__class__ is bool:
            return own
    return v


def _own_float(v, kind):
    """The float `v` for a column of `kind` (`_own_value`'s): finite in a
    DECIMAL column, rounded to 4 bytes in a REAL one."""
    if kind == "n" and not math.isfinite(v):
        raise ValueError("a DECIMAL column holds no NaN or infinity")
    return _single_or_raise(v) if kind == "r" and v else v


def _single_or_raise(v):
    """`_single(v)`, a ValueError beyond a REAL's range."""
    single = _single(v)
    if single is None:
        raise ValueError("out of the range of a REAL (4-byte float) column")
    return single


def _own_row(relation, row, kinds, at):
    """`row` with each value at the positions `at` that `_own_value`
    converts converted (`kinds`: its columns' kinds, a str). A row of
    another length, or not a sequence, is left to the view's checks, which
    name it as it was given."""
    if type(row) is not tuple:
        try:
            row = _tupled(row)
        except TypeError:
            return row
    if len(row) != len(kinds):
        return row
    own, values = _OWN, list(row)
    for i in at:
        v = values[i]
        if v.__class__ not in own:
            try:
                values[i] = _own_value(v, kinds[i])
            except (ValueError, ArithmeticError) as error:
                raise ViewError(f"{relation}: {v!r} in {row!r}: {error}") from None
    return tuple(values)


def _foreign_at(row, kinds):
    """The positions of `row` whose value is of a class `_own_value` may
    convert or NULL (where a source gives such values: it keeps a column's
    class), but for columns the view neither reads nor keeps ("-")."""
    own = _OWN
    return tuple(
        i
        for i, (v, kind) in enumerate(zip(row, kinds))
        if kind != "-" and (v.__class__ not in own or v is None)
    )


def _foreign(row, kinds):
    """Whether `row` holds a value `_own_value` converts where the view
    reads or keeps it (True: `kinds` names "-" the columns it does not),
    holds none and no NULL there (False: its relation's values come as the
    view's own), or cannot tell (None: a NULL might stand where such a
    value comes, or it is not a row of the relation)."""
    if (type(row) is not tuple and type(row) is not list) or len(row) != len(kinds):
        return None
    full = True
    for v, kind in zip(row, kinds):
        if kind == "-":
            continue
        if v.__class__ in _OWN:
            full = full and v is not None
        elif _converts(v):
            return True
    return False if full else None


def _converts(v):
    """Whether `_own_value` changes `v` or refuses it (converting it then
    says what is wrong): a value of a class it does not know it leaves."""
    if v.__class__ in _OWN:
        return False
    try:
        return _own_value(v, ".") is not v
    except (ValueError, ArithmeticError):
        return True


def _foreign_hint(v):
    """What a TypeError over `v` adds when `v` is of a class `_own_value`
    converts (its relation's first rows held none), else ""."""
    if not _converts(v):
        return ""
    return (
        f" ({type(v).__name__} values are converted for a relation whose first "
        "row holds one; this relation's held none: give each source's rows "
        "with the same classes)"
    )


class _FirstRows:
    """The entry of a relation in one of a view's tables of triggers
    (`table`: "_appliers", "_triggers" or "_batchers") until the relation's
    first rows decide how its values come (the view's `_decide`)."""

    __slots__ = ("view", "relation", "table")

    def __init__(self, view, relation, table):
        self.view, self.relation, self.table = view, relation, table

    def __call__(self, rows, d):
        entries = getattr(self.view, self.table)
        entry = entries[self.relation]
        if entry is self:  # undecided: this call's rows may tell
            view, relation = self.view, self.relation
            if self.table != "_batchers":
                view._decide(relation, rows)
            else:  # a batch's rows in turn, until one tells
                for row in rows:
                    view._decide(relation, row)
                    if entries[relation] is not self:
                        break
            entry = entries[relation]
            if entry is self:  # still undecided: as they are
                entry = self.view._direct[self.table][self.relation]
        return entry(rows, d)


class _Converting:
    """A relation's trigger (or batcher, `many`) whose rows are converted
    to the view's own classes first (`_own_row`), at the positions where
    the row that decided held such a value or a NULL."""

    __slots__ = ("apply", "relation", "kinds", "at", "many")

    def __init__(self, apply, relation, kinds, at, many):
        self.apply, self.relation, self.kinds = apply, relation, kinds
        self.at, self.many = at, many  # the positions converted; a batcher

    def __call__(self, rows, d):
        relation, kinds, at = self.relation, self.kinds, self.at
        if self.many:
            rows = [_own_row(relation, row, kinds, at) for row in rows]
        else:
            rows = _own_row(relation, rows, kinds, at)
        return self.apply(rows, d)
