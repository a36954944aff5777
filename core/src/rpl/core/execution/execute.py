"""Statement dispatch: parse, check, run, and the session's expression context.

Every statement goes through :func:`execute`: it is parsed, the previous
statement's warnings move to SHOW WARNINGS, the statement runs, and a MySQLError
becomes the client's ERR packet. The session and the server keep serving whatever
the statement was.
"""

from __future__ import annotations

import contextlib
import datetime
import sys
from collections.abc import Iterator
from typing import cast

from rpl.core.errors import (
    ER_INCORRECT_GLOBAL_LOCAL_VAR,
    ER_NOT_SUPPORTED_YET,
    ER_OPTION_PREVENTS_STATEMENT,
    ER_STACK_OVERRUN_NEED_MORE,
    MySQLError,
)
from rpl.core.execution import privileges, sysvars, virtual_tables
from rpl.core.execution.expressions import Context
from rpl.core.execution.results import Result, Rows
from rpl.core.execution.session import Session
from rpl.core.execution.sysvars import SERVER_VERSION
from rpl.core.execution.transactions import after_statement, before_statement
from rpl.core.hex_literal import HexBytes
from rpl.core.sql import ast
from rpl.core.sql.parser import parse
from rpl.observers import Scope


class SessionContext(Context):
    """Variables and server functions as one session sees them."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def variable(self, name: str, scope: str | None) -> object:
        """@@[scope.]name: the session value unless GLOBAL is asked for."""
        session = self.session
        server = session.server
        key = name.lower()
        computed = server.computed_variables.get(key)
        if computed is not None:
            return computed(session)
        entry = server.variables.lookup(name)
        definition = entry.definition
        if scope == "GLOBAL":
            return server.variables.get_global(name)
        if scope == "SESSION" and definition.scope is Scope.GLOBAL:
            raise MySQLError.of(ER_INCORRECT_GLOBAL_LOCAL_VAR, definition.name, "GLOBAL")
        value = session.setting(definition.name)
        return int(value) if isinstance(value, bool) else value

    def user_variable(self, name: str) -> object:
        """@name, NULL when unset."""
        return self.session.user_vars.get(name.lower())

    def set_user_variable(self, name: str, value: object) -> None:
        """``@name := value`` and SET @name = value. A hexadecimal literal is kept as the
        binary string it is (MySQL's ``SET @v = X'41'`` holds ``'A'``, which ``@v + 0``
        reads as 0).
        """
        kept = bytes(value) if isinstance(value, HexBytes) else value
        self.session.user_vars[name.lower()] = kept

    def function(self, name: str, args: list[object]) -> object:
        """Functions that need the session or the server."""
        session = self.session
        if name in ("DATABASE", "SCHEMA"):
            return session.db
        if name in ("USER", "SESSION_USER", "SYSTEM_USER"):
            return f"{session.user}@{session.host}"
        if name == "CURRENT_USER":
            account = session.account
            return f"{account.user}@{account.host}" if account else "skip-grants user@"
        if name == "VERSION":
            return SERVER_VERSION
        if name == "CONNECTION_ID":
            return session.thread_id
        if name == "LAST_INSERT_ID":
            return session.last_insert_id
        if name in ("NOW", "CURRENT_TIMESTAMP", "SYSDATE", "LOCALTIMESTAMP"):
            return datetime.datetime.now().replace(microsecond=0)
        if name == "UNIX_TIMESTAMP":
            return int(datetime.datetime.now().timestamp())
        provided = session.server.functions.get(name)
        if provided is not None:
            return provided(session, args)
        raise MySQLError.of(ER_NOT_SUPPORTED_YET, f"function {name}")


CATALOG_STATEMENTS = (
    ast.CreateTable,
    ast.DropTable,
    ast.CreateDatabase,
    ast.DropDatabase,
    ast.CreateIndex,
    ast.CreateUser,
    ast.AlterUser,
    ast.DropUser,
    ast.Grant,
    ast.Revoke,
)
"""Statements that change the catalogue or the accounts before they are binlogged."""

ROW_WRITES = (ast.Insert, ast.Update, ast.Delete)
"""Statements a READ ONLY transaction refuses (transaction_read_only)."""

WRITE_STATEMENTS = (*ROW_WRITES, *CATALOG_STATEMENTS)
"""Statements read_only refuses to client sessions."""


def check_read_only(session: Session) -> None:
    """ER_OPTION_PREVENTS_STATEMENT for a client write on a read_only server: SUPER
    (or CONNECTION_ADMIN) passes read_only but not super_read_only; the applier and
    recovery (sessions without an account) always pass.
    """
    account = session.account
    if account is None:
        return
    variables = session.server.variables
    if variables.get_global("super_read_only"):
        raise MySQLError.of(ER_OPTION_PREVENTS_STATEMENT, "--super-read-only")
    if variables.get_global("read_only") and not any(
        session.server.accounts.allowed(account, p) for p in ("SUPER", "CONNECTION_ADMIN")
    ):
        raise MySQLError.of(ER_OPTION_PREVENTS_STATEMENT, "--read-only")


FRAME_BYTES = 1024
"""What ER_STACK_OVERRUN_NEED_MORE counts a Python frame as: its byte figures are the
interpreter's recursion limit and depth, at this many bytes a frame."""


def execute(session: Session, sql: str) -> Result:
    """Run one statement for ``session``; MySQLError on failure.

    A statement nested deeper than the interpreter's recursion limit (a thousand
    parentheses, an expression of thousands of terms) gets MySQL's 1436 and changes
    nothing (the statement's savepoint is rolled back as for any error).
    """
    commands = session.server.plugin_commands
    if commands:
        command = commands.match(sql)
        if command is not None:
            session.warnings = []
            session.server.questions += 1
            return commands.run(session, command)
    try:
        return execute_parsed(session, parse(sql), sql)
    except RecursionError:
        raise stack_overrun() from None


@contextlib.contextmanager
def stack_guard() -> Iterator[None]:
    """Turn a RecursionError (a statement nested past the interpreter's recursion limit,
    in parsing, compiling or evaluating it) into MySQL's 1436.
    """
    try:
        yield
    except RecursionError:
        raise stack_overrun() from None


def stack_overrun() -> MySQLError:
    """MySQL's 1436 for a RecursionError (the statement path catches it itself: a
    ``try`` costs nothing, a context manager a generator per statement).
    """
    stack = sys.getrecursionlimit() * FRAME_BYTES
    return MySQLError.of(ER_STACK_OVERRUN_NEED_MORE, stack, stack, FRAME_BYTES)


def limit_rows(session: Session, statement: ast.Select, result: Result) -> Result:
    """A top-level SELECT without LIMIT returns at most sql_select_limit rows (what
    JDBC's setMaxRows and ``mysql --safe-updates`` set).
    """
    if statement.limit is not None or not isinstance(result, Rows):
        return result
    limit = int(cast(int, session.setting("sql_select_limit")))
    if len(result.rows) <= limit:
        return result
    return Rows(result.columns, result.rows[:limit])


def execute_parsed(
    session: Session, statement: ast.Statement, sql: str, question: bool = True
) -> Result:
    """Run ``statement``, parsed from ``sql`` (a prepared statement: built with its
    parameters, ``sql`` its text with their values), as :func:`execute` runs a text one:
    warnings, dispatch, read_only, the DDL lock; ``sql`` is what the binlog logs.
    ``question``: whether it counts in ``Questions`` (SQL EXECUTE's statement does not:
    the EXECUTE that the client sent counted).
    """
    keep_warnings = isinstance(statement, ast.Show) and statement.kind in ("WARNINGS", "ERRORS")
    if not keep_warnings:
        session.warnings = []
    handler = session.server.dispatch.handler_for(statement)
    if handler is None:
        raise MySQLError.of(ER_NOT_SUPPORTED_YET, type(statement).__name__)
    if question:
        session.server.questions += 1
    session.statement_text = sql
    privileges.check(session, statement)
    writes = isinstance(statement, WRITE_STATEMENTS)
    if writes:
        check_read_only(session)
        virtual_tables.refuse_statement(session, statement)
    if isinstance(statement, ast.Update | ast.Delete):
        sysvars.check_safe_update(session, statement)
    if isinstance(statement, ROW_WRITES) and not session.server.delegates.transaction.is_empty(
        "before_dml"
    ):
        table = statement.table
        session.before_dml(table.schema or session.db or "", table.name)
    statement = before_statement(session, statement, writes)
    try:
        if isinstance(statement, CATALOG_STATEMENTS):
            with session.server.ddl_lock:
                return handler(session, statement, sql)
        if isinstance(statement, ast.Select):
            return limit_rows(session, statement, handler(session, statement, sql))
        return handler(session, statement, sql)
    except RecursionError:
        raise stack_overrun() from None
    finally:
        after_statement(session)
        if not keep_warnings:
            session.previous_warnings = session.warnings
