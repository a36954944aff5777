"""Transaction isolation over real connections: the anomalies REPEATABLE READ and READ
COMMITTED must and must not show, consistent snapshots, own writes, locking reads,
SET TRANSACTION, READ ONLY transactions, and a long reader while writers commit.
"""

from __future__ import annotations

import itertools
import random
import threading
import time
from collections.abc import Iterator
from typing import Any

import pymysql
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

_names = itertools.count(1)


def fail(cursor: Any, sql: str) -> tuple[int, str | None, str]:
    """Run ``sql``, which must fail: (errno, SQLSTATE, message)."""
    with pytest.raises(pymysql.err.MySQLError) as info:
        cursor.execute(sql)
    error = info.value
    return error.args[0], getattr(error, "sqlstate", None), error.args[1]


def value(cursor: Any, sql: str) -> Any:
    cursor.execute(sql)
    rows = cursor.fetchall()
    assert len(rows) == 1, rows
    return rows[0][0]


def rows(cursor: Any, sql: str) -> list[tuple[Any, ...]]:
    cursor.execute(sql)
    return list(cursor.fetchall())


@pytest.fixture
def pair(server: Any) -> Iterator[tuple[Any, Any]]:
    """Two cursors on two connections, in a new database with table t (id, v): (1,10), (2,20)."""
    db = f"iso{next(_names)}"
    a, b = server.connect(database=None), server.connect()
    ca, cb = a.cursor(), b.cursor()
    ca.execute(f"CREATE DATABASE {db}")
    ca.execute(f"CREATE TABLE {db}.t (id INT PRIMARY KEY, v INT)")
    ca.execute(f"INSERT INTO {db}.t VALUES (1, 10), (2, 20)")
    ca.execute(f"USE {db}")
    cb.execute(f"USE {db}")
    yield ca, cb
    a.close()
    b.close()


def test_repeatable_read_is_the_default(pair: tuple[Any, Any]) -> None:
    a, _ = pair
    assert value(a, "SELECT @@transaction_isolation") == "REPEATABLE-READ"
    assert value(a, "SELECT @@global.transaction_isolation") == "REPEATABLE-READ"


def test_repeatable_read_prevents_non_repeatable_reads_and_phantoms(pair: tuple[Any, Any]) -> None:
    a, b = pair
    a.execute("BEGIN")
    assert rows(a, "SELECT id, v FROM t") == [(1, 10), (2, 20)]
    b.execute("UPDATE t SET v = 11 WHERE id = 1")
    b.execute("INSERT INTO t VALUES (3, 30)")
    b.execute("DELETE FROM t WHERE id = 2")
    assert value(a, "SELECT v FROM t WHERE id = 1") == 10
    assert value(a, "SELECT v FROM t WHERE id = 2") == 20
    assert rows(a, "SELECT id, v FROM t WHERE id BETWEEN 1 AND 3") == [(1, 10), (2, 20)]
    assert value(a, "SELECT COUNT(*) FROM t") == 2
    a.execute("COMMIT")
    assert rows(a, "SELECT id, v FROM t") == [(1, 11), (3, 30)]


def test_read_committed_sees_each_commit(pair: tuple[Any, Any]) -> None:
    a, b = pair
    a.execute("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED")
    assert value(a, "SELECT @@transaction_isolation") == "READ-COMMITTED"
    a.execute("BEGIN")
    assert value(a, "SELECT v FROM t WHERE id = 1") == 10
    b.execute("UPDATE t SET v = 11 WHERE id = 1")
    assert value(a, "SELECT v FROM t WHERE id = 1") == 11  # non-repeatable read
    b.execute("INSERT INTO t VALUES (3, 30)")
    assert value(a, "SELECT COUNT(*) FROM t") == 3  # phantom
    a.execute("COMMIT")


def test_the_snapshot_is_taken_at_the_first_read_or_at_start_with_consistent_snapshot(
    pair: tuple[Any, Any],
) -> None:
    a, b = pair
    a.execute("BEGIN")
    b.execute("UPDATE t SET v = 11 WHERE id = 1")
    assert value(a, "SELECT v FROM t WHERE id = 1") == 11  # the view starts here
    b.execute("UPDATE t SET v = 12 WHERE id = 1")
    assert value(a, "SELECT v FROM t WHERE id = 1") == 11
    a.execute("COMMIT")
    a.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
    b.execute("UPDATE t SET v = 13 WHERE id = 1")
    assert value(a, "SELECT v FROM t WHERE id = 1") == 12  # the view started at START
    a.execute("COMMIT")
    assert value(a, "SELECT v FROM t WHERE id = 1") == 13


def test_own_writes_show_through_the_snapshot(pair: tuple[Any, Any]) -> None:
    a, b = pair
    a.execute("BEGIN")
    assert value(a, "SELECT SUM(v) FROM t") == 30
    b.execute("UPDATE t SET v = 21 WHERE id = 2")
    a.execute("UPDATE t SET v = 100 WHERE id = 1")
    a.execute("INSERT INTO t VALUES (5, 50)")
    assert rows(a, "SELECT id, v FROM t") == [(1, 100), (2, 20), (5, 50)]
    a.execute("COMMIT")
    assert rows(a, "SELECT id, v FROM t") == [(1, 100), (2, 21), (5, 50)]


def test_locking_reads_and_writes_see_the_latest_rows(pair: tuple[Any, Any]) -> None:
    a, b = pair
    a.execute("BEGIN")
    assert value(a, "SELECT v FROM t WHERE id = 1") == 10
    b.execute("UPDATE t SET v = 20 WHERE id = 1")
    assert value(a, "SELECT v FROM t WHERE id = 1 FOR UPDATE") == 20
    assert value(a, "SELECT v FROM t WHERE id = 1 LOCK IN SHARE MODE") == 20
    assert value(a, "SELECT v FROM t WHERE id = 1") == 10  # the view is unchanged
    a.execute("UPDATE t SET v = v + 1 WHERE id = 1")  # applied to the latest row
    assert value(a, "SELECT v FROM t WHERE id = 1") == 21
    a.execute("COMMIT")
    assert value(b, "SELECT v FROM t WHERE id = 1") == 21


def test_set_transaction_without_scope_is_for_the_next_transaction_only(
    pair: tuple[Any, Any],
) -> None:
    a, b = pair
    a.execute("SET TRANSACTION ISOLATION LEVEL READ COMMITTED")
    assert value(a, "SELECT @@transaction_isolation") == "REPEATABLE-READ"
    a.execute("BEGIN")
    assert value(a, "SELECT v FROM t WHERE id = 1") == 10
    b.execute("UPDATE t SET v = 11 WHERE id = 1")
    assert value(a, "SELECT v FROM t WHERE id = 1") == 11  # READ COMMITTED
    assert fail(a, "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE") == (
        1568,
        "25001",
        "Transaction characteristics can't be changed while a transaction is in progress",
    )
    a.execute("COMMIT")
    a.execute("BEGIN")
    assert value(a, "SELECT v FROM t WHERE id = 1") == 11
    b.execute("UPDATE t SET v = 12 WHERE id = 1")
    assert value(a, "SELECT v FROM t WHERE id = 1") == 11  # REPEATABLE READ again
    a.execute("COMMIT")


def test_read_only_transactions_refuse_writes(pair: tuple[Any, Any]) -> None:
    a, _ = pair
    a.execute("START TRANSACTION READ ONLY")
    assert value(a, "SELECT v FROM t WHERE id = 1") == 10
    expected = (1792, "25006", "Cannot execute statement in a READ ONLY transaction.")
    assert fail(a, "INSERT INTO t VALUES (9, 9)") == expected
    assert fail(a, "UPDATE t SET v = 0") == expected
    assert fail(a, "DELETE FROM t") == expected
    a.execute("COMMIT")
    a.execute("START TRANSACTION READ WRITE")
    a.execute("UPDATE t SET v = 0 WHERE id = 1")
    a.execute("COMMIT")
    a.execute("SET SESSION TRANSACTION READ ONLY")
    assert fail(a, "DELETE FROM t") == expected  # autocommit statements too
    a.execute("SET SESSION TRANSACTION READ WRITE")
    a.execute("DELETE FROM t WHERE id = 1")
    assert rows(a, "SELECT id, v FROM t") == [(2, 20)]


def test_serializable_reads_lock_inside_transactions_only(pair: tuple[Any, Any]) -> None:
    a, b = pair
    a.execute("SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE")
    b.execute("SET SESSION innodb_lock_wait_timeout = 1")
    assert value(a, "SELECT v FROM t WHERE id = 1") == 10  # autocommit: a consistent read
    b.execute("UPDATE t SET v = 11 WHERE id = 1")
    a.execute("BEGIN")
    assert value(a, "SELECT v FROM t WHERE id = 1") == 11  # a locking read
    assert fail(b, "UPDATE t SET v = 12 WHERE id = 1")[0] == 1205
    b.execute("UPDATE t SET v = 22 WHERE id = 2")  # a row not read: no wait
    a.execute("COMMIT")
    b.execute("UPDATE t SET v = 12 WHERE id = 1")
    assert rows(a, "SELECT id, v FROM t") == [(1, 12), (2, 22)]


def test_a_long_reader_keeps_its_snapshot_while_writers_move_delete_and_reinsert(
    server: Any,
) -> None:
    """Writers move amounts between rows (the sum stays 1000), delete a row and insert it
    back; a REPEATABLE READ reader sees the very same rows every time, then the latest
    ones after COMMIT; a READ COMMITTED reader in the same run sees them change."""
    db = f"iso{next(_names)}"
    setup = server.connect()
    c = setup.cursor()
    c.execute(f"CREATE DATABASE {db}")
    c.execute(f"CREATE TABLE {db}.acct (id INT PRIMARY KEY, amount INT)")
    c.execute(f"INSERT INTO {db}.acct VALUES " + ", ".join(f"({i}, 100)" for i in range(10)))
    stop = threading.Event()
    errors: list[BaseException] = []

    def writer(seed: int) -> None:
        rng = random.Random(seed)
        conn = server.connect(database=db, autocommit=False)
        cur = conn.cursor()
        try:
            while not stop.is_set():
                x, y = sorted(rng.sample(range(10), 2))  # in key order: no deadlock
                n = rng.randint(-20, 20)
                cur.execute(f"UPDATE acct SET amount = amount - {n} WHERE id = {x}")
                cur.execute(f"UPDATE acct SET amount = amount + {n} WHERE id = {y}")
                conn.commit()
                if rng.random() < 0.3:  # take a row out and put it back
                    cur.execute(f"SELECT amount FROM acct WHERE id = {x} FOR UPDATE")
                    (amount,) = cur.fetchone()
                    cur.execute(f"DELETE FROM acct WHERE id = {x}")
                    cur.execute(f"INSERT INTO acct VALUES ({x}, {amount})")
                    conn.commit()
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)
        finally:
            conn.close()

    threads = [threading.Thread(target=writer, args=(seed,)) for seed in (1, 2)]
    reader = server.connect(database=db)
    rr = reader.cursor()
    committed = server.connect(database=db)
    rc = committed.cursor()
    rc.execute("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED")
    for thread in threads:
        thread.start()
    try:
        rr.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
        first = rows(rr, "SELECT id, amount FROM acct")
        assert sum(a for _, a in first) == 1000
        rc.execute("BEGIN")
        seen_rc: set[object] = set()
        deadline = time.monotonic() + 30
        iterations = 0
        while iterations < 40 or (len(seen_rc) < 5 and time.monotonic() < deadline):
            iterations += 1
            assert rows(rr, "SELECT id, amount FROM acct") == first
            assert rows(rr, "SELECT id, amount FROM acct WHERE id BETWEEN 3 AND 6") == [
                r for r in first if 3 <= r[0] <= 6
            ]
            assert [value(rr, f"SELECT amount FROM acct WHERE id = {i}") for i in range(10)] == [
                a for _, a in first
            ]
            seen_rc.add(tuple(rows(rc, "SELECT id, amount FROM acct")))
        rc.execute("COMMIT")
        rr.execute("COMMIT")
        assert not errors, errors
        assert len(seen_rc) >= 5  # READ COMMITTED saw the writers, in the same run
        assert rows(rr, "SELECT id, amount FROM acct") != first
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    assert not errors, errors
    assert value(rr, "SELECT SUM(amount) FROM acct") == 1000
    assert value(rr, "SELECT COUNT(*) FROM acct") == 10
    for conn in (setup, reader, committed):
        conn.close()


def test_savepoints_undo_writes_and_what_the_binlog_replays(fresh_server: Any) -> None:
    """ROLLBACK TO SAVEPOINT takes back rows and their binlog events: after kill -9 the
    server rebuilt from its binlog holds exactly what the client saw committed."""
    server = fresh_server.start()
    conn = server.connect()
    cur = conn.cursor()
    cur.execute("CREATE DATABASE s")
    cur.execute("CREATE TABLE s.t (id INT PRIMARY KEY, v INT)")
    cur.execute("BEGIN")
    cur.execute("INSERT INTO s.t VALUES (1, 1)")
    cur.execute("SAVEPOINT a")
    cur.execute("INSERT INTO s.t VALUES (2, 2)")
    cur.execute("SAVEPOINT b")
    cur.execute("UPDATE s.t SET v = 10 WHERE id = 1")
    cur.execute("ROLLBACK WORK TO SAVEPOINT a")
    assert rows(cur, "SELECT id, v FROM s.t") == [(1, 1)]
    assert fail(cur, "ROLLBACK TO b") == (1305, "42000", "SAVEPOINT b does not exist")
    cur.execute("INSERT INTO s.t VALUES (3, 3)")
    cur.execute("SAVEPOINT c")
    cur.execute("RELEASE SAVEPOINT a")
    assert fail(cur, "ROLLBACK TO SAVEPOINT c") == (1305, "42000", "SAVEPOINT c does not exist")
    cur.execute("COMMIT")
    cur.execute("BEGIN")
    cur.execute("SAVEPOINT first")
    cur.execute("DELETE FROM s.t")
    cur.execute("ROLLBACK TO first")  # nothing of the transaction stays: nothing logged
    cur.execute("COMMIT")
    assert fail(cur, "RELEASE SAVEPOINT first") == (
        1305,
        "42000",
        "SAVEPOINT first does not exist",
    )
    assert rows(cur, "SELECT id, v FROM s.t") == [(1, 1), (3, 3)]
    conn.close()
    server.kill()
    server.start()
    assert server.query("SELECT id, v FROM s.t") == [(1, 1), (3, 3)]


def test_a_replica_ends_identical_after_savepoints_and_locks(tmp_path: Any) -> None:
    """Savepoints rolled back, LOCK TABLES / FLUSH TABLES WITH READ LOCK around writes, in
    ROW and STATEMENT format: the replica applies exactly what stayed (CHECKSUM TABLE and
    gtid_executed equal)."""
    from rpl.core.testing.process import ServerProcess
    from rpl.core.testing.topology import create_replication_user, replicate, wait_caught_up

    source = ServerProcess(tmp_path / "source", options=["--server-id", "1"]).start()
    replica = ServerProcess(tmp_path / "replica", options=["--server-id", "2"]).start()
    try:
        create_replication_user(source)
        replicate(replica, source)
        conn = source.connect()
        cur = conn.cursor()
        cur.execute("CREATE DATABASE r")
        cur.execute("CREATE TABLE r.t (id INT PRIMARY KEY, v INT)")
        for binlog_format in ("ROW", "STATEMENT"):
            base = 0 if binlog_format == "ROW" else 100
            cur.execute(f"SET SESSION binlog_format = '{binlog_format}'")
            cur.execute("BEGIN")
            cur.execute(f"INSERT INTO r.t VALUES ({base + 1}, 1), ({base + 2}, 2)")
            cur.execute("SAVEPOINT s")
            cur.execute(f"UPDATE r.t SET v = 99 WHERE id = {base + 1}")
            cur.execute(f"INSERT INTO r.t VALUES ({base + 3}, 3)")
            cur.execute("ROLLBACK TO SAVEPOINT s")
            cur.execute(f"DELETE FROM r.t WHERE id = {base + 2}")
            cur.execute("COMMIT")
            cur.execute("LOCK TABLES r.t WRITE")
            cur.execute(f"INSERT INTO r.t VALUES ({base + 4}, 4)")
            cur.execute("UNLOCK TABLES")
            cur.execute("FLUSH TABLES WITH READ LOCK")
            cur.execute("UNLOCK TABLES")
        conn.close()
        wait_caught_up(source, replica)
        expected = [(1, 1), (4, 4), (101, 1), (104, 4)]
        assert source.query("SELECT id, v FROM r.t") == expected
        assert replica.query("SELECT id, v FROM r.t") == expected
        assert replica.query("CHECKSUM TABLE r.t") == source.query("CHECKSUM TABLE r.t")
    finally:
        replica.stop()
        source.stop()


_step = st.one_of(
    st.tuples(st.just("other writes"), st.integers(0, 5), st.one_of(st.none(), st.integers(0, 9))),
    st.tuples(st.just("begin")),
    st.tuples(st.just("read"), st.integers(0, 5), st.integers(0, 5)),
    st.tuples(st.just("own write"), st.integers(0, 5), st.one_of(st.none(), st.integers(0, 9))),
    st.tuples(st.just("commit")),
)


@pytest.mark.parametrize("level", ["REPEATABLE READ", "READ COMMITTED"])
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(steps=st.lists(_step, max_size=25))
@example(steps=[("begin",), ("read", 1, 0), ("other writes", 0, 0), ("read", 0, 0)])
def test_random_interleavings_match_a_model(
    server: Any, level: str, steps: list[tuple[Any, ...]]
) -> None:
    """Session A (at ``level``) begins, reads ranges, writes and commits while session B
    commits writes, in a random order; every read of A equals the model's answer: the
    committed rows as of A's view (in REPEATABLE READ its first read that reaches the
    table, each statement's start in READ COMMITTED) under A's own writes. A range whose
    low end is above its high end reaches no table and takes no view, as InnoDB's
    impossible WHERE takes none (MariaDB's, checked: a later read sees a row committed
    after it)."""
    db = f"iso{next(_names)}"
    conn_a, conn_b = server.connect(), server.connect()
    a, b = conn_a.cursor(), conn_b.cursor()
    a.execute(f"CREATE DATABASE {db}")
    a.execute(f"CREATE TABLE {db}.t (id INT PRIMARY KEY, v INT)")
    a.execute(f"USE {db}")
    b.execute(f"USE {db}")
    a.execute(f"SET SESSION TRANSACTION ISOLATION LEVEL {level}")
    committed: dict[int, int] = {}
    view: dict[int, int] | None = None
    own: dict[int, int | None] = {}
    in_trx = False

    def write(cursor: Any, key: int, v: int | None) -> None:
        cursor.execute(f"DELETE FROM t WHERE id = {key}")
        if v is not None:
            cursor.execute(f"INSERT INTO t VALUES ({key}, {v})")

    for step in steps:
        if step[0] == "other writes":
            _, key, v = step
            if key in own:
                continue  # A holds the row lock: B would wait for A, in this very thread
            write(b, key, v)
            if v is None:
                committed.pop(key, None)
            else:
                committed[key] = v
        elif step[0] == "begin" and not in_trx:
            a.execute("BEGIN")
            in_trx, view, own = True, None, {}
        elif step[0] == "read":
            _, lo, hi = step
            held = in_trx and level == "REPEATABLE READ"
            sees = view if held and view is not None else dict(committed)
            seen = dict(sees)
            for key, v in own.items():
                if v is None:
                    seen.pop(key, None)
                else:
                    seen[key] = v
            expected = [(k, seen[k]) for k in sorted(seen) if lo <= k <= hi]
            assert rows(a, f"SELECT id, v FROM t WHERE id BETWEEN {lo} AND {hi}") == expected
            if lo in seen:
                assert value(a, f"SELECT v FROM t WHERE id = {lo}") == seen[lo]
            if sees is not view and (lo <= hi or lo in seen):
                view = sees  # a statement reached the table: the view is taken
            if not in_trx:
                view = None
        elif step[0] == "own write" and in_trx:
            _, key, v = step
            write(a, key, v)
            own[key] = v
        elif step[0] == "commit" and in_trx:
            a.execute("COMMIT")
            for key, v in own.items():
                if v is None:
                    committed.pop(key, None)
                else:
                    committed[key] = v
            in_trx, view, own = False, None, {}
    conn_a.close()
    conn_b.close()
