"""A client session: its variables, its transaction and the path of a commit.

What holds:

* A statement is atomic: it runs inside a savepoint of the session's transaction, and
  a failing statement rolls back to it, so nothing is half-applied while the
  transaction goes on (a deadlock, as in InnoDB, rolls back the whole transaction).
* With ``autocommit`` on and no BEGIN, every statement that changed rows commits at
  its end; DDL and account statements commit the open transaction first (implicit
  commit) and are binlogged as their own transaction.
* A commit with changes runs ``before_commit``, then joins the binlog's group commit
  (flush, sync, after_sync, engine commit in binlog order, after_commit); the rows
  become visible to other sessions at engine commit, not before.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Final, Protocol, TypeVar, cast

import attrs

from rpl.core import errorlog
from rpl.core.binlog.events import (
    DELETE_ROWS_EVENT,
    NO_FOREIGN_KEY_CHECKS_F,
    ROWS_QUERY_LOG_EVENT,
    TABLE_MAP_EVENT,
    UPDATE_ROWS_EVENT,
    WRITE_ROWS_EVENT,
    ViewChangeEvent,
    seal_events,
)
from rpl.core.binlog.gtid import Gtid, GtidSet
from rpl.core.binlog.writer import CommitTicket, Reply
from rpl.core.engine import Transaction
from rpl.core.errors import (
    ER_LOCK_DEADLOCK,
    ER_RUN_HOOK_ERROR,
    ER_SPECIFIC_ACCESS_DENIED_ERROR,
    MySQLError,
)
from rpl.core.execution.binlogging import Origin, RowLogging, change_statements
from rpl.core.execution.expressions import Context
from rpl.core.execution.results import Ok, Result
from rpl.core.execution.write_sets import write_set
from rpl.core.net.packets import ReplyBatch
from rpl.core.threads import next_thread_id
from rpl.core.variables import Warning as SqlWarning
from rpl.core.variables import display
from rpl.core.waits import thd_wait
from rpl.observers import CommitDecision, TableInfo, ThreadKind, TransFlags, TransParam

_log = errorlog.logger("session")
_ROW_EVENT_CODES = frozenset(
    (
        TABLE_MAP_EVENT,
        ROWS_QUERY_LOG_EVENT,
        WRITE_ROWS_EVENT,
        UPDATE_ROWS_EVENT,
        DELETE_ROWS_EVENT,
    )
)
ReplyLater = Callable[["Session", Ok], Reply]
"""Given the session and its statement's OK, the sender of that reply (or of the commit's
error) that another thread may call later (see Session._leader_reply)."""

if TYPE_CHECKING:
    import socket
    import uuid

    from rpl.core.accounts import Account, Accounts
    from rpl.core.binlog.writer import Binlog
    from rpl.core.debug import CrashPoints
    from rpl.core.delegates import Delegates
    from rpl.core.engine import Engine
    from rpl.core.execution.binlogging import EventEncoder
    from rpl.core.execution.plugin_commands import PluginCommands
    from rpl.core.execution.prepared import PreparedStatements
    from rpl.core.execution.threadpool import ThreadPool
    from rpl.core.execution.virtual_tables import VirtualTables
    from rpl.core.plugins import Plugins
    from rpl.core.sql import ast
    from rpl.core.threads import ThreadRegistry
    from rpl.core.variables import StatusVariables, SystemVariables

StatementHandler = Callable[["Session", "ast.Statement", str], Result]
"""Runs one parsed statement (its text beside it) for a session."""


class StatementDispatch(Protocol):
    """Which code runs a parsed statement (:class:`rpl.core.execution.dispatch.Dispatch`)."""

    def handler_for(self, statement: ast.Statement) -> StatementHandler | None:
        """The handler of ``statement``'s class; None for a statement nothing runs."""

    @property
    def virtual_tables(self) -> VirtualTables:
        """The computed tables (information_schema, performance_schema, mysql.*)."""


class ClientSocket(Protocol):
    """What the server keeps of a client connection: its socket, to end it (KILL,
    shutdown).
    """

    sock: socket.socket


class ServerContext(Protocol):
    """What the statement and session layer needs of the server it runs in.

    :class:`rpl.core.instance.server.Server` implements it once it has started; the
    layers below the instance (this one and the features: replication, plugins) name
    the server only through this protocol, so none of them imports the object that
    wires them together. Attributes are the server's shared parts, set once at start.
    """

    version: str
    server_id: int
    server_uuid: uuid.UUID
    server_uuid_text: str
    port: int
    variables: SystemVariables
    status: StatusVariables
    binlog: Binlog
    engine: Engine
    delegates: Delegates
    accounts: Accounts
    plugins: Plugins
    encoder: EventEncoder
    crash: CrashPoints
    threads: ThreadRegistry
    thread_pool: ThreadPool | None
    ddl_lock: threading.RLock
    computed_variables: dict[str, Callable[[Session], object]]
    functions: dict[str, Callable[[Session, list[object]], object]]
    """SQL functions features provide (replication: MASTER_POS_WAIT), by upper-case name."""
    questions: int
    prepared_statements: PreparedStatements
    plugin_commands: PluginCommands
    """The SQL commands plugins answer (START GROUP_REPLICATION)."""

    @property
    def dispatch(self) -> StatementDispatch:
        """Which code runs each statement."""

    @property
    def stopping(self) -> bool:
        """Whether shutdown has begun."""

    def context_for(self, session: Session) -> Context:
        """The expression context of ``session``."""

    def add_session(self, session: Session, connection: ClientSocket | None) -> None:
        """Register a logged-in session (SHOW PROCESSLIST, KILL, shutdown)."""

    def remove_session(self, session: Session) -> None:
        """Forget a session that ended."""

    def sessions(self) -> list[Session]:
        """Every client session."""

    def kill(self, thread_id: int, query_only: bool) -> None:
        """KILL: end the connection (its transaction rolls back)."""

    def max_allowed_packet(self) -> int:
        """The global max_allowed_packet."""

    def statistics(self) -> str:
        """COM_STATISTICS text."""

    def gtid_purged(self) -> GtidSet:
        """GTIDs no longer in any binlog file."""

    def recovery_start_file(self) -> str:
        """The binlog file the next crash recovery would start from (PURGE keeps it)."""

    def reset_master(self) -> None:
        """RESET MASTER, with a checkpoint at the new first file."""

    def install_plugin(self, name: str) -> None:
        """INSTALL PLUGIN, remembered for the next start."""

    def uninstall_plugin(self, name: str) -> None:
        """UNINSTALL PLUGIN, forgotten for the next start."""

    def shutdown(self) -> None:
        """Stop cleanly."""


R = TypeVar("R")

STATEMENT_VIEW_LEVELS: Final = frozenset(("READ-COMMITTED", "READ-UNCOMMITTED"))
"""Isolation levels whose consistent reads take a fresh read view per statement; the
others (REPEATABLE-READ, SERIALIZABLE) keep the transaction's first one."""

MAX_TABLE_INFO_SETS: Final = 64
BEGIN_HOOK_STATE: Final = "Executing hook on transaction begin."
"""PROCESSLIST_STATE while the ``begin`` hook runs (MySQL's stage there: a Group
Replication BEFORE transaction waits in it)."""
"""Sets of tables a session keeps TableInfos for (Session._table_info)."""

_local = threading.local()


def statement_timeouts() -> float:
    """The running statement's innodb_lock_wait_timeout (the engine asks at each wait)."""
    timeout: float = getattr(_local, "lock_wait_timeout", 50.0)
    return timeout


class Session:
    """One connection's state (also used, without a client, by recovery replay)."""

    def __init__(
        self,
        server: ServerContext,
        account: Account | None,
        host: str,
        thread_id: int | None = None,
        binlogging: bool = True,
    ) -> None:
        self.server = server
        self.account = account
        self.user = account.user if account else "system user"
        self.host = host
        self.thread_id = thread_id if thread_id is not None else next_thread_id()
        self.db: str | None = None
        self.session_vars: dict[str, object] = {}
        self.user_vars: dict[str, object] = {}
        self.warnings: list[SqlWarning] = []
        self.previous_warnings: list[SqlWarning] = []
        self.found_rows = False
        self.context: Context = server.context_for(self)
        self.trx: Transaction | None = None
        self.begin_hook_ran = False
        """Whether the open transaction's ``begin`` hook has run."""
        self.explicit = False
        self.events: list[bytearray] = []
        self.tables: dict[tuple[str, str], None] = {}
        self._table_infos: dict[tuple[tuple[str, str], ...], tuple[TableInfo, ...]] = {}
        """The TableInfos of each set of ``tables`` the hook parameters listed: a
        session's transactions mostly change one of a few sets of tables (emptied past
        MAX_TABLE_INFO_SETS)."""
        self.binlogging = binlogging
        self.last_insert_id = 0
        self.command = "Sleep"
        self.state = ""
        self.info: str | None = None
        self.started = time.monotonic()
        self.perf_thread_id = 0
        """Its THREAD_ID in performance_schema.threads (given when it is added)."""
        self.killed = False
        """KILL ended this session: its connection closes after the current command."""
        self.gtid_next: Gtid | None = None
        """The GTID the next commit gets instead of a new one (the applier sets the
        source's); cleared by the commit."""
        self.origin: Origin | None = None
        """A replicated transaction's (server_id, timestamp), kept in its events."""
        self.thread_kind = ThreadKind.CLIENT
        """Whose transactions this session runs (a client's, an applier's): the
        transaction hooks' ``TransParam.thread_kind``."""
        self.channel_name = ""
        """The channel whose applier runs this session ('' for a client)."""
        self.high_priority = False
        """Its transactions are high priority (MySQL's ``thd->tx_priority``): they kill
        the ordinary transactions whose row locks they need (:mod:`rpl.core.engine.locks`)."""
        self.original_commit_timestamp: int | None = None
        """A replicated transaction's commit time on its originating server (µs)."""
        self.deferred: list[tuple[CommitTicket, Transaction | None]] | None = None
        """When a list, a commit leaves its ticket (and engine transaction, still holding
        its row locks) here instead of committing; the applier commits such a batch of
        independent transactions as one binlog group (Binlog.commit_batch)."""
        self.reply_later: ReplyLater | None = None
        """Set by the connection for the statement it runs: how the group commit leader
        sends this statement's reply (see :meth:`_leader_reply`)."""
        self.replied = False
        """The running statement's reply was handed to the group commit leader."""
        self.statement_text: str | None = None
        """The running statement's text (ROWS_QUERY events carry it)."""
        self.lock_wait_override: float | None = None
        """Seconds a lock wait may last, instead of innodb_lock_wait_timeout."""
        self.replayed_statement: str | None = None
        """Set by a statement whose text replays to the same rows on a replica: in
        STATEMENT format its changes are logged as this text, not as one statement per
        row (INSERT/REPLACE ... SELECT, which pt-table-checksum relies on); used once."""
        self.consistent_statement = False
        """The running statement reads consistently (a plain SELECT): set per statement
        by :func:`rpl.core.execution.transactions.before_statement`."""
        self.trx_isolation = "REPEATABLE-READ"
        self.trx_read_only = False
        """The open transaction's isolation level and access mode, fixed when it starts."""
        self.next_isolation: str | None = None
        self.next_read_only: bool | None = None
        """SET TRANSACTION without GLOBAL/SESSION: the next transaction's characteristics."""
        self.savepoints: dict[str, tuple[int, int]] = {}
        """The open transaction's savepoints in the order set: lower-cased name ->
        (engine savepoint, how many binlog events the transaction had)."""
        self.locked_tables: dict[tuple[str, str, str | None], bool] = {}
        """LOCK TABLES held: (database, table, alias or None) -> WRITE (True) or READ."""

    # ------------------------------------------------------------ variables
    @property
    def autocommit(self) -> bool:
        """The session's ``autocommit``."""
        return bool(self.setting("autocommit"))

    def setting(self, name: str) -> object:
        """The value this session runs with of the variable named ``name`` (its
        canonical name): the session's own when it set one, else the global value. The
        one reader of session values: :meth:`variable` (``@@name``) reads through it too.
        """
        session_vars = self.session_vars
        if name in session_vars:
            return session_vars[name]
        return self.server.variables.lookup(name).value

    def binlog_format(self) -> str:
        """The session's ``binlog_format``: ROW, STATEMENT or MIXED."""
        return str(self.setting("binlog_format"))

    def row_logging(self) -> RowLogging:
        """How this session's rows events are written (the binlog_row_* variables)."""
        variables = self.server.variables
        return RowLogging(
            str(self.setting("binlog_row_image")),
            str(variables.get_global("binlog_row_metadata")),
            variables.global_int("binlog_row_event_max_size"),
            bool(self.setting("binlog_rows_query_log_events")),
            0 if self._checked_foreign_keys() else NO_FOREIGN_KEY_CHECKS_F,
        )

    def _checked_foreign_keys(self) -> bool:
        """Whether the open transaction's last statement checked FOREIGN KEYs (an applier
        applies a source's unchecked rows unchecked, and logs them so down a chain).
        """
        trx = self.trx
        return trx.foreign_key_checks if trx is not None else self.foreign_key_checks()

    def foreign_key_checks(self) -> bool:
        """The session's ``foreign_key_checks``: whether its statements check FOREIGN KEYs."""
        return bool(self.setting("foreign_key_checks"))

    def lock_wait_timeout(self) -> float:
        """The session's ``innodb_lock_wait_timeout`` in seconds."""
        if self.lock_wait_override is not None:
            return self.lock_wait_override
        return float(cast(float, self.setting("innodb_lock_wait_timeout")))

    def isolation_level(self) -> str:
        """The isolation level in force: the open transaction's, else the one the next
        transaction gets (SET TRANSACTION's one-shot level, else @@transaction_isolation),
        spelled as the variable is (``REPEATABLE-READ``...).
        """
        if self.trx is not None:
            return self.trx_isolation
        if self.next_isolation is not None:
            return self.next_isolation
        return str(self.setting("transaction_isolation"))

    def read_only(self) -> bool:
        """Whether the open (or next) transaction is READ ONLY."""
        if self.trx is not None:
            return self.trx_read_only
        if self.next_read_only is not None:
            return self.next_read_only
        return bool(self.setting("transaction_read_only"))

    def table_lock_timeout(self) -> float:
        """The session's ``lock_wait_timeout`` in seconds (table locks wait this long)."""
        return float(cast(float, self.setting("lock_wait_timeout")))

    def variable(self, name: str, scope: str | None) -> object:
        """@@[scope.]name as this session reads it."""
        return self.context.variable(name, scope)

    @staticmethod
    def display(value: object) -> str:
        """A value as SHOW VARIABLES prints it."""
        return display(value)  # type: ignore[arg-type]

    def require(self, *privileges: str) -> None:
        """ER_SPECIFIC_ACCESS_DENIED_ERROR unless the account holds one of ``privileges``
        (a session without an account, such as recovery replay, holds all).
        """
        account = self.account
        if account is not None and not any(
            self.server.accounts.allowed(account, p) for p in privileges
        ):
            raise MySQLError.of(ER_SPECIFIC_ACCESS_DENIED_ERROR, " or ".join(privileges))

    def warn(self, error: MySQLError, level: str = "Warning") -> None:
        """Record ``error`` as a warning of the current statement (a Note only while
        sql_notes is on, as MySQL keeps them).
        """
        if level == "Note" and not self.setting("sql_notes"):
            return
        self.warnings.append(SqlWarning(level, error.errno, error.message))

    @property
    def in_transaction(self) -> bool:
        """Whether a transaction is open (SERVER_STATUS_IN_TRANS)."""
        return self.explicit or (self.trx is not None and not self.autocommit)

    # ---------------------------------------------------------- transaction
    def transaction(self, *, monitoring: bool = False) -> Transaction:
        """The open transaction, started now if there is none. The ``begin`` hook runs
        once per transaction, at its first statement that is not ``monitoring`` (one
        that reads only performance_schema, information_schema or sys tables: MySQL
        runs no hook for those, so a session held at begin can still be watched).
        """
        opened = self.trx is None
        if self.trx is None:
            self.trx_isolation = self.isolation_level()
            self.trx_read_only = self.read_only()
            self.next_isolation = self.next_read_only = None
            self.savepoints = {}
            self.trx = self.server.engine.begin(self.thread_id, high_priority=self.high_priority)
            self.events = []
            self.tables = {}
            self.begin_hook_ran = False
        if not monitoring and not self.begin_hook_ran:
            self.begin_hook_ran = True
            if not self.server.delegates.transaction.is_empty("begin"):
                self._begin_hook(opened)
        return self.trx

    def _begin_hook(self, opened: bool) -> None:
        """Run ``begin``; when it refuses, the transaction it would have begun is not
        there (one this call ``opened`` is dropped, an earlier one runs the hook again at
        its next statement).
        """
        state, self.state = self.state, BEGIN_HOOK_STATE
        try:
            self._hook("begin")
        except BaseException:
            self.begin_hook_ran = False
            if opened and self.trx is not None:
                self.trx.rollback()
                self.trx = None
            raise
        finally:
            self.state = state

    def _hook(self, name: str, log_file: str = "", log_pos: int = 0, **extra: object) -> None:
        """Run transaction hook ``name``; the parameter is built only when someone observes
        the hook (a commit with no observer costs no TransParam).
        """
        delegate = self.server.delegates.transaction
        if not delegate.is_empty(name):
            getattr(delegate, name)(self._param(log_file, log_pos, **extra))

    def _param(self, log_file: str = "", log_pos: int = 0, **extra: object) -> TransParam:
        flags = (
            TransFlags.NONE
            if self.autocommit and not self.explicit
            else TransFlags.TRANS_IS_REAL_TRANS
        )
        return TransParam(
            self.server.server_id,
            self.server.server_uuid_text,
            self.thread_id,
            flags,
            log_file,
            log_pos,
            tables=self._table_info(),
            thread_kind=self.thread_kind,
            channel_name=self.channel_name,
            binlog_format=self.binlog_format(),
            **{  # type: ignore[arg-type]
                "group_replication_consistency": self._consistency(),
                "hold_timeout": self.setting("wait_timeout"),
                **extra,
            },
        )

    def _consistency(self) -> str:
        """The session's ``group_replication_consistency``, which TransParam carries as
        MySQL's Trans_param does (EVENTUAL while no plugin declares the variable).
        """
        name = "group_replication_consistency"
        if name in self.session_vars:
            return str(self.session_vars[name])
        entry = self.server.variables.find(name)
        return "EVENTUAL" if entry is None else str(entry.value)

    def before_dml(self, db: str, table: str) -> None:
        """Run ``before_dml`` for a statement about to change rows of ``db.table``
        (someone observes it); HookError fails the statement before it changes anything.
        """
        self.server.delegates.transaction.before_dml(
            attrs.evolve(self._param(), tables=(TableInfo(db, table, True),))
        )

    def _table_info(self) -> tuple[TableInfo, ...]:
        names = tuple(self.tables)
        infos = self._table_infos.get(names)
        if infos is None:
            if len(self._table_infos) >= MAX_TABLE_INFO_SETS:
                self._table_infos.clear()
            infos = self._table_infos[names] = tuple(
                TableInfo(db, name, True) for db, name in names
            )
        return infos

    def run_statement(self, body: Callable[[Transaction], R], *, monitoring: bool = False) -> R:
        """Run one data statement atomically; commit it at its end under autocommit
        (``monitoring``: it reads only monitoring tables, :meth:`transaction`).
        """
        _local.lock_wait_timeout = self.lock_wait_timeout()
        trx = self.transaction(monitoring=monitoring)
        trx.foreign_key_checks = self.foreign_key_checks()
        savepoint = trx.savepoint()
        before = len(trx.changes())
        consistent = trx.consistent_reads = self.consistent_statement
        try:
            result = body(trx)
        except MySQLError as exc:
            if exc.errno == ER_LOCK_DEADLOCK.errno:
                self._rolled_back()
            else:
                trx.rollback_to(savepoint)
                self._end_if_autocommit()
            raise
        except BaseException:
            trx.rollback_to(savepoint)
            self._end_if_autocommit()
            raise
        finally:
            if consistent and self.trx_isolation in STATEMENT_VIEW_LEVELS:
                trx.release_view()
        self._binlog_changes(trx, before)
        if not self.explicit and self.autocommit:
            self.commit(reply_with=result)
        return result

    def _binlog_changes(self, trx: Transaction, before: int) -> None:
        replayed, self.replayed_statement = self.replayed_statement, None
        changes = trx.changes()[before:]
        for change in changes:
            self.tables[(change.table.db, change.table.name)] = None
        if not self.binlogging or not changes:
            return
        encoder = self.server.encoder
        if not self.events:
            self.events.append(encoder.begin(self.thread_id, self.origin))
        if self.binlog_format() == "ROW":
            events = encoder.rows(
                self.thread_id, changes, self.row_logging(), self.statement_text, self.origin
            )
            if events is not None:
                self.events += events
                return
        if replayed is not None:
            self.events.append(encoder.query(self.thread_id, self.db or "", replayed, self.origin))
            return
        for db, text in change_statements(changes):
            self.events.append(encoder.query(self.thread_id, db, text, self.origin))

    def _end_if_autocommit(self) -> None:
        if (
            not self.explicit
            and self.autocommit
            and self.trx is not None
            and not self.trx.changes()
        ):
            self.rollback()

    def _rolled_back(self) -> None:
        """The engine rolled the whole transaction back (a deadlock victim)."""
        self._hook("after_rollback")
        self.trx = None
        self.explicit = False
        self.events = []

    def begin(self) -> None:
        """BEGIN / START TRANSACTION: commit what is open, then open a transaction."""
        self.commit()
        self.explicit = True
        try:
            self.transaction()
        except MySQLError:
            self.explicit = False  # a begin hook refused it: no transaction is open
            raise

    def commit(self, reply_with: object = None) -> None:
        """COMMIT: group-commit the transaction's binlog events, or just end it.

        ``reply_with``: the running statement's result when this commit ends the statement
        (an autocommit statement, COMMIT): the group commit leader may then send the reply
        (:meth:`_leader_reply`), and this thread returns without waiting.
        """
        trx, self.explicit = self.trx, False
        if trx is None:
            return
        try:
            trx.enter_commit()
        except MySQLError:
            self._rolled_back()  # a high-priority transaction killed it
            raise
        if not trx.changes() and self.gtid_next is not None and self.binlogging:
            self._commit_empty(trx)
            return
        if not trx.changes() or not self.binlogging:
            self.trx = None
            trx.commit()
            if trx.changes():
                self._hook("after_commit")
            return
        events = self.events
        events.append(self.server.encoder.xid(self.server.binlog.next_xid(), self.origin))
        self._commit_events(trx, events, self._leader_reply(reply_with, trx))

    def _leader_reply(self, result: object, trx: Transaction) -> Reply | None:
        """The reply the group commit leader sends for the statement ending with this
        commit, or None when this thread replies itself (no connection asked for it, or
        the result is not a plain OK).

        The reply is framed now, in this thread, from what is final here: the OK's
        counts, the warnings, and the status after the commit. What the leader adds is
        the outcome: on failure the transaction is rolled back (its row locks released)
        before the error goes out. The client sends nothing before it has the reply, so
        this session's next statement starts after the commit is finished.
        """
        if self.reply_later is None or not isinstance(result, Ok):
            return None
        send = self.reply_later(self, result)

        def reply(error: MySQLError | None, batch: ReplyBatch) -> None:
            if error is not None and trx.active:
                trx.rollback()
            self.state = ""
            self.server.engine.table_locks.end_write(self.thread_id)
            send(error, batch)

        return reply

    def _commit_empty(self, trx: Transaction) -> None:
        """A replicated transaction that changed nothing here is still logged with its
        GTID (GTID, BEGIN, what it logged without rows (a VIEW_CHANGE), COMMIT), as MySQL
        logs it, so gtid_executed stays whole.
        """
        encoder = self.server.encoder
        events = self.events or [encoder.begin(self.thread_id, self.origin)]
        events.append(encoder.query(self.thread_id, "", "COMMIT", self.origin))
        self._commit_events(trx, events)

    def log_view_change(self, event: ViewChangeEvent) -> None:
        """Add a replicated VIEW_CHANGE to this transaction's binlog events: MySQL's
        applier logs the event again wherever it applies it (a Group Replication member,
        a replica of one with ``log_replica_updates``).
        """
        if not self.binlogging:
            return
        encoder = self.server.encoder
        if not self.events:
            self.events.append(encoder.begin(self.thread_id, self.origin))
        self.events.append(encoder.view_change(event, self.origin))

    def _commit_events(
        self, trx: Transaction | None, events: list[bytearray], reply: Reply | None = None
    ) -> None:
        """before_commit, then group commit of ``events`` with ``trx``'s engine commit
        (``reply``: the leader replies, see :meth:`_leader_reply`).
        """
        write_set = self._write_set(trx) if trx is not None else None
        decision: CommitDecision | None = None
        gtid = self.gtid_next
        try:
            if not self.server.delegates.transaction.is_empty("before_commit"):
                decision = self._before_commit(events, write_set)
            if decision is not None:
                gtid = _decided_gtid(decision, self.server.binlog.gtid_executed)
        except MySQLError:
            if trx is not None:
                self.trx = trx
                self.rollback()
            raise
        self.trx = None
        self.events = []
        self.gtid_next = None
        ticket = CommitTicket(
            thread_id=self.thread_id,
            events=events,
            gtid=gtid,
            server_id=self.origin[0] if self.origin else None,
            original_commit_timestamp=self.original_commit_timestamp,
            write_set=write_set,
            rows_only=_rows_only(events),
            engine_commit=trx.commit if trx is not None else _nothing,
            after_commit=lambda f, p, g: self._hook("after_commit", f, p, gtid=_text(g)),
            queued=decision.queued if decision is not None else None,
        )
        if self.deferred is not None:
            self.deferred.append((ticket, trx))
            return
        self.state = "waiting for handler commit"
        if reply is not None:
            ticket.reply = reply
            self.replied = True
            try:
                self.server.binlog.commit(ticket)
            except Exception as exc:  # noqa: BLE001 - the reply already carried the error
                errorlog.log(
                    _log,
                    logging.ERROR,
                    f"Commit of thread {self.thread_id} failed after its reply was sent: {exc!r}",
                    code=10000,
                )
            return
        try:
            self.server.binlog.commit(ticket)
        except BaseException:
            if trx is not None and trx.active:
                trx.rollback()
            raise
        finally:
            self.state = ""

    def _before_commit(
        self, events: list[bytearray], write_set: frozenset[int] | None
    ) -> CommitDecision | None:
        """Run ``before_commit`` (someone observes it); the GTID an observer chose. The
        snapshot (``TransParam.gtid_executed``) is read under the binlog's commit-stage
        lock, so a commit group that released this transaction's row locks in its engine
        commits has added its GTIDs already.
        """
        binlog = self.server.binlog
        with binlog.commit_stage_lock:
            snapshot = str(binlog.gtid_executed)
        param = self._param(
            trx_cache=_trx_cache(events, self.server.encoder.checksum),
            write_set=write_set or frozenset(),
            gtid_executed=snapshot,
            gtid=str(self.gtid_next) if self.gtid_next is not None else None,
        )
        self.state = "waiting for handler commit"  # MySQL's stage while the hook runs
        with thd_wait():  # an observer may block here (Group Replication certifies)
            return self.server.delegates.transaction.before_commit(param)

    def _write_set(self, trx: Transaction) -> frozenset[int]:
        """The transaction's write set (:mod:`rpl.core.execution.write_sets`): MySQL's
        XXHASH64 items, none with ``transaction_write_set_extraction=OFF``.
        """
        if self.setting("transaction_write_set_extraction") == "OFF":
            return frozenset()
        return write_set(trx.changes())

    def rollback(self) -> None:
        """ROLLBACK."""
        trx, self.explicit = self.trx, False
        if trx is None:
            return
        self._hook("before_rollback")
        trx.rollback()
        self._hook("after_rollback")
        self.trx = None
        self.events = []

    def log_ddl(self, text: str) -> None:
        """Binlog a DDL or account statement as its own transaction (GTID + QUERY)."""
        if not self.binlogging:
            return
        event = self.server.encoder.query(self.thread_id, self.db or "", text, self.origin)
        self._commit_events(None, [event])

    def close(self) -> None:
        """The client went away: an open transaction rolls back, its table locks and
        global read lock are released.
        """
        try:
            if self.trx is not None:
                self.rollback()
        finally:
            self.release_table_locks()

    def release_table_locks(self) -> bool:
        """Release LOCK TABLES and the global read lock; whether tables were locked."""
        self.locked_tables = {}
        return self.server.engine.table_locks.release(self.thread_id)


def _nothing() -> None:
    return None


def _decided_gtid(decision: CommitDecision, executed: GtidSet) -> Gtid:
    """The GTID ``before_commit``'s observer chose; ER_RUN_HOOK_ERROR when it is no GTID
    or is already executed (the transaction is rolled back by the caller's error path).
    """
    try:
        gtid = Gtid.parse(decision.gtid)
    except ValueError:
        gtid = None
    if gtid is None or gtid in executed:
        raise MySQLError.of(ER_RUN_HOOK_ERROR, "before_commit")
    return gtid


def _rows_only(events: list[bytearray]) -> bool:
    """Whether a transaction's events are BEGIN, then rows events only, then its XID."""
    return len(events) > 2 and all(e[4] in _ROW_EVENT_CODES for e in events[1:-1])


def _trx_cache(events: list[bytearray], checksum: bool) -> bytes:
    """before_commit's copy of a transaction's events, their CRCs set (the leader sets
    the CRCs of the events it writes, once it knows their positions).
    """
    cache = bytearray().join(events)
    seal_events(cache, checksum=checksum)
    return bytes(cache)


def _text(gtid: Gtid | None) -> str | None:
    """A GTID as TransParam carries it (``uuid:gno``)."""
    return None if gtid is None else str(gtid)
