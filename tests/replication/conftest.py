"""Fixtures for the replication tests: server processes that are always stopped."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from rpl.core.testing.process import ServerProcess
from rpl.core.testing.topology import create_replication_user

ServerFactory = Callable[..., ServerProcess]


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[ServerFactory]:
    """``servers(name, *options)``: start an rpl server with its own server id; all are
    killed at the end of the test (their error logs are printed on failure)."""
    started: list[ServerProcess] = []

    def start(name: str, *options: str, server_id: int | None = None) -> ServerProcess:
        sid = server_id if server_id is not None else len(started) + 1
        server = ServerProcess(tmp_path / name, options=["--server-id", str(sid), *options])
        server.start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.kill()
        print(f"--- {server.datadir.name} error log ---\n{server.error_log()[-3000:]}")


@pytest.fixture
def source(servers: ServerFactory) -> ServerProcess:
    """A source with the replication account and a table ``d.t``."""
    server = servers("source")
    create_replication_user(server)
    server.query("CREATE DATABASE d")
    server.query("CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(40), n INT)")
    return server


class Writers:
    """Concurrent autocommit and multi-statement writers on ``d.t``."""

    def __init__(self, server: ServerProcess, threads: int = 4, start_id: int = 1) -> None:
        self.server = server
        self.threads = threads
        self.next_id = start_id
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.errors: list[BaseException] = []
        self.commits = 0
        self._threads: list[threading.Thread] = []
        self._limited = False

    def _ids(self, count: int) -> list[int]:
        with self.lock:
            first = self.next_id
            self.next_id += count
            return list(range(first, first + count))

    def _work(self, limit: int | None) -> None:
        try:
            connection = self.server.connect()
            cursor = connection.cursor()
            done = 0
            while not self.stop.is_set() and (limit is None or done < limit):
                a, b = self._ids(2)
                cursor.execute(f"INSERT INTO d.t VALUES ({a}, 'row {a}', 0)")
                cursor.execute("BEGIN")
                cursor.execute(f"INSERT INTO d.t VALUES ({b}, 'row {b}', 1)")
                cursor.execute(f"UPDATE d.t SET n = n + 1, v = 'upd {a}' WHERE id = {a}")
                cursor.execute("COMMIT")
                if a % 7 == 0:
                    cursor.execute(f"DELETE FROM d.t WHERE id = {a}")
                with self.lock:
                    self.commits += 3 if a % 7 == 0 else 2
                done += 1
            connection.close()
        except BaseException as exc:  # noqa: BLE001 - reported by join()
            self.errors.append(exc)

    def start(self, iterations: int | None = None) -> Writers:
        """Start the writer threads (each runs ``iterations`` rounds, or until join)."""
        self._limited = iterations is not None
        self._threads = [
            threading.Thread(target=self._work, args=(iterations,), daemon=True)
            for _ in range(self.threads)
        ]
        for thread in self._threads:
            thread.start()
        return self

    def join(self) -> int:
        """Wait for the writers (stopping them unless they run a fixed number of rounds);
        the number of commits they made."""
        if not self._limited:
            self.stop.set()
        for thread in self._threads:
            thread.join(60)
        assert not self.errors, self.errors
        return self.commits


@pytest.fixture
def writers(source: ServerProcess) -> Callable[..., Writers]:
    """``writers(threads=4)``: concurrent writers on the source's ``d.t``."""
    return lambda threads=4, server=source: Writers(server, threads)
