"""The limits MySQL 8.0 puts on identifiers and column types, checked before a
definition reaches the catalogue, with MySQL's errors.

- Database, table, column, index and constraint names are at most 64 characters
  (1059 ``Identifier name '...' is too long``) of UTF-8 (1300 ``Invalid utf8mb4
  character string`` for bytes that are not).
- A table has at most 1017 columns, InnoDB's limit (1117 ``Too many columns``).
- CHAR and BINARY hold at most 255 characters or bytes, VARCHAR 16383 characters (65535
  bytes of utf8mb4, four bytes a character: every text column is utf8mb4), VARBINARY
  65535 bytes (1074, naming the maximum).
- DECIMAL has at most 65 digits and 30 after the point, and no more after the point
  than in all (1426, 1425, 1427); the fractional seconds of TIME, DATETIME and
  TIMESTAMP at most 6 digits (1426).

MySQL in strict mode refuses a VARCHAR past its maximum as here; without strict mode it
turns it into a TEXT type with a note. This server always refuses it, so a definition
never changes type behind the client's back.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rpl.core.engine import ColumnSchema
from rpl.core.engine.coercion import invalid_bytes, is_utf8
from rpl.core.errors import (
    ER_INVALID_CHARACTER_STRING,
    ER_M_BIGGER_THAN_D,
    ER_TOO_BIG_FIELDLENGTH,
    ER_TOO_BIG_PRECISION,
    ER_TOO_BIG_SCALE,
    ER_TOO_LONG_IDENT,
    ER_TOO_MANY_FIELDS,
    MySQLError,
)

NAME_CHAR_LEN = 64
"""The longest database, table, column, index or constraint name, in characters."""
MAX_COLUMNS = 1017
"""The most columns an InnoDB table has."""
MAX_LENGTH = {"CHAR": 255, "BINARY": 255, "VARCHAR": 65535 // 4, "VARBINARY": 65535}
"""The longest declared length of each length-bounded string type."""
DECIMAL_MAX_PRECISION = 65
DECIMAL_MAX_SCALE = 30
DATETIME_MAX_DECIMALS = 6
_FRACTIONAL_TYPES = frozenset(("TIME", "DATETIME", "TIMESTAMP"))


def check_names(*names: str | None) -> None:
    """1059 for the first of ``names`` longer than 64 characters, 1300 for one that is
    not UTF-8 (None is no name).
    """
    for name in names:
        if name is None:
            continue
        if len(name) > NAME_CHAR_LEN:
            raise MySQLError.of(ER_TOO_LONG_IDENT, name)
        if not is_utf8(name):
            raise MySQLError.of(ER_INVALID_CHARACTER_STRING, "utf8mb4", invalid_bytes(name))


def check_type(column: ColumnSchema) -> None:
    """The column's type within MySQL's limits of length, precision and scale (1074,
    1425, 1426, 1427).
    """
    kind, length, scale = column.type_name, column.length, column.scale
    limit = MAX_LENGTH.get(kind)
    if limit is not None and length is not None and length > limit:
        raise MySQLError.of(ER_TOO_BIG_FIELDLENGTH, column.name, limit)
    if kind == "DECIMAL" and length is not None and scale is not None:
        if length > DECIMAL_MAX_PRECISION:
            raise MySQLError.of(ER_TOO_BIG_PRECISION, length, column.name, DECIMAL_MAX_PRECISION)
        if scale > DECIMAL_MAX_SCALE:
            raise MySQLError.of(ER_TOO_BIG_SCALE, scale, column.name, DECIMAL_MAX_SCALE)
        if scale > length:
            raise MySQLError.of(ER_M_BIGGER_THAN_D, column.name)
    if kind in _FRACTIONAL_TYPES and length is not None and length > DATETIME_MAX_DECIMALS:
        raise MySQLError.of(ER_TOO_BIG_PRECISION, length, column.name, DATETIME_MAX_DECIMALS)


def check_table(name: str, columns: Sequence[ColumnSchema], key_names: Iterable[str]) -> None:
    """A table definition's names and size: the table's, its columns', its keys' and
    its constraints' names (1059), then at most 1017 columns (1117).
    """
    check_names(name, *(c.name for c in columns), *key_names)
    if len(columns) > MAX_COLUMNS:
        raise MySQLError.of(ER_TOO_MANY_FIELDS)
