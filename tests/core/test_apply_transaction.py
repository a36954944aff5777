"""The applier's RelayTransaction reads its GTID event and statements from the events' bodies
(rpl.core.replication.relay_transaction): what it takes must be what the event classes decode."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rpl.core.binlog.events import (
    QUERY_EVENT,
    XID_EVENT,
    EventError,
    GtidEvent,
    QueryEvent,
    XidEvent,
    decode_event,
    encode_event,
)
from rpl.core.binlog.gtid import Gtid
from rpl.core.replication.relay_transaction import COMMIT_MARK, RelayTransaction

SID = uuid.UUID("3e11fa47-71ca-11e1-9e33-c80aa9429562")


def _body(event: GtidEvent | QueryEvent | XidEvent) -> bytes:
    return encode_event(event, server_id=7, timestamp=1_700_000_000, checksum=False)[19:]


@given(
    gno=st.integers(1, 2**63 - 2),
    last=st.integers(0, 2**40),
    step=st.integers(1, 100),
    immediate=st.integers(0, 2**55 - 1),
    original=st.none() | st.integers(0, 2**55 - 1),
    layout=st.sampled_from(["8.0", "5.7", "5.6"]),
)
def test_gtid_fields_are_the_decoded_events(
    gno: int, last: int, step: int, immediate: int, original: int | None, layout: str
) -> None:
    event = GtidEvent(
        SID,
        gno,
        last_committed=last,
        sequence_number=last + step,
        immediate_commit_timestamp=immediate,
        original_commit_timestamp=original,
        layout=layout,  # type: ignore[arg-type]
    )
    raw = encode_event(event, server_id=7, timestamp=1_700_000_000, checksum=True)
    header, decoded = decode_event(raw, checksum=True)
    assert isinstance(decoded, GtidEvent)
    transaction = RelayTransaction(raw[19:-4], header.server_id, header.timestamp)
    assert transaction.gtid == Gtid(SID, gno)
    assert (transaction.last_committed, transaction.sequence_number) == (
        decoded.last_committed,
        decoded.sequence_number,
    )
    assert transaction.commit_timestamp == (
        decoded.original_commit_timestamp
        or decoded.immediate_commit_timestamp
        or header.timestamp * 1_000_000
    )
    assert transaction.origin == (7, 1_700_000_000)


def test_statements_in_order_and_xid_as_commit() -> None:
    transaction = RelayTransaction(_body(GtidEvent(SID, 5)), 7, 0)
    assert transaction.add(QUERY_EVENT, _body(QueryEvent(1, 0, 0, b"", "db1", "BEGIN"))) == "BEGIN"
    assert (
        transaction.add(
            QUERY_EVENT,
            _body(QueryEvent(1, 0, 0, b"\x00\x01\x00\x00\x00", "db1", "INSERT INTO t VALUES (1)")),
        )
        == "INSERT INTO t VALUES (1)"
    )
    assert transaction.add(XID_EVENT, _body(XidEvent(42))) == ""
    assert transaction.statements == [
        ("db1", "BEGIN"),
        ("db1", "INSERT INTO t VALUES (1)"),
        COMMIT_MARK,
    ]
    assert not transaction.is_ddl


def test_a_statement_without_begin_is_ddl() -> None:
    transaction = RelayTransaction(_body(GtidEvent(SID, 5)), 7, 0)
    transaction.add(QUERY_EVENT, _body(QueryEvent(1, 0, 0, b"", "db1", "CREATE TABLE t (a INT)")))
    assert transaction.is_ddl
    assert transaction.statements == [("db1", "CREATE TABLE t (a INT)")]


def test_other_events_are_passed_over() -> None:
    transaction = RelayTransaction(_body(GtidEvent(SID, 5)), 7, 0)
    assert transaction.add(5, b"\x02" + b"\x00" * 8) == ""  # INTVAR
    assert transaction.statements == [] and transaction.is_ddl


@pytest.mark.parametrize(
    ("code", "body", "why"),
    [
        (XID_EVENT, b"\x00" * 7, "XID body of 7 bytes"),
        (QUERY_EVENT, b"\x00" * 12, "shorter than the post header"),
        (QUERY_EVENT, b"\x00" * 8 + b"\x05" + b"\x00" * 4 + b"db", "overrun"),
    ],
)
def test_a_malformed_statement_is_an_event_error(code: int, body: bytes, why: str) -> None:
    transaction = RelayTransaction(_body(GtidEvent(SID, 5)), 7, 0)
    with pytest.raises(EventError, match=why):
        transaction.add(code, body)


def test_a_gno_out_of_range_is_an_event_error() -> None:
    body = bytearray(_body(GtidEvent(SID, 5)))
    body[17:25] = (0).to_bytes(8, "little")
    with pytest.raises(EventError, match="invalid GNO 0"):
        RelayTransaction(bytes(body), 7, 0)
