"""The source's semisync state: which positions wait for an ACK, the ACKs, the counters.

What holds:

* ``record`` (``after_flush``) notes each commit group's end; ``wait`` (``after_sync``)
  returns once semisync is off or an ACK at or past the position arrived, and never waits
  longer than the timeout: a timeout switches semisync off (a warning in the error log,
  ``no_times`` + 1) and releases every waiter; while off, commits do not wait and count as
  ``no_tx``.
* ``needs_ack`` says which events get the sync flag: the end of a recorded group, and,
  while semisync is off, an event at or past the largest recorded end, whose ACK
  switches semisync back on.
* One ACK from any semisync replica releases a commit (there is no
  ``wait_for_slave_count``); the acknowledged position only moves forward.
* One lock and one condition: an ACK wakes every waiter, each checks its own position.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import attrs

from rpl.observers import ErrorLog

Position = tuple[str, int]
"""A binlog position, (file name, offset): file names have a fixed-width number, so
positions order as tuples."""


@attrs.define
class Counters:
    """The status counters (``Rpl_semi_sync_master_*``); times in microseconds."""

    yes_tx: int = 0
    no_tx: int = 0
    no_times: int = 0
    tx_waits: int = 0
    tx_wait_time: int = 0
    net_waits: int = 0
    net_wait_time: int = 0


class InlineAckState:
    """One source's semisync state."""

    def __init__(
        self, enabled: Callable[[], bool], timeout_ms: Callable[[], int], error_log: ErrorLog
    ) -> None:
        self.enabled = enabled
        self.timeout_ms = timeout_ms
        self.log = error_log
        self.changed = threading.Condition()
        self.counters = Counters()
        self.state_on = False
        self.clients = 0
        self.wait_sessions = 0
        self.awaited: set[Position] = set()
        """Group ends recorded while on and not yet acknowledged: the events to flag."""
        self.reply: Position | None = None
        """The largest position acknowledged."""
        self.commit: Position | None = None
        """The largest group end recorded."""

    @property
    def status(self) -> bool:
        """Rpl_semi_sync_master_status."""
        return self.state_on and self.enabled()

    # ------------------------------------------------------------ on and off
    def enable(self) -> None:
        """rpl_semi_sync_master_enabled = ON: on until a timeout."""
        with self.changed:
            if not self.state_on:
                self.state_on = True
                self.log.note("Semi-sync replication switched ON.")

    def disable(self) -> None:
        """rpl_semi_sync_master_enabled = OFF: off, every waiter released."""
        with self.changed:
            self._switch_off(log=False)
        self.log.note("Semi-sync replication disabled on the source.")

    def shutdown(self) -> None:
        """Server shutdown: every waiter released, nothing waits any more."""
        with self.changed:
            if self.wait_sessions:
                self.log.warning("SEMISYNC: Forced shutdown. Some updates might not be replicated.")
            self.state_on = False
            self.awaited.clear()
            self.changed.notify_all()

    def reset(self) -> None:
        """RESET MASTER: positions forgotten, waiters released, counters zeroed."""
        with self.changed:
            self.awaited.clear()
            self.reply = self.commit = None
            self.counters = Counters()
            self.changed.notify_all()

    def reset_counters(self) -> None:
        """FLUSH STATUS."""
        with self.changed:
            self.counters = Counters()

    def _switch_off(self, log: bool) -> None:
        if self.state_on:
            self.state_on = False
            self.counters.no_times += 1
            if log:
                self.log.warning("Semi-sync replication switched OFF.")
        self.awaited.clear()
        self.changed.notify_all()

    # ---------------------------------------------------------------- clients
    def add_client(self, start: Position) -> None:
        """A semisync dump starts at ``start``: the replica holds what precedes it."""
        with self.changed:
            self.clients += 1
        self.report_ack(start)

    def remove_client(self) -> None:
        """A semisync dump ended."""
        with self.changed:
            self.clients -= 1

    # ------------------------------------------------------------ commit side
    def record(self, position: Position) -> None:
        """``after_flush``: a group ending at ``position`` is in the binlog."""
        if not self.enabled():
            return
        with self.changed:
            if self.state_on:
                self.awaited.add(position)
            if self.commit is None or position > self.commit:
                self.commit = position

    def needs_ack(self, position: Position) -> bool:
        """Whether the event ending at ``position`` gets the sync flag."""
        with self.changed:
            if position in self.awaited:
                return self.enabled()
            if self.state_on or self.commit is None:
                return False
            return position >= self.commit and self.enabled()

    def wait(self, position: Position) -> None:
        """``after_sync``: wait until ``position`` is acknowledged, semisync switches off,
        or the timeout passes (which switches it off).
        """
        if not self.enabled():
            return
        started = time.monotonic()
        deadline = started + self.timeout_ms() / 1000
        with self.changed:
            if not self.state_on:
                self.counters.no_tx += 1
                return
            waited = False
            self.wait_sessions += 1
            try:
                while self.state_on and not self._acknowledged(position):
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        self._timed_out(position)
                        break
                    waited = True
                    self.changed.wait(remaining)
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
        self._switch_off(log=True)

    # --------------------------------------------------------------- ACK side
    def report_ack(self, position: Position) -> None:
        """A replica holds the binlog up to ``position``: release the waiters at or below
        it, or switch semisync back on once it reaches the largest recorded end.
        """
        with self.changed:
            if self.reply is not None and position <= self.reply:
                return
            self.reply = position
            self.awaited = {end for end in self.awaited if end > position}
            if (
                not self.state_on
                and self.enabled()
                and (self.commit is None or position >= self.commit)
            ):
                self.state_on = True
                self.log.note(
                    f"Semi-sync replication switched ON at ({position[0]}, {position[1]})."
                )
            self.changed.notify_all()
