"""LogTail (reading a growing log up to a published end) and the event edits a sender and a
receiver make: checksum conversion and the artificial-event rewrite."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rpl.core.binlog.events import (
    FormatDescriptionEvent,
    QueryEvent,
    XidEvent,
    artificial,
    convert_checksum,
    decode_event,
    default_status_vars,
    encode_event,
    event_checksum_alg,
    verify_checksum,
)
from rpl.core.binlog.logfile import LogCorrupt
from rpl.core.binlog.tail import LogTail


def _events(checksum: bool = True) -> list[bytes]:
    query = QueryEvent(
        thread_id=1,
        exec_time=0,
        error_code=0,
        status_vars=default_status_vars(),
        db="d",
        query="INSERT INTO t VALUES (1)",
    )
    return [
        encode_event(
            FormatDescriptionEvent(checksum_alg=int(checksum)),
            server_id=1,
            timestamp=1,
            checksum=True,
        ),
        encode_event(query, server_id=1, timestamp=1, checksum=checksum),
        encode_event(XidEvent(7), server_id=1, timestamp=1, checksum=checksum),
    ]


def test_tail_returns_only_whole_events_before_the_limit(tmp_path: Path) -> None:
    fd, query, xid = _events()
    path = tmp_path / "log"
    path.write_bytes(b"\xfebin" + fd + query + xid[:10])
    with LogTail(path) as tail:
        assert tail.read_one(4 + len(fd)) == fd
        limit = 4 + len(fd) + len(query)
        assert tail.read(limit - 1) == [], "an event past the limit is not returned"
        assert tail.read(limit) == [(4 + len(fd), query)]
        assert tail.read(path.stat().st_size) == [], "a half-written event waits"
        with path.open("ab") as f:
            f.write(xid[10:])
        assert tail.read(path.stat().st_size) == [(limit, xid)]
        assert tail.position == path.stat().st_size


def test_tail_reads_in_chunks(tmp_path: Path) -> None:
    fd, query, xid = _events()
    path = tmp_path / "log"
    body = b"".join([query, xid] * 50)
    path.write_bytes(b"\xfebin" + fd + body)
    with LogTail(path, 4 + len(fd)) as tail:
        seen: list[bytes] = []
        while batch := tail.read(path.stat().st_size, max_bytes=100):
            seen.extend(raw for _, raw in batch)
    assert b"".join(seen) == body


def test_tail_rejects_an_impossible_event_size(tmp_path: Path) -> None:
    path = tmp_path / "log"
    path.write_bytes(b"\xfebin" + bytes(19))
    with LogTail(path) as tail, pytest.raises(LogCorrupt):
        tail.read(23)


@pytest.mark.parametrize("source_crc", [True, False])
@pytest.mark.parametrize("target_crc", [True, False])
def test_convert_checksum_keeps_events_readable(source_crc: bool, target_crc: bool) -> None:
    fd, query, xid = _events(source_crc)
    new_fd = convert_checksum(fd, has_crc=True, want_crc=target_crc)
    assert event_checksum_alg(new_fd) == int(target_crc) and verify_checksum(new_fd)
    for raw in (query, xid):
        converted = convert_checksum(raw, has_crc=source_crc, want_crc=target_crc)
        header, event = decode_event(converted, checksum=target_crc)
        assert event == decode_event(raw, checksum=source_crc)[1]
        assert header.event_size == len(raw) + 4 * (target_crc - source_crc)
        if target_crc:
            assert verify_checksum(converted)


def test_artificial_clears_in_use_and_sets_log_pos() -> None:
    raw = bytearray(_events()[0])
    raw[17] |= 1
    edited = artificial(bytes(raw), log_pos=0, checksum=True)
    header, _ = decode_event(edited, checksum=True)
    assert header.log_pos == 0 and header.flags & 1 == 0 and verify_checksum(edited)


def test_tail_file_may_be_replaced_under_it(tmp_path: Path) -> None:
    fd, query, _ = _events()
    path = tmp_path / "log"
    path.write_bytes(b"\xfebin" + fd + query)
    tail = LogTail(path, 4 + len(fd))
    os.unlink(path)
    assert tail.read(4 + len(fd) + len(query)) == [(4 + len(fd), query)], (
        "an open file stays readable after a purge"
    )
    tail.close()
