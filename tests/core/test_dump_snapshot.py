"""A dump taken while writers run is one moment of the database: mariadb-dump
--single-transaction's sequence of statements, and mariadb-dump itself, against writers
that move money between rows of two tables (the total stays constant). The dump, loaded
into a fresh server, must hold the same total; READ COMMITTED, in the same run, does not.
"""

from __future__ import annotations

import random
import subprocess
import threading
import time
from collections.abc import Iterator
from typing import Any

import pymysql
import pytest

from rpl.core.testing.process import ServerProcess

ROWS = 20
TOTAL = ROWS * 2 * 100
TABLES = ("acct_a", "acct_b")


class Bank:
    """Database ``bank`` with acct_a and acct_b (id, amount), 100 in each row, and writer
    threads that move amounts from a row of acct_a to a row of acct_b and back, one
    transaction each (so between two commits the total is always TOTAL)."""

    def __init__(self, server: ServerProcess, writers: int = 2) -> None:
        self.server = server
        cursor = server.connect().cursor()
        cursor.execute("CREATE DATABASE bank")
        for table in TABLES:
            cursor.execute(f"CREATE TABLE bank.{table} (id INT PRIMARY KEY, amount INT)")
            cursor.execute(
                f"INSERT INTO bank.{table} VALUES " + ", ".join(f"({i}, 100)" for i in range(ROWS))
            )
        cursor.connection.close()
        self.stop = threading.Event()
        self.errors: list[BaseException] = []
        self.commits = 0
        self.threads = [
            threading.Thread(target=self._write, args=(seed,)) for seed in range(writers)
        ]

    def __enter__(self) -> Bank:
        for thread in self.threads:
            thread.start()
        while self.commits < 20 and not self.errors:  # the writers are going
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join()
        assert not self.errors, self.errors

    def _write(self, seed: int) -> None:
        rng = random.Random(seed)
        conn = self.server.connect(database="bank", autocommit=False)
        cursor = conn.cursor()
        try:
            while not self.stop.is_set():
                a, b = rng.randrange(ROWS), rng.randrange(ROWS)
                n = rng.randint(-30, 30)
                try:  # acct_a before acct_b in every transaction: no deadlock cycle
                    cursor.execute(f"UPDATE acct_a SET amount = amount - {n} WHERE id = {a}")
                    cursor.execute(f"UPDATE acct_b SET amount = amount + {n} WHERE id = {b}")
                    conn.commit()
                    self.commits += 1
                except pymysql.err.OperationalError as exc:
                    if exc.args[0] != 1205:
                        raise
                    conn.rollback()
        except BaseException as exc:  # noqa: BLE001 - reported by __exit__
            self.errors.append(exc)
        finally:
            conn.close()


def _dump_as_mariadb_dump_does(server: ServerProcess, isolation: str) -> dict[str, list[Any]]:
    """mariadb-dump --single-transaction --master-data's statements, as it sends them; a
    pause between the tables gives the writers time to commit."""
    conn = server.connect(database="bank")
    cursor = conn.cursor()
    cursor.execute("FLUSH TABLES WITH READ LOCK")
    cursor.execute(f"SET SESSION TRANSACTION ISOLATION LEVEL {isolation}")
    cursor.execute("START TRANSACTION /*!40100 WITH CONSISTENT SNAPSHOT */")
    cursor.execute("SHOW MASTER STATUS")
    cursor.execute("UNLOCK TABLES")
    dumped: dict[str, list[Any]] = {}
    for table in TABLES:
        cursor.execute("SAVEPOINT sp")
        cursor.execute(f"SELECT /*!40001 SQL_NO_CACHE */ * FROM `{table}`")
        dumped[table] = list(cursor.fetchall())
        cursor.execute("ROLLBACK TO SAVEPOINT sp")
        time.sleep(0.05)
    cursor.execute("RELEASE SAVEPOINT sp")
    cursor.execute("COMMIT")
    conn.close()
    return dumped


def _reload_total(target: ServerProcess, dumped: dict[str, list[Any]]) -> int:
    """Load the dumped rows into ``target`` (a fresh server); the total read back there."""
    cursor = target.connect().cursor()
    cursor.execute("DROP DATABASE IF EXISTS bank")
    cursor.execute("CREATE DATABASE bank")
    total = 0
    for table, rows in dumped.items():
        cursor.execute(f"CREATE TABLE bank.{table} (id INT PRIMARY KEY, amount INT)")
        cursor.execute(
            f"INSERT INTO bank.{table} VALUES " + ", ".join(f"({i}, {a})" for i, a in rows)
        )
        cursor.execute(f"SELECT COUNT(*), SUM(amount) FROM bank.{table}")
        count, amount = cursor.fetchone()
        assert count == ROWS
        total += int(amount)
    cursor.connection.close()
    return total


@pytest.fixture
def source(tmp_path: Any) -> Iterator[ServerProcess]:
    process = ServerProcess(tmp_path / "source").start()
    yield process
    process.stop()


@pytest.fixture
def target(tmp_path: Any) -> Iterator[ServerProcess]:
    process = ServerProcess(tmp_path / "target").start()
    yield process
    process.stop()


def test_a_single_transaction_dump_is_one_moment_and_read_committed_is_not(
    source: ServerProcess, target: ServerProcess
) -> None:
    with Bank(source) as bank:
        for _ in range(5):
            dumped = _dump_as_mariadb_dump_does(source, "REPEATABLE READ")
            assert _reload_total(target, dumped) == TOTAL
        broken = 0
        for _ in range(20):  # the same dump at READ COMMITTED: tables of other moments
            dumped = _dump_as_mariadb_dump_does(source, "READ COMMITTED")
            broken += sum(a for rows in dumped.values() for _, a in rows) != TOTAL
            if broken:
                break
        assert broken, "READ COMMITTED dumps were all consistent: the writers did not run"
        assert bank.commits > 20


def test_mariadb_dump_single_transaction_while_writers_run(
    source: ServerProcess, target: ServerProcess
) -> None:
    """mariadb-dump itself, unchanged, while the writers run; each dump is reloaded into
    a fresh server with the ``mariadb`` client, as a DBA seeds a replica, and the total
    read back there must be the constant one."""
    with Bank(source):
        for _ in range(3):
            result = subprocess.run(
                [
                    "mariadb-dump",
                    "-h127.0.0.1",
                    f"-P{source.port}",
                    "-uroot",
                    "--single-transaction",
                    "--master-data=2",
                    "--databases",
                    "bank",
                ],
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
            assert result.returncode == 0, result.stderr
            load = subprocess.run(
                ["mariadb", "-h127.0.0.1", f"-P{target.port}", "-uroot"],
                input=result.stdout,
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
            assert load.returncode == 0, load.stderr
            total = 0
            for table in TABLES:
                ((count, amount),) = target.query(f"SELECT COUNT(*), SUM(amount) FROM bank.{table}")
                assert count == ROWS
                total += int(amount)
            assert total == TOTAL
