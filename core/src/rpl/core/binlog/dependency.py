"""The binlog's logical clock: each GTID event's ``last_committed`` and ``sequence_number``.

``sequence_number`` counts the transactions of one binlog file. ``last_committed`` names
the latest earlier transaction this one may depend on; a replica may apply a transaction
as soon as everything up to its ``last_committed`` has committed.

* ``COMMIT_ORDER``: the last transaction of the previous commit group (everything in one
  group held its locks at the same time, so the group is mutually independent).
* ``WRITESET`` (WL#9556): the latest earlier transaction that changed one of the same
  rows, never later than COMMIT_ORDER's answer. Rows are compared by their write-set
  items, the 64-bit XXHASH64 key hashes of :mod:`rpl.core.execution.write_sets` (MySQL's).
  A transaction without a write set (DDL, account statements) depends on everything
  before it; one with an empty write set (``transaction_write_set_extraction=OFF``, or it
  changed no row) keeps COMMIT_ORDER's answer, as MySQL does. Everything after either
  depends on it. The history is dropped when it outgrows
  ``binlog_transaction_dependency_history_size`` and at every new file.
"""

from __future__ import annotations

from collections.abc import Iterable

COMMIT_ORDER = "COMMIT_ORDER"
WRITESET = "WRITESET"


class DependencyTracker:
    """Assigns (last_committed, sequence_number) to transactions in binlog order."""

    def __init__(self) -> None:
        self.sequence = 0
        self.group_parent = 0
        """COMMIT_ORDER's last_committed for the group being written."""
        self._history: dict[int, int] = {}
        self._history_start = 0

    def new_file(self) -> None:
        """Sequence numbers restart with each binlog file."""
        self.sequence = self.group_parent = 0
        self._history.clear()
        self._history_start = 0

    def next(
        self, write_set: Iterable[int] | None, mode: str, history_size: int
    ) -> tuple[int, int]:
        """(last_committed, sequence_number) for the next transaction of the group;
        ``write_set`` holds its write-set items (64-bit key hashes).
        """
        self.sequence += 1
        sequence = self.sequence
        parent = self.group_parent
        if mode != WRITESET:
            return parent, sequence
        if write_set is None:
            self._history.clear()
            self._history_start = sequence
            return sequence - 1, sequence
        hashes = list(write_set)
        history = self._history
        if not hashes:
            history.clear()
            self._history_start = sequence
            return parent, sequence
        found = self._history_start
        for key in hashes:
            previous = history.get(key, 0)
            if previous > found:
                found = previous
        if len(history) + len(hashes) > history_size:
            history.clear()
            self._history_start = sequence
        for key in hashes:
            history[key] = sequence
        return min(found, parent), sequence

    def group_written(self) -> None:
        """The group is written: the next group's COMMIT_ORDER parent is its last one."""
        self.group_parent = self.sequence
