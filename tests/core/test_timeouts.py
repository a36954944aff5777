"""Connections that hold the server without working: a client that never logs in is
closed after ``connect_timeout`` and can make the server read no more than a small
bound; a session idle past its ``wait_timeout`` gets MySQL's 4031 and is closed, in a
thread of its own and in the pool; an interactive client gets ``interactive_timeout``.

Every wait here is bounded (a socket timeout, a deadline), and each test stops by itself.
"""

from __future__ import annotations

import socket
import struct
import time
from collections.abc import Iterator
from pathlib import Path

import pymysql
import pytest
from pymysql.constants import CLIENT

from rpl.core.testing.process import ServerProcess

IDLE_NOTE = "(Got timeout reading communication packets)"


@pytest.fixture(params=["one-thread-per-connection", "pool-of-threads"])
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ServerProcess]:
    process = ServerProcess(
        tmp_path / "data",
        options=["--connect-timeout=2", f"--thread-handling={request.param}"],
    ).start()
    yield process
    process.stop()


def greeted(server: ServerProcess) -> socket.socket:
    """A raw connection that has read the server's handshake and sent nothing."""
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    header = sock.recv(4, socket.MSG_WAITALL)
    length = header[0] | header[1] << 8 | header[2] << 16
    sock.recv(length, socket.MSG_WAITALL)
    return sock


def closed_by_server(sock: socket.socket, deadline: float) -> bytes:
    """What the server sent before closing ``sock`` (an error packet or nothing); fails
    if it is still open at ``deadline``."""
    received = b""
    while time.monotonic() < deadline:
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            continue
        except ConnectionResetError:
            return received
        if not chunk:
            return received
        received += chunk
    raise AssertionError("the server kept the connection open")


def rss_kib(server: ServerProcess) -> int:
    assert server.process is not None
    for line in Path(f"/proc/{server.process.pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_a_client_that_never_logs_in_is_closed_after_connect_timeout(
    server: ServerProcess,
) -> None:
    sock = greeted(server)
    try:
        sock.settimeout(1)
        assert closed_by_server(sock, time.monotonic() + 20) == b""
    finally:
        sock.close()
    assert "user: 'unauthenticated'" in server.error_log()
    assert IDLE_NOTE in server.error_log()
    assert server.query("SELECT 1") == [(1,)]


def test_a_huge_packet_before_the_login_is_refused_unread(server: ServerProcess) -> None:
    before = rss_kib(server)
    for _ in range(3):
        sock = greeted(server)
        try:
            sock.sendall(struct.pack("<I", 0xFFFFFF | 1 << 24))  # 16 MiB - 1, sequence 1
            try:
                for _ in range(256):  # 16 MiB, unless the server stops reading first
                    sock.sendall(b"\0" * 65536)
            except (BrokenPipeError, ConnectionResetError):
                pass
            sock.settimeout(5)
            answer = closed_by_server(sock, time.monotonic() + 20)
        finally:
            sock.close()
        if answer:  # the ERR packet, unless the reset overtook it
            assert answer[4] == 0xFF and struct.unpack("<H", answer[5:7])[0] == 1153
    grown = rss_kib(server) - before
    assert grown < 16 * 1024, (
        f"the server grew by {grown} KiB for three unauthenticated 16 MiB frames"
    )
    assert server.query("SELECT 1") == [(1,)]


def test_an_idle_session_gets_4031_after_wait_timeout(server: ServerProcess) -> None:
    idle = server.connect()
    busy = server.connect()
    try:
        for connection in (idle, busy):
            with connection.cursor() as cursor:
                cursor.execute("SET SESSION wait_timeout = 2")
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:  # busy works every half second: it stays
            with busy.cursor() as cursor:
                cursor.execute("SELECT 1")
            time.sleep(0.5)
        with pytest.raises(pymysql.MySQLError) as closed, idle.cursor() as cursor:
            cursor.execute("SELECT 1")
        assert closed.value.args == (
            4031,
            "The client was disconnected by the server because of inactivity. See "
            "wait_timeout and interactive_timeout for configuring this behavior.",
        )
        with busy.cursor() as cursor:
            cursor.execute("SELECT 2")
            assert cursor.fetchall() == ((2,),)
    finally:
        busy.close()
    assert IDLE_NOTE in server.error_log()
    assert server.query("SELECT 1") == [(1,)]


def test_an_interactive_client_gets_interactive_timeout(server: ServerProcess) -> None:
    server.query("SET GLOBAL interactive_timeout = 7")
    interactive = server.connect(client_flag=CLIENT.INTERACTIVE)
    try:
        with interactive.cursor() as cursor:
            cursor.execute("SELECT @@SESSION.wait_timeout")
            assert cursor.fetchall() == ((7,),)
    finally:
        interactive.close()
    assert server.query("SELECT @@SESSION.wait_timeout") == [(28800,)]


def test_connect_timeout_is_a_global_variable(server: ServerProcess) -> None:
    assert server.query("SELECT @@GLOBAL.connect_timeout") == [(2,)]
    with pytest.raises(pymysql.MySQLError) as refused:
        server.query("SET SESSION connect_timeout = 5")
    assert refused.value.args[0] == 1229
