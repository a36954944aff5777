"""FOREIGN KEY constraints against a real rpl server process (PyMySQL), enforced as InnoDB
enforces them: 1452 for a child without its parent, 1451 for a referenced parent under
RESTRICT / NO ACTION, CASCADE and SET NULL applied, foreign_key_checks = 0 turning it all
off, the definition errors (1824, 3734, 1822, 3780, 1830), SHOW CREATE TABLE's
constraint lines and auto-generated names."""

from __future__ import annotations

import itertools
import shutil
import subprocess
from collections.abc import Iterator
from typing import Any

import pymysql
import pytest

_names = itertools.count(1)


def fail(cursor: Any, sql: str) -> tuple[int, str]:
    with pytest.raises(pymysql.err.MySQLError) as info:
        cursor.execute(sql)
    return info.value.args[0], info.value.args[1]


def rows(cursor: Any, sql: str) -> list[tuple[Any, ...]]:
    cursor.execute(sql)
    return list(cursor.fetchall())


@pytest.fixture
def cur(server: Any) -> Iterator[Any]:
    connection = server.connect()
    cursor = connection.cursor()
    name = f"fk{next(_names)}"
    cursor.execute(f"CREATE DATABASE {name}")
    cursor.execute(f"USE {name}")
    cursor.db = name
    yield cursor
    connection.close()


def _parent_child(cur: Any, actions: str = "") -> None:
    cur.execute("CREATE TABLE p (id INT PRIMARY KEY, name VARCHAR(10))")
    cur.execute(
        "CREATE TABLE c (id INT PRIMARY KEY, pid INT, "
        f"CONSTRAINT fk_p FOREIGN KEY (pid) REFERENCES p (id){actions})"
    )
    cur.execute("INSERT INTO p VALUES (1, 'one'), (2, 'two')")
    cur.execute("INSERT INTO c VALUES (10, 1), (11, 1), (20, 2), (30, NULL)")


def test_restrict_refuses_orphans_and_referenced_parents(cur: Any) -> None:
    _parent_child(cur)
    detail = f"`{cur.db}`.`c`, CONSTRAINT `fk_p` FOREIGN KEY (`pid`) REFERENCES `p` (`id`)"
    assert fail(cur, "INSERT INTO c VALUES (40, 3)") == (
        1452,
        f"Cannot add or update a child row: a foreign key constraint fails ({detail})",
    )
    assert fail(cur, "UPDATE c SET pid = 9 WHERE id = 10") == (
        1452,
        f"Cannot add or update a child row: a foreign key constraint fails ({detail})",
    )
    assert fail(cur, "DELETE FROM p WHERE id = 1") == (
        1451,
        f"Cannot delete or update a parent row: a foreign key constraint fails ({detail})",
    )
    assert fail(cur, "UPDATE p SET id = 5 WHERE id = 2") == (
        1451,
        f"Cannot delete or update a parent row: a foreign key constraint fails ({detail})",
    )
    assert rows(cur, "SELECT * FROM p ORDER BY id") == [(1, "one"), (2, "two")]
    assert rows(cur, "SELECT COUNT(*) FROM c") == [(4,)]
    # a parent no child references may go; so may one whose children went first
    cur.execute("INSERT INTO p VALUES (3, 'three')")
    cur.execute("DELETE FROM p WHERE id = 3")
    cur.execute("DELETE FROM c WHERE pid = 2")
    cur.execute("DELETE FROM p WHERE id = 2")
    assert fail(cur, "DROP TABLE p") == (
        3730,
        "Cannot drop table 'p' referenced by a foreign key constraint 'fk_p' on table 'c'.",
    )
    cur.execute("DROP TABLE c, p")


def test_cascade_and_set_null(cur: Any) -> None:
    _parent_child(cur, " ON DELETE CASCADE ON UPDATE CASCADE")
    cur.execute(
        "CREATE TABLE g (id INT PRIMARY KEY, cid INT, "
        "FOREIGN KEY (cid) REFERENCES c (id) ON DELETE SET NULL)"
    )
    cur.execute("INSERT INTO g VALUES (100, 10), (101, 20)")
    cur.execute("UPDATE p SET id = 7 WHERE id = 1")
    assert rows(cur, "SELECT id, pid FROM c ORDER BY id") == [(10, 7), (11, 7), (20, 2), (30, None)]
    assert cur.execute("DELETE FROM p WHERE id = 7") == 1
    assert rows(cur, "SELECT id, pid FROM c ORDER BY id") == [(20, 2), (30, None)]
    assert rows(cur, "SELECT * FROM g ORDER BY id") == [(100, None), (101, 20)]
    ((_, create),) = rows(cur, "SHOW CREATE TABLE g")
    assert create == (
        "CREATE TABLE `g` (\n"
        "  `id` int NOT NULL,\n"
        "  `cid` int DEFAULT NULL,\n"
        "  PRIMARY KEY (`id`),\n"
        "  KEY `cid` (`cid`),\n"
        "  CONSTRAINT `g_ibfk_1` FOREIGN KEY (`cid`) REFERENCES `c` (`id`) ON DELETE SET NULL\n"
        ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci"
    )
    ((_, create),) = rows(cur, "SHOW CREATE TABLE c")
    assert (
        "  KEY `fk_p` (`pid`),\n"
        "  CONSTRAINT `fk_p` FOREIGN KEY (`pid`) REFERENCES `p` (`id`) "
        "ON DELETE CASCADE ON UPDATE CASCADE\n"
    ) in create


def test_foreign_key_checks_off_skips_checks_and_actions(cur: Any) -> None:
    assert rows(cur, "SELECT @@foreign_key_checks, @@unique_checks") == [(1, 1)]
    cur.execute("SET foreign_key_checks = 0")
    # a dump reload creates the child before its parent
    cur.execute(
        "CREATE TABLE c (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES p (id) "
        "ON DELETE CASCADE)"
    )
    cur.execute("INSERT INTO c VALUES (1, 99)")
    cur.execute("CREATE TABLE p (id INT PRIMARY KEY)")
    cur.execute("INSERT INTO p VALUES (5)")
    cur.execute("INSERT INTO c VALUES (2, 5)")
    cur.execute("DELETE FROM p WHERE id = 5")
    assert rows(cur, "SELECT * FROM c ORDER BY id") == [(1, 99), (2, 5)]
    cur.execute("SET foreign_key_checks = 1")
    assert fail(cur, "INSERT INTO c VALUES (3, 5)")[0] == 1452
    cur.execute("INSERT INTO p VALUES (5)")
    cur.execute("DELETE FROM p WHERE id = 5")
    assert rows(cur, "SELECT * FROM c ORDER BY id") == [(1, 99)]


def test_bad_definitions(cur: Any) -> None:
    cur.execute("CREATE TABLE p (id INT PRIMARY KEY, code INT, big BIGINT, KEY kc (code))")
    assert fail(
        cur, "CREATE TABLE c (id INT PRIMARY KEY, x INT, FOREIGN KEY (x) REFERENCES nope (id))"
    ) == (
        1824,
        "Failed to open the referenced table 'nope'",
    )
    assert fail(
        cur, "CREATE TABLE c (id INT PRIMARY KEY, x INT, FOREIGN KEY (x) REFERENCES p (zz))"
    ) == (
        3734,
        "Failed to add the foreign key constraint. Missing column 'zz' for constraint "
        "'c_ibfk_1' in the referenced table 'p'",
    )
    assert fail(
        cur, "CREATE TABLE c (id INT PRIMARY KEY, x BIGINT, FOREIGN KEY (x) REFERENCES p (big))"
    ) == (
        1822,
        "Failed to add the foreign key constraint. Missing index for constraint 'c_ibfk_1' "
        "in the referenced table 'p'",
    )
    assert fail(
        cur,
        "CREATE TABLE c (id INT PRIMARY KEY, x BIGINT, "
        "CONSTRAINT f FOREIGN KEY (x) REFERENCES p (id))",
    ) == (
        3780,
        "Referencing column 'x' and referenced column 'id' in foreign key constraint 'f' are "
        "incompatible.",
    )
    assert fail(
        cur,
        "CREATE TABLE c (id INT PRIMARY KEY, x INT NOT NULL, "
        "CONSTRAINT f FOREIGN KEY (x) REFERENCES p (id) ON DELETE SET NULL)",
    ) == (
        1830,
        "Column 'x' cannot be NOT NULL: needed in a foreign key constraint 'f' SET NULL",
    )
    assert rows(cur, "SHOW TABLES") == [("p",)]
    # a non-primary parent key with an index is fine; an inline REFERENCES is ignored (MySQL 8.0)
    cur.execute(
        "CREATE TABLE c (id INT PRIMARY KEY, x INT REFERENCES p (id), "
        "FOREIGN KEY (x) REFERENCES p (code))"
    )
    cur.execute("INSERT INTO p VALUES (1, 50, 0)")
    cur.execute("INSERT INTO c VALUES (1, 50)")
    assert fail(cur, "INSERT INTO c VALUES (2, 1)")[0] == 1452


def test_alter_table_add_and_drop_foreign_key(cur: Any) -> None:
    cur.execute("CREATE TABLE p (id INT PRIMARY KEY)")
    cur.execute("CREATE TABLE c (id INT PRIMARY KEY, pid INT)")
    cur.execute("INSERT INTO p VALUES (1)")
    cur.execute("INSERT INTO c VALUES (1, 1), (2, 2)")
    detail = f"`{cur.db}`.`c`, CONSTRAINT `c_ibfk_1` FOREIGN KEY (`pid`) REFERENCES `p` (`id`)"
    assert fail(cur, "ALTER TABLE c ADD FOREIGN KEY (pid) REFERENCES p (id)") == (
        1452,
        f"Cannot add or update a child row: a foreign key constraint fails ({detail})",
    )
    assert rows(cur, "SHOW CREATE TABLE c")[0][1].count("KEY") == 1
    cur.execute("DELETE FROM c WHERE id = 2")
    cur.execute("ALTER TABLE c ADD FOREIGN KEY (pid) REFERENCES p (id)")
    assert fail(cur, "DELETE FROM p")[0] == 1451
    assert fail(cur, "ALTER TABLE c DROP INDEX pid") == (
        1553,
        "Cannot drop index 'pid': needed in a foreign key constraint",
    )
    assert fail(cur, "ALTER TABLE c DROP COLUMN pid") == (
        1828,
        "Cannot drop column 'pid': needed in a foreign key constraint 'c_ibfk_1'",
    )
    cur.execute("ALTER TABLE c DROP FOREIGN KEY c_ibfk_1")
    cur.execute("DELETE FROM p")
    assert "CONSTRAINT" not in rows(cur, "SHOW CREATE TABLE c")[0][1]
    # renaming the parent keeps the constraint pointing at it
    cur.execute("INSERT INTO p VALUES (1), (3)")
    cur.execute(
        "ALTER TABLE c ADD CONSTRAINT fk2 FOREIGN KEY (pid) REFERENCES p (id) ON DELETE CASCADE"
    )
    cur.execute("INSERT INTO c VALUES (3, 3)")
    cur.execute("RENAME TABLE p TO parent")
    assert "REFERENCES `parent` (`id`) ON DELETE CASCADE" in rows(cur, "SHOW CREATE TABLE c")[0][1]
    cur.execute("DELETE FROM parent WHERE id = 3")
    assert rows(cur, "SELECT * FROM c ORDER BY id") == [(1, 1)]


DUMP = """/*!40101 SET @OLD_CHARACTER_SET_CLIENT=@@CHARACTER_SET_CLIENT */;
/*!40101 SET NAMES utf8mb4 */;
/*!40014 SET @OLD_UNIQUE_CHECKS=@@UNIQUE_CHECKS, UNIQUE_CHECKS=0 */;
/*!40014 SET @OLD_FOREIGN_KEY_CHECKS=@@FOREIGN_KEY_CHECKS, FOREIGN_KEY_CHECKS=0 */;
/*!40101 SET @OLD_SQL_MODE=@@SQL_MODE, SQL_MODE='NO_AUTO_VALUE_ON_ZERO' */;
DROP TABLE IF EXISTS `c`;
/*!40101 SET @saved_cs_client     = @@character_set_client */;
/*!40101 SET character_set_client = utf8 */;
{c};
/*!40101 SET character_set_client = @saved_cs_client */;
/*!40000 ALTER TABLE `c` DISABLE KEYS */;
INSERT INTO `c` VALUES (1,1,0),(2,2,1);
/*!40000 ALTER TABLE `c` ENABLE KEYS */;
DROP TABLE IF EXISTS `p`;
{p};
/*!40000 ALTER TABLE `p` DISABLE KEYS */;
INSERT INTO `p` VALUES (1,'a'),(2,'b');
/*!40000 ALTER TABLE `p` ENABLE KEYS */;
/*!40101 SET SQL_MODE=@OLD_SQL_MODE */;
/*!40014 SET FOREIGN_KEY_CHECKS=@OLD_FOREIGN_KEY_CHECKS */;
/*!40014 SET UNIQUE_CHECKS=@OLD_UNIQUE_CHECKS */;
/*!40101 SET CHARACTER_SET_CLIENT=@OLD_CHARACTER_SET_CLIENT */;
"""


@pytest.mark.skipif(shutil.which("mariadb") is None, reason="the mariadb client is missing")
def test_a_dump_in_mariadb_dump_order_reloads_through_the_mariadb_client(
    server: Any, cur: Any
) -> None:
    """mariadb-dump writes tables alphabetically (the child first) between
    FOREIGN_KEY_CHECKS=0 and its restore, and wraps each table's rows in DISABLE / ENABLE
    KEYS; our own SHOW CREATE TABLE output, reloaded so by Debian's mariadb client, gives
    the same tables and rows. (The header's SQL_NOTES line is left out: another part.)"""
    cur.execute("CREATE TABLE p (id INT PRIMARY KEY, name VARCHAR(10) UNIQUE)")
    cur.execute(
        "CREATE TABLE c (id INT PRIMARY KEY, pid INT, flag BOOL DEFAULT TRUE, "
        "CONSTRAINT fk FOREIGN KEY (pid) REFERENCES p (id) ON DELETE CASCADE)"
    )
    creates = {t: rows(cur, f"SHOW CREATE TABLE {t}")[0][1] for t in ("c", "p")}
    target = f"{cur.db}_reload"
    cur.execute(f"CREATE DATABASE {target}")
    command = ["mariadb", "--no-defaults", "-h127.0.0.1", f"-P{server.port}", "-uroot"]
    result = subprocess.run(
        [*command, "--skip-ssl", target],
        input=DUMP.format(**creates),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (result.returncode, result.stderr) == (0, "")
    cur.execute(f"USE {target}")
    assert {t: rows(cur, f"SHOW CREATE TABLE {t}")[0][1] for t in ("c", "p")} == creates
    assert rows(cur, "SELECT * FROM c ORDER BY id") == [(1, 1, 0), (2, 2, 1)]
    assert rows(cur, "SELECT @@foreign_key_checks, @@unique_checks") == [(1, 1)]
    cur.execute("DELETE FROM p WHERE id = 1")
    assert rows(cur, "SELECT * FROM c ORDER BY id") == [(2, 2, 1)]


def test_cascades_and_unchecked_rows_survive_crash_recovery(fresh_server: Any) -> None:
    """Recovery replays the binlog through the applier's path: the parent's logged delete
    cascades again, and rows written under foreign_key_checks = 0 replay unchecked."""
    fresh_server.start()
    connection = fresh_server.connect()
    cur = connection.cursor()
    cur.execute("CREATE DATABASE d")
    cur.execute("USE d")
    _parent_child(cur, " ON DELETE CASCADE")
    cur.execute("SET foreign_key_checks = 0")
    cur.execute("INSERT INTO c VALUES (99, 42)")  # an orphan, allowed with checks off
    cur.execute("SET foreign_key_checks = 1")
    cur.execute("DELETE FROM p WHERE id = 1")
    before = rows(cur, "SELECT * FROM c ORDER BY id")
    assert before == [(20, 2), (30, None), (99, 42)]
    connection.close()
    fresh_server.kill()
    fresh_server.start()
    connection = fresh_server.connect()
    cur = connection.cursor()
    assert rows(cur, "SELECT * FROM d.c ORDER BY id") == before
    assert rows(cur, "SELECT * FROM d.p") == [(2, "two")]
    assert fail(cur, "INSERT INTO d.c VALUES (50, 1)")[0] == 1452
    cur.execute("DELETE FROM d.p")  # still cascades after recovery
    assert rows(cur, "SELECT * FROM d.c ORDER BY id") == [(30, None), (99, 42)]
    connection.close()
