"""Cutting a crashed log back to its last complete transaction.

Both the server's crash recovery (the binlog) and the replica's relay log recovery cut a
log's tail the same way: what follows the last complete transaction, or the first damaged
event, is a crash artefact and goes, logged to the error log; damage with intact events
after it is not a tail and is refused. ``mark_closed`` then clears the in-use flag of a
file recovery has finished with.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Collection
from pathlib import Path

from rpl.core import errorlog
from rpl.core.binlog.logfile import LogCorrupt, PrefixVisitor, intact_event_after, scan_valid_prefix
from rpl.core.binlog.writer import FLAGS_OFFSET

_log = errorlog.logger("recovery")


def truncate_tail(
    path: Path,
    kind: str = "binlog",
    *,
    relay: bool = False,
    visit: PrefixVisitor | None = None,
    wanted: Collection[int] = (),
) -> None:
    """Cut ``path`` after its last complete transaction, logging what was removed.

    ``relay``: a relay log (events carry the source's positions; never cut below the
    magic), where damage with intact events after it is not a tail to cut: LogCorrupt
    is raised and nothing is truncated. ``kind`` names the file in the message
    ("Truncating relay log X ..."). ``visit`` and ``wanted``: see scan_valid_prefix.
    """
    prefix = scan_valid_prefix(path, check_log_pos=not relay, visit=visit, wanted=wanted)
    if relay and prefix.error and not prefix.truncated:
        following = intact_event_after(path, prefix.end)
        if following is not None:
            raise LogCorrupt(
                str(path),
                prefix.end,
                f"damaged event ({prefix.error}) with "
                f"intact events after it, from position {following}",
            )
    keep = max(prefix.transaction_end, 4) if relay else prefix.transaction_end
    size = path.stat().st_size
    if keep >= size:
        return
    errorlog.log(
        _log,
        logging.WARNING,
        f"Truncating {kind} {path.name} to position {keep} (was {size} bytes: "
        f"{prefix.error or 'the last transaction is incomplete'})",
        code=10000 if relay else 11809,
    )
    with path.open("r+b") as f:
        f.truncate(keep)
        os.fsync(f.fileno())


def mark_closed(path: Path) -> None:
    """Clear LOG_EVENT_BINLOG_IN_USE_F of a file recovery has finished with."""
    with path.open("r+b") as f:
        f.seek(FLAGS_OFFSET)
        flags = f.read(1)
        if flags and flags[0] & 1:
            f.seek(FLAGS_OFFSET)
            f.write(bytes((flags[0] & 0xFE,)))
            os.fsync(f.fileno())
