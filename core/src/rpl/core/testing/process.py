"""An rpl server as a real child process, for tests that kill, restart and inspect it.

The process runs ``python -m rpl.core.cli server`` with its own data directory and a
free port; :meth:`ServerProcess.kill` is a real SIGKILL, so crash tests see exactly
what a crashed mysqld leaves behind.
"""

from __future__ import annotations

import itertools
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any


def port_free(port: int) -> bool:
    """Whether nothing listens on 127.0.0.1:``port`` and a server could bind it (with
    SO_REUSEADDR, as servers do: connections in TIME_WAIT do not count).
    """
    with socket.socket() as probe:
        probe.settimeout(0.2)
        if probe.connect_ex(("127.0.0.1", port)) == 0:
            return False
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server binds
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


PORT_SLOTS = 16
"""How many processes at once (pytest-xdist workers, by their number) get ports of their
own from :func:`free_port`."""
PORT_SLOT_SIZE = 512
"""Ports per slot: the slots fill the 8,192 ports just below the ephemeral range (24576 to
32767 by Linux's default), above the sandbox's default base port 23306."""


def _ephemeral_low() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768  # Linux's default


def _port_slot() -> range:
    """This process's ports: a slot below the kernel's ephemeral range, by xdist worker."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    slot = int(worker[2:]) % (PORT_SLOTS - 1) if worker[2:].isdigit() else PORT_SLOTS - 1
    base = _ephemeral_low() - PORT_SLOTS * PORT_SLOT_SIZE + slot * PORT_SLOT_SIZE
    return range(base, base + PORT_SLOT_SIZE)


_turns = itertools.count(os.getpid() * 97)
"""Where this process is in its slot (processes sharing a worker's slot start apart)."""


def free_port() -> int:
    """A TCP port nothing listens on right now, for a server about to start.

    A port the kernel picks (bind to 0) may be handed to another process before this
    one's server binds it, or taken meanwhile as the local end of an outgoing connection:
    a test then talks to somebody else's server. So the ports come from a slot of their
    own per pytest-xdist worker, below the ephemeral range, handed out in turn (a port
    handed out here comes back only after the whole slot has), each checked free.
    """
    slot = _port_slot()
    if slot.start < 1024:  # an unusual ephemeral range: let the kernel choose
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port: int = sock.getsockname()[1]
            return port
    for _ in slot:
        port = slot[next(_turns) % len(slot)]
        if port_free(port):
            return port
    raise OSError(f"no free port in {slot.start}..{slot.stop - 1}")


def greets(port: int) -> bool:
    """Whether a MySQL server answers on 127.0.0.1:``port``: its first packet is a
    handshake (protocol 10) or an error packet. Something else listening there (say an
    etcd member) sends nothing first, and is not taken for the server.
    """
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
            sock.settimeout(2.0)
            header = sock.recv(5)
    except OSError:
        return False
    return len(header) == 5 and header[4] in (0x0A, 0xFF)


THREAD_HANDLING_ENV = "RPL_THREAD_HANDLING"
"""When set, the servers started here use that ``thread_handling`` unless their options
name one (tox's core_compiled runs its suites on ``pool-of-threads``, the benchmark's)."""

SERVER_PYTHON_ENV = "RPL_SERVER_PYTHON"
"""When set, the servers started here run on that executable (it takes Python's arguments)
instead of this process's interpreter: tools/ab-builds pairs an interpreter that cannot run
the benchmark itself, behind a wrapper script, with the usual one."""


class ServerProcess:
    """One ``rpl server`` child process."""

    def __init__(
        self,
        datadir: Path,
        port: int | None = None,
        options: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.datadir = datadir
        self.port = port or free_port()
        self.options = list(options)
        self.env = dict(env or {})
        """Variables set for the child over this process's environment."""
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, *extra: str, timeout: float = 30.0) -> ServerProcess:
        """Start the server and wait until it accepts connections."""
        python = os.environ.get(SERVER_PYTHON_ENV) or sys.executable
        command = [
            python,
            "-m",
            "rpl.core.cli",
            "server",
            "--datadir",
            str(self.datadir),
            "--port",
            str(self.port),
            *self.options,
            *extra,
        ]
        handling = os.environ.get(THREAD_HANDLING_ENV)
        if handling and not any(o.startswith("--thread-handling") for o in command):
            command.append(f"--thread-handling={handling}")
        self.datadir.mkdir(parents=True, exist_ok=True)
        log = (self.datadir.parent / f"{self.datadir.name}.stdout").open("ab")
        self.process = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **self.env}
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"rpl server exited with {self.process.returncode}: {self.error_log()[-2000:]}"
                )
            if greets(self.port):
                return self
            time.sleep(0.05)
        raise TimeoutError(f"rpl server did not listen on {self.port}")

    def connect(self, **kwargs: Any) -> Any:
        """A PyMySQL connection as root (autocommit on unless told otherwise)."""
        import pymysql

        kwargs.setdefault("user", "root")
        kwargs.setdefault("password", "")
        kwargs.setdefault("autocommit", True)
        return pymysql.connect(host="127.0.0.1", port=self.port, **kwargs)

    def query(self, sql: str, **login: Any) -> list[tuple[Any, ...]]:
        """Run one statement on a new connection (root's unless ``login`` names another
        account, as :meth:`connect` takes it); its rows.
        """
        connection = self.connect(**login)
        try:
            with connection.cursor() as cursor:
                cursor.execute(sql)
                return list(cursor.fetchall())
        finally:
            connection.close()

    def arm_crash_point(self, point: str) -> None:
        """``SET GLOBAL debug = '+d,<point>'``. A busy server may reach the point and
        kill itself before it answers; that lost connection (2006/2013) is expected.
        """
        import pymysql

        try:
            self.query(f"SET GLOBAL debug = '+d,{point}'")
        except pymysql.err.OperationalError as exc:
            if exc.args[0] not in (2006, 2013):
                raise

    def kill(self) -> None:
        """SIGKILL, then reap."""
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def stop(self, timeout: float = 30.0) -> int:
        """SIGTERM (a clean shutdown); the exit code."""
        if self.process is None:
            return 0
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()
        return self.process.returncode

    def wait_exit(self, timeout: float = 30.0) -> int:
        """Wait for the process to end by itself (SHUTDOWN, a crash point)."""
        assert self.process is not None
        return self.process.wait(timeout)

    def error_log(self) -> str:
        """The error log's text."""
        path = self.datadir / "error.log"
        return path.read_text() if path.exists() else ""
