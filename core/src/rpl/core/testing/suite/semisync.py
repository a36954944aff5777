"""The semisync part of the conformance suite: the 17 behaviours MySQL's test suite
checks of rpl_semi_sync_master / rpl_semi_sync_slave (one test each, numbered as in the
project's reference list), against real server processes; and an 18th, heartbeats on
an idle semisync dump (each carries the semisync header, as every packet of it does).

An implementation under test must use MySQL's variable and status names
(``rpl_semi_sync_master_*``, ``Rpl_semi_sync_master_*``, ``rpl_semi_sync_slave_enabled``,
``Rpl_semi_sync_slave_status``) and MySQL's wire format (the 0xEF header, the ACK packet):
that is what conformance means. What it may name its own way are the plugins
(:class:`SemisyncPlugins`).

Two server facilities the suite relies on, both in every rpl server: the sync point
``pause_after_after_sync`` (``SET GLOBAL debug``) and performance_schema.threads.
"""

from __future__ import annotations

import os
import random
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attrs
import pymysql
import pytest

from rpl.core.testing.process import ServerProcess
from rpl.core.testing.proxy import TcpProxy
from rpl.core.testing.topology import (
    create_replication_user,
    drain,
    gtid_executed,
    replicate,
    slave_status,
    status,
    wait_caught_up,
    wait_for,
)
from rpl.core.validate.stitch import violations_in

ACK_RECEIVER = "thread/semisync/Ack_receiver"
ACK_RECEIVER_STATES = ("Waiting for semi-sync slave connection",
                       "Waiting for semi-sync ACK from slave",
                       "Reading semi-sync ACK from slave")
ER_PLUGIN_CANNOT_BE_UNINSTALLED = 1883


@attrs.frozen
class SemisyncPlugins:
    """The implementation under test: its plugin names, and the suite's timeout (ms) for
    ``rpl_semi_sync_master_timeout`` (short, so that timeouts do not make the suite slow).
    """

    master: str = "rpl_semi_sync_master"
    slave: str = "rpl_semi_sync_slave"
    timeout_ms: int = 1000


class Nodes:
    """Server processes of one test, each with its own server_id; all killed at the end."""

    def __init__(self, root: Path, plugins: SemisyncPlugins) -> None:
        self.root = root
        self.plugins = plugins
        self.started: list[ServerProcess] = []

    def start(self, name: str, *options: str) -> ServerProcess:
        """A new server ``name`` with ``options``."""
        server = ServerProcess(self.root / name, options=[
            "--server-id", str(len(self.started) + 1), *options])
        server.start()
        self.started.append(server)
        return server

    def source(self, *options: str, enabled: bool = True) -> ServerProcess:
        """A source with the master plugin (enabled unless told), the replication account
        and a table ``d.t``.
        """
        p = self.plugins
        name = "source" if not self.started else f"source{len(self.started)}"
        server = self.start(name, f"--plugin-load={p.master}",
                            f"--rpl-semi-sync-master-timeout={p.timeout_ms}", *options)
        create_replication_user(server)
        server.query("CREATE DATABASE d")
        server.query("CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(20))")
        if enabled:  # after the set-up commits, which would otherwise wait for a replica
            server.query("SET GLOBAL rpl_semi_sync_master_enabled = ON")
        return server

    def replica(self, source: ServerProcess, *, semisync: bool = True, name: str = "",
                port: int | None = None) -> ServerProcess:
        """A replica of ``source`` with the slave plugin (enabled when ``semisync``),
        replicating with GTID auto-position (through ``port``, a proxy, when given).
        """
        server = self.start(name or f"replica{len(self.started)}",
                            f"--plugin-load={self.plugins.slave}",
                            f"--rpl-semi-sync-slave-enabled={'ON' if semisync else 'OFF'}")
        replicate(server, source, master_port=port or source.port)
        return server

    def kill_all(self) -> None:
        """SIGKILL every server (SIGCONT first, for one a test stopped) and print the
        tail of each error log (pytest shows it when the test failed).
        """
        for server in self.started:
            if server.process is not None and server.process.poll() is None:
                os.kill(server.process.pid, signal.SIGCONT)
            server.kill()
        for server in self.started:
            print(f"--- {server.datadir.name} error log ---\n{server.error_log()[-2500:]}")


class SemisyncFixtures:
    """The fixtures every semisync suite class takes its servers from."""

    @pytest.fixture
    def semisync_plugins(self) -> SemisyncPlugins:
        """The implementation under test (override to test another one)."""
        return SemisyncPlugins()

    @pytest.fixture
    def nodes(self, tmp_path: Path, semisync_plugins: SemisyncPlugins) -> Iterator[Nodes]:
        """A factory of server processes, all killed at the end."""
        nodes = Nodes(tmp_path, semisync_plugins)
        yield nodes
        nodes.kill_all()


def counter(server: ServerProcess, short: str) -> int:
    """``Rpl_semi_sync_master_<short>`` as an integer."""
    return int(status(server, f"Rpl_semi_sync_master_{short}"))


def master_on(server: ServerProcess) -> bool:
    """Rpl_semi_sync_master_status is ON."""
    return status(server, "Rpl_semi_sync_master_status") == "ON"


class Inserts:
    """Single-row autocommit INSERTs into ``d.t`` on one connection, timed."""

    def __init__(self, server: ServerProcess, first_id: int = 1) -> None:
        self.connection = server.connect()
        self.next_id = first_id

    def one(self) -> float:
        """Insert the next row; the seconds the commit took."""
        started = time.monotonic()
        with self.connection.cursor() as cursor:
            cursor.execute(f"INSERT INTO d.t VALUES ({self.next_id}, 'r{self.next_id}')")
        self.next_id += 1
        return time.monotonic() - started

    def close(self) -> None:
        """Close the connection."""
        self.connection.close()


def clients_are(server: ServerProcess, count: int) -> Callable[[], bool]:
    """A condition: Rpl_semi_sync_master_clients is ``count``."""
    return lambda: counter(server, "clients") == count


def rows(server: ServerProcess) -> int:
    """SELECT COUNT(*) FROM d.t."""
    return int(server.query("SELECT COUNT(*) FROM d.t")[0][0])


def in_background(action: Callable[[], Any]) -> tuple[threading.Thread, list[BaseException]]:
    """Run ``action`` in a thread; the thread and the list its exception lands in."""
    errors: list[BaseException] = []

    def run() -> None:
        try:
            action()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            errors.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, errors


class SemisyncSuite(SemisyncFixtures):
    """MySQL's semisync behaviours. Abstract: subclass it as ``Test...`` to run it."""

    # 1
    def test_01_enabled_without_replica_is_on(self, nodes: Nodes) -> None:
        source = nodes.source()
        assert master_on(source)
        assert counter(source, "clients") == 0

    # 2
    def test_02_without_replica_first_commit_times_out_then_off(self, nodes: Nodes) -> None:
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

    # 3
    def test_03_clients_counts_only_semisync_dumps(self, nodes: Nodes) -> None:
        source = nodes.source()
        asynchronous = nodes.replica(source, semisync=False)
        wait_for(lambda: status(asynchronous, "Slave_running") == "ON", 20, "the async replica")
        time.sleep(0.3)
        assert counter(source, "clients") == 0
        assert status(asynchronous, "Rpl_semi_sync_slave_status") == "OFF"
        replica = nodes.replica(source)
        wait_for(clients_are(source, 1), 20, "the semisync dump")
        assert status(replica, "Rpl_semi_sync_slave_status") == "ON"

    # 4
    def test_04_each_acknowledged_transaction_counts_in_yes_tx(self, nodes: Nodes) -> None:
        source = nodes.source()
        nodes.replica(source)
        wait_for(clients_are(source, 1), 20, "the semisync dump")
        yes_tx = counter(source, "yes_tx")
        inserts = Inserts(source)
        for _ in range(10):
            inserts.one()
        assert counter(source, "yes_tx") == yes_tx + 10
        assert counter(source, "no_tx") == 0
        assert master_on(source)

    # 5
    def test_05_status_turns_on_again_after_replica_catches_up(self, nodes: Nodes) -> None:
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

    # 6
    def test_06_disable_and_enable(self, nodes: Nodes) -> None:
        source = nodes.source()
        source.query("SET GLOBAL rpl_semi_sync_master_enabled = OFF")
        assert not master_on(source)
        source.query("SET GLOBAL rpl_semi_sync_master_enabled = ON")
        assert master_on(source)

    # 7
    def test_07_flush_status_and_reset_master_zero_the_counters(self, nodes: Nodes) -> None:
        source = nodes.source()
        replica = nodes.replica(source)
        wait_for(clients_are(source, 1), 20, "the semisync dump")
        inserts = Inserts(source)
        for _ in range(3):
            inserts.one()
        assert counter(source, "yes_tx") >= 3 and counter(source, "tx_waits") >= 1
        source.query("FLUSH STATUS")
        for name in ("yes_tx", "no_tx", "no_times", "tx_waits", "tx_wait_time"):
            assert counter(source, name) == 0, name
        inserts.one()
        assert counter(source, "yes_tx") == 1
        replica.query("STOP SLAVE")
        wait_for(clients_are(source, 0), 20, "the dump to end")
        inserts.close()
        source.query("RESET MASTER")
        for name in ("yes_tx", "no_tx", "no_times", "tx_waits"):
            assert counter(source, name) == 0, name
        assert master_on(source)

    # 8
    def test_08_replication_slave_privilege_is_enough(self, nodes: Nodes) -> None:
        source = nodes.source()
        grants = [str(row[0]) for row in source.query("SHOW GRANTS FOR 'repl'@'%'")]
        assert grants == ["GRANT REPLICATION SLAVE ON *.* TO `repl`@`%`"], grants
        nodes.replica(source)
        wait_for(clients_are(source, 1), 20, "the semisync dump")
        Inserts(source).one()
        assert counter(source, "yes_tx") == 1

    # 9
    def test_09_source_plugin_disabled_or_missing(self, nodes: Nodes) -> None:
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

    # 10
    def test_10_after_sync_rows_invisible_until_acknowledged(self, nodes: Nodes) -> None:
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

    # 11
    @pytest.mark.parametrize("wait_point, visible", [("AFTER_COMMIT", 1), ("AFTER_SYNC", 0)])
    def test_11_after_commit_rows_visible_before_the_ack(self, nodes: Nodes, wait_point: str,
                                                         visible: int) -> None:
        source = nodes.source(f"--rpl-semi-sync-master-wait-point={wait_point}",
                              "--rpl-semi-sync-master-timeout=4000")
        replica = nodes.replica(source)
        wait_for(clients_are(source, 1), 20, "the semisync dump")
        replica.query("STOP SLAVE IO_THREAD")
        wait_for(clients_are(source, 0), 20, "the dump to end")
        commit, errors = in_background(Inserts(source).one)
        wait_for(lambda: counter(source, "wait_sessions") == 1, 10, "the commit to wait")
        assert rows(source) == visible
        commit.join(20)
        assert not errors
        assert rows(source) == 1

    # 12
    def test_12_wait_for_slave_count(self, nodes: Nodes) -> None:
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

    # 13
    def test_13_ack_receiver_thread_only_while_enabled(self, nodes: Nodes) -> None:
        source = nodes.source()
        query = ("SELECT PROCESSLIST_STATE FROM performance_schema.threads "
                 f"WHERE NAME = '{ACK_RECEIVER}'")
        assert source.query(query) == [(ACK_RECEIVER_STATES[0],)]
        nodes.replica(source)
        wait_for(clients_are(source, 1), 20, "the semisync dump")
        wait_for(lambda: source.query(query)[0][0] in ACK_RECEIVER_STATES[1:], 10,
                 "the receiver to poll the replica")
        source.query("SET GLOBAL rpl_semi_sync_master_enabled = OFF")
        assert source.query(query) == []
        source.query("SET GLOBAL rpl_semi_sync_master_enabled = ON")
        wait_for(lambda: len(source.query(query)) == 1, 10, "the receiver to start again")
        yes_tx = counter(source, "yes_tx")
        Inserts(source).one()
        assert counter(source, "yes_tx") == yes_tx + 1, "the replica list was kept while down"

    # 14
    def test_14_uninstall_refused_while_in_use(self, nodes: Nodes) -> None:
        source = nodes.source()
        replica = nodes.replica(source)
        wait_for(clients_are(source, 1), 20, "the semisync dump")
        for server, plugin in ((source, nodes.plugins.master), (replica, nodes.plugins.slave)):
            with pytest.raises(pymysql.MySQLError) as refused:
                server.query(f"UNINSTALL PLUGIN {plugin}")
            assert refused.value.args[0] == ER_PLUGIN_CANNOT_BE_UNINSTALLED
        replica.query("STOP SLAVE")
        wait_for(clients_are(source, 0), 20, "the dump to end")
        replica.query(f"UNINSTALL PLUGIN {nodes.plugins.slave}")
        source.query(f"UNINSTALL PLUGIN {nodes.plugins.master}")
        assert source.query("SHOW STATUS LIKE 'Rpl_semi_sync%'") == []

    # 15
    def test_15_rotation_with_a_stalled_dump_does_not_deadlock(self, nodes: Nodes) -> None:
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

    # 16
    def test_16_replicas_added_and_removed_under_load(self, nodes: Nodes) -> None:
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

    # 17
    def test_17_variable_rules(self, nodes: Nodes) -> None:
        source = nodes.source()
        for statement, errno in [
                ("SET GLOBAL rpl_semi_sync_master_wait_point = 'AFTER_FLUSH'", 1231),
                ("SET GLOBAL rpl_semi_sync_master_timeout = 'abc'", 1232),
                ("SET GLOBAL rpl_semi_sync_master_timeout = 1.5", 1232),
                ("SET SESSION rpl_semi_sync_master_enabled = ON", 1229),
                ("SET SESSION rpl_semi_sync_master_wait_point = 'AFTER_SYNC'", 1229),
                ("SET rpl_semi_sync_master_timeout = 10", 1229)]:
            with pytest.raises(pymysql.MySQLError) as refused:
                source.query(statement)
            assert refused.value.args[0] == errno, statement
        source.query("SET GLOBAL rpl_semi_sync_master_wait_for_slave_count = 0")
        assert source.query("SELECT @@global.rpl_semi_sync_master_wait_for_slave_count") == \
            [(1,)]
        source.query("SET GLOBAL rpl_semi_sync_master_wait_for_slave_count = 65536")
        assert source.query("SELECT @@global.rpl_semi_sync_master_wait_for_slave_count") == \
            [(65535,)]
        source.query("SET GLOBAL rpl_semi_sync_master_wait_point = 'after_commit'")
        assert source.query("SELECT @@global.rpl_semi_sync_master_wait_point") == \
            [("AFTER_COMMIT",)]

    # beyond the 17: every packet of a semisync dump carries the header, heartbeats too
    def test_18_heartbeats_keep_an_idle_replica_semisync(self, nodes: Nodes) -> None:
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
        wait_for(lambda: int(status(replica, "Slave_received_heartbeats")) >= heartbeats + 5,
                 20, "heartbeats while the source is idle")
        assert slave_status(replica)["Slave_IO_Running"] == "Yes", \
            slave_status(replica)["Last_IO_Error"]
        yes_tx = counter(source, "yes_tx")
        inserts.one()  # still acknowledged by the replica that read the heartbeats
        assert counter(source, "yes_tx") == yes_tx + 1
        assert counter(source, "no_tx") == 0
        inserts.close()


# ------------------------------------------------------------------ lossless failover
KILLS = ("random", "crash_before_flush_binlog", "half_binlogged_transaction",
         "crash_after_flush_binlog", "crash_after_sync_binlog", "crash_after_engine_commit",
         "network_cut")
"""How a trial ends the source: SIGKILL at a random moment, at one of the server's named
crash points, or SIGKILL after the network between source and replica was cut (a
:class:`TcpProxy` drops what is in flight), so that commits pile up unacknowledged."""
TRIALS = int(os.environ.get("RPL_FAILOVER_TRIALS", "30"))
WRITERS = 12
READERS = 4


@attrs.define
class History:
    """What the clients of one trial saw: ids acknowledged (the client got OK), ids read
    from the source, ids being inserted right now (what readers probe).
    """

    acknowledged: set[int] = attrs.field(factory=set)
    read: set[int] = attrs.field(factory=set)
    in_flight: dict[int, int] = attrs.field(factory=dict)
    lock: threading.Lock = attrs.field(factory=threading.Lock)


@attrs.frozen
class Verdict:
    """The checks after the promotion: acknowledged rows and rows read that the promoted
    replica lacks.
    """

    acknowledged: int
    read: int
    lost_acknowledged: frozenset[int]
    phantom_reads: frozenset[int]


def _writer(source: ServerProcess, number: int, history: History,
            stop: threading.Event) -> None:
    """Insert rows number*10^7 + 1, 2, ...; an id is acknowledged once the client has OK."""
    try:
        connection = source.connect()
        with connection.cursor() as cursor:
            for row in range(number * 10_000_000 + 1, (number + 1) * 10_000_000):
                if stop.is_set():
                    break
                with history.lock:
                    history.in_flight[number] = row
                cursor.execute(f"INSERT INTO d.t VALUES ({row}, 'w{number}')")
                with history.lock:
                    history.acknowledged.add(row)
    except pymysql.MySQLError:
        pass  # the source died: from here on nothing is acknowledged


def _reader(source: ServerProcess, history: History, stop: threading.Event) -> None:
    """Probe the rows being inserted; every id found was read."""
    try:
        connection = source.connect()
        with connection.cursor() as cursor:
            while not stop.is_set():
                with history.lock:
                    probe = list(history.in_flight.values())
                if not probe:
                    time.sleep(0.001)
                    continue
                cursor.execute(f"SELECT id FROM d.t WHERE id IN ({','.join(map(str, probe))})")
                found = {int(row[0]) for row in cursor.fetchall()}
                with history.lock:
                    history.read |= found
    except pymysql.MySQLError:
        pass


def _promote(replica: ServerProcess) -> set[int]:
    """Apply everything the replica received, stop replication; the ids it holds."""
    status = drain(replica)
    replica.query("STOP SLAVE")
    assert not status["Last_SQL_Errno"], status["Last_SQL_Error"]
    return {int(row[0]) for row in replica.query("SELECT id FROM d.t")}


class FailoverHarness(SemisyncFixtures):
    """One failover trial: a source (semisync, ``wait_point``, a timeout that never
    expires) and one semisync replica; 12 writers insert unique rows and 4 readers probe
    the rows being inserted; the source is killed per ``KILLS``; the replica applies what
    it received and is promoted (its binlog and relay logs must pass the validator's
    structure and transaction checks); the :class:`Verdict` compares what the clients saw.
    """

    wait_point = "AFTER_SYNC"

    @pytest.fixture
    def semisync_plugins(self) -> SemisyncPlugins:
        """The implementation under test (override to test another one), with a timeout
        that never expires during a trial.
        """
        return SemisyncPlugins(timeout_ms=600_000)

    def run_trial(self, nodes: Nodes, kill: str, seed: int) -> Verdict:
        """One trial; what the clients saw against what the promoted replica holds."""
        rng = random.Random(seed)
        source = nodes.source(f"--rpl-semi-sync-master-wait-point={self.wait_point}")
        proxy = TcpProxy(source.port)
        try:
            replica = nodes.replica(source, port=proxy.port)
            wait_for(clients_are(source, 1), 20, "the semisync dump")
            return self._load_and_kill(source, replica, proxy, kill, rng)
        finally:
            proxy.close()

    @staticmethod
    def _load_and_kill(source: ServerProcess, replica: ServerProcess, proxy: TcpProxy,
                       kill: str, rng: random.Random) -> Verdict:
        history, stop = History(), threading.Event()
        threads = [in_background(lambda n=n: _writer(source, n, history, stop))[0]  # type: ignore[misc]
                   for n in range(WRITERS)]
        threads += [in_background(lambda: _reader(source, history, stop))[0]
                    for _ in range(READERS)]
        # The kill's moment is drawn from when commits flow, not from when the clients
        # started: on a loaded machine connecting sixteen clients can take most of a second.
        wait_for(lambda: bool(history.acknowledged), 30, "a first acknowledged commit")
        time.sleep(0.3 + rng.random() * 0.7)
        if kill == "network_cut":
            proxy.cut()
            time.sleep(0.2 + rng.random() * 0.3)
            source.kill()
            proxy.close()  # the dead source's connection ends for the replica too
        elif kill == "random":
            source.kill()
        else:
            source.arm_crash_point(kill)
            source.wait_exit(30)
        stop.set()
        for thread in threads:
            thread.join(30)
        held = _promote(replica)
        unsound = violations_in([str(replica.datadir)])
        assert not unsound, "the promoted replica's logs: " + "; ".join(unsound)
        return Verdict(len(history.acknowledged), len(history.read),
                       frozenset(history.acknowledged - held), frozenset(history.read - held))

class LosslessFailoverSuite(FailoverHarness):
    """WL#6355's point: with AFTER_SYNC, a source killed at any moment loses nothing a
    client saw: (a) every acknowledged row and (b) every row a reader saw is on the
    promoted replica. ``RPL_FAILOVER_TRIALS`` trials (default 30), cycling through ``KILLS``.
    """

    @pytest.mark.parametrize("trial", range(TRIALS))
    def test_nothing_a_client_saw_is_lost(self, nodes: Nodes, trial: int) -> None:
        kill = KILLS[trial % len(KILLS)]
        verdict = self.run_trial(nodes, kill, trial)
        assert verdict.acknowledged > 0, "the clients wrote before the kill"
        assert not verdict.lost_acknowledged, \
            f"{kill}: acknowledged rows missing on the promoted replica: " \
            f"{sorted(verdict.lost_acknowledged)[:10]}"
        assert not verdict.phantom_reads, \
            f"{kill}: rows read from the source missing on the promoted replica: " \
            f"{sorted(verdict.phantom_reads)[:10]}"
