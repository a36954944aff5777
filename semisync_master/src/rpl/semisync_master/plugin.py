"""The ``rpl_semi_sync_master`` plugin: semisynchronous replication, source side.

Built only on rpl.observers: the storage hooks record and wait (``after_flush``,
``after_sync`` for AFTER_SYNC, ``after_commit`` for AFTER_COMMIT), the transmit hooks
recognise semisync replicas (``transmit_start`` reads ``@rpl_semi_sync_slave`` through the
user-variable service), reserve the two header bytes and set the sync flag on the events
that end an awaited transaction, and the ACK receiver thread reads the replies. The
state machine is :mod:`rpl.semisync_master.master`; the variables, status variables,
error-log lines and thread states are MySQL's.

``RPL_SEMISYNC_ACK_IN_DUMP_THREAD=1`` in the server's environment selects the design
before WL#6630 (each dump thread waits for the ACK of a flagged event itself, in
``after_send_event``; no ACK receiver thread): for the benchmark that measures what the
ACK receiver gains, not for use.
"""

from __future__ import annotations

import os
import time
from typing import Final

import attrs

from rpl.observers import (
    BinlogStorageParam,
    NetError,
    ObserverError,
    ReplicationPlugin,
    ServerServices,
    ServerStateParam,
    StatusVariable,
    SystemVariable,
    SysVarValue,
    TransmitParam,
    TransParam,
    UserVariableNotFound,
    VarType,
    hookimpl,
)
from rpl.observers.semisync import PACKET_FLAG_SYNC, MalformedPacket, decode_ack, event_header
from rpl.semisync_master.ack_receiver import AckReceiver
from rpl.semisync_master.master import SemisyncMaster, Settings

UINT32_MAX: Final = 4294967295
ACK_IN_DUMP_THREAD_ENV: Final = "RPL_SEMISYNC_ACK_IN_DUMP_THREAD"
CLEAR_HEADER: Final = event_header(False)
"""The header every event is sent with (``before_send_event`` sets the flag in the
packet's copy of it)."""

SYSTEM_VARIABLES: Final = (
    SystemVariable(
        "rpl_semi_sync_master_enabled",
        VarType.BOOL,
        False,
        "Enable semi-synchronous replication on the source.",
    ),
    SystemVariable(
        "rpl_semi_sync_master_timeout",
        VarType.INT,
        10000,
        "Milliseconds a commit waits for an ACK before semisync switches off.",
        min_value=0,
        max_value=UINT32_MAX,
    ),
    SystemVariable(
        "rpl_semi_sync_master_trace_level",
        VarType.INT,
        32,
        "Trace bits of the semisync source.",
        min_value=0,
        max_value=UINT32_MAX,
    ),
    SystemVariable(
        "rpl_semi_sync_master_wait_for_slave_count",
        VarType.INT,
        1,
        "ACKs from this many distinct replicas release a commit.",
        min_value=1,
        max_value=65535,
    ),
    SystemVariable(
        "rpl_semi_sync_master_wait_no_slave",
        VarType.BOOL,
        True,
        "Keep waiting while fewer replicas than required are connected.",
    ),
    SystemVariable(
        "rpl_semi_sync_master_wait_point",
        VarType.ENUM,
        "AFTER_SYNC",
        "Where a commit waits for the ACK.",
        enum_values=("AFTER_SYNC", "AFTER_COMMIT"),
    ),
)


class SemisyncMasterPlugin(ReplicationPlugin):
    """Semisynchronous replication, source side."""

    description = "Semi-synchronous replication master"
    author = "rpl"

    def __init__(self, services: ServerServices) -> None:
        super().__init__(services)
        self.variables = {}
        for variable in SYSTEM_VARIABLES:
            if variable.name == "rpl_semi_sync_master_enabled":
                variable = attrs.evolve(variable, on_update=self._enabled_changed)
            self.variables[variable.name] = services.variables.register_system_variable(variable)
        value = self._value
        self.master = SemisyncMaster(
            Settings(
                enabled=lambda: bool(value("enabled")),
                timeout_ms=lambda: int(value("timeout")),  # type: ignore[arg-type]
                wait_no_slave=lambda: bool(value("wait_no_slave")),
                wait_for_slave_count=lambda: int(value("wait_for_slave_count")),  # type: ignore[arg-type]
            ),
            services.error_log,
        )
        self.ack_in_dump_thread = hasattr(self, "after_send_event")
        self.receiver = AckReceiver(self.master, services)
        self._dumps: dict[int, int] = {}
        """Semisync dumps: dump thread id -> replica server_id."""
        self._flagged: set[int] = set()
        """Dumps whose last event sent carried the sync flag (ACK in the dump thread)."""
        for status in self._status_variables():
            services.variables.register_status_variable(status)
        if value("enabled"):
            self._enabled_changed(True)

    def _value(self, short: str) -> SysVarValue:
        return self.variables[f"rpl_semi_sync_master_{short}"].value

    def _status_variables(self) -> list[StatusVariable]:
        master = self.master
        reset = master.reset_counters

        def counter(name: str) -> StatusVariable:
            return StatusVariable(
                f"Rpl_semi_sync_master_{name}", lambda: getattr(master.counters, name), reset
            )

        return [
            StatusVariable("Rpl_semi_sync_master_clients", lambda: master.clients),
            StatusVariable(
                "Rpl_semi_sync_master_net_avg_wait_time", master.avg_net_wait_time, reset
            ),
            counter("net_wait_time"),
            counter("net_waits"),
            counter("no_times"),
            counter("no_tx"),
            StatusVariable("Rpl_semi_sync_master_status", lambda: master.status),
            counter("timefunc_failures"),
            StatusVariable("Rpl_semi_sync_master_tx_avg_wait_time", master.avg_wait_time, reset),
            counter("tx_wait_time"),
            counter("tx_waits"),
            counter("wait_pos_backtraverse"),
            StatusVariable("Rpl_semi_sync_master_wait_sessions", lambda: master.wait_sessions),
            counter("yes_tx"),
        ]

    def _enabled_changed(self, value: SysVarValue) -> None:
        if value:
            self.master.enable()
            if not self.ack_in_dump_thread:
                self.receiver.start()
        else:
            self.receiver.stop()
            self.master.disable()

    # ------------------------------------------------------------ lifecycle
    def check_uninstall(self) -> None:
        """Refused while a semisync replica is connected (MySQL's rule)."""
        if self.master.clients > 0:
            raise ObserverError("Stop any active semisynchronous replica first.")

    def deinit(self) -> None:
        """Release every waiter and stop the ACK receiver."""
        self.master.disable()
        self.receiver.close()

    # --------------------------------------------------------- commit side
    @hookimpl
    def after_flush(self, param: BinlogStorageParam, log_file: str, log_pos: int) -> None:
        """Record the group's end: its last event is the one to flag and wait for."""
        self.master.record((log_file, log_pos))

    @hookimpl
    def after_sync(self, param: BinlogStorageParam, log_file: str, log_pos: int) -> None:
        """AFTER_SYNC: the group waits here, before engine commit, so nobody sees its rows
        before a replica has them (WL#6355).
        """
        if self._value("wait_point") == "AFTER_SYNC":
            self.master.wait((log_file, log_pos))

    @hookimpl
    def after_commit(self, param: TransParam) -> None:
        """AFTER_COMMIT: the session waits for its own transaction after engine commit."""
        if param.log_pos and self._value("wait_point") == "AFTER_COMMIT":
            self.master.wait((param.log_file, param.log_pos))

    @hookimpl
    def before_server_shutdown(self, param: ServerStateParam) -> None:
        """Shutdown: no commit waits any longer (MySQL's "forced shutdown")."""
        self.receiver.stop()
        self.master.shutdown()

    @hookimpl
    def after_reset_master(self, param: BinlogStorageParam) -> None:
        """RESET MASTER: positions start again; counters from zero."""
        self.master.reset()

    # -------------------------------------------------------- transmit side
    @hookimpl
    def transmit_start(self, param: TransmitParam, log_file: str, log_pos: int) -> bool:
        """Observe the dump of a replica that SET @rpl_semi_sync_slave = 1."""
        try:
            requested = param.user_vars.get_user_var_int("rpl_semi_sync_slave")
        except UserVariableNotFound:
            return False
        if not requested:
            return False
        self._dumps[param.thread_id] = param.server_id
        self.master.add_client()
        self.master.report_ack(param.server_id, (log_file, log_pos))
        if not self.ack_in_dump_thread:
            self.receiver.add_replica(param.thread_id, param.server_id, param.net)
        self.services.error_log.note(
            f"Start semi-sync binlog_dump to slave (server_id: "
            f"{param.server_id}), pos({log_file}, {log_pos})"
        )
        return True

    @hookimpl
    def transmit_stop(self, param: TransmitParam) -> None:
        """A semisync replica's dump ended."""
        if self._dumps.pop(param.thread_id, None) is None:
            return
        self._flagged.discard(param.thread_id)
        self.receiver.remove_replica(param.thread_id)
        self.master.remove_client()
        self.services.error_log.note(
            f"Stop semi-sync binlog_dump to slave (server_id: {param.server_id})"
        )

    @hookimpl
    def reserve_header(self, param: TransmitParam) -> bytes:
        """The magic and a clear sync flag, in front of every event."""
        return CLEAR_HEADER

    @hookimpl
    def before_send_event(
        self, param: TransmitParam, header: memoryview, event: bytes, log_file: str, log_pos: int
    ) -> None:
        """Set the sync flag on an event that ends an awaited transaction."""
        sync = bool(log_pos) and self.master.needs_ack((log_file, log_pos))
        if sync:
            header[1] = PACKET_FLAG_SYNC
        if self.ack_in_dump_thread:
            (self._flagged.add if sync else self._flagged.discard)(param.thread_id)

    def _ack_in_dump_thread(
        self, param: TransmitParam, event: bytes, skipped_log_file: str | None, skipped_log_pos: int
    ) -> None:
        """Before WL#6630: after a flagged event, the dump thread reads the ACK itself."""
        if param.thread_id not in self._flagged:
            return
        self._flagged.discard(param.thread_id)
        started = time.monotonic()
        try:
            ack = decode_ack(param.net.read(timeout=self.master.settings.timeout_ms() / 1000))
        except (NetError, MalformedPacket) as exc:
            self.services.error_log.error(
                f"Semi-sync: reading the ACK of replica server_id {param.server_id} failed: {exc}"
            )
            return
        finally:
            counters = self.master.counters
            counters.net_waits += 1
            counters.net_wait_time += int((time.monotonic() - started) * 1e6)
        self.master.report_ack(param.server_id, (ack.log_file, ack.log_pos))

    if os.environ.get(ACK_IN_DUMP_THREAD_ENV) == "1":  # observed only in that mode: a dump

        @hookimpl  # with an observer flushes each event
        def after_send_event(
            self,
            param: TransmitParam,
            event: bytes,
            skipped_log_file: str | None,
            skipped_log_pos: int,
        ) -> None:
            """Before WL#6630: the dump thread reads the ACK of a flagged event."""
            self._ack_in_dump_thread(param, event, skipped_log_file, skipped_log_pos)
