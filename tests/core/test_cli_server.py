"""``rpl server`` on the console, as a user starts it: MySQL's ready line once it accepts
connections, and a data directory another server holds refused with error.log's hint."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

READY = re.compile(
    r"^rpl server: ready for connections\. Version: '8\.0\.36-rpl'  "
    r"socket: ''  port: (\d+)$"
)


@pytest.mark.timeout(60)  # without the ready line, readline waits for the server's end
def test_ready_line_then_a_second_server_on_the_directory_is_refused_with_a_hint(
    tmp_path: Path,
) -> None:
    datadir = tmp_path / "data"
    command = [
        sys.executable,
        "-m",
        "rpl.core.cli",
        "server",
        "--datadir",
        str(datadir),
        "--port",
        "0",
    ]
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as first:
        try:
            assert first.stdout is not None
            line = first.stdout.readline().rstrip("\n")
            ready = READY.match(line)
            assert ready, f"not MySQL's ready line: {line!r}"
            with socket.create_connection(("127.0.0.1", int(ready.group(1))), timeout=5):
                pass  # it accepts connections on the port it names
            second = subprocess.run(
                [*command[:-1], "0"], capture_output=True, text=True, timeout=60
            )
        finally:
            first.terminate()
            first.wait(30)
    assert second.returncode == 1
    assert second.stdout == ""
    assert second.stderr.splitlines() == [
        "rpl server: cannot start: Unable to lock ./rpl.lock error: 11",
        "rpl server: Check that you do not already have another rpl server process using "
        "the same data directory.",
    ]
