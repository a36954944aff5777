"""The state of the replica's channel that its threads share: settings, positions, the
relay log, errors.

The receiver and the applier report into it (positions, errors) without the channel's
lock, as MySQL's threads report into the master-info and relay-log-info objects; the
control statements change it under :class:`rpl.core.replication.channel.ReplicaChannel`'s
lock. The threads see the channel only as this state, so they never reach its control.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

import attrs

from rpl.core import errorlog
from rpl.core.binlog.gtid import GtidSet
from rpl.core.execution.session import ServerContext
from rpl.core.replication import info as info_files
from rpl.core.replication.info import MasterInfo, RelayLogInfo
from rpl.core.replication.relaylog import RelayLog
from rpl.observers import RelayIOParam

_log = errorlog.logger("replica")


def _now_text() -> str:
    return time.strftime("%y%m%d %H:%M:%S")


class ChannelState:
    """What the channel's threads share and report into: its settings (master.info), the
    applier's position (relay-log.info), the relay log, the last errors.
    """

    def __init__(self, server: ServerContext, datadir: Path, name: str = "") -> None:
        """Channel ``name`` as the files in ``datadir`` (master.info, relay-log.info, the
        relay log; ``master-<name>.info``, ``relay-log-<name>.info`` and
        ``<relay_log>-<name>.NNNNNN`` for a named channel) left it.
        """
        self.server = server
        self.datadir = datadir
        self.name = name
        self.master_info = info_files.load_master_info(self.datadir, name) or MasterInfo()
        self.relay_info = info_files.load_relay_log_info(self.datadir, name) or RelayLogInfo()
        self.replicate_same_server_id = name.lower().startswith("group_replication_")
        """Whether the receiver relays events that originated on this server: only on
        Group Replication's channels, as MySQL's plugin creates them (a member that
        rejoins must get back what the group certified of its own before it crashed
        without logging it); never elsewhere (loop prevention, MySQL's
        ``replicate_same_server_id`` = 0). Users cannot create those channels (3139)."""
        self.until_sql_after_gtids: GtidSet | None = None
        """START SLAVE UNTIL SQL_AFTER_GTIDS: the applier stops once it has applied all
        of these (None: no UNTIL condition)."""
        self.retrieved_gtids = GtidSet.parse(self.master_info.retrieved_gtids)
        self.boundary = (self.master_info.log_file, self.master_info.log_pos)
        """The source position after the last whole transaction received: where a
        reconnect resumes, and what master.info records."""
        get = server.variables.get_global
        self.relay_log = RelayLog(
            self.datadir,
            str(get("relay_log")) + (f"-{name}" if name else ""),
            server.server_id,
            get("binlog_checksum") == "CRC32",
            sync_every=server.variables.int_reader("sync_relay_log"),
            max_size=lambda: (
                server.variables.global_int("max_relay_log_size")
                or server.variables.global_int("max_binlog_size")
            ),
            crash=server.crash,
        )
        self.io_thread_id = 0
        self.sql_thread_id = 0
        self.io_connected = False
        self.last_io_error: tuple[int, str, str] = (0, "", "")
        self.last_sql_error: tuple[int, str, str] = (0, "", "")
        self.last_heartbeat = 0.0
        self.heartbeats = 0
        self.applied = 0

    # --------------------------------------------------------------- state
    def _every(self, variable: str) -> int:
        """A sync_* count; 0 means never by count (only at stop and relay log switches)."""
        value = self.server.variables.global_int(variable)
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
        record = attrs.evolve(
            self.master_info,
            log_file=self.boundary[0],
            log_pos=self.boundary[1],
            retrieved_gtids=str(self.retrieved_gtids),
        )
        info_files.save(self.datadir, record, self.name)

    def save_relay_log_info(self) -> None:
        """Write relay-log.info (the applier's position)."""
        if self.master_info.configured:
            info_files.save(self.datadir, self.relay_info, self.name)

    # -------------------------------------------------------------- errors
    def set_io_error(self, errno: int, message: str, log: bool = True) -> None:
        """Last_IO_Errno/Error (logged to the error log as MySQL does)."""
        self.last_io_error = (errno, message, _now_text())
        if log:
            errorlog.log(
                _log,
                logging.ERROR,
                f"Replica I/O for channel '{self.name}': {message}, Error_code: MY-{errno:06d}",
                code=10572,
            )

    def clear_io_error(self) -> None:
        """The receiver connected: the last I/O error is history."""
        self.last_io_error = (0, "", "")

    def set_sql_error(self, errno: int, message: str) -> None:
        """Last_SQL_Errno/Error."""
        self.last_sql_error = (errno, message, _now_text())
        errorlog.log(
            _log,
            logging.ERROR,
            f"Replica SQL for channel '{self.name}': {message}, Error_code: MY-{errno:06d}",
            code=10584,
        )

    def io_stopped(self) -> None:
        """The receiver thread ended."""
        self.io_connected = False

    def reset(self, everything: bool) -> None:
        """RESET SLAVE [ALL] (threads stopped): relay logs and positions go; with ALL,
        the connection settings too (and a named channel's relay log index: the channel
        is gone).
        """
        self.relay_log.reset()
        self.relay_info = RelayLogInfo()
        self.retrieved_gtids = GtidSet()
        info = self.master_info
        param = RelayIOParam(
            self.server.server_id, 0, self.name, info.host, info.port, info.user, "", 4, None
        )
        if everything:
            self.master_info = MasterInfo()
            info_files.remove(self.datadir, master=True, relay=True, channel=self.name)
            if self.name:  # the channel goes away: its relay log index too
                Path(self.relay_log.index.path).unlink(missing_ok=True)
        else:
            info.log_file, info.log_pos, info.retrieved_gtids = "", 4, ""
            self.boundary = ("", 4)
            info_files.remove(self.datadir, master=False, relay=True, channel=self.name)
            self.save_master_info()
        self.last_io_error = self.last_sql_error = (0, "", "")
        self.server.delegates.binlog_relay_io.after_reset_slave(param)

    def purge_relay_logs(self) -> None:
        """CHANGE MASTER moved the receiver: the relay log starts over at its position."""
        self.relay_log.reset()
        self.retrieved_gtids = GtidSet()
        info = self.master_info
        self.boundary = (info.log_file, info.log_pos)
        self.relay_info = RelayLogInfo(master_log_file=info.log_file, master_log_pos=info.log_pos)
        info_files.remove(self.datadir, master=False, relay=True, channel=self.name)
