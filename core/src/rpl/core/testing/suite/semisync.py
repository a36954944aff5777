"""The whole semisync suite in one class, and the names this module held before the suite
was split by area (kept so that imports of ``rpl.core.testing.suite.semisync`` go on
working).

:class:`SemisyncSuite` is every area but lossless failover: MySQL's 17 semisync behaviours
as its test suite checks them of rpl_semi_sync_master / rpl_semi_sync_slave, the
heartbeats of an idle semisync dump, and the optional behaviours each
:class:`~rpl.core.testing.suite.requirements.Requirements` property opens. A third party
subclasses it once, with its ``semisync_plugins`` and ``requirements`` fixtures.
"""

from __future__ import annotations

from rpl.core.testing.suite.ack_receiver import (
    ACK_RECEIVER,
    ACK_RECEIVER_STATES,
    AckReceiverSuite,
)
from rpl.core.testing.suite.failover import (
    KILLS,
    TRIALS,
    FailoverHarness,
    History,
    LosslessFailoverSuite,
    Verdict,
)
from rpl.core.testing.suite.fixtures import (
    Inserts,
    Nodes,
    SemisyncFixtures,
    SemisyncPlugins,
    clients_are,
    counter,
    in_background,
    master_on,
    rows,
)
from rpl.core.testing.suite.status import ER_PLUGIN_CANNOT_BE_UNINSTALLED, StatusSuite
from rpl.core.testing.suite.topology import TopologySuite
from rpl.core.testing.suite.waits import WaitsSuite

__all__ = [
    "ACK_RECEIVER",
    "ACK_RECEIVER_STATES",
    "ER_PLUGIN_CANNOT_BE_UNINSTALLED",
    "KILLS",
    "TRIALS",
    "AckReceiverSuite",
    "FailoverHarness",
    "History",
    "Inserts",
    "LosslessFailoverSuite",
    "Nodes",
    "SemisyncFixtures",
    "SemisyncPlugins",
    "SemisyncSuite",
    "StatusSuite",
    "TopologySuite",
    "Verdict",
    "WaitsSuite",
    "clients_are",
    "counter",
    "in_background",
    "master_on",
    "rows",
]


class SemisyncSuite(StatusSuite, WaitsSuite, TopologySuite, AckReceiverSuite):
    """Every area but lossless failover. Abstract: subclass it as ``Test...``."""
