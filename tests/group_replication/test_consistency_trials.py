"""Proof from outside (issue 40, WL#10379): a client history of readers and writers on all
three members of a multi-primary group, at one consistency level, under a fault, checked
by ``rpl validate --fresh-reads --group`` (:mod:`consistency_harness`). EVENTUAL shows
stale reads (the checker can fail); BEFORE (reads), AFTER (read-your-writes on other
members) and BEFORE_AND_AFTER show none; no level loses an acknowledged write or breaks
the group's order.

The default suite runs one trial per level, each with its own fault;
``RPL_GROUP_CONSISTENCY_TRIALS`` (``tox -e faults``: 2) runs that many of every level
under every fault.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from consistency_harness import FAULTS, run_trial

from rpl.core.testing.group import Group

TRIALS = int(os.environ.get("RPL_GROUP_CONSISTENCY_TRIALS", "0"))
DEFAULT_PLAN = [
    ("EVENTUAL", "lagging_applier"),
    ("BEFORE", "paused_member"),
    ("AFTER", "killed_member"),
    ("BEFORE_AND_AFTER", "cut_off_member"),
]
PLAN = (
    [
        (level, fault)
        for level in ("EVENTUAL", "BEFORE", "AFTER", "BEFORE_AND_AFTER")
        for fault in FAULTS
        for _ in range(TRIALS)
    ]
    if TRIALS
    else DEFAULT_PLAN
)


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    from rpl.core.validate.job import spark_session

    session = spark_session("local[2]")
    yield session
    session.stop()


@pytest.mark.parametrize(("level", "fault"), PLAN)
def test_a_level_keeps_its_promise_under_a_fault(
    group: Group, tmp_path: Path, spark: Any, level: str, fault: str
) -> None:
    verdict = run_trial(group, level, fault, tmp_path, spark)
    summary = verdict.report.summary()
    print(
        f"{level} under {fault}: {verdict.operations} operations, {verdict.reads_ok} reads, "
        f"{verdict.writes_ok} writes acknowledged, {verdict.stale_reads} stale reads"
    )
    assert verdict.reads_ok > 50 and verdict.writes_ok > 20, (verdict, summary)
    assert verdict.other_violations == [], summary
    if level == "EVENTUAL" and fault == "lagging_applier":
        assert verdict.stale_reads > 0, f"EVENTUAL showed no stale read:\n{summary}"
    elif level != "EVENTUAL":
        assert verdict.stale_reads == 0, summary
