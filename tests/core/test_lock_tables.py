"""LOCK TABLES, UNLOCK TABLES and FLUSH TABLES WITH READ LOCK over real connections: the
holder's errors, the other sessions' waits and timeouts, implicit commits, release on
disconnect, and that none of it is binlogged.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pymysql
import pytest

_names = itertools.count(1)


def fail(cursor: Any, sql: str) -> tuple[int, str | None, str]:
    """Run ``sql``, which must fail: (errno, SQLSTATE, message)."""
    with pytest.raises(pymysql.err.MySQLError) as info:
        cursor.execute(sql)
    error = info.value
    return error.args[0], getattr(error, "sqlstate", None), error.args[1]


def rows(cursor: Any, sql: str) -> list[tuple[Any, ...]]:
    cursor.execute(sql)
    return list(cursor.fetchall())


class Background:
    """One statement run on its own connection in a thread: whether it has finished, and
    its rows or error."""

    def __init__(self, connect: Callable[[], Any], sql: str) -> None:
        self.conn = connect()
        self.sql = sql
        self.result: Any = None
        self.error: BaseException | None = None
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run)
        self.thread.start()

    def _run(self) -> None:
        try:
            cursor = self.conn.cursor()
            cursor.execute(self.sql)
            self.result = cursor.fetchall()
        except BaseException as exc:  # noqa: BLE001 - the test reads it
            self.error = exc
        finally:
            self.done.set()

    def finish(self, timeout: float = 10.0) -> Any:
        assert self.done.wait(timeout), f"{self.sql} still waits"
        self.thread.join()
        self.conn.close()
        if self.error is not None:
            raise self.error
        return self.result


@pytest.fixture
def db(server: Any) -> Iterator[tuple[str, Any, Callable[[], Any]]]:
    """A database with tables t and u (id, v); a cursor in it; a connect() for others."""
    name = f"lock{next(_names)}"
    conn = server.connect()
    cursor = conn.cursor()
    cursor.execute(f"CREATE DATABASE {name}")
    cursor.execute(f"USE {name}")
    cursor.execute("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
    cursor.execute("CREATE TABLE u (id INT PRIMARY KEY, v INT)")
    cursor.execute("INSERT INTO t VALUES (1, 10)")
    yield name, cursor, lambda: server.connect(database=name)
    conn.close()


WAIT = 0.5
"""Seconds a blocked statement is watched to make sure it waits."""


def test_the_holder_uses_only_its_locked_tables(db: tuple[str, Any, Any]) -> None:
    _, cur, _ = db
    cur.execute("LOCK TABLES t READ")
    assert rows(cur, "SELECT v FROM t") == [(10,)]
    not_locked = (1100, "HY000", "Table 'u' was not locked with LOCK TABLES")
    assert fail(cur, "SELECT * FROM u") == not_locked
    assert fail(cur, "INSERT INTO u VALUES (1, 1)") == not_locked
    assert fail(cur, "INSERT INTO t VALUES (2, 2)") == (
        1099,
        "HY000",
        "Table 't' was locked with a READ lock and can't be updated",
    )
    assert fail(cur, "UPDATE t SET v = 0") == (
        1099,
        "HY000",
        "Table 't' was locked with a READ lock and can't be updated",
    )
    assert rows(cur, "SELECT 1 + 1") == [(2,)]
    cur.execute("UNLOCK TABLES")
    assert rows(cur, "SELECT * FROM u") == []
    cur.execute("LOCK TABLES t WRITE, u AS x READ")
    cur.execute("CREATE TABLE w (id INT PRIMARY KEY)")  # a new table needs no lock
    assert fail(cur, "SELECT * FROM w") == (
        1100,
        "HY000",
        "Table 'w' was not locked with LOCK TABLES",
    )
    cur.execute("INSERT INTO t VALUES (2, 20)")
    assert rows(cur, "SELECT id FROM u AS x") == []
    assert fail(cur, "SELECT id FROM u") == not_locked
    assert fail(cur, "DELETE FROM u") == not_locked
    cur.execute("UNLOCK TABLES")
    assert rows(cur, "SELECT id, v FROM t") == [(1, 10), (2, 20)]


def test_lock_tables_errors(db: tuple[str, Any, Any]) -> None:
    name, cur, _ = db
    assert fail(cur, "LOCK TABLES nope READ") == (
        1146,
        "42S02",
        f"Table '{name}.nope' doesn't exist",
    )
    assert fail(cur, "LOCK TABLES t")[0] == 1064
    assert fail(cur, "LOCK INSTANCE FOR BACKUP")[0] == 1235
    cur.execute("LOCK TABLES t READ")
    assert fail(cur, "FLUSH TABLES WITH READ LOCK") == (
        1192,
        "HY000",
        "Can't execute the given command because you have active locked tables or an "
        "active transaction",
    )
    cur.execute("UNLOCK TABLES")
    cur.execute("UNLOCK TABLES")  # nothing locked: fine


def test_a_read_lock_holds_up_other_writers_not_readers(db: tuple[str, Any, Any]) -> None:
    _, cur, connect = db
    cur.execute("LOCK TABLES t READ LOCAL")
    other = connect().cursor()
    assert rows(other, "SELECT v FROM t") == [(10,)]
    other.execute("INSERT INTO u VALUES (1, 1)")  # another table: no wait
    writer = Background(connect, "INSERT INTO t VALUES (3, 30)")
    assert not writer.done.wait(WAIT)
    cur.execute("UNLOCK TABLES")
    writer.finish()
    assert rows(cur, "SELECT id FROM t") == [(1,), (3,)]
    other.execute("SET SESSION lock_wait_timeout = 1")
    cur.execute("LOCK TABLES t READ")
    started = time.monotonic()
    assert fail(other, "UPDATE t SET v = 0") == (
        1205,
        "HY000",
        "Lock wait timeout exceeded; try restarting transaction",
    )
    assert time.monotonic() - started >= 0.9
    cur.execute("UNLOCK TABLES")
    assert rows(other, "SELECT v FROM t WHERE id = 1") == [(10,)]  # nothing applied
    other.connection.close()


def test_a_write_lock_holds_up_every_other_access(db: tuple[str, Any, Any]) -> None:
    _, cur, connect = db
    cur.execute("LOCK TABLES t WRITE")
    reader = Background(connect, "SELECT v FROM t")
    locker = Background(connect, "LOCK TABLES t READ")
    assert not reader.done.wait(WAIT)
    assert not locker.done.is_set()
    states = [r[6] for r in rows(cur, "SHOW PROCESSLIST")]
    assert "Waiting for table metadata lock" in states, states
    cur.execute("UPDATE t SET v = 11")
    cur.execute("UNLOCK TABLES")
    assert reader.finish() == ((11,),)
    locker.finish()


def test_lock_and_unlock_commit_implicitly(db: tuple[str, Any, Any]) -> None:
    _, cur, connect = db
    other = connect().cursor()
    cur.execute("BEGIN")
    cur.execute("INSERT INTO t VALUES (5, 50)")
    cur.execute("LOCK TABLES u READ")  # commits the insert
    assert rows(other, "SELECT id FROM t") == [(1,), (5,)]
    cur.execute("UNLOCK TABLES")
    cur.execute("SET autocommit = 0")
    cur.execute("LOCK TABLES t WRITE")
    cur.execute("INSERT INTO t VALUES (6, 60)")
    cur.execute("UNLOCK TABLES")  # commits: tables were locked
    assert rows(other, "SELECT id FROM t") == [(1,), (5,), (6,)]
    cur.execute("LOCK TABLES t WRITE")
    cur.execute("START TRANSACTION")  # releases the table locks
    assert rows(other, "SELECT id FROM t") == [(1,), (5,), (6,)]
    cur.execute("COMMIT")
    cur.execute("SET autocommit = 1")
    other.connection.close()


def test_a_closed_connection_releases_its_locks(db: tuple[str, Any, Any]) -> None:
    _, cur, connect = db
    holder = connect()
    holder.cursor().execute("LOCK TABLES t WRITE")
    reader = Background(connect, "SELECT v FROM t")
    assert not reader.done.wait(WAIT)
    holder.close()
    assert reader.finish() == ((10,),)
    ftwrl = connect()
    ftwrl.cursor().execute("FLUSH TABLES WITH READ LOCK")
    writer = Background(connect, "INSERT INTO t VALUES (7, 70)")
    assert not writer.done.wait(WAIT)
    ftwrl.close()
    writer.finish()
    assert rows(cur, "SELECT id FROM t") == [(1,), (7,)]


def test_flush_tables_with_read_lock_holds_up_writes_and_commits(
    db: tuple[str, Any, Any],
) -> None:
    _, cur, connect = db
    pending = connect()
    pending_cur = pending.cursor()
    pending_cur.execute("BEGIN")
    pending_cur.execute("INSERT INTO u VALUES (9, 90)")  # before the lock, not committed
    cur.execute("FLUSH TABLES WITH READ LOCK")
    assert fail(cur, "INSERT INTO t VALUES (8, 80)") == (
        1223,
        "HY000",
        "Can't execute the query because you have a conflicting read lock",
    )
    assert rows(cur, "SELECT v FROM t") == [(10,)]
    writer = Background(connect, "UPDATE t SET v = 12")
    committer = threading.Thread(target=pending_cur.execute, args=("COMMIT",))
    committer.start()
    assert not writer.done.wait(WAIT)
    assert committer.is_alive()
    reader = connect().cursor()
    states = {r[6] for r in rows(reader, "SHOW PROCESSLIST")}
    assert "Waiting for global read lock" in states, states
    assert rows(reader, "SELECT v FROM t") == [(10,)]  # reads go on
    assert rows(reader, "SELECT id FROM u") == []  # the commit has not happened
    cur.execute("UNLOCK TABLES")
    writer.finish()
    committer.join(10)
    assert not committer.is_alive()
    assert rows(reader, "SELECT id FROM u") == [(9,)]
    assert rows(reader, "SELECT v FROM t") == [(12,)]
    reader.execute("SET SESSION lock_wait_timeout = 1")
    cur.execute("FLUSH TABLES WITH READ LOCK")
    assert fail(reader, "DELETE FROM t")[0] == 1205
    cur.execute("UNLOCK TABLES")
    pending.close()
    reader.connection.close()


def test_flush_tables_list_with_read_lock_and_plain_flush_tables(
    db: tuple[str, Any, Any],
) -> None:
    _, cur, connect = db
    cur.execute("FLUSH TABLES t, u")
    cur.execute("FLUSH TABLES t WITH READ LOCK")
    assert rows(cur, "SELECT v FROM t") == [(10,)]
    assert fail(cur, "SELECT * FROM u")[0] == 1100
    writer = Background(connect, "INSERT INTO t VALUES (4, 40)")
    assert not writer.done.wait(WAIT)
    cur.execute("UNLOCK TABLES")
    writer.finish()


def test_locks_are_not_binlogged(db: tuple[str, Any, Any]) -> None:
    _, cur, _ = db
    before = rows(cur, "SHOW MASTER STATUS")
    cur.execute("LOCK TABLES t READ, u WRITE")
    cur.execute("UNLOCK TABLES")
    cur.execute("FLUSH TABLES WITH READ LOCK")
    cur.execute("UNLOCK TABLES")
    assert rows(cur, "SHOW MASTER STATUS") == before


def test_parsing() -> None:
    from rpl.core.sql import ast
    from rpl.core.sql.parser import parse

    t, u = ast.TableName("t"), ast.TableName("u", "d", "x")
    assert parse("LOCK TABLES t READ LOCAL, d.u AS x LOW_PRIORITY WRITE") == ast.LockTables(
        (ast.TableLock(t, False), ast.TableLock(u, True))
    )
    assert parse("lock table t read") == ast.LockTables((ast.TableLock(t, False),))
    assert parse("UNLOCK TABLES;") == ast.UnlockTables()
    assert parse("FLUSH TABLES WITH READ LOCK") == ast.FlushTablesWithReadLock()
    assert parse("FLUSH TABLES t, d.u WITH READ LOCK") == ast.FlushTablesWithReadLock(
        (t, ast.TableName("u", "d"))
    )
    assert parse("FLUSH TABLES t, d.u") == ast.Flush(("TABLES",))
    assert parse("SAVEPOINT sp") == ast.Savepoint("sp")
    assert parse("ROLLBACK WORK TO SAVEPOINT sp") == ast.RollbackToSavepoint("sp")
    assert parse("ROLLBACK TO sp") == ast.RollbackToSavepoint("sp")
    assert parse("RELEASE SAVEPOINT sp") == ast.ReleaseSavepoint("sp")
