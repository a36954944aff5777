"""A third-party observer (the example audit observer, pip-installed) on a real source and
replica: it sees the transmit and relay-IO hooks in MySQL's order, with the positions
the hooks document."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rpl.core.testing.process import ServerProcess
from rpl.core.testing.topology import (
    create_replication_user,
    replicate,
    wait_caught_up,
    wait_for,
)

pytestmark = pytest.mark.usefixtures("example_installed")


def calls(path: Path, hooks: set[str]) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return [line for line in lines if line["hook"] in hooks]


TRANSMIT = {
    "transmit_start",
    "reserve_header",
    "before_send_event",
    "after_send_event",
    "transmit_stop",
}
RELAY = {
    "thread_start",
    "thread_stop",
    "applier_start",
    "applier_stop",
    "before_request_transmit",
    "after_read_event",
    "after_queue_event",
    "after_reset_slave",
}


def log_pos(event_hex: str) -> int:
    return int.from_bytes(bytes.fromhex(event_hex)[13:17], "little")


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[tuple[ServerProcess, ServerProcess, Path, Path]]:
    source_log, replica_log = tmp_path / "source.jsonl", tmp_path / "replica.jsonl"
    source = ServerProcess(
        tmp_path / "source",
        options=[
            "--server-id",
            "1",
            "--plugin-load=audit_observer",
            f"--audit-observer-log-file={source_log}",
        ],
    ).start()
    replica = ServerProcess(
        tmp_path / "replica",
        options=[
            "--server-id",
            "2",
            "--plugin-load=audit_observer",
            "--sync-relay-log=1",
            f"--audit-observer-log-file={replica_log}",
        ],
    ).start()
    try:
        yield source, replica, source_log, replica_log
    finally:
        for server in (replica, source):
            server.kill()


def test_transmit_and_relay_hooks_in_order_with_positions(
    pair: tuple[ServerProcess, ServerProcess, Path, Path],
) -> None:
    source, replica, source_log, replica_log = pair
    create_replication_user(source)
    source.query("CREATE DATABASE d")
    source.query("CREATE TABLE d.t (id INT PRIMARY KEY)")
    replicate(replica, source, auto_position=False)
    for i in range(3):
        source.query(f"INSERT INTO d.t VALUES ({i})")
    wait_caught_up(source, replica)
    replica.query("STOP SLAVE")
    wait_for(
        lambda: any(c["hook"] == "transmit_stop" for c in calls(source_log, TRANSMIT)),
        10,
        "transmit_stop on the source",
    )
    replica.query("RESET SLAVE")
    time.sleep(0.2)

    sent = calls(source_log, TRANSMIT)
    names = [c["hook"] for c in sent]
    assert names[0] == "transmit_start" and names[-1] == "transmit_stop"
    assert sent[0]["args"]["log_file"] == "binlog.000001" and sent[0]["args"]["log_pos"] == 4
    assert sent[0]["args"]["param"]["server_id"] == 2
    body = names[1:-1]
    assert body == ["reserve_header", "before_send_event", "after_send_event"] * (len(body) // 3)
    before = [c["args"] for c in sent if c["hook"] == "before_send_event"]
    after = [c["args"] for c in sent if c["hook"] == "after_send_event"]
    assert [a["event"] for a in after] == [b["event"] for b in before]
    real = [b for b in before if b["log_pos"]]
    assert all(b["log_pos"] == log_pos(b["event"]) for b in real), (
        "before_send_event's position is the event's end in the source binlog"
    )
    assert [b["log_pos"] for b in real] == sorted({b["log_pos"] for b in real})
    master_end = int(source.query("SHOW MASTER STATUS")[0][1])
    assert real[-1]["log_pos"] == master_end

    relayed = calls(replica_log, RELAY)
    names = [c["hook"] for c in relayed]
    assert names[:1] == ["applier_start"] or names[:1] == ["thread_start"]
    assert (
        names.index("thread_start")
        < names.index("before_request_transmit")
        < names.index("after_read_event")
    )
    assert relayed[names.index("thread_start")]["args"]["param"]["mysql"] == "NoneType"
    assert relayed[names.index("before_request_transmit")]["args"]["param"]["mysql"] == "SourceLink"
    events = [c for c in relayed if c["hook"] in ("after_read_event", "after_queue_event")]
    assert [c["hook"] for c in events] == ["after_read_event", "after_queue_event"] * (
        len(events) // 2
    )
    queued = [c["args"] for c in events if c["hook"] == "after_queue_event"]
    assert [q["event"] for q in queued] == [b["event"] for b in before], (
        "the replica queued exactly what the source sent"
    )
    for q in queued:
        if log_pos(q["event"]):
            assert q["param"]["master_log_pos"] == log_pos(q["event"])
        relayed_event = bytes.fromhex(q["event"])[4] not in (3, 27, 35)
        assert q["flags"] == (1 if relayed_event else 0), (
            "sync_relay_log=1: every relayed event is synced before after_queue_event"
        )
    assert queued[-1]["param"]["master_log_pos"] == master_end
    reads = [c["args"] for c in events if c["hook"] == "after_read_event"]
    for previous, read in zip(queued, reads[1:], strict=False):
        assert read["param"]["master_log_pos"] == previous["param"]["master_log_pos"], (
            "after_read_event sees the receiver's position before the event it reads"
        )
    assert queued[-1]["param"]["master_log_name"] == "binlog.000001"
    tail = [n for n in names if n not in ("after_read_event", "after_queue_event")]
    assert tail[-3:] == ["thread_stop", "applier_stop", "after_reset_slave"] or tail[-3:] == [
        "applier_stop",
        "thread_stop",
        "after_reset_slave",
    ]
    stop = next(c for c in relayed if c["hook"] == "applier_stop")
    assert stop["args"]["aborted"] is False
