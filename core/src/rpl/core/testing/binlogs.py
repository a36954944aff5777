"""Log files of a source and a replica as a replication run leaves them, written directly
(no servers), for validator tests and benchmarks that need millions of events.

What :func:`write_topology` writes is what the servers write (see
:mod:`rpl.core.replication.relaylog`): the source's binlog files; the replica's relay log
(its own FORMAT_DESCRIPTION and PREVIOUS_GTIDS, the source's artificial ROTATE, the
source's events byte for byte, an artificial ROTATE with the source position at the start
of each file a size rotation opened, its own ROTATE at the end of each closed file); the
replica's binlog with the same transactions at its own positions. Every transaction is
GTID, BEGIN, ``INSERT INTO d.t VALUES (<key>, 'v<key>')``, XID; or, in row format, GTID,
BEGIN, TABLE_MAP, WRITE_ROWS (the row ``(<key>, 'v<key>')``), XID. Events come from the
project's codec once, as a template; each transaction patches the GTID number, the key,
the xid and the positions (CRC32 redone), so millions take seconds, not minutes.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Final

import attrs

from rpl.core.binlog.events import (
    HEADER_LEN,
    LOG_EVENT_ARTIFICIAL_F,
    DeleteRowsEvent,
    Event,
    GtidEvent,
    Image,
    QueryEvent,
    RotateEvent,
    RowsEvent,
    RowsQueryEvent,
    TableMapEvent,
    UpdateRowsEvent,
    WriteRowsEvent,
    XidEvent,
    artificial,
    binlog_column,
    default_status_vars,
    encode_event,
    relocate_events,
)
from rpl.core.binlog.gtid import GtidSet
from rpl.core.binlog.logfile import BinlogIndex, LogEntry, binlog_file_name, read_events
from rpl.core.binlog.writer import FLAGS_OFFSET, file_header
from rpl.core.engine.schema import ColumnSchema

SOURCE_ID: Final = 1
REPLICA_ID: Final = 2
_KEY_DIGITS: Final = 10
_GNO_AT: Final = HEADER_LEN + 1 + 16
_SEQUENCE_AT: Final = _GNO_AT + 8 + 1 + 8
_XID_AT: Final = HEADER_LEN
_TABLE_ID: Final = 108
_ROW_COLUMNS: Final = (
    binlog_column(ColumnSchema("id", "INT", nullable=False)),
    binlog_column(ColumnSchema("v", "VARCHAR", 40)),
)
"""``d.t (id INT PRIMARY KEY, v VARCHAR(40))`` as a TABLE_MAP says it."""


@attrs.frozen
class SyntheticRun:
    """Where the files are and how many there are of what."""

    source: Path
    replica: Path
    source_uuid: uuid.UUID
    transactions: int
    events: int
    """Events in all files (source binlog, relay log, replica binlog)."""
    bytes: int


class _Template:
    """One transaction's events, patched per transaction."""

    def __init__(self, sid: uuid.UUID, rows: bool = False, rows_query: bool = False) -> None:
        self.sid = sid
        digits = "0" * _KEY_DIGITS
        statement = f"INSERT INTO d.t VALUES ({digits}, 'v{digits}')"
        status = default_status_vars()
        gtid = GtidEvent(
            sid,
            1,
            last_committed=0,
            sequence_number=1,
            immediate_commit_timestamp=1_700_000_000_000_000,
        )
        body: list[Event] = [QueryEvent(1, 0, 0, status, "d", statement)]
        if rows:
            table_map = TableMapEvent(_TABLE_ID, "d", "t", _ROW_COLUMNS)
            body = [table_map, WriteRowsEvent.of(table_map, [(0, "v" + digits)])]
            if rows_query:
                body.insert(0, RowsQueryEvent(statement))
        events: list[Event] = [gtid, QueryEvent(1, 0, 0, status, "d", "BEGIN"), *body, XidEvent(1)]
        raws = [encode_event(e, server_id=SOURCE_ID, timestamp=1_700_000_000) for e in events]
        rest = sum(len(r) for r in raws[1:])
        raws[0] = encode_event(
            gtid.with_transaction_length(rest), server_id=SOURCE_ID, timestamp=1_700_000_000
        )
        self.raw = bytearray(b"".join(raws))
        self.count = len(raws)
        self.gtid_size = len(raws[0])
        self.digits_at: list[int] = []
        """Where the key's digits go (the value's follow at +_KEY_DIGITS + 4)."""
        self.int_at: list[int] = []
        """Where a WRITE_ROWS row's INT key goes (its VARCHAR value's digits at +6)."""
        at = 0
        for event, raw in zip(events, raws, strict=True):
            if isinstance(event, QueryEvent | RowsQueryEvent) and digits in event.query:
                self.digits_at.append(at + len(raw) - 4 - len(statement) + statement.index(digits))
            if isinstance(event, WriteRowsEvent):
                # the row: its NULL bitmap (1 byte), INT (4), VARCHAR length (1), 'v', digits
                self.int_at.append(at + len(raw) - 4 - len(event.rows_data) + 1)
            at += len(raw)
        self.xid_at = len(self.raw) - len(raws[-1])
        self.size = len(self.raw)

    def transaction(self, gno: int) -> bytearray:
        """The events of transaction ``gno`` (key ``gno``), positions not yet set."""
        raw = bytearray(self.raw)
        raw[_GNO_AT : _GNO_AT + 8] = gno.to_bytes(8, "little")
        raw[_SEQUENCE_AT - 8 : _SEQUENCE_AT] = (gno - 1).to_bytes(8, "little")
        raw[_SEQUENCE_AT : _SEQUENCE_AT + 8] = gno.to_bytes(8, "little")
        digits = str(gno).zfill(_KEY_DIGITS).encode()
        for at in self.digits_at:
            raw[at : at + _KEY_DIGITS] = digits
            raw[at + _KEY_DIGITS + 4 : at + 2 * _KEY_DIGITS + 4] = digits
        for at in self.int_at:
            raw[at : at + 4] = gno.to_bytes(4, "little")
            raw[at + 6 : at + 6 + _KEY_DIGITS] = digits
        at = self.xid_at + _XID_AT
        raw[at : at + 8] = gno.to_bytes(8, "little")
        return raw


class _LogWriter:
    """Files ``<base>.NNNNNN`` and ``<base>.index`` in one directory."""

    def __init__(self, directory: Path, base: str, server_id: int) -> None:
        self.directory, self.base, self.server_id = directory, base, server_id
        self.names: list[str] = []
        self.handle: int = -1
        self.position = 0
        self.events = 0
        self.bytes = 0

    def open(self, previous: GtidSet) -> None:
        """Start the next file."""
        name = binlog_file_name(self.base, len(self.names) + 1)
        self.names.append(name)
        self.handle = os.open(self.directory / name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o640)
        header = file_header(self.server_id, True, previous, True)
        self.position = 0
        self.write(header, events=2, relocate=False)

    def write(self, data: bytearray, *, events: int, relocate: bool = True) -> None:
        """Append whole events (their log_pos set to this file's positions if
        ``relocate``).
        """
        if relocate:
            relocate_events(data, self.position, checksum=True)
        os.write(self.handle, data)
        self.position += len(data)
        self.events += events
        self.bytes += len(data)

    def close(self, next_name: str | None) -> None:
        """End the file: a ROTATE to the next one (and the in-use flag cleared), or
        nothing for the last file (left as a killed server leaves it).
        """
        if next_name is not None:
            rotate = bytearray(
                encode_event(
                    RotateEvent(4, next_name), server_id=self.server_id, timestamp=1_700_000_000
                )
            )
            self.write(rotate, events=1)
            os.pwrite(self.handle, b"\x00", FLAGS_OFFSET)
        os.close(self.handle)
        (self.directory / f"{self.base}.index").write_text("".join(f"./{n}\n" for n in self.names))

    def next_name(self) -> str:
        """The name the next file will get."""
        return binlog_file_name(self.base, len(self.names) + 1)


def _datadir(path: Path, server_uuid: uuid.UUID) -> None:
    path.mkdir(parents=True, exist_ok=True)
    (path / "auto.cnf").write_text(f"[auto]\nserver-uuid={server_uuid}\n")


def write_topology(
    root: Path,
    transactions: int,
    *,
    max_file_bytes: int = 64 << 20,
    progress: Callable[[int], None] | None = None,
    rows: bool = False,
    rows_query: bool = False,
) -> SyntheticRun:
    """A source and a replica under ``root`` (``source/``, ``replica/``) after
    ``transactions`` transactions were replicated and applied. ``rows``: each transaction
    is logged as ``binlog_format=ROW`` logs it (GTID, BEGIN, TABLE_MAP, WRITE_ROWS, XID;
    ``rows_query``: a ROWS_QUERY with the statement before the TABLE_MAP).
    """
    sid = uuid.UUID(int=0x5EED)
    source_dir, replica_dir = root / "source", root / "replica"
    _datadir(source_dir, sid)
    _datadir(replica_dir, uuid.UUID(int=0x5EED2))
    template = _Template(sid, rows, rows_query)
    source = _LogWriter(source_dir, "binlog", SOURCE_ID)
    relay = _LogWriter(replica_dir, "relay-bin", REPLICA_ID)
    applied = _LogWriter(replica_dir, "binlog", REPLICA_ID)
    for log in (source, relay, applied):
        log.open(GtidSet())
    _relay_source_start(relay, source, source_dir)
    for gno in range(1, transactions + 1):
        raw = template.transaction(gno)
        source.write(raw, events=template.count)
        relay.write(bytearray(raw), events=template.count, relocate=False)
        applied.write(bytearray(raw), events=template.count)
        if max(source.position, relay.position, applied.position) > max_file_bytes:
            _rotate(source, relay, applied, max_file_bytes, GtidSet.parse(f"{sid}:1-{gno}"))
        if progress is not None and gno % 100_000 == 0:
            progress(gno)
    for log in (source, relay, applied):
        log.close(None)
    return SyntheticRun(
        source_dir,
        replica_dir,
        sid,
        transactions,
        source.events + relay.events + applied.events,
        source.bytes + relay.bytes + applied.bytes,
    )


def _rotate(
    source: _LogWriter, relay: _LogWriter, applied: _LogWriter, max_file_bytes: int, done: GtidSet
) -> None:
    """Start the next file of each log that passed ``max_file_bytes``."""
    if source.position > max_file_bytes:
        _rotate_source(source, relay, source.directory, done)
    if relay.position > max_file_bytes:
        relay.close(relay.next_name())
        relay.open(done)
        _relay_marker(relay, source.names[-1], source.position)
    if applied.position > max_file_bytes:
        applied.close(applied.next_name())
        applied.open(done)


def _relay_marker(relay: _LogWriter, source_file: str, position: int) -> None:
    marker = encode_event(
        RotateEvent(position, source_file),
        server_id=SOURCE_ID,
        timestamp=0,
        flags=LOG_EVENT_ARTIFICIAL_F,
    )
    relay.write(bytearray(marker), events=1, relocate=False)


def _source_format_description(source_dir: Path, name: str) -> bytearray:
    with (source_dir / name).open("rb") as f:
        head = f.read(512)
    size = int.from_bytes(head[4 + 9 : 4 + 13], "little")
    return bytearray(artificial(head[4 : 4 + size], log_pos=4 + size, checksum=True))


def _relay_source_start(relay: _LogWriter, source: _LogWriter, source_dir: Path) -> None:
    """What a receiver writes when a dump starts at the source's current file."""
    _relay_marker(relay, source.names[-1], 4)
    relay.write(_source_format_description(source_dir, source.names[-1]), events=1, relocate=False)


def _rotate_source(source: _LogWriter, relay: _LogWriter, source_dir: Path, done: GtidSet) -> None:
    rotate_at = source.position
    source.close(source.next_name())
    source.open(done)
    with (source_dir / source.names[-2]).open("rb") as f:
        f.seek(rotate_at)
        relay.write(bytearray(f.read()), events=1, relocate=False)
    _relay_marker(relay, source.names[-1], 4)
    relay.write(_source_format_description(source_dir, source.names[-1]), events=1, relocate=False)


RowWrite = tuple[str, "Image | None", "Image | None"]
"""A row a rows event wrote: ("insert" | "update" | "delete", before image, after image)."""


def binlog_entries(datadir: Path, index: str = "binlog.index") -> Iterator[LogEntry]:
    """Every event of the binlog (or relay log: ``index``) files listed in ``datadir``'s
    index, in log order, file after file.
    """
    for name in BinlogIndex(datadir / index).names():
        yield from read_events(datadir / name)


def logged_row_changes(
    datadir: Path, db: str, table: str, index: str = "binlog.index"
) -> Iterator[RowWrite]:
    """Every row the rows events of the binlog (or relay log: ``index``) files in
    ``datadir`` wrote to ``db.table``, in log order (tests read a crashed server's binlog
    with it; statement-format events are not read).
    """
    maps: dict[int, TableMapEvent] = {}
    for entry in binlog_entries(datadir, index):
        event = entry.event
        if isinstance(event, TableMapEvent):
            maps[event.table_id] = event
        elif isinstance(event, RowsEvent):
            table_map = maps[event.table_id]
            if (table_map.db, table_map.table) != (db, table):
                continue
            if isinstance(event, UpdateRowsEvent):
                for before, after in event.updates(table_map):
                    yield "update", before, after
            elif isinstance(event, WriteRowsEvent):
                for image in event.images(table_map):
                    yield "insert", None, image
            elif isinstance(event, DeleteRowsEvent):
                for image in event.images(table_map):
                    yield "delete", image, None
