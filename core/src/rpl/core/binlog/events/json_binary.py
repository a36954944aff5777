"""MySQL's binary JSON (``sql-common/json_binary.cc``), as a JSON column's value in a rows
event carries it: :func:`encode` and :func:`decode`.

Written by hand: no library writes MySQL's binary JSON (python-mysql-replication and
go-mysql read it only), and MySQL's own serializer is C++ inside the server. The values are
:mod:`rpl.core.json_text`'s; :func:`encode_text` and :func:`decode_text` go from and to the
text the engine stores.

Layout (integers little-endian)::

    doc     ::= type value                     type: one byte, below
    object  ::= count size key-entry* value-entry* key* value*
    array   ::= count size value-entry* value*
    key-entry   ::= key-offset key-length       key-length: 2 bytes
    value-entry ::= type offset-or-inlined-value
    string  ::= data-length utf8mb4-data       data-length: 7 bits a byte, low bits
                                               first, high bit set while more follow
    opaque  ::= field-type data-length data    field-type: a MySQL column type byte

    0x00 small object   0x01 large object   0x02 small array   0x03 large array
    0x04 literal (0x00 null, 0x01 true, 0x02 false)
    0x05 int16  0x06 uint16  0x07 int32  0x08 uint32  0x09 int64  0x0a uint64
    0x0b double (IEEE, 8 bytes)  0x0c string  0x0f opaque

An object or array is *small* when it fits 64 KiB: count, size and offsets take 2 bytes;
else *large*, 4 bytes. ``size`` counts the whole object or array from ``count`` on, and
offsets are from there too. A container is written small if its whole value fits small,
with every container inside it small too; else large, and then each container inside it
gets the same choice (``serialize_json_value``'s retry with ``small_parent``). Literals
and int16/uint16 values are inlined in their value entry; so are int32/uint32 in a large
container; every other value sits after the keys, in entry order. An object's keys are
sorted as MySQL sorts them (:func:`rpl.core.json_text.key_order`: length, then bytes), and
its values follow in that order.

An integer is written as MySQL's parser would have typed it from its text: below 2**32
the smallest of int16, int32, int64 that holds it (a non-negative value is a signed
``Json_int`` there), from 2**32 on uint64. The decoder reads every type MySQL writes,
uint16/uint32 included; an empty document reads as null (``parse_binary``); an opaque
value reads as a :class:`~rpl.core.json_text.JsonOpaque` and is written back as it came.
Damaged bytes — offsets outside their container, a truncated value, an unknown type,
keys out of MySQL's order, text that is not UTF-8, entries that share their values (a
document that would read as more values than it has bytes) — are ValueError.
"""

from __future__ import annotations

import struct
from typing import Final

from rpl.core.json_text import (
    MAX_DEPTH,
    MAX_KEY_BYTES,
    JsonOpaque,
    JsonValue,
    parse,
    to_text,
)

JSONB_TYPE_SMALL_OBJECT: Final = 0x00
JSONB_TYPE_LARGE_OBJECT: Final = 0x01
JSONB_TYPE_SMALL_ARRAY: Final = 0x02
JSONB_TYPE_LARGE_ARRAY: Final = 0x03
JSONB_TYPE_LITERAL: Final = 0x04
JSONB_TYPE_INT16: Final = 0x05
JSONB_TYPE_UINT16: Final = 0x06
JSONB_TYPE_INT32: Final = 0x07
JSONB_TYPE_UINT32: Final = 0x08
JSONB_TYPE_INT64: Final = 0x09
JSONB_TYPE_UINT64: Final = 0x0A
JSONB_TYPE_DOUBLE: Final = 0x0B
JSONB_TYPE_STRING: Final = 0x0C
JSONB_TYPE_OPAQUE: Final = 0x0F

JSONB_NULL_LITERAL: Final = 0x00
JSONB_TRUE_LITERAL: Final = 0x01
JSONB_FALSE_LITERAL: Final = 0x02

SMALL_OFFSET_SIZE: Final = 2
LARGE_OFFSET_SIZE: Final = 4
_SMALL_MAX: Final = 0xFFFF
_LARGE_MAX: Final = 0xFFFFFFFF
_DOUBLE: Final = struct.Struct("<d")
_FIXED_INT: Final = {
    JSONB_TYPE_INT16: (2, True),
    JSONB_TYPE_UINT16: (2, False),
    JSONB_TYPE_INT32: (4, True),
    JSONB_TYPE_UINT32: (4, False),
    JSONB_TYPE_INT64: (8, True),
    JSONB_TYPE_UINT64: (8, False),
}
"""Bytes and signedness of each integer type."""


class _TooBig(Exception):
    """A small container that does not fit 64 KiB: its parent retries it large."""


# --- encoding ---------------------------------------------------------------------


def encode(value: JsonValue) -> bytes:
    """The binary JSON document of ``value``: type byte, then value; ValueError for a
    value the format cannot hold (deeper than 100, a key over 65535 bytes, over 4 GiB).
    """
    type_code, body = _value(value, small_parent=False, depth=0)
    return bytes((type_code,)) + body


def encode_text(text: str) -> bytes:
    """The binary JSON document of the JSON text ``text``."""
    return encode(parse(text))


def _value(value: JsonValue, small_parent: bool, depth: int) -> tuple[int, bytes]:
    """(type byte, bytes) of ``value`` inside a container that is small if
    ``small_parent`` (a container here that does not fit small then raises _TooBig).
    """
    if isinstance(value, dict | list):
        if depth + 1 > MAX_DEPTH:
            raise ValueError(f"The JSON document exceeds the maximum depth of {MAX_DEPTH}.")
        is_object = isinstance(value, dict)
        try:
            body = _container(value, False, depth + 1)
            return (JSONB_TYPE_SMALL_OBJECT if is_object else JSONB_TYPE_SMALL_ARRAY), body
        except _TooBig:
            if small_parent:
                raise
        body = _container(value, True, depth + 1)
        return (JSONB_TYPE_LARGE_OBJECT if is_object else JSONB_TYPE_LARGE_ARRAY), body
    return _scalar(value)


def _scalar(value: JsonValue) -> tuple[int, bytes]:
    if value is None:
        return JSONB_TYPE_LITERAL, bytes((JSONB_NULL_LITERAL,))
    if value is True or value is False:
        return JSONB_TYPE_LITERAL, bytes((JSONB_TRUE_LITERAL if value else JSONB_FALSE_LITERAL,))
    if isinstance(value, int):
        type_code = int_type(value)
        size, signed = _FIXED_INT[type_code]
        return type_code, value.to_bytes(size, "little", signed=signed)
    if isinstance(value, float):
        return JSONB_TYPE_DOUBLE, _DOUBLE.pack(value)
    if isinstance(value, str):
        data = value.encode("utf-8")
        return JSONB_TYPE_STRING, _variable_length(len(data)) + data
    if isinstance(value, JsonOpaque):
        head = bytes((value.field_type,)) + _variable_length(len(value.data))
        return JSONB_TYPE_OPAQUE, head + value.data
    raise ValueError(f"{value!r} is not a JSON value")


def int_type(value: int) -> int:
    """The binary type MySQL gives the integer ``value`` parsed from JSON text: rapidjson
    hands a non-negative value below 2**32 over as signed (``Json_int``, sized int16,
    int32 or int64), a larger one as ``Json_uint`` (uint64).
    """
    if -(1 << 15) <= value < 1 << 15:
        return JSONB_TYPE_INT16
    if -(1 << 31) <= value < 1 << 31:
        return JSONB_TYPE_INT32
    if -(1 << 63) <= value < 1 << 32:
        return JSONB_TYPE_INT64
    if value <= (1 << 64) - 1:
        return JSONB_TYPE_UINT64
    raise ValueError(f"{value} does not fit a JSON integer")


def _inline(value: JsonValue, large: bool) -> tuple[int, int] | None:
    """(type, value) of ``value`` if it goes in its value entry (``attempt_inline_value``)."""
    if value is None:
        return JSONB_TYPE_LITERAL, JSONB_NULL_LITERAL
    if value is True or value is False:
        return JSONB_TYPE_LITERAL, JSONB_TRUE_LITERAL if value else JSONB_FALSE_LITERAL
    if isinstance(value, int):
        type_code = int_type(value)
        if type_code == JSONB_TYPE_INT16 or (large and type_code == JSONB_TYPE_INT32):
            return type_code, value
    return None


def _container(value: dict[str, JsonValue] | list[JsonValue], large: bool, depth: int) -> bytes:
    """An object's or array's bytes from its count on, small or ``large``."""
    width = LARGE_OFFSET_SIZE if large else SMALL_OFFSET_SIZE
    limit = _LARGE_MAX if large else _SMALL_MAX
    keys: list[bytes] = []
    if isinstance(value, dict):
        members = sorted(((key.encode("utf-8"), item) for key, item in value.items()), key=_order)
        keys = [key for key, _ in members]
        items = [item for _, item in members]
    else:
        items = value
    count = len(items)
    _fits(count, limit)
    entry_start = 2 * width + (count * (width + 2) if isinstance(value, dict) else 0)
    header = entry_start + count * (1 + width)
    out = bytearray(header)
    out[0:width] = count.to_bytes(width, "little")
    offset = header
    for i, key in enumerate(keys):
        if len(key) > MAX_KEY_BYTES:
            raise ValueError("The JSON object contains a key name that is too long.")
        _fits(offset, limit)
        entry = 2 * width + i * (width + 2)
        out[entry : entry + width] = offset.to_bytes(width, "little")
        out[entry + width : entry + width + 2] = len(key).to_bytes(2, "little")
        offset += len(key)
    for key in keys:
        out += key
    for i, item in enumerate(items):
        entry = entry_start + i * (1 + width)
        inlined = _inline(item, large)
        if inlined is not None:
            out[entry] = inlined[0]
            out[entry + 1 : entry + 1 + width] = inlined[1].to_bytes(width, "little", signed=True)
            continue
        _fits(len(out), limit)
        out[entry + 1 : entry + 1 + width] = len(out).to_bytes(width, "little")
        type_code, body = _value(item, small_parent=not large, depth=depth)
        out[entry] = type_code
        out += body
    _fits(len(out), limit)
    out[width : 2 * width] = len(out).to_bytes(width, "little")
    return bytes(out)


def _order(member: tuple[bytes, JsonValue]) -> tuple[int, bytes]:
    return len(member[0]), member[0]


def _fits(number: int, limit: int) -> None:
    """``is_too_big_for_json``: a small container retries large, a large one fails."""
    if number > limit:
        if limit == _SMALL_MAX:
            raise _TooBig
        raise ValueError("The JSON document is larger than 4 GiB")


def _variable_length(length: int) -> bytes:
    """``append_variable_length``: 7 bits a byte, low first, high bit while more follow."""
    out = bytearray()
    while True:
        byte = length & 0x7F
        length >>= 7
        if length:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


# --- decoding ---------------------------------------------------------------------


def decode(data: bytes) -> JsonValue:
    """The value of the binary JSON document ``data``; ValueError if it does not parse.
    An empty document is null, as MySQL reads it.
    """
    if not data:
        return None
    return _parse(data[0], data, 1, len(data), 0, [len(data)])


def decode_text(data: bytes) -> str:
    """The binary JSON document ``data`` as MySQL prints it."""
    return to_text(decode(data))


def _parse(
    type_code: int, data: bytes, start: int, end: int, depth: int, budget: list[int]
) -> JsonValue:
    """The value of type ``type_code`` at ``data[start:end]`` (``parse_value``).

    ``budget`` holds the bytes a document still has to spend: each value read costs one,
    plus its string's, key's or opaque value's bytes. A document MySQL wrote stores each
    value once, so it never spends more than its length; damaged offsets that point many
    entries at one value (a document read as a tree many times its size) run out.
    """
    _spend(budget, 1)
    if type_code in (JSONB_TYPE_SMALL_OBJECT, JSONB_TYPE_LARGE_OBJECT):
        large = type_code == JSONB_TYPE_LARGE_OBJECT
        return _parse_object(data, start, end, large, depth, budget)
    if type_code in (JSONB_TYPE_SMALL_ARRAY, JSONB_TYPE_LARGE_ARRAY):
        large = type_code == JSONB_TYPE_LARGE_ARRAY
        return _parse_array(data, start, end, large, depth, budget)
    return _parse_scalar(type_code, data, start, end, budget)


def _spend(budget: list[int], size: int) -> None:
    budget[0] -= size
    if budget[0] < 0:
        raise ValueError("JSON document reads as more values than it has bytes")


def _parse_scalar(
    type_code: int, data: bytes, start: int, end: int, budget: list[int]
) -> JsonValue:
    if type_code == JSONB_TYPE_LITERAL:
        _need(start, 1, end)
        literal = data[start]
        if literal == JSONB_NULL_LITERAL:
            return None
        if literal in (JSONB_TRUE_LITERAL, JSONB_FALSE_LITERAL):
            return literal == JSONB_TRUE_LITERAL
        raise ValueError(f"JSON literal {literal:#x} is not null, true or false")
    if type_code in _FIXED_INT:
        size, signed = _FIXED_INT[type_code]
        _need(start, size, end)
        return int.from_bytes(data[start : start + size], "little", signed=signed)
    if type_code == JSONB_TYPE_DOUBLE:
        _need(start, 8, end)
        number: float = _DOUBLE.unpack_from(data, start)[0]
        if number != number or number in (float("inf"), float("-inf")):
            raise ValueError("JSON double is not a finite number")
        return number
    if type_code == JSONB_TYPE_STRING:
        length, pos = _read_variable_length(data, start, end)
        _need(pos, length, end)
        _spend(budget, length)
        return data[pos : pos + length].decode("utf-8")
    if type_code == JSONB_TYPE_OPAQUE:
        _need(start, 1, end)
        length, pos = _read_variable_length(data, start + 1, end)
        _need(pos, length, end)
        _spend(budget, length)
        return JsonOpaque(data[start], data[pos : pos + length])
    raise ValueError(f"JSON type {type_code:#x} is not one MySQL writes")


def _need(pos: int, size: int, end: int) -> None:
    if pos + size > end:
        raise ValueError(f"JSON value needs {size} bytes at {pos}, {max(end - pos, 0)} left")


def _read_variable_length(data: bytes, pos: int, end: int) -> tuple[int, int]:
    """(length, position after it) (``read_variable_length``: at most 5 bytes, 32 bits)."""
    length = 0
    for i in range(5):
        _need(pos + i, 1, end)
        byte = data[pos + i]
        length |= (byte & 0x7F) << (7 * i)
        if not byte & 0x80:
            if length > _LARGE_MAX:
                break
            return length, pos + i + 1
    raise ValueError("JSON length is longer than 32 bits")


def _header(data: bytes, start: int, end: int, large: bool, key_entries: bool) -> tuple[int, int]:
    """(count, size) of the container at ``start``, checked as ``parse_array_or_object``."""
    width = LARGE_OFFSET_SIZE if large else SMALL_OFFSET_SIZE
    _need(start, 2 * width, end)
    count = int.from_bytes(data[start : start + width], "little")
    size = int.from_bytes(data[start + width : start + 2 * width], "little")
    if size > end - start:
        raise ValueError(f"JSON container of {size} bytes has {end - start}")
    header = 2 * width + count * ((width + 2 if key_entries else 0) + 1 + width)
    if header > size:
        raise ValueError(f"JSON container header of {header} bytes in {size}")
    return count, size


def _parse_array(
    data: bytes, start: int, end: int, large: bool, depth: int, budget: list[int]
) -> JsonValue:
    count, size = _header(data, start, end, large, False)
    width = LARGE_OFFSET_SIZE if large else SMALL_OFFSET_SIZE
    _deeper(depth)
    return [
        _element(data, start, size, 2 * width + i * (1 + width), large, depth + 1, budget)
        for i in range(count)
    ]


def _parse_object(
    data: bytes, start: int, end: int, large: bool, depth: int, budget: list[int]
) -> JsonValue:
    count, size = _header(data, start, end, large, True)
    width = LARGE_OFFSET_SIZE if large else SMALL_OFFSET_SIZE
    _deeper(depth)
    entries_end = 2 * width + count * (width + 2 + 1 + width)
    out: dict[str, JsonValue] = {}
    previous: tuple[int, bytes] | None = None
    for i in range(count):
        entry = start + 2 * width + i * (width + 2)
        key_offset = int.from_bytes(data[entry : entry + width], "little")
        key_length = int.from_bytes(data[entry + width : entry + width + 2], "little")
        if key_offset < entries_end or key_offset + key_length > size:
            raise ValueError(f"JSON key at {key_offset} ({key_length} bytes) is outside its object")
        _spend(budget, key_length)
        key = data[start + key_offset : start + key_offset + key_length]
        order = (len(key), key)
        if previous is not None and previous >= order:
            raise ValueError(f"JSON key {key!r} is out of MySQL's order")
        previous = order
        value_entry = 2 * width + count * (width + 2) + i * (1 + width)
        out[key.decode("utf-8")] = _element(
            data, start, size, value_entry, large, depth + 1, budget
        )
    return out


def _deeper(depth: int) -> None:
    if depth + 1 > MAX_DEPTH:
        raise ValueError(f"JSON document deeper than {MAX_DEPTH}")


def _element(
    data: bytes, start: int, size: int, entry: int, large: bool, depth: int, budget: list[int]
) -> JsonValue:
    """The value whose entry is at ``entry`` in the container at ``start`` (``element``)."""
    width = LARGE_OFFSET_SIZE if large else SMALL_OFFSET_SIZE
    type_code = data[start + entry]
    inline_types = (JSONB_TYPE_LITERAL, JSONB_TYPE_INT16, JSONB_TYPE_UINT16)
    if type_code in inline_types or large and type_code in (JSONB_TYPE_INT32, JSONB_TYPE_UINT32):
        _spend(budget, 1)
        return _parse_scalar(type_code, data, start + entry + 1, start + entry + 1 + width, budget)
    offset = int.from_bytes(data[start + entry + 1 : start + entry + 1 + width], "little")
    if offset > size or offset < entry + 1 + width:
        raise ValueError(f"JSON value at {offset} is outside its container of {size} bytes")
    return _parse(type_code, data, start + offset, start + size, depth, budget)
