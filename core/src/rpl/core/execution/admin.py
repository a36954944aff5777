"""SET, SHOW, FLUSH, PURGE, RESET MASTER, CHECKSUM TABLE, plugins, SHUTDOWN, KILL.

Result sets keep MySQL's column names, so scripts written against MySQL read them
unchanged.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

from rpl.core.accounts import Account
from rpl.core.binlog import events as ev
from rpl.core.binlog.logfile import LogError, read_events
from rpl.core.engine import NO_DEFAULT, Table, TableSchema
from rpl.core.engine.storage import encode_row
from rpl.core.errors import (
    ER_BAD_DB_ERROR,
    ER_DBACCESS_DENIED_ERROR,
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
from rpl.core.execution import privileges, sysvars, virtual_tables
from rpl.core.execution.dml import resolve_table
from rpl.core.execution.expressions import Compiler
from rpl.core.execution.results import Ok, Result, Rows
from rpl.core.execution.session import Session
from rpl.core.net.responses import (
    BINARY_FLAG,
    CHARSET_BINARY,
    MYSQL_TYPE_LONGLONG,
    NUM_FLAG,
    Column,
    int_column,
    text_column,
)
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
            session.session_vars.update(sysvars.set_names(item.charset, item.collation))
        elif isinstance(item, ast.SetCharset):
            session.session_vars.update(sysvars.set_character_set(session, item.charset))
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
        session.context.set_user_variable(item.name, _value(session, item))
        return
    if item.scope in ("PERSIST", "PERSIST_ONLY"):
        raise MySQLError.of(ER_NOT_SUPPORTED_YET, "SET PERSIST")
    entry = server.variables.lookup(item.name)
    definition = entry.definition
    if not definition.dynamic:  # MySQL says so before any scope or privilege check
        raise MySQLError.of(ER_INCORRECT_GLOBAL_LOCAL_VAR, definition.name, "read only")
    raw = definition.default if isinstance(item.value, ast.Default) else _value(session, item)
    if item.scope == "GLOBAL" or definition.scope is Scope.GLOBAL and item.scope is None:
        if item.scope is None:
            server.variables.check_session_scope(item.name)
        session.require("SUPER", "SYSTEM_VARIABLES_ADMIN")
        if definition.global_privileges:
            session.require(*definition.global_privileges)
        sysvars.check_value(session, definition.name, raw)
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
    sysvars.check_value(session, name, value)
    server.variables.check(definition, value, raw)
    session.warnings.extend(warnings)
    if name == "autocommit" and value and not session.autocommit:
        session.commit()
    session.session_vars[name] = value
    sysvars.apply_session_value(session, name, value)


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
    names = _filter(virtual_tables.databases(session.server.engine), stmt.like)
    if not privileges.may_list_databases(session):
        names = [n for n in names if privileges.visible(session, n)]
    return Rows(_texts(name), [[n] for n in names])


def _show_tables(session: Session, stmt: ast.Show) -> Result:
    db = stmt.database or session.db
    if db is None:
        raise MySQLError.of(ER_NO_DB_ERROR)
    system = db.lower() in virtual_tables.SCHEMAS
    tables = session.server.dispatch.virtual_tables.names(db) if system else None
    names = _filter(tables or sorted(session.server.engine.tables(db)), stmt.like)
    names = [n for n in names if system or privileges.visible(session, db, n)]
    columns = _texts(f"Tables_in_{db}" + (f" ({stmt.like})" if stmt.like else ""))
    if stmt.full:
        columns.append(text_column("Table_type"))
        kind = "SYSTEM VIEW" if db.lower() == virtual_tables.INFORMATION_SCHEMA else "BASE TABLE"
        return Rows(columns, [[n, kind] for n in names])
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
    ev.VIEW_CHANGE_EVENT: "View_change",
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
    if isinstance(event, ev.ViewChangeEvent):  # View_change_log_event::pack_info
        return f"view_id={event.view_id}, seq_number={event.seq_number}"
    return ""


def _binlog_event_rows(path: Path, start: int, stop: int | None) -> list[list[object]]:
    """SHOW BINLOG EVENTS' rows of the file at ``path`` from ``start`` (LogError,
    ValueError or OverflowError when ``start`` is no event's start in the file).
    """
    if start > path.stat().st_size:
        raise ValueError(f"{start} is past the end of {path.name}")
    rows: list[list[object]] = []
    for entry in read_events(path, start, stop_at=stop):
        header = entry.header
        rows.append(
            [
                path.name,
                entry.position,
                _EVENT_NAMES.get(header.type_code, f"Unknown({header.type_code})"),
                header.server_id,
                header.log_pos,
                event_info(entry.event),
            ]
        )
    return rows


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
    try:
        rows = _binlog_event_rows(binlog.directory / name, stmt.pos or 4, stop)
    except (LogError, ValueError, OverflowError) as exc:  # FROM not at an event's start
        raise MySQLError.of(
            ER_ERROR_WHEN_EXECUTING_COMMAND, "SHOW BINLOG EVENTS", "Wrong offset or I/O error"
        ) from exc
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


_NO_DEFAULT_NULL = frozenset(
    (
        "TINYTEXT",
        "TEXT",
        "MEDIUMTEXT",
        "LONGTEXT",
        "TINYBLOB",
        "BLOB",
        "MEDIUMBLOB",
        "LONGBLOB",
        "JSON",
    )
)
"""Types whose nullable columns SHOW CREATE TABLE prints without ``DEFAULT NULL``."""


def _default_text(schema: TableSchema, i: int) -> str | None:
    """A column's DEFAULT clause value as SHOW CREATE TABLE prints it: a quoted string
    for any value (``'5'``, ``'0'`` for FALSE), ``NULL``, or None for no clause.
    """
    column = schema.columns[i]
    if column.auto_increment:
        return None
    if column.default_now:
        return virtual_tables.now_text(column)
    if column.default is NO_DEFAULT or column.default is None:
        if column.nullable and column.type_name not in _NO_DEFAULT_NULL:
            return "NULL"
        return None
    value = schema.default_row[i]
    if isinstance(value, bytes):
        return "0x" + value.hex()
    if isinstance(value, float):
        return ast.quote_literal(repr(value).removesuffix(".0"))
    return ast.quote_literal(str(value))


def create_table_text(table: Table, q: Callable[[str], str] = ast.quote_identifier) -> str:
    """SHOW CREATE TABLE's text: columns, keys (PRIMARY, UNIQUE, the others), FOREIGN KEY
    constraints, then the table options, as MySQL 8.0 prints them; ``q`` quotes names
    (``sql_quote_show_create``).
    """
    schema = table.schema
    lines = []
    for i, column in enumerate(schema.columns):
        kind = virtual_tables.column_type_text(column)
        text = f"  {q(column.name)} {kind}"
        text += " unsigned" if column.unsigned else ""
        text += " NOT NULL" if not column.nullable else ""
        default = _default_text(schema, i)
        text += f" DEFAULT {default}" if default is not None else ""
        text += " AUTO_INCREMENT" if column.auto_increment else ""
        text += f" ON UPDATE {virtual_tables.now_text(column)}" if column.on_update_now else ""
        lines.append(text)
    lines.append(f"  PRIMARY KEY ({','.join(map(q, schema.primary_key))})")
    for name, columns in schema.indexes.items():
        unique = "UNIQUE " if name in schema.unique else ""
        lines.append(f"  {unique}KEY {q(name)} ({','.join(map(q, columns))})")
    for fk in schema.foreign_keys:
        lines.append(f"  {fk.clause(schema.db)}")
    body = ",\n".join(lines)
    auto = ""
    if schema.auto_increment_column is not None and table.auto_increment > 1:
        auto = f" AUTO_INCREMENT={table.auto_increment}"
    return (
        f"CREATE TABLE {q(schema.name)} (\n{body}\n) ENGINE=InnoDB{auto} "
        "DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci"
    )


def _show_create_table(session: Session, stmt: ast.Show) -> Result:
    assert stmt.table is not None
    table = resolve_table(session, stmt.table)
    text = create_table_text(table, sysvars.identifier_quoter(session))
    return Rows(_texts("Table", "Create Table"), [[table.schema.name, text]])


def _show_create_database(session: Session, stmt: ast.Show) -> Result:
    """SHOW CREATE DATABASE db (1049 for an unknown one)."""
    assert stmt.database is not None
    if not virtual_tables.database_exists(session.server.engine, stmt.database):
        raise MySQLError.of(ER_BAD_DB_ERROR, stmt.database)
    exists = "/*!32312 IF NOT EXISTS*/ " if stmt.if_not_exists else ""
    text = (
        f"CREATE DATABASE {exists}{ast.quote_identifier(stmt.database)} /*!40100 DEFAULT CHARACTER "
        "SET utf8mb4 COLLATE utf8mb4_0900_ai_ci */ /*!80016 DEFAULT ENCRYPTION='N' */"
    )
    return Rows(_texts("Database", "Create Database"), [[stmt.database, text]])


def _nullable_int(name: str) -> Column:
    return Column(name, MYSQL_TYPE_LONGLONG, 21, CHARSET_BINARY, BINARY_FLAG | NUM_FLAG, 0)


_INDEX_COLUMNS = (
    "Table",
    "Non_unique",
    "Key_name",
    "Seq_in_index",
    "Column_name",
    "Collation",
    "Cardinality",
    "Sub_part",
    "Packed",
    "Null",
    "Index_type",
    "Comment",
    "Index_comment",
    "Visible",
    "Expression",
)
_INDEX_INTS = frozenset(("Non_unique", "Seq_in_index", "Cardinality", "Sub_part"))


def _show_index(session: Session, stmt: ast.Show) -> Result:
    """SHOW INDEX FROM t: MySQL 8.0's 15 columns, one row per key column; Cardinality is
    the exact number of distinct values of the key's columns up to that one.
    """
    assert stmt.table is not None
    table = resolve_table(session, stmt.table)
    schema = table.schema
    rows = table.committed_rows()
    keys = [("PRIMARY", schema.primary_key, True)]
    keys += [(name, cols, name in schema.unique) for name, cols in schema.indexes.items()]
    out: list[list[object]] = []
    for name, columns, unique in keys:
        for seq, column in enumerate(columns, 1):
            positions = [schema.positions[c] for c in columns[:seq]]
            cardinality = len({tuple(r[i] for i in positions) for r in rows})
            null = "YES" if schema.column(column).nullable else ""
            out.append(
                [schema.name, int(not unique), name, seq, column, "A", cardinality, None]
                + [None, null, "BTREE", "", "", "YES", None]
            )
    columns_ = [_nullable_int(n) if n in _INDEX_INTS else text_column(n) for n in _INDEX_COLUMNS]
    return Rows(columns_, out)


_PAGE = 16384
"""InnoDB's page size: SHOW TABLE STATUS's lengths are whole pages."""
_STATUS_COLUMNS = (
    "Name",
    "Engine",
    "Version",
    "Row_format",
    "Rows",
    "Avg_row_length",
    "Data_length",
    "Max_data_length",
    "Index_length",
    "Data_free",
    "Auto_increment",
    "Create_time",
    "Update_time",
    "Check_time",
    "Collation",
    "Checksum",
    "Create_options",
    "Comment",
)
_STATUS_INTS = frozenset(
    (
        "Version",
        "Rows",
        "Avg_row_length",
        "Data_length",
        "Max_data_length",
        "Index_length",
        "Data_free",
        "Auto_increment",
        "Checksum",
    )
)


def _table_status_row(table: Table) -> list[object]:
    schema = table.schema
    rows = table.committed_rows()
    size = sum(len(encode_row(r)) for r in rows)
    data_length = max(1, -(-size // _PAGE)) * _PAGE
    auto = table.auto_increment if schema.auto_increment_column is not None else None
    created = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(table.create_time))
    average = size // len(rows) if rows else 0
    return [schema.name, "InnoDB", 10, "Dynamic", len(rows), average, data_length, 0] + [
        len(schema.indexes) * _PAGE,
        0,
        auto,
        created,
        None,
        None,
        "utf8mb4_0900_ai_ci",
        None,
        "",
        "",
    ]


def _show_table_status(session: Session, stmt: ast.Show) -> Result:
    """SHOW TABLE STATUS [FROM db] [LIKE | WHERE]: MySQL 8.0's 18 columns. Rows is exact;
    Data_length is the rows' size rounded up to 16 KiB pages, Index_length a page per
    secondary index; Create_time is when this server created (or loaded) the table.
    """
    db = stmt.database or session.db
    if db is None:
        raise MySQLError.of(ER_NO_DB_ERROR)
    engine = session.server.engine
    names = [n for n in _filter(engine.tables(db), stmt.like) if privileges.visible(session, db, n)]
    columns = [_nullable_int(n) if n in _STATUS_INTS else text_column(n) for n in _STATUS_COLUMNS]
    return Rows(columns, [_table_status_row(engine.table(db, n)) for n in names])


def _show_columns(session: Session, stmt: ast.Show) -> Result:
    assert stmt.table is not None
    schema = resolve_table(session, stmt.table).schema
    rows = []
    for column in schema.columns:
        kind, key, default, extra = virtual_tables.column_facts(schema, column)
        rows.append([column.name, kind, "YES" if column.nullable else "NO", key, default, extra])
    return Rows(_texts("Field", "Type", "Null", "Key", "Default", "Extra"), rows)


def _show_processlist(session: Session, stmt: ast.Show) -> Result:
    return Rows(
        [
            int_column("Id"),
            *_texts("User", "Host", "db", "Command"),
            int_column("Time"),
            *_texts("State", "Info"),
        ],
        [list(row) for row in virtual_tables.processlist_rows(session)],
    )


def _show_engines(session: Session, stmt: ast.Show) -> Result:
    return Rows(
        _texts("Engine", "Support", "Comment", "Transactions", "XA", "Savepoints"),
        [list(row) for row in virtual_tables.ENGINE_ROWS],
    )


def _require_mysql_select(session: Session, other: Account | None) -> None:
    """SHOW GRANTS FOR another account needs SELECT on the mysql schema (1044)."""
    mine = session.account
    if mine is None or (other is not None and other.name == mine.name):
        return
    if not session.server.accounts.allowed(mine, "SELECT", "mysql"):
        raise MySQLError.of(ER_DBACCESS_DENIED_ERROR, mine.user, mine.host, "mysql")


def _show_grants(session: Session, stmt: ast.Show) -> Result:
    accounts = session.server.accounts
    if stmt.user is None or stmt.user.current:
        account = session.account
    else:
        account = accounts.get(stmt.user.user, stmt.user.host)
        _require_mysql_select(session, account)
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
    "CREATE DATABASE": _show_create_database,
    "INDEX": _show_index,
    "TABLE STATUS": _show_table_status,
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
