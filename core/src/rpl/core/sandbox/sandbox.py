"""The sandbox model and its operations (see the package docstring).

What holds:

* ports: a deployment takes the first block of consecutive free loopback ports at or
  above ``--base-port``, one per node, and refuses a directory that already holds a
  sandbox, so two sandboxes never collide;
* a node's pid is recorded when it starts and checked against the process's command line
  before any signal is sent, so a reused pid is never signalled;
* every operation waits until what it promises is true: deploy until the replicas have
  connected (and, with semisync, the source counts them as semisync clients), stop until
  every process is gone and its port free, start until every node accepts connections.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any, Final

import attrs

from rpl.core.testing.process import ServerProcess, port_free
from rpl.core.testing.topology import (
    create_replication_user,
    gtid_executed,
    replicate,
    slave_status,
    wait_for,
)
from rpl.core.testing.topology import status as global_status

DESCRIPTION: Final = "sandbox.json"
SEMISYNC_MODES: Final = ("after_sync", "after_commit", "off")
SEMISYNC_TIMEOUT_MS: Final = 10_000
DEFAULT_BASE_PORT: Final = 23306
DEFAULT_DIR: Final = Path.home() / "sandboxes" / "rpl"
SOURCE: Final = "source"
REPLICA: Final = "replica"
MEMBER: Final = "member"
ETCD: Final = "etcd"
GROUP_NAME_OPTION: Final = "--group-replication-group-name="


class SandboxError(RuntimeError):
    """What went wrong, for the user (exit code 1)."""


@attrs.define
class NodeSpec:
    """One node of a sandbox."""

    name: str
    role: str
    port: int
    server_id: int
    options: list[str]
    pid: int = 0


@attrs.define
class Sandbox:
    """A sandbox directory and its nodes."""

    directory: Path
    topology: str
    semisync: str
    nodes: list[NodeSpec]

    # ---------------------------------------------------------------- files
    @classmethod
    def load(cls, directory: Path) -> Sandbox:
        """The sandbox in ``directory``; SandboxError if there is none."""
        path = directory / DESCRIPTION
        if not path.exists():
            raise SandboxError(f"no sandbox in {directory} (no {DESCRIPTION})")
        data = json.loads(path.read_text())
        return cls(
            directory, data["topology"], data["semisync"], [NodeSpec(**n) for n in data["nodes"]]
        )

    def save(self) -> None:
        """Write ``sandbox.json``."""
        data = {
            "topology": self.topology,
            "semisync": self.semisync,
            "nodes": [attrs.asdict(n) for n in self.nodes],
        }
        (self.directory / DESCRIPTION).write_text(json.dumps(data, indent=2) + "\n")

    def node(self, name: str) -> NodeSpec:
        """The node called ``name``."""
        for spec in self.nodes:
            if spec.name == name:
                return spec
        raise SandboxError(f"no node {name!r} in {self.directory}")

    def server(self, spec: NodeSpec) -> ServerProcess:
        """A handle to query the node (and to start it)."""
        return ServerProcess(self.directory / spec.name, spec.port, spec.options)

    @property
    def source(self) -> NodeSpec:
        """The node whose role is source."""
        return next(n for n in self.nodes if n.role == SOURCE)

    # ---------------------------------------------------------------- processes
    def running(self, spec: NodeSpec) -> bool:
        """Whether the node's recorded process is alive (and is that node's server, or
        that etcd member).
        """
        program = b"etcd" if spec.role == ETCD else b"rpl.core.cli"
        return _is_our_server(spec.pid, self.directory / spec.name, program)

    def start_node(self, spec: NodeSpec, timeout: float = 30.0) -> None:
        """Start one node detached; wait until it accepts connections."""
        if self.running(spec):
            return
        if not port_free(spec.port):
            raise SandboxError(f"port {spec.port} of {spec.name} is taken by another process")
        datadir = self.directory / spec.name
        datadir.mkdir(parents=True, exist_ok=True)
        command = (
            ["etcd", "--data-dir", str(datadir), *spec.options]
            if spec.role == ETCD
            else [
                sys.executable,
                "-m",
                "rpl.core.cli",
                "server",
                "--datadir",
                str(datadir),
                "--port",
                str(spec.port),
                "--server-id",
                str(spec.server_id),
                *spec.options,
            ]
        )
        with (self.directory / f"{spec.name}.out").open("ab") as out:
            process = subprocess.Popen(
                command,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        spec.pid = process.pid
        self.save()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise SandboxError(
                    f"{spec.name} exited with {process.returncode}; see {datadir / 'error.log'}"
                )
            if not port_free(spec.port):
                return
            time.sleep(0.05)
        raise SandboxError(f"{spec.name} did not listen on port {spec.port}")

    def stop_node(self, spec: NodeSpec, timeout: float = 30.0, port_timeout: float = 10.0) -> None:
        """SIGTERM (a clean shutdown), SIGKILL after ``timeout``; wait until it is gone
        and its port is free (SandboxError if another process holds the port then).
        """
        if not self.running(spec):
            return
        os.kill(spec.pid, signal.SIGTERM)
        if not _wait_gone(spec.pid, timeout):
            os.kill(spec.pid, signal.SIGKILL)
            _wait_gone(spec.pid, 10)
        try:
            wait_for(lambda: port_free(spec.port), port_timeout, f"port {spec.port} to be free")
        except AssertionError:
            raise SandboxError(
                f"{spec.name} stopped, but port {spec.port} is still in use "
                f"by another process after {port_timeout:g} s"
            ) from None

    def kill_node(self, spec: NodeSpec) -> None:
        """SIGKILL, as a crash; wait until it is gone."""
        if self.running(spec):
            os.kill(spec.pid, signal.SIGKILL)
            _wait_gone(spec.pid, 10)


def _reap(pid: int) -> bool:
    """Reap ``pid`` if it is our own child and has ended; whether it was."""
    try:
        return os.waitpid(pid, os.WNOHANG)[0] == pid
    except ChildProcessError:
        return False  # not our child (the command that started it has exited)


def _running(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie nobody reaps is not)."""
    if pid <= 0 or _reap(pid):
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


def _is_our_server(pid: int, datadir: Path, program: bytes = b"rpl.core.cli") -> bool:
    if not _running(pid):
        return False
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    named = program in command or any(part.endswith(b"/" + program) for part in command)
    return named and str(datadir).encode() in command


def _wait_gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _running(pid):
            return True
        time.sleep(0.05)
    return False


def free_block(base: int, count: int) -> int:
    """The first port at or above ``base`` starting ``count`` consecutive free ports."""
    port = base
    while port + count < 65536:
        taken = [p for p in range(port, port + count) if not port_free(p)]
        if not taken:
            return port
        port = taken[-1] + 1
    raise SandboxError(f"no {count} consecutive free ports at or above {base}")


# -------------------------------------------------------------------- deploy
def _options(role: str, semisync: str) -> list[str]:
    if semisync == "off":
        return []
    plugins = "--plugin-load=rpl_semi_sync_master;rpl_semi_sync_slave"
    if role == SOURCE:
        return [
            plugins,
            "--rpl-semi-sync-master-enabled=ON",
            f"--rpl-semi-sync-master-wait-point={semisync.upper()}",
            f"--rpl-semi-sync-master-timeout={SEMISYNC_TIMEOUT_MS}",
        ]
    return [plugins, "--rpl-semi-sync-slave-enabled=ON"]


def deploy(
    directory: Path,
    *,
    replicas: int = 2,
    semisync: str = "after_sync",
    base_port: int = DEFAULT_BASE_PORT,
    say: Callable[[str], None] = lambda _: None,
) -> Sandbox:
    """A source and ``replicas`` replicas in ``directory``, replicating; see the module
    docstring for what holds when it returns.
    """
    if semisync not in SEMISYNC_MODES:
        raise SandboxError(f"--semisync must be one of {', '.join(SEMISYNC_MODES)}")
    if not 0 <= replicas <= 9:
        raise SandboxError("--replicas must be between 0 and 9")
    if (directory / DESCRIPTION).exists():
        raise SandboxError(
            f"{directory} already holds a sandbox: `rpl sandbox destroy --dir {directory}` first"
        )
    directory.mkdir(parents=True, exist_ok=True)
    port = free_block(base_port, replicas + 1)
    names = [SOURCE] + [f"replica{i}" for i in range(1, replicas + 1)]
    sandbox = Sandbox(
        directory,
        "replication",
        semisync,
        [
            NodeSpec(
                name,
                SOURCE if name == SOURCE else REPLICA,
                port + i,
                i + 1,
                _options(SOURCE if name == SOURCE else REPLICA, semisync),
            )
            for i, name in enumerate(names)
        ],
    )
    sandbox.save()
    try:
        for spec in sandbox.nodes:
            say(f"starting {spec.name} on port {spec.port}")
            sandbox.start_node(spec)
            _client_script(sandbox, spec)
        _attach(sandbox, say)
    except BaseException:
        stop(sandbox)
        raise
    return sandbox


def _attach(sandbox: Sandbox, say: Callable[[str], None]) -> None:
    source = sandbox.server(sandbox.source)
    semisync = sandbox.semisync != "off"
    if semisync:  # no replica to acknowledge the account's creation yet
        source.query("SET GLOBAL rpl_semi_sync_master_enabled = OFF")
    create_replication_user(source)
    for spec in sandbox.nodes:
        if spec.role == REPLICA:
            say(f"attaching {spec.name} to the source")
            replicate(sandbox.server(spec), source)
    replicas = [sandbox.server(s) for s in sandbox.nodes if s.role == REPLICA]
    wait_for(
        lambda: all(slave_status(r).get("Slave_IO_Running") == "Yes" for r in replicas),
        30,
        "the replicas to connect",
    )
    if semisync:
        source.query("SET GLOBAL rpl_semi_sync_master_enabled = ON")
        clients = str(len(replicas))
        wait_for(
            lambda: global_status(source, "Rpl_semi_sync_master_clients") == clients,
            30,
            "the source to count its semisync replicas",
        )


def _client_script(sandbox: Sandbox, spec: NodeSpec) -> None:
    path = sandbox.directory / spec.name
    script = path.with_name(f"{spec.name}.sh")
    script.write_text(
        f"#!/bin/sh\n# the mariadb client on {spec.name} ({spec.role}, port "
        f"{spec.port})\nexec mariadb -h127.0.0.1 -P{spec.port} -uroot "
        f"--prompt='{spec.name} [\\d]> ' \"$@\"\n"
    )
    script.chmod(0o755)


# -------------------------------------------------------------------- the others
def _start_order(spec: NodeSpec) -> int:
    """The order nodes start in: the etcd members, the source, the rest."""
    return {ETCD: 0, SOURCE: 1}.get(spec.role, 2)


def stop(sandbox: Sandbox) -> None:
    """Stop every node (in the reverse of the start order: etcd members last)."""
    for spec in sorted(sandbox.nodes, key=_start_order, reverse=True):
        sandbox.stop_node(spec)


def start(sandbox: Sandbox) -> None:
    """Start every node that is not running (etcd members, then the source); a group's
    members then form the group again (the first bootstraps it, as after a full
    shutdown).
    """
    for spec in sorted(sandbox.nodes, key=_start_order):
        sandbox.start_node(spec)
    if sandbox.topology == "group":
        _form_group(sandbox, lambda _: None)


def destroy(sandbox: Sandbox) -> None:
    """Stop every node and remove the directory."""
    stop(sandbox)
    shutil.rmtree(sandbox.directory)


def node_status(sandbox: Sandbox, spec: NodeSpec) -> dict[str, Any]:
    """What ``rpl sandbox status`` shows of one node."""
    row: dict[str, Any] = {
        "node": spec.name,
        "role": spec.role,
        "port": spec.port,
        "state": "stopped",
        "gtid_executed": "",
        "lag": "",
        "semisync": "",
    }
    if not sandbox.running(spec):
        return row
    if spec.role == ETCD:
        row["state"] = "running"
        return row
    server = sandbox.server(spec)
    if spec.role == MEMBER:
        return _member_status(server, row)
    try:
        row["gtid_executed"] = gtid_executed(server)
        replica = slave_status(server)
    except Exception as exc:  # noqa: BLE001 - any client error: show it, go on
        row["state"] = f"running, not answering ({exc})"
        return row
    row["state"] = "running"
    if replica:
        row["role"] = REPLICA
        io, sql = replica["Slave_IO_Running"], replica["Slave_SQL_Running"]
        row["state"] = f"running, IO {io}, SQL {sql}"
        lag = replica.get("Seconds_Behind_Master")
        row["lag"] = "" if lag is None else f"{lag} s"
    row["semisync"] = _semisync_counters(server, bool(replica))
    return row


def _semisync_counters(server: ServerProcess, replica: bool) -> str:
    values = dict(
        (str(k), str(v)) for k, v in server.query("SHOW GLOBAL STATUS LIKE 'Rpl_semi_sync%'")
    )
    if not values:
        return "-"
    if replica:
        return f"slave {values.get('Rpl_semi_sync_slave_status', '?')}"
    return (
        f"master {values.get('Rpl_semi_sync_master_status', '?')}, clients "
        f"{values.get('Rpl_semi_sync_master_clients', '?')}, yes_tx "
        f"{values.get('Rpl_semi_sync_master_yes_tx', '?')}, no_tx "
        f"{values.get('Rpl_semi_sync_master_no_tx', '?')}"
    )


def status(sandbox: Sandbox) -> list[dict[str, Any]]:
    """Every node's status row."""
    return [node_status(sandbox, spec) for spec in sandbox.nodes]


# -------------------------------------------------------------------- groups
def deploy_group(
    directory: Path,
    *,
    members: int = 3,
    multi_primary: bool = False,
    base_port: int = DEFAULT_BASE_PORT,
    options: Sequence[str] = (),
    say: Callable[[str], None] = lambda _: None,
) -> Sandbox:
    """A Group Replication group of ``members`` rpl servers, each with an etcd member of
    its own, in ``directory``, the servers started with ``options`` too; returns once
    every member is ONLINE.
    """
    if not 1 <= members <= 9:
        raise SandboxError("--members must be between 1 and 9")
    if (directory / DESCRIPTION).exists():
        raise SandboxError(
            f"{directory} already holds a sandbox: `rpl sandbox destroy --dir {directory}` first"
        )
    if shutil.which("etcd") is None:
        raise SandboxError("etcd is not installed (tools/system-packages installs etcd-server)")
    directory.mkdir(parents=True, exist_ok=True)
    port = free_block(base_port, 3 * members)
    client_ports = [port + members + 2 * i for i in range(members)]
    peer_ports = [p + 1 for p in client_ports]
    cluster = ",".join(f"etcd{i + 1}=http://127.0.0.1:{p}" for i, p in enumerate(peer_ports))
    seeds = ",".join(f"127.0.0.1:{p}" for p in client_ports)
    group_name = str(uuid.uuid4())
    nodes = [
        NodeSpec(
            f"etcd{i + 1}",
            ETCD,
            client_ports[i],
            0,
            [
                "--name",
                f"etcd{i + 1}",
                "--listen-client-urls",
                f"http://127.0.0.1:{client_ports[i]}",
                "--advertise-client-urls",
                f"http://127.0.0.1:{client_ports[i]}",
                "--listen-peer-urls",
                f"http://127.0.0.1:{peer_ports[i]}",
                "--initial-advertise-peer-urls",
                f"http://127.0.0.1:{peer_ports[i]}",
                "--initial-cluster",
                cluster,
                "--initial-cluster-token",
                group_name,
                "--experimental-watch-progress-notify-interval",
                "1s",
            ],
        )  # fmt: skip
        for i in range(members)
    ] + [
        NodeSpec(
            f"member{i + 1}",
            MEMBER,
            port + i,
            i + 1,
            [
                "--plugin-load=group_replication",
                f"{GROUP_NAME_OPTION}{group_name}",
                f"--group-replication-group-seeds={seeds}",
                f"--group-replication-local-address=127.0.0.1:{client_ports[i]}",
                f"--group-replication-single-primary-mode={'OFF' if multi_primary else 'ON'}",
                "--report-host=127.0.0.1",
                *options,
            ],
        )
        for i in range(members)
    ]
    sandbox = Sandbox(directory, "group", "off", nodes)
    sandbox.save()
    try:
        for spec in sorted(sandbox.nodes, key=_start_order):
            say(f"starting {spec.name} on port {spec.port}")
            sandbox.start_node(spec)
            if spec.role == MEMBER:
                _client_script(sandbox, spec)
        _form_group(sandbox, say)
    except BaseException:
        stop(sandbox)
        raise
    return sandbox


def _members(sandbox: Sandbox) -> list[NodeSpec]:
    return [n for n in sandbox.nodes if n.role == MEMBER]


def _form_group(sandbox: Sandbox, say: Callable[[str], None]) -> None:
    """Bootstrap the group on the first member, join the others, wait for ONLINE."""
    members = _members(sandbox)
    for index, spec in enumerate(members):
        server = sandbox.server(spec)
        say(f"{'bootstrapping the group on' if index == 0 else 'joining'} {spec.name}")
        wait_for(partial(_answers, server), 30, f"{spec.name} to answer")
        if index == 0:
            server.query("SET GLOBAL group_replication_bootstrap_group = ON")
        server.query("START GROUP_REPLICATION")
        if index == 0:
            server.query("SET GLOBAL group_replication_bootstrap_group = OFF")
    first = sandbox.server(members[0])
    wait_for(
        lambda: [r[0] for r in _view(first)] == ["ONLINE"] * len(members),
        120,
        "every member to be ONLINE",
    )


def _answers(server: ServerProcess) -> bool:
    try:
        server.query("SELECT 1")
    except Exception:  # noqa: BLE001 - not up yet
        return False
    return True


def _view(server: ServerProcess) -> list[tuple[Any, ...]]:
    return server.query(
        "SELECT MEMBER_STATE, MEMBER_ROLE, MEMBER_PORT "
        "FROM performance_schema.replication_group_members"
    )


def _member_status(server: ServerProcess, row: dict[str, Any]) -> dict[str, Any]:
    """A group member's state and role as the member itself sees them, and the view."""
    try:
        mine = server.query(
            "SELECT MEMBER_STATE, MEMBER_ROLE FROM performance_schema.replication_group_members "
            "WHERE MEMBER_ID = @@server_uuid"
        )
        row["gtid_executed"] = gtid_executed(server)
        view = _view(server)
    except Exception as exc:  # noqa: BLE001 - any client error: show it, go on
        row["state"] = f"running, not answering ({exc})"
        return row
    state, role = mine[0] if mine else ("OFFLINE", "")
    row["state"] = f"running, {state}"
    row["role"] = role.lower() if role else MEMBER
    row["view"] = " ".join(f"{p}:{s}" for s, _, p in view)
    return row
