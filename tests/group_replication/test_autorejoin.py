"""The auto-rejoin procedure's loop (rpl.group_replication.autorejoin): how many attempts,
the waits between them, its log lines, its thread, and STOP's abort."""

from __future__ import annotations

import threading
import time

import pytest

from rpl.group_replication.autorejoin import STAGE, THREAD_NAME, AutoRejoin, interval
from rpl.observers import ThreadType


class Handle:
    def __init__(self, name: str, threads: Threads) -> None:
        self.thread_id = 1
        self.name = name
        self.state: str | None = None
        self._threads = threads

    def set_state(self, state: str | None) -> None:
        self.state = state
        self._threads.states.append(state)

    def close(self) -> None:
        self._threads.closed += 1


class Threads:
    def __init__(self) -> None:
        self.names: list[str] = []
        self.states: list[str | None] = []
        self.closed = 0

    def register_thread(self, name: str, thread_type: ThreadType = ThreadType.BACKGROUND) -> Handle:
        self.names.append(name)
        return Handle(name, self)


class Log:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def note(self, message: str) -> None:
        self.lines.append(message)

    warning = error = note


def run(tries: int, results: list[bool]) -> tuple[AutoRejoin, Log, Threads, list[str]]:
    log, threads, calls = Log(), Threads(), []
    outcomes = iter(results)
    procedure = AutoRejoin(threads, log)

    def attempt() -> bool:
        calls.append("attempt")
        return next(outcomes)

    procedure.start(tries, attempt, lambda: calls.append("give up"))
    assert procedure._thread is not None
    procedure._thread.join(10)
    return procedure, log, threads, calls


@pytest.fixture(autouse=True)
def short_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RPL_GR_AUTOREJOIN_INTERVAL", "0.05")


def test_stops_at_the_first_attempt_that_joins() -> None:
    procedure, log, threads, calls = run(3, [False, True])
    assert calls == ["attempt", "attempt"]
    assert [line.split("'")[1] for line in log.lines] == [
        "Started auto-rejoin procedure attempt 1 of 3",
        "Started auto-rejoin procedure attempt 2 of 3",
        "Auto-rejoin procedure attempt 2 of 3 finished. Member was able to join the group.",
    ]
    assert threads.names == [THREAD_NAME] and threads.states == [STAGE] and threads.closed == 1
    assert not procedure.running


def test_gives_up_after_the_last_attempt() -> None:
    _, log, _, calls = run(2, [False, False])
    assert calls == ["attempt", "attempt", "give up"]
    assert log.lines[-1].endswith(
        "'Auto-rejoin procedure attempt 2 of 2 finished. Member was not able to join the group.'"
    )


def test_waits_between_attempts_not_after_the_last(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RPL_GR_AUTOREJOIN_INTERVAL", "0.5")
    began = time.monotonic()
    _, _, _, calls = run(3, [False, False, False])
    took = time.monotonic() - began
    assert calls == ["attempt"] * 3 + ["give up"]
    assert 1.0 <= took < 1.5, took  # two waits of 0.5 s


def test_abort_ends_a_wait_and_gives_nothing_up(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RPL_GR_AUTOREJOIN_INTERVAL", "60")
    log, calls = Log(), []
    attempted = threading.Event()
    procedure = AutoRejoin(Threads(), log)

    def attempt() -> bool:
        calls.append("attempt")
        attempted.set()
        return False

    procedure.start(3, attempt, lambda: calls.append("give up"))
    assert attempted.wait(5)
    assert procedure.running
    procedure.start(3, attempt, lambda: calls.append("give up"))  # one at a time
    assert procedure.abort() is True
    assert not procedure.running and procedure.aborted
    assert calls == ["attempt"]
    assert not any("finished" in line for line in log.lines)
    assert procedure.abort() is False


@pytest.mark.parametrize(("value", "seconds"), [("", 300.0), ("2.5", 2.5), ("x", 300.0)])
def test_interval(monkeypatch: pytest.MonkeyPatch, value: str, seconds: float) -> None:
    monkeypatch.setenv("RPL_GR_AUTOREJOIN_INTERVAL", value)
    assert interval() == seconds
