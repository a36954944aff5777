"""The binlog's logical clock (last_committed, sequence_number) under COMMIT_ORDER and WRITESET.

Write sets are sets of write-set items (64-bit key hashes); small ints stand for them here.
"""

from __future__ import annotations

from rpl.core.binlog.dependency import COMMIT_ORDER, WRITESET, DependencyTracker


def test_commit_order_parent_is_the_previous_group() -> None:
    clock = DependencyTracker()
    assert [clock.next({1}, COMMIT_ORDER, 100) for _ in range(3)] == [(0, 1), (0, 2), (0, 3)]
    clock.group_written()
    assert clock.next({1}, COMMIT_ORDER, 100) == (3, 4)


def test_writeset_parent_is_the_last_writer_of_the_same_rows() -> None:
    clock = DependencyTracker()
    clock.next({11}, WRITESET, 100)
    clock.group_written()
    clock.next({12}, WRITESET, 100)
    clock.group_written()
    assert clock.next({13}, WRITESET, 100) == (0, 3), "new rows depend on nothing"
    clock.group_written()
    assert clock.next({19, 12}, WRITESET, 100) == (2, 4)
    clock.group_written()
    assert clock.next({12}, WRITESET, 100) == (4, 5), "the latest writer counts"


def test_writeset_never_later_than_commit_order() -> None:
    clock = DependencyTracker()
    clock.next({7}, WRITESET, 100)
    assert clock.next({7}, WRITESET, 100) == (0, 2), "same group: the group's parent"


def test_a_transaction_without_write_set_is_a_barrier() -> None:
    clock = DependencyTracker()
    clock.next({1}, WRITESET, 100)
    clock.group_written()
    assert clock.next(None, WRITESET, 100) == (1, 2)
    clock.group_written()
    assert clock.next({2}, WRITESET, 100) == (2, 3), "everything after DDL waits for it"


def test_history_overflow_starts_afresh_and_new_file_resets() -> None:
    clock = DependencyTracker()
    for index in range(5):
        clock.next({100 + index}, WRITESET, 4)
        clock.group_written()
    assert clock.next({100}, WRITESET, 4) == (5, 6), "forgotten rows depend on the reset point"
    clock.new_file()
    assert clock.next({100}, WRITESET, 4) == (0, 1)


def test_an_empty_write_set_keeps_commit_order_and_is_a_barrier() -> None:
    """As MySQL: a transaction without items (transaction_write_set_extraction=OFF)
    cannot use WRITESET, keeps COMMIT_ORDER's parent, and resets the history."""
    clock = DependencyTracker()
    clock.next({1}, WRITESET, 100)
    clock.group_written()
    clock.next({2}, WRITESET, 100)
    clock.group_written()
    assert clock.next(frozenset(), WRITESET, 100) == (2, 3)
    assert clock.next({4}, WRITESET, 100) == (2, 4), "same group: the group's parent"
    clock.group_written()
    assert clock.next({5}, WRITESET, 100) == (3, 5), "new rows wait for it"
