"""MySQL 8.0's limits on identifiers and column types: a definition past one gets
MySQL's error (1059, 1074, 1117, 1425, 1426, 1427) and changes nothing, neither the
catalogue nor the binlog; a definition at the limit is accepted.
"""

from __future__ import annotations

import pymysql
import pytest

from rpl.core.testing.process import ServerProcess

LONG = "n" * 65
AT_LIMIT = "m" * 64


def columns(count: int) -> str:
    """``count`` INT columns after the primary key."""
    return ", ".join(f"c{i} INT" for i in range(count))


REFUSED = [
    (f"CREATE DATABASE {LONG}", 1059, f"Identifier name '{LONG}' is too long"),
    (f"CREATE TABLE l.{LONG} (id INT PRIMARY KEY)", 1059, f"Identifier name '{LONG}' is too long"),
    (f"CREATE TABLE l.t ({LONG} INT PRIMARY KEY)", 1059, f"Identifier name '{LONG}' is too long"),
    (
        f"CREATE TABLE l.t (id INT PRIMARY KEY, v INT, KEY {LONG} (v))",
        1059,
        f"Identifier name '{LONG}' is too long",
    ),
    (
        f"CREATE TABLE l.t (id INT PRIMARY KEY, p INT, CONSTRAINT {LONG} "
        "FOREIGN KEY (p) REFERENCES l.base (id))",
        1059,
        f"Identifier name '{LONG}' is too long",
    ),
    (
        # the generated constraint name, <table>_ibfk_1, is past the limit (MySQL's note)
        f"CREATE TABLE l.{AT_LIMIT} (id INT PRIMARY KEY, p INT, "
        "FOREIGN KEY (p) REFERENCES l.base (id))",
        1059,
        f"Identifier name '{AT_LIMIT}_ibfk_1' is too long",
    ),
    (f"CREATE INDEX {LONG} ON l.base (v)", 1059, f"Identifier name '{LONG}' is too long"),
    (f"ALTER TABLE l.base ADD COLUMN {LONG} INT", 1059, f"Identifier name '{LONG}' is too long"),
    (
        f"ALTER TABLE l.base RENAME COLUMN v TO {LONG}",
        1059,
        f"Identifier name '{LONG}' is too long",
    ),
    (f"ALTER TABLE l.base RENAME TO l.{LONG}", 1059, f"Identifier name '{LONG}' is too long"),
    (f"RENAME TABLE l.base TO l.{LONG}", 1059, f"Identifier name '{LONG}' is too long"),
    (
        "CREATE TABLE l.t (id INT PRIMARY KEY, v VARCHAR(16384))",
        1074,
        "Column length too big for column 'v' (max = 16383); use BLOB or TEXT instead",
    ),
    (
        "CREATE TABLE l.t (id INT PRIMARY KEY, v CHAR(256))",
        1074,
        "Column length too big for column 'v' (max = 255); use BLOB or TEXT instead",
    ),
    (
        "CREATE TABLE l.t (id INT PRIMARY KEY, v BINARY(256))",
        1074,
        "Column length too big for column 'v' (max = 255); use BLOB or TEXT instead",
    ),
    (
        "CREATE TABLE l.t (id INT PRIMARY KEY, v VARBINARY(65536))",
        1074,
        "Column length too big for column 'v' (max = 65535); use BLOB or TEXT instead",
    ),
    (
        "ALTER TABLE l.base MODIFY v VARCHAR(70000)",
        1074,
        "Column length too big for column 'v' (max = 16383); use BLOB or TEXT instead",
    ),
    (
        "CREATE TABLE l.t (id INT PRIMARY KEY, v DECIMAL(66, 2))",
        1426,
        "Too-big precision 66 specified for 'v'. Maximum is 65.",
    ),
    (
        "CREATE TABLE l.t (id INT PRIMARY KEY, v DECIMAL(40, 31))",
        1425,
        "Too big scale 31 specified for column 'v'. Maximum is 30.",
    ),
    (
        "CREATE TABLE l.t (id INT PRIMARY KEY, v DECIMAL(5, 6))",
        1427,
        "For float(M,D), double(M,D) or decimal(M,D), M must be >= D (column 'v').",
    ),
    (
        "CREATE TABLE l.t (id INT PRIMARY KEY, v DATETIME(7))",
        1426,
        "Too-big precision 7 specified for 'v'. Maximum is 6.",
    ),
    (
        "CREATE TABLE l.t (id INT PRIMARY KEY, v TIMESTAMP(7))",
        1426,
        "Too-big precision 7 specified for 'v'. Maximum is 6.",
    ),
    (
        "CREATE TABLE l.t (id INT PRIMARY KEY, v TIME(9))",
        1426,
        "Too-big precision 9 specified for 'v'. Maximum is 6.",
    ),
    (f"CREATE TABLE l.t (id INT PRIMARY KEY, {columns(1017)})", 1117, "Too many columns"),
    ("ALTER TABLE l.wide ADD COLUMN one_more INT", 1117, "Too many columns"),
]


@pytest.fixture(scope="module")
def prepared(server: ServerProcess) -> ServerProcess:
    server.query("CREATE DATABASE l")
    server.query("CREATE TABLE l.base (id INT PRIMARY KEY, v INT)")
    server.query(f"CREATE TABLE l.wide (id INT PRIMARY KEY, {columns(1016)})")
    return server


def catalogue(server: ServerProcess) -> list[tuple[object, ...]]:
    """Every database, table and column, as information_schema lists them."""
    return server.query(
        "SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, COLUMN_TYPE "
        "FROM information_schema.COLUMNS ORDER BY 1, 2, ORDINAL_POSITION"
    ) + server.query("SHOW DATABASES")


@pytest.mark.parametrize(("sql", "code", "message"), REFUSED, ids=lambda v: str(v)[:48])
def test_past_a_limit_is_mysqls_error_and_changes_nothing(
    prepared: ServerProcess, sql: str, code: int, message: str
) -> None:
    before, events = catalogue(prepared), prepared.query("SHOW BINLOG EVENTS")
    with pytest.raises(pymysql.MySQLError) as failed:
        prepared.query(sql)
    assert failed.value.args == (code, message)
    assert catalogue(prepared) == before
    assert prepared.query("SHOW BINLOG EVENTS") == events, "nothing is logged"


def test_at_the_limits_is_accepted(prepared: ServerProcess) -> None:
    prepared.query(f"CREATE DATABASE {AT_LIMIT}")
    prepared.query(
        f"CREATE TABLE {AT_LIMIT}.{AT_LIMIT} ({AT_LIMIT} INT PRIMARY KEY, "
        "a VARCHAR(16383), b VARBINARY(65535), c CHAR(255), d BINARY(255), "
        f"e DECIMAL(65, 30), f DATETIME(6), g TIME(6), h TIMESTAMP(6) NULL, KEY {AT_LIMIT} (c))"
    )
    prepared.query(f"CREATE TABLE l.at_limit (id INT PRIMARY KEY, {columns(1016)})")
    rows = prepared.query(
        "SELECT COLUMN_NAME, COLUMN_TYPE FROM information_schema.COLUMNS "
        f"WHERE TABLE_SCHEMA = '{AT_LIMIT}' ORDER BY ORDINAL_POSITION"
    )
    assert rows == [
        (AT_LIMIT, "int"),
        ("a", "varchar(16383)"),
        ("b", "varbinary(65535)"),
        ("c", "char(255)"),
        ("d", "binary(255)"),
        ("e", "decimal(65,30)"),
        ("f", "datetime(6)"),
        ("g", "time(6)"),
        ("h", "timestamp(6)"),
    ]
    assert prepared.query(
        "SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_NAME = 'at_limit'"
    ) == [(1017,)]
    value = "x" * 16383
    prepared.query(f"INSERT INTO {AT_LIMIT}.{AT_LIMIT} ({AT_LIMIT}, a) VALUES (1, '{value}')")
    assert prepared.query(f"SELECT LENGTH(a) FROM {AT_LIMIT}.{AT_LIMIT}") == [(16383,)]
