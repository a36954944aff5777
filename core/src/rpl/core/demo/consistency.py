"""``rpl demo consistency``: what each Group Replication consistency level promises, shown
on real processes.

One sandbox of a three-member single-primary group (``rpl sandbox deploy group``: three
rpl servers, each with its etcd member, on loopback). For each level of
``group_replication_consistency`` (EVENTUAL, BEFORE, AFTER, BEFORE_AND_AFTER), in a table
of its own: writers on the primary update keys they own to values unique in the run,
each operation recorded; readers on the two secondaries read the key a writer was last
told "committed", every read recorded. One secondary is slow: its applier stops for a
moment now and then (the server's ``pause_plugin_applier`` sync point, as a secondary on
a busy disk falls behind). Every client session runs at the level under test.

The verdict per level is a count of stale reads: a read that returned an older value
than one whose write was acknowledged before the read began. Each key has one writer,
which waits for each OK before its next write, so a key's values are ordered by the
writer's sequence number and the count is exact. EVENTUAL allows stale reads (the slow
secondary serves them); BEFORE (the reader waits for what the group ordered before it),
AFTER (the write returns once every member has prepared it, and a member holds new reads
meanwhile) and BEFORE_AND_AFTER must show none. Then ``rpl validate --history
--fresh-reads --group`` checks each level's history against the members' binlogs on
Spark, independently of the direct count, and the group's GTIDs for one order.

What holds when the command returns, or is interrupted: no server or etcd process of the
demo is left running (the data directories stay, for ``rpl validate`` or
``mariadb-binlog``).
"""

from __future__ import annotations

import bisect
import random
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import attrs
import pymysql

from rpl.core.demo.workload import Recorder
from rpl.core.sandbox.sandbox import GROUP_NAME_OPTION, MEMBER, Sandbox, deploy_group, stop
from rpl.core.testing.process import ServerProcess
from rpl.core.testing.topology import gtid_executed, wait_for
from rpl.core.validate.history import READ, WRITE, Operation, write_history

LEVELS: Final = ("EVENTUAL", "BEFORE", "AFTER", "BEFORE_AND_AFTER")
KEYS_PER_WRITER: Final = 4
PAUSE: Final = "pause_plugin_applier"
"""The server's sync point that stops a plugin applier channel (rpl.core.debug)."""
PAUSE_SECONDS: Final = 0.4
PAUSE_EVERY: Final = 1.2
"""The slow secondary's applier stops for PAUSE_SECONDS out of every PAUSE_EVERY."""
EXPECTED_STALE: Final = {"EVENTUAL": "allowed"}
"""Levels whose promise allows stale reads; every other level must show none."""


@attrs.define
class LevelRun:
    """One level's run and its verdict."""

    level: str
    table: str
    writes: int = 0
    reads: int = 0
    failed: int = 0
    """Operations the server refused or whose connection broke (none expected)."""
    commit_ms: list[float] = attrs.field(factory=list)
    read_ms: list[float] = attrs.field(factory=list)
    stale: list[tuple[float, str, str]] = attrs.field(factory=list)
    """(seconds, reader, what it missed) of each stale read, by the direct count."""
    samples: list[tuple[float, int, int]] = attrs.field(factory=list)
    """(seconds, acknowledged writes, reads) as the run went."""
    pauses: list[tuple[float, float]] = attrs.field(factory=list)
    """(from, to) seconds the slow secondary's applier was stopped."""
    validate_stale: int | None = None
    """Stale reads ``rpl validate --fresh-reads`` counted (None: it did not run)."""
    validate_others: list[str] = attrs.field(factory=list)
    """What else it found: lost writes, breaks of the group's order (never allowed)."""
    validate_summary: str = ""
    history_lines: tuple[int, int] = (0, 0)
    """The run's operations are lines first..last-1 of the demo's history.jsonl."""

    @property
    def allows_stale(self) -> bool:
        """The level's promise allows stale reads (EVENTUAL)."""
        return self.level in EXPECTED_STALE

    @property
    def kept(self) -> bool:
        """The level kept its promise, by the direct count and by ``rpl validate`` (when
        it ran): no stale read unless allowed, the two counts agree, and the validator
        found nothing else.
        """
        if self.validate_stale is not None and (
            self.validate_stale != len(self.stale) or self.validate_others
        ):
            return False
        return self.allows_stale or not self.stale


def percentile(values: list[float], share: float) -> float | None:
    """The ``share`` (0..1) quantile of ``values``, nearest rank; None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered)) - 1))]


def median(values: list[float]) -> float | None:
    """The median, None when empty."""
    return statistics.median(values) if values else None


class LevelWorkload:
    """Writers on the primary, readers on the secondaries, at one level, recording into
    one :class:`Recorder`. A writer owns KEYS_PER_WRITER keys and waits for each OK
    before the next write (module docstring: what makes the stale count exact).
    """

    def __init__(
        self,
        run: LevelRun,
        primary: ServerProcess,
        secondaries: list[ServerProcess],
        *,
        writers: int,
        readers: int,
        session_level: str,
    ) -> None:
        self.run = run
        self.primary = primary
        self.secondaries = secondaries
        self.session_level = session_level
        self.recorder = Recorder()
        self.last_acked: int | None = None
        """The key most recently acknowledged (None before the first OK)."""
        self.threads = [
            threading.Thread(target=self._writer, args=(n,), daemon=True) for n in range(writers)
        ] + [
            threading.Thread(target=self._reader, args=(s, n), daemon=True)
            for s in range(len(secondaries))
            for n in range(readers)
        ]

    def start(self) -> None:
        """Start every client thread."""
        for thread in self.threads:
            thread.start()

    def stop(self) -> None:
        """Stop them and wait (each finishes its current statement)."""
        self.recorder.stop.set()
        for thread in self.threads:
            thread.join(60)

    def _connect(self, server: ServerProcess) -> Any:
        connection = server.connect(read_timeout=60, write_timeout=60)
        with connection.cursor() as cursor:
            cursor.execute(f"SET SESSION group_replication_consistency = '{self.session_level}'")
        return connection

    def _writer(self, number: int) -> None:
        client, table = f"writer-{number}", self.run.table
        keys = [number * KEYS_PER_WRITER + i for i in range(KEYS_PER_WRITER)]
        connection = self._connect(self.primary)
        with connection.cursor() as cursor:
            for sequence in range(1, 1 << 62):
                if self.recorder.stop.is_set():
                    return
                key, value = random.choice(keys), f"{client}-{sequence}"
                started, outcome = time.time(), "ok"
                try:
                    cursor.execute(f"UPDATE {table} SET v = '{value}' WHERE k = {key}")
                except pymysql.err.OperationalError:
                    outcome = "unknown"
                except pymysql.MySQLError:
                    outcome = "fail"
                ended = time.time()
                self.recorder.record(
                    Operation(client, WRITE, table, str(key), value, started, ended, outcome, "")
                )
                if outcome == "unknown":
                    return
                if outcome == "ok":
                    self.last_acked = key

    def _reader(self, secondary: int, number: int) -> None:
        client, table = f"reader-{secondary + 2}.{number}", self.run.table
        node = f"member{secondary + 2}"
        connection = self._connect(self.secondaries[secondary])
        with connection.cursor() as cursor:
            while not self.recorder.stop.is_set():
                key = self.last_acked
                if key is None:
                    time.sleep(0.002)
                    continue
                started = time.time()
                try:
                    cursor.execute(f"SELECT v FROM {table} WHERE k = {key}")
                    found = cursor.fetchone()
                except pymysql.MySQLError:
                    return
                ended = time.time()
                value = str(found[0]) if found else None
                self.recorder.record(
                    Operation(client, READ, table, str(key), value, started, ended, "ok", node)
                )
                time.sleep(0.002)


def stale_reads(operations: list[Operation], origin: float) -> list[tuple[float, str, str]]:
    """The reads that returned an older value than one acknowledged before they began:
    (seconds since ``origin`` the read returned, reader, what it missed). A key's values
    are ordered by their writer's sequence number (the number after the last ``-``).
    """
    acked: dict[str, list[tuple[float, int, str]]] = {}
    for o in operations:
        if o.op == WRITE and o.outcome == "ok" and o.value is not None:
            acked.setdefault(o.key, []).append((o.end, _sequence(o.value), o.value))
    for writes in acked.values():
        writes.sort()
    found = []
    for o in operations:
        if o.op != READ or o.key not in acked:
            continue
        writes = acked[o.key]
        before = bisect.bisect_left(writes, (o.start,)) - 1
        if before < 0:
            continue
        _, newest, value = writes[before]
        seen = _sequence(o.value) if o.value is not None else -1
        if seen < newest:
            found.append(
                (o.end - origin, o.client, f"read {o.value!r}, {value!r} was acknowledged")
            )
    return found


def _sequence(value: str) -> int:
    tail = value.rsplit("-", 1)[-1]
    return int(tail) if tail.isdigit() else 0


def _members(sandbox: Sandbox) -> tuple[ServerProcess, list[ServerProcess]]:
    """The primary and the secondaries, as the group sees them."""
    specs = [n for n in sandbox.nodes if n.role == MEMBER]
    servers = [sandbox.server(s) for s in specs]
    roles = dict(
        servers[0].query(
            "SELECT MEMBER_PORT, MEMBER_ROLE FROM performance_schema.replication_group_members"
        )
    )
    primary = next(s for s in servers if roles.get(s.port) == "PRIMARY")
    return primary, [s for s in servers if s is not primary]


def _slow_applier(
    server: ServerProcess, run: LevelRun, origin: float, done: threading.Event
) -> threading.Thread:
    """A thread that stops ``server``'s applier for PAUSE_SECONDS every PAUSE_EVERY
    until ``done``, noting each stop in ``run.pauses``.
    """

    def slow() -> None:
        while not done.wait(PAUSE_EVERY - PAUSE_SECONDS):
            began = time.time() - origin
            server.query(f"SET GLOBAL debug = '+d,{PAUSE}'")
            done.wait(PAUSE_SECONDS)
            server.query(f"SET GLOBAL debug = '-d,{PAUSE}'")
            run.pauses.append((began, time.time() - origin))

    thread = threading.Thread(target=slow, daemon=True)
    thread.start()
    return thread


def _table(level: str) -> str:
    return f"d.{level.lower()}"


def run_level(
    level: str,
    primary: ServerProcess,
    secondaries: list[ServerProcess],
    *,
    seconds: float,
    writers: int,
    readers: int,
    session_level: str,
    say: Callable[[str], None],
    interrupted: threading.Event,
) -> tuple[LevelRun, list[Operation]]:
    """One level's run: its table, the load with the slow secondary, the verdict by
    the direct count; returns the run and its history (the set-up writes first).
    """
    run = LevelRun(level, _table(level))
    keys = writers * KEYS_PER_WRITER
    setup = []
    primary.query(f"CREATE TABLE {run.table} (k INT PRIMARY KEY, v VARCHAR(64))")
    for key in range(keys):
        started = time.time()
        primary.query(f"INSERT INTO {run.table} VALUES ({key}, 'init-0')")
        setup.append(
            Operation("setup", WRITE, run.table, str(key), "init-0", started, time.time(), "ok")
        )
    executed = gtid_executed(primary)
    wait_for(lambda: all(gtid_executed(s) == executed for s in secondaries), 60, "the secondaries")
    workload = LevelWorkload(
        run, primary, secondaries, writers=writers, readers=readers, session_level=session_level
    )
    origin = workload.recorder.origin
    done = threading.Event()
    slow = _slow_applier(secondaries[-1], run, origin, done)
    workload.start()
    try:
        while time.time() - origin < seconds:
            time.sleep(0.2)
            if interrupted.is_set():
                raise KeyboardInterrupt
            recorder = workload.recorder
            run.samples.append((time.time() - origin, recorder.acknowledged(), recorder.reads()))
            _progress(run, recorder, origin)
    finally:
        done.set()
        slow.join(10)
        workload.stop()
    recorder = workload.recorder
    run.samples.append((time.time() - origin, recorder.acknowledged(), recorder.reads()))
    _tally(run, recorder.operations, origin)
    say(
        f"[{level}] {run.writes} writes acknowledged, {run.reads} reads, "
        f"{len(run.stale)} stale reads"
    )
    return run, [*setup, *recorder.operations]


def _progress(run: LevelRun, recorder: Recorder, origin: float) -> None:
    if sys.stderr.isatty():
        print(
            f"\r[{run.level}] {time.time() - origin:5.1f} s  acknowledged writes "
            f"{recorder.acknowledged():>6}  reads {recorder.reads():>6}",
            end="",
            file=sys.stderr,
            flush=True,
        )


def _tally(run: LevelRun, operations: list[Operation], origin: float) -> None:
    for o in operations:
        if o.op == WRITE and o.outcome == "ok":
            run.writes += 1
            run.commit_ms.append((o.end - o.start) * 1000)
        elif o.op == READ:
            run.reads += 1
            run.read_ms.append((o.end - o.start) * 1000)
        else:
            run.failed += 1
    run.stale = stale_reads(operations, origin)


def _validate(
    runs: list[LevelRun],
    history: Path,
    datadirs: list[str],
    group: str,
    spark: Any,
    say: Callable[[str], None],
) -> None:
    """One ``rpl validate`` over every level's history (each level its own table):
    each run gets its table's stale-read count and the other violations of its lines
    of the history, and every run gets those that are no history's (the group's order).
    """
    from rpl.core.validate.checks import validate

    report = validate(
        datadirs,
        history=str(history),
        fresh_reads=True,
        group=group,
        spark=spark,
        progress=lambda text: say(f"rpl validate: {text}"),
    )
    report.write_json(history.parent / "validate.json")
    (history.parent / "validate.txt").write_text(report.summary() + "\n")
    others = [f for f in report.violations if f.check != "fresh_reads"]
    for run in runs:
        first, last = run.history_lines
        run.validate_stale = report.stale_reads_by_table.get(run.table, 0)
        run.validate_others = [
            f.line() for f in others if f.kind != "history" or first <= f.position < last
        ]
        run.validate_summary = report.summary()


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def group_name(sandbox: Sandbox) -> str:
    """The group's UUID, from the members' options."""
    for spec in sandbox.nodes:
        for option in spec.options:
            if option.startswith(GROUP_NAME_OPTION):
                return option[len(GROUP_NAME_OPTION) :]
    raise ValueError("the sandbox is no group")


def run_demo(
    directory: Path,
    *,
    seconds: float,
    writers: int,
    readers: int,
    spark: Any,
    levels: tuple[str, ...] = LEVELS,
    break_levels: bool = False,
    interrupted: threading.Event,
    say: Callable[[str], None] = print,
) -> list[LevelRun]:
    """Every level's run on one group sandbox in ``directory`` (module docstring).
    ``break_levels``: every session runs EVENTUAL whatever the level it stands for (the
    deliberately broken variant the tests run, to show the verdict can fail).
    """
    say("deploying a group of three members, each with its etcd member")
    sandbox = deploy_group(directory / "group", members=3, say=lambda _: None)
    runs: list[LevelRun] = []
    operations: list[Operation] = []
    try:
        primary, secondaries = _members(sandbox)
        primary.query("CREATE DATABASE d")
        for level in levels:
            if interrupted.is_set():
                raise KeyboardInterrupt
            say(
                f"[{level}] {_count(writers, 'writer')} on the primary, "
                f"{_count(readers, 'reader')} on each secondary"
            )
            run, history = run_level(
                level,
                primary,
                secondaries,
                seconds=seconds,
                writers=writers,
                readers=readers,
                session_level="EVENTUAL" if break_levels else level,
                say=say,
                interrupted=interrupted,
            )
            run.history_lines = (len(operations) + 1, len(operations) + len(history) + 1)
            runs.append(run)
            operations += history
    finally:
        stop(sandbox)
        write_history(directory / "history.jsonl", operations)
    if spark is not None:
        members = [str(sandbox.directory / n.name) for n in sandbox.nodes if n.role == MEMBER]
        _validate(runs, directory / "history.jsonl", members, group_name(sandbox), spark, say)
    return runs
