"""Benchmark: semisynchronous replication, rpl against MariaDB 10.11, side by side in one run.

Not a test: ``tox -e bench`` runs it. What is measured, all on this machine over loopback:
sysbench ``oltp_insert`` (``--db-ps-mode=disable``, ``--duration`` seconds per run) against
the source of a source + one replica, at each of ``--threads`` (default 1,4,16,32), for
each mode:

* ``async``: no semisync (rpl: no plugins; MariaDB: its built-in semisync off);
* ``AFTER_SYNC`` and ``AFTER_COMMIT``: rpl with ``--plugin-load=rpl_semi_sync_master``
  (source) and ``rpl_semi_sync_slave`` (replica); MariaDB with its built-in semisync;
  both with ``rpl_semi_sync_master_enabled=ON``, ``rpl_semi_sync_master_timeout`` =
  100000000 ms (never reached), ``rpl_semi_sync_master_wait_point`` = the mode, and
  ``rpl_semi_sync_slave_enabled=ON`` on the replica;
* ``rpl STATEMENT``: rpl as above with ``--binlog-format=STATEMENT`` on both servers (rpl
  and MariaDB log rows, ``--binlog-format=ROW``, the same work), to show what logging
  rows costs rpl in each mode;
* rpl's design before WL#6630 (the source started with
  ``RPL_SEMISYNC_ACK_IN_DUMP_THREAD=1``: the dump thread reads each ACK itself, there is no
  ACK receiver thread), AFTER_SYNC, at those of 16 and 32 threads that ``--threads`` has.

Durable commits everywhere: rpl's defaults (sync_binlog=1, GTID auto-position,
binlog_format=ROW passed explicitly), the rpl
source with ``thread_handling=pool-of-threads`` (MariaDB's default, one thread per
connection, is its own); MariaDB
sync_binlog=1, innodb_flush_log_at_trx_commit=1, binlog_format=ROW, log_slave_updates=ON,
MASTER_USE_GTID=slave_pos. Every server kind × mode gets a fresh pair; the replica
replicates as root (with semisync enabled from the start, a commit made before a
semisync replica is connected, such as CREATE USER, would wait for the timeout).

The pairs of one mode run at the same time and take turns: each cell (mode, thread
count) is measured ``--rounds`` times (default 3), and within a round rpl, rpl STATEMENT,
MariaDB and the dump-thread design run one after the other, seconds apart. A cell's figures are
those of its median run by tps, with the lowest and highest tps beside them. On a
shared two-CPU machine one run of a cell varied by about ±15% from minute to minute;
alternating the servers keeps such drift out of the ratios, and the per-round ratios
show what is left of it.

What holds (the run records a failure and exits 1 otherwise): the source's and replica's
semisync variables are the ones asked for and sync_binlog is 1; before each cell the
replica's receiver runs and, with semisync, the source shows
``Rpl_semi_sync_master_clients`` = 1 and ``Rpl_semi_sync_master_status`` = ON and the
replica ``Rpl_semi_sync_slave_status`` = ON; after each semisync cell
``Rpl_semi_sync_master_no_tx`` and ``_no_times`` are still 0 on the source (the timeout
never fired); rpl runs an ACK receiver thread exactly when not in the dump-thread design,
and only the dump-thread design counts ``_net_waits``; after each cell the replica
catches up, and at the end CHECKSUM TABLE agrees on both sides.

Each run records tps and p95 latency (sysbench's), the commit group size, yes_tx/no_tx,
the average ACK wait and the source's binlog growth (SHOW BINARY LOGS, summed) per
transaction; the report gives the rpl/MariaDB and rpl ROW/STATEMENT tps ratios (of the
median runs) per mode and thread count, the per-round ratios of the target cells, and the
ACK-receiver/dump-thread tps ratio. Writes docs/bench/semisync.md, semisync.json
(every run, and the cells) and semisync.png (median tps and p95; bars from the lowest
to the highest run).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import datetime
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pymysql

from common import (
    ROW,
    RPL_STATEMENT,
    STATEMENT,
    MariaDB,
    add_list_argument,
    add_out_argument,
    add_servers_argument,
    cpu_model,
    fmt,
    installed_build,
    int_list,
    interpreter,
    median_cells,
    name_list,
    per_transaction,
    publish,
    pyplot,
    ratio,
    round_ratios,
    save_figure,
    sysbench,
    sysbench_result,
)
from pairs import MariaDBPair, Pair, ReplicationFailure, RplPair
from rpl.core.testing.topology import replicate
from rpl.semisync_master.plugin import ACK_IN_DUMP_THREAD_ENV

SERVERS = ("rpl", RPL_STATEMENT, "MariaDB")
MODES = ("async", "AFTER_SYNC", "AFTER_COMMIT")
DUMP_THREAD_THREADS = (16, 32)
TARGET_THREADS = 16
TIMEOUT_MS = 100_000_000
TABLE_SIZE = 1000
TABLES = [f"sbtest.sbtest{i}" for i in range(1, 5)]  # sysbench()'s --tables=4
READY_TIMEOUT = 60.0
CATCH_UP_TIMEOUT = 1800.0
FORCED_SHUTDOWN = 120
"""Seconds after ``--time`` before sysbench gives up on a hung commit (and fails)."""
MASTER = "Rpl_semi_sync_master_"
COUNTERS = (
    "Binlog_commits",
    "Binlog_group_commits",
    f"{MASTER}yes_tx",
    f"{MASTER}no_tx",
    f"{MASTER}no_times",
    f"{MASTER}tx_waits",
    f"{MASTER}tx_wait_time",
    f"{MASTER}net_waits",
)
VARIABLES = (
    "rpl_semi%",
    "sync_binlog",
    "innodb_flush_log_at_trx_commit",
    "binlog_format",
    "log_slave_updates",
    "log_replica_updates",
)
ACK_RECEIVER = "thread/semisync/Ack_receiver"


class SemisyncFailure(RuntimeError):
    """Semisync was not set up as asked, not connected, or fell back to asynchronous."""


@dataclasses.dataclass(frozen=True)
class Config:
    """One server kind and mode: a fresh source + replica."""

    server: str
    mode: str
    dump_thread: bool = False

    @property
    def semisync(self) -> bool:
        return self.mode != "async"

    @property
    def label(self) -> str:
        return f"{self.server} {self.mode}" + (" (ACK in dump thread)" if self.dump_thread else "")

    @property
    def key(self) -> str:
        return f"{self.server}/{self.mode}" + ("/dump-thread" if self.dump_thread else "")

    @property
    def rpl(self) -> bool:
        """An rpl pair (logging rows or statements), not MariaDB."""
        return self.server != "MariaDB"

    def threads(self, wanted: Sequence[int]) -> list[int]:
        """The thread counts measured: all of ``wanted``; 16 and 32 for the dump thread."""
        return [t for t in wanted if not self.dump_thread or t in DUMP_THREAD_THREADS]


def configurations(servers: Sequence[str], threads: Sequence[int]) -> list[Config]:
    """Mode by mode, rpl then MariaDB (the order the pairs take turns in, so each ratio
    compares runs seconds apart); the dump-thread design right after rpl's AFTER_SYNC.
    """
    configs: list[Config] = []
    for mode in MODES:
        configs += [Config(server, mode) for server in SERVERS if server in servers]
        if (
            mode == "AFTER_SYNC"
            and "rpl" in servers
            and any(t in DUMP_THREAD_THREADS for t in threads)
        ):
            configs.append(Config("rpl", mode, dump_thread=True))
    return configs


# ---------------------------------------------------------------- server pairs
@contextlib.contextmanager
def environment(name: str, value: str | None) -> Iterator[None]:
    """``os.environ[name]`` set (or removed, for None) for the block: child processes
    started in it inherit that; restored after.
    """
    saved = os.environ.get(name)
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = saved


def source_options(mode: str) -> list[str]:
    """Semisync options of a source (the same spelling on both servers)."""
    if mode == "async":
        return []
    return [
        "--rpl-semi-sync-master-enabled=ON",
        f"--rpl-semi-sync-master-timeout={TIMEOUT_MS}",
        f"--rpl-semi-sync-master-wait-point={mode}",
    ]


def replica_options(mode: str) -> list[str]:
    return [] if mode == "async" else ["--rpl-semi-sync-slave-enabled=ON"]


class RplSemisyncPair(RplPair):
    """rpl source + replica, with the semisync plugins unless async."""

    def __init__(self, root: Path, config: Config) -> None:
        super().__init__(root)
        self.config = config
        self.name = config.server
        self.FORMAT = STATEMENT if config.server == RPL_STATEMENT else ROW

    def start(self) -> None:
        mode = self.config.mode
        plugin = [] if mode == "async" else ["--plugin-load=rpl_semi_sync_master"]
        with environment(ACK_IN_DUMP_THREAD_ENV, "1" if self.config.dump_thread else None):
            self.source_server = self.server(
                "source", 1, "--thread-handling=pool-of-threads", *plugin, *source_options(mode)
            )
        plugin = [] if mode == "async" else ["--plugin-load=rpl_semi_sync_slave"]
        with environment(ACK_IN_DUMP_THREAD_ENV, None):
            self.replica_server = self.server("replica", 2, *plugin, *replica_options(mode))

    def setup(self) -> None:
        replicate(self.replica_server, self.source_server, user="root", password="")


class MariaDBSemisyncPair(MariaDBPair):
    """MariaDB source + replica, with its built-in semisync on unless async."""

    def __init__(self, root: Path, config: Config) -> None:
        super().__init__(root)
        self.config = config

    def start(self) -> None:
        mode = self.config.mode
        self.source_server = MariaDB(
            self.root, "mariadb-source", 1, [*self.OPTIONS, *source_options(mode)]
        ).start()
        self.replica_server = MariaDB(
            self.root, "mariadb-replica", 2, [*self.OPTIONS, *replica_options(mode)]
        ).start()

    def setup(self) -> None:
        self.run(self.replica(), self.change_master_sql())
        self.run(self.replica(), "START SLAVE")

    def change_master_sql(self) -> str:
        return (
            f"CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={self.source_port()}, "
            "MASTER_USE_GTID=slave_pos, MASTER_USER='root', MASTER_PASSWORD=''"
        )


def make_pair(config: Config, root: Path) -> Any:
    root.mkdir(parents=True, exist_ok=True)
    kind = RplSemisyncPair if config.rpl else MariaDBSemisyncPair
    return kind(root, config)


def stop_server(server: Any) -> None:
    """Stop one server cleanly; SIGKILL it if that fails or takes too long."""
    if server is None:
        return
    try:
        code = server.stop()
        if code not in (0, None):
            print(f"  {server.datadir.name} exited with {code}", flush=True)
    except (subprocess.TimeoutExpired, OSError) as exc:
        print(f"  stopping {server.datadir.name}: {exc!r}; killing it", flush=True)
    finally:
        process = server.process
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()


def shutdown(pair: Any) -> None:
    """Close the bench's connections, stop the source, then the replica: a commit still
    waiting for an ACK (a run interrupted mid-cell) gets it, so the source need not be
    killed.
    """
    with contextlib.suppress(pymysql.MySQLError, OSError):
        pair.close()
    try:
        stop_server(pair.source_server)
    finally:
        stop_server(pair.replica_server)


# ---------------------------------------------------------------- status
def show(connection: Any, statement: str) -> dict[str, str]:
    """SHOW ... with (name, value) rows, as a dict of strings."""
    return {str(name): str(value) for name, value in Pair.run(connection, statement)}


def variables(connection: Any) -> dict[str, str]:
    values: dict[str, str] = {}
    for pattern in VARIABLES:
        values.update(show(connection, f"SHOW GLOBAL VARIABLES LIKE '{pattern}'"))
    return values


def counters(pair: Any) -> dict[str, int]:
    """The source's binlog and semisync counters (0 for those it lacks: rpl without the
    plugin).
    """
    status = show(pair.source(), "SHOW GLOBAL STATUS")
    return {name: int(status.get(name, 0)) for name in COUNTERS}


def ack_receivers(pair: Any) -> int:
    """rpl: ACK receiver threads in performance_schema.threads."""
    return int(
        pair.value(
            pair.source(),
            f"SELECT COUNT(*) FROM performance_schema.threads WHERE NAME = '{ACK_RECEIVER}'",
        )
    )


def check_variables(pair: Any, config: Config) -> dict[str, dict[str, str]]:
    """The servers' own view of the settings (their variable names); fails on a mismatch."""
    source, replica = variables(pair.source()), variables(pair.replica())
    expected: list[tuple[str, dict[str, str], str, str]] = [("source", source, "sync_binlog", "1")]
    if config.semisync:
        expected += [
            ("source", source, "rpl_semi_sync_master_enabled", "ON"),
            ("source", source, "rpl_semi_sync_master_timeout", str(TIMEOUT_MS)),
            ("source", source, "rpl_semi_sync_master_wait_point", config.mode),
            ("replica", replica, "rpl_semi_sync_slave_enabled", "ON"),
        ]
    wrong = [
        f"{side} {name}={values.get(name)!r} (wanted {want})"
        for side, values, name, want in expected
        if values.get(name) != want
    ]
    if wrong:  # a plugin that did not load says why in the error log
        raise SemisyncFailure(f"{config.label}: {'; '.join(wrong)}\n{pair.logs()}")
    return {"source": source, "replica": replica}


def not_ready(pair: Any, config: Config) -> str | None:
    """Why the pair is not ready for a cell (None when it is)."""
    status = pair.slave_status()
    pair.check(status)
    if status.get("Slave_IO_Running") != "Yes":
        return f"Slave_IO_Running={status.get('Slave_IO_Running')}"
    if not config.semisync:
        return None
    source = show(pair.source(), f"SHOW GLOBAL STATUS LIKE '{MASTER}%'")
    replica = show(pair.replica(), "SHOW GLOBAL STATUS LIKE 'Rpl_semi_sync_slave_status'")
    state = (
        source.get(f"{MASTER}clients"),
        source.get(f"{MASTER}status"),
        replica.get("Rpl_semi_sync_slave_status"),
    )
    if state != ("1", "ON", "ON"):
        return (
            f"{MASTER}clients={state[0]}, {MASTER}status={state[1]}, "
            f"Rpl_semi_sync_slave_status={state[2]}"
        )
    return None


def wait_ready(pair: Any, config: Config, timeout: float = READY_TIMEOUT) -> None:
    """Until the replica's receiver runs and, with semisync, is the source's one semisync
    client with semisync ON on both sides.
    """
    deadline = time.monotonic() + timeout
    while (why := not_ready(pair, config)) is not None:
        if time.monotonic() > deadline:
            raise SemisyncFailure(
                f"{config.label}: not ready after {timeout:.0f} s: {why}\n{pair.logs()}"
            )
        time.sleep(0.1)


# ---------------------------------------------------------------- cells
def cell_row(
    config: Config,
    threads: int,
    out: str,
    delta: dict[str, int],
    after: dict[str, int],
    grown: int,
) -> dict[str, Any]:
    transactions, tps, p95 = sysbench_result(out)
    groups, waits = delta["Binlog_group_commits"], delta[f"{MASTER}tx_waits"]
    return {
        "server": config.server,
        "mode": config.mode,
        "dump_thread": config.dump_thread,
        "label": config.label,
        "threads": threads,
        "tps": tps,
        "p95_ms": p95,
        "transactions": transactions,
        "binlog_bytes": grown,
        "binlog_bytes_per_trx": per_transaction(grown, transactions),
        "commits": delta["Binlog_commits"],
        "group_size": delta["Binlog_commits"] / groups if groups else 0.0,
        "yes_tx": delta[f"{MASTER}yes_tx"],
        "no_tx": delta[f"{MASTER}no_tx"],
        "no_tx_total": after[f"{MASTER}no_tx"],
        "no_times_total": after[f"{MASTER}no_times"],
        "tx_waits": waits,
        "avg_ack_wait_us": delta[f"{MASTER}tx_wait_time"] / waits if waits else 0.0,
        "net_waits": delta[f"{MASTER}net_waits"],
    }


def measure_cell(pair: Any, config: Config, threads: int, duration: int) -> dict[str, Any]:
    """One sysbench oltp_insert run against the source."""
    wait_ready(pair, config)
    print(f"  {config.label:34} {threads:3} threads: {duration} s of oltp_insert ...", flush=True)
    before, size = counters(pair), pair.binlog_bytes()
    out = sysbench(
        pair.source_port(),
        "oltp_insert",
        "run",
        f"--table-size={TABLE_SIZE}",
        f"--threads={threads}",
        f"--time={duration}",
        "--percentile=95",
        f"--forced-shutdown={FORCED_SHUTDOWN}",
    )
    after, grown = counters(pair), pair.binlog_bytes() - size
    row = cell_row(config, threads, out, {k: after[k] - before[k] for k in COUNTERS}, after, grown)
    semisync = (
        f", yes_tx {row['yes_tx']}, no_tx {row['no_tx']}, avg ACK wait "
        f"{row['avg_ack_wait_us']:.0f} us"
        if config.semisync
        else ""
    )
    print(
        f"  {config.label:34} {threads:3} threads: {row['tps']:9.1f} tps, p95 "
        f"{row['p95_ms']:7.2f} ms, group {row['group_size']:.2f}, binlog B/trx "
        f"{fmt(row['binlog_bytes_per_trx'], '.0f')}{semisync}",
        flush=True,
    )
    return row


def check_cell(pair: Any, config: Config, row: dict[str, Any]) -> None:
    """Semisync never fell back; the ACKs were read where the design reads them."""
    if not config.semisync:
        return
    if row["no_tx_total"] or row["no_times_total"]:
        raise SemisyncFailure(
            f"{config.label}, {row['threads']} threads: {MASTER}no_tx = {row['no_tx_total']}, "
            f"no_times = {row['no_times_total']}: semisync fell back to asynchronous\n"
            f"{pair.logs()}"
        )
    if not row["yes_tx"]:
        raise SemisyncFailure(f"{config.label}, {row['threads']} threads: yes_tx did not move")
    if config.rpl:
        receivers, net_waits = ack_receivers(pair), row["net_waits"]
        if (receivers, bool(net_waits)) != (0 if config.dump_thread else 1, config.dump_thread):
            raise SemisyncFailure(
                f"{config.label}: {receivers} ACK receiver threads, "
                f"{net_waits} dump-thread ACK reads"
            )


def catch_up(pair: Any, config: Config) -> float:
    """Seconds until the replica has applied everything (before the next cell)."""
    started = time.monotonic()

    def progress(gap: int, status: dict[str, Any]) -> None:
        print(
            f"    {config.label} replica catching up: {gap} transactions behind, "
            f"Seconds_Behind_Master {status.get('Seconds_Behind_Master')}",
            flush=True,
        )

    return float(pair.wait_caught_up(CATCH_UP_TIMEOUT, progress, 5.0)) - started


def prepare(pair: Any) -> None:
    """The sysbench tables, once per pair, replicated before the first cell."""
    pair.run(pair.source(), "CREATE DATABASE sbtest")
    sysbench(pair.source_port(), "oltp_insert", "prepare", f"--table-size={TABLE_SIZE}")
    pair.wait_caught_up(600)


def verify_checksums(pair: Any, config: Config) -> None:
    source, replica = pair.checksums(TABLES)
    if source != replica:
        raise ReplicationFailure(
            f"{config.label}: CHECKSUM TABLE differs: source {source}, replica {replica}"
        )


def failure_text(pair: Any, exc: BaseException) -> str:
    if isinstance(exc, ReplicationFailure | SemisyncFailure):
        return str(exc)
    try:
        logs = pair.logs()
    except (AttributeError, OSError):
        logs = ""
    return f"{exc!r}\n{logs}"


ERRORS = (RuntimeError, AssertionError, OSError, subprocess.CalledProcessError, pymysql.MySQLError)
"""What a failing pair raises: recorded as a failure of its configuration."""


def record_failure(config: Config, pair: Any, exc: BaseException, results: dict[str, Any]) -> None:
    text = failure_text(pair, exc)
    print(f"  {config.label} FAILED: {text}", flush=True)
    results["failures"].append({"config": config.key, "label": config.label, "error": text})


def start_pair(config: Config, root: Path, results: dict[str, Any]) -> Any | None:
    """A fresh pair for ``config``, set up, checked and prepared; None when that failed
    (recorded, and the pair stopped).
    """
    print(f"{config.label}: starting a source + replica", flush=True)
    pair = make_pair(config, root)
    try:
        pair.start()
        results["versions"].setdefault(config.server, pair.version())
        pair.setup()
        results["variables"][config.key] = check_variables(pair, config)
        wait_ready(pair, config)
        prepare(pair)
    except ERRORS as exc:
        record_failure(config, pair, exc, results)
        shutdown(pair)
        return None
    return pair


def measure_run(
    pair: Any, config: Config, threads: int, duration: int, round_: int, results: dict[str, Any]
) -> None:
    """One run of a cell, checked, then the replica's catch-up."""
    row = measure_cell(pair, config, threads, duration)
    row["round"] = round_
    results["runs"].append(row)
    check_cell(pair, config, row)
    row["catch_up_s"] = catch_up(pair, config)


def finish_pair(pair: Any, config: Config, results: dict[str, Any]) -> None:
    """CHECKSUM TABLE agrees on both sides; the sysbench tables are dropped."""
    try:
        verify_checksums(pair, config)
        sysbench(pair.source_port(), "oltp_insert", "cleanup")
    except ERRORS as exc:
        record_failure(config, pair, exc, results)


def run_mode(
    configs: Sequence[Config],
    root: Path,
    threads: Sequence[int],
    duration: int,
    rounds: int,
    results: dict[str, Any],
) -> None:
    """Start a fresh pair for each of ``configs`` (one mode), measure every cell
    ``rounds`` times with the pairs taking turns within each round, stop them all and
    remove their files. A pair that fails is recorded and left out from then on.
    """
    pairs: dict[str, tuple[Config, Any]] = {}
    try:
        for config in configs:
            pair = start_pair(
                config, root / config.key.replace("/", "-").replace(" ", "_"), results
            )
            if pair is not None:
                pairs[config.key] = (config, pair)
        for count in threads:
            for round_ in range(1, rounds + 1):
                for key, (config, pair) in list(pairs.items()):
                    if count not in config.threads(threads):
                        continue
                    try:
                        measure_run(pair, config, count, duration, round_, results)
                    except ERRORS as exc:
                        record_failure(config, pair, exc, results)
                        del pairs[key]
                        shutdown(pair)
        for config, pair in pairs.values():
            finish_pair(pair, config, results)
    finally:
        for _, pair in pairs.values():
            shutdown(pair)
        shutil.rmtree(root, ignore_errors=True)


# ---------------------------------------------------------------- results
def find(
    results: dict[str, Any], server: str, mode: str, threads: int, dump_thread: bool = False
) -> dict[str, Any] | None:
    for row in results["cells"]:
        if (row["server"], row["mode"], row["threads"], row["dump_thread"]) == (
            server,
            mode,
            threads,
            dump_thread,
        ):
            return dict(row)
    return None


def modes(results: dict[str, Any]) -> list[str]:
    """The modes this run measured (``--modes``), in :data:`MODES` order."""
    return [m for m in MODES if m in results["parameters"]["modes"]]


def tps_ratio(a: dict[str, Any] | None, b: dict[str, Any] | None) -> float | None:
    """A's tps over b's."""
    return None if a is None or b is None else ratio(a["tps"], b["tps"])


def target(results: dict[str, Any], mode: str, a: str, b: str, floor: float) -> dict[str, Any]:
    """Whether a/b tps reaches ``floor`` at the target thread count in ``mode``."""
    value = tps_ratio(
        find(results, a, mode, TARGET_THREADS), find(results, b, mode, TARGET_THREADS)
    )
    return {
        "what": f"{a}/{b} tps >= {floor} at {TARGET_THREADS} threads, {mode}",
        "ratio": value,
        "met": None if value is None else value >= floor,
        "round_ratios": round_ratios(
            results["runs"], a, b, mode=mode, threads=TARGET_THREADS, dump_thread=False
        ),
    }


def summarise(results: dict[str, Any]) -> None:
    """The cells (median runs) and the ratios the report states, into ``results``."""
    results["cells"] = median_cells(results["runs"], ("server", "mode", "threads", "dump_thread"))
    threads = results["parameters"]["threads"]
    for key, other in (("rpl_over_mariadb", "MariaDB"), ("rpl_row_over_statement", RPL_STATEMENT)):
        results[key] = {
            mode: {
                str(t): tps_ratio(find(results, "rpl", mode, t), find(results, other, mode, t))
                for t in threads
            }
            for mode in MODES
        }
    results["ack_receiver_over_dump_thread"] = {
        str(t): tps_ratio(
            find(results, "rpl", "AFTER_SYNC", t),
            find(results, "rpl", "AFTER_SYNC", t, dump_thread=True),
        )
        for t in threads
        if t in DUMP_THREAD_THREADS
    }
    results["target"] = target(results, "AFTER_SYNC", "rpl", "MariaDB", 1.0)
    results["targets"] = [
        target(results, mode, "rpl", other, floor)
        for mode in ("async", "AFTER_SYNC")
        for other, floor in (("MariaDB", 1.0), (RPL_STATEMENT, 0.95))
    ]
    semisync = [r for r in results["runs"] if r["mode"] != "async"]
    results["no_tx_max"] = max((r["no_tx_total"] for r in semisync), default=None)


def machine() -> dict[str, Any]:
    version = subprocess.run(["sysbench", "--version"], capture_output=True, text=True)
    return {
        "arch": platform.machine(),
        "cpus": os.cpu_count(),
        "cpu_model": cpu_model(),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "interpreter": interpreter(),
        "sysbench": version.stdout.strip(),
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
        "started": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }


# ---------------------------------------------------------------- report
def _cells(row: dict[str, Any] | None, semisync: bool) -> list[str]:
    if row is None:
        return ["n/a"] * (6 if semisync else 3)
    tps = f"{row['tps']:.0f}"
    if len(row["tps_runs"]) > 1:
        tps += f" ({row['tps_min']:.0f}–{row['tps_max']:.0f})"
    cells = [tps, f"{row['p95_ms']:.2f}", f"{row['group_size']:.2f}"]
    if semisync:
        cells += [str(row["yes_tx"]), str(row["no_tx"]), f"{row['avg_ack_wait_us']:.0f}"]
    return cells


def mode_table(results: dict[str, Any], mode: str) -> list[str]:
    semisync = mode != "async"
    columns = ["tps", "p95 ms", "group size"] + (
        ["yes_tx", "no_tx", "avg ACK wait µs"] if semisync else []
    )
    head = (
        ["threads"]
        + [f"{server} {c}" for server in SERVERS for c in columns]
        + ["rpl/MariaDB tps", "rpl ROW/STATEMENT tps"]
    )
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for t in results["parameters"]["threads"]:
        rows = {server: find(results, server, mode, t) for server in SERVERS}
        cells = (
            [str(t)]
            + [c for row in rows.values() for c in _cells(row, semisync)]
            + [
                f"**{fmt(tps_ratio(rows['rpl'], rows['MariaDB']))}**",
                f"**{fmt(tps_ratio(rows['rpl'], rows[RPL_STATEMENT]))}**",
            ]
        )
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def cost_table(results: dict[str, Any]) -> list[str]:
    """Each server's semisync tps relative to its own async tps."""
    head = ["threads"] + [f"{s} {m}/async" for s in SERVERS for m in modes(results)[1:]]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for t in results["parameters"]["threads"]:
        cells = [str(t)] + [
            fmt(tps_ratio(find(results, s, m, t), find(results, s, "async", t)))
            for s in SERVERS
            for m in modes(results)[1:]
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def per_cell_table(results: dict[str, Any], key: str, spec: str) -> list[str]:
    """One figure (``key``) of each server and mode, by thread count."""
    head = ["threads"] + [f"{s} {m}" for m in modes(results) for s in SERVERS]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for t in results["parameters"]["threads"]:
        rows = [find(results, s, m, t) for m in modes(results) for s in SERVERS]
        lines.append(
            "| "
            + " | ".join([str(t)] + [fmt(row.get(key) if row else None, spec) for row in rows])
            + " |"
        )
    return lines


def dump_thread_table(results: dict[str, Any]) -> list[str]:
    lines = [
        "| threads | ACK receiver tps | ACK in dump thread tps | ACK receiver / dump "
        "thread | ACK receiver p95 ms | dump thread p95 ms | dump thread net_waits | "
        "dump thread no_tx |",
        "|" + "---|" * 8,
    ]
    for key, value in results["ack_receiver_over_dump_thread"].items():
        receiver = find(results, "rpl", "AFTER_SYNC", int(key))
        dump = find(results, "rpl", "AFTER_SYNC", int(key), dump_thread=True)
        lines.append(
            f"| {key} | {fmt(receiver and receiver['tps'], '.0f')} | "
            f"{fmt(dump and dump['tps'], '.0f')} | **{fmt(value)}** | "
            f"{fmt(receiver and receiver['p95_ms'])} | {fmt(dump and dump['p95_ms'])} | "
            f"{fmt(dump and dump['net_waits'], 'd')} | {fmt(dump and dump['no_tx'], 'd')} |"
        )
    return lines


def setup_text(results: dict[str, Any]) -> list[str]:
    p, m, v = results["parameters"], results["machine"], results["versions"]
    return [
        f"sysbench oltp_insert (`--db-ps-mode=disable`, {TABLE_SIZE}-row tables prepared "
        f"once per pair, {p['rounds']} runs of {p['duration']} s per cell, the servers "
        "taking turns within each round) against the source of a source + one "
        f"replica, all on one machine ({m['arch']}, {m['cpus']} CPUs, {m['cpu_model']}, "
        f"Linux {m['kernel']}, Python {m['python']} ({m.get('interpreter', '?')}), "
        f"{m['sysbench']}; load average "
        f"{m['load_average_at_start']} at the start, {m['started']}), loopback.",
        "",
        f"- rpl {v.get('rpl', '?')} ({p.get('rpl_core_build', '?')} build of rpl-core): "
        "defaults (sync_binlog=1, GTID auto-position), `--binlog-format=ROW` on both "
        f"servers; `{RPL_STATEMENT}`: the same with `--binlog-format=STATEMENT`; "
        "semisync: `--plugin-load=rpl_semi_sync_master "
        "--rpl-semi-sync-master-enabled=ON "
        f"--rpl-semi-sync-master-timeout={TIMEOUT_MS} "
        "--rpl-semi-sync-master-wait-point=MODE` on the source, "
        "`--plugin-load=rpl_semi_sync_slave --rpl-semi-sync-slave-enabled=ON` on the "
        "replica; async: no plugins.",
        f"- MariaDB {v.get('MariaDB', '?')}: log_bin, sync_binlog=1, "
        "innodb_flush_log_at_trx_commit=1, binlog_format=ROW, log_slave_updates=ON, "
        "MASTER_USE_GTID=slave_pos; its built-in semisync with the same four settings "
        "(the variable names checked with `SHOW VARIABLES LIKE 'rpl_semi%'` on each "
        "server, in semisync.json); async: semisync off.",
        "- A fresh pair for each server kind × mode, the pairs of one mode running at "
        "once (the idle one waits); the replica replicates as root. "
        "Before each run the replica has applied everything and, with semisync, the "
        "source shows Rpl_semi_sync_master_clients = 1 and Rpl_semi_sync_master_status "
        "= ON and the replica Rpl_semi_sync_slave_status = ON. CHECKSUM TABLE agrees "
        "at the end of each pair's run.",
        "- Each cell shows its median run by tps (the lowest and highest tps of its runs "
        "in brackets); the other figures are the median run's; rpl/MariaDB divides the "
        "median tps; rpl ROW/STATEMENT divides rpl's median tps by rpl STATEMENT's.",
        "- *group size*: Binlog_commits / Binlog_group_commits on the source during the "
        "run. *yes_tx*, *no_tx*: the source's Rpl_semi_sync_master_yes_tx and _no_tx "
        "during the run (rpl counts waits as MySQL does: one per commit group with "
        "AFTER_SYNC). *avg ACK wait*: tx_wait_time / tx_waits during the run. *binlog "
        "bytes per transaction*: the source's binlog growth (SHOW BINARY LOGS sizes "
        "summed) during the run over the transactions sysbench reported.",
    ]


def no_tx_text(results: dict[str, Any]) -> list[str]:
    semisync = [r for r in results["runs"] if r["mode"] != "async"]
    if not semisync:
        return ["No semisync run was made."]
    bad = [r for r in semisync if r["no_tx_total"] or r["no_times_total"]]
    if not bad:
        return [
            f"Rpl_semi_sync_master_no_tx was 0 on the source after every one of the "
            f"{len(semisync)} semisync runs (and no_times 0): the timeout never "
            "fired, every commit waited for its ACK."
        ]
    return [
        f"**no_tx was not 0** after {r['label']}, {r['threads']} threads: no_tx "
        f"{r['no_tx_total']}, no_times {r['no_times_total']}"
        for r in bad
    ]


def target_text(results: dict[str, Any]) -> list[str]:
    lines = []
    for goal in results["targets"]:
        if goal["ratio"] is None:
            lines.append(f"- {goal['what']}: not measured in this run.")
            continue
        verdict = "met" if goal["met"] else "**not met**"
        rounds = ", ".join(f"{r:.2f}" for r in goal["round_ratios"])
        lines.append(
            f"- {goal['what']}: measured **{goal['ratio']:.2f}**, {verdict} "
            f"(round by round: {rounds})."
        )
    return lines


def report(results: dict[str, Any]) -> str:
    lines = [
        "# Semisynchronous replication: rpl against MariaDB 10.11",
        "",
        *setup_text(results),
        "",
        "## Target",
        "",
        *target_text(results),
        "",
    ]
    for mode in modes(results):
        lines += [f"## {mode}", "", *mode_table(results, mode), ""]
    lines += [
        "## Semisync cost (tps relative to the same server's async run)",
        "",
        *cost_table(results),
        "",
        "## Replica catch-up after each cell (s; semisync waits for the relay log "
        "write, not for the replica to apply)",
        "",
        *per_cell_table(results, "catch_up_s", ".1f"),
        "",
        "## Binlog bytes per transaction (the source's)",
        "",
        *per_cell_table(results, "binlog_bytes_per_trx", ".0f"),
        "",
        "## rpl: ACK receiver thread (WL#6630) against ACKs read in the dump thread",
        "",
        "AFTER_SYNC; the dump-thread design is the source started with "
        f"`{ACK_IN_DUMP_THREAD_ENV}=1` (no ACK receiver thread; the dump thread "
        "reads the ACK of each flagged event before sending the next).",
        "",
        *dump_thread_table(results),
        "",
        "## no_tx",
        "",
        *no_tx_text(results),
        "",
    ]
    for failure in results["failures"]:
        lines += [f"**{failure['label']} failed:**", "", "```", failure["error"].strip(), "```", ""]
    lines += ["![tps and p95 against threads](semisync.png)", ""]
    return "\n".join(lines)


def plot(results: dict[str, Any], path: Path) -> None:
    figure, (tps, p95) = pyplot().subplots(1, 2, figsize=(13, 5))
    colours = {
        "rpl": "tab:blue",
        RPL_STATEMENT: "tab:purple",
        "MariaDB": "tab:orange",
        "dump": "tab:green",
    }
    styles = {"async": "o-", "AFTER_SYNC": "s--", "AFTER_COMMIT": "^:"}
    configs = dict.fromkeys(
        (r["server"], r["mode"], r["dump_thread"], r["label"]) for r in results["cells"]
    )
    for server, mode, dump_thread, label in configs:
        points = [
            r
            for r in results["cells"]
            if (r["server"], r["mode"], r["dump_thread"]) == (server, mode, dump_thread)
        ]
        colour = colours["dump" if dump_thread else server]
        x = [r["threads"] for r in points]
        spread = [
            [r["tps"] - r["tps_min"] for r in points],
            [r["tps_max"] - r["tps"] for r in points],
        ]
        tps.errorbar(
            x,
            [r["tps"] for r in points],
            yerr=spread,
            fmt=styles[mode],
            color=colour,
            label=label,
            capsize=3,
        )
        p95.plot(x, [r["p95_ms"] for r in points], styles[mode], color=colour, label=label)
    threads = results["parameters"]["threads"]
    for axis, name in ((tps, "transactions/s"), (p95, "p95 latency, ms")):
        axis.set_xscale("log", base=2)
        axis.set_xticks(threads, [str(t) for t in threads])
        axis.set_xlabel("sysbench threads")
        axis.set_ylabel(name)
        axis.set_title(f"oltp_insert: {name}")
        axis.legend(fontsize="small")
    figure.suptitle(
        "semisync replication, durable commits (sync_binlog=1), source + "
        "replica on one machine, loopback; median of "
        f"{results['parameters']['rounds']} runs per point"
    )
    save_figure(figure, path)


# ---------------------------------------------------------------- main
def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_list_argument(parser, "--threads", (1, 4, 16, 32), "sysbench thread counts", int_list)
    parser.add_argument("--duration", type=int, default=10, help="seconds per run (default 10)")
    parser.add_argument(
        "--rounds", type=int, default=3, help="runs per cell, the servers taking turns (default 3)"
    )
    add_list_argument(parser, "--modes", MODES, "modes", name_list)
    add_servers_argument(parser, SERVERS)
    add_out_argument(parser)
    return parser.parse_args()


def main() -> int:
    args = arguments()
    # tox or a supervisor ending the run: unwind through the finally blocks as Ctrl-C does
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    servers = args.servers
    results: dict[str, Any] = {
        "parameters": {
            "threads": args.threads,
            "duration": args.duration,
            "rounds": args.rounds,
            "modes": args.modes,
            "workload": "oltp_insert",
            "table_size": TABLE_SIZE,
            "timeout_ms": TIMEOUT_MS,
            "servers": servers,
            "rpl_core_build": installed_build(),
        },
        "machine": machine(),
        "versions": {},
        "variables": {},
        "runs": [],
        "failures": [],
    }
    configs = configurations(servers, args.threads)
    with tempfile.TemporaryDirectory(prefix="rpl-bench-semisync-") as root:
        for mode in args.modes:
            run_mode(
                [c for c in configs if c.mode == mode],
                Path(root) / mode,
                args.threads,
                args.duration,
                args.rounds,
                results,
            )
    summarise(results)
    publish(args.out, "semisync", results, report(results), plot)
    return 1 if results["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
