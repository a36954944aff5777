"""Client histories for ``rpl validate --history``, and the rows the logs say were written.

A history is JSON lines, one operation each, as a test or benchmark records them::

    {"client": "writer-3", "op": "write", "table": "d.t", "key": "17", "value": "w3",
     "start": 1795333049.01, "end": 1795333049.02, "outcome": "ok", "node": "replica1"}
    {"client": "reader-0", "op": "read", "table": "d.t", "key": "17", "value": "w3",
     "start": ..., "end": ..., "outcome": "ok"}

``op`` is ``write`` or ``read``; ``outcome`` is ``ok`` (the client saw success), ``fail``
(it saw an error) or ``unknown`` (the connection broke before the answer); ``value`` of a
read is null when the read found no row. ``node`` names the node an acknowledged write, or
the value an ``ok`` read returned, must be on (optional; ``--node`` names it for every
record without one; with neither, every node given must hold an acknowledged write, and
a read's value must have been committed on some node). Keys and values are compared as
text.

A row's key is its first column and its value its second, in the order the statement
names them (its column list, or the table's order when it has none): what the logs hold
is read from the statements of complete transactions with the project's own SQL parser.
``INSERT`` and ``REPLACE`` write one row per VALUES tuple; ``UPDATE t SET c = <literal>
WHERE k = <literal>`` writes value c for key k. Other statements write nothing the
history can name.

A transaction logged in rows (``binlog_format=ROW``) is read from its rows events
instead: each WRITE_ROWS row, and each UPDATE_ROWS row's after image, writes the value
of the table's second column for the key in its first (a column the after image lacks
is taken from the before image), read against the TABLE_MAP of its table_id; the same
(table, key, value) text the statement gives (an INT key ``17``, a VARCHAR value
``w3``). DELETE_ROWS writes nothing, as DELETE does.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Final

import attrs

from rpl.core.binlog.events import RowsEvent, TableMapEvent, UpdateRowsEvent, WriteRowsEvent
from rpl.core.binlog.events.row_values import RowValue
from rpl.core.errors import MySQLError
from rpl.core.sql import ast
from rpl.core.sql.parser import parse

WRITE: Final = "write"
READ: Final = "read"
OUTCOMES: Final = frozenset(("ok", "fail", "unknown"))


class HistoryError(ValueError):
    """A history line that is not a valid record (a usage error, exit code 2)."""


@attrs.frozen
class Operation:
    """One client operation."""

    client: str
    op: str
    table: str
    key: str
    value: str | None
    start: float
    end: float
    outcome: str
    node: str = ""
    line: int = 0


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def parse_record(text: str, line: int) -> Operation:
    """One history line; HistoryError saying what is wrong with it."""
    try:
        record = json.loads(text)
    except json.JSONDecodeError as exc:
        raise HistoryError(f"history line {line}: not JSON ({exc.msg})") from exc
    if not isinstance(record, dict):
        raise HistoryError(f"history line {line}: not a JSON object")
    missing = [k for k in ("client", "op", "table", "key", "outcome") if k not in record]
    if missing:
        raise HistoryError(f"history line {line}: missing {', '.join(missing)}")
    if record["op"] not in (WRITE, READ):
        raise HistoryError(f"history line {line}: op {record['op']!r} is not write or read")
    if record["outcome"] not in OUTCOMES:
        raise HistoryError(
            f"history line {line}: outcome {record['outcome']!r} is not one "
            f"of {', '.join(sorted(OUTCOMES))}"
        )
    return Operation(
        str(record["client"]),
        record["op"],
        str(record["table"]),
        str(record["key"]),
        _text(record.get("value")),
        float(record.get("start", 0)),
        float(record.get("end", 0)),
        record["outcome"],
        str(record.get("node") or ""),
        line,
    )


def read_history(path: str | Path) -> Iterator[Operation]:
    """The operations of a history file (blank lines skipped)."""
    with Path(path).open(encoding="utf-8") as f:
        for number, text in enumerate(f, 1):
            if text.strip():
                yield parse_record(text, number)


def write_history(path: str | Path, operations: Iterable[Operation]) -> None:
    """Write ``operations`` as a history file (what test harnesses call)."""
    with Path(path).open("w", encoding="utf-8") as f:
        for operation in operations:
            record = attrs.asdict(operation)
            del record["line"]
            f.write(json.dumps(record) + "\n")


# -- what the logs say was written -----------------------------------------------------------


def _table(name: ast.TableName, db: str) -> str:
    return f"{name.schema or db}.{name.name}"


def _literal(expr: object) -> str | None:
    if isinstance(expr, ast.Literal):
        return None if expr.value is None else _literal_text(expr.value)
    return None


def _literal_text(value: object) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "surrogateescape")
    return str(value)


def _insert_rows(statement: ast.Insert, db: str) -> Iterator[tuple[str, str, str]]:
    table = _table(statement.table, db)
    for row in statement.rows:
        if len(row) >= 2:
            key, value = _literal(row[0]), _literal(row[1])
            if key is not None and value is not None:
                yield table, key, value


def _update_rows(statement: ast.Update, db: str) -> Iterator[tuple[str, str, str]]:
    where = statement.where
    if len(statement.assignments) != 1 or not isinstance(where, ast.Binary) or where.op != "=":
        return
    value = _literal(statement.assignments[0].value)
    key = _literal(where.right)
    if key is not None and value is not None:
        yield _table(statement.table, db), key, value


def written_rows(statements: Iterable[tuple[str, str]]) -> list[tuple[str, str, str]]:
    """(table, key, value) of the rows the statements (``(db, sql)`` pairs of one
    committed transaction) wrote, as far as a history can name them.
    """
    rows: list[tuple[str, str, str]] = []
    for db, sql in statements:
        head = sql.lstrip()[:7].upper()
        if not head.startswith(("INSERT", "REPLACE", "UPDATE")):
            continue
        try:
            statement = parse(sql)
        except MySQLError:
            continue
        if isinstance(statement, ast.Insert):
            rows += _insert_rows(statement, db)
        elif isinstance(statement, ast.Update):
            rows += _update_rows(statement, db)
    return rows


def _image(present: tuple[bool, ...], image: tuple[RowValue, ...]) -> dict[int, RowValue]:
    """A row image as column index -> value (the columns it has)."""
    columns = [i for i, bit in enumerate(present) if bit]
    return dict(zip(columns, image, strict=True))


def _pair(row: dict[int, RowValue], table: str) -> tuple[str, str, str] | None:
    key, value = row.get(0), row.get(1)
    if key is None or value is None:
        return None
    return table, _literal_text(key), _literal_text(value)


def rows_written(table_map: TableMapEvent, event: RowsEvent) -> list[tuple[str, str, str]]:
    """(table, key, value) of the rows a WRITE_ROWS or UPDATE_ROWS event wrote, read
    against its TABLE_MAP (see the module docstring); EventError if the event does not
    match it.
    """
    table = f"{table_map.db}.{table_map.table}"
    written: list[tuple[str, str, str]] = []
    if isinstance(event, UpdateRowsEvent):
        after_columns = event.columns_after or event.columns
        for before, after in event.updates(table_map):
            row = _image(event.columns, before) | _image(after_columns, after)
            found = _pair(row, table)
            if found is not None:
                written.append(found)
    elif isinstance(event, WriteRowsEvent):
        for image in event.images(table_map):
            found = _pair(_image(event.columns, image), table)
            if found is not None:
                written.append(found)
    return written
