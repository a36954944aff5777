"""The thread registry: every server and plugin thread, for performance_schema.threads.

Implements the ``rpl.observers.ThreadRegistry`` service. Each entry has MySQL's
columns THREAD_ID, NAME, TYPE and PROCESSLIST_STATE; the registry hands out
THREAD_IDs from one counter.
"""

from __future__ import annotations

import itertools
import threading

import attrs

from rpl.observers import ThreadType

_connection_ids = itertools.count(1)


def next_thread_id() -> int:
    """A new connection id (CONNECTION_ID(), the processlist Id): client connections and
    the replica's receiver and applier threads share one counter, as in MySQL.
    """
    return next(_connection_ids)


@attrs.frozen
class ThreadRow:
    """One row of performance_schema.threads."""

    thread_id: int
    name: str
    type: str
    processlist_state: str | None
    processlist_command: str | None
    thread_os_id: int | None
    processlist_id: int | None = None
    """The connection it serves (a dump thread's), None for a background thread."""


class RegisteredThread:
    """A thread in the registry (implements ``rpl.observers.ThreadHandle``)."""

    def __init__(
        self, registry: ThreadRegistry, thread_id: int, name: str, thread_type: ThreadType
    ) -> None:
        self._registry = registry
        self._thread_id = thread_id
        self._name = name
        self.thread_type = thread_type
        self.state: str | None = None
        self.command: str | None = None
        """PROCESSLIST_COMMAND (a dump thread's "Binlog Dump"), None for none."""
        self.processlist_id: int | None = None
        """PROCESSLIST_ID: the connection a foreground thread serves."""
        self.os_id = threading.get_native_id()

    @property
    def thread_id(self) -> int:
        """THREAD_ID."""
        return self._thread_id

    @property
    def name(self) -> str:
        """NAME."""
        return self._name

    def set_state(self, state: str | None) -> None:
        """Set PROCESSLIST_STATE."""
        self.state = state

    def close(self) -> None:
        """Remove the thread from the registry."""
        self._registry.remove(self._thread_id)

    def __enter__(self) -> RegisteredThread:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class ThreadRegistry:
    """All registered threads."""

    def __init__(self) -> None:
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._threads: dict[int, RegisteredThread] = {}

    def register_thread(
        self, name: str, thread_type: ThreadType = ThreadType.BACKGROUND
    ) -> RegisteredThread:
        """Register the calling thread under ``name``."""
        with self._lock:
            handle = RegisteredThread(self, next(self._ids), name, thread_type)
            self._threads[handle.thread_id] = handle
        return handle

    def new_thread_id(self) -> int:
        """A THREAD_ID for a thread shown without registering (a client session)."""
        with self._lock:
            return next(self._ids)

    def remove(self, thread_id: int) -> None:
        """Forget a thread (idempotent)."""
        with self._lock:
            self._threads.pop(thread_id, None)

    def rows(self) -> list[ThreadRow]:
        """performance_schema.threads, ordered by THREAD_ID."""
        with self._lock:
            threads = sorted(self._threads.values(), key=lambda t: t.thread_id)
        return [
            ThreadRow(
                t.thread_id,
                t.name,
                t.thread_type.value,
                t.state,
                t.command,
                t.os_id,
                t.processlist_id,
            )
            for t in threads
        ]
