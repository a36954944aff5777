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
* ``relay_log_recovery`` = ON: the relay logs are discarded and the receiver restarts
  from the applier's position; the applier skips whatever GTIDs it has already executed,
  so an applier position that lags is safe.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from rpl.core import errorlog
from rpl.core.binlog.events import (
    GTID_LOG_EVENT,
    LOG_EVENT_ARTIFICIAL_F,
    ROTATE_EVENT,
    GtidEvent,
    PreviousGtidsEvent,
    RotateEvent,
)
from rpl.core.binlog.gtid import GtidSet
from rpl.core.binlog.logfile import LogError, TransactionTracker, read_events
from rpl.core.replication.info import RelayLogInfo
from rpl.core.server.recovery import truncate_tail

if TYPE_CHECKING:
    from rpl.core.replication.channel import ReplicaChannel

_log = errorlog.logger("relay_log_recovery")


def recover_relay_log(channel: ReplicaChannel) -> None:
    """Make the relay log and the receiver position agree (see the module docstring)."""
    if channel.server.variables.get_global("relay_log_recovery"):
        _discard(channel)
        return
    names = channel.relay_log.index.names()
    present = [n for n in names if channel.relay_log.path(n).exists()]
    if not present:
        return
    if present != names:
        channel.relay_log.index.rewrite(present)
        errorlog.log(_log, logging.WARNING, f"Relay log files missing from the index were "
                     f"dropped from it: {sorted(set(names) - set(present))}", code=10000)
    truncate_tail(channel.relay_log.path(present[-1]), "relay log", relay=True)
    found = _source_position(channel, present)
    if found is None:
        return
    (log_file, log_pos), retrieved = found
    channel.boundary = (log_file, log_pos)
    channel.master_info.log_file, channel.master_info.log_pos = log_file, log_pos
    channel.retrieved_gtids = retrieved
    errorlog.log(_log, logging.INFO, f"Relay log recovery: the receiver restarts at source log "
                 f"'{log_file}' position {log_pos}; retrieved GTIDs '{retrieved}'", code=10000)


def _source_position(channel: ReplicaChannel,
                     names: list[str]) -> tuple[tuple[str, int], GtidSet] | None:
    """The source position after the last complete transaction in the relay log, and the
    GTIDs the relay log holds; None when no file says (nothing was ever received).
    """
    own_id = channel.server.server_id
    position: tuple[str, int] | None = None
    retrieved: GtidSet | None = None
    for name in names:
        source_file = ""
        tracker = TransactionTracker()
        pending = None
        try:
            for entry in read_events(channel.relay_log.path(name), check_log_pos=False):
                header, event = entry.header, entry.event
                if isinstance(event, PreviousGtidsEvent) and retrieved is None:
                    retrieved = event.gtids.copy()
                    continue
                if header.type_code == ROTATE_EVENT and isinstance(event, RotateEvent):
                    if header.server_id != own_id or header.flags & LOG_EVENT_ARTIFICIAL_F:
                        source_file = event.next_file
                        if not pending:
                            position = (source_file, event.position)
                    continue
                if header.type_code == GTID_LOG_EVENT and isinstance(event, GtidEvent):
                    pending = event
                if tracker.ends_group(header, event) and pending is not None:
                    if retrieved is None:
                        retrieved = GtidSet()
                    retrieved.add(pending.sid, pending.gno)
                    pending = None
                    if source_file and header.log_pos:
                        position = (source_file, header.log_pos)
        except LogError as exc:
            errorlog.log(_log, logging.ERROR, f"Relay log {name} is damaged before its end "
                         f"({exc}); the receiver position comes from the events before it",
                         code=10000)
    if position is None:
        return None
    return position, retrieved or GtidSet()


def _discard(channel: ReplicaChannel) -> None:
    """relay_log_recovery = ON: a new relay log from the applier's position."""
    info = channel.relay_info
    if not channel.master_info.configured:
        return
    channel.relay_log.reset()
    channel.retrieved_gtids = GtidSet()
    if info.master_log_file:
        channel.boundary = (info.master_log_file, max(4, info.master_log_pos))
        channel.master_info.log_file, channel.master_info.log_pos = channel.boundary
    channel.relay_info = RelayLogInfo(master_log_file=info.master_log_file,
                                      master_log_pos=info.master_log_pos)
    errorlog.log(_log, logging.WARNING,
                 f"Relay log recovery: relay logs discarded (relay_log_recovery=ON); the "
                 f"receiver restarts at source log '{info.master_log_file or 'FIRST'}' position "
                 f"{max(4, info.master_log_pos)}", code=13117)
