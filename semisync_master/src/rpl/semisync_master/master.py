"""The semisync source's state: waits, ACKs, switching off and on, counters (WL#1720,
WL#6355).

What holds:

* ``record`` (``after_flush``) notes every group end; ``wait`` (``after_sync`` with
  AFTER_SYNC, ``after_commit`` with AFTER_COMMIT) returns once semisync is off or the
  position is acknowledged by ``wait_for_slave_count`` distinct replicas; it never
  waits longer than ``rpl_semi_sync_master_timeout`` ms.
* A timeout switches semisync off (a warning in the error log, ``no_times`` + 1) and
  releases every waiter; while off, commits do not wait and count as ``no_tx``.
* While off, the events at or past the largest position recorded are still flagged; the
  first ACK at or past it switches semisync back on (a note in the error log).
* With ``wait_no_slave`` OFF, semisync switches off as soon as fewer than
  ``wait_for_slave_count`` semisync replicas are connected.
* The reply position only moves forward; an older ACK changes nothing.
* Every counter MySQL shows is kept here; ``reset_counters`` is FLUSH STATUS and RESET
  MASTER (which also forgets positions: the binlog starts again from its first file).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import attrs

from rpl.observers import ErrorLog
from rpl.semisync_master.active import AckTracker, ActiveTransactions, Position


@attrs.define
class Counters:
    """The status counters (``Rpl_semi_sync_master_*``)."""

    yes_tx: int = 0
    no_tx: int = 0
    no_times: int = 0
    timefunc_failures: int = 0
    wait_pos_backtraverse: int = 0
    tx_waits: int = 0
    tx_wait_time: int = 0
    """Microseconds, summed over ``tx_waits``."""
    net_waits: int = 0
    net_wait_time: int = 0
    """Microseconds a dump thread waited for ACKs (only without the ACK receiver)."""


@attrs.frozen
class Settings:
    """Readers of the plugin's variables (their current global values)."""

    enabled: Callable[[], bool]
    timeout_ms: Callable[[], int]
    wait_no_slave: Callable[[], bool]
    wait_for_slave_count: Callable[[], int]


class SemisyncMaster:
    """One source's semisync state (the plugin's ``repl_semisync``)."""

    def __init__(self, settings: Settings, error_log: ErrorLog) -> None:
        self.settings = settings
        self.log = error_log
        self.lock = threading.Lock()
        self.active = ActiveTransactions(self.lock)
        self.acks = AckTracker()
        self.counters = Counters()
        self.state_on = False
        """Semisync is switched on (Rpl_semi_sync_master_status, while enabled)."""
        self.clients = 0
        self.wait_sessions = 0
        self.reply: Position | None = None
        """The largest position acknowledged by enough replicas."""
        self.commit: Position | None = None
        """The largest transaction end recorded."""
        self._max_wait: Position | None = None

    # ------------------------------------------------------------------ status
    @property
    def status(self) -> bool:
        """Rpl_semi_sync_master_status."""
        return self.state_on and self.settings.enabled()

    def avg_wait_time(self) -> int:
        """Rpl_semi_sync_master_tx_avg_wait_time (µs)."""
        waits = self.counters.tx_waits
        return self.counters.tx_wait_time // waits if waits else 0

    def avg_net_wait_time(self) -> int:
        """Rpl_semi_sync_master_net_avg_wait_time (µs)."""
        waits = self.counters.net_waits
        return self.counters.net_wait_time // waits if waits else 0

    def reset_counters(self) -> None:
        """FLUSH STATUS: every counter from zero."""
        with self.lock:
            self.counters = Counters()

    # -------------------------------------------------------- enable/disable
    def enable(self) -> None:
        """rpl_semi_sync_master_enabled = ON: semisync is on until a timeout."""
        with self.lock:
            if not self.state_on:
                self.state_on = True
                self.log.note("Semi-sync replication switched ON.")

    def disable(self) -> None:
        """rpl_semi_sync_master_enabled = OFF: off, every waiter released."""
        with self.lock:
            self._switch_off_locked(log=False)
        self.log.note("Semi-sync replication disabled on the source.")

    def shutdown(self) -> None:
        """Server shutdown: release every waiter; nothing waits from now on."""
        with self.lock:
            if self.wait_sessions:
                self.log.warning("SEMISYNC: Forced shutdown. Some updates might not be replicated.")
            self.state_on = False
            self.active.release_all()

    def reset(self) -> None:
        """RESET MASTER: positions forgotten (waiters released), counters zeroed; the
        on/off state stays.
        """
        with self.lock:
            self.active.release_all()
            self.acks.clear()
            self.reply = self.commit = self._max_wait = None
            self.counters = Counters()

    # ---------------------------------------------------------------- clients
    def add_client(self) -> None:
        """A semisync replica's dump started."""
        with self.lock:
            self.clients += 1

    def remove_client(self) -> None:
        """A semisync replica's dump ended."""
        with self.lock:
            self.clients -= 1
            if (
                self.state_on
                and not self.settings.wait_no_slave()
                and self.clients < self.settings.wait_for_slave_count()
            ):
                self._switch_off_locked(log=True)

    # ------------------------------------------------------------- commit side
    def record(self, position: Position) -> None:
        """``after_flush``: a group ending at ``position`` is in the binlog."""
        if not self.settings.enabled():
            return
        with self.lock:
            if self.state_on:
                self.active.add(position)
            if self.commit is None or position > self.commit:
                self.commit = position

    def needs_ack(self, position: Position) -> bool:
        """Whether the event ending at ``position`` gets the sync flag: it ends a recorded
        transaction, or semisync is off and it is at or past the largest one (the ACK that
        can switch semisync back on).
        """
        with self.lock:  # most events end no recorded transaction, with semisync on:
            if self.active.is_end(position):  # settled without reading a variable
                return self.settings.enabled()
            if self.state_on:
                return False
            off_past_commit = self.commit is not None and position >= self.commit
        return off_past_commit and self.settings.enabled()

    def wait(self, position: Position) -> None:
        """Wait (AFTER_SYNC or AFTER_COMMIT) until ``position`` is acknowledged, semisync
        switches off, or the timeout passes (which switches it off).
        """
        if not self.settings.enabled():
            return
        started = time.monotonic()
        deadline = started + self.settings.timeout_ms() / 1000
        with self.lock:
            if not self.state_on:
                self.counters.no_tx += 1
                return
            if self._max_wait is not None and position < self._max_wait:
                self.counters.wait_pos_backtraverse += 1
            else:
                self._max_wait = position
            waited = False
            self.wait_sessions += 1
            try:
                while self.state_on and not self._acknowledged(position):
                    condition = self.active.condition_for(position)
                    remaining = deadline - time.monotonic()
                    if condition is None or remaining <= 0:
                        if remaining <= 0:
                            self._timed_out(position)
                        break
                    waited = True
                    condition.wait(remaining)
            finally:
                self.wait_sessions -= 1
            if self._acknowledged(position):
                self.counters.yes_tx += 1
            else:
                self.counters.no_tx += 1
            if waited:
                self.counters.tx_waits += 1
                self.counters.tx_wait_time += int((time.monotonic() - started) * 1e6)

    def _acknowledged(self, position: Position) -> bool:
        return self.reply is not None and self.reply >= position

    def _timed_out(self, position: Position) -> None:
        reply = self.reply or ("", 0)
        self.log.warning(
            f"Timeout waiting for reply of binlog (file: {position[0]}, pos: "
            f"{position[1]}), semi-sync up to file {reply[0]}, position "
            f"{reply[1]}."
        )
        self._switch_off_locked(log=True)

    def _switch_off_locked(self, log: bool) -> None:
        if self.state_on:
            self.state_on = False
            self.counters.no_times += 1
            if log:
                self.log.warning("Semi-sync replication switched OFF.")
        self.active.release_all()

    # ---------------------------------------------------------------- ACK side
    def report_ack(self, server_id: int, position: Position) -> None:
        """Replica ``server_id`` holds the binlog up to ``position``: release the waiters
        it completes, or switch semisync back on.
        """
        with self.lock:
            self.acks.report(server_id, position)
            reached = self.acks.reached_by(self.settings.wait_for_slave_count())
            if reached is None or (self.reply is not None and reached <= self.reply):
                return
            self.reply = reached
            if (
                not self.state_on
                and self.settings.enabled()
                and (self.commit is None or reached >= self.commit)
            ):
                self.state_on = True
                self.log.note(f"Semi-sync replication switched ON at ({reached[0]}, {reached[1]}).")
            self.active.release_up_to(reached)
