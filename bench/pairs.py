"""A source and its replica, of rpl or of MariaDB, as the replication benchmarks drive them:
start, CHANGE MASTER, wait until caught up, check, compare CHECKSUM TABLE; and the GTID
arithmetic that says how far behind a replica is.

Not a benchmark: ``replication_vs_mariadb.py``, ``semisync_vs_mariadb.py`` and
``relay_recovery_vs_mariadb.py`` import it.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pymysql

from common import ROW, RPL_STATEMENT, STATEMENT, BenchFailure, MariaDB, binlog_bytes
from rpl.core.testing.process import ServerProcess

POLL_EVERY = 0.1
STALL_SECONDS = 180.0


class ReplicationFailure(BenchFailure):
    """The replica stopped, reported an error, died or made no progress."""


# ---------------------------------------------------------------- GTID arithmetic
def mysql_gtid_counts(text: str) -> dict[str, int]:
    """``uuid:1-5:7,uuid2:3`` -> {uuid: number of transactions}."""
    counts: dict[str, int] = {}
    for part in re.sub(r"\s+", "", text or "").split(","):
        if not part:
            continue
        uuid, *intervals = part.split(":")
        total = 0
        for interval in intervals:
            low, _, high = interval.partition("-")
            total += int(high or low) - int(low) + 1
        counts[uuid.lower()] = counts.get(uuid.lower(), 0) + total
    return counts


def mariadb_gtid_counts(text: str) -> dict[str, int]:
    """``0-1-100,1-2-5`` -> {domain: sequence number} (one source: the count)."""
    counts: dict[str, int] = {}
    for part in re.sub(r"\s+", "", text or "").split(","):
        if part:
            domain, _, seq = part.split("-")
            counts[domain] = int(seq)
    return counts


def behind(source: dict[str, int], replica: dict[str, int]) -> int:
    """Transactions the source has that the replica has not (one source, no holes)."""
    return sum(max(0, n - replica.get(key, 0)) for key, n in source.items())


# ---------------------------------------------------------------- server pairs
class Pair:
    """A source and its replica; subclasses know each server kind's SQL."""

    name = ""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._source: Any = None
        self._replica: Any = None
        self.source_server: Any = None
        self.replica_server: Any = None

    # what a subclass provides
    def start(self) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def source_port(self) -> int:
        return int(self.source_server.port)

    def replica_port(self) -> int:
        return int(self.replica_server.port)

    def change_master_sql(self) -> str:
        raise NotImplementedError

    def source_gtids(self) -> dict[str, int]:
        raise NotImplementedError

    def replica_gtids(self) -> dict[str, int]:
        raise NotImplementedError

    def alive(self) -> str | None:
        """None while both processes run, else which one ended and how."""
        for server in (self.source_server, self.replica_server):
            assert server.process is not None
            if server.process.poll() is not None:
                return f"{server.datadir.name} exited with {server.process.returncode}"
        return None

    def logs(self) -> str:
        """The tail of the replica's error log."""
        raise NotImplementedError

    def version(self) -> str:
        return str(self.value(self.source(), "SELECT VERSION()"))

    def binlog_bytes(self) -> int:
        """The source's binlog files' sizes summed (:func:`common.binlog_bytes`)."""
        return binlog_bytes(self.source_port())

    # shared
    def connect(self, port: int) -> Any:
        return pymysql.connect(host="127.0.0.1", port=port, user="root", autocommit=True)

    def source(self) -> Any:
        if self._source is None:
            self._source = self.connect(self.source_port())
        return self._source

    def replica(self) -> Any:
        if self._replica is None:
            self._replica = self.connect(self.replica_port())
        return self._replica

    def close(self) -> None:
        for connection in (self._source, self._replica):
            if connection is not None:
                connection.close()
        self._source = self._replica = None

    @staticmethod
    def run(connection: Any, sql: str) -> list[tuple[Any, ...]]:
        with connection.cursor() as cursor:
            cursor.execute(sql)
            return list(cursor.fetchall())

    @staticmethod
    def value(connection: Any, sql: str) -> Any:
        with connection.cursor() as cursor:
            cursor.execute(sql)
            return cursor.fetchone()[0]

    def slave_status(self) -> dict[str, Any]:
        with self.replica().cursor() as cursor:
            cursor.execute("SHOW SLAVE STATUS")
            row = cursor.fetchone()
            if row is None:
                return {}
            return dict(zip([d[0] for d in cursor.description], row, strict=True))

    def setup(self) -> None:
        """Replication user on the source, CHANGE MASTER and START SLAVE on the replica."""
        self.run(self.source(), "CREATE USER repl@'%' IDENTIFIED BY 'pw'")
        self.run(self.source(), "GRANT REPLICATION SLAVE ON *.* TO repl@'%'")
        self.run(self.replica(), self.change_master_sql())
        self.run(self.replica(), "START SLAVE")

    def lag(self) -> tuple[int, dict[str, Any]]:
        """(transactions behind, SHOW SLAVE STATUS), failing on a replication error."""
        source = self.source_gtids()
        replica = self.replica_gtids()
        status = self.slave_status()
        self.check(status)
        return behind(source, replica), status

    def check(self, status: dict[str, Any], running: bool = True) -> None:
        dead = self.alive()
        if dead:
            raise ReplicationFailure(f"{self.name}: {dead}\n{self.logs()}")
        errors = [
            f"{key}: {status[key]}"
            for key in ("Last_IO_Error", "Last_SQL_Error")
            if status.get(key)
        ]
        stopped = [
            f"{key}={status.get(key)}"
            for key in ("Slave_IO_Running", "Slave_SQL_Running")
            if status.get(key) == "No"
        ]
        if errors or (running and stopped):
            raise ReplicationFailure(
                f"{self.name} replica: {'; '.join(errors + stopped)}\n{self.logs()}"
            )

    def wait_caught_up(
        self,
        timeout: float,
        progress: Callable[[int, dict[str, Any]], None] | None = None,
        every: float = 2.0,
    ) -> float:
        """Poll until the replica executed everything the source has; the monotonic time
        at which that was seen. Fails on an error, a dead process or no progress.
        """
        deadline = time.monotonic() + timeout
        last_report = time.monotonic()
        best, best_at = None, time.monotonic()
        while True:
            source = self.source_gtids()
            now = time.monotonic()
            replica = self.replica_gtids()
            if replica == source:
                return now
            gap = behind(source, replica)
            if best is None or gap < best:
                best, best_at = gap, now
            if now - last_report >= every:
                last_report = now
                status = self.slave_status()
                self.check(status)
                if progress is not None:
                    progress(gap, status)
            if now - best_at > STALL_SECONDS:
                status = self.slave_status()
                raise ReplicationFailure(
                    f"{self.name} replica made no progress for {STALL_SECONDS:.0f} s, "
                    f"{gap} transactions behind; SHOW SLAVE STATUS: "
                    f"{ {k: v for k, v in status.items() if v not in ('', None)} }\n"
                    f"{self.logs()}"
                )
            if now > deadline:
                raise ReplicationFailure(
                    f"{self.name} replica not caught up after {timeout:.0f} s ({gap} behind)"
                )
            time.sleep(POLL_EVERY)

    def checksums(self, tables: list[str]) -> tuple[dict[str, int], dict[str, int]]:
        listing = ", ".join(tables)
        source = dict(self.run(self.source(), f"CHECKSUM TABLE {listing}"))
        replica = dict(self.run(self.replica(), f"CHECKSUM TABLE {listing}"))
        return source, replica


class RplPair(Pair):
    """rpl source + replica, both logging rows (``--binlog-format=ROW``, said explicitly)."""

    name = "rpl"
    FORMAT = ROW
    source_server: ServerProcess
    replica_server: ServerProcess

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.prefix = self.name.replace(" ", "-")
        """The data directories' prefix (a pair of each format may share ``root``)."""

    def server(self, role: str, server_id: int, *options: str) -> ServerProcess:
        """One server of the pair, ``role`` source or replica, started."""
        return ServerProcess(
            self.root / f"{self.prefix}-{role}",
            options=["--server-id", str(server_id), self.FORMAT, *options],
        ).start()

    def start(self) -> None:
        self.source_server = self.server("source", 1)
        self.replica_server = self.server("replica", 2)

    def stop(self) -> None:
        self.close()
        for server in (self.replica_server, self.source_server):
            code = server.stop()
            if code not in (0, None):
                print(f"  {self.name}: {server.datadir.name} exited with {code}", flush=True)

    def change_master_sql(self) -> str:
        return (
            f"CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={self.source_port()}, "
            "MASTER_USER='repl', MASTER_PASSWORD='pw', MASTER_AUTO_POSITION=1"
        )

    def source_gtids(self) -> dict[str, int]:
        return mysql_gtid_counts(self.value(self.source(), "SELECT @@gtid_executed"))

    def replica_gtids(self) -> dict[str, int]:
        return mysql_gtid_counts(self.value(self.replica(), "SELECT @@gtid_executed"))

    def logs(self) -> str:
        return (
            "--- replica error.log (tail) ---\n"
            + self.replica_server.error_log()[-4000:]
            + "--- source error.log (tail) ---\n"
            + self.source_server.error_log()[-2000:]
        )


class RplStatementPair(RplPair):
    """rpl source + replica logging statements (``--binlog-format=STATEMENT``)."""

    name = RPL_STATEMENT
    FORMAT = STATEMENT


class MariaDBPair(Pair):
    name = "MariaDB"
    source_server: MariaDB
    replica_server: MariaDB
    OPTIONS = ("--log-slave-updates=ON",)
    """Beside :class:`MariaDB`'s own (log_bin, ``--binlog-format=ROW``, sync_binlog=1)."""

    def start(self) -> None:
        self.source_server = MariaDB(self.root, "mariadb-source", 1, self.OPTIONS).start()
        self.replica_server = MariaDB(self.root, "mariadb-replica", 2, self.OPTIONS).start()

    def stop(self) -> None:
        self.close()
        self.replica_server.stop()
        self.source_server.stop()

    def setup(self) -> None:
        # mariadb-install-db leaves anonymous ''@'localhost' accounts; with name resolution
        # on (as the sysbench bench starts MariaDB) they would shadow repl@'%' for 127.0.0.1
        for (host,) in self.run(self.source(), "SELECT Host FROM mysql.user WHERE User=''"):
            self.run(self.source(), f"DROP USER ''@'{host}'")
        super().setup()

    def change_master_sql(self) -> str:
        return (
            f"CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={self.source_port()}, "
            "MASTER_USE_GTID=slave_pos, MASTER_USER='repl', MASTER_PASSWORD='pw'"
        )

    def source_gtids(self) -> dict[str, int]:
        return mariadb_gtid_counts(self.value(self.source(), "SELECT @@gtid_binlog_pos"))

    def replica_gtids(self) -> dict[str, int]:
        return mariadb_gtid_counts(self.value(self.replica(), "SELECT @@gtid_slave_pos"))

    def logs(self) -> str:
        path = self.root / "mariadb-replica.err"
        text = path.read_text(errors="replace") if path.exists() else ""
        return "--- replica error log (tail) ---\n" + text[-4000:]
