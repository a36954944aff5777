"""The replica's one channel (named ''): its settings, its two threads, its status.

Control statements (CHANGE MASTER, START/STOP/RESET SLAVE) run under the channel's
lock, so two of them never interleave; the threads themselves report into the
channel (positions, errors) without that lock, as MySQL's report into the
master-info and relay-log-info objects.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

import attrs

from rpl.core import errorlog
from rpl.core.binlog.gtid import GtidSet
from rpl.core.execution.session import ServerContext
from rpl.core.replication import info as info_files
from rpl.core.replication.applier import Applier
from rpl.core.replication.info import MasterInfo, RelayLogInfo
from rpl.core.replication.receiver import Receiver
from rpl.core.replication.relay_log_recovery import recover_relay_log
from rpl.core.replication.relaylog import RelayLog
from rpl.core.threads import next_thread_id
from rpl.observers import RelayIOParam

_log = errorlog.logger("replica")


def _now_text() -> str:
    return time.strftime("%y%m%d %H:%M:%S")


class ReplicaChannel:
    """Settings, threads and status of the default replication channel."""

    def __init__(self, server: ServerContext, datadir: Path) -> None:
        """The channel of ``server``, its files (master.info, relay-log.info, the relay
        log) in ``datadir``; relay log recovery runs here, before any client connects.
        """
        self.server = server
        self.datadir = datadir
        self.lock = threading.RLock()
        self.master_info = info_files.load_master_info(self.datadir) or MasterInfo()
        self.relay_info = info_files.load_relay_log_info(self.datadir) or RelayLogInfo()
        self.retrieved_gtids = GtidSet.parse(self.master_info.retrieved_gtids)
        self.boundary = (self.master_info.log_file, self.master_info.log_pos)
        """The source position after the last whole transaction received: where a
        reconnect resumes, and what master.info records."""
        get = server.variables.get_global
        self.relay_log = RelayLog(
            self.datadir, str(get("relay_log")), server.server_id,
            get("binlog_checksum") == "CRC32",
            sync_every=server.variables.int_reader("sync_relay_log"),
            max_size=lambda: int(get("max_relay_log_size")  # type: ignore[arg-type]
                                 or get("max_binlog_size")),
            crash=server.crash)
        self.receiver: Receiver | None = None
        self.applier: Applier | None = None
        recover_relay_log(self)
        self.io_thread_id = 0
        self.sql_thread_id = 0
        self.io_connected = False
        self.last_io_error: tuple[int, str, str] = (0, "", "")
        self.last_sql_error: tuple[int, str, str] = (0, "", "")
        self.last_heartbeat = 0.0
        self.heartbeats = 0
        self.applied = 0

    # --------------------------------------------------------------- state
    @property
    def io_running(self) -> bool:
        """Whether the receiver thread runs."""
        return self.receiver is not None and self.receiver.running

    @property
    def sql_running(self) -> bool:
        """Whether the applier thread runs."""
        return self.applier is not None and self.applier.running

    def _every(self, variable: str) -> int:
        """A sync_* count; 0 means never by count (only at stop and relay log switches)."""
        value = int(self.server.variables.get_global(variable))  # type: ignore[arg-type]
        return value or 1 << 62

    def sync_master_info(self) -> int:
        """sync_source_info: write master.info every N transactions received."""
        return self._every("sync_source_info")

    def sync_relay_log_info(self) -> int:
        """sync_relay_log_info: write relay-log.info every N transactions applied."""
        return self._every("sync_relay_log_info")

    def save_master_info(self) -> None:
        """Write master.info: the settings and the last transaction boundary received."""
        if not self.master_info.configured:
            return
        record = attrs.evolve(self.master_info, log_file=self.boundary[0],
                              log_pos=self.boundary[1],
                              retrieved_gtids=str(self.retrieved_gtids))
        info_files.save(self.datadir, record)

    def save_relay_log_info(self) -> None:
        """Write relay-log.info (the applier's position)."""
        if self.master_info.configured:
            info_files.save(self.datadir, self.relay_info)

    # -------------------------------------------------------------- errors
    def set_io_error(self, errno: int, message: str, log: bool = True) -> None:
        """Last_IO_Errno/Error (logged to the error log as MySQL does)."""
        self.last_io_error = (errno, message, _now_text())
        if log:
            errorlog.log(_log, logging.ERROR, f"Replica I/O for channel '': {message}, "
                         f"Error_code: MY-{errno:06d}", code=10572)

    def clear_io_error(self) -> None:
        """The receiver connected: the last I/O error is history."""
        self.last_io_error = (0, "", "")

    def set_sql_error(self, errno: int, message: str) -> None:
        """Last_SQL_Errno/Error."""
        self.last_sql_error = (errno, message, _now_text())
        errorlog.log(_log, logging.ERROR, f"Replica SQL for channel '': {message}, "
                     f"Error_code: MY-{errno:06d}", code=10584)

    def io_stopped(self) -> None:
        """The receiver thread ended."""
        self.io_connected = False

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

    def reset(self, everything: bool) -> None:
        """RESET SLAVE [ALL] (threads stopped): relay logs and positions go; with ALL,
        the connection settings too.
        """
        self.relay_log.reset()
        self.relay_info = RelayLogInfo()
        self.retrieved_gtids = GtidSet()
        info = self.master_info
        param = RelayIOParam(self.server.server_id, 0, "", info.host, info.port, info.user,
                             "", 4, None)
        if everything:
            self.master_info = MasterInfo()
            info_files.remove(self.datadir, master=True, relay=True)
        else:
            info.log_file, info.log_pos, info.retrieved_gtids = "", 4, ""
            self.boundary = ("", 4)
            info_files.remove(self.datadir, master=False, relay=True)
            self.save_master_info()
        self.last_io_error = self.last_sql_error = (0, "", "")
        self.server.delegates.binlog_relay_io.after_reset_slave(param)

    def purge_relay_logs(self) -> None:
        """CHANGE MASTER moved the receiver: the relay log starts over at its position."""
        self.relay_log.reset()
        self.retrieved_gtids = GtidSet()
        info = self.master_info
        self.boundary = (info.log_file, info.log_pos)
        self.relay_info = RelayLogInfo(master_log_file=info.log_file,
                                       master_log_pos=info.log_pos)
        info_files.remove(self.datadir, master=False, relay=True)

    def start_at_boot(self) -> None:
        """Server start: resume a configured replica unless skip_replica_start."""
        if not self.master_info.configured or \
                self.server.variables.get_global("skip_replica_start"):
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
