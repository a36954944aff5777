"""The row lock manager: exclusive record locks with FIFO waits, timeouts and deadlock detection.

Locks are exclusive and keyed by ``(table id, primary key value)``; a lock is held by one
:class:`LockOwner` (a transaction) until :meth:`LockManager.release_all`, which the
transaction calls at commit or rollback only: a lock survives anything the holder does in
between, including waiting in the server's commit queue.

One mutex guards the whole lock table; the uncontended path is a dict lookup and a store.
A request for a lock held by another owner queues behind earlier waiters (FIFO): a release
hands the lock directly to the first waiter, so a key with waiters always has a holder and a
newcomer can never overtake. A waiter sleeps on its own condition (no polling) for at most
``lock_wait_timeout()`` seconds, read at each wait as InnoDB reads innodb_lock_wait_timeout,
then fails with ER_LOCK_WAIT_TIMEOUT (1205) and leaves the queue.

Deadlock detection runs when a request has to wait. With exclusive locks each waiter waits
for exactly one key, and that key has exactly one holder, so the wait-for graph is a set of
chains; a wait that would close a cycle is one where following "holder of the key I wait
for" from the requested key's holder comes back to the requester. No cycle can appear any
other way: a grant makes the former waiter the holder and it stops waiting, which only
redirects other waiters' edges to a running owner. The requester is the victim and gets
ER_LOCK_DEADLOCK (1213) without waiting; rolling its transaction back is the caller's job
(:class:`~rpl.core.engine.storage.Transaction` does it).

A high-priority owner (a Group Replication applier's transaction: MySQL's
``thd->tx_priority``, InnoDB's ``trx_is_high_priority``) never waits for an ordinary one
that has not begun to commit: it takes the lock at once and the holder is killed
(``killed``). The killed owner's next lock request, lock wait or :meth:`begin_commit`
fails, so its transaction rolls back; its locks the high-priority owner did not take
stay held until then. That is safe because an uncommitted transaction's writes are its
own until it commits (the engine keeps them in a private overlay), so handing its lock
away exposes nothing half-done; and it is right because the one transaction that may
not be killed, one already committing (it may be certified, or ahead of the applier in
the group's order), is never a victim: :meth:`begin_commit` and a kill decide under the
same mutex. An ordinary owner waits for a high-priority one as for any other.
"""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Callable, Hashable, Iterable

from rpl.core.errors import ER_LOCK_DEADLOCK, ER_LOCK_WAIT_TIMEOUT, MySQLError
from rpl.core.waits import thd_wait

LockKey = tuple[int, Hashable]
"""``(table id, primary key value)``."""

_MAX_WAIT_CHAIN = 100_000
"""A wait chain this long is taken for a deadlock (InnoDB likewise gives up past a depth)."""


class LockOwner:
    """What holds and waits for locks: one per transaction.

    ``waiting_for`` is the key the owner is queued for, ``None`` when it is not waiting; the
    lock manager changes it under its mutex only, and clears it when it grants the lock.
    """

    __slots__ = ("trx_id", "waiting_for", "high_priority", "killed", "committing", "_cond")

    def __init__(self, trx_id: int) -> None:
        self.trx_id = trx_id
        self.waiting_for: LockKey | None = None
        self.high_priority = False
        """Takes the locks of ordinary owners that are not committing (set before the
        owner's first lock request)."""
        self.killed = False
        """A high-priority owner took a lock of this one: it must roll back."""
        self.committing = False
        """Set by :meth:`LockManager.begin_commit`: from then on it cannot be killed."""
        self._cond: threading.Condition | None = None

    def is_waiting(self) -> bool:
        """Whether the owner is still queued (another thread clears ``waiting_for`` when it
        grants the lock: reading it through a call keeps a compiled build from assuming the
        value this thread last stored).
        """
        return self.waiting_for is not None


class LockManager:
    """Exclusive row locks for all transactions of one engine.

    The counters are the InnoDB status variables of the same meaning (read them without a
    lock; each is updated under the mutex): ``row_lock_waits`` (Innodb_row_lock_waits),
    ``row_lock_current_waits`` (Innodb_row_lock_current_waits), ``row_lock_time_ms`` and
    ``row_lock_time_max_ms`` (Innodb_row_lock_time, Innodb_row_lock_time_max),
    ``row_lock_timeouts`` (INNODB_METRICS lock_timeouts) and ``deadlocks``
    (Innodb_deadlocks).
    """

    def __init__(self, lock_wait_timeout: Callable[[], float]) -> None:
        self._timeout = lock_wait_timeout
        self._mutex = threading.Lock()
        self._holders: dict[LockKey, LockOwner] = {}
        self._queues: dict[LockKey, collections.deque[LockOwner]] = {}
        self.row_lock_waits = 0
        self.row_lock_current_waits = 0
        self.row_lock_time_ms = 0
        self.row_lock_time_max_ms = 0
        self.row_lock_timeouts = 0
        self.deadlocks = 0
        self.high_priority_kills = 0
        """Ordinary owners killed by a high-priority one."""

    def acquire(self, owner: LockOwner, key: LockKey) -> bool:
        """Lock ``key`` for ``owner``, waiting behind its holder and earlier waiters.

        Returns ``True`` when the owner newly holds the lock (it must then pass the key to
        :meth:`release_all` eventually) and ``False`` when it held it already. Raises
        ER_LOCK_DEADLOCK at once if waiting would close a cycle or the owner was killed
        (before or while it waits), ER_LOCK_WAIT_TIMEOUT when the wait outlasts
        ``lock_wait_timeout()``; in every case the owner holds nothing new and is no longer
        queued. A high-priority owner takes the lock from an ordinary holder that is not
        committing at once, killing it.
        """
        with self._mutex:
            if owner.killed:
                raise MySQLError.of(ER_LOCK_DEADLOCK)
            holder = self._holders.get(key)
            if holder is None:
                self._holders[key] = owner
                return True
            if holder is owner:
                return False
            if owner.high_priority and not holder.high_priority and not holder.committing:
                self._kill(holder)
                self._holders[key] = owner
                return True
            if self._closes_cycle(owner, holder):
                self.deadlocks += 1
                raise MySQLError.of(ER_LOCK_DEADLOCK)
            timeout = self._timeout()
            queue = self._queues.get(key)
            if queue is None:
                queue = self._queues[key] = collections.deque()
            queue.append(owner)
            owner.waiting_for = key
            cond = owner._cond
            if cond is None:
                cond = owner._cond = threading.Condition(self._mutex)
            self.row_lock_waits += 1
            self.row_lock_current_waits += 1
            started = time.monotonic()
            deadline = started + timeout
            try:
                with thd_wait():
                    while owner.is_waiting() and not owner.killed:
                        remaining = deadline - time.monotonic()
                        if remaining <= 0:
                            break
                        cond.wait(remaining)
            except BaseException:
                self._abandon(owner, key)
                raise
            finally:
                self.row_lock_current_waits -= 1
                waited_ms = int((time.monotonic() - started) * 1000)
                self.row_lock_time_ms += waited_ms
                self.row_lock_time_max_ms = max(self.row_lock_time_max_ms, waited_ms)
            if owner.killed:
                self._abandon(owner, key)
                raise MySQLError.of(ER_LOCK_DEADLOCK)
            if owner.is_waiting():
                self._abandon(owner, key)
                self.row_lock_timeouts += 1
                raise MySQLError.of(ER_LOCK_WAIT_TIMEOUT)
            return True

    def _kill(self, victim: LockOwner) -> None:
        """Mark ``victim`` killed and wake it if it waits (mutex held)."""
        if not victim.killed:
            victim.killed = True
            self.high_priority_kills += 1
        if victim.waiting_for is not None and victim._cond is not None:
            victim._cond.notify()

    def begin_commit(self, owner: LockOwner) -> bool:
        """``owner`` begins to commit, and can no longer be killed; False (nothing
        changes) when it was killed already and must roll back instead.
        """
        with self._mutex:
            if owner.killed:
                return False
            owner.committing = True
            return True

    def _abandon(self, owner: LockOwner, key: LockKey) -> None:
        """Take back ``owner``'s request for ``key``: leave the queue, or pass the lock on if
        it was granted in the meantime (mutex held).
        """
        if owner.waiting_for is not None:
            owner.waiting_for = None
            queue = self._queues[key]
            queue.remove(owner)
            if not queue:
                del self._queues[key]
        else:
            self._release(owner, key)

    def _closes_cycle(self, requester: LockOwner, holder: LockOwner) -> bool:
        """Whether ``requester`` waiting for ``holder`` closes a cycle (mutex held)."""
        current: LockOwner | None = holder
        for _ in range(_MAX_WAIT_CHAIN):
            if current is requester:
                return True
            assert current is not None
            waiting_for = current.waiting_for
            if waiting_for is None:
                return False
            current = self._holders.get(waiting_for)
            if current is None:
                return False
        return True

    def release_all(self, owner: LockOwner, keys: Iterable[LockKey]) -> None:
        """Release ``owner``'s locks on ``keys``, each to its first waiter if it has one."""
        with self._mutex:
            for key in keys:
                self._release(owner, key)

    def _release(self, owner: LockOwner, key: LockKey) -> None:
        """Release one lock, handing it to the first waiter if any (mutex held)."""
        if self._holders.get(key) is not owner:
            return
        queue = self._queues.get(key)
        if queue:
            successor = queue.popleft()
            if not queue:
                del self._queues[key]
            self._holders[key] = successor
            successor.waiting_for = None
            assert successor._cond is not None
            successor._cond.notify()
        else:
            del self._holders[key]

    def holder(self, key: LockKey) -> LockOwner | None:
        """The owner holding ``key``, if any (for diagnostics: the answer may be stale)."""
        return self._holders.get(key)

    def waiters(self, key: LockKey) -> list[LockOwner]:
        """The owners queued for ``key``, first first (a copy; may be stale)."""
        with self._mutex:
            return list(self._queues.get(key, ()))

    def lock_count(self) -> int:
        """How many keys are locked."""
        return len(self._holders)
