"""Committed rows with their secondary-index entries kept beside them.

Its own module, outside the compiled build's list (core/setup.py): the class subclasses
sortedcontainers' ``SortedDict`` (a ``dict`` subclass), which mypyc cannot compile
correctly (its native code corrupted the dict: ``SystemError`` and a segmentation fault).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sortedcontainers import SortedDict  # type: ignore[import-untyped]

from rpl.core.engine.coercion import Value
from rpl.core.engine.schema import Row, TableSchema

Key = Any
"""A primary key value (as :data:`rpl.core.engine.storage.Key`)."""


class IndexedRows(SortedDict):  # type: ignore[misc]
    """Committed rows (primary key -> row, in key order) with the entries of the table's
    secondary indexes kept beside them: ``index name -> key values -> primary keys``.

    Every store and removal of a row (commits, under the engine's commit lock) updates the
    entries, so they always describe exactly the rows held. Entries with NULL parts are
    kept too (a lookup of ``(None,)`` finds the rows whose column is NULL).
    """

    def __init__(self, schema: TableSchema, rows: Iterable[tuple[Key, Row]] = ()) -> None:
        super().__init__(rows)
        self.index_positions = schema.index_positions
        self.entries: dict[str, dict[tuple[Value, ...], set[Key]]] = {
            name: {} for name in self.index_positions
        }
        for pk, row in self.items():
            self._add(pk, row)

    def _add(self, pk: Key, row: Row) -> None:
        for name, positions in self.index_positions.items():
            values = tuple(row[i] for i in positions)
            found = self.entries[name].get(values)
            if found is None:
                self.entries[name][values] = {pk}
            else:
                found.add(pk)

    def _remove(self, pk: Key, row: Row) -> None:
        for name, positions in self.index_positions.items():
            values = tuple(row[i] for i in positions)
            found = self.entries[name].get(values)
            if found is not None:
                found.discard(pk)
                if not found:
                    del self.entries[name][values]

    def __setitem__(self, pk: Key, row: Row) -> None:
        old = self.get(pk)
        if old is not None:
            self._remove(pk, old)
        super().__setitem__(pk, row)
        self._add(pk, row)

    def pop(self, pk: Key, *default: Any) -> Any:
        old = self.get(pk)
        if old is not None:
            self._remove(pk, old)
        return super().pop(pk, *default)

    def __delitem__(self, pk: Key) -> None:
        self.pop(pk)

    def clear(self) -> None:
        super().clear()
        for entries in self.entries.values():
            entries.clear()

    def keys_of(self, index: str, values: tuple[Value, ...]) -> list[Key]:
        """The primary keys of the rows whose ``index`` columns hold ``values``."""
        return list(self.entries[index].get(values, ()))
