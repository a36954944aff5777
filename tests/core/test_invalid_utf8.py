"""Bytes that are not UTF-8 in a statement's text: a text column refuses them with
MySQL's 1366 (INSERT IGNORE stores ``?`` with the warning), a binary column keeps them
byte for byte, through the binlog and crash recovery too, an identifier refuses them
with 1300, and nothing is stored changed without an error (the server used to store
U+FFFD in their place).

The statements are sent as bytes (a latin-1 ``é`` is the byte E9), each on a connection
of its own: a result holding such bytes is what MySQL sends too, and PyMySQL cannot
decode it.
"""

from __future__ import annotations

from typing import Any

import pymysql
import pytest

from rpl.core.testing.process import ServerProcess

E9 = "\udce9"  # how Python holds the byte E9 of a latin-1 'é' (surrogateescape)


def send(server: ServerProcess, sql: str) -> Any:
    """Run ``sql`` sent as its bytes; its rows, or the MySQL error raised."""
    connection = server.connect()
    try:
        with connection.cursor() as cursor:
            cursor.execute(sql.encode("utf-8", "surrogateescape"))
            return cursor.fetchall()
    finally:
        connection.close()


def refused(server: ServerProcess, sql: str) -> tuple[Any, ...]:
    with pytest.raises(pymysql.MySQLError) as error:
        send(server, sql)
    return tuple(error.value.args)


@pytest.fixture(scope="module")
def prepared(server: ServerProcess) -> ServerProcess:
    server.query("CREATE DATABASE u")
    server.query(
        "CREATE TABLE u.t (id INT PRIMARY KEY, s VARCHAR(20), c CHAR(5), x TEXT, "
        "e ENUM('a', 'b'), v VARBINARY(20), b BLOB, f BINARY(4))"
    )
    return server


@pytest.mark.parametrize("column", ["s", "c", "x", "e"])
def test_a_text_column_refuses_bytes_that_are_not_utf8(
    prepared: ServerProcess, column: str
) -> None:
    before = prepared.query("SELECT * FROM u.t")
    message = f"Incorrect string value: '\\xE9' for column '{column}' at row 1"
    assert refused(prepared, f"INSERT INTO u.t (id, {column}) VALUES (1, 'caf{E9}')") == (
        1366,
        message,
    )
    assert prepared.query("SELECT * FROM u.t") == before


def test_the_message_shows_six_bytes_from_the_first_bad_one(prepared: ServerProcess) -> None:
    error = refused(prepared, f"INSERT INTO u.t (id, s) VALUES (2, 'ok{E9} more')")
    assert error == (
        1366,
        "Incorrect string value: '\\xE9\\x20\\x6D\\x6F\\x72\\x65' for column 's' at row 1",
    )  # noqa: E501


def test_update_refuses_them_and_changes_nothing(prepared: ServerProcess) -> None:
    prepared.query("INSERT INTO u.t (id, s) VALUES (3, 'kept')")
    assert refused(prepared, f"UPDATE u.t SET s = 'x{E9}' WHERE id = 3")[0] == 1366
    assert prepared.query("SELECT s FROM u.t WHERE id = 3") == [("kept",)]


def test_insert_ignore_stores_a_question_mark_with_the_warning(prepared: ServerProcess) -> None:
    connection = prepared.connect()
    try:
        with connection.cursor() as cursor:
            cursor.execute(
                f"INSERT IGNORE INTO u.t (id, s) VALUES (4, 'caf{E9}')".encode(
                    "utf-8", "surrogateescape"
                )
            )  # noqa: E501
            cursor.execute("SHOW WARNINGS")
            assert cursor.fetchall() == (
                ("Warning", 1366, "Incorrect string value: '\\xE9' for column 's' at row 1"),
            )
    finally:
        connection.close()
    assert prepared.query("SELECT s FROM u.t WHERE id = 4") == [("caf?",)]


def test_a_binary_column_keeps_the_bytes(prepared: ServerProcess) -> None:
    raw = "\udcff\udc80\udcfe"  # the bytes FF 80 FE
    send(prepared, f"INSERT INTO u.t (id, v, b, f) VALUES (5, 'caf{E9}', '{raw}', 'a{E9}')")
    assert prepared.query("SELECT HEX(v), HEX(b), HEX(f) FROM u.t WHERE id = 5") == [
        ("636166E9", "FF80FE", "61E90000")
    ]
    assert send(prepared, f"SELECT id FROM u.t WHERE v = 'caf{E9}'") == ((5,),)
    assert send(prepared, f"SELECT LENGTH('caf{E9}') AS n, HEX('caf{E9}') AS h") == (
        (4, "636166E9"),
    )


@pytest.mark.parametrize("binlog_format", ["ROW", "STATEMENT"])
def test_the_bytes_survive_the_binlog_and_crash_recovery(
    fresh_server: ServerProcess, binlog_format: str
) -> None:
    server = fresh_server.start(f"--binlog-format={binlog_format}")
    server.query("CREATE DATABASE u")
    server.query("CREATE TABLE u.t (id INT PRIMARY KEY, v VARBINARY(20), s VARCHAR(20))")
    send(server, "SET GLOBAL binlog_rows_query_log_events = ON")
    send(server, f"INSERT INTO u.t VALUES (1, 'caf{E9}', 'plain')")
    send(server, f"UPDATE u.t SET v = 'x{E9}y' WHERE id = 1")
    server.kill()  # no checkpoint: the rows come back from the binlog
    server.start(f"--binlog-format={binlog_format}")
    assert server.query("SELECT HEX(v), s FROM u.t") == [("78E979", "plain")]
    assert "Traceback" not in server.error_log()


def test_an_identifier_refuses_them(prepared: ServerProcess) -> None:
    assert refused(prepared, f"CREATE TABLE u.caf{E9} (id INT PRIMARY KEY)") == (
        1300,
        "Invalid utf8mb4 character string: '\\xE9'",
    )
    assert refused(prepared, f"CREATE DATABASE caf{E9}")[0] == 1300
    assert refused(prepared, f"ALTER TABLE u.t ADD COLUMN caf{E9} INT")[0] == 1300
    assert ("caf\ufffd",) not in prepared.query("SHOW TABLES FROM u")


def test_no_traceback(prepared: ServerProcess) -> None:
    assert "Traceback" not in prepared.error_log()
    assert prepared.query("SELECT 1") == [(1,)]
