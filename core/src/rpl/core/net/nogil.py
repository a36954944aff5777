"""Socket calls that never block, made without letting go of the interpreter lock.

``socket.send``, ``recv_into`` and ``epoll.modify`` release CPython's global interpreter
lock around the system call, as they must for a call that may block. A reply of a few
dozen bytes to a loopback or LAN socket never blocks, nor does reading a command the
socket already holds, nor re-arming a descriptor in epoll; releasing the lock for them
costs more than the call: another thread takes the lock, and the caller queues behind it
to get it back (two thread switches). Under sysbench that hand-off was a sixth of the
server's time on oltp_point_select (send); doing the pool worker's read and re-arm the
same way took oltp_insert at 16 threads from about 7000 to 8200 transactions/s.

The calls are made with ``MSG_DONTWAIT`` so that a send or receive can never block
while holding the lock; what they cannot do at once (a full socket buffer, a command not
arrived yet) is left to the caller's blocking call. The compiled build makes them in its
C helper ``rpl.core.net._nogil`` (core/setup.py); the pure build goes to the C library
through a ``ctypes.PyDLL`` handle, which keeps the lock too but costs about twice the
system call in argument conversion. No library offers this, so it is written here by
hand; Linux and other POSIX systems only (elsewhere every call here does nothing and the
blocking call does all the work).

The exception is :func:`send_many`, for the group commit leader's replies: many sends at
once, with the lock released once around them all (in the C helper), so that the
kernel's work runs beside the Python threads.
"""

from __future__ import annotations

import ctypes
import errno
import platform
import select
import socket
import struct
from collections.abc import Callable

from rpl.core import c_helpers

MSG_DONTWAIT = getattr(socket, "MSG_DONTWAIT", 0)


def _libc(name: str, restype: type, *argtypes: type) -> Callable[..., int] | None:
    """The C library's ``name``, called holding the interpreter lock (``errno`` kept for
    ``ctypes.get_errno``); None where there is none.
    """
    if not MSG_DONTWAIT:
        return None
    try:
        function = getattr(ctypes.PyDLL(None, use_errno=True), name)
    except (OSError, AttributeError):
        return None
    function.argtypes = argtypes
    function.restype = restype
    return function  # type: ignore[no-any-return]


_send = _libc(
    "send", ctypes.c_ssize_t, ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int
)
_recv = _libc(
    "recv", ctypes.c_ssize_t, ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int
)
_epoll_ctl = _libc(
    "epoll_ctl", ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_char_p
)
_EPOLL_CTL_MOD = 3
_EPOLL_EVENT = struct.Struct("=IQ" if platform.machine() in ("x86_64", "AMD64") else "=I4xQ")
"""struct epoll_event: packed on x86-64, its 64-bit data aligned elsewhere."""


_helper = c_helpers.load("rpl.core.net._nogil")
_send_many: Callable[[list[int], list[bytes]], list[int]] | None = (
    _helper.send_many if _helper is not None else None
)


def send_now(sock: socket.socket, data: bytes) -> int:
    """Send what the socket takes at once, holding the interpreter lock; the byte count
    (0 when it took nothing or failed: the caller's blocking send then reports the error).
    """
    if _helper is not None:
        sent: int = _helper.send_now(sock.fileno(), data)
    elif _send is not None:
        sent = _send(sock.fileno(), data, len(data), MSG_DONTWAIT)
    else:
        return 0
    return max(sent, 0)


def send_many(socks: list[socket.socket], data: list[bytes]) -> list[int]:
    """Send ``data[i]`` on ``socks[i]``, what each socket takes at once: the byte counts
    (0 for one that took nothing, failed or is closed; the caller's blocking send then
    finishes it or reports the error). With the C helper the interpreter lock is let go
    once for all the sends; without it each is :func:`send_now`.
    """
    if _send_many is None:
        return [send_now(sock, chunk) for sock, chunk in zip(socks, data, strict=True)]
    return _send_many([sock.fileno() for sock in socks], data)


def sendall(sock: socket.socket, data: bytes) -> None:
    """``sock.sendall(data)``, trying first to send it all without a thread switch."""
    sent = send_now(sock, data)
    if sent < len(data):
        sock.sendall(data[sent:] if sent else data)


class RecvBuffer:
    """A fixed receive buffer that :func:`recv_now` fills without a thread switch."""

    def __init__(self, size: int) -> None:
        self.data = bytearray(size)
        self._export = (ctypes.c_char * size).from_buffer(self.data)
        """Held so that ``data`` can never be resized away from ``_address``."""
        self._address = ctypes.addressof(self._export)

    def recv_now(self, sock: socket.socket) -> int:
        """Receive what the socket holds now into ``data``, holding the interpreter lock:
        the byte count; 0 at the peer's orderly close, as for ``recv``; -1 when it holds
        nothing now; -2 when the call failed otherwise or cannot be made here (the
        caller's blocking ``recv`` then waits, or reports the error).
        """
        if _helper is not None:
            received: int = _helper.recv_now(sock.fileno(), self.data)
            return received
        if _recv is None:
            return -2
        received = _recv(sock.fileno(), self._address, len(self.data), MSG_DONTWAIT)
        if received < 0:
            return -1 if ctypes.get_errno() in (errno.EAGAIN, errno.EWOULDBLOCK) else -2
        return received

    def recv(self, sock: socket.socket) -> int:
        """``sock.recv_into(data)``, trying first without a thread switch: when the socket
        holds nothing yet (or the call failed) the blocking call waits or raises the error.
        """
        received = self.recv_now(sock)
        return received if received >= 0 else sock.recv_into(self.data)


def epoll_rearm(epoll: select.epoll, fd: int, events: int) -> bool:
    """``epoll.modify(fd, events)`` holding the interpreter lock (the call never blocks);
    False when it failed or cannot be made here.
    """
    if _helper is not None:
        return bool(_helper.epoll_mod(epoll.fileno(), fd, events) == 0)
    if _epoll_ctl is None:
        return False
    event = _EPOLL_EVENT.pack(events, fd)
    return _epoll_ctl(epoll.fileno(), _EPOLL_CTL_MOD, fd, event) == 0


def epoll_modify(epoll: select.epoll, fd: int, events: int) -> None:
    """``epoll.modify(fd, events)``, trying first without a thread switch; a failure is
    made again by ``modify``, which raises its OSError.
    """
    if not epoll_rearm(epoll, fd, events):
        epoll.modify(fd, events)
