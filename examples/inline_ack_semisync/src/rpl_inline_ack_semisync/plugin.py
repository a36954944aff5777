"""The ``rpl_semi_sync`` plugin: a semisync source that reads each ACK in the dump thread.

Built only on rpl.observers; the replica side is the bundled ``rpl_semi_sync_slave``
(MySQL's packets, :mod:`rpl.observers.semisync`):

* ``after_flush`` records each commit group's end; ``after_sync`` waits for its ACK (the
  only wait point: AFTER_SYNC, before engine commit).
* ``transmit_start`` observes the dump of a replica that ``SET @rpl_semi_sync_slave = 1``;
  ``reserve_header`` puts the magic and a clear flag before every event;
  ``before_send_event`` sets the flag on an event the source waits for.
* ``after_send_event``: right after a flagged event was sent, the dump thread itself reads
  the replica's ACK from the dump connection (NET service ``read``) and reports it, at
  most ``rpl_semi_sync_master_timeout`` ms. There is no ACK receiver thread: a dump does
  not send its next event before the ACK of a flagged one (the design before WL#6630).

The variables and status variables are MySQL's (``rpl_semi_sync_master_*``), so the
conformance suite reads them as it reads MySQL's. rpl requires a plugin's variables to
start with its name, hence the plugin's name, ``rpl_semi_sync``: MySQL's own name,
``rpl_semi_sync_master``, is the bundled plugin's.
"""

from __future__ import annotations

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
    UserVariableNotFound,
    VarType,
    hookimpl,
)
from rpl.observers.semisync import PACKET_FLAG_SYNC, MalformedPacket, decode_ack, event_header
from rpl_inline_ack_semisync.state import Counters, InlineAckState, Position

UINT32_MAX: Final = 4294967295
COM_QUIT: Final = b"\x01"
"""What a replica's client library sends as it closes the dump connection."""
CLEAR_HEADER: Final = event_header(False)

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
        "rpl_semi_sync_master_wait_point",
        VarType.ENUM,
        "AFTER_SYNC",
        "Where a commit waits for the ACK: AFTER_SYNC only.",
        enum_values=("AFTER_SYNC",),
    ),
)
COUNTERS: Final = tuple(field.name for field in attrs.fields(Counters))


class InlineAckSemisyncMaster(ReplicationPlugin):
    """Semisynchronous replication, source side, ACKs read in the dump thread."""

    description = "Semi-synchronous replication master, ACKs read by the dump threads"
    author = "rpl examples"

    def __init__(self, services: ServerServices) -> None:
        super().__init__(services)
        self.variables = {}
        for variable in SYSTEM_VARIABLES:
            if variable.name == "rpl_semi_sync_master_enabled":
                variable = attrs.evolve(variable, on_update=self._enabled_changed)
            self.variables[variable.name] = services.variables.register_system_variable(variable)
        self.state = InlineAckState(
            lambda: bool(self._value("enabled")),
            lambda: int(self._value("timeout") or 0),
            services.error_log,
        )
        self._dumps: set[int] = set()
        """Thread ids of the semisync dumps."""
        self._flagged: dict[int, Position] = {}
        """Dump thread id -> the flagged event just sent, whose ACK it reads next."""
        for status in self._status_variables():
            services.variables.register_status_variable(status)
        if self._value("enabled"):
            self.state.enable()

    def _value(self, short: str) -> SysVarValue:
        return self.variables[f"rpl_semi_sync_master_{short}"].value

    def _status_variables(self) -> list[StatusVariable]:
        state = self.state

        def counter(name: str) -> StatusVariable:
            return StatusVariable(
                f"Rpl_semi_sync_master_{name}",
                lambda: int(getattr(state.counters, name)),
                state.reset_counters,
            )

        def average(name: str, total: str, count: str) -> StatusVariable:
            def value() -> int:
                waits = int(getattr(state.counters, count))
                return int(getattr(state.counters, total)) // waits if waits else 0

            return StatusVariable(f"Rpl_semi_sync_master_{name}", value, state.reset_counters)

        return [
            StatusVariable("Rpl_semi_sync_master_status", lambda: state.status),
            StatusVariable("Rpl_semi_sync_master_clients", lambda: state.clients),
            StatusVariable("Rpl_semi_sync_master_wait_sessions", lambda: state.wait_sessions),
            *(counter(name) for name in COUNTERS),
            average("tx_avg_wait_time", "tx_wait_time", "tx_waits"),
            average("net_avg_wait_time", "net_wait_time", "net_waits"),
        ]

    def _enabled_changed(self, value: SysVarValue) -> None:
        if value:
            self.state.enable()
        else:
            self.state.disable()

    # ------------------------------------------------------------ lifecycle
    def check_uninstall(self) -> None:
        """Refused while a semisync replica is connected (MySQL's rule)."""
        if self.state.clients > 0:
            raise ObserverError("Stop any active semisynchronous replica first.")

    def deinit(self) -> None:
        """Release every waiter."""
        self.state.shutdown()

    # --------------------------------------------------------- commit side
    @hookimpl
    def after_flush(self, param: BinlogStorageParam, log_file: str, log_pos: int) -> None:
        """Record the group's end: its last event is the one to flag and wait for."""
        self.state.record((log_file, log_pos))

    @hookimpl
    def after_sync(self, param: BinlogStorageParam, log_file: str, log_pos: int) -> None:
        """The group waits here, before engine commit, for a replica's ACK."""
        self.state.wait((log_file, log_pos))

    @hookimpl
    def before_server_shutdown(self, param: ServerStateParam) -> None:
        """Shutdown: no commit waits any longer."""
        self.state.shutdown()

    @hookimpl
    def after_reset_master(self, param: BinlogStorageParam) -> None:
        """RESET MASTER: positions start again; counters from zero."""
        self.state.reset()

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
        self._dumps.add(param.thread_id)
        self.state.add_client((log_file, log_pos))
        self.services.error_log.note(
            f"Start semi-sync binlog_dump to slave (server_id: "
            f"{param.server_id}), pos({log_file}, {log_pos})"
        )
        return True

    @hookimpl
    def transmit_stop(self, param: TransmitParam) -> None:
        """A semisync replica's dump ended."""
        if param.thread_id not in self._dumps:
            return
        self._dumps.discard(param.thread_id)
        self._flagged.pop(param.thread_id, None)
        self.state.remove_client()
        self.services.error_log.note(
            f"Stop semi-sync binlog_dump to slave (server_id: {param.server_id})"
        )

    @hookimpl
    def reserve_header(self, param: TransmitParam) -> bytes:
        """The magic and a clear sync flag, in front of every packet."""
        return CLEAR_HEADER

    @hookimpl
    def before_send_event(
        self, param: TransmitParam, header: memoryview, event: bytes, log_file: str, log_pos: int
    ) -> None:
        """Set the sync flag on an event the source waits for; remember it for
        ``after_send_event``.
        """
        if log_pos and self.state.needs_ack((log_file, log_pos)):
            header[1] = PACKET_FLAG_SYNC
            self._flagged[param.thread_id] = (log_file, log_pos)

    @hookimpl
    def after_send_event(
        self, param: TransmitParam, event: bytes, skipped_log_file: str | None, skipped_log_pos: int
    ) -> None:
        """After a flagged event: read ACKs on the dump connection until one reaches it
        or the timeout passes; report each.
        """
        awaited = self._flagged.pop(param.thread_id, None)
        if awaited is None:
            return
        started = time.monotonic()
        deadline = started + self.state.timeout_ms() / 1000
        try:
            while True:
                payload = param.net.read(timeout=max(0.0, deadline - time.monotonic()))
                if payload == COM_QUIT:
                    return  # the replica is leaving; the dump ends on its own
                ack = decode_ack(payload)
                self.state.report_ack((ack.log_file, ack.log_pos))
                if (ack.log_file, ack.log_pos) >= awaited:
                    return
        except NetError as exc:
            what = "timed out" if exc.timed_out else f"failed: {exc}"
            self.services.error_log.warning(
                f"Semi-sync: reading the ACK of replica server_id {param.server_id} {what}"
            )
        except MalformedPacket as exc:
            self.services.error_log.error(
                f"Semi-sync: malformed ACK from replica server_id {param.server_id}: {exc}"
            )
        finally:
            with self.state.changed:
                self.state.counters.net_waits += 1
                self.state.counters.net_wait_time += int((time.monotonic() - started) * 1e6)
