"""The replica's one channel (named ''): its state, its two threads, its status.

Control statements (CHANGE MASTER, START/STOP/RESET SLAVE) run under the channel's
lock, so two of them never interleave; the threads themselves report into the
channel's state (:mod:`rpl.core.replication.channel_state`) without that lock.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from rpl.core.execution.session import ServerContext
from rpl.core.replication.applier import Applier
from rpl.core.replication.channel_state import ChannelState
from rpl.core.replication.receiver import Receiver
from rpl.core.replication.relay_log_recovery import recover_relay_log
from rpl.core.threads import next_thread_id


class ReplicaChannel(ChannelState):
    """Settings, threads and status of the default replication channel."""

    def __init__(self, server: ServerContext, datadir: Path) -> None:
        """The channel of ``server``, its files (master.info, relay-log.info, the relay
        log) in ``datadir``; relay log recovery runs here, before any client connects.
        """
        super().__init__(server, datadir)
        self.lock = threading.RLock()
        self.receiver: Receiver | None = None
        self.applier: Applier | None = None
        recover_relay_log(self)

    # --------------------------------------------------------------- state
    @property
    def io_running(self) -> bool:
        """Whether the receiver thread runs."""
        return self.receiver is not None and self.receiver.running

    @property
    def sql_running(self) -> bool:
        """Whether the applier thread runs."""
        return self.applier is not None and self.applier.running

    # ------------------------------------------------------------- control
    def start_io(self) -> None:
        """Start the receiver (caller holds the lock and checked it is stopped)."""
        self.io_thread_id = next_thread_id()
        self.last_io_error = (0, "", "")
        self.master_info.log_file, self.master_info.log_pos = self.boundary
        self.receiver = Receiver(self)
        self.receiver.start()

    def start_sql(self) -> None:
        """Start the applier (caller holds the lock and checked it is stopped)."""
        self.sql_thread_id = next_thread_id()
        self.last_sql_error = (0, "", "")
        self.applier = Applier(self)
        self.applier.start()

    def stop_io(self) -> None:
        """Stop the receiver and wait for it."""
        if self.receiver is not None:
            self.receiver.stop()

    def stop_sql(self) -> None:
        """Stop the applier (after its current transaction) and wait for it."""
        if self.applier is not None:
            self.applier.stop()

    def start_at_boot(self) -> None:
        """Server start: resume a configured replica unless skip_replica_start."""
        if not self.master_info.configured or self.server.variables.get_global(
            "skip_replica_start"
        ):
            return
        with self.lock:
            self.start_sql()
            self.start_io()

    def shutdown(self) -> None:
        """Server shutdown: stop both threads."""
        with self.lock:
            self.stop_io()
            self.stop_sql()

    # -------------------------------------------------------------- status
    def seconds_behind(self) -> int | None:
        """Seconds_Behind_Master: NULL without a running applier (or with nothing more to
        read and no receiver); 0 when caught up; else the age of what is being applied.
        """
        applier = self.applier
        if not self.sql_running or applier is None:
            return None
        if applier.caught_up:
            return 0 if self.io_running else None
        since = applier.behind_since()
        if since is None:
            return 0
        return max(0, int(time.time() - since / 1e6))

    def io_state(self) -> str:
        """Slave_IO_State."""
        return self.receiver.state if self.io_running and self.receiver else ""

    def sql_state(self) -> str:
        """Slave_SQL_Running_State."""
        return self.applier.state if self.sql_running and self.applier else ""
