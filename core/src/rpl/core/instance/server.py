"""The server: start-up (initialise, recover, listen), its shared state, and shutdown.

Start, in MySQL's order: open the error log; on an empty data directory initialise it
(``auto.cnf``, root@localhost) as ``mysqld --initialize-insecure`` does; load plugins
(``--plugin-load`` and those INSTALL PLUGIN recorded); ``before_recovery``; load the
last checkpoint (``after_engine_recovery``); replay the binlog after it; open a new
binlog file; write a checkpoint; ``after_recovery``; listen.

Shutdown (SIGTERM or SHUTDOWN): stop accepting, ``before_server_shutdown``, end the
client connections (open transactions roll back), end the binlog file with a STOP
event, checkpoint, deinitialise the plugins, ``after_server_shutdown``.
"""

from __future__ import annotations

import io
import logging
import socket
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path

import attrs

from rpl.core import errorlog
from rpl.core.accounts import STATIC_PRIVILEGES, Accounts
from rpl.core.binlog.gtid import GtidSet
from rpl.core.binlog.logfile import previous_gtids
from rpl.core.binlog.writer import Binlog, BinlogOptions, BinlogPosition
from rpl.core.debug import CrashPoints
from rpl.core.delegates import Delegates
from rpl.core.engine import Engine
from rpl.core.errors import ER_CON_COUNT_ERROR, ER_ERROR_ON_WRITE, MySQLError
from rpl.core.execution import prepared, statements
from rpl.core.execution.binlogging import EventEncoder
from rpl.core.execution.connection import CommandHandler, Connection
from rpl.core.execution.dispatch import Dispatch
from rpl.core.execution.execute import SessionContext
from rpl.core.execution.expressions import Context
from rpl.core.execution.plugin_commands import PluginCommands
from rpl.core.execution.session import ClientSocket, Session, statement_timeouts
from rpl.core.execution.sysvars import ALIASES, SERVER_VERSION, server_variables
from rpl.core.execution.threadpool import POOL_OF_THREADS, ThreadPool
from rpl.core.instance import crash_recovery, plugin_services
from rpl.core.instance.datadir import Checkpoint, DataDirectory, DataDirectoryInUse
from rpl.core.net.handshake import password_hash
from rpl.core.plugins import Plugins, ServerBound
from rpl.core.replication import source
from rpl.core.replication import statements as replica_statements
from rpl.core.replication.channel import ReplicaChannels
from rpl.core.replication.plugin_channel import PluginChannels
from rpl.core.replication.source import ReplicaHosts
from rpl.core.threads import ThreadRegistry
from rpl.core.variables import StatusVariables, SystemVariables
from rpl.observers import (
    ServerStateParam,
    StatusValue,
    StatusVariable,
    SystemVariable,
    SysVarValue,
    VarType,
)

_log = errorlog.logger("server")


@attrs.frozen
class ServerConfig:
    """What ``rpl server`` was started with."""

    datadir: Path
    port: int = 3306
    bind_address: str = "127.0.0.1"
    server_id: int = 1
    log_bin: str = "binlog"
    plugin_load: str = ""
    root_password: str = ""
    debug: str = ""
    options: Mapping[str, str] = attrs.field(factory=dict)


class Server:
    """One running rpl server."""

    version = SERVER_VERSION

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.datadir = DataDirectory(config.datadir)
        self.crash = CrashPoints()
        self.crash.apply(config.debug)
        self.ddl_lock = threading.RLock()
        """Held by DDL and account statements from change to binlog commit, and by
        checkpoints: a checkpoint never sees a catalogue change its position lacks."""
        self.started = time.monotonic()
        self.questions = 0
        self.prepared_statements = prepared.PreparedStatements(
            lambda: self.variables.global_int("max_prepared_stmt_count")
        )
        """Every connection's prepared statements (COM_STMT_PREPARE, SQL PREPARE)."""
        self._sessions: dict[int, tuple[Session, ClientSocket | None]] = {}
        self._sessions_lock = threading.Lock()
        self.max_used_connections = 0
        """The most client sessions logged in at once (status Max_used_connections)."""
        self.connection_errors_max_connections = 0
        """Logins refused by max_connections (status Connection_errors_max_connections)."""
        self._stopping = threading.Event()
        self._stopped = threading.Event()
        self._listener: socket.socket | None = None
        self.thread_pool: ThreadPool | None = None
        """The worker threads of thread_handling=pool-of-threads (None: a thread per
        connection)."""
        self._checkpoint_file = ""
        self._checkpoint_pos = 0
        self._checkpoint_lock = threading.Lock()
        self._checkpoint_due = threading.Event()
        self._log_handler: logging.Handler | None = None
        self.plugin_commands = PluginCommands()
        """The SQL commands plugins answer."""
        self.plugin_channels = PluginChannels(self)
        """The applier-only channels plugins feed (group_replication_applier)."""
        self.plugin_server = plugin_services.PluginServer(self)
        self.plugin_tables = plugin_services.PluginTables(self)
        self.dispatch = Dispatch()
        """Which code runs each statement: the statement layer's own, then each
        feature's, registered at start."""
        self.commands: dict[int, CommandHandler] = {}
        """The protocol commands features add to the client ones (COM_BINLOG_DUMP...)."""
        statements.register(self.dispatch)
        self.functions: dict[str, Callable[[Session, list[object]], object]] = {}
        """SQL functions the features provide (see ServerContext.functions)."""
        self.computed_variables: dict[str, Callable[[Session], object]] = {
            "gtid_executed": lambda s: str(self.binlog.gtid_executed),
            "gtid_purged": lambda s: str(self.gtid_purged()),
            "debug": lambda s: self.crash.describe(),
            "warning_count": lambda s: len(s.previous_warnings),
            "error_count": lambda s: 0,
            "last_insert_id": lambda s: s.last_insert_id,
            "identity": lambda s: s.last_insert_id,
        }

    # ---------------------------------------------------------------- start
    def start(self) -> None:
        """Initialise or recover, then listen. Raises on a start that cannot succeed."""
        config = self.config
        config.datadir.mkdir(mode=0o750, parents=True, exist_ok=True)
        self._log_handler = errorlog.open_error_log(config.datadir / "error.log")
        errorlog.log(
            _log,
            logging.INFO,
            f"{SERVER_VERSION} starting as process {__import__('os').getpid()}",
            code=10116,
        )
        self._lock_datadir()
        first_start = not self.datadir.initialized
        if first_start:
            config.datadir.chmod(0o750)  # as mysqld --initialize leaves it
            self.datadir.write_server_uuid(uuid.uuid4())
        self.server_uuid = self.datadir.server_uuid()
        self.server_uuid_text = str(self.server_uuid)
        """``server_uuid`` as hook parameters and variables spell it, made once."""
        self.server_id = config.server_id
        self._init_variables()
        self.delegates = Delegates.create()
        self.threads = ThreadRegistry()
        self.plugins = Plugins(
            self.delegates.registry,
            self.variables,
            self.status,
            self.threads,
            bound=self._plugin_services,
            unregister=self._plugin_left,
        )
        self.accounts = Accounts()
        self.encoder = EventEncoder(self.server_id, self._checksum())
        self._load_plugins()
        param = ServerStateParam(self.server_id, self.server_uuid_text)
        self.delegates.server_state.before_recovery(param)
        checkpoint = self.datadir.load_checkpoint()
        self.engine = self._restore_engine(checkpoint)
        if checkpoint is None:
            self._initialize_accounts()
        self.delegates.server_state.after_engine_recovery(param)
        self.binlog = self._make_binlog()
        gtids = GtidSet.parse(checkpoint.gtid_executed) if checkpoint else GtidSet()
        replayer = crash_recovery.Replayer(Session(self, None, "localhost", binlogging=False))
        applied = crash_recovery.recover(
            self.binlog,
            replayer,
            checkpoint.binlog_file if checkpoint else "",
            checkpoint.binlog_pos if checkpoint else 4,
            gtids,
        )
        if applied:
            errorlog.log(
                _log,
                logging.INFO,
                f"Crash recovery finished: {applied} transaction(s) replayed from the binary log",
                code=13030,
            )
        self.binlog.open(gtids)
        self.binlog.on_rotate = self.checkpoint
        self.binlog.on_group = self._binlog_grew
        self.checkpoint()
        threading.Thread(target=self._checkpointer, name="rpl-checkpointer", daemon=True).start()
        self.delegates.server_state.after_recovery(param)
        self.replica_hosts = ReplicaHosts()
        # relay log recovery, of every channel:
        self.replica_channels = ReplicaChannels(self, config.datadir.resolve())
        self.replica = self.replica_channels.default
        source.register(self.commands, self.replica_hosts)
        replica_statements.register(self.dispatch, self.replica_channels, self.replica_hosts)
        self.functions.update(replica_statements.functions(self.replica_channels))
        self.thread_pool = self._make_thread_pool()
        self._listen()
        errorlog.log(_log, logging.INFO, self.ready_line(), code=10931)
        self.replica_channels.start_at_boot()

    def _plugin_services(self, name: str) -> ServerBound:
        """The server-bound services of plugin ``name``."""
        return ServerBound(
            self.plugin_server,
            plugin_services.PluginChannelService(
                self.plugin_channels, lambda: self.replica_channels
            ),
            plugin_services.PluginCommandRegistry(self, name),
            plugin_services.PluginTableRegistry(self.plugin_tables, name),
        )

    def _plugin_left(self, name: str) -> None:
        """Plugin ``name`` is gone: its commands and tables too."""
        self.plugin_commands.unregister_owner(name)
        self.plugin_tables.unregister_owner(name)

    def ready_line(self) -> str:
        """MySQL's line saying the server listens (error log and console alike)."""
        return f"ready for connections. Version: '{SERVER_VERSION}'  socket: ''  port: {self.port}"

    def _lock_datadir(self) -> None:
        try:
            self.datadir.lock()
        except DataDirectoryInUse as exc:
            errorlog.log(_log, logging.ERROR, exc.strerror or str(exc), code=12574)
            errorlog.log(_log, logging.INFO, exc.hint, code=12575)
            raise

    def _checksum(self) -> bool:
        return self.variables.get_global("binlog_checksum") == "CRC32"

    def _init_variables(self) -> None:
        config = self.config
        self.variables = SystemVariables(config.options)
        self.status = StatusVariables()
        basename = str(config.datadir.resolve() / config.log_bin)
        coupled = {
            "read_only": self._read_only_changed,
            "super_read_only": self._super_read_only_changed,
        }
        for definition in server_variables(
            str(config.datadir.resolve()),
            config.port,
            config.bind_address,
            config.server_id,
            self.server_uuid_text,
            basename,
            socket.gethostname(),
            "CRC32",
        ):
            if definition.name in coupled:
                definition = attrs.evolve(definition, on_update=coupled[definition.name])
            self.variables.register(definition, "server")
        self._super_read_only_changed(self.variables.get_global("super_read_only"))
        for old_name, name in ALIASES.items():
            self.variables.alias(old_name, name)
        self.variables.register(
            SystemVariable(
                "debug",
                VarType.STR,
                config.debug,
                "armed crash points (DBUG syntax)",
                on_update=lambda v: self.crash.apply(str(v or "")),
            ),
            "server",
        )
        for definition in prepared.system_variables():
            self.variables.register(definition, "server")
        for name, getter in self._status_getters().items():
            self.status.register(StatusVariable(name, getter), "server")

    def _read_only_changed(self, value: SysVarValue) -> None:
        """read_only = OFF turns super_read_only OFF too (MySQL's rule)."""
        if not value and self.variables.get_global("super_read_only"):
            self.variables.set_global("super_read_only", False)

    def _super_read_only_changed(self, value: SysVarValue) -> None:
        """super_read_only = ON turns read_only ON too (MySQL's rule), also at start."""
        if value and not self.variables.get_global("read_only"):
            self.variables.set_global("read_only", True)

    def _status_getters(self) -> dict[str, Callable[[], StatusValue]]:
        getters: dict[str, Callable[[], StatusValue]] = {
            "Uptime": lambda: int(time.monotonic() - self.started),
            "Threads_connected": lambda: len(self._sessions),
            "Max_used_connections": lambda: self.max_used_connections,
            "Connection_errors_max_connections": lambda: self.connection_errors_max_connections,
            "Threads_running": lambda: sum(s.command != "Sleep" for s in self.sessions()),
            "Questions": lambda: self.questions,
            "Binlog_commits": lambda: self.binlog.binlog_commits,
            "Binlog_group_commits": lambda: self.binlog.binlog_group_commits,
            "Rpl_binlog_fsyncs": lambda: self.binlog.fsyncs,
            "Threadpool_threads": lambda: self.thread_pool.threads if self.thread_pool else 0,
            "Threadpool_idle_threads": lambda: (
                self.thread_pool.idle_threads if self.thread_pool else 0
            ),
            "Slave_received_heartbeats": lambda: self.replica.heartbeats,
            "Slave_running": lambda: (
                "ON" if self.replica.io_running and self.replica.sql_running else "OFF"
            ),
        }
        for name in (
            "Innodb_row_lock_current_waits",
            "Innodb_row_lock_time",
            "Innodb_row_lock_time_avg",
            "Innodb_row_lock_time_max",
            "Innodb_row_lock_waits",
            "Innodb_row_lock_timeouts",
            "Innodb_deadlocks",
        ):
            getters[name] = lambda name=name: self.engine.status()[name]  # type: ignore[misc]
        getters.update(self.prepared_statements.status_getters())
        return getters

    def _restore_engine(self, checkpoint: Checkpoint | None) -> Engine:
        if checkpoint is None:
            return Engine(statement_timeouts)
        engine = Engine.restore(io.BytesIO(checkpoint.engine), statement_timeouts)
        self.accounts.load(checkpoint.accounts)
        return engine

    def _initialize_accounts(self) -> None:
        self.accounts.create("root", "localhost", password_hash(self.config.root_password), False)
        self.accounts.grant("root", "localhost", STATIC_PRIVILEGES, None, grant_option=True)

    def _make_binlog(self) -> Binlog:
        variables = self.variables
        options = BinlogOptions(
            sync_binlog=variables.int_reader("sync_binlog"),
            max_binlog_size=variables.int_reader("max_binlog_size"),
            group_commit_sync_delay=variables.int_reader("binlog_group_commit_sync_delay"),
            group_commit_sync_no_delay_count=variables.int_reader(
                "binlog_group_commit_sync_no_delay_count"
            ),
            checksum=self._checksum(),
            dependency_tracking=variables.str_reader("binlog_transaction_dependency_tracking"),
            dependency_history_size=variables.int_reader(
                "binlog_transaction_dependency_history_size"
            ),
        )
        return Binlog(
            self.config.datadir.resolve(),
            self.config.log_bin,
            self.server_id,
            self.server_uuid,
            options,
            self.delegates.binlog_storage,
            self.crash,
        )

    def _make_thread_pool(self) -> ThreadPool | None:
        variables = self.variables
        if variables.get_global("thread_handling") != POOL_OF_THREADS:
            return None
        pool = ThreadPool(
            size=variables.int_reader("thread_pool_size"),
            max_threads=variables.int_reader("thread_pool_max_threads"),
            stall_limit_ms=variables.int_reader("thread_pool_stall_limit"),
            idle_timeout=variables.int_reader("thread_pool_idle_timeout"),
        )
        pool.start()
        return pool

    def _load_plugins(self) -> None:
        names = [n for n in self.datadir.plugin_names()]
        spec = ";".join(filter(None, [self.config.plugin_load, *names]))
        for error in self.plugins.load(spec) if spec else []:
            errorlog.log(_log, logging.ERROR, f"Plugin load failed: {error.message}", code=10734)

    def _listen(self) -> None:
        listener = socket.socket(
            socket.AF_INET6 if ":" in self.config.bind_address else socket.AF_INET
        )
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((self.config.bind_address, self.config.port))
        listener.listen(256)
        self._listener = listener
        self.port = listener.getsockname()[1]
        threading.Thread(target=self._accept_loop, name="rpl-listener", daemon=True).start()

    def _accept_loop(self) -> None:
        assert self._listener is not None
        while not self._stopping.is_set():
            try:
                sock, address = self._listener.accept()
            except OSError:
                return
            if self._stopping.is_set():
                sock.close()
                return
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            connection = Connection(self, sock, address, self.commands)
            threading.Thread(
                target=connection.serve, name=f"rpl-conn-{connection.thread_id}", daemon=True
            ).start()

    # ------------------------------------------------------------- sessions
    def context_for(self, session: Session) -> Context:
        """The expression context of ``session``."""
        return SessionContext(session)

    def add_session(self, session: Session, connection: ClientSocket | None) -> None:
        """Register a logged-in session (SHOW PROCESSLIST, KILL, shutdown).

        A client session (one with a ``connection``) is admitted as MySQL admits it:
        ``max_connections`` of them for any account, and one more for an account with
        CONNECTION_ADMIN or SUPER; past that, ER_CON_COUNT_ERROR (1040) and
        Connection_errors_max_connections counts it.
        """
        with self._sessions_lock:
            if connection is not None:
                self._admit(session)
            session.perf_thread_id = self.threads.new_thread_id()
            self._sessions[session.thread_id] = (session, connection)
            clients = sum(1 for _, c in self._sessions.values() if c is not None)
            self.max_used_connections = max(self.max_used_connections, clients)

    def _admit(self, session: Session) -> None:
        clients = sum(1 for _, c in self._sessions.values() if c is not None)
        limit = self.variables.global_int("max_connections")
        account = session.account
        admin = account is None or any(
            self.accounts.allowed(account, p) for p in ("CONNECTION_ADMIN", "SUPER")
        )
        if clients >= limit + 1 or (clients >= limit and not admin):
            self.connection_errors_max_connections += 1
            raise MySQLError.of(ER_CON_COUNT_ERROR)

    def remove_session(self, session: Session) -> None:
        """Forget a session that ended."""
        with self._sessions_lock:
            self._sessions.pop(session.thread_id, None)

    def sessions(self) -> list[Session]:
        """Every client session."""
        with self._sessions_lock:
            return [s for s, _ in self._sessions.values()]

    def kill(self, thread_id: int, query_only: bool) -> None:
        """KILL: end the connection (its transaction rolls back)."""
        with self._sessions_lock:
            found = self._sessions.get(thread_id)
        if found is None:
            raise MySQLError(1094, "HY000", f"Unknown thread id: {thread_id}")
        session, connection = found
        if query_only:
            return
        session.killed = True
        if connection is not None:
            try:
                connection.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def max_allowed_packet(self) -> int:
        """The global max_allowed_packet."""
        return self.variables.global_int("max_allowed_packet")

    def statistics(self) -> str:
        """COM_STATISTICS text."""
        return (
            f"Uptime: {int(time.monotonic() - self.started)}  Threads: "
            f"{len(self._sessions)}  Questions: {self.questions}  Slow queries: 0  "
            f"Opens: 0  Flush tables: 1  Open tables: 0  Queries per second avg: 0.000"
        )

    # ------------------------------------------------------- durable state
    def checkpoint(self) -> bool:
        """Write a checkpoint (:meth:`write_checkpoint`); whether it was written. One that
        cannot be (a full disk, a read-only data directory) is abandoned and logged, never
        fatal by itself: the previous checkpoint stays whole, its temporary file is
        removed, and recovery replays the binlog from the previous checkpoint's file,
        which PURGE keeps (:meth:`recovery_start_file`).
        """
        try:
            self.write_checkpoint()
        except OSError as exc:
            errorlog.log(
                _log,
                logging.ERROR,
                f"Checkpoint abandoned: {exc}; the next start replays the binary log from "
                f"{self._checkpoint_file or 'its first file'}",
                code=10000,
            )
            return False
        return True

    def write_checkpoint(self) -> None:
        """Write the engine, accounts and GTIDs as of the last committed binlog group
        (commits wait while the engine is copied; the file is written after); OSError
        if it cannot be written.
        """
        with self._checkpoint_lock:
            with self.ddl_lock, self.binlog.commit_stage_lock:
                buffer = io.BytesIO()
                self.engine.snapshot(buffer)
                end = self.binlog.committed_end
                checkpoint = Checkpoint(
                    end.file,
                    end.pos,
                    str(self.binlog.gtid_executed),
                    buffer.getvalue(),
                    self.accounts.export(),
                )
            self.datadir.write_checkpoint(checkpoint)
            self._checkpoint_file, self._checkpoint_pos = end.file, end.pos

    def _binlog_grew(self, end: BinlogPosition) -> None:
        """After each group: a checkpoint is due once rpl_checkpoint_binlog_bytes more
        of the binlog would have to be replayed (a rotation checkpoints anyway).
        """
        limit = self.variables.get_global("rpl_checkpoint_binlog_bytes")
        if (
            limit
            and end.file == self._checkpoint_file
            and end.pos - self._checkpoint_pos >= int(limit)
        ):
            self._checkpoint_due.set()

    def _checkpointer(self) -> None:
        """The checkpoint thread: checkpoints when one is due, off the commit path."""
        while not self._stopping.is_set():
            if not self._checkpoint_due.wait(0.5):
                continue
            self._checkpoint_due.clear()
            if not self._stopping.is_set():
                self.checkpoint()

    def recovery_start_file(self) -> str:
        """The binlog file the next recovery would start from (PURGE keeps it)."""
        return self._checkpoint_file

    def gtid_purged(self) -> GtidSet:
        """GTIDs no longer in any binlog file: the first file's PREVIOUS_GTIDS."""
        names = self.binlog.index.names()
        if not names:
            return GtidSet()
        return previous_gtids(self.binlog.directory / names[0]) or GtidSet()

    def reset_master(self) -> None:
        """RESET MASTER, with a checkpoint at the new first file."""
        with self.ddl_lock:
            self.binlog.reset()
            try:
                self.write_checkpoint()  # the old one names files that are gone
            except OSError as exc:
                raise MySQLError.of(
                    ER_ERROR_ON_WRITE, exc.filename or "checkpoint", exc.errno, exc.strerror
                ) from exc

    def install_plugin(self, name: str) -> None:
        """INSTALL PLUGIN, remembered for the next start."""
        self.plugins.install(name)
        self._save_plugins()

    def uninstall_plugin(self, name: str) -> None:
        """UNINSTALL PLUGIN, forgotten for the next start."""
        self.plugins.uninstall(name)
        self._save_plugins()

    def _save_plugins(self) -> None:
        loaded = {n.split("=")[0] for n in self.config.plugin_load.split(";") if n}
        self.datadir.write_plugin_names(
            [p.name for p in self.plugins.installed() if p.name not in loaded]
        )

    # ------------------------------------------------------------- shutdown
    def shutdown(self) -> None:
        """Stop cleanly (idempotent)."""
        if self._stopping.is_set():
            self._stopped.wait()
            return
        self._stopping.set()
        errorlog.log(
            _log, logging.INFO, "Received SHUTDOWN from user. Shutting down mysqld", code=10960
        )
        param = ServerStateParam(self.server_id, self.server_uuid_text)
        self.delegates.server_state.before_server_shutdown(param)
        if self._listener is not None:
            try:
                self._listener.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept()
            except OSError:
                pass
            self._listener.close()
        if hasattr(self, "replica_channels"):
            self.replica_channels.shutdown()
        with self._sessions_lock:
            connections = [c for _, c in self._sessions.values() if c is not None]
        for connection in connections:
            try:
                connection.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        deadline = time.monotonic() + 5
        while self._sessions and time.monotonic() < deadline:
            time.sleep(0.01)
        if self.thread_pool is not None:
            self.thread_pool.stop()
        try:
            self._close_binlog()
            self.checkpoint()
            self.plugins.shutdown()
            self.delegates.server_state.after_server_shutdown(param)
        finally:  # shutdown always ends, and says so
            errorlog.log(_log, logging.INFO, f"{SERVER_VERSION}  Shutdown complete", code=10910)
            self.datadir.unlock()
            self._stopped.set()

    def _close_binlog(self) -> None:
        """End the binlog with its STOP event; one that cannot be written (a full disk)
        is logged and the file left as a crash leaves it, which recovery reads the same.
        """
        try:
            self.binlog.close()
        except OSError as exc:
            errorlog.log(
                _log, logging.ERROR, f"Could not close the binary log cleanly: {exc}", code=10000
            )

    @property
    def stopping(self) -> bool:
        """Whether shutdown has begun (dump threads and replica threads end)."""
        return self._stopping.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the server has shut down."""
        return self._stopped.wait(timeout)
