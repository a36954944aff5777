"""Fixtures for the validator's tests: one Spark session (local[2]) for the whole run, and
one real replication run (a source and a replica as server processes) whose data
directories each test gets a copy of, to validate as they are or with a fault seeded."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from rpl.core.testing.process import ServerProcess
from rpl.core.testing.topology import create_replication_user, replicate, wait_caught_up
from rpl.core.validate.checks import validate
from rpl.core.validate.report import Report

SPLIT_BYTES = 2048
"""Small splits, so every run crosses many split boundaries."""


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """A local[2] Spark session, as CI runs it."""
    from rpl.core.validate.job import spark_session

    session = spark_session("local[2]")
    yield session
    session.stop()


def _run(root: Path) -> None:
    """Source and replica; 40 transactions over three source binlog files, with a
    DDL, a multi-statement transaction and a source rotation in the middle."""
    source = ServerProcess(root / "source", options=["--server-id", "1"]).start()
    replica = ServerProcess(root / "replica", options=["--server-id", "2"]).start()
    try:
        create_replication_user(source)
        replicate(replica, source)
        source.query("CREATE DATABASE d")
        source.query("CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(40))")
        for key in range(1, 41):
            if key % 15 == 0:
                source.query("FLUSH BINARY LOGS")
            source.query(f"INSERT INTO d.t VALUES ({key}, 'v{key}')")
        connection = source.connect(autocommit=False)
        with connection.cursor() as cursor:
            cursor.execute("UPDATE d.t SET v = 'changed' WHERE id = 7")
            cursor.execute("INSERT INTO d.t VALUES (100, 'v100')")
        connection.commit()
        connection.close()
        wait_caught_up(source, replica)
        replica.query("STOP SLAVE")
    finally:
        replica.stop()
        source.stop()


@pytest.fixture(scope="session")
def recorded_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The data directories of one real run (do not modify: use ``run``)."""
    root = tmp_path_factory.mktemp("recorded")
    _run(root)
    return root


@pytest.fixture
def run(recorded_run: Path, tmp_path: Path) -> Path:
    """A copy of the recorded run's data directories (``source``, ``replica``)."""
    for name in ("source", "replica"):
        shutil.copytree(recorded_run / name, tmp_path / name)
    return tmp_path


@pytest.fixture
def check(spark: Any, run: Path) -> Callable[..., Report]:
    """``check(**options)``: validate the run's copy (both nodes) with small splits."""

    def go(*nodes: str, **options: Any) -> Report:
        names = nodes or ("source", "replica")
        return validate(
            [str(run / n) for n in names], spark=spark, split_bytes=SPLIT_BYTES, **options
        )

    return go
