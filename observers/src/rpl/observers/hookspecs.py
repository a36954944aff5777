"""The replication observer interfaces (WL#4398, WL#6355): the hook reference.

Five interfaces, one class each. The docstring of every hook is its contract:
when the server calls it, what holds at that moment (what is durable, what is
visible to whom, which locks are held), what its return value means and what
failing it does. A plugin implements any subset of hooks, each as a method or
function marked with :data:`rpl.observers.hookimpl` whose parameters are a
subset of the specification's, by name.

Rules common to every hook:

* **Order.** The observers of a hook run one after another in the order their
  plugins were installed (``tryfirst=True`` implementations before the rest,
  ``trylast=True`` after), each on the calling server thread. Hooks are
  synchronous: a callback that blocks blocks that server thread and nothing
  else the docstring does not name.
* **Failure.** A callback fails the hook by raising
  :class:`rpl.observers.ObserverError` (any other exception fails it as well
  and is logged with its traceback). The first failure stops the loop: later
  observers of that call are not called. The server logs
  ``Run function '<hook>' in plugin '<plugin>' failed`` and then applies the
  consequence each docstring states under *Failure*. Where the consequence is an
  error, *the observer's error* in a docstring means: with no ``errno`` on the
  ObserverError, the hook's own MySQL error with MySQL's text (what MySQL's
  client sees; the observer's message goes only to the error log, as
  ``Plugin '<plugin>' failed '<hook>': <message>``); with an ``errno``, that
  errno, the ObserverError's ``sqlstate`` and its own message. The per-event
  binlog transmit hooks are the exception: the replica always gets 1236, whose
  text is the observer's message when it passed an errno.
* **Consistency.** One hook call sees one set of observers: a plugin installed
  or uninstalled meanwhile is either called entirely or not at all, and
  UNINSTALL PLUGIN returns only after calls already inside the plugin returned.
"""

from __future__ import annotations

from typing import Final

from rpl.observers.markers import hookspec
from rpl.observers.params import (
    BinlogDumpFlags,
    BinlogRelayFlags,
    BinlogStorageParam,
    CommitDecision,
    RelayIOParam,
    ServerStateParam,
    TransmitParam,
    TransParam,
)


class TransactionObserver:
    """``Trans_observer``: the life of a session's transaction."""

    @hookspec
    def begin(self, param: TransParam) -> None:
        """A transaction starts.

        Called in the session's thread before the first statement of a
        transaction executes (for an autocommitted statement: before each
        statement; after BEGIN: before the first statement that follows).

        Holds: no row lock is held and nothing is changed yet; ``param.log_file``
        is empty. A callback may block to delay the transaction (Group
        Replication's BEFORE consistency waits here).

        Failure: the statement fails with the observer's error, or
        ER_RUN_HOOK_ERROR (3100) "Error on observer while running replication
        hook 'begin'."; nothing was executed.
        """

    @hookspec
    def before_dml(self, param: TransParam) -> None:
        """A statement is about to change rows.

        Called in the session's thread for each INSERT, UPDATE or DELETE after
        its tables are resolved and before any row is touched; ``param.tables``
        lists the tables it writes.

        Holds: the transaction's earlier statements' row locks are held; this
        statement has changed nothing.

        Failure: the statement fails with the observer's error, or
        ER_BEFORE_DML_VALIDATION_ERROR (3098) "The table does not comply with
        the requirements by an external plugin."; it changes nothing, and the
        transaction stays open.
        """

    @hookspec
    def before_commit(self, param: TransParam) -> CommitDecision | None:
        """A transaction is about to enter the binary log commit pipeline.

        Called in the session's thread at COMMIT (or at the end of an
        autocommitted statement) once all its changes are made, before its
        events join the binlog commit queue. ``param.trx_cache`` holds the
        events that will be written and ``param.write_set`` the rows changed
        (Group Replication certifies here).

        ``param.write_set`` is filled in every binlog format (ROW, STATEMENT,
        MIXED), as MySQL fills it with ``transaction_write_set_extraction=
        XXHASH64`` (the default); with ``OFF`` it is empty. Each item is an
        unsigned 64-bit XXHASH64 (seed 0) of one unique key's value in one row
        image: for an insert the new row, for a delete the old row, for an
        update both, for each unique key (the primary key, index name
        ``PRIMARY``) whose parts are all non-NULL. The hashed bytes are MySQL's
        (``sql/rpl_write_set_handler.cc``)::

            index ½ db ½ len(db) table ½ len(table) v1 ½ len(v1) [v2 ½ len(v2) ...]

        where ``½`` is the UTF-8 bytes C2 BD, each length is a decimal byte
        count, and each ``v`` is the key part's memcmp-able key image (for
        ``INT`` 1: ``80 00 00 01``). Two transactions that changed the same row
        share an item. Text key parts are hashed by their UTF-8 bytes, not by a
        collation's weights as in MySQL (rpl.core.execution.write_sets has the
        details).

        ``param.gtid_executed`` is the transaction's snapshot (the server's
        ``gtid_executed`` as this hook is called); ``param.thread_kind``
        and ``param.channel_name`` say whose transaction it is (a client's, the
        asynchronous replica's applier, or the applier of a plugin's channel).

        Holds: every row lock of the transaction is held; its changes are
        visible only to itself; nothing of it is in the binary log. A callback
        may block (Group Replication waits here for the group's certification):
        the server counts the session as waiting while the hook runs, so with
        ``thread_handling=pool-of-threads`` another worker serves the other
        connections meanwhile (MySQL's ``thd_wait_begin``);
        it may call any service of :class:`rpl.observers.ServerServices`,
        including a wait for a GTID set, but must not wait for a transaction
        that needs this one's row locks.

        Returns: ``None`` (the server assigns the GTID), or a
        :class:`rpl.observers.CommitDecision`: commit with that GTID (its
        ``queued`` callback runs once the transaction has its place in the binary
        log's commit queue). Two observers returning a decision for one
        transaction fail the hook.

        Failure: the transaction is rolled back (``before_rollback`` and
        ``after_rollback`` run) and the client gets the observer's error, or
        ER_RUN_HOOK_ERROR (3100) "Error on observer while running replication
        hook 'before_commit'."; nothing is binlogged. Group Replication rolls
        back a transaction the group refused with ER_TRANSACTION_ROLLBACK_DURING_COMMIT
        (3101, sqlstate 40000).
        """

    @hookspec
    def before_rollback(self, param: TransParam) -> None:
        """A transaction is about to be rolled back.

        Called in the session's thread at ROLLBACK, on an error that aborts the
        transaction (lock wait timeout, deadlock, failed ``before_commit``) and
        when a session disconnects with a transaction open.

        Holds: the row locks are held; the changes are not undone yet; nothing
        of the transaction is in the binary log.

        Failure: logged; the rollback goes on.
        """

    @hookspec
    def after_commit(self, param: TransParam) -> None:
        """A transaction has committed in the engine.

        Called once per binlogged transaction, in binary log order, after the
        engine commit of its group and before its client is told OK; it may run
        in the committer's thread on the session's behalf (``param.thread_id``
        names the session). ``param.log_file``/``param.log_pos`` are the end of
        this transaction's own events; ``param.gtid`` is its GTID.

        Holds: the transaction's rows are visible to every session and its row
        locks are released; its events are in the binary log, synced as
        ``sync_binlog`` says, and may already be on replicas. No binlog lock is
        held: blocking here (semisync AFTER_COMMIT waits for the ACK) delays the
        replies of this commit group (the committer sends them once every
        transaction of the group is through) and the commit stage of later groups
        (groups commit in order), never a binlog write, a sync, a reader or a
        rotation.

        Failure: logged; the client still gets OK.
        """

    @hookspec
    def after_rollback(self, param: TransParam) -> None:
        """A transaction has been rolled back.

        Called in the session's thread after the engine undid its changes,
        before the client gets the statement's result.

        Holds: the row locks are released; nothing of the transaction is
        visible or binlogged.

        Failure: logged and ignored.
        """


class BinlogStorageObserver:
    """``Binlog_storage_observer``: the binary log's group commit (WL#6355)."""

    @hookspec
    def after_flush(self, param: BinlogStorageParam, log_file: str, log_pos: int) -> None:
        """A commit group has been written to the binary log file.

        Called once per group by the group's leader, right after the group's
        events were written to ``log_file`` and before the sync stage.
        ``log_pos`` is the end of the group (of its last transaction); every
        transaction of the group ends at or before it. Semisync records the
        position it must wait for here.

        Holds: the events are in the file but not synced; no reader can see them
        (dump threads read only up to the published end position, which still
        precedes them) and no session can see the rows. The binlog write lock
        is held: a slow callback delays every commit.

        Failure: the group does not commit: the binary log is cut back to where
        the group began, every transaction of the group is rolled back and its
        client gets the observer's error, or ER_RUN_HOOK_ERROR (3100).
        """

    @hookspec
    def after_sync(self, param: BinlogStorageParam, log_file: str, log_pos: int) -> None:
        """A commit group has been synced and published, not yet committed.

        Called once per commit group, before its engine commits, by the thread
        leading the commit stage (MySQL's commit stage queue): the groups that
        were flushed, synced (if ``sync_binlog`` asked for it) and published
        while the commit group before them was in its commit stage, in binary log
        order; usually one flush group, several when the one before waited here.
        ``log_pos`` is the end of the last of them: every transaction of the
        commit group ends at or before it, and each had its own ``after_flush``.

        Holds: the group's events are durable per ``sync_binlog`` and dump
        threads may send them; no other session can see the group's rows, whose
        row locks are still held. No binlog lock is held, so blocking here
        (semisync AFTER_SYNC waits for the ACK) holds back only this commit group
        and the groups that queue behind it for the commit stage (they commit in
        binary log order): later groups flush and sync, dump threads read,
        rotation proceeds.

        Failure: the group still commits (its events are durable and may be on
        replicas, so undoing them would diverge the topology), but each client
        of the group gets the observer's error, or ER_RUN_HOOK_ERROR (3100),
        instead of OK: what the observer guarantees was not established.
        """


class BinlogTransmitObserver:
    """``Binlog_transmit_observer``: a dump thread sending the binlog to a replica."""

    @hookspec
    def transmit_start(self, param: TransmitParam, log_file: str, log_pos: int) -> bool | None:
        """A dump thread starts.

        Called in the dump thread after the replica's COM_BINLOG_DUMP or
        COM_BINLOG_DUMP_GTID was accepted (REPLICATION SLAVE privilege checked,
        start position valid) and before the first event is sent.
        ``log_file``/``log_pos`` is where sending starts. ``param.user_vars``
        reads what the replica SET on this connection (``@rpl_semi_sync_slave``).

        Returns: true to observe this dump: only observers that returned true
        get ``reserve_header``, ``before_send_event`` and ``after_send_event``
        for it.

        Failure: the dump ends before sending anything; the replica gets the
        observer's error, or ER_MASTER_FATAL_ERROR_READING_BINLOG (1236) "Failed
        to run 'transmit_start' hook". ``transmit_stop`` still
        runs for the observers whose ``transmit_start`` ran.
        """

    @hookspec
    def transmit_stop(self, param: TransmitParam) -> None:
        """A dump thread ends.

        Called in the dump thread when the dump ends for any reason (the
        replica disconnected, an error, KILL, shutdown), after its last packet,
        for every observer whose ``transmit_start`` ran for this dump.

        Failure: logged and ignored.
        """

    @hookspec
    def reserve_header(self, param: TransmitParam) -> bytes | None:
        """Reserve extra header bytes in the next event packet.

        Called in the dump thread before each event packet is built, for the
        observers observing this dump, in order. The packet is the OK byte
        0x00, then each observer's returned bytes (at most 32 each) in observer
        order, then the event. Semisync returns its magic 0xEF and a zero sync flag.

        Returns: the bytes to reserve, or None for none.

        Failure (including more than 32 bytes): the dump ends with
        ER_MASTER_FATAL_ERROR_READING_BINLOG (1236).
        """

    @hookspec
    def before_send_event(
        self, param: TransmitParam, header: memoryview, event: bytes, log_file: str, log_pos: int
    ) -> None:
        """An event packet is about to be sent.

        Called in the dump thread after the packet was built and before it is
        written to the replica. ``header`` is a writable view of exactly the
        bytes this observer reserved (empty if none); ``event`` is the event;
        ``log_file``/``log_pos`` are the event's end in the source's binary log
        (0 for the artificial ROTATE and heartbeats). Semisync sets its sync
        flag here when the event ends a transaction a session waits for.

        Holds: the event is at or before the published end position, so it is
        durable per ``sync_binlog``; no binlog lock is held.

        Failure: the dump ends with ER_MASTER_FATAL_ERROR_READING_BINLOG (1236),
        "Failed to run '<hook>' hook" or the observer's message when it passed an
        errno; the packet is not sent.
        """

    @hookspec
    def after_send_event(
        self, param: TransmitParam, event: bytes, skipped_log_file: str | None, skipped_log_pos: int
    ) -> None:
        """An event packet was sent (or an event skipped).

        Called in the dump thread after the packet was written and flushed to
        the replica. When the dump skipped an event instead (the replica already
        has its GTID), ``event`` is empty and ``skipped_log_file``/
        ``skipped_log_pos`` name the skipped event's end, so that an observer
        waiting for that position can treat it as delivered; otherwise they are
        ``None`` and 0. Without an ACK receiver thread, semisync reads the
        replica's ACK here (the pre-WL#6630 design).

        Failure: the dump ends with ER_MASTER_FATAL_ERROR_READING_BINLOG (1236),
        "Failed to run 'after_send_event' hook" or the observer's message when it
        passed an errno.
        """

    @hookspec
    def after_reset_master(self, param: BinlogStorageParam) -> None:
        """RESET MASTER has run.

        Called in the session's thread after every binary log was deleted and a
        new first one created, before the client gets OK.

        Failure: logged and ignored.
        """


class BinlogRelayIOObserver:
    """``Binlog_relay_IO_observer``: the replica's receiver and applier threads."""

    @hookspec
    def thread_start(self, param: RelayIOParam) -> None:
        """The receiver (IO) thread starts.

        Called in the new receiver thread before it connects to the source
        (``param.mysql`` is None).

        Failure: the receiver stops with the observer's error as Last_IO_Errno
        and Last_IO_Error, or ER_SLAVE_FATAL_ERROR (1593) "Fatal error: Failed
        to run 'thread_start' hook".
        """

    @hookspec
    def thread_stop(self, param: RelayIOParam) -> None:
        """The receiver (IO) thread ends.

        Called in the receiver thread after its connection to the source was
        closed, whatever the reason (STOP SLAVE, error, shutdown).

        Failure: logged and ignored.
        """

    @hookspec
    def applier_start(self, param: RelayIOParam) -> None:
        """The applier (SQL) thread starts.

        Called in the new applier thread before it reads the relay log.

        Failure: the applier stops with the observer's error as Last_SQL_Errno
        and Last_SQL_Error, or ER_SLAVE_FATAL_ERROR (1593) "Fatal error: Failed
        to run 'applier_start' hook".
        """

    @hookspec
    def applier_stop(self, param: RelayIOParam, aborted: bool) -> None:
        """The applier (SQL) thread ends.

        Called in the applier thread as it ends; ``aborted`` is true when it
        stops on an error rather than on STOP SLAVE or shutdown.

        Failure: logged and ignored.
        """

    @hookspec
    def before_request_transmit(self, param: RelayIOParam, flags: BinlogDumpFlags) -> None:
        """The receiver is about to request the binlog dump.

        Called in the receiver thread after it connected, authenticated,
        registered (COM_REGISTER_SLAVE) and set ``@master_binlog_checksum``,
        before it sends COM_BINLOG_DUMP or COM_BINLOG_DUMP_GTID with ``flags``.
        ``param.mysql`` may run statements on the source (semisync checks
        ``@@global.rpl_semi_sync_master_enabled`` and sets
        ``@rpl_semi_sync_slave = 1``).

        Failure: the receiver stops with the observer's error as Last_IO_Errno
        and Last_IO_Error, or ER_SLAVE_FATAL_ERROR (1593) "Fatal error: Failed
        to run 'before_request_transmit' hook".
        """

    @hookspec
    def after_read_event(self, param: RelayIOParam, packet: bytes) -> bytes | None:
        """An event packet arrived from the source.

        Called in the receiver thread for each packet read from the source,
        before anything is written for it. ``packet`` is the payload after the
        OK byte 0x00 (from a semisync source: 0xEF, the sync flag, the event),
        as the previous observer left it. ``param.master_log_name``/
        ``param.master_log_pos`` are still the end of the previous event: the
        receiver advances past this one only when it queues it.

        Returns: the event to queue instead (semisync strips its two header
        bytes), or None to keep ``packet`` as it is. The next observer receives
        what this one returned.

        Failure: the receiver stops with the observer's error as Last_IO_Errno
        and Last_IO_Error, or ER_SLAVE_FATAL_ERROR (1593) "Fatal error: Failed
        to run 'after_read_event' hook"; the event is not queued.
        """

    @hookspec
    def after_queue_event(self, param: RelayIOParam, event: bytes, flags: BinlogRelayFlags) -> None:
        """An event was written to the relay log.

        Called in the receiver thread after the event was written to the relay
        log and the receiver position advanced past it; ``flags`` has
        BINLOG_RELAY_IS_SYNCED when the relay log was synced after it
        (``sync_relay_log``). Semisync sends its ACK here through ``param.mysql``.

        Holds: the event is in the relay log (durable if synced);
        ``param.master_log_name``/``param.master_log_pos`` are the event's end in
        the source's binary log.

        Failure: the receiver stops with the observer's error as Last_IO_Errno
        and Last_IO_Error, or ER_SLAVE_FATAL_ERROR (1593) "Fatal error: Failed
        to run 'after_queue_event' hook"; the event stays queued.
        """

    @hookspec
    def after_reset_slave(self, param: RelayIOParam) -> None:
        """RESET SLAVE has run.

        Called in the session's thread after the relay logs were deleted and the
        receiver position reset, before the client gets OK.

        Failure: logged and ignored.
        """


class ServerStateObserver:
    """``Server_state_observer``: the server's start and shutdown."""

    @hookspec
    def before_recovery(self, param: ServerStateParam) -> None:
        """Start-up: plugins are loaded, recovery has not begun.

        Holds: no client connection is accepted; the engine is empty; the
        binary log has not been read.

        Failure: logged and ignored; start-up goes on.
        """

    @hookspec
    def after_engine_recovery(self, param: ServerStateParam) -> None:
        """Start-up: the engine holds the committed data again.

        Called after the engine was rebuilt from the last checkpoint plus the
        binary log after it, and a trailing partial transaction was cut off.

        Holds: no client connection is accepted yet; ``gtid_executed`` is known.

        Failure: logged and ignored; start-up goes on.
        """

    @hookspec
    def after_recovery(self, param: ServerStateParam) -> None:
        """Start-up: recovery is complete.

        Called once the binary log is open for new transactions, before client
        connections are accepted and before replica threads start.

        Failure: logged and ignored; start-up goes on.
        """

    @hookspec
    def before_server_shutdown(self, param: ServerStateParam) -> None:
        """Shutdown has begun (SIGTERM or SHUTDOWN).

        Holds: client connections, dump threads and replica threads are still
        running; no new connection is accepted.

        Failure: logged and ignored; shutdown goes on.
        """

    @hookspec
    def after_server_shutdown(self, param: ServerStateParam) -> None:
        """Shutdown: every connection and thread has ended.

        Called after the binary log was closed (a STOP event written), before
        plugins are deinitialised.

        Failure: logged and ignored.
        """


INTERFACES: Final[dict[str, type]] = {
    "transaction": TransactionObserver,
    "binlog_storage": BinlogStorageObserver,
    "binlog_transmit": BinlogTransmitObserver,
    "binlog_relay_io": BinlogRelayIOObserver,
    "server_state": ServerStateObserver,
}
"""The observer interfaces by MySQL's name for them."""


def hook_names(interface: type) -> tuple[str, ...]:
    """The hooks of one interface class, in declaration order."""
    return tuple(
        name
        for name, value in vars(interface).items()
        if callable(value) and not name.startswith("_")
    )


HOOKS: Final[dict[str, str]] = {
    hook: interface for interface, cls in INTERFACES.items() for hook in hook_names(cls)
}
"""Every hook name mapped to the name of its interface."""
