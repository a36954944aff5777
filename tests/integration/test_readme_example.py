"""The README's sections run as written: the observer example built from the README's own
text (its files written out, ``pip install``-ed, loaded into a server process and seen
working), the server and replication commands, and the sandbox commands.

What the test changes in a command, and only that: the README's ports and ``/tmp``
data directories become free ports and directories of the test, ``~`` is a home
directory of the test, and a server the README starts in the foreground runs in the
background. ``python3 -m venv`` and ``pip install`` of this repository's distributions
are the environment the test runs in (tox installs them; tests/integration/
test_packaging.py installs each into a fresh virtual environment): the test checks that
the README makes the virtual environment before it installs, and that what it installs
is installed. Everything else runs as the README has it, through bash.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import shlex
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from rpl.core.testing.process import free_port

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DISTRIBUTIONS = {
    "./observers": "rpl-observers",
    "./core": "rpl-core",
    "./semisync_master": "rpl-semisync-master",
    "./semisync_slave": "rpl-semisync-slave",
}


def section(heading: str) -> str:
    """The README's text under ``## heading``, up to the next section."""
    text = README.read_text()
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else None]


def blocks(text: str, language: str) -> list[str]:
    """The fenced code blocks of ``language`` in ``text``."""
    return re.findall(rf"^```{language}\n(.*?)^```", text, re.S | re.M)


def _code_end(line: str, quoted: bool) -> tuple[int, bool]:
    """Where the shell code of ``line`` ends (a comment starts), and whether a double
    quote is still open there; ``quoted``: one was open when the line began."""
    for index, char in enumerate(line):
        if char == '"':
            quoted = not quoted
        elif char == "#" and not quoted and (index == 0 or line[index - 1].isspace()):
            return index, quoted
    return len(line), quoted


def commands(block: str) -> list[str]:
    """The shell commands of a block, comments dropped; a command goes on over the
    lines a double-quoted string spans."""
    found: list[str] = []
    pending, quoted = "", False
    for line in block.splitlines():
        end, quoted = _code_end(line, quoted)
        pending += ("\n" if pending else "") + line[:end].rstrip()
        if not quoted:
            if pending.strip():
                found.append(pending.strip())
            pending = ""
    assert not pending, f"unbalanced quotes in {block!r}"
    return found


class Shell:
    """Runs README commands through bash, the README's ports and /tmp directories
    replaced by the test's, HOME the test's, servers started in the background."""

    def __init__(self, tmp_path: Path) -> None:
        self.cwd = tmp_path / "work"
        self.cwd.mkdir()
        home = tmp_path / "home"
        home.mkdir()
        bindir = str(Path(sys.executable).parent)
        self.env = {
            **os.environ,
            "HOME": str(home),
            "PATH": f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}",
        }
        self.replace: dict[str, str] = {}
        self.servers: list[subprocess.Popen[bytes]] = []
        self.tmp = tmp_path

    def substitute(self, command: str) -> str:
        """The command with the README's ports and /tmp data directories made the test's."""
        for port in sorted(set(re.findall(r"(?<![\d.])33\d\d(?!\d)", command))):
            self.replace.setdefault(port, str(free_port()))
        for datadir in set(re.findall(r"/tmp/rpl\d+", command)):
            self.replace.setdefault(datadir, str(self.tmp / datadir.rsplit("/", 1)[1]))
        for old, new in self.replace.items():
            command = re.sub(rf"(?<![\d.]){re.escape(old)}(?!\d)", new, command)
        return command

    def run(self, command: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        """Run a command to its end; a server command goes to the background instead."""
        command = self.substitute(command)
        if command.startswith("rpl server "):
            self.start_server(command.removesuffix("&").strip())
            return subprocess.CompletedProcess(command, 0, "", "")
        return subprocess.run(
            ["bash", "-c", command],
            cwd=self.cwd,
            env=self.env,
            text=True,
            input=stdin,
            capture_output=True,
            timeout=300,
        )

    def start_server(self, command: str) -> None:
        """``rpl server ...`` in the background, once it accepts connections."""
        port = int(re.search(r"--port (\d+)", command).group(1))  # type: ignore[union-attr]
        log = (self.tmp / f"server-{port}.out").open("wb")
        server = subprocess.Popen(
            ["bash", "-c", f"exec {command}"],
            cwd=self.cwd,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        self.servers.append(server)
        deadline = time.monotonic() + 60
        while True:
            assert server.poll() is None, (self.tmp / f"server-{port}.out").read_text()
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    return
            except OSError:
                assert time.monotonic() < deadline, f"{command}: no server on {port}"
                time.sleep(0.1)

    def stop(self) -> None:
        """SIGTERM every server started, and wait for each."""
        for server in self.servers:
            server.terminate()
        for server in self.servers:
            server.wait(60)


@pytest.fixture
def shell(tmp_path: Path) -> Iterator[Shell]:
    running = Shell(tmp_path)
    try:
        yield running
    finally:
        running.stop()


def installed(command: str) -> None:
    """A README ``pip install`` of this repository's distributions: each is installed
    in the environment the test runs in."""
    for path in shlex.split(command)[2:]:
        assert importlib.metadata.version(DISTRIBUTIONS[path]), path


def ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, f"{done.args}: {done.stdout}{done.stderr}"
    return done.stdout


def test_readme_observer_as_written(shell: Shell) -> None:
    """The README's two files written out as the README names them, the package built
    and installed with the README's ``pip install``, the README's server started with it
    and the README's client commands run: the plugin counts a commit and, paused,
    refuses one with its own message (ER_RUN_HOOK_ERROR with the observer's text)."""
    text = section("Writing an observer")
    files = blocks(text, "toml") + blocks(text, "python")
    assert len(files) == 2
    for code in files:
        first, _, body = code.partition("\n")
        path = shell.cwd / first.removeprefix("# ")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body)
    steps = commands(blocks(text, "sh")[0])
    assert [s.split()[0:2] for s in steps] == [
        ["pip", "install"],
        ["rpl", "plugins"],
        ["rpl", "server"],
        ["mariadb", "-h127.0.0.1"],
        ["mariadb", "-h127.0.0.1"],
    ]
    try:
        ok(shell.run(steps[0]))
        assert "commit_counter  (my-observer 1.0)" in ok(shell.run(steps[1]))
        shell.run(steps[2])
        assert "Commit_counter_commits\t3" in ok(shell.run(steps[3]))
        refused = shell.run(steps[4])
        assert refused.returncode == 1
        assert re.search(r"ERROR 3100 \(HY000\).*: commits are paused", refused.stderr), (
            refused.stderr
        )
    finally:
        subprocess.run(
            [sys.executable, "-m", "pip", "uninstall", "-q", "-y", "my-observer"], check=True
        )


def test_readme_server_and_replication_as_written(shell: Shell) -> None:
    """ "Run a server" and "Replicate": a virtual environment made before anything is
    installed, a server, the client on it, a replica started with the README's
    CHANGE MASTER and running both threads."""
    server = commands(blocks(section("Run a server"), "sh")[0])
    assert server[0].startswith("python3 -m venv ") and "bin/activate" in server[0]
    assert server[1].startswith("pip install ")
    installed(server[1])
    shell.run(server[2])
    assert "@@version\n8.0.36-rpl" in ok(shell.run(server[3], stdin="SELECT @@version;\n"))
    replicate = commands(blocks(section("Replicate"), "sh")[0])
    assert len(replicate) == 4
    shell.run(replicate[0])
    ok(shell.run(replicate[1]))
    ok(shell.run(replicate[2]))
    deadline = time.monotonic() + 30
    while True:
        shown = ok(shell.run(replicate[3]))
        if "Slave_IO_Running: Yes" in shown and "Slave_SQL_Running: Yes" in shown:
            break
        assert time.monotonic() < deadline, shown
        time.sleep(0.3)


def test_readme_sandbox_as_written(shell: Shell) -> None:
    """ "Sandboxes": deploy in ~/sandboxes/rpl, the node's client script, status, stop,
    start, destroy, each as the README has it (``rpl demo failover`` is left to the
    sandbox environment's tests/sandbox/test_demo.py, which runs it with Spark)."""
    steps = commands(blocks(section("Sandboxes"), "sh")[0])
    installed(steps[0])
    assert steps[-1] == "rpl demo failover"
    for step in steps[1:-1]:
        out = ok(shell.run(step))
        if step == "rpl sandbox status":
            assert "replica2" in out and "running" in out
    assert not (Path(shell.env["HOME"]) / "sandboxes" / "rpl").exists()
