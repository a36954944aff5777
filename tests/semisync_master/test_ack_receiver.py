"""The ACK receiver thread against a hand-made semisync replica: malformed ACKs are logged
and that replica dropped, never a crash; a good ACK still releases a commit afterwards."""

from __future__ import annotations

import struct
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from rpl.core.testing.process import ServerProcess
from rpl.core.testing.suite.semisync import counter
from rpl.core.testing.topology import create_replication_user, wait_for

COM_BINLOG_DUMP = 0x12


@pytest.fixture
def source(tmp_path: Path) -> Any:
    server = ServerProcess(
        tmp_path / "source",
        options=[
            "--server-id",
            "1",
            "--plugin-load=rpl_semi_sync_master",
            "--rpl-semi-sync-master-timeout=20000",
        ],
    )
    server.start()
    create_replication_user(server)
    server.query("CREATE DATABASE d")
    server.query("CREATE TABLE d.t (id INT PRIMARY KEY)")
    server.query("SET GLOBAL rpl_semi_sync_master_enabled = ON")
    yield server
    server.kill()
    print(server.error_log()[-3000:])


def semisync_dump(source: ServerProcess) -> Any:
    """A connection that asked for a semisync binlog dump from the start (server_id 9)."""
    connection = source.connect(user="repl", password="repl-pw")
    with connection.cursor() as cursor:
        cursor.execute("SET @master_binlog_checksum = 'CRC32', @rpl_semi_sync_slave = 1")
    connection._execute_command(COM_BINLOG_DUMP, struct.pack("<IHI", 4, 0, 9) + b"binlog.000001")
    return connection


def send_raw(connection: Any, payload: bytes) -> None:
    """One packet with sequence id 0, as a replica's ACK is."""
    connection._sock.sendall(struct.pack("<I", len(payload))[:3] + b"\x00" + payload)


@pytest.mark.parametrize(
    "payload, why",
    [
        (b"\xef\x01", "length error"),
        (b"\x42" + bytes(8) + b"binlog.000001", "magic number error"),
        (b"\xef" + bytes(8) + b"../../etc/passwd", "not a file name"),
    ],
)
def test_malformed_ack_drops_the_replica_not_the_server(
    source: ServerProcess, payload: bytes, why: str
) -> None:
    bad = semisync_dump(source)
    wait_for(lambda: counter(source, "clients") == 1, 10, "the semisync dump")
    send_raw(bad, payload)
    wait_for(
        lambda: "malformed ACK from replica server_id 9" in source.error_log(),
        10,
        "the malformed ACK to be logged",
    )
    assert why in source.error_log()
    threads = source.query(
        "SELECT PROCESSLIST_STATE FROM performance_schema.threads "
        "WHERE NAME = 'thread/semisync/Ack_receiver'"
    )
    assert len(threads) == 1, "the ACK receiver thread goes on"
    bad.close()
    wait_for(lambda: counter(source, "clients") == 0, 20, "the bad replica's dump to end")

    good = semisync_dump(source)
    wait_for(lambda: counter(source, "clients") == 1, 10, "a second semisync dump")
    thread, end = waiting_commit(source)
    name, position = source.query("SHOW MASTER STATUS")[0][:2]
    send_raw(good, ack(str(name), int(position)))
    thread.join(10)
    assert end, "a good ACK released the commit"
    assert counter(source, "yes_tx") == 1 and counter(source, "no_tx") == 0
    good.close()


def ack(name: str, position: int) -> bytes:
    return b"\xef" + struct.pack("<Q", position) + name.encode()


def waiting_commit(source: ServerProcess) -> tuple[threading.Thread, list[int]]:
    """An INSERT committing in a thread, checked to be waiting for its ACK; the list gets
    an item once the commit returns."""
    end: list[int] = []

    def commit() -> None:
        source.query("INSERT INTO d.t VALUES (1)")
        end.append(1)

    thread = threading.Thread(target=commit, daemon=True)
    thread.start()
    time.sleep(0.3)
    assert not end, "the commit waits for an ACK"
    return thread, end


def test_acks_that_arrive_together_are_all_reported(source: ServerProcess) -> None:
    """Two ACKs in one segment: the connection may take both with one read, and the
    second (the one the commit waits for) must not stay unseen in its buffer."""
    replica = semisync_dump(source)
    wait_for(lambda: counter(source, "clients") == 1, 10, "the semisync dump")
    thread, end = waiting_commit(source)
    name, position = source.query("SHOW MASTER STATUS")[0][:2]
    payloads = [ack(str(name), 4), ack(str(name), int(position))]
    replica._sock.sendall(
        b"".join(struct.pack("<I", len(payload))[:3] + b"\x00" + payload for payload in payloads)
    )
    thread.join(15)
    assert end, "the second ACK released the commit"
    assert counter(source, "yes_tx") == 1 and counter(source, "no_tx") == 0
    replica.close()
