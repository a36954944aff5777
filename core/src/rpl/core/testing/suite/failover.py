"""Lossless failover (WL#6355): a source killed at any moment with AFTER_SYNC loses nothing
a client saw.

:class:`FailoverHarness` runs one trial and returns the :class:`Verdict`;
:class:`LosslessFailoverSuite` runs ``RPL_FAILOVER_TRIALS`` of them through every kind of
kill. The harness takes its plugins from the same ``semisync_plugins`` fixture as the
other areas: a subclass that overrides it runs the trials on another implementation (keep
a timeout no trial reaches, as the harness's own fixture does).
"""

from __future__ import annotations

import os
import random
import threading
import time

import attrs
import pymysql
import pytest

from rpl.core.testing.process import ServerProcess
from rpl.core.testing.proxy import TcpProxy
from rpl.core.testing.suite.fixtures import (
    Nodes,
    SemisyncFixtures,
    SemisyncPlugins,
    clients_are,
    in_background,
)
from rpl.core.testing.topology import drain, wait_for
from rpl.core.validate.stitch import violations_in

KILLS = (
    "random",
    "crash_before_flush_binlog",
    "half_binlogged_transaction",
    "crash_after_flush_binlog",
    "crash_after_sync_binlog",
    "crash_after_engine_commit",
    "network_cut",
)
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


def _writer(source: ServerProcess, number: int, history: History, stop: threading.Event) -> None:
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
    def _load_and_kill(
        source: ServerProcess,
        replica: ServerProcess,
        proxy: TcpProxy,
        kill: str,
        rng: random.Random,
    ) -> Verdict:
        history, stop = History(), threading.Event()
        threads = [
            in_background(lambda n=n: _writer(source, n, history, stop))[0]  # type: ignore[misc]
            for n in range(WRITERS)
        ]
        threads += [
            in_background(lambda: _reader(source, history, stop))[0] for _ in range(READERS)
        ]
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
        return Verdict(
            len(history.acknowledged),
            len(history.read),
            frozenset(history.acknowledged - held),
            frozenset(history.read - held),
        )


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
        assert not verdict.lost_acknowledged, (
            f"{kill}: acknowledged rows missing on the promoted replica: "
            f"{sorted(verdict.lost_acknowledged)[:10]}"
        )
        assert not verdict.phantom_reads, (
            f"{kill}: rows read from the source missing on the promoted replica: "
            f"{sorted(verdict.phantom_reads)[:10]}"
        )
