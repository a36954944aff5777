"""Sending on a socket without letting go of the interpreter lock.

``socket.send`` releases CPython's global interpreter lock around the system call, as it
must for a send that may block. A reply of a few dozen bytes to a loopback or LAN socket
never blocks, and releasing the lock for it costs more than the send: another thread takes
the lock, and the sender queues behind it to get it back (two thread switches per reply).
Under sysbench that hand-off was a sixth of the server's time on oltp_point_select.

:func:`send_now` calls libc's ``send`` through a ``ctypes.PyDLL`` handle, which keeps the
lock, with ``MSG_DONTWAIT`` so that it can never block while holding it; whatever the
kernel did not take (a full socket buffer) is left to the caller's blocking send. No
library offers this, so it is written here by hand; Linux and other POSIX systems only
(elsewhere :func:`send_now` sends nothing and the blocking send does all the work).
"""

from __future__ import annotations

import ctypes
import socket
from collections.abc import Callable

MSG_DONTWAIT = getattr(socket, "MSG_DONTWAIT", 0)


def _libc_send() -> Callable[[int, bytes, int, int], int] | None:
    if not MSG_DONTWAIT:
        return None
    try:
        function = ctypes.PyDLL(None).send
    except (OSError, AttributeError):
        return None
    function.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int)
    function.restype = ctypes.c_ssize_t
    return function


_send = _libc_send()


def send_now(sock: socket.socket, data: bytes) -> int:
    """Send what the socket takes at once, holding the interpreter lock; the byte count
    (0 when it took nothing or failed: the caller's blocking send then reports the error).
    """
    if _send is None:
        return 0
    sent: int = _send(sock.fileno(), data, len(data), MSG_DONTWAIT)
    return max(sent, 0)


def sendall(sock: socket.socket, data: bytes) -> None:
    """``sock.sendall(data)``, trying first to send it all without a thread switch."""
    sent = send_now(sock, data)
    if sent < len(data):
        sock.sendall(data[sent:] if sent else data)
