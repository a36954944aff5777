"""Benchmark: an rpl replica restarting after a crash with ``--relay-mb`` MB of relay log
not yet applied, against ``mariadb-binlog`` and a plain Python pass over the same files.

Not a test: ``tox -e bench`` runs it. Setup, all on this machine over loopback: an rpl
source (``--sync-binlog=0``: the source's durability is not what is measured) and an rpl
replica (``--max-relay-log-size``: ``--relay-file-mb``) replicating with GTID
auto-position and the SQL thread never started (only ``START SLAVE IO_THREAD``). Several
client connections commit multi-row ``REPLACE INTO`` statements of wide rows (an INSERT
that overwrites: the keys cycle within ``--keys`` per table, so the source's in-memory
engine stays small while its binlog grows) until the source's binlog holds
``--relay-mb`` MB; the bench waits until the receiver fetched all of it
(Retrieved_Gtid_Set = the source's gtid_executed), then SIGKILLs the replica.

What is measured, on the same relay log files (just written, so in the page cache):

* rpl restart: ``--restarts`` times, launch the replica (``--skip-replica-start=ON``, so
  the SQL thread stays stopped and the files do not change), take the time from the
  launch to its "ready for connections" error-log line (logged right after relay log
  recovery has scanned the newest relay log file to cut a damaged tail and derive the
  receiver position and Retrieved_Gtid_Set), then SIGKILL it again. Also recorded: when
  the port accepted a TCP connection (``ServerProcess.start`` returns then; the server
  listens only after relay log recovery), and the in-server time from its "starting as
  process" line to its "Relay log recovery" line. The defaults make the whole relay log
  one file (``--relay-mb`` 1000 below ``--relay-file-mb`` 1024, as MySQL's default
  max_relay_log_size = max_binlog_size = 1 GiB does), the worst case: recovery reads it all.
* ``mariadb-binlog --verify-binlog-checksum <every relay file> > /dev/null``, timed.
* one Python process reading every event with the project's codec
  (``rpl.core.binlog.logfile.read_events``), timed; this pass also counts the events.

Each reader runs ``--restarts`` times; rates use the median. What holds (the run fails
otherwise): the relay log holds every transaction the source committed before the kill;
every restart logs a "Relay log recovery" line, answers SHOW SLAVE STATUS with that same
Retrieved_Gtid_Set and its SQL thread not running, and leaves the relay log files as they
were; ``mariadb-binlog`` exits 0 without an ERROR and prints one ``# at`` line per event
the codec counted. Writes docs/bench/relay_recovery.md, .json and .png.
"""

from __future__ import annotations

import argparse
import datetime
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from common import (
    MB,
    add_out_argument,
    codec_pass,
    machine_line,
    mariadb_binlog,
    mariadb_binlog_command,
    mariadb_binlog_tool,
    publish,
    pyplot,
    save_figure,
)
from pairs import POLL_EVERY, STALL_SECONDS, ReplicationFailure, mysql_gtid_counts
from rpl.core.binlog.gtid import GtidSet
from rpl.core.binlog.logfile import BinlogIndex
from rpl.core.execution.sysvars import SERVER_VERSION
from rpl.core.testing.process import ServerProcess
from rpl.core.testing.topology import (
    create_replication_user,
    gtid_executed,
    replicate,
    slave_status,
)

START_TIMEOUT = 3600.0
READY_LINE = "ready for connections"
RECOVERY_LINE = "Relay log recovery"
STARTING_LINE = "starting as process"
READERS = ("rpl restart", "mariadb-binlog", "codec pass")


def say(text: str) -> None:
    """Progress, on stderr."""
    print(text, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- files
def log_files(datadir: Path, index: str) -> list[Path]:
    """The files a binlog or relay log index lists, oldest first."""
    return [datadir / name for name in BinlogIndex(datadir / index).names()]


def total_size(paths: list[Path]) -> int:
    return sum(path.stat().st_size for path in paths if path.exists())


def relay_files(replica: ServerProcess) -> list[Path]:
    return log_files(replica.datadir, "relay-bin.index")


def snapshot(paths: list[Path]) -> dict[str, int]:
    """{file name: size}: what a restart must leave as it was."""
    return {path.name: path.stat().st_size for path in paths}


# ---------------------------------------------------------------- error log
def log_time(line: str) -> float:
    """The Unix time of a MySQL 8.0 error-log line (``2026-01-01T00:00:00.000000Z ...``)."""
    stamp = datetime.datetime.strptime(line.split(" ", 1)[0], "%Y-%m-%dT%H:%M:%S.%fZ")
    return stamp.replace(tzinfo=datetime.UTC).timestamp()


def find_line(text: str, marker: str) -> str:
    """The first line of ``text`` containing ``marker``; ReplicationFailure if none."""
    for line in text.splitlines():
        if marker in line:
            return line
    raise ReplicationFailure(f"no {marker!r} line in the error log:\n{text[-3000:]}")


# ---------------------------------------------------------------- building the relay log
def start_pair(root: Path, relay_file_mb: int) -> tuple[ServerProcess, ServerProcess]:
    source = ServerProcess(root / "source", options=["--server-id", "1", "--sync-binlog=0"])
    replica = ServerProcess(
        root / "replica", options=["--server-id", "2", f"--max-relay-log-size={relay_file_mb * MB}"]
    )
    source.start()
    replica.start()
    return source, replica


def create_tables(source: ServerProcess, threads: int, row_bytes: int) -> None:
    source.query("CREATE DATABASE bench")
    for table in range(threads):
        source.query(
            f"CREATE TABLE bench.t{table} (id INT NOT NULL PRIMARY KEY, "
            f"v VARCHAR({row_bytes + 16}) NOT NULL)"
        )


def statements(table: int, rows: int, row_bytes: int, keys: int) -> Iterator[str]:
    """Endless multi-row REPLACE statements for ``bench.t<table>``, keys cycling."""
    filler = ("abcdefghijklmnopqrstuvwxyz0123456789" * (row_bytes // 36 + 1))[: row_bytes - 10]
    key = 0
    while True:
        values = []
        for _ in range(rows):
            values.append(f"({key}, '{key:010d}{filler}')")
            key = (key + 1) % keys
        yield f"REPLACE INTO bench.t{table} (id, v) VALUES {', '.join(values)}"


def load_worker(
    source: ServerProcess,
    table: int,
    args: argparse.Namespace,
    stop: threading.Event,
    done: list[int],
    failures: list[BaseException],
) -> None:
    """Commit REPLACE statements into ``bench.t<table>`` until ``stop`` is set."""
    try:
        connection = source.connect()
        try:
            with connection.cursor() as cursor:
                for sql in statements(table, args.rows_per_insert, args.row_bytes, args.keys):
                    if stop.is_set():
                        return
                    cursor.execute(sql)
                    done[table] += 1
        finally:
            connection.close()
    except BaseException as exc:  # noqa: BLE001 - reported by the main thread
        failures.append(exc)
        stop.set()


def fill(source: ServerProcess, replica: ServerProcess, args: argparse.Namespace) -> float:
    """Load the source until its binlog holds ``--relay-mb`` MB; the seconds it took."""
    target = args.relay_mb * MB
    stop = threading.Event()
    done = [0] * args.threads
    failures: list[BaseException] = []
    workers = [
        threading.Thread(
            target=load_worker, daemon=True, args=(source, i, args, stop, done, failures)
        )
        for i in range(args.threads)
    ]
    started = last = time.monotonic()
    for worker in workers:
        worker.start()
    try:
        while not stop.is_set() and total_size(log_files(source.datadir, "binlog.index")) < target:
            time.sleep(0.2)
            if time.monotonic() - last >= 2.0:
                last = time.monotonic()
                report_fill(source, replica, sum(done), last - started, target)
    finally:
        stop.set()
        for worker in workers:
            worker.join(60)
    if failures:
        raise ReplicationFailure(f"source load failed: {failures[0]!r}")
    seconds = time.monotonic() - started
    say(f"  source: {sum(done)} transactions in {seconds:.1f} s ({sum(done) / seconds:.0f}/s)")
    return seconds


def report_fill(
    source: ServerProcess, replica: ServerProcess, transactions: int, elapsed: float, target: int
) -> None:
    binlog = total_size(log_files(source.datadir, "binlog.index"))
    relayed = total_size(relay_files(replica))
    say(
        f"  {elapsed:6.1f} s: relayed {relayed / MB:7.1f} MB of {target / MB:.0f} "
        f"({relayed / MB / elapsed:5.1f} MB/s); source binlog {binlog / MB:7.1f} MB, "
        f"{transactions} transactions ({transactions / elapsed:.0f}/s)"
    )


def check_receiver(replica: ServerProcess, status: dict[str, Any]) -> None:
    """Fail when the replica died, the receiver stopped or the applier runs."""
    assert replica.process is not None
    if replica.process.poll() is not None:
        raise ReplicationFailure(
            f"replica exited with {replica.process.returncode}:\n{replica.error_log()[-3000:]}"
        )
    if status.get("Last_IO_Error") or status.get("Slave_IO_Running") != "Yes":
        raise ReplicationFailure(
            f"receiver stopped: {status.get('Last_IO_Error')!r}\n{replica.error_log()[-3000:]}"
        )
    if status.get("Slave_SQL_Running") != "No":
        raise ReplicationFailure("the SQL thread runs: nothing would stay pending")


def wait_fetched(source: ServerProcess, replica: ServerProcess) -> GtidSet:
    """Wait until Retrieved_Gtid_Set equals the source's gtid_executed; that set."""
    target = GtidSet.parse(gtid_executed(source))
    best, best_at, last = -1, time.monotonic(), time.monotonic()
    while True:
        status = slave_status(replica)
        check_receiver(replica, status)
        retrieved = GtidSet.parse(status["Retrieved_Gtid_Set"])
        if retrieved == target:
            return target
        now = time.monotonic()
        size = total_size(relay_files(replica))
        if size > best:
            best, best_at = size, now
        if now - best_at > STALL_SECONDS:
            raise ReplicationFailure(f"receiver made no progress for {STALL_SECONDS:.0f} s")
        if now - last >= 2.0:
            last = now
            say(f"  waiting for the receiver: relayed {size / MB:.1f} MB")
        time.sleep(POLL_EVERY)


def build_relay_log(
    root: Path, args: argparse.Namespace, servers: list[ServerProcess]
) -> dict[str, Any]:
    """Source + replica, ``--relay-mb`` MB relayed and not applied, the replica killed."""
    say(
        f"building a relay log of {args.relay_mb} MB ({args.threads} client threads, "
        f"{args.rows_per_insert} rows of {args.row_bytes} bytes per statement)"
    )
    source, replica = start_pair(root, args.relay_file_mb)
    servers += [source, replica]
    create_replication_user(source)
    create_tables(source, args.threads, args.row_bytes)
    replicate(replica, source, start=False)
    replica.query("START SLAVE IO_THREAD")
    seconds = fill(source, replica, args)
    retrieved = wait_fetched(source, replica)
    replica.kill()
    files = relay_files(replica)
    size = total_size(files)
    say(
        f"  replica killed with {size / MB:.1f} MB of relay log in {len(files)} file(s), "
        f"retrieved {retrieved}"
    )
    return {
        "files": snapshot(files),
        "bytes": size,
        "retrieved_gtids": str(retrieved),
        "transactions": sum(mysql_gtid_counts(str(retrieved)).values()),
        "load_seconds": seconds,
    }


# ---------------------------------------------------------------- rpl restart
def wait_logged(server: ServerProcess, offset: int, marker: str, timeout: float) -> str:
    """The error log written after ``offset`` once it contains ``marker``."""
    deadline = time.monotonic() + timeout
    while True:
        text = server.error_log()[offset:]
        if marker in text:
            return text
        assert server.process is not None
        if server.process.poll() is not None:
            raise ReplicationFailure(
                f"replica exited with {server.process.returncode} at start:\n{text[-3000:]}"
            )
        if time.monotonic() > deadline:
            raise ReplicationFailure(f"no {marker!r} after {timeout:.0f} s:\n{text[-3000:]}")
        time.sleep(0.01)


def check_recovered(replica: ServerProcess, expected: str, files: dict[str, int]) -> None:
    status = slave_status(replica)
    if GtidSet.parse(status["Retrieved_Gtid_Set"]) != GtidSet.parse(expected):
        raise ReplicationFailure(
            f"Retrieved_Gtid_Set after restart is "
            f"{status['Retrieved_Gtid_Set']!r}, expected {expected!r}"
        )
    if status["Slave_SQL_Running"] != "No" or status["Slave_IO_Running"] != "No":
        raise ReplicationFailure("a replication thread started despite --skip-replica-start")
    now = snapshot(relay_files(replica))
    if now != files:
        raise ReplicationFailure(f"the restart changed the relay log: {files} -> {now}")


def restart(replica: ServerProcess, relay: dict[str, Any], number: int) -> dict[str, Any]:
    """Launch the killed replica, time it until ready, check it, kill it again."""
    offset = len(replica.error_log())
    launched_wall, launched = time.time(), time.monotonic()
    replica.start("--skip-replica-start=ON", timeout=START_TIMEOUT)
    listening = time.monotonic() - launched
    text = wait_logged(replica, offset, READY_LINE, START_TIMEOUT)
    ready_line, recovery_line = find_line(text, READY_LINE), find_line(text, RECOVERY_LINE)
    check_recovered(replica, relay["retrieved_gtids"], relay["files"])
    replica.kill()
    result = {
        "listening_s": listening,
        "ready_s": log_time(ready_line) - launched_wall,
        "in_server_s": log_time(recovery_line) - log_time(find_line(text, STARTING_LINE)),
        "recovery_line": recovery_line,
    }
    say(
        f"  restart {number}: listening after {listening:.3f} s, ready after "
        f"{result['ready_s']:.3f} s (in-server start to recovered {result['in_server_s']:.3f} s)"
    )
    return result


# ---------------------------------------------------------------- yardsticks
def mariadb_binlog_events(tool: str, files: list[Path]) -> int:
    """Untimed: the ``# at`` lines mariadb-binlog prints (one per event it decoded),
    counted as its output streams by.
    """
    marker = b"\n# at "
    count, tail = 0, b"\n"
    with subprocess.Popen(
        mariadb_binlog_command(tool, files), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    ) as run:
        assert run.stdout is not None
        while chunk := run.stdout.read(MB):
            data = tail + chunk
            count += data.count(marker)
            tail = data[-(len(marker) - 1) :]
    return count


def timed(name: str, runs: int, once: Callable[[], float]) -> list[float]:
    seconds = []
    for number in range(1, runs + 1):
        seconds.append(once())
        say(f"  {name} run {number}: {seconds[-1]:.3f} s")
    return seconds


# ---------------------------------------------------------------- figures
def rates(seconds: list[float], events: int, size: int) -> dict[str, Any]:
    median = statistics.median(seconds)
    return {
        "seconds": seconds,
        "min_s": min(seconds),
        "median_s": median,
        "events_per_s": events / median,
        "mb_per_s": size / MB / median,
    }


def machine() -> dict[str, Any]:
    return {"machine": machine_line(), "load_average_at_start": os.getloadavg()}


def summarize(results: dict[str, Any]) -> None:
    """Reader rates and the ratios, from the raw timings."""
    events, size = results["relay_log"]["events"], results["relay_log"]["bytes"]
    restarts = results["restarts"]
    readers = {
        "rpl restart": rates([r["ready_s"] for r in restarts], events, size),
        "rpl in-server": rates([r["in_server_s"] for r in restarts], events, size),
        "mariadb-binlog": rates(results["mariadb_binlog_seconds"], events, size),
        "codec pass": rates(results["codec_seconds"], events, size),
    }
    readers["rpl restart"]["listening_median_s"] = statistics.median(
        r["listening_s"] for r in restarts
    )
    results["readers"] = readers
    rpl, in_server = (
        readers["rpl restart"]["events_per_s"],
        readers["rpl in-server"]["events_per_s"],
    )
    results["ratios"] = {
        "rpl_restart_over_mariadb_binlog": rpl / readers["mariadb-binlog"]["events_per_s"],
        "rpl_restart_over_codec_pass": rpl / readers["codec pass"]["events_per_s"],
        "rpl_in_server_over_mariadb_binlog": in_server / readers["mariadb-binlog"]["events_per_s"],
        "rpl_in_server_over_codec_pass": in_server / readers["codec pass"]["events_per_s"],
    }


DESCRIPTIONS = {
    "rpl restart": 'launch of the killed replica to its "ready for connections" line',
    "rpl in-server": 'its "starting as process" line to its "Relay log recovery" line',
    "mariadb-binlog": "`mariadb-binlog --verify-binlog-checksum` over the files > /dev/null",
    "codec pass": "one Python process, `read_events` over the files",
}


def table(results: dict[str, Any]) -> str:
    p, relay, ratios = results["parameters"], results["relay_log"], results["ratios"]
    lines = [
        "# Replica restart with a pending relay log: rpl against mariadb-binlog",
        "",
        f"Machine: {p['machine']}; load average at start "
        f"{', '.join(f'{x:.2f}' for x in p['load_average_at_start'])}. rpl {p['rpl_version']}, "
        f"{p['mariadb_binlog_version']}.",
        "",
        f"Setup: an rpl source (sync_binlog=0) and an rpl replica on loopback, GTID "
        f"auto-position, the replica's SQL thread never started. {p['threads']} client "
        f"connections committed {relay['transactions']} transactions (each one "
        f"`REPLACE INTO` of {p['rows_per_insert']} rows of {p['row_bytes']} bytes) in "
        f"{relay['load_seconds']:.0f} s; once the receiver had fetched them all "
        f"(Retrieved_Gtid_Set = the source's gtid_executed) the replica was SIGKILLed. "
        f"Relay log: {relay['bytes'] / MB:.1f} MB in {len(relay['files'])} file(s) "
        f"(max_relay_log_size {p['relay_file_mb']} MB), {relay['events']} events, in the "
        f"page cache for every reader.",
        "",
        f"Measured, each {p['restarts']} times (rates from the median): the replica restarted "
        "with `--skip-replica-start=ON` and SIGKILLed again each time (its relay log "
        "recovery reads the newest relay log file to cut a damaged tail and derive the "
        'receiver position and Retrieved_Gtid_Set before it listens and logs "ready for '
        'connections"); '
        "`mariadb-binlog` decoding the same files; one plain Python pass of the project's "
        "codec over them. Checked at every restart: the same Retrieved_Gtid_Set, the SQL "
        "thread not running, the files unchanged.",
        "",
        "| reader | what is timed | min s | median s | events/s | MB/s |",
        "|---|---|---|---|---|---|",
    ]
    for name, reader in results["readers"].items():
        lines.append(
            f"| {name} | {DESCRIPTIONS[name]} | {reader['min_s']:.3f} | "
            f"{reader['median_s']:.3f} | {reader['events_per_s']:.0f} | "
            f"{reader['mb_per_s']:.1f} |"
        )
    listening = results["readers"]["rpl restart"]["listening_median_s"]
    lines += [
        "",
        f"Ratios (events/s): rpl restart / mariadb-binlog "
        f"**{ratios['rpl_restart_over_mariadb_binlog']:.3f}**, rpl restart / codec pass "
        f"**{ratios['rpl_restart_over_codec_pass']:.3f}**; rpl in-server / mariadb-binlog "
        f"{ratios['rpl_in_server_over_mariadb_binlog']:.3f}, rpl in-server / codec pass "
        f"{ratios['rpl_in_server_over_codec_pass']:.3f}.",
        "",
        f"The replica's port accepts TCP connections {listening:.3f} s after launch "
        "(median): the server listens only once relay log recovery has finished.",
        "",
        "Error log, first restart:",
        "",
        "```",
        results["restarts"][0]["recovery_line"],
        "```",
        "",
        "![events/s of the three readers](relay_recovery.png)",
        "",
    ]
    return "\n".join(lines)


def plot(results: dict[str, Any], path: Path) -> None:
    figure, axis = pyplot().subplots(figsize=(7, 4.5))
    readers = results["readers"]
    values = [readers[name]["events_per_s"] for name in READERS]
    drawn = axis.bar(READERS, values, color=["tab:blue", "tab:orange", "tab:green"])
    axis.bar_label(
        drawn,
        labels=[
            f"{v:,.0f}\n({readers[n]['mb_per_s']:.0f} MB/s)"
            for n, v in zip(READERS, values, strict=True)
        ],
    )
    axis.set_ylabel("relay log events/s")
    axis.set_ylim(0, max(values) * 1.25)
    relay = results["relay_log"]
    axis.set_title(
        f"reading {relay['bytes'] / MB:.0f} MB of relay log "
        f"({relay['events']:,} events), median of {len(results['restarts'])}"
    )
    save_figure(figure, path)


# ---------------------------------------------------------------- main
def measure(
    root: Path, args: argparse.Namespace, servers: list[ServerProcess], results: dict[str, Any]
) -> None:
    relay = build_relay_log(root, args, servers)
    results["relay_log"] = relay
    source, replica = servers
    source.stop()
    say(f"restarting the replica {args.restarts} times")
    results["restarts"] = [restart(replica, relay, n) for n in range(1, args.restarts + 1)]
    files = relay_files(replica)
    tool = mariadb_binlog_tool()
    say("mariadb-binlog over the same files")
    results["mariadb_binlog_seconds"] = timed(
        "mariadb-binlog", args.restarts, lambda: mariadb_binlog(tool, files)
    )
    say("codec pass over the same files")
    counts: list[int] = []

    def once() -> float:
        seconds, events = codec_pass(files)
        counts.append(events)
        return seconds

    results["codec_seconds"] = timed("codec pass", args.restarts, once)
    relay["events"] = counts[0]
    relay["mariadb_binlog_events"] = mariadb_binlog_events(tool, files)
    if relay["mariadb_binlog_events"] != relay["events"]:
        raise ReplicationFailure(
            f"mariadb-binlog decoded {relay['mariadb_binlog_events']} "
            f"events, the codec {relay['events']}"
        )


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--relay-mb", type=int, default=1000, help="relay log to build, MB (default 1000)"
    )
    parser.add_argument(
        "--relay-file-mb",
        type=int,
        default=1024,
        help="the replica's max_relay_log_size, MB (default 1024)",
    )
    parser.add_argument("--threads", type=int, default=4, help="client connections (4)")
    parser.add_argument("--rows-per-insert", type=int, default=8, help="rows per statement")
    parser.add_argument("--row-bytes", type=int, default=1024, help="bytes per row (1024)")
    parser.add_argument("--keys", type=int, default=2048, help="distinct keys per table")
    parser.add_argument(
        "--restarts", type=int, default=3, help="restarts, and runs of each yardstick (default 3)"
    )
    add_out_argument(parser)
    return parser.parse_args()


def main() -> int:
    args = parse_args()
    tool = mariadb_binlog_tool()
    version = subprocess.run([tool, "--version"], capture_output=True, text=True).stdout
    results: dict[str, Any] = {
        "parameters": {
            **{k: v for k, v in vars(args).items() if k != "out"},
            **machine(),
            "rpl_version": SERVER_VERSION,
            "mariadb_binlog_version": version.strip(),
        }
    }
    servers: list[ServerProcess] = []
    with tempfile.TemporaryDirectory(prefix="rpl-relay-bench-") as root:
        try:
            measure(Path(root), args, servers, results)
        finally:
            for server in servers:
                server.kill()
    results["parameters"]["load_average_at_end"] = os.getloadavg()
    summarize(results)
    publish(args.out, "relay_recovery", results, table(results), plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
