"""Real tools against a real server: sysbench's six OLTP workloads and mariadb-binlog.

sysbench runs prepare, run and cleanup with ``--db-ps-mode=disable``; a run passes
with no error other than the deadlocks sysbench itself retries (1213). Then
``mariadb-binlog`` must read every binlog the run produced without an error.
"""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from rpl.core.binlog.logfile import BinlogIndex
from rpl.core.testing.process import ServerProcess

WORKLOADS = (
    "oltp_insert",
    "oltp_point_select",
    "oltp_update_index",
    "oltp_update_non_index",
    "oltp_delete",
    "oltp_write_only",
)


def _tool(name: str) -> str:
    path = shutil.which(name)
    assert path, f"{name} is not installed (.ci/run installs it with apt-get)"
    return path


def sysbench(port: int, workload: str, phase: str, *extra: str) -> str:
    command = [
        _tool("sysbench"),
        workload,
        "--db-driver=mysql",
        "--mysql-host=127.0.0.1",
        f"--mysql-port={port}",
        "--mysql-user=root",
        "--mysql-db=sbtest",
        "--tables=2",
        "--table-size=500",
        "--db-ps-mode=disable",
        *extra,
        phase,
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, (
        f"sysbench {workload} {phase} failed:\n{done.stdout}\n{done.stderr}"
    )
    assert "FATAL" not in done.stdout + done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def sb_server(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    server = ServerProcess(
        tmp_path_factory.mktemp("sysbench") / "data", options=["--max-binlog-size=1048576"]
    ).start()
    server.query("CREATE DATABASE sbtest")
    yield server
    server.stop()


@pytest.mark.parametrize("workload", WORKLOADS)
def test_sysbench_workload(sb_server: ServerProcess, workload: str) -> None:
    sysbench(sb_server.port, workload, "prepare")
    assert sb_server.query("SELECT COUNT(*) FROM sbtest.sbtest2") == [(500,)]
    out = sysbench(sb_server.port, workload, "run", "--threads=4", "--time=2")
    transactions = int(re.search(r"transactions:\s+(\d+)", out).group(1))  # type: ignore[union-attr]
    assert transactions > 0
    errors = int(re.search(r"ignored errors:\s+(\d+)", out).group(1))  # type: ignore[union-attr]
    deadlocks = int(
        dict(sb_server.query("SHOW STATUS LIKE 'Innodb_deadlocks'"))["Innodb_deadlocks"]
    )
    assert errors <= deadlocks, "sysbench ignored errors that were not deadlocks"
    sysbench(sb_server.port, workload, "cleanup")
    assert sb_server.query("SHOW TABLES FROM sbtest") == []


def test_mariadb_binlog_reads_every_binlog(sb_server: ServerProcess) -> None:
    sysbench(sb_server.port, "oltp_write_only", "prepare")
    sysbench(sb_server.port, "oltp_write_only", "run", "--threads=2", "--time=1")
    sb_server.query("FLUSH BINARY LOGS")
    names = BinlogIndex(sb_server.datadir / "binlog.index").names()
    assert len(names) >= 2
    for name in names:
        done = subprocess.run(
            [_tool("mariadb-binlog"), "--verify-binlog-checksum", str(sb_server.datadir / name)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, f"{name}: {done.stderr}"
        assert "ERROR" not in done.stdout and "ERROR" not in done.stderr, done.stderr
        if name != names[-1]:
            assert "Rotate to" in done.stdout
    last_full = subprocess.run(
        [
            _tool("mariadb-binlog"),
            "-v",
            "--base64-output=decode-rows",
            str(sb_server.datadir / names[-2]),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    assert "### UPDATE `sbtest`.`sbtest" in last_full or "### INSERT INTO `sbtest`" in last_full
    assert "COMMIT/*!*/;" in last_full
    sysbench(sb_server.port, "oltp_write_only", "cleanup")
