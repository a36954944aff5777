"""Batching of sends (rpl.group_replication.gcs.batching): the framing round-trips and
refuses what is not a batch; concurrent senders share batches, each message is sent
once and in its sender's order, a failed batch fails every sender in it."""

from __future__ import annotations

import threading
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rpl.group_replication.gcs.batching import BatchError, SendBatcher, frame, split


@given(st.lists(st.binary(max_size=64), max_size=20))
def test_frame_and_split_round_trip(messages: list[bytes]) -> None:
    assert split(frame(messages)) == messages


@pytest.mark.parametrize(
    "data", [b"", b"\x01\x00", frame([b"abc"])[:-1], frame([b"abc"]) + b"x", b"\xff\xff\xff\xff"]
)
def test_what_is_not_a_batch_is_refused(data: bytes) -> None:
    with pytest.raises(BatchError):
        split(data)


def test_concurrent_senders_share_batches_and_each_message_goes_once() -> None:
    sent: list[list[bytes]] = []

    def send_batch(messages: list[bytes]) -> None:
        time.sleep(0.01)  # a round to the engine
        sent.append(messages)

    batcher = SendBatcher(send_batch, in_flight=2)

    def session(name: str) -> None:
        for n in range(20):
            batcher.send(f"{name}-{n}".encode())

    threads = [threading.Thread(target=session, args=(f"s{i}",)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    flat = [m for batch in sent for m in batch]
    assert sorted(flat) == sorted(f"s{i}-{n}".encode() for i in range(8) for n in range(20))
    for i in range(8):  # each session's messages in its own order
        mine = [m for m in flat if m.startswith(f"s{i}-".encode())]
        assert mine == [f"s{i}-{n}".encode() for n in range(20)]
    assert len(sent) < len(flat) / 2  # shared: 8 sessions, 2 rounds at a time
    assert batcher.messages == len(flat) and batcher.batches == len(sent)


def test_a_failed_batch_fails_each_of_its_senders_and_the_next_goes_on() -> None:
    calls: list[list[bytes]] = []
    release = threading.Event()

    def send_batch(messages: list[bytes]) -> None:
        calls.append(messages)
        if len(calls) == 1:
            release.wait(10)
            raise OSError("engine lost")

    batcher = SendBatcher(send_batch, in_flight=1)
    errors: list[str] = []

    def sender(message: bytes) -> None:
        try:
            batcher.send(message)
        except OSError as exc:
            errors.append(f"{message!r}: {exc}")

    first = threading.Thread(target=sender, args=(b"first",))
    first.start()
    while not calls:
        time.sleep(0.01)
    later = [threading.Thread(target=sender, args=(f"later{i}".encode(),)) for i in range(3)]
    for thread in later:
        thread.start()
    time.sleep(0.2)
    release.set()
    for thread in [first, *later]:
        thread.join(10)
    assert errors == ["b'first': engine lost"]
    assert sorted(m for batch in calls[1:] for m in batch) == [b"later0", b"later1", b"later2"]


@pytest.mark.parametrize("in_flight", [1, 3])
def test_at_most_in_flight_batches_at_once(in_flight: int) -> None:
    running, most = [0], [0]
    lock = threading.Lock()

    def send_batch(messages: list[bytes]) -> None:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.005)
        with lock:
            running[0] -= 1

    batcher = SendBatcher(send_batch, in_flight=in_flight)

    def session() -> None:
        for _ in range(30):
            batcher.send(b"m")

    threads = [threading.Thread(target=session) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert batcher.messages == 240
    assert most[0] == in_flight
