"""Real etcd members and real rpl servers with Group Replication: what the Group
Replication tests and the conformance suite's Group Replication part
(:mod:`rpl.core.testing.suite.group_fixtures`) start their groups with.

* :class:`EtcdMembers`: an etcd cluster on loopback, one process per member (Debian's
  ``etcd``, data under the test's directory); re-formed alone after a lost quorum
  (:meth:`EtcdMembers.force_new_cluster`), a member added back, SIGSTOP/SIGCONT.
* :class:`Group`: rpl servers with the plugin loaded (``--plugin-load``), each paired
  with one etcd member, configured, bootstrapped and joined as MySQL's
  ``group_replication_*`` variables say; a member killed whole (server and etcd member).
* :class:`Statement`: one statement on its own connection, in a thread, at a consistency
  level; its rows or its error.
* :class:`ClientThreads`, :func:`wait_until`, :func:`group_gtids`, :func:`view_changes`:
  client threads for a ``with`` block, polling, and what a member's binlog holds.
* :func:`etcd_members` and :func:`started_group`: the two as context managers (what the
  fixtures yield), everything stopped at the end.

A missing ``etcd`` fails the test: nothing here skips.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import threading
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Self

from rpl.core.binlog.events import GtidEvent, ViewChangeEvent
from rpl.core.testing.binlogs import binlog_entries
from rpl.core.testing.process import ServerProcess, free_port

GROUP_NAME = "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"
"""The ``group_replication_group_name`` of every group started here."""
PAUSE_APPLIER = "pause_plugin_applier"
"""The server's sync point that holds the Group Replication applier before its next
transaction (``SET GLOBAL debug = '+d,pause_plugin_applier'``, :mod:`rpl.core.debug`)."""
HELD = "Executing hook on transaction begin."
"""The session state of a transaction waiting in a consistency hook (WL#10379)."""


class EtcdMembers:
    """An etcd cluster of ``count`` members, each its own process."""

    def __init__(self, root: Path, count: int = 3) -> None:
        self.root = root
        self.names = [f"e{i}" for i in range(count)]
        self.client_ports = [free_port() for _ in self.names]
        self.peer_ports = [free_port() for _ in self.names]
        self.processes: dict[str, subprocess.Popen[bytes]] = {}

    @property
    def endpoints(self) -> list[str]:
        """Client addresses, ``127.0.0.1:port``."""
        return [f"127.0.0.1:{port}" for port in self.client_ports]

    def _peer(self, index: int) -> str:
        return f"http://127.0.0.1:{self.peer_ports[index]}"

    def _command(
        self, index: int, *extra: str, members: list[int] | None = None, state: str = "new"
    ) -> list[str]:
        name = self.names[index]
        cluster = ",".join(
            f"{self.names[i]}={self._peer(i)}"
            for i in (range(len(self.names)) if members is None else members)
        )
        return [
            "etcd",
            "--name", name,
            "--data-dir", str(self.root / name),
            "--listen-client-urls", f"http://127.0.0.1:{self.client_ports[index]}",
            "--advertise-client-urls", f"http://127.0.0.1:{self.client_ports[index]}",
            "--listen-peer-urls", f"http://127.0.0.1:{self.peer_ports[index]}",
            "--initial-advertise-peer-urls", f"http://127.0.0.1:{self.peer_ports[index]}",
            "--initial-cluster", cluster,
            "--initial-cluster-state", state,
            "--initial-cluster-token", self.root.name,
            "--experimental-watch-progress-notify-interval", "1s",
            *extra,
        ]  # fmt: skip

    def start(self, index: int | None = None, *extra: str) -> EtcdMembers:
        """Start every member (or one, with ``extra`` options), and wait until the
        cluster answers.
        """
        self.root.mkdir(parents=True, exist_ok=True)
        for attempt in range(3):
            for i in range(len(self.names)) if index is None else [index]:
                log = (self.root / f"{self.names[i]}.log").open("ab")
                self.processes[self.names[i]] = subprocess.Popen(
                    self._command(i, *extra), stdout=log, stderr=subprocess.STDOUT
                )
            if self.wait_healthy(fresh=index is None and attempt < 2):
                return self
            # a member of a fresh cluster exited: its port, free when picked, was taken
            # meanwhile by another test's process; again with new ports, empty data
            self.stop()
            for name in self.names:
                shutil.rmtree(self.root / name, ignore_errors=True)
            self.client_ports = [free_port() for _ in self.names]
            self.peer_ports = [free_port() for _ in self.names]
        raise AssertionError("etcd did not start")

    def force_new_cluster(self, index: int) -> None:
        """Re-form the cluster as member ``index`` alone, keeping its data: stop it
        cleanly (SIGTERM: its log synced), restart it with ``--force-new-cluster``
        (etcd's way out of a lost quorum: it drops the other members and every entry
        it had not seen committed), wait until it takes puts.
        """
        process = self.processes.pop(self.names[index])
        process.terminate()
        process.wait(30)
        self.start(index, "--force-new-cluster")

    def rejoin(self, index: int, cluster: list[int]) -> None:
        """Add member ``index`` back to the cluster the members ``cluster`` form now
        (after ``force_new_cluster``, which dropped it; its old data is of no use): etcd's
        member add on a live member, then member ``index`` started with an empty data
        directory and ``--initial-cluster-state existing``.
        """
        body = json.dumps({"peerURLs": [self._peer(index)]}).encode()
        request = urllib.request.Request(
            f"http://{self.endpoints[cluster[0]]}/v3/cluster/member/add", data=body
        )
        with urllib.request.urlopen(request, timeout=10) as answer:
            assert answer.status == 200
        shutil.rmtree(self.root / self.names[index], ignore_errors=True)
        log = (self.root / f"{self.names[index]}.log").open("ab")
        self.processes[self.names[index]] = subprocess.Popen(
            self._command(index, members=[*cluster, index], state="existing"),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        self.wait_healthy()

    def signal(self, index: int, number: signal.Signals) -> None:
        """Send ``number`` to member ``index`` (SIGSTOP/SIGCONT: a partition)."""
        self.processes[self.names[index]].send_signal(number)

    def wait_healthy(self, timeout: float = 30.0, *, fresh: bool = False) -> bool:
        """Until a put succeeds on some member (True). With ``fresh`` (a new cluster that
        may be started again) False as soon as a member has exited.
        """
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if fresh and any(p.poll() is not None for p in self.processes.values()):
                return False
            for endpoint in self.endpoints:
                try:
                    request = urllib.request.Request(
                        f"http://{endpoint}/v3/kv/put", data=b'{"key":"aGVhbHRo","value":"MQ=="}'
                    )
                    with urllib.request.urlopen(request, timeout=1.0) as answer:
                        if answer.status == 200:
                            return True
                except OSError:
                    continue
            time.sleep(0.2)
        raise AssertionError("etcd did not become healthy")

    def kill(self, index: int) -> None:
        """SIGKILL member ``index``."""
        process = self.processes.pop(self.names[index])
        process.send_signal(signal.SIGKILL)
        process.wait()

    def stop(self) -> None:
        """Kill every member and remove its data directory (etcd preallocates 64 MB
        write-ahead-log files, about 120 MB a member: a suite of groups would fill the
        disk); each member's log (``<name>.log``) stays for a failure's post-mortem.
        """
        for process in self.processes.values():
            process.kill()
            process.wait()
        self.processes.clear()
        for name in self.names:
            shutil.rmtree(self.root / name, ignore_errors=True)


class Group:
    """rpl servers with group_replication loaded, each paired with one etcd member."""

    def __init__(
        self,
        root: Path,
        etcd: EtcdMembers,
        count: int = 3,
        *,
        plugin: str = "group_replication",
        member_env: Mapping[int, Mapping[str, str]] | None = None,
    ) -> None:
        """``count`` servers ``m0``.. under ``root`` loading ``plugin``; member ``i``
        runs with ``member_env[i]`` over this process's environment.
        """
        self.etcd = etcd
        envs = member_env or {}
        self.servers = [
            ServerProcess(
                root / f"m{i}",
                options=[f"--plugin-load={plugin}", f"--server-id={i + 1}"],
                env=envs.get(i),
            )
            for i in range(count)
        ]

    def start_servers(self) -> Group:
        """Start every server process."""
        for server in self.servers:
            server.start()
        return self

    def configure(self, index: int, **settings: Any) -> None:
        """SET GLOBAL the group's variables on member ``index``."""
        server = self.servers[index]
        values = {
            "group_replication_group_name": GROUP_NAME,
            "group_replication_group_seeds": ",".join(self.etcd.endpoints),
            "group_replication_local_address": self.etcd.endpoints[
                index % len(self.etcd.endpoints)
            ],
            "group_replication_member_expel_timeout": 1,
            **settings,
        }
        for name, value in values.items():
            literal = value if isinstance(value, int) else f"'{value}'"
            server.query(f"SET GLOBAL {name} = {literal}")

    def bootstrap(self, index: int = 0, **settings: Any) -> None:
        """Bootstrap the group on member ``index``."""
        self.configure(index, group_replication_bootstrap_group="ON", **settings)
        self.servers[index].query("START GROUP_REPLICATION")
        self.servers[index].query("SET GLOBAL group_replication_bootstrap_group = OFF")

    def join(self, index: int, **settings: Any) -> None:
        """START GROUP_REPLICATION on member ``index``."""
        self.configure(index, **settings)
        self.servers[index].query("START GROUP_REPLICATION")

    def form(self, **settings: Any) -> None:
        """Bootstrap member 0 and join every other one, all with ``settings``; until
        member 0 sees them all ONLINE.
        """
        self.bootstrap(0, **settings)
        for index in range(1, len(self.servers)):
            self.join(index, **settings)
        self.wait_states(0, ["ONLINE"] * len(self.servers))

    def kill_member(self, index: int) -> None:
        """SIGKILL member ``index`` whole: its server and its etcd member (XCom lives
        inside mysqld; here a member's share of the consensus is its etcd member).
        """
        self.servers[index].kill()
        self.etcd.kill(index)

    def pause_applier(self, index: int, paused: bool = True) -> None:
        """Hold (or let go) member ``index``'s Group Replication applier before its next
        transaction (:data:`PAUSE_APPLIER`).
        """
        sign = "+" if paused else "-"
        self.servers[index].query(f"SET GLOBAL debug = '{sign}d,{PAUSE_APPLIER}'")

    def states(self, index: int) -> list[str]:
        """The member states member ``index`` sees, sorted."""
        return sorted(str(r[2]) for r in self.members(index))

    def members(self, index: int) -> list[tuple[Any, ...]]:
        """replication_group_members as member ``index`` sees it."""
        return self.servers[index].query(
            "SELECT MEMBER_ID, MEMBER_PORT, MEMBER_STATE, MEMBER_ROLE "
            "FROM performance_schema.replication_group_members"
        )

    def wait_states(self, index: int, states: list[str], timeout: float = 60.0) -> None:
        """Until member ``index`` sees exactly ``states`` (sorted) in its view."""
        wait_until(
            lambda: sorted(r[2] for r in self.members(index)) == sorted(states),
            timeout,
            lambda: f"member {index} sees {self.members(index)}",
        )

    def stop(self) -> None:
        """Kill every server."""
        for server in self.servers:
            if server.process is not None and server.process.poll() is None:
                server.kill()


class ClientThreads:
    """Client threads run for the span of a ``with`` block: started on entry; on exit
    ``done`` is set and each is joined (60 s at most).
    """

    def __init__(self, threads: list[threading.Thread]) -> None:
        self.done = threading.Event()
        self.threads = threads

    def __enter__(self) -> Self:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        for thread in self.threads:
            thread.join(60)


def wait_until(
    check: Callable[[], bool], timeout: float = 60.0, what: Callable[[], str] = lambda: ""
) -> None:
    """Poll ``check`` until true; AssertionError with ``what()`` after ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except Exception:  # noqa: BLE001 - a member may be between states
            pass
        time.sleep(0.2)
    raise AssertionError(f"timed out: {what()}")


def new_uuid() -> str:
    """A random UUID text."""
    return str(uuid.uuid4())


def group_gtids(group: Group, index: int) -> list[str]:
    """The group GTIDs in member ``index``'s binlog, in binlog order."""
    return [
        f"{e.event.sid}:{e.event.gno}"
        for e in binlog_entries(group.servers[index].datadir)
        if isinstance(e.event, GtidEvent) and str(e.event.sid) == GROUP_NAME
    ]


def view_changes(group: Group, index: int) -> list[tuple[str, str]]:
    """Member ``index``'s logged view changes: (group GTID, view id), in binlog order."""
    logged: list[tuple[str, str]] = []
    gtid = ""
    for entry in binlog_entries(group.servers[index].datadir):
        if isinstance(entry.event, GtidEvent):
            gtid = f"{entry.event.sid}:{entry.event.gno}"
        elif isinstance(entry.event, ViewChangeEvent):
            logged.append((gtid, entry.event.view_id))
    return logged


class Statement(threading.Thread):
    """One statement on its own connection at a consistency level, run in a thread
    (:meth:`start`); its rows or its error (MySQL's code and message).
    """

    def __init__(
        self, server: ServerProcess, sql: str, level: str = "EVENTUAL", **session: Any
    ) -> None:
        """Connect to ``server`` and set ``session``'s variables and the level."""
        super().__init__(daemon=True)
        self.connection = server.connect()
        with self.connection.cursor() as cursor:
            for name, value in session.items():
                cursor.execute(f"SET SESSION {name} = {value}")
            cursor.execute(f"SET SESSION group_replication_consistency = '{level}'")
        self.sql = sql
        self.rows: list[tuple[Any, ...]] | None = None
        self.error: tuple[Any, ...] | None = None
        self.done = threading.Event()
        self.thread_id: int = self.connection.thread_id()

    def run(self) -> None:
        """Execute the statement; keep its rows or its error."""
        try:
            with self.connection.cursor() as cursor:
                cursor.execute(self.sql)
                self.rows = list(cursor.fetchall())
        except Exception as exc:  # noqa: BLE001 - the outcome the test checks
            self.error = tuple(exc.args)
        finally:
            self.done.set()

    def finish(self, timeout: float = 30.0) -> None:
        """Until the statement ended (AssertionError after ``timeout``); close."""
        assert self.done.wait(timeout), f"{self.sql} did not end"
        self.connection.close()


def session_state(server: ServerProcess, thread_id: int) -> str:
    """information_schema.PROCESSLIST's STATE of connection ``thread_id`` ('' if gone)."""
    rows = server.query(f"SELECT STATE FROM information_schema.PROCESSLIST WHERE ID = {thread_id}")
    return str(rows[0][0]) if rows and rows[0][0] is not None else ""


def global_status(server: ServerProcess, name: str) -> int:
    """SHOW GLOBAL STATUS ``name`` as an integer."""
    return int(server.query(f"SHOW GLOBAL STATUS LIKE '{name}'")[0][1])


@contextmanager
def etcd_members(root: Path, count: int = 3) -> Iterator[EtcdMembers]:
    """An etcd cluster of ``count`` members under ``root``, killed at the end."""
    members = EtcdMembers(root, count).start()
    try:
        yield members
    finally:
        members.stop()


@contextmanager
def started_group(
    root: Path,
    etcd: EtcdMembers,
    count: int = 3,
    *,
    plugin: str = "group_replication",
    member_env: Mapping[int, Mapping[str, str]] | None = None,
) -> Iterator[Group]:
    """A :class:`Group` of ``count`` started servers (not in a group yet), killed at the
    end.
    """
    made = Group(root, etcd, count, plugin=plugin, member_env=member_env).start_servers()
    try:
        yield made
    finally:
        made.stop()
