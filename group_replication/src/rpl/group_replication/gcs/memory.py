"""The group communication interface in one process, for unit tests only.

A :class:`MemoryGroup` is the engine: one list of entries (messages and views) in the
order they were appended under its lock, which is the total order; each member's
:class:`MemoryGcs` delivers that list from its own join view on, on a delivery thread of
its own, so callbacks run as the etcd binding runs them (another thread than the
sender's, one at a time, in order). Failure detection is the test's: it calls
:meth:`MemoryGroup.suspect` or :meth:`MemoryGroup.expel`.
Written by hand: an in-process queue is all it is.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import attrs

from rpl.group_replication.gcs.interface import (
    GcsError,
    GcsListener,
    GcsMember,
    GcsMessage,
    GcsView,
)


@attrs.frozen
class _Sent:
    sender: str
    payload: bytes


@attrs.frozen
class _Suspicions:
    suspected: tuple[str, ...]


_Entry = _Sent | GcsView | _Suspicions


class MemoryGroup:
    """The in-process engine: the order, the membership, the members' handles."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._entries: list[_Entry] = []
        self._members: dict[str, GcsMember] = {}
        self._handles: dict[str, MemoryGcs] = {}

    def handle(self) -> MemoryGcs:
        """A new member's handle on this group."""
        return MemoryGcs(self)

    # ------------------------------------------------- the test's controls
    def suspect(self, member_ids: Sequence[str]) -> None:
        """Every member hears that ``member_ids`` are suspected (empty: none is)."""
        with self._cond:
            self._append(_Suspicions(tuple(member_ids)))

    def expel(
        self, member_id: str, reason: str = "this member was expelled from the group"
    ) -> None:
        """Remove ``member_id`` as an expel does: a view without it for the others; it
        delivers up to that view, then hears ``on_error(reason)``.
        """
        with self._cond:
            handle = self._handles.pop(member_id, None)
            if member_id in self._members:
                del self._members[member_id]
                self._append(self._view((), (member_id,)))
        if handle is not None:
            handle.lost(reason)

    # ------------------------------------------------ the bindings' calls
    def _append(self, entry: _Entry) -> int:
        """Add ``entry`` at the end of the order (caller holds the lock); its place."""
        self._entries.append(entry)
        self._cond.notify_all()
        return len(self._entries)

    def _view(self, joined: tuple[str, ...], left: tuple[str, ...]) -> GcsView:
        members = tuple(self._members[m] for m in sorted(self._members))
        return GcsView(str(len(self._entries) + 1), members, joined, left)

    def join(self, handle: MemoryGcs, member: GcsMember, bootstrap: bool) -> int:
        """Add ``member``; the place of its join view."""
        with self._cond:
            others = [m for m in self._members if m != member.member_id]
            if bootstrap and others:
                raise GcsError("the group already has members: it cannot be bootstrapped again")
            if not bootstrap and not others:
                raise GcsError("there is no group to join (no member is online)")
            if member.member_id in self._members:
                raise GcsError(f"member {member.member_id} is already in the group")
            self._members[member.member_id] = member
            self._handles[member.member_id] = handle
            return self._append(self._view((member.member_id,), ()))

    def leave(self, member_id: str) -> None:
        with self._cond:
            self._handles.pop(member_id, None)
            if self._members.pop(member_id, None) is not None:
                self._append(self._view((), (member_id,)))

    def send(self, member_id: str, payload: bytes) -> int:
        with self._cond:
            if member_id not in self._members:
                raise GcsError("not in a group")
            return self._append(_Sent(member_id, payload))

    def force(self, member_ids: Sequence[str]) -> None:
        keep = set(member_ids)
        with self._cond:
            gone = tuple(m for m in sorted(self._members) if m not in keep)
            if not gone:
                return
            for member_id in gone:
                del self._members[member_id]
            self._append(self._view((), gone))
            handles = [self._handles.pop(m) for m in gone if m in self._handles]
        for handle in handles:
            handle.lost("removed from the group by force_members")

    def last_place(self) -> int:
        """The place of the last entry appended so far."""
        with self._cond:
            return len(self._entries)

    def next_entry(self, place: int, stop: threading.Event) -> _Entry | None:
        """The entry at ``place`` (1-based), once there is one; None once ``stop``."""
        with self._cond:
            while len(self._entries) < place:
                if stop.is_set():
                    return None
                self._cond.wait(0.1)
            return self._entries[place - 1]


class MemoryGcs:
    """One member's handle on a :class:`MemoryGroup`."""

    def __init__(self, group: MemoryGroup) -> None:
        self.group = group
        self._member: GcsMember | None = None
        self._listener: GcsListener | None = None
        self._stop = threading.Event()
        self._lost: str | None = None
        self.delivered_up_to = 0
        """The last place :meth:`delivered` was told of."""
        self._processed = 0
        """The place of the last entry whose callback returned."""
        self._progressed = threading.Condition()

    def join(self, member: GcsMember, listener: GcsListener, *, bootstrap: bool) -> None:
        """Join (or bootstrap): the join view is delivered first, on the delivery thread."""
        place = self.group.join(self, member, bootstrap)
        self._member, self._listener = member, listener
        self._processed = place - 1
        threading.Thread(
            target=self._deliver_from, args=(place,), name="rpl-gcs-memory", daemon=True
        ).start()

    def leave(self) -> None:
        """Leave; delivery stops."""
        if self._member is not None:
            self.group.leave(self._member.member_id)
        self._stop.set()

    def send(self, payload: bytes) -> None:
        """Append ``payload`` to the order."""
        if self._member is None or self._stop.is_set():
            raise GcsError("not in a group")
        self.group.send(self._member.member_id, payload)

    def sync_point(self, timeout: float) -> None:
        """Wait until the delivery thread passed every entry appended before the call."""
        if self._member is None or self._stop.is_set():
            raise GcsError("not in a group")
        target = self.group.last_place()
        with self._progressed:
            if not self._progressed.wait_for(
                lambda: self._processed >= target or self._stop.is_set(), timeout
            ):
                raise GcsError(f"place {target} was not delivered here in {timeout:g} s")
            if self._processed < target:
                raise GcsError("this member left the group")

    def delivered(self, order: int) -> None:
        """Record how far this member processed the order."""
        self.delivered_up_to = max(self.delivered_up_to, order)

    def force_members(self, member_ids: Sequence[str]) -> None:
        """Make the membership exactly ``member_ids``."""
        self.group.force(member_ids)

    def lost(self, reason: str) -> None:
        """The group dropped this member: on_error once its delivery thread is done."""
        self._lost = reason
        self._stop.set()

    def _deliver_from(self, place: int) -> None:
        listener = self._listener
        me = self._member
        assert listener is not None and me is not None
        while True:
            entry = self.group.next_entry(place, self._stop)
            if entry is None:
                break
            if isinstance(entry, _Sent):
                listener.on_message(GcsMessage(entry.sender, place, entry.payload))
            elif isinstance(entry, GcsView):
                if me.member_id in entry.left:
                    break
                listener.on_view_changed(entry)
            else:
                listener.on_suspicions(tuple(m for m in entry.suspected if m != me.member_id))
            with self._progressed:
                self._processed = place
                self._progressed.notify_all()
            place += 1
        self._stop.set()  # delivery ended: nothing more comes, sync points waiting fail
        with self._progressed:
            self._progressed.notify_all()
        if self._lost is not None:
            listener.on_error(self._lost)
