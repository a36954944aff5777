"""Row locks with real threads: waits, timeouts, deadlocks, FIFO order, a transfer workload,
and high-priority transactions that kill the holders they need."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from rpl.core.engine import ColumnSchema, Engine, LockManager, LockOwner, Table, TableSchema
from rpl.core.errors import ER_ERROR_DURING_COMMIT, ER_LOCK_DEADLOCK, MySQLError


class Worker(threading.Thread):
    """Runs ``fn`` and keeps its result or exception for the test thread."""

    def __init__(self, fn: Callable[[], Any]) -> None:
        super().__init__(daemon=True)
        self.fn = fn
        self.result: Any = None
        self.error: BaseException | None = None
        self.start()

    def run(self) -> None:
        try:
            self.result = self.fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            self.error = exc

    def outcome(self) -> Any:
        self.join(10)
        assert not self.is_alive(), "worker still blocked"
        if self.error is not None:
            raise self.error
        return self.result


def wait_until(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.002)


def accounts_schema() -> TableSchema:
    return TableSchema(
        "bank",
        "accounts",
        (ColumnSchema("id", "INT"), ColumnSchema("balance", "BIGINT", nullable=False)),
        ("id",),
    )


@pytest.fixture
def timeout_box() -> list[float]:
    return [0.2]


@pytest.fixture
def engine(timeout_box: list[float]) -> Engine:
    engine = Engine(lambda: timeout_box[0])
    engine.create_database("bank")
    return engine


@pytest.fixture
def table(engine: Engine) -> Table:
    table = engine.create_table(accounts_schema())
    assert table is not None
    trx = engine.begin(0)
    for i in range(1, 11):
        trx.insert(table, {"id": i, "balance": 100})
    trx.commit()
    return table


# --- duplicate keys under concurrency ----------------------------------------------------------


def test_concurrent_insert_same_key_waits_then_duplicate(
    engine: Engine, table: Table, timeout_box: list[float]
) -> None:
    timeout_box[0] = 5.0
    first = engine.begin(1)
    first.insert(table, {"id": 50, "balance": 1})
    second = engine.begin(2)
    worker = Worker(lambda: second.insert(table, {"id": 50, "balance": 2}))
    wait_until(lambda: engine.locks.row_lock_current_waits == 1)
    assert worker.is_alive()
    first.commit()
    with pytest.raises(MySQLError) as info:
        worker.outcome()
    assert info.value.errno == 1062
    assert info.value.message == "Duplicate entry '50' for key 'accounts.PRIMARY'"
    assert second.active and engine.locks.row_lock_waits == 1
    second.rollback()
    assert table.rows[50] == (50, 1)


def test_concurrent_insert_same_key_succeeds_after_rollback(
    engine: Engine, table: Table, timeout_box: list[float]
) -> None:
    timeout_box[0] = 5.0
    first = engine.begin(1)
    first.insert(table, {"id": 50, "balance": 1})
    second = engine.begin(2)
    worker = Worker(lambda: second.insert(table, {"id": 50, "balance": 2}))
    wait_until(lambda: engine.locks.row_lock_current_waits == 1)
    first.rollback()
    assert worker.outcome() == 50
    second.commit()
    assert table.rows[50] == (50, 2)


# --- lock wait timeout ------------------------------------------------------------------------


def test_lock_wait_timeout_fails_statement_not_transaction(engine: Engine, table: Table) -> None:
    holder = engine.begin(1)
    holder.update(table, 1, {"balance": 0})
    waiter = engine.begin(2)
    waiter.update(table, 2, {"balance": 0})
    started = time.monotonic()
    with pytest.raises(MySQLError) as info:
        waiter.update(table, 1, {"balance": 1})
    elapsed = time.monotonic() - started
    assert info.value.errno == 1205 and info.value.sqlstate == "HY000"
    assert info.value.message == "Lock wait timeout exceeded; try restarting transaction"
    assert 0.15 <= elapsed < 2.0
    assert not getattr(info.value, "rolled_back", False)
    # The transaction is still open with its earlier work and locks.
    assert waiter.active and waiter.get(table, 2) == (2, 0) and waiter.lock_count == 1
    assert engine.locks.row_lock_timeouts == 1 and engine.locks.row_lock_waits == 1
    assert engine.locks.waiters((table.id, 1)) == []
    holder.commit()
    waiter.update(table, 1, {"balance": 1})
    waiter.commit()
    assert table.rows[1] == (1, 1) and engine.locks.lock_count() == 0
    assert engine.status()["Innodb_row_lock_time"] >= 150


def test_lock_wait_timeout_is_read_at_each_wait(
    engine: Engine, table: Table, timeout_box: list[float]
) -> None:
    holder = engine.begin(1)
    holder.lock_for_update(table, 1)
    waiter = engine.begin(2)
    timeout_box[0] = 0.05
    started = time.monotonic()
    with pytest.raises(MySQLError):
        waiter.lock_for_update(table, 1)
    assert time.monotonic() - started < 0.15
    timeout_box[0] = 0.4
    started = time.monotonic()
    with pytest.raises(MySQLError):
        waiter.lock_for_update(table, 1)
    assert time.monotonic() - started >= 0.35


def test_lock_for_update_blocks_writers_and_insert_of_missing_key(
    engine: Engine, table: Table
) -> None:
    reader = engine.begin(1)
    assert reader.lock_for_update(table, 1) == (1, 100)
    assert reader.lock_for_update(table, 99) is None
    other = engine.begin(2)
    assert other.get(table, 1) == (1, 100)  # plain reads take no locks
    for attempt in (
        lambda: other.delete(table, 1),
        lambda: other.insert(table, {"id": 99, "balance": 0}),
    ):
        with pytest.raises(MySQLError) as info:
            attempt()
        assert info.value.errno == 1205
    reader.commit()
    assert other.delete(table, 1) == (1, 100)


# --- deadlocks ----------------------------------------------------------------------------------


def test_deadlock_between_two_threads(
    engine: Engine, table: Table, timeout_box: list[float]
) -> None:
    timeout_box[0] = 10.0
    a, b = engine.begin(1), engine.begin(2)
    a.update(table, 1, {"balance": 101})
    b.update(table, 2, {"balance": 102})
    worker = Worker(lambda: a.update(table, 2, {"balance": 201}))  # waits for b
    wait_until(lambda: engine.locks.row_lock_current_waits == 1)
    with pytest.raises(MySQLError) as info:
        b.update(table, 1, {"balance": 202})  # closes the cycle: b is the victim
    assert info.value.errno == 1213 and info.value.sqlstate == "40001"
    assert getattr(info.value, "rolled_back", False) is True
    assert b.rolled_back_by_deadlock and not b.active and b.changes() == []
    assert engine.locks.deadlocks == 1
    change = worker.outcome()  # a got the lock b released
    assert change.after == (2, 201)
    a.commit()
    assert table.rows[1] == (1, 101) and table.rows[2] == (2, 201)
    assert engine.locks.lock_count() == 0
    b.rollback()  # harmless afterwards


def test_three_way_deadlock_and_no_false_positive(
    engine: Engine, table: Table, timeout_box: list[float]
) -> None:
    timeout_box[0] = 10.0
    a, b, c = engine.begin(1), engine.begin(2), engine.begin(3)
    a.lock_for_update(table, 1)
    b.lock_for_update(table, 2)
    c.lock_for_update(table, 3)
    wa = Worker(lambda: a.lock_for_update(table, 2))  # a -> b
    wait_until(lambda: engine.locks.row_lock_current_waits == 1)
    wb = Worker(lambda: b.lock_for_update(table, 3))  # b -> c: a chain, not a cycle
    wait_until(lambda: engine.locks.row_lock_current_waits == 2)
    assert engine.locks.deadlocks == 0
    with pytest.raises(MySQLError) as info:
        c.lock_for_update(table, 1)  # c -> a closes a -> b -> c -> a
    assert info.value.errno == 1213 and c.rolled_back_by_deadlock
    assert wb.outcome() == (3, 100)
    b.commit()
    assert wa.outcome() == (2, 100)
    a.commit()


def test_waiters_are_granted_in_arrival_order(
    engine: Engine, table: Table, timeout_box: list[float]
) -> None:
    timeout_box[0] = 10.0
    holder = engine.begin(0)
    holder.lock_for_update(table, 1)
    order: list[int] = []
    begun: list[int] = []
    workers = []
    for n in range(1, 6):
        trx = engine.begin(n)
        begun.append(trx.trx_id)

        def take(trx: Any = trx, n: int = n) -> None:
            trx.update(table, 1, {"balance": n})
            order.append(n)
            trx.commit()

        workers.append(Worker(take))
        wait_until(lambda n=n: engine.locks.row_lock_current_waits == n)  # type: ignore[misc]
    queued = engine.locks.waiters((table.id, 1))
    assert [w.trx_id for w in queued] == begun
    holder.commit()
    for worker in workers:
        worker.outcome()
    assert order == [1, 2, 3, 4, 5]
    assert table.rows[1] == (1, 5)


def test_lock_manager_direct() -> None:
    manager = LockManager(lambda: 0.05)
    a, b = LockOwner(1), LockOwner(2)
    assert manager.acquire(a, (1, 5)) is True
    assert manager.acquire(a, (1, 5)) is False  # re-entrant
    with pytest.raises(MySQLError):
        manager.acquire(b, (1, 5))
    assert b.waiting_for is None and manager.waiters((1, 5)) == []
    manager.release_all(b, [(1, 5)])  # not b's: ignored
    assert manager.holder((1, 5)) is a
    manager.release_all(a, [(1, 5)])
    assert manager.holder((1, 5)) is None and manager.acquire(b, (1, 5)) is True


# --- a transfer workload ----------------------------------------------------------------------


def test_random_transfers_preserve_the_total(
    engine: Engine, table: Table, timeout_box: list[float]
) -> None:
    timeout_box[0] = 1.0
    threads, transfers = 12, 100
    errors: list[BaseException] = []
    retried = {"1213": 0, "1205": 0}
    count_lock = threading.Lock()
    accounts = list(range(1, 11))

    def client(thread_id: int) -> None:
        rng = random.Random(thread_id)
        try:
            for _ in range(transfers):
                src, dst = rng.sample(accounts, 2)
                amount = rng.randint(1, 20)
                while True:
                    trx = engine.begin(thread_id)
                    try:
                        savepoint = trx.savepoint()
                        row = trx.lock_for_update(table, src)
                        assert row is not None and isinstance(row[1], int)
                        trx.update(table, src, {"balance": row[1] - amount})
                        if rng.random() < 0.1:  # a failing statement, undone alone
                            try:
                                trx.insert(table, {"id": dst, "balance": 0})
                                raise AssertionError("duplicate insert succeeded")
                            except MySQLError as exc:
                                if exc.errno != 1062:
                                    raise  # a lock error of this statement: retry below
                            trx.rollback_to(savepoint)
                            trx.update(table, src, {"balance": row[1] - amount})
                        time.sleep(rng.random() * 0.001)  # let others interleave
                        target = trx.lock_for_update(table, dst)
                        assert target is not None and isinstance(target[1], int)
                        trx.update(table, dst, {"balance": target[1] + amount})
                        if rng.random() < 0.05:
                            trx.rollback()
                        else:
                            trx.commit()
                        break
                    except MySQLError as exc:
                        if exc.errno not in (1213, 1205):
                            raise
                        with count_lock:
                            retried[str(exc.errno)] += 1
                        trx.rollback()
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    workers = [threading.Thread(target=client, args=(n,)) for n in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
    assert not any(worker.is_alive() for worker in workers)
    assert errors == []
    assert sum(row[1] for row in table.rows.values()) == 1000
    assert engine.locks.lock_count() == 0 and engine.locks.row_lock_current_waits == 0
    assert engine.locks.deadlocks == retried["1213"]
    assert engine.locks.row_lock_waits > 0


# --- high-priority transactions (a Group Replication applier's) ----------------------------
# They take the row locks of ordinary transactions that have not begun to commit, killing
# them; they wait for one that is committing.


def high(trx_id: int) -> LockOwner:
    owner = LockOwner(trx_id)
    owner.high_priority = True
    return owner


def test_takes_the_lock_of_an_idle_holder_at_once() -> None:
    manager = LockManager(lambda: 30.0)
    local, applier = LockOwner(1), high(2)
    assert manager.acquire(local, (1, 1)) and manager.acquire(local, (1, 2))
    began = time.monotonic()
    assert manager.acquire(applier, (1, 1)) is True
    assert time.monotonic() - began < 1.0  # no wait for the 30 s timeout
    assert manager.holder((1, 1)) is applier and local.killed
    assert manager.high_priority_kills == 1
    with pytest.raises(MySQLError) as failure:  # the victim takes nothing more, not even its own
        manager.acquire(local, (1, 2))
    assert failure.value.errno == ER_LOCK_DEADLOCK.errno
    assert manager.begin_commit(local) is False and not local.committing
    manager.release_all(local, [(1, 1), (1, 2)])  # its rollback: the taken key stays taken
    assert manager.holder((1, 1)) is applier and manager.holder((1, 2)) is None


def test_waits_for_a_holder_that_is_committing() -> None:
    manager = LockManager(lambda: 30.0)
    local, applier = LockOwner(1), high(2)
    manager.acquire(local, (1, 1))
    assert manager.begin_commit(local) is True
    waiting = Worker(lambda: manager.acquire(applier, (1, 1)))
    wait_until(lambda: applier.waiting_for == (1, 1))
    assert not local.killed
    manager.release_all(local, [(1, 1)])
    assert waiting.outcome() is True and manager.holder((1, 1)) is applier


def test_an_ordinary_owner_waits_for_a_high_priority_one_and_two_high_wait_too() -> None:
    manager = LockManager(lambda: 0.1)
    first, second, local = high(1), high(2), LockOwner(3)
    manager.acquire(first, (1, 1))
    for owner in (second, local):
        with pytest.raises(MySQLError):  # ER_LOCK_WAIT_TIMEOUT: nobody is killed
            manager.acquire(owner, (1, 1))
    assert not first.killed and manager.high_priority_kills == 0


def test_a_victim_waiting_elsewhere_is_woken_with_a_deadlock_error() -> None:
    manager = LockManager(lambda: 30.0)
    local, other, applier = LockOwner(1), LockOwner(2), high(3)
    manager.acquire(local, (1, 1))
    manager.acquire(other, (1, 2))
    waiting = Worker(lambda: manager.acquire(local, (1, 2)))  # local waits behind other
    wait_until(lambda: local.waiting_for == (1, 2))
    assert manager.acquire(applier, (1, 1)) is True
    with pytest.raises(MySQLError) as failure:
        waiting.outcome()
    assert failure.value.errno == ER_LOCK_DEADLOCK.errno
    assert local.waiting_for is None and manager.waiters((1, 2)) == []
    assert manager.holder((1, 2)) is other


def test_a_killed_transaction_rolls_back_and_its_rows_never_show(
    engine: Engine, table: Table
) -> None:
    local = engine.begin(1)
    local.update(table, 1, {"balance": 0})
    local.update(table, 2, {"balance": 0})
    applier = engine.begin(2, high_priority=True)
    applier.update(table, 1, {"balance": 150})  # takes the lock at once
    applier.enter_commit()
    applier.commit()
    with pytest.raises(MySQLError) as failure:
        local.enter_commit()
    assert failure.value.errno == ER_ERROR_DURING_COMMIT.errno
    assert failure.value.message == (
        "Got error 149 - 'Lock deadlock; Retry transaction' during COMMIT"
    )
    assert not local.active and local.rolled_back_by_deadlock
    reader = engine.begin(3)
    assert reader.get(table, 1) == (1, 150)
    assert reader.get(table, 2) == (2, 100)  # the victim's other write is gone
    writer = engine.begin(4)
    writer.update(table, 2, {"balance": 7})  # and its other lock was released
    writer.enter_commit()
    writer.commit()


def test_a_killed_transaction_fails_its_next_write_with_a_deadlock(
    engine: Engine, table: Table
) -> None:
    local = engine.begin(1)
    local.update(table, 1, {"balance": 0})
    engine.begin(2, high_priority=True).update(table, 1, {"balance": 1})
    with pytest.raises(MySQLError) as failure:
        local.update(table, 3, {"balance": 0})
    assert failure.value.errno == ER_LOCK_DEADLOCK.errno
    assert not local.active


def test_kill_and_begin_commit_race_one_way_only() -> None:
    """Many rounds of a holder beginning to commit while a high-priority owner asks for its
    lock: either the holder commits and the other waited, or it was killed and cannot
    commit; never both killed and committing."""
    for round_ in range(200):
        manager = LockManager(lambda: 30.0)
        local, applier = LockOwner(1), high(2)
        key = (1, round_)
        manager.acquire(local, key)
        start = threading.Barrier(2)
        outcome: list[bool] = []
        committer = threading.Thread(target=_commit, args=(manager, local, key, start, outcome))
        committer.start()
        start.wait()
        assert manager.acquire(applier, key) is True
        committer.join(10)
        assert outcome == [not local.killed]
        assert not (local.killed and local.committing)


def _commit(
    manager: LockManager,
    local: LockOwner,
    key: tuple[int, int],
    start: threading.Barrier,
    outcome: list[bool],
) -> None:
    start.wait()
    ok = manager.begin_commit(local)
    outcome.append(ok)
    if ok:
        manager.release_all(local, [key])
