"""The ``group_replication`` plugin descriptor.

Group communication, certification and the consistency levels of WL#10379 are
the subject of their own issue; until then the plugin installs and uninstalls,
declares nothing and observes no hook.
"""

from __future__ import annotations

from rpl.observers import ReplicationPlugin


class GroupReplicationPlugin(ReplicationPlugin):
    """Group Replication."""

    description = "Group Replication (not yet functional: installs, observes nothing)"
    author = "rpl"
