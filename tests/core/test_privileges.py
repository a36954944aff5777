"""Privileges per database and table, as MySQL checks them.

The matrix: each statement kind against an account holding what it needs at each level
(global ``*.*``, database ``db.*``, table ``db.tbl``), holding nothing, and holding
another privilege at the same level. Each variant gets its own account and its own
table, so the destructive statements cannot disturb one another; a refused statement
must change nothing (the table's rows stay).

Then what an account sees listed (SHOW DATABASES / TABLES / TABLE STATUS,
information_schema), logging in with a database, GRANT's and REVOKE's errors at each
level, SHOW GRANTS, and grants surviving a restart (replayed from the binlog).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any, NamedTuple

import pymysql
import pytest

from rpl.core.testing.process import ServerProcess

PASSWORD = "pw"
DB = "m"


class Case(NamedTuple):
    """A statement (``{t}`` is its table, ``{db}`` its database) and what it needs."""

    name: str
    sql: str
    needs: tuple[str, ...]
    refused: int
    """The error when a needed privilege is missing: 1142 (table) or 1044 (database)."""
    levels: tuple[str, ...] = ("global", "database", "table")
    """The levels at which holding ``needs`` is enough."""
    other: str = "TRIGGER"
    """A privilege the statement does not need (the wrong-privilege variant holds it)."""


CASES = [
    Case("select", "SELECT * FROM {db}.{t}", ("SELECT",), 1142),
    Case("select_join", "SELECT * FROM {db}.{t} JOIN {db}.other USING (id)", ("SELECT",), 1142,
         ("global", "database")),
    Case("subquery", "SELECT (SELECT COUNT(*) FROM {db}.other) FROM {db}.{t}", ("SELECT",), 1142,
         ("global", "database")),
    Case("checksum", "CHECKSUM TABLE {db}.{t}", ("SELECT",), 1142),
    Case("explain", "EXPLAIN SELECT * FROM {db}.{t}", ("SELECT",), 1142),
    Case("insert", "INSERT INTO {db}.{t} VALUES (2, 2)", ("INSERT",), 1142),
    Case("insert_select", "INSERT INTO {db}.{t} SELECT id + 10, v FROM {db}.{t}",
         ("INSERT", "SELECT"), 1142, other="INSERT"),
    Case("replace", "REPLACE INTO {db}.{t} VALUES (1, 5)", ("INSERT", "DELETE"), 1142,
         other="INSERT"),
    Case("upsert", "INSERT INTO {db}.{t} VALUES (1, 5) ON DUPLICATE KEY UPDATE v = 6",
         ("INSERT", "UPDATE"), 1142, other="INSERT"),
    Case("update", "UPDATE {db}.{t} SET v = 5", ("UPDATE",), 1142),
    Case("update_reading", "UPDATE {db}.{t} SET v = v + 1 WHERE id = 1", ("UPDATE", "SELECT"),
         1142, other="UPDATE"),
    Case("delete", "DELETE FROM {db}.{t}", ("DELETE",), 1142),
    Case("delete_where", "DELETE FROM {db}.{t} WHERE v = 1", ("DELETE", "SELECT"), 1142,
         other="DELETE"),
    Case("create_table", "CREATE TABLE {db}.{t}_new (id INT PRIMARY KEY)", ("CREATE",), 1142,
         ("global", "database")),
    Case("drop_table", "DROP TABLE {db}.{t}", ("DROP",), 1142),
    Case("alter", "ALTER TABLE {db}.{t} ADD COLUMN w INT", ("ALTER", "CREATE", "INSERT"), 1142,
         other="ALTER"),
    Case("create_index", "CREATE INDEX iv ON {db}.{t} (v)", ("INDEX",), 1142),
    Case("drop_index", "DROP INDEX kv ON {db}.{t}", ("INDEX",), 1142),
    Case("rename", "RENAME TABLE {db}.{t} TO {db}.{t}_r", ("ALTER", "DROP", "CREATE", "INSERT"),
         1142, ("global", "database"), other="ALTER"),
    Case("show_create", "SHOW CREATE TABLE {db}.{t}", ("SELECT",), 1142, other=""),
    Case("show_columns", "SHOW COLUMNS FROM {db}.{t}", ("INSERT",), 1142, other=""),
    Case("lock_tables", "LOCK TABLES {db}.{t} READ", ("LOCK TABLES", "SELECT"), 1044,
         ("global", "database"), other="SELECT"),
    Case("create_database", "CREATE DATABASE {db}", ("CREATE",), 1044, ("global", "database"),
         other="DROP"),
    Case("drop_database", "DROP DATABASE {db}", ("DROP",), 1044, ("global", "database")),
    Case("use", "USE {db}", ("SELECT",), 1044, other=""),
    Case("prepare", "PREPARE s FROM 'SELECT * FROM {db}.{t} WHERE id = ?'", ("SELECT",), 1142),
    Case("prepare_insert", "PREPARE s FROM 'INSERT INTO {db}.{t} VALUES (?, 1)'", ("INSERT",),
         1142),
    Case("show_tables", "SHOW TABLES FROM {db}", ("SELECT",), 1044, other=""),
]  # fmt: skip

VARIANTS = ("global", "database", "table", "nothing", "other")
counter = itertools.count()


def variants() -> list[Any]:
    return [
        pytest.param(case, variant, id=f"{case.name}-{variant}")
        for case in CASES
        for variant in VARIANTS
        if variant != "other" or case.other  # any privilege is enough: no wrong one
    ]


class Admin:
    """Root's one connection for a test module's setup and checks (a login costs more
    than most statements)."""

    def __init__(self, server: ServerProcess) -> None:
        self.server = server
        self.connection = server.connect()

    def query(self, sql: str) -> list[tuple[Any, ...]]:
        with self.connection.cursor() as cursor:
            cursor.execute(sql)
            return list(cursor.fetchall())


@pytest.fixture(scope="module")
def prepared(server: ServerProcess) -> Iterator[Admin]:
    admin = Admin(server)
    yield admin
    admin.connection.close()


def login(server: ServerProcess, user: str, **extra: Any) -> Any:
    return server.connect(user=user, password=PASSWORD, autocommit=True, **extra)


def run_as(server: ServerProcess, user: str, sql: str) -> int:
    """0 when ``sql`` ran for ``user``, else its error code."""
    connection = login(server, user)
    try:
        with connection.cursor() as cursor:
            cursor.execute(sql)
            cursor.fetchall()
        return 0
    except pymysql.MySQLError as error:
        return int(error.args[0])
    finally:
        connection.close()


def account_for(server: Admin, privileges: tuple[str, ...], on: str | None) -> str:
    """A new account holding ``privileges`` on ``on`` (nothing when ``on`` is None)."""
    user = f"u{next(counter)}"
    server.query(f"CREATE USER '{user}'@'%' IDENTIFIED BY '{PASSWORD}'")
    if on is not None and privileges:
        server.query(f"GRANT {', '.join(privileges)} ON {on} TO '{user}'@'%'")
    return user


def objects_for(server: Admin, case: Case) -> tuple[str, str]:
    """(database, table) of a fresh copy of the objects ``case`` works on."""
    n = next(counter)
    db, table = f"{DB}{n}", f"t{n}"
    if case.name != "create_database":
        server.query(f"CREATE DATABASE {db}")
        server.query(f"CREATE TABLE {db}.{table} (id INT PRIMARY KEY, v INT, KEY kv (v))")
        server.query(f"CREATE TABLE {db}.other (id INT PRIMARY KEY)")
        server.query(f"INSERT INTO {db}.{table} VALUES (1, 1)")
    return db, table


def level_name(variant: str, db: str, table: str) -> str | None:
    return {
        "global": "*.*",
        "database": f"`{db}`.*",
        "table": f"`{db}`.`{table}`",
        "other": f"`{db}`.`{table}`",
        "nothing": None,
    }[variant]


def state_of(server: Admin, db: str, table: str) -> object:
    """What a refused statement must leave alone: the databases, the database's tables
    and the table's rows."""
    databases = server.query("SHOW DATABASES")
    if (db,) not in databases:
        return databases
    tables = server.query(f"SHOW TABLES FROM {db}")
    rows = server.query(f"SELECT * FROM {db}.{table}") if (table,) in tables else None
    return databases, tables, rows


@pytest.mark.parametrize(("case", "variant"), variants())
def test_privilege_matrix(prepared: Admin, case: Case, variant: str) -> None:
    server = prepared
    db, table = objects_for(server, case)
    on = level_name(variant, db, table)
    if variant == "other" and case.levels[-1] == "table":
        held: tuple[str, ...] = (case.other,)
    elif variant == "other":
        held, on = (case.other,), f"`{db}`.*"
    else:
        held = case.needs
    if variant == "table" and "LOCK TABLES" in held:
        held = tuple(p for p in held if p != "LOCK TABLES")  # not a table privilege
    user = account_for(server, held, on)
    before = state_of(server, db, table)
    code = run_as(server.server, user, case.sql.format(db=db, t=table))
    if variant in case.levels:
        assert code == 0, f"{case.sql} refused ({code}) with {held} on {on}"
    else:
        assert code == case.refused, f"{case.sql} gave {code} with {held} on {on}"
        assert state_of(server, db, table) == before, "a refused statement changed nothing"


def test_the_messages_are_mysqls(prepared: Admin) -> None:
    server, process = prepared, prepared.server
    db, table = objects_for(server, CASES[0])
    user = account_for(server, (), None)
    connection = login(process, user)
    try:
        with connection.cursor() as cursor:
            with pytest.raises(pymysql.MySQLError) as refused:
                cursor.execute(f"SELECT * FROM {db}.{table}")
            assert refused.value.args == (
                1142,
                f"SELECT command denied to user '{user}'@'127.0.0.1' for table '{table}'",
            )
            with pytest.raises(pymysql.MySQLError) as refused:
                cursor.execute(f"DROP DATABASE {db}")
            assert refused.value.args == (
                1044,
                f"Access denied for user '{user}'@'127.0.0.1' to database '{db}'",
            )
            with pytest.raises(pymysql.MySQLError) as refused:
                cursor.execute(f"SHOW CREATE TABLE {db}.{table}")
            assert refused.value.args[0] == 1142
            assert refused.value.args[1].startswith("SHOW command denied")
    finally:
        connection.close()


def listed(server: ServerProcess, user: str, sql: str) -> list[tuple[Any, ...]]:
    return server.query(sql, user=user, password=PASSWORD)


def test_listings_show_only_what_the_account_holds(prepared: Admin) -> None:
    server, process = prepared, prepared.server
    server.query("CREATE DATABASE seen")
    server.query("CREATE DATABASE hidden")
    for t in ("a", "b"):
        server.query(f"CREATE TABLE seen.{t} (id INT PRIMARY KEY)")
        server.query(f"CREATE TABLE hidden.{t} (id INT PRIMARY KEY)")
    table_user = account_for(server, ("SELECT",), "seen.a")
    db_user = account_for(server, ("INSERT",), "seen.*")
    viewer = account_for(server, ("SHOW DATABASES",), "*.*")
    databases = "SHOW DATABASES"
    ours = "('seen', 'hidden')"
    assert ("seen",) in listed(process, table_user, databases)
    assert ("hidden",) not in listed(process, table_user, databases)
    assert ("performance_schema",) in listed(process, table_user, databases)
    assert ("hidden",) in listed(process, viewer, databases)
    assert listed(process, table_user, "SHOW TABLES FROM seen") == [("a",)]
    assert listed(process, db_user, "SHOW TABLES FROM seen") == [("a",), ("b",)]
    assert [r[0] for r in listed(process, table_user, "SHOW TABLE STATUS FROM seen")] == ["a"]
    tables = f"SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA IN {ours} ORDER BY 1, 2"  # noqa: E501
    assert listed(process, table_user, tables) == [("seen", "a")]
    assert listed(process, db_user, tables) == [("seen", "a"), ("seen", "b")]
    assert listed(process, viewer, tables) == []  # SHOW DATABASES lists, it does not open
    columns = (
        f"SELECT DISTINCT TABLE_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA IN {ours}"  # noqa: E501
    )
    assert listed(process, table_user, columns) == [("a",)]
    schemata = f"SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME IN {ours}"
    assert listed(process, table_user, schemata) == [("seen",)]
    assert sorted(listed(process, viewer, schemata)) == [("hidden",), ("seen",)]
    assert listed(process, table_user, "SELECT COUNT(*) FROM performance_schema.global_variables")
    grantees = "SELECT DISTINCT GRANTEE FROM information_schema.USER_PRIVILEGES"
    assert listed(process, table_user, grantees) == [(f"'{table_user}'@'%'",)]
    assert (
        len(listed(process, table_user, "SELECT * FROM information_schema.SCHEMA_PRIVILEGES")) == 0
    )
    assert len(server.query(grantees)) > 3  # root sees every account's


def test_logging_in_with_a_database_needs_a_privilege_on_it(prepared: Admin) -> None:
    server, process = prepared, prepared.server
    server.query("CREATE DATABASE IF NOT EXISTS hidden")
    server.query("CREATE DATABASE IF NOT EXISTS seen")
    server.query("CREATE TABLE IF NOT EXISTS seen.a (id INT PRIMARY KEY)")
    user = account_for(server, ("SELECT",), "seen.a")
    with pytest.raises(pymysql.MySQLError) as refused:
        login(process, user, database="hidden")
    assert refused.value.args == (
        1044,
        f"Access denied for user '{user}'@'127.0.0.1' to database 'hidden'",
    )
    login(process, user, database="seen").close()


def test_grant_and_revoke_at_each_level(prepared: Admin) -> None:
    server, process = prepared, prepared.server
    server.query("CREATE DATABASE IF NOT EXISTS g")
    server.query("CREATE TABLE IF NOT EXISTS g.t (id INT PRIMARY KEY)")
    user = account_for(server, (), None)
    name = f"'{user}'@'%'"
    refused = [
        (f"GRANT SUPER ON g.* TO {name}", 1221),
        (f"GRANT REPLICATION SLAVE ON g.* TO {name}", 1221),
        (f"GRANT LOCK TABLES ON g.t TO {name}", 1144),
        (f"GRANT PROCESS ON g.t TO {name}", 1144),
        (f"GRANT SELECT ON g.missing TO {name}", 1146),
        (f"GRANT SELECT ON t TO {name}", 1046),
    ]
    for sql, code in refused:
        with pytest.raises(pymysql.MySQLError) as failed:
            server.query(sql)
        assert failed.value.args[0] == code, sql
    server.query(f"GRANT CREATE ON g.later TO {name}")  # CREATE may name a table to come
    server.query(f"GRANT SELECT, INSERT ON g.t TO {name}")
    server.query(f"GRANT ALL ON g2.* TO {name}")  # a database need not exist yet
    grants = [row[0] for row in server.query(f"SHOW GRANTS FOR {name}")]
    assert grants == [
        f"GRANT USAGE ON *.* TO `{user}`@`%`",
        f"GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, REFERENCES, INDEX, ALTER, "
        f"CREATE TEMPORARY TABLES, LOCK TABLES, EXECUTE, CREATE VIEW, SHOW VIEW, "
        f"CREATE ROUTINE, ALTER ROUTINE, EVENT, TRIGGER ON `g2`.* TO `{user}`@`%`",
        f"GRANT CREATE ON `g`.`later` TO `{user}`@`%`",
        f"GRANT SELECT, INSERT ON `g`.`t` TO `{user}`@`%`",
    ]
    assert run_as(process, user, "INSERT INTO g.t VALUES (1)") == 0
    server.query(f"REVOKE INSERT ON g.t FROM {name}")
    assert run_as(process, user, "INSERT INTO g.t VALUES (2)") == 1142
    assert run_as(process, user, "SELECT * FROM g.t") == 0
    server.query("DROP TABLE g.t")
    server.query(f"REVOKE SELECT ON g.t FROM {name}")  # the grant outlives its table
    server.query(f"GRANT SYSTEM_VARIABLES_ADMIN, CONNECTION_ADMIN, PROCESS ON *.* TO {name}")
    server.query(f"GRANT SELECT ON g.* TO {name} WITH GRANT OPTION")
    server.query(f"REVOKE GRANT OPTION ON g.* FROM {name}")
    assert [row[0] for row in server.query(f"SHOW GRANTS FOR {name}")][:2] == [
        f"GRANT PROCESS ON *.* TO `{user}`@`%`",
        f"GRANT CONNECTION_ADMIN,SYSTEM_VARIABLES_ADMIN ON *.* TO `{user}`@`%`",
    ]


def test_grants_survive_a_restart(tmp_path: Any) -> None:
    server = ServerProcess(tmp_path / "restart").start()
    try:
        server.query("CREATE DATABASE r")
        server.query("CREATE TABLE r.t (id INT PRIMARY KEY)")
        server.query("CREATE TABLE r.u (id INT PRIMARY KEY)")
        server.query(f"CREATE USER 'k'@'%' IDENTIFIED BY '{PASSWORD}'")
        server.query("GRANT SELECT ON r.t TO 'k'@'%'")
        server.kill()  # no checkpoint: the grant comes back from the binlog
        server.start()
        assert run_as(server, "k", "SELECT * FROM r.t") == 0
        assert run_as(server, "k", "SELECT * FROM r.u") == 1142
        server.stop()  # a checkpoint carries it now
        server.start()
        assert run_as(server, "k", "SELECT * FROM r.t") == 0
        assert run_as(server, "k", "SELECT * FROM r.u") == 1142
    finally:
        server.stop()
