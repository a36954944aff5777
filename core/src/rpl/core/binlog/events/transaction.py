"""The events inside a transaction, after its GTID event: QUERY (2), a statement with its
context (BEGIN, COMMIT, DDL, statement-format DML); INTVAR (5), the auto-increment
values the next statement uses; XID (16), which commits the transaction.

QUERY and XID also have byte-level encoders (:func:`encode_query`, :func:`encode_xid`) a
session uses for every transaction, and readers that take a few fields in place
(:func:`query_layout`, :func:`query_body`, :func:`xid_body`); each shares its layout with
its event class.
"""

from __future__ import annotations

import struct
from typing import ClassVar, Final, Self

import attrs
from mypy_extensions import mypyc_attr

from rpl.core.binlog.events.header import (
    _U32,
    _U64,
    INTVAR_EVENT,
    QUERY_EVENT,
    XID_EVENT,
    Event,
    EventError,
    _offsets,
    _raw,
    _text,
    unsealed,
)

INVALID_INT_EVENT: Final = 0
LAST_INSERT_ID_EVENT: Final = 1
INSERT_ID_EVENT: Final = 2

# QUERY status variables (one code byte, then the value).
Q_FLAGS2_CODE: Final = 0x00
Q_SQL_MODE_CODE: Final = 0x01
Q_CHARSET_CODE: Final = 0x04
Q_CATALOG_NZ_CODE: Final = 0x06
Q_UPDATED_DB_NAMES: Final = 0x0C
MAX_DBS_IN_EVENT_MTS: Final = 16
OVER_MAX_DBS_IN_EVENT_MTS: Final = 254
SQL_MODE_DEFAULT_80: Final = 0x45A00020
"""MySQL 8.0's default sql_mode as Q_SQL_MODE bits (ONLY_FULL_GROUP_BY, STRICT_TRANS_TABLES,
NO_ZERO_IN_DATE, NO_ZERO_DATE, ERROR_FOR_DIVISION_BY_ZERO, NO_ENGINE_SUBSTITUTION)."""
UTF8MB4_0900_AI_CI: Final = 255

_QUERY_POST_HEADER: Final = struct.Struct("<IIBHH")

_INTVAR: Final = struct.Struct("<BQ")

QUERY_AT: Final = _offsets(
    _QUERY_POST_HEADER, ("thread_id", "exec_time", "db_len", "error_code", "status_len")
)
"""The QUERY post header's field offsets, from the body's start (see :func:`query_layout`)."""
QUERY_POST_HEADER_LEN: Final = _QUERY_POST_HEADER.size


def default_status_vars(
    *,
    flags2: int = 0,
    sql_mode: int = SQL_MODE_DEFAULT_80,
    catalog: str = "std",
    charset_client: int = UTF8MB4_0900_AI_CI,
    collation_connection: int = UTF8MB4_0900_AI_CI,
    collation_server: int = UTF8MB4_0900_AI_CI,
    updated_db_names: list[str] | None = None,
) -> bytes:
    """The status variables of a QUERY event: MySQL 8.0's first four (26 bytes), then
    Q_UPDATED_DB_NAMES when ``updated_db_names`` is given.

    Codes 0x00..0x0B come first because a reader stops at the first code it does not know:
    MariaDB reads the four and skips Q_UPDATED_DB_NAMES (0x0C); MySQL's multi-threaded
    replica uses it. More than 16 names are written as "too many" (254, no names).
    """
    catalog_bytes = catalog.encode("utf-8")
    parts = [
        bytes((Q_FLAGS2_CODE,)),
        _U32.pack(flags2),
        bytes((Q_SQL_MODE_CODE,)),
        _U64.pack(sql_mode),
        bytes((Q_CATALOG_NZ_CODE, len(catalog_bytes))),
        catalog_bytes,
        struct.pack(
            "<BHHH", Q_CHARSET_CODE, charset_client, collation_connection, collation_server
        ),
    ]
    if updated_db_names is not None:
        if len(updated_db_names) > MAX_DBS_IN_EVENT_MTS:
            parts.append(bytes((Q_UPDATED_DB_NAMES, OVER_MAX_DBS_IN_EVENT_MTS)))
        else:
            parts.append(bytes((Q_UPDATED_DB_NAMES, len(updated_db_names))))
            parts.extend(_raw(name) + b"\0" for name in updated_db_names)
    return b"".join(parts)


@mypyc_attr(native_class=False)  # compiled builds: attrs needs a Python class
@attrs.frozen
class QueryEvent(Event):
    """QUERY (2): a statement (BEGIN, COMMIT, DDL, statement-format DML) and its context."""

    TYPE_CODE: "ClassVar[int]" = QUERY_EVENT

    thread_id: int
    exec_time: int
    error_code: int
    status_vars: bytes
    db: str
    query: str

    def encode_body(self) -> bytes:
        return _query_body(
            self.thread_id, self.exec_time, self.error_code, self.status_vars, self.db, self.query
        )

    @classmethod
    def decode_body(cls, body: bytes) -> Self:
        thread_id, exec_time, error_code, db_start, db_len = query_layout(body, 0, len(body))
        db, query = _query_strings(body, db_start, db_len)
        return cls(
            thread_id=thread_id,
            exec_time=exec_time,
            error_code=error_code,
            status_vars=body[_QUERY_POST_HEADER.size : db_start],
            db=db,
            query=query,
        )


def query_body(body: bytes) -> tuple[str, str]:
    """(database, statement) of a QUERY body; EventError if the layout overruns it."""
    _, _, _, db_start, db_len = query_layout(body, 0, len(body))
    return _query_strings(body, db_start, db_len)


def _query_strings(body: bytes, db_start: int, db_len: int) -> tuple[str, str]:
    return _text(body[db_start : db_start + db_len]), _text(body[db_start + db_len + 1 :])


def _query_body(
    thread_id: int, exec_time: int, error_code: int, status_vars: bytes, db: str, query: str
) -> bytes:
    raw_db = _raw(db)
    if len(raw_db) > 255 or b"\0" in raw_db:
        raise ValueError(f"database name {db!r} is too long or contains NUL")
    return b"".join(
        (
            _QUERY_POST_HEADER.pack(
                thread_id, exec_time, len(raw_db), error_code, len(status_vars)
            ),
            status_vars,
            raw_db,
            b"\0",
            _raw(query),
        )
    )


def encode_query(
    thread_id: int,
    db: str,
    query: str,
    *,
    status_vars: bytes,
    server_id: int,
    timestamp: int,
    checksum: bool,
) -> bytearray:
    """The whole QUERY event of a statement that ran without error: the bytes of
    ``encode_event(QueryEvent(thread_id, 0, 0, status_vars, db, query), ...,
    crc_later=True)``, built without the event object (a session makes one or more per
    transaction).
    """
    return unsealed(
        QUERY_EVENT,
        _query_body(thread_id, 0, 0, status_vars, db, query),
        server_id,
        timestamp,
        checksum,
    )


def query_layout(
    data: bytes | bytearray | memoryview, body_at: int, body_end: int
) -> tuple[int, int, int, int, int]:
    """(thread_id, exec_time, error_code, database offset, database length) of the QUERY
    body at ``data[body_at:body_end]``; the statement starts after the database name and
    its NUL. EventError if the layout overruns the body.
    """
    if body_end - body_at < _QUERY_POST_HEADER.size:
        raise EventError(
            f"QUERY body of {body_end - body_at} bytes is shorter than the post header"
        )
    thread_id, exec_time, db_len, error_code, status_len = _QUERY_POST_HEADER.unpack_from(
        data, body_at
    )
    db_start = body_at + _QUERY_POST_HEADER.size + status_len
    if db_start + db_len + 1 > body_end:
        raise EventError("QUERY: status variables and database name overrun the event")
    if data[db_start + db_len] != 0:
        raise EventError("QUERY: database name is not NUL-terminated")
    return thread_id, exec_time, error_code, db_start - body_at, db_len


@mypyc_attr(native_class=False)  # compiled builds: attrs needs a Python class
@attrs.frozen
class XidEvent(Event):
    """XID (16): commits a transaction of a transactional engine."""

    TYPE_CODE: "ClassVar[int]" = XID_EVENT

    xid: int

    def encode_body(self) -> bytes:
        return _U64.pack(self.xid)

    @classmethod
    def decode_body(cls, body: bytes) -> Self:
        return cls(xid_body(body))


def xid_body(body: bytes) -> int:
    """The XID of an XID body; EventError unless it is 8 bytes."""
    if len(body) != _U64.size:
        raise EventError(f"XID body of {len(body)} bytes is not 8")
    xid: int = _U64.unpack(body)[0]
    return xid


def encode_xid(xid: int, *, server_id: int, timestamp: int, checksum: bool) -> bytearray:
    """The whole XID event: the bytes of ``encode_event(XidEvent(xid), ...,
    crc_later=True)``, built without the event object (every transaction ends with one).
    """
    return unsealed(XID_EVENT, _U64.pack(xid), server_id, timestamp, checksum)


@mypyc_attr(native_class=False)  # compiled builds: attrs needs a Python class
@attrs.frozen
class IntvarEvent(Event):
    """INTVAR (5): LAST_INSERT_ID() or the INSERT_ID for the next statement."""

    TYPE_CODE: "ClassVar[int]" = INTVAR_EVENT

    kind: int
    value: int

    def encode_body(self) -> bytes:
        return _INTVAR.pack(self.kind, self.value)

    @classmethod
    def decode_body(cls, body: bytes) -> Self:
        if len(body) != _INTVAR.size:
            raise EventError(f"INTVAR body of {len(body)} bytes is not 9")
        kind, value = _INTVAR.unpack(body)
        if kind not in (LAST_INSERT_ID_EVENT, INSERT_ID_EVENT):
            raise EventError(f"INTVAR of unknown kind {kind}")
        return cls(kind, value)
