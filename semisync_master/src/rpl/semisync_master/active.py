"""The ordered active-transaction structure and the per-replica ACK bookkeeping.

What holds:

* Every transaction end position recorded at ``after_flush`` is a node of a
  ``SortedDict`` keyed by ``(file, pos)``; each node has its own condition (all share
  one lock), so an ACK wakes only the sessions waiting at or below it (MariaDB's
  MDEV-33551 measured what one shared condition costs: every ACK waking every waiter).
* A waiter for a position with no node of its own (AFTER_COMMIT waits for its own
  transaction's end, while a group records only its last position) sleeps on the first
  node at or after its position: the ACK that releases that node releases it too.
* ``wait_for_slave_count = N``: a position counts as acknowledged only once N distinct
  replicas have acknowledged it or a later one, i.e. the N-th largest of the replicas'
  latest ACKs. That position only moves forward.

Positions compare as ``(file name, pos)``: binlog file names have a fixed-width number,
so they order as strings.
"""

from __future__ import annotations

import threading

from sortedcontainers import SortedDict  # type: ignore[import-untyped]

Position = tuple[str, int]
"""A binlog position: (file name, offset)."""


class ActiveTransactions:
    """Transactions whose end position is written to the binlog and not yet acknowledged."""

    def __init__(self, lock: threading.Lock) -> None:
        self.lock = lock
        self._nodes: SortedDict = SortedDict()

    def __len__(self) -> int:
        return len(self._nodes)

    def add(self, position: Position) -> None:
        """Record a transaction end (caller holds the lock)."""
        if position not in self._nodes:
            self._nodes[position] = threading.Condition(self.lock)

    def condition_for(self, position: Position) -> threading.Condition | None:
        """The condition a waiter for ``position`` sleeps on (caller holds the lock): the
        first node at or after it; None when none is left (it was acknowledged, or
        semisync switched off and cleared the structure).
        """
        index = self._nodes.bisect_left(position)
        if index == len(self._nodes):
            return None
        return self._nodes.peekitem(index)[1]  # type: ignore[no-any-return]

    def is_end(self, position: Position) -> bool:
        """Whether ``position`` ends a recorded transaction (caller holds the lock)."""
        return position in self._nodes

    def release_up_to(self, position: Position) -> int:
        """Drop the nodes at or below ``position``, waking their waiters; how many."""
        count = 0
        while self._nodes and self._nodes.peekitem(0)[0] <= position:
            _, condition = self._nodes.popitem(0)
            condition.notify_all()
            count += 1
        return count

    def release_all(self) -> None:
        """Drop every node, waking every waiter (switch off, RESET MASTER, disable)."""
        for condition in self._nodes.values():
            condition.notify_all()
        self._nodes.clear()


class AckTracker:
    """The latest ACK of each semisync replica and the position N of them have reached."""

    def __init__(self) -> None:
        self._latest: dict[int, Position] = {}

    def report(self, server_id: int, position: Position) -> None:
        """Replica ``server_id`` acknowledged ``position`` (older ACKs are ignored)."""
        if self._latest.get(server_id, ("", 0)) < position:
            self._latest[server_id] = position

    def reached_by(self, count: int) -> Position | None:
        """The largest position at least ``count`` distinct replicas have acknowledged."""
        if len(self._latest) < count:
            return None
        return sorted(self._latest.values(), reverse=True)[count - 1]

    def clear(self) -> None:
        """RESET MASTER: positions start again from the first file."""
        self._latest.clear()
