"""The byte-level fast path: whole events edited in place, without event objects.

The group commit leader finishes a group's events at once (:func:`relocate_events`: each
``log_pos`` and CRC, for events encoded with the CRC left open) and a session seals its
own (:func:`seal_events`); the compiled build does that loop in C
(``rpl.core.binlog._finish``, core/setup.py), the pure build in :func:`finish_in_python`.
A dump thread passes events on out of sequence (:func:`artificial`) and a replica
converts their checksums to its own setting (:func:`convert_checksum`).
"""

from __future__ import annotations

from collections.abc import Callable

from rpl.core import c_helpers
from rpl.core.binlog.events.header import (
    _CRC_SLOT,
    _U16,
    _U32,
    BINLOG_CHECKSUM_ALG_CRC32,
    BINLOG_CHECKSUM_ALG_OFF,
    CHECKSUM_LEN,
    FORMAT_DESCRIPTION_EVENT,
    HEADER_LEN,
    LOG_EVENT_BINLOG_IN_USE_F,
    EventError,
    _crc,
    _has_crc,
)


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
_finish_in_c: Callable[[bytearray, int, bool], int] | None = (
    _finish_helper.finish_events if _finish_helper is not None else None
)
"""The compiled build's ``_finish.finish_events`` (core/setup.py), or None."""


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
