"""The catalogue as MySQL 8.0 shows it, against a real rpl server process (PyMySQL and the
mariadb CLI): type synonyms stored as MySQL stores them (BOOL is tinyint(1), INTEGER is int,
NUMERIC is decimal), the result-set column types sent for them, SHOW INDEX's 15 columns,
SHOW TABLE STATUS's 18, SHOW CREATE DATABASE, SHOW FULL TABLES and SHOW ... WHERE."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pymysql
import pytest
from pymysql.constants import FIELD_TYPE

_names = itertools.count(1)


def rows(cursor: Any, sql: str) -> list[tuple[Any, ...]]:
    cursor.execute(sql)
    return list(cursor.fetchall())


def fail(cursor: Any, sql: str) -> tuple[int, str]:
    with pytest.raises(pymysql.err.MySQLError) as info:
        cursor.execute(sql)
    return info.value.args[0], info.value.args[1]


@pytest.fixture
def cur(server: Any) -> Iterator[Any]:
    connection = server.connect()
    cursor = connection.cursor()
    name = f"cat{next(_names)}"
    cursor.execute(f"CREATE DATABASE {name}")
    cursor.execute(f"USE {name}")
    cursor.db = name
    yield cursor
    connection.close()


SYNONYMS = (
    "CREATE TABLE s (id INTEGER PRIMARY KEY, flag BOOL DEFAULT FALSE, ok BOOLEAN NOT NULL, "
    "n NUMERIC(8,2), d DEC, f FIXED(5), r REAL, dp DOUBLE PRECISION, cv CHARACTER VARYING(12), "
    "ch CHARACTER, w INT(11) UNSIGNED, big BIGINT(20), tiny TINYINT(4), i1 INT1, mi MIDDLEINT)"
)


def test_type_synonyms_are_stored_as_mysql_stores_them(cur: Any) -> None:
    cur.execute(SYNONYMS)
    ((_, create),) = rows(cur, "SHOW CREATE TABLE s")
    assert create == (
        "CREATE TABLE `s` (\n"
        "  `id` int NOT NULL,\n"
        "  `flag` tinyint(1) DEFAULT '0',\n"
        "  `ok` tinyint(1) NOT NULL,\n"
        "  `n` decimal(8,2) DEFAULT NULL,\n"
        "  `d` decimal(10,0) DEFAULT NULL,\n"
        "  `f` decimal(5,0) DEFAULT NULL,\n"
        "  `r` double DEFAULT NULL,\n"
        "  `dp` double DEFAULT NULL,\n"
        "  `cv` varchar(12) DEFAULT NULL,\n"
        "  `ch` char(1) DEFAULT NULL,\n"
        "  `w` int unsigned DEFAULT NULL,\n"
        "  `big` bigint DEFAULT NULL,\n"
        "  `tiny` tinyint DEFAULT NULL,\n"
        "  `i1` tinyint DEFAULT NULL,\n"
        "  `mi` mediumint DEFAULT NULL,\n"
        "  PRIMARY KEY (`id`)\n"
        ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci"
    )
    described = rows(cur, "DESCRIBE s")
    assert [(r[0], r[1]) for r in described[:4]] == [
        ("id", "int"),
        ("flag", "tinyint(1)"),
        ("ok", "tinyint(1)"),
        ("n", "decimal(8,2)"),
    ]
    assert described[1][4] == "0"
    cur.execute("INSERT INTO s (id, flag, ok, n) VALUES (1, TRUE, FALSE, 1.5)")
    cur.execute("SELECT flag, ok, n, id FROM s")
    assert cur.fetchall() == ((1, 0, Decimal("1.50"), 1),)
    types = [(d[0], d[1], d[3]) for d in cur.description]
    assert types == [
        ("flag", FIELD_TYPE.TINY, 1),
        ("ok", FIELD_TYPE.TINY, 1),
        ("n", FIELD_TYPE.NEWDECIMAL, 10),
        ("id", FIELD_TYPE.LONG, 11),
    ]


def test_show_index(cur: Any) -> None:
    cur.execute(
        "CREATE TABLE t (id INT PRIMARY KEY, a INT NOT NULL, b VARCHAR(5), UNIQUE KEY uab (a, b), "
        "KEY kb (b))"
    )
    cur.execute("INSERT INTO t VALUES (1, 1, 'x'), (2, 1, 'y'), (3, 2, 'y')")
    cur.execute("SHOW INDEX FROM t")
    assert [d[0] for d in cur.description] == [
        "Table",
        "Non_unique",
        "Key_name",
        "Seq_in_index",
        "Column_name",
        "Collation",
        "Cardinality",
        "Sub_part",
        "Packed",
        "Null",
        "Index_type",
        "Comment",
        "Index_comment",
        "Visible",
        "Expression",
    ]
    common = ("A",)
    assert [r[:7] for r in cur.fetchall()] == [
        ("t", 0, "PRIMARY", 1, "id", *common, 3),
        ("t", 0, "uab", 1, "a", *common, 2),
        ("t", 0, "uab", 2, "b", *common, 3),
        ("t", 1, "kb", 1, "b", *common, 2),
    ]
    full = rows(cur, f"SHOW KEYS FROM t FROM {cur.db} WHERE Key_name = 'kb'")
    assert full == [("t", 1, "kb", 1, "b", "A", 2, None, None, "YES", "BTREE", "", "", "YES", None)]
    assert rows(cur, "SHOW INDEXES IN t WHERE Non_unique = 0 AND Seq_in_index > 1") == [
        ("t", 0, "uab", 2, "b", "A", 3, None, None, "YES", "BTREE", "", "", "YES", None)
    ]


def test_show_table_status(cur: Any) -> None:
    cur.execute("CREATE TABLE a (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(10), KEY kv (v))")
    cur.execute("CREATE TABLE b (id INT PRIMARY KEY)")
    cur.execute("INSERT INTO a (v) VALUES ('x'), ('y'), ('z')")
    cur.execute("SHOW TABLE STATUS")
    assert [d[0] for d in cur.description] == [
        "Name",
        "Engine",
        "Version",
        "Row_format",
        "Rows",
        "Avg_row_length",
        "Data_length",
        "Max_data_length",
        "Index_length",
        "Data_free",
        "Auto_increment",
        "Create_time",
        "Update_time",
        "Check_time",
        "Collation",
        "Checksum",
        "Create_options",
        "Comment",
    ]
    status = cur.fetchall()
    assert [(r[0], r[1], r[2], r[3], r[4], r[6], r[8], r[10]) for r in status] == [
        ("a", "InnoDB", 10, "Dynamic", 3, 16384, 16384, 4),
        ("b", "InnoDB", 10, "Dynamic", 0, 16384, 0, None),
    ]
    assert [r[14:] for r in status] == [("utf8mb4_0900_ai_ci", None, "", "")] * 2
    assert [r[0] for r in rows(cur, f"SHOW TABLE STATUS FROM {cur.db} LIKE 'b%'")] == ["b"]
    assert [r[0] for r in rows(cur, "SHOW TABLE STATUS WHERE `Rows` > 0")] == ["a"]


def test_show_create_database_full_tables_and_where(cur: Any) -> None:
    assert rows(cur, f"SHOW CREATE DATABASE {cur.db}") == [
        (
            cur.db,
            f"CREATE DATABASE `{cur.db}` /*!40100 DEFAULT CHARACTER SET utf8mb4 COLLATE "
            "utf8mb4_0900_ai_ci */ /*!80016 DEFAULT ENCRYPTION='N' */",
        )
    ]
    assert fail(cur, "SHOW CREATE DATABASE nope_db") == (1049, "Unknown database 'nope_db'")
    cur.execute("CREATE TABLE t1 (id INT PRIMARY KEY, name VARCHAR(3))")
    cur.execute("CREATE TABLE t2 (id INT PRIMARY KEY)")
    assert rows(cur, "SHOW FULL TABLES") == [("t1", "BASE TABLE"), ("t2", "BASE TABLE")]
    assert rows(cur, f"SHOW TABLES WHERE Tables_in_{cur.db} = 't2'") == [("t2",)]
    assert rows(cur, "SHOW FULL TABLES WHERE Table_type = 'VIEW'") == []
    assert rows(cur, "SHOW COLUMNS FROM t1 WHERE Field = 'name'") == [
        ("name", "varchar(3)", "YES", "", None, "")
    ]
    assert rows(
        cur, "SHOW VARIABLES WHERE Variable_name IN ('foreign_key_checks', 'unique_checks')"
    ) == [
        ("foreign_key_checks", "ON"),
        ("unique_checks", "ON"),
    ]
    assert rows(cur, "SHOW SESSION STATUS WHERE Variable_name = 'no_such_status'") == []
    assert (cur.db,) in rows(cur, f"SHOW DATABASES WHERE `Database` LIKE '{cur.db}'")
    assert fail(cur, "SHOW TABLES WHERE nope = 1") == (
        1054,
        "Unknown column 'nope' in 'where clause'",
    )
