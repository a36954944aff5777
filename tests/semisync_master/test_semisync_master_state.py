"""The semisync source's state machine (rpl.semisync_master.master) without a server:
which waiters an ACK wakes, timeouts, switching off and on, wait_for_slave_count."""

from __future__ import annotations

import threading
import time

import attrs

from rpl.semisync_master.active import AckTracker, ActiveTransactions
from rpl.semisync_master.master import SemisyncMaster, Settings


@attrs.define
class Log:
    lines: list[str] = attrs.field(factory=list)

    def error(self, message: str) -> None:
        self.lines.append(message)

    warning = note = error


def master(
    timeout_ms: int = 2000, count: int = 1, wait_no_slave: bool = True
) -> tuple[SemisyncMaster, Log]:
    log = Log()
    state = SemisyncMaster(
        Settings(
            enabled=lambda: True,
            timeout_ms=lambda: timeout_ms,
            wait_no_slave=lambda: wait_no_slave,
            wait_for_slave_count=lambda: count,
        ),
        log,
    )
    state.enable()
    return state, log


def waiting(state: SemisyncMaster, position: tuple[str, int]) -> threading.Thread:
    thread = threading.Thread(target=state.wait, args=(position,), daemon=True)
    thread.start()
    return thread


def wait_sessions(state: SemisyncMaster, count: int) -> None:
    deadline = time.monotonic() + 5
    while state.wait_sessions != count:
        assert time.monotonic() < deadline, state.wait_sessions
        time.sleep(0.005)


def test_an_ack_wakes_only_the_waiters_at_or_below_it() -> None:
    lock = threading.Lock()
    active = ActiveTransactions(lock)
    with lock:
        for pos in (100, 200, 300):
            active.add(("binlog.000001", pos))
        low = active.condition_for(("binlog.000001", 100))
        mid = active.condition_for(("binlog.000001", 150))
        assert mid is active.condition_for(("binlog.000001", 200)), "the group's end node"
        assert low is not mid
        assert active.release_up_to(("binlog.000001", 200)) == 2
        assert len(active) == 1
        assert active.condition_for(("binlog.000001", 100)) is active.condition_for(
            ("binlog.000001", 300)
        )


def test_files_order_before_positions() -> None:
    lock = threading.Lock()
    active = ActiveTransactions(lock)
    with lock:
        active.add(("binlog.000002", 4))
        active.add(("binlog.000001", 9000))
        assert active.release_up_to(("binlog.000001", 99999)) == 1
        assert active.is_end(("binlog.000002", 4))


def test_ack_tracker_counts_distinct_replicas() -> None:
    acks = AckTracker()
    acks.report(1, ("binlog.000001", 500))
    assert acks.reached_by(2) is None
    acks.report(1, ("binlog.000001", 900))
    assert acks.reached_by(2) is None, "one replica twice is not two"
    acks.report(2, ("binlog.000001", 700))
    assert acks.reached_by(2) == ("binlog.000001", 700)
    acks.report(2, ("binlog.000001", 600))
    assert acks.reached_by(2) == ("binlog.000001", 700), "an older ACK changes nothing"


def test_ack_releases_waiter_and_counts_yes_tx() -> None:
    state, _ = master()
    state.record(("binlog.000001", 100))
    state.record(("binlog.000001", 200))
    first, second = waiting(state, ("binlog.000001", 100)), waiting(state, ("binlog.000001", 200))
    wait_sessions(state, 2)
    state.report_ack(7, ("binlog.000001", 100))
    first.join(2)
    assert not first.is_alive() and second.is_alive()
    assert state.counters.yes_tx == 1
    state.report_ack(7, ("binlog.000001", 200))
    second.join(2)
    assert state.counters.yes_tx == 2 and state.counters.no_tx == 0


def test_timeout_switches_off_and_releases_everyone() -> None:
    state, log = master(timeout_ms=200)
    state.record(("binlog.000001", 100))
    state.record(("binlog.000001", 200))
    waiters = [waiting(state, ("binlog.000001", 100)), waiting(state, ("binlog.000001", 200))]
    for thread in waiters:
        thread.join(3)
        assert not thread.is_alive()
    assert not state.status
    assert state.counters.no_times == 1 and state.counters.no_tx == 2
    assert any("Timeout waiting for reply of binlog" in line for line in log.lines)
    started = time.monotonic()
    state.record(("binlog.000001", 300))
    state.wait(("binlog.000001", 300))
    assert time.monotonic() - started < 0.1, "no wait while off"
    assert state.needs_ack(("binlog.000001", 300)), "flagged at the largest commit while off"
    assert not state.needs_ack(("binlog.000001", 250))
    state.report_ack(3, ("binlog.000001", 250))
    assert not state.status, "an ACK behind the largest commit does not switch on"
    state.report_ack(3, ("binlog.000001", 300))
    assert state.status


def test_wait_no_slave_off_switches_off_when_replicas_leave() -> None:
    state, _ = master(count=2, wait_no_slave=False)
    state.add_client()
    state.add_client()
    state.remove_client()
    assert not state.status and state.counters.no_times == 1


def test_wait_for_slave_count_two() -> None:
    state, _ = master(count=2)
    state.record(("binlog.000001", 100))
    thread = waiting(state, ("binlog.000001", 100))
    wait_sessions(state, 1)
    state.report_ack(1, ("binlog.000001", 100))
    thread.join(0.2)
    assert thread.is_alive(), "one replica's ACK does not release it"
    state.report_ack(2, ("binlog.000001", 100))
    thread.join(2)
    assert not thread.is_alive() and state.counters.yes_tx == 1
