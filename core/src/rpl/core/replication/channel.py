"""The replica's receiver channels: the default one (named ''), always there, and the
named ones of multi-source replication (``CHANGE MASTER ... FOR CHANNEL 'name'``, and
Group Replication's ``group_replication_recovery``); each with its state, its two
threads, its files and its status.

Control statements (CHANGE MASTER, START/STOP/RESET SLAVE) run under the channel's
lock, so two of them never interleave; the threads themselves report into the
channel's state (:mod:`rpl.core.replication.channel_state`) without that lock.

Every channel is as crash-safe as the default one: its relay log is recovered when the
server starts (:func:`~rpl.core.replication.relay_log_recovery.recover_relay_log`), before
any client connects, and its applier skips whatever GTIDs this server executed already
(whichever channel applied them).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from rpl.core.binlog.gtid import GtidSet
from rpl.core.execution.session import ServerContext
from rpl.core.replication import info as info_files
from rpl.core.replication.applier import Applier
from rpl.core.replication.channel_state import ChannelState
from rpl.core.replication.receiver import Receiver
from rpl.core.replication.relay_log_recovery import recover_relay_log
from rpl.core.threads import next_thread_id

MAX_CHANNEL_NAME = 64
"""MySQL's limit on a channel name's length (ER_SLAVE_CHANNEL_NAME_INVALID_OR_TOO_LONG)."""


def valid_channel_name(name: str) -> bool:
    """Whether ``name`` may name a channel: at most :data:`MAX_CHANNEL_NAME` characters,
    none that a file name cannot hold (``/``, ``\\``, NUL: the channel's files are named
    after it).
    """
    return len(name) <= MAX_CHANNEL_NAME and not any(c in name for c in "/\\\0")


GROUP_REPLICATION_CHANNELS = frozenset(("group_replication_applier", "group_replication_recovery"))
"""The names MySQL reserves for Group Replication: a user's START/STOP SLAVE on them is
ER_SLAVE_CHANNEL_OPERATION_NOT_ALLOWED, and the statements without FOR CHANNEL leave
them alone."""


class ReplicaChannel(ChannelState):
    """Settings, threads and status of one receiver channel."""

    def __init__(self, server: ServerContext, datadir: Path, name: str = "") -> None:
        """Channel ``name`` of ``server``, its files (master.info, relay-log.info, the
        relay log) in ``datadir``; relay log recovery runs here, before any client connects.
        """
        super().__init__(server, datadir, name)
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

    def start_sql(self, until_sql_after_gtids: GtidSet | None = None) -> None:
        """Start the applier (caller holds the lock and checked it is stopped); with
        ``until_sql_after_gtids`` it stops once it has applied all of them.
        """
        self.until_sql_after_gtids = until_sql_after_gtids
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

    @property
    def for_group_replication(self) -> bool:
        """Whether the name is one Group Replication reserves."""
        return self.name in GROUP_REPLICATION_CHANNELS

    def start_at_boot(self) -> None:
        """Server start: resume a configured replica unless skip_replica_start (a Group
        Replication channel is the plugin's to start).
        """
        if (
            not self.master_info.configured
            or self.for_group_replication
            or self.server.variables.get_global("skip_replica_start")
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


class ReplicaChannels:
    """Every receiver channel of the server: the default one and the named ones, found
    at start from their master info files (each recovered as it is opened).

    ``lock`` orders the creation and removal of channels against the statements that
    act on several (START/STOP/RESET SLAVE without FOR CHANNEL); each channel's own
    ``lock`` orders the statements on it.
    """

    def __init__(self, server: ServerContext, datadir: Path) -> None:
        self.server = server
        self.datadir = datadir
        self.lock = threading.RLock()
        self.default = ReplicaChannel(server, datadir)
        self._named: dict[str, ReplicaChannel] = {
            name: ReplicaChannel(server, datadir, name)
            for name in info_files.saved_channels(datadir)
        }

    def get(self, name: str) -> ReplicaChannel | None:
        """Channel ``name`` (lower-cased: names are case-insensitive), or None."""
        name = name.lower()
        if not name:
            return self.default
        with self.lock:
            return self._named.get(name)

    def create(self, name: str) -> ReplicaChannel:
        """Channel ``name``, made (with no settings) if it does not exist."""
        name = name.lower()
        with self.lock:
            channel = self.get(name)
            if channel is None:
                channel = self._named[name] = ReplicaChannel(self.server, self.datadir, name)
            return channel

    def remove(self, name: str) -> None:
        """Forget named channel ``name`` (RESET SLAVE ALL removed its files; its threads
        are stopped).
        """
        with self.lock:
            self._named.pop(name.lower(), None)

    def all(self) -> list[ReplicaChannel]:
        """Every channel: the default one first, then the named ones by name."""
        with self.lock:
            return [self.default, *(self._named[n] for n in sorted(self._named))]

    def replica_channels(self) -> list[ReplicaChannel]:
        """The channels a statement without FOR CHANNEL acts on: all but Group
        Replication's (MySQL's slave channels).
        """
        return [c for c in self.all() if not c.for_group_replication]

    def count(self) -> int:
        """How many channels exist besides Group Replication's (the default one and the
        named ones): with more than one, a statement that acts on one channel needs FOR
        CHANNEL (ER_SLAVE_MULTIPLE_CHANNELS_CMD).
        """
        return len(self.replica_channels())

    def start_at_boot(self) -> None:
        """Server start: resume every configured channel unless skip_replica_start."""
        for channel in self.all():
            channel.start_at_boot()

    def shutdown(self) -> None:
        """Server shutdown: stop every channel's threads."""
        for channel in self.all():
            channel.shutdown()
