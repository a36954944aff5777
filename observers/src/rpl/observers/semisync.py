"""The semisynchronous replication packets, shared by a source plugin and a replica plugin.

Both byte layouts are MySQL's (semisync.h), so an rpl source talks to a MySQL replica's
semisync plugin and back:

* Event header: a source reserves two bytes after the OK byte of every event packet it
  sends to a semisync replica: the magic ``0xEF`` and a flag byte, ``0x01`` when the source
  waits for this event's acknowledgement.
* ACK: the replica's reply, a packet of its own on the dump connection: the magic
  ``0xEF``, the end position of the acknowledged event in the source's binlog (8 bytes,
  little-endian) and that binlog file's name (the rest of the packet, no terminator).

Written by hand: a dozen bytes no library describes.
"""

from __future__ import annotations

import struct
from typing import Final

import attrs

PACKET_MAGIC: Final = 0xEF
"""First byte of the event header and of an ACK."""
PACKET_FLAG_SYNC: Final = 0x01
"""Flag byte: the source waits for the replica's ACK of this event."""
HEADER_LEN: Final = 2
"""Bytes the source reserves in front of each event (magic + flag)."""
ACK_NAME_OFFSET: Final = 9
"""Where the file name starts in an ACK (after the magic and the position)."""
MAX_NAME_LEN: Final = 512
"""The longest file name an ACK may carry (MySQL's FN_REFLEN)."""

_POSITION: Final = struct.Struct("<Q")


class MalformedPacket(ValueError):
    """A semisync header or ACK that does not follow the layout; says what is wrong."""


@attrs.frozen
class Ack:
    """A replica's acknowledgement: it holds the source's binlog up to (log_file, log_pos)."""

    log_file: str
    log_pos: int


def event_header(sync: bool) -> bytes:
    """The two header bytes, with the sync flag when ``sync``."""
    return bytes((PACKET_MAGIC, PACKET_FLAG_SYNC if sync else 0))


def split_event(packet: bytes) -> tuple[bool, bytes]:
    """``(sync flag, event)`` of an event packet (after its OK byte) carrying the header."""
    if len(packet) < HEADER_LEN or packet[0] != PACKET_MAGIC:
        raise MalformedPacket("Missing magic number for semi-sync packet")
    return bool(packet[1] & PACKET_FLAG_SYNC), packet[HEADER_LEN:]


def encode_ack(ack: Ack) -> bytes:
    """The ACK packet payload for ``ack``."""
    return bytes((PACKET_MAGIC,)) + _POSITION.pack(ack.log_pos) + ack.log_file.encode()


def decode_ack(payload: bytes) -> Ack:
    """The ACK in ``payload``; MalformedPacket when it is short, lacks the magic, or its
    file name is empty, too long or not a plain file name.
    """
    if len(payload) <= ACK_NAME_OFFSET:
        raise MalformedPacket(f"semi-sync reply length error: {len(payload)} bytes")
    if payload[0] != PACKET_MAGIC:
        raise MalformedPacket(f"semi-sync reply magic number error: 0x{payload[0]:02x}")
    raw_name = payload[ACK_NAME_OFFSET:]
    if len(raw_name) > MAX_NAME_LEN:
        raise MalformedPacket(f"semi-sync reply binlog file name too long: {len(raw_name)}")
    try:
        name = raw_name.decode("ascii")
    except UnicodeDecodeError:
        raise MalformedPacket("semi-sync reply binlog file name is not ASCII") from None
    if not name.isprintable() or "/" in name or name in (".", ".."):
        raise MalformedPacket(f"semi-sync reply binlog file name is not a file name: {name!r}")
    (position,) = _POSITION.unpack_from(payload, 1)
    return Ack(name, position)
