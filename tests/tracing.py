"""Counting the Python lines a call executes (deterministic, time-independent
work measures for the enumeration and update tests)."""

from __future__ import annotations

import gc
import sys
from typing import Callable


def in_generated_module(filename: str) -> bool:
    """Frames of a module compiled by ``dynyan.load`` (file names ``<dynyan…>``)."""
    return filename.startswith("<dynyan")


def count_lines(
    fn: Callable[[], object],
    counted: Callable[[str], bool] = in_generated_module,
    skip_classes: tuple[str, ...] = (),
) -> tuple[int, object]:
    """``(line events, fn())``: the lines executed while running ``fn()`` in the
    frames whose code file name ``counted`` accepts (by default only the
    generated module's own lines: not the test, and not whatever else the
    interpreter happens to run, such as GC callbacks or caches), leaving out
    the methods of the classes named in ``skip_classes``."""
    count = 0

    def local(frame, event, arg):
        nonlocal count
        if event == "line":
            count += 1
        return local

    def global_(frame, event, arg):
        code = frame.f_code
        if counted(code.co_filename) and (
            code.co_qualname.split(".")[0] not in skip_classes
        ):
            return local
        return None

    # Earlier garbage (a suspended generator of a generated module) must not
    # be finalised inside the count: its lines would be counted.
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    old = sys.gettrace()
    sys.settrace(global_)
    try:
        result = fn()
    finally:
        sys.settrace(old)
        if enabled:
            gc.enable()
    return count, result
