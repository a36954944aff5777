"""The binlog's two hand-offs between threads: the turnstile that lets commit groups into
their commit stage in group order, and the published end that readers (dump threads, a
relay log's applier) wait on."""

from __future__ import annotations

import random
import threading
import time

from rpl.core.binlog.writer import BinlogPosition, PublishedEnd, _Turnstile


def test_turnstile_lets_groups_in_by_number_whatever_order_they_arrive_in() -> None:
    turnstile = _Turnstile()
    order: list[int] = []
    numbers = list(range(40))
    random.Random(7).shuffle(numbers)

    def group(number: int) -> None:
        turnstile.enter(number)
        order.append(number)
        time.sleep(0.0005)
        turnstile.leave()

    threads = [threading.Thread(target=group, args=(n,), daemon=True) for n in numbers]
    for thread in threads:
        thread.start()
        time.sleep(0.0002)
    for thread in threads:
        thread.join(10)
    assert not any(thread.is_alive() for thread in threads), "a group never got its turn"
    assert order == list(range(40))


def test_published_end_wakes_every_waiter_and_returns_at_once_when_moved() -> None:
    published = PublishedEnd()
    start, moved = BinlogPosition("binlog.000001", 4), BinlogPosition("binlog.000001", 900)
    published.publish(start)
    assert published.wait_past(BinlogPosition("binlog.000001", 1), None) == start
    seen: list[BinlogPosition] = []
    waiters = [threading.Thread(target=lambda: seen.append(published.wait_past(start, 10)),
                                daemon=True) for _ in range(5)]
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
