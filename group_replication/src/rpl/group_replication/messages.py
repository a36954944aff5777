"""The messages members send each other through the group (hand-written codec).

Layout of every message: the magic ``RGR``, one byte of protocol version, one byte of
type, a 4-byte little-endian length and that many bytes of a UTF-8 JSON object (the
fields), then the rest of the message as raw bytes (a transaction's events; empty for
other types). :func:`decode` checks all of it and raises :class:`MessageError` for
anything else (a member receiving one goes to ERROR: every member must decode every
message the same way, so one it cannot read means it can no longer follow the group).

Types, in MySQL's terms:

* :class:`TransactionMessage` (``Transaction_message``): a local transaction at
  commit: its origin, snapshot, write set and events.
* :class:`CertificationState`: sent once per join by the member that certifies for the
  joiner: the certifier's state at the view where the joiner joined (MySQL carries it
  in the View_change_log_event).
* :class:`Recovered` (``Recovery_message`` END): a joiner caught up and is ONLINE.
* :class:`StableSet` (``Gtid_Executed_message``): a member's ``gtid_executed``, sent
  periodically; the intersection over the members is the stable set certification
  garbage-collects against.
* :class:`MemberStats` (``Pipeline_stats_member_message``): a member's counters, sent
  every second; every member shows every member's last ones in
  ``performance_schema.replication_group_member_stats``.
* Type 6 is not used: MySQL's ``Sync_before_execution_message`` (a BEFORE transaction's
  place in the order) is a sync point of the group communication engine here
  (:meth:`rpl.group_replication.gcs.interface.Gcs.sync_point`).
* :class:`TransactionWithGuarantee` (``Transaction_with_guarantee_message``): a
  transaction message with its consistency level (AFTER, BEFORE_AND_AFTER).
* :class:`TransactionPrepared` (``Transaction_prepared_message``): a member prepared
  an AFTER transaction (its acknowledgement).
"""

from __future__ import annotations

import json
import struct
from typing import Final

import attrs

MAGIC: Final = b"RGR"
VERSION: Final = 1
_HEAD = struct.Struct("<3sBBI")


class MessageError(ValueError):
    """A message this member cannot read."""


@attrs.frozen
class TransactionMessage:
    """A transaction for certification."""

    TYPE = 1
    origin: str
    """The originating member's server_uuid."""
    ticket: int
    """The origin's number for the waiting session (unique per origin and run)."""
    snapshot: str
    """The transaction's snapshot (gtid_executed when it began), MySQL's text."""
    write_set: tuple[int, ...]
    server_id: int
    timestamp_us: int
    checksum: bool
    events: bytes


@attrs.frozen
class CertificationState:
    """The certifier's state at view ``view_id`` for member ``joiner``."""

    TYPE = 2
    sender: str
    joiner: str
    view_id: str
    executed: str
    info: tuple[tuple[int, str], ...]
    online: tuple[str, ...] = ()
    """The members ONLINE at the view (the joiner learns their states here)."""
    primary: str = ""
    """The primary at the view ('' in multi-primary mode)."""


@attrs.frozen
class Recovered:
    """``member`` finished recovery and is ONLINE."""

    TYPE = 3
    member: str


@attrs.frozen
class StableSet:
    """``member``'s gtid_executed."""

    TYPE = 4
    member: str
    executed: str


@attrs.frozen
class MemberStats:
    """``member``'s replication_group_member_stats row, from its VIEW_ID on."""

    TYPE = 5
    member: str
    view_id: str
    in_queue: int
    checked: int
    conflicts: int
    rows_validating: int
    committed_all_members: str
    last_conflict_free: str
    remote_in_applier_queue: int
    remote_applied: int
    local_proposed: int
    local_rollback: int

    def row(self, channel: str) -> tuple[object, ...]:
        """The table's row (its CHANNEL_NAME first)."""
        return (channel, self.view_id, self.member, *attrs.astuple(self)[2:])


@attrs.frozen
class TransactionWithGuarantee(TransactionMessage):
    """A transaction for certification whose commit waits for the group's prepared
    acknowledgements.
    """

    TYPE = 7
    consistency: int = 3
    """MySQL's level number: 3 AFTER, 4 BEFORE_AND_AFTER."""


@attrs.frozen
class TransactionPrepared:
    """``member`` prepared the AFTER transaction ``gtid``."""

    TYPE = 8
    member: str
    gtid: str


Message = (
    TransactionMessage
    | CertificationState
    | Recovered
    | StableSet
    | MemberStats
    | TransactionPrepared
)
_TYPES: Final[dict[int, type[Message]]] = {
    t.TYPE: t
    for t in (
        TransactionMessage,
        CertificationState,
        Recovered,
        StableSet,
        MemberStats,
        TransactionWithGuarantee,
        TransactionPrepared,
    )
}


def encode(message: Message) -> bytes:
    """The bytes of ``message``."""
    fields = attrs.asdict(message, recurse=False)
    rest = b""
    if isinstance(message, TransactionMessage):
        rest = fields.pop("events")
        fields["write_set"] = list(message.write_set)
    if isinstance(message, CertificationState):
        fields["info"] = [list(pair) for pair in message.info]
    body = json.dumps(fields, separators=(",", ":")).encode()
    return _HEAD.pack(MAGIC, VERSION, message.TYPE, len(body)) + body + rest


def decode(data: bytes) -> Message:
    """The message ``data`` holds; MessageError if it is none this member can read."""
    if len(data) < _HEAD.size:
        raise MessageError(f"a message of {len(data)} bytes is shorter than its header")
    magic, version, kind, length = _HEAD.unpack_from(data)
    if magic != MAGIC:
        raise MessageError("not a Group Replication message (bad magic)")
    if version != VERSION:
        raise MessageError(f"message protocol version {version} is not {VERSION}")
    cls = _TYPES.get(kind)
    if cls is None:
        raise MessageError(f"unknown message type {kind}")
    end = _HEAD.size + length
    if end > len(data):
        raise MessageError("message body cut short")
    try:
        fields = json.loads(data[_HEAD.size : end])
        if not isinstance(fields, dict):
            raise TypeError("fields are no object")
        return _build(cls, fields, data[end:])
    except (ValueError, TypeError, KeyError) as exc:
        raise MessageError(f"malformed {cls.__name__}: {exc}") from exc


def _build(cls: type[Message], fields: dict[str, object], rest: bytes) -> Message:
    names = {a.name for a in attrs.fields(cls)}
    if issubclass(cls, TransactionMessage):
        fields["events"] = rest
        items = fields["write_set"]
        if not isinstance(items, list) or not all(
            isinstance(i, int) and 0 <= i < 1 << 64 for i in items
        ):
            raise TypeError("write_set must be unsigned 64-bit integers")
        fields["write_set"] = tuple(items)
    elif rest:
        raise TypeError(f"{len(rest)} bytes after the fields")
    if cls is CertificationState:
        info, online = fields["info"], fields["online"]
        if not isinstance(info, list) or not isinstance(online, list):
            raise TypeError("info and online must be lists")
        fields["info"] = tuple((int(i), str(s)) for i, s in info)
        fields["online"] = tuple(str(m) for m in online)
    if set(fields) != names:
        raise KeyError(f"fields {sorted(fields)} are not {sorted(names)}")
    types = {a.name: a.type for a in attrs.fields(cls)}
    for name, value in fields.items():
        expected = {"str": str, "int": int, "bool": bool, "bytes": bytes}.get(str(types[name]))
        if expected is not None and not isinstance(value, expected):
            raise TypeError(f"{name} must be {expected.__name__}")
    return cls(**fields)  # type: ignore[arg-type]
