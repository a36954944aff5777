"""DEFAULT CURRENT_TIMESTAMP and ON UPDATE CURRENT_TIMESTAMP, as pt-table-checksum's
``percona.checksums`` and ORMs' ``server_default=func.now()`` declare them: an INSERT that
leaves the column out gets the time, an UPDATE that changes the row sets it again (and
one that changes nothing, or sets the column itself, does not); SHOW CREATE TABLE and
information_schema print them as MySQL does; other types refuse them (1067, 1294)."""

from __future__ import annotations

import datetime
import time
from typing import Any

import pymysql
import pytest

from rpl.core.testing.process import ServerProcess

TABLE = (
    "CREATE TABLE tsd.t (id INT PRIMARY KEY, n INT, "
    "ts TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP, "
    "dt DATETIME(3) DEFAULT NOW(3))"
)


@pytest.fixture(scope="module")
def db(server: ServerProcess) -> ServerProcess:
    server.query("CREATE DATABASE tsd")
    server.query(TABLE)
    return server


def ts_of(server: ServerProcess, id_: int) -> Any:
    return server.query(f"SELECT ts FROM tsd.t WHERE id = {id_}")[0][0]


def test_insert_and_update_set_the_time(db: ServerProcess) -> None:
    before = datetime.datetime.now().replace(microsecond=0)
    db.query("INSERT INTO tsd.t (id, n) VALUES (1, 1)")
    db.query("INSERT INTO tsd.t (id, n) SELECT 2, 2")
    after = datetime.datetime.now()
    for id_ in (1, 2):
        assert before <= ts_of(db, id_) <= after
    (dt,) = db.query("SELECT dt FROM tsd.t WHERE id = 1")[0]
    assert before <= dt <= after
    first = ts_of(db, 1)
    time.sleep(1.1)
    db.query("UPDATE tsd.t SET n = 1 WHERE id = 1")  # nothing changes: ts stays
    assert ts_of(db, 1) == first
    db.query("UPDATE tsd.t SET n = 5 WHERE id = 1")
    assert ts_of(db, 1) > first
    db.query("UPDATE tsd.t SET n = 6, ts = '2001-02-03 04:05:06' WHERE id = 1")
    assert ts_of(db, 1) == datetime.datetime(2001, 2, 3, 4, 5, 6)


def test_shown_as_mysql_shows_them(db: ServerProcess) -> None:
    text = db.query("SHOW CREATE TABLE tsd.t")[0][1]
    assert (
        "  `ts` timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,\n" in text
    )
    assert "  `dt` datetime(3) DEFAULT CURRENT_TIMESTAMP(3),\n" in text
    assert db.query(
        "SELECT COLUMN_NAME, COLUMN_DEFAULT, EXTRA FROM information_schema.COLUMNS "
        "WHERE TABLE_SCHEMA = 'tsd' AND TABLE_NAME = 't' AND COLUMN_NAME IN ('ts', 'dt') "
        "ORDER BY COLUMN_NAME"
    ) == [
        ("dt", "CURRENT_TIMESTAMP(3)", "DEFAULT_GENERATED"),
        ("ts", "CURRENT_TIMESTAMP", "DEFAULT_GENERATED on update CURRENT_TIMESTAMP"),
    ]


@pytest.mark.parametrize(
    ("column", "code"),
    [
        ("c INT DEFAULT CURRENT_TIMESTAMP", 1067),
        ("c VARCHAR(10) ON UPDATE CURRENT_TIMESTAMP", 1067),
        ("c TIMESTAMP NULL ON UPDATE 5", 1294),
    ],
)
def test_other_types_refuse_them(db: ServerProcess, column: str, code: int) -> None:
    with pytest.raises(pymysql.MySQLError) as refused:
        db.query(f"CREATE TABLE tsd.bad (id INT PRIMARY KEY, {column})")
    assert refused.value.args[0] == code
