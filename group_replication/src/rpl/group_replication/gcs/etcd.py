"""The group communication interface on etcd (reference/group-replication-design.md).

Keys, under ``/rpl/gr/<group_name>/``:

* ``members/<member_id>``: one per member, bound to the member's lease (TTL: the
  expel timeout plus 5 s of detection, as MySQL suspects after 5 s); its value is the
  member (JSON, with the lease id). A PUT of a new one is a join, a DELETE (leave, or
  the lease expired: an expel) a leave.
* ``msg/<member_id>/<lease>-<seq>``: one per batch of messages (what this member's
  sessions sent while the previous batch was on its way: :mod:`.batching`), created only
  if absent, so a retried send is never ordered twice. A message's place in the total
  order is its batch's revision, then its place in the batch (``order`` is
  ``revision * 4096 + index``); a batch whose sender is not a member at that revision (an
  expelled member that sent before it noticed) is delivered by no member: every member
  decides it at the same revision. A batch that does not split into messages is an
  error for every member alike.
* ``delivered/<member_id>``: how far a member has delivered (garbage collection).
* ``sync/<member_id>``: written (bound to the member's lease) only when a sync point's
  revision is not followed by any write under the prefix (see below).

Every member reads one watch stream of the whole prefix from its join revision on: etcd
orders every event of it by revision, the same for every watcher (Raft's log), so
messages and views come in one order on every member. The watch resumes from the last
delivered revision + 1 on another endpoint when a stream breaks, so an etcd member's
death loses nothing; a start revision already compacted means this member missed part
of the order: an error. The watch asks for progress notifications, so a stream that
stays silent longer than its read timeout is a dead or leaderless etcd member.

A sync point (BEFORE consistency) is a linearizable read of the cluster's revision R (a
read index: no proposal, no disk write, about half a put's round trip), then a wait until
this member's watch has delivered revision R: an event at R or later (events come in
revision order, a revision's events in one response), or a progress notification at R
or later (etcd sends those only to a watcher that has been sent every event up to that
revision). In a cluster the group does not share, R is a write under the prefix, so its
event comes; otherwise this member writes its ``sync/`` key after ``NUDGE_AFTER`` s,
whose event comes after R.

A majority lost (no etcd member this member reaches has a leader): nothing is ordered,
so a send retries until it is (or the member leaves); once no lease renewal has
succeeded for ``ETCD_LOST_AFTER`` seconds every other member is suspected (their
liveness cannot be known), until renewals succeed again and the peers' leases show
them alive (``SUSPECT_AFTER`` + 3 s: a new etcd leader extends every lease, so a dead
member's lease looks fresh at first). A watch resumed on an etcd cluster whose revision
is below the last one delivered here (a survivor re-formed with ``--force-new-cluster``
that had not seen what this member delivered) is an error: the order would fork.
:meth:`EtcdGcs.force_members` expels the members not listed (their keys deleted in one
transaction: one view change) once etcd has a majority again: after a loss, the
survivors' etcd members re-formed as a cluster of their own.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Sequence

from rpl.group_replication.gcs.batching import BatchError, SendBatcher, frame, split
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
ETCD_LOST_AFTER = 5.0
"""Seconds without a successful lease renewal before this member takes itself to be
cut off from an etcd majority (MySQL suspects after 5 s)."""
GC_EVERY = 5.0
SEND_ATTEMPT = 5.0
"""Seconds one attempt of a send may take before it is tried again (the same key)."""
ORDER_SLOTS = 4096
"""A delivered message's ``order`` is its batch's revision times this plus its index."""
NUDGE_AFTER = 0.2
"""Seconds a sync point waits for its revision's event before it writes one of its own."""
FORCE_CHECK = 5.0
"""Seconds force_members waits for an etcd majority's answer before it refuses."""


class EtcdGcs:
    """One member's handle on a group kept in etcd."""

    def __init__(
        self,
        endpoints: Sequence[str],
        group_name: str,
        ttl: int = 10,
        send_timeout: float = 15.0,
        watch_timeout: float = 5.0,
    ) -> None:
        self.client = EtcdClient(endpoints)
        self.prefix = f"/rpl/gr/{group_name}/".encode()
        self.ttl = ttl
        self.send_timeout = send_timeout
        self.watch_timeout = watch_timeout
        self._member: GcsMember | None = None
        self._listener: GcsListener | None = None
        self._lease = 0
        self._seq = 0
        self._seq_lock = threading.Lock()
        self._batcher = SendBatcher(self._send_batch)
        self._stop = threading.Event()
        self._members: dict[str, tuple[GcsMember, int]] = {}
        self._last_revision = 0
        self._delivered = 0
        self._progress = 0
        """The revision up to which every event was delivered (sync points wait on it)."""
        self._progressed = threading.Condition()
        self._failed = False
        self._liveness = threading.Lock()
        self._etcd_ok_at = time.monotonic()
        self._suspect_all_until = 0.0

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
                    "address": member.address,
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
        self._last_revision = self._progress = revision
        self._etcd_ok_at = time.monotonic()
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
        self._wake_sync_points()
        if self._lease:
            try:
                self.client.revoke(self._lease, 2.0)
            except EtcdError:
                pass  # the lease expires on its own

    # ------------------------------------------------------------ send
    def send(self, payload: bytes) -> None:
        """Return once ``payload`` is ordered, in a batch with whatever this member's
        other sessions send meanwhile (:mod:`.batching`).
        """
        if self._member is None or self._stop.is_set():
            raise GcsError("not in a group")
        self._batcher.send(payload)

    def _send_batch(self, payloads: list[bytes]) -> None:
        """Create one batch's key (idempotently: the same key at every attempt), retried
        until it is ordered or this member leaves the group (a lost majority blocks
        here, as in MySQL). The batcher's leaders call it, a few batches at once.
        """
        assert self._member is not None
        with self._seq_lock:
            self._seq += 1
            seq = self._seq
        key = f"msg/{self._member.member_id}/{self._lease:x}-{seq:012d}"
        value = frame(payloads)
        while True:
            try:
                self.client.create(
                    self.prefix + key.encode(), value, 0, min(SEND_ATTEMPT, self.send_timeout)
                )
                return
            except EtcdError as exc:
                if self._stop.is_set():
                    raise GcsError(f"the message could not be ordered: {exc}") from exc
            self._stop.wait(0.2)

    def sync_point(self, timeout: float) -> None:
        """Return once this member delivered every message ordered before the call: the
        cluster's revision read linearizably, then a wait for the watch to pass it
        (writing this member's ``sync/`` key if nothing else moves it on).
        """
        member = self._member
        if member is None or self._stop.is_set():
            raise GcsError("not in a group")
        deadline = time.monotonic() + timeout
        try:
            revision = self.client.revision(timeout)
        except EtcdError as exc:
            raise GcsError(f"the group's revision could not be read: {exc}") from exc
        if self._wait_progress(revision, min(deadline, time.monotonic() + NUDGE_AFTER)):
            return
        try:
            key = self.prefix + b"sync/" + member.member_id.encode()
            self.client.put(key, b"", max(0.1, deadline - time.monotonic()), lease=self._lease)
        except EtcdError as exc:
            raise GcsError(f"the sync point could not be written: {exc}") from exc
        if not self._wait_progress(revision, deadline):
            raise GcsError(f"revision {revision} was not delivered here in {timeout:g} s")

    def _wait_progress(self, revision: int, until: float) -> bool:
        """Wait until the watch delivered ``revision`` (True) or ``until`` passes."""
        with self._progressed:
            while self._progress < revision:
                if self._stop.is_set():
                    raise GcsError("this member left the group")
                left = until - time.monotonic()
                if left <= 0:
                    return False
                self._progressed.wait(left)
        return True

    def _progressed_to(self, events: list[Json], header: int, created: bool) -> None:
        """A watch response was delivered: its last event's revision, or for a progress
        notification (no events, not the creation answer) its header's revision, is
        delivered with everything before it.
        """
        if events:
            reached = int(events[-1].get("kv", {}).get("mod_revision", 0) or 0)
        elif not created:
            reached = header
        else:
            return
        with self._progressed:
            if reached > self._progress:
                self._progress = reached
                self._progressed.notify_all()

    def _wake_sync_points(self) -> None:
        with self._progressed:
            self._progressed.notify_all()

    def delivered(self, order: int) -> None:
        """Record how far this member delivered (read by garbage collection)."""
        self._delivered = max(self._delivered, order // ORDER_SLOTS)

    def force_members(self, member_ids: Sequence[str]) -> None:
        """Expel every member not in ``member_ids``: their keys are deleted in one
        transaction (one view change), their leases revoked. That takes an etcd
        majority: after a loss, the survivors' etcd cluster re-formed of their etcd
        members (``etcd --force-new-cluster`` on a survivor's data directory), as a
        minority cannot change etcd's membership. Checked first with a linearizable
        read (which proposes nothing, so a refusal leaves nothing to be committed
        later), and that the cluster's history holds everything delivered here.
        """
        wanted = set(member_ids)
        members = dict(self._members)
        if not wanted <= set(members):
            raise GcsError("not members of the group: " + ", ".join(sorted(wanted - set(members))))
        doomed = [(mid, lease) for mid, (_, lease) in members.items() if mid not in wanted]
        try:
            _, current = self.client.range_prefix(self.prefix + b"members/", FORCE_CHECK)
        except EtcdError as exc:
            raise GcsError(
                "the etcd cluster has no majority: re-form it of the listed members' etcd "
                "members first (etcd --force-new-cluster on a survivor's data directory) "
                f"({exc})"
            ) from exc
        if current < self._last_revision:
            raise GcsError(
                f"the etcd cluster's history ends at revision {current}, before revision "
                f"{self._last_revision} this member delivered: re-form it from an etcd "
                "member that has seen everything"
            )
        try:
            self.client.delete(
                [self.prefix + b"members/" + mid.encode() for mid, _ in doomed],
                self.send_timeout,
            )
        except EtcdError as exc:
            raise GcsError(f"the etcd cluster has no majority: {exc}") from exc
        for _, lease in doomed:
            try:
                self.client.revoke(lease, 2.0)
            except EtcdError:
                pass  # the key is gone already; the lease expires on its own

    # --------------------------------------------------------- delivery
    def _view(self, revision: int, joined: tuple[str, ...], left: tuple[str, ...]) -> GcsView:
        members = tuple(m for m, _ in sorted(self._members.values(), key=lambda p: p[0].member_id))
        return GcsView(str(revision), members, joined, left)

    def _fail(self, reason: str) -> None:
        if self._failed or self._stop.is_set():
            return
        self._failed = True
        self._stop.set()
        self._wake_sync_points()
        assert self._listener is not None
        self._listener.on_error(reason)

    def _watch_loop(self) -> None:
        """Deliver the prefix's events in revision order, resuming across endpoints."""
        endpoints = self.client.endpoints
        attempt = 0
        while not self._stop.is_set():
            endpoint = endpoints[attempt % len(endpoints)]
            served = False
            try:
                for result in self.client.watch(
                    endpoint, self.prefix, self._last_revision + 1, self.watch_timeout
                ):
                    if int(result.get("compact_revision", 0) or 0):
                        self._fail("the group's history this member needs was compacted")
                        return
                    if result.get("canceled"):
                        raise EtcdError(f"watch canceled: {result.get('cancel_reason', '')}")
                    current = int(result.get("header", {}).get("revision", 0) or 0)
                    if result.get("created") and 0 < current < self._last_revision:
                        self._fail(
                            f"the etcd cluster's history ends at revision {current}, before "
                            f"revision {self._last_revision} this member delivered"
                        )
                        return
                    served = True
                    events = result.get("events", [])
                    self._events(events)
                    if self._stop.is_set():
                        return
                    self._progressed_to(events, current, bool(result.get("created")))
            except (EtcdError, OSError, ValueError):
                pass
            # a stream that served and broke: this member's own etcd member first again
            # (the one a forced membership is re-formed from), then the others in turn
            attempt = 0 if served and attempt % len(endpoints) else attempt + 1
            # a lost majority: every endpoint refuses; no need to spin
            self._stop.wait(0.1 if attempt % len(endpoints) else 0.5)

    def _events(self, events: list[Json]) -> None:
        """One watch response's events; the member keys one transaction deleted
        (force_members) are one view change.
        """
        left: list[str] = []
        left_revision = 0
        for event in events:
            kv = event.get("kv", {})
            key = unb64(kv.get("key"))
            revision = int(kv.get("mod_revision", 0) or 0)
            is_leave = event.get("type") == "DELETE" and key.startswith(self.prefix + b"members/")
            if left and (not is_leave or revision != left_revision):
                if not self._leave_view(left_revision, left):
                    return
                left = []
            if is_leave and revision >= self._last_revision:
                left.append(key[len(self.prefix + b"members/") :].decode())
                left_revision = revision
                continue
            self._event(event)
            if self._failed:
                return
        if left:
            self._leave_view(left_revision, left)

    def _leave_view(self, revision: int, member_ids: list[str]) -> bool:
        """The members ``member_ids`` left at ``revision``; False if this one did."""
        assert self._listener is not None and self._member is not None
        self._last_revision = revision
        gone = tuple(m for m in member_ids if self._members.pop(m, None) is not None)
        if self._member.member_id in gone:
            self._fail("this member was expelled from the group")
            return False
        if gone:
            self._listener.on_view_changed(self._view(revision, (), gone))
        return True

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
            if sender not in self._members:  # an expelled member sent it after its expel
                return
            try:
                payloads = split(unb64(kv.get("value")))
            except BatchError as exc:
                self._fail(f"a malformed message batch at revision {revision}: {exc}")
                return
            for index, payload in enumerate(payloads):
                listener.on_message(GcsMessage(sender, revision * ORDER_SLOTS + index, payload))

    # ----------------------------------------------------- liveness
    def _keepalive_loop(self) -> None:
        """Renew the lease every second; an expired lease is an expel. Renewals that
        fail mean no etcd majority is reachable (:meth:`majority_lost`): this member
        waits for one, as MySQL's minority does.
        """
        while not self._stop.wait(KEEPALIVE_EVERY):
            try:
                if self.client.keepalive(self._lease, 2.0) <= 0:
                    self._fail("this member's lease expired: it was expelled")
                    return
            except EtcdError:
                continue
            now = time.monotonic()
            with self._liveness:
                if self._suspect_all_until == float("inf"):  # a majority again
                    self._suspect_all_until = now + SUSPECT_AFTER + 3.0
                self._etcd_ok_at = now

    def majority_lost(self) -> bool:
        """Whether no lease renewal succeeded for ``ETCD_LOST_AFTER`` seconds."""
        return time.monotonic() - self._etcd_ok_at > ETCD_LOST_AFTER

    def _detector_loop(self) -> None:
        """Suspect peers whose lease was not renewed lately; garbage-collect messages."""
        suspected: tuple[str, ...] = ()
        last_gc = time.monotonic()
        while not self._stop.wait(1.0):
            now_suspected = []
            with self._liveness:
                if self.majority_lost():
                    self._suspect_all_until = float("inf")
                suspect_all = time.monotonic() < self._suspect_all_until
            for member_id, (_, lease) in list(self._members.items()):
                if self._member is not None and member_id == self._member.member_id:
                    continue
                if suspect_all:
                    now_suspected.append(member_id)
                    continue
                try:
                    left, granted = self.client.time_to_live(lease, 1.0)
                except EtcdError:
                    continue
                if left >= 0 and granted - left > SUSPECT_AFTER:
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
        str(fields.get("address", "")),
    )
    return member, int(fields.get("lease", 0))
