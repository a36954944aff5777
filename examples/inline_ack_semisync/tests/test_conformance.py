"""rpl's semisync conformance suite against rpl_semi_sync (this plugin) as the source and
the bundled rpl_semi_sync_slave as the replica.

The plugin lacks four optional behaviours and closes them, each with its reason; every
other test of the suite runs and must pass. ``RPL_SUITE_OPEN`` (a comma-separated list of
requirement names) leaves some of them open instead: the tests that need them then run
and fail, which is how one checks that a requirement is closed for a reason.
"""

from __future__ import annotations

import os

import pytest

from rpl.core.testing.suite import (
    OPEN,
    LosslessFailoverSuite,
    Requirement,
    Requirements,
    SemisyncPlugins,
    SemisyncSuite,
    closed,
)

PLUGINS = SemisyncPlugins(master="rpl_semi_sync", slave="rpl_semi_sync_slave")
LEFT_OPEN = frozenset(filter(None, os.environ.get("RPL_SUITE_OPEN", "").split(",")))


def lacks(name: str, reason: str) -> Requirement:
    """Closed for ``reason``, unless ``RPL_SUITE_OPEN`` names ``name``."""
    return OPEN if name in LEFT_OPEN else closed(reason)


class InlineAckRequirements(Requirements):
    """What rpl_semi_sync does not do."""

    @property
    def ack_receiver_thread(self) -> Requirement:
        return lacks(
            "ack_receiver_thread", "each dump thread reads its replica's ACKs in after_send_event"
        )

    @property
    def after_commit_wait_point(self) -> Requirement:
        return lacks("after_commit_wait_point", "commits wait in after_sync only")

    @property
    def wait_point_switch_at_runtime(self) -> Requirement:
        return lacks("wait_point_switch_at_runtime", "AFTER_SYNC is the only wait point")

    @property
    def wait_for_slave_count(self) -> Requirement:
        return lacks("wait_for_slave_count", "one ACK from any semisync replica releases a commit")


class TestInlineAckSemisync(SemisyncSuite):
    """Every area of the suite but lossless failover."""

    @pytest.fixture
    def semisync_plugins(self) -> SemisyncPlugins:
        return PLUGINS

    @pytest.fixture
    def requirements(self) -> Requirements:
        return InlineAckRequirements()


class TestInlineAckLosslessFailover(LosslessFailoverSuite):
    """A source killed at any moment loses nothing a client saw."""

    @pytest.fixture
    def semisync_plugins(self) -> SemisyncPlugins:
        return SemisyncPlugins(master=PLUGINS.master, slave=PLUGINS.slave, timeout_ms=600_000)

    @pytest.fixture
    def requirements(self) -> Requirements:
        return InlineAckRequirements()
