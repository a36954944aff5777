"""The MySQL protocol against a real server process: clients we did not write, and bad input."""

from __future__ import annotations

import socket
import struct

import pymysql
import pytest

from rpl.core.net.handshake import client_token


def _packet(seq: int, payload: bytes) -> bytes:
    return struct.pack("<I", len(payload))[:3] + bytes((seq,)) + payload


def _read_packet(sock: socket.socket) -> tuple[int, bytes]:
    header = b""
    while len(header) < 4:
        chunk = sock.recv(4 - len(header))
        if not chunk:
            raise ConnectionError("closed")
        header += chunk
    length = int.from_bytes(header[:3], "little")
    body = b""
    while len(body) < length:
        chunk = sock.recv(length - len(body))
        if not chunk:
            raise ConnectionError("closed")
        body += chunk
    return header[3], body


def _handshake(port: int) -> tuple[socket.socket, bytes]:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    _, greeting = _read_packet(sock)
    assert greeting[0] == 10
    rest = greeting[1:]
    version_end = rest.index(b"\0")
    rest = rest[version_end + 1 + 4 :]
    scramble = rest[:8]
    rest = rest[8 + 1 + 2 + 1 + 2 + 2 + 1 + 10 :]
    scramble += rest[:12]
    return sock, scramble


def _response(user: bytes, token: bytes, plugin: bytes) -> bytes:
    caps = 0x00000200 | 0x00008000 | 0x00080000 | 0x00000001
    return (
        struct.pack("<IIB", caps, 1 << 24, 255)
        + b"\0" * 23
        + user
        + b"\0"
        + bytes((len(token),))
        + token
        + plugin
        + b"\0"
    )


def test_pymysql_round_trip(server) -> None:  # type: ignore[no-untyped-def]
    connection = server.connect()
    with connection.cursor() as cursor:
        cursor.execute("SELECT @@version, @@version_comment, 1 + 2, CONNECTION_ID() > 0")
        version, comment, three, positive = cursor.fetchone()
    assert version.startswith("8.0.") and "rpl" in comment
    assert (three, positive) == (3, 1)
    connection.ping()
    connection.close()


def test_wrong_password_is_1045(server) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(pymysql.err.OperationalError) as info:
        server.connect(password="wrong")
    assert info.value.args[0] == 1045
    assert "Access denied for user 'root'@'127.0.0.1' (using password: YES)" in info.value.args[1]


def test_auth_switch_for_another_plugin(server) -> None:  # type: ignore[no-untyped-def]
    sock, _ = _handshake(server.port)
    sock.sendall(_packet(1, _response(b"root", b"", b"caching_sha2_password")))
    seq, switch = _read_packet(sock)
    assert switch[0] == 0xFE and switch[1:].startswith(b"mysql_native_password\0")
    scramble = switch[len(b"\xfemysql_native_password\0") : -1]
    assert len(scramble) == 20
    sock.sendall(_packet(seq + 1, client_token("", scramble)))
    _, reply = _read_packet(sock)
    assert reply[0] == 0x00, reply
    sock.close()


def test_auth_switch_checks_the_password(server) -> None:  # type: ignore[no-untyped-def]
    server.query("CREATE USER IF NOT EXISTS 'sw'@'%' IDENTIFIED BY 'secret'")
    sock, _ = _handshake(server.port)
    sock.sendall(_packet(1, _response(b"sw", b"", b"caching_sha2_password")))
    seq, switch = _read_packet(sock)
    scramble = switch[len(b"\xfemysql_native_password\0") : -1]
    sock.sendall(_packet(seq + 1, client_token("not-it", scramble)))
    _, reply = _read_packet(sock)
    assert reply[0] == 0xFF and struct.unpack("<H", reply[1:3])[0] == 1045
    sock.close()
    login = server.connect(user="sw", password="secret")
    login.close()


def test_init_db_and_unknown_database(server) -> None:  # type: ignore[no-untyped-def]
    server.query("CREATE DATABASE IF NOT EXISTS proto")
    connection = server.connect()
    connection.select_db("proto")
    with connection.cursor() as cursor:
        cursor.execute("SELECT DATABASE()")
        assert cursor.fetchone() == ("proto",)
    with pytest.raises(pymysql.err.OperationalError) as info:
        connection.select_db("nope")
    assert info.value.args[0] == 1049
    connection.close()
    with pytest.raises(pymysql.err.OperationalError) as info:
        server.connect(database="nope")
    assert info.value.args[0] == 1049


def test_multi_packet_payloads(server) -> None:  # type: ignore[no-untyped-def]
    """A statement and a result row larger than one 16 MiB packet."""
    big = "x" * (17 * 1024 * 1024)
    connection = server.connect()
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT '{big}' AS v, 7")
        value, seven = cursor.fetchone()
    assert len(value) == len(big) and seven == 7
    connection.close()


@pytest.mark.parametrize(
    "garbage",
    [
        b"\x05\x00\x00\x00\x03SEL",  # payload shorter than its length
        b"\xff\xff\xff\x00" + b"\x03" * 100,  # huge length field, then the peer stops
        b"\x01\x00\x00\x07\x03",  # wrong sequence id
        b"\x00\x00\x00\x00",  # empty command
        b"\x01\x00\x00\x00\x99",  # unknown command
    ],
)
def test_bad_packets_do_not_hurt_other_sessions(server, garbage: bytes) -> None:  # type: ignore[no-untyped-def]
    bystander = server.connect()
    sock, scramble = _handshake(server.port)
    sock.sendall(
        _packet(1, _response(b"root", client_token("", scramble), b"mysql_native_password"))
    )
    _, ok = _read_packet(sock)
    assert ok[0] == 0
    sock.sendall(garbage)
    sock.shutdown(socket.SHUT_WR)
    try:
        _, reply = _read_packet(sock)
        assert reply[0] == 0xFF, reply
    except ConnectionError:
        pass
    sock.close()
    with bystander.cursor() as cursor:
        cursor.execute("SELECT 42")
        assert cursor.fetchone() == (42,)
    server.query("SELECT 1")


def test_malformed_handshake_response(server) -> None:  # type: ignore[no-untyped-def]
    sock, _ = _handshake(server.port)
    sock.sendall(_packet(1, b"\x01\x02"))
    try:
        _, reply = _read_packet(sock)
        assert reply[0] == 0xFF
    except ConnectionError:
        pass
    sock.close()
    assert server.query("SELECT 5") == [(5,)]


def test_packet_too_large_is_1153(server) -> None:  # type: ignore[no-untyped-def]
    server.query("SET GLOBAL max_allowed_packet = 1048576")
    try:
        sock, scramble = _handshake(server.port)
        sock.sendall(
            _packet(1, _response(b"root", client_token("", scramble), b"mysql_native_password"))
        )
        assert _read_packet(sock)[1][0] == 0
        sock.sendall(struct.pack("<I", 2 * 1024 * 1024)[:3] + b"\x00" + b"\x03SELECT 1")
        _, reply = _read_packet(sock)
        assert reply[0] == 0xFF and struct.unpack("<H", reply[1:3])[0] == 1153
        assert b"max_allowed_packet" in reply
        sock.close()
    finally:
        server.query("SET GLOBAL max_allowed_packet = 67108864")
    assert server.query("SELECT 6") == [(6,)]
