"""One member of a group: what it does with what the group delivers, and with its own
sessions' commits.

What holds:

* Every member certifies every delivered transaction in delivery order from the same
  certification state, so every member reaches the same decisions and hands out the same
  group GTIDs (``group_replication_group_name:N``).
* A local transaction waits in ``before_commit`` for its certification: negative, it
  rolls back with ER_TRANSACTION_ROLLBACK_DURING_COMMIT (3101); positive, it commits with
  its group GTID. A remote positive transaction goes to the ``group_replication_applier``
  channel with its group GTID; a negative one is discarded.
* Binlog order is delivery order: the GTIDs to commit here queue in :class:`CommitOrder`
  as they are certified, and a transaction (local or the applier's) enters the binary
  log's commit queue only when it is the first of them.
* A view with joining members (the bootstrap view included) is logged as MySQL 8.0
  logs it: a transaction of its own group GTID holding a VIEW_CHANGE event, taken at the
  view's place in the order and applied through the applier channel, so every member's
  binary log holds the same group GTIDs in the same order.
* A joiner takes the certification state at its join view from the member that
  certifies for it (the ONLINE member with the lowest id of the view before), buffers
  what the group delivers meanwhile, catches up with a donor (:mod:`recovery`), applies
  its buffer and announces itself ONLINE.
* Single-primary mode: the secondaries are ``super_read_only``; a primary is elected
  when the primary leaves (:func:`rpl.group_replication.members.elect`); the new primary
  lifts ``super_read_only`` once its applier has applied what the group delivered before.
* BEFORE consistency (WL#10379): before a transaction runs, this member reaches a sync
  point (:meth:`Gcs.sync_point`: every message ordered before it is delivered here); the
  applier channel's received set then (every remote transaction certified before it) is
  what the transaction waits to see committed here before its first statement, so it
  reads nothing older than its place in the order. MySQL sends a sync message through
  the group for it; on etcd a linearizable read of the revision does as much for about
  half the round trip.
* Majority lost (the members this one reaches, itself included, are no more than half
  of its view): local transactions block before they are sent, so nothing of them is
  ordered, until a majority is reachable again or the view shrinks (force_members, an
  expel); ``group_replication_unreachable_majority_timeout`` seconds of it (0: wait for
  ever) send the member to ERROR and the blocked transactions roll back.
"""

from __future__ import annotations

import collections
import os
import signal
import threading
import time
from collections.abc import Callable

import attrs

from rpl.group_replication.certifier import Certifier
from rpl.group_replication.consistency import (
    AfterTransaction,
    ConsistencyManager,
    members_that_must_prepare,
)
from rpl.group_replication.gcs import Gcs, GcsError, GcsMember, GcsMessage, GcsView
from rpl.group_replication.gtid_sets import GtidSet, intersect_all
from rpl.group_replication.members import (
    Member,
    MemberRole,
    MemberState,
    elect,
    member_data,
    read_member_data,
)
from rpl.group_replication.messages import (
    CertificationState,
    MemberStats,
    Message,
    MessageError,
    Recovered,
    StableSet,
    TransactionMessage,
    TransactionPrepared,
    TransactionWithGuarantee,
    decode,
    encode,
)
from rpl.group_replication.variables import AFTER_LEVELS, CONSISTENCY_LEVELS
from rpl.observers import ApplierChannel, ErrorLog, ObserverError, ServerControl

APPLIER_CHANNEL = "group_replication_applier"
ER_TRANSACTION_ROLLBACK_DURING_COMMIT = 3101
ROLLBACK_TEXT = "Plugin instructed the server to rollback the current transaction."
ER_RUN_HOOK_ERROR = 3100
ER_GRP_TRX_CONSISTENCY_NOT_ALLOWED = 3796
ER_GRP_TRX_CONSISTENCY_BEFORE = 3797
ER_GRP_TRX_CONSISTENCY_AFTER_ON_TRX_BEGIN = 3798
ER_GRP_TRX_CONSISTENCY_BEGIN_NOT_ALLOWED = 3799
CONSISTENCY_NOT_ALLOWED_TEXT = (
    "The option group_replication_consistency cannot be used on the current member state."
)
CONSISTENCY_BEFORE_TEXT = (
    "Error while waiting for group transactions commit on group_replication_consistency= 'BEFORE'."
)
CONSISTENCY_AFTER_ON_TRX_BEGIN_TEXT = (
    "Error while waiting for transactions with group_replication_consistency= 'AFTER' to commit."
)
GUARANTEES_UNSUPPORTED_TEXT = (
    "There are members in the group that do not support group_replication_consistency "
    "AFTER or BEFORE_AND_AFTER: the transaction was rolled back."
)
CONSISTENCY_BEGIN_NOT_ALLOWED_TEXT = (
    "The Group Replication plugin is stopping, therefore new transactions are not allowed to start."
)
ER_GR_HOLD_WAIT_TIMEOUT = 3781
HOLD_WAIT_TIMEOUT_TEXT = (
    "Timeout exceeded for held statement while new Group Replication primary member is "
    "applying backlog."
)
ER_GR_HOLD_KILLED = 3782
HOLD_KILLED_TEXT = (
    "Held statement aborted because Group Replication plugin got shut down or thread was "
    "killed while new primary member was applying backlog."
)
ER_GR_HOLD_MEMBER_STATUS_ERROR = 3783
HOLD_MEMBER_STATUS_ERROR_TEXT = (
    "Held statement was aborted due to member being in error state, while backlog is being "
    "applied during Group Replication primary election."
)
FORCE_VIEW_TIMEOUT = 60.0
"""Seconds force_members waits for its view (MySQL's view modification wait)."""
MEMBER_VERSION_ENV = "RPL_GR_MEMBER_VERSION"
"""When set, the version this member announces to the group instead of its server's (the
MEMBER_VERSION the group shows, what AFTER's version check and the primary election
read): tests model a member older than 8.0.14 with it (WL#10379 FR-10, FR-11), as MySQL's
tests lower a member's version with a debug point. For tests only."""


@attrs.frozen
class GroupConfig:
    """The variables a start reads."""

    group_name: str
    seeds: tuple[str, ...]
    bootstrap: bool
    single_primary: bool
    expel_timeout: int
    unreachable_majority_timeout: int
    exit_state_action: str
    weight: int
    recovery_user: str
    recovery_password: str
    local_address: str = ""
    recovery_retry_count: int = 10
    recovery_reconnect_interval: int = 60


class _Ticket:
    """A local transaction waiting for its certification."""

    __slots__ = (
        "done", "gtid", "error", "errno", "delivered_ns", "certified_ns", "after", "deadline"
    )  # fmt: skip

    def __init__(self) -> None:
        self.done = threading.Event()
        self.gtid: str | None = None
        self.error: str | None = None
        self.errno: int | None = ER_TRANSACTION_ROLLBACK_DURING_COMMIT
        self.delivered_ns = 0
        """When the delivery thread read it back (``time.perf_counter_ns``)."""
        self.certified_ns = 0
        """When its certification was done."""
        self.after: AfterTransaction | None = None
        """An AFTER transaction's wait for the group's prepared acknowledgements."""
        self.deadline = 0.0
        """A sync point's: the latest deadline of the BEFORE transactions sharing it."""


class CommitOrder:
    """The group GTIDs to commit here, in delivery order: one enters the binary log's
    commit queue only when it is first (:meth:`wait_turn`), and leaves the order once it
    holds its place there (:meth:`passed`) or will not commit here (:meth:`drop`).
    """

    def __init__(self) -> None:
        self._order: collections.deque[int] = collections.deque()
        self._gone: set[int] = set()
        self._cv = threading.Condition()

    def append(self, gno: int) -> None:
        """``gno`` was certified and will commit here (delivery thread)."""
        with self._cv:
            self._order.append(gno)

    def wait_turn(self, gno: int, timeout: float) -> bool:
        """Block until ``gno`` is first; whether it became so within ``timeout``."""
        deadline = time.monotonic() + timeout
        with self._cv:
            while self._order and self._order[0] != gno:
                left = deadline - time.monotonic()
                if left <= 0 or gno not in self._order:
                    return not self._order or self._order[0] == gno
                self._cv.wait(min(left, 1.0))
            return True

    def passed(self, gno: int) -> None:
        """``gno`` holds its place in the commit queue (or is dropped)."""
        with self._cv:
            self._gone.add(gno)
            while self._order and self._order[0] in self._gone:
                self._gone.discard(self._order.popleft())
            self._cv.notify_all()

    def drop_executed(self, executed: GtidSet, group: str) -> None:
        """Drop the GNOs ``executed`` holds (recovery applied them: they commit no more)."""
        with self._cv:
            for gno in list(self._order):
                if executed.contains(group, gno):
                    self._gone.add(gno)
        self.passed(0)

    def clear(self) -> None:
        """Forget everything (the member left the group)."""
        with self._cv:
            self._order.clear()
            self._gone.clear()
            self._cv.notify_all()


class GroupMember:
    """This server as a member of one group (from START to STOP GROUP_REPLICATION)."""

    def __init__(
        self,
        config: GroupConfig,
        gcs: Gcs,
        server: ServerControl,
        applier: ApplierChannel,
        log: ErrorLog,
        recover: Callable[[GroupMember, Member, GtidSet], None],
    ) -> None:
        self.config = config
        self.gcs = gcs
        self.server = server
        self.applier = applier
        self.log = log
        self._recover = recover
        self.me = server.server_uuid
        self._lock = threading.RLock()
        self._majority = threading.Condition(self._lock)
        self.in_minority = False
        self._partition_abort: threading.Event | None = None
        self._plain_hook_error = False
        self.state = MemberState.OFFLINE
        self.members: dict[str, Member] = {}
        self.view_id = ""
        self.primary: str | None = None
        self.certifier: Certifier | None = None
        self.order = CommitOrder()
        self.consistency = ConsistencyManager()
        self._tickets: dict[int, _Ticket] = {}
        self._next_ticket = 0
        self._sync = threading.Condition()
        """Guards the two below: BEFORE transactions share sync points."""
        self._sync_open: tuple[int, _Ticket] | None = None
        """The sync point not begun yet, that every BEFORE transaction beginning now
        joins (its ticket number and ticket)."""
        self._sync_in_flight = 0
        """The ticket number of the sync point begun and not reached yet (0: none)."""
        self._backlog_applied = threading.Event()
        """Clear while this member, just elected primary, applies the backlog the old
        primary left (BEFORE_ON_PRIMARY_FAILOVER holds transactions meanwhile)."""
        self._backlog_applied.set()
        self._buffer: list[GcsMessage | GcsView] = []
        """What the group delivered between this joiner's join view and its state: the
        messages, and the later views with joining members."""
        self._stable: dict[str, GtidSet] = {}
        self._stats: dict[str, MemberStats] = {}
        """Every other member's last counters (MemberStats), by member id."""
        self._stopping = threading.Event()
        self.local_proposed = 0
        self.local_rollback = 0
        self.remote_queued = 0
        self.committed_all_members = GtidSet()
        """The stable set: what every member has committed (from their StableSets)."""
        self.error_reason = ""
        self.on_expelled: Callable[[GroupMember], None] | None = None
        """What runs (on a thread of its own, once this member left the group) instead
        of the exit state action when the group expelled it or its majority timeout ran
        out: the plugin's auto-rejoin procedure, which runs the action if it gives up."""

    # ------------------------------------------------------------ control
    def start(self) -> None:
        """Join (or bootstrap) the group; GcsError if that fails."""
        server = self.server
        self.state = MemberState.RECOVERING
        server.set_super_read_only(True)
        me = GcsMember(
            self.me,
            server.host,
            server.port,
            os.environ.get(MEMBER_VERSION_ENV) or server.version,
            member_data(self.config.weight, self.config.bootstrap),
            address=self.config.local_address,
        )
        self.gcs.join(me, self, bootstrap=self.config.bootstrap)
        threading.Thread(target=self._housekeeping, name="rpl-gr-stable-set", daemon=True).start()

    def stop(self, final_state: MemberState = MemberState.OFFLINE) -> None:
        """Leave the group: writes are refused first (super_read_only, as MySQL's STOP
        GROUP_REPLICATION does), then waiting local transactions fail, the applier stops.
        The member ends in ``final_state`` (ERROR between two auto-rejoin attempts).
        """
        self.server.set_super_read_only(True)
        self._stopping.set()
        with self._lock:
            self._abort_partition_timer()
            self._majority.notify_all()
        try:
            self.gcs.leave()
        except GcsError as exc:
            self.log.warning(f"Plugin group_replication reported: 'leaving the group: {exc}'")
        self._fail_waiters("Group Replication is stopping.")
        self.applier.stop()
        self.order.clear()
        with self._lock:
            self.state = final_state
            self.members.clear()
            self.primary = None
        self.server.set_super_read_only(True)

    def go_error(self, reason: str, *, hook_error: bool = False, expelled: bool = False) -> None:
        """Leave the group's work after a failure, as exit_state_action says (or, when
        the group ``expelled`` this member and :attr:`on_expelled` is set, once the
        auto-rejoin procedure gave up). Waiting local transactions fail with ``reason``
        (ER_RUN_HOOK_ERROR, 3100), or with MySQL's plain hook error when ``hook_error``.
        """
        with self._lock:
            if self.state in (MemberState.ERROR, MemberState.OFFLINE):
                return
            self.state = MemberState.ERROR
            self.error_reason = reason
            self._plain_hook_error = hook_error
            mine = self.members.get(self.me)
            self.members = {self.me: mine} if mine is not None else {}
            if mine is not None:
                mine.state = MemberState.ERROR
                mine.suspected = False
            self.in_minority = False
            self._abort_partition_timer()
            self._majority.notify_all()
        self.log.error(f"Plugin group_replication reported: '{reason}'")
        self.server.set_super_read_only(True)
        self.log.error(
            "Plugin group_replication reported: 'The server was automatically set into read "
            "only mode after an error was detected.'"
        )
        self._fail_waiters(reason, errno=None if hook_error else ER_RUN_HOOK_ERROR)
        rejoin = self.on_expelled if expelled else None
        threading.Thread(target=self._leave_quietly, args=(rejoin,), daemon=True).start()
        if rejoin is None:
            self.exit_state_action()

    def exit_state_action(self) -> None:
        """What ``group_replication_exit_state_action`` says a member that left the group
        involuntarily does (READ_ONLY: nothing more; it is already read-only).
        """
        if self.config.exit_state_action == "OFFLINE_MODE":
            self.log.warning(
                "Plugin group_replication reported: 'group_replication_exit_state_action "
                "is OFFLINE_MODE: this server has no offline_mode, it stays read-only.'"
            )
        if self.config.exit_state_action == "ABORT_SERVER":
            self.log.error(
                "Plugin group_replication reported: 'The server was automatically set into "
                "offline mode after an error was detected.' aborting the server"
            )
            os.kill(os.getpid(), signal.SIGKILL)

    def _leave_quietly(self, then: Callable[[GroupMember], None] | None = None) -> None:
        try:
            self.gcs.leave()
        except GcsError:
            pass
        self.applier.stop()
        if then is not None:
            then(self)

    # ------------------------------------------------------------ commits
    def local_commit(
        self,
        snapshot: str,
        write_set: frozenset[int],
        events: bytes,
        server_id: int,
        timeout: float,
        consistency: str = "EVENTUAL",
    ) -> tuple[str, dict[str, int]]:
        """Certify a local transaction: its group GTID, and the nanoseconds its
        broadcast, delivery and certification took (:mod:`.timings`). ObserverError
        (3101) when the group refused it, (3100) otherwise. At AFTER and
        BEFORE_AND_AFTER it returns once every member ONLINE at its delivery has
        prepared it too (FR-05).
        """
        with self._lock:
            self._wait_for_majority(timeout)
            if self._stopping.is_set() or self.state is not MemberState.ONLINE:
                if self.state is MemberState.ERROR and self._plain_hook_error:
                    raise ObserverError(self.error_reason)  # MySQL's hook error (3100)
                raise ObserverError(
                    f"Transaction cannot be executed while Group Replication is "
                    f"{self.state.value}.",
                    errno=ER_RUN_HOOK_ERROR,
                )
            self._next_ticket += 1
            number = self._next_ticket
            ticket = self._tickets[number] = _Ticket()
            self.local_proposed += 1
        fields = (
            self.me,
            number,
            snapshot,
            tuple(sorted(write_set)),
            server_id,
            time.time_ns() // 1000,
            self.server.binlog_checksum,
            events,
        )
        message = (
            TransactionWithGuarantee(*fields, CONSISTENCY_LEVELS.index(consistency))
            if consistency in AFTER_LEVELS
            else TransactionMessage(*fields)
        )
        try:
            sending = time.perf_counter_ns()
            self.gcs.send(encode(message))
            sent = time.perf_counter_ns()
            if not ticket.done.wait(timeout):
                raise ObserverError(
                    "Timeout while waiting for the group communication engine.",
                    errno=ER_RUN_HOOK_ERROR,
                )
        except GcsError as exc:
            if ticket.done.is_set() and ticket.error is not None and ticket.errno is None:
                self.local_rollback += 1
                raise ObserverError(ticket.error) from exc  # MySQL's hook error (3100)
            raise ObserverError(
                f"Error on broadcasting the transaction to the group: {exc}",
                errno=ER_RUN_HOOK_ERROR,
            ) from exc
        finally:
            with self._lock:
                self._tickets.pop(number, None)
        if ticket.error is not None:
            self.local_rollback += 1
            if ticket.errno is None:
                raise ObserverError(ticket.error)  # MySQL's hook error (3100)
            sqlstate = "40000" if ticket.errno == ER_TRANSACTION_ROLLBACK_DURING_COMMIT else "HY000"
            raise ObserverError(ticket.error, errno=ticket.errno, sqlstate=sqlstate)
        assert ticket.gtid is not None
        if ticket.after is not None:
            self._wait_group_prepared(ticket.after)
        delivered = max(ticket.delivered_ns, sent)
        return ticket.gtid, {
            "broadcast": sent - sending,
            "delivery": delivered - sent,
            "certification": max(ticket.certified_ns - delivered, 0),
        }

    def _wait_group_prepared(self, after: AfterTransaction) -> None:
        """The origin of an AFTER transaction waits for the members' acknowledgements."""
        reason = self.consistency.wait_released(after, self._stopping)
        self.consistency.count("after_termination", after.delivered_ns)
        if reason is not None:
            self.local_rollback += 1
            raise ObserverError(reason, errno=ER_RUN_HOOK_ERROR)

    def applier_prepared(self, gtid: str) -> None:
        """The applier prepared ``gtid`` (its before_commit): an AFTER transaction is
        acknowledged to the group if this member is listed for it, and its commit waits
        for every listed member's acknowledgement. ObserverError when the member left
        the group meanwhile (the applier rolls it back and stops).
        """
        after = self.consistency.applier_prepared(gtid)
        if after is None:
            return
        if self.me in after.pending:
            try:
                self.gcs.send(encode(TransactionPrepared(self.me, gtid)))
            except GcsError as exc:
                self.log.error(
                    "Plugin group_replication reported: 'Error sending the transaction "
                    f"prepared message of {gtid}: {exc}'"
                )
        reason = self.consistency.wait_released(after, self._stopping)
        if reason is not None:
            self.consistency.committed(gtid)
            raise ObserverError(reason, errno=ER_RUN_HOOK_ERROR)

    def hold_behind_prepared(self, timeout: float) -> None:
        """A new transaction waits for the AFTER transactions this member prepared
        (FR-06); ObserverError 3799 while stopping, 3798 after ``timeout``.
        """
        if not self.consistency.holding():
            return
        if self._stopping.is_set():
            raise ObserverError(
                CONSISTENCY_BEGIN_NOT_ALLOWED_TEXT, errno=ER_GRP_TRX_CONSISTENCY_BEGIN_NOT_ALLOWED
            )
        if not self.consistency.hold(timeout):
            raise ObserverError(
                CONSISTENCY_AFTER_ON_TRX_BEGIN_TEXT, errno=ER_GRP_TRX_CONSISTENCY_AFTER_ON_TRX_BEGIN
            )

    def sync_before_execution(self, timeout: float) -> str:
        """BEFORE: reach a sync point and return the GTIDs this transaction must see
        committed before it runs (the applier's received set at the sync point).
        ObserverError 3796 outside ONLINE, 3799 while stopping, 3797 when the sync point
        is not reached within ``timeout``.

        One sync point serves every transaction that began before it was begun: what
        the applier had received when it was reached includes everything ordered before
        each of them began. So at most one is in flight per member; the transactions
        that begin meanwhile join the next one, which the first of them begins when the
        one in flight is reached (group commit, for reads).
        """
        deadline = time.monotonic() + timeout
        with self._lock:
            if self.state is not MemberState.ONLINE:
                raise ObserverError(
                    CONSISTENCY_NOT_ALLOWED_TEXT, errno=ER_GRP_TRX_CONSISTENCY_NOT_ALLOWED
                )
            if self._stopping.is_set():
                raise ObserverError(
                    CONSISTENCY_BEGIN_NOT_ALLOWED_TEXT,
                    errno=ER_GRP_TRX_CONSISTENCY_BEGIN_NOT_ALLOWED,
                )
        number, ticket, first = self._join_sync(deadline)
        if first:
            self._reach_sync_point(number, ticket)
        ordered = ticket.done.wait(max(0.0, deadline - time.monotonic()))
        if not ordered or ticket.error is not None or ticket.gtid is None:
            raise ObserverError(CONSISTENCY_BEFORE_TEXT, errno=ER_GRP_TRX_CONSISTENCY_BEFORE)
        return ticket.gtid

    def _join_sync(self, deadline: float) -> tuple[int, _Ticket, bool]:
        """The sync point this transaction waits for (the open one, opened when there
        is none), and whether this transaction begins it: when none is in flight. A
        transaction whose deadline passes while it waits for its turn begins nothing
        (its wait for the ticket then ends at once, with 3797).
        """
        with self._sync:
            if self._sync_open is None:
                with self._lock:
                    self._next_ticket += 1
                    number = self._next_ticket
                    self._tickets[number] = _Ticket()
                    self._sync_open = (number, self._tickets[number])
            opened = self._sync_open
            number, ticket = opened
            ticket.deadline = max(ticket.deadline, deadline)
            while self._sync_open is opened and self._sync_in_flight:
                if not self._sync.wait(max(0.0, deadline - time.monotonic())):
                    return number, ticket, False
            if self._sync_open is not opened or ticket.done.is_set():
                return number, ticket, False  # another of its transactions began it, or it failed
            self._sync_open = None
            self._sync_in_flight = number
            return number, ticket, True

    def _reach_sync_point(self, number: int, ticket: _Ticket) -> None:
        """Reach sync point ``number`` (by the latest deadline of its transactions): its
        ticket gets the applier's received set then. One not reached fails its ticket
        (every transaction sharing it gets 3797). Either way the next one may begin.
        """
        try:
            self.gcs.sync_point(max(0.0, ticket.deadline - time.monotonic()))
        except GcsError as exc:
            self.log.error(
                "Plugin group_replication reported: 'Error reaching the sync point of a "
                f"transaction with consistency BEFORE: {exc}'"
            )
            ticket.error = str(exc)
        else:
            ticket.gtid = self.applier.received_gtid_set()
        self._sync_back(number, ticket)

    def _sync_back(self, number: int, ticket: _Ticket) -> None:
        """Sync point ``number`` is done with (reached, or failed): release its
        transactions, and let the next sync point begin.
        """
        with self._lock:
            self._tickets.pop(number, None)
        ticket.done.set()
        with self._sync:
            if self._sync_in_flight == number:
                self._sync_in_flight = 0
            self._sync.notify_all()

    def _fail_waiters(self, reason: str, errno: int | None = ER_RUN_HOOK_ERROR) -> None:
        self.consistency.fail(reason)
        with self._lock:
            tickets = list(self._tickets.values())
        for ticket in tickets:
            ticket.error = reason
            ticket.errno = errno
            ticket.done.set()
        self._backlog_applied.set()  # a held transaction finds the member stopping or in ERROR
        with self._sync:  # nothing in flight is reached now, nothing open will begin
            self._sync_open = None
            self._sync_in_flight = 0
            self._sync.notify_all()

    # ------------------------------------------------------- majority loss
    def _wait_for_majority(self, timeout: float) -> None:
        """Hold a local transaction while this member is in a minority (lock held)."""
        deadline = time.monotonic() + timeout
        while self.in_minority and self.state is MemberState.ONLINE:
            if self._stopping.is_set():
                return
            left = deadline - time.monotonic()
            if left <= 0:
                raise ObserverError(
                    "Timeout while waiting for a majority of the group's members.",
                    errno=ER_RUN_HOOK_ERROR,
                )
            self._majority.wait(min(left, 1.0))

    def _check_partition(self) -> None:
        """Enter or leave the minority state after a suspicion or a view (lock held)."""
        if self.state not in (MemberState.ONLINE, MemberState.RECOVERING):
            return
        members = list(self.members.values())
        unreachable = sum(1 for m in members if m.suspected and m.member_id != self.me)
        minority = bool(members) and len(members) - unreachable <= len(members) // 2
        if minority == self.in_minority:
            return
        self.in_minority = minority
        timeout = self.config.unreachable_majority_timeout
        if minority:
            if timeout:
                self.log.error(
                    "Plugin group_replication reported: 'This server is not able to reach a "
                    "majority of members in the group. This server will now block all "
                    f"updates. The server will remain blocked for the next {timeout} "
                    "seconds. Unless contact with the majority is restored, after this time "
                    "the member will error out and leave the group. It is possible to use "
                    "group_replication_force_members to force a new group membership.'"
                )
                abort = self._partition_abort = threading.Event()
                threading.Thread(
                    target=self._partition_timer,
                    args=(abort, timeout),
                    name="rpl-gr-partition-handler",
                    daemon=True,
                ).start()
            else:
                self.log.error(
                    "Plugin group_replication reported: 'This server is not able to reach a "
                    "majority of members in the group. This server will now block all "
                    "updates. The server will remain blocked until contact with the majority "
                    "is restored. It is possible to use group_replication_force_members to "
                    "force a new group membership.'"
                )
            return
        self._abort_partition_timer()
        self.log.warning(
            "Plugin group_replication reported: 'The member has resumed contact with a "
            "majority of the members in the group. Regular operation is restored and "
            "transactions are unblocked.'"
        )
        self._majority.notify_all()

    def _abort_partition_timer(self) -> None:
        if self._partition_abort is not None:
            self._partition_abort.set()
            self._partition_abort = None

    def _partition_timer(self, abort: threading.Event, timeout: int) -> None:
        """unreachable_majority_timeout: still in a minority after it, go to ERROR."""
        if abort.wait(timeout) or self._stopping.is_set():
            return
        with self._lock:
            if abort.is_set() or not self.in_minority:
                return
        self.log.error(
            "Plugin group_replication reported: 'This member could not reach a majority of "
            f"the members for more than {timeout} seconds. The member will now leave the "
            "group as instructed by the group_replication_unreachable_majority_timeout "
            "option.'"
        )
        self.go_error(
            f"The member was in a minority for more than {timeout} seconds "
            "(group_replication_unreachable_majority_timeout): its blocked transactions "
            "roll back.",
            hook_error=True,
            expelled=True,
        )

    def force_members(self, addresses: list[str]) -> None:
        """group_replication_force_members: a view of exactly these members
        (``group_replication_local_address`` values); GcsError with the reason when
        it cannot be forced. Returns once this member has installed the view.
        """
        with self._lock:
            if self.state is not MemberState.ONLINE:
                raise GcsError(
                    "Member is not ONLINE, it is not possible to force a new group membership."
                )
            mine = self.members.get(self.me)
            if mine is None or mine.local_address not in addresses:
                raise GcsError("the list does not hold this member's local address")
            by_address = {m.local_address: m for m in self.members.values()}
            for address in addresses:
                member = by_address.get(address)
                if member is None:
                    raise GcsError(f"{address} is not the local address of a member of the group")
                if member.suspected:
                    raise GcsError(f"the member at {address} is unreachable")
            keep = {by_address[a].member_id for a in addresses}
        self.gcs.force_members(sorted(keep))
        deadline = time.monotonic() + FORCE_VIEW_TIMEOUT
        with self._lock:
            while set(self.members) != keep and self.state is MemberState.ONLINE:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise GcsError("Timeout on wait for view")
                self._majority.wait(min(left, 1.0))

    # ---------------------------------------------------- GCS: deliveries
    def on_message(self, message: GcsMessage) -> None:
        """A message in the group's order (delivery thread)."""
        with self._lock:
            if self.certifier is None:
                self._buffer_or_take_state(message)
                return
        self._deliver(message)
        self.gcs.delivered(message.order)

    def _buffer_or_take_state(self, message: GcsMessage) -> None:
        """Before this joiner has its certification state: keep messages, take the state."""
        try:
            decoded = decode(message.payload)
        except MessageError as exc:
            self.go_error(f"malformed group message: {exc}")
            return
        if isinstance(decoded, CertificationState) and decoded.joiner == self.me:
            try:
                self.certifier = Certifier.from_state(
                    self.config.group_name, decoded.executed, list(decoded.info)
                )
            except ValueError as exc:
                self.go_error(f"malformed certification state: {exc}")
                return
            for member_id in decoded.online:
                if member_id in self.members:
                    self.members[member_id].state = MemberState.ONLINE
            self.primary = decoded.primary or None
            self._elect()
            buffered, self._buffer = self._buffer, []
            for item in buffered:
                if isinstance(item, GcsView):
                    self._log_view_change(item.view_id)
                else:
                    self._deliver(item)
            donor = self.members.get(decoded.sender)
            if donor is not None:
                threading.Thread(
                    target=self._run_recovery,
                    args=(donor, GtidSet.parse(decoded.executed)),
                    name="rpl-gr-recovery",
                    daemon=True,
                ).start()
            return
        self._buffer.append(message)

    def _deliver(self, message: GcsMessage) -> None:
        try:
            decoded = decode(message.payload)
        except MessageError as exc:
            self.go_error(f"malformed group message: {exc}")
            return
        self._handle(decoded)

    def _handle(self, message: Message) -> None:
        if isinstance(message, TransactionMessage):
            self._certify(message)
        elif isinstance(message, Recovered):
            self._recovered(message.member)
        elif isinstance(message, StableSet):
            self._stable_set(message)
        elif isinstance(message, TransactionPrepared):
            self.consistency.acknowledged(message.gtid, message.member)
        elif isinstance(message, MemberStats):
            with self._lock:
                if message.member in self.members and message.member != self.me:
                    self._stats[message.member] = message

    def _certify(self, message: TransactionMessage) -> None:
        certifier = self.certifier
        assert certifier is not None
        delivered = time.perf_counter_ns()
        try:
            snapshot = GtidSet.parse(message.snapshot)
        except ValueError as exc:
            self.go_error(f"malformed transaction snapshot: {exc}")
            return
        local = message.origin == self.me
        pending: frozenset[str] | None = frozenset()
        if isinstance(message, TransactionWithGuarantee):
            with self._lock:
                pending = members_that_must_prepare(self.members.values(), message.origin)
        result = None
        if pending is not None:
            result = certifier.certify(snapshot, frozenset(message.write_set))
        elif local:
            self.log.error(f"Plugin group_replication reported: '{GUARANTEES_UNSUPPORTED_TEXT}'")
        if result is not None:
            self.order.append(result.gno)
        with self._lock:
            ticket = self._tickets.get(message.ticket) if local else None
        after = None
        if (
            result is not None
            and pending is not None
            and isinstance(message, TransactionWithGuarantee)
        ):
            gtid = result.gtid(self.config.group_name)
            after = self.consistency.certified(gtid, pending, local=local)
        if local:
            if ticket is None:  # the session gave up waiting: it rolled back
                if result is not None:
                    self.go_error("a certified local transaction was abandoned by its session")
                return
            if result is None:
                ticket.error = ROLLBACK_TEXT if pending is not None else GUARANTEES_UNSUPPORTED_TEXT
            else:
                ticket.gtid = result.gtid(self.config.group_name)
                ticket.after = after
            ticket.delivered_ns, ticket.certified_ns = delivered, time.perf_counter_ns()
            ticket.done.set()
            return
        if result is None:
            return
        gtid = result.gtid(self.config.group_name)
        self.remote_queued += 1
        try:
            self.applier.queue(
                gtid,
                message.events,
                server_id=message.server_id,
                timestamp_us=message.timestamp_us,
                checksum=message.checksum,
            )
        except ValueError as exc:
            self.go_error(f"a remote transaction's events do not parse: {exc}")

    def _recovered(self, member_id: str) -> None:
        with self._lock:
            member = self.members.get(member_id)
            if member is None:
                return
            member.state = MemberState.ONLINE
            self.log.note(
                f"Plugin group_replication reported: 'The member with address "
                f"{member.address} was declared online within the replication group.'"
            )
            if member_id == self.me:
                self.consistency.hold_uncommitted(self.server.gtid_executed)
                self.state = MemberState.ONLINE
            self._elect()

    def _stable_set(self, message: StableSet) -> None:
        try:
            executed = GtidSet.parse(message.executed)
        except ValueError:
            return
        with self._lock:
            self._stable[message.member] = executed
            ids = set(self.members)
            if not ids.issubset(self._stable) or self.certifier is None:
                return
            stable = intersect_all(self._stable[i] for i in ids)
            self.certifier.garbage_collect(stable)
            self.committed_all_members = stable

    # -------------------------------------------------------------- stats
    def own_stats(self) -> MemberStats | None:
        """This member's counters (None before it has a certifier)."""
        certifier = self.certifier
        if certifier is None:
            return None
        group = self.config.group_name
        queued = self.applier.queue_size()
        return MemberStats(
            self.me,
            self.view_id,
            len(self._buffer),
            certifier.positive + certifier.negative,
            certifier.negative,
            len(certifier.info),
            str(self.committed_all_members),
            f"{group}:{certifier.last_positive}" if certifier.last_positive else "",
            queued,
            self.remote_queued - queued,
            self.local_proposed,
            self.local_rollback,
        )

    def member_stats(self) -> list[MemberStats]:
        """Every member's last counters: this member's now, the others' last sent."""
        own = self.own_stats()
        with self._lock:
            others = [self._stats[m] for m in sorted(self._stats) if m in self.members]
        return ([own] if own is not None else []) + others

    # ---------------------------------------------------------- GCS: views
    def on_view_changed(self, view: GcsView) -> None:
        """A new membership, at its place in the order (delivery thread)."""
        with self._lock:
            before = dict(self.members)
            present = {m.member_id for m in view.members}
            self.consistency.members_left({*view.left, *(set(self.members) - present)})
            for gone in view.left:
                self.members.pop(gone, None)
                self._stable.pop(gone, None)
                self._stats.pop(gone, None)
            for info in view.members:
                if info.member_id not in self.members:
                    weight, bootstrap = read_member_data(info.data)
                    self.members[info.member_id] = Member(
                        info.member_id,
                        info.host,
                        info.port,
                        info.version,
                        weight,
                        MemberState.ONLINE if bootstrap else MemberState.RECOVERING,
                        local_address=info.address,
                    )
            self.members = {k: v for k, v in self.members.items() if k in present}
            self.view_id = view.view_id
            self.log.note(
                "Plugin group_replication reported: 'Group membership changed to "
                + ", ".join(m.address for m in self.members.values())
                + f" on view {view.view_id}.'"
            )
            if self.me in view.joined:
                self._joined(before)
            if view.joined:
                self._joined_view(view, before)
            if self.primary is not None and self.primary not in present:
                self.primary = None
            self._elect()
            self._check_partition()
            self._majority.notify_all()

    def _joined(self, before: dict[str, Member]) -> None:
        """This member's own join view."""
        if self.config.bootstrap and not before:
            executed = GtidSet.parse(self.server.gtid_executed())
            self.certifier = Certifier(self.config.group_name, executed)
            self.state = MemberState.ONLINE
            self.members[self.me].state = MemberState.ONLINE
            self.applier.start()

    def _joined_view(self, view: GcsView, before: dict[str, Member]) -> None:
        """A view with joining members: its VIEW_CHANGE takes the next group GTID here
        before the state goes to the joiners, so their recovery (to the state's
        executed set) brings it; a joiner's own join view is logged by the members that
        were there. A joiner still waiting for its state keeps a later join view in its
        buffer, at its place in the order.
        """
        if self.certifier is None:
            if self.me not in view.joined:
                self._buffer.append(view)
            return
        self._log_view_change(view.view_id)
        if self.me not in view.joined:
            self._send_state(before, view)

    def _log_view_change(self, view_id: str) -> None:
        """Queue the VIEW_CHANGE transaction of ``view_id`` with its group GTID."""
        certifier = self.certifier
        assert certifier is not None
        result = certifier.view_change()
        self.order.append(result.gno)
        self.remote_queued += 1
        try:
            self.applier.queue_view_change(
                result.gtid(self.config.group_name), view_id, certifier.certification_info()
            )
        except ValueError as exc:
            self.go_error(f"the view change of view {view_id} cannot be logged: {exc}")

    def _send_state(self, before: dict[str, Member], view: GcsView) -> None:
        """Existing members: the one certifying for joiners sends them the state."""
        online = sorted(m for m, member in before.items() if member.state is MemberState.ONLINE)
        if not online or online[0] != self.me or self.certifier is None:
            return
        executed, info = self.certifier.state()
        for joiner in view.joined:
            state = CertificationState(
                self.me,
                joiner,
                view.view_id,
                executed,
                tuple(info),
                tuple(online),
                self.primary or "",
            )
            payload = encode(state)
            threading.Thread(target=self._send_quietly, args=(payload,), daemon=True).start()

    def _send_quietly(self, payload: bytes) -> None:
        try:
            self.gcs.send(payload)
        except GcsError as exc:
            self.log.warning(f"Plugin group_replication reported: 'send failed: {exc}'")

    def _elect(self) -> None:
        """Single-primary mode: keep or elect the primary; set roles and read-only."""
        members = list(self.members.values())
        if not self.config.single_primary:
            for member in members:
                member.role = MemberRole.PRIMARY
            if self.state is MemberState.ONLINE:
                self.server.set_super_read_only(False)
            return
        current = self.members.get(self.primary) if self.primary else None
        if current is None or current.state is not MemberState.ONLINE:
            elected = elect(members)
            self.primary = elected.member_id if elected else None
            if elected is not None:
                if elected.member_id == self.me:
                    self.log.note(
                        "Plugin group_replication reported: 'This server is working as "
                        "primary member.'"
                    )
                    self._backlog_applied.clear()
                    threading.Thread(target=self._become_primary, daemon=True).start()
                elif self.state is MemberState.ONLINE:
                    self.log.note(
                        "Plugin group_replication reported: 'This server is working as "
                        f"secondary member with primary member address {elected.address}.'"
                    )
        for member in members:
            member.role = (
                MemberRole.PRIMARY if member.member_id == self.primary else MemberRole.SECONDARY
            )
        if self.primary != self.me:
            self.server.set_super_read_only(True)

    def _become_primary(self) -> None:
        """Apply the backlog, then accept writes; then release the transactions held
        meanwhile (they find super_read_only off).
        """
        try:
            while self.applier.queue_size() and not self._stopping.is_set():
                if not self.applier.running:
                    return
                time.sleep(0.01)
            with self._lock:
                if self.primary == self.me and self.state is MemberState.ONLINE:
                    self.server.set_super_read_only(False)
        finally:
            self._backlog_applied.set()

    def applying_backlog(self) -> bool:
        """This member, just elected primary, is applying the old primary's backlog."""
        return not self._backlog_applied.is_set()

    def hold_for_primary_failover(self, timeout: float) -> None:
        """BEFORE_ON_PRIMARY_FAILOVER (and the levels above it): while this member, just
        elected primary, applies the old primary's backlog, hold the transaction: it
        then reads and writes nothing older than what the old primary had committed.
        ObserverError 3781 after ``timeout``, 3782 when Group Replication stops
        meanwhile, 3783 when the member goes to ERROR.
        """
        if self._backlog_applied.is_set():
            return
        released = self._backlog_applied.wait(timeout)
        if self._stopping.is_set():
            raise ObserverError(HOLD_KILLED_TEXT, errno=ER_GR_HOLD_KILLED)
        if self.state is MemberState.ERROR:
            raise ObserverError(HOLD_MEMBER_STATUS_ERROR_TEXT, errno=ER_GR_HOLD_MEMBER_STATUS_ERROR)
        if not released:
            raise ObserverError(HOLD_WAIT_TIMEOUT_TEXT, errno=ER_GR_HOLD_WAIT_TIMEOUT)

    def on_suspicions(self, suspected: tuple[str, ...]) -> None:
        """Members the failure detector suspects (UNREACHABLE until expelled)."""
        with self._lock:
            for member in self.members.values():
                now = member.member_id in suspected and member.member_id != self.me
                if now != member.suspected:
                    self.log.warning(
                        f"Plugin group_replication reported: 'Member with address "
                        f"{member.address} "
                        + ("has become unreachable.'" if now else "is reachable again.'")
                    )
                member.suspected = now
            self._check_partition()

    def on_error(self, reason: str) -> None:
        """The group communication engine is lost or expelled this member."""
        if not self._stopping.is_set():
            self.go_error(f"Group communication failure: {reason}", expelled=True)

    # --------------------------------------------------------- recovery
    def online_members(self) -> list[Member]:
        """The other members ONLINE in the current view, by member id."""
        with self._lock:
            return sorted(
                (
                    m
                    for m in self.members.values()
                    if m.state is MemberState.ONLINE and m.member_id != self.me
                ),
                key=lambda m: m.member_id,
            )

    def leaving(self, seconds: float) -> bool:
        """Wait up to ``seconds``; whether the member is leaving the group meanwhile."""
        return self._stopping.wait(seconds)

    def _run_recovery(self, donor: Member, until: GtidSet) -> None:
        """Catch up with ``donor`` to ``until``, then apply the buffer, then ONLINE."""
        try:
            if not until.issubset(GtidSet.parse(self.server.gtid_executed())):
                self._recover(self, donor, until)
            executed = GtidSet.parse(self.server.gtid_executed())
            self.order.drop_executed(executed, self.config.group_name)
        except Exception as exc:  # noqa: BLE001 - any recovery failure is an ERROR state
            self.go_error(
                f"Maximum number of retries when trying to connect to a donor "
                f"reached. Aborting group replication incremental recovery: {exc}"
            )
            return
        self.applier.start()
        self._send_quietly(encode(Recovered(self.me)))

    # ------------------------------------------------------- housekeeping
    def _housekeeping(self) -> None:
        """Every second: the applier's health and this member's counters (MemberStats,
        as MySQL sends them every flow-control period); every 5: its stable set.
        """
        ticks = 0
        while not self._stopping.wait(1.0):
            ticks += 1
            error = self.applier.last_error
            if error[0] and self.state is MemberState.ONLINE and not self.applier.running:
                self.go_error(
                    f"The applier thread execution was aborted. Unable to process more "
                    f"transactions, this member will now leave the group. ({error[1]})"
                )
            if ticks % 5 == 0 and self.state is MemberState.ONLINE and not self.in_minority:
                message = StableSet(self.me, self.server.gtid_executed())
                self._send_quietly(encode(message))
            stats = self.own_stats()
            if (
                stats is not None
                and self.state in (MemberState.ONLINE, MemberState.RECOVERING)
                and not self.in_minority  # nothing is ordered: a send would only wait
            ):
                self._send_quietly(encode(stats))
