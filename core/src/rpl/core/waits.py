"""Telling a thread pool that a thread is about to block (MySQL's thd_wait service).

With ``thread_handling=pool-of-threads`` a few worker threads run the commands of every
connection. A worker that blocks (a row lock wait, a commit waiting for its group's
fsync, a binlog dump waiting for new events) would hold up the connections queued behind
it; worse, the session it waits for may be one of them. Code that is about to block wraps
the wait in :func:`thd_wait`; the pool then counts the worker as waiting and lets another
worker serve, as mysqld's thread pool does on ``thd_wait_begin``/``thd_wait_end``. A wait
nobody announced is caught by the pool's stall check (``thread_pool_stall_limit``), later.

Outside a pool worker :func:`thd_wait` does nothing but a thread-local lookup.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol


class WaitListener(Protocol):
    """What a pool worker thread registers to hear about its own waits."""

    def wait_begin(self) -> None:
        """The calling thread is about to block."""

    def wait_end(self) -> None:
        """The calling thread is running again."""


_threads = threading.local()


def set_listener(listener: WaitListener | None) -> None:
    """Register (None: forget) the calling thread's listener."""
    _threads.listener = listener


@contextmanager
def thd_wait() -> Iterator[None]:
    """Run the body as a wait the calling thread's pool (if any) is told about."""
    listener: WaitListener | None = getattr(_threads, "listener", None)
    if listener is None:
        yield
        return
    listener.wait_begin()
    try:
        yield
    finally:
        listener.wait_end()
