"""Reading and editing log files to seed faults (tests of the validator)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rpl.core.binlog.events import relocate_events
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


def swap(path: Path, first: list[LogEntry], second: list[LogEntry]) -> None:
    """Swap two adjacent transactions (their events, ``first`` before ``second``), the
    end log_pos of each event moved with it (a reordered commit, CRCs still right).
    """
    start, end = first[0].position, second[-1].end

    def edit(data: bytearray) -> None:
        swapped = bytearray(b"".join(e.raw for e in second + first))
        relocate_events(swapped, start, checksum=True)
        data[start:end] = swapped

    rewrite(path, edit)
