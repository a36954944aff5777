"""The binlog event codec: MySQL 8.0's v4 events, byte for byte.

Every reader and writer in the project (the binlog writer, the dump thread, the replica's
relay log, the validators) goes through this module, so what it writes is what MySQL 8.0
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
"""

from __future__ import annotations

import functools
import mmap
import re
import struct
import uuid
import zlib
from collections.abc import Callable
from typing import ClassVar, Final, Literal, Self, TypeVar

import attrs
from mypy_extensions import mypyc_attr

from rpl.core import c_helpers
from rpl.core.binlog.gtid import GNO_MAX, Gtid, GtidSet
from rpl.core.errors import ER_BINLOG_EVENT_CORRUPT, MySQLError

# -- constants ------------------------------------------------------------------------------

QUERY_EVENT: Final = 2
STOP_EVENT: Final = 3
ROTATE_EVENT: Final = 4
INTVAR_EVENT: Final = 5
FORMAT_DESCRIPTION_EVENT: Final = 15
XID_EVENT: Final = 16
HEARTBEAT_LOG_EVENT: Final = 27
GTID_LOG_EVENT: Final = 33
ANONYMOUS_GTID_LOG_EVENT: Final = 34
PREVIOUS_GTIDS_LOG_EVENT: Final = 35

LOG_EVENT_BINLOG_IN_USE_F: Final = 0x1
LOG_EVENT_THREAD_SPECIFIC_F: Final = 0x4
LOG_EVENT_SUPPRESS_USE_F: Final = 0x8
LOG_EVENT_ARTIFICIAL_F: Final = 0x20
LOG_EVENT_IGNORABLE_F: Final = 0x80

BINLOG_MAGIC: Final = b"\xfebin"
HEADER_LEN: Final = 19
CHECKSUM_LEN: Final = 4
BINLOG_CHECKSUM_ALG_OFF: Final = 0
BINLOG_CHECKSUM_ALG_CRC32: Final = 1
BINLOG_VERSION: Final = 4

SERVER_VERSION: Final = "8.0.36-rpl"
"""The version this server claims (8.0.29+, so the 41-entry post-header array applies)."""
SERVER_VERSION_ID: Final = 80036
"""``SERVER_VERSION`` as MySQL's integer X*10000 + Y*100 + Z (GTID events carry it)."""
UNDEFINED_SERVER_VERSION: Final = 999999
"""What MySQL's reader assumes when a GTID event carries no server version."""

POST_HEADER_LENGTHS_8029: Final = bytes((
    0, 13, 0, 8, 0, 0, 0, 0, 4, 0,    # 1-10: QUERY 13, ROTATE 8, APPEND_BLOCK 4
    4, 0, 0, 0, 98, 0, 4, 26, 8, 0,   # 11-20: DELETE_FILE 4, FD 98, *_LOAD_QUERY, TABLE_MAP 8
    0, 0, 8, 8, 8, 2, 0, 0, 0, 10,    # 21-30: v1 ROWS 8, INCIDENT 2, WRITE_ROWS 10
    10, 10, 42, 42, 0, 18, 52, 0, 10,  # 31-39: ROWS 10, GTID/ANONYMOUS 42, TRX_CONTEXT 18,
    #                                    VIEW_CHANGE 52, PARTIAL_UPDATE_ROWS 10
    40, 0,                            # 40-41: TRANSACTION_PAYLOAD (MySQL writes 40), HEARTBEAT_V2
))
"""The FD's post-header length per event type 1..41, as MySQL 8.0.29 and later write it."""

SERVER_VERSION_LEN: Final = 50
"""The FD's server_version field: NUL-padded, the last byte always NUL."""

GTID_FLAG_MAY_HAVE_SBR: Final = 1
LOGICAL_TIMESTAMP_TYPECODE: Final = 2
GTID_POST_HEADER_LEN: Final = 42

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

MAX_EVENT_SIZE: Final = (1 << 30) + (1 << 16)
"""Larger events are corrupt: max_allowed_packet (1 GiB at most) bounds every event."""

_HEADER: Final = struct.Struct("<IBIIIH")
_U16: Final = struct.Struct("<H")
_U32: Final = struct.Struct("<I")
_U64: Final = struct.Struct("<Q")
_CRC_SLOT: Final = struct.Struct("<I")
_NO_CRC: Final = bytes(CHECKSUM_LEN)
_FD_FIXED: Final = struct.Struct("<H50sIB")
_QUERY_POST_HEADER: Final = struct.Struct("<IIBHH")
_GTID_POST_HEADER: Final = struct.Struct("<B16sqBqq")
_GTID_V56: Final = struct.Struct("<B16sq")
_INTVAR: Final = struct.Struct("<BQ")


def _offsets(layout: struct.Struct, names: tuple[str, ...]) -> dict[str, int]:
    """Each field's byte offset in ``layout`` (little-endian, unpadded)."""
    codes = re.findall(r"\d*[a-zA-Z]", layout.format.lstrip("<"))
    assert len(codes) == len(names), (layout.format, names)
    sizes = [struct.calcsize("<" + code) for code in codes]
    return {name: sum(sizes[:i]) for i, name in enumerate(names)}


HEADER_AT: Final = _offsets(_HEADER, ("timestamp", "type_code", "server_id", "event_size",
                                      "log_pos", "flags"))
"""The common header's field offsets: readers that take many events at once (the
validator's sketches) read the same layout as :meth:`EventHeader.unpack`."""
QUERY_AT: Final = _offsets(_QUERY_POST_HEADER, ("thread_id", "exec_time", "db_len",
                                                "error_code", "status_len"))
"""The QUERY post header's field offsets, from the body's start (see :func:`query_layout`)."""
QUERY_POST_HEADER_LEN: Final = _QUERY_POST_HEADER.size
GTID_AT: Final = _offsets(_GTID_V56, ("flags", "sid", "gno"))
"""The GTID body's first field offsets (see :func:`gtid_fields`)."""
GTID_BODY_MIN: Final = _GTID_V56.size
_TIMESTAMP_LEN: Final = 7
_TIMESTAMP_MAX: Final = (1 << 55) - 1
_ORIGINAL_TIMESTAMP_BIT: Final = 1 << 55
_ORIGINAL_VERSION_BIT: Final = 1 << 31
_TEXT_ENCODING: Final = "utf-8"
_TEXT_ERRORS: Final = "surrogateescape"
_NULL_SID: Final = uuid.UUID(int=0)


def _sid_bytes(sid: uuid.UUID) -> bytes:
    """The SID's 16 bytes, as ``sid.bytes`` has them, without that property's interpreted
    code (the group commit leader encodes one GTID event per transaction).
    """
    return sid.int.to_bytes(16, "big")


class EventError(ValueError):
    """A malformed event: bad length, bad CRC, or a body that does not parse."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason

    def mysql_error(self) -> MySQLError:
        """The error MySQL reports for it (ER_BINLOG_EVENT_CORRUPT)."""
        return MySQLError.of(ER_BINLOG_EVENT_CORRUPT)


def _text(data: bytes) -> str:
    return data.decode(_TEXT_ENCODING, _TEXT_ERRORS)


def _raw(text: str) -> bytes:
    return text.encode(_TEXT_ENCODING, _TEXT_ERRORS)


# -- header ---------------------------------------------------------------------------------


@mypyc_attr(native_class=False)  # compiled builds: attrs needs a Python class
@attrs.frozen
class EventHeader:
    """The 19-byte common header; ``log_pos`` is the file offset of the next event."""

    timestamp: int
    type_code: int
    server_id: int
    event_size: int
    log_pos: int
    flags: int

    @classmethod
    def unpack(cls, buf: bytes | bytearray | memoryview, offset: int = 0) -> EventHeader:
        """The header at ``buf[offset:offset + 19]``; EventError if there are fewer bytes."""
        if len(buf) - offset < HEADER_LEN:
            raise EventError(f"event header needs {HEADER_LEN} bytes, {len(buf) - offset} left")
        return cls(*_HEADER.unpack_from(buf, offset))

    def pack(self) -> bytes:
        """The 19 header bytes."""
        return _HEADER.pack(self.timestamp, self.type_code, self.server_id, self.event_size,
                            self.log_pos, self.flags)


# -- events ---------------------------------------------------------------------------------


@mypyc_attr(native_class=False)  # compiled builds: attrs needs a Python class
@attrs.frozen
class Event:
    """Base of the event classes: a type code and a body codec."""

    TYPE_CODE: "ClassVar[int]" = -1

    @property
    def type_code(self) -> int:
        """The event's type code (the header's type byte)."""
        return self.TYPE_CODE

    def encode_body(self) -> bytes:
        """The body: the bytes after the header, without the CRC."""
        raise NotImplementedError

    @classmethod
    def decode_body(cls, body: bytes) -> Self:
        """The event from its body; EventError if malformed."""
        raise NotImplementedError


@mypyc_attr(native_class=False)  # compiled builds: attrs needs a Python class
@attrs.frozen
class FormatDescriptionEvent(Event):
    """FORMAT_DESCRIPTION (15): the first event of every binlog and relay log file.

    Decoding assumes a 5.6.1+ writer, i.e. the checksum-algorithm byte is present.
    """

    TYPE_CODE: "ClassVar[int]" = FORMAT_DESCRIPTION_EVENT

    binlog_version: int = BINLOG_VERSION
    server_version: str = SERVER_VERSION
    created: int = 0
    header_length: int = HEADER_LEN
    post_header_lengths: bytes = POST_HEADER_LENGTHS_8029
    checksum_alg: int = BINLOG_CHECKSUM_ALG_CRC32

    def encode_body(self) -> bytes:
        version = self.server_version.encode("ascii")
        if len(version) >= SERVER_VERSION_LEN:
            raise ValueError(f"server_version {self.server_version!r} is longer than 49 bytes")
        return b"".join((
            _FD_FIXED.pack(self.binlog_version, version, self.created, self.header_length),
            self.post_header_lengths,
            bytes((self.checksum_alg,)),
        ))

    @classmethod
    def decode_body(cls, body: bytes) -> Self:
        if len(body) < _FD_FIXED.size + 1:
            raise EventError(f"FORMAT_DESCRIPTION body of {len(body)} bytes is too short")
        binlog_version, version, created, header_length = _FD_FIXED.unpack_from(body)
        if binlog_version != BINLOG_VERSION:
            raise EventError(f"binlog version {binlog_version} is not supported (only 4)")
        if header_length != HEADER_LEN:
            raise EventError(f"common header length {header_length} is not {HEADER_LEN}")
        return cls(
            binlog_version=binlog_version,
            server_version=version.split(b"\0", 1)[0].decode("ascii", "replace"),
            created=created,
            header_length=header_length,
            post_header_lengths=body[_FD_FIXED.size:-1],
            checksum_alg=body[-1],
        )

    @property
    def number_of_event_types(self) -> int:
        """The highest type code a reader of this file accepts."""
        return len(self.post_header_lengths)


@mypyc_attr(native_class=False)  # compiled builds: attrs needs a Python class
@attrs.frozen
class PreviousGtidsEvent(Event):
    """PREVIOUS_GTIDS (35): the GTIDs in all earlier binlog files (the encoded set)."""

    TYPE_CODE: "ClassVar[int]" = PREVIOUS_GTIDS_LOG_EVENT

    gtids: GtidSet
    """A copy of the set given (a later change to that set does not reach the event)."""

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "gtids", self.gtids.copy())  # frozen: attrs' way in

    def encode_body(self) -> bytes:
        return self.gtids.encode()

    @classmethod
    def decode_body(cls, body: bytes) -> Self:
        try:
            return cls(GtidSet.decode(body))
        except ValueError as exc:
            raise EventError(f"PREVIOUS_GTIDS: {exc}") from exc


GtidLayout = Literal["5.6", "5.7", "8.0"]
"""How much of the GTID body is present: 5.6 = flags, SID, GNO (25 bytes); 5.7 = the
42-byte post header with the logical clock; 8.0 = the post header, commit timestamps,
transaction length and server versions (and the group ticket when set)."""


def _pack_length(value: int) -> bytes:
    """MySQL's packed integer (``net_store_length``)."""
    if value < 251:
        return bytes((value,))
    if value <= 0xFFFF:
        return b"\xfc" + value.to_bytes(2, "little")
    if value <= 0xFFFFFF:
        return b"\xfd" + value.to_bytes(3, "little")
    return b"\xfe" + value.to_bytes(8, "little")


def _unpack_length(body: bytes, position: int) -> tuple[int, int]:
    """The packed integer at ``position`` and the position after it."""
    first = body[position]
    if first < 251:
        return first, position + 1
    width = {0xFC: 2, 0xFD: 3, 0xFE: 8}.get(first)
    if width is None or position + 1 + width > len(body):
        raise EventError(f"bad packed integer at body offset {position}")
    return int.from_bytes(body[position + 1:position + 1 + width], "little"), position + 1 + width


def _packed_size(value: int) -> int:
    return 1 if value < 251 else 3 if value <= 0xFFFF else 4 if value <= 0xFFFFFF else 9


@mypyc_attr(native_class=False)  # compiled builds: attrs needs a Python class
@attrs.frozen(kw_only=True)
class _GtidEventBase(Event):
    """The body shared by GTID (33) and ANONYMOUS_GTID (34); see docs/research §3."""

    flags: int = GTID_FLAG_MAY_HAVE_SBR
    last_committed: int = 0
    sequence_number: int = 0
    immediate_commit_timestamp: int = 0
    original_commit_timestamp: int | None = None
    """None: the same as the immediate timestamp (not written)."""
    transaction_length: int = 0
    immediate_server_version: int = SERVER_VERSION_ID
    original_server_version: int | None = None
    """None: the same as the immediate server version (not written)."""
    commit_group_ticket: int | None = None
    """Group Replication's ticket (8.0.33+), written only when set."""
    layout: GtidLayout = "8.0"

    def _sid_and_gno(self) -> tuple[uuid.UUID, int]:
        raise NotImplementedError

    def encode_body(self) -> bytes:
        sid, gno = self._sid_and_gno()
        if self.layout == "5.6":
            return _GTID_V56.pack(self.flags, _sid_bytes(sid), gno)
        post_header = _GTID_POST_HEADER.pack(
            self.flags, _sid_bytes(sid), gno, LOGICAL_TIMESTAMP_TYPECODE,
            self.last_committed, self.sequence_number)
        if self.layout == "5.7":
            return post_header
        return post_header + self._encode_commit_info()

    def _encode_commit_info(self) -> bytes:
        return _commit_info(self.immediate_commit_timestamp, self.original_commit_timestamp,
                            self.transaction_length, self.immediate_server_version,
                            self.original_server_version, self.commit_group_ticket)

    def with_transaction_length(self, rest_length: int, *, checksum: bool = True) -> Self:
        """This event with ``transaction_length`` set for a transaction whose other events
        (BEGIN .. XID/COMMIT, their CRCs included) take ``rest_length`` bytes.

        The length counts this event too, and this event's size depends on how many bytes
        the packed length takes, so the total is found by iterating to a fixed point. Only
        the 8.0 layout carries the field; other layouts are returned unchanged.
        """
        if self.layout != "8.0":
            return self
        fixed = (HEADER_LEN + self._body_size_without_length()
                 + (CHECKSUM_LEN if checksum else 0) + rest_length)
        return attrs.evolve(self, transaction_length=_length_with_itself(fixed))

    def _body_size_without_length(self) -> int:
        """The 8.0 body's size less its packed ``transaction_length``: fixed by which
        optional fields are written, so it is measured once per combination.
        """
        optional = (type(self), self.original_commit_timestamp is None,
                    self.original_server_version is None, self.commit_group_ticket is None)
        size = _BODY_SIZES.get(optional)
        if size is None:
            bare = attrs.evolve(self, transaction_length=0)
            size = _BODY_SIZES[optional] = len(bare.encode_body()) - _packed_size(0)
        return size


_BODY_SIZES: dict[tuple[object, ...], int] = {}


def _length_with_itself(fixed: int) -> int:
    """A transaction length that counts its own packed bytes besides ``fixed`` others."""
    total = fixed + 1
    while (needed := fixed + _packed_size(total)) != total:
        total = needed
    return total


def _commit_info(immediate: int, original: int | None, transaction_length: int,
                 version: int, original_version: int | None, ticket: int | None) -> bytes:
    """The 8.0 GTID body after the post header: commit timestamps, transaction length,
    server versions, Group Replication's ticket (the optional ones only when set).
    """
    if not 0 <= immediate <= _TIMESTAMP_MAX or not 0 <= (original or 0) <= _TIMESTAMP_MAX:
        raise ValueError("commit timestamps must fit in 55 bits")
    parts = [(immediate | (0 if original is None else _ORIGINAL_TIMESTAMP_BIT))
             .to_bytes(_TIMESTAMP_LEN, "little")]
    if original is not None:
        parts.append(original.to_bytes(_TIMESTAMP_LEN, "little"))
    parts.append(_pack_length(transaction_length))
    if not 0 <= version < _ORIGINAL_VERSION_BIT or not (
            0 <= (original_version or 0) < _ORIGINAL_VERSION_BIT):
        raise ValueError("server versions must fit in 31 bits")
    if original_version is None:
        parts.append(_U32.pack(version))
    else:
        parts.append(_U32.pack(version | _ORIGINAL_VERSION_BIT))
        parts.append(_U32.pack(original_version))
    if ticket is not None:
        parts.append(_U64.pack(ticket))
    return b"".join(parts)


def encode_gtid(sid: uuid.UUID, gno: int, *, last_committed: int, sequence_number: int,
                immediate_commit_timestamp: int, original_commit_timestamp: int | None,
                rest_length: int, server_id: int, timestamp: int,
                checksum: bool) -> bytearray:
    """The whole GTID event that starts a transaction whose other events take
    ``rest_length`` bytes (CRCs included): the bytes of
    ``encode_event(GtidEvent(sid, gno, ...).with_transaction_length(rest_length), ...,
    crc_later=True)`` for the 8.0 layout with the default flags and server version, built
    without the event objects (the group commit leader makes one per transaction).
    """
    post_header = _GTID_POST_HEADER.pack(GTID_FLAG_MAY_HAVE_SBR, _sid_bytes(sid), gno,
                                         LOGICAL_TIMESTAMP_TYPECODE, last_committed,
                                         sequence_number)
    crc_size = CHECKSUM_LEN if checksum else 0
    info_size = len(_commit_info(immediate_commit_timestamp, original_commit_timestamp, 0,
                                 SERVER_VERSION_ID, None, None)) - _packed_size(0)
    length = _length_with_itself(HEADER_LEN + len(post_header) + info_size + crc_size
                                 + rest_length)
    body = post_header + _commit_info(immediate_commit_timestamp, original_commit_timestamp,
                                      length, SERVER_VERSION_ID, None, None)
    return _unsealed(GTID_LOG_EVENT, body, server_id, timestamp, checksum)


def _unsealed(type_code: int, body: bytes, server_id: int, timestamp: int,
              checksum: bool) -> bytearray:
    """Header and ``body``, ``log_pos`` 0 and the CRC's bytes zero: an event for
    :func:`relocate_events` to finish.
    """
    size = HEADER_LEN + len(body) + (CHECKSUM_LEN if checksum else 0)
    data = bytearray(_HEADER.pack(timestamp, type_code, server_id, size, 0, 0))
    data += body
    if checksum:
        data += _NO_CRC
    return data


_G = TypeVar("_G", bound=_GtidEventBase)


def gtid_fields(data: bytes | bytearray | memoryview, body_at: int,
                body_end: int) -> tuple[int, bytes, int]:
    """(flags, SID bytes, GNO) of the GTID body at ``data[body_at:body_end]``."""
    if body_end - body_at < _GTID_V56.size:
        raise EventError(f"GTID body of {body_end - body_at} bytes is shorter than 25")
    flags, sid, gno = _GTID_V56.unpack_from(data, body_at)
    return int(flags), bytes(sid), int(gno)


def gtid_body(body: bytes) -> tuple[uuid.UUID, int, dict[str, object]]:
    """The SID, GNO and other fields (keyword arguments of :class:`GtidEvent`) of a
    GTID or ANONYMOUS_GTID body; EventError if malformed. The GNO's range is the caller's
    to check (an anonymous one is 0).
    """
    flags, sid_bytes, gno = gtid_fields(body, 0, len(body))
    sid = _sid(sid_bytes)
    fields: dict[str, object] = {"flags": flags}
    if len(body) == _GTID_V56.size:
        fields["layout"] = "5.6"
        return sid, gno, fields
    if len(body) < GTID_POST_HEADER_LEN or body[25] != LOGICAL_TIMESTAMP_TYPECODE:
        raise EventError("GTID body has a bad logical clock (length or type code)")
    _, _, _, _, fields["last_committed"], fields["sequence_number"] = (
        _GTID_POST_HEADER.unpack_from(body))
    if len(body) == GTID_POST_HEADER_LEN:
        fields["layout"] = "5.7"
        return sid, gno, fields
    fields.update(_decode_commit_info(body, GTID_POST_HEADER_LEN))
    return sid, gno, fields


def event_gtid(raw: bytes | bytearray | memoryview) -> Gtid:
    """The GTID of the whole GTID event ``raw``, read in place, for readers that need
    nothing else of it (a dump thread skipping what its replica has, a receiver keeping
    Retrieved_Gtid_Set); EventError on a short body or a GNO out of range. The CRC is the
    caller's to check.
    """
    _, sid, gno = gtid_fields(raw, HEADER_LEN, len(raw))
    return Gtid(_sid(sid), valid_gno(gno))


def valid_gno(gno: int) -> int:
    """``gno`` when a GTID event may carry it (1 .. GNO_MAX); EventError otherwise."""
    if not 1 <= gno <= GNO_MAX:
        raise EventError(f"GTID event: invalid GNO {gno}")
    return gno


@functools.lru_cache(maxsize=64)
def _sid(data: bytes) -> uuid.UUID:
    """The UUID of 16 SID bytes (a stream's GTIDs come from few servers)."""
    return uuid.UUID(bytes=data)


def unpack_header(data: bytes | bytearray | memoryview | mmap.mmap,
                  offset: int) -> tuple[int, int, int, int, int, int]:
    """The common header at ``data[offset:]`` as a tuple (timestamp, type_code, server_id,
    event_size, log_pos, flags), for readers that cannot afford an EventHeader per event;
    struct.error if fewer than 19 bytes are left.
    """
    fields: tuple[int, int, int, int, int, int] = _HEADER.unpack_from(data, offset)
    return fields


def gtid_transaction_length(event: _G, rest_length: int, checksum: bool = True) -> _G:
    """``event`` with its ``transaction_length`` set (see
    :meth:`GtidEvent.with_transaction_length`; ``rest_length`` is the byte length of the
    transaction's other events, CRCs included).
    """
    return event.with_transaction_length(rest_length, checksum=checksum)


def _decode_commit_info(body: bytes, position: int) -> dict[str, object]:
    """The optional 8.0 fields after the GTID post header, as far as they are present."""
    fields: dict[str, object] = {"layout": "8.0"}
    end = len(body)
    if position + _TIMESTAMP_LEN > end:
        raise EventError("GTID body: truncated immediate_commit_timestamp")
    immediate = int.from_bytes(body[position:position + _TIMESTAMP_LEN], "little")
    position += _TIMESTAMP_LEN
    fields["immediate_commit_timestamp"] = immediate & _TIMESTAMP_MAX
    if immediate & _ORIGINAL_TIMESTAMP_BIT:
        if position + _TIMESTAMP_LEN > end:
            raise EventError("GTID body: truncated original_commit_timestamp")
        fields["original_commit_timestamp"] = int.from_bytes(
            body[position:position + _TIMESTAMP_LEN], "little")
        position += _TIMESTAMP_LEN
    if position < end:
        fields["transaction_length"], position = _unpack_length(body, position)
    if position + 4 <= end:
        (version,) = _U32.unpack_from(body, position)
        position += 4
        fields["immediate_server_version"] = version & ~_ORIGINAL_VERSION_BIT
        if version & _ORIGINAL_VERSION_BIT:
            if position + 4 > end:
                raise EventError("GTID body: truncated original_server_version")
            (fields["original_server_version"],) = _U32.unpack_from(body, position)
            position += 4
    else:
        fields["immediate_server_version"] = UNDEFINED_SERVER_VERSION
    if position + 8 <= end:
        (fields["commit_group_ticket"],) = _U64.unpack_from(body, position)
        position += 8
    if position != end:
        raise EventError(f"GTID body: {end - position} unexpected bytes at the end")
    return fields


@mypyc_attr(native_class=False)  # compiled builds: attrs needs a Python class
@attrs.frozen
class GtidEvent(_GtidEventBase):
    """GTID (33): starts a transaction and names its GTID ``sid:gno``."""

    TYPE_CODE: "ClassVar[int]" = GTID_LOG_EVENT

    sid: uuid.UUID
    gno: int

    @property
    def gtid(self) -> Gtid:
        """The transaction's GTID."""
        return Gtid(self.sid, self.gno)

    def _sid_and_gno(self) -> tuple[uuid.UUID, int]:
        if not 1 <= self.gno <= GNO_MAX:
            raise ValueError(f"GNO {self.gno} is out of range")
        return self.sid, self.gno

    @classmethod
    def decode_body(cls, body: bytes) -> Self:
        sid, gno, fields = gtid_body(body)
        return cls(sid, valid_gno(gno), **fields)  # type: ignore[arg-type]


@mypyc_attr(native_class=False)  # compiled builds: attrs needs a Python class
@attrs.frozen
class AnonymousGtidEvent(_GtidEventBase):
    """ANONYMOUS_GTID (34): starts a transaction that has no GTID (zero SID, GNO 0)."""

    TYPE_CODE: "ClassVar[int]" = ANONYMOUS_GTID_LOG_EVENT

    def _sid_and_gno(self) -> tuple[uuid.UUID, int]:
        return _NULL_SID, 0

    @classmethod
    def decode_body(cls, body: bytes) -> Self:
        sid, gno, fields = gtid_body(body)
        if sid != _NULL_SID or gno != 0:
            raise EventError(f"ANONYMOUS_GTID event with GTID {sid}:{gno}")
        return cls(**fields)  # type: ignore[arg-type]


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
        bytes((Q_FLAGS2_CODE,)), _U32.pack(flags2),
        bytes((Q_SQL_MODE_CODE,)), _U64.pack(sql_mode),
        bytes((Q_CATALOG_NZ_CODE, len(catalog_bytes))), catalog_bytes,
        struct.pack("<BHHH", Q_CHARSET_CODE, charset_client, collation_connection,
                    collation_server),
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
        return _query_body(self.thread_id, self.exec_time, self.error_code, self.status_vars,
                           self.db, self.query)

    @classmethod
    def decode_body(cls, body: bytes) -> Self:
        thread_id, exec_time, error_code, db_start, db_len = query_layout(body, 0, len(body))
        db, query = _query_strings(body, db_start, db_len)
        return cls(
            thread_id=thread_id,
            exec_time=exec_time,
            error_code=error_code,
            status_vars=body[_QUERY_POST_HEADER.size:db_start],
            db=db,
            query=query,
        )


def query_body(body: bytes) -> tuple[str, str]:
    """(database, statement) of a QUERY body; EventError if the layout overruns it."""
    _, _, _, db_start, db_len = query_layout(body, 0, len(body))
    return _query_strings(body, db_start, db_len)


def _query_strings(body: bytes, db_start: int, db_len: int) -> tuple[str, str]:
    return _text(body[db_start:db_start + db_len]), _text(body[db_start + db_len + 1:])


def _query_body(thread_id: int, exec_time: int, error_code: int, status_vars: bytes,
                db: str, query: str) -> bytes:
    raw_db = _raw(db)
    if len(raw_db) > 255 or b"\0" in raw_db:
        raise ValueError(f"database name {db!r} is too long or contains NUL")
    return b"".join((
        _QUERY_POST_HEADER.pack(thread_id, exec_time, len(raw_db), error_code,
                                len(status_vars)),
        status_vars, raw_db, b"\0", _raw(query),
    ))


def encode_query(thread_id: int, db: str, query: str, *, status_vars: bytes, server_id: int,
                 timestamp: int, checksum: bool) -> bytearray:
    """The whole QUERY event of a statement that ran without error: the bytes of
    ``encode_event(QueryEvent(thread_id, 0, 0, status_vars, db, query), ...,
    crc_later=True)``, built without the event object (a session makes one or more per
    transaction).
    """
    return _unsealed(QUERY_EVENT, _query_body(thread_id, 0, 0, status_vars, db, query),
                     server_id, timestamp, checksum)


def query_layout(data: bytes | bytearray | memoryview, body_at: int,
                 body_end: int) -> tuple[int, int, int, int, int]:
    """(thread_id, exec_time, error_code, database offset, database length) of the QUERY
    body at ``data[body_at:body_end]``; the statement starts after the database name and
    its NUL. EventError if the layout overruns the body.
    """
    if body_end - body_at < _QUERY_POST_HEADER.size:
        raise EventError(f"QUERY body of {body_end - body_at} bytes is shorter than the "
                         f"post header")
    thread_id, exec_time, db_len, error_code, status_len = (
        _QUERY_POST_HEADER.unpack_from(data, body_at))
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
    return _unsealed(XID_EVENT, _U64.pack(xid), server_id, timestamp, checksum)


@mypyc_attr(native_class=False)  # compiled builds: attrs needs a Python class
@attrs.frozen
class RotateEvent(Event):
    """ROTATE (4): the next events are in ``next_file`` (a base name) at ``position``."""

    TYPE_CODE: "ClassVar[int]" = ROTATE_EVENT

    position: int
    next_file: str

    def encode_body(self) -> bytes:
        if not self.next_file:
            raise ValueError("ROTATE needs a file name")
        return _U64.pack(self.position) + _raw(self.next_file)

    @classmethod
    def decode_body(cls, body: bytes) -> Self:
        if len(body) <= _U64.size:
            raise EventError("ROTATE body has no file name")
        return cls(_U64.unpack_from(body)[0], _text(body[_U64.size:]))


@mypyc_attr(native_class=False)  # compiled builds: attrs needs a Python class
@attrs.frozen
class StopEvent(Event):
    """STOP (3): the server shut down cleanly; the last event of its file."""

    TYPE_CODE: "ClassVar[int]" = STOP_EVENT

    def encode_body(self) -> bytes:
        return b""

    @classmethod
    def decode_body(cls, body: bytes) -> Self:
        if body:
            raise EventError(f"STOP body of {len(body)} bytes is not empty")
        return cls()


@mypyc_attr(native_class=False)  # compiled builds: attrs needs a Python class
@attrs.frozen
class HeartbeatEvent(Event):
    """HEARTBEAT (27), wire only (never in a file): the source's current binlog file.

    The header's ``log_pos`` carries the position in that file.
    """

    TYPE_CODE: "ClassVar[int]" = HEARTBEAT_LOG_EVENT

    log_file: str

    def encode_body(self) -> bytes:
        return _raw(self.log_file)

    @classmethod
    def decode_body(cls, body: bytes) -> Self:
        return cls(_text(body))


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


@mypyc_attr(native_class=False)  # compiled builds: attrs needs a Python class
@attrs.frozen
class UnknownEvent(Event):
    """Any type this codec does not model, kept as its body so it can be passed through."""

    event_type: int
    body: bytes

    @property
    def type_code(self) -> int:
        """The event's type code (the header's type byte)."""
        return self.event_type

    def encode_body(self) -> bytes:
        return self.body

    @classmethod
    def decode_body(cls, body: bytes) -> Self:
        raise TypeError("UnknownEvent needs its type code: use decode_event")


EVENT_CLASSES: Final[dict[int, type[Event]]] = {
    cls.TYPE_CODE: cls
    for cls in (QueryEvent, StopEvent, RotateEvent, IntvarEvent, FormatDescriptionEvent,
                XidEvent, HeartbeatEvent, GtidEvent, AnonymousGtidEvent, PreviousGtidsEvent)
}


# -- whole events ---------------------------------------------------------------------------


def _crc(event: bytes | bytearray | memoryview) -> int:
    """The CRC32 of ``event`` (an event without its CRC); an FD's counts IN_USE as clear."""
    if event[4] == FORMAT_DESCRIPTION_EVENT and event[17] & LOG_EVENT_BINLOG_IN_USE_F:
        crc = zlib.crc32(event[:17])
        crc = zlib.crc32(bytes((event[17] & ~LOG_EVENT_BINLOG_IN_USE_F,)), crc)
        return zlib.crc32(event[18:], crc)
    return zlib.crc32(event)


def _has_crc(type_code: int, checksum: bool) -> bool:
    return checksum or type_code == FORMAT_DESCRIPTION_EVENT


def encode_event(event: Event, *, server_id: int, timestamp: int, log_pos: int = 0,
                 flags: int = 0, checksum: bool = True, crc_later: bool = False) -> bytes:
    """The whole event: header (``event_size`` filled in), body, and the CRC32 when
    ``checksum`` is on (an FD gets one always). ``crc_later``: the CRC's four bytes are
    left zero, for an event that :func:`relocate_events` finishes before it is written
    (the CRC covers ``log_pos``, which only the writer knows).
    """
    body = event.encode_body()
    type_code = event.type_code
    has_crc = _has_crc(type_code, checksum)
    size = HEADER_LEN + len(body) + (CHECKSUM_LEN if has_crc else 0)
    data = _HEADER.pack(timestamp, type_code, server_id, size, log_pos, flags) + body
    if has_crc:
        data += _NO_CRC if crc_later else _CRC_SLOT.pack(_crc(data))
    return data


def set_log_pos(buf: bytearray, offset: int, log_pos: int, checksum: bool) -> None:
    """Set the ``log_pos`` of the event at ``buf[offset]`` in place and redo its CRC."""
    _U32.pack_into(buf, offset + 13, log_pos)
    if _has_crc(buf[offset + 4], checksum):
        (size,) = _U32.unpack_from(buf, offset + 9)
        crc_at = offset + size - CHECKSUM_LEN
        with memoryview(buf) as view:
            crc = _crc(view[offset:crc_at])
        _U32.pack_into(buf, crc_at, crc)


def relocate_events(buf: bytearray, file_position: int, *, checksum: bool) -> None:
    """Set every event's ``log_pos`` in ``buf`` (whole events back to back) for ``buf``
    being written at ``file_position``: each becomes the file offset of its event's end;
    then its CRC.
    """
    _finish_events(buf, file_position, checksum)


def seal_events(buf: bytearray, *, checksum: bool) -> None:
    """Set the CRC of every event in ``buf`` (whole events back to back; encoded with
    ``crc_later``), leaving each ``log_pos`` as it is.
    """
    _finish_events(buf, None, checksum)


def _finish_events(buf: bytearray, file_position: int | None, checksum: bool) -> None:
    """:func:`relocate_events` (``file_position``) or :func:`seal_events` (None): by the
    compiled build's C loop when it is there (core/setup.py), else :func:`finish_in_python`.
    EventError at the first event whose size is impossible.
    """
    position = -1 if file_position is None else file_position
    if _finish_in_c is not None:
        bad = _finish_in_c(buf, position, checksum)
    else:
        bad = finish_in_python(buf, position, checksum)
    if bad >= 0:
        size = _U32.unpack_from(buf, bad + 9)[0] if len(buf) - bad >= HEADER_LEN else 0
        raise EventError(f"event of size {size} at buffer offset {bad} is impossible")


def finish_in_python(buf: bytearray, file_position: int, checksum: bool) -> int:
    """Set each event's ``log_pos`` (when ``file_position`` >= 0) and CRC (``checksum``,
    or a FORMAT_DESCRIPTION) in ``buf``; -1 when all are done, else the offset of the
    first event whose size is impossible (it and those after it are left untouched).
    The C helper ``rpl.core.binlog._finish`` does the same.
    """
    offset, end = 0, len(buf)
    unpack_u32, pack_u32 = _U32.unpack_from, _U32.pack_into  # one loop, no call per event
    with memoryview(buf) as view:
        while offset < end:
            if end - offset < HEADER_LEN:
                return offset
            (size,) = unpack_u32(buf, offset + 9)
            if size < HEADER_LEN or offset + size > end:
                return offset
            has_crc = checksum or buf[offset + 4] == FORMAT_DESCRIPTION_EVENT
            if has_crc and size < HEADER_LEN + CHECKSUM_LEN:
                return offset
            if file_position >= 0:
                pack_u32(buf, offset + 13, file_position + offset + size)
            if has_crc:
                crc_at = offset + size - CHECKSUM_LEN
                pack_u32(buf, crc_at, _crc(view[offset:crc_at]))
            offset += size
    return -1


_finish_helper = c_helpers.load("rpl.core.binlog._finish")
_finish_in_c: Callable[[bytearray, int, bool], int] | None = \
    _finish_helper.finish_events if _finish_helper is not None else None
"""The compiled build's ``_finish.finish_events`` (core/setup.py), or None."""


def verify_checksum(data: bytes | bytearray | memoryview) -> bool:
    """True if the last 4 bytes of the event ``data`` are its CRC32."""
    if len(data) < HEADER_LEN + CHECKSUM_LEN:
        return False
    body = memoryview(data)[:-CHECKSUM_LEN]  # a view: no copy of the event to check it
    return bool(_crc(body) == _CRC_SLOT.unpack_from(data, len(data) - 4)[0])


def decode_event(data: bytes | memoryview, *, checksum: bool) -> tuple[EventHeader, Event]:
    """The header and event of the whole event ``data``.

    EventError if ``event_size`` is not ``len(data)``, if the CRC is wrong (``checksum``
    on; an FD's CRC is always checked, as MySQL fills it in even with checksums off), or if
    the body does not parse.
    """
    header = EventHeader.unpack(data)
    return header, decode_with_header(header, data, checksum=checksum)


def decode_with_header(header: EventHeader, data: bytes | memoryview, *,
                       checksum: bool) -> Event:
    """The event of ``data`` whose header has already been unpacked (see decode_event)."""
    type_code = header.type_code
    body = checked_body(data, type_code, header.event_size, checksum=checksum)
    cls = EVENT_CLASSES.get(type_code)
    if cls is None:
        return UnknownEvent(type_code, body)
    try:
        return cls.decode_body(body)
    except EventError:
        raise
    except (ValueError, struct.error, IndexError) as exc:
        raise EventError(f"malformed body of event type {type_code}: {exc}") from exc


def checked_body(data: bytes | memoryview, type_code: int, event_size: int, *,
                 checksum: bool) -> bytes:
    """The body of the whole event ``data`` (type ``type_code``, header ``event_size``),
    its CRC checked and cut off as :func:`decode_with_header` does: for readers that take a
    few fields from the body themselves (the applier). EventError on a size or CRC mismatch.
    """
    size = len(data)
    if event_size != size:
        raise EventError(f"event_size {event_size} but the event has {size} bytes")
    if _has_crc(type_code, checksum):
        if size < HEADER_LEN + CHECKSUM_LEN:
            raise EventError(f"event of {size} bytes has no room for its CRC")
        if not verify_checksum(data):
            raise EventError(f"CRC32 mismatch in event of type {type_code}")
        return bytes(data[HEADER_LEN:size - CHECKSUM_LEN])
    return bytes(data[HEADER_LEN:])


def convert_checksum(raw: bytes, *, has_crc: bool, want_crc: bool) -> bytes:
    """The event ``raw`` with its CRC32 added or removed to match ``want_crc``.

    A replica stores the source's events in its relay log with its own checksum
    setting. A FORMAT_DESCRIPTION event always keeps its CRC; its algorithm byte is
    rewritten instead, so a reader of the converted file switches to the right form.
    """
    type_code = raw[4]
    if type_code == FORMAT_DESCRIPTION_EVENT:
        alg = BINLOG_CHECKSUM_ALG_CRC32 if want_crc else BINLOG_CHECKSUM_ALG_OFF
        if raw[-CHECKSUM_LEN - 1] == alg:
            return raw
        data = bytearray(raw)
        data[-CHECKSUM_LEN - 1] = alg
        _U32.pack_into(data, len(data) - CHECKSUM_LEN, _crc(data[:-CHECKSUM_LEN]))
        return bytes(data)
    if has_crc == want_crc:
        return raw
    if has_crc:
        data = bytearray(raw[:-CHECKSUM_LEN])
        _U32.pack_into(data, 9, len(data))
        return bytes(data)
    data = bytearray(raw)
    _U32.pack_into(data, 9, len(data) + CHECKSUM_LEN)
    data += _CRC_SLOT.pack(_crc(data))
    return bytes(data)


def event_checksum_alg(fd_raw: bytes) -> int:
    """The checksum algorithm a FORMAT_DESCRIPTION event ``fd_raw`` announces."""
    return fd_raw[-CHECKSUM_LEN - 1]


def artificial(raw: bytes | bytearray, *, log_pos: int, checksum: bool) -> bytes:
    """``raw`` as a sender passes it on out of sequence: ``log_pos`` set (0 tells the
    replica not to advance its position), LOG_EVENT_BINLOG_IN_USE_F cleared, CRC redone.
    """
    data = bytearray(raw)
    _U16.pack_into(data, 17, _U16.unpack_from(data, 17)[0] & ~LOG_EVENT_BINLOG_IN_USE_F)
    set_log_pos(data, 0, log_pos, checksum)
    return bytes(data)
