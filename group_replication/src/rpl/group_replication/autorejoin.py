"""The auto-rejoin procedure (``group_replication_autorejoin_tries``, MySQL 8.0.16+).

A member the group expelled, or whose ``group_replication_unreachable_majority_timeout``
ran out, tries to join again by itself with the current option values: up to
``group_replication_autorejoin_tries`` attempts (0 turns it off), one at once and the
next ones 300 seconds apart, as MySQL waits. Meanwhile the member is ERROR and
``super_read_only``; ``group_replication_exit_state_action`` runs only once every
attempt failed. STOP GROUP_REPLICATION ends the procedure at once, and so does a
successful attempt.

The procedure runs on a thread of its own, shown in performance_schema.threads as
``thread/group_rpl/THD_autorejoin`` with the state ``Undergoing auto-rejoin procedure``
(MySQL's stage name), and it logs MySQL's lines: ``Started auto-rejoin procedure
attempt N of M`` before each attempt and ``Auto-rejoin procedure attempt N of M
finished. Member was [not] able to join the group.`` at its end.

``RPL_GR_AUTOREJOIN_INTERVAL`` (seconds) replaces the 300 s between attempts, as MySQL's
tests shorten it with a debug point: for tests only.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

from rpl.observers import ErrorLog, ThreadRegistry

THREAD_NAME = "thread/group_rpl/THD_autorejoin"
STAGE = "Undergoing auto-rejoin procedure"
INTERVAL = 300.0
"""Seconds between two attempts (MySQL's fixed five minutes)."""


def interval() -> float:
    """The wait between attempts: ``RPL_GR_AUTOREJOIN_INTERVAL`` or 300 s."""
    value = os.environ.get("RPL_GR_AUTOREJOIN_INTERVAL", "")
    try:
        return max(0.0, float(value)) if value else INTERVAL
    except ValueError:
        return INTERVAL


class AutoRejoin:
    """At most one auto-rejoin procedure at a time."""

    def __init__(self, threads: ThreadRegistry, log: ErrorLog) -> None:
        self._threads = threads
        self._log = log
        self._lock = threading.Lock()
        self._abort = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        """Whether a procedure is under way (its attempts or the waits between them)."""
        thread = self._thread
        return thread is not None and thread.is_alive()

    @property
    def aborted(self) -> bool:
        """Whether the procedure was told to end (an attempt under way gives up)."""
        return self._abort.is_set()

    def start(self, tries: int, attempt: Callable[[], bool], give_up: Callable[[], None]) -> None:
        """Run ``attempt`` up to ``tries`` times until it returns True; ``give_up`` after
        the last failed one (not after an abort). Nothing when one is already running.
        """
        with self._lock:
            if self.running:
                return
            self._abort.clear()
            self._thread = threading.Thread(
                target=self._run, args=(tries, attempt, give_up), name="rpl-gr-autorejoin"
            )
            self._thread.daemon = True
            self._thread.start()

    def abort(self) -> bool:
        """End the procedure (STOP GROUP_REPLICATION) and wait for its thread; whether one
        was running.
        """
        with self._lock:
            thread = self._thread
            self._abort.set()
        if thread is None or not thread.is_alive():
            return False
        if thread is not threading.current_thread():
            thread.join()
        return True

    def _run(self, tries: int, attempt: Callable[[], bool], give_up: Callable[[], None]) -> None:
        handle = self._threads.register_thread(THREAD_NAME)
        handle.set_state(STAGE)
        try:
            done = 0
            joined = False
            while done < tries and not self._abort.is_set():
                done += 1
                self._log.warning(
                    "Plugin group_replication reported: 'Started auto-rejoin procedure "
                    f"attempt {done} of {tries}'"
                )
                joined = attempt()
                if joined or (done < tries and self._abort.wait(interval())):
                    break
            if self._abort.is_set() and not joined:
                return
            self._log.warning(
                f"Plugin group_replication reported: 'Auto-rejoin procedure attempt {done} "
                f"of {tries} finished. Member was{'' if joined else ' not'} able to join "
                "the group.'"
            )
            if not joined:
                give_up()
        finally:
            handle.close()
