"""A TCP forwarder between two servers that a test can cut, as a network partition does.

A replica points at the proxy's port instead of its source's. Until :meth:`TcpProxy.cut`
every byte is forwarded both ways; after it, every byte that arrives is read and dropped
(the connections stay open, as a partition leaves them): what was in flight never arrives,
unlike a stopped process, whose kernel still receives into its socket buffers. ``delay``
makes the link from the target (a source) to the client (its replica) slow: each piece of
data the target sends waits that long before it is forwarded, so it is in flight, and
lost at a cut, for at least that long. :meth:`TcpProxy.hold` and :meth:`TcpProxy.tear`
end a stream in the middle of a packet, as a link that breaks while a source sends does.

Written by hand: a few dozen lines over ``socket`` with a thread per direction.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time

CHUNK = 65536


class TcpProxy:
    """Forwards 127.0.0.1:``port`` to 127.0.0.1:``target_port`` until cut."""

    def __init__(self, target_port: int, delay: float = 0.0) -> None:
        self.target_port = target_port
        self.delay = delay
        """Seconds each piece of data from the target waits before it is forwarded."""
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._cut = threading.Event()
        self._held: bytearray | None = None
        """What the target sent since :meth:`hold` (None: forwarding)."""
        self._clients: list[socket.socket] = []
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, name="rpl-proxy", daemon=True).start()

    def cut(self) -> None:
        """From now on, drop everything in both directions."""
        self._cut.set()

    def hold(self) -> None:
        """From now on, keep what the target sends instead of forwarding it."""
        with self._lock:
            self._held = bytearray()

    def held(self) -> bytes:
        """What the target sent since :meth:`hold`."""
        with self._lock:
            return bytes(self._held or b"")

    def tear(self, drop: int) -> None:
        """Forward what was held but its last ``drop`` bytes to the newest client, end
        that stream (FIN after the data) and close everything else, the listener too:
        the client reads a stream cut short, then finds the target unreachable.
        """
        with self._lock:
            data, self._held = bytes(self._held or b"")[:-drop], None
            client = self._clients[-1]
            self._sockets.remove(client)
        client.sendall(data)
        client.shutdown(socket.SHUT_WR)
        self.close()

    def close(self) -> None:
        """Close the listener and every forwarded connection."""
        self._cut.set()
        with self._lock:
            sockets, self._sockets = [self._listener, *self._sockets], []
        for sock in sockets:  # shutdown first: it wakes a pump blocked in recv and sends FIN
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                sock.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_port))
            except OSError:
                client.close()
                continue
            for sock in (client, upstream):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._lock:
                self._sockets += [client, upstream]
                self._clients.append(client)
            for source, target, delay, held in (
                (client, upstream, 0.0, False),
                (upstream, client, self.delay, True),
            ):
                threading.Thread(
                    target=self._pump, args=(source, target, delay, held), daemon=True
                ).start()

    def _keep(self, data: bytes) -> bool:
        """Keep ``data`` from the target while holding; whether it was kept."""
        with self._lock:
            if self._held is None:
                return False
            self._held += data
            return True

    def _pump(
        self, source: socket.socket, target: socket.socket, delay: float, from_target: bool
    ) -> None:
        while True:
            try:
                data = source.recv(CHUNK)
            except OSError:
                data = b""
            if not data:
                if not self._cut.is_set():
                    with contextlib.suppress(OSError):
                        target.shutdown(socket.SHUT_WR)
                return
            if delay:
                time.sleep(delay)
            if self._cut.is_set() or (from_target and self._keep(data)):
                continue
            try:
                target.sendall(data)
            except OSError:
                return
