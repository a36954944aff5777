"""The whole Group Replication part of the suite in one class.

:class:`GroupReplicationSuite` is every Group Replication area: BEFORE
(:class:`~rpl.core.testing.suite.group_before.GroupBeforeSuite`), AFTER and
BEFORE_AND_AFTER (:class:`~rpl.core.testing.suite.group_after.GroupAfterSuite`),
membership changes (:class:`~rpl.core.testing.suite.group_failures.GroupFailuresSuite`),
the variable and member states (:class:`~rpl.core.testing.suite.group_variables.
GroupVariablesSuite`): one test per line of MySQL's gr_consistent_reads checklist and
per functional requirement of WL#10379. A third party subclasses it once, with its
``group_plugin`` and ``requirements`` fixtures.
"""

from __future__ import annotations

from rpl.core.testing.suite.group_after import GroupAfterSuite
from rpl.core.testing.suite.group_before import GroupBeforeSuite
from rpl.core.testing.suite.group_failures import GroupFailuresSuite
from rpl.core.testing.suite.group_variables import GroupVariablesSuite

__all__ = ["GroupReplicationSuite"]


class GroupReplicationSuite(
    GroupBeforeSuite, GroupAfterSuite, GroupFailuresSuite, GroupVariablesSuite
):
    """Every Group Replication area. Abstract: subclass it as ``Test...``."""
