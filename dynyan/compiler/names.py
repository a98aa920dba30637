"""Deterministic, unique Python identifiers for one compilation: the names
of a generated module's locals and attributes, and of the trigger program's
structures."""

from __future__ import annotations

import builtins
import keyword
import re

_BUILTINS = set(dir(builtins))


class Names:
    """Deterministic, unique Python identifiers for one compilation."""

    def __init__(self):
        self.taken: set[str] = {
            "self",
            "row",
            "d",
            "view",
            "datetime",
            "re",
            "copy",
            "store",
            "count",
            "apply",
            "rows",
            "mults",
            "done",
            "out",
            "seen",
            "relation",
            "snapshot",
        }

    @staticmethod
    def clean(text: str) -> str:
        ident = re.sub(r"\W", "_", text, flags=re.ASCII).strip("_") or "x"
        if ident[0].isdigit():
            ident = "_" + ident
        if keyword.iskeyword(ident) or keyword.issoftkeyword(ident):
            ident += "_"
        return ident

    def new(self, text: str) -> str:
        base = self.clean(text)
        name, k = base, 2
        while name in self.taken or name in _BUILTINS:
            name, k = f"{base}_{k}", k + 1
        self.taken.add(name)
        return name
