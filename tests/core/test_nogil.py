"""rpl.core.net.nogil: the socket calls made holding the interpreter lock do what the
blocking calls they stand in for do, and never block."""

from __future__ import annotations

import select
import socket
import threading

import pytest

from rpl.core.net import nogil


@pytest.fixture(params=["ctypes"] + (["C helper"] if nogil._helper is not None else []))
def single_calls(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """send_now, recv_now and epoll_rearm through the compiled build's C helper (there
    only) and through ctypes."""
    if request.param == "ctypes":
        monkeypatch.setattr(nogil, "_helper", None)
    return str(request.param)


def test_send_now_sends_and_sendall_finishes_what_it_could_not(single_calls: str) -> None:
    a, b = socket.socketpair()
    with a, b:
        assert nogil.send_now(a, b"ping") == 4
        assert b.recv(16) == b"ping"
        a.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
        big = bytes(range(256)) * 4096  # more than the buffer holds: the rest blocks
        sent = nogil.send_now(a, big)
        assert 0 < sent < len(big)
        received = bytearray()
        b.settimeout(5)
        a.settimeout(5)
        sender = threading.Thread(target=nogil.sendall, args=(a, big[sent:]))
        sender.start()
        while len(received) < len(big):
            received += b.recv(65536)
        sender.join()
        assert bytes(received) == big  # in order, nothing lost or sent twice


def test_recv_now_reads_what_is_there_and_never_waits(single_calls: str) -> None:
    a, b = socket.socketpair()
    buffer = nogil.RecvBuffer(8)
    with a, b:
        assert buffer.recv_now(b) == -1  # nothing there now: the caller's blocking call waits
        a.sendall(b"0123456789")
        assert buffer.recv_now(b) == 8 and bytes(buffer.data) == b"01234567"
        assert buffer.recv_now(b) == 2 and bytes(buffer.data[:2]) == b"89"
        a.shutdown(socket.SHUT_WR)
        assert buffer.recv_now(b) == 0  # the peer's orderly close, as recv says it
    assert buffer.recv_now(b) == -2  # a closed socket: failed, the blocking call reports it


def test_epoll_rearm_re_arms_a_oneshot_descriptor(single_calls: str) -> None:
    a, b = socket.socketpair()
    epoll = select.epoll()
    armed = select.EPOLLIN | select.EPOLLONESHOT
    with a, b, epoll:
        epoll.register(b.fileno(), armed)
        a.sendall(b"x")
        assert [fd for fd, _ in epoll.poll(1)] == [b.fileno()]
        assert epoll.poll(0.05) == []  # one shot: silent until re-armed
        assert nogil.epoll_rearm(epoll, b.fileno(), armed)
        assert [fd for fd, _ in epoll.poll(1)] == [b.fileno()]
        assert not nogil.epoll_rearm(epoll, a.fileno(), armed)  # never registered: False


def test_the_fallbacks_make_the_blocking_calls(single_calls: str) -> None:
    a, b = socket.socketpair()
    epoll = select.epoll()
    buffer = nogil.RecvBuffer(8)
    with a, b, epoll:
        threading.Timer(0.05, a.sendall, args=(b"late",)).start()
        b.settimeout(5)
        assert buffer.recv(b) == 4 and bytes(buffer.data[:4]) == b"late"  # it waited
        with pytest.raises(OSError):  # never registered: modify's own error
            nogil.epoll_modify(epoll, a.fileno(), select.EPOLLIN)


@pytest.fixture(params=["installed", "one send each"])
def send_many_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """send_many as installed (the C helper in the compiled build), and its fallback."""
    if request.param == "one send each":
        monkeypatch.setattr(nogil, "_send_many", None)
    return str(request.param)


def test_send_many_sends_each_buffer_on_its_own_socket(send_many_path: str) -> None:
    pairs = [socket.socketpair() for _ in range(5)]
    try:
        data = [f"reply {i}".encode() * (i + 1) for i in range(5)]
        assert nogil.send_many([a for a, _ in pairs], data) == [len(d) for d in data]
        for (_, b), expected in zip(pairs, data, strict=True):
            b.settimeout(5)
            assert b.recv(4096) == expected
    finally:
        for a, b in pairs:
            a.close()
            b.close()


def test_send_many_reports_what_it_could_not_send_and_never_blocks(send_many_path: str) -> None:
    full, ok = socket.socketpair(), socket.socketpair()
    closed_a, closed_b = socket.socketpair()
    closed_a.close()
    try:
        full[0].setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
        big = bytes(range(256)) * 4096  # more than the buffer holds
        counts = nogil.send_many([full[0], closed_a, ok[0]], [big, b"lost", b"fine"])
        assert 0 < counts[0] < len(big)  # partial: the caller finishes it
        assert counts[1] == 0  # a closed socket: nothing, no exception
        assert counts[2] == 4
        ok[1].settimeout(5)
        assert ok[1].recv(16) == b"fine"  # the sockets after a partial one are served
    finally:
        for sock in (*full, *ok, closed_b):
            sock.close()


def test_reply_batch_delivers_every_reply_whole_and_in_order(send_many_path: str) -> None:
    from rpl.core.net.packets import PacketChannel, ReplyBatch

    pairs = [socket.socketpair() for _ in range(3)]
    try:
        channels = [PacketChannel(a) for a, _ in pairs]
        pairs[0][0].setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
        big = bytes(range(256)) * 4096  # partial at first: finished with a blocking send
        batch = ReplyBatch()
        channels[0].reply_later(batch, 1, big)
        channels[1].reply_later(batch, 5, b"ok")
        channels[1].reply_later(batch, 6, b"again")  # one channel twice: in order
        pairs[2][0].close()  # a client gone: its reply is dropped, the others go out
        channels[2].reply_later(batch, 1, b"nobody")
        received = bytearray()

        def drain() -> None:
            pairs[0][1].settimeout(5)
            while len(received) < len(big) + 4:
                received.extend(pairs[0][1].recv(65536))

        reader = threading.Thread(target=drain)
        reader.start()
        batch.send()
        reader.join()
        assert bytes(received) == len(big).to_bytes(3, "little") + b"\x01" + big
        pairs[1][1].settimeout(5)
        assert pairs[1][1].recv(64) == b"\x02\x00\x00\x05ok\x05\x00\x00\x06again"
        batch.send()  # emptied: nothing is sent twice
        pairs[1][1].setblocking(False)
        with pytest.raises(BlockingIOError):
            pairs[1][1].recv(64)
    finally:
        for a, b in pairs:
            a.close()
            b.close()
