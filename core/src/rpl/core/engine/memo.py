"""Values worked out once per table definition: :class:`SchemaMemo`.

Statements of one shape against one table need the same derived facts again and again
(an INSERT's column list as row positions, the binlog text that starts its rows). A
memo computes such a fact the first time a (table definition, key) pair asks for it and
hands back the same value after that.

What holds: a value is only ever returned for the very schema object it was computed
from. Entries are found by the schema's ``id()`` and checked by identity, and each entry
holds its schema, so the id cannot be reused by another object while the entry lives.
DDL builds a new schema object, so nothing computed for an old definition is returned
for a new one. A memo keeps at most ``kept`` entries and is emptied when full, so endless
distinct keys cost bounded memory. Threads share a memo without a lock: a lookup and a
store are each one dict operation, and two threads computing the same value at once
just store equal values.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from rpl.core.engine.schema import TableSchema

T = TypeVar("T")
K = TypeVar("K", bound=Hashable)

MEMO_KEPT = 1024
"""Entries a memo holds before it starts over."""


class SchemaMemo(Generic[K, T]):
    """``make(schema, key)``, computed once per (schema object, key)."""

    def __init__(self, make: Callable[[TableSchema, K], T], kept: int = MEMO_KEPT) -> None:
        self._make = make
        self._kept = kept
        self._entries: dict[tuple[int, K], tuple[TableSchema, T]] = {}

    def get(self, schema: TableSchema, key: K) -> T:
        """The value for ``schema`` and ``key`` (whatever ``make`` raises, nothing kept)."""
        entry = self._entries.get((id(schema), key))
        if entry is not None and entry[0] is schema:
            return entry[1]
        value = self._make(schema, key)
        if len(self._entries) >= self._kept:
            self._entries.clear()
        self._entries[(id(schema), key)] = (schema, value)
        return value

    def __len__(self) -> int:
        return len(self._entries)
