"""The binlog event codec: MySQL 8.0's v4 events, byte for byte.

Every reader and writer in the project (the binlog writer, the dump thread, the replica's
relay log, the validators) goes through this package, so what it writes is what MySQL 8.0
writes and what it accepts is what MySQL's and MariaDB's readers accept. It is written by
hand because no maintained Python library writes MySQL 8.0 binlog events
(python-mysql-replication only reads them).

An event is the 19-byte common header (:class:`EventHeader`), a body, and with
``binlog_checksum = CRC32`` a 4-byte zlib CRC32 of everything before it; ``event_size``
counts all of it. Each event class knows its type code and its body only; the header and
the CRC are added by :func:`encode_event` and checked by :func:`decode_event`.

Two rules that are easy to get wrong hold here:

- The FORMAT_DESCRIPTION event always ends with a 4-byte CRC slot, even when its
  ``checksum_alg`` is OFF (MySQL then still fills in a real CRC32), and that CRC is computed
  as if the header flag ``LOG_EVENT_BINLOG_IN_USE_F`` were clear, so the server can clear
  the flag in place at offset 21 of the file without making the CRC wrong.
- The GTID event's ``transaction_length`` counts the whole transaction including the GTID
  event itself, whose size depends on the packed length: see
  :meth:`GtidEvent.with_transaction_length`.

Type codes this codec does not model decode to :class:`UnknownEvent`, which re-encodes to
the same bytes, so a relay log can pass through any event a source sends.

The package's modules, each importing only those above it:

- :mod:`~rpl.core.binlog.events.header`: the common header, the CRC, the constants every
  family uses and the base :class:`Event`;
- one module per event family: :mod:`~rpl.core.binlog.events.control`
  (FORMAT_DESCRIPTION, PREVIOUS_GTIDS, ROTATE, STOP, HEARTBEAT, VIEW_CHANGE),
  :mod:`~rpl.core.binlog.events.gtid_log` (GTID, ANONYMOUS_GTID) and
  :mod:`~rpl.core.binlog.events.transaction` (QUERY, INTVAR, XID),
  :mod:`~rpl.core.binlog.events.table_map` (TABLE_MAP) and
  :mod:`~rpl.core.binlog.events.rows` (WRITE/UPDATE/DELETE_ROWS v2, ROWS_QUERY), whose
  columns :mod:`~rpl.core.binlog.events.column_types` describes and whose values
  :mod:`~rpl.core.binlog.events.row_values` (with
  :mod:`~rpl.core.binlog.events.temporal`) packs per column type;
- :mod:`~rpl.core.binlog.events.codec`: the type-code -> class map and whole events to and
  from bytes;
- :mod:`~rpl.core.binlog.events.fastpath`: whole events edited in place (``log_pos`` and
  CRCs of a group, checksum conversion) without event objects.

Everything a caller uses is imported from here; a new event type is a class in its
family's module and an entry in :data:`EVENT_CLASSES`.
"""

from __future__ import annotations

from rpl.core.binlog.events.codec import (
    EVENT_CLASSES,
    UnknownEvent,
    checked_body,
    decode_event,
    decode_with_header,
    encode_event,
)
from rpl.core.binlog.events.column_types import (
    BINARY_CHARSET,
    INT_SIZE,
    METADATA_LENGTH,
    MYSQL_TYPE_BIT,
    MYSQL_TYPE_BLOB,
    MYSQL_TYPE_DATE,
    MYSQL_TYPE_DATETIME2,
    MYSQL_TYPE_DOUBLE,
    MYSQL_TYPE_ENUM,
    MYSQL_TYPE_FLOAT,
    MYSQL_TYPE_INT24,
    MYSQL_TYPE_JSON,
    MYSQL_TYPE_LONG,
    MYSQL_TYPE_LONGLONG,
    MYSQL_TYPE_NEWDECIMAL,
    MYSQL_TYPE_SET,
    MYSQL_TYPE_SHORT,
    MYSQL_TYPE_STRING,
    MYSQL_TYPE_TIME2,
    MYSQL_TYPE_TIMESTAMP2,
    MYSQL_TYPE_TINY,
    MYSQL_TYPE_VARCHAR,
    MYSQL_TYPE_YEAR,
    NUMERIC_TYPES,
    UTF8MB4_0900_CHARSET,
    BinlogColumn,
    binlog_column,
)
from rpl.core.binlog.events.control import (
    POST_HEADER_LENGTHS_8029,
    SERVER_VERSION_LEN,
    FormatDescriptionEvent,
    HeartbeatEvent,
    PreviousGtidsEvent,
    RotateEvent,
    StopEvent,
    ViewChangeEvent,
)
from rpl.core.binlog.events.fastpath import (
    artificial,
    convert_checksum,
    event_checksum_alg,
    finish_in_python,
    relocate_events,
    seal_events,
    set_log_pos,
)
from rpl.core.binlog.events.gtid_log import (
    GTID_AT,
    GTID_BODY_MIN,
    GTID_FLAG_MAY_HAVE_SBR,
    GTID_POST_HEADER_LEN,
    LOGICAL_TIMESTAMP_TYPECODE,
    AnonymousGtidEvent,
    GtidEvent,
    GtidLayout,
    encode_gtid,
    event_gtid,
    gtid_body,
    gtid_fields,
    gtid_transaction_length,
    valid_gno,
)
from rpl.core.binlog.events.header import (
    ANONYMOUS_GTID_LOG_EVENT,
    BINLOG_CHECKSUM_ALG_CRC32,
    BINLOG_CHECKSUM_ALG_OFF,
    BINLOG_MAGIC,
    BINLOG_VERSION,
    CHECKSUM_LEN,
    FORMAT_DESCRIPTION_EVENT,
    GTID_LOG_EVENT,
    HEADER_AT,
    HEADER_LEN,
    HEARTBEAT_LOG_EVENT,
    INTVAR_EVENT,
    LOG_EVENT_ARTIFICIAL_F,
    LOG_EVENT_BINLOG_IN_USE_F,
    LOG_EVENT_IGNORABLE_F,
    LOG_EVENT_SUPPRESS_USE_F,
    LOG_EVENT_THREAD_SPECIFIC_F,
    MAX_EVENT_SIZE,
    PREVIOUS_GTIDS_LOG_EVENT,
    QUERY_EVENT,
    ROTATE_EVENT,
    SERVER_VERSION,
    SERVER_VERSION_ID,
    STOP_EVENT,
    UNDEFINED_SERVER_VERSION,
    VIEW_CHANGE_EVENT,
    XID_EVENT,
    Event,
    EventError,
    EventHeader,
    unpack_header,
    unsealed,
    verify_checksum,
)
from rpl.core.binlog.events.row_values import RowValue, decode_value, encode_value, value_size
from rpl.core.binlog.events.rows import (
    COMPLETE_ROWS_F,
    DELETE_ROWS_EVENT,
    NO_FOREIGN_KEY_CHECKS_F,
    RELAXED_UNIQUE_CHECKS_F,
    ROWS_POST_HEADER_LEN,
    ROWS_QUERY_LOG_EVENT,
    STMT_END_F,
    UPDATE_ROWS_EVENT,
    WRITE_ROWS_EVENT,
    DeleteRowsEvent,
    Image,
    RowsEvent,
    RowsQueryEvent,
    UpdateRowsEvent,
    WriteRowsEvent,
    encode_image,
    encode_rows_body,
)
from rpl.core.binlog.events.table_map import (
    TABLE_MAP_EVENT,
    TABLE_MAP_POST_HEADER_LEN,
    TM_BIT_LEN_EXACT_F,
    RowMetadata,
    TableMapEvent,
)
from rpl.core.binlog.events.transaction import (
    INSERT_ID_EVENT,
    INVALID_INT_EVENT,
    LAST_INSERT_ID_EVENT,
    MAX_DBS_IN_EVENT_MTS,
    OVER_MAX_DBS_IN_EVENT_MTS,
    Q_CATALOG_NZ_CODE,
    Q_CHARSET_CODE,
    Q_FLAGS2_CODE,
    Q_SQL_MODE_CODE,
    Q_UPDATED_DB_NAMES,
    QUERY_AT,
    QUERY_POST_HEADER_LEN,
    SQL_MODE_DEFAULT_80,
    UTF8MB4_0900_AI_CI,
    IntvarEvent,
    QueryEvent,
    XidEvent,
    default_status_vars,
    encode_query,
    encode_xid,
    query_body,
    query_layout,
    xid_body,
)
from rpl.core.columns import ColumnDefinition

__all__ = [
    # header
    "ANONYMOUS_GTID_LOG_EVENT",
    "BINLOG_CHECKSUM_ALG_CRC32",
    "BINLOG_CHECKSUM_ALG_OFF",
    "BINLOG_MAGIC",
    "BINLOG_VERSION",
    "CHECKSUM_LEN",
    "FORMAT_DESCRIPTION_EVENT",
    "GTID_LOG_EVENT",
    "HEADER_AT",
    "HEADER_LEN",
    "HEARTBEAT_LOG_EVENT",
    "INTVAR_EVENT",
    "LOG_EVENT_ARTIFICIAL_F",
    "LOG_EVENT_BINLOG_IN_USE_F",
    "LOG_EVENT_IGNORABLE_F",
    "LOG_EVENT_SUPPRESS_USE_F",
    "LOG_EVENT_THREAD_SPECIFIC_F",
    "MAX_EVENT_SIZE",
    "PREVIOUS_GTIDS_LOG_EVENT",
    "VIEW_CHANGE_EVENT",
    "QUERY_EVENT",
    "ROTATE_EVENT",
    "SERVER_VERSION",
    "SERVER_VERSION_ID",
    "STOP_EVENT",
    "UNDEFINED_SERVER_VERSION",
    "XID_EVENT",
    "Event",
    "EventError",
    "EventHeader",
    "unpack_header",
    "unsealed",
    "verify_checksum",
    # control
    "POST_HEADER_LENGTHS_8029",
    "SERVER_VERSION_LEN",
    "FormatDescriptionEvent",
    "HeartbeatEvent",
    "PreviousGtidsEvent",
    "RotateEvent",
    "StopEvent",
    "ViewChangeEvent",
    # gtid_log
    "GTID_AT",
    "GTID_BODY_MIN",
    "GTID_FLAG_MAY_HAVE_SBR",
    "GTID_POST_HEADER_LEN",
    "LOGICAL_TIMESTAMP_TYPECODE",
    "AnonymousGtidEvent",
    "GtidEvent",
    "GtidLayout",
    "encode_gtid",
    "event_gtid",
    "gtid_body",
    "gtid_fields",
    "gtid_transaction_length",
    "valid_gno",
    # transaction
    "INSERT_ID_EVENT",
    "INVALID_INT_EVENT",
    "LAST_INSERT_ID_EVENT",
    "MAX_DBS_IN_EVENT_MTS",
    "OVER_MAX_DBS_IN_EVENT_MTS",
    "QUERY_AT",
    "QUERY_POST_HEADER_LEN",
    "Q_CATALOG_NZ_CODE",
    "Q_CHARSET_CODE",
    "Q_FLAGS2_CODE",
    "Q_SQL_MODE_CODE",
    "Q_UPDATED_DB_NAMES",
    "SQL_MODE_DEFAULT_80",
    "UTF8MB4_0900_AI_CI",
    "IntvarEvent",
    "QueryEvent",
    "XidEvent",
    "default_status_vars",
    "encode_query",
    "encode_xid",
    "query_body",
    "query_layout",
    "xid_body",
    # column_types, row_values
    "INT_SIZE",
    "METADATA_LENGTH",
    "NUMERIC_TYPES",
    "value_size",
    "BINARY_CHARSET",
    "MYSQL_TYPE_BIT",
    "MYSQL_TYPE_BLOB",
    "MYSQL_TYPE_DATE",
    "MYSQL_TYPE_DATETIME2",
    "MYSQL_TYPE_DOUBLE",
    "MYSQL_TYPE_ENUM",
    "MYSQL_TYPE_FLOAT",
    "MYSQL_TYPE_INT24",
    "MYSQL_TYPE_JSON",
    "MYSQL_TYPE_LONG",
    "MYSQL_TYPE_LONGLONG",
    "MYSQL_TYPE_NEWDECIMAL",
    "MYSQL_TYPE_SET",
    "MYSQL_TYPE_SHORT",
    "MYSQL_TYPE_STRING",
    "MYSQL_TYPE_TIME2",
    "MYSQL_TYPE_TIMESTAMP2",
    "MYSQL_TYPE_TINY",
    "MYSQL_TYPE_VARCHAR",
    "MYSQL_TYPE_YEAR",
    "UTF8MB4_0900_CHARSET",
    "BinlogColumn",
    "ColumnDefinition",
    "RowValue",
    "binlog_column",
    "decode_value",
    "encode_value",
    # rows, table_map
    "COMPLETE_ROWS_F",
    "DELETE_ROWS_EVENT",
    "NO_FOREIGN_KEY_CHECKS_F",
    "RELAXED_UNIQUE_CHECKS_F",
    "ROWS_POST_HEADER_LEN",
    "ROWS_QUERY_LOG_EVENT",
    "STMT_END_F",
    "UPDATE_ROWS_EVENT",
    "WRITE_ROWS_EVENT",
    "DeleteRowsEvent",
    "Image",
    "RowsEvent",
    "RowsQueryEvent",
    "UpdateRowsEvent",
    "WriteRowsEvent",
    "encode_image",
    "encode_rows_body",
    "TABLE_MAP_EVENT",
    "TABLE_MAP_POST_HEADER_LEN",
    "TM_BIT_LEN_EXACT_F",
    "RowMetadata",
    "TableMapEvent",
    # codec
    "EVENT_CLASSES",
    "UnknownEvent",
    "checked_body",
    "decode_event",
    "decode_with_header",
    "encode_event",
    # fastpath
    "artificial",
    "convert_checksum",
    "event_checksum_alg",
    "finish_in_python",
    "relocate_events",
    "seal_events",
    "set_log_pos",
]
