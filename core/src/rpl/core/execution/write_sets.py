"""A transaction's write set as MySQL 8.0 computes it: :func:`write_set`.

One write-set item is a 64-bit XXHASH64 (seed 0, ``transaction_write_set_extraction=
XXHASH64``) of one unique key's value in one row image, the layout of MySQL's
``add_pke`` (``sql/rpl_write_set_handler.cc``)::

    index name ½ db ½ len(db) table ½ len(table) value1 ½ len(value1) [value2 ½ len(value2) ...]

``½`` is the separator MySQL writes, the two UTF-8 bytes ``C2 BD``; every length is the
byte count in decimal ASCII; names are the UTF-8 bytes of the names as the table was
created. The index name of the primary key is ``PRIMARY``. Example: row ``id = 1`` of
``test.t1 (id INT PRIMARY KEY)`` hashes the bytes ``PRIMARY½test½4t1½2``, ``80 00 00 01``,
``½4``.

Every changed row contributes one item per unique key (the primary key and each UNIQUE
key without a NULL part), for each of its images: an insert its new row, a delete its
old row, an update both, so an update that moves a row to another key conflicts with
writers of the old key and of the new one. Two transactions that change the same row
share an item; that is what WRITESET dependency tracking (``binlog/dependency.py``) and
Group Replication's certification compare. A table's unique keys are its PRIMARY KEY and
its UNIQUE indexes (:class:`~rpl.core.engine.schema.TableSchema`); a FOREIGN KEY adds the
referenced parent key's item over the child row's values, named by the parent's key,
database and table, so a child row and its parent row share an item.

A key part's value bytes are what MySQL's ``Field::make_sort_key`` writes for the column
(the memcmp-able key image, not the value's text):

* integers: big-endian in the type's size (1, 2, 3, 4, 8 bytes), the sign bit flipped
  when signed; YEAR: one byte, year - 1900 (0 for 0000);
* FLOAT/DOUBLE: the IEEE bits big-endian, all inverted when negative, else the sign bit
  set (``change_double_for_sort``; -0.0 as 0.0), 4 or 8 bytes;
* DECIMAL: its binary form (``decimal2bin``, as rows events carry it);
* DATETIME/TIMESTAMP/TIME: their binary form (as rows events carry them); DATE: its three
  bytes big-endian; BIT: big-endian;
* BINARY/VARBINARY/BLOB: the bytes as stored (binary collation, NO PAD);
* ENUM: the 1-based index, SET: the members' bitmap, big-endian in the column's pack
  length (1-2 bytes, 1/2/3/4/8 bytes; ``Field_enum::make_sort_key``): the bytes the
  rows event carries for the value, in reverse order (the same bytes for a 1-byte pack).

Differences from MySQL, where rpl's engine has less to go on:

* CHAR/VARCHAR/TEXT: the value's UTF-8 bytes. MySQL hashes the collation's weight
  string (``strnxfrm``; utf8mb4_0900_ai_ci by default, where ``'a'`` and ``'A'`` weigh
  the same); rpl's engine has no collations (it compares keys as Python strings,
  binary), so the item still names the same row whenever the engine does, but its hash
  differs from MySQL's for these types. So do an ENUM's or SET's of a definition without
  its members (from an engine snapshot written before they were kept): their text.
* A type the row codec does not know is hashed by its text (``str(value)``).
* A FOREIGN KEY referencing a non-unique parent index adds no item (MySQL has no
  referenced unique key to name either).

Hashing uses the ``xxhash`` package (``xxhash.xxh64_intdigest``), the same XXH64 MySQL
bundles as ``MY_XXH64``.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable
from typing import Final

import xxhash

from rpl.core.binlog.events import binlog_column, encode_value
from rpl.core.engine import RowChange
from rpl.core.engine.coercion import Value
from rpl.core.engine.memo import SchemaMemo
from rpl.core.engine.schema import ColumnSchema, Row, TableSchema

SEPARATOR: Final = "½".encode()
"""``HASH_STRING_SEPARATOR``: the bytes C2 BD."""
SEED: Final = 0
"""MySQL's seed for ``MY_XXH64``."""
PRIMARY: Final = "PRIMARY"
"""The index name of every primary key."""

_INT_BYTES: Final = {
    "TINYINT": 1,
    "BOOL": 1,
    "BOOLEAN": 1,
    "SMALLINT": 2,
    "MEDIUMINT": 3,
    "INT": 4,
    "INTEGER": 4,
    "BIGINT": 8,
}
_TEXT: Final = frozenset(("CHAR", "VARCHAR", "TINYTEXT", "TEXT", "MEDIUMTEXT", "LONGTEXT", "JSON"))
_BINARY: Final = frozenset(("BINARY", "VARBINARY", "TINYBLOB", "BLOB", "MEDIUMBLOB", "LONGBLOB"))
_AS_ROWS_EVENT: Final = frozenset(("DECIMAL", "NUMERIC", "DATETIME", "TIMESTAMP", "TIME", "BIT"))
_AS_ROWS_EVENT_REVERSED: Final = frozenset(("DATE", "ENUM", "SET"))
"""Types whose key image is their rows-event bytes big-endian (the event's are little)."""
_DOUBLE: Final = struct.Struct(">d")
_FLOAT: Final = struct.Struct(">f")

SortKey = Callable[[Value], bytes]
"""A column's ``make_sort_key``: a stored value (not NULL) to its key image."""


def _int_key(size: int, unsigned: bool) -> SortKey:
    bias = 0 if unsigned else 1 << (size * 8 - 1)

    def key(value: Value) -> bytes:
        return (int(value) + bias).to_bytes(size, "big")  # type: ignore[arg-type]

    return key


def _float_key(packer: struct.Struct) -> SortKey:
    bits = packer.size * 8
    sign = 1 << (bits - 1)
    mask = (1 << bits) - 1

    def key(value: Value) -> bytes:
        number = float(value) or 0.0  # type: ignore[arg-type]
        raw = int.from_bytes(packer.pack(number), "big")
        raw = raw ^ mask if raw & sign else raw | sign
        return raw.to_bytes(packer.size, "big")

    return key


def _text_key(value: Value) -> bytes:
    return value.encode() if isinstance(value, str) else str(value).encode()


def _bytes_key(value: Value) -> bytes:
    if isinstance(value, bytes):
        return value
    return _text_key(value)


def _year_key(value: Value) -> bytes:
    year = int(value)  # type: ignore[arg-type]
    return bytes((0 if year == 0 else year - 1900,))


def _rows_event_key(column: ColumnSchema, reverse: bool) -> SortKey:
    binlog = binlog_column(column, column.members)

    def key(value: Value) -> bytes:
        packed = encode_value(binlog, value)
        return packed[::-1] if reverse else packed

    return key


def sort_key(column: ColumnSchema) -> SortKey:
    """The function that gives ``column``'s key image of a value (module docstring)."""
    kind = column.type_name
    if kind in _INT_BYTES:
        return _int_key(_INT_BYTES[kind], column.unsigned)
    if kind in ("DOUBLE", "REAL", "DOUBLE PRECISION"):
        return _float_key(_DOUBLE)
    if kind == "FLOAT":
        return _float_key(_FLOAT)
    if kind == "YEAR":
        return _year_key
    if kind in _BINARY:
        return _bytes_key
    if kind in _TEXT:
        return _text_key
    if kind in _AS_ROWS_EVENT or kind in _AS_ROWS_EVENT_REVERSED:
        try:
            return _rows_event_key(column, reverse=kind in _AS_ROWS_EVENT_REVERSED)
        except ValueError:
            return _text_key
    return _text_key


def key_prefix(index: str, db: str, table: str) -> bytes:
    """``index½db½len(db)table½len(table)``: what every item of one key of one table
    starts with.
    """
    db_bytes, table_bytes = db.encode(), table.encode()
    return b"".join(
        (
            index.encode(),
            SEPARATOR,
            db_bytes,
            SEPARATOR,
            str(len(db_bytes)).encode(),
            table_bytes,
            SEPARATOR,
            str(len(table_bytes)).encode(),
        )
    )


_Key = tuple[bytes, tuple[tuple[int, SortKey], ...]]
"""A unique key of a table: its prefix and, per key part, the row position and sort key."""


def _unique_keys(table: TableSchema, _: None) -> tuple[_Key, ...]:
    """The table's unique keys, PRIMARY first, then each UNIQUE index in declaration order,
    then for each FOREIGN KEY the parent's referenced unique key over the child's values
    (MySQL's ``add_pke``: a child row conflicts with its parent's row).
    """
    columns = table.columns
    primary = tuple((pos, sort_key(columns[pos])) for pos in table.pk_positions)
    keys = [(key_prefix(PRIMARY, table.db, table.name), primary)]
    for name, positions in table.unique_positions:
        parts = tuple((pos, sort_key(columns[pos])) for pos in positions)
        keys.append((key_prefix(name, table.db, table.name), parts))
    for fk in table.foreign_keys:
        if fk.parent_key is None:
            continue
        parts = tuple(
            (table.positions[c], sort_key(columns[table.positions[c]])) for c in fk.columns
        )
        keys.append((key_prefix(fk.parent_key, fk.parent_db, fk.parent_table), parts))
    return tuple(keys)


_KEYS: Final[SchemaMemo[None, tuple[_Key, ...]]] = SchemaMemo(_unique_keys)


def _key_hash(prefix: bytes, parts: tuple[tuple[int, SortKey], ...], row: Row) -> int | None:
    """The item of one unique key in ``row``; None when a part is NULL (NULL conflicts
    with nothing).
    """
    pieces = [prefix]
    for position, key in parts:
        value = row[position]
        if value is None:
            return None
        image = key(value)
        pieces += (image, SEPARATOR, str(len(image)).encode())
    return xxhash.xxh64_intdigest(b"".join(pieces), SEED)


def write_set(changes: Iterable[RowChange]) -> frozenset[int]:
    """The write set of a transaction's row changes: every unique key's item of every
    before and after image (module docstring).
    """
    items: set[int] = set()
    for change in changes:
        keys = _KEYS.get(change.table, None)
        for row in (change.before, change.after):
            if row is None:
                continue
            for prefix, parts in keys:
                item = _key_hash(prefix, parts, row)
                if item is not None:
                    items.add(item)
    return frozenset(items)
