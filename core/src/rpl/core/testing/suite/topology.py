"""Topology changes: replicas that are or are not semisync, that connect, stop, stall or
idle, a source without the plugin, rotation while a dump is stuck, and replicas added and
removed under load.
"""

from __future__ import annotations

import os
import signal
import threading
import time

from rpl.core.testing.suite.fixtures import (
    Inserts,
    Nodes,
    SemisyncFixtures,
    clients_are,
    counter,
    in_background,
    master_on,
)
from rpl.core.testing.topology import (
    create_replication_user,
    gtid_executed,
    slave_status,
    status,
    wait_caught_up,
    wait_for,
)


class TopologySuite(SemisyncFixtures):
    """Replicas joining, leaving, stalling. Abstract: subclass it as ``Test...``."""

    def test_clients_counts_only_semisync_dumps(self, nodes: Nodes) -> None:
        source = nodes.source()
        asynchronous = nodes.replica(source, semisync=False)
        wait_for(lambda: status(asynchronous, "Slave_running") == "ON", 20, "the async replica")
        time.sleep(0.3)
        assert counter(source, "clients") == 0
        assert status(asynchronous, "Rpl_semi_sync_slave_status") == "OFF"
        replica = nodes.replica(source)
        wait_for(clients_are(source, 1), 20, "the semisync dump")
        assert status(replica, "Rpl_semi_sync_slave_status") == "ON"

    def test_replication_slave_privilege_is_enough(self, nodes: Nodes) -> None:
        source = nodes.source()
        grants = [str(row[0]) for row in source.query("SHOW GRANTS FOR 'repl'@'%'")]
        assert grants == ["GRANT REPLICATION SLAVE ON *.* TO `repl`@`%`"], grants
        nodes.replica(source)
        wait_for(clients_are(source, 1), 20, "the semisync dump")
        Inserts(source).one()
        assert counter(source, "yes_tx") == 1

    def test_source_plugin_disabled_or_missing(self, nodes: Nodes) -> None:
        source = nodes.source(enabled=False)
        replica = nodes.replica(source)
        wait_for(clients_are(source, 1), 20, "the semisync dump")
        assert status(replica, "Rpl_semi_sync_slave_status") == "ON"
        assert not master_on(source)
        Inserts(source).one()
        wait_caught_up(source, replica)
        plain = nodes.start("plain")
        create_replication_user(plain)
        plain.query("CREATE DATABASE d")
        fallback = nodes.replica(plain, name="fallback")
        wait_caught_up(plain, fallback)
        assert status(fallback, "Rpl_semi_sync_slave_status") == "OFF"
        assert "does not support semi-sync" in fallback.error_log()

    def test_rotation_with_a_stalled_dump_does_not_deadlock(self, nodes: Nodes) -> None:
        source = nodes.source()
        replica = nodes.replica(source)
        wait_for(clients_are(source, 1), 20, "the semisync dump")
        assert replica.process is not None
        os.kill(replica.process.pid, signal.SIGSTOP)
        stop = threading.Event()
        first_ids = iter(range(1, 10_000_000, 100_000))

        def writer() -> None:
            inserts = Inserts(source, next(first_ids))
            while not stop.is_set():
                inserts.one()
            inserts.close()

        writers = [in_background(writer) for _ in range(4)]
        deadline = 4 * nodes.plugins.timeout_ms / 1000 + 10
        try:
            time.sleep(0.5)  # commits queue up behind the stalled dump
            for _ in range(3):
                flush, errors = in_background(lambda: source.query("FLUSH BINARY LOGS"))
                flush.join(deadline)
                assert not flush.is_alive(), "FLUSH BINARY LOGS is stuck"
                assert not errors, errors
                time.sleep(0.2)
        finally:
            stop.set()
            os.kill(replica.process.pid, signal.SIGCONT)
        for thread, errors in writers:
            thread.join(30)
            assert not thread.is_alive() and not errors, errors
        assert len(source.query("SHOW BINARY LOGS")) == 4, "three rotations"
        wait_caught_up(source, replica)
        Inserts(source, 20_000_000).one()
        wait_for(lambda: master_on(source), 20, "semisync to switch back on")

    def test_replicas_added_and_removed_under_load(self, nodes: Nodes) -> None:
        source = nodes.source()
        stop = threading.Event()
        done = [0]

        def writer() -> None:
            inserts = Inserts(source)
            while not stop.is_set():
                inserts.one()
                done[0] += 1
            inserts.close()

        thread, errors = in_background(writer)
        replicas = []
        try:
            for count in range(1, 9):
                replicas.append(nodes.replica(source))
                wait_for(clients_are(source, count), 30, f"{count} semisync dumps")
            for count in range(7, -1, -1):
                replicas[count].query("STOP SLAVE")
                wait_for(clients_are(source, count), 30, f"{count} semisync dumps")
        finally:
            stop.set()
            thread.join(60)
        assert not thread.is_alive() and not errors, errors
        assert counter(source, "wait_sessions") == 0
        groups = int(status(source, "Binlog_group_commits"))
        assert counter(source, "yes_tx") + counter(source, "no_tx") <= groups
        assert counter(source, "yes_tx") > 0
        assert done[0] > 0
        for replica in replicas:
            replica.query("START SLAVE")
        wait_caught_up(source, *replicas, timeout=120)
        assert {gtid_executed(r) for r in replicas} == {gtid_executed(source)}

    def test_heartbeats_keep_an_idle_replica_semisync(self, nodes: Nodes) -> None:
        """Every packet of a semisync dump carries the header, heartbeats too."""
        source = nodes.source()
        replica = nodes.replica(source)
        wait_for(clients_are(source, 1), 20, "the semisync dump")
        replica.query("STOP SLAVE")
        replica.query("CHANGE MASTER TO MASTER_HEARTBEAT_PERIOD = 0.1")
        replica.query("START SLAVE")
        wait_for(clients_are(source, 1), 20, "the semisync dump, again")
        inserts = Inserts(source)
        inserts.one()
        heartbeats = int(status(replica, "Slave_received_heartbeats"))
        wait_for(
            lambda: int(status(replica, "Slave_received_heartbeats")) >= heartbeats + 5,
            20,
            "heartbeats while the source is idle",
        )
        assert slave_status(replica)["Slave_IO_Running"] == "Yes", slave_status(replica)[
            "Last_IO_Error"
        ]
        yes_tx = counter(source, "yes_tx")
        inserts.one()  # still acknowledged by the replica that read the heartbeats
        assert counter(source, "yes_tx") == yes_tx + 1
        assert counter(source, "no_tx") == 0
        inserts.close()
