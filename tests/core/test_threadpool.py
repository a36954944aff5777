"""thread_handling=pool-of-threads: the pool alone over real sockets, then a real server.

The pool tests drive :class:`ThreadPool` with small connections over socket pairs whose
commands the test controls (answer, block announced, block unannounced), so each rule of
the pool is seen on its own: one worker serves many connections, an announced wait frees
the pool at once, an unannounced one after thread_pool_stall_limit, a pipelined command
is not forgotten, a closed connection is. The server tests run sysbench-like load, a row
lock wait and KILL against ``rpl server --thread-handling=pool-of-threads``.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from itertools import count
from pathlib import Path

import pymysql
import pytest

from rpl.core.execution.threadpool import ThreadPool
from rpl.core.net.packets import ConnectionClosed, PacketChannel, frame_packets
from rpl.core.testing.process import ServerProcess
from rpl.core.waits import thd_wait

_ids = count(1)


class PairConnection:
    """The server end of a socket pair, with what ThreadPool uses of a Connection: each
    command is handed to ``handler``, whose reply (if any) goes back."""

    def __init__(
        self, sock: socket.socket, handler: Callable[[bytes], bytes], idle_limit: float = 3600.0
    ) -> None:
        self.sock = sock
        self.channel = PacketChannel(sock)
        self.thread_id = next(_ids)
        self.handler = handler
        self.ended = threading.Event()
        self.idle_since: float | None = None
        self.idle_limit = idle_limit
        self.closed_idle = threading.Event()
        self.served_after_closing = False

    def wait_timeout(self) -> float:
        return self.idle_limit

    def close_idle(self) -> None:
        self.closed_idle.set()
        self.end()

    def command(self) -> bool:
        if self.closed_idle.is_set():
            self.served_after_closing = True
        self.channel.reset_sequence()
        self.channel.write(self.handler(self.channel.read()))
        return True

    def run(self, step: Callable[[], bool]) -> bool:
        try:
            if step():
                return True
        except (ConnectionClosed, OSError):
            pass
        self.end()
        return False

    def end(self) -> None:
        self.ended.set()
        self.channel.close()


class Client:
    """The client end: sends commands, reads replies (with a timeout)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.channel = PacketChannel(sock)

    def send(self, *payloads: bytes) -> None:
        frames = [b"".join(frame_packets(p, 0)[0]) for p in payloads]
        self.sock.sendall(b"".join(frames))

    def reply(self, timeout: float) -> bytes | None:
        """The next reply, or None if none came within ``timeout`` seconds."""
        self.sock.settimeout(timeout)
        self.channel.sequence = 1  # the reply to a command (sequence 0)
        try:
            return self.channel.read()
        except TimeoutError:
            return None


@pytest.fixture
def make_pool() -> Iterator[Callable[..., ThreadPool]]:
    pools: list[ThreadPool] = []

    def make(size: int = 1, stall_limit_ms: int = 60000, idle_timeout: int = 60) -> ThreadPool:
        pool = ThreadPool(
            size=lambda: size,
            max_threads=lambda: 64,
            stall_limit_ms=lambda: stall_limit_ms,
            idle_timeout=lambda: idle_timeout,
        )
        pool.start()
        pools.append(pool)
        return pool

    yield make
    for pool in pools:
        pool.stop()


def connect(
    pool: ThreadPool, handler: Callable[[bytes], bytes], idle_limit: float = 3600.0
) -> tuple[Client, PairConnection]:
    server_end, client_end = socket.socketpair()
    connection = PairConnection(server_end, handler, idle_limit)
    pool.add(connection)
    return Client(client_end), connection


def echo(payload: bytes) -> bytes:
    return b"echo:" + payload


def test_one_worker_serves_many_connections(make_pool: Callable[..., ThreadPool]) -> None:
    pool = make_pool(size=1)
    clients = [connect(pool, echo)[0] for _ in range(12)]
    for round_ in range(3):
        for number, client in enumerate(clients):
            client.send(f"{round_}-{number}".encode())
        for number, client in enumerate(clients):
            assert client.reply(5) == f"echo:{round_}-{number}".encode()
    assert pool.threads == 1


def blocking_handler(
    release: threading.Event, announced: bool, entered: threading.Event
) -> Callable[[bytes], bytes]:
    def handle(payload: bytes) -> bytes:
        entered.set()
        if announced:
            with thd_wait():
                release.wait(30)
        else:
            release.wait(30)
        return b"released"

    return handle


def test_announced_wait_lets_another_worker_serve_at_once(
    make_pool: Callable[..., ThreadPool],
) -> None:
    pool = make_pool(size=1, stall_limit_ms=60000)  # the stall check cannot help here
    release, entered = threading.Event(), threading.Event()
    blocked, _ = connect(pool, blocking_handler(release, True, entered))
    other, _ = connect(pool, echo)
    blocked.send(b"wait")
    assert entered.wait(5)
    other.send(b"hello")
    assert other.reply(5) == b"echo:hello"
    release.set()
    assert blocked.reply(5) == b"released"
    assert pool.threads == 2


def test_unannounced_wait_frees_the_pool_after_the_stall_limit(
    make_pool: Callable[..., ThreadPool],
) -> None:
    pool = make_pool(size=1, stall_limit_ms=300)
    release, entered = threading.Event(), threading.Event()
    blocked, _ = connect(pool, blocking_handler(release, False, entered))
    other, _ = connect(pool, echo)
    blocked.send(b"wait")
    assert entered.wait(5)
    started = time.monotonic()
    other.send(b"hello")
    assert other.reply(0.1) is None, "served while the only active worker was running"
    assert other.reply(5) == b"echo:hello"
    assert time.monotonic() - started < 2
    release.set()
    assert blocked.reply(5) == b"released"


def test_idle_workers_end_and_one_stays(make_pool: Callable[..., ThreadPool]) -> None:
    pool = make_pool(size=1, idle_timeout=1)
    release, entered = threading.Event(), threading.Event()
    blocked, _ = connect(pool, blocking_handler(release, True, entered))
    blocked.send(b"wait")
    assert entered.wait(5)
    other, _ = connect(pool, echo)
    other.send(b"a")
    assert other.reply(5) == b"echo:a"
    release.set()
    assert blocked.reply(5) == b"released"
    assert pool.threads == 2
    deadline = time.monotonic() + 10
    while pool.threads > 1 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert pool.threads == 1
    time.sleep(2.5)  # more idle timeouts: the last worker stays, and still listens
    assert pool.threads == 1
    other.send(b"b")
    assert other.reply(5) == b"echo:b"


def test_an_idle_connection_is_closed_a_working_one_is_not(
    make_pool: Callable[..., ThreadPool],
) -> None:
    pool = make_pool(size=1, stall_limit_ms=100)
    idle_client, idle = connect(pool, echo, idle_limit=1.0)
    busy_client, busy = connect(pool, echo, idle_limit=1.0)
    release, entered = threading.Event(), threading.Event()
    slow_client, slow = connect(pool, blocking_handler(release, True, entered), idle_limit=1.0)
    slow_client.send(b"held")  # its command runs (blocked) far past the idle limit
    assert entered.wait(5)
    deadline = time.monotonic() + 4
    while time.monotonic() < deadline:
        busy_client.send(b"ping")
        assert busy_client.reply(5) == b"echo:ping"
        time.sleep(0.3)
    assert idle.closed_idle.wait(5), "the idle connection was not closed"
    assert not busy.closed_idle.is_set(), "a connection sending every 0.3 s was closed"
    assert not slow.closed_idle.is_set(), "a connection whose command runs is not idle"
    assert not idle.served_after_closing
    assert idle_client.sock.recv(16) == b""  # its socket is closed
    release.set()
    assert slow_client.reply(5) == b"released"


def test_pipelined_commands_are_all_served(make_pool: Callable[..., ThreadPool]) -> None:
    pool = make_pool()
    client, _ = connect(pool, echo)
    client.send(b"one", b"two", b"three")  # one write: the epoll set shows it once
    assert [client.reply(5) for _ in range(3)] == [b"echo:one", b"echo:two", b"echo:three"]


def test_a_closed_connection_is_forgotten(make_pool: Callable[..., ThreadPool]) -> None:
    pool = make_pool()
    client, connection = connect(pool, echo)
    client.send(b"x")
    assert client.reply(5) == b"echo:x"
    client.sock.close()
    assert connection.ended.wait(5)
    other, _ = connect(pool, echo)
    other.send(b"still serving")
    assert other.reply(5) == b"echo:still serving"


# ------------------------------------------------------------------ a real server
@pytest.fixture
def pooled(tmp_path: Path) -> Iterator[ServerProcess]:
    server = ServerProcess(
        tmp_path / "data",
        options=[
            "--thread-handling=pool-of-threads",
            "--thread-pool-stall-limit=60000",
            "--innodb-lock-wait-timeout=30",
        ],
    ).start()
    yield server
    server.kill()


def test_pool_of_threads_server_under_concurrent_writers(pooled: ServerProcess) -> None:
    pooled.query("CREATE DATABASE p")
    pooled.query("CREATE TABLE p.t (id INT NOT NULL PRIMARY KEY, who INT, n INT)")

    def write(who: int) -> None:
        connection = pooled.connect(autocommit=True)
        with connection.cursor() as cursor:
            for n in range(40):
                cursor.execute(f"INSERT INTO p.t VALUES ({who * 1000 + n}, {who}, {n})")
            cursor.execute("BEGIN")
            cursor.execute(f"UPDATE p.t SET n = n + 100 WHERE who = {who}")
            cursor.execute("COMMIT")
        connection.close()

    writers = [threading.Thread(target=write, args=(who,)) for who in range(16)]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join(60)
    assert pooled.query("SELECT COUNT(*), MIN(n), MAX(n) FROM p.t") == [(640, 100, 139)]
    assert pooled.query("SELECT @@thread_handling, @@thread_pool_size") == [("pool-of-threads", 1)]
    status = dict(pooled.query("SHOW GLOBAL STATUS LIKE 'Threadpool%'"))
    assert 1 <= int(status["Threadpool_threads"]) <= 64


def test_row_lock_wait_does_not_hold_up_the_pool(pooled: ServerProcess) -> None:
    """With one active worker and a 60 s stall limit, only the lock wait's thd_wait lets
    the holder's COMMIT (and anyone else) run while the waiter waits."""
    pooled.query("CREATE DATABASE p")
    pooled.query("CREATE TABLE p.t (id INT NOT NULL PRIMARY KEY, v INT)")
    pooled.query("INSERT INTO p.t VALUES (1, 0)")
    holder = pooled.connect(autocommit=True, read_timeout=10)
    waiter = pooled.connect(autocommit=True, read_timeout=30)
    other = pooled.connect(autocommit=True, read_timeout=10)
    with holder.cursor() as cursor:
        cursor.execute("BEGIN")
        cursor.execute("UPDATE p.t SET v = 1 WHERE id = 1")
    waited: list[BaseException] = []

    def wait_for_the_lock() -> None:
        try:
            with waiter.cursor() as cursor:
                cursor.execute("UPDATE p.t SET v = 2 WHERE id = 1")
        except BaseException as error:  # noqa: BLE001 - reported below
            waited.append(error)

    thread = threading.Thread(target=wait_for_the_lock)
    thread.start()
    deadline = time.monotonic() + 10
    while (
        time.monotonic() < deadline
        and pooled.query("SHOW GLOBAL STATUS LIKE 'Innodb_row_lock_current_waits'")[0][1] != "1"
    ):
        time.sleep(0.05)
    asked = time.monotonic()
    with other.cursor() as cursor:
        cursor.execute("SELECT 1")
        assert cursor.fetchall() == ((1,),)
    assert time.monotonic() - asked < 5, "a session waited for the lock waiter's worker"
    with holder.cursor() as cursor:
        cursor.execute("COMMIT")
    thread.join(30)
    assert not waited and not thread.is_alive()
    assert pooled.query("SELECT v FROM p.t") == [(2,)]


def test_kill_ends_an_idle_pooled_connection(pooled: ServerProcess) -> None:
    victim = pooled.connect(autocommit=True, read_timeout=10)
    victim_id = victim.thread_id()
    connected = int(dict(pooled.query("SHOW STATUS LIKE 'Threads_connected'"))["Threads_connected"])
    pooled.query(f"KILL {victim_id}")
    deadline = time.monotonic() + 10
    while (
        time.monotonic() < deadline
        and int(dict(pooled.query("SHOW STATUS LIKE 'Threads_connected'"))["Threads_connected"])
        >= connected
    ):
        time.sleep(0.05)
    with pytest.raises(pymysql.err.OperationalError):
        with victim.cursor() as cursor:
            cursor.execute("SELECT 1")
    assert victim_id not in [row[0] for row in pooled.query("SHOW PROCESSLIST")]


def test_thread_handling_is_read_only(pooled: ServerProcess) -> None:
    with pytest.raises(pymysql.err.OperationalError) as refused:
        pooled.query("SET GLOBAL thread_handling = 'one-thread-per-connection'")
    assert refused.value.args[0] == 1238
    pooled.query("SET GLOBAL thread_pool_size = 2")
    assert pooled.query("SELECT @@thread_pool_size") == [(2,)]
