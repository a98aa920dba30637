"""PostgreSQL's logical replication messages (pgoutput, protocol version 1)
and the text form of column values, decoded into the module contract's types.

Pure functions over bytes: no driver, no connection. ``dynyan.pipeline.follow``
feeds them the payloads of the replication stream and the lines of ``COPY
… TO STDOUT``, so the initial snapshot and every later change go through the
same value decoders (a value read in the snapshot and the same value deleted
later are the same Python object, as the view's multiplicities need).

Value types (the contract of a generated module, README "Row values"):

=================================  ==========================================
PostgreSQL                          Python
=================================  ==========================================
smallint, integer, bigint           ``int``
numeric, real, double precision     ``float`` (correctly rounded from the text,
                                    as replay turns DECIMAL into float; sums
                                    over DECIMAL(p, s) are exact in the view)
date                                ``datetime.date``
text, varchar(n), name              ``str``
char(n)                             ``str`` without the padding blanks
NULL                                ``None``
=================================  ==========================================

A NaN, an infinite or BC date or one past year 9999 has no value in the
contract: decoding refuses it with ``ValueError`` naming it.

>>> decode_tuple(b"\\x00\\x03t\\x00\\x00\\x00\\x0242n" + b"u", 0)
([b'42', None, UNCHANGED], 11)
>>> format_lsn(parse_lsn("16/B374D848"))
'16/B374D848'
"""

from __future__ import annotations

import datetime
import operator
import struct
from dataclasses import dataclass

# ---------------------------------------------------------------------------
# LSNs and timestamps

PG_EPOCH = 946_684_800  # 2000-01-01 00:00:00 UTC in Unix seconds


def parse_lsn(text: str) -> int:
    """``'16/B374D848'`` -> the 64-bit position."""
    try:
        high, low = text.split("/")
        return (int(high, 16) << 32) | int(low, 16)
    except ValueError:
        raise ValueError(f"not an LSN: {text!r} (expected e.g. 16/B374D848)") from None


def format_lsn(lsn: int) -> str:
    """The 64-bit position in PostgreSQL's ``X/Y`` notation."""
    return f"{lsn >> 32:X}/{lsn & 0xFFFFFFFF:X}"


def pg_time(microseconds: int) -> float:
    """A PostgreSQL timestamp (microseconds since 2000-01-01 UTC) as Unix seconds."""
    return PG_EPOCH + microseconds / 1_000_000


# ---------------------------------------------------------------------------
# Messages

_BEGIN = struct.Struct(">QqI")  # final (commit) LSN, commit time, xid
_COMMIT = struct.Struct(">BQQq")  # flags, commit LSN, end LSN, commit time
_U32 = struct.Struct(">I")
_U16 = struct.Struct(">H")
_REL_HEAD = struct.Struct(">I")

UNCHANGED = type(
    "Unchanged",
    (),
    {"__repr__": lambda self: "UNCHANGED", "__reduce__": lambda self: "UNCHANGED"},
)()
"""An unchanged TOASTed value in an UPDATE's new row: the old row has it."""


@dataclass(frozen=True)
class Column:
    """One column as a Relation message (or the catalog) describes it."""

    name: str
    type_oid: int
    typmod: int


@dataclass(frozen=True)
class RelationMessage:
    """pgoutput's description of a table, sent before its first change in a
    session and again whenever its definition may have changed."""

    oid: int
    namespace: str
    name: str
    replica_identity: str  # 'd' default, 'n' nothing, 'f' full, 'i' index
    columns: tuple[Column, ...]


def decode_begin(buf) -> tuple[int, int, int]:
    """``B`` message: (commit LSN, commit time in PostgreSQL microseconds, xid)."""
    return _BEGIN.unpack_from(buf, 1)


def decode_commit(buf) -> tuple[int, int, int]:
    """``C`` message: (commit LSN, end LSN, commit time in PostgreSQL microseconds)."""
    _, commit_lsn, end_lsn, ts = _COMMIT.unpack_from(buf, 1)
    return commit_lsn, end_lsn, ts


def _cstring(buf, offset: int) -> tuple[str, int]:
    end = bytes(buf[offset : offset + 1024]).find(b"\0")
    if end < 0:  # a very long name: search the rest
        end = bytes(buf[offset:]).index(b"\0")
    return bytes(buf[offset : offset + end]).decode("utf-8"), offset + end + 1


def decode_relation(buf) -> RelationMessage:
    """``R`` message."""
    (oid,) = _REL_HEAD.unpack_from(buf, 1)
    namespace, off = _cstring(buf, 5)
    name, off = _cstring(buf, off)
    replident = chr(buf[off])
    (ncols,) = _U16.unpack_from(buf, off + 1)
    off += 3
    columns = []
    for _ in range(ncols):
        off += 1  # flags: 1 = part of the key
        cname, off = _cstring(buf, off)
        type_oid, typmod = struct.unpack_from(">Ii", buf, off)
        off += 8
        columns.append(Column(cname, type_oid, typmod))
    return RelationMessage(
        oid, namespace or "pg_catalog", name, replident, tuple(columns)
    )


def decode_tuple(buf, offset: int) -> tuple[list, int]:
    """TupleData at ``offset``: the raw text values (``bytes``), ``None`` for
    NULL, ``UNCHANGED`` for an unchanged TOASTed value; and the offset after it."""
    (ncols,) = _U16.unpack_from(buf, offset)
    offset += 2
    values = []
    append = values.append
    for _ in range(ncols):
        kind = buf[offset]
        if kind == 0x74:  # 't': text
            n = int.from_bytes(buf[offset + 1 : offset + 5], "big")
            append(bytes(buf[offset + 5 : offset + 5 + n]))
            offset += 5 + n
        elif kind == 0x6E:  # 'n': NULL
            append(None)
            offset += 1
        elif kind == 0x75:  # 'u': unchanged TOASTed value
            append(UNCHANGED)
            offset += 1
        else:  # 'b' (binary) is only sent when asked for
            raise ValueError(
                f"unexpected column kind {chr(kind)!r} in a pgoutput tuple"
            )
    return values, offset


def decode_insert(buf) -> tuple[int, list]:
    """``I`` message: (relation oid, new row)."""
    (oid,) = _U32.unpack_from(buf, 1)
    values, _ = decode_tuple(buf, 6)  # 'N' at offset 5
    return oid, values


def decode_update(buf) -> tuple[int, str | None, list | None, list]:
    """``U`` message: (relation oid, kind of old row, old row, new row).

    The kind is ``'O'`` (the whole old row: REPLICA IDENTITY FULL), ``'K'``
    (only its key columns) or None (no old row: the key did not change)."""
    (oid,) = _U32.unpack_from(buf, 1)
    kind = chr(buf[5])
    old = None
    off = 6
    if kind in ("O", "K"):
        old, off = decode_tuple(buf, off)
        off += 1  # 'N'
    else:
        kind = None
    new, _ = decode_tuple(buf, off)
    return oid, kind, old, new


def decode_delete(buf) -> tuple[int, str, list]:
    """``D`` message: (relation oid, ``'O'`` or ``'K'``, old row or its key)."""
    (oid,) = _U32.unpack_from(buf, 1)
    kind = chr(buf[5])
    old, _ = decode_tuple(buf, 6)
    return oid, kind, old


def decode_truncate(buf) -> list[int]:
    """``T`` message: the oids of the truncated relations."""
    (n,) = _U32.unpack_from(buf, 1)
    return list(struct.unpack_from(f">{n}I", buf, 6))


# ---------------------------------------------------------------------------
# Values

INT_TYPES = {20: "bigint", 21: "smallint", 23: "integer", 26: "oid"}
FLOAT_TYPES = {700: "real", 701: "double precision", 1700: "numeric"}
TEXT_TYPES = {25: "text", 1043: "varchar", 19: "name"}
BPCHAR = 1042
DATE = 1082
TIMESTAMP = 1114
TIMESTAMPTZ = 1184
TIME = 1083
BOOL = 16


def python_type(type_oid: int) -> str | None:
    """The contract's Python type of a PostgreSQL type (None: not supported)."""
    if type_oid in INT_TYPES:
        return "int"
    if type_oid in FLOAT_TYPES:
        return "float"
    if type_oid in TEXT_TYPES or type_oid == BPCHAR:
        return "str"
    if type_oid == DATE:
        return "date"
    if type_oid == BOOL:
        return "bool"
    if type_oid == TIMESTAMP:
        return "timestamp"
    if type_oid == TIMESTAMPTZ:
        return "timestamptz"
    if type_oid == TIME:
        return "time"
    return None


def _float(raw) -> float:
    value = float(raw)
    if value != value:
        raise ValueError(
            "NaN has no value in a view (it equals nothing, not even itself)"
        )
    return value


def _timestamp(raw) -> datetime.datetime:
    """A timestamp without time zone ('2024-01-31 10:00:00[.ffffff]')."""
    text = raw.decode() if isinstance(raw, bytes) else raw
    try:
        return datetime.datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(
            f"timestamp {text!r} has no datetime.datetime (infinite, BC or past 9999)"
        ) from None


def _timestamptz(raw) -> datetime.datetime:
    """A timestamp with time zone, as PostgreSQL writes it in the session's
    zone with its offset ('2024-01-31 10:00:00+01'): the instant in UTC."""
    value = _timestamp(raw)
    if value.tzinfo is None:
        raise ValueError(f"timestamptz {value} has no offset")
    return value.astimezone(datetime.timezone.utc)


def _time(raw) -> datetime.time:
    """A time of day ('10:00:00[.ffffff]'); 24:00:00, which PostgreSQL
    holds, has no datetime.time."""
    text = raw.decode() if isinstance(raw, bytes) else raw
    try:
        return datetime.time.fromisoformat(text)
    except ValueError:
        raise ValueError(f"time {text!r} has no datetime.time") from None


def _date_parser():
    """Dates parsed once each (a table holds few distinct dates): equal
    dates become one object, which also saves memory in the view."""
    cache: dict = {}

    def parse(raw) -> datetime.date:
        value = cache.get(raw)
        if value is None:
            if len(raw) != 10:
                text = raw.decode() if isinstance(raw, bytes) else raw
                raise ValueError(
                    f"date {text!r} has no datetime.date (infinite, BC or past 9999)"
                )
            if len(cache) >= 100_000:
                cache.clear()
            value = cache[raw] = datetime.date(
                int(raw[0:4]), int(raw[5:7]), int(raw[8:10])
            )
        return value

    return parse


def value_decoder(type_oid: int, encoding: str = "utf-8"):
    """The function turning one text value (``bytes``) into its Python value."""
    if type_oid in INT_TYPES:
        return int
    if type_oid in FLOAT_TYPES:
        return _float
    if type_oid in TEXT_TYPES:
        if encoding.replace("-", "").lower() == "utf8":
            return bytes.decode  # C: no Python frame per value
        return lambda raw: raw.decode(encoding)
    if type_oid == BPCHAR:
        return lambda raw: raw.decode(encoding).rstrip(" ")
    if type_oid == DATE:
        return _date_parser()
    if type_oid == BOOL:
        return b"t".__eq__  # 't' or 'f'
    if type_oid == TIMESTAMP:
        return _timestamp
    if type_oid == TIMESTAMPTZ:
        return _timestamptz
    if type_oid == TIME:
        return _time
    raise ValueError(f"type oid {type_oid} is not supported")


def row_decoder(positions: list[int], decoders: list):
    """A function from a raw tuple (``decode_tuple``'s list) to the view's row:
    the values at ``positions``, each through its decoder; NULL stays None."""
    decoders = list(decoders)
    if positions == list(range(len(positions))):
        pick = None
    elif len(positions) == 1:
        only = positions[0]
        pick = lambda values: (values[only],)  # noqa: E731
    else:
        pick = operator.itemgetter(*positions)

    def decode(values):
        if pick is not None:
            values = pick(values)
        if None in values:
            return tuple(
                [None if v is None else f(v) for f, v in zip(decoders, values)]
            )
        return tuple([f(v) for f, v in zip(decoders, values)])

    return decode


# ---------------------------------------------------------------------------
# COPY … TO STDOUT (text format)

_COPY_ESCAPES = {
    ord("b"): b"\b",
    ord("f"): b"\f",
    ord("n"): b"\n",
    ord("r"): b"\r",
    ord("t"): b"\t",
    ord("v"): b"\v",
    ord("\\"): b"\\",
}


def copy_field(field: bytes):
    """One field of a COPY text line as pgoutput would send it (None: NULL)."""
    if b"\\" not in field:
        return field
    if field == b"\\N":
        return None
    out = bytearray()
    i, n = 0, len(field)
    while i < n:
        c = field[i]
        if c != 0x5C:
            out.append(c)
            i += 1
            continue
        nxt = field[i + 1]
        if nxt in _COPY_ESCAPES:
            out += _COPY_ESCAPES[nxt]
            i += 2
        elif 0x30 <= nxt <= 0x37:  # \ooo octal
            j = i + 1
            while j < min(i + 4, n) and 0x30 <= field[j] <= 0x37:
                j += 1
            out.append(int(field[i + 1 : j], 8) & 0xFF)
            i = j
        elif nxt == ord("x"):  # \xHH
            j = i + 2
            while j < min(i + 4, n) and chr(field[j]) in "0123456789abcdefABCDEF":
                j += 1
            out.append(int(field[i + 2 : j], 16))
            i = j
        else:
            out.append(nxt)
            i += 2
    return bytes(out)


def copy_line(line: bytes) -> list:
    """The raw values of one COPY text line (without its newline)."""
    if b"\\" not in line:  # no NULL (\\N), no escape: the common case
        return line.split(b"\t")
    return [copy_field(f) for f in line.split(b"\t")]
