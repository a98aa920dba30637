"""Benchmark data: TPC-H and TPC-DS tables generated locally as Parquet.

``generate("tpch", 0.1)`` runs the ``tpcgen-cli`` executable installed next to
the Python interpreter (the ``spark`` and ``test`` extras pin it) and leaves

    data/tpch/sf0.1/<table>/<table>.1.parquet
    data/tpch/sf0.1/_dynyan_data.json      # written last: the "complete" marker

Generation goes to a temporary sibling directory that is renamed into place
only when every table is written, so an interrupted run never looks complete.
A second call with the same benchmark and scale factor is a cache hit.

Types as tpcgen writes them (checked on tpcgen-cli 4.0.0): keys are int64
(TPC-H) or int32 (TPC-DS), DECIMAL columns are ``decimal128(p, 2)``, dates are
``date32``, strings are ``string_view``. Nothing is converted here: the stream
keeps the exact types and replay converts them per the module contract
(DECIMAL -> float, DATE -> datetime.date, INTEGER -> int, CHAR/VARCHAR -> str).
TPC-DS fact tables contain NULLs (``None`` on replay).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Iterator

from ..errors import PipelineError

#: Tables each benchmark generates, in a stable order.
TABLES: dict[str, tuple[str, ...]] = {
    "tpch": (
        "region",
        "nation",
        "supplier",
        "customer",
        "part",
        "partsupp",
        "orders",
        "lineitem",
    ),
    "tpcds": (
        "call_center",
        "catalog_page",
        "catalog_returns",
        "catalog_sales",
        "customer",
        "customer_address",
        "customer_demographics",
        "date_dim",
        "household_demographics",
        "income_band",
        "inventory",
        "item",
        "promotion",
        "reason",
        "ship_mode",
        "store",
        "store_returns",
        "store_sales",
        "time_dim",
        "warehouse",
        "web_page",
        "web_returns",
        "web_sales",
        "web_site",
    ),
}

MARKER = "_dynyan_data.json"
DATA_DIR_ENV = "DYNYAN_DATA_DIR"


def default_data_dir() -> Path:
    """``$DYNYAN_DATA_DIR`` if set, else ``./data`` (git-ignored in the repo)."""
    return Path(os.environ.get(DATA_DIR_ENV) or "data")


def sf_label(sf: float) -> str:
    """``0.1 -> 'sf0.1'``, ``1.0 -> 'sf1'``: the scale factor as it appears in paths."""
    if sf <= 0:
        raise PipelineError(f"scale factor must be positive, got {sf}")
    return f"sf{float(sf):g}"


def dataset_dir(benchmark: str, sf: float, data_dir: str | Path | None = None) -> Path:
    """Where ``generate(benchmark, sf)`` puts (or has put) the tables."""
    _check_benchmark(benchmark)
    base = Path(data_dir) if data_dir is not None else default_data_dir()
    return base / benchmark / sf_label(sf)


def tpcgen_executable() -> Path:
    """The ``tpcgen-cli`` binary of this environment (never downloaded)."""
    here = Path(sys.executable).parent / "tpcgen-cli"
    if here.exists():
        return here
    found = shutil.which("tpcgen-cli")
    if found:
        return Path(found)
    raise PipelineError(
        f"tpcgen-cli not found next to {sys.executable} nor on PATH; "
        "install the data extra: pip install -e '.[spark]'"
    )


def is_complete(directory: str | Path) -> bool:
    """True if ``directory`` holds a finished dataset (marker and every table)."""
    directory = Path(directory)
    try:
        marker = json.loads((directory / MARKER).read_text())
    except (OSError, ValueError):
        return False
    tables = marker.get("tables", {})
    return bool(tables) and all(
        any((directory / table).glob("*.parquet")) for table in tables
    )


def generate(
    benchmark: str,
    sf: float,
    data_dir: str | Path | None = None,
    force: bool = False,
    quiet: bool = False,
) -> Path:
    """Generate ``benchmark`` at scale factor ``sf`` unless already there; return its directory.

    TPC-DS below SF 1 is allowed, but tpcgen (like dsdgen) does not scale its
    fixed-size dimension tables down, so those stay at their SF 1 size.
    """
    target = dataset_dir(benchmark, sf, data_dir)
    if is_complete(target) and not force:
        return target
    exe = tpcgen_executable()
    with staging_dir(target) as tmp:
        _run_tpcgen(exe, benchmark, sf, tmp, quiet)
    return target


def _run_tpcgen(exe: Path, benchmark: str, sf: float, tmp: Path, quiet: bool) -> None:
    """Write every table of ``benchmark`` and the marker into ``tmp``."""
    tables = TABLES[benchmark]
    cmd = [
        str(exe),
        benchmark,
        "parquet",
        "--scale-factor",
        f"{float(sf):g}",
        "--output-dir",
        str(tmp),
        "--parts",
        "1",
        "--tables",
        ",".join(tables),
    ]
    if quiet or not sys.stderr.isatty():
        cmd.append("--quiet")
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except OSError as exc:
        raise PipelineError(f"could not run {exe}: {exc}") from exc
    if proc.returncode != 0:
        detail = proc.stderr.decode(errors="replace").strip().splitlines()[-3:]
        raise PipelineError(
            f"tpcgen-cli failed for {benchmark} SF {sf:g} (exit {proc.returncode}): "
            + " | ".join(detail)
        )
    counts = {}
    for table in tables:
        files = sorted((tmp / table).glob("*.parquet"))
        if not files:
            raise PipelineError(f"tpcgen-cli wrote no Parquet file for table {table}")
        counts[table] = sum(_parquet_rows(f) for f in files)
    marker = {
        "benchmark": benchmark,
        "scale_factor": float(sf),
        "generator": "tpcgen-cli",
        "tables": counts,
    }
    (tmp / MARKER).write_text(json.dumps(marker, indent=2) + "\n")


@contextlib.contextmanager
def staging_dir(target: str | Path) -> Iterator[Path]:
    """A fresh hidden ``.<name>.tmp-<pid>`` directory beside ``target`` to build it in.

    When the block ends normally the directory replaces ``target`` (by a
    rename); if the block raises, it is removed. First removes the temporary directories of ``target`` that
    processes no longer alive left behind (a build killed with SIGKILL never
    cleans up); those of running processes (concurrent builds) are kept.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_staging_dirs(target)
    tmp = target.parent / f".{target.name}.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        yield tmp
        if target.exists():
            shutil.rmtree(target)
        os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def remove_stale_staging_dirs(target: str | Path) -> list[Path]:
    """Remove the ``.<name>.tmp-<pid>`` directories beside ``target`` whose
    process is gone; return them."""
    target = Path(target)
    pattern = re.compile(rf"^\.{re.escape(target.name)}\.tmp-(\d+)$")
    removed = []
    try:
        siblings = list(target.parent.iterdir())
    except OSError:
        return removed
    for path in siblings:
        m = pattern.match(path.name)
        if m and path.is_dir() and not path.is_symlink():
            pid = int(m.group(1))
            if pid != os.getpid() and not _pid_alive(pid):
                shutil.rmtree(path, ignore_errors=True)
                removed.append(path)
    return removed


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: it exists (another user's); else: cannot tell
        return True
    return True


def table_rows(directory: str | Path) -> dict[str, int]:
    """Row count per table of a generated dataset (from its marker)."""
    directory = Path(directory)
    if not is_complete(directory):
        raise PipelineError(
            f"{directory} is not a complete dataset; run `dynyan data` first"
        )
    return dict(json.loads((directory / MARKER).read_text())["tables"])


def table_path(directory: str | Path, table: str) -> Path:
    """Directory of one table's Parquet files inside a dataset."""
    path = Path(directory) / table
    if not path.is_dir():
        known = ", ".join(sorted(table_rows(directory)))
        raise PipelineError(f"no table {table!r} in {directory} (it has: {known})")
    return path


def _parquet_rows(path: Path) -> int:
    import pyarrow.parquet as pq

    return pq.read_metadata(path).num_rows


def _check_benchmark(benchmark: str) -> None:
    if benchmark not in TABLES:
        raise PipelineError(
            f"unknown benchmark {benchmark!r}; supported: {', '.join(sorted(TABLES))}"
        )
