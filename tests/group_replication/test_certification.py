"""Certification, GTID sets and the message codec, without a group."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rpl.group_replication.certifier import Certifier
from rpl.group_replication.gtid_sets import GtidSet, intersect_all
from rpl.group_replication.messages import (
    CertificationState,
    MemberStats,
    MessageError,
    Recovered,
    StableSet,
    TransactionMessage,
    TransactionPrepared,
    decode,
    encode,
)

G = "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"
S = "11111111-2222-3333-4444-555555555555"


def test_gtid_set_text_round_trip_and_order() -> None:
    text = f"{S}:1-3:7,{G}:2-5"
    parsed = GtidSet.parse(text)
    assert str(parsed) == f"{S}:1-3:7,{G}:2-5"
    assert parsed.contains(S, 7) and not parsed.contains(S, 4)
    assert GtidSet.parse(f"{S}:2").issubset(parsed)
    assert not GtidSet.parse(f"{S}:4").issubset(parsed)
    assert parsed.next_free(G) == 1 and parsed.next_free(S) == 4


@pytest.mark.parametrize("bad", ["nope:1", f"{S}", f"{S}:0", f"{S}:5-3", f"{S}:x"])
def test_malformed_gtid_sets_are_refused(bad: str) -> None:
    with pytest.raises(ValueError):
        GtidSet.parse(bad)


@given(st.sets(st.integers(1, 60)), st.sets(st.integers(1, 60)))
def test_gtid_set_operations_match_python_sets(a: set[int], b: set[int]) -> None:
    left, right = GtidSet(), GtidSet()
    for gno in a:
        left.add(S, gno)
    for gno in b:
        right.add(S, gno)
    assert {g for g in range(1, 61) if left.intersection(right).contains(S, g)} == a & b
    assert left.issubset(right) == (a <= b)
    assert GtidSet.parse(str(left)) == left
    assert intersect_all([left, right]) == left.intersection(right)
    merged = left.copy()
    merged.update(right)
    assert {g for g in range(1, 61) if merged.contains(S, g)} == a | b


def test_a_writer_the_snapshot_did_not_see_is_a_conflict() -> None:
    certifier = Certifier(G)
    first = certifier.certify(GtidSet(), frozenset({1, 2}))
    assert first is not None and first.gno == 1
    # ran before the first committed (its snapshot lacks G:1): conflict on item 2
    assert certifier.certify(GtidSet(), frozenset({2, 3})) is None
    # ran after it: no conflict
    seen = GtidSet.parse(f"{G}:1")
    second = certifier.certify(seen, frozenset({2, 3}))
    assert second is not None and second.gno == 2
    # other rows never conflict, whatever the snapshot
    assert certifier.certify(GtidSet(), frozenset({9})) is not None
    assert (certifier.positive, certifier.negative) == (3, 1)


def test_gnos_skip_what_the_group_had_and_gc_drops_stable_items() -> None:
    certifier = Certifier(G, GtidSet.parse(f"{G}:1-4"))
    result = certifier.certify(GtidSet(), frozenset({5}))
    assert result is not None and result.gtid(G) == f"{G}:5"
    assert certifier.garbage_collect(GtidSet.parse(f"{G}:1-4")) == 0
    assert certifier.garbage_collect(GtidSet.parse(f"{G}:1-5")) == 1
    assert certifier.certify(GtidSet(), frozenset({5})) is not None  # collected


def test_state_transfer_gives_the_same_decisions() -> None:
    a = Certifier(G)
    a.certify(GtidSet(), frozenset({1}))
    b = Certifier.from_state(G, *a.state())
    for certifier in (a, b):
        assert certifier.certify(GtidSet(), frozenset({1})) is None
        decided = certifier.certify(GtidSet.parse(f"{G}:1"), frozenset({1}))
        assert decided is not None and decided.gno == 2


@pytest.mark.parametrize(
    "message",
    [
        TransactionMessage(S, 3, f"{G}:1-2", (1, 2**64 - 1), 7, 123, True, b"\x00\xffevents"),
        CertificationState(S, G, "12", f"{G}:1", ((5, f"{G}:1"),), (S,), S),
        Recovered(S),
        StableSet(S, f"{G}:1-9"),
        MemberStats(S, "1:2", 0, 9, 1, 4, f"{G}:1-7", f"{G}:9", 2, 5, 3, 1),
        TransactionPrepared(S, f"{G}:12"),
    ],
)
def test_messages_round_trip(message: object) -> None:
    assert decode(encode(message)) == message  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"garbage",
        b"XYZ\x01\x01\x00\x00\x00\x00",
        encode(Recovered(S))[:-2],
        encode(Recovered(S)).replace(b"RGR\x01\x03", b"RGR\x01\x63"),
        encode(Recovered(S)).replace(b"RGR\x01", b"RGR\x02"),
        encode(Recovered(S)) + b"tail",
        encode(StableSet(S, "x")).replace(b'"member"', b'"someone"'),
        encode(MemberStats(S, "1", 0, 9, 1, 4, "", "", 2, 5, 3, 1)).replace(b"9", b'"9"'),
        encode(MemberStats(S, "1", 0, 12, 1, 4, "", "", 2, 5, 3, 1)).replace(b"12", b"[]"),
        encode(Recovered(S)).replace(b"RGR\x01\x03", b"RGR\x01\x06"),  # type 6: not used
    ],
)
def test_malformed_messages_are_refused(data: bytes) -> None:
    with pytest.raises(MessageError):
        decode(data)
