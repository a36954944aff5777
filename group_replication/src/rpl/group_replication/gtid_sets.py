"""GTID sets as the plugin needs them: parse and print MySQL's text, union, intersection,
subset, membership, and the next free GNO of a UUID.

Written here because the plugin may not import the server (the server's own GTID set is
in rpl.core), and no library models MySQL's GTID sets. A set maps a UUID (lower-case
text) to sorted, disjoint, non-adjacent closed intervals of GNOs; the text form is
MySQL's: ``uuid:1-5:7,uuid2:1-3``, UUIDs sorted, intervals ascending.
"""

from __future__ import annotations

import bisect
import uuid
from collections.abc import Iterable, Iterator

GNO_MAX = (1 << 63) - 1


def _uuid(text: str) -> str:
    try:
        return str(uuid.UUID(text.strip()))
    except ValueError as exc:
        raise ValueError(f"malformed GTID set: {text!r} is no UUID") from exc


def _gno(text: str) -> int:
    if not text.strip().isdigit():
        raise ValueError(f"malformed GTID set: {text!r} is no GNO")
    value = int(text)
    if not 1 <= value <= GNO_MAX:
        raise ValueError(f"malformed GTID set: GNO {value} out of range")
    return value


class GtidSet:
    """A mutable set of GTIDs (see the module docstring)."""

    __slots__ = ("_sids",)

    def __init__(self) -> None:
        self._sids: dict[str, list[tuple[int, int]]] = {}

    # ---------------------------------------------------------------- text
    @classmethod
    def parse(cls, text: str) -> GtidSet:
        """The set MySQL's text ``text`` names; ValueError if malformed."""
        result = cls()
        for part in text.replace("\n", "").split(","):
            if not part.strip():
                continue
            sid_text, *ranges = part.split(":")
            sid = _uuid(sid_text)
            if not ranges:
                raise ValueError(f"malformed GTID set: {part!r} has no interval")
            for item in ranges:
                first, dash, last = item.partition("-")
                start = _gno(first)
                end = _gno(last) if dash else start
                if end < start:
                    raise ValueError(f"malformed GTID set: interval {item!r}")
                result.add_interval(sid, start, end)
        return result

    def __str__(self) -> str:
        parts = []
        for sid in sorted(self._sids):
            ranges = ":".join(f"{a}" if a == b else f"{a}-{b}" for a, b in self._sids[sid])
            parts.append(f"{sid}:{ranges}")
        return ",".join(parts)

    def __repr__(self) -> str:
        return f"GtidSet({str(self)!r})"

    # ------------------------------------------------------------- changes
    def add(self, sid: str, gno: int) -> None:
        """Add ``sid:gno``."""
        self.add_interval(sid, gno, gno)

    def add_interval(self, sid: str, start: int, end: int) -> None:
        """Add ``sid:start-end``."""
        intervals = self._sids.setdefault(sid, [])
        at = bisect.bisect_left(intervals, (start, start))
        if at and intervals[at - 1][1] + 1 >= start:
            at -= 1
        stop = at
        while stop < len(intervals) and intervals[stop][0] <= end + 1:
            start = min(start, intervals[stop][0])
            end = max(end, intervals[stop][1])
            stop += 1
        intervals[at:stop] = [(start, end)]

    def update(self, other: GtidSet) -> None:
        """Add every GTID of ``other``."""
        for sid, intervals in other._sids.items():
            for start, end in intervals:
                self.add_interval(sid, start, end)

    def copy(self) -> GtidSet:
        """An independent copy."""
        result = GtidSet()
        result._sids = {sid: list(intervals) for sid, intervals in self._sids.items()}
        return result

    # --------------------------------------------------------------- tests
    def contains(self, sid: str, gno: int) -> bool:
        """Whether ``sid:gno`` is in the set."""
        intervals = self._sids.get(sid)
        if not intervals:
            return False
        at = bisect.bisect_right(intervals, (gno, GNO_MAX + 1)) - 1
        return at >= 0 and intervals[at][0] <= gno <= intervals[at][1]

    def issubset(self, other: GtidSet) -> bool:
        """Whether every GTID of this set is in ``other``."""
        for sid, intervals in self._sids.items():
            theirs = other._sids.get(sid)
            if not theirs:
                return False
            for start, end in intervals:
                at = bisect.bisect_right(theirs, (start, GNO_MAX + 1)) - 1
                if at < 0 or theirs[at][1] < end:
                    return False
        return True

    def intersection(self, other: GtidSet) -> GtidSet:
        """The GTIDs in both sets."""
        result = GtidSet()
        for sid, intervals in self._sids.items():
            for a_start, a_end in intervals:
                for b_start, b_end in other._sids.get(sid, ()):
                    start, end = max(a_start, b_start), min(a_end, b_end)
                    if start <= end:
                        result.add_interval(sid, start, end)
        return result

    def next_free(self, sid: str) -> int:
        """The smallest GNO of ``sid`` not in the set."""
        intervals = self._sids.get(sid)
        if not intervals or intervals[0][0] > 1:
            return 1
        return intervals[0][1] + 1

    def intervals(self) -> Iterator[tuple[str, int, int]]:
        """(sid, start, end) of every interval."""
        for sid in sorted(self._sids):
            for start, end in self._sids[sid]:
                yield sid, start, end

    def __bool__(self) -> bool:
        return bool(self._sids)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GtidSet) and self._sids == other._sids

    def __hash__(self) -> int:
        return hash(str(self))


def intersect_all(sets: Iterable[GtidSet]) -> GtidSet:
    """The GTIDs in every one of ``sets`` (empty for no sets)."""
    result: GtidSet | None = None
    for item in sets:
        result = item.copy() if result is None else result.intersection(item)
    return result if result is not None else GtidSet()
