"""The group communication interface's guarantees (rpl.group_replication.gcs.interface),
checked on each binding: the in-memory one and etcd on three real etcd members (each
handle starting from a different etcd member).
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from rpl.core.testing.group import EtcdMembers, wait_until
from rpl.group_replication.gcs import Gcs, GcsError, GcsMember, GcsMessage, GcsView
from rpl.group_replication.gcs.etcd import EtcdGcs
from rpl.group_replication.gcs.memory import MemoryGroup

Event = tuple[object, ...]


class Recorder:
    """A listener that records what it hears, in order."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.errors: list[str] = []
        self.payloads: list[bytes] = []
        self.overlaps = 0
        self._busy = threading.Lock()

    def _hear(self, event: Event) -> None:
        if not self._busy.acquire(blocking=False):
            self.overlaps += 1  # two callbacks at once
            return
        try:
            self.events.append(event)
        finally:
            self._busy.release()

    def on_message(self, message: GcsMessage) -> None:
        self.payloads.append(message.payload)
        self._hear(("message", message.sender, message.payload))

    def on_view_changed(self, view: GcsView) -> None:
        members = tuple(sorted(m.member_id for m in view.members))
        self._hear(("view", members, view.joined, view.left))

    def on_suspicions(self, suspected: tuple[str, ...]) -> None:
        pass

    def on_error(self, reason: str) -> None:
        self.errors.append(reason)

    def messages(self) -> list[Event]:
        return [e for e in self.events if e[0] == "message"]

    def since_view_joining(self, member_id: str) -> list[Event]:
        """The events from the view where ``member_id`` joined on."""
        for index, event in enumerate(self.events):
            if event[0] == "view" and member_id in event[2]:  # type: ignore[operator]
                return self.events[index:]
        raise AssertionError(f"no view where {member_id} joined: {self.events}")


Binding = Callable[[], Gcs]


@pytest.fixture(params=["memory", "etcd"])
def binding(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Binding]:
    """A factory of member handles on one fresh group of the binding."""
    handles: list[Gcs] = []
    if request.param == "memory":
        group = MemoryGroup()

        def make() -> Gcs:
            handles.append(group.handle())
            return handles[-1]

        yield make
    else:
        etcd = EtcdMembers(tmp_path / "etcd").start()
        name = str(uuid.uuid4())

        def make() -> Gcs:
            endpoints = etcd.endpoints
            turn = len(handles) % len(endpoints)
            handles.append(EtcdGcs(endpoints[turn:] + endpoints[:turn], name, ttl=10))
            return handles[-1]

        yield make
        for handle in handles:
            handle.leave()
        etcd.stop()
        return
    for handle in handles:
        handle.leave()


def _member(name: str) -> GcsMember:
    return GcsMember(name, "127.0.0.1", 3306, "8.0.36")


def _join(binding: Binding, name: str, bootstrap: bool = False) -> tuple[Gcs, Recorder]:
    gcs, recorder = binding(), Recorder()
    gcs.join(_member(name), recorder, bootstrap=bootstrap)
    wait_until(lambda: any(e[0] == "view" and name in e[2] for e in recorder.events), 30)  # type: ignore[operator]
    return gcs, recorder


def test_one_total_order_for_every_member_the_sender_included(binding: Binding) -> None:
    a, heard_a = _join(binding, "a", bootstrap=True)
    b, heard_b = _join(binding, "b")
    c, heard_c = _join(binding, "c")
    wait_until(lambda: len([e for e in heard_a.events if e[0] == "view"]) == 3, 30)
    sent = [
        (gcs, f"{name}{n}".encode())
        for gcs, name in ((a, "a"), (b, "b"), (c, "c"))
        for n in range(20)
    ]

    def send_half(half: int) -> None:
        for gcs, payload in sent[half::2]:
            gcs.send(payload)

    senders = [threading.Thread(target=send_half, args=(h,)) for h in (0, 1)]
    for thread in senders:
        thread.start()
    for thread in senders:
        thread.join(60)
    heard = (heard_a, heard_b, heard_c)
    wait_until(lambda: all(len(r.messages()) == len(sent) for r in heard), 60)
    payloads = sorted(p for _, p in sent)
    for recorder in heard:
        assert sorted(recorder.payloads) == payloads  # each once
        assert not recorder.errors
        assert recorder.overlaps == 0  # one callback at a time
    assert heard_a.since_view_joining("c") == heard_b.since_view_joining("c")
    assert heard_b.since_view_joining("c") == heard_c.events
    assert heard_a.since_view_joining("b") == heard_b.events


def test_views_come_at_one_place_in_the_order(binding: Binding) -> None:
    a, heard_a = _join(binding, "a", bootstrap=True)
    a.send(b"before b")
    b, heard_b = _join(binding, "b")
    assert heard_b.events[0] == ("view", ("a", "b"), ("b",), ())  # its own join view first
    c, heard_c = _join(binding, "c")
    b.send(b"before the leave")
    wait_until(lambda: len(heard_c.messages()) == 1, 30)
    b.leave()
    wait_until(lambda: heard_a.events[-1][0] == "view" and heard_c.events[-1][0] == "view", 30)
    c.send(b"after the leave")
    wait_until(lambda: len(heard_a.messages()) == 3 and len(heard_c.messages()) == 2, 30)
    assert heard_a.events[:2] == [("view", ("a",), ("a",), ()), ("message", "a", b"before b")]
    assert heard_a.since_view_joining("c") == heard_c.events
    assert ("view", ("a", "c"), (), ("b",)) in heard_c.events
    with pytest.raises(GcsError):
        b.send(b"after leaving")


class SlowRecorder(Recorder):
    """A recorder whose every delivery takes a few milliseconds (as certification and
    queueing do): a sync point that does not wait for delivery returns before it."""

    def on_message(self, message: GcsMessage) -> None:
        time.sleep(0.005)
        super().on_message(message)


def test_a_sync_point_comes_after_everything_ordered_before_it(binding: Binding) -> None:
    a, _ = _join(binding, "a", bootstrap=True)
    b, heard_b = binding(), SlowRecorder()
    b.join(_member("b"), heard_b, bootstrap=False)
    wait_until(lambda: len(heard_b.events) == 1, 30)
    for n in range(30):
        burst = [f"m{n}.{i}".encode() for i in range(1 + n % 3)]
        for payload in burst:
            a.send(payload)
        b.sync_point(10.0)
        assert heard_b.payloads[-len(burst) :] == burst, n
    b.leave()
    with pytest.raises(GcsError):
        b.sync_point(1.0)


def test_etcd_sync_point_when_the_last_write_is_not_the_groups(tmp_path: Path) -> None:
    """An etcd cluster shared with others: its revision now is a write outside the
    group's prefix, whose event no member's watch gets. The sync point still returns,
    after everything the group ordered before it.
    """
    etcd = EtcdMembers(tmp_path / "etcd").start()
    a = EtcdGcs(etcd.endpoints, str(uuid.uuid4()))
    try:
        heard = Recorder()
        a.join(_member("a"), heard, bootstrap=True)
        for n in range(3):
            a.send(f"mine {n}".encode())
            a.client.put(f"/somebody/else/{n}".encode(), b"theirs", 5.0)
            a.sync_point(10.0)
            assert heard.payloads[-1:] == [f"mine {n}".encode()]
    finally:
        a.leave()
        etcd.stop()


def test_bootstrap_twice_and_joining_no_group_fail(binding: Binding) -> None:
    with pytest.raises(GcsError):
        binding().join(_member("x"), Recorder(), bootstrap=False)
    _join(binding, "a", bootstrap=True)
    with pytest.raises(GcsError):
        binding().join(_member("y"), Recorder(), bootstrap=True)


def test_force_members_leaves_exactly_those(binding: Binding) -> None:
    a, heard_a = _join(binding, "a", bootstrap=True)
    _b, heard_b = _join(binding, "b")
    _c, heard_c = _join(binding, "c")
    wait_until(lambda: len([e for e in heard_a.events if e[0] == "view"]) == 3, 30)
    a.force_members(["a", "c"])
    wait_until(lambda: bool(heard_b.errors), 30)
    a.send(b"forced")
    # both deliver it (a's own delivery may come after c's)
    wait_until(lambda: len(heard_c.messages()) == 1 and len(heard_a.messages()) == 1, 30)
    assert heard_a.since_view_joining("c") == heard_c.events
    assert ("view", ("a", "c"), (), ("b",)) in heard_c.events
    assert not heard_b.messages()


def test_etcd_delivers_no_message_of_a_non_member(tmp_path: Path) -> None:
    """A message key whose sender is not a member at its revision (an expelled member
    that sent before it noticed) is skipped by every member alike.
    """
    etcd = EtcdMembers(tmp_path / "etcd").start()
    name = str(uuid.uuid4())
    a, b = EtcdGcs(etcd.endpoints, name), EtcdGcs(etcd.endpoints[1:], name)
    try:
        heard_a, heard_b = Recorder(), Recorder()
        a.join(_member("a"), heard_a, bootstrap=True)
        b.join(_member("b"), heard_b, bootstrap=False)
        wait_until(lambda: len(heard_a.events) == 2, 30)
        a.client.create(a.prefix + b"msg/gone/1-000000000001", b"stale", 0, 5.0)
        a.send(b"fresh")
        wait_until(lambda: len(heard_b.messages()) == 1 and len(heard_a.messages()) == 1, 30)
        assert heard_a.messages() == heard_b.messages() == [("message", "a", b"fresh")]
    finally:
        a.leave()
        b.leave()
        etcd.stop()


class SuspicionRecorder(Recorder):
    """A recorder that also keeps every suspicion it hears."""

    def __init__(self) -> None:
        super().__init__()
        self.suspicions: list[tuple[str, ...]] = []

    def on_suspicions(self, suspected: tuple[str, ...]) -> None:
        self.suspicions.append(suspected)


def test_etcd_suspects_by_each_peers_own_lease(tmp_path: Path) -> None:
    """Members may run with different expel timeouts (lease TTLs): a member judges a
    peer by the TTL that peer's lease was granted with, so a member with a long timeout
    does not suspect a live peer with a short one, and still suspects it once it stops
    renewing.
    """
    etcd = EtcdMembers(tmp_path / "etcd").start()
    name = str(uuid.uuid4())
    long, short = EtcdGcs(etcd.endpoints, name, ttl=65), EtcdGcs(etcd.endpoints[1:], name, ttl=10)
    try:
        heard_long, heard_short = SuspicionRecorder(), SuspicionRecorder()
        long.join(_member("long"), heard_long, bootstrap=True)
        short.join(_member("short"), heard_short, bootstrap=False)
        wait_until(lambda: len(heard_long.events) == 2, 30)
        threading.Event().wait(6.0)  # twice SUSPECT_AFTER, the detector runs every second
        assert heard_long.suspicions == heard_short.suspicions == []
        short._stop.set()  # its lease is no longer renewed (the handle stays a member)
        wait_until(
            lambda: ("short",) in heard_long.suspicions, 15, lambda: str(heard_long.suspicions)
        )
    finally:
        long.leave()
        short.leave()
        etcd.stop()
