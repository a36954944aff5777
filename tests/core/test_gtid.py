"""GTIDs and GTID sets: text and binary forms, merging, set algebra."""

from __future__ import annotations

import struct
import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rpl.core.binlog.gtid import GNO_MAX, Gtid, GtidSet

A = uuid.UUID("3e11fa47-71ca-11e1-9e33-c80aa9429562")
B = uuid.UUID("00000000-0000-0000-0000-000000000001")
C = uuid.UUID("ffffffff-ffff-ffff-ffff-ffffffffffff")

sids = st.sampled_from([A, B, C])
small_gnos = st.integers(1, 60)
intervals = st.tuples(sids, small_gnos, st.integers(0, 8)).map(lambda t: (t[0], t[1], t[1] + t[2]))


@st.composite
def gtid_sets(draw: st.DrawFn) -> GtidSet:
    result = GtidSet()
    for sid, start, end in draw(st.lists(intervals, max_size=12)):
        result.add_interval(sid, start, end)
    if draw(st.booleans()):
        result.add(A, draw(st.integers(GNO_MAX - 3, GNO_MAX)))
    return result


def members(gtids: GtidSet) -> set[tuple[uuid.UUID, int]]:
    """The GTIDs of a small set, the slow obvious way."""
    return {
        (sid, gno)
        for sid in gtids.sids()
        for s, e in gtids.intervals(sid)
        for gno in range(s, e + 1)
    }


def members_if_small(gtids: GtidSet) -> set[tuple[uuid.UUID, int]]:
    """The GTIDs, but only the end points of huge intervals."""
    out: set[tuple[uuid.UUID, int]] = set()
    for sid in gtids.sids():
        for s, e in gtids.intervals(sid):
            if e - s < 1000:
                out.update((sid, g) for g in range(s, e + 1))
            else:
                out.update({(sid, s), (sid, e)})
    return out


# -- building and merging -------------------------------------------------------------------


def test_adjacent_and_overlapping_ranges_merge() -> None:
    s = GtidSet()
    for gno in (5, 3, 4, 1, 10, 2, 9):
        s.add(A, gno)
    assert s.intervals(A) == [(1, 5), (9, 10)]
    s.add_interval(A, 6, 8)
    assert s.intervals(A) == [(1, 10)]
    s.add_interval(A, 20, 30)
    s.add_interval(A, 12, 25)
    assert s.intervals(A) == [(1, 10), (12, 30)]
    s.add_interval(A, 11, 11)
    assert s.intervals(A) == [(1, 30)]


@given(st.lists(intervals, max_size=30))
def test_intervals_are_always_sorted_and_disjoint(items: list[tuple[uuid.UUID, int, int]]) -> None:
    s = GtidSet()
    expected: set[tuple[uuid.UUID, int]] = set()
    for sid, start, end in items:
        s.add_interval(sid, start, end)
        expected.update((sid, g) for g in range(start, end + 1))
    assert members(s) == expected
    for sid in s.sids():
        ivs = s.intervals(sid)
        pairs = zip(ivs, ivs[1:], strict=False)
        assert all(a_end + 1 < b_start for (_, a_end), (b_start, _) in pairs)
    assert s.count() == len(expected)
    for sid, gno in expected:
        assert Gtid(sid, gno) in s
    assert Gtid(A, 100) not in s


def test_invalid_gnos_are_rejected() -> None:
    s = GtidSet()
    with pytest.raises(ValueError):
        s.add(A, 0)
    with pytest.raises(ValueError):
        s.add(A, GNO_MAX + 1)
    with pytest.raises(ValueError):
        s.add_interval(A, 5, 4)
    s.add(A, GNO_MAX)
    assert s.last_gno(A) == GNO_MAX


def test_next_gno_is_smallest_free() -> None:
    s = GtidSet()
    assert s.next_gno(A) == 1
    s.add_interval(A, 1, 5)
    s.add(A, 9)
    assert s.next_gno(A) == 6
    assert s.last_gno(A) == 9
    assert s.last_gno(B) == 0
    t = GtidSet()
    t.add(A, 3)
    assert t.next_gno(A) == 1
    full = GtidSet()
    full.add_interval(A, 1, GNO_MAX)
    with pytest.raises(ValueError, match="exhausted"):
        full.next_gno(A)


# -- algebra --------------------------------------------------------------------------------


@given(gtid_sets(), gtid_sets())
def test_union_and_difference_match_python_sets(x: GtidSet, y: GtidSet) -> None:
    mx, my = members_if_small(x), members_if_small(y)
    union = x.copy()
    union.update(y)
    assert union == y | x
    assert x.is_subset(union) and y.is_subset(union)
    diff = x - y
    assert diff.is_subset(x)
    assert not (diff & y)
    assert (diff | (x & y)) == x
    assert x.difference(y) == diff
    if all(e - s < 1000 for g in (x, y) for sid in g.sids() for s, e in g.intervals(sid)):
        assert members(union) == mx | my
        assert members(diff) == mx - my
        assert members(x & y) == mx & my
    assert x.is_subset(y) == (not (x - y))
    assert (x - x) == GtidSet() and not (x - x)


@given(gtid_sets())
def test_copy_is_independent(x: GtidSet) -> None:
    before = str(x)
    y = x.copy()
    y.add(B, 1000)
    y.add_interval(A, 1, 70)
    assert str(x) == before
    assert x.is_subset(y)


def test_equality_and_bool() -> None:
    assert not GtidSet()
    assert GtidSet() == GtidSet()
    assert GtidSet.parse(f"{A}:1-3") == GtidSet.parse(f"{A}:1:2:3")
    assert GtidSet.parse(f"{A}:1-3") != GtidSet.parse(f"{A}:1-4")
    assert GtidSet.parse(f"{A}:1-3") != "x"
    assert GtidSet([Gtid(A, 1), Gtid(A, 2)]) == GtidSet.parse(f"{A}:1-2")
    with pytest.raises(TypeError):
        hash(GtidSet())


# -- text form ------------------------------------------------------------------------------


def test_str_is_mysql_format() -> None:
    s = GtidSet()
    s.add_interval(A, 1, 5)
    s.add(A, 7)
    s.add_interval(B, 1, 1)
    assert str(s) == (
        "00000000-0000-0000-0000-000000000001:1,\n3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5:7"
    )
    assert str(GtidSet()) == ""
    assert str(Gtid(A, 3)) == "3e11fa47-71ca-11e1-9e33-c80aa9429562:3"


def test_parse_accepts_mysql_text() -> None:
    text = (
        "3E11FA47-71CA-11E1-9E33-C80AA9429562:1-5:7 ,\n"
        "  00000000-0000-0000-0000-000000000001 : 1 - 2 :3\n"
    )
    s = GtidSet.parse(text)
    assert s.intervals(A) == [(1, 5), (7, 7)]
    assert s.intervals(B) == [(1, 3)]
    assert GtidSet.parse("") == GtidSet()
    assert GtidSet.parse("  \n ") == GtidSet()
    assert GtidSet.parse(f"{A}:5-9:1-6") == GtidSet.parse(f"{A}:1-9")
    assert Gtid.parse(f" {str(A).upper()}:42 ") == Gtid(A, 42)


@pytest.mark.parametrize(
    "text",
    [
        "nonsense",
        f"{A}:",
        f"{A}:0",
        f"{A}:5-3",
        f"{A}:1-",
        f"{A}:x",
        f"{A}:1,",
        f",{A}:1",
        f"{A}:{GNO_MAX + 1}",
        "3e11fa47-71ca-11e1-9e33-c80aa942956:1",
        f"{A}:+1",
        f"{A}:1:-3",
    ],
)
def test_parse_rejects_malformed_text(text: str) -> None:
    with pytest.raises(ValueError, match="malformed|range"):
        GtidSet.parse(text)


@pytest.mark.parametrize("text", ["nonsense", f"{A}", f"{A}:0", f"{A}:1-2", f"{A}:x"])
def test_gtid_parse_rejects_malformed_text(text: str) -> None:
    with pytest.raises(ValueError):
        Gtid.parse(text)


@given(gtid_sets())
def test_text_round_trip(x: GtidSet) -> None:
    assert GtidSet.parse(str(x)) == x
    assert GtidSet.parse(str(x).upper()) == x
    assert str(GtidSet.parse(str(x))) == str(x)


# -- binary form ----------------------------------------------------------------------------


def test_encode_golden() -> None:
    assert GtidSet().encode() == bytes(8)
    s = GtidSet.parse(f"{A}:1-5:7")
    assert s.encode() == (
        struct.pack("<Q", 1) + A.bytes + struct.pack("<Q", 2) + struct.pack("<qqqq", 1, 6, 7, 8)
    )
    assert A.bytes.hex() == "3e11fa4771ca11e19e33c80aa9429562"
    two = GtidSet.parse(f"{C}:1,{A}:2")
    encoded = two.encode()
    assert encoded[8:24] == A.bytes  # SIDs sorted
    assert encoded[48:64] == C.bytes


@given(gtid_sets())
def test_binary_round_trip(x: GtidSet) -> None:
    data = x.encode()
    assert GtidSet.decode(data) == x
    assert GtidSet.decode(memoryview(data)) == x
    assert len(data) == 8 + sum(24 + 16 * len(x.intervals(sid)) for sid in x.sids())


def _one_sid(*pairs: int) -> bytes:
    return (
        struct.pack("<Q", 1)
        + A.bytes
        + struct.pack("<Q", len(pairs) // 2)
        + struct.pack(f"<{len(pairs)}q", *pairs)
    )


@pytest.mark.parametrize(
    "data",
    [
        b"",
        bytes(7),
        bytes(9),
        struct.pack("<Q", 1),
        struct.pack("<Q", 1) + A.bytes + struct.pack("<Q", 1),
        _one_sid(1, 6, 6, 8),  # adjacent intervals
        _one_sid(5, 8, 1, 3),  # descending
        _one_sid(3, 3),  # empty interval
        _one_sid(0, 3),  # GNO 0
        _one_sid(1, -1),  # negative end
        _one_sid(-5, 3),  # negative start
        _one_sid(1, 3) + b"\0",  # trailing byte
        struct.pack("<Q", 1 << 60),  # tagged-format byte
        struct.pack("<Q", 1000),
    ],
)
def test_decode_rejects_malformed(data: bytes) -> None:
    with pytest.raises(ValueError):
        GtidSet.decode(data)


def test_decode_accepts_well_formed_edge() -> None:
    assert GtidSet.decode(_one_sid(1, 3, 4, 5)).intervals(A) == [(1, 2), (4, 4)]
    assert GtidSet.decode(_one_sid(1, GNO_MAX + 1)).intervals(A) == [(1, GNO_MAX)]


def test_iteration_yields_gtids_in_order() -> None:
    s = GtidSet.parse(f"{A}:2-3,{B}:9")
    assert list(s) == [Gtid(B, 9), Gtid(A, 2), Gtid(A, 3)]


@given(sids, st.integers(1, 3), sids, st.integers(1, 3))
def test_a_gtid_compares_and_hashes_as_its_sid_and_gno(
    sid_a: uuid.UUID, gno_a: int, sid_b: uuid.UUID, gno_b: int
) -> None:
    """Gtid writes its equality, order and hash out (a plain class, native when compiled):
    they must be those of the pair ``(sid, gno)``, a UUID ordering as its integer."""
    a, b = Gtid(sid_a, gno_a), Gtid(sid_b, gno_b)
    pair_a, pair_b = (sid_a, gno_a), (sid_b, gno_b)
    assert (a == b, a != b) == (pair_a == pair_b, pair_a != pair_b)
    assert (a < b, a <= b, a > b, a >= b) == (
        pair_a < pair_b,
        pair_a <= pair_b,
        pair_a > pair_b,
        pair_a >= pair_b,
    )
    assert len({a, b, Gtid(sid_a, gno_a)}) == len({pair_a, pair_b})
    assert a != (sid_a, gno_a)
    assert str(a) == f"{sid_a}:{gno_a}"
