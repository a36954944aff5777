"""GTIDs and GTID sets as MySQL 8.0 has them: the text form, the binary form, set algebra.

A GTID is ``sid:gno``: the UUID of the server that first committed a transaction (the SID)
and the transaction's number on that server, ``1 <= gno <= GNO_MAX`` (2**63 - 2; MySQL's
``GNO_END`` = 2**63 - 1 is exclusive).

A :class:`GtidSet` keeps, for each SID, a sorted list of closed intervals ``(start, end)``
that never overlap or touch: every operation merges, so two sets holding the same GTIDs
have the same intervals and therefore compare, print and encode the same. SIDs whose
interval list would become empty are dropped, for the same reason.

Text form (``@@gtid_executed``, ``SET GTID_NEXT``, ``START REPLICA UNTIL``):
``3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5:7,\\n<uuid>:1``. :meth:`GtidSet.parse` accepts
whitespace and newlines around every token, upper- or lower-case UUIDs, overlapping or
repeated intervals, and the empty string; :meth:`GtidSet.__str__` prints lowercase UUIDs
in sorted order joined by ``",\\n"``, exactly as MySQL prints ``@@gtid_executed``.

Binary form (the PREVIOUS_GTIDS event body and the COM_BINLOG_DUMP_GTID set):
``n_sids`` u64, then per SID its 16 raw UUID bytes, ``n_intervals`` u64 and that many
``(start, end_exclusive)`` i64 pairs, all little-endian, SIDs in sorted order.
:meth:`GtidSet.decode` applies the checks MySQL's decoder applies (exact length, intervals
ascending, non-adjacent and non-empty, inside ``1..GNO_MAX``), so a set it accepts is one
MySQL accepts too.
"""

from __future__ import annotations

import re
import struct
import uuid
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator
from typing import Final, Self

GNO_MAX: Final = (1 << 63) - 2
"""The largest valid GNO (MySQL's exclusive bound ``GNO_END`` is 2**63 - 1)."""

Interval = tuple[int, int]
"""A closed interval of GNOs, ``(start, end)`` with ``start <= end``."""

_U64: Final = struct.Struct("<Q")
_SID_HEADER: Final = struct.Struct("<16sQ")
_INTERVAL: Final = struct.Struct("<qq")
_UUID_TEXT: Final = re.compile(
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
)
_GNO_TEXT: Final = re.compile(r"[0-9]+")


def _check_gno(gno: int) -> None:
    if not 1 <= gno <= GNO_MAX:
        raise ValueError(f"GNO {gno} is out of range (1..{GNO_MAX})")


def _parse_sid(text: str) -> uuid.UUID:
    if not _UUID_TEXT.fullmatch(text):
        raise ValueError(f"malformed GTID set: {text!r} is not a UUID")
    return uuid.UUID(text)


def _parse_gno(text: str, context: str) -> int:
    if not _GNO_TEXT.fullmatch(text):
        raise ValueError(f"malformed GTID set: {text!r} in {context!r} is not a number")
    gno = int(text)
    if not 1 <= gno <= GNO_MAX:
        raise ValueError(f"malformed GTID set: GNO {gno} in {context!r} is out of range")
    return gno


def _end_of(interval: Interval) -> int:
    return interval[1]


def _start_of(interval: Interval) -> int:
    return interval[0]


def _subtract(minuend: list[Interval], subtrahend: list[Interval]) -> list[Interval]:
    """The intervals of ``minuend`` minus those of ``subtrahend`` (both merged and sorted)."""
    result: list[Interval] = []
    j = 0
    for start, end in minuend:
        while j < len(subtrahend) and subtrahend[j][1] < start:
            j += 1
        current = start
        k = j
        while k < len(subtrahend) and subtrahend[k][0] <= end:
            cut_start, cut_end = subtrahend[k]
            if cut_start > current:
                result.append((current, cut_start - 1))
            current = max(current, cut_end + 1)
            if current > end:
                break
            k += 1
        if current <= end:
            result.append((current, end))
    return result


class Gtid:
    """One GTID, ``sid:gno``: immutable, hashable, ordered by SID then GNO.

    A plain class, not attrs: the compiled build makes it a native class, so building,
    hashing and comparing one (a few per transaction on every server) runs no interpreted
    code; equality, hash and order go through the SID's 128-bit integer for the same reason
    (``uuid.UUID``'s own ``__hash__`` and ``__eq__`` are Python code).
    """

    __slots__ = ("sid", "gno")

    def __init__(self, sid: uuid.UUID, gno: int) -> None:
        self.sid: Final = sid
        self.gno: Final = gno

    def _key(self) -> tuple[int, int]:
        return (self.sid.int, self.gno)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Gtid):
            return NotImplemented
        return self.gno == other.gno and self.sid.int == other.sid.int

    def __hash__(self) -> int:
        return hash(self._key())

    def __lt__(self, other: Gtid) -> bool:
        return self._key() < other._key()

    def __le__(self, other: Gtid) -> bool:
        return self._key() <= other._key()

    def __gt__(self, other: Gtid) -> bool:
        return self._key() > other._key()

    def __ge__(self, other: Gtid) -> bool:
        return self._key() >= other._key()

    def __repr__(self) -> str:
        return f"Gtid(sid={self.sid!r}, gno={self.gno})"

    def __str__(self) -> str:
        return f"{self.sid}:{self.gno}"

    @classmethod
    def parse(cls, text: str) -> Gtid:
        """A GTID from ``uuid:gno`` (as ``SET GTID_NEXT`` takes it); ValueError if malformed."""
        sid_text, colon, gno_text = text.strip().partition(":")
        if not colon:
            raise ValueError(f"malformed GTID {text!r}: expected UUID:NUMBER")
        return cls(_parse_sid(sid_text.strip()), _parse_gno(gno_text.strip(), text))


class GtidSet:
    """A set of GTIDs: per SID, sorted closed intervals that never touch (see the module doc).

    SIDs are kept by their 128-bit integer (``uuid.UUID.int``): a dictionary look-up then
    hashes an int, not a UUID through its interpreted ``__hash__``, on every commit.
    """

    __slots__ = ("_sids",)
    __hash__ = None  # type: ignore[assignment]  # mutable

    def __init__(self, gtids: Iterable[Gtid] = ()) -> None:
        self._sids: dict[int, list[Interval]] = {}
        for gtid in gtids:
            self.add(gtid.sid, gtid.gno)

    # -- building ---------------------------------------------------------------------------

    def add(self, sid: uuid.UUID, gno: int) -> None:
        """Add the GTID ``sid:gno``."""
        self.add_interval(sid, gno, gno)

    def add_interval(self, sid: uuid.UUID, start: int, end: int) -> None:
        """Add ``sid:start-end`` (inclusive), merging with what touches or overlaps it."""
        self._add_interval(sid.int, start, end)

    def _add_interval(self, sid: int, start: int, end: int) -> None:
        _check_gno(start)
        _check_gno(end)
        if end < start:
            raise ValueError(f"empty GTID interval {start}-{end}")
        intervals = self._sids.get(sid)
        if intervals is None:
            self._sids[sid] = [(start, end)]
            return
        last_start, last_end = intervals[-1]
        if start > last_end + 1:  # the common case: a new GNO past the end
            intervals.append((start, end))
            return
        if start >= last_start:
            intervals[-1] = (last_start, max(end, last_end))
            return
        low = bisect_left(intervals, start - 1, key=_end_of)
        high = bisect_right(intervals, end + 1, key=_start_of)
        if low < high:
            start = min(start, intervals[low][0])
            end = max(end, intervals[high - 1][1])
        intervals[low:high] = [(start, end)]

    def update(self, other: GtidSet) -> None:
        """Add every GTID of ``other`` (union in place)."""
        for sid, intervals in other._sids.items():
            for start, end in intervals:
                self._add_interval(sid, start, end)

    def union(self, other: GtidSet) -> GtidSet:
        """A new set with the GTIDs of both."""
        result = self.copy()
        result.update(other)
        return result

    def __or__(self, other: GtidSet) -> GtidSet:
        return self.union(other)

    def difference(self, other: GtidSet) -> GtidSet:
        """A new set with the GTIDs of this set that are not in ``other``."""
        result = GtidSet()
        for sid, intervals in self._sids.items():
            others = other._sids.get(sid)
            remaining = _subtract(intervals, others) if others else list(intervals)
            if remaining:
                result._sids[sid] = remaining
        return result

    def __sub__(self, other: GtidSet) -> GtidSet:
        return self.difference(other)

    def intersection(self, other: GtidSet) -> GtidSet:
        """A new set with the GTIDs in both sets."""
        return self - (self - other)

    def __and__(self, other: GtidSet) -> GtidSet:
        return self.intersection(other)

    def copy(self) -> GtidSet:
        """An independent copy."""
        result = GtidSet()
        result._sids = {sid: list(intervals) for sid, intervals in self._sids.items()}
        return result

    # -- queries -----------------------------------------------------------------------------

    def __contains__(self, gtid: object) -> bool:
        if not isinstance(gtid, Gtid):
            return False
        intervals = self._sids.get(gtid.sid.int)
        if not intervals:
            return False
        index = bisect_right(intervals, gtid.gno, key=_start_of) - 1
        return index >= 0 and intervals[index][1] >= gtid.gno

    def is_subset(self, other: GtidSet) -> bool:
        """True if every GTID of this set is in ``other``."""
        for sid, intervals in self._sids.items():
            others = other._sids.get(sid)
            if not others:
                return False
            for start, end in intervals:
                index = bisect_right(others, start, key=_start_of) - 1
                if index < 0 or others[index][1] < end:
                    return False
        return True

    def __le__(self, other: GtidSet) -> bool:
        return self.is_subset(other)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GtidSet):
            return NotImplemented
        return self._sids == other._sids

    def __bool__(self) -> bool:
        return bool(self._sids)

    def count(self) -> int:
        """The number of GTIDs in the set."""
        return sum(end - start + 1 for intervals in self._sids.values() for start, end in intervals)

    def sids(self) -> list[uuid.UUID]:
        """The SIDs with at least one GTID, sorted (a UUID orders as its integer)."""
        return [uuid.UUID(int=sid) for sid in sorted(self._sids)]

    def intervals(self, sid: uuid.UUID) -> list[Interval]:
        """The closed intervals of ``sid``, ascending (a copy; empty if none)."""
        return list(self._sids.get(sid.int, ()))

    def __iter__(self) -> Iterator[Gtid]:
        for sid in self.sids():
            for start, end in self._sids[sid.int]:
                for gno in range(start, end + 1):
                    yield Gtid(sid, gno)

    def last_gno(self, sid: uuid.UUID) -> int:
        """The largest GNO of ``sid`` in the set, 0 if it has none."""
        intervals = self._sids.get(sid.int)
        return intervals[-1][1] if intervals else 0

    def next_gno(self, sid: uuid.UUID) -> int:
        """The GNO MySQL assigns next for ``sid``: the smallest one not in the set.

        ValueError when ``sid`` has used every GNO (MySQL's ER_GNO_EXHAUSTED).
        """
        intervals = self._sids.get(sid.int)
        if not intervals or intervals[0][0] > 1:
            return 1
        gno = intervals[0][1] + 1
        if gno > GNO_MAX:
            raise ValueError(f"impossible to generate a GTID: the GNOs of {sid} are exhausted")
        return gno

    # -- text form ---------------------------------------------------------------------------

    @classmethod
    def parse(cls, text: str) -> Self:
        """A set from MySQL's text form; ValueError with the reason if it is malformed."""
        result = cls()
        if not text.strip():
            return result
        for element in text.split(","):
            parts = element.split(":")
            sid = _parse_sid(parts[0].strip()) if parts[0].strip() else None
            if sid is None:
                raise ValueError(f"malformed GTID set {text!r}: an element has no UUID")
            for part in parts[1:]:
                start_text, dash, end_text = part.partition("-")
                start = _parse_gno(start_text.strip(), element.strip())
                end = _parse_gno(end_text.strip(), element.strip()) if dash else start
                if end < start:
                    raise ValueError(
                        f"malformed GTID set: interval {part.strip()!r} ends before it starts"
                    )
                result.add_interval(sid, start, end)
        return result

    def __str__(self) -> str:
        return ",\n".join(
            f"{sid}:" + ":".join(str(s) if s == e else f"{s}-{e}" for s, e in self._sids[sid.int])
            for sid in self.sids()
        )

    def __repr__(self) -> str:
        return f"GtidSet.parse({str(self)!r})"

    # -- binary form -------------------------------------------------------------------------

    def encode(self) -> bytes:
        """The binary form (PREVIOUS_GTIDS body, COM_BINLOG_DUMP_GTID data)."""
        sids = self.sids()
        parts = [_U64.pack(len(sids))]
        for sid in sids:
            intervals = self._sids[sid.int]
            parts.append(_SID_HEADER.pack(sid.bytes, len(intervals)))
            flat = [bound for start, end in intervals for bound in (start, end + 1)]
            parts.append(struct.pack(f"<{len(flat)}q", *flat))
        return b"".join(parts)

    @classmethod
    def decode(cls, data: bytes | bytearray | memoryview) -> Self:
        """A set from its binary form; ValueError if it is malformed (MySQL's checks)."""
        if len(data) < 8:
            raise ValueError(f"encoded GTID set of {len(data)} bytes is shorter than 8")
        (n_sids,) = _U64.unpack_from(data, 0)
        if n_sids >> 56:
            raise ValueError("encoded GTID set has a format byte (tagged GTIDs, MySQL 8.3+)")
        result = cls()
        position = 8
        for _ in range(n_sids):
            if len(data) - position < _SID_HEADER.size:
                raise ValueError(f"encoded GTID set truncated at byte {position}")
            sid_bytes, n_intervals = _SID_HEADER.unpack_from(data, position)
            position += _SID_HEADER.size
            if n_intervals > (len(data) - position) // _INTERVAL.size:
                raise ValueError(f"encoded GTID set: {n_intervals} intervals overrun the data")
            sid = uuid.UUID(bytes=bytes(sid_bytes))
            previous_end = 0
            for _ in range(n_intervals):
                start, end = _INTERVAL.unpack_from(data, position)
                position += _INTERVAL.size
                if start <= previous_end or end <= start or end > GNO_MAX + 1:
                    raise ValueError(f"encoded GTID set: bad interval [{start}, {end}) for {sid}")
                result.add_interval(sid, start, end - 1)
                previous_end = end
        if position != len(data):
            raise ValueError(f"encoded GTID set: {len(data) - position} bytes after the last SID")
        return result
