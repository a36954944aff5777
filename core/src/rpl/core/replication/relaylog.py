"""The relay log: ``relay-bin.NNNNNN`` files and ``relay-bin.index``.

The receiver appends; the applier reads. What holds:

* Every file starts with the replica's own FORMAT_DESCRIPTION (server_id = this
  replica, marked in use until the file is closed) and PREVIOUS_GTIDS (the GTIDs
  retrieved into earlier relay files); then the source's events as received, with
  the source's ``log_pos`` (source coordinates) and this replica's checksum
  setting; a closed file ends with a ROTATE naming the next one.
* Every file names its source file near its start: a receiver's dump begins with the
  source's artificial ROTATE, and a file started because the previous one passed
  ``max_relay_log_size`` gets an artificial ROTATE with the source position, so relay
  log recovery reads only the newest file.
* A new file is started whenever the receiver starts (as mysqld does), and when the
  current one passes ``max_relay_log_size`` (``max_binlog_size`` when 0) at a
  transaction boundary, so a transaction spans two files only when the receiver
  was interrupted inside it (the applier then discards the partial copy).
* ``sync_relay_log`` = N: fsync once N events were added since the last sync, when
  they are written (0: leave it to the OS). The receiver's events are kept in memory
  until the end of their transaction and written then, in one system call (1: every
  event is written and synced as it arrives, as MySQL does).
* The published ``end`` only moves to a transaction boundary the receiver wrote
  (:meth:`RelayLog.write`): the applier never reads a partial event, nor a transaction
  whose end has not arrived. The receiver writes at each boundary but publishes only
  once no whole packet is left among the bytes it received, so the applier wakes once for
  a burst of transactions (a source's commit group; a socket read of a catch-up stream)
  instead of once per transaction, and
  does not take the interpreter lock from the receiver in the middle of a burst (a
  semisync ACK waits for the burst's last event).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Final

from rpl.core.binlog.events import LOG_EVENT_ARTIFICIAL_F, RotateEvent, StopEvent, encode_event
from rpl.core.binlog.gtid import GtidSet
from rpl.core.binlog.logfile import BinlogIndex, binlog_file_name, file_number
from rpl.core.binlog.writer import BinlogPosition, PublishedEnd, end_file, file_header
from rpl.core.debug import CrashPoints

MAX_UNWRITTEN = 1 << 20
"""Bytes of appended events kept in memory at most before they are written (a large
transaction is written as it arrives, and published at its end)."""


class SourcePosition:
    """A position in the source's binlog, and the source's server_id (immutable; a plain
    class, native in the compiled build: the receiver makes one per transaction).
    """

    __slots__ = ("file", "pos", "server_id")

    def __init__(self, file: str, pos: int, server_id: int) -> None:
        self.file: Final = file
        self.pos: Final = pos
        self.server_id: Final = server_id

    def __repr__(self) -> str:
        return f"SourcePosition(file={self.file!r}, pos={self.pos}, server_id={self.server_id})"


class RelayLog:
    """The replica's relay log files (one channel)."""

    def __init__(
        self,
        directory: Path,
        basename: str,
        server_id: int,
        checksum: bool,
        sync_every: Callable[[], int],
        max_size: Callable[[], int],
        crash: CrashPoints | None = None,
    ) -> None:
        self.directory = directory
        self.basename = basename
        self.server_id = server_id
        self.checksum = checksum
        self._sync_every = sync_every
        self._max_size = max_size
        self._crash = crash or CrashPoints()
        self.index = BinlogIndex(directory / f"{basename}.index")
        self._lock = threading.Lock()
        self._published = PublishedEnd()
        self._fd = -1
        self._file = ""
        self._pos = 0
        self._boundary = BinlogPosition("", 0)
        """The end of the last :meth:`write` (a transaction boundary): what
        :meth:`publish` shows."""
        self._unsynced = 0
        self._unwritten = bytearray()
        """Events appended and not written yet (see :meth:`append`)."""

    # ---------------------------------------------------------------- files
    @property
    def end(self) -> BinlogPosition:
        """The end of the last whole event written (what the applier may read)."""
        return self._published.end

    @property
    def is_open(self) -> bool:
        """Whether a file is being written."""
        return self._fd >= 0

    def path(self, name: str) -> Path:
        """The path of relay log file ``name``."""
        return self.directory / name

    def open_new(self, previous_gtids: GtidSet, source: SourcePosition | None = None) -> str:
        """Close the current file (if any) and start the next; its name. ``source``: an
        artificial ROTATE naming the source position follows the header, so the file
        says by itself which source file its events come from (relay log recovery reads
        only the newest file).
        """
        with self._lock:
            if self._fd >= 0:
                self._close_locked(next_file=True)
            names = self.index.names()
            number = file_number(names[-1]) + 1 if names else 1
            name = binlog_file_name(self.basename, number)
            fd = os.open(self.directory / name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o640)
            data = file_header(self.server_id, self.checksum, previous_gtids, True)
            if source is not None:
                data += encode_event(
                    RotateEvent(source.pos, source.file),
                    server_id=source.server_id,
                    timestamp=0,
                    flags=LOG_EVENT_ARTIFICIAL_F,
                    checksum=self.checksum,
                )
            os.write(fd, data)
            os.fsync(fd)
            self.index.append(name)
            self._fd, self._file, self._pos = fd, name, len(data)
            self._publish()
            return name

    def _close_locked(self, next_file: bool) -> None:
        self._flush(0)
        last: RotateEvent | StopEvent
        if next_file:
            last = RotateEvent(4, binlog_file_name(self.basename, file_number(self._file) + 1))
        else:
            last = StopEvent()
        self._pos = end_file(self._fd, self._pos, last, self.server_id, self.checksum)
        self._fd = -1
        self._unsynced = 0
        self._publish()

    def close(self) -> None:
        """The receiver stopped: end the file (the next start opens a new one)."""
        with self._lock:
            if self._fd >= 0:
                self._close_locked(next_file=True)

    def rotate_if_full(self, previous_gtids: Callable[[], GtidSet], source: SourcePosition) -> None:
        """At a transaction boundary (``source``): start a new file if this one is full,
        its PREVIOUS_GTIDS from ``previous_gtids()`` (called only then).
        """
        limit = self._max_size()
        if self._fd >= 0 and self._pos >= limit:
            self.open_new(previous_gtids(), source)

    # --------------------------------------------------------------- write
    def append(self, raw: bytes, publish: bool = True) -> bool:
        """Add one event; True when the file was synced after it.

        With ``publish`` False the event is kept in memory until the next :meth:`write`
        (or an append that publishes), which writes everything kept in one system call:
        the receiver writes at transaction boundaries, so a transaction is one write.
        Under ``sync_relay_log`` = 1 every event is written and synced at once; past
        :data:`MAX_UNWRITTEN` bytes kept, they are written (neither is a boundary, so
        neither is published).
        """
        with self._lock:
            if "crash_in_relay_log_event_write" in self._crash.armed:
                self._write(bytes(self._unwritten) + raw[: len(raw) // 2])
                self._crash.hit("crash_in_relay_log_event_write")
            self._unwritten += raw
            every = self._sync_every()
            if every:
                self._unsynced += 1
            if publish:
                synced = self._write_boundary(every)
                self._publish(self._boundary)
                return synced
            if every == 1 or len(self._unwritten) >= MAX_UNWRITTEN:
                return self._flush(every)
            return False

    def write(self) -> bool:
        """At a transaction boundary: write what was kept (one system call), sync it when
        ``sync_relay_log`` events have been added since the last sync, and make this end
        the one the next :meth:`publish` shows; True when the file was synced.
        """
        with self._lock:
            return self._write_boundary(self._sync_every())

    def publish(self) -> None:
        """Let the applier read up to the last :meth:`write` (nothing after it, kept or
        written: a transaction whose end has not been written stays unread).
        """
        with self._lock:
            self._publish(self._boundary)

    def _write_boundary(self, every: int) -> bool:
        synced = self._flush(every)
        self._boundary = BinlogPosition(self._file, self._pos)
        return synced

    def _flush(self, every: int) -> bool:
        if not self._unwritten:
            return False
        self._write(self._unwritten)
        self._pos += len(self._unwritten)
        self._unwritten.clear()
        if every and self._unsynced >= every:
            os.fsync(self._fd)
            self._unsynced = 0
            return True
        return False

    def _write(self, data: bytes | bytearray) -> None:
        with memoryview(data) as view:
            written = os.write(self._fd, view)
            while written < len(view):
                written += os.write(self._fd, view[written:])

    def _publish(self, end: BinlogPosition | None = None) -> None:
        """Move the published end to ``end`` (by default what is written: a file's
        start or end, always a boundary); the applier is woken only when it moved.
        """
        if end is None:
            end = self._boundary = BinlogPosition(self._file, self._pos)
        if self._published.end != end:
            self._published.publish(end)

    def wait_for_update(self, past: BinlogPosition, timeout: float) -> BinlogPosition:
        """Block until ``end`` moves past ``past`` (or ``timeout`` seconds); the end."""
        return self._published.wait_past(past, timeout)

    # ---------------------------------------------------------- maintenance
    def purge_before(self, name: str) -> None:
        """Delete the files before ``name`` (relay_log_purge)."""
        with self._lock:
            names = self.index.names()
            if name not in names:
                return
            keep = names[names.index(name) :]
            self.index.rewrite(keep)
            for old in names[: names.index(name)]:
                self.path(old).unlink(missing_ok=True)

    def reset(self) -> None:
        """RESET SLAVE: delete every relay log file and the index."""
        with self._lock:
            self.index.discard(self._fd)
            self._fd = -1
            self._file, self._pos = "", 0
            self._unwritten.clear()
            self._publish()

    def space(self) -> int:
        """Relay_Log_Space: the bytes of every relay log file."""
        total = 0
        for name in self.index.names():
            try:
                total += self.path(name).stat().st_size
            except FileNotFoundError:
                pass
        return total
