"""Relay log recovery at replica start (WL#4621): the receiver's position comes from the
relay log itself, never from a master.info that may be ahead of it or behind it.

What holds after :func:`recover_relay_log`:

* The newest relay log file ends with its last complete transaction: a damaged or
  partial tail (an event cut short, a bad CRC, a transaction without its end) is cut
  off, and the error log says so ("Truncating relay log X to position N").
* The receiver resumes right after the last complete transaction the relay log holds, at
  the source position that transaction ended at (its source file from the ROTATE before
  it, its end from its last event's ``log_pos``), and Retrieved_Gtid_Set is what the
  relay log holds: nothing is fetched twice into the relay log, nothing is skipped.
  Only the newest file is read (once: the scan that finds its damaged tail also finds
  the position), plus older ones, newest first, only while none holds a complete
  transaction; Retrieved_Gtid_Set is the oldest file read's PREVIOUS_GTIDS and the
  transactions read.
* Damage with intact events after it (in the newest file) is not cut away: the error
  log names file and position and the applier stops there with 1594. A file missing
  between the applier's file and the newest stays in the index (the applier stops
  there too); missing files before the applier's or after the last present one are
  dropped from the index (applied, or a lost tail fetched again).
* An applier position past the recovered end of the newest file moves back to it.
* ``relay_log_recovery`` = ON: the relay logs are discarded and the receiver restarts
  from the applier's position; the applier skips whatever GTIDs it has already executed,
  so an applier position that lags is safe.
"""

from __future__ import annotations

import logging
import uuid
from typing import TYPE_CHECKING, Final

from rpl.core import errorlog
from rpl.core.binlog.events import (
    BINLOG_CHECKSUM_ALG_CRC32,
    FORMAT_DESCRIPTION_EVENT,
    GTID_LOG_EVENT,
    HEADER_AT,
    HEADER_LEN,
    LOG_EVENT_ARTIFICIAL_F,
    PREVIOUS_GTIDS_LOG_EVENT,
    ROTATE_EVENT,
    Event,
    EventHeader,
    FormatDescriptionEvent,
    PreviousGtidsEvent,
    RotateEvent,
    decode_event,
    gtid_fields,
)
from rpl.core.binlog.gtid import GtidSet
from rpl.core.binlog.logfile import LogCorrupt, scan_valid_prefix
from rpl.core.binlog.trim import truncate_tail
from rpl.core.replication.info import RelayLogInfo

if TYPE_CHECKING:
    from rpl.core.replication.channel_state import ChannelState

_log = errorlog.logger("relay_log_recovery")
REMEDY = (
    "RESET SLAVE discards the relay logs; START SLAVE then fetches again what was not "
    "applied, from the executed GTIDs with SOURCE_AUTO_POSITION=1, otherwise from the "
    "source's first binlog, skipping the GTIDs already executed"
)
"""What to do about relay log damage recovery cannot repair (no loss either way)."""
_TYPE_CODE: Final = HEADER_AT["type_code"]
_LOG_POS: Final = HEADER_AT["log_pos"]


def recover_relay_log(channel: ChannelState) -> None:
    """Make the relay log and the receiver position agree (see the module docstring)."""
    if channel.server.variables.get_global("relay_log_recovery"):
        _discard(channel)
        return
    present = _fix_index(channel)
    if not present:
        return
    last = channel.relay_log.path(present[-1])
    scans = [RelayScan(channel.server.server_id)]
    try:
        truncate_tail(last, "relay log", relay=True, visit=scans[0].visit, wanted=RelayScan.WANTED)
    except LogCorrupt as exc:
        errorlog.log(
            _log,
            logging.ERROR,
            f"Relay log {last.name} is damaged at position "
            f"{exc.position}: {exc.reason}. It is left as it is; the applier stops "
            f"there ({REMEDY})",
            code=10000,
        )
    _clamp_applier_position(channel, present[-1])
    _scan_older(channel, present[:-1], scans)
    found = _source_position(scans)
    if found is None:
        return
    (log_file, log_pos), retrieved = found
    channel.boundary = (log_file, log_pos)
    channel.master_info.log_file, channel.master_info.log_pos = log_file, log_pos
    channel.retrieved_gtids = retrieved
    errorlog.log(
        _log,
        logging.INFO,
        f"Relay log recovery: the receiver restarts at source log "
        f"'{log_file}' position {log_pos}; retrieved GTIDs '{retrieved}'",
        code=10000,
    )


def _fix_index(channel: ChannelState) -> list[str]:
    """Drop from the index the files that are missing where nothing is lost by it (before
    the applier's file: applied; after the last present file: a lost tail the receiver
    fetches again); the files present. A file missing between them stays listed, and
    the applier stops there with an error naming it.
    """
    relay_log = channel.relay_log
    names = relay_log.index.names()
    present = [n for n in names if relay_log.path(n).exists()]
    if present == names:
        return present
    applier_file = channel.relay_info.relay_log_file
    first = names.index(applier_file) if applier_file in names else 0
    last = names.index(present[-1]) if present else -1
    keep = [n for i, n in enumerate(names) if n in present or first <= i < last]
    gaps = sorted(set(keep) - set(present))
    relay_log.index.rewrite(keep)
    dropped = sorted(set(names) - set(keep))
    if dropped:
        errorlog.log(
            _log,
            logging.WARNING,
            f"Relay log files missing from the index were dropped from it: {dropped}",
            code=10000,
        )
    if gaps:
        errorlog.log(
            _log,
            logging.ERROR,
            f"Relay log files not yet applied are missing: "
            f"{gaps}; the applier stops at the first of them ({REMEDY})",
            code=10000,
        )
    return present


def _clamp_applier_position(channel: ChannelState, last: str) -> None:
    """An applier position past the recovered end of the last file (the relay log lost
    writes the applier had read, as after an OS crash) moves back to that end: the
    receiver appends there, and the applier skips what it has already executed.
    """
    info = channel.relay_info
    if info.relay_log_file == last:
        size = channel.relay_log.path(last).stat().st_size
        if info.relay_log_pos > size:
            errorlog.log(
                _log,
                logging.WARNING,
                f"Relay log recovery: the applier position "
                f"{last}:{info.relay_log_pos} is past the end of the relay log; it "
                f"moves to {size}",
                code=10000,
            )
            info.relay_log_pos = size


class RelayScan:
    """Follows the events of one relay log file: the source position after its last
    complete transaction (its source file from the ROTATE before it: every relay file
    has one near its start) and the GTIDs of its complete transactions.
    """

    WANTED: Final = (PREVIOUS_GTIDS_LOG_EVENT, ROTATE_EVENT, GTID_LOG_EVENT)
    """The event types :meth:`visit` reads, besides the ends of transactions."""

    def __init__(self, own_id: int) -> None:
        self.own_id = own_id
        self.previous: GtidSet | None = None
        self.gtids = GtidSet()
        self.position: tuple[str, int] | None = None
        self._checksum = True
        self._source_file = ""
        self._pending: tuple[bytes, int] | None = None
        self._sids: dict[bytes, uuid.UUID] = {}

    def visit(self, raw: bytes, ends: bool) -> None:
        """An event of a type in :attr:`WANTED`, or one that ends a transaction (``ends``),
        in file order (a PrefixVisitor). Only the file's few PREVIOUS_GTIDS, ROTATE and
        FORMAT_DESCRIPTION events are decoded whole.
        """
        code = raw[_TYPE_CODE]
        if code == GTID_LOG_EVENT:
            _, sid, gno = gtid_fields(raw, HEADER_LEN, len(raw))
            self._pending = (sid, gno)
        elif code == FORMAT_DESCRIPTION_EVENT:
            fd = decode_event(raw, checksum=False)[1]
            self._checksum = (
                isinstance(fd, FormatDescriptionEvent)
                and fd.checksum_alg == BINLOG_CHECKSUM_ALG_CRC32
            )
        elif code in (PREVIOUS_GTIDS_LOG_EVENT, ROTATE_EVENT):
            self._file_event(*decode_event(raw, checksum=self._checksum))
        elif ends and self._pending is not None:
            sid, gno = self._pending
            known = self._sids.get(sid)
            if known is None:
                known = self._sids[sid] = uuid.UUID(bytes=sid)
            self.gtids.add(known, gno)
            self._pending = None
            log_pos = int.from_bytes(raw[_LOG_POS : _LOG_POS + 4], "little")
            if self._source_file and log_pos:
                self.position = (self._source_file, log_pos)

    def _file_event(self, header: EventHeader, event: Event) -> None:
        if isinstance(event, PreviousGtidsEvent):
            if self.previous is None:
                self.previous = event.gtids.copy()
        elif isinstance(event, RotateEvent):
            if header.server_id != self.own_id or header.flags & LOG_EVENT_ARTIFICIAL_F:
                self._source_file = event.next_file
                if self._pending is None:
                    self.position = (self._source_file, event.position)


def _scan_older(channel: ChannelState, names: list[str], scans: list[RelayScan]) -> None:
    """Scan files before the newest, newest first, until one says where the source
    position is (the newest file may hold nothing complete yet).
    """
    own_id = channel.server.server_id
    for name in reversed(names):
        if scans[-1].position is not None:
            return
        scan = RelayScan(own_id)
        prefix = scan_valid_prefix(
            channel.relay_log.path(name), check_log_pos=False, visit=scan.visit, wanted=scan.WANTED
        )
        if prefix.error is not None:
            errorlog.log(
                _log,
                logging.ERROR,
                f"Relay log {name} is damaged before its end "
                f"({prefix.error}); the receiver position comes from the events "
                f"before it",
                code=10000,
            )
        scans.append(scan)


def _source_position(scans: list[RelayScan]) -> tuple[tuple[str, int], GtidSet] | None:
    """The newest source position the scans found (newest file first) and the GTIDs the
    relay log holds: the oldest scanned file's PREVIOUS_GTIDS and every complete
    transaction scanned. None when no file says (nothing was ever received).
    """
    position = next((scan.position for scan in scans if scan.position is not None), None)
    if position is None:
        return None
    retrieved = GtidSet()
    for scan in scans:
        retrieved = retrieved.union(scan.gtids)
    previous = next((scan.previous for scan in reversed(scans) if scan.previous is not None), None)
    return position, retrieved.union(previous) if previous is not None else retrieved


def _discard(channel: ChannelState) -> None:
    """relay_log_recovery = ON: a new relay log from the applier's position."""
    info = channel.relay_info
    if not channel.master_info.configured:
        return
    channel.relay_log.reset()
    channel.retrieved_gtids = GtidSet()
    if info.master_log_file:
        channel.boundary = (info.master_log_file, max(4, info.master_log_pos))
        channel.master_info.log_file, channel.master_info.log_pos = channel.boundary
    channel.relay_info = RelayLogInfo(
        master_log_file=info.master_log_file, master_log_pos=info.master_log_pos
    )
    errorlog.log(
        _log,
        logging.WARNING,
        f"Relay log recovery: relay logs discarded (relay_log_recovery=ON); the "
        f"receiver restarts at source log '{info.master_log_file or 'FIRST'}' position "
        f"{max(4, info.master_log_pos)}",
        code=13117,
    )
