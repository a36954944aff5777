"""The fast path of ``rpl validate``'s scan: one split proven regular and folded into a
sketch of a few numbers, or found irregular.

Written by hand (no library reads MySQL binlogs); the byte layout comes from the codec
(:data:`rpl.core.binlog.events.HEADER_AT`, ``GTID_AT``, ``QUERY_AT``), so there is still
one description of every field. :class:`SketchScanner` is the exact scanner
(:class:`rpl.core.validate.scan.SplitScanner`) with its per-event loop replaced:

* one tight loop walks the event chain of the split and checks every event's CRC32
  (``zlib``); every other per-event fact is read for all events at once with numpy
  (type, server_id, size, end log_pos, flags, the GTID's SID and GNO, the head of a
  QUERY's statement);
* the transaction grammar is one regular expression over a string of one letter per
  event (``F`` FORMAT_DESCRIPTION/PREVIOUS_GTIDS/ROTATE/STOP, ``G`` GTID, ``B`` BEGIN,
  ``M`` another statement, ``R`` TABLE_MAP/WRITE_ROWS/UPDATE_ROWS/DELETE_ROWS/ROWS_QUERY,
  ``C`` XID/COMMIT/ROLLBACK, ``X`` anything else);
* the rare events (file events, a relay log's artificial and source ROTATEs) go through
  the exact scanner's own code, so they are decoded and recorded exactly as it does.

*Regular* means the exact scanner would report nothing for this split: every event's CRC
is right, every type is one of the twelve above, a binlog's end log_pos is position + size
throughout, every transaction is GTID BEGIN ... XID/COMMIT (statements and rows events
between) or GTID + one DDL and the
split's last one ends, a relay log's source positions are contiguous (whole
transactions may be skipped, as the exact scanner allows: the span comparison counts them).
Anything else raises :class:`Irregular`, and the caller falls back to the exact checks:
this path only ever proves a split clean, it never explains a fault.

A sketch (:class:`Sketch`): the split's :class:`Summary` (equal to the exact scanner's),
its file events, and per group of transactions (a binlog: the file; a relay log: each run
of one source file) the count, two order-free fingerprints of (position, GTID, events,
digest) and the GTID runs (consecutive GNOs of one SID, in file order). Fingerprints add
up over splits, so two logs hold the same transactions at the same positions exactly when
counts and fingerprints agree over the same span.
"""

from __future__ import annotations

import re
import struct
import uuid
import zlib
from array import array
from typing import TYPE_CHECKING, Any, Final

import attrs
import numpy as np

from rpl.core.binlog.events import (
    CHECKSUM_LEN,
    DELETE_ROWS_EVENT,
    FORMAT_DESCRIPTION_EVENT,
    GTID_AT,
    GTID_BODY_MIN,
    GTID_LOG_EVENT,
    HEADER_AT,
    HEADER_LEN,
    LOG_EVENT_ARTIFICIAL_F,
    MAX_EVENT_SIZE,
    PREVIOUS_GTIDS_LOG_EVENT,
    QUERY_AT,
    QUERY_EVENT,
    QUERY_POST_HEADER_LEN,
    ROTATE_EVENT,
    ROWS_QUERY_LOG_EVENT,
    STOP_EVENT,
    TABLE_MAP_EVENT,
    UPDATE_ROWS_EVENT,
    WRITE_ROWS_EVENT,
    XID_EVENT,
    unpack_header,
    verify_checksum,
)
from rpl.core.validate.layout import BINLOG, Split
from rpl.core.validate.scan import FOLD, Damage, SplitScanner, Summary

if TYPE_CHECKING:
    Offsets = array[int]
    """array("q"): appended to in the walk, read by numpy without a copy."""
_U32: Final = struct.Struct("<I").unpack_from
_MIN_SIZE: Final = HEADER_LEN + CHECKSUM_LEN
_FILE_TYPES: Final = (FORMAT_DESCRIPTION_EVENT, PREVIOUS_GTIDS_LOG_EVENT, ROTATE_EVENT, STOP_EVENT)
_GTID_MIN_SIZE: Final = HEADER_LEN + GTID_BODY_MIN
_TYPE: Final = HEADER_AT["type_code"]
_SIZE: Final = HEADER_AT["event_size"]
_HEAD: Final = 8
_FOLD_CASE: Final = 0x2020202020202020
_ROW_TYPES: Final = (
    TABLE_MAP_EVENT,
    WRITE_ROWS_EVENT,
    UPDATE_ROWS_EVENT,
    DELETE_ROWS_EVENT,
    ROWS_QUERY_LOG_EVENT,
)
_GRAMMAR: Final = re.compile(rb"(?:F*(?:GB[MR]*C|GM))*F*")
_OPEN: Final = re.compile(rb"G(?:B[MR]*)?")
_KEYWORDS: Final = (
    (b"BEGIN", ord("B")),
    (b"COMMIT", ord("C")),
    (b"ROLLBACK", ord("C")),
    (b"XA START", ord("X")),
)
_MASK62: Final = np.uint64((1 << 62) - 1)
_FOLD64: Final = np.uint64(FOLD)
_MOD64: Final = 1 << 64
_SHORT_FOLD: Final = 32
"""Transactions of at most this many events fold their digests vectorized."""


class Irregular(Exception):
    """The split holds something only the exact scanner explains."""


@attrs.define
class Group:
    """Complete transactions of one split that share a file (a relay log: a source file).

    ``first``/``last``: the first and last transaction's position (a relay log: source
    position); ``xor``/``total``: the fingerprints (XOR of the 64-bit hashes, sum of their
    high halves mod 2**64); ``runs``: [sid, first gno, last gno] in file order.
    """

    file: str | None
    server_id: int | None
    count: int
    xor: int
    total: int
    first: int
    last: int
    runs: list[list[Any]]


@attrs.define
class Sketch:
    """A split's sketch (see the module docstring); ``irregular`` is why there is none."""

    summary: Summary = attrs.field(factory=Summary)
    irregular: str = ""
    groups: list[Group] = attrs.field(factory=list)
    file_events: list[list[Any]] = attrs.field(factory=list)
    """[position, type, digest, source file, source position] of each file event."""

    def as_json(self) -> dict[str, Any]:
        """The sketch as JSON (it travels as one string column)."""
        return attrs.asdict(self)

    @classmethod
    def from_json(cls, record: dict[str, Any]) -> Sketch:
        """The inverse of :meth:`as_json`."""
        return cls(
            Summary(**record["summary"]),
            record["irregular"],
            [Group(**g) for g in record["groups"]],
            record["file_events"],
        )


def _walk(data: bytes, p: int, stop: int, offsets: Offsets, crcs: Offsets) -> int:
    """Append the offset and computed CRC32 of each event from ``p`` on while
    ``p < stop``; where it stopped: at ``stop`` or past, or at an event whose header or
    body does not fit in ``data``, or whose size is impossible (the caller tells which).
    """
    crc, n = zlib.crc32, len(data)
    append, append_crc = offsets.append, crcs.append
    try:
        while p < stop:
            q = p + _U32(data, p + _SIZE)[0]
            if q > n or q < p + _MIN_SIZE:
                return p
            append_crc(crc(data[p : q - CHECKSUM_LEN]))  # a copy: faster than a view here
            append(p)
            p = q
    except struct.error:
        pass  # the header does not fit
    return p


class _Bytes:
    """A buffer with an unaligned integer view per width (a stride of one byte), so
    gathering little-endian integers at arbitrary offsets is one gather, and no copy.
    """

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.a = np.frombuffer(data, np.uint8)
        self.views = {
            width: np.ndarray(
                shape=(max(0, len(data) - width + 1),),
                dtype=f"<u{width}",
                buffer=data,
                strides=(1,),
            )
            for width in (2, 4, 8)
        }

    def uint(self, at: np.ndarray, width: int) -> np.ndarray:
        """The ``width``-byte little-endian unsigned integer at each offset (inside)."""
        values: np.ndarray = self.views[width][at]
        return values

    def head(self, at: np.ndarray) -> np.ndarray:
        """The 8 bytes at each offset as a little-endian uint64, zeros past the end (as
        a statement's head read there is shorter: no keyword matches either way).
        """
        inside = at <= len(self.data) - 8
        out = np.zeros(len(at), np.uint64)
        out[inside] = self.views[8][at[inside]]
        for i in np.flatnonzero(~inside).tolist():
            out[i] = int.from_bytes(self.data[at[i] : at[i] + 8].ljust(8, b"\0"), "little")
        return out


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser, element-wise (uint64 arithmetic wraps)."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    mixed: np.ndarray = x ^ (x >> np.uint64(31))
    return mixed


def fingerprints(
    pos: np.ndarray, sid: np.ndarray, gno: np.ndarray, events: np.ndarray, digest: np.ndarray
) -> np.ndarray:
    """The 64-bit hash of each transaction: its position (a relay log: its source
    position), SID (two little-endian uint64 halves per row), GNO, event count and digest.
    """
    h = _mix(pos.astype(np.uint64) ^ np.uint64(0x5EED))
    for part in (sid[:, 0], sid[:, 1], gno, events, digest):
        h = _mix(h ^ part.astype(np.uint64))
    return h


def folded(hashes: np.ndarray) -> tuple[int, int, int]:
    """(count, xor, total) of transaction hashes: the two fingerprints add up over any
    partition, so splits and parts of splits combine (total: the high halves' sum mod 2**64).
    """
    return (
        len(hashes),
        int(np.bitwise_xor.reduce(hashes)),
        int((hashes >> np.uint64(32)).sum()) % _MOD64,
    )


@attrs.define
class _Events:
    """Per-event columns of the events walked (offsets relative to the buffer)."""

    at: np.ndarray
    type: np.ndarray
    server_id: np.ndarray | None
    """Read for relay logs only (as ``flags``)."""
    size: np.ndarray
    log_pos: np.ndarray
    flags: np.ndarray | None
    crc: np.ndarray
    tokens: bytes


def _tokens(b: _Bytes, at: np.ndarray, size: np.ndarray, code: np.ndarray) -> bytes:
    """One letter per event (see the module docstring)."""
    out = np.full(len(at), ord("X"), dtype=np.uint8)
    out[np.isin(code, _FILE_TYPES)] = ord("F")
    out[(code == GTID_LOG_EVENT) & (size >= _GTID_MIN_SIZE)] = ord("G")
    out[code == XID_EVENT] = ord("C")
    out[np.isin(code, _ROW_TYPES)] = ord("R")
    query = np.flatnonzero((code == QUERY_EVENT) & (size >= HEADER_LEN + QUERY_POST_HEADER_LEN))
    if len(query):
        out[query] = _query_tokens(b, at[query], size[query])
    return out.tobytes()


def _query_tokens(b: _Bytes, at: np.ndarray, size: np.ndarray) -> np.ndarray:
    """B, C, M or X for QUERY events, from the head of the statement as the exact
    tracker reads it (:class:`rpl.core.binlog.logfile.TransactionTracker`); a head that
    does not start with a letter (the tracker strips spaces) is X.
    """
    body = at + HEADER_LEN
    db_len = b.a[body + QUERY_AT["db_len"]].astype(np.int64)
    status_len = b.uint(body + QUERY_AT["status_len"], 2).astype(np.int64)
    nul = body + QUERY_POST_HEADER_LEN + status_len + db_len
    laid_out = nul + 1 <= at + size
    nul = np.where(laid_out, nul, at)
    laid_out &= b.a[nul] == 0
    # ORing 0x20 into every byte folds ASCII case; other bytes may fold onto a keyword's
    # space only from NUL, which makes the statement X (irregular): never a wrong letter
    head = b.head(np.where(laid_out, nul + 1, at)) | np.uint64(_FOLD_CASE)
    out = np.full(len(at), ord("M"), dtype=np.uint8)
    for word, code in _KEYWORDS:
        mask = np.uint64((1 << (8 * len(word))) - 1)
        out[(head & mask) == np.uint64(int.from_bytes(word.lower(), "little"))] = code
    first = head & np.uint64(0xFF)
    letter = (first >= np.uint64(ord("a"))) & (first <= np.uint64(ord("z")))
    out[~laid_out | ~letter] = ord("X")
    return out


class SketchScanner(SplitScanner):
    """The exact scanner with a vectorized event loop (see the module docstring)."""

    def __init__(self, split: Split) -> None:
        super().__init__(split)
        self.sketch = Sketch()
        self.states: list[tuple[int, str | None, int | None]] = []
        self.bytes = _Bytes(b"")
        self.trx_pos = np.zeros(0, np.int64)
        self.trx_hash = np.zeros(0, np.uint64)

    def sketch_split(self) -> Sketch:
        """Scan the split; its sketch, or one that says why it is irregular."""
        try:
            self.run()
            if self.rows.findings:
                raise Irregular(self.rows.findings[0].detail)
        except (Irregular, Damage) as exc:
            return Sketch(
                irregular=f"{self.log.node} {self.log.name} split {self.split.number}: {exc}"
            )
        self.sketch.summary = self.rows.summary
        ev = self.rows.events
        self.sketch.file_events = [
            list(r)
            for r in zip(
                ev["pos"],
                ev["type"],
                ev["digest"],
                ev["source_file"],
                ev["source_pos"],
                strict=True,
            )
        ]
        return self.sketch

    # ------------------------------------------------------------------ the walk
    def _scan(self, position: int) -> int | None:
        if not self.log.checksum:
            raise Irregular("events without CRC32")
        buffer, end = self.buffer, min(self.split.end, self.log.size)
        offsets, crcs = array("q"), array("q")
        p = 0
        while buffer.base + p < end:
            p = _walk(buffer.data, p, end - buffer.base, offsets, crcs)
            if buffer.base + p < end:
                self._make_room(p)
        owned = len(offsets)
        self._finish_last(offsets, crcs, p)
        events = self._columns(offsets, crcs)
        self._owned_events(events, owned)
        self._transactions(events, owned)
        self._boundary_state()
        return buffer.base + p

    def _size_at(self, p: int) -> int:
        data = self.buffer.data
        return _U32(data, p + _SIZE)[0] if p + HEADER_LEN <= len(data) else 0

    def _make_room(self, p: int) -> None:
        """Read on until the event at ``p`` is in the buffer (Irregular: the file ends
        first, or the event's size is impossible).
        """
        while True:
            size = self._size_at(p)
            if p + HEADER_LEN <= len(self.buffer.data) and size < _MIN_SIZE:
                raise Irregular(f"event size {size} at {self.buffer.base + p}")
            if p + max(HEADER_LEN, size) <= len(self.buffer.data):
                return
            if not self.buffer.extend(self.buffer.base + p + max(HEADER_LEN, size)):
                raise Irregular(f"the file ends inside the event at {self.buffer.base + p}")

    def _columns(self, offsets: Offsets, crcs: Offsets) -> _Events:
        data = self.buffer.data
        b = self.bytes = _Bytes(data)
        at = np.frombuffer(offsets, dtype=np.int64)
        size = b.uint(at + _SIZE, 4).astype(np.int64)
        code = b.a[at + _TYPE]
        if len(at) and size.max() > MAX_EVENT_SIZE:
            raise Irregular("an impossible event size")
        stored = b.uint(at + size - CHECKSUM_LEN, 4).astype(np.int64)
        for p in at[np.frombuffer(crcs, dtype=np.int64) != stored].tolist():
            if data[p + _TYPE] != FORMAT_DESCRIPTION_EVENT or not verify_checksum(
                memoryview(data)[p : p + self._size_at(p)]
            ):
                raise Irregular(f"CRC32 mismatch at {self.buffer.base + p}")
        relay = self.relay or None  # a binlog's sketch needs no server_id or flags
        return _Events(
            at,
            code,
            relay and b.uint(at + HEADER_AT["server_id"], 4),
            size,
            b.uint(at + HEADER_AT["log_pos"], 4).astype(np.int64),
            relay and b.uint(at + HEADER_AT["flags"], 2),
            stored,
            _tokens(b, at, size, code),
        )

    def _token_of(self, p: int) -> bytes:
        """The letter of the one event at ``p`` (in the buffer)."""
        size = self._size_at(p)
        b = _Bytes(self.buffer.data[p : p + size + _HEAD])
        return _tokens(b, np.zeros(1, np.int64), np.array([size], np.int64), b.a[_TYPE : _TYPE + 1])

    def _finish_last(self, offsets: Offsets, crcs: Offsets, p: int) -> None:
        """Walk past the split's end, one event at a time, until the last owned
        transaction ends, as the exact scanner does.
        """
        data = self.buffer.data
        last = len(offsets) - 1
        while last >= 0 and data[offsets[last] + _TYPE] != GTID_LOG_EVENT:
            last -= 1
        if last < 0:
            return
        tokens = b"".join(self._token_of(at) for at in offsets[last:])
        while _OPEN.fullmatch(tokens):
            if self.buffer.base + p >= self.log.size:
                raise Irregular("the file ends inside a transaction")
            self._make_room(p)
            tokens += self._token_of(p)
            p = _walk(self.buffer.data, p, p + 1, offsets, crcs)

    # ------------------------------------------------------------------ per event
    def _owned_events(self, ev: _Events, owned: int) -> None:
        base, summary = self.buffer.base, self.rows.summary
        if owned == 0:
            return
        summary.events += owned
        summary.last_type = int(ev.type[owned - 1])
        if not self.relay:
            shift = ev.log_pos[:owned] - (base + ev.at[:owned] + ev.size[:owned])
            if (shift != shift[0]).any():
                raise Irregular("end log_pos shifts")
            summary.first_shift = self.shift = int(shift[0])
        file_event = np.isin(ev.type[:owned], _FILE_TYPES)
        if self.relay:
            assert ev.flags is not None
            artificial = ((ev.flags[:owned] & LOG_EVENT_ARTIFICIAL_F) != 0) | (
                ev.log_pos[:owned] == 0
            )
            if (artificial & ~file_event).any():
                raise Irregular("an artificial event that is not a file event")
            self._relay_walk(ev, owned, np.flatnonzero(file_event))
        else:
            for i in np.flatnonzero(file_event).tolist():
                self._special(ev, i, None)

    def _special(self, ev: _Events, i: int, source: tuple[str | None, int] | None) -> None:
        at = int(ev.at[i])
        self._event_row(
            self.buffer.base + at,
            unpack_header(self.buffer.data, at),
            self.buffer.data,
            at,
            int(ev.crc[i]),
            source,
        )

    def _relay_walk(self, ev: _Events, owned: int, specials: np.ndarray) -> None:
        """Source coordinates: ordinary source events checked contiguous at once, the
        special ones (file events, artificial ROTATEs) through the exact scanner's code.
        """
        base = self.buffer.base
        source_pos = ev.log_pos - ev.size
        chained = np.ones(owned, dtype=bool)
        previous_end = ev.log_pos[: owned - 1]
        chained[1:] = (source_pos[1:owned] == previous_end) | (
            (source_pos[1:owned] > previous_end) & (ev.type[1:owned] == GTID_LOG_EVENT)
        )
        start = 0
        for i in [*specials.tolist(), owned]:
            if start < i:
                self._ordinary(start, i, int(source_pos[start]), ev, chained)
            if i == owned:
                break
            at = int(ev.at[i])
            header = unpack_header(self.buffer.data, at)
            own = header[2] == self.log.server_id
            artificial = header[5] & LOG_EVENT_ARTIFICIAL_F or header[4] == 0
            if (
                not own
                and not artificial
                and self.expected is not None
                and header[4] - header[3] != self.expected
            ):
                raise Irregular("source positions skip or repeat")
            source = self._relay_event(base + at, header, self.buffer.data, at)
            self._special(ev, i, source)
            self.states.append((i, self.source_file, self.source_server_id))
            start = i + 1
        if self.rows.findings:
            raise Irregular(self.rows.findings[0].detail)

    def _ordinary(
        self, start: int, stop: int, first: int, ev: _Events, chained: np.ndarray
    ) -> None:
        skip = first > self.expected if self.expected is not None else False
        if (
            self.expected is not None
            and first != self.expected
            and not (skip and ev.type[start] == GTID_LOG_EVENT)
        ):
            raise Irregular("source positions skip or repeat")
        if not chained[start + 1 : stop].all():
            raise Irregular("source positions skip or repeat")
        self._check_contiguous(self.buffer.base + int(ev.at[start]), first, int(ev.type[start]))
        self.expected = int(ev.log_pos[stop - 1])

    # ------------------------------------------------------------------ transactions
    def _transactions(self, ev: _Events, owned: int) -> None:
        tokens = ev.tokens
        begin = 0 if self.split.start == 0 else tokens.find(b"G", 0, owned)
        if b"X" in tokens[: begin if begin >= 0 else owned]:
            raise Irregular("an event of an unexpected type or layout")
        if begin < 0:
            return  # no transaction starts here: the events belong to the previous one
        if not _GRAMMAR.fullmatch(tokens, begin):
            raise Irregular(
                "a transaction that is not GTID BEGIN ... XID/COMMIT (statements or rows "
                "events between) or GTID + one statement"
            )
        letters = np.frombuffer(tokens, np.uint8)
        starts = np.flatnonzero(letters[begin:] == ord("G")) + begin
        closers = np.flatnonzero(letters == ord("C"))
        ddl = letters[np.minimum(starts + 1, len(letters) - 1)] == ord("M")
        ends = np.where(
            ddl,
            starts + 1,
            closers[np.searchsorted(closers, starts)] if len(closers) else starts + 1,
        )
        self._sketch(ev, starts, ends)

    def _digests(self, ev: _Events, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
        """Each transaction's digest: its events' CRCs folded in order (as
        :func:`rpl.core.validate.scan.fold`), vectorized over the short ones.
        """
        crc = ev.crc.astype(np.uint64)
        acc: np.ndarray = crc[starts].copy()
        length = ends - starts + 1
        short = np.flatnonzero(length <= _SHORT_FOLD)
        for k in range(1, int(length[short].max()) if len(short) else 0):
            rows = short[length[short] > k]
            acc[rows] = ((acc[rows] * _FOLD64) ^ crc[starts[rows] + k]) & _MASK62
        for row in np.flatnonzero(length > _SHORT_FOLD).tolist():
            value = int(acc[row])
            for i in range(int(starts[row]) + 1, int(ends[row]) + 1):
                value = ((value * FOLD) ^ int(crc[i])) & int(_MASK62)
            acc[row] = value
        return acc

    def _sketch(self, ev: _Events, starts: np.ndarray, ends: np.ndarray) -> None:
        b = self.bytes
        gtid_at = ev.at[starts]
        sid_at = gtid_at + HEADER_LEN + GTID_AT["sid"]
        sid = np.stack([b.uint(sid_at, 8), b.uint(sid_at + 8, 8)], axis=1)
        gno = b.uint(gtid_at + HEADER_LEN + GTID_AT["gno"], 8).view(np.int64)
        events = (ends - starts + 1).astype(np.uint64)
        digest = self._digests(ev, starts, ends)
        if self.relay:
            pos = (ev.log_pos[starts] - ev.size[starts]).astype(np.int64)
        else:
            pos = (self.buffer.base + gtid_at).astype(np.int64)
        h = fingerprints(pos, sid, gno, events, digest)
        self.trx_pos, self.trx_hash = pos, h
        names = self._sids(sid)
        keys = self._group_keys(starts)
        if not len(keys):
            return  # no transaction starts in this split (a server that never committed)
        cuts = np.flatnonzero(np.diff(keys)) + 1
        for lo, hi in zip([0, *cuts.tolist()], [*cuts.tolist(), len(keys)], strict=True):
            self.sketch.groups.append(self._group(keys, lo, hi, pos, h, sid, gno, names))

    def _sids(self, sid: np.ndarray) -> dict[tuple[int, int], str]:
        unique = sid[:1] if (sid == sid[:1]).all() else np.unique(sid, axis=0)
        return {
            (int(lo), int(hi)): str(uuid.UUID(bytes=struct.pack("<QQ", lo, hi)))
            for lo, hi in unique.tolist()
        }

    def _group_keys(self, starts: np.ndarray) -> np.ndarray:
        """Per transaction, the index of the relay state it starts in (0: before any)."""
        if not self.relay:
            return np.zeros(len(starts), np.int64)
        at = np.array([i for i, _, _ in self.states], dtype=np.int64)
        return np.searchsorted(at, starts, side="right")

    def _group(
        self,
        keys: np.ndarray,
        lo: int,
        hi: int,
        pos: np.ndarray,
        h: np.ndarray,
        sid: np.ndarray,
        gno: np.ndarray,
        names: dict[tuple[int, int], str],
    ) -> Group:
        if self.relay:
            state = int(keys[lo])
            file, server_id = self.states[state - 1][1:] if state else (None, None)
        else:
            file, server_id = self.log.name, None
        return Group(
            file,
            server_id,
            *folded(h[lo:hi]),
            int(pos[lo]),
            int(pos[hi - 1]),
            _runs(sid[lo:hi], gno[lo:hi], names),
        )

    def restricted(self, lo: tuple[int, int], hi: tuple[int, int]) -> tuple[int, int, int]:
        """(count, xor, total) of this binlog split's transactions whose (file ordinal,
        position) lies in ``[lo, hi]`` (after :meth:`sketch_split`).
        """
        assert self.log.kind == BINLOG
        ordinal = self.log.ordinal
        low = lo[1] if lo[0] == ordinal else (-1 if lo[0] < ordinal else 1 << 62)
        high = hi[1] if hi[0] == ordinal else (1 << 62 if hi[0] > ordinal else -1)
        return folded(self.trx_hash[(self.trx_pos >= low) & (self.trx_pos <= high)])


def _runs(sid: np.ndarray, gno: np.ndarray, names: dict[tuple[int, int], str]) -> list[list[Any]]:
    """[sid, first gno, last gno] of each run of consecutive GNOs of one SID."""
    if not len(gno):
        return []
    same = (sid[1:] == sid[:-1]).all(axis=1) & (gno[1:] == gno[:-1] + 1)
    cuts = np.flatnonzero(~same) + 1
    firsts = np.concatenate(([0], cuts))
    lasts = np.concatenate((cuts - 1, [len(gno) - 1]))
    return [
        [names[(int(sid[f, 0]), int(sid[f, 1]))], int(gno[f]), int(gno[t])]
        for f, t in zip(firsts.tolist(), lasts.tolist(), strict=True)
    ]


def sketch(split: Split) -> Sketch:
    """The sketch of one split (see the module docstring)."""
    return SketchScanner(split).sketch_split()


def restricted(split: Split, lo: tuple[int, int], hi: tuple[int, int]) -> tuple[int, int, int]:
    """(count, xor, total) of one binlog split's complete transactions in ``[lo, hi]``."""
    scanner = SketchScanner(split)
    made = scanner.sketch_split()
    if made.irregular:
        raise Irregular(made.irregular)
    return scanner.restricted(lo, hi)
