"""Binlog files on disk: their names, the index file, and reading events back.

Names: ``<basename>.<number>``, the number zero-padded to 6 digits and growing past
999999 as MySQL's does (up to 2**31 - 1). Files are ordered by that number as a number,
never as a string: ``binlog.1000000`` comes after ``binlog.999999``.

The index (``<basename>.index``) lists the files one per line, in the order they were
created, as MySQL writes them (``./binlog.000001``); every change rewrites it through a
temporary file that is fsynced and renamed over the old one, and then the directory is
fsynced, so after a crash the index is either the old one or the new one. Callers
serialize changes (the binlog writer holds its lock, as MySQL holds LOCK_index).

Reading (:func:`read_events`) checks the magic, reads the FORMAT_DESCRIPTION event at 4 to
learn whether events carry a CRC, and then checks every event: its size, its CRC, that its
``log_pos`` is the offset of the next event, and that its body decodes. A file whose last
event stops short (a crash in the middle of a write) raises :class:`LogTruncated`; any
other damage raises :class:`LogCorrupt`. The file is read in large chunks, not one call
per event. :func:`scan_valid_prefix` turns that into the facts crash recovery needs.
"""

from __future__ import annotations

import contextlib
import itertools
import mmap
import os
import re
import struct
import zlib
from collections.abc import Callable, Collection, Iterable, Iterator
from typing import BinaryIO, Final

import attrs

from rpl.core.binlog.events import (
    ANONYMOUS_GTID_LOG_EVENT,
    BINLOG_CHECKSUM_ALG_CRC32,
    BINLOG_CHECKSUM_ALG_OFF,
    BINLOG_MAGIC,
    CHECKSUM_LEN,
    DELETE_ROWS_EVENT,
    FORMAT_DESCRIPTION_EVENT,
    GTID_LOG_EVENT,
    HEADER_LEN,
    INTVAR_EVENT,
    LOG_EVENT_BINLOG_IN_USE_F,
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
    Event,
    EventError,
    EventHeader,
    FormatDescriptionEvent,
    PreviousGtidsEvent,
    QueryEvent,
    decode_with_header,
    unpack_header,
)
from rpl.core.binlog.gtid import GtidSet

MAX_LOG_UNIQUE_FN_EXT: Final = 0x7FFFFFFF
"""The largest file number MySQL uses."""
XA_PREPARE_LOG_EVENT: Final = 38
READ_CHUNK: Final = 1 << 20
_CRC: Final = struct.Struct("<I")
_U16: Final = struct.Struct("<H")
_STATEMENT_HEAD: Final = 24
"""Enough of a statement to tell BEGIN, COMMIT, ROLLBACK and XA START (after blanks)."""
_MAY_END_INSIDE: Final = b"CcRr \t\r\n"
"""The first bytes of a statement that may end an open transaction (COMMIT, ROLLBACK,
after blanks): any other statement inside one leaves it open (TransactionTracker)."""
RESYNC_WINDOW: Final = 1 << 16
"""How far past a damaged event :func:`intact_event_after` looks for an intact one."""
_LOGGED_TYPES: Final = frozenset(
    (
        QUERY_EVENT,
        STOP_EVENT,
        ROTATE_EVENT,
        INTVAR_EVENT,
        FORMAT_DESCRIPTION_EVENT,
        XID_EVENT,
        GTID_LOG_EVENT,
        ANONYMOUS_GTID_LOG_EVENT,
        PREVIOUS_GTIDS_LOG_EVENT,
        TABLE_MAP_EVENT,
        WRITE_ROWS_EVENT,
        UPDATE_ROWS_EVENT,
        DELETE_ROWS_EVENT,
        ROWS_QUERY_LOG_EVENT,
    )
)
"""The types a log holds: an event of another type is not an event boundary when a
reader looks for one (:func:`intact_at`)."""
_NUMBER: Final = re.compile(r"\.([0-9]+)$")
_FILE_EVENTS: Final = frozenset(
    (FORMAT_DESCRIPTION_EVENT, PREVIOUS_GTIDS_LOG_EVENT, STOP_EVENT, ROTATE_EVENT)
)

StrPath = str | os.PathLike[str]


# -- names ----------------------------------------------------------------------------------


def binlog_file_name(basename: str, number: int) -> str:
    """``basename.000001``: the number with at least 6 digits."""
    if not 1 <= number <= MAX_LOG_UNIQUE_FN_EXT:
        raise ValueError(f"binlog file number {number} is out of range")
    return f"{basename}.{number:06d}"


def file_number(name: str) -> int:
    """The numeric suffix of a binlog file name (a path is fine); ValueError if none."""
    match = _NUMBER.search(os.path.basename(name))
    if match is None:
        raise ValueError(f"{name!r} is not a binlog file name (no numeric suffix)")
    return int(match.group(1))


def sort_key(name: str) -> tuple[int, str]:
    """A key that orders binlog file names by number (then by name)."""
    return file_number(name), name


def sorted_names(names: Iterable[str]) -> list[str]:
    """``names`` in binlog order."""
    return sorted(names, key=sort_key)


# -- index ----------------------------------------------------------------------------------


def _fsync_directory(directory: str) -> None:
    fd = os.open(directory or ".", os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_durably(path: StrPath, data: bytes) -> None:
    """Replace ``path`` by ``data`` atomically: temp file, fsync, rename, fsync the
    directory. On an OSError (a full disk) the temporary file is removed, so a failed
    attempt leaves ``path`` as it was and takes no space.
    """
    path = os.fspath(path)
    temporary = f"{path}.tmp"
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o640)
    try:
        try:
            view, written = memoryview(data), 0
            while written < len(data):
                written += os.write(fd, view[written:])
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    _fsync_directory(os.path.dirname(path))


class BinlogIndex:
    """The ``<basename>.index`` file: the binlog files, oldest first.

    Names go in as base names (``binlog.000001``) and are written as ``./binlog.000001``,
    relative to the index's directory; :meth:`names` gives base names back, in file order.
    The entries are loaded on first use; :meth:`load` reloads them from disk.
    """

    def __init__(self, path: StrPath) -> None:
        self.path = os.fspath(path)
        self._entries: list[str] | None = None

    def load(self) -> list[str]:
        """Read the index from disk (a missing file is an empty index); the base names."""
        try:
            with open(self.path, encoding="utf-8") as f:
                self._entries = [line.strip() for line in f if line.strip()]
        except FileNotFoundError:
            self._entries = []
        return self.names()

    def names(self) -> list[str]:
        """The files' base names, in index order."""
        if self._entries is None:
            self.load()
        assert self._entries is not None
        return [os.path.basename(entry) for entry in self._entries]

    def paths(self) -> list[str]:
        """The files' paths (relative entries resolved against the index's directory)."""
        directory = os.path.dirname(self.path)
        return [os.path.join(directory, name) for name in self.names()]

    def append(self, name: str) -> None:
        """Add the file ``name`` at the end, durably."""
        self.rewrite([*self.names(), name])

    def discard(self, fd: int) -> None:
        """RESET MASTER / RESET SLAVE: close ``fd`` (the open file, -1 for none), delete
        every file the index lists, then empty the index, durably.
        """
        if fd >= 0:
            os.close(fd)
        for path in self.paths():
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
        self.rewrite([])

    def rewrite(self, names: Iterable[str]) -> None:
        """Make the index list exactly ``names``, durably (PURGE, RESET MASTER)."""
        entries = [name if "/" in name else f"./{name}" for name in names]
        write_durably(self.path, "".join(f"{entry}\n" for entry in entries).encode("utf-8"))
        self._entries = entries


# -- reading --------------------------------------------------------------------------------


class LogError(Exception):
    """A binlog file that cannot be read to its end."""

    def __init__(self, path: str, position: int, reason: str) -> None:
        super().__init__(f"{path}: {reason} at position {position}")
        self.path = path
        self.position = position
        self.reason = reason


class LogTruncated(LogError):
    """The file ends inside an event (its header or its body): normal after a crash."""

    def __init__(self, path: str, position: int, reason: str = "file ends inside an event") -> None:
        super().__init__(path, position, reason)


class LogCorrupt(LogError):
    """The event at ``position`` is damaged: bad magic, size, log_pos, CRC or body."""


@attrs.frozen
class LogEntry:
    """One event read from a file, with its position and its exact bytes."""

    position: int
    header: EventHeader
    event: Event
    raw: bytes

    @property
    def end(self) -> int:
        """The offset just after this event."""
        return self.position + len(self.raw)


class ChunkReader:
    """Byte ranges of a file, read ``READ_CHUNK`` bytes (or one big event) at a time;
    ``limit`` makes the file end there.
    """

    def __init__(self, f: BinaryIO, limit: int | None) -> None:
        self._f = f
        self._limit = limit
        self._buf = b""
        self._start = 0  # file offset of _buf[0]
        self._eof = False

    def get(self, position: int, length: int) -> bytes:
        """The bytes ``[position, position + length)``; fewer at the end of the file."""
        if self._limit is not None:
            length = max(0, min(length, self._limit - position))
        offset = position - self._start
        end = self._start + len(self._buf)
        if offset < 0 or position > end:
            self._f.seek(position)
            self._buf, self._start, self._eof, offset, end = b"", position, False, 0, position
        if position + length > end and not self._eof:
            want = max(READ_CHUNK, position + length - end)
            if self._limit is not None:
                want = min(want, self._limit - end)
            data = self._f.read(want)
            self._eof = len(data) < want
            self._buf = self._buf[offset:] + data
            self._start, offset = position, 0
        return self._buf[offset : offset + length]


def _read_header(reader: ChunkReader, path: str, position: int) -> EventHeader | None:
    data = reader.get(position, HEADER_LEN)
    if not data:
        return None
    if len(data) < HEADER_LEN:
        raise LogTruncated(path, position, "file ends inside an event header")
    return EventHeader.unpack(data)


def _read_event(
    reader: ChunkReader,
    path: str,
    position: int,
    header: EventHeader,
    *,
    checksum: bool,
    check_log_pos: bool,
) -> LogEntry:
    has_crc = checksum or header.type_code == FORMAT_DESCRIPTION_EVENT
    size = header.event_size
    if not HEADER_LEN + (CHECKSUM_LEN if has_crc else 0) <= size <= MAX_EVENT_SIZE:
        raise LogCorrupt(path, position, f"impossible event size {size}")
    raw = reader.get(position, size)
    if len(raw) < size:
        raise LogTruncated(
            path, position, f"file ends inside an event of {size} bytes ({len(raw)} present)"
        )
    if check_log_pos and header.log_pos != position + size:
        raise LogCorrupt(
            path, position, f"log_pos {header.log_pos} is not the next event's {position + size}"
        )
    try:
        event = decode_with_header(header, raw, checksum=checksum)
    except EventError as exc:
        raise LogCorrupt(path, position, exc.reason) from exc
    return LogEntry(position, header, event, raw)


def _read_format_description(reader: ChunkReader, path: str, check_log_pos: bool) -> LogEntry:
    magic = reader.get(0, len(BINLOG_MAGIC))
    if magic != BINLOG_MAGIC[: len(magic)]:
        raise LogCorrupt(path, 0, "not a binlog file (bad magic)")
    if len(magic) < len(BINLOG_MAGIC):
        raise LogTruncated(path, 0, "file ends inside the magic number")
    position = len(BINLOG_MAGIC)
    header = _read_header(reader, path, position)
    if header is None:
        raise LogTruncated(path, position, "file ends before the FORMAT_DESCRIPTION event")
    if header.type_code != FORMAT_DESCRIPTION_EVENT:
        raise LogCorrupt(
            path, position, f"first event is of type {header.type_code}, not FORMAT_DESCRIPTION"
        )
    entry = _read_event(reader, path, position, header, checksum=False, check_log_pos=check_log_pos)
    assert isinstance(entry.event, FormatDescriptionEvent)
    if entry.event.checksum_alg not in (BINLOG_CHECKSUM_ALG_OFF, BINLOG_CHECKSUM_ALG_CRC32):
        raise LogCorrupt(path, position, f"unknown checksum algorithm {entry.event.checksum_alg}")
    return entry


def read_events(
    path: StrPath, start: int = 4, *, stop_at: int | None = None, check_log_pos: bool = True
) -> Iterator[LogEntry]:
    """The events of the binlog file ``path`` from offset ``start`` (an event boundary).

    The FORMAT_DESCRIPTION event at 4 is always read (it says whether events carry a CRC)
    and is yielded when ``start`` is 4. ``stop_at`` makes the file end there (the writer's
    durable end): an event running past it raises LogTruncated. ``check_log_pos=False``
    is for relay logs, whose events carry the source's positions.
    """
    name = os.fspath(path)
    if start < len(BINLOG_MAGIC):
        raise ValueError(f"start {start} is before the first event")
    with open(name, "rb", buffering=0) as f:
        reader = ChunkReader(f, stop_at)
        fd = _read_format_description(reader, name, check_log_pos)
        assert isinstance(fd.event, FormatDescriptionEvent)
        checksum = fd.event.checksum_alg == BINLOG_CHECKSUM_ALG_CRC32
        if start == fd.position:
            yield fd
            start = fd.end
        elif start < fd.end:
            raise ValueError(f"start {start} is inside the FORMAT_DESCRIPTION event")
        position = start
        while (header := _read_header(reader, name, position)) is not None:
            entry = _read_event(
                reader, name, position, header, checksum=checksum, check_log_pos=check_log_pos
            )
            yield entry
            position = entry.end


def previous_gtids(path: StrPath, *, check_log_pos: bool = True) -> GtidSet | None:
    """The PREVIOUS_GTIDS of the log file ``path``, or None if it cannot be read."""
    try:
        for entry in read_events(path, check_log_pos=check_log_pos):
            if isinstance(entry.event, PreviousGtidsEvent):
                return entry.event.gtids
    except LogError:
        return None
    return None


# -- crash recovery -------------------------------------------------------------------------


@attrs.frozen
class ValidPrefix:
    """How much of a binlog file is intact.

    ``end``: the offset after the last intact event (0 if even the magic is bad).
    ``transaction_end``: the offset after the last event that is not inside an unfinished
    transaction (truncating there drops a half-written transaction). ``error``: why
    reading stopped before the end of the file, or None. ``in_use``: the FD still has
    LOG_EVENT_BINLOG_IN_USE_F, i.e. the file was not closed properly.
    """

    end: int
    transaction_end: int
    events: int
    in_use: bool
    error: str | None
    truncated: bool


class TransactionTracker:
    """Finds transaction boundaries: GTID .. BEGIN .. XID/COMMIT, or GTID + one DDL.

    TABLE_MAP, the rows events, ROWS_QUERY and INTVAR never end a transaction (the
    file may not be cut after them): only its XID or COMMIT does.
    """

    def __init__(self) -> None:
        self.state = "outside"  # "outside", "gtid" (after a GTID event), "inside"

    def ends_group(self, header: EventHeader, event: Event) -> bool:
        """Feed the next event; True if the file may be cut after it."""
        statement = event.query if isinstance(event, QueryEvent) else ""
        return self.feed(header.type_code, statement)

    def feed(self, code: int, statement: str | bytes = "") -> bool:
        """:meth:`ends_group` from the type code and, for a QUERY, the statement (its
        first bytes suffice).
        """
        if code in (GTID_LOG_EVENT, ANONYMOUS_GTID_LOG_EVENT):
            self.state = "gtid"
            return False
        if code == QUERY_EVENT:
            head = statement[:_STATEMENT_HEAD].lstrip()
            return self._query(
                (head.decode("latin-1") if isinstance(head, bytes) else head).upper()
            )
        if code in (XID_EVENT, XA_PREPARE_LOG_EVENT):
            self.state = "outside"
            return True
        return self.state == "outside" and code in _FILE_EVENTS

    def _query(self, text: str) -> bool:
        if self.state == "inside":
            if text.startswith(("COMMIT", "ROLLBACK")):
                self.state = "outside"
                return True
            return False
        if text.startswith(("BEGIN", "XA START")):
            self.state = "inside"
            return False
        self.state = "outside"  # DDL or another self-committing statement
        return True


PrefixVisitor = Callable[[bytes, bool], None]
"""Called by :func:`scan_valid_prefix` with an intact event's bytes (header to CRC) and
whether the file may be cut after it. The FORMAT_DESCRIPTION event comes first (the file
may be cut after it): it says whether the others carry a CRC."""


def scan_valid_prefix(
    path: StrPath,
    *,
    check_log_pos: bool = True,
    visit: PrefixVisitor | None = None,
    wanted: Collection[int] = (),
) -> ValidPrefix:
    """Read the whole file and say where its intact part ends (see ValidPrefix).

    Only reads: the caller (crash recovery) decides what to truncate.
    ``check_log_pos=False`` for relay logs (their events carry the source's positions).
    ``visit(raw, ends)`` is called, in file order, with each intact event whose type is in
    ``wanted`` or after which the file may be cut (``ends``): one read serves both.

    In a file with checksums, an event is intact when its size fits, its CRC32 matches,
    its ``log_pos`` is right (``check_log_pos``) and, for a QUERY, its layout holds: no
    event is decoded whole, so a recovery scan runs at the speed of the CRC (the CRC is
    what catches damage after the write; what the writer wrote, the codec decodes).
    Without checksums every event is decoded, as ``read_events`` does.
    """
    scan = _PrefixScan(os.fspath(path), check_log_pos, visit, frozenset(wanted))
    try:
        scan.run()
    except LogError as exc:
        if exc.position >= len(BINLOG_MAGIC) and scan.end == 0:
            scan.end = scan.transaction_end = len(BINLOG_MAGIC)
        return ValidPrefix(
            scan.end,
            scan.transaction_end,
            scan.events,
            scan.in_use,
            str(exc),
            isinstance(exc, LogTruncated),
        )
    return ValidPrefix(scan.end, scan.transaction_end, scan.events, scan.in_use, None, False)


class _PrefixScan:
    """The walk behind :func:`scan_valid_prefix`: its counters survive a LogError."""

    def __init__(
        self, name: str, check_log_pos: bool, visit: PrefixVisitor | None, wanted: frozenset[int]
    ) -> None:
        self.name, self.check_log_pos = name, check_log_pos
        self.visit, self.wanted = visit, wanted
        self.end = self.transaction_end = self.events = 0
        self.in_use = False
        self.tracker = TransactionTracker()

    def run(self) -> None:
        """Scan the file; LogError where its intact part ends before the end."""
        with open(self.name, "rb", buffering=0) as f:
            fd = _read_format_description(ChunkReader(f, None), self.name, self.check_log_pos)
            assert isinstance(fd.event, FormatDescriptionEvent)
            self.in_use = bool(fd.header.flags & LOG_EVENT_BINLOG_IN_USE_F)
            self.end = self.transaction_end = fd.position
            self._take(fd)
            if fd.event.checksum_alg != BINLOG_CHECKSUM_ALG_CRC32:
                for entry in read_events(self.name, fd.end, check_log_pos=self.check_log_pos):
                    self._take(entry)
                return
            size = os.fstat(f.fileno()).st_size
            if size > fd.end:
                with mmap.mmap(f.fileno(), size, access=mmap.ACCESS_READ) as data:
                    self._walk(data, fd.end)

    def _take(self, entry: LogEntry) -> None:
        """A decoded intact event."""
        ends = self.tracker.ends_group(entry.header, entry.event)
        self.events += 1
        self.end = entry.end
        if ends:
            self.transaction_end = entry.end
        if self.visit is not None and (ends or entry.header.type_code in self.wanted):
            self.visit(entry.raw, ends)

    def _walk(self, data: mmap.mmap, p: int) -> None:
        """The events from ``p`` of a file with checksums (see scan_valid_prefix); the
        counters live in locals while it runs (this loop is what recovery's speed is).
        """
        n, name, crc, tracker = len(data), self.name, zlib.crc32, self.tracker
        feed, check_log_pos, visit, wanted = (
            tracker.feed,
            self.check_log_pos,
            self.visit,
            self.wanted,
        )
        events, transaction_end = 0, self.transaction_end
        try:
            while p < n:
                if n - p < HEADER_LEN:
                    raise LogTruncated(name, p, "file ends inside an event header")
                _, code, _, size, log_pos, _ = unpack_header(data, p)
                q = p + size
                if not HEADER_LEN + CHECKSUM_LEN <= size <= MAX_EVENT_SIZE:
                    raise LogCorrupt(name, p, f"impossible event size {size}")
                if q > n:
                    raise LogTruncated(
                        name, p, f"file ends inside an event of {size} bytes ({n - p} present)"
                    )
                if check_log_pos and log_pos != q:
                    raise LogCorrupt(name, p, f"log_pos {log_pos} is not the next event's {q}")
                if crc(data[p : q - CHECKSUM_LEN]) != _CRC.unpack_from(data, q - CHECKSUM_LEN)[0]:
                    raise LogCorrupt(name, p, f"CRC32 mismatch in event of type {code}")
                if code != QUERY_EVENT:
                    ends = feed(code)
                else:
                    at = _statement_at(data, name, p, q)
                    if tracker.state == "inside" and data[at] not in _MAY_END_INSIDE:
                        ends = False  # a statement of an open transaction, not its COMMIT
                    else:
                        ends = feed(code, data[at : min(at + _STATEMENT_HEAD, q - CHECKSUM_LEN)])
                events += 1
                if ends:
                    transaction_end = q
                if visit is not None and (ends or code in wanted):
                    visit(data[p:q], ends)
                p = q
        finally:
            self.events += events
            self.end = p
            self.transaction_end = transaction_end


def _statement_at(data: mmap.mmap, name: str, p: int, q: int) -> int:
    """Where the statement of the QUERY event at ``data[p:q]`` starts (after the post
    header, the status variables, the database name and its NUL).
    """
    body = p + HEADER_LEN
    start = int(
        body
        + QUERY_POST_HEADER_LEN
        + data[body + QUERY_AT["db_len"]]
        + 1
        + _U16.unpack_from(data, body + QUERY_AT["status_len"])[0]
    )
    if start > q - CHECKSUM_LEN:
        raise LogCorrupt(name, p, "QUERY: status variables and database name overrun the event")
    return start


def intact_event_after(path: StrPath, position: int) -> int | None:
    """The offset of an intact event after the damaged event at ``position``, or None.

    Found: the damage is in the middle of the file, with complete events after it (a
    bit flip, an overwritten event), which no truncation repairs. None: the damage is a
    cut-off or overwritten tail. Tried first: the damaged event's own declared end
    (damage inside its body); then every offset in the next ``RESYNC_WINDOW`` bytes
    (damage to its size field). An event counts as intact when its type is one a log
    holds, it fits in the file and it decodes (with a matching CRC32 in a file with
    checksums; without, the event after it must decode too, or it must end the file).
    """
    name = os.fspath(path)
    with open(name, "rb", buffering=0) as f:
        reader = ChunkReader(f, None)
        try:
            fd = _read_format_description(reader, name, False)
        except LogError:
            return None
        assert isinstance(fd.event, FormatDescriptionEvent)
        checksum = fd.event.checksum_alg == BINLOG_CHECKSUM_ALG_CRC32
        size = os.fstat(f.fileno()).st_size
        header = reader.get(position, HEADER_LEN)
        declared: list[int] = (
            [position + int(EventHeader.unpack(header).event_size)]
            if len(header) == HEADER_LEN
            else []
        )
        resync = range(position + 1, min(size, position + RESYNC_WINDOW))
        for offset in itertools.chain(declared, resync):
            if offset > position and intact_at(reader, name, offset, size, checksum):
                return int(offset)
    return None


def intact_at(reader: ChunkReader, name: str, offset: int, size: int, checksum: bool) -> bool:
    """Whether an intact event starts at ``offset`` of a file of ``size`` bytes (see
    :func:`intact_event_after`): how a reader that starts inside a file, or lost its way
    at damage, finds an event boundary again.
    """
    entry = _decodes_at(reader, name, offset, size, checksum)
    if entry is None:
        return False
    return (
        checksum
        or entry.end == size
        or _decodes_at(reader, name, entry.end, size, checksum) is not None
    )


def _decodes_at(
    reader: ChunkReader, name: str, offset: int, size: int, checksum: bool
) -> LogEntry | None:
    data = reader.get(offset, HEADER_LEN)
    if len(data) < HEADER_LEN:
        return None
    header = EventHeader.unpack(data)
    if header.type_code not in _LOGGED_TYPES or offset + header.event_size > size:
        return None
    try:
        return _read_event(reader, name, offset, header, checksum=checksum, check_log_pos=False)
    except LogError:
        return None
