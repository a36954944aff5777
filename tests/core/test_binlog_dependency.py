"""The binlog's logical clock (last_committed, sequence_number) under COMMIT_ORDER and WRITESET."""

from __future__ import annotations

from rpl.core.binlog.dependency import COMMIT_ORDER, WRITESET, DependencyTracker


def test_commit_order_parent_is_the_previous_group() -> None:
    clock = DependencyTracker()
    assert [clock.next({"a"}, COMMIT_ORDER, 100) for _ in range(3)] == [(0, 1), (0, 2), (0, 3)]
    clock.group_written()
    assert clock.next({"a"}, COMMIT_ORDER, 100) == (3, 4)


def test_writeset_parent_is_the_last_writer_of_the_same_rows() -> None:
    clock = DependencyTracker()
    clock.next({"d.t.1"}, WRITESET, 100)
    clock.group_written()
    clock.next({"d.t.2"}, WRITESET, 100)
    clock.group_written()
    assert clock.next({"d.t.3"}, WRITESET, 100) == (0, 3), "new rows depend on nothing"
    clock.group_written()
    assert clock.next({"d.t.9", "d.t.2"}, WRITESET, 100) == (2, 4)
    clock.group_written()
    assert clock.next({"d.t.2"}, WRITESET, 100) == (4, 5), "the latest writer counts"


def test_writeset_never_later_than_commit_order() -> None:
    clock = DependencyTracker()
    clock.next({"x"}, WRITESET, 100)
    assert clock.next({"x"}, WRITESET, 100) == (0, 2), "same group: the group's parent"


def test_a_transaction_without_write_set_is_a_barrier() -> None:
    clock = DependencyTracker()
    clock.next({"a"}, WRITESET, 100)
    clock.group_written()
    assert clock.next(None, WRITESET, 100) == (1, 2)
    clock.group_written()
    assert clock.next({"b"}, WRITESET, 100) == (2, 3), "everything after DDL waits for it"


def test_history_overflow_starts_afresh_and_new_file_resets() -> None:
    clock = DependencyTracker()
    for index in range(5):
        clock.next({f"k{index}"}, WRITESET, 4)
        clock.group_written()
    assert clock.next({"k0"}, WRITESET, 4) == (5, 6), "forgotten rows depend on the reset point"
    clock.new_file()
    assert clock.next({"k0"}, WRITESET, 4) == (0, 1)
