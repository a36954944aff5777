"""One client connection: handshake, authentication, then the command loop.

A thread per connection, as mysqld's default. Whatever a client sends (a malformed
or truncated packet, a huge length, invalid SQL) ends at worst in an ERR packet and,
for a broken packet stream, in this connection closing: never in an exception that
reaches another session or the server.

Until the login ends a connection waits at most ``connect_timeout`` seconds for each
packet and reads none larger than :data:`PRE_LOGIN_PAYLOAD`, so a client that never
logs in holds neither a thread nor memory for long. A logged-in session idle for longer
than its ``wait_timeout`` (``interactive_timeout`` for a client that says it is
interactive) gets MySQL 8.0.24's ER_CLIENT_INTERACTION_TIMEOUT (4031) and is closed: in
a thread of its own the kernel ends the wait (``SO_RCVTIMEO``, set when the value
changes), in the pool the pool's timer does (:mod:`rpl.core.execution.threadpool`).
"""

from __future__ import annotations

import logging
import socket
import struct
from collections.abc import Callable, Mapping
from typing import cast

from rpl.core import errorlog
from rpl.core.accounts import ANY
from rpl.core.binlog.writer import Reply
from rpl.core.errors import (
    ER_ACCESS_DENIED_ERROR,
    ER_BAD_DB_ERROR,
    ER_CLIENT_INTERACTION_TIMEOUT,
    ER_NET_READ_ERROR,
    ER_UNKNOWN_COM_ERROR,
    ER_UNKNOWN_ERROR,
    MySQLError,
)
from rpl.core.execution import prepared, privileges, virtual_tables
from rpl.core.execution.execute import execute, execute_parsed
from rpl.core.execution.results import Ok, Result
from rpl.core.execution.session import ServerContext, Session
from rpl.core.net import binary
from rpl.core.net import handshake as hs
from rpl.core.net import responses as rsp
from rpl.core.net.packets import ConnectionClosed, PacketChannel, ProtocolError, ReplyBatch
from rpl.core.threads import next_thread_id

_log = errorlog.logger("connection")

COM_QUIT = 0x01
COM_INIT_DB = 0x02
COM_QUERY = 0x03
COM_FIELD_LIST = 0x04
COM_STATISTICS = 0x09
COM_PROCESS_KILL = 0x0C
COM_PING = 0x0E
COM_SET_OPTION = 0x1B
COM_RESET_CONNECTION = 0x1F
COM_STMT_PREPARE = 0x16
COM_STMT_EXECUTE = 0x17
COM_STMT_SEND_LONG_DATA = 0x18
COM_STMT_CLOSE = 0x19
COM_STMT_RESET = 0x1A
COM_STMT_FETCH = 0x1C

PRE_LOGIN_PAYLOAD = (64 + 4) << 10
"""The largest payload read before the login ends: a handshake response is a few hundred
bytes, and clients bound their connection attributes at 64 KiB."""

CommandHandler = Callable[["Connection", bytes], bool]
"""Handles one command payload; returns False when the connection must close."""


class Connection:
    """A client connection and its session."""

    def __init__(
        self,
        server: ServerContext,
        sock: socket.socket,
        address: tuple[str, int],
        commands: Mapping[int, CommandHandler],
    ) -> None:
        """``commands``: the protocol commands beyond the client ones, which features
        registered at start (replication's COM_REGISTER_SLAVE and COM_BINLOG_DUMP...).
        """
        self.server = server
        self.commands = commands
        self.sock = sock
        self.host = address[0]
        self.channel = PacketChannel(sock)
        self.thread_id = next_thread_id()
        self.session: Session | None = None
        self.capabilities = 0
        self.on_close: list[Callable[[], None]] = []
        """Called when the connection ends (a registered replica is forgotten)."""
        self.idle_since: float | None = None
        """When the pool armed the connection for its next command (None while queued
        or served): the pool's timer ends it past its wait_timeout."""
        self._receive_timeout = 0
        """The SO_RCVTIMEO seconds set on the socket (0: none)."""

    # ------------------------------------------------------------ handshake
    def authenticate(self) -> Session | None:
        """Handshake and login; the session, or None after an ERR was sent."""
        self.sock.settimeout(self.server.variables.global_int("connect_timeout"))
        self.channel.max_payload = PRE_LOGIN_PAYLOAD
        scramble = hs.new_scramble()
        self.channel.write(
            hs.handshake_v10(
                self.server.version, self.thread_id, scramble, rsp.SERVER_STATUS_AUTOCOMMIT
            )
        )
        response = hs.parse_handshake_response(self.channel.read())
        self.capabilities = response.capabilities & hs.SERVER_CAPABILITIES
        token = response.auth_response
        if response.auth_plugin != hs.NATIVE_PASSWORD or (len(token) not in (0, 20)):
            self.channel.write(hs.auth_switch_request(scramble))
            token = self.channel.read()
        account = self.server.accounts.match(response.user, self.host)
        if account is None or not hs.check_token(account.password_hash, scramble, token):
            errorlog.log(
                _log,
                logging.INFO,
                f"Access denied for user '{response.user}'@'{self.host}'",
                code=10926,
                subsystem="Server",
            )
            self._error(
                MySQLError.of(
                    ER_ACCESS_DENIED_ERROR, response.user, self.host, "YES" if token else "NO"
                )
            )
            return None
        session = Session(self.server, account, self.host, self.thread_id)
        session.found_rows = bool(self.capabilities & hs.CLIENT_FOUND_ROWS)
        if response.capabilities & hs.CLIENT_INTERACTIVE:
            session.session_vars["wait_timeout"] = self.server.variables.global_int(
                "interactive_timeout"
            )
        if response.database:
            if not virtual_tables.database_exists(self.server.engine, response.database):
                self._error(MySQLError.of(ER_BAD_DB_ERROR, response.database))
                return None
            if not privileges.visible(session, response.database):
                self._error(privileges.denied(session, ANY, response.database, None))
                return None
            session.db = response.database
        self.server.add_session(session, self)  # ER_CON_COUNT_ERROR past max_connections
        self.session = session
        self.channel.max_payload = self.server.max_allowed_packet()
        self.sock.settimeout(None)
        self.channel.write(rsp.ok_packet(status=self.status(session)))
        return session

    # --------------------------------------------------------------- loop
    def serve(self) -> None:
        """Run the connection until the client quits or the server stops (its own
        thread: one-thread-per-connection), or log in and hand it to the thread pool.
        """
        errorlog.set_thread_id(self.thread_id)
        if not self.run(self.login):
            return
        pool = self.server.thread_pool
        if pool is not None:
            pool.add(self)
            return
        while True:
            self._arm_receive_timeout()
            if not self.run(self.command):
                return

    def wait_timeout(self) -> float:
        """The session's wait_timeout in seconds (how long it may sit idle)."""
        session = self.session
        return float(cast(int, session.setting("wait_timeout"))) if session else 0.0

    def _arm_receive_timeout(self, seconds: int | None = None) -> None:
        """Bound the wait for the next command by the session's wait_timeout (or by
        ``seconds``, 0 for no bound), through the kernel (no call unless the value
        changed since the last command).
        """
        if seconds is None:
            seconds = int(self.wait_timeout())
        if seconds != self._receive_timeout:
            self.sock.setsockopt(
                socket.SOL_SOCKET, socket.SO_RCVTIMEO, struct.pack("ll", seconds, 0)
            )
            self._receive_timeout = seconds

    def close_idle(self) -> None:
        """End the connection, idle past its wait_timeout (the pool's timer)."""
        self._report_idle()
        self.end()

    def _report_idle(self) -> None:
        """The session sat idle past its wait_timeout: MySQL's note in the error log,
        ER_CLIENT_INTERACTION_TIMEOUT to the client (as the answer to whatever it sends
        next); the caller ends the connection.
        """
        session = self.session
        db = (session.db if session else None) or "unconnected"
        errorlog.log(
            _log,
            logging.INFO,
            f"Aborted connection {self.thread_id} to db: '{db}' "
            f"user: '{session.user if session else ''}' host: '{self.host}' "
            "(Got timeout reading communication packets)",
            code=10354,
        )
        self.channel.sequence = 1  # the reply to the client's next command
        self._error(MySQLError.of(ER_CLIENT_INTERACTION_TIMEOUT), quiet=True)

    def login(self) -> bool:
        """Handshake and authentication; False (the connection ended) when refused."""
        return self.authenticate() is not None

    def command(self) -> bool:
        """Read and answer one command; False when the connection must close."""
        assert self.session is not None
        return self._command(self.session)

    def run(self, step: Callable[[], bool]) -> bool:
        """Run ``step``; True when the connection goes on. A closed or broken connection,
        a protocol error or a fatal MySQL error ends it here: the client gets what
        MySQL sends, the session is closed and removed, the socket closed.
        """
        try:
            if step():
                return True
        except TimeoutError:  # only the login waits with a timeout: connect_timeout
            errorlog.log(
                _log,
                logging.INFO,
                f"Aborted connection {self.thread_id} to db: 'unconnected' user: "
                f"'unauthenticated' host: '{self.host}' (Got timeout reading communication "
                "packets)",
                code=10354,
            )
        except (ConnectionClosed, OSError):
            pass
        except ProtocolError as protocol_error:
            self._error(MySQLError.of(ER_NET_READ_ERROR), quiet=True)
            errorlog.log(
                _log,
                logging.INFO,
                f"Aborted connection {self.thread_id} to db: "
                f"'unconnected' host: '{self.host}' ({protocol_error})",
                code=10354,
            )
        except MySQLError as exc:
            self._error(exc, quiet=True)
        except BaseException:
            self.end()
            raise
        self.end()
        return False

    def end(self) -> None:
        """The connection is over: forget the replica, free its prepared statements,
        close the session and socket.
        """
        for callback in self.on_close:
            callback()
        if self.session is not None:
            self.server.prepared_statements.release(self.thread_id)
            try:
                self.session.close()
            finally:
                self.server.remove_session(self.session)
        self.channel.close()

    def _command(self, session: Session) -> bool:
        self.channel.reset_sequence()
        session.command = "Sleep"
        try:
            payload = self.channel.read()
        except MySQLError as exc:
            self._error(exc)
            return False
        except BlockingIOError:  # SO_RCVTIMEO: no command within wait_timeout
            self._report_idle()
            return False
        if not payload:
            raise ProtocolError("empty command packet")
        command = payload[0]
        if command == COM_QUIT:
            return False
        if command == COM_QUERY:
            self._query(session, payload[1:].decode("utf-8", "surrogateescape"))
        elif command == COM_PING:
            self.channel.write(rsp.ok_packet(status=self.status(session)))
        elif command == COM_INIT_DB:
            self._query(
                session,
                "USE `" + payload[1:].decode("utf-8", "surrogateescape").replace("`", "``") + "`",
            )
        elif command == COM_FIELD_LIST:
            self.channel.write(rsp.eof_packet(status=self.status(session)))
        elif command == COM_STATISTICS:
            self.channel.write(self.server.statistics().encode())
        elif COM_STMT_PREPARE <= command <= COM_STMT_FETCH and command != COM_SET_OPTION:
            self._prepared_statement_command(session, command, payload)
        elif command in (COM_SET_OPTION, COM_RESET_CONNECTION):
            if command == COM_RESET_CONNECTION:
                self.server.prepared_statements.release(self.thread_id)
            self.channel.write(
                rsp.eof_packet(status=self.status(session))
                if command == COM_SET_OPTION
                else rsp.ok_packet(status=self.status(session))
            )
        elif command == COM_PROCESS_KILL and len(payload) >= 5:
            self._query(session, f"KILL {int.from_bytes(payload[1:5], 'little')}")
        elif command in self.commands:
            self._arm_receive_timeout(0)  # a binlog dump reads ACKs with no idle bound
            return self.commands[command](self, payload)
        else:
            self._error(MySQLError.of(ER_UNKNOWN_COM_ERROR))
        return not session.killed

    def _prepared_statement_command(self, session: Session, command: int, payload: bytes) -> None:
        """COM_STMT_*: PREPARE_OK, an execution's OK or binary result set, an ERR, or
        nothing (SEND_LONG_DATA and CLOSE never reply).
        """
        try:
            if command == COM_STMT_EXECUTE:
                statement, text = prepared.com_stmt_execute(session, payload)
                self._query(session, text, lambda: execute_parsed(session, statement, text), True)
            elif command == COM_STMT_PREPARE:
                session.command = "Prepare"
                session.info = payload[1:1025].decode("utf-8", "replace")
                try:
                    for reply in prepared.com_stmt_prepare(session, payload):
                        self.channel.queue(reply)
                finally:
                    session.info = None
                self.channel.flush()
            elif command == COM_STMT_SEND_LONG_DATA:
                prepared.com_stmt_send_long_data(session, payload)
            elif command == COM_STMT_CLOSE:
                prepared.com_stmt_close(session, payload)
            elif command == COM_STMT_RESET:
                prepared.com_stmt_reset(session, payload)
                self.channel.write(rsp.ok_packet(status=self.status(session)))
            else:
                prepared.com_stmt_fetch(session, payload)
        except MySQLError as exc:
            self._error(exc)
        except Exception as bug:  # noqa: BLE001 - a server bug must not kill the server
            errorlog.log(
                _log,
                logging.ERROR,
                f"Prepared statement command 0x{command:02x} failed: {bug!r}",
                code=10000,
                exc_info=bug,
            )
            self._error(MySQLError.of(ER_UNKNOWN_ERROR, f"internal error: {bug!r}"))

    def _query(
        self,
        session: Session,
        sql: str,
        run: Callable[[], Result] | None = None,
        binary_rows: bool = False,
    ) -> None:
        """Run a statement (``sql``, or ``run`` with ``sql`` its text) and reply: an OK,
        a result set (binary for a prepared statement's execution) or an ERR.
        """
        session.command, session.info = "Query" if run is None else "Execute", sql[:1024]
        session.reply_later, session.replied = self._reply_later, False
        try:
            result = execute(session, sql) if run is None else run()
        except MySQLError as exc:
            if not session.replied:
                self._error(exc)
            return
        except Exception as bug:  # noqa: BLE001 - a server bug must not kill the server
            errorlog.log(
                _log,
                logging.ERROR,
                f"Statement failed: {sql[:200]!r}: {bug!r}",
                code=10000,
                exc_info=bug,
            )
            if not session.replied:
                self._error(MySQLError.of(ER_UNKNOWN_ERROR, f"internal error: {bug!r}"))
                session.rollback()
            return
        finally:
            session.info, session.reply_later = None, None
            session.command = "Sleep"  # idle until its next command (the pool reads it later)
        if not session.replied:
            self.send_result(session, result, binary_rows)

    def _reply_later(self, session: Session, result: Ok) -> Reply:
        """The reply to the running statement, framed now for the group commit leader to
        send (Session.reply_later): the OK as :meth:`send_result` would send it, with the
        status after the commit (no transaction open), or the commit's error.
        """
        sequence = self.channel.sequence
        ok = rsp.ok_packet(
            result.affected_rows,
            result.last_insert_id,
            rsp.SERVER_STATUS_AUTOCOMMIT if session.autocommit else 0,
            len(session.warnings),
            result.info,
        )

        def send(error: MySQLError | None, batch: ReplyBatch) -> None:
            payload = (
                ok if error is None else rsp.err_packet(error.errno, error.sqlstate, error.message)
            )
            self.channel.reply_later(batch, sequence, payload)

        return send

    # ------------------------------------------------------------ replies
    def status(self, session: Session) -> int:
        """The server status flags for ``session``."""
        flags = rsp.SERVER_STATUS_AUTOCOMMIT if session.autocommit else 0
        return flags | (rsp.SERVER_STATUS_IN_TRANS if session.in_transaction else 0)

    def send_result(self, session: Session, result: Result, binary_rows: bool = False) -> None:
        """Send an OK or a text (or binary) result set."""
        warnings = len(session.warnings)
        if isinstance(result, Ok):
            self.channel.write(
                rsp.ok_packet(
                    result.affected_rows,
                    result.last_insert_id,
                    self.status(session),
                    warnings,
                    result.info,
                )
            )
            return
        encode = binary.binary_result_set if binary_rows else rsp.result_set
        self.channel.queue_all(encode(result.columns, result.rows, self.status(session), warnings))
        self.channel.flush()

    def _error(self, error: MySQLError, quiet: bool = False) -> None:
        try:
            self.channel.write(rsp.err_packet(error.errno, error.sqlstate, error.message))
        except OSError:
            if not quiet:
                raise
