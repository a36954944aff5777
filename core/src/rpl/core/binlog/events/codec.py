"""Whole events to and from bytes: the type-code -> class map (:data:`EVENT_CLASSES`),
:func:`encode_event` (header, body, CRC) and :func:`decode_event` (the header checked, the
CRC checked, the body decoded by its class).

Type codes the map does not hold decode to :class:`UnknownEvent`, which re-encodes to the
same bytes, so a relay log can pass through any event a source sends. A new event class
is added to the map here.
"""

from __future__ import annotations

import struct
from typing import Final, Self

import attrs
from mypy_extensions import mypyc_attr

from rpl.core.binlog.events.control import (
    FormatDescriptionEvent,
    HeartbeatEvent,
    PreviousGtidsEvent,
    RotateEvent,
    StopEvent,
    ViewChangeEvent,
)
from rpl.core.binlog.events.gtid_log import AnonymousGtidEvent, GtidEvent
from rpl.core.binlog.events.header import (
    _CRC_SLOT,
    _HEADER,
    _NO_CRC,
    CHECKSUM_LEN,
    HEADER_LEN,
    Event,
    EventError,
    EventHeader,
    _crc,
    _has_crc,
    verify_checksum,
)
from rpl.core.binlog.events.rows import (
    DeleteRowsEvent,
    RowsQueryEvent,
    UpdateRowsEvent,
    WriteRowsEvent,
)
from rpl.core.binlog.events.table_map import TableMapEvent
from rpl.core.binlog.events.transaction import IntvarEvent, QueryEvent, XidEvent


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
    for cls in (
        QueryEvent,
        StopEvent,
        RotateEvent,
        IntvarEvent,
        FormatDescriptionEvent,
        XidEvent,
        HeartbeatEvent,
        GtidEvent,
        AnonymousGtidEvent,
        PreviousGtidsEvent,
        TableMapEvent,
        RowsQueryEvent,
        WriteRowsEvent,
        UpdateRowsEvent,
        DeleteRowsEvent,
        ViewChangeEvent,
    )
}


def encode_event(
    event: Event,
    *,
    server_id: int,
    timestamp: int,
    log_pos: int = 0,
    flags: int = 0,
    checksum: bool = True,
    crc_later: bool = False,
) -> bytes:
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


def decode_event(data: bytes | memoryview, *, checksum: bool) -> tuple[EventHeader, Event]:
    """The header and event of the whole event ``data``.

    EventError if ``event_size`` is not ``len(data)``, if the CRC is wrong (``checksum``
    on; an FD's CRC is always checked, as MySQL fills it in even with checksums off), or if
    the body does not parse.
    """
    header = EventHeader.unpack(data)
    return header, decode_with_header(header, data, checksum=checksum)


def decode_with_header(header: EventHeader, data: bytes | memoryview, *, checksum: bool) -> Event:
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


def checked_body(
    data: bytes | memoryview, type_code: int, event_size: int, *, checksum: bool
) -> bytes:
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
        return bytes(data[HEADER_LEN : size - CHECKSUM_LEN])
    return bytes(data[HEADER_LEN:])
