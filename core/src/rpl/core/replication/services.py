"""The server services a replication hook parameter carries (see rpl.observers.services).

* :class:`DumpNet` — ``ServerNet``: the source's side of one dump connection.
* :class:`SessionUserVariables` — ``UserVariables``: the user variables a replica
  set on its dump connection (``@master_binlog_checksum``, ``@rpl_semi_sync_slave``).
* :class:`SourceLink` — ``SourceConnection``: the receiver's PyMySQL connection to
  its source, with raw packet access for plugins (semisync sends its ACK with it).
  PyMySQL authenticates and runs the setup statements; the dump request goes out with
  its ``_execute_command``, and from then on the stream is read here, with the server's
  own packet framing (:class:`~rpl.core.net.packets.PacketChannel`) on the same socket:
  every event would otherwise pass through PyMySQL's packet objects.
"""

from __future__ import annotations

import math
import select
import socket
import struct
import threading
from collections.abc import Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Protocol

from rpl.core.net import nogil
from rpl.core.net.packets import ConnectionClosed, PacketChannel, ProtocolError, frame_packets
from rpl.observers import NetError, QueryError, UserVariableNotFound

if TYPE_CHECKING:
    from rpl.core.execution.session import Session

_HEADER = struct.Struct("<I")
_MAX_CHUNK = 0xFFFFFF
MAX_EVENT_PAYLOAD = 1 << 30
"""The largest packet a replica accepts from its source (MySQL's
``replica_max_allowed_packet`` default, 1 GiB)."""


class DumpConnection(Protocol):
    """What :class:`DumpNet` uses of a dump's connection
    (:class:`rpl.core.execution.connection.Connection` in the server).
    """

    sock: socket.socket
    channel: PacketChannel


def _whole_payload(buffer: bytearray) -> bytes | None:
    """Take the first whole payload (its packets joined) off ``buffer``; None while the
    buffer holds less.
    """
    parts: list[bytes] = []
    at = 0
    while at + 4 <= len(buffer):
        length = _HEADER.unpack_from(buffer, at)[0] & _MAX_CHUNK
        if at + 4 + length > len(buffer):
            return None
        parts.append(bytes(buffer[at + 4 : at + 4 + length]))
        at += 4 + length
        if length < _MAX_CHUNK:
            del buffer[:at]
            return b"".join(parts)
    return None


class DumpNet:
    """``ServerNet`` over a dump connection. Reads ignore sequence ids: a replica's
    replies (semisync ACKs) start their own sequence.
    """

    def __init__(self, connection: DumpConnection) -> None:
        self._connection = connection
        self._read_lock = threading.Lock()
        self._received = bytearray()
        self._chunk = nogil.RecvBuffer(65536)
        self.peer_closed = False
        """A plugin's read found the connection closed or broken: the dump ends."""

    def read(self, timeout: float | None = None) -> bytes:
        """One whole packet payload from the replica.

        One ``recv`` takes whatever has arrived (an ACK's header and body together), and
        what follows the payload is kept for the next read, which returns it without a
        system call: a reader woken by ``select`` reads with ``timeout=0`` until it times
        out, so no payload waits in the buffer unseen. With ``timeout=0`` the receive is
        first made without letting go of the interpreter lock (see rpl.core.net.nogil):
        the ACK receiver, on a commit's path to its ACK, then does not queue for the
        lock again between its ``select`` and the ACK's release of the waiting commits.
        """
        sock = self._connection.sock
        with self._read_lock:
            try:
                while (payload := _whole_payload(self._received)) is None:
                    if timeout is not None and timeout <= 0 and self._receive_now(sock):
                        continue  # a whole payload may be there now
                    if timeout is not None:
                        readable, _, _ = select.select([sock], [], [], max(timeout, 0.0))
                        if not readable:
                            raise NetError("read timed out", timed_out=True)
                    chunk = sock.recv(65536)
                    if not chunk:
                        raise ConnectionResetError("connection closed by peer")
                    self._received += chunk
                return payload
            except OSError as exc:
                self.peer_closed = True
                raise NetError(f"read failed: {exc}") from exc

    def _receive_now(self, sock: socket.socket) -> bool:
        """Add what the socket holds now to the buffer, holding the interpreter lock: True
        when bytes came; NetError (timed out) when the socket held nothing, so a reader
        polling with ``timeout=0`` lets go of the lock neither to receive nor to find
        nothing there; False when the connection closed or failed (the caller's
        ``select`` and ``recv`` then report it).
        """
        received = self._chunk.recv_now(sock)
        if received == -1:
            raise NetError("read timed out", timed_out=True)
        if received <= 0:
            return False
        self._received += memoryview(self._chunk.data)[:received]
        return True

    def write(self, payload: bytes) -> None:
        """Queue one packet to the replica."""
        self._connection.channel.queue(payload)

    def flush(self) -> None:
        """Send what was queued."""
        try:
            self._connection.channel.flush()
        except OSError as exc:
            raise NetError(f"write failed: {exc}") from exc

    def fileno(self) -> int:
        """The socket's descriptor."""
        return self._connection.sock.fileno()


class SessionUserVariables:
    """``UserVariables`` over one session's ``@variables``."""

    def __init__(self, session: Session) -> None:
        self._vars = session.user_vars

    def _get(self, name: str) -> object:
        key = name.lower()
        if key not in self._vars:
            raise UserVariableNotFound(name)
        return self._vars[key]

    def get_user_var_int(self, name: str) -> int | None:
        """The variable as an integer (MySQL's conversions: '12abc' is 12, 1.6 is 2)."""
        value = self._get(name)
        if value is None:
            return None
        if isinstance(value, bytes | str):
            return int(_leading_number(value))
        return int(Decimal(str(value)).to_integral_value("ROUND_HALF_UP"))

    def get_user_var_real(self, name: str) -> float | None:
        """The variable as a double."""
        value = self._get(name)
        if value is None:
            return None
        if isinstance(value, bytes | str):
            return float(_leading_number(value))
        return float(value)  # type: ignore[arg-type]

    def get_user_var_str(self, name: str, precision: int = 6) -> str | None:
        """The variable as a string."""
        value = self._get(name)
        if value is None:
            return None
        if isinstance(value, bytes):
            return value.decode("utf-8", "replace")
        if isinstance(value, float):
            return f"{value:.{precision}f}"
        return str(value)


def _leading_number(value: str | bytes) -> Decimal:
    text = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
    text = text.strip()
    end = 0
    for index, char in enumerate(text):
        sign = char in "+-" and index == 0
        if char.isdigit() or sign or (char == "." and "." not in text[:index]):
            end = index + 1
        else:
            break
    try:
        number = Decimal(text[:end])
    except ArithmeticError:
        return Decimal(0)
    return number if number.is_finite() else Decimal(0)


class SourceLink:
    """``SourceConnection`` over the receiver's PyMySQL connection."""

    def __init__(self, connection: Any) -> None:
        self.connection = connection
        self._write_lock = threading.Lock()
        self._out: list[bytes] = []
        self._stream: PacketChannel | None = None

    def query(self, statement: str) -> Sequence[Sequence[object]]:
        """Run ``statement`` on the source; its rows."""
        import pymysql

        try:
            with self.connection.cursor() as cursor:
                cursor.execute(statement)
                return list(cursor.fetchall())
        except pymysql.MySQLError as exc:
            code, message = (exc.args + (0, ""))[:2] if exc.args else (0, str(exc))
            if isinstance(exc, pymysql.err.OperationalError) and code in (2006, 2013):
                raise NetError(str(message)) from exc
            raise QueryError(int(code), "HY000", str(message)) from exc

    def request_dump(self, command: int, payload: bytes) -> None:
        """Send COM_BINLOG_DUMP(_GTID) ``payload``; the stream that follows is read with
        :meth:`read`. PyMySQL has read every reply before this command whole, and the
        source sends nothing unasked, so PyMySQL's read buffer holds nothing of the stream.
        """
        self.connection._execute_command(command, payload)
        self._stream = PacketChannel(self.connection._sock, max_payload=MAX_EVENT_PAYLOAD)
        self._stream.sequence = 1  # the command was packet 0

    def read(self, timeout: float | None = None) -> bytes:
        """One packet payload from the source (of the dump stream, once requested)."""
        stream = self._stream
        if stream is None:
            return self._read_reply(timeout)
        try:
            if timeout is not None and not stream.buffered():
                readable, _, _ = select.select([stream.sock], [], [], max(timeout, 0.0))
                if not readable:
                    raise NetError("read timed out", timed_out=True)
            return stream.read()
        except (OSError, ConnectionClosed, ProtocolError) as exc:
            raise NetError(f"read failed: {exc}", timed_out=isinstance(exc, TimeoutError)) from exc

    def _read_reply(self, timeout: float | None) -> bytes:
        import pymysql

        conn = self.connection
        saved = conn._read_timeout
        try:
            if timeout is not None:
                conn._read_timeout = max(timeout, 0.001)
            return bytes(conn._read_packet().get_all_data())
        except (pymysql.MySQLError, OSError) as exc:
            timed_out = isinstance(exc, TimeoutError | socket.timeout) or "timed out" in str(exc)
            raise NetError(str(exc), timed_out=timed_out) from exc
        finally:
            conn._read_timeout = saved

    def has_packet(self) -> bool:
        """Whether a whole packet of the dump stream is received and not read yet."""
        return self._stream is not None and self._stream.has_packet()

    def write(self, payload: bytes) -> None:
        """Queue one packet: a new sequence (id 0), as a replica's reply is; the
        connection's own sequence for the source's packets is left as it was.
        """
        frames, _ = frame_packets(payload, 0)
        with self._write_lock:
            self._out.extend(frames)

    def flush(self) -> None:
        """Send what was queued."""
        with self._write_lock:
            data, self._out = b"".join(self._out), []
            if not data:
                return
            try:
                nogil.sendall(self.connection._sock, data)
            except (OSError, AttributeError) as exc:
                raise NetError(f"write failed: {exc}") from exc


def nanoseconds(seconds: float) -> int:
    """``seconds`` as whole nanoseconds (``@master_heartbeat_period`` is in ns)."""
    return int(math.floor(seconds * 1e9))
