"""The storage engine: databases, tables of rows keyed by primary key, and transactions.

The engine keeps the committed state in memory and nothing else: the server's binary log
is the write-ahead log, and at start the engine is rebuilt from a checkpoint
(:meth:`Engine.snapshot` / :meth:`Engine.restore`) plus replay of the binlog.

Semantics are InnoDB's (REPEATABLE READ and READ COMMITTED are the session's choice of
when to take a read view):

* Committed rows of a table live in a ``SortedDict`` from primary key value to row. The key
  value is the column's value itself for a one-column PRIMARY KEY and the tuple of the key
  columns' values (in key order) for a composite one (:meth:`TableSchema.key_of`). Keys are
  compared as Python values (a binary collation).
* A transaction's writes go to its own overlay (key -> row, ``None`` for deleted) until
  commit. Reads see committed rows with the overlay on top; other transactions'
  uncommitted writes are invisible, and plain reads take no locks.
* Every commit with writes gets the next commit sequence number (:attr:`Engine.commit_seq`).
  A consistent read (:attr:`Transaction.consistent_reads`) sees the rows as of the
  transaction's read view: the commit sequence number when the view was taken (at its
  first consistent read, or :meth:`Transaction.open_view`). A current read (writes,
  locking reads, and every read while ``consistent_reads`` is off) sees the latest
  committed rows.
* Multi-versioning keeps old rows only while a view needs them: with no view open a commit
  records nothing; with views open it first records, per key it changes, ``(its commit
  sequence number, the row it replaces)`` in :attr:`Table.history`; a view ``v`` reads a
  key as the first recorded version replaced after ``v``, else the latest row. Closing the
  oldest view drops what no remaining view needs, so memory is bounded by the writes made
  while the oldest open view lives. A commit publishes its sequence number once its rows
  are in place, and a view is registered before it reads that number, so every commit is
  either inside a view or sees it and keeps the rows it replaces (:meth:`Engine._open_view`).
  DDL is not versioned: DDL that rewrites a table's rows calls :meth:`Engine.table_rebuilt`,
  and a consistent read of that table through a view older than the rebuild fails with
  ER_TABLE_DEF_CHANGED (1412), as InnoDB's does.
* Every write first takes an exclusive lock on the primary key (:mod:`.locks`), held until
  commit or rollback; an INSERT of a key locked by another transaction therefore waits,
  then finds the key committed (ER_DUP_ENTRY) or free (the other rolled back).
* Commit applies the overlay to the committed rows under the engine's commit lock, then
  releases the row locks; a range read copies its rows under the same lock, so no read
  call ever sees part of a transaction. Committing first and unlocking second is what lets
  a writer that acquires a lock trust the committed rows for that key.
* AUTO_INCREMENT values are taken from a per-table counter that ROLLBACK does not give
  back, as InnoDB's.

Row-lock waits end with ER_LOCK_WAIT_TIMEOUT (the statement fails; the transaction stays
open, innodb_rollback_on_timeout=OFF) or ER_LOCK_DEADLOCK, after which the transaction has
been rolled back entirely: :attr:`Transaction.rolled_back_by_deadlock` is set and the
error carries ``rolled_back = True``.

Tables are not protected by metadata locks: dropping a table that an open transaction has
written leaves that transaction writing to the detached table at commit, harmlessly.
"""

from __future__ import annotations

import collections
import enum
import itertools
import pickle
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from decimal import Decimal
from typing import IO, Any, Final, Literal

import attrs
from sortedcontainers import SortedDict  # type: ignore[import-untyped]

from rpl.core.engine.coercion import Value, coerce
from rpl.core.engine.indexed_rows import IndexedRows
from rpl.core.engine.locks import LockKey, LockManager, LockOwner
from rpl.core.engine.schema import NO_DEFAULT, ColumnSchema, ForeignKey, Row, TableSchema
from rpl.core.engine.table_locks import TableLocks
from rpl.core.errors import (
    ER_BAD_DB_ERROR,
    ER_BAD_FIELD_ERROR,
    ER_BAD_TABLE_ERROR,
    ER_CANT_DROP_FIELD_OR_KEY,
    ER_DB_CREATE_EXISTS,
    ER_DB_DROP_EXISTS,
    ER_DUP_ENTRY,
    ER_ERROR_DURING_COMMIT,
    ER_LOCK_DEADLOCK,
    ER_NO_DEFAULT_FOR_FIELD,
    ER_NO_REFERENCED_ROW_2,
    ER_NO_SUCH_TABLE,
    ER_ROW_IS_REFERENCED_2,
    ER_TABLE_DEF_CHANGED,
    ER_TABLE_EXISTS_ERROR,
    ER_WRONG_VALUE_COUNT_ON_ROW,
    MySQLError,
)

Key = Any
"""A primary key value: the value for a one-column key, a tuple for a composite key."""

SNAPSHOT_MAGIC: Final = b"RPLENGINE\n"
SNAPSHOT_VERSION: Final = 1


class RowChange:
    """One row a transaction wrote: ``before`` is ``None`` for an insert, ``after`` for a
    delete. ``after`` holds resolved values (coerced, AUTO_INCREMENT generated), so
    replaying the change reproduces the row exactly.

    Immutable; a plain class, not attrs: every row written makes one, and the compiled
    build makes this class native.
    """

    __slots__ = ("kind", "table", "before", "after")

    def __init__(
        self,
        kind: Literal["insert", "update", "delete"],
        table: TableSchema,
        before: Row | None,
        after: Row | None,
    ) -> None:
        self.kind: Final = kind
        self.table: Final = table
        self.before: Final = before
        self.after: Final = after

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RowChange):
            return NotImplemented
        return (
            self.kind == other.kind
            and self.table == other.table
            and self.before == other.before
            and self.after == other.after
        )

    def __hash__(self) -> int:
        return hash((self.kind, self.table, self.before, self.after))

    def __repr__(self) -> str:
        return (
            f"RowChange(kind={self.kind!r}, table={self.table!r}, before={self.before!r}, "
            f"after={self.after!r})"
        )


class TransactionStateError(Exception):
    """An operation on a transaction that has committed or rolled back (a server bug)."""


class _State(enum.Enum):
    ACTIVE = "ACTIVE"
    COMMITTED = "COMMITTED"
    ROLLED_BACK = "ROLLED BACK"


_ABSENT: Final = object()


def _rows_for(schema: TableSchema, rows: Iterable[tuple[Key, Row]]) -> Any:
    """The committed-rows map for a table of ``schema``: with index entries when it has
    secondary indexes, a plain ``SortedDict`` otherwise.
    """
    return IndexedRows(schema, rows) if schema.indexes else SortedDict(rows)


class Table:
    """One table's committed rows and its AUTO_INCREMENT counter.

    ``rows`` maps primary key value to row in key order; only commits (under the engine's
    commit lock) change it. ``auto_increment`` is the next value to generate, as SHOW TABLE
    STATUS and SHOW CREATE TABLE report it.
    """

    def __init__(
        self,
        table_id: int,
        schema: TableSchema,
        commit_lock: threading.Lock,
        rows: Iterable[tuple[Key, Row]] = (),
        auto_increment: int = 1,
    ) -> None:
        self.id = table_id
        self.schema = schema
        self.rows: Any = _rows_for(schema, rows)
        self.rebuilt_at = 0
        """The commit sequence number of the last DDL that rewrote the rows (views older
        than it cannot read the table)."""
        self.history: Any = SortedDict()
        """Key -> ``[(commit sequence number, row before that commit or None), ...]`` in
        commit order: the versions open read views may still need (see :class:`Engine`)."""
        self.auto_increment = auto_increment
        self._commit_lock = commit_lock
        self._ai_lock = threading.Lock()
        self.create_time = time.time()
        """When this server created or loaded the table (SHOW TABLE STATUS)."""

    def __repr__(self) -> str:
        return f"<Table {self.schema.qualified_name} id={self.id} rows={len(self.rows)}>"

    def __len__(self) -> int:
        return len(self.rows)

    def next_auto_increment(self, increment: int = 1, offset: int = 1) -> int:
        """Consume and return the next AUTO_INCREMENT value.

        The value is the smallest ``offset + k * increment`` not below the counter
        (auto_increment_increment / auto_increment_offset); it is never handed out again,
        whatever becomes of the transaction.
        """
        with self._ai_lock:
            value = self.auto_increment
            if increment > 1:
                base = offset if offset <= increment else 1
                if value <= base:
                    value = base
                else:
                    value = base + -(-(value - base) // increment) * increment
            self.auto_increment = value + 1
            return value

    def note_auto_increment(self, value: Value) -> None:
        """Move the counter past an explicitly written ``value`` (a no-op below it)."""
        if isinstance(value, int | float | Decimal) and value > 0:
            with self._ai_lock:
                if value >= self.auto_increment:
                    self.auto_increment = int(value) + 1

    def set_auto_increment(self, value: int) -> None:
        """ALTER TABLE ... AUTO_INCREMENT = ``value``: never below the largest key + 1."""
        auto_pos = self.schema.auto_increment_position
        with self._commit_lock:
            largest = max(
                (
                    row[auto_pos]
                    for row in self.rows.values()
                    if auto_pos is not None and row[auto_pos] is not None
                ),
                default=0,
            )
        with self._ai_lock:
            self.auto_increment = max(value, int(largest) + 1, 1)

    def redefine(self, schema: TableSchema, rows: Iterable[tuple[Key, Row]] | None = None) -> None:
        """Give the table a new definition (DDL, under the engine's DDL lock): its committed
        rows, or ``rows`` when the definition changed them (ALTER TABLE's rewrite), are
        indexed anew for the new definition's secondary indexes.
        """
        with self._commit_lock:
            self.rows = _rows_for(schema, self.rows.items() if rows is None else rows)
            self.schema = schema

    def committed_rows(self) -> list[Row]:
        """A copy of the committed rows in primary key order (DDL reads them)."""
        with self._commit_lock:
            return list(self.rows.values())

    def lookup(self, index: str, values: Sequence[Value]) -> list[tuple[Key, Row]]:
        """The committed ``(pk, row)`` pairs whose secondary ``index`` columns hold
        ``values`` (coerced to the columns' types), in primary key order: one at most for a
        UNIQUE index and values without NULL. KeyError for an index the table does not
        have. A transaction sees its own writes too through :meth:`Transaction.lookup`.
        """
        with self._commit_lock:
            rows = self.rows
            if index not in self.schema.indexes:
                raise KeyError(index)
            keys = sorted(rows.keys_of(index, tuple(values)))
            return [(pk, rows[pk]) for pk in keys]

    def checksum(self) -> int:
        """CHECKSUM TABLE: a CRC-32 over the committed rows in primary key order.

        Each row is encoded value by value, self-delimiting, so equal contents give equal
        checksums on any node and any change of a value, a row's presence or the order of
        keys changes the input: NULL is ``N``; an integer ``I<decimal>;``; a float
        ``F<float.hex()>;``; a DECIMAL ``D<str>;``; a string ``S<utf-8 length>:<utf-8>``;
        bytes ``B<length>:<bytes>``. The CRC runs over the concatenation of all rows (zlib's
        CRC-32, unsigned); an empty table gives 0, as in MySQL.
        """
        with self._commit_lock:
            rows = list(self.rows.values())
        crc = 0
        for row in rows:
            crc = zlib.crc32(encode_row(row), crc)
        return crc


def encode_row(row: Row) -> bytes:
    """``row`` as CHECKSUM TABLE encodes it (see :meth:`Table.checksum`)."""
    parts: list[bytes] = []
    for value in row:
        if value is None:
            parts.append(b"N")
        elif isinstance(value, bool | int):
            parts.append(b"I%d;" % value)
        elif isinstance(value, float):
            parts.append(b"F" + value.hex().encode() + b";")
        elif isinstance(value, Decimal):
            parts.append(b"D" + str(value).encode() + b";")
        elif isinstance(value, str):
            data = value.encode("utf-8", "surrogatepass")
            parts.append(b"S%d:" % len(data) + data)
        else:
            data = bytes(value)
            parts.append(b"B%d:" % len(data) + data)
    return b"".join(parts)


def _key_text(schema: TableSchema, pk: Key) -> str:
    values = pk if len(schema.pk_positions) > 1 else (pk,)
    return "-".join(
        v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v) for v in values
    )


def _duplicate(schema: TableSchema, pk: Key) -> MySQLError:
    return MySQLError.of(ER_DUP_ENTRY, _key_text(schema, pk), f"{schema.name}.PRIMARY")


def _values_text(values: Sequence[Value]) -> str:
    return "-".join(
        v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v) for v in values
    )


def _fk_text(schema: TableSchema, fk: ForeignKey) -> str:
    """A constraint as InnoDB names it in 1451 / 1452: ```db`.`child`, CONSTRAINT ...``."""
    child = "`" + schema.db.replace("`", "``") + "`.`" + schema.name.replace("`", "``") + "`"
    return f"{child}, {fk.clause(schema.db)}"


def _scan_as_of(
    table: Table,
    view: int,
    lo: Key,
    hi: Key,
    inclusive: tuple[bool, bool],
    reverse: bool,
    fetch: int | None,
) -> list[tuple[Key, Row]]:
    """The committed ``(pk, row)`` pairs in the range as read view ``view`` sees them, in
    key order (commit lock held): the latest rows, each key with versions newer than the
    view replaced by the oldest such version (a deleted row comes back, a row inserted
    since goes away).
    """
    rows, history = table.rows, table.history
    keys = rows.irange(lo, hi, inclusive, reverse)
    if not history:
        if fetch is not None:
            keys = itertools.islice(keys, fetch)
        return [(pk, rows[pk]) for pk in keys]
    changed: dict[Key, Row | None] = {}
    for pk in history.irange(lo, hi, inclusive):
        for seq, before in history[pk]:
            if seq > view:
                changed[pk] = before
                break
    if not changed:
        if fetch is not None:
            keys = itertools.islice(keys, fetch)
        return [(pk, rows[pk]) for pk in keys]
    if fetch is not None:  # a row of the first ``fetch`` is changed or among these
        keys = itertools.islice(keys, fetch + len(changed))
    merged = {pk: rows[pk] for pk in keys}
    merged.update(changed)
    result = [(pk, row) for pk, row in sorted(merged.items(), reverse=reverse) if row is not None]
    return result if fetch is None else result[:fetch]


class Transaction(LockOwner):
    """One transaction, used by one thread at a time (its read view, if any, is its own).

    Operations raise :class:`TransactionStateError` once the transaction has committed or
    rolled back, except :meth:`rollback`, which is then a no-op (so a session may always
    roll back on cleanup), and :meth:`changes`.
    """

    __slots__ = (
        "thread_id",
        "rolled_back_by_deadlock",
        "auto_increment_increment",
        "auto_increment_offset",
        "_engine",
        "_locks",
        "_held",
        "_writes",
        "_changes",
        "_undo",
        "_state",
        "_index_writes",
        "foreign_key_checks",
        "consistent_reads",
        "_view",
    )

    def __init__(self, engine: Engine, trx_id: int, thread_id: int) -> None:
        super().__init__(trx_id)
        self.thread_id = thread_id
        self.rolled_back_by_deadlock = False
        self.auto_increment_increment = 1
        self.auto_increment_offset = 1
        self._engine = engine
        self._locks = engine.locks
        self._held: list[LockKey] = []
        self._writes: dict[Table, dict[Key, Row | None]] = {}
        self._changes: list[RowChange] = []
        self._undo: list[tuple[dict[Key, Row | None], Key, object, int]] = []
        self._state = _State.ACTIVE
        self._index_writes: dict[tuple[int, str, tuple[Value, ...]], set[Key]] = {}
        """(table id, index, values) -> keys this transaction wrote rows with them under."""
        self.foreign_key_checks = True
        """@@foreign_key_checks for the statements to come (the session sets it)."""
        self.consistent_reads = False
        """Whether :meth:`get` and :meth:`scan` read through the read view (a consistent
        read) rather than the latest committed rows (a current read); the session sets it
        per statement."""
        self._view: int | None = None

    def __repr__(self) -> str:
        return f"<Transaction {self.trx_id} thread={self.thread_id} {self._state.value}>"

    @property
    def active(self) -> bool:
        """Whether the transaction has neither committed nor rolled back."""
        return self._state is _State.ACTIVE

    @property
    def state(self) -> str:
        """``ACTIVE``, ``COMMITTED`` or ``ROLLED BACK``."""
        return self._state.value

    @property
    def lock_count(self) -> int:
        """How many row locks the transaction holds."""
        return len(self._held)

    def _check_active(self) -> None:
        if self._state is not _State.ACTIVE:
            raise TransactionStateError(f"transaction {self.trx_id} is {self._state.value}")

    # --- reads -------------------------------------------------------------------------------

    @property
    def read_view(self) -> int | None:
        """The commit sequence number the read view sees up to; ``None`` before the first
        consistent read (or after :meth:`release_view`).
        """
        return self._view

    def open_view(self) -> int:
        """Take the read view now if there is none (START TRANSACTION WITH CONSISTENT
        SNAPSHOT); returns it. A view sees every transaction committed before it was taken.
        """
        self._check_active()
        view = self._view
        if view is None:
            view = self._view = self._engine._open_view(self)
        return view

    def release_view(self) -> None:
        """Drop the read view (READ COMMITTED does after each statement); the next
        consistent read takes a new one.
        """
        view, self._view = self._view, None
        if view is not None:
            self._engine._close_view(self, view)

    def get(self, table: Table, pk: Key) -> Row | None:
        """The row with primary key ``pk`` as this transaction sees it, or ``None``.

        A consistent read (:attr:`consistent_reads`) sees the read view, taken now if there
        is none, with the transaction's own writes on top; a current read sees the latest
        committed row under the own writes.
        """
        if self._state is not _State.ACTIVE:
            self._check_active()
        if not self.consistent_reads:
            return self._current(table, pk)
        view = self._view
        if view is None:  # taken at the first consistent read, even of an own row
            view = self._view = self._engine._open_view(self)
        if view < table.rebuilt_at:
            raise MySQLError.of(ER_TABLE_DEF_CHANGED)
        overlay = self._writes.get(table)
        if overlay is not None:
            own = overlay.get(pk, _ABSENT)
            if own is not _ABSENT:
                return own  # type: ignore[return-value]
        # the latest row first, its older versions second: a commit records the version
        # it replaces before it changes the row, so whichever of the two this thread
        # sees of a racing commit, the answer is the row as of the view
        row: Row | None = table.rows.get(pk)
        versions = table.history.get(pk)
        if versions is not None:
            for seq, before in versions:
                if seq > view:
                    older: Row | None = before
                    return older
        return row

    def scan(
        self,
        table: Table,
        lo: Key = None,
        hi: Key = None,
        *,
        reverse: bool = False,
        inclusive: tuple[bool, bool] = (True, True),
        limit: int | None = None,
    ) -> list[tuple[Key, Row]]:
        """The ``(pk, row)`` pairs with ``lo <= pk <= hi`` in key order, as this transaction
        sees them.

        ``None`` leaves a bound open; ``inclusive`` makes either bound strict; ``reverse``
        gives descending order; ``limit`` keeps the first rows in that order. The committed
        rows are copied under the commit lock, so one call never sees part of a commit; a
        consistent read (:attr:`consistent_reads`) copies them as of the read view.
        """
        self._check_active()
        overlay = self._writes.get(table)
        own: list[tuple[Key, Row | None]] = []
        if overlay:
            lo_in, hi_in = inclusive
            for pk, row in overlay.items():
                if lo is not None and (pk < lo or (pk == lo and not lo_in)):
                    continue
                if hi is not None and (pk > hi or (pk == hi and not hi_in)):
                    continue
                own.append((pk, row))
        fetch = None if limit is None else limit + len(own)
        rows = table.rows
        with self._engine._commit_lock:
            if self.consistent_reads:
                view = self._view
                if view is None:
                    view = self._view = self._engine._open_view_locked(self)
                if view < table.rebuilt_at:
                    raise MySQLError.of(ER_TABLE_DEF_CHANGED)
                committed = _scan_as_of(table, view, lo, hi, inclusive, reverse, fetch)
            else:
                keys = rows.irange(lo, hi, inclusive, reverse)
                if fetch is not None:
                    keys = itertools.islice(keys, fetch)
                committed = [(pk, rows[pk]) for pk in keys]
        if not own:
            return committed
        merged: dict[Key, Row | None] = dict(committed)
        merged.update(own)
        result = [
            (pk, row) for pk, row in sorted(merged.items(), reverse=reverse) if row is not None
        ]
        return result if limit is None else result[:limit]

    # --- writes ------------------------------------------------------------------------------

    def _lock(self, table: Table, pk: Key) -> None:
        self._lock_key((table.id, pk))

    def _lock_key(self, key: LockKey) -> None:
        try:
            if self._locks.acquire(self, key):
                self._held.append(key)
        except MySQLError as exc:
            if exc.errno == ER_LOCK_DEADLOCK.errno:
                self._finish(_State.ROLLED_BACK)
                self.rolled_back_by_deadlock = True
                exc.rolled_back = True  # type: ignore[attr-defined]
            raise

    def _current(self, table: Table, pk: Key) -> Row | None:
        overlay = self._writes.get(table)
        if overlay is not None:
            row = overlay.get(pk, _ABSENT)
            if row is not _ABSENT:
                return row  # type: ignore[return-value]
        result: Row | None = table.rows.get(pk)
        return result

    def _write(self, table: Table, pk: Key, row: Row | None, change: RowChange | None) -> None:
        overlay = self._writes.get(table)
        if overlay is None:
            overlay = self._writes[table] = {}
        self._undo.append((overlay, pk, overlay.get(pk, _ABSENT), len(self._changes)))
        overlay[pk] = row
        if change is not None:
            self._changes.append(change)
        if row is not None and table.schema.indexes:
            self._note_index_write(table, pk, row)

    def _auto_value(
        self, table: Table, column: ColumnSchema, value: object, row_number: int
    ) -> tuple[Value, bool]:
        """The AUTO_INCREMENT column's value: NULL or 0 takes the next one (generated)."""
        if value is not None:
            value = coerce(column, value, row_number)
        if value is None or value == 0:
            return coerce(
                column,
                table.next_auto_increment(
                    self.auto_increment_increment, self.auto_increment_offset
                ),
                row_number,
            ), True
        return value, False

    def _build_row(
        self,
        table: Table,
        schema: TableSchema,
        values: Mapping[str, object] | Sequence[object],
        row_number: int,
    ) -> tuple[Row, bool]:
        columns = schema.columns
        auto_pos = schema.auto_increment_position
        generated = False
        out: list[Value] = []
        # a dict first: isinstance against the Mapping ABC runs interpreted code
        if isinstance(values, dict) or (
            not isinstance(values, list | tuple) and isinstance(values, Mapping)
        ):
            defaults = schema.default_row
            used = 0
            for i, column in enumerate(columns):
                value = values.get(column.name, _ABSENT)
                if value is _ABSENT:
                    if i != auto_pos:
                        if column.default is NO_DEFAULT and not column.nullable:
                            raise MySQLError.of(ER_NO_DEFAULT_FOR_FIELD, column.name)
                        out.append(defaults[i])
                        continue
                    value = None
                else:
                    used += 1
                if i == auto_pos:
                    value, generated = self._auto_value(table, column, value, row_number)
                    out.append(value)
                else:
                    out.append(coerce(column, value, row_number))
            if used != len(values):
                for name in values:
                    if name not in schema.positions:
                        raise MySQLError.of(ER_BAD_FIELD_ERROR, name, "field list")
        else:
            if len(values) != len(columns):
                raise MySQLError.of(ER_WRONG_VALUE_COUNT_ON_ROW, row_number)
            for i, (column, value) in enumerate(zip(columns, values, strict=True)):
                if i == auto_pos:
                    value, generated = self._auto_value(table, column, value, row_number)
                    out.append(value)
                else:
                    out.append(coerce(column, value, row_number))
        return tuple(out), generated

    def insert(
        self, table: Table, values: Mapping[str, object] | Sequence[object], *, row_number: int = 1
    ) -> Key:
        """Insert a row; returns its primary key value.

        ``values`` is a mapping of column name to value (missing columns take their
        DEFAULT; a NOT NULL column without one is ER_NO_DEFAULT_FOR_FIELD) or a full row in
        column order (else ER_WRONG_VALUE_COUNT_ON_ROW). Values are coerced
        (:func:`~rpl.core.engine.coercion.coerce`); NULL or 0 in the AUTO_INCREMENT column
        generates the next value, an explicit larger value moves the counter. The key is
        locked before the duplicate check, so a key another transaction holds is waited
        for; a key that exists (committed, or written by this transaction) is ER_DUP_ENTRY,
        and the lock stays held (INSERT ... ON DUPLICATE KEY UPDATE can go on to update).
        """
        self._check_active()
        schema = table.schema
        row, generated = self._build_row(table, schema, values, row_number)
        pk = schema.key_of(row)
        self._lock(table, pk)
        if self._current(table, pk) is not None:
            raise _duplicate(schema, pk)
        if schema.unique_positions:
            self._check_unique(table, pk, row, None)
        if schema.foreign_keys and self.foreign_key_checks:
            self._check_parents(table, row, None)
        auto_pos = schema.auto_increment_position
        if auto_pos is not None and not generated:
            table.note_auto_increment(row[auto_pos])
        self._write(table, pk, row, RowChange("insert", schema, None, row))
        return pk

    def update(
        self,
        table: Table,
        pk: Key,
        changes: Mapping[str, object],
        *,
        row_number: int = 1,
        touch: Mapping[str, object] | None = None,
    ) -> RowChange | None:
        """Set the columns in ``changes`` on the row ``pk``; ``None`` if there is no row.
        ``touch``: values set too, but only when the row changes and ``changes`` does not
        name their column (ON UPDATE CURRENT_TIMESTAMP, evaluated by the caller).

        The row is locked first and the change applied to its latest committed (or own)
        version. The returned change has ``before == after`` when nothing changed; such an
        update is not recorded in :meth:`changes`. A new primary key value is locked too
        and must be free (ER_DUP_ENTRY); the old key then reads as deleted. Writing a larger
        value into the AUTO_INCREMENT column moves the counter, as InnoDB does since 8.0.
        """
        self._check_active()
        return self._update_row(table, pk, changes, row_number, cascaded=False, touch=touch)

    def _update_row(
        self,
        table: Table,
        pk: Key,
        changes: Mapping[str, object],
        row_number: int,
        *,
        cascaded: bool,
        touch: Mapping[str, object] | None = None,
    ) -> RowChange | None:
        """:meth:`update`; ``cascaded`` for a child row changed by ON UPDATE CASCADE / SET
        NULL, which is not logged (the replica's engine cascades too, as InnoDB's does)
        and not checked against the parent it follows.
        """
        self._lock(table, pk)
        before = self._current(table, pk)
        if before is None:
            return None
        schema = table.schema
        row = list(before)
        positions, columns = schema.positions, schema.columns
        for name, value in changes.items():
            i = positions.get(name)
            if i is None:
                raise MySQLError.of(ER_BAD_FIELD_ERROR, name, "field list")
            row[i] = coerce(columns[i], value, row_number)
        after = tuple(row)
        if touch and after != before:
            for name, value in touch.items():
                if name not in changes:
                    i = positions[name]
                    row[i] = coerce(columns[i], value, row_number)
            after = tuple(row)
        change = RowChange("update", schema, before, after)
        if after == before:
            return change
        new_pk = schema.key_of(after)
        if new_pk != pk:
            self._lock(table, new_pk)
            if self._current(table, new_pk) is not None:
                raise _duplicate(schema, new_pk)
        if schema.unique_positions:
            self._lock_unique(table, before)
            self._check_unique(table, pk, after, before)
        checks = self.foreign_key_checks
        if checks and schema.foreign_keys and not cascaded:
            self._check_parents(table, after, before)
        logged = None if cascaded else change
        if new_pk != pk:
            self._write(table, pk, None, None)
            self._write(table, new_pk, after, logged)
        else:
            self._write(table, pk, after, logged)
        if checks:
            self._on_parent_change(table, before, after)
        auto_pos = schema.auto_increment_position
        if auto_pos is not None and after[auto_pos] != before[auto_pos]:
            table.note_auto_increment(after[auto_pos])
        return change

    def delete(self, table: Table, pk: Key) -> Row | None:
        """Delete the row ``pk`` (locking it first); returns the deleted row or ``None``."""
        self._check_active()
        return self._delete_row(table, pk, cascaded=False)

    def _delete_row(self, table: Table, pk: Key, *, cascaded: bool) -> Row | None:
        """:meth:`delete`; ``cascaded`` for a child row deleted by ON DELETE CASCADE (not
        logged: the replica's engine cascades too).
        """
        self._lock(table, pk)
        before = self._current(table, pk)
        if before is None:
            return None
        schema = table.schema
        if schema.unique_positions:
            self._lock_unique(table, before)
        change = None if cascaded else RowChange("delete", schema, before, None)
        self._write(table, pk, None, change)
        if self.foreign_key_checks:
            self._on_parent_change(table, before, None)
        return before

    # --- secondary indexes and foreign keys -------------------------------------------------

    def lookup(self, table: Table, index: str, values: Sequence[Value]) -> list[tuple[Key, Row]]:
        """The ``(pk, row)`` pairs whose secondary ``index`` columns hold ``values``, as this
        transaction sees them (its own writes included, latest committed versions
        otherwise), in primary key order; takes no locks. KeyError for an unknown index.
        """
        self._check_active()
        positions = table.schema.index_positions[index]
        keys = self._index_keys(table, index, tuple(values))
        return self._verified(table, keys, positions, tuple(values))

    def _index_keys(self, table: Table, index: str, values: tuple[Value, ...]) -> set[Key]:
        """Candidate keys for ``values`` in ``index``: the committed entries and the keys
        this transaction wrote with those values (either may be stale: callers verify).
        """
        with self._engine._commit_lock:
            rows = table.rows
            keys = set(rows.keys_of(index, values)) if isinstance(rows, IndexedRows) else set()
        keys.update(self._index_writes.get((table.id, index, values), ()))
        return keys

    def _verified(
        self, table: Table, keys: Iterable[Key], positions: Sequence[int], values: tuple[Value, ...]
    ) -> list[tuple[Key, Row]]:
        found = []
        for pk in sorted(keys):
            row = self._current(table, pk)
            if row is not None and tuple(row[i] for i in positions) == values:
                found.append((pk, row))
        return found

    def _note_index_write(self, table: Table, pk: Key, row: Row) -> None:
        for name, positions in table.schema.index_positions.items():
            entry = (table.id, name, tuple(row[i] for i in positions))
            written = self._index_writes.get(entry)
            if written is None:
                self._index_writes[entry] = {pk}
            else:
                written.add(pk)

    def _lock_unique(self, table: Table, row: Row) -> None:
        """Lock the UNIQUE key values ``row`` holds, as InnoDB locks the index records: an
        insert of a value this transaction is removing or changing waits for it to end.
        """
        for name, values in table.schema.unique_values(row):
            self._lock_key((-table.id, (name, values)))

    def _check_unique(self, table: Table, pk: Key, row: Row, before: Row | None) -> None:
        """ER_DUP_ENTRY when another row than ``pk`` holds one of ``row``'s UNIQUE key values.

        Each value is locked first (the lock key ``(-table id, (index, values))`` can never
        be a row lock's), so two transactions writing one value are serialised: the second
        waits, then finds the first's row committed (1062) or gone.
        """
        schema = table.schema
        for name, values in schema.unique_values(row):
            positions = schema.index_positions[name]
            if before is not None and tuple(before[i] for i in positions) == values:
                continue
            self._lock_key((-table.id, (name, values)))
            keys = self._index_keys(table, name, values)
            keys.discard(pk)
            if self._verified(table, keys, positions, values):
                raise MySQLError.of(ER_DUP_ENTRY, _values_text(values), f"{schema.name}.{name}")

    def duplicates(
        self, table: Table, values: Mapping[str, object] | Sequence[object]
    ) -> list[Key]:
        """The keys of the rows an insert of ``values`` collides with, locked: the primary
        key's first, then each UNIQUE index's in declaration order (REPLACE deletes them
        all; INSERT ... ON DUPLICATE KEY UPDATE updates the first).
        """
        self._check_active()
        schema = table.schema
        row, _ = self._build_row(table, schema, values, 1)
        pk = schema.key_of(row)
        found: list[Key] = []
        self._lock(table, pk)
        if self._current(table, pk) is not None:
            found.append(pk)
        for name, key_values in schema.unique_values(row):
            self._lock_key((-table.id, (name, key_values)))
            keys = self._index_keys(table, name, key_values)
            for other, _ in self._verified(table, keys, schema.index_positions[name], key_values):
                if other not in found:
                    self._lock(table, other)
                    found.append(other)
        return found

    def _matching(
        self, table: Table, columns: tuple[str, ...], values: tuple[Value, ...]
    ) -> list[Key]:
        """The keys of the rows whose ``columns`` hold ``values`` (latest versions): by
        primary key, by an index on exactly those columns, else by reading every row.
        """
        schema = table.schema
        if columns == schema.primary_key:
            pk = values[0] if len(values) == 1 else values
            return [pk] if self._current(table, pk) is not None else []
        positions = tuple(schema.positions[c] for c in columns)
        index = next((n for n, cols in schema.indexes.items() if cols == columns), None)
        if index is not None:
            keys = self._index_keys(table, index, values)
        else:
            with self._engine._commit_lock:
                keys = set(table.rows.keys())
            keys.update(k for k, r in self._writes.get(table, {}).items() if r is not None)
        return [pk for pk, _ in self._verified(table, keys, positions, values)]

    def _check_parents(self, table: Table, row: Row, before: Row | None) -> None:
        """ER_NO_REFERENCED_ROW_2 (1452) when ``row`` references a parent row that does not
        exist; the parent row found is locked until this transaction ends, so it cannot be
        deleted under a child that is not yet committed.
        """
        schema = table.schema
        for fk in schema.foreign_keys:
            positions = [schema.positions[c] for c in fk.columns]
            values = tuple(row[i] for i in positions)
            if None in values:
                continue
            if before is not None and tuple(before[i] for i in positions) == values:
                continue
            try:
                parent = self._engine.table(fk.parent_db, fk.parent_table)
            except MySQLError:
                raise MySQLError.of(ER_NO_REFERENCED_ROW_2, _fk_text(schema, fk)) from None
            found = self._matching(parent, fk.parent_columns, values)
            if found:
                self._lock(parent, found[0])
            if not found or self._current(parent, found[0]) is None:
                raise MySQLError.of(ER_NO_REFERENCED_ROW_2, _fk_text(schema, fk))

    def _on_parent_change(self, table: Table, before: Row, after: Row | None) -> None:
        """The referential actions of the FOREIGN KEYs referencing ``table`` for one of its
        rows deleted (``after`` None) or updated: RESTRICT / NO ACTION (and no clause) refuse
        with ER_ROW_IS_REFERENCED_2 (1451) while a child row references the old values;
        CASCADE deletes or updates the children, SET NULL sets their columns to NULL.
        """
        schema = table.schema
        for child, fk in self._engine.children_of(schema.db, schema.name):
            old = tuple(before[schema.positions[c]] for c in fk.parent_columns)
            if None in old:
                continue
            new: tuple[Value, ...] = ()
            if after is not None:
                new = tuple(after[schema.positions[c]] for c in fk.parent_columns)
                if new == old:
                    continue
            matches = self._matching(child, fk.columns, old)
            if not matches:
                continue
            action = fk.on_delete if after is None else fk.on_update
            if action == "CASCADE" and after is None:
                for key in matches:
                    self._delete_row(child, key, cascaded=True)
            elif action == "CASCADE" or action == "SET NULL":
                values = new if action == "CASCADE" else (None,) * len(fk.columns)
                changes = dict(zip(fk.columns, values, strict=True))
                for key in matches:
                    self._update_row(child, key, changes, 1, cascaded=True)
            else:
                raise MySQLError.of(ER_ROW_IS_REFERENCED_2, _fk_text(child.schema, fk))

    def lock_for_update(self, table: Table, pk: Key) -> Row | None:
        """SELECT ... FOR UPDATE of one key: lock it, then return the row's latest version.

        The key is locked whether or not a row exists, so an INSERT of it by another
        transaction waits until this one ends.
        """
        self._check_active()
        self._lock(table, pk)
        return self._current(table, pk)

    # --- statement and transaction end ------------------------------------------------------

    def changes(self) -> list[RowChange]:
        """The rows written so far, in the order the writes happened (a copy)."""
        return list(self._changes)

    @property
    def has_changes(self) -> bool:
        """Whether the transaction has written anything (after savepoint rollbacks)."""
        return bool(self._changes)

    def savepoint(self) -> int:
        """A point :meth:`rollback_to` can return to (a statement's start, or SAVEPOINT)."""
        self._check_active()
        return len(self._undo)

    def rollback_to(self, savepoint: int) -> None:
        """Undo every write made after ``savepoint``; locks taken since stay held, as in
        MySQL. AUTO_INCREMENT values consumed since are not given back.
        """
        self._check_active()
        undo = self._undo
        if not 0 <= savepoint <= len(undo):
            raise ValueError(f"savepoint {savepoint} is not valid (undo log has {len(undo)})")
        if savepoint == len(undo):
            return
        del self._changes[undo[savepoint][3] :]
        for overlay, pk, previous, _ in reversed(undo[savepoint:]):
            if previous is _ABSENT:
                del overlay[pk]
            else:
                overlay[pk] = previous  # type: ignore[assignment]
        del undo[savepoint:]

    def enter_commit(self) -> None:
        """The transaction begins to commit: from now on no high-priority transaction
        kills it. If one killed it already it rolls back here instead, with
        ER_ERROR_DURING_COMMIT (InnoDB's ``Got error 149 - 'Lock deadlock; Retry
        transaction' during COMMIT``).
        """
        if self._state is _State.ACTIVE and not self._locks.begin_commit(self):
            self._finish(_State.ROLLED_BACK)
            self.rolled_back_by_deadlock = True
            raise MySQLError.of(ER_ERROR_DURING_COMMIT, 149, "Lock deadlock; Retry transaction")

    def commit(self) -> None:
        """Make the writes visible to all, atomically for readers, then release the locks.

        Raises :class:`TransactionStateError` if the transaction already ended (including a
        deadlock rollback: its writes are gone).
        """
        self._check_active()
        if self._writes:
            engine = self._engine
            with engine._commit_lock:
                seq = engine.committing = engine.commit_seq + 1
                if engine._views:
                    engine._keep_versions(self._writes, seq)
                for table, overlay in self._writes.items():
                    rows = table.rows
                    for pk, row in overlay.items():
                        if row is None:
                            rows.pop(pk, None)
                        else:
                            rows[pk] = row
                engine.commit_seq = seq
        self._finish(_State.COMMITTED)

    def rollback(self) -> None:
        """Discard the writes and release the locks; a no-op once the transaction ended."""
        if self._state is _State.ACTIVE:
            self._finish(_State.ROLLED_BACK)

    def _finish(self, state: _State) -> None:
        if state is _State.ROLLED_BACK:
            self._changes.clear()
        view = self._view
        if view is not None:
            self._view = None
            self._engine._close_view(self, view)
        self._state = state
        self._writes = {}
        self._index_writes = {}
        self._undo.clear()
        held, self._held = self._held, []
        if held:
            self._locks.release_all(self, held)


def check_unique(schema: TableSchema, rows: Iterable[Row]) -> None:
    """ER_DUP_ENTRY at the first UNIQUE key value of ``schema`` two of ``rows`` share (an
    index built over rows that exist, or ALTER TABLE's rewrite).
    """
    rows = list(rows)
    for name, positions in schema.unique_positions:
        seen: set[tuple[Value, ...]] = set()
        for row in rows:
            values = tuple(row[i] for i in positions)
            if None in values:
                continue
            if values in seen:
                raise MySQLError.of(ER_DUP_ENTRY, _values_text(values), f"{schema.name}.{name}")
            seen.add(values)


class Engine:
    """Databases, their tables, and transactions over them.

    DDL runs under an engine-wide lock; lookups (:meth:`table`, :meth:`has_database`) read
    the catalogue without one. ``lock_wait_timeout`` returns the current
    innodb_lock_wait_timeout in seconds and is called at each lock wait, under the lock
    manager's mutex: it must be cheap and must not call into the engine.
    """

    def __init__(self, lock_wait_timeout: Callable[[], float] = lambda: 50.0) -> None:
        self.locks = LockManager(lock_wait_timeout)
        self.table_locks = TableLocks()
        self._lock_wait_timeout = lock_wait_timeout
        self._ddl_lock = threading.RLock()
        self._commit_lock = threading.Lock()
        self._databases: dict[str, dict[str, Table]] = {}
        self._table_ids = itertools.count(1)
        self._trx_ids = itertools.count(1)
        self._children: dict[tuple[str, str], list[tuple[Table, ForeignKey]]] | None = None
        """(db, table) -> the (child table, constraint) pairs referencing it; rebuilt after
        DDL (None until then)."""
        self.commit_seq = 0
        """How many transactions with writes have committed: the commit sequence number
        of the latest, set once its rows are all in place (under the commit lock)."""
        self.committing = 0
        """The commit sequence number of the commit in progress (or of the latest): set
        before that commit looks for open views."""
        self._views: dict[Transaction, int | None] = {}
        """Open read views: transaction -> its view (``None`` for an instant while
        registering, see :meth:`_open_view`)."""
        self._versions: collections.deque[tuple[int, Table, Key]] = collections.deque()
        """Every kept version as (commit that replaced it, table, key), oldest first."""

    # --- databases ---------------------------------------------------------------------------

    def create_database(self, name: str, if_not_exists: bool = False) -> bool:
        """CREATE DATABASE; ``False`` if it existed and ``if_not_exists`` (else
        ER_DB_CREATE_EXISTS).
        """
        with self._ddl_lock:
            if name in self._databases:
                if if_not_exists:
                    return False
                raise MySQLError.of(ER_DB_CREATE_EXISTS, name)
            self._databases[name] = {}
            return True

    def drop_database(self, name: str, if_exists: bool = False) -> list[str]:
        """DROP DATABASE; returns the names of the tables dropped with it (ER_DB_DROP_EXISTS
        for an unknown database unless ``if_exists``, which then returns ``[]``).
        """
        with self._ddl_lock:
            tables = self._databases.pop(name, None)
            self._children = None
            if tables is None:
                if if_exists:
                    return []
                raise MySQLError.of(ER_DB_DROP_EXISTS, name)
            return sorted(tables)

    def has_database(self, name: str) -> bool:
        """Whether database ``name`` exists."""
        return name in self._databases

    def databases(self) -> list[str]:
        """The database names, sorted."""
        return sorted(self._databases)

    # --- tables ------------------------------------------------------------------------------

    def _tables_of(self, db: str) -> dict[str, Table]:
        tables = self._databases.get(db)
        if tables is None:
            raise MySQLError.of(ER_BAD_DB_ERROR, db)
        return tables

    def create_table(self, schema: TableSchema, if_not_exists: bool = False) -> Table | None:
        """CREATE TABLE; returns the new table, or ``None`` when it existed and
        ``if_not_exists`` (else ER_TABLE_EXISTS_ERROR). ER_BAD_DB_ERROR for an unknown
        database.
        """
        with self._ddl_lock:
            tables = self._tables_of(schema.db)
            if schema.name in tables:
                if if_not_exists:
                    return None
                raise MySQLError.of(ER_TABLE_EXISTS_ERROR, schema.name)
            table = Table(next(self._table_ids), schema, self._commit_lock)
            tables[schema.name] = table
            self._children = None
            return table

    def drop_table(self, db: str, name: str, if_exists: bool = False) -> bool:
        """DROP TABLE; ``False`` when it did not exist and ``if_exists`` (else
        ER_BAD_TABLE_ERROR, "Unknown table 'db.name'").
        """
        with self._ddl_lock:
            tables = self._databases.get(db)
            if tables is None or tables.pop(name, None) is None:
                if if_exists:
                    return False
                raise MySQLError.of(ER_BAD_TABLE_ERROR, f"{db}.{name}")
            self._children = None
            return True

    def children_of(self, db: str, name: str) -> list[tuple[Table, ForeignKey]]:
        """The ``(child table, constraint)`` pairs whose FOREIGN KEY references ``db.name``."""
        children = self._children
        if children is None:
            with self._ddl_lock:
                children = {}
                for tables in self._databases.values():
                    for table in tables.values():
                        for fk in table.schema.foreign_keys:
                            key = (fk.parent_db, fk.parent_table)
                            children.setdefault(key, []).append((table, fk))
                self._children = children
        return children.get((db, name), [])

    def redefine_table(
        self,
        db: str,
        name: str,
        schema: TableSchema,
        rows: Iterable[tuple[Key, Row]] | None = None,
    ) -> Table:
        """Give ``db.name`` the definition ``schema`` (ALTER TABLE, CREATE / DROP INDEX),
        its rows rewritten to ``rows`` when given, and its name ``schema.name`` (RENAME:
        ER_TABLE_EXISTS_ERROR when taken). The table keeps its id, rows and
        AUTO_INCREMENT counter; the new definition is a new schema object, so the binlog
        maps it under a new table_id. Rewritten rows end the old versions read views keep
        (:meth:`table_rebuilt`).
        """
        with self._ddl_lock:
            tables = self._tables_of(db)
            table = self.table(db, name)
            target = self._tables_of(schema.db)
            if (schema.db, schema.name) != (db, name) and schema.name in target:
                raise MySQLError.of(ER_TABLE_EXISTS_ERROR, schema.name)
            table.redefine(schema, rows)
            if rows is not None:  # rows of a new shape: older read views cannot read them
                self.table_rebuilt(table)
            if (schema.db, schema.name) != (db, name):
                del tables[name]
                target[schema.name] = table
            self._children = None
            return table

    def table(self, db: str, name: str) -> Table:
        """The table ``db.name`` (ER_NO_SUCH_TABLE if it or the database does not exist)."""
        tables = self._databases.get(db)
        table = None if tables is None else tables.get(name)
        if table is None:
            raise MySQLError.of(ER_NO_SUCH_TABLE, db, name)
        return table

    def tables(self, db: str) -> list[str]:
        """The table names of ``db``, sorted (ER_BAD_DB_ERROR for an unknown database)."""
        return sorted(self._tables_of(db))

    def add_index(
        self, db: str, table: str, name: str, columns: Sequence[str], unique: bool = False
    ) -> None:
        """CREATE [UNIQUE] INDEX (ER_DUP_KEYNAME if ``name`` is taken,
        ER_KEY_COLUMN_DOES_NOT_EXITS for an unknown column); a UNIQUE index whose values the
        committed rows already repeat is ER_DUP_ENTRY and the table is left unchanged.
        """
        with self._ddl_lock:
            target = self.table(db, table)
            schema = target.schema.with_index(name, tuple(columns), unique)
            check_unique(schema, target.committed_rows())
            self.redefine_table(db, table, schema)

    def drop_index(self, db: str, table: str, name: str) -> None:
        """DROP INDEX (ER_CANT_DROP_FIELD_OR_KEY if there is no such index)."""
        with self._ddl_lock:
            target = self.table(db, table)
            indexes = dict(target.schema.indexes)
            if indexes.pop(name, None) is None:
                raise MySQLError.of(ER_CANT_DROP_FIELD_OR_KEY, name)
            schema = attrs.evolve(
                target.schema, indexes=indexes, unique=target.schema.unique - {name}
            )
            self.redefine_table(db, table, schema)

    # --- transactions ------------------------------------------------------------------------

    def begin(self, thread_id: int, *, high_priority: bool = False) -> Transaction:
        """Start a transaction for the connection ``thread_id`` (``high_priority``: it
        kills the ordinary transactions whose row locks it needs, see
        :mod:`rpl.core.engine.locks`).
        """
        trx = Transaction(self, next(self._trx_ids), thread_id)
        trx.high_priority = high_priority
        return trx

    # --- multi-versioning -------------------------------------------------------------------

    def _open_view(self, trx: Transaction) -> int:
        """Register ``trx``'s read view at the latest commit and return it.

        Without the commit lock when no commit is in flight: the view is registered
        first, then ``committing`` and ``commit_seq`` are read. If they are equal (X),
        commits up to X are complete and any later commit set ``committing`` after the
        registration, so it sees the view and keeps the versions it replaces. Otherwise
        a commit is in flight and the view is taken under the commit lock.
        """
        views = self._views
        views[trx] = None
        committing = self.committing
        view = self.commit_seq
        if committing != view:
            with self._commit_lock:
                view = self.commit_seq
        views[trx] = view
        return view

    def _open_view_locked(self, trx: Transaction) -> int:
        """:meth:`_open_view` with the commit lock held."""
        view = self._views[trx] = self.commit_seq
        return view

    def _close_view(self, trx: Transaction, view: int) -> None:
        """Unregister ``trx``'s read view; versions no open view needs are dropped."""
        views = self._views
        views.pop(trx, None)
        if not self._versions:
            return
        with self._commit_lock:
            others = list(views.values())
            if None in others:
                return  # a view being registered: prune at a later close
            oldest = min((v for v in others if v is not None), default=self.commit_seq)
            if view <= oldest:
                self._prune(oldest)

    def _keep_versions(self, writes: dict[Table, dict[Key, Row | None]], seq: int) -> None:
        """Before commit ``seq`` applies ``writes`` (commit lock held, views open): record
        each row it replaces, so older views still find it.
        """
        log = self._versions
        for table, overlay in writes.items():
            rows, history = table.rows, table.history
            for pk in overlay:
                entry = (seq, rows.get(pk))
                versions = history.get(pk)
                if versions is None:
                    history[pk] = [entry]
                else:
                    versions.append(entry)
                log.append((seq, table, pk))

    def _prune(self, oldest_view: int) -> None:
        """Drop the versions replaced at or before ``oldest_view`` (commit lock held): every
        open view sees their successors. A key's list is replaced, never shortened in
        place, so a reader walking it without the lock walks a consistent list.
        """
        log = self._versions
        while log and log[0][0] <= oldest_view:
            _, table, pk = log.popleft()
            versions = table.history.get(pk)
            if versions is None:
                continue
            kept = [entry for entry in versions if entry[0] > oldest_view]
            if kept:
                table.history[pk] = kept
            else:
                del table.history[pk]

    def table_rebuilt(self, table: Table) -> None:
        """DDL rewrote ``table``'s rows (TRUNCATE, a column added or dropped): its kept
        versions no longer fit, so they go, and views taken before now cannot read it
        (ER_TABLE_DEF_CHANGED). Counts as a commit.
        """
        with self._commit_lock:
            seq = self.committing = self.commit_seq + 1
            table.history.clear()
            table.rebuilt_at = seq
            self.commit_seq = seq

    def versions_kept(self) -> int:
        """How many old row versions the engine holds for open read views."""
        return len(self._versions)

    def status(self) -> dict[str, int]:
        """The engine's SHOW GLOBAL STATUS variables."""
        locks = self.locks
        waits = locks.row_lock_waits
        return {
            "Innodb_row_lock_current_waits": locks.row_lock_current_waits,
            "Innodb_row_lock_time": locks.row_lock_time_ms,
            "Innodb_row_lock_time_avg": locks.row_lock_time_ms // waits if waits else 0,
            "Innodb_row_lock_time_max": locks.row_lock_time_max_ms,
            "Innodb_row_lock_waits": waits,
            "Innodb_row_lock_timeouts": locks.row_lock_timeouts,
            "Innodb_deadlocks": locks.deadlocks,
        }

    # --- checkpoint --------------------------------------------------------------------------

    def snapshot(self, fp: IO[bytes]) -> None:
        """Write the committed state (schemas, rows, AUTO_INCREMENT counters) to ``fp``.

        The caller guarantees no commit runs meanwhile; reads may. Format: the line
        ``RPLENGINE``, then a pickle of ``(version, {db: [(schema, auto_increment,
        [(pk, row), ...]), ...]})``.
        """
        with self._ddl_lock, self._commit_lock:
            state = {
                db: [
                    (t.schema, t.auto_increment, list(t.rows.items()))
                    for _, t in sorted(tables.items())
                ]
                for db, tables in sorted(self._databases.items())
            }
        fp.write(SNAPSHOT_MAGIC)
        pickle.dump((SNAPSHOT_VERSION, state), fp, protocol=pickle.HIGHEST_PROTOCOL)

    @classmethod
    def restore(
        cls, fp: IO[bytes], lock_wait_timeout: Callable[[], float] = lambda: 50.0
    ) -> Engine:
        """An engine holding the state :meth:`snapshot` wrote to ``fp`` (a trusted file:
        it is unpickled). ``ValueError`` if ``fp`` is not a snapshot of this version.
        """
        if fp.read(len(SNAPSHOT_MAGIC)) != SNAPSHOT_MAGIC:
            raise ValueError("not an engine snapshot")
        version, state = pickle.load(fp)
        if version != SNAPSHOT_VERSION:
            raise ValueError(f"engine snapshot version {version} is not {SNAPSHOT_VERSION}")
        engine = cls(lock_wait_timeout)
        for db, tables in state.items():
            engine._databases[db] = {
                schema.name: Table(
                    next(engine._table_ids), schema, engine._commit_lock, rows, auto_increment
                )
                for schema, auto_increment, rows in tables
            }
        return engine
