"""The semisync packet layouts (rpl.observers.semisync): MySQL's bytes, clear errors."""

from __future__ import annotations

import pytest

from rpl.observers.semisync import (
    Ack,
    MalformedPacket,
    decode_ack,
    encode_ack,
    event_header,
    split_event,
)


def test_event_header_bytes_and_split() -> None:
    assert event_header(True) == b"\xef\x01"
    assert event_header(False) == b"\xef\x00"
    assert split_event(b"\xef\x01EVENT") == (True, b"EVENT")
    assert split_event(b"\xef\x00EVENT") == (False, b"EVENT")


@pytest.mark.parametrize("packet", [b"", b"\xef", b"\x00\x01EVENT"])
def test_event_without_the_magic_is_refused(packet: bytes) -> None:
    with pytest.raises(MalformedPacket, match="Missing magic number"):
        split_event(packet)


def test_ack_layout() -> None:
    payload = encode_ack(Ack("binlog.000002", 0x0102030405))
    assert payload == b"\xef" + (0x0102030405).to_bytes(8, "little") + b"binlog.000002"
    assert decode_ack(payload) == Ack("binlog.000002", 0x0102030405)


@pytest.mark.parametrize(
    "payload, reason",
    [
        (b"\xef" + bytes(8), "length"),
        (b"\x00" + bytes(8) + b"binlog.000001", "magic"),
        (b"\xef" + bytes(8) + b"b" * 513, "too long"),
        (b"\xef" + bytes(8) + "bínlog".encode(), "not ASCII"),
        (b"\xef" + bytes(8) + b"../etc/passwd", "not a file name"),
        (b"\xef" + bytes(8) + b"bin\nlog", "not a file name"),
    ],
)
def test_malformed_acks_say_what_is_wrong(payload: bytes, reason: str) -> None:
    with pytest.raises(MalformedPacket, match=reason):
        decode_ack(payload)
