"""The ACK receiver thread (WL#6630), as performance_schema.threads shows it: present
exactly while ``rpl_semi_sync_master_enabled`` is ON, in MySQL's states, and keeping its
list of replicas while it is down. Every test here needs the requirement
``ack_receiver_thread``; an implementation that reads the ACKs elsewhere (in the dump
thread, as before WL#6630) closes it.
"""

from __future__ import annotations

from typing import Final

from rpl.core.testing.process import ServerProcess
from rpl.core.testing.suite.fixtures import (
    Inserts,
    Nodes,
    SemisyncFixtures,
    clients_are,
    counter,
)
from rpl.core.testing.suite.requirements import requires
from rpl.core.testing.topology import wait_for

ACK_RECEIVER: Final = "thread/semisync/Ack_receiver"
ACK_RECEIVER_STATES: Final = (
    "Waiting for semi-sync slave connection",
    "Waiting for semi-sync ACK from slave",
    "Reading semi-sync ACK from slave",
)


def ack_receivers(source: ServerProcess) -> list[str]:
    """PROCESSLIST_STATE of each ACK receiver thread of ``source`` (none: empty)."""
    return [
        str(row[0])
        for row in source.query(
            "SELECT PROCESSLIST_STATE FROM performance_schema.threads "
            f"WHERE NAME = '{ACK_RECEIVER}'"
        )
    ]


class AckReceiverSuite(SemisyncFixtures):
    """The ACK receiver thread. Abstract: subclass it as ``Test...``."""

    @requires("ack_receiver_thread")
    def test_ack_receiver_runs_exactly_while_enabled(self, nodes: Nodes) -> None:
        source = nodes.source(enabled=False)
        assert ack_receivers(source) == []
        source.query("SET GLOBAL rpl_semi_sync_master_enabled = ON")
        wait_for(
            lambda: ack_receivers(source) == [ACK_RECEIVER_STATES[0]],
            10,
            "one receiver, waiting for a semisync replica",
        )
        source.query("SET GLOBAL rpl_semi_sync_master_enabled = OFF")
        assert ack_receivers(source) == []

    @requires("ack_receiver_thread")
    def test_ack_receiver_polls_replicas_and_keeps_them_while_down(self, nodes: Nodes) -> None:
        source = nodes.source()
        assert ack_receivers(source) == [ACK_RECEIVER_STATES[0]]
        nodes.replica(source)
        wait_for(clients_are(source, 1), 20, "the semisync dump")
        wait_for(
            lambda: ack_receivers(source)[0] in ACK_RECEIVER_STATES[1:],
            10,
            "the receiver to poll the replica",
        )
        source.query("SET GLOBAL rpl_semi_sync_master_enabled = OFF")
        assert ack_receivers(source) == []
        source.query("SET GLOBAL rpl_semi_sync_master_enabled = ON")
        wait_for(lambda: len(ack_receivers(source)) == 1, 10, "the receiver to start again")
        yes_tx = counter(source, "yes_tx")
        Inserts(source).one()
        assert counter(source, "yes_tx") == yes_tx + 1, "the replica list was kept while down"
