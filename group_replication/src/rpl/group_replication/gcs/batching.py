"""Sending many messages as one: what sessions send at once goes to the engine together.

A send on a busy group waits for the engine (an etcd put is a Raft round with an fsync
on a majority) while other sessions queue theirs. :class:`SendBatcher` lets a sender
lead while fewer than ``in_flight`` batches are on their way: it takes every message
queued, hands them to the engine as one batch, and wakes each sender once the batch is
ordered; whoever queued meanwhile forms the next batch, led by its first sender. A
sender with no batch ahead sends at once (no wait for company), so batching costs
nothing at one session and saves a round per extra message under load, as MySQL's XCom
batches what its sessions send; several batches on their way keep the engine's own
pipelining (etcd batches concurrent proposals into one Raft round).

A batch is framed as ``count`` (4 bytes, little-endian) then, per message, its length
(4 bytes) and its bytes; :func:`split` refuses anything else. Written by hand: a
length-prefixed list is all it is.
"""

from __future__ import annotations

import struct
import threading
from collections.abc import Callable

_U32 = struct.Struct("<I")
MAX_MESSAGES = 1024
"""Messages in one batch at most (a delivery's order is ``revision * 4096 + index``)."""
MAX_BYTES = 512 * 1024
"""Bytes in one batch at most, unless it is one message alone (etcd takes requests of
1.5 MiB by default)."""


class BatchError(ValueError):
    """A batch that does not split into messages."""


def frame(messages: list[bytes]) -> bytes:
    """The batch holding ``messages``, in order."""
    parts = [_U32.pack(len(messages))]
    for message in messages:
        parts.append(_U32.pack(len(message)))
        parts.append(message)
    return b"".join(parts)


def split(batch: bytes) -> list[bytes]:
    """The messages of ``batch``, in order; BatchError if it is not one."""
    if len(batch) < _U32.size:
        raise BatchError("a batch shorter than its count")
    (count,) = _U32.unpack_from(batch)
    if count > MAX_MESSAGES:
        raise BatchError(f"a batch of {count} messages (at most {MAX_MESSAGES})")
    messages, at = [], _U32.size
    for _ in range(count):
        if at + _U32.size > len(batch):
            raise BatchError("a batch cut short")
        (length,) = _U32.unpack_from(batch, at)
        at += _U32.size
        if at + length > len(batch):
            raise BatchError("a batch cut short")
        messages.append(batch[at : at + length])
        at += length
    if at != len(batch):
        raise BatchError(f"{len(batch) - at} bytes after a batch's messages")
    return messages


class _Slot:
    __slots__ = ("message", "done", "error", "leader")

    def __init__(self, message: bytes) -> None:
        self.message = message
        self.done = False
        """Its batch was sent (or failed: ``error``)."""
        self.error: Exception | None = None
        self.leader = False
        """It holds one of the ``in_flight`` leads (set under the batcher's lock)."""


class SendBatcher:
    """Sends through ``send_batch`` (which returns once its batch is ordered, or raises;
    up to ``in_flight`` calls run at once), batching what callers of :meth:`send` queue
    while ``in_flight`` batches are on their way.

    What holds (every change under one lock): ``_leaders`` is the number of senders
    holding a lead, at most ``in_flight``; a leader sends one batch, then hands its lead to
    the first queued sender that holds none, or gives it up; a leader whose message
    another leader's batch took gives its lead up. So while anything is queued a leader
    exists, and every message is in exactly one batch.
    """

    def __init__(self, send_batch: Callable[[list[bytes]], None], in_flight: int = 4) -> None:
        self._send_batch = send_batch
        self._in_flight = in_flight
        self._cond = threading.Condition()
        self._queued: list[_Slot] = []
        self._leaders = 0
        self.batches = 0
        """Batches sent so far."""
        self.messages = 0
        """Messages sent so far."""

    def send(self, message: bytes) -> None:
        """Return once ``message`` is ordered; the batch's exception if it failed."""
        slot = _Slot(message)
        with self._cond:
            self._queued.append(slot)
            if self._leaders < self._in_flight:
                self._leaders += 1
                slot.leader = True
            while not slot.leader and not slot.done:
                self._cond.wait()
            lead = slot.leader and not slot.done
            if slot.leader and slot.done:  # another leader's batch took this message
                self._give_up(slot)
        if lead:
            self._lead(slot)
        with self._cond:
            while not slot.done:
                self._cond.wait()
        if slot.error is not None:
            raise slot.error

    def _give_up(self, slot: _Slot) -> None:
        """``slot`` leads no more (caller holds the lock)."""
        slot.leader = False
        self._leaders -= 1

    def _lead(self, slot: _Slot) -> None:
        """Send the next batch (``slot``'s message first in it), then hand the lead on."""
        with self._cond:
            batch = self._take()
            if not batch:  # other leaders took every queued message meanwhile
                self._give_up(slot)
                self._cond.notify_all()
                return
        error: Exception | None = None
        try:
            self._send_batch([queued.message for queued in batch])
        except Exception as exc:  # noqa: BLE001 - every sender of the batch hears it
            error = exc
        with self._cond:
            for queued in batch:
                queued.error, queued.done = error, True
            if error is None:
                self.batches += 1
                self.messages += len(batch)
            self._give_up(slot)
            following = next((q for q in self._queued if not q.leader), None)
            if following is not None:
                following.leader = True
                self._leaders += 1
            self._cond.notify_all()

    def _take(self) -> list[_Slot]:
        """The next batch off the queue (caller holds the lock)."""
        taken, size = 0, 0
        for slot in self._queued:
            if taken and (taken == MAX_MESSAGES or size + len(slot.message) > MAX_BYTES):
                break
            taken += 1
            size += len(slot.message)
        batch, self._queued = self._queued[:taken], self._queued[taken:]
        return batch
