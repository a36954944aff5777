"""JSON values as MySQL 8.0 reads and prints them: :func:`parse`, :func:`to_text`,
:func:`normalize`.

The engine stores a JSON column's value as its text (:mod:`rpl.core.engine.coercion`) and
the row codec writes it as MySQL's binary JSON
(:mod:`rpl.core.binlog.events.json_binary`); neither imports the other, so the value
model both read lives below both, here.

A value is ``None`` (JSON null), ``bool``, ``int``, ``float``, ``str``, ``list``,
``dict`` (string keys) or :class:`JsonOpaque` (a MySQL-typed scalar that only MySQL's
own SQL functions make, read from a binlog). :func:`parse` reads JSON text as MySQL's
parser does: an integer is an integer while it fits a signed or unsigned 64-bit
integer and a double beyond; a number with a fraction or an exponent is a double; the
last of duplicate keys wins; a value nested deeper than 100 levels is refused, as are
NaN/Infinity, a number too big for a double, a string that is not Unicode (a lone
surrogate escape) and a key over 65535 bytes. :func:`to_text` prints a value as MySQL
prints a JSON column: ``{"a": 1, "b": [true, null]}`` — ", " and ": " separators, an
object's keys sorted as MySQL stores them (shorter first, then bytewise in UTF-8), a
double as ``my_gcvt`` writes it with ``.0`` added when it has neither a point nor an
exponent (``1.0``, ``0.1``, ``1e300``, ``1e-16``), control characters escaped as
``double_quote`` does (``\\n``, ``\\u001f``), other characters as they are.
:func:`normalize` is ``to_text(parse(text))``: the form the engine stores, a fixed point
of itself.
"""

from __future__ import annotations

import base64
import decimal
import json
import math
from typing import Final, TypeAlias

import attrs

MAX_DEPTH: Final = 100
"""``JSON_DOCUMENT_MAX_DEPTH``: values nest at most this deep (a scalar counts a level)."""
MAX_KEY_BYTES: Final = 0xFFFF
"""A key's length is two bytes in the binary format."""
_INT_MIN: Final = -(1 << 63)
_UINT_MAX: Final = (1 << 64) - 1


@attrs.frozen
class JsonOpaque:
    """A MySQL-typed scalar in a binary JSON document (``JSONB_TYPE_OPAQUE``): the MySQL
    field type of the value and its bytes as MySQL packs them. Printed as MySQL prints an
    opaque value it has no text form for: ``"base64:type<N>:<base64 of the bytes>"``.
    """

    field_type: int
    data: bytes


JsonValue: TypeAlias = (
    None | bool | int | float | str | JsonOpaque | list["JsonValue"] | dict[str, "JsonValue"]
)
"""A JSON value (see the module docstring)."""


class JsonTextError(ValueError):
    """Text that is not a JSON document MySQL accepts (``ER_INVALID_JSON_TEXT``):
    ``reason`` as MySQL's parser words it, ``position`` the character where it was found.
    """

    def __init__(self, reason: str, position: int) -> None:
        super().__init__(f"Invalid JSON text: {reason!r} at position {position}")
        self.reason = reason
        self.position = position


class JsonDepthError(ValueError):
    """A document nested deeper than :data:`MAX_DEPTH` (``ER_JSON_DOCUMENT_TOO_DEEP``)."""


class JsonKeyTooBigError(ValueError):
    """A key longer than :data:`MAX_KEY_BYTES` bytes (``ER_JSON_KEY_TOO_BIG``)."""


def key_order(key: str) -> tuple[int, bytes]:
    """The sort key of an object's member: MySQL orders keys by their UTF-8 length, then
    bytewise (``Json_key_comparator``).
    """
    data = key.encode("utf-8")
    return len(data), data


def _reject_constant(name: str) -> object:
    raise JsonTextError("Invalid value.", -1)


def _parse_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise JsonTextError("Number too big to be stored in double.", -1)
    return number


def _parse_int(text: str) -> int | float:
    number = int(text)
    if _INT_MIN <= number <= _UINT_MAX:
        return number
    return _parse_float(text)  # beyond 64 bits MySQL's parser reads a double


_DECODER: Final = json.JSONDecoder(
    parse_float=_parse_float, parse_int=_parse_int, parse_constant=_reject_constant
)


def parse(text: str) -> JsonValue:
    """The value of the JSON document ``text``; :class:`JsonTextError`,
    :class:`JsonDepthError` or :class:`JsonKeyTooBigError` if MySQL would refuse it.
    """
    try:
        value: JsonValue = _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        raise JsonTextError(exc.msg, exc.pos) from None
    except JsonTextError as exc:
        raise JsonTextError(exc.reason, max(exc.position, 0)) from None
    except RecursionError:
        raise JsonDepthError(_depth_message()) from None
    except ValueError as exc:  # an integer with more digits than Python converts
        raise JsonTextError(str(exc), 0) from None
    _check(value, 1)
    return value


def _depth_message() -> str:
    return f"The JSON document exceeds the maximum depth of {MAX_DEPTH}."


def _check(value: JsonValue, depth: int) -> None:
    """Depth, Unicode strings and key lengths, as MySQL's parser checks them."""
    if depth > MAX_DEPTH:
        raise JsonDepthError(_depth_message())
    if isinstance(value, str):
        _check_unicode(value)
    elif isinstance(value, list):
        for item in value:
            _check(item, depth + 1)
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_unicode(key)
            if len(key) * 4 > MAX_KEY_BYTES and len(key.encode("utf-8")) > MAX_KEY_BYTES:
                raise JsonKeyTooBigError("The JSON object contains a key name that is too long.")
            _check(item, depth + 1)


def _check_unicode(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise JsonTextError("The surrogate pair in string is invalid.", exc.start) from None


def to_text(value: JsonValue) -> str:
    """``value`` printed as MySQL prints a JSON column (see the module docstring)."""
    parts: list[str] = []
    _print(value, parts)
    return "".join(parts)


def normalize(text: str) -> str:
    """The JSON document ``text`` as MySQL prints it back (what the engine stores)."""
    return to_text(parse(text))


def _print(value: JsonValue, out: list[str]) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int):
        out.append(str(value))
    elif isinstance(value, float):
        out.append(format_double(value))
    elif isinstance(value, str):
        out.append(json.dumps(value, ensure_ascii=False))
    elif isinstance(value, list):
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(", ")
            _print(item, out)
        out.append("]")
    elif isinstance(value, dict):
        out.append("{")
        for i, key in enumerate(sorted(value, key=key_order)):
            if i:
                out.append(", ")
            out.append(json.dumps(key, ensure_ascii=False))
            out.append(": ")
            _print(value[key], out)
        out.append("}")
    else:
        encoded = base64.b64encode(value.data).decode("ascii")
        out.append(f'"base64:type{value.field_type}:{encoded}"')


def format_double(number: float) -> str:
    """``number`` as MySQL prints a JSON double: ``my_gcvt`` at its widest field
    (``MY_GCVT_MAX_FIELD_WIDTH``) — the shortest digits that read back as ``number``, in
    the 'f' form while the decimal point falls within 15 places (``MAX_DECPT_FOR_F_FORMAT``)
    of the first digit or inside the digits, else ``<d>[.<ddd>]e[-]<exp>`` — then ``.0``
    when that has neither a point nor an exponent.
    """
    if not math.isfinite(number):
        raise ValueError(f"{number} is not a JSON number")
    if number == 0:
        return "-0.0" if math.copysign(1.0, number) < 0 else "0.0"
    sign = "-" if number < 0 else ""
    exact = decimal.Decimal(repr(abs(number))).as_tuple()
    raw = "".join(map(str, exact.digits))
    digits = raw.rstrip("0")
    exponent = int(exact.exponent) + len(raw) - len(digits)
    count = len(digits)
    decpt = count + exponent  # where the point goes, counted from the first digit
    if decpt >= -14 and (decpt <= 15 or count > decpt):
        if decpt <= 0:
            text = "0." + "0" * -decpt + digits
        elif decpt < count:
            text = digits[:decpt] + "." + digits[decpt:]
        else:
            text = digits + "0" * (decpt - count)
    else:
        text = digits[0] + ("." + digits[1:] if count > 1 else "") + f"e{decpt - 1}"
    if "." not in text and "e" not in text:
        text += ".0"
    return sign + text
