"""Reading and editing log files to seed faults (tests of the validator)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rpl.core.binlog.logfile import LogEntry, read_events


def events(path: Path, relay: bool = False) -> list[LogEntry]:
    """The events of one file, read with the codec."""
    return list(read_events(path, check_log_pos=not relay))


def find(
    path: Path, predicate: Callable[[LogEntry], bool], relay: bool = False, nth: int = 0
) -> LogEntry:
    """The ``nth`` event of the file that ``predicate`` accepts."""
    return [e for e in events(path, relay) if predicate(e)][nth]


def rewrite(path: Path, edit: Callable[[bytearray], None]) -> None:
    """Edit the file's bytes in place."""
    data = bytearray(path.read_bytes())
    edit(data)
    path.write_bytes(bytes(data))
