"""DATE, DATETIME2, TIMESTAMP2 and TIME2 values as MySQL 8.0 packs them in a row
(``my_date_to_binary``, ``my_datetime_packed_to_binary``, ``my_timestamp_to_binary``,
``my_time_packed_to_binary`` and their inverses), from and to the engine's text form.

DATE is 3 bytes little-endian (day | month << 5 | year << 9). The others are big-endian
with a fraction of ``(fsp + 1) // 2`` bytes (hundredths, then 1/10000, then
microseconds): DATETIME2 5 bytes, ``((year * 13 + month) << 22 | day << 17 | hour << 12
| minute << 6 | second) + 0x8000000000``; TIMESTAMP2 4 bytes of seconds since the epoch
(UTC); TIME2 3 bytes, ``(hms << 24 | microseconds)`` negated for a negative time, its
integer part + 0x800000 and its fraction in C's remainder (6 bytes in all, + 0x800000000000,
for 5-6 digits).
"""

from __future__ import annotations

import calendar
import datetime
import re
from typing import Final

_DATETIMEF_INT_OFS: Final = 0x8000000000
_TIMEF_INT_OFS: Final = 0x800000
_TIMEF_OFS: Final = 0x800000000000
_EPOCH: Final = datetime.datetime(1970, 1, 1)
_DATETIME_TEXT: Final = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})(?: (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?)?\Z"
)
_TIME_TEXT: Final = re.compile(r"(-?)(\d{2,3}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?\Z")


def pack_date(text: str) -> bytes:
    """DATE's 3 bytes of ``YYYY-MM-DD``; ValueError if it is not one."""
    year, month, day = _date_parts(text)
    return (day | month << 5 | year << 9).to_bytes(3, "little")


def unpack_date(raw: bytes) -> str:
    """The ``YYYY-MM-DD`` of DATE's 3 bytes."""
    packed = int.from_bytes(raw, "little")
    return f"{packed >> 9:04d}-{packed >> 5 & 15:02d}-{packed & 31:02d}"


def pack_datetime2(text: str, fsp: int) -> bytes:
    """DATETIME2's bytes of ``YYYY-MM-DD HH:MM:SS[.f]``; ValueError if it is not one."""
    return _datetime2(text, fsp)


def pack_timestamp2(text: str, fsp: int) -> bytes:
    """TIMESTAMP2's bytes of a UTC ``YYYY-MM-DD HH:MM:SS[.f]``; ValueError if it is not one."""
    return _timestamp2(text, fsp)


def pack_time2(text: str, fsp: int) -> bytes:
    """TIME2's bytes of ``[-]HH:MM:SS[.f]``; ValueError if it is not one."""
    return _time2(text, fsp)


def unpack_datetime2(raw: bytes, fsp: int) -> str:
    """The text of DATETIME2's bytes, ``fsp`` fraction digits."""
    return _datetime2_text(raw, fsp)


def unpack_timestamp2(raw: bytes, fsp: int) -> str:
    """The UTC text of TIMESTAMP2's bytes (0 is the zero timestamp), ``fsp`` digits."""
    seconds = int.from_bytes(raw[:4], "big")
    moment = _EPOCH + datetime.timedelta(seconds=seconds)
    text = moment.strftime("%Y-%m-%d %H:%M:%S") if seconds else "0000-00-00 00:00:00"
    return text + _fraction_text(_fraction_micro(raw[4:], fsp), fsp)


def unpack_time2(raw: bytes, fsp: int) -> str:
    """The text of TIME2's bytes, ``fsp`` fraction digits."""
    return _time2_text(raw, fsp)


def _date_parts(text: str) -> tuple[int, int, int]:
    match = _DATETIME_TEXT.match(text)
    if match is None:
        raise ValueError(f"{text!r} is not a date")
    return int(match[1]), int(match[2]), int(match[3])


def _moment(text: str) -> tuple[int, int, int, int, int, int, int]:
    """(year, month, day, hour, minute, second, microsecond) of a DATETIME string."""
    match = _DATETIME_TEXT.match(text)
    if match is None:
        raise ValueError(f"{text!r} is not a datetime")
    parts = [int(p or 0) for p in match.groups()[:6]]
    micro = int((match[7] or "").ljust(6, "0"))
    return parts[0], parts[1], parts[2], parts[3], parts[4], parts[5], micro


def _fraction(micro: int, fsp: int) -> bytes:
    """The fractional-second bytes: 1 for 1-2 digits, 2 for 3-4, 3 for 5-6 (big-endian)."""
    if fsp <= 0:
        return b""
    if fsp <= 2:
        return (micro // 10000).to_bytes(1, "big")
    if fsp <= 4:
        return (micro // 100).to_bytes(2, "big")
    return micro.to_bytes(3, "big")


def _datetime2(text: str, fsp: int) -> bytes:
    year, month, day, hour, minute, second, micro = _moment(text)
    packed = (year * 13 + month) << 22 | day << 17 | hour << 12 | minute << 6 | second
    return (packed + _DATETIMEF_INT_OFS).to_bytes(5, "big") + _fraction(micro, fsp)


def _timestamp2(text: str, fsp: int) -> bytes:
    year, month, day, hour, minute, second, micro = _moment(text)
    seconds = calendar.timegm((year, month, day, hour, minute, second, 0, 0, 0))
    if year == 0:
        seconds = 0
    return seconds.to_bytes(4, "big") + _fraction(micro, fsp)


def _time2(text: str, fsp: int) -> bytes:
    """TIME2 (``my_time_packed_to_binary``): the packed time ``hms << 24 | microseconds``,
    negated for a negative time, as 3 bytes + the fraction, or 6 bytes for 5-6 digits.
    """
    match = _TIME_TEXT.match(text)
    if match is None:
        raise ValueError(f"{text!r} is not a time")
    hms = int(match[2]) << 12 | int(match[3]) << 6 | int(match[4])
    micro = int((match[5] or "").ljust(6, "0"))
    packed = (hms << 24) + micro
    if match[1]:
        packed = -packed
    if fsp >= 5:
        return (packed + _TIMEF_OFS).to_bytes(6, "big")
    int_part = packed >> 24
    frac = -(abs(packed) % (1 << 24)) if packed < 0 else packed % (1 << 24)  # C's %
    head = (int_part + _TIMEF_INT_OFS).to_bytes(3, "big")
    if fsp <= 0:
        return head
    if fsp <= 2:
        return head + (_c_div(frac, 10000) & 0xFF).to_bytes(1, "big")
    return head + (_c_div(frac, 100) & 0xFFFF).to_bytes(2, "big")


def _c_div(a: int, b: int) -> int:
    """C's integer division (truncating toward zero)."""
    quotient = abs(a) // b
    return -quotient if a < 0 else quotient


def _fraction_micro(raw: bytes, fsp: int) -> int:
    value = int.from_bytes(raw, "big")
    return value * 10000 if fsp <= 2 else value * 100 if fsp <= 4 else value


def _fraction_text(micro: int, fsp: int) -> str:
    return "." + f"{micro:06d}"[:fsp] if fsp else ""


def _datetime2_text(raw: bytes, fsp: int) -> str:
    packed = int.from_bytes(raw[:5], "big") - _DATETIMEF_INT_OFS
    ym, day = packed >> 22, packed >> 17 & 31
    hour, minute, second = packed >> 12 & 31, packed >> 6 & 63, packed & 63
    text = f"{ym // 13:04d}-{ym % 13:02d}-{day:02d} {hour:02d}:{minute:02d}:{second:02d}"
    return text + _fraction_text(_fraction_micro(raw[5:], fsp), fsp)


def _time2_text(raw: bytes, fsp: int) -> str:
    """``my_time_packed_from_binary`` then the time's text form."""
    if fsp >= 5:
        packed = int.from_bytes(raw, "big") - _TIMEF_OFS
    else:
        int_part = int.from_bytes(raw[:3], "big") - _TIMEF_INT_OFS
        frac = int.from_bytes(raw[3:], "big")
        if fsp >= 1:
            bits = 8 if fsp <= 2 else 16
            if int_part < 0 and frac:
                int_part += 1
                frac -= 1 << bits
            frac *= 10000 if fsp <= 2 else 100
        packed = (int_part << 24) + frac
    sign, packed = ("-", -packed) if packed < 0 else ("", packed)
    hms, micro = packed >> 24, packed & 0xFFFFFF
    text = f"{sign}{hms >> 12 & 0x3FF:02d}:{hms >> 6 & 63:02d}:{hms & 63:02d}"
    return text + _fraction_text(micro, fsp)
