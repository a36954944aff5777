"""SET, SHOW, FLUSH, PURGE, RESET MASTER, CHECKSUM TABLE, plugins, SHUTDOWN, KILL.

Result sets keep MySQL's column names, so scripts written against MySQL read them
unchanged.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from rpl.core.binlog import events as ev
from rpl.core.binlog.logfile import read_events
from rpl.core.engine import NO_DEFAULT
from rpl.core.errors import (
    ER_ERROR_WHEN_EXECUTING_COMMAND,
    ER_INCORRECT_GLOBAL_LOCAL_VAR,
    ER_INSIDE_TRANSACTION_PREVENTS_SWITCH_BINLOG_FORMAT,
    ER_NO_DB_ERROR,
    ER_NONEXISTING_GRANT,
    ER_NOT_SUPPORTED_YET,
    ER_UNKNOWN_TARGET_BINLOG,
    ER_WRONG_VALUE_FOR_VAR,
    MySQLError,
)
from rpl.core.execution import virtual_tables
from rpl.core.execution.dml import resolve_table
from rpl.core.execution.expressions import Compiler
from rpl.core.execution.results import Ok, Result, Rows
from rpl.core.execution.session import Session
from rpl.core.net.responses import Column, int_column, text_column
from rpl.core.sql import ast
from rpl.core.variables import coerce, like_pattern
from rpl.observers import BinlogStorageParam, Scope


def _texts(*names: str) -> list[Column]:
    return [text_column(n) for n in names]


# --------------------------------------------------------------------- SET
def run_set(session: Session, stmt: ast.Set) -> Result:
    """SET assignments, in order."""
    for item in stmt.items:
        if isinstance(item, ast.SetNames):
            charset = item.charset or "utf8mb4"
            for name in (
                "character_set_client",
                "character_set_connection",
                "character_set_results",
            ):
                session.session_vars[name] = charset
        elif isinstance(item, ast.SetCharset):
            session.session_vars["character_set_client"] = item.charset or "utf8mb4"
        else:
            _assign(session, item)
    return Ok()


def _value(session: Session, item: ast.SetVariable) -> object:
    if isinstance(item.value, ast.Column) and item.value.table is None:
        return item.value.name
    return Compiler((), "", session.context).evaluate(item.value)


def _assign(session: Session, item: ast.SetVariable) -> None:
    server = session.server
    if item.scope == "USER":
        session.user_vars[item.name.lower()] = _value(session, item)
        return
    if item.scope in ("PERSIST", "PERSIST_ONLY"):
        raise MySQLError.of(ER_NOT_SUPPORTED_YET, "SET PERSIST")
    entry = server.variables.lookup(item.name)
    definition = entry.definition
    raw = definition.default if isinstance(item.value, ast.Default) else _value(session, item)
    if item.scope == "GLOBAL" or definition.scope is Scope.GLOBAL and item.scope is None:
        if item.scope is None:
            server.variables.check_session_scope(item.name)
        session.require("SUPER", "SYSTEM_VARIABLES_ADMIN")
        if definition.name in _LOGGING_PAIR:
            _check_logging_pair(session, definition.name, coerce(definition, raw)[0], "GLOBAL")
        session.warnings.extend(server.variables.set_global(item.name, raw))
        return
    server.variables.check_session_scope(item.name)
    if not definition.dynamic:
        raise MySQLError.of(ER_INCORRECT_GLOBAL_LOCAL_VAR, definition.name, "read only")
    value, warnings = coerce(definition, raw)
    name = definition.name
    if name == "binlog_format" and session.in_transaction:
        raise MySQLError.of(ER_INSIDE_TRANSACTION_PREVENTS_SWITCH_BINLOG_FORMAT)
    if name in _LOGGING_PAIR:
        _check_logging_pair(session, name, value, None)
    session.warnings.extend(warnings)
    if name == "autocommit" and value and not session.autocommit:
        session.commit()
    session.session_vars[name] = value


_LOGGING_PAIR = ("binlog_format", "transaction_write_set_extraction")
"""Variables whose values must agree: write-set extraction may be OFF only while the
binlog format is STATEMENT (row events and WRITESET tracking need the write set)."""


def _check_logging_pair(session: Session, name: str, value: object, scope: str | None) -> None:
    """ER_WRONG_VALUE_FOR_VAR when setting ``name`` to ``value`` (in ``scope``) would leave
    ``transaction_write_set_extraction`` OFF with a binlog format other than STATEMENT.
    """
    other = _LOGGING_PAIR[1] if name == _LOGGING_PAIR[0] else _LOGGING_PAIR[0]
    values = {name: str(value).upper(), other: str(session.variable(other, scope)).upper()}
    extraction, binlog_format = values[_LOGGING_PAIR[1]], values[_LOGGING_PAIR[0]]
    if extraction == "OFF" and binlog_format != "STATEMENT":
        raise MySQLError.of(ER_WRONG_VALUE_FOR_VAR, name, value)


# -------------------------------------------------------------------- SHOW
def _filter(names: list[str], like: str | None) -> list[str]:
    if like is None:
        return names
    regex = like_pattern(like)
    return [n for n in names if regex.match(n)]


def _show_variables(session: Session, stmt: ast.Show) -> Result:
    rows = dict(session.server.variables.show(stmt.like))
    for name in _filter(sorted(session.server.computed_variables), stmt.like):
        rows[name] = session.display(session.variable(name, "GLOBAL"))
    if stmt.scope != "GLOBAL":
        for name in _filter(sorted(session.session_vars), stmt.like):
            rows[name] = session.display(session.session_vars[name])
    return Rows(_texts("Variable_name", "Value"), sorted(rows.items()))


def _show_status(session: Session, stmt: ast.Show) -> Result:
    return Rows(_texts("Variable_name", "Value"), session.server.status.show(stmt.like))


def _show_databases(session: Session, stmt: ast.Show) -> Result:
    name = "Database" + (f" ({stmt.like})" if stmt.like else "")
    names = _filter(sorted(session.server.engine.databases()), stmt.like)
    return Rows(_texts(name), [[n] for n in names])


def _show_tables(session: Session, stmt: ast.Show) -> Result:
    db = stmt.database or session.db
    if db is None:
        raise MySQLError.of(ER_NO_DB_ERROR)
    names = _filter(sorted(session.server.engine.tables(db)), stmt.like)
    columns = _texts(f"Tables_in_{db}" + (f" ({stmt.like})" if stmt.like else ""))
    if stmt.full:
        columns.append(text_column("Table_type"))
        return Rows(columns, [[n, "BASE TABLE"] for n in names])
    return Rows(columns, [[n] for n in names])


def _show_binary_logs(session: Session, stmt: ast.Show) -> Result:
    session.require("SUPER", "REPLICATION CLIENT")
    rows = [[name, size, "No"] for name, size in session.server.binlog.files()]
    return Rows([text_column("Log_name"), int_column("File_size"), text_column("Encrypted")], rows)


def _show_master_status(session: Session, stmt: ast.Show) -> Result:
    session.require("SUPER", "REPLICATION CLIENT")
    binlog = session.server.binlog
    end = binlog.end
    return Rows(
        [
            text_column("File"),
            int_column("Position"),
            text_column("Binlog_Do_DB"),
            text_column("Binlog_Ignore_DB"),
            text_column("Executed_Gtid_Set"),
        ],
        [[end.file, end.pos, "", "", str(binlog.gtid_executed)]],
    )


_EVENT_NAMES = {
    ev.QUERY_EVENT: "Query",
    ev.STOP_EVENT: "Stop",
    ev.ROTATE_EVENT: "Rotate",
    ev.INTVAR_EVENT: "Intvar",
    ev.FORMAT_DESCRIPTION_EVENT: "Format_desc",
    ev.XID_EVENT: "Xid",
    ev.GTID_LOG_EVENT: "Gtid",
    ev.ANONYMOUS_GTID_LOG_EVENT: "Anonymous_Gtid",
    ev.PREVIOUS_GTIDS_LOG_EVENT: "Previous_gtids",
    ev.TABLE_MAP_EVENT: "Table_map",
    ev.WRITE_ROWS_EVENT: "Write_rows",
    ev.UPDATE_ROWS_EVENT: "Update_rows",
    ev.DELETE_ROWS_EVENT: "Delete_rows",
    ev.ROWS_QUERY_LOG_EVENT: "Rows_query",
}


def event_info(event: ev.Event) -> str:
    """SHOW BINLOG EVENTS' Info column for ``event``."""
    if isinstance(event, ev.FormatDescriptionEvent):
        return f"Server ver: {event.server_version}, Binlog ver: {event.binlog_version}"
    if isinstance(event, ev.PreviousGtidsEvent):
        return str(event.gtids)
    if isinstance(event, ev.GtidEvent):
        return f"SET @@SESSION.GTID_NEXT= '{event.sid}:{event.gno}'"
    if isinstance(event, ev.QueryEvent):
        return f"use `{event.db}`; {event.query}" if event.db else event.query
    if isinstance(event, ev.XidEvent):
        return f"COMMIT /* xid={event.xid} */"
    if isinstance(event, ev.RotateEvent):
        return f"{event.next_file};pos={event.position}"
    if isinstance(event, ev.TableMapEvent):  # MySQL's Table_map_log_event::pack_info
        return f"table_id: {event.table_id} ({event.db}.{event.table})"
    if isinstance(event, ev.RowsEvent):  # Rows_log_event::pack_info
        end = " flags: STMT_END_F" if event.flags & ev.STMT_END_F else ""
        return f"table_id: {event.table_id}{end}"
    if isinstance(event, ev.RowsQueryEvent):  # Rows_query_log_event::pack_info
        return f"# {event.query}"
    return ""


def _show_binlog_events(session: Session, stmt: ast.Show) -> Result:
    session.require("REPLICATION SLAVE")
    binlog = session.server.binlog
    names = binlog.index.names()
    name = stmt.file or (names[0] if names else "")
    if name not in names:
        raise MySQLError.of(
            ER_ERROR_WHEN_EXECUTING_COMMAND, "SHOW BINLOG EVENTS", "Could not find target log"
        )
    end = binlog.end
    stop = end.pos if name == end.file else None
    rows = []
    for entry in read_events(binlog.directory / name, stmt.pos or 4, stop_at=stop):
        header = entry.header
        rows.append(
            [
                name,
                entry.position,
                _EVENT_NAMES.get(header.type_code, f"Unknown({header.type_code})"),
                header.server_id,
                header.log_pos,
                event_info(entry.event),
            ]
        )
    start = stmt.offset or 0
    rows = rows[start : start + stmt.limit] if stmt.limit is not None else rows[start:]
    return Rows(
        [
            text_column("Log_name"),
            int_column("Pos"),
            text_column("Event_type"),
            int_column("Server_id"),
            int_column("End_log_pos"),
            text_column("Info"),
        ],
        rows,
    )


def _show_plugins(session: Session, stmt: ast.Show) -> Result:
    rows = [
        [p.name, "ACTIVE", "REPLICATION", p.source.entry_point.value, "GPL"]
        for p in session.server.plugins.installed()
    ]
    return Rows(_texts("Name", "Status", "Type", "Library", "License"), rows)


def _show_warnings(session: Session, stmt: ast.Show) -> Result:
    rows = [[w.level, w.code, w.message] for w in session.previous_warnings]
    if stmt.kind == "ERRORS":
        rows = [r for r in rows if r[0] == "Error"]
    return Rows([text_column("Level"), int_column("Code"), text_column("Message")], rows)


def _show_create_table(session: Session, stmt: ast.Show) -> Result:
    assert stmt.table is not None
    schema = resolve_table(session, stmt.table).schema
    lines = []
    for column in schema.columns:
        kind = virtual_tables.column_type_text(column)
        text = f"  {ast.quote_identifier(column.name)} {kind}"
        text += " unsigned" if column.unsigned else ""
        text += " NOT NULL" if not column.nullable else ""
        if column.default is not NO_DEFAULT and not column.auto_increment:
            text += f" DEFAULT {ast.quote_literal(column.default)}"  # type: ignore[arg-type]
        text += " AUTO_INCREMENT" if column.auto_increment else ""
        lines.append(text)
    keys = ",".join(ast.quote_identifier(c) for c in schema.primary_key)
    lines.append(f"  PRIMARY KEY ({keys})")
    for name, columns in schema.indexes.items():
        cols = ",".join(ast.quote_identifier(c) for c in columns)
        lines.append(f"  KEY {ast.quote_identifier(name)} ({cols})")
    body = ",\n".join(lines)
    text = (
        f"CREATE TABLE {ast.quote_identifier(schema.name)} (\n{body}\n) ENGINE=InnoDB "
        "DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci"
    )
    return Rows(_texts("Table", "Create Table"), [[schema.name, text]])


def _show_columns(session: Session, stmt: ast.Show) -> Result:
    assert stmt.table is not None
    schema = resolve_table(session, stmt.table).schema
    rows = []
    for column in schema.columns:
        kind, key, default, extra = virtual_tables.column_facts(schema, column)
        rows.append([column.name, kind, "YES" if column.nullable else "NO", key, default, extra])
    return Rows(_texts("Field", "Type", "Null", "Key", "Default", "Extra"), rows)


def _show_processlist(session: Session, stmt: ast.Show) -> Result:
    rows = [
        [
            s.thread_id,
            s.user,
            s.host,
            s.db,
            s.command,
            int(time.monotonic() - s.started),
            s.state,
            s.info,
        ]
        for s in session.server.sessions()
    ]
    return Rows(
        [
            int_column("Id"),
            *_texts("User", "Host", "db", "Command"),
            int_column("Time"),
            *_texts("State", "Info"),
        ],
        rows,
    )


def _show_engines(session: Session, stmt: ast.Show) -> Result:
    return Rows(
        _texts("Engine", "Support", "Comment", "Transactions", "XA", "Savepoints"),
        [
            [
                "InnoDB",
                "DEFAULT",
                "rpl's in-memory engine, recovered from the binlog",
                "YES",
                "NO",
                "YES",
            ]
        ],
    )


def _show_grants(session: Session, stmt: ast.Show) -> Result:
    accounts = session.server.accounts
    if stmt.user is None or stmt.user.current:
        account = session.account
    else:
        account = accounts.get(stmt.user.user, stmt.user.host)
        if account is None:
            raise MySQLError.of(ER_NONEXISTING_GRANT, stmt.user.user, stmt.user.host)
    if account is None:
        return Rows(_texts("Grants"), [])
    # MySQL 8.0 prints the grantee with backticks: TO `user`@`host`
    grantee = f"`{account.user}`@`{account.host}`"
    return Rows(
        _texts(f"Grants for {account.user}@{account.host}"),
        [
            [line.replace(f" TO {account.name}", f" TO {grantee}")]
            for line in accounts.grants_of(account)
        ],
    )


SHOW_KINDS: dict[ast.ShowKind, Callable[[Session, ast.Show], Result]] = {
    "VARIABLES": _show_variables,
    "STATUS": _show_status,
    "DATABASES": _show_databases,
    "TABLES": _show_tables,
    "BINARY LOGS": _show_binary_logs,
    "MASTER STATUS": _show_master_status,
    "BINLOG EVENTS": _show_binlog_events,
    "PLUGINS": _show_plugins,
    "WARNINGS": _show_warnings,
    "ERRORS": _show_warnings,
    "CREATE TABLE": _show_create_table,
    "COLUMNS": _show_columns,
    "PROCESSLIST": _show_processlist,
    "ENGINES": _show_engines,
    "GRANTS": _show_grants,
}
"""The SHOW kinds this layer runs (replication registers SLAVE STATUS and SLAVE HOSTS)."""


# ----------------------------------------------------- binlog administration
def run_flush(session: Session, stmt: ast.Flush) -> Result:
    """FLUSH BINARY LOGS / LOGS / STATUS / PRIVILEGES / TABLES."""
    for target in stmt.targets:
        if target in ("BINARY LOGS", "LOGS"):
            session.require("RELOAD")
            session.server.binlog.rotate()
        elif target == "STATUS":
            session.server.status.flush()
        elif target not in (
            "PRIVILEGES",
            "TABLES",
            "ENGINE LOGS",
            "ERROR LOGS",
            "GENERAL LOGS",
            "SLOW LOGS",
            "RELAY LOGS",
            "HOSTS",
        ):
            raise MySQLError.of(ER_NOT_SUPPORTED_YET, f"FLUSH {target}")
    return Ok()


def run_purge(session: Session, stmt: ast.Purge) -> Result:
    """PURGE BINARY LOGS TO 'file'."""
    session.require("SUPER", "BINLOG_ADMIN")
    if stmt.to_file is None:
        raise MySQLError.of(ER_NOT_SUPPORTED_YET, "PURGE BINARY LOGS BEFORE")
    server = session.server
    if stmt.to_file not in server.binlog.index.names():
        raise MySQLError.of(ER_UNKNOWN_TARGET_BINLOG)
    server.binlog.purge_to(stmt.to_file, server.recovery_start_file())
    return Ok()


def run_reset_master(session: Session, stmt: ast.ResetMaster) -> Result:
    """RESET MASTER: delete every binlog, clear gtid_executed, start again at file 1."""
    session.require("RELOAD")
    if stmt.to is not None:
        raise MySQLError.of(ER_NOT_SUPPORTED_YET, "RESET MASTER TO")
    session.server.reset_master()
    server = session.server
    server.delegates.binlog_transmit.after_reset_master(
        BinlogStorageParam(server.server_id, server.server_uuid_text, session.thread_id)
    )
    return Ok()


def run_checksum(session: Session, stmt: ast.Checksum) -> Result:
    """CHECKSUM TABLE t[, ...]: NULL for a table that does not exist, as MySQL."""
    rows = []
    engine = session.server.engine
    for name in stmt.tables:
        db = name.schema or session.db or ""
        try:
            rows.append([f"{db}.{name.name}", engine.table(db, name.name).checksum()])
        except MySQLError:
            rows.append([f"{db}.{name.name}", None])
    return Rows([text_column("Table"), int_column("Checksum", unsigned=True)], rows)


# ------------------------------------------------------------------ plugins
def install_plugin(session: Session, stmt: ast.InstallPlugin) -> Result:
    """INSTALL PLUGIN name SONAME 'lib' (the entry point's name is what counts)."""
    session.require("SUPER")
    session.server.install_plugin(stmt.name)
    return Ok()


def uninstall_plugin(session: Session, stmt: ast.UninstallPlugin) -> Result:
    """UNINSTALL PLUGIN name."""
    session.require("SUPER")
    session.server.uninstall_plugin(stmt.name)
    return Ok()


def run_shutdown(session: Session, stmt: ast.Shutdown) -> Result:
    """SHUTDOWN: answer OK, then stop the server from another thread."""
    session.require("SHUTDOWN")
    threading.Timer(0.05, session.server.shutdown).start()
    return Ok()


def run_kill(session: Session, stmt: ast.Kill) -> Result:
    """KILL [CONNECTION] id."""
    session.require("SUPER", "CONNECTION_ADMIN")
    session.server.kill(stmt.connection_id, stmt.query)
    return Ok()
