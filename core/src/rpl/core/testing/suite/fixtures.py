"""What every area of the suite takes its servers from: the plugins under test, the
requirements, real server processes, and a few readers of what a source shows.

Every test runs real server processes (``rpl server``) with the plugins loaded through
``--plugin-load``, so the plugins need only be installed (their entry points) in the
environment that runs pytest. Two server facilities the suite relies on, both in every rpl
server: the sync point ``pause_after_after_sync`` (``SET GLOBAL debug``) and
performance_schema.threads.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest

from rpl.core.testing.process import ServerProcess
from rpl.core.testing.suite.requirements import RequirementsFixtures
from rpl.core.testing.topology import create_replication_user, replicate, status


@attrs.frozen
class SemisyncPlugins:
    """The implementation under test: its plugin names, and the suite's timeout (ms) for
    ``rpl_semi_sync_master_timeout`` (short, so that timeouts do not make the suite slow).
    """

    master: str = "rpl_semi_sync_master"
    slave: str = "rpl_semi_sync_slave"
    timeout_ms: int = 1000


class Nodes:
    """Server processes of one test, each with its own server_id; all killed at the end."""

    def __init__(self, root: Path, plugins: SemisyncPlugins) -> None:
        self.root = root
        self.plugins = plugins
        self.started: list[ServerProcess] = []

    def start(self, name: str, *options: str) -> ServerProcess:
        """A new server ``name`` with ``options``."""
        server = ServerProcess(
            self.root / name, options=["--server-id", str(len(self.started) + 1), *options]
        )
        server.start()
        self.started.append(server)
        return server

    def source(self, *options: str, enabled: bool = True) -> ServerProcess:
        """A source with the master plugin (enabled unless told), the replication account
        and a table ``d.t``.
        """
        p = self.plugins
        name = "source" if not self.started else f"source{len(self.started)}"
        server = self.start(
            name,
            f"--plugin-load={p.master}",
            f"--rpl-semi-sync-master-timeout={p.timeout_ms}",
            *options,
        )
        create_replication_user(server)
        server.query("CREATE DATABASE d")
        server.query("CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(20))")
        if enabled:  # after the set-up commits, which would otherwise wait for a replica
            server.query("SET GLOBAL rpl_semi_sync_master_enabled = ON")
        return server

    def replica(
        self,
        source: ServerProcess,
        *,
        semisync: bool = True,
        name: str = "",
        port: int | None = None,
    ) -> ServerProcess:
        """A replica of ``source`` with the slave plugin (enabled when ``semisync``),
        replicating with GTID auto-position (through ``port``, a proxy, when given).
        """
        server = self.start(
            name or f"replica{len(self.started)}",
            f"--plugin-load={self.plugins.slave}",
            f"--rpl-semi-sync-slave-enabled={'ON' if semisync else 'OFF'}",
        )
        replicate(server, source, master_port=port or source.port)
        return server

    def kill_all(self) -> None:
        """SIGKILL every server (SIGCONT first, for one a test stopped) and print the
        tail of each error log (pytest shows it when the test failed).
        """
        for server in self.started:
            if server.process is not None and server.process.poll() is None:
                os.kill(server.process.pid, signal.SIGCONT)
            server.kill()
        for server in self.started:
            print(f"--- {server.datadir.name} error log ---\n{server.error_log()[-2500:]}")


class SemisyncFixtures(RequirementsFixtures):
    """The fixtures every semisync suite class takes its servers from. A third party
    overrides ``semisync_plugins`` (its plugin names) and ``requirements`` (the behaviours
    its plugins lack) in its subclass.
    """

    @pytest.fixture
    def semisync_plugins(self) -> SemisyncPlugins:
        """The implementation under test (override to test another one)."""
        return SemisyncPlugins()

    @pytest.fixture
    def nodes(self, tmp_path: Path, semisync_plugins: SemisyncPlugins) -> Iterator[Nodes]:
        """A factory of server processes, all killed at the end."""
        nodes = Nodes(tmp_path, semisync_plugins)
        yield nodes
        nodes.kill_all()


def counter(server: ServerProcess, short: str) -> int:
    """``Rpl_semi_sync_master_<short>`` as an integer."""
    return int(status(server, f"Rpl_semi_sync_master_{short}"))


def master_on(server: ServerProcess) -> bool:
    """Rpl_semi_sync_master_status is ON."""
    return status(server, "Rpl_semi_sync_master_status") == "ON"


class Inserts:
    """Single-row autocommit INSERTs into ``d.t`` on one connection, timed."""

    def __init__(self, server: ServerProcess, first_id: int = 1) -> None:
        self.connection = server.connect()
        self.next_id = first_id

    def one(self) -> float:
        """Insert the next row; the seconds the commit took."""
        started = time.monotonic()
        with self.connection.cursor() as cursor:
            cursor.execute(f"INSERT INTO d.t VALUES ({self.next_id}, 'r{self.next_id}')")
        self.next_id += 1
        return time.monotonic() - started

    def close(self) -> None:
        """Close the connection."""
        self.connection.close()


def clients_are(server: ServerProcess, count: int) -> Callable[[], bool]:
    """A condition: Rpl_semi_sync_master_clients is ``count``."""
    return lambda: counter(server, "clients") == count


def rows(server: ServerProcess) -> int:
    """SELECT COUNT(*) FROM d.t."""
    return int(server.query("SELECT COUNT(*) FROM d.t")[0][0])


def in_background(action: Callable[[], Any]) -> tuple[threading.Thread, list[BaseException]]:
    """Run ``action`` in a thread; the thread and the list its exception lands in."""
    errors: list[BaseException] = []

    def run() -> None:
        try:
            action()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            errors.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, errors
