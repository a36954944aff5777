"""The published end that readers (dump threads, a relay log's applier) wait on: a hand-off
between threads on the way from a group's sync to its replicas. (The commit stage's queue
is tested on a live server: tests/core/test_server_group_commit.py.)"""

from __future__ import annotations

import threading
import time

from rpl.core.binlog.writer import BinlogPosition, PublishedEnd


def test_published_end_wakes_every_waiter_and_returns_at_once_when_moved() -> None:
    published = PublishedEnd()
    start, moved = BinlogPosition("binlog.000001", 4), BinlogPosition("binlog.000001", 900)
    published.publish(start)
    assert published.wait_past(BinlogPosition("binlog.000001", 1), None) == start
    seen: list[BinlogPosition] = []
    waiters = [
        threading.Thread(target=lambda: seen.append(published.wait_past(start, 10)), daemon=True)
        for _ in range(5)
    ]
    for thread in waiters:
        thread.start()
    time.sleep(0.1)
    assert not seen, "a waiter returned before the end moved"
    published.publish(moved)
    for thread in waiters:
        thread.join(5)
    assert seen == [moved] * 5


def test_a_timed_out_waiter_leaves_nothing_behind() -> None:
    published = PublishedEnd()
    end = BinlogPosition("binlog.000001", 4)
    published.publish(end)
    started = time.monotonic()
    assert published.wait_past(end, 0.05) == end
    assert time.monotonic() - started >= 0.04
    assert published._waiters == [], "the timed-out waiter is still listed"
    published.publish(BinlogPosition("binlog.000001", 50))  # nothing left to release twice
    assert published.wait_past(end, 0) == BinlogPosition("binlog.000001", 50)
