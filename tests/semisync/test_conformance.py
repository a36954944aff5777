"""The semisync conformance suite (rpl.core.testing.suite) against the bundled plugins,
rpl_semi_sync_master and rpl_semi_sync_slave, every requirement open; and the suite's
requirement gate, which must skip exactly the tests whose requirements are closed."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from xml.etree import ElementTree

import pytest

from rpl.core.testing.suite import (
    OPEN,
    AckReceiverSuite,
    Requirement,
    Requirements,
    StatusSuite,
    TopologySuite,
    WaitsSuite,
    closed,
    requires,
)


class TestStatusAndCounters(StatusSuite):
    """Status, counters, variables, UNINSTALL."""


class TestWaits(WaitsSuite):
    """Wait points, timeouts, switching off and on, wait_for_slave_count."""


class TestTopologyChanges(TopologySuite):
    """Replicas joining, leaving, stalling, idling; a source without the plugin."""


class TestAckReceiver(AckReceiverSuite):
    """The ACK receiver thread (WL#6630)."""


# ------------------------------------------------------------------ the gate itself
def test_every_requirement_is_open_by_default() -> None:
    names = [name for name, value in vars(Requirements).items() if isinstance(value, property)]
    assert names, "Requirements has properties"
    assert all(getattr(Requirements(), name) is OPEN for name in names)


def test_requires_refuses_an_unknown_name() -> None:
    with pytest.raises(AttributeError, match="ack_reciever_thread"):
        requires("ack_reciever_thread")


def test_closed_needs_a_reason() -> None:
    with pytest.raises(ValueError):
        closed(" ")
    assert not closed("no thread").is_open and Requirement().is_open


GATED = textwrap.dedent("""
    import pytest
    from rpl.core.testing.suite import (
        Requirement, Requirements, SemisyncFixtures, closed, requires)

    class Closed(Requirements):
        @property
        def ack_receiver_thread(self) -> Requirement:
            return closed("reads ACKs in the dump thread")

    class Wrong(Requirements):
        @property
        def ack_receiver_thread(self) -> Requirement:
            return False  # type: ignore[return-value]

    class Gated(SemisyncFixtures):
        @requires("ack_receiver_thread")
        def test_needs_receiver(self) -> None:
            assert False, "the behaviour is missing"

        @requires("after_commit_wait_point")
        def test_needs_after_commit(self) -> None:
            pass

        def test_needs_nothing(self) -> None:
            pass

    class TestOpen(Gated):
        pass

    class TestClosed(Gated):
        @pytest.fixture
        def requirements(self) -> Requirements:
            return Closed()

    class TestWrong(Gated):
        @pytest.fixture
        def requirements(self) -> Requirements:
            return Wrong()
""")


def test_gate_skips_only_closed_requirements_and_never_hides_a_failure(tmp_path: Path) -> None:
    (tmp_path / "test_gated.py").write_text(GATED)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
            "-q",
            "--junitxml=junit.xml",
            "test_gated.py",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1, result.stdout
    outcomes = {}
    for case in ElementTree.parse(tmp_path / "junit.xml").iter("testcase"):
        name = f"{case.get('classname', '').rsplit('.', 1)[-1]}::{case.get('name')}"
        kinds = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
        outcomes[name] = (kinds or ["passed"])[0]
        if kinds == ["skipped"]:
            skipped = case.find("skipped")
            assert skipped is not None
            assert skipped.get("message") == (
                "requirement closed: ack_receiver_thread (reads ACKs in the dump thread)"
            )
    assert outcomes == {
        "TestOpen::test_needs_receiver": "failure",
        "TestOpen::test_needs_after_commit": "passed",
        "TestOpen::test_needs_nothing": "passed",
        "TestClosed::test_needs_receiver": "skipped",
        "TestClosed::test_needs_after_commit": "passed",
        "TestClosed::test_needs_nothing": "passed",
        "TestWrong::test_needs_receiver": "error",
        "TestWrong::test_needs_after_commit": "passed",
        "TestWrong::test_needs_nothing": "passed",
    }, result.stdout
