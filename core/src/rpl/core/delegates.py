"""The delegates: one per observer interface, calling the observers at the server's hook points.

A delegate reads the registry's current :class:`~rpl.core.observer_registry.Generation`
once per hook call and calls that generation's callbacks for the hook in order
(registration order; see :mod:`rpl.core.observer_registry`). With no observer for
a hook the call costs one dictionary look-up (MySQL's ``is_empty()`` check).

The first failing callback stops the loop; later observers are not called. The
delegate logs ``Run function '<hook>' in plugin '<plugin>' failed`` (MY-010207),
then applies the hook's consequence from :data:`FAILURES`: for a hook whose
failure is an error it raises :class:`HookError`, a :class:`MySQLError` with the
code, SQLSTATE and message the client, replica or thread status should show
(the observer's own ``errno`` when its ObserverError carries one); for a hook
whose failure is ignored it returns normally. What the caller does with a
HookError (roll back, end the dump, stop the IO thread) is the consequence each
hook's docstring in :mod:`rpl.observers.hookspecs` states.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Final, NoReturn

import attrs

from rpl.core import errorlog
from rpl.core.errors import (
    ER_BEFORE_DML_VALIDATION_ERROR,
    ER_MASTER_FATAL_ERROR_READING_BINLOG,
    ER_RUN_HOOK_ERROR,
    ER_SLAVE_FATAL_ERROR,
    ErrorCode,
    MySQLError,
)
from rpl.core.observer_registry import Callback, Generation, ObserverRegistry
from rpl.observers import (
    HOOKS,
    BinlogDumpFlags,
    BinlogRelayFlags,
    BinlogStorageParam,
    CommitDecision,
    ObserverError,
    RelayIOParam,
    ServerStateParam,
    TransmitParam,
    TransParam,
)

MAX_RESERVED_HEADER: Final = 32
"""Bytes one observer may reserve in an event packet (``reserve_header``)."""

_log = errorlog.logger("delegates")

FAILURES: Final[Mapping[str, ErrorCode | None]] = {
    "begin": ER_RUN_HOOK_ERROR,
    "before_dml": ER_BEFORE_DML_VALIDATION_ERROR,
    "before_commit": ER_RUN_HOOK_ERROR,
    "before_rollback": None,
    "after_commit": None,
    "after_rollback": None,
    "after_flush": ER_RUN_HOOK_ERROR,
    "after_sync": ER_RUN_HOOK_ERROR,
    "transmit_start": ER_MASTER_FATAL_ERROR_READING_BINLOG,
    "transmit_stop": None,
    "reserve_header": ER_MASTER_FATAL_ERROR_READING_BINLOG,
    "before_send_event": ER_MASTER_FATAL_ERROR_READING_BINLOG,
    "after_send_event": ER_MASTER_FATAL_ERROR_READING_BINLOG,
    "after_reset_master": None,
    "thread_start": ER_SLAVE_FATAL_ERROR,
    "thread_stop": None,
    "applier_start": ER_SLAVE_FATAL_ERROR,
    "applier_stop": None,
    "before_request_transmit": ER_SLAVE_FATAL_ERROR,
    "after_read_event": ER_SLAVE_FATAL_ERROR,
    "after_queue_event": ER_SLAVE_FATAL_ERROR,
    "after_reset_slave": None,
    "before_recovery": None,
    "after_engine_recovery": None,
    "after_recovery": None,
    "before_server_shutdown": None,
    "after_server_shutdown": None,
}
"""Per hook: the error its failure produces, or None when the failure is only logged."""

assert set(FAILURES) == set(HOOKS), "every hook needs a failure consequence"


class HookError(MySQLError):
    """A hook whose failure is an error failed; carries the MySQL error to report."""

    def __init__(self, hook: str, plugin: str, errno: int, sqlstate: str, message: str) -> None:
        super().__init__(errno, sqlstate, message)
        self.hook = hook
        self.plugin = plugin


def _hook_error(hook: str, plugin: str, exc: Exception) -> HookError:
    if isinstance(exc, ObserverError) and exc.errno is not None:
        return HookError(hook, plugin, exc.errno, exc.sqlstate, exc.message)
    code = FAILURES[hook]
    assert code is not None
    if code is ER_RUN_HOOK_ERROR:
        message = code.format(hook)
    elif code is ER_SLAVE_FATAL_ERROR:
        message = code.format(f"Failed to run '{hook}' hook")
    elif code is ER_MASTER_FATAL_ERROR_READING_BINLOG:
        message = f"Failed to run '{hook}' hook"
    else:
        message = code.format()
    return HookError(hook, plugin, code.errno, code.sqlstate, message)


_FAILED: Final = object()
"""What :meth:`Delegate._call` returns for a callback whose failure is only logged."""


class Delegate:
    """Calls the observers of one interface; base of the five delegates."""

    def __init__(self, registry: ObserverRegistry) -> None:
        self._registry = registry

    def is_empty(self, hook: str) -> bool:
        """Whether no observer implements ``hook`` right now."""
        return hook not in self._registry.current.callbacks

    def _run(self, hook: str, *args: object, only: frozenset[str] | None = None) -> None:
        """Call the observers of ``hook`` with ``args`` (in the specification's order);
        with ``only``, just those plugins.
        """
        if self.is_empty(hook):
            return
        with self._registry.calling() as generation:
            for callback in self._select(generation, hook, only):  # no generator: per event
                if self._call(hook, callback, args) is _FAILED:
                    return

    @staticmethod
    def _select(
        generation: Generation, hook: str, only: frozenset[str] | None
    ) -> tuple[Callback, ...]:
        """The callbacks of ``hook`` in ``generation``, restricted to ``only`` when given."""
        callbacks = generation.callbacks.get(hook, ())
        if only is None:
            return callbacks
        selected = generation.selected.get((hook, only))
        if selected is None:  # once per hook and plugin set in a generation
            selected = tuple(callback for callback in callbacks if callback.plugin in only)
            generation.selected[(hook, only)] = selected
        return selected

    def _call(self, hook: str, callback: Callback, args: tuple[object, ...]) -> object:
        """Call one callback. A failure is logged, then raised as :class:`HookError` for
        an error hook or returned as ``_FAILED`` for an ignored one.
        """
        try:
            return callback(args)
        except Exception as exc:  # noqa: BLE001 - any exception fails the hook
            self._failed(hook, callback.plugin, exc)
            return _FAILED

    def _failed(self, hook: str, plugin: str, exc: Exception) -> None:
        """Log a failed callback and apply the hook's consequence."""
        errorlog.log(
            _log,
            logging.ERROR,
            f"Run function '{hook}' in plugin '{plugin}' failed",
            code=errorlog.ER_RPL_PLUGIN_FUNCTION_FAILED,
            subsystem="Repl",
            exc_info=None if isinstance(exc, ObserverError) else exc,
        )
        if isinstance(exc, ObserverError):
            errorlog.log(
                _log,
                logging.ERROR,
                f"Plugin '{plugin}' failed '{hook}': {exc.message}",
                subsystem="Repl",
            )
        if FAILURES[hook] is not None:
            raise _hook_error(hook, plugin, exc) from exc

    def _reject(self, hook: str, plugin: str, reason: str) -> NoReturn:
        """Fail an error hook because of what the observer returned."""
        self._failed(hook, plugin, ObserverError(reason))
        raise AssertionError(f"a failure of '{hook}' is an error")


class TransDelegate(Delegate):
    """``Trans_delegate``: the transaction observer hooks."""

    def begin(self, param: TransParam) -> None:
        """Run ``begin``; raises HookError on failure."""
        self._run("begin", param)

    def before_dml(self, param: TransParam) -> None:
        """Run ``before_dml``; raises HookError on failure."""
        self._run("before_dml", param)

    def before_commit(self, param: TransParam) -> CommitDecision | None:
        """Run ``before_commit``; raises HookError on failure. Returns the one
        :class:`CommitDecision` an observer returned (two fail the hook; any other
        value is ignored), else None.
        """
        if self.is_empty("before_commit"):
            return None
        decision: CommitDecision | None = None
        with self._registry.calling() as generation:
            for callback in generation.callbacks.get("before_commit", ()):
                result = self._call("before_commit", callback, (param,))
                if not isinstance(result, CommitDecision):
                    continue
                if decision is not None:
                    self._reject(
                        "before_commit", callback.plugin, "a second observer chose the GTID"
                    )
                decision = result
        return decision

    def before_rollback(self, param: TransParam) -> None:
        """Run ``before_rollback``; failures are logged only."""
        self._run("before_rollback", param)

    def after_commit(self, param: TransParam) -> None:
        """Run ``after_commit``; failures are logged only."""
        self._run("after_commit", param)

    def after_rollback(self, param: TransParam) -> None:
        """Run ``after_rollback``; failures are logged only."""
        self._run("after_rollback", param)


class BinlogStorageDelegate(Delegate):
    """``Binlog_storage_delegate``: the group-commit hooks."""

    def after_flush(self, param: BinlogStorageParam, log_file: str, log_pos: int) -> None:
        """Run ``after_flush``; raises HookError on failure."""
        self._run("after_flush", param, log_file, log_pos)

    def after_sync(self, param: BinlogStorageParam, log_file: str, log_pos: int) -> None:
        """Run ``after_sync``; raises HookError on failure."""
        self._run("after_sync", param, log_file, log_pos)


@attrs.frozen
class DumpObservers:
    """The observers of one dump: which ran ``transmit_start``, which observe it."""

    param: TransmitParam
    started: frozenset[str]
    observed: frozenset[str]


class EventPacket:
    """An event packet: 0x00, each observing plugin's reserved header, the event.

    ``slots`` maps each plugin that reserved bytes to their ``(start, end)`` in ``data``;
    ``event`` is the event as the dump read it (what ``before_send_event`` observers are
    shown). A plain class, not attrs: one is made per event sent, and the compiled build
    makes a plain class native (an attrs class keeps an interpreted ``__init__``).
    """

    def __init__(self, data: bytearray, slots: Mapping[str, tuple[int, int]], event: bytes) -> None:
        self.data = data
        self.slots = slots
        self.event = event


class BinlogTransmitDelegate(Delegate):
    """``Binlog_transmit_delegate``: the dump-thread hooks.

    A dump's observers are the plugins whose ``transmit_start`` returned true
    and that are still installed; a plugin installed after the dump started
    does not observe it.
    """

    def transmit_start(self, param: TransmitParam, log_file: str, log_pos: int) -> DumpObservers:
        """Run ``transmit_start``. On failure, run ``transmit_stop`` for the
        observers that were started and raise the HookError.
        """
        started: list[str] = []
        observed: list[str] = []
        with self._registry.calling() as generation:
            try:
                arguments = (param, log_file, log_pos)
                for callback in self._select(generation, "transmit_start", None):
                    result = self._call("transmit_start", callback, arguments)
                    if result is _FAILED:
                        break
                    started.append(callback.plugin)
                    if result:
                        observed.append(callback.plugin)
            except HookError as failure:
                started.append(failure.plugin)  # its transmit_start ran, and failed
                self.transmit_stop(DumpObservers(param, frozenset(started), frozenset()))
                raise
        return DumpObservers(param, frozenset(started), frozenset(observed))

    def transmit_stop(self, dump: DumpObservers) -> None:
        """Run ``transmit_stop`` for the observers started on this dump; failures are logged."""
        self._run("transmit_stop", dump.param, only=dump.started)

    def new_packet(self, dump: DumpObservers, event: bytes) -> EventPacket:
        """Run ``reserve_header`` and build the event packet; raises HookError on failure."""
        if not dump.observed or self.is_empty("reserve_header"):
            return EventPacket(bytearray(b"\x00") + event, {}, event)
        with self._registry.calling() as generation:
            return self._reserve(generation, dump, event)

    def _reserve(self, generation: Generation, dump: DumpObservers, event: bytes) -> EventPacket:
        data = bytearray(b"\x00")
        slots: dict[str, tuple[int, int]] = {}
        arguments = (dump.param,)
        for callback in self._select(generation, "reserve_header", dump.observed):
            reserved = self._call("reserve_header", callback, arguments)
            if reserved is _FAILED:
                break
            if reserved is None:
                continue
            if not isinstance(reserved, bytes | bytearray):
                self._reject(
                    "reserve_header",
                    callback.plugin,
                    f"returned {type(reserved).__name__}, not bytes",
                )
            if len(reserved) > MAX_RESERVED_HEADER:
                self._reject(
                    "reserve_header",
                    callback.plugin,
                    f"reserved {len(reserved)} header bytes; at most "
                    f"{MAX_RESERVED_HEADER} are allowed",
                )
            if reserved:
                slots[callback.plugin] = (len(data), len(data) + len(reserved))
                data += reserved
        data += event
        return EventPacket(data, slots, event)

    def before_send_event(
        self, dump: DumpObservers, packet: EventPacket, log_file: str, log_pos: int
    ) -> None:
        """Run ``before_send_event``, giving each observer its own header bytes."""
        if not dump.observed or self.is_empty("before_send_event"):
            return
        with self._registry.calling() as generation:
            self._before_send(generation, dump, packet, log_file, log_pos)

    def _before_send(
        self,
        generation: Generation,
        dump: DumpObservers,
        packet: EventPacket,
        log_file: str,
        log_pos: int,
    ) -> None:
        view = memoryview(packet.data)
        try:
            for callback in self._select(generation, "before_send_event", dump.observed):
                start, end = packet.slots.get(callback.plugin, (0, 0))
                arguments = (dump.param, view[start:end], packet.event, log_file, log_pos)
                if self._call("before_send_event", callback, arguments) is _FAILED:
                    break
        finally:
            view.release()

    def event_packet(
        self, dump: DumpObservers, event: bytes, log_file: str, log_pos: int
    ) -> bytearray:
        """:meth:`new_packet` then :meth:`before_send_event` in one hook call (the dump
        thread's per-event path): the packet's payload. Raises HookError on failure.
        """
        if not dump.observed:
            return bytearray(b"\x00") + event
        with self._registry.calling() as generation:
            packet = self._reserve(generation, dump, event)
            self._before_send(generation, dump, packet, log_file, log_pos)
        return packet.data

    def after_send_event(
        self,
        dump: DumpObservers,
        event: bytes,
        skipped_log_file: str | None = None,
        skipped_log_pos: int = 0,
    ) -> None:
        """Run ``after_send_event``; raises HookError on failure."""
        self._run(
            "after_send_event",
            dump.param,
            event,
            skipped_log_file,
            skipped_log_pos,
            only=dump.observed,
        )

    def after_reset_master(self, param: BinlogStorageParam) -> None:
        """Run ``after_reset_master``; failures are logged only."""
        self._run("after_reset_master", param)


class BinlogRelayIODelegate(Delegate):
    """``Binlog_relay_IO_delegate``: the replica's receiver and applier hooks."""

    def thread_start(self, param: RelayIOParam) -> None:
        """Run ``thread_start``; raises HookError on failure."""
        self._run("thread_start", param)

    def thread_stop(self, param: RelayIOParam) -> None:
        """Run ``thread_stop``; failures are logged only."""
        self._run("thread_stop", param)

    def applier_start(self, param: RelayIOParam) -> None:
        """Run ``applier_start``; raises HookError on failure."""
        self._run("applier_start", param)

    def applier_stop(self, param: RelayIOParam, aborted: bool) -> None:
        """Run ``applier_stop``; failures are logged only."""
        self._run("applier_stop", param, aborted)

    def before_request_transmit(self, param: RelayIOParam, flags: BinlogDumpFlags) -> None:
        """Run ``before_request_transmit``; raises HookError on failure."""
        self._run("before_request_transmit", param, flags)

    def after_read_event(self, param: RelayIOParam, packet: bytes) -> bytes:
        """Run ``after_read_event``, each observer on the previous one's output;
        return the event to queue. Raises HookError on failure.
        """
        if self.is_empty("after_read_event"):
            return packet
        with self._registry.calling() as generation:
            for callback in self._select(generation, "after_read_event", None):
                replacement = self._call("after_read_event", callback, (param, packet))
                if replacement is None:
                    continue
                if not isinstance(replacement, bytes | bytearray):
                    self._reject(
                        "after_read_event",
                        callback.plugin,
                        f"returned {type(replacement).__name__}, not bytes",
                    )
                packet = bytes(replacement)
        return packet

    def after_queue_event(self, param: RelayIOParam, event: bytes, flags: BinlogRelayFlags) -> None:
        """Run ``after_queue_event``; raises HookError on failure."""
        self._run("after_queue_event", param, event, flags)

    def after_reset_slave(self, param: RelayIOParam) -> None:
        """Run ``after_reset_slave``; failures are logged only."""
        self._run("after_reset_slave", param)


class ServerStateDelegate(Delegate):
    """``Server_state_delegate``: start-up and shutdown; every failure is logged only."""

    def before_recovery(self, param: ServerStateParam) -> None:
        """Run ``before_recovery``."""
        self._run("before_recovery", param)

    def after_engine_recovery(self, param: ServerStateParam) -> None:
        """Run ``after_engine_recovery``."""
        self._run("after_engine_recovery", param)

    def after_recovery(self, param: ServerStateParam) -> None:
        """Run ``after_recovery``."""
        self._run("after_recovery", param)

    def before_server_shutdown(self, param: ServerStateParam) -> None:
        """Run ``before_server_shutdown``."""
        self._run("before_server_shutdown", param)

    def after_server_shutdown(self, param: ServerStateParam) -> None:
        """Run ``after_server_shutdown``."""
        self._run("after_server_shutdown", param)


@attrs.frozen
class Delegates:
    """The five delegates over one observer registry."""

    registry: ObserverRegistry
    transaction: TransDelegate
    binlog_storage: BinlogStorageDelegate
    binlog_transmit: BinlogTransmitDelegate
    binlog_relay_io: BinlogRelayIODelegate
    server_state: ServerStateDelegate

    @classmethod
    def create(cls, registry: ObserverRegistry | None = None) -> Delegates:
        """Delegates over ``registry`` (a new, empty one by default)."""
        registry = registry or ObserverRegistry()
        return cls(
            registry,
            TransDelegate(registry),
            BinlogStorageDelegate(registry),
            BinlogTransmitDelegate(registry),
            BinlogRelayIODelegate(registry),
            ServerStateDelegate(registry),
        )
