"""The bundled semisync plugins beyond the conformance suite: the pre-WL#6630 design kept
for the benchmark (the dump thread reads the ACKs), and a clean shutdown while a commit
waits for an ACK."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from rpl.core.testing.suite.semisync import (
    ACK_RECEIVER,
    Inserts,
    Nodes,
    SemisyncPlugins,
    clients_are,
    counter,
    in_background,
)
from rpl.core.testing.topology import wait_caught_up, wait_for
from rpl.semisync_master.plugin import ACK_IN_DUMP_THREAD_ENV


@pytest.fixture
def nodes(tmp_path: Path) -> Iterator[Nodes]:
    nodes = Nodes(tmp_path, SemisyncPlugins(timeout_ms=60_000))
    yield nodes
    nodes.kill_all()


def test_ack_in_dump_thread(nodes: Nodes, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ACK_IN_DUMP_THREAD_ENV, "1")
    source = nodes.source()
    monkeypatch.delenv(ACK_IN_DUMP_THREAD_ENV)
    replica = nodes.replica(source)
    wait_for(clients_are(source, 1), 20, "the semisync dump")
    assert (
        source.query(f"SELECT NAME FROM performance_schema.threads WHERE NAME = '{ACK_RECEIVER}'")
        == []
    ), "no ACK receiver thread"
    inserts = Inserts(source)
    for _ in range(20):
        inserts.one()
    assert counter(source, "yes_tx") == 20 and counter(source, "no_tx") == 0
    assert counter(source, "net_waits") >= 20, "the dump thread waited for each ACK"
    wait_caught_up(source, replica)


def test_shutdown_releases_a_waiting_commit(nodes: Nodes) -> None:
    source = nodes.source()
    waiting, errors = in_background(Inserts(source).one)
    wait_for(lambda: counter(source, "wait_sessions") == 1, 10, "the commit to wait")
    started = time.monotonic()
    assert source.stop(timeout=30) == 0
    assert time.monotonic() - started < 15, "shutdown did not wait for the ACK timeout"
    waiting.join(10)
    assert "SEMISYNC: Forced shutdown. Some updates might not be replicated." in source.error_log()
