"""Huge pages for the heap of long replays (`dynyan replay --huge-pages`, and
the benchmark harness's `--huge-pages` for every Python system alike).

A view of millions of rows spreads its dicts, tuples and ints over
gigabytes and touches them at random: far more 4 KiB pages than the TLB
maps, so a dict lookup that misses the cache also pays a page walk (two
nested ones inside a virtual machine). Transparent huge pages (2 MiB) map
512 times as much per TLB entry (BENCHMARKS.md, "Huge pages").

CPython's small-object allocator maps arenas of 1 MiB, which the kernel
backs with huge pages only in its "always" mode. The policy therefore sends
every allocation to glibc's malloc (``PYTHONMALLOC=malloc``) and has glibc
advise huge pages for the memory it maps (``glibc.malloc.hugetlb=1``,
glibc 2.35 or later), which the kernel honours in its "madvise" mode too.
Both settings are read when a process starts, so they take effect in a new
process: `reexec` replaces the current one, the harness sets them for its
workers.
"""

from __future__ import annotations

import os
import platform
import sys
from collections.abc import Mapping
from pathlib import Path

TUNABLE = "glibc.malloc.hugetlb=1"
THP_SETTING = Path("/sys/kernel/mm/transparent_hugepage/enabled")


def unsupported() -> str | None:
    """Why this machine cannot back the heap with huge pages; None if it can."""
    if sys.platform != "linux":
        return f"transparent huge pages are a Linux feature (this is {sys.platform})"
    libc, version = platform.libc_ver()
    if libc != "glibc":
        return f"needs glibc's malloc (this Python runs on {libc or 'another libc'})"
    try:
        too_old = tuple(int(x) for x in version.split(".")[:2]) < (2, 35)
    except ValueError:
        return f"cannot tell this glibc's version ({version!r}); {TUNABLE} needs 2.35"
    if too_old:
        return f"needs glibc 2.35 or later for {TUNABLE} (this is {version})"
    try:
        setting = THP_SETTING.read_text()
    except OSError:
        return f"the kernel has no transparent huge pages ({THP_SETTING} unreadable)"
    if "[never]" in setting:
        return f"transparent huge pages are off ({THP_SETTING}: never)"
    return None


def environment(base: Mapping[str, str]) -> dict[str, str]:
    """`base` with the policy's two variables set (other glibc tunables kept)."""
    env = dict(base)
    env["PYTHONMALLOC"] = "malloc"
    tunables = [t for t in env.get("GLIBC_TUNABLES", "").split(":") if t]
    tunables = [t for t in tunables if not t.startswith("glibc.malloc.hugetlb=")]
    env["GLIBC_TUNABLES"] = ":".join(tunables + [TUNABLE])
    return env


def active(env: Mapping[str, str] = os.environ) -> bool:
    """Whether a process started with `env` runs under the policy."""
    return env.get("PYTHONMALLOC") == "malloc" and TUNABLE in env.get(
        "GLIBC_TUNABLES", ""
    ).split(":")


def reexec() -> None:
    """Run this process's command again under the policy (does not return).

    The caller checks `active()` first: the new process sees the variables
    set and goes on without re-executing again."""
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, sys.orig_argv, environment(os.environ))
