"""The relay log's published end: what the applier may read moves only when the
receiver publishes, and then only to the last transaction boundary written, never past
a whole event; and how the events kept until then are written (one write per
transaction, sync_relay_log)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rpl.core.binlog.events import QueryEvent, encode_event
from rpl.core.binlog.gtid import GtidSet
from rpl.core.replication.relaylog import MAX_UNWRITTEN, RelayLog


def relay_log(directory: Path) -> RelayLog:
    log = RelayLog(directory, "relay-bin", 2, True, sync_every=lambda: 0, max_size=lambda: 1 << 30)
    log.open_new(GtidSet())
    return log


def event(text: str) -> bytes:
    return encode_event(
        QueryEvent(thread_id=1, exec_time=0, error_code=0, status_vars=b"", db="d", query=text),
        server_id=1,
        timestamp=0,
    )


def test_an_unpublished_append_is_not_readable_until_published(tmp_path: Path) -> None:
    log = relay_log(tmp_path)
    start = log.end
    log.append(event("BEGIN"), publish=False)
    log.append(event("INSERT INTO t VALUES (1)"), publish=False)
    assert log.end == start, "the applier must not see a transaction's first events alone"
    log.write()
    assert log.end == start, "written at a boundary is not published yet"
    log.publish()
    size = (tmp_path / start.file).stat().st_size
    assert log.end.file == start.file and log.end.pos == size > start.pos


def test_a_publishing_append_moves_the_end_past_everything_before_it(tmp_path: Path) -> None:
    log = relay_log(tmp_path)
    log.append(event("BEGIN"), publish=False)
    log.append(event("COMMIT"))
    assert log.end.pos == (tmp_path / log.end.file).stat().st_size


def test_closing_publishes_what_was_appended(tmp_path: Path) -> None:
    log = relay_log(tmp_path)
    log.append(event("BEGIN"), publish=False)
    log.close()
    assert log.end.pos == (tmp_path / log.end.file).stat().st_size


def test_a_transaction_is_written_in_one_system_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = relay_log(tmp_path)
    writes: list[int] = []
    real_write = os.write

    def counting_write(fd: int, data: bytes) -> int:
        writes.append(len(data))
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", counting_write)
    before = (tmp_path / log.end.file).stat().st_size
    events = [event("BEGIN"), event("INSERT INTO t VALUES (1)"), event("COMMIT")]
    for raw in events[:-1]:
        assert log.append(raw, publish=False) is False
    assert writes == [] and (tmp_path / log.end.file).stat().st_size == before
    log.append(events[-1], publish=False)
    log.write()
    assert writes == [sum(map(len, events))]
    with (tmp_path / log.end.file).open("rb") as relay:
        relay.seek(before)
        assert relay.read() == b"".join(events)  # in order, each once


def test_sync_relay_log_counts_events_and_syncs_when_they_are_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    every = [3]
    log = RelayLog(
        tmp_path, "relay-bin", 2, True, sync_every=lambda: every[0], max_size=lambda: 1 << 30
    )
    log.open_new(GtidSet())
    syncs: list[int] = []
    monkeypatch.setattr(os, "fsync", lambda fd: syncs.append(fd))
    log.append(event("BEGIN"), publish=False)
    log.append(event("COMMIT"), publish=False)
    assert log.write() is False and syncs == []  # 2 events: not yet
    log.append(event("BEGIN"), publish=False)
    assert syncs == []
    assert log.write() is True and len(syncs) == 1  # the 3rd event, once written
    every[0] = 1  # sync_relay_log = 1: each event written and synced as it arrives
    size = (tmp_path / log.end.file).stat().st_size
    assert log.append(event("BEGIN"), publish=False) is True and len(syncs) == 2
    assert (tmp_path / log.end.file).stat().st_size > size


def test_a_large_transaction_is_written_as_it_arrives_and_published_at_its_end(
    tmp_path: Path,
) -> None:
    log = relay_log(tmp_path)
    start = log.end
    big = event("INSERT INTO t VALUES ('" + "x" * 4096 + "')")
    count = MAX_UNWRITTEN // len(big) + 2
    for _ in range(count):
        log.append(big, publish=False)
    assert (tmp_path / start.file).stat().st_size > start.pos + MAX_UNWRITTEN // 2
    assert log.end == start, "written is not published: the applier waits for the end"
    log.publish()
    assert log.end == start, "publishing shows the last boundary, not a partial transaction"
    log.write()
    log.publish()
    assert log.end.pos == start.pos + count * len(big)


def test_publish_shows_the_last_boundary_not_what_follows_it(tmp_path: Path) -> None:
    log = relay_log(tmp_path)
    first = [event("BEGIN"), event("COMMIT")]
    for raw in first:
        log.append(raw, publish=False)
    log.write()
    boundary = (tmp_path / log.end.file).stat().st_size
    log.append(event("BEGIN"), publish=False)  # the next transaction has begun
    log.publish()
    assert log.end.pos == boundary


def test_a_channel_has_a_packet_only_once_all_of_it_is_received() -> None:
    """The receiver publishes when no whole packet is left among the bytes received: a
    packet cut by a socket read does not count, so a long catch-up stream is published
    at every read and not only when a read happens to end on a packet boundary."""
    import socket

    from rpl.core.net.packets import PacketChannel, frame_packets

    a, b = socket.socketpair()
    try:
        channel = PacketChannel(b)
        first, sequence = frame_packets(b"\x00" + b"e" * 50, 0)
        second, _ = frame_packets(b"\x00" + b"f" * 50, sequence)
        wire = b"".join(first + second)
        a.sendall(wire[: len(wire) - 10])  # the second packet is cut short
        assert not channel.has_packet()
        channel.read()  # the first; the second's start is now buffered
        assert channel.buffered() > 0 and not channel.has_packet()
        a.sendall(wire[len(wire) - 10 :])
        channel._in += b.recv(100)  # what a read would take in
        assert channel.has_packet()
        channel.read()
        assert not channel.has_packet()
    finally:
        a.close()
        b.close()
