"""Table locks: LOCK TABLES, FLUSH TABLES WITH READ LOCK, and the waits they impose.

MySQL implements these with metadata locks; this is the part of that the server needs,
owned by sessions (keyed by connection id) rather than transactions:

* LOCK TABLES ... READ: the owner and others may read; others' writes wait.
* LOCK TABLES ... WRITE: only the owner may use the table; others' reads and writes wait.
* The global read lock (FLUSH TABLES WITH READ LOCK): others' writing statements and
  commits wait; several sessions may hold it at once, as MySQL allows.

A request waits while another owner holds a conflicting lock; waits are not queued (every
waiter rechecks when a lock is released, and at least every 50 ms) and end with
ER_LOCK_WAIT_TIMEOUT after the ``timeout`` the caller passes (the session's
``lock_wait_timeout``). Locks are granted all at once or not at all, so a LOCK TABLES that
times out holds nothing.

A writing statement is registered for its duration (:meth:`TableLocks.begin_write` /
:meth:`TableLocks.end_write`), and FLUSH TABLES WITH READ LOCK waits for the statements of
others in flight, as MySQL's global intention lock makes it: once it returns no other
session commits until it is released. A writer registers before it looks for the global
read lock and FLUSH sets the lock before it looks for writers, so of two racing, one
always sees the other. With no lock held by anyone, a statement costs a dict store and one
attribute read, and no mutex (the common case).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Final

from rpl.core.errors import ER_LOCK_WAIT_TIMEOUT, MySQLError
from rpl.core.waits import thd_wait

_RECHECK: Final = 0.05
"""Seconds a waiter sleeps at most before it looks again (a release it missed)."""

TableKey = tuple[str, str]
"""``(database, table)`` as the catalogue names it."""


_NONE: Final = object()


class TableLocks:
    """The table locks and global read locks of one server."""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._tables: dict[TableKey, dict[int, bool]] = {}
        """Locked table -> {owner: True for WRITE, False for READ}."""
        self._global: set[int] = set()
        """Owners of the global read lock."""
        self._writing: dict[int, None] = {}
        """Owners running a writing statement now."""
        self.active = False
        """Whether anyone holds any lock (read without the mutex for the fast path)."""

    # --- queries (mutex held) ---------------------------------------------------------------

    def _blocks_read(self, owner: int, table: TableKey) -> bool:
        holders = self._tables.get(table)
        return holders is not None and any(w and o != owner for o, w in holders.items())

    def _blocks_write(self, owner: int, table: TableKey) -> bool:
        holders = self._tables.get(table)
        return holders is not None and any(o != owner for o in holders)

    def _global_by_other(self, owner: int) -> bool:
        return any(o != owner for o in self._global)

    def _write_locks_by_other(self, owner: int) -> bool:
        return any(
            w and o != owner for holders in self._tables.values() for o, w in holders.items()
        )

    def _wait(self, ready: Callable[[], bool], timeout: float) -> None:
        """Wait (mutex held) until ``ready()``; ER_LOCK_WAIT_TIMEOUT after ``timeout``."""
        if ready():
            return
        deadline = time.monotonic() + timeout
        with thd_wait():
            while not ready():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise MySQLError.of(ER_LOCK_WAIT_TIMEOUT)
                self._cond.wait(min(remaining, _RECHECK))

    # --- requests ---------------------------------------------------------------------------

    def lock_tables(self, owner: int, locks: Mapping[TableKey, bool], timeout: float) -> None:
        """Grant ``owner`` READ (False) or WRITE (True) locks on ``locks``' tables, waiting
        for other owners' conflicting table locks (and, for WRITE, their global read lock).
        """

        def ready() -> bool:
            for table, write in locks.items():
                if write and (self._blocks_write(owner, table) or self._global_by_other(owner)):
                    return False
                if not write and self._blocks_read(owner, table):
                    return False
            return True

        with self._cond:
            self._wait(ready, timeout)
            for table, write in locks.items():
                self._tables.setdefault(table, {})[owner] = write
            self.active = True

    def lock_global_read(self, owner: int, timeout: float) -> None:
        """FLUSH TABLES WITH READ LOCK: hold the global read lock once no other owner holds
        a WRITE table lock or runs a writing statement (ER_LOCK_WAIT_TIMEOUT, holding
        nothing, after ``timeout``).
        """
        with self._cond:
            self._global.add(owner)
            self.active = True
            try:
                self._wait(
                    lambda: (
                        not self._write_locks_by_other(owner)
                        and not any(o != owner for o in self._writing)
                    ),
                    timeout,
                )
            except BaseException:
                self._global.discard(owner)
                self.active = bool(self._tables or self._global)
                self._cond.notify_all()
                raise

    def release(self, owner: int) -> bool:
        """UNLOCK TABLES (and a session's end): drop every lock of ``owner``; whether it
        held any table lock (not counting the global read lock).
        """
        if not self.active:
            return False
        with self._cond:
            had_tables = False
            for table in list(self._tables):
                holders = self._tables[table]
                if holders.pop(owner, None) is not None:
                    had_tables = True
                    if not holders:
                        del self._tables[table]
            self._global.discard(owner)
            self.active = bool(self._tables or self._global)
            self._cond.notify_all()
            return had_tables

    def global_read_by_other(self, owner: int) -> bool:
        """Whether another owner holds the global read lock (a snapshot)."""
        return self.active and self._global_by_other(owner)

    def holds_global_read(self, owner: int) -> bool:
        """Whether ``owner`` holds the global read lock."""
        return self.active and owner in self._global

    # --- what other statements wait for -------------------------------------------------------

    def begin_write(
        self,
        owner: int,
        reads: Iterable[TableKey],
        writes: Iterable[TableKey],
        writing: bool,
        timeout: Callable[[], float],
    ) -> None:
        """Before ``owner`` runs a statement reading ``reads`` and writing ``writes``
        (``writing``: it changes data or the catalogue, or commits changes; it is then
        registered until :meth:`end_write`): wait while other owners hold WRITE locks on
        those tables, READ locks on the written ones, or (``writing``) the global read lock,
        at most ``timeout()`` seconds (called only when there is something to wait for).
        """
        if writing:
            self._writing[owner] = None
        if not self.active:
            return
        read_list, write_list = list(reads), list(writes)

        def ready() -> bool:
            if writing and self._global_by_other(owner):
                return False
            if any(self._blocks_read(owner, t) for t in read_list):
                return False
            return not any(self._blocks_write(owner, t) for t in write_list)

        with self._cond:
            if ready():
                return
            self._writing.pop(owner, None)  # a waiting writer holds up no FLUSH
            self._cond.notify_all()
            self._wait(ready, timeout())
            if writing:
                self._writing[owner] = None

    def end_write(self, owner: int) -> None:
        """The writing statement of ``owner`` ended."""
        if self._writing.pop(owner, _NONE) is not _NONE and self.active:
            with self._cond:
                self._cond.notify_all()
