"""``rpl sandbox`` end to end, as a user types it: deploy, status, stop, start, destroy;
no process or port left behind."""

from __future__ import annotations

import json
import random
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from rpl.core.sandbox.sandbox import Sandbox, free_block
from rpl.core.testing.process import port_free


def rpl(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rpl.core.cli", *args], capture_output=True, text=True, timeout=120
    )


def status(directory: Path) -> list[dict[str, Any]]:
    done = rpl("sandbox", "status", "--dir", str(directory), "--json")
    assert done.returncode == 0, done.stderr
    rows: list[dict[str, Any]] = json.loads(done.stdout)
    return rows


def client(directory: Path, node: str, sql: str) -> str:
    done = subprocess.run(
        [str(directory / f"{node}.sh"), "-N", "-e", sql], capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def deploy_semisync(directory: Path, base_port: int) -> subprocess.CompletedProcess[str]:
    """``rpl sandbox deploy``: a source and two AFTER_SYNC semisync replicas from
    ``base_port``."""
    return rpl(
        "sandbox",
        "deploy",
        "replication",
        "--replicas",
        "2",
        "--semisync",
        "after_sync",
        "--base-port",
        str(base_port),
        "--dir",
        str(directory),
    )


def alive(pid: int) -> bool:
    """Running (a zombie whose parent has not reaped it does not count)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


@pytest.fixture
def base_port() -> int:
    """The start of 4 free consecutive ports below the kernel's ephemeral range (so no
    client connection takes one meanwhile)."""
    return free_block(random.randrange(20000, 32000, 10), 4)


def test_sandbox_lifecycle(tmp_path: Path, base_port: int) -> None:
    directory = tmp_path / "sbx"
    blocker = socket.socket()
    blocker.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    blocker.bind(("127.0.0.1", base_port))
    blocker.listen()
    try:
        done = deploy_semisync(directory, base_port)
    finally:
        blocker.close()
    assert done.returncode == 0, done.stderr
    sandbox = Sandbox.load(directory)
    ports = [n.port for n in sandbox.nodes]
    assert ports == [base_port + 1, base_port + 2, base_port + 3], "the taken port is skipped"
    try:
        client(
            directory,
            "source",
            "CREATE DATABASE d; CREATE TABLE d.t (id INT PRIMARY KEY);INSERT INTO d.t VALUES (1)",
        )
        rows = status(directory)
        assert [(r["node"], r["role"]) for r in rows] == [
            ("source", "source"),
            ("replica1", "replica"),
            ("replica2", "replica"),
        ]
        assert rows[0]["state"] == "running"
        assert "clients 2" in rows[0]["semisync"] and "yes_tx 3" in rows[0]["semisync"]
        deadline = time.monotonic() + 20
        while len({r["gtid_executed"] for r in status(directory)}) != 1:
            assert time.monotonic() < deadline, "replicas did not catch up"
            time.sleep(0.2)
        assert all(r["state"] == "running, IO Yes, SQL Yes" for r in status(directory)[1:])

        again = rpl("sandbox", "deploy", "replication", "--dir", str(directory))
        assert again.returncode == 1 and "already holds a sandbox" in again.stderr

        pids = [n.pid for n in sandbox.nodes]
        assert rpl("sandbox", "stop", "--dir", str(directory)).returncode == 0
        assert not any(alive(p) for p in pids)
        assert all(port_free(p) for p in ports)
        assert {r["state"] for r in status(directory)} == {"stopped"}

        assert rpl("sandbox", "start", "--dir", str(directory)).returncode == 0
        client(directory, "source", "INSERT INTO d.t VALUES (2)")
        deadline = time.monotonic() + 20
        while client(directory, "replica2", "SELECT COUNT(*) FROM d.t") != "2":
            assert time.monotonic() < deadline, "replication did not resume after start"
            time.sleep(0.2)
    finally:
        pids = [n.pid for n in Sandbox.load(directory).nodes]
        destroyed = rpl("sandbox", "destroy", "--dir", str(directory))
    assert destroyed.returncode == 0, destroyed.stderr
    assert not directory.exists()
    assert not any(alive(p) for p in pids)
    assert all(port_free(p) for p in ports)


def test_sandbox_errors(tmp_path: Path) -> None:
    done = rpl("sandbox", "status", "--dir", str(tmp_path / "none"))
    assert done.returncode == 1 and "no sandbox in" in done.stderr
    done = rpl("sandbox", "deploy", "replication", "--replicas", "12", "--dir", str(tmp_path / "x"))
    assert done.returncode == 1 and "between 0 and 9" in done.stderr


def test_stop_with_the_port_taken_over_says_so(tmp_path: Path) -> None:
    """A node that stops while another process holds its port (a listener that took it
    over): stop reports that, by name and port, instead of a traceback."""
    from rpl.core.sandbox.sandbox import NodeSpec, SandboxError

    datadir = tmp_path / "source"
    datadir.mkdir()
    node = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)", "rpl.core.cli", str(datadir)]
    )
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen(1)
    try:
        spec = NodeSpec("source", "source", holder.getsockname()[1], 1, [], node.pid)
        sandbox = Sandbox(tmp_path, "replication", "off", [spec])
        assert sandbox.running(spec)
        with pytest.raises(
            SandboxError,
            match=rf"source stopped, but port {spec.port} is "
            r"still in use by another process",
        ):
            sandbox.stop_node(spec, port_timeout=0.5)
        assert node.wait(timeout=10) is not None
    finally:
        holder.close()
        node.kill()
        node.wait()


def test_stopped_and_restarted_sandbox_validates_clean_by_sketches(
    tmp_path: Path, base_port: int
) -> None:
    """``rpl sandbox stop`` then ``start`` ends each node's binlog (and each replica's
    relay log) with a STOP_EVENT and opens a new file: a clean restart, which ``rpl
    validate`` proves clean from the split sketches with no notice of a crash."""
    directory = tmp_path / "sbx"
    done = deploy_semisync(directory, base_port)
    assert done.returncode == 0, done.stderr
    try:
        client(
            directory,
            "source",
            "CREATE DATABASE d; CREATE TABLE d.t (id INT PRIMARY KEY);INSERT INTO d.t VALUES (1)",
        )
        assert rpl("sandbox", "stop", "--dir", str(directory)).returncode == 0
        assert rpl("sandbox", "start", "--dir", str(directory)).returncode == 0
        client(directory, "source", "INSERT INTO d.t VALUES (2)")
        deadline = time.monotonic() + 20
        while len({r["gtid_executed"] for r in status(directory)}) != 1:
            assert time.monotonic() < deadline, "replicas did not catch up"
            time.sleep(0.2)
        assert rpl("sandbox", "stop", "--dir", str(directory)).returncode == 0
        report = tmp_path / "report.json"
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "rpl.core.cli",
                "validate",
                "--master",
                "local[2]",
                "--report",
                str(report),
                *(str(directory / n) for n in ("source", "replica1", "replica2")),
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stdout + done.stderr[-3000:]
        result = json.loads(report.read_text())
        assert result["method"] == "sketches", result["unproven"]
        assert "a crash" not in done.stdout, done.stdout
        assert "proven clean by split sketches" in done.stdout
    finally:
        assert rpl("sandbox", "destroy", "--dir", str(directory)).returncode == 0


def test_group_sandbox_lifecycle(tmp_path: Path) -> None:
    directory = tmp_path / "group"
    base = free_block(random.randrange(20000, 32000, 10), 9)
    done = rpl("sandbox", "deploy", "group", "--members", "3", "--base-port", str(base),
               "--dir", str(directory))  # fmt: skip
    assert done.returncode == 0, done.stderr
    try:
        rows = {r["node"]: r for r in status(directory)}
        members = [rows[f"member{i}"] for i in (1, 2, 3)]
        assert [m["role"] for m in members] == ["primary", "secondary", "secondary"]
        assert all(m["state"] == "running, ONLINE" for m in members)
        assert all(m["view"].count(":ONLINE") == 3 for m in members)
        assert [rows[f"etcd{i}"]["state"] for i in (1, 2, 3)] == ["running"] * 3
        client(directory, "member1", "CREATE DATABASE d; CREATE TABLE d.t (id INT PRIMARY KEY)")
        client(directory, "member1", "INSERT INTO d.t VALUES (1)")
        deadline = time.monotonic() + 20
        while client(directory, "member3", "SELECT COUNT(*) FROM d.t") != "1":
            assert time.monotonic() < deadline, "the group did not replicate"
            time.sleep(0.2)
        assert rpl("sandbox", "stop", "--dir", str(directory)).returncode == 0
        assert {r["state"] for r in status(directory)} == {"stopped"}
        started = rpl("sandbox", "start", "--dir", str(directory))
        assert started.returncode == 0, started.stderr
        restarted = [r for r in status(directory) if r["node"].startswith("member")]
        assert [r["state"] for r in restarted] == ["running, ONLINE"] * 3
        assert client(directory, "member2", "SELECT COUNT(*) FROM d.t") == "1"
    finally:
        pids = [n.pid for n in Sandbox.load(directory).nodes]
        destroyed = rpl("sandbox", "destroy", "--dir", str(directory))
    assert destroyed.returncode == 0, destroyed.stderr
    assert not any(alive(p) for p in pids)
