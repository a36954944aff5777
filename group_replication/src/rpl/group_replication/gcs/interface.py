"""The group communication interface.

Guarantees every binding keeps (and the tests check on each):

* **Total order.** Every member delivers the messages sent after it joined, each once,
  in one order that is the same on every member, the sender included; nothing is
  skipped (a member that cannot keep this, because it missed part of the order, gets
  :meth:`GcsListener.on_error` and delivers nothing more).
* **Views in the order.** A membership change is delivered at one place in that order,
  the same on every member: messages before it were sent to the old membership, after it
  to the new one. A member's first delivery is its own join view.
* **One at a time.** Callbacks run one at a time, in order, on the binding's delivery
  thread (the join view may come on the joining thread, before :meth:`Gcs.join` returns).
* **Durable send.** :meth:`Gcs.send` returns once the message has its place in the
  order; a send that failed or timed out may still have been ordered, and retrying it
  inside the binding never delivers it twice.
* **Sync points.** :meth:`Gcs.sync_point` returns once this member has delivered every
  message ordered before the call began (its callback returned): what BEFORE consistency
  waits for. It takes a majority, as ordering does; it orders nothing.
* **No order without a majority.** While this member cannot reach a majority of the
  engine, nothing is ordered: a send blocks (it retries until the message is ordered or
  the member leaves), and every other member is suspected (:meth:`GcsListener.on_suspicions`).
* **Forced membership.** :meth:`Gcs.force_members` makes the membership exactly the
  listed members, as one view change in the order, once the engine has a majority
  again (after a loss, made of the listed members' share of it); it never reorders or
  drops what was delivered.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import attrs


class GcsError(Exception):
    """The group communication engine could not do what was asked."""


@attrs.frozen
class GcsMember:
    """A member as the group knows it: ``data`` is opaque to the GCS."""

    member_id: str
    host: str
    port: int
    version: str
    data: bytes = b""
    address: str = ""
    """The member's address in the engine (``group_replication_local_address``)."""


@attrs.frozen
class GcsView:
    """A membership: every member, and who joined and left since the last view."""

    view_id: str
    members: tuple[GcsMember, ...]
    joined: tuple[str, ...] = ()
    left: tuple[str, ...] = ()


@attrs.frozen
class GcsMessage:
    """A delivered message: ``order`` is its place in the total order."""

    sender: str
    order: int
    payload: bytes


class GcsListener(Protocol):
    """What a member hears from the group (on the delivery thread)."""

    def on_message(self, message: GcsMessage) -> None:
        """A message, in the total order."""

    def on_view_changed(self, view: GcsView) -> None:
        """A new membership, at its place in the order."""

    def on_suspicions(self, suspected: tuple[str, ...]) -> None:
        """Members whose liveness lapsed and who are not expelled yet (empty: none)."""

    def on_error(self, reason: str) -> None:
        """The engine is lost to this member, or it was expelled: nothing more comes."""


class Gcs(Protocol):
    """One member's handle on the group communication engine."""

    def join(self, member: GcsMember, listener: GcsListener, *, bootstrap: bool) -> None:
        """Join the group (``bootstrap``: start it; GcsError if it has live members;
        otherwise GcsError if there is no group to join). The join view is delivered
        first.
        """

    def leave(self) -> None:
        """Leave the group; delivery stops."""

    def send(self, payload: bytes) -> None:
        """Broadcast ``payload``; returns once it is ordered, GcsError on failure."""

    def sync_point(self, timeout: float) -> None:
        """Return once every message ordered before this call began is delivered here;
        GcsError when that is not known within ``timeout`` (no majority answers, or this
        member left).
        """

    def delivered(self, order: int) -> None:
        """Everything up to ``order`` is processed here (garbage collection)."""

    def force_members(self, member_ids: Sequence[str]) -> None:
        """Make the membership exactly ``member_ids`` (after a majority was lost);
        GcsError when the engine cannot (no majority of it answers: then nothing
        changed). Returns once the change is ordered; the view comes in the order as
        any other.
        """
