"""AFTER and BEFORE_AND_AFTER consistency (WL#10379): the prepared acknowledgements and
the hold of new transactions (MySQL's transaction consistency manager).

What holds:

* Every member tracks each positively certified AFTER (or BEFORE_AND_AFTER) transaction
  from its delivery on, with the members that must acknowledge it: those ONLINE at its
  delivery, its origin excepted (the origin prepared it before it sent it). Views and
  member states change only at their places in the order, so the list is the same on
  every member (:func:`members_that_must_prepare`).
* An applier that has prepared such a transaction (its ``before_commit``) marks it
  prepared here (:meth:`ConsistencyManager.applier_prepared`), announces it if it is
  listed (``TransactionPrepared``), and holds the commit until the list is empty; the
  origin's session holds its commit likewise. A group of one releases at once.
* A delivered acknowledgement, or a member leaving the view (it counts as acknowledged,
  FR-07), takes the member off every list.
* While this member's applier holds prepared AFTER transactions it has not committed,
  every new transaction here, whatever its level, waits at its start until those commit
  (:meth:`ConsistencyManager.hold`, FR-06): what the origin's client was told is
  committed is what every ONLINE member shows.
* :meth:`ConsistencyManager.fail` (the member leaves the group) releases every wait with
  an error: the local consistent transactions roll back here, the group goes on with
  them (FR-12).

Counters, MySQL 8.1's status variables (microseconds): ``before_begin`` (BEFORE waits at
begin), ``after_termination`` (this member's AFTER transactions from delivery to the last
acknowledgement), ``after_sync`` (new transactions held behind prepared ones).
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterable

import attrs

from rpl.group_replication.gtid_sets import GtidSet
from rpl.group_replication.members import Member, MemberState

GUARANTEES_VERSION = (8, 0, 14)
"""The first member version that can take part in AFTER (FR-10)."""
COUNTERS = ("before_begin", "after_termination", "after_sync")


def version_tuple(version: str) -> tuple[int, ...]:
    """``8.0.36-rpl`` as ``(8, 0, 36)`` (a version it cannot read: ``(0,)``)."""
    found = re.match(r"(\d+)\.(\d+)\.(\d+)", version)
    return tuple(int(part) for part in found.groups()) if found else (0,)


def members_that_must_prepare(members: Iterable[Member], origin: str) -> frozenset[str] | None:
    """The ONLINE members but ``origin``; None when a member of the view is older than
    the AFTER-capable version (the transaction then rolls back, FR-10).
    """
    listed = list(members)
    if any(version_tuple(m.version) < GUARANTEES_VERSION for m in listed):
        return None
    return frozenset(
        m.member_id for m in listed if m.state is MemberState.ONLINE and m.member_id != origin
    )


def _in(executed: GtidSet, gtid: str) -> bool:
    sid, _, gno = gtid.rpartition(":")
    return executed.contains(sid, int(gno))


@attrs.define(eq=False)
class AfterTransaction:
    """One tracked AFTER transaction."""

    gtid: str
    pending: set[str]
    """The members whose acknowledgement is still missing."""
    released: threading.Event = attrs.field(factory=threading.Event)
    error: str | None = None
    """Why the wait ended without the acknowledgements (the member left the group)."""
    delivered_ns: int = attrs.field(factory=time.perf_counter_ns)


class ConsistencyManager:
    """This member's tracked AFTER transactions and the prepared ones of its applier."""

    def __init__(self) -> None:
        self._cv = threading.Condition()
        self._tracked: dict[str, AfterTransaction] = {}
        self._prepared: dict[str, None] = {}
        """The GTIDs this member's applier prepared and has not committed, in order."""
        self._uncommitted: set[str] = set()
        """The remote AFTER transactions certified here and not committed yet."""
        self.counts = dict.fromkeys(COUNTERS, 0)
        self.microseconds = dict.fromkeys(COUNTERS, 0)

    def count(self, counter: str, since_ns: int) -> None:
        """One more wait of ``counter`` that began at ``since_ns``."""
        with self._cv:
            self.counts[counter] += 1
            self.microseconds[counter] += (time.perf_counter_ns() - since_ns) // 1000

    def reset(self) -> None:
        """FLUSH STATUS."""
        with self._cv:
            self.counts = dict.fromkeys(COUNTERS, 0)
            self.microseconds = dict.fromkeys(COUNTERS, 0)

    # ----------------------------------------------------- delivery thread
    def certified(self, gtid: str, pending: frozenset[str], *, local: bool) -> AfterTransaction:
        """Track ``gtid``, certified at delivery, until ``pending`` acknowledged it."""
        tracked = AfterTransaction(gtid, set(pending))
        with self._cv:
            if not local:
                self._uncommitted.add(gtid)
            if tracked.pending:
                self._tracked[gtid] = tracked
            else:
                tracked.released.set()
        return tracked

    def acknowledged(self, gtid: str, member_id: str) -> None:
        """``member_id``'s TransactionPrepared for ``gtid`` was delivered."""
        with self._cv:
            tracked = self._tracked.get(gtid)
            if tracked is not None:
                self._take_off(tracked, member_id)

    def members_left(self, member_ids: Iterable[str]) -> None:
        """A view without ``member_ids``: they count as acknowledged everywhere."""
        gone = set(member_ids)
        with self._cv:
            for tracked in list(self._tracked.values()):
                for member_id in gone & tracked.pending:
                    self._take_off(tracked, member_id)

    def _take_off(self, tracked: AfterTransaction, member_id: str) -> None:
        tracked.pending.discard(member_id)
        if not tracked.pending:
            self._tracked.pop(tracked.gtid, None)
            tracked.released.set()

    # ------------------------------------------------------ applier thread
    def applier_prepared(self, gtid: str) -> AfterTransaction | None:
        """The applier prepared ``gtid``: its tracking (None for one not tracked, or
        already acknowledged by every listed member); from now on new transactions wait
        for its commit.
        """
        with self._cv:
            tracked = self._tracked.get(gtid)
            if tracked is not None:
                self._prepared[gtid] = None
            return tracked

    def committed(self, gtid: str) -> None:
        """The applier committed (or gave up) ``gtid``: transactions held behind it go."""
        with self._cv:
            self._uncommitted.discard(gtid)
            if self._prepared.pop(gtid, 0) is None:
                self._cv.notify_all()

    def hold_uncommitted(self, gtid_executed: Callable[[], str]) -> None:
        """This joiner is ONLINE from now on: new transactions also wait for the AFTER
        transactions delivered before that and not committed here yet (the group did
        not list this member for them, yet its clients must read them).
        ``gtid_executed`` is read once, under the lock :meth:`committed` takes, so a
        transaction committed meanwhile is either in it or released by its commit.
        """
        with self._cv:
            executed = GtidSet.parse(gtid_executed())
            self._uncommitted = {g for g in self._uncommitted if not _in(executed, g)}
            self._prepared.update(dict.fromkeys(sorted(self._uncommitted)))

    # ---------------------------------------------------------- sessions
    @staticmethod
    def wait_released(tracked: AfterTransaction, stopping: threading.Event) -> str | None:
        """Until every listed member acknowledged ``tracked`` (None) or the member left
        the group (why): no timeout, an unreachable member holds it until it is back or
        expelled (FR-08).
        """
        while not tracked.released.wait(1.0):
            if stopping.is_set():
                return "Group Replication is stopping."
        return tracked.error

    def hold(self, timeout: float) -> bool:
        """A new transaction waits until the prepared transactions of this member's
        applier commit (FR-06); False if they did not within ``timeout``.
        """
        with self._cv:
            ahead = set(self._prepared)
            if not ahead:
                return True
            begun = time.perf_counter_ns()
            done = self._cv.wait_for(lambda: not ahead & self._prepared.keys(), timeout)
        self.count("after_sync", begun)
        return done

    def holding(self) -> bool:
        """Whether a new transaction would wait now."""
        return bool(self._prepared)

    def fail(self, reason: str) -> None:
        """The member left the group: every wait ends with ``reason``."""
        with self._cv:
            for tracked in self._tracked.values():
                tracked.error = reason
                tracked.released.set()
            self._tracked.clear()
            self._prepared.clear()
            self._uncommitted.clear()
            self._cv.notify_all()
