"""Hexadecimal and bit literals as MySQL reads them: a binary string in a string context,
an unsigned integer in a numeric one (arithmetic, a comparison with a number, CAST, a
numeric column), a binary string again once kept in a user variable; and the binlog,
crash recovery and the parse cache keep each statement's own value.
"""

from __future__ import annotations

from decimal import Decimal

import pymysql
import pytest

from rpl.core.testing.process import ServerProcess


@pytest.fixture(scope="module")
def prepared(server: ServerProcess) -> ServerProcess:
    server.query("CREATE DATABASE h")
    server.query(
        "CREATE TABLE h.t (id INT PRIMARY KEY, i INT, d DECIMAL(10,2), f DOUBLE, "
        "v VARBINARY(8), s VARCHAR(8), y YEAR)"
    )
    return server


def test_a_numeric_column_stores_the_number(prepared: ServerProcess) -> None:
    prepared.query("INSERT INTO h.t VALUES (1, 0x10, X'0A', 0b101, 0x41, 0x41, 0x07E8)")
    assert prepared.query("SELECT i, d, f, v, s, y + 0 FROM h.t WHERE id = 1") == [
        (16, Decimal("10.00"), 5.0, b"A", "A", 2024)
    ]
    prepared.query("UPDATE h.t SET i = 0xFF WHERE id = 1")
    assert prepared.query("SELECT id FROM h.t WHERE i = 0xFF") == [(1,)]


def test_numeric_context_reads_the_number(prepared: ServerProcess) -> None:
    assert prepared.query(
        "SELECT 0x10 + 1, X'41' = 65, 0x41 = 'A', CAST(0x10 AS SIGNED), "
        "CAST(0x10 AS UNSIGNED), b'101' + 0, HEX(0x0ABC), LENGTH(0x0ABC)"
    ) == [(17, 1, 1, 16, 16, 5, "0ABC", 2)]
    assert prepared.query("SELECT 0x41, CAST(X'41' AS CHAR)") == [(b"A", "A")]


def test_a_user_variable_keeps_the_binary_string(prepared: ServerProcess) -> None:
    connection = prepared.connect()
    try:
        with connection.cursor() as cursor:
            cursor.execute("SET @v = X'41'")
            cursor.execute("SELECT @v, @v + 0, X'41' + 0")
            assert cursor.fetchall() == ((b"A", 0, 65),)
    finally:
        connection.close()


def test_out_of_range_is_mysqls_error(prepared: ServerProcess) -> None:
    with pytest.raises(pymysql.MySQLError) as refused:
        prepared.query("INSERT INTO h.t (id, i) VALUES (2, 0xFFFFFFFFFF)")
    assert refused.value.args == (1264, "Out of range value for column 'i' at row 1")


@pytest.mark.parametrize("binlog_format", ["ROW", "STATEMENT"])
def test_each_statement_keeps_its_value_through_the_binlog(
    fresh_server: ServerProcess, binlog_format: str
) -> None:
    server = fresh_server.start(f"--binlog-format={binlog_format}")
    server.query("CREATE DATABASE h")
    server.query("CREATE TABLE h.t (id INT PRIMARY KEY, i INT, v VARBINARY(4))")
    for n in range(1, 6):  # one statement shape, five values: the parse cache's case
        server.query(f"INSERT INTO h.t VALUES ({n}, 0x{n:02X}{n:02X}, 0x{n:02X})")
    expected = [(n, n * 257, bytes([n])) for n in range(1, 6)]
    assert server.query("SELECT id, i, v FROM h.t ORDER BY id") == expected
    server.kill()  # no checkpoint: the rows come back from the binlog
    server.start(f"--binlog-format={binlog_format}")
    assert server.query("SELECT id, i, v FROM h.t ORDER BY id") == expected
