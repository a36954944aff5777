"""rpl.core.net.nogil: the socket calls made holding the interpreter lock do what the
blocking calls they stand in for do, and never block."""

from __future__ import annotations

import select
import socket
import threading

import pytest

from rpl.core.net import nogil


def test_send_now_sends_and_sendall_finishes_what_it_could_not() -> None:
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


def test_recv_now_reads_what_is_there_and_never_waits() -> None:
    a, b = socket.socketpair()
    buffer = nogil.RecvBuffer(8)
    with a, b:
        assert buffer.recv_now(b) == -1  # nothing there: the caller's blocking call waits
        a.sendall(b"0123456789")
        assert buffer.recv_now(b) == 8 and bytes(buffer.data) == b"01234567"
        assert buffer.recv_now(b) == 2 and bytes(buffer.data[:2]) == b"89"
        a.shutdown(socket.SHUT_WR)
        assert buffer.recv_now(b) == 0  # the peer's orderly close, as recv says it
    assert buffer.recv_now(b) == -1  # a closed socket: the blocking call reports it


def test_epoll_rearm_re_arms_a_oneshot_descriptor() -> None:
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


def test_the_fallbacks_make_the_blocking_calls() -> None:
    a, b = socket.socketpair()
    epoll = select.epoll()
    buffer = nogil.RecvBuffer(8)
    with a, b, epoll:
        threading.Timer(0.05, a.sendall, args=(b"late",)).start()
        b.settimeout(5)
        assert buffer.recv(b) == 4 and bytes(buffer.data[:4]) == b"late"  # it waited
        with pytest.raises(OSError):  # never registered: modify's own error
            nogil.epoll_modify(epoll, a.fileno(), select.EPOLLIN)
