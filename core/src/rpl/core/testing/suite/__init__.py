"""The conformance suite: abstract pytest classes a semisync or Group Replication
implementation runs to prove it behaves as MySQL's does (SQLAlchemy's dialect suite and
its ``requirements.py`` are the model).

One module per area, one abstract class each (none is collected until subclassed under
a name starting with ``Test``):

* :mod:`~rpl.core.testing.suite.status` (:class:`StatusSuite`): status and counters,
  variables, UNINSTALL;
* :mod:`~rpl.core.testing.suite.waits` (:class:`WaitsSuite`): wait points, timeouts,
  switching off and back on, ``wait_for_slave_count``;
* :mod:`~rpl.core.testing.suite.topology` (:class:`TopologySuite`): replicas joining,
  leaving, stalling, idling, a source without the plugin;
* :mod:`~rpl.core.testing.suite.ack_receiver` (:class:`AckReceiverSuite`): the ACK
  receiver thread;
* :mod:`~rpl.core.testing.suite.failover` (:class:`LosslessFailoverSuite`): lossless
  failover trials, a source killed under load.

:class:`SemisyncSuite` is the first four in one class. Two fixtures, overridden in the
subclass, describe the implementation under test: ``semisync_plugins`` (its plugin names,
:class:`SemisyncPlugins`) and ``requirements`` (a :class:`Requirements` whose properties
close what it lacks; every one is open by default)::

    import pytest
    from rpl.core.testing.suite import (
        Requirement, Requirements, SemisyncPlugins, SemisyncSuite, closed)

    class MyRequirements(Requirements):
        @property
        def ack_receiver_thread(self) -> Requirement:
            return closed("the dump thread reads the ACKs")

    class TestMySemisync(SemisyncSuite):
        @pytest.fixture
        def semisync_plugins(self) -> SemisyncPlugins:
            return SemisyncPlugins(master="my_semi_sync_master", slave="my_semi_sync_slave")

        @pytest.fixture
        def requirements(self) -> Requirements:
            return MyRequirements()

The Group Replication part (WL#10379's consistency levels; one test per line of MySQL's
gr_consistent_reads checklist and per functional requirement), on groups of real
servers and real etcd members:

* :mod:`~rpl.core.testing.suite.group_before` (:class:`GroupBeforeSuite`): BEFORE;
* :mod:`~rpl.core.testing.suite.group_after` (:class:`GroupAfterSuite`): AFTER and
  BEFORE_AND_AFTER, the acknowledgements and the hold, a group of one, the counters;
* :mod:`~rpl.core.testing.suite.group_failures` (:class:`GroupFailuresSuite`): members
  leaving, unreachable, a lost majority forced back, members joining;
* :mod:`~rpl.core.testing.suite.group_variables` (:class:`GroupVariablesSuite`):
  ``group_replication_consistency``, the levels outside ONLINE, a member older than
  8.0.14.

:class:`GroupReplicationSuite` is the four in one class. Its fixtures are
``group_plugin`` (:class:`GroupPlugin`) and the same ``requirements``: the Group
Replication requirements are properties of the one :class:`Requirements` class::

    class TestMyGroup(GroupReplicationSuite):
        @pytest.fixture
        def group_plugin(self) -> GroupPlugin:
            return GroupPlugin(name="my_group_replication")

A test that needs a closed requirement is skipped with the requirement's name and reason;
every other test runs. The plugins need only be installed (their ``rpl.plugins`` entry
points) in the environment that runs pytest: every test starts real ``rpl server``
processes that load them with ``--plugin-load``.
"""

from rpl.core.testing.suite.ack_receiver import AckReceiverSuite
from rpl.core.testing.suite.failover import FailoverHarness, LosslessFailoverSuite
from rpl.core.testing.suite.fixtures import Nodes, SemisyncFixtures, SemisyncPlugins
from rpl.core.testing.suite.group_after import GroupAfterSuite
from rpl.core.testing.suite.group_before import GroupBeforeSuite
from rpl.core.testing.suite.group_failures import GroupFailuresSuite
from rpl.core.testing.suite.group_fixtures import GroupFixtures, GroupPlugin, Groups
from rpl.core.testing.suite.group_replication import GroupReplicationSuite
from rpl.core.testing.suite.group_variables import GroupVariablesSuite
from rpl.core.testing.suite.requirements import (
    OPEN,
    Requirement,
    Requirements,
    closed,
    requires,
)
from rpl.core.testing.suite.semisync import SemisyncSuite
from rpl.core.testing.suite.status import StatusSuite
from rpl.core.testing.suite.topology import TopologySuite
from rpl.core.testing.suite.waits import WaitsSuite

__all__ = [
    "OPEN",
    "AckReceiverSuite",
    "FailoverHarness",
    "GroupAfterSuite",
    "GroupBeforeSuite",
    "GroupFailuresSuite",
    "GroupFixtures",
    "GroupPlugin",
    "GroupReplicationSuite",
    "GroupVariablesSuite",
    "Groups",
    "LosslessFailoverSuite",
    "Nodes",
    "Requirement",
    "Requirements",
    "SemisyncFixtures",
    "SemisyncPlugins",
    "SemisyncSuite",
    "StatusSuite",
    "TopologySuite",
    "WaitsSuite",
    "closed",
    "requires",
]
