"""The delegates: call order, stop on first failure, each hook's failure consequence,
reserve_header, the after_read_event chain, and registration under concurrent calls."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from rpl.core.delegates import Delegates, DumpObservers, HookError
from rpl.core.observer_registry import PluginLoadError
from rpl.observers import (
    HOOKS,
    INTERFACES,
    BinlogDumpFlags,
    BinlogRelayFlags,
    BinlogStorageParam,
    ObserverError,
    RelayIOParam,
    ServerStateParam,
    TransmitParam,
    TransParam,
    hookimpl,
)

UUID = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
TRANS = TransParam(server_id=1, server_uuid=UUID, thread_id=5)
STORAGE = BinlogStorageParam(server_id=1, server_uuid=UUID, thread_id=5)
RELAY = RelayIOParam(
    server_id=2,
    thread_id=7,
    channel_name="",
    host="127.0.0.1",
    port=3306,
    user="repl",
    master_log_name="binlog.000001",
    master_log_pos=4,
)
STATE = ServerStateParam(server_id=1, server_uuid=UUID)
TRANSMIT = TransmitParam(
    server_id=2,
    thread_id=9,
    flags=BinlogDumpFlags.NONE,
    host="127.0.0.1",
    user="repl",
    net=object(),  # type: ignore[arg-type]
    user_vars=object(),  # type: ignore[arg-type]
)


def plugin(name: str, **hooks: Callable[..., Any]) -> object:
    """An observer object whose methods are ``hooks`` (functions taking self first)."""
    return type(name, (), {hook: hookimpl(function) for hook, function in hooks.items()})()


def start(d: Delegates) -> DumpObservers:
    return d.binlog_transmit.transmit_start(TRANSMIT, "binlog.000001", 4)


def send(d: Delegates) -> None:
    dump = start(d)
    d.binlog_transmit.before_send_event(
        dump, d.binlog_transmit.new_packet(dump, b"ev"), "binlog.000001", 100
    )


CALLS: dict[str, Callable[[Delegates], object]] = {
    "begin": lambda d: d.transaction.begin(TRANS),
    "before_dml": lambda d: d.transaction.before_dml(TRANS),
    "before_commit": lambda d: d.transaction.before_commit(TRANS),
    "before_rollback": lambda d: d.transaction.before_rollback(TRANS),
    "after_commit": lambda d: d.transaction.after_commit(TRANS),
    "after_rollback": lambda d: d.transaction.after_rollback(TRANS),
    "after_flush": lambda d: d.binlog_storage.after_flush(STORAGE, "binlog.000001", 100),
    "after_sync": lambda d: d.binlog_storage.after_sync(STORAGE, "binlog.000001", 100),
    "transmit_start": start,
    "transmit_stop": lambda d: d.binlog_transmit.transmit_stop(start(d)),
    "reserve_header": lambda d: d.binlog_transmit.new_packet(start(d), b"ev"),
    "before_send_event": send,
    "after_send_event": lambda d: d.binlog_transmit.after_send_event(start(d), b"ev"),
    "after_reset_master": lambda d: d.binlog_transmit.after_reset_master(STORAGE),
    "thread_start": lambda d: d.binlog_relay_io.thread_start(RELAY),
    "thread_stop": lambda d: d.binlog_relay_io.thread_stop(RELAY),
    "applier_start": lambda d: d.binlog_relay_io.applier_start(RELAY),
    "applier_stop": lambda d: d.binlog_relay_io.applier_stop(RELAY, False),
    "before_request_transmit": lambda d: d.binlog_relay_io.before_request_transmit(
        RELAY, BinlogDumpFlags.NONE
    ),
    "after_read_event": lambda d: d.binlog_relay_io.after_read_event(RELAY, b"\xef\x01ev"),
    "after_queue_event": lambda d: d.binlog_relay_io.after_queue_event(
        RELAY, b"ev", BinlogRelayFlags.BINLOG_RELAY_IS_SYNCED
    ),
    "after_reset_slave": lambda d: d.binlog_relay_io.after_reset_slave(RELAY),
    "before_recovery": lambda d: d.server_state.before_recovery(STATE),
    "after_engine_recovery": lambda d: d.server_state.after_engine_recovery(STATE),
    "after_recovery": lambda d: d.server_state.after_recovery(STATE),
    "before_server_shutdown": lambda d: d.server_state.before_server_shutdown(STATE),
    "after_server_shutdown": lambda d: d.server_state.after_server_shutdown(STATE),
}

# The consequence of a failure, per hook (the issue and reference/semisync.md):
# (errno, message) for hooks whose failure is an error, None where it is only logged.
EXPECTED: dict[str, tuple[int, str] | None] = {
    "begin": (3100, "Error on observer while running replication hook 'begin'."),
    "before_dml": (3098, "The table does not comply with the requirements by an external plugin."),
    "before_commit": (3100, "Error on observer while running replication hook 'before_commit'."),
    "before_rollback": None,
    "after_commit": None,
    "after_rollback": None,
    "after_flush": (3100, "Error on observer while running replication hook 'after_flush'."),
    "after_sync": (3100, "Error on observer while running replication hook 'after_sync'."),
    "transmit_start": (1236, "Failed to run 'transmit_start' hook"),
    "transmit_stop": None,
    "reserve_header": (1236, "Failed to run 'reserve_header' hook"),
    "before_send_event": (1236, "Failed to run 'before_send_event' hook"),
    "after_send_event": (1236, "Failed to run 'after_send_event' hook"),
    "after_reset_master": None,
    "thread_start": (1593, "Fatal error: Failed to run 'thread_start' hook"),
    "thread_stop": None,
    "applier_start": (1593, "Fatal error: Failed to run 'applier_start' hook"),
    "applier_stop": None,
    "before_request_transmit": (1593, "Fatal error: Failed to run 'before_request_transmit' hook"),
    "after_read_event": (1593, "Fatal error: Failed to run 'after_read_event' hook"),
    "after_queue_event": (1593, "Fatal error: Failed to run 'after_queue_event' hook"),
    "after_reset_slave": None,
    "before_recovery": None,
    "after_engine_recovery": None,
    "after_recovery": None,
    "before_server_shutdown": None,
    "after_server_shutdown": None,
}


def test_every_hook_has_a_call_and_an_expected_consequence() -> None:
    assert set(CALLS) == set(HOOKS) == set(EXPECTED)


def failing(hook: str, calls: list[str]) -> object:
    """A plugin whose ``hook`` fails; it observes dumps so transmit hooks reach it."""

    def fail(self: object) -> None:
        calls.append(hook)
        raise ObserverError(f"{hook} refused")

    hooks: dict[str, Callable[..., Any]] = {hook: fail}
    if hook != "transmit_start":
        hooks["transmit_start"] = lambda self: True
    return plugin(f"failing_{hook}", **hooks)


def recorder(hook: str, calls: list[str], name: str) -> object:
    hooks: dict[str, Callable[..., Any]] = {hook: lambda self: calls.append(name)}
    if hook != "transmit_start":
        hooks["transmit_start"] = lambda self: True
    return plugin(name, **hooks)


@pytest.mark.parametrize("hook", sorted(HOOKS))
def test_failure_consequence_per_hook(
    delegates: Delegates, rpl_log: pytest.LogCaptureFixture, hook: str
) -> None:
    """The first failure stops the loop; error hooks raise the MySQL error, the others log."""
    calls: list[str] = []
    delegates.registry.register(failing(hook, calls), "first")
    delegates.registry.register(recorder(hook, calls, "second"), "second")
    expected = EXPECTED[hook]
    if expected is None:
        CALLS[hook](delegates)
    else:
        with pytest.raises(HookError) as raised:
            CALLS[hook](delegates)
        assert (raised.value.errno, raised.value.message) == expected
        assert raised.value.sqlstate == "HY000"
        assert (raised.value.hook, raised.value.plugin) == (hook, "first")
    assert calls == [hook], "the observer after the failing one must not be called"
    assert f"Run function '{hook}' in plugin 'first' failed" in rpl_log.text
    assert "[MY-010207]" in rpl_log.text or any(
        getattr(r, "mysql_code", 0) == 10207 for r in rpl_log.records
    )


def test_observers_run_in_registration_order(delegates: Delegates) -> None:
    calls: list[str] = []
    for name in ("a", "b", "c"):
        delegates.registry.register(recorder("before_commit", calls, name), name)
    delegates.transaction.before_commit(TRANS)
    assert calls == ["a", "b", "c"]


def test_tryfirst_and_trylast_keep_registration_order_within_their_group(
    delegates: Delegates,
) -> None:
    calls: list[str] = []

    def record(name: str, tryfirst: bool = False, trylast: bool = False) -> object:
        return type(
            name,
            (),
            {
                "after_commit": hookimpl(tryfirst=tryfirst, trylast=trylast)(
                    lambda self: calls.append(name)
                )
            },
        )()

    delegates.registry.register(record("last1", trylast=True), "last1")
    delegates.registry.register(record("plain1"), "plain1")
    delegates.registry.register(record("first1", tryfirst=True), "first1")
    delegates.registry.register(record("last2", trylast=True), "last2")
    delegates.registry.register(record("plain2"), "plain2")
    delegates.registry.register(record("first2", tryfirst=True), "first2")
    delegates.transaction.after_commit(TRANS)
    assert calls == ["first1", "first2", "plain1", "plain2", "last1", "last2"]


def test_observer_errno_replaces_the_default_error(delegates: Delegates) -> None:
    def refuse(self: object) -> None:
        raise ObserverError(
            "Plugin instructed the server to rollback the current transaction.",
            errno=3101,
            sqlstate="40000",
        )

    delegates.registry.register(plugin("gr", before_commit=refuse), "gr")
    with pytest.raises(HookError) as raised:
        delegates.transaction.before_commit(TRANS)
    assert (raised.value.errno, raised.value.sqlstate) == (3101, "40000")


def test_unexpected_exception_fails_the_hook_and_logs_the_traceback(
    delegates: Delegates, rpl_log: pytest.LogCaptureFixture
) -> None:
    delegates.registry.register(plugin("buggy", after_sync=lambda self: 1 / 0), "buggy")
    with pytest.raises(HookError):
        delegates.binlog_storage.after_sync(STORAGE, "binlog.000001", 4)
    assert "ZeroDivisionError" in rpl_log.text


def test_ignored_failure_lets_the_caller_continue(
    delegates: Delegates, rpl_log: pytest.LogCaptureFixture
) -> None:
    def fail(self: object) -> None:
        raise ObserverError("cannot audit")

    delegates.registry.register(plugin("audit", after_commit=fail), "audit")
    delegates.transaction.after_commit(TRANS)  # only logged: no exception
    assert "Run function 'after_commit' in plugin 'audit' failed" in rpl_log.text
    assert "cannot audit" in rpl_log.text


def test_hook_arguments_are_passed_by_name_and_subset(delegates: Delegates) -> None:
    seen: list[tuple[str, int]] = []
    delegates.registry.register(
        plugin("p", after_flush=lambda self, log_pos, log_file: seen.append((log_file, log_pos))),
        "p",
    )
    delegates.binlog_storage.after_flush(STORAGE, "binlog.000007", 1234)
    assert seen == [("binlog.000007", 1234)]


# What each argument a delegate passes must be, by the name the specification gives it.
ARGUMENT_TYPES: dict[str, type | tuple[type, ...]] = {
    "param": (TransParam, BinlogStorageParam, TransmitParam, RelayIOParam, ServerStateParam),
    "log_file": str,
    "log_pos": int,
    "event": bytes,
    "header": memoryview,
    "packet": bytes,
    "flags": (BinlogDumpFlags, BinlogRelayFlags),
    "aborted": bool,
    "skipped_log_file": (str, type(None)),
    "skipped_log_pos": int,
}


def all_arguments_plugin(hook: str, seen: dict[str, dict[str, object]]) -> object:
    """A plugin whose ``hook`` declares every argument of its specification, in order."""
    names = getattr(hookspecs_of(hook), hook).__code__.co_varnames[1:]
    names = names[: getattr(hookspecs_of(hook), hook).__code__.co_argcount - 1]
    source = (
        f"def {hook}(self, {', '.join(names)}):\n"
        f"    seen[{hook!r}] = dict(zip({names!r}, ({', '.join(names)},)))\n"
    )
    scope: dict[str, Any] = {"seen": seen}
    exec(source, scope)  # noqa: S102 - a signature built from the specification
    hooks: dict[str, Callable[..., Any]] = {hook: scope[hook]}
    if hook != "transmit_start":
        hooks["transmit_start"] = lambda self: True
    return plugin(f"all_{hook}", **hooks)


def hookspecs_of(hook: str) -> type:
    return next(cls for cls in INTERFACES.values() if hasattr(cls, hook))


@pytest.mark.parametrize("hook", sorted(HOOKS))
def test_each_argument_reaches_the_observer_under_its_own_name(
    delegates: Delegates, hook: str
) -> None:
    seen: dict[str, dict[str, object]] = {}
    delegates.registry.register(all_arguments_plugin(hook, seen), "all")
    CALLS[hook](delegates)
    assert set(seen) == {hook}
    for name, value in seen[hook].items():
        assert isinstance(value, ARGUMENT_TYPES[name]), f"{hook}: {name} = {value!r}"


# --- binlog transmit: observe flag, reserve_header, before_send_event ----------------------


def header_plugin(name: str, reserved: bytes, flag: int | None = None) -> object:
    def before_send(self: object, header: memoryview, event: bytes) -> None:
        assert bytes(header) == reserved and event == b"EVENT"
        if flag is not None:
            header[-1] = flag

    return plugin(
        name,
        transmit_start=lambda self: True,
        reserve_header=lambda self: reserved,
        before_send_event=before_send,
    )


def test_packet_is_ok_byte_then_headers_in_order_then_event(delegates: Delegates) -> None:
    delegates.registry.register(header_plugin("semisync", b"\xef\x00", flag=1), "semisync")
    delegates.registry.register(header_plugin("other", b"abc", flag=ord("Z")), "other")
    dump = start(delegates)
    packet = delegates.binlog_transmit.new_packet(dump, b"EVENT")
    assert bytes(packet.data) == b"\x00\xef\x00abcEVENT"
    delegates.binlog_transmit.before_send_event(dump, packet, "binlog.000001", 120)
    assert bytes(packet.data) == b"\x00\xef\x01abZEVENT"


def test_event_packet_is_new_packet_then_before_send_event(delegates: Delegates) -> None:
    delegates.registry.register(header_plugin("semisync", b"\xef\x00", flag=1), "semisync")
    delegates.registry.register(header_plugin("other", b"abc", flag=ord("Z")), "other")
    dump = start(delegates)
    transmit = delegates.binlog_transmit
    assert (
        bytes(transmit.event_packet(dump, b"EVENT", "binlog.000001", 120))
        == b"\x00\xef\x01abZEVENT"
    )
    unobserved = DumpObservers(TRANSMIT, dump.started, frozenset({"other"}))
    assert (
        bytes(transmit.event_packet(unobserved, b"EVENT", "binlog.000001", 120)) == b"\x00abZEVENT"
    )


def test_event_packet_failure_is_1236(delegates: Delegates) -> None:
    def refuse(self: object) -> None:
        raise ObserverError("no header")

    delegates.registry.register(
        plugin(
            "bad",
            transmit_start=lambda self: True,
            reserve_header=lambda self: b"h",
            before_send_event=refuse,
        ),
        "bad",
    )
    with pytest.raises(HookError) as raised:
        delegates.binlog_transmit.event_packet(start(delegates), b"E", "binlog.000001", 9)
    assert raised.value.errno == 1236


def test_only_observing_plugins_reserve_headers(delegates: Delegates) -> None:
    delegates.registry.register(
        plugin("quiet", transmit_start=lambda self: None, reserve_header=lambda self: b"xx"),
        "quiet",
    )
    dump = start(delegates)
    assert dump.observed == frozenset() and dump.started == {"quiet"}
    assert bytes(delegates.binlog_transmit.new_packet(dump, b"E").data) == b"\x00E"


@pytest.mark.parametrize("size, allowed", [(32, True), (33, False)])
def test_reserve_header_limit_is_32_bytes(
    delegates: Delegates, rpl_log: pytest.LogCaptureFixture, size: int, allowed: bool
) -> None:
    delegates.registry.register(
        plugin("big", transmit_start=lambda self: True, reserve_header=lambda self: b"h" * size),
        "big",
    )
    dump = start(delegates)
    if allowed:
        assert len(delegates.binlog_transmit.new_packet(dump, b"E").data) == 1 + size + 1
    else:
        with pytest.raises(HookError) as raised:
            delegates.binlog_transmit.new_packet(dump, b"E")
        assert raised.value.errno == 1236
        assert "reserved 33 header bytes; at most 32" in rpl_log.text


def test_reserve_header_must_return_bytes(delegates: Delegates) -> None:
    delegates.registry.register(
        plugin("str", transmit_start=lambda self: True, reserve_header=lambda self: "xx"), "str"
    )
    with pytest.raises(HookError):
        delegates.binlog_transmit.new_packet(start(delegates), b"E")


def test_transmit_start_failure_stops_the_started_observers(delegates: Delegates) -> None:
    stopped: list[str] = []

    def refuse(self: object) -> None:
        raise ObserverError("no")

    delegates.registry.register(
        plugin(
            "a", transmit_start=lambda self: True, transmit_stop=lambda self: stopped.append("a")
        ),
        "a",
    )
    delegates.registry.register(
        plugin("b", transmit_start=refuse, transmit_stop=lambda self: stopped.append("b")), "b"
    )
    delegates.registry.register(
        plugin(
            "c", transmit_start=lambda self: True, transmit_stop=lambda self: stopped.append("c")
        ),
        "c",
    )
    with pytest.raises(HookError):
        start(delegates)
    assert stopped == ["a", "b"]


def test_plugin_installed_after_dump_start_does_not_observe_it(delegates: Delegates) -> None:
    dump = start(delegates)
    delegates.registry.register(
        plugin("late", transmit_start=lambda self: True, reserve_header=lambda self: b"L"), "late"
    )
    assert bytes(delegates.binlog_transmit.new_packet(dump, b"E").data) == b"\x00E"


# --- binlog relay IO: the after_read_event chain --------------------------------------------


def test_after_read_event_chains_replacements(delegates: Delegates) -> None:
    seen: list[bytes] = []

    def strip(self: object, packet: bytes) -> bytes:
        seen.append(packet)
        return packet[2:]

    def keep(self: object, packet: bytes) -> None:
        seen.append(packet)

    delegates.registry.register(plugin("semisync", after_read_event=strip), "semisync")
    delegates.registry.register(plugin("audit", after_read_event=keep), "audit")
    assert delegates.binlog_relay_io.after_read_event(RELAY, b"\xef\x01EVENT") == b"EVENT"
    assert seen == [b"\xef\x01EVENT", b"EVENT"]


def test_after_read_event_without_observers_returns_the_packet(delegates: Delegates) -> None:
    assert delegates.binlog_relay_io.after_read_event(RELAY, b"EV") == b"EV"


# --- registration -----------------------------------------------------------------------------


def test_registering_a_misspelled_hook_names_it(delegates: Delegates) -> None:
    with pytest.raises(PluginLoadError, match="'after_comit'.*did you mean 'after_commit'"):
        delegates.registry.register(plugin("typo", after_comit=lambda self: None), "typo")
    assert delegates.registry.plugin_names() == frozenset()


def test_unregister_waits_for_calls_inside_the_plugin(delegates: Delegates) -> None:
    inside, release = threading.Event(), threading.Event()

    def block(self: object) -> None:
        inside.set()
        release.wait(10)

    delegates.registry.register(plugin("slow", after_sync=block), "slow")
    caller = threading.Thread(target=CALLS["after_sync"], args=(delegates,))
    caller.start()
    assert inside.wait(10)
    remover = threading.Thread(target=delegates.registry.unregister, args=("slow",))
    remover.start()
    remover.join(0.3)
    assert remover.is_alive(), "unregister returned while a call was inside the plugin"
    assert delegates.binlog_storage.is_empty("after_sync"), (
        "new calls must not see the plugin being removed"
    )
    release.set()
    remover.join(10)
    caller.join(10)
    assert not remover.is_alive() and not caller.is_alive()


def test_unregister_from_inside_a_hook_call_does_not_wait_for_itself(delegates: Delegates) -> None:
    """A thread inside a hook call that unregisters a plugin (its own) returns after the
    swap: waiting for the calls inside the plugin would wait for itself for ever. Its
    other calls, before and after, still count in and out (a later unregister from
    outside does not hang on a count this thread left behind).
    """
    calls: list[str] = []

    def remove_self(self: object) -> None:
        calls.append("inside")
        delegates.registry.unregister("selfish")

    delegates.registry.register(plugin("selfish", after_sync=remove_self), "selfish")
    caller = threading.Thread(target=CALLS["after_sync"], args=(delegates,), daemon=True)
    caller.start()
    caller.join(5)
    assert not caller.is_alive(), "unregister inside a hook call waited for itself"
    assert calls == ["inside"] and delegates.binlog_storage.is_empty("after_sync")
    delegates.registry.register(plugin("later", after_sync=lambda self: None), "later")
    CALLS["after_sync"](delegates)
    remover = threading.Thread(target=delegates.registry.unregister, args=("later",), daemon=True)
    remover.start()
    remover.join(5)
    assert not remover.is_alive(), "a call's count was left behind"


def test_concurrent_register_unregister_under_hook_calls(delegates: Delegates) -> None:
    """No exception, no lost call for a plugin registered throughout, and no call
    into a plugin after its unregister returned."""
    threads, calls_each = 4, 1500
    counted = {"steady": 0}
    count_lock = threading.Lock()
    violations: list[str] = []
    errors: list[BaseException] = []

    def count(self: object) -> None:
        with count_lock:
            counted["steady"] += 1
        time.sleep(0)  # let the registering thread run in the middle of a call

    class Transient:
        def __init__(self, name: str) -> None:
            self.name, self.removed = name, False

        @hookimpl(trylast=True)
        def before_commit(self) -> None:
            if self.removed:
                violations.append(self.name)
            time.sleep(0)

        @hookimpl(tryfirst=True)
        def after_commit(self) -> None:
            if self.removed:
                violations.append(self.name)

    delegates.registry.register(plugin("steady", before_commit=count), "steady")
    stop = threading.Event()

    def caller() -> None:
        try:
            for _ in range(calls_each):
                delegates.transaction.before_commit(TRANS)
                delegates.transaction.after_commit(TRANS)
        except BaseException as exc:  # noqa: BLE001 - collected and asserted on
            errors.append(exc)

    def churn() -> None:
        round_ = 0
        try:
            while not stop.is_set():
                transient = Transient(f"t{round_ % 3}")
                delegates.registry.register(transient, transient.name)
                delegates.registry.unregister(transient.name)
                transient.removed = True
                round_ += 1
        except BaseException as exc:  # noqa: BLE001 - collected and asserted on
            errors.append(exc)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # switch threads often, so calls and registrations interleave
    try:
        churner = threading.Thread(target=churn)
        churner.start()
        callers = [threading.Thread(target=caller) for _ in range(threads)]
        for thread in callers:
            thread.start()
        for thread in callers:
            thread.join(120)
        stop.set()
        churner.join(30)
    finally:
        sys.setswitchinterval(interval)
    assert errors == []
    assert violations == []
    assert counted["steady"] == threads * calls_each
