"""Query files: the SQL text of a query and the schema text it compiles with.

The CLI, replay and the benchmark harness all read query files this way, so a
query means the same wherever it is named.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..errors import SqlError


def read_query(path: str, schema: str | None) -> tuple[str, str | None]:
    """The query text and the schema text to compile it with.

    Without --schema, a query file that declares no table uses the file named
    by a `-- schema: PATH` comment line (relative to the query), else
    `schema.sql` beside it, else the nearest `tpch/schema.sql` above it.
    """
    sql = read_text(path, path)
    if schema is not None:
        return sql, read_text(schema, f"schema {schema}")
    if "create table" in sql.lower():
        return sql, None
    here = Path(path).resolve().parent
    named = re.search(r"^--\s*schema:\s*(\S+)", sql, flags=re.MULTILINE)
    if named:
        schema_path = here / named.group(1)
        return sql, read_text(schema_path, f"schema {named.group(1)} named in {path}")
    candidates = [here / "schema.sql"] + [
        p / "tpch" / "schema.sql" for p in [here, *here.parents]
    ]
    for candidate in candidates:
        if candidate.is_file():
            return sql, read_text(candidate, f"schema {candidate}")
    return sql, None


def read_text(path, what: str) -> str:
    """The UTF-8 text of a file (newlines as `read_text` gives them), or a
    one-line SqlError saying why not."""
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        raise SqlError(f"cannot read {what}: {err.strerror}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        col = err.start - data.rfind(b"\n", 0, err.start)
        raise SqlError(
            f"cannot read {what}: not UTF-8 text (byte 0x{data[err.start]:02x} "
            f"at line {line}, column {col})"
        ) from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def display_path(path: str) -> str:
    """`path` relative to the working directory when inside it (no absolute
    paths in generated files: output must not depend on the checkout)."""
    try:
        return Path(path).resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return Path(path).name
