"""The binary log writer: group commit, rotation, the index, the published end position.

A commit, in stages (docs/architecture.md, "A commit, end to end"):

1. **Flush.** Sessions queue their encoded transaction (:class:`CommitTicket`). The
   first to find the queue empty is the group's leader (or, when it does not wait for
   its commit, one of the binlog's flush threads leads for it); the leader takes the
   binlog write lock, then the whole queue (everything that arrived while it waited), assigns
   GTIDs in queue order, fixes every event's ``log_pos`` and writes the group with
   one ``write``. Then ``after_flush`` with the group's end.
2. **Sync.** ``fdatasync`` per ``sync_binlog`` (0: never, 1: every group, N: every N
   groups). Then the new end is *published*: readers (dump threads) never read past
   the published end, so they never see bytes that might be cut back.
3. The group joins the **commit queue** (still under the write lock, so the queue is in
   binlog order) and the write lock is released: the next group can flush while this one
   waits (what queued during this flush gets a flush thread as leader now).
4. **Commit stage** (MySQL's ``Commit_stage_manager::COMMIT_STAGE``): one thread at a
   time, the committer, takes *every* group queued and commits them as one commit group:
   ``after_sync`` once with the last group's end, the engine commit of each transaction
   in binlog order, ``gtid_executed`` updated, ``after_commit`` per transaction with its
   own end. A leader whose group finds a committer at work leaves it to that thread and
   goes on (a flush thread is free for the next flush group at once); the committer
   takes what queued meanwhile, so while one commit group waits in ``after_sync`` for a
   semisync ACK, the groups flushed behind it gather into the next commit group, which
   then costs one ``after_sync`` and one wake-up instead of one each.
5. **Replies.** A ticket with a ``reply`` (an autocommit statement or COMMIT of a client
   session) is answered by the committer, OK or the group's error; its thread did not
   wait. Every other ticket's thread is woken to go on.

Rotation takes only the write lock, so a session blocked in ``after_sync`` (semisync
waiting for an ACK that a dump thread must first send) never stops a rotation, and a
rotation never stops a dump thread: the deadlock of WL#6355 cannot form.
"""

from __future__ import annotations

import _thread
import contextlib
import errno
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Final, NoReturn

import attrs

from rpl.core import errorlog
from rpl.core.binlog.dependency import WRITESET, DependencyTracker
from rpl.core.binlog.events import (
    GTID_FLAG_MAY_HAVE_SBR,
    LOG_EVENT_BINLOG_IN_USE_F,
    FormatDescriptionEvent,
    PreviousGtidsEvent,
    RotateEvent,
    StopEvent,
    encode_event,
    encode_gtid,
    relocate_events,
    set_log_pos,
)
from rpl.core.binlog.gtid import Gtid, GtidSet
from rpl.core.binlog.logfile import BinlogIndex, binlog_file_name, file_number
from rpl.core.debug import CrashPoints
from rpl.core.delegates import BinlogStorageDelegate, HookError
from rpl.core.errors import (
    ER_BINLOG_LOGGING_IMPOSSIBLE,
    ER_CANT_OPEN_FILE,
    ER_UNKNOWN_ERROR,
    MySQLError,
)
from rpl.core.net.packets import ReplyBatch
from rpl.core.waits import thd_wait
from rpl.observers import BinlogStorageParam

_log = errorlog.logger("binlog")

MAX_FLUSHERS = 8
"""Flush threads a binlog runs at most (each leads one group at a time)."""
FLAGS_OFFSET = 4 + 17
"""File offset of the FD event's flags byte (cleared in place when the file is closed)."""


def file_header(
    server_id: int, checksum: bool, previous_gtids: GtidSet, created_at_start: bool
) -> bytearray:
    """The start of a new binlog or relay log file: the magic, a FORMAT_DESCRIPTION
    event marked in use (cleared when the file is closed) and PREVIOUS_GTIDS.
    """
    now = int(time.time())
    fd_event = FormatDescriptionEvent(
        created=now if created_at_start else 0, checksum_alg=1 if checksum else 0
    )
    data = bytearray(b"\xfebin")
    for event, flags in (
        (fd_event, LOG_EVENT_BINLOG_IN_USE_F),
        (PreviousGtidsEvent(previous_gtids), 0),
    ):
        raw = encode_event(
            event,
            server_id=server_id,
            timestamp=now,
            flags=flags,
            checksum=checksum or event is fd_event,
        )
        data += raw
        set_log_pos(data, len(data) - len(raw), len(data), checksum or event is fd_event)
    return data


def end_file(
    fd: int, position: int, last_event: RotateEvent | StopEvent, server_id: int, checksum: bool
) -> int:
    """Append ``last_event`` at ``position``, mark the file closed (FD flag cleared),
    fsync and close ``fd``; the file's final size.
    """
    raw = bytearray(
        encode_event(last_event, server_id=server_id, timestamp=int(time.time()), checksum=checksum)
    )
    set_log_pos(raw, 0, position + len(raw), checksum)
    os.write(fd, raw)
    os.pwrite(fd, b"\x00", FLAGS_OFFSET)
    os.fsync(fd)
    os.close(fd)
    return position + len(raw)


@attrs.frozen
class BinlogOptions:
    """The variables the writer reads at each group (callables: they are dynamic)."""

    sync_binlog: Callable[[], int]
    max_binlog_size: Callable[[], int]
    group_commit_sync_delay: Callable[[], int] = lambda: 0
    group_commit_sync_no_delay_count: Callable[[], int] = lambda: 0
    checksum: bool = True
    dependency_tracking: Callable[[], str] = lambda: WRITESET
    dependency_history_size: Callable[[], int] = lambda: 25000


Reply = Callable[[MySQLError | None, ReplyBatch], None]
"""A ticket's reply: given the ticket's error (None: committed), it adds the client's
reply to the batch in which the leader sends its group's replies together."""


def _held_lock() -> _thread.LockType:
    lock = _thread.allocate_lock()
    lock.acquire()
    return lock


class CommitTicket:
    """One transaction queued for group commit.

    ``events`` are the transaction's encoded events without the GTID event
    (QUERY BEGIN ... XID, or one DDL QUERY), each with ``log_pos`` 0: the leader
    relocates them. ``engine_commit`` runs in binlog order in the commit stage;
    ``after_commit`` runs after it with the transaction's (file, end position, GTID).

    A plain class, not attrs: one is made per transaction, and the compiled build makes a
    plain class native (a constructor and field reads in C, where an attrs class with a
    ``factory`` default keeps an interpreted ``__init__`` and generic attribute reads).
    """

    def __init__(
        self,
        *,
        thread_id: int,
        events: list[bytearray],
        engine_commit: Callable[[], None],
        after_commit: Callable[[str, int, Gtid | None], None],
        gtid: Gtid | None = None,
        server_id: int | None = None,
        original_commit_timestamp: int | None = None,
        write_set: frozenset[int] | None = None,
        rows_only: bool = False,
        queued: Callable[[], None] | None = None,
    ) -> None:
        self.thread_id = thread_id
        self.queued = queued
        """Called once the ticket is in the flush queue (outside the queue's lock): every
        ticket queued after that call is binlogged after this one (a plugin's commit
        order, ``rpl.observers.CommitDecision``)."""
        self.rows_only = rows_only
        """Its changes are all rows events (its GTID event's flags say so)."""
        self.events = events
        self.engine_commit = engine_commit
        self.after_commit = after_commit
        self.gtid = gtid
        self.server_id = server_id
        """The originating server's id for a replicated transaction (this server's if
        None)."""
        self.original_commit_timestamp = original_commit_timestamp
        """Microseconds: when a replicated transaction committed on its originating
        server."""
        self.write_set = write_set
        """Its write-set items, the 64-bit XXHASH64 key hashes of the rows it changed
        (:mod:`rpl.core.execution.write_sets`; empty with
        ``transaction_write_set_extraction=OFF``; None: not a row transaction, e.g. DDL)."""
        self.log_file = ""
        self.log_pos = 0
        self.error: MySQLError | None = None
        self.done: _thread.LockType = _held_lock()
        """Held from the ticket's creation until its group is finished (committed or
        failed): the one thread that commits the ticket blocks in ``done.acquire()``, the
        leader releases it once. A bare lock is the cheapest one-shot signal CPython has
        (an Event builds a Condition and a lock per wait), and every commit makes one."""
        self.reply: Reply | None = None
        """When set, the committing thread does not wait: the leader calls ``reply`` with
        the ticket's error (None: committed) once the group is finished, after the engine
        commit and ``after_commit``, and the reply to the client goes out from there,
        sent with the rest of the group's (a session's autocommit statement: no wake-up
        per commit, and one release of the interpreter lock for the group's sends). It
        must not raise."""


class BinlogPosition:
    """A (file, position) pair; files compare by their number. Immutable, compared and
    hashed as the pair.

    A plain class, not attrs: the compiled build makes it native, so the positions made
    and compared for every group and every relayed transaction run no interpreted code.
    """

    __slots__ = ("file", "pos")

    def __init__(self, file: str, pos: int) -> None:
        self.file: Final = file
        self.pos: Final = pos

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, BinlogPosition):
            return NotImplemented
        return self.pos == other.pos and self.file == other.file

    def __hash__(self) -> int:
        return hash((self.file, self.pos))

    def __repr__(self) -> str:
        return f"BinlogPosition(file={self.file!r}, pos={self.pos})"

    def key(self) -> tuple[int, int]:
        """Sort key: file number, then position."""
        return (file_number(self.file), self.pos)


class PublishedEnd:
    """The end of a log up to which readers may read, and the readers waiting for it to
    move (a binlog's dump threads, a relay log's applier).

    ``end`` is one reference, read without a lock. A waiter parks on a bare lock of its
    own, created held, that :meth:`publish` releases: the writer's publish (once a commit
    group, on the way to the dump threads and so to a semisync ACK) and the reader's
    wake-up are then a lock release and an acquire, where ``threading.Condition`` runs a
    dozen lines of interpreted code on each side. Every waiter's lock is released at most
    once: :meth:`publish` takes the whole list, and a waiter that timed out takes itself
    off it first.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiters: list[_thread.LockType] = []
        self.end = BinlogPosition("", 0)

    def publish(self, end: BinlogPosition) -> None:
        """Move the end to ``end`` and wake every waiter."""
        with self._lock:
            self.end = end
            waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            waiter.release()

    def wait_past(self, past: BinlogPosition, timeout: float | None) -> BinlogPosition:
        """Block until the end is not ``past`` any more (or ``timeout`` seconds; None:
        no limit); return the end.
        """
        with self._lock:
            if self.end != past:
                return self.end
            waiter = _held_lock()
            self._waiters.append(waiter)
        if not waiter.acquire(True, -1 if timeout is None else max(timeout, 0.0)):
            with self._lock:
                if waiter in self._waiters:  # not released: no publish took the list
                    self._waiters.remove(waiter)
        return self.end


class Binlog:
    """The server's binary log (the write-ahead log of every commit)."""

    def __init__(
        self,
        directory: Path,
        basename: str,
        server_id: int,
        server_uuid: uuid.UUID,
        options: BinlogOptions,
        storage: BinlogStorageDelegate,
        crash: CrashPoints | None = None,
    ) -> None:
        self.directory = directory
        self.basename = basename
        self.server_id = server_id
        self.server_uuid = server_uuid
        self._uuid_text = str(server_uuid)
        self.options = options
        self.storage = storage
        self.crash = crash or CrashPoints()
        self.index = BinlogIndex(directory / f"{basename}.index")
        self.gtid_executed = GtidSet()
        self._gtids_logged = GtidSet()
        self._write_lock = threading.Lock()
        self._queue: list[CommitTicket] = []
        self._queue_lock = threading.Lock()
        self._flushers = 0
        self._parked: list[_thread.LockType] = []
        """Idle flush threads, each blocked on a lock of its own that :meth:`_wake_flusher`
        (or :meth:`close`) releases: a wake-up is one lock release, no condition variable."""
        self._flushing = False
        """A leader is in the flush stage (write lock held, its group taken): tickets
        queued meanwhile wait for the end of that stage, when it wakes a flush thread for
        them (one wake-up a group, however many callers queued)."""
        self._closed = False
        self._commit_queue: list[tuple[list[CommitTicket], BinlogPosition]] = []
        """Flushed groups waiting for the commit stage, in binlog order, with their ends."""
        self._commit_lock = threading.Lock()
        """Guards the commit queue and ``_committing``."""
        self._committing = False
        """A thread is the committer: it takes the commit queue until it finds it empty."""
        self._commit_handed_over = False
        """The committer left the commit stage to a flush thread (queue lock)."""
        self.commit_stage_lock = threading.Lock()
        """Held during each group's engine commits: hold it to see no commit in progress."""
        self._executed = threading.Condition(self.commit_stage_lock)
        """Notified after a commit stage added to ``gtid_executed`` while anyone waits in
        :meth:`wait_for_gtid_set`."""
        self._executed_waiters = 0
        self._published = PublishedEnd()
        self._committed_end = BinlogPosition("", 0)
        self._fd = -1
        self._file = ""
        self._pos = 0
        self._groups_since_sync = 0
        self._clock = DependencyTracker()
        self._xid = 0
        self.binlog_commits = 0
        self.binlog_group_commits = 0
        self.fsyncs = 0
        self.on_rotate: Callable[[], object] | None = None
        """Called (outside every binlog lock) after each rotation: the server checkpoints."""
        self.on_group: Callable[[BinlogPosition], None] | None = None
        """Called (outside every binlog lock) with each committed group's end: the server
        checkpoints when enough binlog has grown since the last checkpoint."""

    # ---------------------------------------------------------------- files
    @property
    def current_file(self) -> str:
        """The file being written."""
        return self._file

    def open(self, gtids: GtidSet) -> None:
        """Start writing a new file; ``gtids`` are all GTIDs in the existing files."""
        self._gtids_logged = gtids.copy()
        self.gtid_executed = gtids.copy()
        self._closed = False
        with self._write_lock:
            self._open_next(created_at_start=True)
        self._committed_end = self._published.end

    def _open_next(self, created_at_start: bool = False) -> None:
        fd, name, size = self._create_next(created_at_start)
        self._start_file(fd, name, size)

    def _create_next(self, created_at_start: bool = False) -> tuple[int, str, int]:
        """Create the next file with its header, synced, listed in the index: (fd, name,
        size). OSError if it cannot be; then nothing of it is left (no file, no index
        entry), and the file being written, if any, is untouched.
        """
        names = self.index.names()
        number = file_number(names[-1]) + 1 if names else 1
        name = binlog_file_name(self.basename, number)
        path = self.directory / name
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o640)
        try:
            data = file_header(
                self.server_id, self.options.checksum, self._gtids_logged, created_at_start
            )
            view, written = memoryview(data), 0
            while written < len(data):
                written += os.write(fd, view[written:])
            os.fsync(fd)
            self.index.append(name)
        except OSError:
            os.close(fd)
            path.unlink(missing_ok=True)
            raise
        return fd, name, len(data)

    def _start_file(self, fd: int, name: str, size: int) -> None:
        self._fd, self._file, self._pos = fd, name, size
        self._clock.new_file()
        self._publish(BinlogPosition(name, size))

    def _close_current(self, last_event: RotateEvent | StopEvent) -> None:
        self._pos = end_file(self._fd, self._pos, last_event, self.server_id, self.options.checksum)
        self.fsyncs += 1
        self._fd = -1
        self._publish(BinlogPosition(self._file, self._pos))

    def rotate(self, only_if_full: bool = False) -> None:
        """FLUSH BINARY LOGS: end the file with a ROTATE and start the next one. With
        ``only_if_full``, only if the file has reached ``max_binlog_size`` (checked under
        the write lock: of two committers that both saw the file full, one rotates).

        A next file that cannot be created (disk full, a read-only directory) leaves the
        current one open and written to: ER_CANT_OPEN_FILE, logged; the next rotation
        tries again. Once the next file exists, a ROTATE that cannot be written to the
        current one stops the server as a failed flush does (binlog_error_action).
        """
        with self._write_lock:
            if only_if_full and self._pos < self.options.max_binlog_size():
                return
            self._rotate_locked()
        if self.on_rotate is not None:
            self.on_rotate()

    def _rotate_locked(self) -> None:
        caught_up = self._committed_end == self._published.end
        try:
            fd, name, size = self._create_next()
        except OSError as failure:
            errorlog.log(
                _log,
                logging.ERROR,
                f"Could not open the next binary log file ({failure}); "
                f"still logging to {self._file}",
                code=10000,
            )
            raise MySQLError.of(
                ER_CANT_OPEN_FILE,
                failure.filename or self.basename,
                failure.errno,
                failure.strerror,
            ) from failure
        try:
            self._close_current(RotateEvent(4, name))
        except OSError as failure:
            self._abort_server([], "rotate", failure)
        self._start_file(fd, name, size)
        if caught_up:
            # Every flushed group had committed and none can flush now (write lock held):
            # the committed state is exactly the old file, so it ends at the new start.
            self._committed_end = self._published.end

    def close(self) -> None:
        """Clean shutdown: a STOP event ends the file, which is marked closed; the flush
        threads end once the queue is empty.
        """
        with self._queue_lock:
            self._closed = True
            for parked in self._parked:
                parked.release()
            self._parked.clear()
        with self._write_lock:
            if self._fd >= 0:
                self._close_current(StopEvent())

    def files(self) -> list[tuple[str, int]]:
        """SHOW BINARY LOGS rows: (Log_name, File_size)."""
        with self._write_lock:
            return [(name, (self.directory / name).stat().st_size) for name in self.index.names()]

    # ------------------------------------------------------- end position
    def _publish(self, end: BinlogPosition) -> None:
        self._published.publish(end)

    @property
    def end(self) -> BinlogPosition:
        """The published end: readers may read every byte before it, and none after."""
        return self._published.end

    @property
    def committed_end(self) -> BinlogPosition:
        """The end of the last group whose engine commit finished."""
        return self._committed_end

    def wait_for_update(self, past: BinlogPosition, timeout: float | None) -> BinlogPosition:
        """Block until the published end moves past ``past`` (or timeout); return it."""
        return self._published.wait_past(past, timeout)

    # -------------------------------------------------------- group commit
    def wait_for_gtid_set(self, gtids: GtidSet, timeout: float) -> bool:
        """Block until every GTID of ``gtids`` is committed (in ``gtid_executed``: logged
        and committed in the engine), or ``timeout`` seconds pass; whether they are.
        """
        deadline = time.monotonic() + timeout
        with self._executed:
            self._executed_waiters += 1
            try:
                while not gtids <= self.gtid_executed:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        return False
                    with thd_wait():
                        self._executed.wait(min(left, 1.0))
                return True
            finally:
                self._executed_waiters -= 1

    def commit(self, ticket: CommitTicket) -> None:
        """Write, sync and commit one transaction with whatever group it joins.

        Returns when the transaction is committed in the engine and its
        ``after_commit`` ran; raises the MySQLError that failed it otherwise.
        """
        self.commit_batch([ticket])

    def commit_batch(self, tickets: list[CommitTicket]) -> None:
        """Commit ``tickets`` (transactions of one thread that do not conflict: each
        holds its own row locks) as one group where possible: one write, one sync.
        Raises the first error any of them got.

        The thread whose tickets find the queue empty leads the group (flush, sync, and
        the commit stage unless a committer is at work, which then commits the group
        too) and the threads that queue behind it follow: they wait, or, for tickets
        with a ``reply``, return at once. When every ticket has a ``reply`` the caller
        never waits, not even to lead: a flush thread of the binlog's leads instead, so
        that a connection thread (or a pool worker serving many connections) goes on at
        once while the group is written and synced. A leader hands the queue on as its
        flush stage ends, so the next group is written while this one waits in the
        commit stage (``after_sync``: a semisync ACK).
        """
        waited = [ticket for ticket in tickets if ticket.reply is None]
        with self._queue_lock:
            self._queue.extend(tickets)
            leader = len(self._queue) == len(tickets)
            if leader and not waited and not self._flushing:
                self._wake_flusher()
        for ticket in tickets:
            if ticket.queued is not None:
                ticket.queued()
        if not waited:
            return
        with thd_wait():
            if leader:
                self._lead()
            for ticket in waited:
                ticket.done.acquire()
        for ticket in waited:
            if ticket.error is not None:
                raise ticket.error

    def _wake_flusher(self) -> None:
        """Have a flush thread lead the queued group (queue lock held): an idle one, or a
        new one while fewer than MAX_FLUSHERS run (the others are busy with earlier
        groups: a group waiting in after_sync for a semisync ACK must not hold up the
        next group's flush).
        """
        if self._parked:
            self._parked.pop().release()  # the one idle the shortest time
        elif self._flushers < MAX_FLUSHERS:
            self._flushers += 1
            threading.Thread(
                target=self._flush_thread, name="rpl-binlog-flush", daemon=True
            ).start()

    def _flush_thread(self) -> None:
        """Lead every group queued by callers that do not wait, and the commit stage when
        a committer hands it over, until the binlog closes.
        """
        wake = _held_lock()
        while True:
            with self._queue_lock:
                commits, self._commit_handed_over = self._commit_handed_over, False
                if self._closed and not self._queue and not commits:
                    self._flushers -= 1
                    return
                idle = not self._queue and not commits
                if idle:
                    self._parked.append(wake)
            if idle:
                wake.acquire()  # until woken; a release before this makes it return at once
                continue
            try:
                if commits:
                    self._commit_stage()
                else:
                    self._lead()
            except Exception as failure:  # noqa: BLE001 - keep flushing the next groups
                errorlog.log(
                    _log,
                    logging.ERROR,
                    f"Binary log group commit failed: {failure!r}",
                    code=10000,
                    exc_info=failure,
                )

    def _lead(self) -> None:
        """Lead a flush group (write lock: flush, sync, publish, join the commit queue),
        then the commit stage if no committer is at work.
        """
        with self._write_lock:
            self._delay_for_group()
            with self._queue_lock:
                group, self._queue = self._queue, []
                self._flushing = bool(group)
            if not group:
                return  # an earlier leader took it while this one waited for the lock
            failure: BaseException | None = None
            commits = False
            try:
                end = self._flush_and_sync(group)
                with self._commit_lock:  # under the write lock: the queue is in binlog order
                    self._commit_queue.append((group, end))
                    commits, self._committing = not self._committing, True
            except BaseException as exc:  # noqa: BLE001 - the group is answered below
                failure = exc
                for ticket in group:  # nothing of it is binlogged: it commits nowhere
                    ticket.error = (
                        exc
                        if isinstance(exc, MySQLError)
                        else MySQLError.of(
                            ER_UNKNOWN_ERROR, f"internal error in the flush stage: {exc!r}"
                        )
                    )
            finally:
                with self._queue_lock:
                    self._flushing = False
                    if self._queue:  # queued during this flush: led while this one commits
                        self._wake_flusher()
        if failure is not None:
            self._finish(group)
            if not isinstance(failure, MySQLError):
                raise failure
        elif commits:
            self._commit_stage()

    def _commit_stage(self) -> None:
        """Be the committer: commit everything queued, as one commit group at a time,
        until the queue is found empty (then the next leader to queue a group is the
        committer).
        """
        while True:
            with self._commit_lock:
                queued, self._commit_queue = self._commit_queue, []
                if not queued:
                    self._committing = False
                    return
            tickets = [ticket for group, _ in queued for ticket in group]
            end = queued[-1][1]
            try:
                self._commit_group(tickets, end, len(queued))
            except BaseException as failure:  # noqa: BLE001 - the queue must go on
                for ticket in tickets:  # never an OK for what the commit stage did not finish
                    ticket.error = ticket.error or MySQLError.of(
                        ER_UNKNOWN_ERROR, f"internal error in the commit stage: {failure!r}"
                    )
                errorlog.log(
                    _log,
                    logging.ERROR,
                    f"Binary log group commit failed: {failure!r}",
                    code=10000,
                    exc_info=failure,
                )
            self._finish(tickets)
            if self.on_group is not None:
                self.on_group(end)
            if self._published.end.pos >= self.options.max_binlog_size():
                self._hand_over_commit_stage()
                with contextlib.suppress(MySQLError):  # logged; the file stays open
                    self.rotate(only_if_full=True)
                return

    def _hand_over_commit_stage(self) -> None:
        """Stop being the committer (before a rotation, whose checkpoint may wait for a
        session that waits for a queued group): a flush thread takes over what is queued.
        """
        with self._commit_lock:
            if not self._commit_queue:
                self._committing = False
                return
        with self._queue_lock:  # the role passes on: _committing stays set meanwhile
            self._commit_handed_over = True
            self._wake_flusher()  # or a busy flush thread sees the flag when it is done

    @staticmethod
    def _finish(tickets: list[CommitTicket]) -> None:
        """Each ticket's commit is over (``error`` says how): reply, or wake its thread."""
        replies = ReplyBatch()
        for ticket in tickets:
            if ticket.reply is not None:
                ticket.reply(ticket.error, replies)
            else:
                ticket.done.release()
        replies.send()

    def _delay_for_group(self) -> None:
        delay = self.options.group_commit_sync_delay()
        if delay <= 0:
            return
        enough = self.options.group_commit_sync_no_delay_count()
        deadline = time.monotonic() + delay / 1e6
        while time.monotonic() < deadline:
            if enough and len(self._queue) >= enough:
                return
            time.sleep(min(0.0002, max(0.0, deadline - time.monotonic())))

    def _hit_if_replicated(self, group: list[CommitTicket], name: str) -> None:
        """An applier crash point: only a group holding a replicated transaction."""
        if name in self.crash.armed and any(t.server_id is not None for t in group):
            self.crash.hit(name)

    def _flush_and_sync(self, group: list[CommitTicket]) -> BinlogPosition:
        self.crash.hit("crash_before_flush_binlog")
        self._hit_if_replicated(group, "crash_before_update_pos")
        start, logged = self._pos, self._gtids_logged.copy()
        data = self._encode_group(group, start)
        try:
            self._write(data)
        except OSError as failure:
            self._abort_server(group, "flush", failure)
        end = BinlogPosition(self._file, self._pos)
        param = BinlogStorageParam(self.server_id, self._uuid_text, group[0].thread_id)
        try:
            self.storage.after_flush(param, self._file, end.pos)
        except HookError:
            self._cut_back(start)
            self._gtids_logged = logged
            raise
        self.crash.hit("crash_after_flush_binlog")
        self.crash.pause("pause_before_sync_binlog")
        try:
            self._sync()
        except OSError as failure:
            self._abort_server(group, "sync", failure)
        self.crash.hit("crash_after_sync_binlog")
        self._hit_if_replicated(group, "crash_after_update_pos_before_apply")
        self._publish(end)
        return end

    def _encode_group(self, group: list[CommitTicket], start: int) -> bytearray:
        """The group's events back to back, each ticket's GTID event first, every
        ``log_pos`` and CRC set for the bytes being written at ``start``.
        """
        parts: list[bytes | bytearray] = []
        size = 0
        checksum = self.options.checksum
        mode = self.options.dependency_tracking()
        history = self.options.dependency_history_size()
        for ticket in group:
            gtid = ticket.gtid or Gtid(
                self.server_uuid, self._gtids_logged.next_gno(self.server_uuid)
            )
            ticket.gtid = gtid
            self._gtids_logged.add(gtid.sid, gtid.gno)
            last_committed, sequence = self._clock.next(ticket.write_set, mode, history)
            rest = sum(map(len, ticket.events))
            now_us = time.time_ns() // 1000
            original = ticket.original_commit_timestamp
            raw = encode_gtid(
                gtid.sid,
                gtid.gno,
                last_committed=last_committed,
                sequence_number=sequence,
                immediate_commit_timestamp=now_us,
                original_commit_timestamp=original,
                rest_length=rest,
                server_id=ticket.server_id or self.server_id,
                timestamp=(original or now_us) // 1_000_000,
                checksum=checksum,
                flags=0 if ticket.rows_only else GTID_FLAG_MAY_HAVE_SBR,
            )
            parts.append(raw)
            parts += ticket.events
            size += len(raw) + rest
            ticket.log_file, ticket.log_pos = self._file, start + size
        self._clock.group_written()
        data = bytearray().join(parts)
        relocate_events(data, start, checksum=checksum)
        return data

    def _abort_server(self, group: list[CommitTicket], stage: str, failure: OSError) -> NoReturn:
        """binlog_error_action = ABORT_SERVER (MySQL's default): a binlog that cannot be
        written or synced stops the server at once, without a clean shutdown, rather than
        commit what the binlog may lack. The group's clients get ER_BINLOG_LOGGING_IMPOSSIBLE
        first; the next start recovers from the binlog as after a crash (a partial
        group is cut off), so none of the group's transactions is committed.
        """
        message = (
            f"An error occurred during {stage} stage of the commit. "
            "'binlog_error_action' is set to 'ABORT_SERVER'. Hence aborting the server."
        )
        errorlog.log(
            _log,
            logging.ERROR,
            f"Binary logging not possible. Message: {message} ({self._file}: {failure})",
            code=10000,
        )
        error = MySQLError.of(ER_BINLOG_LOGGING_IMPOSSIBLE, message)
        replies = ReplyBatch()
        for ticket in group:
            ticket.error = error
            if ticket.reply is not None:
                ticket.reply(error, replies)
        replies.send()
        logging.shutdown()
        os._exit(1)

    def _write(self, data: bytearray) -> None:
        if self.crash.fire_once("binlog_write_error"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        if "half_binlogged_transaction" in self.crash.armed:
            os.write(self._fd, data[: len(data) // 2 + 1])  # +1: never a transaction boundary
            self.crash.hit("half_binlogged_transaction")
        written = 0
        view = memoryview(data)
        while written < len(data):
            written += os.write(self._fd, view[written:])
        self._pos += len(data)

    def _cut_back(self, start: int) -> None:
        os.ftruncate(self._fd, start)
        os.lseek(self._fd, start, os.SEEK_SET)
        self._pos = start

    def _sync(self) -> None:
        every = self.options.sync_binlog()
        self._groups_since_sync += 1
        if every and self._groups_since_sync >= every:
            os.fdatasync(self._fd)  # as MySQL's my_sync: the data and the size that reads it
            self.fsyncs += 1
            self._groups_since_sync = 0

    def _commit_group(self, tickets: list[CommitTicket], end: BinlogPosition, groups: int) -> None:
        """One commit group (``groups`` flush groups, ``tickets`` in binlog order, ending
        at ``end``): ``after_sync`` once, the engine commits, ``after_commit`` each.
        """
        param = BinlogStorageParam(self.server_id, self._uuid_text, tickets[0].thread_id)
        try:
            self.storage.after_sync(param, end.file, end.pos)
            sync_error: MySQLError | None = None
        except HookError as exc:
            sync_error = exc
        self.crash.pause("pause_after_after_sync")
        with self.commit_stage_lock:
            for ticket in tickets:
                ticket.engine_commit()
                assert ticket.gtid is not None
                self.gtid_executed.add(ticket.gtid.sid, ticket.gtid.gno)
            self._committed_end = end
            if self._executed_waiters:
                self._executed.notify_all()
            self.binlog_commits += len(tickets)
            self.binlog_group_commits += groups
        self.crash.hit("crash_after_engine_commit")
        self._hit_if_replicated(tickets, "crash_after_apply")
        for ticket in tickets:
            ticket.after_commit(ticket.log_file, ticket.log_pos, ticket.gtid)
            if sync_error is not None:
                ticket.error = sync_error

    # ------------------------------------------------------- maintenance
    def purge_to(self, name: str, keep_from: str | None) -> list[str]:
        """PURGE BINARY LOGS TO ``name``: delete the files before it.

        ``keep_from`` (the file recovery starts from) and the file being written
        are never removed; the purge stops at the first file it must keep.
        """
        with self._write_lock:
            names = self.index.names()
            stop = names.index(name)
            limit = min(
                n
                for n in (
                    stop,
                    names.index(self._file),
                    names.index(keep_from) if keep_from in names else stop,
                )
            )
            doomed = names[:limit]
            self.index.rewrite(names[limit:])
            for old in doomed:
                (self.directory / old).unlink(missing_ok=True)
            return doomed

    def reset(self) -> None:
        """RESET MASTER: delete every file, clear the GTIDs, start at file 1."""
        with self._write_lock:
            self.index.discard(self._fd)
            self._fd = -1
            self._gtids_logged = GtidSet()
            self.gtid_executed = GtidSet()
            self._open_next(created_at_start=True)
            self._committed_end = self._published.end

    def gtids_logged(self) -> GtidSet:
        """Every GTID written to the binary log so far (a copy)."""
        with self._write_lock:
            return self._gtids_logged.copy()

    def next_xid(self) -> int:
        """A new XID for a transaction's XID event."""
        with self._queue_lock:
            self._xid += 1
            return self._xid
