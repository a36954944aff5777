"""Crash and fault points for tests: ``SET GLOBAL debug = '+d,<name>'`` or ``--debug=+d,<name>``.

A crash point is a named place in the commit path. When the server reaches an armed
point it kills its own process with SIGKILL at once: no cleanup, no buffered data
flushed, no shutdown hooks, exactly like ``kill -9`` at that instant. Tests arm a
point, run a workload, and check what a restart recovers.

The variable keeps MySQL's DBUG syntax for the part that matters here: ``+d,a,b`` arms
``a`` and ``b``, ``-d,a`` disarms ``a``, ``d,a`` arms exactly ``a``, and ``''`` disarms all.
"""

from __future__ import annotations

import os
import signal
import threading
import time

CRASH_POINTS = (
    "crash_before_flush_binlog",
    "half_binlogged_transaction",
    "crash_after_flush_binlog",
    "crash_after_sync_binlog",
    "crash_after_engine_commit",
)
"""The commit path's points, in the order a commit reaches them:
before the group is written; in the middle of writing it (half of the group's bytes
reach the file); after the write, before the sync; after the sync, before engine
commit; after engine commit, before the client's OK."""

APPLIER_CRASH_POINTS = (
    "crash_before_update_pos",
    "crash_after_update_pos_before_apply",
    "crash_after_apply",
    "crash_after_commit_before_update_pos",
    "crash_after_commit_and_update_pos",
)
"""The applier's points (MySQL's names), reached only by a commit group that holds a
replicated transaction. The applier's position is the GTID it writes to this server's
binlog, so "update pos" is the binlog write: before the group is written; after it is
written and synced, before engine commit; after engine commit, before the applier notes
the transaction done; after that, before relay-log.info is written; after relay-log.info
is written."""

RECEIVER_CRASH_POINTS = (
    "crash_after_relay_log_write_before_master_info",
    "crash_in_relay_log_event_write",
    "crash_after_master_info_before_after_queue_event",
)
"""The receiver's points: after the relay-log write of the event that ends a
transaction, before master.info; in the middle of writing an event to the relay log
(half of its bytes reach the file); after master.info is written, before
``after_queue_event``."""


FAULT_POINTS = (
    "dump_cut_mid_transaction",
    "binlog_write_error",
    "stop_io_inside_transaction",
)
"""One-shot faults (disarmed when hit). ``dump_cut_mid_transaction``: the dump thread
drops its replica's connection right after sending a transaction's BEGIN, so the replica
holds half a transaction. ``binlog_write_error``: the next group's binlog write fails as
on a full disk (ENOSPC), before a byte is written. ``stop_io_inside_transaction``: the
receiver stops, as STOP SLAVE IO_THREAD would stop it, right after it relays the first
event after a transaction's BEGIN (a statement, or in row format a TABLE_MAP or
ROWS_QUERY), so its relay log ends inside that transaction."""


SYNC_POINTS = (
    "pause_before_sync_binlog",
    "pause_after_after_sync",
    "pause_plugin_applier",
)
"""Pause points: the thread that reaches an armed one waits there until it is disarmed.
``pause_before_sync_binlog``: a commit group leader after the group is written and
``after_flush`` ran, before the binlog sync, so a test can check that no dump thread
sends the group before it is durable.
``pause_after_after_sync``: a commit group leader after ``after_sync`` returned (with
AFTER_SYNC semisync: acknowledged), before engine commit, so a test can look at every
node while the transaction is durable and replicated but not yet visible on the source.
``pause_plugin_applier``: a plugin's applier channel (Group Replication's
``group_replication_applier``) before it applies its next transaction, so a test can
read on a member whose applier is behind the group."""


class CrashPoints:
    """The armed crash points (the ``debug`` system variable)."""

    def __init__(self) -> None:
        self._armed: frozenset[str] = frozenset()
        self._lock = threading.Lock()

    @property
    def armed(self) -> frozenset[str]:
        """The names now armed."""
        return self._armed

    def apply(self, spec: str) -> None:
        """Apply a DBUG-style spec (``+d,a``, ``-d,a``, ``d,a`` or ``''``)."""
        text = spec.strip().strip("'\"")
        with self._lock:
            if not text:
                self._armed = frozenset()
                return
            mode = text[0] if text[0] in "+-" else ""
            body = text[1:] if mode else text
            names = (
                {n.strip() for n in body.split(",")[1:] if n.strip()}
                if body.startswith("d")
                else set()
            )
            if mode == "+":
                self._armed = self._armed | names
            elif mode == "-":
                self._armed = self._armed - names
            else:
                self._armed = frozenset(names)

    def describe(self) -> str:
        """The variable's value as SELECT @@debug shows it."""
        return "d," + ",".join(sorted(self._armed)) if self._armed else ""

    def fire_once(self, name: str) -> bool:
        """Whether the fault ``name`` is armed; it is disarmed as it fires."""
        if name not in self._armed:
            return False
        with self._lock:
            if name not in self._armed:
                return False
            self._armed = self._armed - {name}
            return True

    def pause(self, name: str) -> None:
        """Wait here while ``name`` is armed (a sync point)."""
        while name in self._armed:
            time.sleep(0.01)

    def hit(self, name: str) -> None:
        """Kill the process now if ``name`` is armed."""
        if name in self._armed:
            os.kill(os.getpid(), signal.SIGKILL)
