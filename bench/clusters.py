"""A 3-member rpl Group Replication group and a 3-node MariaDB Galera cluster, running side
by side on this machine, as the group benchmarks drive them: start both, query a member,
prepare sysbench's tables on the primary (Galera: the first node) and wait until every
member and node has them.

Not a benchmark: ``group_vs_galera.py`` and ``group_consistency_vs_galera.py`` import it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import attrs
import pymysql

from common import POOL, BenchFailure, MariaDB, sysbench
from rpl.core.sandbox.sandbox import ETCD, MEMBER, deploy_group, stop
from rpl.core.testing.process import free_port

RPL, GALERA = "rpl group", "MariaDB Galera"
IGNORED_ERRORS = "1213,1180,3101"
"""What sysbench retries instead of stopping: deadlocks and certification failures (a
conflict on either side), counted as conflicts."""
PROGRAMS = ("etcd", "sysbench", "mariadbd", "rsync")
"""What the clusters and the runs need installed (tools/system-packages --bench)."""
PREPARED = "sbtest.prepared"
"""A one-row table written after sysbench's prepare: a member or node that has it has
applied everything the prepare wrote before it (both apply in the group's order)."""


def run_options(threads: int, seconds: int) -> list[str]:
    """The options of a sysbench run: ``threads`` threads for ``seconds``, the p95,
    :data:`IGNORED_ERRORS`.
    """
    return [
        f"--threads={threads}",
        f"--time={seconds}",
        "--percentile=95",
        f"--mysql-ignore-errors={IGNORED_ERRORS}",
    ]


def missing_programs() -> list[str]:
    """Those of :data:`PROGRAMS` this machine lacks."""
    return [p for p in PROGRAMS if shutil.which(p) is None and not Path(f"/usr/sbin/{p}").exists()]


class Galera:
    """Three MariaDB nodes in one Galera cluster on loopback."""

    def __init__(self, root: Path, nodes: int = 3) -> None:
        self.root = root
        self.group_ports = [free_port() for _ in range(nodes)]
        self.nodes: list[MariaDB] = []

    def _options(self, index: int) -> list[str]:
        address = "gcomm://" + ",".join(f"127.0.0.1:{p}" for p in self.group_ports)
        port = self.group_ports[index]
        listen = f"gmcast.listen_addr=tcp://127.0.0.1:{port};ist.recv_addr=127.0.0.1:{free_port()}"
        return [
            "--wsrep-on=ON",
            "--wsrep-provider=/usr/lib/galera/libgalera_smm.so",
            f"--wsrep-cluster-address={address}",
            f"--wsrep-node-address=127.0.0.1:{port}",
            f"--wsrep-provider-options={listen}",
            f"--wsrep-sst-receive-address=127.0.0.1:{free_port()}",
            "--wsrep-sst-method=rsync",
            "--wsrep-cluster-name=bench",
            f"--wsrep-node-name=node{index + 1}",
            "--wsrep-sync-wait=0",
            "--innodb-autoinc-lock-mode=2",
            *(["--wsrep-new-cluster"] if index == 0 else []),
        ]

    def start(self) -> Galera:
        """Bootstrap the first node, then join the others one by one. A joiner's data
        directory is empty and owned by ``nobody``: the rsync daemon that receives the
        state runs as that user when started by root.
        """
        for index in range(len(self.group_ports)):
            node = MariaDB(self.root, f"galera{index + 1}", index + 1, self._options(index))
            if index:
                node.datadir.mkdir(parents=True)
                os.chmod(node.datadir, 0o777)
                shutil.chown(node.datadir, "nobody", "nogroup")
            self.nodes.append(node.start(install=index == 0))
        size = status(self.nodes[0].port).get("wsrep_cluster_size")
        if size != str(len(self.nodes)):
            raise RuntimeError(f"the Galera cluster has {size} nodes")
        return self

    def stop(self) -> None:
        for node in reversed(self.nodes):
            node.stop()


def status(port: int) -> dict[str, str]:
    """SHOW GLOBAL STATUS of the server on ``port``."""
    return {str(k): str(v) for k, v in query(port, "SHOW GLOBAL STATUS")}


def query(port: int, sql: str) -> list[tuple[Any, ...]]:
    """The rows of one statement on the server on ``port`` (autocommit)."""
    connection = pymysql.connect(host="127.0.0.1", port=port, user="root", autocommit=True)
    try:
        with connection.cursor() as cursor:
            cursor.execute(sql)
            return list(cursor.fetchall())
    finally:
        connection.close()


@attrs.frozen
class Cluster:
    """A running cluster: its members' (nodes') ports, the primary (the first node)
    first, and its processes by kind (the servers; for rpl also the etcd members), whose
    CPU a run records.
    """

    ports: tuple[int, ...]
    processes: dict[str, list[int]]

    @property
    def port(self) -> int:
        """The primary's (Galera: the first node's): where writes go."""
        return self.ports[0]


@contextmanager
def clusters(prefix: str) -> Iterator[dict[str, Cluster]]:
    """Both clusters running, in a temporary directory named after ``prefix``."""
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        root = Path(tmp)
        os.chmod(root, 0o755)  # Galera's rsync daemon (nobody) walks into it
        print("starting the rpl group (3 members, 3 etcd members)", flush=True)
        group = deploy_group(root / "group", members=3, options=[POOL], say=print)
        galera: Galera | None = None
        try:
            print("starting the Galera cluster (3 nodes)", flush=True)
            galera = Galera(root / "galera").start()
            members = [n for n in group.nodes if n.role == MEMBER]
            etcd = [n.pid for n in group.nodes if n.role == ETCD]
            nodes = [n.process.pid for n in galera.nodes if n.process is not None]
            yield {
                RPL: Cluster(
                    tuple(n.port for n in members),
                    {"servers": [n.pid for n in members], "etcd": etcd},
                ),
                GALERA: Cluster(tuple(n.port for n in galera.nodes), {"servers": nodes}),
            }
        finally:
            if galera is not None:
                galera.stop()
            stop(group)


def prepare(cluster: Cluster, workload: str, timeout: float = 120.0) -> None:
    """Make sysbench's tables for ``workload`` afresh on the primary, then :data:`PREPARED`;
    returns once every member (node) has it.
    """
    query(cluster.port, "DROP DATABASE IF EXISTS sbtest")
    query(cluster.port, "CREATE DATABASE sbtest")
    sysbench(cluster.port, workload, "prepare")
    query(cluster.port, f"CREATE TABLE {PREPARED} (id INT PRIMARY KEY)")
    query(cluster.port, f"INSERT INTO {PREPARED} VALUES (1)")
    deadline = time.monotonic() + timeout
    for port in cluster.ports:
        while True:
            try:
                if query(port, f"SELECT COUNT(*) FROM {PREPARED}")[0][0] == 1:
                    break
            except pymysql.MySQLError:
                pass  # not there yet
            if time.monotonic() > deadline:
                raise BenchFailure(f"the member on port {port} did not apply the prepare")
            time.sleep(0.2)
