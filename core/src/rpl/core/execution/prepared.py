"""Prepared statements: the binary protocol's COM_STMT_* and SQL PREPARE / EXECUTE /
DEALLOCATE PREPARE, over one registry per server.

What holds, and why:

* **One execution path.** A prepared statement is parsed once, at PREPARE (the parser's
  ``?`` placeholders, counted in text order). Each execution builds the statement with
  its parameters as literals, by the builders the shape cache rebuilds its statements
  with (:func:`rpl.core.sql.shapes.builder`), and runs it through
  :func:`rpl.core.execution.execute.execute_parsed` as a text statement runs: dispatch,
  read_only, warnings, the commit path and the binlog. The text the statement runs as
  (``statement_text``: ROWS_QUERY events, DDL's QUERY event, SHOW PROCESSLIST) is the
  statement with each ``?`` replaced by its value quoted as a literal
  (:func:`rpl.core.sql.ast.quote_literal`), as MySQL logs a prepared statement; that
  text parses back to the very statement that ran (but for the names of select items,
  which stay as written, ``?`` included, as MySQL names the columns; tested with
  hypothesis). Should a tree hold a node the builders cannot rebuild from its fields
  (the first build, at PREPARE, fails), the statement is bound by parsing that text
  instead: slower, the same statement.
* **Statements belong to their connection.** Ids count from 1 in each connection; SQL
  PREPARE's names and the protocol's ids share the connection's statements, as in
  MySQL. COM_RESET_CONNECTION and the connection's end free them.
  ``max_prepared_stmt_count`` bounds the server's total (1461 beyond it);
  ``Prepared_stmt_count`` is that total.
* **The columns at PREPARE are the columns of an execution.** They come from running
  the statement once with no row able to match (WHERE FALSE, LIMIT 0, no locking
  read) and NULL parameters, so a client's result metadata (``mysql_stmt_result_metadata``)
  has the same columns, in number and type, as the result sets its executions send. A
  transaction that probe opened (``autocommit=0``) is ended: a PREPARE opens none.
* **Bad input changes nothing.** An unknown statement id is 1243; a parameter block
  that does not hold the statement's parameters (short, an unknown type, a length
  past the end, no types ever sent) is 1210 and nothing runs; the connection goes on.
"""

from __future__ import annotations

import decimal
import math
import threading
from collections.abc import Callable
from typing import Final, cast

import attrs

from rpl.core.errors import (
    ER_MAX_PREPARED_STMT_COUNT_REACHED,
    ER_NOT_SUPPORTED_YET,
    ER_PS_MANY_PARAM,
    ER_STMT_HAS_NO_OPEN_CURSOR,
    ER_UNKNOWN_ERROR,
    ER_UNKNOWN_STMT_HANDLER,
    ER_UNSUPPORTED_PS,
    ER_WRONG_ARGUMENTS,
    MySQLError,
)
from rpl.core.execution import privileges
from rpl.core.execution.execute import execute_parsed, stack_guard
from rpl.core.execution.results import Ok, Result, Rows
from rpl.core.execution.session import Session
from rpl.core.net import binary
from rpl.core.net.packets import PayloadReader, ProtocolError
from rpl.core.net.responses import Column
from rpl.core.sql import ast, shapes
from rpl.core.sql.lexer import K_OP, tokenize
from rpl.core.sql.parser import parse
from rpl.observers import StatusValue, SystemVariable, VarType

MAX_PREPARED_STMT_COUNT: Final = 16382
"""``max_prepared_stmt_count``'s default, as MySQL 8.0's."""
MAX_PARAMETERS: Final = 65535
"""Placeholders a statement may hold (PREPARE_OK counts them in two bytes)."""
COMMAND_COUNTERS: Final = (
    "Com_stmt_prepare",
    "Com_stmt_execute",
    "Com_stmt_close",
    "Com_stmt_reset",
    "Com_stmt_send_long_data",
    "Com_stmt_fetch",
)
"""The status counters of the COM_STMT_* commands (SQL EXECUTE and DEALLOCATE count as
executions and closes)."""
_LONG_DATA_TOO_LONG: Final = (
    "Parameter of prepared statement which is set through mysql_send_long_data() is longer "
    "than 'max_allowed_packet' bytes"
)
"""MySQL's text (ER_UNKNOWN_ERROR) for long data past max_allowed_packet."""
_NOT_PREPARABLE: Final = (ast.Prepare, ast.ExecutePrepared, ast.DeallocatePrepare)


@attrs.define
class PreparedStatement:
    """One prepared statement: its text, its parsed tree and what executions share.

    ``markers`` are the offsets of the ``?`` in ``text``; ``types`` the parameter types
    of the last execution (a client sends them only when they change); ``long_data``
    what COM_STMT_SEND_LONG_DATA sent for the next execution, by parameter; ``error``
    the error a SEND_LONG_DATA left for the next execution to report.
    """

    statement_id: int
    name: str | None
    text: str
    template: ast.Statement
    build: shapes.Builder | None
    markers: tuple[int, ...]
    limits: tuple[tuple[str, int], ...]
    columns: list[Column]
    types: binary.ParameterTypes | None = None
    long_data: dict[int, bytearray] = attrs.Factory(dict)
    error: MySQLError | None = None
    by_text: bool = False
    """Bind by parsing the text with the values in it: the tree's builder failed at
    PREPARE (a node that cannot be rebuilt from its fields), see :func:`prepare`."""
    pieces: tuple[str, ...] = ()
    """The text around the ``?`` markers (:func:`_pieces`), cut at the first execution."""

    @property
    def param_count(self) -> int:
        """The number of ``?`` parameters."""
        return len(self.markers)

    def bind(self, values: list[binary.ParameterValue]) -> tuple[ast.Statement, str]:
        """The statement to run with ``values`` for its parameters, and its text with them
        quoted in place of the ``?``; 1210 for a LIMIT parameter that is not a count.
        """
        text = self._text(values)
        statement = self.tree(values, text)
        if self.limits:
            statement = attrs.evolve(
                statement,
                **{field: _count(values[index]) for field, index in self.limits},
            )
        return statement, text

    def tree(self, values: list[binary.ParameterValue], text: str | None = None) -> ast.Statement:
        """The parsed statement with ``values`` as literals for its parameters (LIMIT and
        OFFSET parameters too: :meth:`bind` makes them counts).
        """
        if self.by_text:
            return parse(self._text(values) if text is None else text)
        if self.build is None:
            return self.template
        # a cast, not an isinstance test: the compiled build's isinstance against an attrs
        # base class (slotted: attrs made a new class) is false for its subclasses
        return cast(ast.Statement, self.build(values))

    def _text(self, values: list[binary.ParameterValue]) -> str:
        """The statement's text with each ``?`` replaced by its value as a literal (the
        text around the markers cut once, at PREPARE: :func:`_pieces`).
        """
        pieces = self.pieces
        if not pieces:  # cut at the first execution
            pieces = self.pieces = _pieces(self.text, self.markers)
        if len(pieces) == 1:
            return self.text
        if len(pieces) == 2:
            return pieces[0] + ast.quote_literal(values[0]) + pieces[1]
        out = [pieces[0]]
        for index in range(len(pieces) - 1):
            out.append(ast.quote_literal(values[index]))
            out.append(pieces[index + 1])
        return "".join(out)


def _pieces(text: str, markers: tuple[int, ...]) -> tuple[str, ...]:
    """``text`` cut at its ``?`` markers (the markers left out): one more piece than
    markers.
    """
    starts = (0, *(start + 1 for start in markers))
    ends = (*markers, len(text))
    return tuple(text[start:end] for start, end in zip(starts, ends, strict=True))


def _count(value: object) -> int:
    """A LIMIT/OFFSET parameter: a non-negative integer (or its text), else 1210."""
    try:
        count = int(value) if isinstance(value, int | str) else -1
    except ValueError:
        count = -1
    if count < 0:
        raise MySQLError.of(ER_WRONG_ARGUMENTS, "EXECUTE")
    return count


class ConnectionStatements:
    """One connection's prepared statements, by id and by SQL name."""

    def __init__(self) -> None:
        self.by_id: dict[int, PreparedStatement] = {}
        self.by_name: dict[str, PreparedStatement] = {}
        self.last_id = 0


class PreparedStatements:
    """The server's prepared statements: each connection's, their total and counters.

    ``max_count`` reads ``max_prepared_stmt_count``. The lock makes the total's check
    and the registration one step, so the bound holds across connections.
    """

    def __init__(self, max_count: Callable[[], int]) -> None:
        self._max_count = max_count
        self._lock = threading.Lock()
        self._connections: dict[int, ConnectionStatements] = {}
        self.count = 0
        self._commands = dict.fromkeys(COMMAND_COUNTERS, 0)

    def of(self, thread_id: int) -> ConnectionStatements:
        """The statements of connection ``thread_id`` (none yet: an empty set)."""
        statements = self._connections.get(thread_id)
        if statements is None:
            statements = self._connections[thread_id] = ConnectionStatements()
        return statements

    def add(self, thread_id: int, make: Callable[[int], PreparedStatement]) -> PreparedStatement:
        """Register the statement ``make`` builds with the connection's next id; 1461
        when the server already holds ``max_prepared_stmt_count`` statements.
        """
        with self._lock:
            limit = self._max_count()
            if self.count >= limit:
                raise MySQLError.of(ER_MAX_PREPARED_STMT_COUNT_REACHED, limit)
            statements = self.of(thread_id)
            statements.last_id += 1
            statement = make(statements.last_id)
            statements.by_id[statement.statement_id] = statement
            if statement.name is not None:
                statements.by_name[statement.name.lower()] = statement
            self.count += 1
            return statement

    def remove(self, thread_id: int, statement: PreparedStatement) -> None:
        """Deallocate ``statement`` (COM_STMT_CLOSE, DEALLOCATE PREPARE)."""
        with self._lock:
            statements = self._connections.get(thread_id)
            if statements is None or statements.by_id.pop(statement.statement_id, None) is None:
                return
            if statement.name is not None:
                statements.by_name.pop(statement.name.lower(), None)
            self.count -= 1

    def release(self, thread_id: int) -> None:
        """Free every statement of a connection that ended or was reset."""
        with self._lock:
            statements = self._connections.pop(thread_id, None)
            if statements is not None:
                self.count -= len(statements.by_id)

    def counted(self, command: str) -> None:
        """One more ``command`` (a name of :data:`COMMAND_COUNTERS`), under the lock: the
        counters are exact with any number of connections counting at once.
        """
        with self._lock:
            self._commands[command] += 1

    def status_getters(self) -> dict[str, Callable[[], StatusValue]]:
        """The status variables: ``Prepared_stmt_count`` and the ``Com_stmt_*`` counters."""
        getters: dict[str, Callable[[], StatusValue]] = {"Prepared_stmt_count": lambda: self.count}
        for name in COMMAND_COUNTERS:
            getters[name] = lambda name=name: self._commands[name]  # type: ignore[misc]
        return getters


def system_variables() -> list[SystemVariable]:
    """The system variables of prepared statements."""
    return [
        SystemVariable(
            "max_prepared_stmt_count",
            VarType.INT,
            MAX_PREPARED_STMT_COUNT,
            "the most prepared statements the server holds",
            min_value=0,
            max_value=4194304,
        )
    ]


# -------------------------------------------------------------------- PREPARE
def prepare(session: Session, text: str, name: str | None = None) -> PreparedStatement:
    """Parse ``text`` and register it for ``session``'s connection: 1064 for bad SQL,
    1235 for a statement the server does not run, 1461 past the server's bound.
    """
    registry = session.server.prepared_statements
    registry.counted("Com_stmt_prepare")
    with stack_guard():
        template = parse(text)
    if isinstance(template, _NOT_PREPARABLE):
        raise MySQLError.of(ER_UNSUPPORTED_PS)
    if session.server.dispatch.handler_for(template) is None:
        raise MySQLError.of(ER_NOT_SUPPORTED_YET, type(template).__name__)
    privileges.check(session, template)  # as MySQL, at PREPARE too: no columns of others
    markers = tuple(tok[3] for tok in tokenize(text) if tok[0] is K_OP and tok[1] == "?")
    if len(markers) > MAX_PARAMETERS:
        raise MySQLError.of(ER_PS_MANY_PARAM)
    build = shapes.builder(template)
    nulls: list[ast.LiteralValue] = [None] * len(markers)
    try:
        if build is not None:
            build(nulls)
    except Exception:  # noqa: BLE001 - a node the builders cannot rebuild: bind by text
        build = None
    statement = PreparedStatement(
        0,
        name,
        text,
        template,
        build,
        markers,
        _limit_parameters(template),
        [],
        by_text=build is None and bool(markers),
    )
    statement.columns = _result_columns(session, statement.tree(nulls))
    return registry.add(
        session.thread_id, lambda statement_id: attrs.evolve(statement, statement_id=statement_id)
    )


def _limit_parameters(template: ast.Statement) -> tuple[tuple[str, int], ...]:
    """(field, parameter index) of each ``LIMIT ?``/``OFFSET ?``: a count, not a literal."""
    return tuple(
        (field, value.index)
        for field in ("limit", "offset")
        if isinstance(value := getattr(template, field, None), ast.Placeholder)
    )


def _result_columns(session: Session, statement: ast.Statement) -> list[Column]:
    """The columns the executions of ``statement`` (bound with NULLs) send if it is a
    SELECT (see the module's docstring); none for the other statements. An error of the
    SELECT (an unknown table or column) is the PREPARE's, as in MySQL.
    """
    if not isinstance(statement, ast.Select):
        return []
    probe = attrs.evolve(statement, where=ast.Literal(False), limit=0, offset=None, lock=None)
    handler = session.server.dispatch.handler_for(probe)
    assert handler is not None
    warnings, opened = session.warnings, session.trx is None
    session.warnings = []
    try:
        result = handler(session, probe, "")
    finally:
        session.warnings = warnings
        if opened and session.trx is not None and not session.trx.changes():
            session.rollback()  # autocommit=0: the PREPARE opens no transaction
    return list(result.columns) if isinstance(result, Rows) else []


def find(session: Session, statement_id: int, command: str) -> PreparedStatement:
    """The connection's statement ``statement_id``; 1243 naming ``command`` otherwise."""
    registry = session.server.prepared_statements
    found = registry.of(session.thread_id).by_id.get(statement_id)
    if found is None:
        shown = str(statement_id)
        raise MySQLError.of(ER_UNKNOWN_STMT_HANDLER, len(shown), shown, command)
    return found


def _named(session: Session, name: str, command: str) -> PreparedStatement:
    found = session.server.prepared_statements.of(session.thread_id).by_name.get(name.lower())
    if found is None:
        raise MySQLError.of(ER_UNKNOWN_STMT_HANDLER, len(name), name, command)
    return found


# ----------------------------------------------------------- binary protocol
def com_stmt_prepare(session: Session, payload: bytes) -> list[bytes]:
    """COM_STMT_PREPARE: the PREPARE_OK payloads."""
    text = payload[1:].decode("utf-8", "surrogateescape")
    session.warnings = []
    statement = prepare(session, text)
    session.previous_warnings = session.warnings
    return binary.prepare_ok(
        statement.statement_id,
        statement.columns,
        statement.param_count,
        len(session.warnings),
    )


def com_stmt_execute(session: Session, payload: bytes) -> tuple[ast.Statement, str]:
    """COM_STMT_EXECUTE's statement with its parameters bound, and its text: 1243 for an
    unknown id, 1210 for a parameter block that does not hold the parameters (or an
    error SEND_LONG_DATA left). The long data is used up either way.
    """
    registry = session.server.prepared_statements
    registry.counted("Com_stmt_execute")
    reader = PayloadReader(payload, 1)
    try:
        statement_id = reader.uint(4)
    except ProtocolError:
        raise MySQLError.of(ER_WRONG_ARGUMENTS, "mysqld_stmt_execute") from None
    statement = find(session, statement_id, "mysqld_stmt_execute")
    long_data: dict[int, bytes] = {}
    if statement.long_data:
        long_data = {index: bytes(data) for index, data in statement.long_data.items()}
        statement.long_data = {}
    error = statement.error
    if error is not None:
        statement.error = None
        raise error
    try:
        reader.take(5)  # flags (a cursor is never opened: rows are sent at once), iterations
        values, types = binary.read_parameters(
            reader, statement.param_count, statement.types, long_data
        )
    except (ProtocolError, binary.ParameterError):
        raise MySQLError.of(ER_WRONG_ARGUMENTS, "mysqld_stmt_execute") from None
    for value in values:
        if isinstance(value, float) and not math.isfinite(value):
            raise MySQLError.of(ER_WRONG_ARGUMENTS, "mysqld_stmt_execute")  # NaN, infinities
    statement.types = types
    return statement.bind(values)


def com_stmt_send_long_data(session: Session, payload: bytes) -> None:
    """COM_STMT_SEND_LONG_DATA: append to a parameter's data (no reply, ever). An
    unknown statement is ignored; a parameter out of range leaves 1210 for the next
    execution to report, as MySQL does.
    """
    registry = session.server.prepared_statements
    registry.counted("Com_stmt_send_long_data")
    if len(payload) < 7:
        return
    statement_id = int.from_bytes(payload[1:5], "little")
    index = int.from_bytes(payload[5:7], "little")
    statement = registry.of(session.thread_id).by_id.get(statement_id)
    if statement is None:
        return
    if index >= statement.param_count:
        statement.error = MySQLError.of(ER_WRONG_ARGUMENTS, "mysqld_stmt_send_long_data")
        return
    data = statement.long_data.setdefault(index, bytearray())
    if len(data) + len(payload) - 7 > session.server.max_allowed_packet():
        # MySQL's bound on a parameter's long data (and on what a client can make the
        # server hold): the data is dropped, the next execution reports it
        statement.long_data.pop(index)
        statement.error = MySQLError.of(ER_UNKNOWN_ERROR, _LONG_DATA_TOO_LONG)
        return
    data.extend(payload[7:])


def com_stmt_close(session: Session, payload: bytes) -> None:
    """COM_STMT_CLOSE: deallocate (no reply, ever; an unknown id is ignored)."""
    registry = session.server.prepared_statements
    registry.counted("Com_stmt_close")
    statement_id = int.from_bytes(payload[1:5], "little")
    statement = registry.of(session.thread_id).by_id.get(statement_id)
    if statement is not None:
        registry.remove(session.thread_id, statement)


def com_stmt_reset(session: Session, payload: bytes) -> None:
    """COM_STMT_RESET: forget long data and a pending error; 1243 for an unknown id."""
    session.server.prepared_statements.counted("Com_stmt_reset")
    statement = find(session, _statement_id(payload, "mysqld_stmt_reset"), "mysqld_stmt_reset")
    statement.long_data, statement.error = {}, None


def com_stmt_fetch(session: Session, payload: bytes) -> None:
    """COM_STMT_FETCH: no cursor is ever open (executions send their rows at once), so
    1421 for a known statement, as MySQL answers without a cursor, and 1243 otherwise.
    """
    session.server.prepared_statements.counted("Com_stmt_fetch")
    statement_id = _statement_id(payload, "mysqld_stmt_fetch")
    find(session, statement_id, "mysqld_stmt_fetch")
    raise MySQLError.of(ER_STMT_HAS_NO_OPEN_CURSOR, statement_id)


def _statement_id(payload: bytes, command: str) -> int:
    if len(payload) < 5:
        raise MySQLError.of(ER_WRONG_ARGUMENTS, command)
    return int.from_bytes(payload[1:5], "little")


# ------------------------------------------------------------------------ SQL
def run_prepare(session: Session, stmt: ast.Prepare) -> Result:
    """PREPARE name FROM 'text' | @var. A statement of that name is deallocated first,
    so a PREPARE that fails leaves none (MySQL's rule).
    """
    registry = session.server.prepared_statements
    existing = registry.of(session.thread_id).by_name.get(stmt.name.lower())
    if existing is not None:
        registry.remove(session.thread_id, existing)
    text = stmt.text
    if stmt.variable is not None:
        value = session.user_vars.get(stmt.variable.lower())
        text = value.decode("utf-8", "surrogateescape") if isinstance(value, bytes) else str(value)
        if value is None:
            text = "NULL"
    assert text is not None
    prepare(session, text, stmt.name)
    return Ok(info="Statement prepared")


def run_execute(session: Session, stmt: ast.ExecutePrepared) -> Result:
    """EXECUTE name [USING @a, ...]: 1243 for an unknown name, 1210 for a USING list
    of another length than the statement's parameters.
    """
    statement = _named(session, stmt.name, "EXECUTE")
    session.server.prepared_statements.counted("Com_stmt_execute")
    if len(stmt.variables) != statement.param_count:
        raise MySQLError.of(ER_WRONG_ARGUMENTS, "EXECUTE")
    values = [_parameter(session.user_vars.get(name.lower())) for name in stmt.variables]
    bound, text = statement.bind(values)
    return execute_parsed(session, bound, text, question=False)


def _parameter(value: object) -> binary.ParameterValue:
    """A user variable's value as a parameter (a bool as MySQL's 1 or 0)."""
    if isinstance(value, bool):
        return int(value)
    if value is None or isinstance(value, int | float | str | bytes | decimal.Decimal):
        return value
    return str(value)


def run_deallocate(session: Session, stmt: ast.DeallocatePrepare) -> Result:
    """{DEALLOCATE | DROP} PREPARE name: 1243 for an unknown name."""
    statement = _named(session, stmt.name, "DEALLOCATE PREPARE")
    registry = session.server.prepared_statements
    registry.counted("Com_stmt_close")
    registry.remove(session.thread_id, statement)
    return Ok()
