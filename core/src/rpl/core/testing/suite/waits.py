"""Waits and wait points: where a commit waits for the ACK, what others see meanwhile,
how long it waits, and how semisync switches off on a timeout and back on after a
catch-up.

AFTER_SYNC's invisibility is checked twice: with the commit paused right after
``after_sync`` by the server's ``pause_after_after_sync`` sync point while the replica
acknowledges, and with the commit waiting for an ACK that cannot come (the replica's
receiver stopped).
"""

from __future__ import annotations

from rpl.core.testing.suite.fixtures import (
    Inserts,
    Nodes,
    SemisyncFixtures,
    clients_are,
    counter,
    in_background,
    master_on,
    rows,
)
from rpl.core.testing.suite.requirements import requires
from rpl.core.testing.topology import wait_caught_up, wait_for


def rows_while_the_commit_waits(nodes: Nodes, wait_point: str) -> int:
    """The rows of ``d.t`` another session sees while an INSERT waits, at ``wait_point``,
    for an ACK that cannot come (the replica's receiver is stopped); the INSERT itself
    then returns at the timeout (4 s), and its row is there.
    """
    source = nodes.source(
        f"--rpl-semi-sync-master-wait-point={wait_point}", "--rpl-semi-sync-master-timeout=4000"
    )
    replica = nodes.replica(source)
    wait_for(clients_are(source, 1), 20, "the semisync dump")
    replica.query("STOP SLAVE IO_THREAD")
    wait_for(clients_are(source, 0), 20, "the dump to end")
    commit, errors = in_background(Inserts(source).one)
    wait_for(lambda: counter(source, "wait_sessions") == 1, 10, "the commit to wait")
    seen = rows(source)
    commit.join(20)
    assert not errors and not commit.is_alive(), errors
    assert rows(source) == 1
    return seen


class WaitsSuite(SemisyncFixtures):
    """Wait points, timeouts, switching off and on. Abstract: subclass it as ``Test...``."""

    def test_without_replica_first_commit_times_out_then_off(self, nodes: Nodes) -> None:
        source = nodes.source()
        timeout = nodes.plugins.timeout_ms / 1000
        no_tx, no_times = counter(source, "no_tx"), counter(source, "no_times")
        inserts = Inserts(source)
        assert inserts.one() >= 0.8 * timeout, "the first commit waited for the timeout"
        assert not master_on(source)
        assert counter(source, "no_tx") == no_tx + 1
        assert counter(source, "no_times") == no_times + 1
        assert max(inserts.one() for _ in range(5)) < 0.5 * timeout, "later commits do not wait"
        assert counter(source, "no_tx") == no_tx + 6
        assert "Timeout waiting for reply of binlog" in source.error_log()

    def test_status_turns_on_again_after_replica_catches_up(self, nodes: Nodes) -> None:
        source = nodes.source()
        replica = nodes.replica(source)
        wait_for(clients_are(source, 1), 20, "the semisync dump")
        replica.query("STOP SLAVE IO_THREAD")
        wait_for(clients_are(source, 0), 20, "the dump to end")
        inserts = Inserts(source)
        inserts.one()
        assert not master_on(source)
        inserts.one()
        replica.query("START SLAVE IO_THREAD")
        wait_for(lambda: master_on(source), 20, "semisync to switch back on")
        wait_caught_up(source, replica)
        yes_tx = counter(source, "yes_tx")
        inserts.one()
        assert counter(source, "yes_tx") == yes_tx + 1

    def test_after_sync_rows_invisible_until_acknowledged(self, nodes: Nodes) -> None:
        source = nodes.source("--rpl-semi-sync-master-wait-point=AFTER_SYNC")
        replica = nodes.replica(source)
        wait_for(clients_are(source, 1), 20, "the semisync dump")
        yes_tx = counter(source, "yes_tx")
        source.query("SET GLOBAL debug = '+d,pause_after_after_sync'")
        commit, errors = in_background(Inserts(source).one)
        try:
            wait_for(lambda: rows(replica) == 1, 20, "the replica to have the row")
            assert counter(source, "yes_tx") == yes_tx + 1, "the ACK arrived"
            assert rows(source) == 0, "the source shows the row only after the ACK"
        finally:
            source.query("SET GLOBAL debug = '-d,pause_after_after_sync'")
        commit.join(20)
        assert not errors and not commit.is_alive()
        assert rows(source) == 1
        assert counter(source, "yes_tx") == yes_tx + 1

    def test_after_sync_rows_invisible_while_the_commit_waits(self, nodes: Nodes) -> None:
        assert rows_while_the_commit_waits(nodes, "AFTER_SYNC") == 0

    @requires("after_commit_wait_point")
    def test_after_commit_rows_visible_while_the_commit_waits(self, nodes: Nodes) -> None:
        assert rows_while_the_commit_waits(nodes, "AFTER_COMMIT") == 1

    @requires("after_commit_wait_point", "wait_point_switch_at_runtime")
    def test_wait_point_switched_at_runtime_applies_to_the_next_commit(self, nodes: Nodes) -> None:
        source = nodes.source(
            "--rpl-semi-sync-master-wait-point=AFTER_SYNC", "--rpl-semi-sync-master-timeout=20000"
        )
        replica = nodes.replica(source)
        wait_for(clients_are(source, 1), 20, "the semisync dump")
        inserts = Inserts(source)
        inserts.one()
        wait_caught_up(source, replica)
        yes_tx = counter(source, "yes_tx")
        for wait_point, visible in (("AFTER_COMMIT", 2), ("AFTER_SYNC", 2)):
            replica.query("STOP SLAVE IO_THREAD")
            wait_for(clients_are(source, 0), 20, "the dump to end")
            source.query(f"SET GLOBAL rpl_semi_sync_master_wait_point = '{wait_point}'")
            commit, errors = in_background(inserts.one)
            wait_for(lambda: counter(source, "wait_sessions") == 1, 10, "the commit to wait")
            assert rows(source) == visible, wait_point
            replica.query("START SLAVE IO_THREAD")  # its ACK releases the commit
            commit.join(30)
            assert not errors and not commit.is_alive(), errors
            assert master_on(source), f"{wait_point}: the ACK came before the timeout"
            wait_caught_up(source, replica)
        assert rows(source) == 3
        assert counter(source, "yes_tx") == yes_tx + 2
        assert counter(source, "no_tx") == 0

    @requires("wait_for_slave_count")
    def test_wait_for_slave_count(self, nodes: Nodes) -> None:
        source = nodes.source("--rpl-semi-sync-master-wait-for-slave-count=2")
        first = nodes.replica(source)
        wait_for(clients_are(source, 1), 20, "the first semisync dump")
        inserts = Inserts(source)
        inserts.one()
        assert counter(source, "no_tx") == 1 and not master_on(source), "one ACK is not enough"
        second = nodes.replica(source)
        wait_for(clients_are(source, 2), 20, "the second semisync dump")
        wait_caught_up(source, first, second)
        inserts.one()
        wait_for(lambda: master_on(source), 20, "two ACKs to switch semisync on")
        yes_tx = counter(source, "yes_tx")
        inserts.one()
        assert counter(source, "yes_tx") == yes_tx + 1
        second.query("STOP SLAVE IO_THREAD")
        wait_for(clients_are(source, 1), 20, "the second dump to end")
        no_tx = counter(source, "no_tx")
        assert inserts.one() >= 0.8 * nodes.plugins.timeout_ms / 1000
        assert counter(source, "no_tx") == no_tx + 1
