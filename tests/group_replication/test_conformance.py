"""The Group Replication part of the conformance suite (rpl.core.testing.suite,
docs/conformance.md) against the bundled group_replication plugin, every requirement
open."""

from __future__ import annotations

from rpl.core.testing.suite import GroupReplicationSuite


class TestGroupReplication(GroupReplicationSuite):
    """Every Group Replication area, the bundled plugin, the default fixtures."""
