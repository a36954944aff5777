"""One scan task of ``rpl validate``: the events of one split of one log file, checked in
file order, turned into rows.

Written by hand (no library reads MySQL binlogs split by split). Every byte is read with
the project's own codec (:mod:`rpl.core.binlog.events`: the header, GTID and QUERY field
readers, full decoding of the rare event types; :mod:`rpl.core.binlog.logfile`: boundary
search, transaction boundaries), so the validator and the server cannot disagree on a
byte. The hot loop works on one buffer per split and makes no object per event.

Ownership, so that any split size gives the same rows:

* a task owns the events that *start* in its split. At offset 0 the file must begin with
  the magic and a FORMAT_DESCRIPTION; elsewhere the task starts at the first offset where
  an intact event starts (:func:`rpl.core.binlog.logfile.intact_at`: a known type and a
  matching CRC32). Its summary says where it started and where the next task must start
  (the first event boundary at or after its end); the driver checks that neighbours agree
  and drops rows a false start produced;
* a task owns the transactions whose GTID event it owns and reads on past its end only
  to finish them, so every transaction is checked whole by exactly one task. Events
  before a task's first GTID event belong to the previous task's transaction.

What a task checks on its own: each event's size, that it lies inside the file, its
CRC32, that the bodies it reads parse; in a binlog, that the end ``log_pos`` is position +
size (reported once where the difference changes: a missing or extra event shifts all
that follow); transactions (GTID, then BEGIN ... XID/COMMIT, or one DDL; the rows events
of ``binlog_format=ROW`` and their TABLE_MAPs only between BEGIN and XID); in a relay log,
that source positions are contiguous within what one dump sent. After damage it finds the
next intact event (the damaged event's declared end first, then a search) and goes on.

Rows: one per transaction (its GTID, where it is, its state, and a digest that folds the
digest of every event, so two copies compare equal only if every event is byte-identical),
one per event outside transactions (FORMAT_DESCRIPTION, PREVIOUS_GTIDS, ROTATE, STOP), the
findings, the split's summary, and with ``every_event`` one per event (the events
DataFrame). A relay event's source file, when the ROTATE naming it is in an earlier split,
is left empty; the driver fills it in from the summaries.
"""

from __future__ import annotations

import uuid
import zlib
from collections.abc import Iterable
from typing import Any, Final

import attrs

from rpl.core.binlog.events import (
    BINLOG_MAGIC,
    CHECKSUM_LEN,
    DELETE_ROWS_EVENT,
    FORMAT_DESCRIPTION_EVENT,
    GTID_LOG_EVENT,
    HEADER_LEN,
    LOG_EVENT_ARTIFICIAL_F,
    MAX_EVENT_SIZE,
    PREVIOUS_GTIDS_LOG_EVENT,
    QUERY_EVENT,
    ROTATE_EVENT,
    ROWS_QUERY_LOG_EVENT,
    STOP_EVENT,
    TABLE_MAP_EVENT,
    UPDATE_ROWS_EVENT,
    WRITE_ROWS_EVENT,
    XID_EVENT,
    EventError,
    EventHeader,
    PreviousGtidsEvent,
    QueryEvent,
    RotateEvent,
    RowsEvent,
    TableMapEvent,
    decode_with_header,
    gtid_fields,
    query_layout,
    unpack_header,
    verify_checksum,
)
from rpl.core.binlog.logfile import ChunkReader, TransactionTracker, intact_at
from rpl.core.validate.findings import NOTICE, VIOLATION, Finding
from rpl.core.validate.history import rows_written, written_rows
from rpl.core.validate.layout import RELAY, Split

EVENT_COLUMNS: Final = (
    "pos",
    "size",
    "type",
    "server_id",
    "log_pos",
    "gtid",
    "xid",
    "crc_ok",
    "digest",
    "source_file",
    "source_pos",
)
"""An event row, besides node, kind and file: position, size, type code, server_id, end
log_pos, GTID (GTID events), xid (XID events), CRC32 valid, digest of the bytes (the CRC32
of the event without its checksum), and for a relay event that came from the source its
source file and position (the FORMAT_DESCRIPTION excepted: the dump thread rewrites it)."""
OVERSHOOT: Final = 1 << 20
"""Read past a split's end at once (most transactions that cross it end within this)."""
_FILE_TYPES: Final = frozenset(
    (FORMAT_DESCRIPTION_EVENT, PREVIOUS_GTIDS_LOG_EVENT, ROTATE_EVENT, STOP_EVENT)
)
_ROW_TYPES: Final = frozenset(
    (TABLE_MAP_EVENT, WRITE_ROWS_EVENT, UPDATE_ROWS_EVENT, DELETE_ROWS_EVENT, ROWS_QUERY_LOG_EVENT)
)
"""The events of ``binlog_format=ROW``: only inside BEGIN ... XID."""
_WRITES: Final = (WRITE_ROWS_EVENT, UPDATE_ROWS_EVENT)
_DIGEST_MASK: Final = (1 << 62) - 1
FOLD: Final = 0x100000001B3
_CRC_AT: Final = CHECKSUM_LEN


def fold(accumulated: int, digest: int) -> int:
    """A transaction's digest with one more event's digest folded in (order matters)."""
    return ((accumulated * FOLD) ^ digest) & _DIGEST_MASK


@attrs.define
class ScannedTransaction:
    """A GTID group as one task saw it; ``state``: complete, partial (the file ends inside
    it), interrupted (another GTID came first) or damaged.
    """

    gtid: str
    pos: int
    end: int = 0
    state: str = "open"
    events: int = 1
    digest: int = 0
    source_file: str | None = None
    source_server_id: int | None = None
    source_pos: int = -1
    source_end: int = -1
    writes: list[tuple[str, str, str]] = attrs.field(factory=list)
    """(table, key, value) of its rows, read so far (with ``extract_writes``)."""
    table_maps: dict[int, TableMapEvent] = attrs.field(factory=dict)
    """Its TABLE_MAPs by table_id (with ``extract_writes``)."""


@attrs.define
class Summary:
    """What the driver needs to stitch a split to its neighbours."""

    first: int | None = None
    """Offset of the first owned event (None: no intact event starts in the split)."""
    next: int | None = None
    """Where the next split's first event must start (None: lost in damage)."""
    last_type: int = -1
    last_rotate: str = ""
    first_shift: int | None = None
    last_shift: int | None = None
    source_file: str | None = None
    source_server_id: int | None = None
    source_expected: int | None = None
    first_source_pos: int | None = None
    first_source_type: int = -1
    marker_before_first_source: bool = False
    previous_gtids: str | None = None
    events: int = 0

    def as_json(self) -> dict[str, Any]:
        """The summary as JSON (it travels as one string column)."""
        return attrs.asdict(self)


@attrs.define
class SplitRows:
    """Everything one task produces."""

    split: Split
    events: dict[str, list[Any]] = attrs.field(factory=lambda: {name: [] for name in EVENT_COLUMNS})
    transactions: list[ScannedTransaction] = attrs.field(factory=list)
    findings: list[Finding] = attrs.field(factory=list)
    writes: list[tuple[str, str, str, str]] = attrs.field(factory=list)
    """(gtid, table, key, value) of the rows complete transactions wrote."""
    summary: Summary = attrs.field(factory=Summary)


class Damage(Exception):
    """The event at ``position`` cannot be read: ``reason``; ``tail`` when the file ends
    inside it (nothing after it to resynchronize on).
    """

    def __init__(self, position: int, reason: str, tail: bool = False) -> None:
        super().__init__(reason)
        self.position, self.reason, self.tail = position, reason, tail


class _Buffer:
    """The split's bytes (and what follows, as far as asked), read in large pieces."""

    def __init__(self, f: Any, start: int, end: int, size: int) -> None:
        self.f, self.size, self.base = f, size, start
        f.seek(start)
        self.data = f.read(min(size, end + OVERSHOOT) - start)

    def extend(self, upto: int) -> bool:
        """Make ``[base, upto)`` present; False if the file ends before ``upto``."""
        have = self.base + len(self.data)
        if upto <= have:
            return True
        if have >= self.size:
            return False
        self.f.seek(have)
        self.data += self.f.read(max(upto - have, OVERSHOOT))
        return upto <= self.base + len(self.data)


class SplitScanner:
    """Scans one split (see the module docstring); :meth:`run` returns its rows."""

    def __init__(
        self, split: Split, *, extract_writes: bool = False, every_event: bool = False
    ) -> None:
        self.split = split
        self.log = split.file
        self.rows = SplitRows(split)
        self.extract_writes = extract_writes
        self.every_event = every_event
        self.relay = self.log.kind == RELAY
        self.tracker = TransactionTracker()
        self.known_state = split.start == 0
        self.current: ScannedTransaction | None = None
        self.shift: int | None = None
        self.source_file: str | None = None
        self.source_server_id: int | None = None
        self.expected: int | None = None
        self.marker_seen = False
        self.sids: dict[bytes, str] = {}
        self.reader: ChunkReader
        self.buffer: _Buffer

    # ------------------------------------------------------------------ findings
    def finding(
        self,
        check: str,
        position: int,
        detail: str,
        *,
        severity: str = VIOLATION,
        gtid: str = "",
        source_position: int = -1,
    ) -> None:
        """Record a finding at ``position`` of this file."""
        source_file = (self.source_file or "") if source_position >= 0 else ""
        self.rows.findings.append(
            Finding(
                check,
                self.log.node,
                self.log.kind,
                self.log.name,
                position,
                detail,
                severity,
                gtid,
                source_file,
                source_position,
            )
        )

    # ------------------------------------------------------------------ driving
    def run(self) -> SplitRows:
        """Scan the split; the rows."""
        with open(self.log.path, "rb", buffering=0) as f:
            self.reader = ChunkReader(f, None)
            position = self._start()
            self.rows.summary.first = position
            if position is not None:
                with open(self.log.path, "rb") as g:
                    self.buffer = _Buffer(g, position, self.split.end, self.log.size)
                    self.rows.summary.next = self._scan(position)
        return self.rows

    def _boundary_state(self) -> None:
        """What the next split inherits: the state after the last owned event."""
        summary = self.rows.summary
        summary.last_shift = self.shift
        summary.source_file = self.source_file
        summary.source_server_id = self.source_server_id
        summary.source_expected = self.expected

    def _intact(self, offset: int) -> bool:
        return intact_at(self.reader, self.log.path, offset, self.log.size, self.log.checksum)

    def _start(self) -> int | None:
        split, size = self.split, self.log.size
        if split.start == 0:
            magic = self.reader.get(0, len(BINLOG_MAGIC))
            if magic != BINLOG_MAGIC:
                self.finding(
                    "structure",
                    0,
                    "not a binlog file: bad magic number"
                    if len(magic) == len(BINLOG_MAGIC)
                    else "the file ends inside the magic number",
                )
                return self._resync(0)
            return len(BINLOG_MAGIC)
        for offset in range(split.start, min(split.end, size)):
            if self._intact(offset):
                return offset
        return None

    def _resync(self, position: int) -> int | None:
        """The next intact event after the damage at ``position`` (None: none)."""
        for offset in range(position + 1, self.log.size):
            if self._intact(offset):
                return offset
        return None

    def _scan(self, position: int) -> int | None:
        """Scan from ``position``; the first event boundary at or after the split's end
        (None: lost in damage). Past the end only an owned transaction is finished.
        """
        end, size = self.split.end, self.log.size
        boundary: int | None = None
        while position < size:
            owned = position < end
            if not owned:
                if boundary is None:
                    boundary = position
                    self._boundary_state()
                if self.current is None or self.current.state != "open":
                    return boundary
            try:
                position = self._event(position, owned)
            except Damage as damage:
                if not owned:
                    return boundary  # the next task reports it
                found = self._damaged(damage)
                if found is None:
                    return None
                position = found
        if boundary is None:
            self._boundary_state()
        self._file_end()
        return position if boundary is None else boundary

    def _damaged(self, damage: Damage) -> int | None:
        self._lose_transaction()
        if damage.tail:
            last_file = self.log.next_name is None
            self.finding(
                "structure",
                damage.position,
                damage.reason
                + (
                    " (a crash cut the last write short; recovery truncates it at the next start)"
                    if last_file
                    else ""
                ),
                severity=NOTICE if last_file else VIOLATION,
            )
            return None
        found = self._resync(damage.position)
        skipped = (
            "nothing intact after it"
            if found is None
            else f"{found - damage.position} bytes skipped to the next intact event at {found}"
        )
        self.finding("structure", damage.position, f"{damage.reason}; {skipped}")
        return found

    def _lose_transaction(self) -> None:
        if self.current is not None and self.current.state == "open":
            self.current.state = "damaged"
            self.rows.transactions.append(self.current)
        self.current = None
        self.known_state = False
        self.tracker = TransactionTracker()

    # ------------------------------------------------------------------ one event
    def _event(self, position: int, owned: bool) -> int:
        """Check and record the event at ``position``; the next event's position."""
        buffer = self.buffer
        at = position - buffer.base
        if at + HEADER_LEN > len(buffer.data) and not buffer.extend(position + HEADER_LEN):
            raise Damage(position, "the file ends inside an event header", tail=True)
        header = unpack_header(buffer.data, at)
        code, size, log_pos = header[1], header[3], header[4]
        has_crc = self.log.checksum or code == FORMAT_DESCRIPTION_EVENT
        if not HEADER_LEN + (CHECKSUM_LEN if has_crc else 0) <= size <= MAX_EVENT_SIZE:
            raise Damage(position, f"impossible event size {size}")
        if at + size > len(buffer.data) and not buffer.extend(position + size):
            if self._intact(position + 1):
                raise Damage(position, f"event size {size} runs past the end of the file")
            raise Damage(
                position,
                f"the file ends inside an event of {size} bytes "
                f"({self.log.size - position} present)",
                tail=True,
            )
        data = buffer.data
        digest, crc_ok = self._digest(data, at, size, code, has_crc)
        if not crc_ok:
            return self._bad_crc(position, header, owned)
        if owned:
            self.rows.summary.events += 1
            self.rows.summary.last_type = code
            if not self.relay:
                self._check_log_pos(position, size, log_pos)
        source = self._relay_event(position, header, data, at) if self.relay and owned else None
        if code == GTID_LOG_EVENT:
            self._gtid(position, header, data, at, owned, digest)
        elif self.known_state:
            self._in_transaction(position, header, data, at, owned, digest)
        if owned and (self.every_event or code in _FILE_TYPES):
            self._event_row(position, header, data, at, digest, source)
        return position + size

    def _digest(
        self, data: bytes, at: int, size: int, code: int, has_crc: bool
    ) -> tuple[int, bool]:
        if not has_crc:
            return zlib.crc32(memoryview(data)[at : at + size]), True
        stored = int.from_bytes(data[at + size - _CRC_AT : at + size], "little")
        if code == FORMAT_DESCRIPTION_EVENT:
            return stored, verify_checksum(memoryview(data)[at : at + size])
        return stored, zlib.crc32(memoryview(data)[at : at + size - _CRC_AT]) == stored

    def _bad_crc(self, position: int, header: tuple[int, ...], owned: bool) -> int:
        code, size = header[1], header[3]
        reason = f"CRC32 mismatch in an event of type {code}, {size} bytes"
        if not owned or not self._intact(position + size):
            raise Damage(position, reason)
        if self.every_event:
            self._event_row(position, header, b"", 0, 0, None, crc_ok=False)
        self.finding("structure", position, reason)
        self._lose_transaction()
        return position + size

    def _decode(self, position: int, header: tuple[int, ...], data: bytes, at: int) -> Any:
        """The event fully decoded (the rare types, and QUERY for histories)."""
        try:
            return decode_with_header(
                EventHeader(*header), data[at : at + header[3]], checksum=self.log.checksum
            )
        except EventError as exc:
            raise Damage(position, f"{exc.reason} (event of type {header[1]})") from exc

    def _event_row(
        self,
        position: int,
        header: tuple[int, ...],
        data: bytes,
        at: int,
        digest: int,
        source: tuple[str | None, int] | None,
        *,
        crc_ok: bool = True,
    ) -> None:
        columns = self.rows.events
        code = header[1]
        gtid = xid = None
        if crc_ok and code == GTID_LOG_EVENT:
            gtid = self._gtid_text(data, at, header[3])
        elif crc_ok and code == XID_EVENT:
            xid = int.from_bytes(data[at + HEADER_LEN : at + HEADER_LEN + 8], "little")
        for name, value in (
            ("pos", position),
            ("size", header[3]),
            ("type", code),
            ("server_id", header[2]),
            ("log_pos", header[4]),
            ("gtid", gtid),
            ("xid", xid),
            ("crc_ok", crc_ok),
            ("digest", digest),
            ("source_file", source[0] if source else None),
            ("source_pos", source[1] if source else None),
        ):
            columns[name].append(value)
        if code in _FILE_TYPES and crc_ok:
            self._file_event(position, header, data, at)

    def _file_event(self, position: int, header: tuple[int, ...], data: bytes, at: int) -> None:
        summary = self.rows.summary
        event = self._decode(position, header, data, at)
        summary.last_rotate = event.next_file if isinstance(event, RotateEvent) else ""
        if (
            isinstance(event, PreviousGtidsEvent)
            and summary.previous_gtids is None
            and header[2] == self.log.server_id
        ):
            summary.previous_gtids = str(event.gtids)

    def _check_log_pos(self, position: int, size: int, log_pos: int) -> None:
        shift = log_pos - (position + size)
        if self.rows.summary.first_shift is None:
            self.rows.summary.first_shift = shift
        elif shift != self.shift:
            self.finding(
                "structure",
                position,
                f"end log_pos {log_pos} but the event ends at {position + size}: "
                f"from here on events are {abs(shift)} bytes "
                f"{'before' if shift > 0 else 'after'} where their positions put "
                f"them (an event missing, or one too many)",
            )
        self.shift = shift

    # ------------------------------------------------------------------ relay coordinates
    def _relay_event(
        self, position: int, header: tuple[int, ...], data: bytes, at: int
    ) -> tuple[str | None, int] | None:
        """Follow the source coordinates; the event's source file and position (None:
        the relay log's own event, an artificial one, or a FORMAT_DESCRIPTION, which the
        dump thread rewrites).
        """
        code, server_id, size, log_pos, flags = (
            header[1],
            header[2],
            header[3],
            header[4],
            header[5],
        )
        if server_id == self.log.server_id and code in _FILE_TYPES:
            return None
        if flags & LOG_EVENT_ARTIFICIAL_F or log_pos == 0:
            if code == ROTATE_EVENT:
                event = self._decode(position, header, data, at)
                self.source_file, self.expected = event.next_file, event.position
                self.source_server_id = server_id
                self.marker_seen = True
            return None
        source = (self.source_file, log_pos - size)
        self._check_contiguous(position, source[1], code)
        self.expected = log_pos
        if code == ROTATE_EVENT:
            event = self._decode(position, header, data, at)
            self.source_file, self.expected = event.next_file, event.position
            self.source_server_id = server_id
        return None if code == FORMAT_DESCRIPTION_EVENT else source

    def _check_contiguous(self, position: int, source_pos: int, code: int) -> None:
        summary = self.rows.summary
        if summary.first_source_pos is None:
            summary.first_source_pos, summary.first_source_type = source_pos, code
            summary.marker_before_first_source = self.marker_seen
        if self.expected is None or source_pos == self.expected:
            return
        if source_pos > self.expected and code == GTID_LOG_EVENT:
            return  # skipped whole transactions: checked against the source by the job
        what = "missing" if source_pos > self.expected else "received twice"
        first, last = sorted((source_pos, self.expected))
        self.finding(
            "relay_vs_source",
            position,
            f"source events in [{first}, {last}) {what}: this event starts at "
            f"source position {source_pos}, the previous one ended at "
            f"{self.expected}",
            source_position=source_pos,
        )

    # ------------------------------------------------------------------ transactions
    def _gtid_text(self, data: bytes, at: int, size: int) -> str:
        _, sid, gno = gtid_fields(data, at + HEADER_LEN, at + size)
        text = self.sids.get(sid)
        if text is None:
            text = self.sids[sid] = str(uuid.UUID(bytes=sid))
        return f"{text}:{gno}"

    def _gtid(
        self, position: int, header: tuple[int, ...], data: bytes, at: int, owned: bool, digest: int
    ) -> None:
        current = self.current
        if current is not None and current.state == "open":
            self._close(position, "interrupted")
        if not owned:
            return
        try:
            gtid = self._gtid_text(data, at, header[3])
        except EventError as exc:
            raise Damage(position, exc.reason) from exc
        self.current = ScannedTransaction(gtid, position, digest=fold(0, digest))
        if self.relay:
            self.current.source_file = self.source_file
            self.current.source_server_id = self.source_server_id
            self.current.source_pos = header[4] - header[3]
        self.known_state = True
        self.tracker.feed(GTID_LOG_EVENT)

    def _in_transaction(
        self, position: int, header: tuple[int, ...], data: bytes, at: int, owned: bool, digest: int
    ) -> None:
        code, size = header[1], header[3]
        statement: bytes = b""
        if code == QUERY_EVENT:
            try:
                _, _, _, db_at, db_len = query_layout(data, at + HEADER_LEN, at + size)
            except EventError as exc:
                raise Damage(position, exc.reason) from exc
            start = at + HEADER_LEN + db_at + db_len + 1
            statement = data[start : start + 24]
        before = self.tracker.state
        ends = self.tracker.feed(code, statement)
        current = self.current
        if current is None or current.state != "open":
            if owned and (code in _ROW_TYPES or code in (QUERY_EVENT, XID_EVENT)):
                self.finding("transactions", position, f"event of type {code} outside a GTID group")
            return
        if code in _ROW_TYPES and before != "inside":
            self.finding(
                "transactions",
                position,
                f"rows event of type {code} in a GTID group before its BEGIN",
                gtid=current.gtid,
            )
        current.events += 1
        current.digest = fold(current.digest, digest)
        if self.relay and header[4]:
            current.source_end = header[4]
        if self.extract_writes and not self.relay:  # a history is checked on binlogs
            self._writes(current, position, header, data, at)
        if ends and (before != "outside" or code == QUERY_EVENT):
            current.end = position + size
            self._close(current.end, "complete")

    def _writes(
        self,
        current: ScannedTransaction,
        position: int,
        header: tuple[int, ...],
        data: bytes,
        at: int,
    ) -> None:
        """Read what a QUERY or rows event writes (a TABLE_MAP: remember it)."""
        code = header[1]
        if code not in (QUERY_EVENT, TABLE_MAP_EVENT, *_WRITES):
            return
        event = self._decode(position, header, data, at)
        if isinstance(event, QueryEvent):
            current.writes += written_rows([(event.db, event.query)])
        elif isinstance(event, TableMapEvent):
            current.table_maps[event.table_id] = event
        elif isinstance(event, RowsEvent):
            table_map = current.table_maps.get(event.table_id)
            if table_map is None:
                return  # no TABLE_MAP before it in the transaction: nothing to name
            try:
                current.writes += rows_written(table_map, event)
            except EventError as exc:
                raise Damage(position, f"{exc.reason} (event of type {code})") from exc

    def _close(self, end: int, state: str) -> None:
        current = self.current
        if current is None or current.state != "open":
            return
        current.state, current.end = state, current.end or end
        self.rows.transactions.append(current)
        if state == "interrupted":
            self.finding(
                "transactions",
                current.pos,
                f"transaction not finished before the next GTID event at {end}",
                gtid=current.gtid,
            )
        if state == "complete" and self.extract_writes and not self.relay:
            self.rows.writes += [(current.gtid, *row) for row in current.writes]
        current.writes, current.table_maps = [], {}

    def _file_end(self) -> None:
        current = self.current
        if current is None or current.state != "open":
            return
        self._close(self.log.size, "partial")
        if self.log.next_name is None:
            detail = (
                "the file ends inside this transaction (a trailing partial "
                "transaction: recovery truncates it at the next start)"
            )
            severity = NOTICE
        elif self.relay:
            detail = (
                "the relay log file ends inside this transaction (the receiver "
                "stopped in it; the applier discards the partial copy)"
            )
            severity = NOTICE
        else:
            detail = "the file ends inside this transaction, and a newer file follows"
            severity = VIOLATION
        self.finding("transactions", current.pos, detail, severity=severity, gtid=current.gtid)


def scan(split: Split, *, extract_writes: bool = False, every_event: bool = False) -> SplitRows:
    """The rows of one split."""
    return SplitScanner(split, extract_writes=extract_writes, every_event=every_event).run()


def scan_all(
    splits: Iterable[Split], *, extract_writes: bool = False, every_event: bool = False
) -> list[SplitRows]:
    """The rows of every split, in one process (tests and the single-process baseline)."""
    return [scan(split, extract_writes=extract_writes, every_event=every_event) for split in splits]
