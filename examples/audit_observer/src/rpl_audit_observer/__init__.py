"""An example third-party rpl observer: every hook call becomes a JSON line.

It uses nothing but :mod:`rpl.observers`: the ``hookimpl`` marker, the parameter
classes, the variable declarations and the services handed to its constructor.
"""

from __future__ import annotations

import enum
import json
import threading
import time
from typing import Any

import attrs

from rpl.observers import (
    BinlogDumpFlags,
    BinlogRelayFlags,
    BinlogStorageParam,
    ObserverError,
    RelayIOParam,
    ReplicationPlugin,
    ServerServices,
    ServerStateParam,
    StatusVariable,
    SystemVariable,
    SysVarValue,
    TransmitParam,
    TransParam,
    VarType,
    hookimpl,
)

_SERVICE_FIELDS = {"net", "user_vars", "mysql"}


def _jsonable(value: Any) -> Any:
    """A JSON-friendly copy of a hook argument."""
    if attrs.has(type(value)):
        return {
            field.name: (
                type(getattr(value, field.name)).__name__
                if field.name in _SERVICE_FIELDS
                else _jsonable(getattr(value, field.name))
            )
            for field in attrs.fields(type(value))
        }
    if isinstance(value, dict):
        return {key: _jsonable(item) for key, item in value.items()}
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).hex()
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, frozenset | tuple | list):
        items = [_jsonable(item) for item in value]
        return sorted(items, key=str) if isinstance(value, frozenset) else items
    return value


class AuditObserver(ReplicationPlugin):
    """Records every replication hook call as a JSON line."""

    description = "Records every replication hook call as JSON lines"
    author = "rpl examples"

    def __init__(self, services: ServerServices) -> None:
        super().__init__(services)
        self._lock = threading.Lock()
        self._calls = 0
        self._log_file = services.variables.register_system_variable(
            SystemVariable(
                "audit_observer_log_file",
                VarType.STR,
                "audit_observer.jsonl",
                "File the hook calls are appended to.",
                check=self._check_path,
            )
        )
        services.variables.register_status_variable(
            StatusVariable("Audit_observer_calls", lambda: self._calls, reset=self._reset)
        )

    @staticmethod
    def _check_path(value: SysVarValue) -> None:
        if not value:
            raise ObserverError("audit_observer_log_file must name a file")

    def _reset(self) -> None:
        with self._lock:
            self._calls = 0

    def _record(self, hook: str, **args: Any) -> None:
        line = json.dumps(
            {
                "hook": hook,
                "plugin": self.services.plugin_name,
                "time": time.time(),
                "args": _jsonable(args),
            }
        )
        with self._lock:
            self._calls += 1
            with open(str(self._log_file.value), "a", encoding="utf-8") as out:
                out.write(line + "\n")

    # transaction
    @hookimpl
    def begin(self, param: TransParam) -> None:
        self._record("begin", param=param)

    @hookimpl
    def before_dml(self, param: TransParam) -> None:
        self._record("before_dml", param=param)

    @hookimpl
    def before_commit(self, param: TransParam) -> None:
        self._record("before_commit", param=param)

    @hookimpl
    def before_rollback(self, param: TransParam) -> None:
        self._record("before_rollback", param=param)

    @hookimpl
    def after_commit(self, param: TransParam) -> None:
        self._record("after_commit", param=param)

    @hookimpl
    def after_rollback(self, param: TransParam) -> None:
        self._record("after_rollback", param=param)

    # binlog storage
    @hookimpl
    def after_flush(self, param: BinlogStorageParam, log_file: str, log_pos: int) -> None:
        self._record("after_flush", param=param, log_file=log_file, log_pos=log_pos)

    @hookimpl
    def after_sync(self, param: BinlogStorageParam, log_file: str, log_pos: int) -> None:
        self._record("after_sync", param=param, log_file=log_file, log_pos=log_pos)

    # binlog transmit
    @hookimpl
    def transmit_start(self, param: TransmitParam, log_file: str, log_pos: int) -> bool:
        self._record("transmit_start", param=param, log_file=log_file, log_pos=log_pos)
        return True  # observe every dump

    @hookimpl
    def transmit_stop(self, param: TransmitParam) -> None:
        self._record("transmit_stop", param=param)

    @hookimpl
    def reserve_header(self, param: TransmitParam) -> None:
        self._record("reserve_header", param=param)

    @hookimpl
    def before_send_event(
        self, param: TransmitParam, header: memoryview, event: bytes, log_file: str, log_pos: int
    ) -> None:
        self._record(
            "before_send_event",
            param=param,
            header=header,
            event=event,
            log_file=log_file,
            log_pos=log_pos,
        )

    @hookimpl
    def after_send_event(
        self, param: TransmitParam, event: bytes, skipped_log_file: str | None, skipped_log_pos: int
    ) -> None:
        self._record(
            "after_send_event",
            param=param,
            event=event,
            skipped_log_file=skipped_log_file,
            skipped_log_pos=skipped_log_pos,
        )

    @hookimpl
    def after_reset_master(self, param: BinlogStorageParam) -> None:
        self._record("after_reset_master", param=param)

    # binlog relay IO
    @hookimpl
    def thread_start(self, param: RelayIOParam) -> None:
        self._record("thread_start", param=param)

    @hookimpl
    def thread_stop(self, param: RelayIOParam) -> None:
        self._record("thread_stop", param=param)

    @hookimpl
    def applier_start(self, param: RelayIOParam) -> None:
        self._record("applier_start", param=param)

    @hookimpl
    def applier_stop(self, param: RelayIOParam, aborted: bool) -> None:
        self._record("applier_stop", param=param, aborted=aborted)

    @hookimpl
    def before_request_transmit(self, param: RelayIOParam, flags: BinlogDumpFlags) -> None:
        self._record("before_request_transmit", param=param, flags=flags)

    @hookimpl
    def after_read_event(self, param: RelayIOParam, packet: bytes) -> None:
        self._record("after_read_event", param=param, packet=packet)

    @hookimpl
    def after_queue_event(self, param: RelayIOParam, event: bytes, flags: BinlogRelayFlags) -> None:
        self._record("after_queue_event", param=param, event=event, flags=flags)

    @hookimpl
    def after_reset_slave(self, param: RelayIOParam) -> None:
        self._record("after_reset_slave", param=param)

    # server state
    @hookimpl
    def before_recovery(self, param: ServerStateParam) -> None:
        self._record("before_recovery", param=param)

    @hookimpl
    def after_engine_recovery(self, param: ServerStateParam) -> None:
        self._record("after_engine_recovery", param=param)

    @hookimpl
    def after_recovery(self, param: ServerStateParam) -> None:
        self._record("after_recovery", param=param)

    @hookimpl
    def before_server_shutdown(self, param: ServerStateParam) -> None:
        self._record("before_server_shutdown", param=param)

    @hookimpl
    def after_server_shutdown(self, param: ServerStateParam) -> None:
        self._record("after_server_shutdown", param=param)
