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


FAULT_POINTS = (
    "dump_cut_mid_transaction",
)
"""One-shot faults (disarmed when hit): the dump thread drops its replica's connection
right after sending a transaction's BEGIN, so the replica holds half a transaction."""


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
            names = {n.strip() for n in body.split(",")[1:] if n.strip()} \
                if body.startswith("d") else set()
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

    def hit(self, name: str) -> None:
        """Kill the process now if ``name`` is armed."""
        if name in self._armed:
            os.kill(os.getpid(), signal.SIGKILL)
