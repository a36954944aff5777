"""DumpNet (the ServerNet of a dump connection) reads whole payloads with one recv and
keeps what follows for the next read; over a real socket pair."""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Iterator

import attrs
import pytest

from rpl.core.replication.services import DumpNet
from rpl.observers import NetError


@attrs.define
class _Connection:
    sock: socket.socket


@pytest.fixture
def pair() -> Iterator[tuple[DumpNet, socket.socket]]:
    ours, theirs = socket.socketpair()
    yield DumpNet(_Connection(ours)), theirs  # type: ignore[arg-type]
    ours.close()
    theirs.close()


def packet(payload: bytes, sequence: int = 0) -> bytes:
    return struct.pack("<I", len(payload) | sequence << 24) + payload


def test_payloads_that_arrive_together_are_read_one_by_one_then_the_read_times_out(
        pair: tuple[DumpNet, socket.socket]) -> None:
    net, replica = pair
    replica.sendall(packet(b"\xefack-1") + packet(b"\xefack-2") + packet(b""))
    assert net.read(timeout=0) == b"\xefack-1"
    assert net.read(timeout=0) == b"\xefack-2"
    assert net.read(timeout=0) == b""
    with pytest.raises(NetError) as caught:
        net.read(timeout=0)
    assert caught.value.timed_out and not net.peer_closed


def test_a_payload_split_across_sends_is_read_whole(
        pair: tuple[DumpNet, socket.socket]) -> None:
    net, replica = pair
    whole = packet(b"\xef" + bytes(range(200)))
    replica.sendall(whole[:2])
    later = threading.Timer(0.05, lambda: replica.sendall(whole[2:]))
    later.start()
    assert net.read(timeout=5) == b"\xef" + bytes(range(200))
    later.join()


def test_a_payload_of_several_packets_is_joined(pair: tuple[DumpNet, socket.socket]) -> None:
    net, replica = pair
    big = bytes(0xFFFFFF) + b"tail"
    sender = threading.Thread(
        target=replica.sendall, args=(packet(big[:0xFFFFFF]) + packet(big[0xFFFFFF:], 1),))
    sender.start()
    assert net.read(timeout=5) == big
    sender.join()


def test_a_closed_connection_is_a_failure_not_a_timeout(
        pair: tuple[DumpNet, socket.socket]) -> None:
    net, replica = pair
    replica.sendall(packet(b"last"))
    replica.close()
    assert net.read(timeout=1) == b"last"
    with pytest.raises(NetError) as caught:
        net.read(timeout=1)
    assert not caught.value.timed_out and net.peer_closed
