"""The ``rpl_semi_sync_slave`` plugin: semisynchronous replication, replica side.

Built only on rpl.observers (relay IO hooks):

* ``before_request_transmit``: when ``rpl_semi_sync_slave_enabled`` is ON, ask the source
  for ``@@global.rpl_semi_sync_master_enabled``; a source that does not know the variable
  has no semisync plugin, and the receiver goes on asynchronously (a warning says so);
  otherwise ``SET @rpl_semi_sync_slave = 1`` tells the source's plugin to send headers,
  and Rpl_semi_sync_slave_status is ON until the receiver stops.
* ``after_read_event``: every event packet then starts with the magic 0xEF and a flag;
  they are stripped and the flag noted. A packet without the magic stops the receiver.
* ``after_queue_event``: when the flag asked for it, the ACK (the event's end position and
  file in the source's binlog) goes back on the dump connection, after the relay-log write
  (and its sync, per ``sync_relay_log``).
* UNINSTALL is refused while the status is ON.
"""

from __future__ import annotations

from typing import Final

from rpl.observers import (
    BinlogDumpFlags,
    BinlogRelayFlags,
    NetError,
    ObserverError,
    QueryError,
    RelayIOParam,
    ReplicationPlugin,
    ServerServices,
    StatusVariable,
    SystemVariable,
    VarType,
    hookimpl,
)
from rpl.observers.semisync import Ack, MalformedPacket, encode_ack, split_event

ER_UNKNOWN_SYSTEM_VARIABLE: Final = 1193

UINT32_MAX: Final = 4294967295

SYSTEM_VARIABLES: Final = (
    SystemVariable(
        "rpl_semi_sync_slave_enabled",
        VarType.BOOL,
        False,
        "Enable semi-synchronous replication on the replica.",
    ),
    SystemVariable(
        "rpl_semi_sync_slave_trace_level",
        VarType.INT,
        32,
        "Trace bits of the semisync replica.",
        min_value=0,
        max_value=UINT32_MAX,
    ),
)


class SemisyncSlavePlugin(ReplicationPlugin):
    """Semisynchronous replication, replica side."""

    description = "Semi-synchronous replication slave"
    author = "rpl"

    def __init__(self, services: ServerServices) -> None:
        super().__init__(services)
        self.variables = {
            variable.name: services.variables.register_system_variable(variable)
            for variable in SYSTEM_VARIABLES
        }
        self.active = False
        """The receiver runs with a semisync source (Rpl_semi_sync_slave_status)."""
        self._need_reply = False
        services.variables.register_status_variable(
            StatusVariable("Rpl_semi_sync_slave_status", lambda: self.active)
        )

    @property
    def enabled(self) -> bool:
        """rpl_semi_sync_slave_enabled."""
        return bool(self.variables["rpl_semi_sync_slave_enabled"].value)

    def check_uninstall(self) -> None:
        """Refused while semisync is active (MySQL's rule)."""
        if self.active:
            raise ObserverError("Stop any active semisynchronous I/O threads on this slave first.")

    @hookimpl
    def before_request_transmit(self, param: RelayIOParam, flags: BinlogDumpFlags) -> None:
        """Ask the source for semisync, or fall back to asynchronous replication."""
        self.active = False
        if not self.enabled or param.mysql is None:
            return
        try:
            param.mysql.query("SELECT @@global.rpl_semi_sync_master_enabled")
        except QueryError as exc:
            if exc.errno != ER_UNKNOWN_SYSTEM_VARIABLE:
                raise
            self.services.error_log.warning(
                "Master server does not support semi-sync, fallback to asynchronous replication"
            )
            return
        param.mysql.query("SET @rpl_semi_sync_slave = 1")
        self._need_reply = False
        self.active = True
        self.services.error_log.note(
            f"Slave I/O thread: Start semi-sync replication to "
            f"master '{param.user}@{param.host}:{param.port}' in "
            f"log '{param.master_log_name}' at position "
            f"{param.master_log_pos}"
        )

    @hookimpl
    def after_read_event(self, param: RelayIOParam, packet: bytes) -> bytes | None:
        """Strip the header; note whether the source waits for this event's ACK."""
        if not self.active:
            return None
        try:
            sync, event = split_event(packet)
        except MalformedPacket as exc:
            raise ObserverError(str(exc)) from exc
        self._need_reply = sync
        return event

    @hookimpl
    def after_queue_event(self, param: RelayIOParam, event: bytes, flags: BinlogRelayFlags) -> None:
        """The event is in the relay log: ACK it if the source asked."""
        if not (self.active and self._need_reply) or param.mysql is None:
            return
        self._need_reply = False
        try:
            param.mysql.write(encode_ack(Ack(param.master_log_name, param.master_log_pos)))
            param.mysql.flush()
        except NetError as exc:  # the connection broke: the receiver's next read says so
            self.services.error_log.error(f"Semi-sync slave net_flush() reply failed: {exc}")

    @hookimpl
    def thread_stop(self, param: RelayIOParam) -> None:
        """The receiver stopped: semisync is no longer active."""
        if self.active:
            self.active = False
            self.services.error_log.note("Stopping semi-sync replication to master.")
