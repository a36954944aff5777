"""The events that start a transaction: GTID (33) and ANONYMOUS_GTID (34).

Both share one body (:class:`_GtidEventBase`) in three layouts (:data:`GtidLayout`); the
group commit leader builds the 8.0 one straight to bytes (:func:`encode_gtid`), and
readers that need only the GTID take it in place (:func:`gtid_fields`,
:func:`event_gtid`).

The rule that is easy to get wrong: ``transaction_length`` counts the whole transaction
including the GTID event itself, whose size depends on how many bytes the packed length
takes, so the length is found by iterating to a fixed point
(:meth:`GtidEvent.with_transaction_length`, :func:`_length_with_itself`).
"""

from __future__ import annotations

import functools
import struct
import uuid
from typing import ClassVar, Final, Literal, Self, TypeVar

import attrs
from mypy_extensions import mypyc_attr

from rpl.core.binlog.events.header import (
    _U32,
    _U64,
    ANONYMOUS_GTID_LOG_EVENT,
    CHECKSUM_LEN,
    GTID_LOG_EVENT,
    HEADER_LEN,
    SERVER_VERSION_ID,
    UNDEFINED_SERVER_VERSION,
    Event,
    EventError,
    _offsets,
    unsealed,
)
from rpl.core.binlog.gtid import GNO_MAX, Gtid

GTID_FLAG_MAY_HAVE_SBR: Final = 1
LOGICAL_TIMESTAMP_TYPECODE: Final = 2
GTID_POST_HEADER_LEN: Final = 42

_GTID_POST_HEADER: Final = struct.Struct("<B16sqBqq")
_GTID_V56: Final = struct.Struct("<B16sq")

GTID_AT: Final = _offsets(_GTID_V56, ("flags", "sid", "gno"))
"""The GTID body's first field offsets (see :func:`gtid_fields`)."""
GTID_BODY_MIN: Final = _GTID_V56.size
_TIMESTAMP_LEN: Final = 7
_TIMESTAMP_MAX: Final = (1 << 55) - 1
_ORIGINAL_TIMESTAMP_BIT: Final = 1 << 55
_ORIGINAL_VERSION_BIT: Final = 1 << 31

_NULL_SID: Final = uuid.UUID(int=0)


def _sid_bytes(sid: uuid.UUID) -> bytes:
    """The SID's 16 bytes, as ``sid.bytes`` has them, without that property's interpreted
    code (the group commit leader encodes one GTID event per transaction).
    """
    return sid.int.to_bytes(16, "big")


GtidLayout = Literal["5.6", "5.7", "8.0"]
"""How much of the GTID body is present: 5.6 = flags, SID, GNO (25 bytes); 5.7 = the
42-byte post header with the logical clock; 8.0 = the post header, commit timestamps,
transaction length and server versions (and the group ticket when set)."""


def _pack_length(value: int) -> bytes:
    """MySQL's packed integer (``net_store_length``)."""
    if value < 251:
        return bytes((value,))
    if value <= 0xFFFF:
        return b"\xfc" + value.to_bytes(2, "little")
    if value <= 0xFFFFFF:
        return b"\xfd" + value.to_bytes(3, "little")
    return b"\xfe" + value.to_bytes(8, "little")


def _unpack_length(body: bytes, position: int) -> tuple[int, int]:
    """The packed integer at ``position`` and the position after it."""
    first = body[position]
    if first < 251:
        return first, position + 1
    width = {0xFC: 2, 0xFD: 3, 0xFE: 8}.get(first)
    if width is None or position + 1 + width > len(body):
        raise EventError(f"bad packed integer at body offset {position}")
    return int.from_bytes(body[position + 1 : position + 1 + width], "little"), position + 1 + width


def _packed_size(value: int) -> int:
    return 1 if value < 251 else 3 if value <= 0xFFFF else 4 if value <= 0xFFFFFF else 9


@mypyc_attr(native_class=False)  # compiled builds: attrs needs a Python class
@attrs.frozen(kw_only=True)
class _GtidEventBase(Event):
    """The body shared by GTID (33) and ANONYMOUS_GTID (34); see docs/research §3."""

    flags: int = GTID_FLAG_MAY_HAVE_SBR
    last_committed: int = 0
    sequence_number: int = 0
    immediate_commit_timestamp: int = 0
    original_commit_timestamp: int | None = None
    """None: the same as the immediate timestamp (not written)."""
    transaction_length: int = 0
    immediate_server_version: int = SERVER_VERSION_ID
    original_server_version: int | None = None
    """None: the same as the immediate server version (not written)."""
    commit_group_ticket: int | None = None
    """Group Replication's ticket (8.0.33+), written only when set."""
    layout: GtidLayout = "8.0"

    def _sid_and_gno(self) -> tuple[uuid.UUID, int]:
        raise NotImplementedError

    def encode_body(self) -> bytes:
        sid, gno = self._sid_and_gno()
        if self.layout == "5.6":
            return _GTID_V56.pack(self.flags, _sid_bytes(sid), gno)
        post_header = _GTID_POST_HEADER.pack(
            self.flags,
            _sid_bytes(sid),
            gno,
            LOGICAL_TIMESTAMP_TYPECODE,
            self.last_committed,
            self.sequence_number,
        )
        if self.layout == "5.7":
            return post_header
        return post_header + self._encode_commit_info()

    def _encode_commit_info(self) -> bytes:
        return _commit_info(
            self.immediate_commit_timestamp,
            self.original_commit_timestamp,
            self.transaction_length,
            self.immediate_server_version,
            self.original_server_version,
            self.commit_group_ticket,
        )

    def with_transaction_length(self, rest_length: int, *, checksum: bool = True) -> Self:
        """This event with ``transaction_length`` set for a transaction whose other events
        (BEGIN .. XID/COMMIT, their CRCs included) take ``rest_length`` bytes.

        The length counts this event too, and this event's size depends on how many bytes
        the packed length takes, so the total is found by iterating to a fixed point. Only
        the 8.0 layout carries the field; other layouts are returned unchanged.
        """
        if self.layout != "8.0":
            return self
        fixed = (
            HEADER_LEN
            + self._body_size_without_length()
            + (CHECKSUM_LEN if checksum else 0)
            + rest_length
        )
        return attrs.evolve(self, transaction_length=_length_with_itself(fixed))

    def _body_size_without_length(self) -> int:
        """The 8.0 body's size less its packed ``transaction_length``: fixed by which
        optional fields are written, so it is measured once per combination.
        """
        optional = (
            type(self),
            self.original_commit_timestamp is None,
            self.original_server_version is None,
            self.commit_group_ticket is None,
        )
        size = _BODY_SIZES.get(optional)
        if size is None:
            bare = attrs.evolve(self, transaction_length=0)
            size = _BODY_SIZES[optional] = len(bare.encode_body()) - _packed_size(0)
        return size


_BODY_SIZES: dict[tuple[object, ...], int] = {}


def _length_with_itself(fixed: int) -> int:
    """A transaction length that counts its own packed bytes besides ``fixed`` others."""
    total = fixed + 1
    while (needed := fixed + _packed_size(total)) != total:
        total = needed
    return total


def _commit_info(
    immediate: int,
    original: int | None,
    transaction_length: int,
    version: int,
    original_version: int | None,
    ticket: int | None,
) -> bytes:
    """The 8.0 GTID body after the post header: commit timestamps, transaction length,
    server versions, Group Replication's ticket (the optional ones only when set).
    """
    if not 0 <= immediate <= _TIMESTAMP_MAX or not 0 <= (original or 0) <= _TIMESTAMP_MAX:
        raise ValueError("commit timestamps must fit in 55 bits")
    parts = [
        (immediate | (0 if original is None else _ORIGINAL_TIMESTAMP_BIT)).to_bytes(
            _TIMESTAMP_LEN, "little"
        )
    ]
    if original is not None:
        parts.append(original.to_bytes(_TIMESTAMP_LEN, "little"))
    parts.append(_pack_length(transaction_length))
    if not 0 <= version < _ORIGINAL_VERSION_BIT or not (
        0 <= (original_version or 0) < _ORIGINAL_VERSION_BIT
    ):
        raise ValueError("server versions must fit in 31 bits")
    if original_version is None:
        parts.append(_U32.pack(version))
    else:
        parts.append(_U32.pack(version | _ORIGINAL_VERSION_BIT))
        parts.append(_U32.pack(original_version))
    if ticket is not None:
        parts.append(_U64.pack(ticket))
    return b"".join(parts)


def encode_gtid(
    sid: uuid.UUID,
    gno: int,
    *,
    last_committed: int,
    sequence_number: int,
    immediate_commit_timestamp: int,
    original_commit_timestamp: int | None,
    rest_length: int,
    server_id: int,
    timestamp: int,
    checksum: bool,
    flags: int = GTID_FLAG_MAY_HAVE_SBR,
) -> bytearray:
    """The whole GTID event that starts a transaction whose other events take
    ``rest_length`` bytes (CRCs included): the bytes of
    ``encode_event(GtidEvent(sid, gno, ...).with_transaction_length(rest_length), ...,
    crc_later=True)`` for the 8.0 layout and server version, built without the event
    objects (the group commit leader makes one per transaction). ``flags``: 0 for a
    transaction of rows events only (mysqlbinlog's ``rbr_only=yes``), else
    GTID_FLAG_MAY_HAVE_SBR.
    """
    post_header = _GTID_POST_HEADER.pack(
        flags,
        _sid_bytes(sid),
        gno,
        LOGICAL_TIMESTAMP_TYPECODE,
        last_committed,
        sequence_number,
    )
    crc_size = CHECKSUM_LEN if checksum else 0
    info_size = len(
        _commit_info(
            immediate_commit_timestamp, original_commit_timestamp, 0, SERVER_VERSION_ID, None, None
        )
    ) - _packed_size(0)
    length = _length_with_itself(HEADER_LEN + len(post_header) + info_size + crc_size + rest_length)
    body = post_header + _commit_info(
        immediate_commit_timestamp, original_commit_timestamp, length, SERVER_VERSION_ID, None, None
    )
    return unsealed(GTID_LOG_EVENT, body, server_id, timestamp, checksum)


_G = TypeVar("_G", bound=_GtidEventBase)


def gtid_fields(
    data: bytes | bytearray | memoryview, body_at: int, body_end: int
) -> tuple[int, bytes, int]:
    """(flags, SID bytes, GNO) of the GTID body at ``data[body_at:body_end]``."""
    if body_end - body_at < _GTID_V56.size:
        raise EventError(f"GTID body of {body_end - body_at} bytes is shorter than 25")
    flags, sid, gno = _GTID_V56.unpack_from(data, body_at)
    return int(flags), bytes(sid), int(gno)


def gtid_body(body: bytes) -> tuple[uuid.UUID, int, dict[str, object]]:
    """The SID, GNO and other fields (keyword arguments of :class:`GtidEvent`) of a
    GTID or ANONYMOUS_GTID body; EventError if malformed. The GNO's range is the caller's
    to check (an anonymous one is 0).
    """
    flags, sid_bytes, gno = gtid_fields(body, 0, len(body))
    sid = _sid(sid_bytes)
    fields: dict[str, object] = {"flags": flags}
    if len(body) == _GTID_V56.size:
        fields["layout"] = "5.6"
        return sid, gno, fields
    if len(body) < GTID_POST_HEADER_LEN or body[25] != LOGICAL_TIMESTAMP_TYPECODE:
        raise EventError("GTID body has a bad logical clock (length or type code)")
    _, _, _, _, fields["last_committed"], fields["sequence_number"] = _GTID_POST_HEADER.unpack_from(
        body
    )
    if len(body) == GTID_POST_HEADER_LEN:
        fields["layout"] = "5.7"
        return sid, gno, fields
    fields.update(_decode_commit_info(body, GTID_POST_HEADER_LEN))
    return sid, gno, fields


def event_gtid(raw: bytes | bytearray | memoryview) -> Gtid:
    """The GTID of the whole GTID event ``raw``, read in place, for readers that need
    nothing else of it (a dump thread skipping what its replica has, a receiver keeping
    Retrieved_Gtid_Set); EventError on a short body or a GNO out of range. The CRC is the
    caller's to check.
    """
    _, sid, gno = gtid_fields(raw, HEADER_LEN, len(raw))
    return Gtid(_sid(sid), valid_gno(gno))


def valid_gno(gno: int) -> int:
    """``gno`` when a GTID event may carry it (1 .. GNO_MAX); EventError otherwise."""
    if not 1 <= gno <= GNO_MAX:
        raise EventError(f"GTID event: invalid GNO {gno}")
    return gno


@functools.lru_cache(maxsize=64)
def _sid(data: bytes) -> uuid.UUID:
    """The UUID of 16 SID bytes (a stream's GTIDs come from few servers)."""
    return uuid.UUID(bytes=data)


def gtid_transaction_length(event: _G, rest_length: int, checksum: bool = True) -> _G:
    """``event`` with its ``transaction_length`` set (see
    :meth:`GtidEvent.with_transaction_length`; ``rest_length`` is the byte length of the
    transaction's other events, CRCs included).
    """
    return event.with_transaction_length(rest_length, checksum=checksum)


def _decode_commit_info(body: bytes, position: int) -> dict[str, object]:
    """The optional 8.0 fields after the GTID post header, as far as they are present."""
    fields: dict[str, object] = {"layout": "8.0"}
    end = len(body)
    if position + _TIMESTAMP_LEN > end:
        raise EventError("GTID body: truncated immediate_commit_timestamp")
    immediate = int.from_bytes(body[position : position + _TIMESTAMP_LEN], "little")
    position += _TIMESTAMP_LEN
    fields["immediate_commit_timestamp"] = immediate & _TIMESTAMP_MAX
    if immediate & _ORIGINAL_TIMESTAMP_BIT:
        if position + _TIMESTAMP_LEN > end:
            raise EventError("GTID body: truncated original_commit_timestamp")
        fields["original_commit_timestamp"] = int.from_bytes(
            body[position : position + _TIMESTAMP_LEN], "little"
        )
        position += _TIMESTAMP_LEN
    if position < end:
        fields["transaction_length"], position = _unpack_length(body, position)
    if position + 4 <= end:
        (version,) = _U32.unpack_from(body, position)
        position += 4
        fields["immediate_server_version"] = version & ~_ORIGINAL_VERSION_BIT
        if version & _ORIGINAL_VERSION_BIT:
            if position + 4 > end:
                raise EventError("GTID body: truncated original_server_version")
            (fields["original_server_version"],) = _U32.unpack_from(body, position)
            position += 4
    else:
        fields["immediate_server_version"] = UNDEFINED_SERVER_VERSION
    if position + 8 <= end:
        (fields["commit_group_ticket"],) = _U64.unpack_from(body, position)
        position += 8
    if position != end:
        raise EventError(f"GTID body: {end - position} unexpected bytes at the end")
    return fields


@mypyc_attr(native_class=False)  # compiled builds: attrs needs a Python class
@attrs.frozen
class GtidEvent(_GtidEventBase):
    """GTID (33): starts a transaction and names its GTID ``sid:gno``."""

    TYPE_CODE: "ClassVar[int]" = GTID_LOG_EVENT

    sid: uuid.UUID
    gno: int

    @property
    def gtid(self) -> Gtid:
        """The transaction's GTID."""
        return Gtid(self.sid, self.gno)

    def _sid_and_gno(self) -> tuple[uuid.UUID, int]:
        if not 1 <= self.gno <= GNO_MAX:
            raise ValueError(f"GNO {self.gno} is out of range")
        return self.sid, self.gno

    @classmethod
    def decode_body(cls, body: bytes) -> Self:
        sid, gno, fields = gtid_body(body)
        return cls(sid, valid_gno(gno), **fields)  # type: ignore[arg-type]


@mypyc_attr(native_class=False)  # compiled builds: attrs needs a Python class
@attrs.frozen
class AnonymousGtidEvent(_GtidEventBase):
    """ANONYMOUS_GTID (34): starts a transaction that has no GTID (zero SID, GNO 0)."""

    TYPE_CODE: "ClassVar[int]" = ANONYMOUS_GTID_LOG_EVENT

    def _sid_and_gno(self) -> tuple[uuid.UUID, int]:
        return _NULL_SID, 0

    @classmethod
    def decode_body(cls, body: bytes) -> Self:
        sid, gno, fields = gtid_body(body)
        if sid != _NULL_SID or gno != 0:
            raise EventError(f"ANONYMOUS_GTID event with GTID {sid}:{gno}")
        return cls(**fields)  # type: ignore[arg-type]
