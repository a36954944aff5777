"""What ``rpl validate`` reads: the nodes, their log files, and the byte ranges (splits)
the scan tasks get.

A node is a data directory: its name is the directory's base name, its server_uuid comes
from ``auto.cnf``, its binlog files from ``binlog.index`` and its relay log files from
``relay-bin.index``. Each file is cut into splits of ``split_bytes``; a task owns the
events that *start* in its split (see :mod:`rpl.core.validate.scan`), so any split size
gives the same result. A file whose events carry no CRC32 is one split when it is a relay
log (its events carry the source's positions, so nothing but a CRC tells an event
boundary found by search from a false one); a binlog without CRCs can still be split, as
each event's ``log_pos`` names its own end.

Planning reads only the first event of every file (its FORMAT_DESCRIPTION says whether
events carry a CRC32, its server_id whose file it is); it never fails on a damaged file:
the scan reports the damage.
"""

from __future__ import annotations

import configparser
import os
from pathlib import Path
from typing import Final

import attrs

from rpl.core.binlog.events import (
    BINLOG_CHECKSUM_ALG_CRC32,
    BINLOG_MAGIC,
    FORMAT_DESCRIPTION_EVENT,
    HEADER_LEN,
    EventHeader,
    event_checksum_alg,
)
from rpl.core.binlog.gtid import GtidSet
from rpl.core.binlog.logfile import BinlogIndex, previous_gtids

BINLOG: Final = "binlog"
RELAY: Final = "relay"
DEFAULT_SPLIT_BYTES: Final = 32 << 20
_FD_PEEK: Final = 512


@attrs.frozen
class LogFile:
    """One binlog or relay log file of a node, as its index lists it."""

    node: str
    kind: str
    name: str
    path: str
    ordinal: int
    """The file's place in its index (0 first)."""
    next_name: str | None
    """The next file in the index (None for the last)."""
    size: int
    checksum: bool
    server_id: int
    """The server_id of the FORMAT_DESCRIPTION at 4 (the node's own), -1 if unreadable."""


@attrs.frozen
class Split:
    """The bytes ``[start, end)`` of ``file``: a task owns the events that start there."""

    file: LogFile
    number: int
    start: int
    end: int


@attrs.frozen
class Node:
    """One data directory."""

    name: str
    path: str
    server_uuid: str
    binlogs: tuple[LogFile, ...]
    relay_logs: tuple[LogFile, ...]
    missing: tuple[tuple[str, str], ...]
    """(kind, file name) of files the index lists that are not there."""

    @property
    def files(self) -> tuple[LogFile, ...]:
        """Binlog files, then relay log files."""
        return self.binlogs + self.relay_logs

    @property
    def server_id(self) -> int:
        """The server_id of the node's own binlog files (-1 when none is readable)."""
        ids = [f.server_id for f in self.binlogs if f.server_id >= 0]
        return ids[-1] if ids else -1


class LayoutError(ValueError):
    """A path that is not a data directory (a usage error, exit code 2)."""


def _peek_format_description(path: Path) -> tuple[bool, int]:
    """(events carry a CRC32, server_id) from the file's FORMAT_DESCRIPTION; (True, -1)
    when it cannot be read (the scan reports why).
    """
    with path.open("rb") as f:
        head = f.read(_FD_PEEK)
    if len(head) < len(BINLOG_MAGIC) + HEADER_LEN or not head.startswith(BINLOG_MAGIC):
        return True, -1
    header = EventHeader.unpack(head, len(BINLOG_MAGIC))
    end = len(BINLOG_MAGIC) + header.event_size
    if header.type_code != FORMAT_DESCRIPTION_EVENT or end > len(head):
        return True, -1
    fd = head[len(BINLOG_MAGIC) : end]
    return event_checksum_alg(fd) == BINLOG_CHECKSUM_ALG_CRC32, header.server_id


def _server_uuid(directory: Path) -> str:
    parser = configparser.ConfigParser()
    parser.read(directory / "auto.cnf")
    return parser.get("auto", "server-uuid", fallback="")


def _log_files(
    node: str, directory: Path, kind: str, index_name: str
) -> tuple[list[LogFile], list[tuple[str, str]]]:
    index = directory / index_name
    if not index.exists():
        return [], []
    names = BinlogIndex(index).names()
    files, missing = [], []
    for ordinal, name in enumerate(names):
        path = directory / name
        if not path.exists():
            missing.append((kind, name))
            continue
        checksum, server_id = _peek_format_description(path)
        next_name = names[ordinal + 1] if ordinal + 1 < len(names) else None
        files.append(
            LogFile(
                node,
                kind,
                name,
                str(path),
                ordinal,
                next_name,
                path.stat().st_size,
                checksum,
                server_id,
            )
        )
    return files, missing


def discover(datadir: str | os.PathLike[str]) -> Node:
    """The node in ``datadir``; LayoutError if it holds neither a binlog nor a relay log."""
    directory = Path(datadir).resolve()
    if not directory.is_dir():
        raise LayoutError(f"{datadir}: not a directory")
    binlogs, missing = _log_files(directory.name, directory, BINLOG, "binlog.index")
    relays, missing_relay = _log_files(directory.name, directory, RELAY, "relay-bin.index")
    if not binlogs and not relays and not missing and not missing_relay:
        raise LayoutError(
            f"{datadir}: no binlog.index or relay-bin.index (not a data directory of an rpl server)"
        )
    return Node(
        directory.name,
        str(directory),
        _server_uuid(directory),
        tuple(binlogs),
        tuple(relays),
        tuple(missing + missing_relay),
    )


def discover_all(datadirs: list[str]) -> list[Node]:
    """The nodes, in the order given; LayoutError on two directories of the same name."""
    nodes = [discover(d) for d in datadirs]
    names = [n.name for n in nodes]
    duplicated = sorted({n for n in names if names.count(n) > 1})
    if duplicated:
        raise LayoutError(
            f"two data directories are both named {duplicated[0]!r}: nodes "
            f"are named by their directory"
        )
    return nodes


def plan_splits(nodes: list[Node], split_bytes: int = DEFAULT_SPLIT_BYTES) -> list[Split]:
    """Every file of every node cut into splits of about ``split_bytes``."""
    if split_bytes < 1024:
        raise ValueError("splits must be at least 1024 bytes")
    splits = []
    for node in nodes:
        for log in node.files:
            whole = log.kind == RELAY and not log.checksum
            edges = [0] if whole else list(range(0, max(log.size, 1), split_bytes))
            ends = edges[1:] + [max(log.size, 1)]
            splits += [
                Split(log, number, start, end)
                for number, (start, end) in enumerate(zip(edges, ends, strict=True))
            ]
    return splits


def oldest_previous(files: tuple[LogFile, ...]) -> GtidSet:
    """The PREVIOUS_GTIDS of the oldest of ``files`` (empty if none is readable): what a
    log says came before it (a binlog: the purged GTIDs).
    """
    if not files:
        return GtidSet()
    return previous_gtids(files[0].path, check_log_pos=files[0].kind == BINLOG) or GtidSet()
