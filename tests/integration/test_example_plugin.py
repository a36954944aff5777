"""The third-party path end to end: pip-install the example observer, discover it through
its entry point, install it, see every call recorded, uninstall it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any, cast

import pytest

from rpl.core.plugins import discover
from rpl.observers import (
    BinlogDumpFlags,
    BinlogRelayFlags,
    BinlogStorageParam,
    RelayIOParam,
    ServerNet,
    TransmitParam,
    TransParam,
    UserVariables,
)

PYPROJECT = Path(__file__).resolve().parents[2] / "examples" / "audit_observer" / "pyproject.toml"
VERSION = tomllib.loads(PYPROJECT.read_text())["project"]["version"]
"""The example's own version (a third party's package: not the repository's VERSION)."""


def drive(delegates: Any) -> None:
    """One of each kind of call: a commit, a group flush, a dump sending an event, a relay read."""
    uuid = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
    delegates.transaction.before_commit(TransParam(server_id=1, server_uuid=uuid, thread_id=8))
    delegates.binlog_storage.after_flush(BinlogStorageParam(1, uuid, 8), "binlog.000001", 1234)
    dump = delegates.binlog_transmit.transmit_start(
        TransmitParam(
            server_id=2,
            thread_id=9,
            flags=BinlogDumpFlags.NONE,
            host="127.0.0.1",
            user="repl",
            net=cast(ServerNet, object()),
            user_vars=cast(UserVariables, object()),
        ),
        "binlog.000001",
        4,
    )
    packet = delegates.binlog_transmit.new_packet(dump, b"\x01\x02")
    delegates.binlog_transmit.before_send_event(dump, packet, "binlog.000001", 1234)
    delegates.binlog_transmit.transmit_stop(dump)
    relay = RelayIOParam(
        server_id=2,
        thread_id=3,
        channel_name="",
        host="127.0.0.1",
        port=3306,
        user="repl",
        master_log_name="binlog.000001",
        master_log_pos=1234,
    )
    delegates.binlog_relay_io.after_queue_event(
        relay, b"\x01\x02", BinlogRelayFlags.BINLOG_RELAY_IS_SYNCED
    )


@pytest.mark.usefixtures("example_installed")
def test_discovered_installed_called_and_removed(plugin_env: Any, tmp_path: Path) -> None:
    source = discover()["audit_observer"]
    assert (source.distribution, source.version) == ("rpl-audit-observer", VERSION)
    installed = plugin_env.plugins.install("audit_observer")
    assert len(installed.hooks) == 27, "the example implements every hook"
    log_file = tmp_path / "audit.jsonl"
    plugin_env.system.set_global("audit_observer_log_file", str(log_file))
    drive(plugin_env.delegates)

    lines = [json.loads(line) for line in log_file.read_text().splitlines()]
    assert [line["hook"] for line in lines] == [
        "before_commit",
        "after_flush",
        "transmit_start",
        "reserve_header",
        "before_send_event",
        "transmit_stop",
        "after_queue_event",
    ]
    assert lines[1]["args"] == {
        "param": {
            "server_id": 1,
            "server_uuid": lines[1]["args"]["param"]["server_uuid"],
            "thread_id": 8,
        },
        "log_file": "binlog.000001",
        "log_pos": 1234,
    }
    assert lines[4]["args"]["event"] == "0102" and lines[4]["args"]["header"] == ""
    assert lines[2]["args"]["param"]["net"] == "object", "services are named, not dumped"
    assert lines[6]["args"]["flags"] == 1
    assert plugin_env.status.value("Audit_observer_calls") == 7
    plugin_env.status.flush()
    assert plugin_env.status.value("Audit_observer_calls") == 0

    plugin_env.plugins.uninstall("audit_observer")
    assert plugin_env.system.show("audit%") == [] and plugin_env.status.show("audit%") == []
    drive(plugin_env.delegates)
    assert len(log_file.read_text().splitlines()) == 7, "no call after UNINSTALL"


@pytest.mark.usefixtures("example_installed")
def test_rpl_plugins_lists_bundled_plugins_and_the_example() -> None:
    rpl = Path(sys.executable).with_name("rpl")
    out = subprocess.run(
        [str(rpl), "plugins", "--json"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    ).stdout
    rows = {row["name"]: row for row in json.loads(out)}
    assert {
        "rpl_semi_sync_master",
        "rpl_semi_sync_slave",
        "group_replication",
        "audit_observer",
    } <= set(rows)
    assert rows["rpl_semi_sync_master"]["distribution"] == "rpl-semisync-master"
    assert rows["audit_observer"]["version"] == VERSION
    assert "after_sync" in rows["audit_observer"]["hooks"]
    assert all(not row["error"] for row in rows.values())
    text = subprocess.run([str(rpl), "plugins"], capture_output=True, text=True, check=True).stdout
    assert f"audit_observer  (rpl-audit-observer {VERSION})" in text
