"""Reading a log file that another thread is still appending to.

The binlog sender reads the source's binlog and the applier reads the relay log while
the writer appends. The writer publishes an end position that is always an event
boundary; :class:`LogTail` hands out the whole events between its position and that
limit and never reads a byte past it, so it never sees a half-written event.

Written by hand: this is a raw splitter on the event header's ``event_size`` field
(the codec in :mod:`rpl.core.binlog.events` decodes what a caller needs decoded).
"""

from __future__ import annotations

import os
import struct
from typing import Final

from rpl.core.binlog.events import HEADER_LEN, MAX_EVENT_SIZE
from rpl.core.binlog.logfile import LogCorrupt

CHUNK: Final = 1 << 20
_SIZE: Final = struct.Struct("<I")


class LogTail:
    """Whole events of one file, from ``position`` up to a caller-given limit."""

    def __init__(self, path: str | os.PathLike[str], position: int = 4) -> None:
        self.path = os.fspath(path)
        self.position = position
        self._f = open(self.path, "rb", buffering=0)  # noqa: SIM115 - closed by close()

    def size(self) -> int:
        """The file's current size."""
        return os.fstat(self._f.fileno()).st_size

    def read(self, limit: int, max_bytes: int = CHUNK) -> list[tuple[int, bytes]]:
        """The events that end at or before ``limit``, as ``(offset, raw)`` pairs, about
        ``max_bytes`` at most (always at least one event when one is complete). The
        position moves past them. LogCorrupt on an impossible event size.
        """
        start = self.position
        if limit <= start:
            return []
        data = os.pread(self._f.fileno(), min(limit - start, max(max_bytes, HEADER_LEN)), start)
        events: list[tuple[int, bytes]] = []
        offset = 0
        while len(data) - offset >= HEADER_LEN:
            (size,) = _SIZE.unpack_from(data, offset + 9)
            if size < HEADER_LEN or size > MAX_EVENT_SIZE:
                raise LogCorrupt(self.path, start + offset, f"impossible event size {size}")
            if offset + size > len(data):
                if events or start + offset + size > limit:
                    break
                data += os.pread(self._f.fileno(), offset + size - len(data), start + len(data))
                if offset + size > len(data):
                    break
            events.append((start + offset, data[offset : offset + size]))
            offset += size
        self.position = start + offset
        return events

    def read_one(self, limit: int) -> bytes | None:
        """The next whole event ending at or before ``limit``, or None."""
        header = os.pread(self._f.fileno(), HEADER_LEN, self.position)
        if len(header) < HEADER_LEN:
            return None
        (size,) = _SIZE.unpack_from(header, 9)
        if size < HEADER_LEN or size > MAX_EVENT_SIZE:
            raise LogCorrupt(self.path, self.position, f"impossible event size {size}")
        if self.position + size > limit:
            return None
        raw = os.pread(self._f.fileno(), size, self.position)
        if len(raw) < size:
            return None
        self.position += size
        return raw

    def close(self) -> None:
        """Close the file (idempotent)."""
        self._f.close()

    def __enter__(self) -> LogTail:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
