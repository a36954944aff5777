"""The frame every event shares: the 19-byte common header, the CRC32 after the body, and
the constants all event families use (type codes, header flags, lengths, versions).

Also the base :class:`Event` (a type code and a body codec), :class:`EventError`, and the
small helpers the family modules build on: the header's struct, the text codec of names
and statements, the CRC rule, and ``unsealed`` (an event's bytes with ``log_pos`` and the
CRC left for :func:`rpl.core.binlog.events.relocate_events`). Underscored names here are
the package's own: its modules share them, :mod:`rpl.core.binlog.events` does not export
them.

The CRC rule that is easy to get wrong: a FORMAT_DESCRIPTION event's CRC is computed as if
the header flag ``LOG_EVENT_BINLOG_IN_USE_F`` were clear, so the server can clear the flag
in place at offset 21 of the file without making the CRC wrong (:func:`_crc`); and an FD
always has a CRC, even with checksums off (:func:`_has_crc`).
"""

from __future__ import annotations

import mmap
import re
import struct
import zlib
from typing import ClassVar, Final, Self

import attrs
from mypy_extensions import mypyc_attr

from rpl.core.errors import ER_BINLOG_EVENT_CORRUPT, MySQLError

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
VIEW_CHANGE_EVENT: Final = 37

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

MAX_EVENT_SIZE: Final = (1 << 30) + (1 << 16)
"""Larger events are corrupt: max_allowed_packet (1 GiB at most) bounds every event."""

_HEADER: Final = struct.Struct("<IBIIIH")
_U16: Final = struct.Struct("<H")
_U32: Final = struct.Struct("<I")
_U64: Final = struct.Struct("<Q")
_CRC_SLOT: Final = struct.Struct("<I")
_NO_CRC: Final = bytes(CHECKSUM_LEN)

_TEXT_ENCODING: Final = "utf-8"
_TEXT_ERRORS: Final = "surrogateescape"


def _offsets(layout: struct.Struct, names: tuple[str, ...]) -> dict[str, int]:
    """Each field's byte offset in ``layout`` (little-endian, unpadded)."""
    codes = re.findall(r"\d*[a-zA-Z]", layout.format.lstrip("<"))
    assert len(codes) == len(names), (layout.format, names)
    sizes = [struct.calcsize("<" + code) for code in codes]
    return {name: sum(sizes[:i]) for i, name in enumerate(names)}


HEADER_AT: Final = _offsets(
    _HEADER, ("timestamp", "type_code", "server_id", "event_size", "log_pos", "flags")
)
"""The common header's field offsets: readers that take many events at once (the
validator's sketches) read the same layout as :meth:`EventHeader.unpack`."""


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
        return _HEADER.pack(
            self.timestamp,
            self.type_code,
            self.server_id,
            self.event_size,
            self.log_pos,
            self.flags,
        )


def unpack_header(
    data: bytes | bytearray | memoryview | mmap.mmap, offset: int
) -> tuple[int, int, int, int, int, int]:
    """The common header at ``data[offset:]`` as a tuple (timestamp, type_code, server_id,
    event_size, log_pos, flags), for readers that cannot afford an EventHeader per event;
    struct.error if fewer than 19 bytes are left.
    """
    fields: tuple[int, int, int, int, int, int] = _HEADER.unpack_from(data, offset)
    return fields


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


def _crc(event: bytes | bytearray | memoryview) -> int:
    """The CRC32 of ``event`` (an event without its CRC); an FD's counts IN_USE as clear."""
    if event[4] == FORMAT_DESCRIPTION_EVENT and event[17] & LOG_EVENT_BINLOG_IN_USE_F:
        crc = zlib.crc32(event[:17])
        crc = zlib.crc32(bytes((event[17] & ~LOG_EVENT_BINLOG_IN_USE_F,)), crc)
        return zlib.crc32(event[18:], crc)
    return zlib.crc32(event)


def _has_crc(type_code: int, checksum: bool) -> bool:
    return checksum or type_code == FORMAT_DESCRIPTION_EVENT


def verify_checksum(data: bytes | bytearray | memoryview) -> bool:
    """True if the last 4 bytes of the event ``data`` are its CRC32."""
    if len(data) < HEADER_LEN + CHECKSUM_LEN:
        return False
    body = memoryview(data)[:-CHECKSUM_LEN]  # a view: no copy of the event to check it
    return bool(_crc(body) == _CRC_SLOT.unpack_from(data, len(data) - 4)[0])


def unsealed(
    type_code: int, body: bytes, server_id: int, timestamp: int, checksum: bool, flags: int = 0
) -> bytearray:
    """Header and ``body``, ``log_pos`` 0 and the CRC's bytes zero: an event for
    :func:`relocate_events` to finish.
    """
    size = HEADER_LEN + len(body) + (CHECKSUM_LEN if checksum else 0)
    data = bytearray(_HEADER.pack(timestamp, type_code, server_id, size, 0, flags))
    data += body
    if checksum:
        data += _NO_CRC
    return data
