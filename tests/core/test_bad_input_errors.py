"""Statements a fuzzer found to end in 1105 with a Python exception's text now get
MySQL's error, change nothing, and leave no traceback in the error log.

Each case failed before with ``1105 internal error: RecursionError / ValueError /
InvalidOperation / OverflowError``.
"""

from __future__ import annotations

from typing import Any

import pymysql
import pytest

from rpl.core.testing.process import ServerProcess

DEEP = "SELECT " + "(" * 2000 + "1" + ")" * 2000
LONG_SUM = "SELECT " + "+".join(["1"] * 50000)  # a native recursion this deep crashed
HUGE_INTEGER = "SELECT " + "1" * 5000

CASES = [
    (DEEP, 1436),
    (LONG_SUM, 1436),
    (HUGE_INTEGER, 1367),
    ("SELECT 1e400", 1367),
    ("SELECT * FROM e.n WHERE id = 1e400", 1367),
    ("INSERT INTO e.n VALUES (10, 1e300, 1)", 1264),
    ("INSERT INTO e.n VALUES (11, 1, 1e300)", 1264),
    ("INSERT INTO e.n VALUES (12, 1, " + "9" * 200 + ")", 1264),
    ("INSERT INTO e.n VALUES (13, '" + "9" * 5000 + "', 1)", 1264),
    ("SHOW BINLOG EVENTS FROM 18446744073709551615", 1220),
    ("SHOW BINLOG EVENTS FROM 5", 1220),
    ("SELECT GTID_SUBSET('a')", 1582),
    ("SELECT CONCAT_WS('-')", 1582),
    ("SELECT LEFT('abc')", 1582),
    ("SELECT id FROM e.n WHERE IF(id, 1)", 1582),
]


@pytest.fixture(scope="module")
def prepared(server: ServerProcess) -> ServerProcess:
    server.query("CREATE DATABASE e")
    server.query("CREATE TABLE e.n (id INT PRIMARY KEY, i INT, dd DECIMAL(10,2))")
    server.query("INSERT INTO e.n VALUES (1, 1, 1)")
    return server


def error_of(server: ServerProcess, sql: str) -> Any:
    with pytest.raises(pymysql.MySQLError) as failed:
        server.query(sql)
    return failed.value


@pytest.mark.parametrize(("sql", "code"), CASES, ids=lambda v: str(v)[:40])
def test_bad_input_gets_mysqls_error(prepared: ServerProcess, sql: str, code: int) -> None:
    error = error_of(prepared, sql)
    assert error.args[0] == code, error
    assert "internal error" not in error.args[1]
    assert prepared.query("SELECT id, i, dd FROM e.n") == [(1, 1, 1)]


def test_the_messages_are_mysqls(prepared: ServerProcess) -> None:
    assert error_of(prepared, "SELECT 1e400").args[1] == (
        "Illegal double '1e400' value found during parsing"
    )
    assert error_of(prepared, "INSERT INTO e.n VALUES (10, 1e300, 1)").args[1] == (
        "Out of range value for column 'i' at row 1"
    )
    assert error_of(prepared, "SHOW BINLOG EVENTS FROM 5").args[1] == (
        "Error when executing command SHOW BINLOG EVENTS: Wrong offset or I/O error"
    )
    assert error_of(prepared, DEEP).args[1].startswith("Thread stack overrun:")
    assert error_of(prepared, "SELECT LEFT('abc')").args[1] == (
        "Incorrect parameter count in the call to native function 'LEFT'"
    )


def test_nesting_within_the_bounds_runs(prepared: ServerProcess) -> None:
    assert prepared.query("SELECT " + "(" * 90 + "7" + ")" * 90) == [(7,)]
    assert prepared.query("SELECT " + "+".join(["1"] * 300)) == [(300,)]


def test_no_traceback_reaches_the_error_log(prepared: ServerProcess) -> None:
    for sql, _ in CASES:
        error_of(prepared, sql)
    assert "Traceback" not in prepared.error_log()
    assert prepared.query("SELECT 1") == [(1,)]
