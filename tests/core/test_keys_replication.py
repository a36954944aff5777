"""UNIQUE keys, FOREIGN KEY cascades and ALTER TABLE through replication: the source's
binlog events applied by a second server's applier (test_row_apply's in-process pair)
leave the replica identical. As MySQL, a cascade is not logged in ROW format (only the
parent's rows are): the replica's engine cascades itself. A replica row that collides
with a UNIQUE key stops the applier with MySQL's 1062 wording."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_row_apply import Replication, last_transaction, run, started_pair

from rpl.core.binlog.events import (
    NO_FOREIGN_KEY_CHECKS_F,
    STMT_END_F,
    TABLE_MAP_EVENT,
    WRITE_ROWS_EVENT,
    RowsEvent,
    TableMapEvent,
)
from rpl.core.errors import MySQLError
from rpl.core.instance.server import Server

PARENT = "CREATE TABLE d.p (id INT PRIMARY KEY, name VARCHAR(10))"
CHILD = (
    "CREATE TABLE d.c (id INT PRIMARY KEY, pid INT, u INT, UNIQUE KEY uu (u), "
    "CONSTRAINT fk FOREIGN KEY (pid) REFERENCES d.p (id) ON DELETE CASCADE ON UPDATE SET NULL)"
)


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[tuple[Server, Server]]:
    yield from started_pair(tmp_path, PARENT)


def both(source: Server, replica: Server, sql: str) -> list[tuple[Any, ...]]:
    """``sql``'s rows on the source, asserted equal on the replica."""
    mine, theirs = run(source, sql), run(replica, sql)
    assert mine == theirs, (sql, mine, theirs)
    return mine


def _mapped(events: list[tuple[int, bytes, int]]) -> list[str]:
    return [
        TableMapEvent.decode_body(body).table for code, body, _ in events if code == TABLE_MAP_EVENT
    ]


def test_unique_cascades_and_alter_end_identical(pair: tuple[Server, Server]) -> None:
    source, replica = pair
    replicate = Replication(source, replica)
    replicate(CHILD)
    replicate("INSERT INTO d.p VALUES (1, 'one'), (2, 'two'), (3, 'three')")
    replicate("INSERT INTO d.c VALUES (10, 1, 100), (11, 1, 101), (20, 2, 200), (30, 3, 300)")
    replicate("REPLACE INTO d.c VALUES (12, 2, 101)")
    replicate("INSERT INTO d.c VALUES (21, 2, 200) ON DUPLICATE KEY UPDATE u = u + 1")
    events = replicate("DELETE FROM d.p WHERE id = 1")
    assert _mapped(events) == ["p"]  # the cascade is the replica engine's to do
    replicate("UPDATE d.p SET id = 4 WHERE id = 3")
    assert both(source, replica, "SELECT * FROM d.c ORDER BY id") == [
        (12, 2, 101),
        (20, 2, 201),
        (30, None, 300),
    ]
    replicate(
        "ALTER TABLE d.c ADD COLUMN note VARCHAR(5) NOT NULL DEFAULT 'n' AFTER pid, "
        "DROP INDEX uu, ADD UNIQUE KEY un (u, note)"
    )
    replicate("INSERT INTO d.c VALUES (40, 2, 'x', 101)")
    replicate("RENAME TABLE d.c TO d.child")
    replicate("DELETE FROM d.p WHERE id = 2")
    assert both(source, replica, "SELECT * FROM d.child ORDER BY id") == [(30, None, "n", 300)]
    assert both(source, replica, "SHOW CREATE TABLE d.child")[0][1].endswith(
        "  UNIQUE KEY `un` (`u`,`note`),\n"
        "  KEY `fk` (`pid`),\n"
        "  CONSTRAINT `fk` FOREIGN KEY (`pid`) REFERENCES `p` (`id`) ON DELETE CASCADE "
        "ON UPDATE SET NULL\n"
        ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci"
    )
    assert both(source, replica, "CHECKSUM TABLE d.child, d.p")[0][1] is not None


def test_a_unique_collision_on_the_replica_stops_the_applier(pair: tuple[Server, Server]) -> None:
    source, replica = pair
    replicate = Replication(source, replica)
    replicate("CREATE TABLE d.t (id INT PRIMARY KEY, u INT UNIQUE)")
    run(replica, "SET sql_log_bin = 0", "INSERT INTO d.t VALUES (99, 5)")
    with pytest.raises(MySQLError) as caught:
        replicate("INSERT INTO d.t VALUES (1, 5)")
    assert caught.value.errno == 1062
    assert caught.value.message.startswith(
        "Could not execute Write_rows event on table d.t; Duplicate entry '5' for key 't.u', "
        "Error_code: 1062; handler error HA_ERR_FOUND_DUPP_KEY; the event's master log "
        "binlog.000001, end_log_pos "
    )
    assert run(replica, "SELECT * FROM d.t") == [(99, 5)]


def test_rows_logged_with_foreign_key_checks_off_apply_unchecked(
    pair: tuple[Server, Server],
) -> None:
    """A dump reload (foreign_key_checks = 0: children before parents) replicates: the
    rows events carry NO_FOREIGN_KEY_CHECKS_F and the applier skips the checks too."""
    source, replica = pair
    replicate = Replication(source, replica)
    replicate("SET foreign_key_checks = 0", CHILD.replace("d.p", "d.later"))
    events = replicate("SET foreign_key_checks = 0", "INSERT INTO d.c VALUES (1, 7, 1)")
    flags = [
        RowsEvent.decode_body(body).flags for code, body, _ in events if code == WRITE_ROWS_EVENT
    ]
    assert flags == [STMT_END_F | NO_FOREIGN_KEY_CHECKS_F]
    relogged = [  # the replica logs the rows it applied unchecked with the flag too
        RowsEvent.decode_body(body).flags
        for code, body, _ in last_transaction(replica)
        if code == WRITE_ROWS_EVENT
    ]
    assert relogged == [STMT_END_F | NO_FOREIGN_KEY_CHECKS_F]
    replicate("CREATE TABLE d.later (id INT PRIMARY KEY, name VARCHAR(10))")
    events = replicate("INSERT INTO d.later VALUES (7, 'seven')")
    flags = [
        RowsEvent.decode_body(body).flags for code, body, _ in events if code == WRITE_ROWS_EVENT
    ]
    assert flags == [STMT_END_F]
    replicate("DELETE FROM d.later")  # checks are on again: the child cascades
    assert both(source, replica, "SELECT * FROM d.c") == []
