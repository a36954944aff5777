"""The group communication interface on etcd (reference/group-replication-design.md).

Keys, under ``/rpl/gr/<group_name>/``:

* ``members/<member_id>``: one per member, bound to the member's lease (TTL: the
  expel timeout plus 5 s of detection, as MySQL suspects after 5 s); its value is the
  member (JSON, with the lease id). A PUT of a new one is a join, a DELETE (leave, or
  the lease expired: an expel) a leave.
* ``msg/<member_id>/<seq>``: one per message, created only if absent, so a retried send
  is never ordered twice. A message's place in the total order is its revision; one
  whose sender is not a member at that revision (an expelled member that sent before it
  noticed) is delivered by no member: every member decides it at the same revision.
* ``delivered/<member_id>``: how far a member has delivered (garbage collection).

Every member reads one watch stream of the whole prefix from its join revision on: etcd
orders every event of it by revision, the same for every watcher (Raft's log), so
messages and views come in one order on every member. The watch resumes from the last
delivered revision + 1 on another endpoint when a stream breaks, so an etcd member's
death loses nothing; a start revision already compacted means this member missed part
of the order: an error. The watch asks for progress notifications, so a stream that
stays silent longer than its read timeout is a dead or leaderless etcd member.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Sequence

from rpl.group_replication.gcs.etcd_client import EtcdClient, EtcdError, Json, unb64
from rpl.group_replication.gcs.interface import (
    GcsError,
    GcsListener,
    GcsMember,
    GcsMessage,
    GcsView,
)

KEEPALIVE_EVERY = 1.0
"""Seconds between renewals of this member's lease."""
SUSPECT_AFTER = 3.0
"""Seconds without a peer's lease renewal before it is suspected (three renewals
missed)."""
GC_EVERY = 5.0


class EtcdGcs:
    """One member's handle on a group kept in etcd."""

    def __init__(
        self,
        endpoints: Sequence[str],
        group_name: str,
        ttl: int = 10,
        unreachable_timeout: float = 10.0,
        send_timeout: float = 15.0,
        watch_timeout: float = 5.0,
    ) -> None:
        self.client = EtcdClient(endpoints)
        self.prefix = f"/rpl/gr/{group_name}/".encode()
        self.ttl = ttl
        self.unreachable_timeout = unreachable_timeout
        self.send_timeout = send_timeout
        self.watch_timeout = watch_timeout
        self._member: GcsMember | None = None
        self._listener: GcsListener | None = None
        self._lease = 0
        self._seq = 0
        self._seq_lock = threading.Lock()
        self._stop = threading.Event()
        self._members: dict[str, tuple[GcsMember, int]] = {}
        self._last_revision = 0
        self._delivered = 0
        self._failed = False

    # ------------------------------------------------------------ join
    def join(self, member: GcsMember, listener: GcsListener, *, bootstrap: bool) -> None:
        """Join (or bootstrap) the group; the join view is delivered before this returns."""
        try:
            existing, _ = self.client.range_prefix(self.prefix + b"members/", self.send_timeout)
        except EtcdError as exc:
            raise GcsError(f"no etcd member answers: {exc}") from exc
        others = [
            kv for kv in existing if unb64(kv["key"]).split(b"/")[-1] != member.member_id.encode()
        ]
        if bootstrap and others:
            raise GcsError("the group already has members: it cannot be bootstrapped again")
        if not bootstrap and not others:
            raise GcsError("there is no group to join (no member is online)")
        try:
            self._lease = self.client.grant(self.ttl, self.send_timeout)
            value = json.dumps(
                {
                    "host": member.host,
                    "port": member.port,
                    "version": member.version,
                    "data": member.data.decode(),
                    "lease": self._lease,
                }
            ).encode()
            key = self.prefix + b"members/" + member.member_id.encode()
            created, revision = self.client.create(key, value, self._lease, self.send_timeout)
            if not created:
                raise GcsError(f"member {member.member_id} is already in the group")
            kvs, _ = self.client.range_prefix(
                self.prefix + b"members/", self.send_timeout, revision=revision
            )
        except EtcdError as exc:
            raise GcsError(f"joining failed: {exc}") from exc
        self._member, self._listener = member, listener
        for kv in kvs:
            peer, lease = _member_of(kv)
            self._members[peer.member_id] = (peer, lease)
        self._last_revision = revision
        listener.on_view_changed(self._view(revision, (member.member_id,), ()))
        for target, name in (
            (self._watch_loop, "rpl-gcs-delivery"),
            (self._keepalive_loop, "rpl-gcs-keepalive"),
            (self._detector_loop, "rpl-gcs-detector"),
        ):
            threading.Thread(target=target, name=name, daemon=True).start()

    def leave(self) -> None:
        """Leave: revoke the lease (the member key goes), stop the threads."""
        if self._stop.is_set():
            return
        self._stop.set()
        if self._lease:
            try:
                self.client.revoke(self._lease, 2.0)
            except EtcdError:
                pass  # the lease expires on its own

    # ------------------------------------------------------------ send
    def send(self, payload: bytes) -> None:
        """Create this message's key (idempotently, retried until the bound)."""
        if self._member is None or self._stop.is_set():
            raise GcsError("not in a group")
        with self._seq_lock:
            self._seq += 1
            seq = self._seq
        key = self.prefix + f"msg/{self._member.member_id}/{self._lease:x}-{seq:012d}".encode()
        try:
            self.client.create(key, payload, 0, self.send_timeout)
        except EtcdError as exc:
            raise GcsError(f"the message could not be ordered: {exc}") from exc

    def delivered(self, order: int) -> None:
        """Record how far this member delivered (read by garbage collection)."""
        self._delivered = max(self._delivered, order)

    def force_members(self, member_ids: Sequence[str]) -> None:
        """Delete every member key not in ``member_ids``."""
        keep = set(member_ids)
        doomed = [
            self.prefix + b"members/" + m.encode() for m in list(self._members) if m not in keep
        ]
        try:
            self.client.delete(doomed, self.send_timeout)
        except EtcdError as exc:
            raise GcsError(f"force_members failed: {exc}") from exc

    # --------------------------------------------------------- delivery
    def _view(self, revision: int, joined: tuple[str, ...], left: tuple[str, ...]) -> GcsView:
        members = tuple(m for m, _ in sorted(self._members.values(), key=lambda p: p[0].member_id))
        return GcsView(str(revision), members, joined, left)

    def _fail(self, reason: str) -> None:
        if self._failed or self._stop.is_set():
            return
        self._failed = True
        self._stop.set()
        assert self._listener is not None
        self._listener.on_error(reason)

    def _watch_loop(self) -> None:
        """Deliver the prefix's events in revision order, resuming across endpoints."""
        endpoints = self.client.endpoints
        attempt = 0
        lost_since: float | None = None
        while not self._stop.is_set():
            endpoint = endpoints[attempt % len(endpoints)]
            try:
                for result in self.client.watch(
                    endpoint, self.prefix, self._last_revision + 1, self.watch_timeout
                ):
                    lost_since = None
                    if int(result.get("compact_revision", 0) or 0):
                        self._fail("the group's history this member needs was compacted")
                        return
                    if result.get("canceled"):
                        raise EtcdError(f"watch canceled: {result.get('cancel_reason', '')}")
                    for event in result.get("events", []):
                        self._event(event)
                    if self._stop.is_set():
                        return
            except (EtcdError, OSError, ValueError):
                pass
            attempt += 1
            now = time.monotonic()
            lost_since = lost_since or now
            if now - lost_since > self.unreachable_timeout:
                self._fail(f"no etcd member answered the watch for {self.unreachable_timeout:g} s")
                return
            self._stop.wait(0.1)

    def _event(self, event: Json) -> None:
        kv = event.get("kv", {})
        revision = int(kv.get("mod_revision", 0) or 0)
        if revision < self._last_revision:
            return  # a resumed stream starts after the last revision delivered
        key = unb64(kv.get("key"))
        rest = key[len(self.prefix) :]
        listener = self._listener
        assert listener is not None and self._member is not None
        if rest.startswith(b"members/"):
            member_id = rest[len(b"members/") :].decode()
            if event.get("type") == "DELETE":
                self._last_revision = revision
                if self._members.pop(member_id, None) is not None:
                    if member_id == self._member.member_id:
                        self._fail("this member was expelled from the group")
                        return
                    listener.on_view_changed(self._view(revision, (), (member_id,)))
                return
            peer, lease = _member_of(kv)
            self._last_revision = revision
            if member_id not in self._members:
                self._members[member_id] = (peer, lease)
                listener.on_view_changed(self._view(revision, (member_id,), ()))
            return
        self._last_revision = revision
        if rest.startswith(b"msg/") and event.get("type") != "DELETE":
            sender = rest.split(b"/")[1].decode()
            if sender in self._members:  # not one an expelled member sent after its expel
                listener.on_message(GcsMessage(sender, revision, unb64(kv.get("value"))))

    # ----------------------------------------------------- liveness
    def _keepalive_loop(self) -> None:
        """Renew the lease every second; no etcd for too long is an error."""
        last_ok = time.monotonic()
        while not self._stop.wait(KEEPALIVE_EVERY):
            try:
                if self.client.keepalive(self._lease, 2.0) <= 0:
                    self._fail("this member's lease expired: it was expelled")
                    return
                last_ok = time.monotonic()
            except EtcdError:
                if time.monotonic() - last_ok > self.unreachable_timeout:
                    self._fail("etcd unreachable: the lease cannot be renewed")
                    return

    def _detector_loop(self) -> None:
        """Suspect peers whose lease was not renewed lately; garbage-collect messages."""
        suspected: tuple[str, ...] = ()
        last_gc = time.monotonic()
        while not self._stop.wait(1.0):
            now_suspected = []
            for member_id, (_, lease) in list(self._members.items()):
                if self._member is not None and member_id == self._member.member_id:
                    continue
                try:
                    left = self.client.time_to_live(lease, 1.0)
                except EtcdError:
                    continue
                if left >= 0 and self.ttl - left > SUSPECT_AFTER:
                    now_suspected.append(member_id)
            found = tuple(sorted(now_suspected))
            if found != suspected and self._listener is not None and not self._stop.is_set():
                suspected = found
                self._listener.on_suspicions(found)
            if time.monotonic() - last_gc > GC_EVERY:
                last_gc = time.monotonic()
                self._collect_garbage()

    def _collect_garbage(self) -> None:
        """Publish this member's delivered revision; the lowest member id deletes the
        messages every member delivered and compacts below them.
        """
        member = self._member
        if member is None:
            return
        try:
            self.client.put(
                self.prefix + b"delivered/" + member.member_id.encode(),
                str(self._delivered).encode(),
                2.0,
                lease=self._lease,
            )
            if min(self._members, default="") != member.member_id:
                return
            marks, _ = self.client.range_prefix(self.prefix + b"delivered/", 2.0)
            delivered = {
                unb64(kv["key"]).split(b"/")[-1].decode(): int(unb64(kv.get("value")) or 0)
                for kv in marks
            }
            if not set(self._members) <= set(delivered):
                return
            floor = min(delivered[m] for m in self._members)
            keys, _ = self.client.range_prefix(self.prefix + b"msg/", 2.0, keys_only=True)
            doomed = [unb64(kv["key"]) for kv in keys if int(kv["mod_revision"]) <= floor]
            for start in range(0, len(doomed), 100):
                self.client.delete(doomed[start : start + 100], 2.0)
            if floor > 0:
                self.client.compact(floor, 2.0)
        except (EtcdError, KeyError, ValueError):
            pass  # the next round tries again


def _member_of(kv: Json) -> tuple[GcsMember, int]:
    """The member a member key's value describes, and its lease."""
    member_id = unb64(kv["key"]).split(b"/")[-1].decode()
    fields = json.loads(unb64(kv.get("value")) or b"{}")
    member = GcsMember(
        member_id,
        str(fields.get("host", "")),
        int(fields.get("port", 0)),
        str(fields.get("version", "")),
        str(fields.get("data", "")).encode(),
    )
    return member, int(fields.get("lease", 0))
