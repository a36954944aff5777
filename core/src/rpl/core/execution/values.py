"""Result-set column descriptions for table columns (type codes, lengths, flags)."""

from __future__ import annotations

from rpl.core.engine import ColumnSchema, TableSchema
from rpl.core.net import responses as r

_INTS = {
    "TINYINT": (r.MYSQL_TYPE_TINY, 4),
    "SMALLINT": (0x02, 6),
    "MEDIUMINT": (0x09, 9),
    "INT": (r.MYSQL_TYPE_LONG, 11),
    "INTEGER": (r.MYSQL_TYPE_LONG, 11),
    "BIGINT": (r.MYSQL_TYPE_LONGLONG, 20),
    "BOOL": (r.MYSQL_TYPE_TINY, 1),
    "BOOLEAN": (r.MYSQL_TYPE_TINY, 1),
}


def column_type(column: ColumnSchema, schema: TableSchema, name: str | None = None) -> r.Column:
    """The ColumnDefinition a SELECT of ``column`` sends."""
    flags = 0 if column.nullable else r.NOT_NULL_FLAG
    if column.name in schema.primary_key:
        flags |= r.PRI_KEY_FLAG
    shown = name or column.name
    type_name = column.type_name
    if type_name in _INTS:
        code, length = _INTS[type_name]
        if column.length == 1 and code == r.MYSQL_TYPE_TINY:
            length = 1  # TINYINT(1): what connectors read as a boolean
        flags |= r.NUM_FLAG | (r.UNSIGNED_FLAG if column.unsigned else 0)
        return r.Column(shown, code, length, r.CHARSET_BINARY, flags, 0, schema.name, schema.db)
    if type_name in ("DOUBLE", "FLOAT", "REAL"):
        return r.Column(
            shown,
            r.MYSQL_TYPE_DOUBLE,
            22,
            r.CHARSET_BINARY,
            flags | r.NUM_FLAG,
            31,
            schema.name,
            schema.db,
        )
    if type_name in ("DECIMAL", "NUMERIC"):
        return r.Column(
            shown,
            r.MYSQL_TYPE_DECIMAL_NEW,
            (column.length or 10) + 2,
            r.CHARSET_BINARY,
            flags | r.NUM_FLAG,
            column.scale or 0,
            schema.name,
            schema.db,
        )
    if type_name in ("DATETIME", "TIMESTAMP"):
        return r.Column(
            shown, r.MYSQL_TYPE_DATETIME, 19, r.CHARSET_BINARY, flags, 0, schema.name, schema.db
        )
    if type_name == "DATE":
        return r.Column(
            shown, r.MYSQL_TYPE_DATE, 10, r.CHARSET_BINARY, flags, 0, schema.name, schema.db
        )
    if type_name in ("BLOB", "BINARY", "VARBINARY", "LONGBLOB", "MEDIUMBLOB", "TINYBLOB"):
        return r.Column(
            shown,
            r.MYSQL_TYPE_BLOB,
            65535,
            r.CHARSET_BINARY,
            flags | r.BINARY_FLAG,
            0,
            schema.name,
            schema.db,
        )
    code = r.MYSQL_TYPE_STRING if type_name == "CHAR" else r.MYSQL_TYPE_VAR_STRING
    if type_name.endswith("TEXT"):
        code = r.MYSQL_TYPE_BLOB
    return r.Column(
        shown,
        code,
        4 * (column.length or 65535),
        r.CHARSET_UTF8MB4,
        flags,
        0,
        schema.name,
        schema.db,
    )
