"""What the receiver and the applier share: a thread of one channel that can be asked to
stop, and reports its state to SHOW SLAVE STATUS and performance_schema.threads.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

from rpl.core import errorlog

if TYPE_CHECKING:
    from rpl.core.replication.channel_state import ChannelState
    from rpl.core.threads import RegisteredThread

_log = errorlog.logger("replica")


class StopRequest:
    """A channel thread's stop request, as ``threading.Event`` offers it (``set``,
    ``is_set``, ``wait``) but with ``is_set`` a plain attribute read: the receiver asks for
    every event it reads, and in the compiled build this class is native while
    ``Event.is_set`` is interpreted code.
    """

    def __init__(self) -> None:
        self._requested = False
        self._event = threading.Event()

    def set(self) -> None:
        """Request the stop and wake :meth:`wait`."""
        self._requested = True
        self._event.set()

    def is_set(self) -> bool:
        """Whether the stop was requested."""
        return self._requested

    def wait(self, timeout: float | None = None) -> bool:
        """Sleep until the stop is requested or ``timeout`` seconds pass; whether it was."""
        return self._event.wait(timeout)


class ChannelThread:
    """A replication thread of ``channel``; subclasses implement :meth:`run`."""

    thread_name = "rpl-replica"

    def __init__(self, channel: ChannelState) -> None:
        self.channel = channel
        self.server = channel.server
        self.stop_requested = StopRequest()
        self.thread = threading.Thread(target=self.run, name=self.thread_name, daemon=True)
        self.running = False
        self.state = ""
        self.registered: RegisteredThread | None = None

    def run(self) -> None:
        """The thread's body."""
        raise NotImplementedError

    def start(self) -> None:
        """Start the thread."""
        self.running = True
        self.thread.start()

    def interrupt(self) -> None:
        """Wake the thread from a blocking wait so that it sees the stop request."""

    def stop(self) -> None:
        """Ask the thread to end and wait for it."""
        self.stop_requested.set()
        self.interrupt()
        if self.thread.is_alive() and self.thread is not threading.current_thread():
            self.thread.join()

    def exited(self, registered: RegisteredThread, message: str) -> None:
        """The thread's last step: not running, no state, out of the thread registry, and
        MySQL's line saying where it stopped (``message``) in the error log.
        """
        self.running = False
        self.set_state("")
        registered.close()
        errorlog.log(_log, logging.INFO, message, code=10689)

    def set_state(self, state: str) -> None:
        """The thread's state (Slave_IO_State, PROCESSLIST_STATE...)."""
        self.state = state
        if self.registered is not None:
            self.registered.set_state(state)
