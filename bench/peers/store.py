"""The floor: storing the stream and computing nothing."""

from __future__ import annotations

from collections.abc import Iterable


class StoreOnly:
    """Per-relation dicts ``row -> count``: the cost of merely storing the stream."""

    def __init__(self, relations: Iterable[str]):
        self.stores: dict[str, dict] = {r: {} for r in relations}

    def insert(self, relation: str, row: tuple) -> None:
        store = self.stores[relation]
        store[row] = store.get(row, 0) + 1

    def delete(self, relation: str, row: tuple) -> None:
        store = self.stores[relation]
        n = store[row] - 1
        if n:
            store[row] = n
        else:
            del store[row]
