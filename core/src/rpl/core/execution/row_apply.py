"""Applying TABLE_MAP and rows events to the engine: the replica's applier and crash
recovery replay both go through :class:`RowApplier`.

What holds:

* A statement's rows events (up to the one flagged STMT_END_F) are applied as one
  statement of the session (:meth:`Session.run_statement`): all of them or, on an error,
  none; the session's transaction goes on or is rolled back by the caller.
* A row is found by its primary key, taken from the before image (FULL and MINIMAL
  images both carry it); UPDATE sets the after image's columns, WRITE takes the columns
  present (the others get their defaults).
* ``replica_exec_mode = STRICT``: a row that is missing is ER_KEY_NOT_FOUND (1032), a
  WRITE of a key that exists ER_DUP_ENTRY (1062). IDEMPOTENT: a missing row is skipped
  and a WRITE of an existing key overwrites the row, as MySQL's applier does.
* The TABLE_MAP must describe the table this server has: the same column count
  (ER_BINLOG_ROW_WRONG_TABLE_DEF, 1535) and each column's type and metadata
  (ER_SLAVE_CONVERSION_FAILED, 1677; no conversions are made). A rows event whose
  table_id no TABLE_MAP of its transaction mapped, or whose rows do not parse, is
  ER_SLAVE_CORRUPT_EVENT (1610). Errors are worded as MySQL's Last_SQL_Error words them:
  "Could not execute Write_rows event on table d.t; ..., Error_code: N; ...".
"""

from __future__ import annotations

from collections.abc import Sequence

from rpl.core.binlog.events import (
    NO_FOREIGN_KEY_CHECKS_F,
    BinlogColumn,
    DeleteRowsEvent,
    EventError,
    Image,
    RowsEvent,
    TableMapEvent,
    UpdateRowsEvent,
    WriteRowsEvent,
    binlog_column,
)
from rpl.core.engine import Table, TableSchema, Transaction
from rpl.core.engine.coercion import coerce
from rpl.core.errors import (
    ER_BINLOG_EVENT_CORRUPT,
    ER_BINLOG_ROW_WRONG_TABLE_DEF,
    ER_DUP_ENTRY,
    ER_KEY_NOT_FOUND,
    ER_NO_REFERENCED_ROW_2,
    ER_ROW_IS_REFERENCED_2,
    ER_SLAVE_CONVERSION_FAILED,
    MySQLError,
)
from rpl.core.execution.session import Session

_EVENT_NAMES = {WriteRowsEvent: "Write_rows", UpdateRowsEvent: "Update_rows"}
_HANDLER_ERRORS = {
    ER_DUP_ENTRY.errno: "HA_ERR_FOUND_DUPP_KEY",
    ER_KEY_NOT_FOUND.errno: "HA_ERR_KEY_NOT_FOUND",
    ER_NO_REFERENCED_ROW_2.errno: "HA_ERR_NO_REFERENCED_ROW",
    ER_ROW_IS_REFERENCED_2.errno: "HA_ERR_ROW_IS_REFERENCED",
}


class RowApplier:
    """One transaction's table maps, and the rows events of its running statement."""

    def __init__(self, session: Session, idempotent: bool = False) -> None:
        self.session = session
        self.idempotent = idempotent
        self.source_file = ""
        """The source's binlog file the events come from (for error messages)."""
        self._maps: dict[int, TableMapEvent] = {}
        self._pending: list[tuple[RowsEvent, int]] = []

    def table_map(self, event: TableMapEvent) -> None:
        """Remember the table a table_id stands for, until the transaction ends."""
        self._maps[event.table_id] = event

    def rows(self, event: RowsEvent, end_log_pos: int = 0, statement: str | None = None) -> None:
        """Take a rows event; at the statement's last (STMT_END_F) apply the statement's
        rows (``statement``: its ROWS_QUERY text, logged again if this server logs rows
        queries). MySQLError as the module docstring says.
        """
        self._pending.append((event, end_log_pos))
        if event.flags & 0x1:
            self.end_statement(statement)

    def end_statement(self, statement: str | None = None) -> None:
        """Apply the pending rows events as one statement (also at the transaction's end,
        for a stream whose last rows event lacked STMT_END_F).
        """
        pending, self._pending = self._pending, []
        if not pending:
            return
        planned = [self._plan(event, pos) for event, pos in pending]
        session = self.session
        session.statement_text = statement
        session.session_vars["binlog_format"] = "ROW"
        session.run_statement(lambda trx: self._apply_all(trx, planned))

    def end_transaction(self) -> None:
        """The transaction ends: apply what is pending and forget its table maps."""
        self.end_statement()
        self._maps.clear()

    def reset(self) -> None:
        """Forget everything (the transaction was rolled back)."""
        self._maps.clear()
        self._pending = []

    # ------------------------------------------------------------------ plan
    def _plan(self, event: RowsEvent, end_log_pos: int) -> _Planned:
        table_map = self._maps.get(event.table_id)
        if table_map is None:
            raise self._error(
                event,
                None,
                end_log_pos,
                MySQLError.of(ER_BINLOG_EVENT_CORRUPT),
                f"table_id {event.table_id} was not mapped by a TABLE_MAP of this transaction",
            )
        table = self.session.server.engine.table(table_map.db, table_map.table)
        try:
            _check_columns(table_map, table.schema)
            images = event.images(table_map)
        except EventError as exc:
            raise self._error(
                event, table_map, end_log_pos, MySQLError.of(ER_BINLOG_EVENT_CORRUPT), str(exc)
            ) from exc
        except MySQLError as exc:
            raise self._error(event, table_map, end_log_pos, exc) from exc
        return _Planned(event, table_map, table, images, end_log_pos)

    # ----------------------------------------------------------------- apply
    def _apply_all(self, trx: Transaction, planned: list[_Planned]) -> None:
        # FOREIGN KEYs are checked (and cascade) unless the source ran the statement with
        # foreign_key_checks = 0, which its rows events say (NO_FOREIGN_KEY_CHECKS_F)
        trx.foreign_key_checks = not any(p.event.flags & NO_FOREIGN_KEY_CHECKS_F for p in planned)
        for plan in planned:
            try:
                self._apply(trx, plan)
            except MySQLError as exc:
                if exc.errno in _HANDLER_ERRORS:
                    raise self._error(plan.event, plan.table_map, plan.end_log_pos, exc) from exc
                raise

    def _apply(self, trx: Transaction, plan: _Planned) -> None:
        event, table = plan.event, plan.table
        schema = table.schema
        if isinstance(event, UpdateRowsEvent):
            assert event.columns_after is not None
            images = plan.images
            for before, after in zip(images[::2], images[1::2], strict=True):
                self._update(trx, table, _key(schema, event.columns, before), event, after)
            return
        for image in plan.images:
            if isinstance(event, WriteRowsEvent):
                self._write(trx, table, _named(schema, event.columns, image))
            elif isinstance(event, DeleteRowsEvent):
                pk = _key(schema, event.columns, image)
                if trx.delete(table, pk) is None and not self.idempotent:
                    raise MySQLError.of(ER_KEY_NOT_FOUND, schema.name)

    def _write(self, trx: Transaction, table: Table, values: dict[str, object]) -> None:
        savepoint = trx.savepoint()
        try:
            trx.insert(table, values)
        except MySQLError as exc:
            if exc.errno != ER_DUP_ENTRY.errno or not self.idempotent:
                raise
            trx.rollback_to(savepoint)
            schema = table.schema
            row = [values.get(c.name) for c in schema.columns]
            pk = _key(schema, (True,) * len(row), row)
            trx.update(table, pk, values)

    def _update(
        self,
        trx: Transaction,
        table: Table,
        pk: object,
        event: UpdateRowsEvent,
        after: Image,
    ) -> None:
        assert event.columns_after is not None
        values = _named(table.schema, event.columns_after, after)
        if trx.update(table, pk, values) is None and not self.idempotent:
            raise MySQLError.of(ER_KEY_NOT_FOUND, table.schema.name)

    def _error(
        self,
        event: RowsEvent,
        table_map: TableMapEvent | None,
        end_log_pos: int,
        cause: MySQLError,
        detail: str = "",
    ) -> MySQLError:
        """``cause`` as Last_SQL_Error words a failed rows event."""
        name = _EVENT_NAMES.get(type(event), "Delete_rows")
        where = f" on table {table_map.db}.{table_map.table}" if table_map is not None else ""
        handler = _HANDLER_ERRORS.get(cause.errno)
        text = cause.message + (f" ({detail})" if detail else "")
        message = (
            f"Could not execute {name} event{where}; {text}, Error_code: {cause.errno}; "
            + (f"handler error {handler}; " if handler else "")
            + f"the event's master log {self.source_file or 'FIRST'}, end_log_pos {end_log_pos}"
        )
        return MySQLError(cause.errno, cause.sqlstate, message)


class _Planned:
    """A rows event checked against its table, its images decoded."""

    __slots__ = ("event", "table_map", "table", "images", "end_log_pos")

    def __init__(
        self,
        event: RowsEvent,
        table_map: TableMapEvent,
        table: Table,
        images: tuple[Image, ...],
        end_log_pos: int,
    ) -> None:
        self.event = event
        self.table_map = table_map
        self.table = table
        self.images = images
        self.end_log_pos = end_log_pos


_CHECKED: dict[tuple[int, int], tuple[TableMapEvent, TableSchema]] = {}
"""(table map, table definition) pairs found to match, by identity (emptied past 1024)."""


def _check_columns(table_map: TableMapEvent, schema: TableSchema) -> None:
    """1535 when the column counts differ, 1677 at the first column whose type differs;
    a pair that matched once is not compared again.
    """
    key = (id(table_map), id(schema))
    checked = _CHECKED.get(key)
    if checked is not None and checked[0] is table_map and checked[1] is schema:
        return
    _compare_columns(table_map, schema)
    if len(_CHECKED) >= 1024:
        _CHECKED.clear()
    _CHECKED[key] = (table_map, schema)


def _compare_columns(table_map: TableMapEvent, schema: TableSchema) -> None:
    if len(table_map.columns) != len(schema.columns):
        raise MySQLError.of(
            ER_BINLOG_ROW_WRONG_TABLE_DEF,
            f"Table '{schema.db}.{schema.name}' has {len(schema.columns)} columns here, "
            f"the source's has {len(table_map.columns)}",
        )
    for i, (theirs, column) in enumerate(zip(table_map.columns, schema.columns, strict=True)):
        try:
            ours: BinlogColumn | None = binlog_column(column, column.members)
        except ValueError:
            ours = None
        if ours is None or (ours.type_code, ours.metadata) != (theirs.type_code, theirs.metadata):
            raise MySQLError.of(
                ER_SLAVE_CONVERSION_FAILED,
                i,
                schema.db,
                schema.name,
                _type_text(theirs),
                column.type_name.lower(),
            )


def _type_text(column: BinlogColumn) -> str:
    return f"type {column.type_code} ({column.metadata.hex() or 'no metadata'})"


def _named(schema: TableSchema, present: Sequence[bool], image: Image) -> dict[str, object]:
    """The image's values by column name."""
    names = [c.name for c, bit in zip(schema.columns, present, strict=True) if bit]
    return dict(zip(names, image, strict=True))


def _key(schema: TableSchema, present: Sequence[bool], image: Sequence[object]) -> object:
    """The primary key value an image names (its key columns coerced as stored);
    ER_KEY_NOT_FOUND if the image lacks a key column.
    """
    values: list[object] = [None] * len(schema.columns)
    it = iter(image)
    for i, bit in enumerate(present):
        if bit:
            values[i] = next(it)
    for i in schema.pk_positions:
        if not present[i]:
            raise MySQLError.of(ER_KEY_NOT_FOUND, schema.name)
        values[i] = coerce(schema.columns[i], values[i])
    return schema.key_of(tuple(values))  # type: ignore[arg-type]
