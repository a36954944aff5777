"""High-priority transactions (a Group Replication applier's): they take the row locks
of ordinary transactions that have not begun to commit, killing them; they wait for one
that is committing."""

from __future__ import annotations

import threading
import time

import pytest
from test_engine_locks import Worker, accounts_schema, wait_until

from rpl.core.engine import Engine, LockManager, LockOwner, Table
from rpl.core.errors import ER_ERROR_DURING_COMMIT, ER_LOCK_DEADLOCK, MySQLError


@pytest.fixture
def engine() -> Engine:
    engine = Engine(lambda: 5.0)
    engine.create_database("bank")
    return engine


@pytest.fixture
def table(engine: Engine) -> Table:
    table = engine.create_table(accounts_schema())
    assert table is not None
    trx = engine.begin(0)
    for i in range(1, 4):
        trx.insert(table, {"id": i, "balance": 100})
    trx.commit()
    return table


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
