"""A Jepsen-style trial of one consistency level on a three-member multi-primary group:
writers and readers on every member, a fault in the middle, a client history recorded,
then ``rpl validate --history --fresh-reads --group`` over the members' binlogs.

The workload: keys 0..KEYS-1 of ``d.t (k INT PRIMARY KEY, v VARCHAR(64))``; each writer
updates a random key to a value unique in the run (``<client>-<n>``) and publishes the
key it had OK for; each reader reads the key another member's writer last had OK for
(what a client that was just told "committed" would read next), on its own member. Every
operation is recorded with its start, end and outcome (ok, fail: the server refused it,
unknown: the connection broke). The faults: the applier of one member lagging (the
``pause_plugin_applier`` sync point, a second at a time), a member's server paused
(SIGSTOP) for three seconds, a member's server killed and restarted to rejoin, a member's
etcd member paused (cut off from the group's consensus).

What a trial proves is the validator's verdict on its history: stale reads (a read that
misses a write acknowledged before it began), acknowledged writes lost, and every
member's binlog holding the group GTIDs in one order.
"""

from __future__ import annotations

import random
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import attrs
import pymysql

from rpl.core.testing.group import GROUP_NAME, ClientThreads, Group, wait_until
from rpl.core.validate.checks import validate
from rpl.core.validate.history import Operation, write_history
from rpl.core.validate.report import Report

KEYS: Final = 8
FAULTS: Final = ("lagging_applier", "paused_member", "killed_member", "cut_off_member")
PAUSE: Final = "pause_plugin_applier"


@attrs.frozen
class Verdict:
    """What the validator found in one trial."""

    level: str
    fault: str
    operations: int
    reads_ok: int
    writes_ok: int
    stale_reads: int
    other_violations: list[str]
    report: Report


class Workload(ClientThreads):
    """Writers and readers on every member, recording the history."""

    def __init__(self, group: Group, level: str, *, writers: int = 1, readers: int = 2) -> None:
        self.group = group
        self.level = level
        self.operations: list[Operation] = []
        self._lock = threading.Lock()
        self.last_acked: dict[int, int] = {}
        """Member index -> the key its writers last had OK for."""
        threads = [
            threading.Thread(target=self._writer, args=(m, n), daemon=True)
            for m in range(len(group.servers))
            for n in range(writers)
        ] + [
            threading.Thread(target=self._reader, args=(m, n), daemon=True)
            for m in range(len(group.servers))
            for n in range(readers)
        ]
        super().__init__(threads)

    def _connect(self, member: int) -> Any:
        connection = self.group.servers[member].connect(
            connect_timeout=3, read_timeout=30, write_timeout=30
        )
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT MEMBER_STATE FROM performance_schema.replication_group_members "
                "WHERE MEMBER_ID = @@server_uuid"
            )
            if cursor.fetchone() in (None, ("OFFLINE",)):
                # a restarted member before START GROUP_REPLICATION is a standalone server
                # (MySQL Router routes nothing to it either)
                connection.close()
                raise pymysql.err.OperationalError(2003, "not a member of the group yet")
            cursor.execute(f"SET SESSION group_replication_consistency = '{self.level}'")
        return connection

    def _record(self, operation: Operation) -> None:
        with self._lock:
            self.operations.append(operation)

    def _loop(self, member: int, step: Any) -> None:
        """Run ``step(cursor)`` until done, reconnecting when the member goes away."""
        while not self.done.is_set():
            try:
                connection = self._connect(member)
            except pymysql.err.MySQLError:
                self.done.wait(0.3)
                continue
            try:
                with connection.cursor() as cursor:
                    while not self.done.is_set():
                        if not step(cursor):
                            break
            finally:
                try:
                    connection.close()
                except Exception:  # noqa: BLE001 - a dead connection
                    pass

    def _writer(self, member: int, number: int) -> None:
        client = f"w{member}.{number}"
        counter = iter(range(1, 1 << 62))

        def step(cursor: Any) -> bool:
            key, value = random.randrange(KEYS), f"{client}-{next(counter)}"
            start = time.time()
            outcome, alive = _run(cursor, f"UPDATE d.t SET v = '{value}' WHERE k = {key}")
            end = time.time()
            self._record(
                Operation(
                    client, "write", "d.t", str(key), value, start, end, outcome, f"m{member}"
                )
            )
            if outcome == "ok":
                self.last_acked[member] = key
            return alive

        self._loop(member, step)

    def _reader(self, member: int, number: int) -> None:
        client = f"r{member}.{number}"
        others = [m for m in range(len(self.group.servers)) if m != member]

        def step(cursor: Any) -> bool:
            key = self.last_acked.get(random.choice(others), random.randrange(KEYS))
            start = time.time()
            try:
                cursor.execute(f"SELECT v FROM d.t WHERE k = {key}")
                row = cursor.fetchone()
                outcome, value, alive = "ok", (row[0] if row else None), True
            except pymysql.err.OperationalError as exc:
                outcome, value, alive = _failure(exc)
            except pymysql.err.MySQLError:
                outcome, value, alive = "fail", None, True
            end = time.time()
            if outcome == "ok":
                self._record(
                    Operation(client, "read", "d.t", str(key), value, start, end, "ok", "")
                )
            self.done.wait(0.005)
            return alive

        self._loop(member, step)


def _run(cursor: Any, sql: str) -> tuple[str, bool]:
    """Run a write: its outcome, and whether the connection is still usable."""
    try:
        cursor.execute(sql)
        return "ok", True
    except pymysql.err.OperationalError as exc:
        outcome, _, alive = _failure(exc)
        return outcome, alive
    except pymysql.err.MySQLError:
        return "fail", True


def _failure(exc: pymysql.err.OperationalError) -> tuple[str, None, bool]:
    """A lost connection (2006, 2013, 2003) leaves the outcome unknown."""
    if exc.args and exc.args[0] in (2003, 2006, 2013, 0):
        return "unknown", None, False
    return "fail", None, True


def _fault(group: Group, fault: str, victim: int) -> None:
    """Inflict ``fault`` on member ``victim`` and end it."""
    server = group.servers[victim]
    if fault == "lagging_applier":
        for _ in range(4):
            server.query(f"SET GLOBAL debug = '+d,{PAUSE}'")
            time.sleep(1.0)
            server.query(f"SET GLOBAL debug = '-d,{PAUSE}'")
            time.sleep(0.5)
    elif fault == "paused_member":
        assert server.process is not None
        server.process.send_signal(signal.SIGSTOP)
        time.sleep(3.0)
        server.process.send_signal(signal.SIGCONT)
    elif fault == "killed_member":
        server.kill()
        others = [i for i in range(3) if i != victim]
        group.wait_states(others[0], ["ONLINE"] * 2, timeout=60)
        server.start()
        group.join(victim, group_replication_single_primary_mode="OFF")
        group.wait_states(victim, ["ONLINE"] * 3, timeout=90)
    elif fault == "cut_off_member":
        group.etcd.signal(victim, signal.SIGSTOP)
        time.sleep(3.0)
        group.etcd.signal(victim, signal.SIGCONT)
    else:
        raise ValueError(fault)


def _state(group: Group) -> str:
    """Every member's GTIDs and sessions (what a convergence timeout shows)."""
    lines = []
    for index, server in enumerate(group.servers):
        try:
            lines.append(f"m{index}: {server.query('SELECT @@gtid_executed')}")
            lines += [f"  {row}" for row in server.query("SHOW PROCESSLIST")]
        except pymysql.err.MySQLError as exc:
            lines.append(f"m{index}: {exc}")
    return "\n".join(lines)


def _answers(server: Any, sql: str, rows: list[tuple[Any, ...]]) -> Callable[[], bool]:
    return lambda: bool(server.query(sql) == rows)


def run_trial(
    group: Group, level: str, fault: str, root: Path, spark: Any, seconds: float = 6.0
) -> Verdict:
    """One trial (module docstring): start the group, run, fault, converge, validate."""
    settings = {"group_replication_single_primary_mode": "OFF"}
    group.form(**settings)
    first = group.servers[0]
    first.query("CREATE DATABASE d")
    first.query("CREATE TABLE d.t (k INT PRIMARY KEY, v VARCHAR(64))")
    setup = []
    for key in range(KEYS):
        started = time.time()
        first.query(f"INSERT INTO d.t VALUES ({key}, 'init-{key}')")
        setup.append(
            Operation("setup", "write", "d.t", str(key), f"init-{key}", started, time.time(), "ok")
        )
    for server in group.servers:
        wait_until(_answers(server, "SELECT COUNT(*) FROM d.t", [(KEYS,)]))
    victim = 1 + random.randrange(2)
    with Workload(group, level) as workload:
        time.sleep(seconds / 2)
        _fault(group, fault, victim)
        time.sleep(seconds / 2)
    executed = first.query("SELECT @@gtid_executed")
    for server in group.servers[1:]:
        wait_until(_answers(server, "SELECT @@gtid_executed", executed), 90, lambda: _state(group))
    for server in group.servers:
        server.stop()
    history = root / f"history-{level}-{fault}.jsonl"
    write_history(history, [*setup, *workload.operations])
    report = validate(
        [str(s.datadir) for s in group.servers],
        history=str(history),
        fresh_reads=True,
        group=GROUP_NAME,
        spark=spark,
    )
    others = [f.line() for f in report.violations if f.check != "fresh_reads"]
    operations = workload.operations
    return Verdict(
        level,
        fault,
        len(operations),
        sum(1 for o in operations if o.op == "read"),
        sum(1 for o in operations if o.op == "write" and o.outcome == "ok"),
        report.stale_reads,
        others,
        report,
    )
