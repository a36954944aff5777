"""The test kit's ports: each pytest-xdist worker draws from a slot of its own below the
ephemeral range, a port in use is skipped, and a server counts as started only when it
greets like a MySQL server (not when anything at all accepts on its port)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest

from rpl.core.testing import process
from rpl.core.testing.process import free_port, greets, port_free


def slot_of(monkeypatch: pytest.MonkeyPatch, worker: str | None) -> range:
    if worker is None:
        monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    else:
        monkeypatch.setenv("PYTEST_XDIST_WORKER", worker)
    return process._port_slot()


def test_workers_draw_from_disjoint_slots_below_the_ephemeral_range(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    slots = [slot_of(monkeypatch, f"gw{n}") for n in range(process.PORT_SLOTS - 1)]
    slots.append(slot_of(monkeypatch, None))
    ports = [port for slot in slots for port in slot]
    assert len(ports) == len(set(ports)) == process.PORT_SLOTS * process.PORT_SLOT_SIZE
    assert max(ports) < process._ephemeral_low()
    assert 23306 not in ports  # the sandbox's default base port


def test_free_port_stays_in_its_slot_and_does_not_repeat(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    slot = slot_of(monkeypatch, "gw3")
    handed = [free_port() for _ in range(50)]
    assert all(port in slot for port in handed)
    assert len(set(handed)) == len(handed)


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """A socket listening on a port of this worker's slot, that never sends a byte."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", free_port()))
    sock.listen(8)
    yield sock
    sock.close()


def test_a_port_in_use_is_skipped(listener: socket.socket) -> None:
    taken = listener.getsockname()[1]
    assert not port_free(taken)
    slot = process._port_slot()
    for _ in slot:  # a whole turn of the slot never hands out the taken port
        assert free_port() != taken


def test_a_silent_listener_is_not_taken_for_a_server(listener: socket.socket) -> None:
    assert not greets(listener.getsockname()[1])


def test_a_greeting_is_recognised() -> None:
    """A handshake packet (protocol 10) counts; so would an error packet."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", free_port()))
        sock.listen(1)

        def greet() -> None:
            conn, _ = sock.accept()
            with conn:
                conn.sendall(b"\x05\x00\x00\x00\x0a8.0.")

        thread = threading.Thread(target=greet)
        thread.start()
        assert greets(sock.getsockname()[1])
        thread.join()
