"""Seeding a replica with the tools a DBA uses, and proving it equal with percona-toolkit.

The path of docs/replication.md's "Seed a replica from a dump": ``mariadb-dump
--single-transaction --master-data=2`` of a source that keeps taking writes, the dump
reloaded into a fresh server with the ``mariadb`` client, CHANGE MASTER TO at the position
the dump names, then pt-table-checksum (which logs its checksum query in STATEMENT format so
that each replica computes its own) reporting no difference, and the right chunk once a row
is changed on the replica behind the source's back. pt-heartbeat measures the replica's lag.
Every tool runs unchanged, as installed by tools/system-packages.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from collections.abc import Callable

import pymysql
from conftest import ServerFactory, Writers

from rpl.core.testing.process import ServerProcess
from rpl.core.testing.topology import replicate, slave_status, wait_for


def tool(name: str) -> str:
    path = shutil.which(name)
    assert path, f"{name} is not installed (tools/system-packages installs it)"
    return path


def dump(source: ServerProcess, *options: str) -> str:
    """``mariadb-dump`` of database d (the dump's text)."""
    done = subprocess.run(
        [tool("mariadb-dump"), "-h127.0.0.1", f"-P{source.port}", "-uroot", *options],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def load(server: ServerProcess, text: str) -> None:
    """Feed ``text`` to the ``mariadb`` client connected to ``server``."""
    done = subprocess.run(
        [tool("mariadb"), "-h127.0.0.1", f"-P{server.port}", "-uroot"],
        input=text,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr


def dumped_position(text: str) -> tuple[str, int]:
    """The binlog file and position ``--master-data=2`` wrote as a comment."""
    found = re.search(r"CHANGE MASTER TO MASTER_LOG_FILE='([^']+)', MASTER_LOG_POS=(\d+)", text)
    assert found, text[:2000]
    return found.group(1), int(found.group(2))


def caught_up(source: ServerProcess, replica: ServerProcess) -> None:
    """Wait until the replica has executed everything the source has logged."""
    file, position = source.query("SHOW MASTER STATUS")[0][:2]

    def done() -> bool:
        status = slave_status(replica)
        return (status["Relay_Master_Log_File"], int(status["Exec_Master_Log_Pos"])) == (
            file,
            int(position),
        )

    wait_for(done, 60, "the seeded replica to catch up")


def checksum(source: ServerProcess, replica: ServerProcess, *options: str) -> str:
    """pt-table-checksum of database d on ``source``, finding ``replica`` through a DSN
    table (its report; exit status 0 or, with differences, 16 as its docs say)."""
    source.query("CREATE DATABASE IF NOT EXISTS percona")
    source.query(
        "CREATE TABLE IF NOT EXISTS percona.dsns (id INT AUTO_INCREMENT PRIMARY KEY, "
        "parent_id INT DEFAULT NULL, dsn VARCHAR(255) NOT NULL)"
    )
    source.query("DELETE FROM percona.dsns")
    source.query(f"INSERT INTO percona.dsns (dsn) VALUES ('h=127.0.0.1,P={replica.port},u=root')")
    done = subprocess.run(
        [
            tool("pt-table-checksum"),
            f"h=127.0.0.1,P={source.port},u=root",
            f"--recursion-method=dsn=h=127.0.0.1,P={source.port},u=root,D=percona,t=dsns",
            "--databases=d",
            "--no-check-binlog-format",  # a leaf replica logging ROW re-runs the checksums
            *options,
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode in (0, 16), f"{done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def report_row(report: str, table: str) -> dict[str, str]:
    """The report's line for ``table`` (ERRORS, DIFFS, ROWS, CHUNKS...)."""
    lines = report.splitlines()
    header = next(line for line in lines if line.lstrip().startswith("TS")).split()
    line = next(line for line in lines if line.split() and line.split()[-1] == table)
    return dict(zip(header, line.split(), strict=True))


def test_a_replica_seeded_from_a_dump_is_proven_equal_by_pt_table_checksum(
    servers: ServerFactory, source: ServerProcess, writers: Callable[..., Writers]
) -> None:
    source.query(
        "INSERT INTO d.t VALUES " + ",".join(f"({-i}, 'seed {i}', {i})" for i in range(1, 1001))
    )
    running = writers(2).start()
    time.sleep(0.5)
    text = dump(source, "--single-transaction", "--master-data=2", "--databases", "d")
    running.join()
    file, position = dumped_position(text)
    replica = servers("replica")
    load(replica, text)
    replicate(replica, source, auto_position=False, master_log_file=file, master_log_pos=position)
    caught_up(source, replica)
    assert replica.query("CHECKSUM TABLE d.t") == source.query("CHECKSUM TABLE d.t")

    report = checksum(source, replica, "--chunk-size=200")
    row = report_row(report, "d.t")
    assert (row["ERRORS"], row["DIFFS"]) == ("0", "0"), report
    assert int(row["CHUNKS"]) > 1, report
    caught_up(source, replica)
    assert replica.query(
        "SELECT COUNT(*) FROM percona.checksums WHERE db = 'd' AND tbl = 't' "
        "AND (this_crc <> master_crc OR this_cnt <> master_cnt)"
    ) == [(0,)]

    replica.query("UPDATE d.t SET v = 'changed behind its back' WHERE id = -500")
    report = checksum(source, replica, "--chunk-size=200")
    assert report_row(report, "d.t")["DIFFS"] == "1", report
    caught_up(source, replica)
    chunks = replica.query(
        "SELECT lower_boundary, upper_boundary FROM percona.checksums WHERE db = 'd' "
        "AND tbl = 't' AND (this_crc <> master_crc OR this_cnt <> master_cnt)"
    )
    assert len(chunks) == 1, chunks
    lower, upper = (int(b) for b in chunks[0])
    assert lower <= -500 <= upper, chunks


def has_heartbeat(server: ServerProcess) -> bool:
    try:
        return bool(server.query("SELECT 1 FROM d.heartbeat LIMIT 1"))
    except pymysql.MySQLError:  # the database or table not replicated yet
        return False


def test_pt_heartbeat_measures_the_replicas_lag(
    servers: ServerFactory, source: ServerProcess
) -> None:
    replica = servers("replica")
    replicate(replica, source)
    heartbeat = subprocess.Popen(
        [
            tool("pt-heartbeat"),
            "-h127.0.0.1",
            f"-P{source.port}",
            "-uroot",
            "-Dd",
            "--create-table",
            "--update",
            "--interval=0.2",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )

    def lag() -> float:
        done = subprocess.run(
            [
                tool("pt-heartbeat"),
                "-h127.0.0.1",
                f"-P{replica.port}",
                "-uroot",
                "-Dd",
                "--check",
                "--master-server-id=1",
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        return float(done.stdout.strip())

    try:
        wait_for(lambda: has_heartbeat(replica), 30, "the heartbeat table on the replica")
        time.sleep(1.0)
        assert lag() < 1.0
        replica.query("STOP SLAVE SQL_THREAD")
        time.sleep(2.5)
        assert lag() >= 2.0
        replica.query("START SLAVE SQL_THREAD")
        wait_for(lambda: lag() < 1.0, 30, "the lag to fall once the applier runs")
    finally:
        heartbeat.terminate()
        heartbeat.wait(10)
