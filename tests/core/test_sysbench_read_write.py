"""sysbench oltp_read_write (``--db-ps-mode=disable``) against a real server: its range
selects (``BETWEEN``, ``SUM(k)``, ``ORDER BY c``, ``DISTINCT c``) and writes in one
transaction, four threads, with no error but the deadlocks two transactions updating the
same rows in opposite orders make under any row locking (InnoDB reports them too; sysbench
retries them), and the tables left consistent (every id once, as many rows as prepared).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from test_server_tools import sysbench

from rpl.core.testing.process import ServerProcess


@pytest.fixture
def sb_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    server = ServerProcess(tmp_path_factory.mktemp("sysbench_rw") / "data").start()
    server.query("CREATE DATABASE sbtest")
    yield server
    server.stop()


def test_oltp_read_write_has_no_errors(sb_server: ServerProcess) -> None:
    sysbench(sb_server.port, "oltp_read_write", "prepare")
    out = sysbench(sb_server.port, "oltp_read_write", "run", "--threads=4", "--time=3")
    transactions = int(re.search(r"transactions:\s+(\d+)", out).group(1))  # type: ignore[union-attr]
    errors = int(re.search(r"ignored errors:\s+(\d+)", out).group(1))  # type: ignore[union-attr]
    deadlocks = int(
        dict(sb_server.query("SHOW STATUS LIKE 'Innodb_deadlocks'"))["Innodb_deadlocks"]
    )
    assert transactions > 0
    assert errors == deadlocks, out  # every ignored error is a deadlock the engine found
    # each transaction deletes a row and inserts it back: the tables keep their 500 rows
    for table in ("sbtest1", "sbtest2"):
        assert sb_server.query(f"SELECT COUNT(*), MIN(id), MAX(id) FROM sbtest.{table}") == [
            (500, 1, 500)
        ]
    sysbench(sb_server.port, "oltp_read_write", "cleanup")
