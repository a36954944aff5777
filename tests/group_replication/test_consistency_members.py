"""Which members an AFTER transaction waits for (rpl.group_replication.consistency): the
rule every member applies alike at delivery. The behaviour on real groups is the
conformance suite's (test_conformance.py)."""

from __future__ import annotations

import pytest

from rpl.group_replication.consistency import members_that_must_prepare
from rpl.group_replication.members import Member, MemberState


def _member(member_id: str, version: str, state: MemberState = MemberState.ONLINE) -> Member:
    return Member(member_id, "h", 3306, version, 50, state)


@pytest.mark.parametrize("old", ["8.0.13", "5.7.30-log"])
def test_a_member_older_than_8_0_14_refuses_after(old: str) -> None:
    """FR-10: the list of members that must prepare is None (the transaction rolls back
    on every member alike) when one member of the view is older than 8.0.14; a
    RECOVERING member is not listed."""
    view = [_member("a", "8.0.36-rpl"), _member("b", "8.0.36-rpl")]
    assert members_that_must_prepare(view, "a") == frozenset({"b"})
    assert members_that_must_prepare([*view, _member("c", old)], "a") is None
    recovering = _member("c", "8.0.14", MemberState.RECOVERING)
    assert members_that_must_prepare([*view, recovering], "b") == frozenset({"a"})  # not waited for
