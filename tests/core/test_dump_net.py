"""DumpNet (the ServerNet of a dump connection) reads whole payloads with one recv and
keeps what follows for the next read; over a real socket pair."""

from __future__ import annotations

import select
import socket
import struct
import threading
from collections.abc import Iterator

import attrs
import pytest

from rpl.core.net import nogil
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
    pair: tuple[DumpNet, socket.socket],
) -> None:
    net, replica = pair
    replica.sendall(packet(b"\xefack-1") + packet(b"\xefack-2") + packet(b""))
    assert net.read(timeout=0) == b"\xefack-1"
    assert net.read(timeout=0) == b"\xefack-2"
    assert net.read(timeout=0) == b""
    with pytest.raises(NetError) as caught:
        net.read(timeout=0)
    assert caught.value.timed_out and not net.peer_closed


def test_a_payload_split_across_sends_is_read_whole(pair: tuple[DumpNet, socket.socket]) -> None:
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
        target=replica.sendall, args=(packet(big[:0xFFFFFF]) + packet(big[0xFFFFFF:], 1),)
    )
    sender.start()
    assert net.read(timeout=5) == big
    sender.join()


@pytest.fixture(params=["ctypes"] + (["C helper"] if nogil._helper is not None else []))
def receive_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The receive made holding the interpreter lock, through the compiled build's C helper
    (there only) and through ctypes."""
    if request.param == "ctypes":
        monkeypatch.setattr(nogil, "_helper", None)
    return str(request.param)


@pytest.mark.parametrize("timeout", [1.0, 0.0])
def test_a_closed_connection_is_a_failure_not_a_timeout(
    pair: tuple[DumpNet, socket.socket], receive_path: str, timeout: float
) -> None:
    """With ``timeout=0`` too: a replica gone while the ACK receiver polls must read as
    the end, or the ACK receiver, woken by a readable socket that only ever "times out",
    would spin."""
    net, replica = pair
    replica.sendall(packet(b"last"))
    replica.close()
    assert net.read(timeout=timeout) == b"last"
    with pytest.raises(NetError) as caught:
        net.read(timeout=timeout)
    assert not caught.value.timed_out and net.peer_closed


def test_a_poll_with_timeout_0_neither_selects_nor_waits(
    pair: tuple[DumpNet, socket.socket], receive_path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``read(timeout=0)`` is what the ACK receiver does after its ``select``: the ACK and
    the "nothing more" that ends its reads both come without a ``select`` (which lets go
    of the interpreter lock), and a payload split across sends is still read whole."""
    net, replica = pair

    def no_select(*_: object) -> None:
        raise AssertionError("read(timeout=0) made a select")

    monkeypatch.setattr(select, "select", no_select)
    replica.sendall(packet(b"\xefack-1"))
    assert net.read(timeout=0) == b"\xefack-1"
    with pytest.raises(NetError) as caught:
        net.read(timeout=0)
    assert caught.value.timed_out and not net.peer_closed
    whole = packet(b"\xefack-2")
    replica.sendall(whole[:3])
    with pytest.raises(NetError) as caught:
        net.read(timeout=0)
    assert caught.value.timed_out
    replica.sendall(whole[3:])
    assert net.read(timeout=0) == b"\xefack-2"


def test_a_reset_connection_under_timeout_0_is_a_failure_not_a_timeout(receive_path: str) -> None:
    """A replica whose connection was reset (RST, not an orderly close): the receive
    made holding the lock fails with ECONNRESET, which is not "nothing there"."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        replica = socket.create_connection(server.getsockname())
        ours, _ = server.accept()
    with ours:
        net = DumpNet(_Connection(ours))  # type: ignore[arg-type]
        replica.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        replica.close()  # linger 0: the close sends a reset
        select.select([ours], [], [], 5)
        with pytest.raises(NetError) as caught:
            net.read(timeout=0)
        assert not caught.value.timed_out and net.peer_closed
