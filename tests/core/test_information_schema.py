"""information_schema and the mysql schema's account tables against a real rpl server
process, read through PyMySQL: exact rows for known tables, columns and indexes, MySQL
8.0's column names and order, and MySQL's errors for writes."""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Iterator
from typing import Any

import pymysql
import pytest

_names = itertools.count(1)


def fail(cursor: Any, sql: str) -> tuple[int, str]:
    """Run ``sql``, which must fail: (errno, message)."""
    with pytest.raises(pymysql.err.MySQLError) as info:
        cursor.execute(sql)
    return info.value.args[0], info.value.args[1]


def _native_hash(password: str) -> str:
    """mysql_native_password's stored form: ``*`` and SHA1(SHA1(password)) in hex."""
    inner = hashlib.sha1(password.encode()).digest()
    return "*" + hashlib.sha1(inner).hexdigest().upper()


def rows(cursor: Any, sql: str, *args: object) -> list[tuple[Any, ...]]:
    cursor.execute(sql, args or None)
    return list(cursor.fetchall())


def names(cursor: Any) -> list[str]:
    """The result's column names."""
    return [d[0] for d in cursor.description]


@pytest.fixture
def cur(server: Any) -> Iterator[Any]:
    """A cursor in a new database holding table ``t`` (two rows, AUTO_INCREMENT at 3)
    with a primary key, an index and columns of several types."""
    connection = server.connect()
    cursor = connection.cursor()
    db = f"istest{next(_names)}"
    cursor.execute(f"CREATE DATABASE {db}")
    cursor.execute(f"USE {db}")
    cursor.execute(
        "CREATE TABLE t (id int unsigned PRIMARY KEY AUTO_INCREMENT, "
        "name varchar(40) NOT NULL DEFAULT 'x', price decimal(10,2), at datetime(3), "
        "e enum('a','bb'), body text, big bigint, KEY k_name (name, price))"
    )
    cursor.execute("INSERT INTO t (name, price) VALUES ('a', 1.5), ('a', 2.5)")
    cursor.db = db
    yield cursor
    connection.close()


TABLES_COLUMNS = [
    "TABLE_CATALOG",
    "TABLE_SCHEMA",
    "TABLE_NAME",
    "TABLE_TYPE",
    "ENGINE",
    "VERSION",
    "ROW_FORMAT",
    "TABLE_ROWS",
    "AVG_ROW_LENGTH",
    "DATA_LENGTH",
    "MAX_DATA_LENGTH",
    "INDEX_LENGTH",
    "DATA_FREE",
    "AUTO_INCREMENT",
    "CREATE_TIME",
    "UPDATE_TIME",
    "CHECK_TIME",
    "TABLE_COLLATION",
    "CHECKSUM",
    "CREATE_OPTIONS",
    "TABLE_COMMENT",
]


def test_tables_row_of_a_table(cur: Any) -> None:
    got = rows(cur, "SELECT * FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s", cur.db)
    assert names(cur) == TABLES_COLUMNS
    assert got == [
        ("def", cur.db, "t", "BASE TABLE", "InnoDB", 10, "Dynamic", 2, 8192, 16384, 0, 16384,
         0, 3, None, None, None, "utf8mb4_0900_ai_ci", None, "", "")
    ]  # fmt: skip
    cur.execute("INSERT INTO t (name) VALUES ('c')")
    assert rows(
        cur,
        "SELECT table_rows, auto_increment FROM information_schema.tables "
        "WHERE table_schema = %s AND table_name = 't'",
        cur.db,
    ) == [(3, 4)]


def test_tables_lists_the_system_schemas(cur: Any) -> None:
    got = rows(
        cur,
        "SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE, ENGINE FROM information_schema.TABLES "
        "WHERE TABLE_NAME IN ('TABLES', 'threads', 'user') ORDER BY TABLE_SCHEMA",
    )
    assert got == [
        ("information_schema", "TABLES", "SYSTEM VIEW", None),
        ("performance_schema", "threads", "BASE TABLE", "PERFORMANCE_SCHEMA"),
    ]


def test_columns_of_a_table(cur: Any) -> None:
    got = rows(
        cur,
        "SELECT * FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = %s ORDER BY "
        "ORDINAL_POSITION",
        cur.db,
    )
    assert names(cur) == [
        "TABLE_CATALOG", "TABLE_SCHEMA", "TABLE_NAME", "COLUMN_NAME", "ORDINAL_POSITION",
        "COLUMN_DEFAULT", "IS_NULLABLE", "DATA_TYPE", "CHARACTER_MAXIMUM_LENGTH",
        "CHARACTER_OCTET_LENGTH", "NUMERIC_PRECISION", "NUMERIC_SCALE", "DATETIME_PRECISION",
        "CHARACTER_SET_NAME", "COLLATION_NAME", "COLUMN_TYPE", "COLUMN_KEY", "EXTRA",
        "PRIVILEGES", "COLUMN_COMMENT", "GENERATION_EXPRESSION", "SRS_ID",
    ]  # fmt: skip
    utf8 = ("utf8mb4", "utf8mb4_0900_ai_ci")
    privileges = "select,insert,update,references"
    tail = (privileges, "", "", None)
    db = cur.db
    assert got == [
        ("def", db, "t", "id", 1, None, "NO", "int", None, None, 10, 0, None, None, None,
         "int unsigned", "PRI", "auto_increment", *tail),
        ("def", db, "t", "name", 2, "x", "NO", "varchar", 40, 160, None, None, None, *utf8,
         "varchar(40)", "MUL", "", *tail),
        ("def", db, "t", "price", 3, None, "YES", "decimal", None, None, 10, 2, None, None,
         None, "decimal(10,2)", "", "", *tail),
        ("def", db, "t", "at", 4, None, "YES", "datetime", None, None, None, None, 3, None,
         None, "datetime(3)", "", "", *tail),
        ("def", db, "t", "e", 5, None, "YES", "enum", 2, 8, None, None, None, *utf8,
         "enum('a','bb')", "", "", *tail),
        ("def", db, "t", "body", 6, None, "YES", "text", 65535, 65535, None, None, None,
         *utf8, "text", "", "", *tail),
        ("def", db, "t", "big", 7, None, "YES", "bigint", None, None, 19, 0, None, None, None,
         "bigint", "", "", *tail),
    ]  # fmt: skip


def test_columns_as_mycli_and_sqlalchemy_ask(cur: Any) -> None:
    """Lower-case column names, a WHERE on the schema and a projection."""
    got = rows(
        cur,
        "select table_name, column_name, data_type, is_nullable from information_schema.columns "
        "where table_schema = database() and column_name like 'n%' order by table_name",
    )
    assert got == [("t", "name", "varchar", "NO")]


def test_statistics_rows_of_the_primary_key_and_an_index(cur: Any) -> None:
    got = rows(
        cur,
        "SELECT * FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = %s "
        "ORDER BY INDEX_NAME, SEQ_IN_INDEX",
        cur.db,
    )
    assert names(cur) == [
        "TABLE_CATALOG", "TABLE_SCHEMA", "TABLE_NAME", "NON_UNIQUE", "INDEX_SCHEMA",
        "INDEX_NAME", "SEQ_IN_INDEX", "COLUMN_NAME", "COLLATION", "CARDINALITY", "SUB_PART",
        "PACKED", "NULLABLE", "INDEX_TYPE", "COMMENT", "INDEX_COMMENT", "IS_VISIBLE",
        "EXPRESSION",
    ]  # fmt: skip
    db = cur.db
    tail = (None, None)
    assert got == [
        ("def", db, "t", 0, db, "PRIMARY", 1, "id", "A", 2, *tail, "", "BTREE", "", "", "YES",
         None),
        ("def", db, "t", 1, db, "k_name", 1, "name", "A", 1, *tail, "", "BTREE", "", "", "YES",
         None),
        ("def", db, "t", 1, db, "k_name", 2, "price", "A", 2, *tail, "YES", "BTREE", "", "",
         "YES", None),
    ]  # fmt: skip


def test_constraints_and_key_columns(cur: Any) -> None:
    db = cur.db
    assert rows(
        cur, "SELECT * FROM information_schema.TABLE_CONSTRAINTS WHERE TABLE_SCHEMA = %s", db
    ) == [("def", db, "PRIMARY", db, "t", "PRIMARY KEY", "YES")]
    assert rows(
        cur, "SELECT * FROM information_schema.KEY_COLUMN_USAGE WHERE TABLE_SCHEMA = %s", db
    ) == [("def", db, "PRIMARY", "def", db, "t", "id", 1, None, None, None, None)]
    assert rows(
        cur,
        "SELECT COUNT(*) FROM information_schema.REFERENTIAL_CONSTRAINTS "
        "WHERE CONSTRAINT_SCHEMA = %s",
        db,
    ) == [(0,)]


def test_schemata_lists_every_database(cur: Any) -> None:
    got = rows(cur, "SELECT * FROM information_schema.SCHEMATA")
    assert names(cur) == [
        "CATALOG_NAME",
        "SCHEMA_NAME",
        "DEFAULT_CHARACTER_SET_NAME",
        "DEFAULT_COLLATION_NAME",
        "SQL_PATH",
        "DEFAULT_ENCRYPTION",
    ]
    assert ("def", cur.db, "utf8mb4", "utf8mb4_0900_ai_ci", None, "NO") in got
    assert ("def", "information_schema", "utf8mb3", "utf8mb3_general_ci", None, "NO") in got
    assert "performance_schema" in {r[1] for r in got}
    databases = [r[0] for r in rows(cur, "SHOW DATABASES")]
    assert databases == sorted(r[1] for r in got)
    # mysql is read by name, not listed: tools walking every database leave it alone
    assert "mysql" not in databases
    assert rows(
        cur, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'mysql'"
    ) == [(0,)]
    assert rows(cur, "SHOW TABLES FROM mysql LIKE 'user'") == [("user",)]


def test_partitions_one_unpartitioned_row_per_table(cur: Any) -> None:
    got = rows(
        cur,
        "SELECT TABLE_NAME, PARTITION_NAME, PARTITION_METHOD, TABLE_ROWS "
        "FROM information_schema.PARTITIONS WHERE TABLE_SCHEMA = %s",
        cur.db,
    )
    assert got == [("t", None, None, 2)]


@pytest.mark.parametrize(
    "table", ["VIEWS", "ROUTINES", "TRIGGERS", "EVENTS", "FILES", "REFERENTIAL_CONSTRAINTS"]
)
def test_empty_tables(cur: Any, table: str) -> None:
    assert rows(cur, f"SELECT * FROM information_schema.{table}") == []


def test_engines_charsets_collations(cur: Any) -> None:
    assert rows(cur, "SELECT ENGINE, SUPPORT, TRANSACTIONS FROM information_schema.ENGINES") == [
        ("InnoDB", "DEFAULT", "YES")
    ]
    assert rows(
        cur,
        "SELECT * FROM information_schema.CHARACTER_SETS WHERE CHARACTER_SET_NAME = 'utf8mb4'",
    ) == [("utf8mb4", "utf8mb4_0900_ai_ci", "UTF-8 Unicode", 4)]
    assert rows(
        cur,
        "SELECT * FROM information_schema.COLLATIONS WHERE COLLATION_NAME = 'utf8mb4_bin'",
    ) == [("utf8mb4_bin", "utf8mb4", 46, "", "Yes", 1, "PAD SPACE")]
    assert rows(
        cur,
        "SELECT CHARACTER_SET_NAME FROM information_schema.COLLATION_CHARACTER_SET_APPLICABILITY"
        " WHERE COLLATION_NAME = 'latin1_swedish_ci'",
    ) == [("latin1",)]


def test_processlist_shows_this_session(cur: Any) -> None:
    connection_id = rows(cur, "SELECT CONNECTION_ID()")[0][0]
    got = rows(cur, "SELECT * FROM information_schema.PROCESSLIST WHERE ID = %s", connection_id)
    assert names(cur) == ["ID", "USER", "HOST", "DB", "COMMAND", "TIME", "STATE", "INFO"]
    assert got == [
        (
            connection_id,
            "root",
            "127.0.0.1",
            cur.db,
            "Query",
            0,
            "",
            f"SELECT * FROM information_schema.PROCESSLIST WHERE ID = {connection_id}",
        )
    ]


def test_accounts_in_privilege_tables_and_mysql_user(cur: Any) -> None:
    cur.execute("CREATE USER 'isuser'@'%' IDENTIFIED BY 'pw'")
    cur.execute("GRANT PROCESS, REPLICATION CLIENT ON *.* TO 'isuser'@'%'")
    cur.execute(f"GRANT SELECT, INSERT ON {cur.db}.* TO 'isuser'@'%'")
    assert rows(
        cur,
        "SELECT * FROM information_schema.USER_PRIVILEGES WHERE GRANTEE = %s",
        "'isuser'@'%'",
    ) == [
        ("'isuser'@'%'", "def", "PROCESS", "NO"),
        ("'isuser'@'%'", "def", "REPLICATION CLIENT", "NO"),
    ]
    assert rows(
        cur,
        "SELECT TABLE_SCHEMA, PRIVILEGE_TYPE FROM information_schema.SCHEMA_PRIVILEGES "
        "WHERE GRANTEE = %s",
        "'isuser'@'%'",
    ) == [(cur.db, "INSERT"), (cur.db, "SELECT")]
    user = rows(cur, "SELECT * FROM mysql.user WHERE User = 'isuser'")
    columns = names(cur)
    assert columns[:4] == ["Host", "User", "Select_priv", "Insert_priv"]
    assert len(columns) == 51 and columns[-1] == "User_attributes"
    got = dict(zip(columns, user[0], strict=True))
    assert got["Host"] == "%"
    assert got["Process_priv"] == "Y" and got["Repl_client_priv"] == "Y"
    assert got["Select_priv"] == "N" and got["Super_priv"] == "N"
    assert got["plugin"] == "mysql_native_password"
    password = rows(cur, "SELECT authentication_string FROM mysql.user WHERE User = 'root'")
    assert password == [("",)]
    assert got["authentication_string"] == _native_hash("pw")
    assert got["account_locked"] == "N"
    assert rows(cur, "SELECT Host, Db, User, Select_priv, Insert_priv, Update_priv "
                "FROM mysql.db WHERE User = 'isuser'") == [
        ("%", cur.db, "isuser", "Y", "Y", "N")
    ]  # fmt: skip
    assert rows(cur, "SELECT * FROM mysql.tables_priv") == []
    root = rows(cur, "SELECT Super_priv, Grant_priv FROM mysql.user WHERE User = 'root'")
    assert root == [("Y", "Y")]
    cur.execute("DROP USER 'isuser'@'%'")


def test_writes_get_mysql_errors_and_change_nothing(cur: Any) -> None:
    assert fail(cur, "DELETE FROM information_schema.TABLES") == (
        1044,
        "Access denied for user 'root'@'127.0.0.1' to database 'information_schema'",
    )
    assert fail(cur, "UPDATE performance_schema.threads SET NAME = 'x'") == (
        1142,
        "UPDATE command denied to user 'root'@'127.0.0.1' for table 'threads'",
    )
    assert fail(cur, "INSERT INTO mysql.user (Host, User) VALUES ('h', 'u')") == (
        1036,
        "Table 'user' is read only",
    )
    assert fail(cur, "CREATE TABLE information_schema.x (id int PRIMARY KEY)")[0] == 1044
    assert fail(cur, "CREATE DATABASE performance_schema")[0] == 1044
    assert fail(cur, "DROP DATABASE mysql")[0] == 1044
    assert rows(cur, "SELECT COUNT(*) FROM mysql.user WHERE User = 'u'") == [(0,)]
    assert rows(cur, "SELECT 1") == [(1,)]


def test_use_and_show_tables_in_the_system_schemas(cur: Any) -> None:
    cur.execute("USE information_schema")
    tables = [r[0] for r in rows(cur, "SHOW TABLES")]
    assert names(cur) == ["Tables_in_information_schema"]
    for table in ("COLUMNS", "SCHEMATA", "STATISTICS", "TABLES", "PROCESSLIST", "PLUGINS"):
        assert table in tables
    assert rows(cur, "SHOW FULL TABLES LIKE 'SCHEMATA'") == [("SCHEMATA", "SYSTEM VIEW")]
    assert rows(cur, "SELECT COUNT(*) FROM schemata WHERE schema_name = 'mysql'") == [(0,)]
    cur.execute("USE mysql")
    assert rows(cur, "SHOW TABLES") == [("db",), ("help_topic",), ("tables_priv",), ("user",)]
    assert rows(cur, "SELECT COUNT(*) FROM user WHERE User = 'root'") == [(1,)]


def test_unknown_tables(cur: Any) -> None:
    """MySQL 8.0 keeps the variables in performance_schema, not information_schema."""
    assert fail(cur, "SELECT * FROM information_schema.GLOBAL_VARIABLES") == (
        1109,
        "Unknown table 'GLOBAL_VARIABLES' in information_schema",
    )
    assert fail(cur, "SELECT * FROM performance_schema.events_waits_current") == (
        1146,
        "Table 'performance_schema.events_waits_current' doesn't exist",
    )


def test_show_columns_of_a_system_table(cur: Any) -> None:
    got = rows(cur, "SHOW COLUMNS FROM information_schema.ENGINES")
    assert got == [
        ("ENGINE", "varchar(64)", "NO", "", None, ""),
        ("SUPPORT", "varchar(8)", "NO", "", None, ""),
        ("COMMENT", "varchar(80)", "NO", "", None, ""),
        ("TRANSACTIONS", "varchar(3)", "YES", "", None, ""),
        ("XA", "varchar(3)", "YES", "", None, ""),
        ("SAVEPOINTS", "varchar(3)", "YES", "", None, ""),
    ]


def test_show_character_set_and_collation(cur: Any) -> None:
    assert rows(cur, "SHOW CHARACTER SET LIKE 'latin%'") == [
        ("latin1", "cp1252 West European", "latin1_swedish_ci", 1)
    ]
    assert names(cur) == ["Charset", "Description", "Default collation", "Maxlen"]
    assert rows(cur, "SHOW CHARSET LIKE 'utf8mb4'") == [
        ("utf8mb4", "UTF-8 Unicode", "utf8mb4_0900_ai_ci", 4)
    ]
    assert rows(cur, "SHOW COLLATION LIKE 'utf8mb4_0900%'") == [
        ("utf8mb4_0900_ai_ci", "utf8mb4", 255, "Yes", "Yes", 0, "NO PAD"),
        ("utf8mb4_0900_as_cs", "utf8mb4", 278, "", "Yes", 0, "NO PAD"),
        ("utf8mb4_0900_bin", "utf8mb4", 309, "", "Yes", 1, "NO PAD"),
    ]
    assert names(cur) == [
        "Collation", "Charset", "Id", "Default", "Compiled", "Sortlen", "Pad_attribute",
    ]  # fmt: skip
    assert len(rows(cur, "SHOW COLLATION")) == len(
        rows(cur, "SELECT * FROM information_schema.COLLATIONS")
    )
