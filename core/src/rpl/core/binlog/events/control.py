"""Control events: the ones that frame a binlog file or a stream rather than carry a
transaction (MySQL's ``control_events.h``, less the GTID and XID events).

FORMAT_DESCRIPTION (15) opens every binlog and relay log file and says how to read it;
PREVIOUS_GTIDS (35) follows it with the GTIDs of all earlier files; ROTATE (4) names the
next file; STOP (3) ends a file at a clean shutdown; HEARTBEAT (27) keeps an idle dump
connection alive (wire only, never in a file). VIEW_CHANGE (37), which MySQL's header
also counts among its control events, marks where a Group Replication view with joining
members took its place in the group's order (inside a BEGIN ... COMMIT transaction of
its own GTID).
"""

from __future__ import annotations

import struct
from typing import ClassVar, Final, Self

import attrs
from mypy_extensions import mypyc_attr

from rpl.core.binlog.events.header import (
    _U64,
    BINLOG_CHECKSUM_ALG_CRC32,
    BINLOG_VERSION,
    FORMAT_DESCRIPTION_EVENT,
    HEADER_LEN,
    HEARTBEAT_LOG_EVENT,
    PREVIOUS_GTIDS_LOG_EVENT,
    ROTATE_EVENT,
    SERVER_VERSION,
    STOP_EVENT,
    VIEW_CHANGE_EVENT,
    Event,
    EventError,
    _raw,
    _text,
)
from rpl.core.binlog.gtid import GtidSet

POST_HEADER_LENGTHS_8029: Final = bytes(
    (
        0,
        13,
        0,
        8,
        0,
        0,
        0,
        0,
        4,
        0,  # 1-10: QUERY 13, ROTATE 8, APPEND_BLOCK 4
        4,
        0,
        0,
        0,
        98,
        0,
        4,
        26,
        8,
        0,  # 11-20: DELETE_FILE 4, FD 98, *_LOAD_QUERY, TABLE_MAP 8
        0,
        0,
        8,
        8,
        8,
        2,
        0,
        0,
        0,
        10,  # 21-30: v1 ROWS 8, INCIDENT 2, WRITE_ROWS 10
        10,
        10,
        42,
        42,
        0,
        18,
        52,
        0,
        10,  # 31-39: ROWS 10, GTID/ANONYMOUS 42, TRX_CONTEXT 18,
        #                                    VIEW_CHANGE 52, PARTIAL_UPDATE_ROWS 10
        40,
        0,  # 40-41: TRANSACTION_PAYLOAD (MySQL writes 40), HEARTBEAT_V2
    )
)
"""The FD's post-header length per event type 1..41, as MySQL 8.0.29 and later write it."""

SERVER_VERSION_LEN: Final = 50
"""The FD's server_version field: NUL-padded, the last byte always NUL."""

_FD_FIXED: Final = struct.Struct("<H50sIB")


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
        return b"".join(
            (
                _FD_FIXED.pack(self.binlog_version, version, self.created, self.header_length),
                self.post_header_lengths,
                bytes((self.checksum_alg,)),
            )
        )

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
            post_header_lengths=body[_FD_FIXED.size : -1],
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
        return cls(_U64.unpack_from(body)[0], _text(body[_U64.size :]))


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


VIEW_ID_LEN: Final = 40
"""VIEW_CHANGE's view id field: NUL-padded, at most 39 bytes of text."""

_VIEW_CHANGE_FIXED: Final = struct.Struct("<40sQI")
_U16: Final = struct.Struct("<H")
_U32: Final = struct.Struct("<I")


@mypyc_attr(native_class=False)  # compiled builds: attrs needs a Python class
@attrs.frozen
class ViewChangeEvent(Event):
    """VIEW_CHANGE (37): a Group Replication view change with joining members.

    The 52-byte post-header is the view id (40 bytes, NUL-padded), a sequence number
    (u64) and the number of certification-info entries (u32); the body is the entries,
    each a key (u16 length + bytes) and a value (u32 length + bytes), in key order (MySQL
    keeps them in a sorted map). The entries are the certification info of the member
    that logged it, with ``gtid_extracted`` holding the group's executed GTIDs.
    """

    TYPE_CODE: "ClassVar[int]" = VIEW_CHANGE_EVENT

    view_id: str
    seq_number: int = 0
    certification_info: tuple[tuple[bytes, bytes], ...] = ()

    def encode_body(self) -> bytes:
        view_id = self.view_id.encode()
        if not view_id or len(view_id) >= VIEW_ID_LEN or b"\0" in view_id:
            raise ValueError(f"VIEW_CHANGE view id {self.view_id!r} is empty or too long")
        entries = sorted(self.certification_info)
        parts = [_VIEW_CHANGE_FIXED.pack(view_id, self.seq_number, len(entries))]
        for key, value in entries:
            parts += (_U16.pack(len(key)), key, _U32.pack(len(value)), value)
        return b"".join(parts)

    @classmethod
    def decode_body(cls, body: bytes) -> Self:
        if len(body) < _VIEW_CHANGE_FIXED.size:
            raise EventError(f"VIEW_CHANGE body of {len(body)} bytes is shorter than 52")
        raw_id, seq_number, count = _VIEW_CHANGE_FIXED.unpack_from(body)
        view_id = raw_id.split(b"\0", 1)[0]
        if not view_id:
            raise EventError("Invalid View_change information: empty view id")
        at = _VIEW_CHANGE_FIXED.size
        entries = []
        for _ in range(count):
            key, at = _sized(body, at, _U16)
            value, at = _sized(body, at, _U32)
            entries.append((key, value))
        if at != len(body):
            raise EventError(f"VIEW_CHANGE has {len(body) - at} bytes after its entries")
        try:
            text = view_id.decode()
        except UnicodeDecodeError as exc:
            raise EventError(f"VIEW_CHANGE view id is not UTF-8: {exc}") from None
        return cls(text, seq_number, tuple(entries))


def _sized(body: bytes, at: int, length: struct.Struct) -> tuple[bytes, int]:
    """The length-prefixed bytes at ``at`` and the offset after them; EventError past
    the body's end.
    """
    if at + length.size > len(body):
        raise EventError("VIEW_CHANGE entry runs past the event's end")
    (size,) = length.unpack_from(body, at)
    at += length.size
    if at + size > len(body):
        raise EventError("VIEW_CHANGE entry runs past the event's end")
    return body[at : at + size], at + size
