"""The event codec: round trips, golden sizes and bytes, CRC rules, damage detection."""

from __future__ import annotations

import struct
import uuid
import zlib

import attrs
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from rpl.core.binlog import events as ev
from rpl.core.binlog.events import fastpath
from rpl.core.binlog.gtid import GNO_MAX, Gtid, GtidSet
from rpl.core.errors import ER_BINLOG_EVENT_CORRUPT

SID = uuid.UUID("3e11fa47-71ca-11e1-9e33-c80aa9429562")

u32 = st.integers(0, 2**32 - 1)
u64 = st.integers(0, 2**64 - 1)
i64 = st.integers(0, 2**63 - 1)
text = st.text(st.characters(exclude_categories=["Cs"]), max_size=40)
names = st.text(st.characters(codec="ascii", exclude_characters="\0/"), min_size=1, max_size=30)
uuids = st.uuids()
timestamps = st.integers(0, 2**55 - 1)
versions = st.integers(0, 2**31 - 1)


@st.composite
def gtid_sets(draw: st.DrawFn) -> GtidSet:
    result = GtidSet()
    for sid, start, length in draw(
        st.lists(
            st.tuples(
                st.sampled_from([SID, uuid.UUID(int=7)]), st.integers(1, 10**6), st.integers(0, 100)
            ),
            max_size=6,
        )
    ):
        result.add_interval(sid, start, start + length)
    return result


def _gtid_fields(draw: st.DrawFn) -> dict[str, object]:
    layout = draw(st.sampled_from(["5.6", "5.7", "8.0"]))
    fields: dict[str, object] = {"flags": draw(st.integers(0, 255)), "layout": layout}
    if layout == "5.6":
        return fields
    fields.update(last_committed=draw(i64), sequence_number=draw(i64))
    if layout == "5.7":
        return fields
    fields.update(
        immediate_commit_timestamp=draw(timestamps),
        original_commit_timestamp=draw(st.none() | timestamps),
        transaction_length=draw(
            st.sampled_from([0, 250, 251, 0xFFFF, 0x10000, 0xFFFFFF, 0x1000000]) | u64
        ),
        immediate_server_version=draw(versions),
        original_server_version=draw(st.none() | versions),
        commit_group_ticket=draw(st.none() | u64),
    )
    return fields


@st.composite
def gtid_events(draw: st.DrawFn) -> ev.GtidEvent:
    return ev.GtidEvent(draw(uuids), draw(st.integers(1, GNO_MAX)), **_gtid_fields(draw))  # type: ignore[arg-type]


@st.composite
def anonymous_gtid_events(draw: st.DrawFn) -> ev.AnonymousGtidEvent:
    return ev.AnonymousGtidEvent(**_gtid_fields(draw))  # type: ignore[arg-type]


status_vars = st.one_of(
    st.binary(max_size=60),
    st.builds(
        ev.default_status_vars,
        flags2=u32,
        sql_mode=u64,
        updated_db_names=st.none() | st.lists(names, max_size=20),
    ),
)

events = st.one_of(
    st.builds(
        ev.FormatDescriptionEvent,
        server_version=names.filter(lambda n: len(n) < 50),
        created=u32,
        post_header_lengths=st.binary(min_size=0, max_size=60),
        checksum_alg=st.sampled_from([0, 1]),
    ),
    st.builds(ev.PreviousGtidsEvent, gtid_sets()),
    gtid_events(),
    anonymous_gtid_events(),
    st.builds(
        ev.QueryEvent,
        thread_id=u32,
        exec_time=u32,
        error_code=st.integers(0, 65535),
        status_vars=status_vars,
        db=names | st.just(""),
        query=text,
    ),
    st.builds(ev.XidEvent, u64),
    st.builds(ev.RotateEvent, u64, names),
    st.builds(ev.StopEvent),
    st.builds(ev.HeartbeatEvent, names | st.just("")),
    st.builds(ev.IntvarEvent, st.sampled_from([ev.LAST_INSERT_ID_EVENT, ev.INSERT_ID_EVENT]), u64),
    st.builds(ev.UnknownEvent, st.sampled_from([13, 14, 36, 38, 39, 40]), st.binary(max_size=80)),
    st.builds(
        ev.ViewChangeEvent,
        names,  # at most 30 characters: the view id field holds 39
        u64,
        st.dictionaries(st.binary(max_size=30), st.binary(max_size=60), max_size=5).map(
            lambda info: tuple(sorted(info.items()))
        ),
    ),
)


def encode(event: ev.Event, **kwargs: object) -> bytes:
    return ev.encode_event(event, server_id=7, timestamp=1_700_000_000, **kwargs)  # type: ignore[arg-type]


# -- round trips ----------------------------------------------------------------------------


@given(events, st.booleans(), u32, u32, st.integers(0, 0xFFFF))
def test_every_event_round_trips(
    event: ev.Event, checksum: bool, server_id: int, log_pos: int, flags: int
) -> None:
    data = ev.encode_event(
        event, server_id=server_id, timestamp=12345, log_pos=log_pos, flags=flags, checksum=checksum
    )
    header, decoded = ev.decode_event(data, checksum=checksum)
    assert decoded == event
    assert header == ev.EventHeader(12345, event.type_code, server_id, len(data), log_pos, flags)
    assert header.pack() == data[:19]
    assert decoded.type_code == event.type_code
    assert (
        ev.encode_event(
            decoded,
            server_id=server_id,
            timestamp=12345,
            log_pos=log_pos,
            flags=flags,
            checksum=checksum,
        )
        == data
    )
    has_crc = checksum or isinstance(event, ev.FormatDescriptionEvent)
    assert len(data) == 19 + len(event.encode_body()) + (4 if has_crc else 0)
    if has_crc:
        assert ev.verify_checksum(data)
    _, from_view = ev.decode_event(memoryview(data), checksum=checksum)
    assert from_view == event


def test_event_classes_map() -> None:
    assert ev.EVENT_CLASSES[ev.QUERY_EVENT] is ev.QueryEvent
    assert ev.EVENT_CLASSES[ev.GTID_LOG_EVENT] is ev.GtidEvent
    assert ev.EVENT_CLASSES[ev.ANONYMOUS_GTID_LOG_EVENT] is ev.AnonymousGtidEvent
    assert ev.EVENT_CLASSES[ev.PREVIOUS_GTIDS_LOG_EVENT] is ev.PreviousGtidsEvent
    assert ev.EVENT_CLASSES[ev.HEARTBEAT_LOG_EVENT] is ev.HeartbeatEvent
    assert ev.EVENT_CLASSES[ev.TABLE_MAP_EVENT] is ev.TableMapEvent
    assert ev.EVENT_CLASSES[ev.UPDATE_ROWS_EVENT] is ev.UpdateRowsEvent
    assert ev.EVENT_CLASSES[ev.VIEW_CHANGE_EVENT] is ev.ViewChangeEvent
    assert len(ev.EVENT_CLASSES) == 16
    for code, cls in ev.EVENT_CLASSES.items():
        assert cls.TYPE_CODE == code


def test_unknown_type_passes_through() -> None:
    body = bytes(range(30))
    data = encode(ev.UnknownEvent(14, body), log_pos=99, flags=0x80)  # USER_VAR
    header, event = ev.decode_event(data, checksum=True)
    assert event == ev.UnknownEvent(14, body)
    assert event.type_code == 14 and header.type_code == 14
    assert encode(event, log_pos=99, flags=0x80) == data


def test_previous_gtids_copies_its_set() -> None:
    gtids = GtidSet.parse(f"{SID}:1-3")
    event = ev.PreviousGtidsEvent(gtids)
    gtids.add(SID, 10)
    assert event.gtids == GtidSet.parse(f"{SID}:1-3")


# -- golden sizes and bytes (docs/research/binlog-format.md) --------------------------------


def test_post_header_array_is_mysql_8029() -> None:
    assert ev.POST_HEADER_LENGTHS_8029 == bytes.fromhex(  # docs/research §1.2, verbatim
        "00 0d 00 08 00 00 00 00 04 00 04 00 00 00 62 00 04 1a 08 00 00 00 08 08 08 02 00 00 00"
        " 0a 0a 0a 2a 2a 00 12 34 00 0a 28 00"
    )
    lengths = ev.POST_HEADER_LENGTHS_8029
    assert len(lengths) == 41
    for code, expected in (
        (2, 13),
        (4, 8),
        (15, 98),
        (19, 8),
        (33, 42),
        (34, 42),
        (35, 0),
        (36, 18),
        (37, 52),
        (38, 0),
        (39, 10),
        (40, 40),
        (41, 0),
    ):
        assert lengths[code - 1] == expected, code


def test_format_description_golden() -> None:
    data = encode(ev.FormatDescriptionEvent(), log_pos=126, flags=ev.LOG_EVENT_BINLOG_IN_USE_F)
    assert len(data) == 122
    assert struct.unpack_from("<IBIIIH", data) == (1_700_000_000, 15, 7, 122, 126, 1)
    assert data[19:21] == b"\x04\x00"
    assert data[21:71] == b"8.0.36-rpl".ljust(50, b"\0")
    assert data[71:75] == bytes(4)
    assert data[75] == 19
    assert data[76:117] == ev.POST_HEADER_LENGTHS_8029
    assert data[117] == 1
    assert ev.FormatDescriptionEvent().number_of_event_types == 41
    # The CRC is the one of the event with IN_USE cleared: clearing the flag in place keeps
    # it valid, and the CRC over the bytes as they are (flag set) would not match.
    cleared = bytearray(data)
    cleared[17] = 0
    assert data[118:] == struct.pack("<I", zlib.crc32(bytes(cleared[:118])))
    assert data[118:] != struct.pack("<I", zlib.crc32(data[:118]))
    assert ev.verify_checksum(cleared) and ev.verify_checksum(data)
    assert ev.decode_event(bytes(cleared), checksum=True)[1] == ev.FormatDescriptionEvent()


def test_format_description_always_has_a_crc() -> None:
    fd = ev.FormatDescriptionEvent(checksum_alg=ev.BINLOG_CHECKSUM_ALG_OFF)
    data = encode(fd, log_pos=126, checksum=False)
    assert len(data) == 122 and data[117] == 0
    assert ev.verify_checksum(data)
    assert ev.decode_event(data, checksum=False)[1] == fd
    damaged = bytearray(data)
    damaged[30] ^= 1
    with pytest.raises(ev.EventError, match="CRC"):
        ev.decode_event(bytes(damaged), checksum=False)


def test_format_description_rejects_other_formats() -> None:
    for changed in (
        ev.FormatDescriptionEvent(binlog_version=3),
        ev.FormatDescriptionEvent(header_length=13),
    ):
        with pytest.raises(ev.EventError):
            ev.decode_event(encode(changed), checksum=True)
    with pytest.raises(ValueError):
        ev.FormatDescriptionEvent(server_version="x" * 50).encode_body()


def test_empty_previous_gtids_is_31_bytes() -> None:
    data = encode(ev.PreviousGtidsEvent(GtidSet()), log_pos=157)
    assert len(data) == 31
    assert data[19:27] == bytes(8)


def test_xid_golden() -> None:
    data = encode(ev.XidEvent(0x38), log_pos=500)
    assert len(data) == 31
    assert data[19:27] == bytes.fromhex("3800000000000000")
    assert data[27:] == struct.pack("<I", zlib.crc32(data[:27]))


def test_gtid_golden_79_bytes() -> None:
    event = ev.GtidEvent(
        SID,
        1,
        last_committed=0,
        sequence_number=1,
        immediate_commit_timestamp=1_700_000_000_123_456,
        transaction_length=302,
    )
    data = encode(event, log_pos=236)
    assert len(data) == 79
    body = data[19:-4]
    assert body[0] == 1
    assert body[1:17] == SID.bytes
    assert body[17:25] == struct.pack("<q", 1)
    assert body[25] == 2
    assert body[26:42] == struct.pack("<qq", 0, 1)
    assert body[42:49] == (1_700_000_000_123_456).to_bytes(7, "little")
    assert body[49:52] == b"\xfc" + (302).to_bytes(2, "little")
    assert body[52:56] == struct.pack("<I", 80036)


def test_gtid_with_original_timestamp_and_version() -> None:
    event = ev.GtidEvent(
        SID,
        5,
        immediate_commit_timestamp=2000,
        original_commit_timestamp=1000,
        transaction_length=100,
        immediate_server_version=80036,
        original_server_version=80030,
    )
    data = encode(event)
    assert len(data) == 79 + 7 - 2 + 4  # original ts; 1-byte length; original version
    body = data[19:-4]
    assert int.from_bytes(body[42:49], "little") == 2000 | (1 << 55)
    assert int.from_bytes(body[49:56], "little") == 1000
    assert body[56] == 100
    assert struct.unpack_from("<II", body, 57) == (80036 | (1 << 31), 80030)
    assert ev.decode_event(data, checksum=True)[1] == event


def test_gtid_short_bodies_are_decoded() -> None:
    post_header = struct.pack("<B16sqBqq", 1, SID.bytes, 9, 2, 3, 4)
    for body, expected in (
        (post_header[:25], ev.GtidEvent(SID, 9, layout="5.6")),
        (post_header, ev.GtidEvent(SID, 9, last_committed=3, sequence_number=4, layout="5.7")),
        (
            post_header + (77).to_bytes(7, "little"),  # 8.0.1: timestamps only
            ev.GtidEvent(
                SID,
                9,
                last_committed=3,
                sequence_number=4,
                immediate_commit_timestamp=77,
                immediate_server_version=ev.UNDEFINED_SERVER_VERSION,
            ),
        ),
    ):
        data = encode(ev.UnknownEvent(ev.GTID_LOG_EVENT, body))
        assert ev.decode_event(data, checksum=True)[1] == expected
    anonymous = struct.pack("<B16sqBqq", 1, bytes(16), 0, 2, 0, 1)
    data = encode(ev.UnknownEvent(ev.ANONYMOUS_GTID_LOG_EVENT, anonymous))
    assert ev.decode_event(data, checksum=True)[1] == ev.AnonymousGtidEvent(
        sequence_number=1, layout="5.7"
    )
    assert len(data) == 65


@pytest.mark.parametrize(
    "body",
    [
        struct.pack("<B16sq", 1, SID.bytes, 0),  # GNO 0
        struct.pack("<B16sq", 1, SID.bytes, 2**63 - 1),  # GNO_END
        struct.pack("<B16sq", 1, SID.bytes, 5)[:24],  # short
        struct.pack("<B16sqB", 1, SID.bytes, 5, 2),  # cut logical clock
        struct.pack("<B16sqBqq", 1, SID.bytes, 5, 1, 0, 0),  # wrong clock type
        struct.pack("<B16sqBqq", 1, SID.bytes, 5, 2, 0, 0) + b"\x01\x02",  # cut timestamp
        struct.pack("<B16sqBqq", 1, SID.bytes, 5, 2, 0, 0)
        + (1 << 55).to_bytes(7, "little")
        + b"\x01",  # cut original timestamp
        struct.pack("<B16sqBqq", 1, SID.bytes, 5, 2, 0, 0) + bytes(7) + b"\xfb",  # NULL length
        struct.pack("<B16sqBqq", 1, SID.bytes, 5, 2, 0, 0) + bytes(7) + b"\xfc\x01",
        struct.pack("<B16sqBqq", 1, SID.bytes, 5, 2, 0, 0)
        + bytes(7)
        + b"\x05"
        + struct.pack("<I", 1 << 31),  # cut original version
        struct.pack("<B16sqBqq", 1, SID.bytes, 5, 2, 0, 0)
        + bytes(7)
        + b"\x05"
        + struct.pack("<I", 1)
        + b"\x01\x02",  # stray bytes
    ],
)
def test_malformed_gtid_bodies_are_rejected(body: bytes) -> None:
    with pytest.raises(ev.EventError):
        ev.decode_event(encode(ev.UnknownEvent(ev.GTID_LOG_EVENT, body)), checksum=True)


def test_anonymous_gtid_must_have_no_gtid() -> None:
    body = struct.pack("<B16sqBqq", 1, SID.bytes, 3, 2, 0, 0)
    with pytest.raises(ev.EventError, match="ANONYMOUS"):
        ev.decode_event(encode(ev.UnknownEvent(ev.ANONYMOUS_GTID_LOG_EVENT, body)), checksum=True)


@given(st.integers(0, 2**34), st.booleans(), st.none() | timestamps)
def test_transaction_length_counts_the_gtid_event_itself(
    rest: int, checksum: bool, original: int | None
) -> None:
    event = ev.GtidEvent(SID, 3, immediate_commit_timestamp=5, original_commit_timestamp=original)
    sized = event.with_transaction_length(rest, checksum=checksum)
    own = len(ev.encode_event(sized, server_id=1, timestamp=1, checksum=checksum))
    assert sized.transaction_length == own + rest
    assert ev.gtid_transaction_length(event, rest, checksum) == sized
    anonymous = ev.AnonymousGtidEvent().with_transaction_length(rest, checksum=checksum)
    assert anonymous.transaction_length == rest + len(
        ev.encode_event(anonymous, server_id=1, timestamp=1, checksum=checksum)
    )
    old = ev.GtidEvent(SID, 3, layout="5.7")
    assert old.with_transaction_length(rest) == old


@given(
    st.integers(0, 2**34),
    st.booleans(),
    st.none() | timestamps,
    st.integers(1, GNO_MAX),
    st.integers(0, 2**40),
    st.integers(0, 2**40),
    timestamps,
)
def test_encode_gtid_is_the_gtid_event_encoded(
    rest: int, checksum: bool, original: int | None, gno: int, last: int, sequence: int, now: int
) -> None:
    """The leader's GTID bytes equal the event object's, once both are relocated."""
    event = ev.GtidEvent(
        SID,
        gno,
        last_committed=last,
        sequence_number=sequence,
        immediate_commit_timestamp=now,
        original_commit_timestamp=original,
    )
    expected = bytearray(
        ev.encode_event(
            event.with_transaction_length(rest, checksum=checksum),
            server_id=7,
            timestamp=9,
            checksum=checksum,
        )
    )
    built = ev.encode_gtid(
        SID,
        gno,
        last_committed=last,
        sequence_number=sequence,
        immediate_commit_timestamp=now,
        original_commit_timestamp=original,
        rest_length=rest,
        server_id=7,
        timestamp=9,
        checksum=checksum,
    )
    if checksum:
        assert built[-4:] == b"\0\0\0\0"  # left for relocate_events
    ev.relocate_events(expected, 1000, checksum=checksum)
    ev.relocate_events(built, 1000, checksum=checksum)
    assert built == expected


@given(
    st.integers(0, 2**32 - 1),
    st.text(max_size=64).filter(lambda d: "\0" not in d),
    st.text(max_size=300),
    st.booleans(),
    st.integers(0, 2**32 - 1),
)
def test_encode_query_is_the_query_event_encoded(
    thread_id: int, db: str, query: str, checksum: bool, server_id: int
) -> None:
    assume(len(db.encode("utf-8", "surrogateescape")) <= 255)
    status_vars = ev.default_status_vars()
    expected = ev.encode_event(
        ev.QueryEvent(thread_id, 0, 0, status_vars, db, query),
        server_id=server_id,
        timestamp=9,
        checksum=checksum,
        crc_later=True,
    )
    built = ev.encode_query(
        thread_id,
        db,
        query,
        status_vars=status_vars,
        server_id=server_id,
        timestamp=9,
        checksum=checksum,
    )
    assert bytes(built) == expected


@given(
    st.integers(0, 2**64 - 1), st.booleans(), st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1)
)
def test_encode_xid_is_the_xid_event_encoded(
    xid: int, checksum: bool, server_id: int, timestamp: int
) -> None:
    expected = ev.encode_event(
        ev.XidEvent(xid),
        server_id=server_id,
        timestamp=timestamp,
        checksum=checksum,
        crc_later=True,
    )
    built = ev.encode_xid(xid, server_id=server_id, timestamp=timestamp, checksum=checksum)
    assert bytes(built) == expected


def test_crc_later_leaves_the_crc_to_relocation_or_sealing() -> None:
    event = ev.QueryEvent(
        thread_id=1,
        exec_time=0,
        error_code=0,
        status_vars=ev.default_status_vars(),
        db="d",
        query="BEGIN",
    )
    whole = ev.encode_event(event, server_id=1, timestamp=2, checksum=True)
    later = bytearray(
        ev.encode_event(event, server_id=1, timestamp=2, checksum=True, crc_later=True)
    )
    assert later[-4:] == b"\0\0\0\0" and not ev.verify_checksum(later)
    ev.seal_events(later, checksum=True)
    assert later == whole and ev.verify_checksum(later)


FINISHERS = [pytest.param(ev.finish_in_python, id="python")] + (
    [pytest.param(fastpath._finish_in_c, id="c")] if fastpath._finish_in_c is not None else []
)
"""The event finishing loops this build has: the C one only in the compiled build
(test_compiled_build checks that it is there)."""


@pytest.mark.parametrize("finish", FINISHERS)
@given(
    group=st.lists(events, min_size=1, max_size=6),
    checksum=st.booleans(),
    in_use=st.booleans(),
    start=st.integers(4, 1 << 30),
)
def test_finishing_a_group_sets_every_log_pos_and_crc(
    finish: object, group: list[ev.Event], checksum: bool, in_use: bool, start: int
) -> None:
    """Each event of a group, encoded with log_pos 0 and its CRC left open, comes out as
    that event encoded alone at its own end offset: the C loop and the Python one alike
    (an FD flagged in use gets the CRC of the flag cleared)."""
    flags = ev.LOG_EVENT_BINLOG_IN_USE_F if in_use else 0
    buf = bytearray().join(
        ev.encode_event(e, server_id=7, timestamp=9, flags=flags, checksum=checksum, crc_later=True)
        for e in group
    )
    expected, end = bytearray(), start
    for event in group:
        size = len(ev.encode_event(event, server_id=7, timestamp=9, checksum=checksum))
        end += size
        expected += ev.encode_event(
            event, server_id=7, timestamp=9, flags=flags, log_pos=end, checksum=checksum
        )
    assert finish(buf, start, checksum) == -1  # type: ignore[operator]
    assert buf == expected


@pytest.mark.parametrize("finish", FINISHERS)
@pytest.mark.parametrize("cut", [1, 10, 19])
def test_finishing_stops_at_an_impossible_size(
    finish: object, cut: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A group whose second event is cut short (or claims a size under a header): the
    first event is finished, the rest left as it was, and relocate_events says where."""
    xid = bytes(ev.encode_event(ev.XidEvent(5), server_id=7, timestamp=9, crc_later=True))
    buf = bytearray(xid + xid[:cut])
    finished = bytearray(
        ev.encode_event(ev.XidEvent(5), server_id=7, timestamp=9, log_pos=100 + len(xid))
    )
    assert finish(buf, 100, True) == len(xid)  # type: ignore[operator]
    assert buf == finished + xid[:cut]
    liar = bytearray(xid)
    struct.pack_into("<I", liar, 9, 18)
    assert finish(liar, 100, True) == 0  # type: ignore[operator]
    monkeypatch.setattr(fastpath, "_finish_in_c", None if finish is ev.finish_in_python else finish)
    with pytest.raises(ev.EventError, match=f"at buffer offset {len(xid)} is impossible"):
        ev.relocate_events(bytearray(xid + xid[:cut]), 100, checksum=True)


def test_transaction_length_boundaries() -> None:
    event = ev.GtidEvent(SID, 1)
    # 79-byte event with a 3-byte length; 77 with a 1-byte one.
    assert event.with_transaction_length(250 - 77).transaction_length == 250
    assert event.with_transaction_length(251 - 77).transaction_length == 253
    assert event.with_transaction_length(302 - 79).transaction_length == 302


# -- QUERY ----------------------------------------------------------------------------------


def test_default_status_vars() -> None:
    sv = ev.default_status_vars()
    assert len(sv) == 26
    assert sv == bytes.fromhex("0000000000012000a04500000000060373746404ff00ff00ff00")
    assert ev.default_status_vars(updated_db_names=["a"])[26:] == bytes.fromhex("0c016100")
    many = ev.default_status_vars(updated_db_names=[f"d{i}" for i in range(17)])
    assert many[26:] == bytes((0x0C, 254))
    assert ev.default_status_vars(updated_db_names=[])[26:] == b"\x0c\x00"


def test_query_golden_layout() -> None:
    sv = ev.default_status_vars(updated_db_names=["a"])
    event = ev.QueryEvent(
        thread_id=36,
        exec_time=0,
        error_code=0,
        status_vars=sv,
        db="a",
        query="CREATE TABLE t (i INT)",
    )
    data = encode(event)
    body = data[19:-4]
    assert struct.unpack_from("<IIBHH", body) == (36, 0, 1, 0, len(sv))
    assert body[13 : 13 + len(sv)] == sv
    assert body[13 + len(sv) : 15 + len(sv)] == b"a\0"
    assert body[15 + len(sv) :] == b"CREATE TABLE t (i INT)"
    assert len(data) == 19 + 13 + len(sv) + 2 + 22 + 4


@pytest.mark.parametrize(
    "body",
    [
        bytes(12),
        struct.pack("<IIBHH", 1, 0, 0, 0, 40) + bytes(10),  # status vars overrun
        struct.pack("<IIBHH", 1, 0, 5, 0, 0) + b"ab\0",  # db overruns
        struct.pack("<IIBHH", 1, 0, 2, 0, 0) + b"abcSELECT",  # db not NUL-terminated
    ],
)
def test_malformed_query_bodies_are_rejected(body: bytes) -> None:
    with pytest.raises(ev.EventError):
        ev.decode_event(encode(ev.UnknownEvent(ev.QUERY_EVENT, body)), checksum=True)


def test_query_with_non_utf8_bytes_round_trips() -> None:
    body = struct.pack("<IIBHH", 1, 0, 0, 0, 0) + b"\0" + b"INSERT INTO t VALUES ('\xff\xfe')"
    data = encode(ev.UnknownEvent(ev.QUERY_EVENT, body))
    _, event = ev.decode_event(data, checksum=True)
    assert isinstance(event, ev.QueryEvent)
    assert encode(event) == data


# -- other bodies ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "body"),
    [
        (ev.XID_EVENT, bytes(7)),
        (ev.XID_EVENT, bytes(9)),
        (ev.ROTATE_EVENT, bytes(8)),
        (ev.STOP_EVENT, b"x"),
        (ev.INTVAR_EVENT, bytes(8)),
        (ev.INTVAR_EVENT, bytes(9)),  # kind 0 = INVALID_INT_EVENT
        (ev.PREVIOUS_GTIDS_LOG_EVENT, bytes(9)),
        (ev.FORMAT_DESCRIPTION_EVENT, bytes(20)),
    ],
)
def test_malformed_bodies_are_rejected(code: int, body: bytes) -> None:
    with pytest.raises(ev.EventError) as info:
        ev.decode_event(encode(ev.UnknownEvent(code, body)), checksum=True)
    assert info.value.reason
    assert info.value.mysql_error().errno == ER_BINLOG_EVENT_CORRUPT.errno


def test_rotate_golden() -> None:
    data = encode(ev.RotateEvent(4, "bin.000003"))
    assert len(data) == 41
    assert data[19:37] == struct.pack("<Q", 4) + b"bin.000003"


def test_view_change_golden_layout() -> None:
    info = ((b"gtid_extracted", b"g:1-5"), (b"1", b"g:1-3"))
    data = encode(ev.ViewChangeEvent("17225866543210001:7", 0, info), checksum=False)
    header, event = ev.decode_event(data, checksum=False)
    assert header.type_code == 37
    body = data[19:]
    assert body[:40] == b"17225866543210001:7".ljust(40, b"\0")
    assert struct.unpack_from("<QI", body, 40) == (0, 2)
    assert body[52:] == (
        struct.pack("<H", 1) + b"1" + struct.pack("<I", 5) + b"g:1-3"
        + struct.pack("<H", 14) + b"gtid_extracted" + struct.pack("<I", 5) + b"g:1-5"
    )  # fmt: skip
    assert isinstance(event, ev.ViewChangeEvent)
    assert event.certification_info == tuple(sorted(info))


@pytest.mark.parametrize("view_id", ["", "x" * 40, "a\0b"])
def test_view_change_refuses_a_view_id_it_cannot_encode(view_id: str) -> None:
    with pytest.raises(ValueError, match="view id"):
        ev.ViewChangeEvent(view_id).encode_body()


_VC_FIXED = b"v:1".ljust(40, b"\0") + struct.pack("<QI", 0, 1)


@pytest.mark.parametrize(
    "body",
    [
        bytes(51),  # shorter than the post-header
        bytes(40) + struct.pack("<QI", 0, 0),  # empty view id
        b"\xff".ljust(40, b"\0") + struct.pack("<QI", 0, 0),  # not UTF-8
        _VC_FIXED,  # one entry announced, none there
        _VC_FIXED + struct.pack("<H", 5) + b"ab",  # key past the end
        _VC_FIXED + struct.pack("<H", 1) + b"k" + struct.pack("<I", 9) + b"v",  # value past it
        _VC_FIXED + struct.pack("<H", 1) + b"k" + struct.pack("<I", 1) + b"vX",  # bytes after
    ],
)
def test_malformed_view_change_bodies_are_rejected(body: bytes) -> None:
    with pytest.raises(ev.EventError) as info:
        ev.decode_event(encode(ev.UnknownEvent(ev.VIEW_CHANGE_EVENT, body)), checksum=True)
    assert info.value.mysql_error().errno == ER_BINLOG_EVENT_CORRUPT.errno


def test_stop_is_23_bytes() -> None:
    assert len(encode(ev.StopEvent())) == 23
    assert len(encode(ev.StopEvent(), checksum=False)) == 19


# -- lengths, CRCs and damage ---------------------------------------------------------------


def test_length_mismatches_are_rejected() -> None:
    data = encode(ev.XidEvent(1))
    with pytest.raises(ev.EventError, match="event_size"):
        ev.decode_event(data[:-1], checksum=True)
    with pytest.raises(ev.EventError, match="event_size"):
        ev.decode_event(data + b"\0", checksum=True)
    with pytest.raises(ev.EventError, match="header"):
        ev.decode_event(data[:10], checksum=True)
    tiny = bytearray(encode(ev.StopEvent(), checksum=False))
    with pytest.raises(ev.EventError, match="CRC"):
        ev.decode_event(bytes(tiny), checksum=True)
    assert not ev.verify_checksum(bytes(tiny))


@given(events, st.data())
def test_any_flipped_byte_is_detected(event: ev.Event, data: st.DataObject) -> None:
    raw = bytearray(encode(event, log_pos=1000))
    index = data.draw(st.integers(0, len(raw) - 1))
    flip = data.draw(st.integers(1, 255))
    # The one flip a CRC must not see: an FD's LOG_EVENT_BINLOG_IN_USE_F (the server
    # clears it in place; the FD's CRC counts it as clear).
    assume(
        not (
            isinstance(event, ev.FormatDescriptionEvent)
            and index == 17
            and flip == ev.LOG_EVENT_BINLOG_IN_USE_F
        )
    )
    raw[index] ^= flip
    with pytest.raises(ev.EventError):
        ev.decode_event(bytes(raw), checksum=True)


@given(events, st.booleans(), st.integers(0, 2**32 - 1), st.integers(0, 0xFFFF))
def test_set_log_pos_keeps_the_crc_valid(
    event: ev.Event, checksum: bool, log_pos: int, flags: int
) -> None:
    first = encode(ev.XidEvent(3), checksum=checksum)
    raw = encode(event, log_pos=0, flags=flags, checksum=checksum)
    buf = bytearray(first + raw)
    ev.set_log_pos(buf, len(first), log_pos, checksum)
    header, decoded = ev.decode_event(bytes(buf[len(first) :]), checksum=checksum)
    assert header.log_pos == log_pos and decoded == event
    assert bytes(buf[len(first) :]) == encode(
        event, log_pos=log_pos, flags=flags, checksum=checksum
    )
    assert bytes(buf[: len(first)]) == first
    buf.extend(b"x")  # no buffer export left behind


@given(st.lists(events, min_size=1, max_size=6), st.booleans(), st.integers(4, 2**31))
def test_relocate_events(batch: list[ev.Event], checksum: bool, start: int) -> None:
    buf = bytearray(b"".join(encode(e, checksum=checksum) for e in batch))
    ev.relocate_events(buf, start, checksum=checksum)
    offset = 0
    for event in batch:
        size = struct.unpack_from("<I", buf, offset + 9)[0]
        header, decoded = ev.decode_event(bytes(buf[offset : offset + size]), checksum=checksum)
        assert decoded == event
        assert header.log_pos == start + offset + size
        offset += size
    assert offset == len(buf)
    with pytest.raises(ev.EventError):
        ev.relocate_events(bytearray(buf[:-1]), start, checksum=checksum)


def test_clearing_in_use_keeps_fd_valid_after_set_log_pos() -> None:
    buf = bytearray(encode(ev.FormatDescriptionEvent(), flags=ev.LOG_EVENT_BINLOG_IN_USE_F))
    ev.set_log_pos(buf, 0, 126, False)
    buf[17] &= ~ev.LOG_EVENT_BINLOG_IN_USE_F
    header, _ = ev.decode_event(bytes(buf), checksum=True)
    assert header.flags == 0 and header.log_pos == 126


def test_encoder_rejects_out_of_range_fields() -> None:
    with pytest.raises(ValueError):
        ev.GtidEvent(SID, 0).encode_body()
    with pytest.raises(ValueError):
        ev.GtidEvent(SID, 1, immediate_commit_timestamp=1 << 55).encode_body()
    with pytest.raises(ValueError):
        ev.GtidEvent(SID, 1, original_server_version=1 << 31).encode_body()
    with pytest.raises(ValueError):
        ev.QueryEvent(0, 0, 0, b"", "x" * 256, "q").encode_body()
    with pytest.raises(ValueError):
        ev.RotateEvent(4, "").encode_body()
    with pytest.raises(TypeError):
        ev.UnknownEvent.decode_body(b"")


def test_gtid_property() -> None:
    assert ev.GtidEvent(SID, 4).gtid == Gtid(SID, 4)
    assert attrs.evolve(ev.GtidEvent(SID, 4), gno=5).gtid == Gtid(SID, 5)
