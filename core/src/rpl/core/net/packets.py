"""MySQL packet framing and the basic payload encodings.

Every packet is a 3-byte little-endian payload length, a 1-byte sequence id and the
payload. A payload of 0xFFFFFF bytes or more is split into 0xFFFFFF-byte packets
ended by a shorter one (possibly empty); :class:`PacketChannel` joins and splits them
so the rest of the server sees whole payloads. Sequence ids restart at 0 with each
command and must follow on; a wrong one is a protocol error.
"""

from __future__ import annotations

import socket
import struct
import threading

from rpl.core.errors import ER_NET_PACKET_TOO_LARGE, MySQLError
from rpl.core.net import nogil

MAX_PACKET_CHUNK = 0xFFFFFF
_HEADER = struct.Struct("<I")
_RECV_SIZE = 16384


class ConnectionClosed(Exception):
    """The peer closed the connection (or it broke) in the middle of, or before, a packet."""


class ProtocolError(Exception):
    """The peer sent bytes that are not a valid packet sequence."""


def lenenc_int(value: int) -> bytes:
    """A length-encoded integer."""
    if value < 251:
        return bytes((value,))
    if value < 1 << 16:
        return b"\xfc" + value.to_bytes(2, "little")
    if value < 1 << 24:
        return b"\xfd" + value.to_bytes(3, "little")
    return b"\xfe" + value.to_bytes(8, "little")


def lenenc_str(data: bytes) -> bytes:
    """A length-encoded string."""
    return lenenc_int(len(data)) + data


class PayloadReader:
    """Reads the fields of one payload; IndexError/ProtocolError on a short payload."""

    def __init__(self, payload: bytes, offset: int = 0) -> None:
        self.data = payload
        self.pos = offset

    def remaining(self) -> int:
        """Bytes not yet read."""
        return len(self.data) - self.pos

    def take(self, size: int) -> bytes:
        """The next ``size`` bytes."""
        if size < 0 or self.pos + size > len(self.data):
            raise ProtocolError(f"payload too short: wanted {size} bytes at {self.pos}")
        chunk = self.data[self.pos : self.pos + size]
        self.pos += size
        return chunk

    def uint(self, size: int) -> int:
        """A little-endian unsigned integer of ``size`` bytes."""
        return int.from_bytes(self.take(size), "little")

    def lenenc_int(self) -> int:
        """A length-encoded integer."""
        first = self.uint(1)
        if first < 251:
            return first
        sizes = {0xFC: 2, 0xFD: 3, 0xFE: 8}
        if first not in sizes:
            raise ProtocolError(f"invalid length-encoded integer prefix 0x{first:02x}")
        return self.uint(sizes[first])

    def lenenc_str(self) -> bytes:
        """A length-encoded string."""
        return self.take(self.lenenc_int())

    def nul_str(self) -> bytes:
        """A NUL-terminated string (the NUL is consumed, not returned)."""
        end = self.data.find(b"\0", self.pos)
        if end < 0:
            raise ProtocolError("unterminated string")
        chunk = self.data[self.pos : end]
        self.pos = end + 1
        return chunk

    def rest(self) -> bytes:
        """Everything not yet read."""
        chunk = self.data[self.pos :]
        self.pos = len(self.data)
        return chunk


def frame_packets(payload: bytes | bytearray, sequence: int) -> tuple[list[bytes], int]:
    """``payload`` as packets numbered from ``sequence`` (a payload of a multiple of
    MAX_PACKET_CHUNK bytes ends with an empty packet), and the next sequence number.
    """
    frames = []
    for offset in range(0, len(payload) + 1, MAX_PACKET_CHUNK):
        chunk = payload[offset : offset + MAX_PACKET_CHUNK]
        frames.append(_HEADER.pack(len(chunk) | (sequence & 0xFF) << 24) + chunk)
        sequence += 1
    return frames, sequence


class ReplyBatch:
    """Replies for many channels, gathered and then sent together (the group commit
    leader's replies to its group): every channel's write lock is held while its reply
    goes out, and the sends that do not block are made in one :func:`nogil.send_many`.
    A client that went away is not an error here: its connection's reader sees the end.
    """

    def __init__(self) -> None:
        self._data: dict[PacketChannel, bytes] = {}
        """Framed data by channel, in the order the channels were first added."""

    def add(self, channel: PacketChannel, data: bytes) -> None:
        """Queue framed ``data`` for ``channel`` (after what is queued for it already)."""
        self._data[channel] = self._data.get(channel, b"") + data

    def send(self) -> None:
        """Send everything queued, and empty the batch."""
        queued, self._data = self._data, {}
        if not queued:
            return
        channels, data = list(queued), list(queued.values())
        held = []
        try:
            for channel in channels:
                channel._write_lock.acquire()
                held.append(channel)
            sent = nogil.send_many([channel.sock for channel in channels], data)
            for channel, chunk, count in zip(channels, data, sent, strict=True):
                if count < len(chunk):
                    try:
                        channel.sock.sendall(chunk[count:] if count else chunk)
                    except OSError:
                        pass
        finally:
            for channel in held:
                channel._write_lock.release()


def _payload_length(header: bytes | bytearray) -> int:
    """The payload length a packet header (its first 3 bytes, little-endian) announces."""
    return header[0] | header[1] << 8 | header[2] << 16


class PacketChannel:
    """Whole payloads over a socket, with sequence ids and multi-packet payloads.

    Reads are done by one thread (the connection's); writes are serialised by a lock
    because another thread (a semisync ACK receiver, a KILL) may write too.
    """

    def __init__(self, sock: socket.socket, max_payload: int = 64 << 20) -> None:
        self.sock = sock
        self.sequence = 0
        self.max_payload = max_payload
        self._in = bytearray()
        """Received bytes not read yet."""
        self._chunk = nogil.RecvBuffer(_RECV_SIZE)
        self._write_lock = threading.Lock()
        self._out: list[bytes] = []

    def reset_sequence(self) -> None:
        """A new command starts: the next packet carries sequence id 0."""
        self.sequence = 0

    def buffered(self) -> int:
        """Bytes received and not read yet (a pipelined command: the socket shows none)."""
        return len(self._in)

    def has_packet(self) -> bool:
        """Whether a whole packet is received and not read yet: :meth:`read` returns it
        without a system call (a payload split over several packets counts as not whole).
        """
        return self._whole_length() >= 0

    def _whole_length(self) -> int:
        """The payload length of the first packet received, when it is whole and a payload
        of its own (not a part of a split one); -1 otherwise.
        """
        buffer = self._in
        if len(buffer) < 4:
            return -1
        length = _payload_length(buffer)
        return length if length < MAX_PACKET_CHUNK and len(buffer) >= 4 + length else -1

    def _read_exact(self, size: int) -> bytes:
        buffer = self._in
        while len(buffer) < size:
            missing = size - len(buffer)
            if missing > _RECV_SIZE:
                large = self.sock.recv(missing)
                received = len(large)
                buffer += large
            else:
                received = self._chunk.recv(self.sock)
                buffer += memoryview(self._chunk.data)[:received]
            if not received:
                raise ConnectionClosed("connection closed by peer")
        data = bytes(buffer[:size])
        del buffer[:size]
        return data

    def read(self) -> bytes:
        """The next whole payload; ER_NET_PACKET_TOO_LARGE beyond ``max_payload``."""
        length = self._whole_length()  # a burst's next packet is usually received whole
        buffer = self._in
        if 0 <= length <= self.max_payload and buffer[3] == self.sequence & 0xFF:
            self.sequence += 1  # otherwise the general path below reports what is wrong
            payload = bytes(buffer[4 : 4 + length])
            del buffer[: 4 + length]
            return payload
        parts: list[bytes] = []
        total = 0
        while True:
            header = self._read_exact(4)
            length = _payload_length(header)
            if header[3] != self.sequence & 0xFF:
                raise ProtocolError(
                    f"packets out of order (expected {self.sequence & 0xFF}, got {header[3]})"
                )
            self.sequence += 1
            total += length
            if total > self.max_payload:
                raise MySQLError.of(ER_NET_PACKET_TOO_LARGE)
            parts.append(self._read_exact(length) if length else b"")
            if length < MAX_PACKET_CHUNK:
                return parts[0] if len(parts) == 1 else b"".join(parts)

    def _frame(self, payload: bytes | bytearray) -> list[bytes]:
        frames, self.sequence = frame_packets(payload, self.sequence)
        return frames

    def queue(self, payload: bytes | bytearray) -> None:
        """Add a payload to the output buffer (sent by :meth:`flush`)."""
        self._out.extend(self._frame(payload))

    def queue_all(self, payloads: list[bytes]) -> None:
        """:meth:`queue` each of ``payloads``, in order (a result set's packets framed in
        one pass).
        """
        sequence = self.sequence
        out = self._out
        pack = _HEADER.pack
        for payload in payloads:
            if len(payload) < MAX_PACKET_CHUNK:
                out.append(pack(len(payload) | (sequence & 0xFF) << 24))
                out.append(payload)
                sequence += 1
            else:
                frames, sequence = frame_packets(payload, sequence)
                out.extend(frames)
        self.sequence = sequence

    def write(self, payload: bytes) -> None:
        """Send one payload now (with anything queued before it)."""
        self.queue(payload)
        self.flush()

    def reply_later(self, batch: ReplyBatch, sequence: int, payload: bytes) -> None:
        """Add ``payload`` to ``batch`` as the packet(s) numbered from ``sequence``, leaving
        this channel's own numbering alone: a reply framed for a command and sent by
        another thread (the group commit leader) after this one went on to read the next
        command.
        """
        frames, _ = frame_packets(payload, sequence)
        batch.add(self, b"".join(frames))

    def flush(self) -> None:
        """Send everything queued, in one system call where possible."""
        if not self._out:
            return
        data = b"".join(self._out)
        self._out.clear()
        with self._write_lock:
            nogil.sendall(self.sock, data)

    def close(self) -> None:
        """Close the socket (idempotent)."""
        try:
            self.sock.close()
        except OSError:
            pass
