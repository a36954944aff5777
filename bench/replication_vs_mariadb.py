"""Benchmark: asynchronous replication, rpl against MariaDB 10.11, side by side in one run.

Not a test: ``tox -e bench`` runs it after ``sysbench_vs_mariadb.py``. For each server
kind it starts a source and a replica on this machine (loopback, durable commits: rpl's
defaults, sync_binlog=1, ``--binlog-format=ROW`` said explicitly; MariaDB log_bin,
binlog_format=ROW, sync_binlog=1, innodb_flush_log_at_trx_commit=1, log_slave_updates=ON,
a single-threaded applier with MASTER_USE_GTID=slave_pos), and a third pair, ``rpl
STATEMENT``: rpl with ``--binlog-format=STATEMENT`` on both sides. The pairs run at once
and take turns, phase by phase (every pair's catch-up, then every pair's steady state),
and it measures two things:

1. Catch-up: with the replica stopped, the source commits ``--transactions`` single-row
   INSERT transactions (autocommit, 16 client connections); then START SLAVE and time
   until the replica's executed GTIDs equal the source's (rpl: ``@@gtid_executed`` on
   both; MariaDB: source ``@@gtid_binlog_pos`` against replica ``@@gtid_slave_pos``).
   CHECKSUM TABLE must then agree on both sides.
2. Steady state: sysbench oltp_insert at 16 threads against the source for
   ``--duration`` seconds; every 0.5 s the replica's Seconds_Behind_Master and the number
   of transactions it is behind are sampled; after the load stops, the time the replica
   needs to catch up.

Each phase also records the bytes the source's binlog grew by (SHOW BINARY LOGS, summed)
per transaction. Writes docs/bench/replication.md, replication.json and replication.png.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pymysql

from common import (
    RPL_STATEMENT,
    add_out_argument,
    add_servers_argument,
    fmt,
    machine_line,
    per_transaction,
    publish,
    pyplot,
    ratio,
    save_figure,
    sysbench,
    sysbench_result,
)
from pairs import (
    POLL_EVERY,
    STALL_SECONDS,
    MariaDBPair,
    Pair,
    ReplicationFailure,
    RplPair,
    RplStatementPair,
    behind,
)

LOAD_THREADS = 16
SAMPLE_EVERY = 0.5
SERVERS = ("rpl", RPL_STATEMENT, "MariaDB")
PAIRS = (RplPair, RplStatementPair, MariaDBPair)
COLOURS = {"rpl": "tab:blue", RPL_STATEMENT: "tab:green", "MariaDB": "tab:orange"}


# ---------------------------------------------------------------- phases
def insert_load(pair: Pair, count: int, threads: int) -> float:
    """``count`` single-row autocommit INSERTs into bench.t from ``threads`` connections;
    the source's commit rate.
    """
    done = [0] * threads
    failures: list[BaseException] = []

    def worker(index: int) -> None:
        try:
            connection = pair.connect(pair.source_port())
            with connection.cursor() as cursor:
                for key in range(index, count, threads):
                    cursor.execute(
                        "INSERT INTO bench.t (id, v) VALUES (%s, %s)",
                        (key, f"row {key:09d} of the catch-up load"),
                    )
                    done[index] += 1
            connection.close()
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            failures.append(exc)

    workers = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(threads)]
    started = time.monotonic()
    for thread in workers:
        thread.start()
    last = started
    while any(thread.is_alive() for thread in workers):
        time.sleep(0.2)
        if time.monotonic() - last >= 2.0:
            last = time.monotonic()
            total = sum(done)
            print(
                f"    {pair.name} source: {total}/{count} transactions committed "
                f"({total / (last - started):.0f}/s)",
                flush=True,
            )
    elapsed = time.monotonic() - started
    if failures:
        raise ReplicationFailure(f"{pair.name} source load failed: {failures[0]!r}")
    return count / elapsed


def catch_up(pair: Pair, count: int) -> dict[str, Any]:
    """Phase 1: the replica stopped, ``count`` transactions on the source, START SLAVE."""
    print(f"  {pair.name}: catch-up of {count} transactions", flush=True)
    pair.run(pair.source(), "CREATE DATABASE bench")
    pair.run(
        pair.source(), "CREATE TABLE bench.t (id INT NOT NULL PRIMARY KEY, v VARCHAR(64) NOT NULL)"
    )
    pair.wait_caught_up(120)
    pair.run(pair.replica(), "STOP SLAVE")
    status = pair.slave_status()
    pair.check(status, running=False)
    print(
        f"    {pair.name} replica stopped (IO {status.get('Slave_IO_Running')}, "
        f"SQL {status.get('Slave_SQL_Running')}); loading the source",
        flush=True,
    )
    size = pair.binlog_bytes()
    load_tps = insert_load(pair, count, LOAD_THREADS)
    grown = pair.binlog_bytes() - size
    gap = behind(pair.source_gtids(), pair.replica_gtids())
    print(
        f"    {pair.name} source committed {count} transactions at {load_tps:.0f}/s; "
        f"replica {gap} behind; START SLAVE",
        flush=True,
    )
    started = time.monotonic()
    pair.run(pair.replica(), "START SLAVE")

    def progress(now_behind: int, status: dict[str, Any]) -> None:
        elapsed = time.monotonic() - started
        applied = gap - now_behind
        print(
            f"    {pair.name} catch-up {elapsed:6.1f} s: {applied}/{gap} applied "
            f"({applied / elapsed:.0f}/s), Seconds_Behind_Master "
            f"{status.get('Seconds_Behind_Master')}",
            flush=True,
        )

    finished = pair.wait_caught_up(max(600.0, count / 20), progress)
    seconds = finished - started
    source_sums, replica_sums = pair.checksums(["bench.t"])
    rows = pair.value(pair.replica(), "SELECT COUNT(*) FROM bench.t")
    result = {
        "server": pair.name,
        "transactions": gap,
        "source_load_tps": load_tps,
        "binlog_bytes": grown,
        "binlog_bytes_per_trx": per_transaction(grown, count),
        "seconds": seconds,
        "applied_tps": gap / seconds,
        "replica_rows": rows,
        "checksum_source": source_sums,
        "checksum_replica": replica_sums,
        "checksum_equal": source_sums == replica_sums,
    }
    print(
        f"    {pair.name} caught up in {seconds:.2f} s: {gap / seconds:.0f} transactions/s "
        f"applied; {rows} rows; CHECKSUM TABLE "
        f"{'equal' if result['checksum_equal'] else 'DIFFERENT'} "
        f"({source_sums} / {replica_sums})",
        flush=True,
    )
    if not result["checksum_equal"]:
        raise ReplicationFailure(
            f"{pair.name}: CHECKSUM TABLE differs after catch-up: "
            f"source {source_sums}, replica {replica_sums}"
        )
    return result


def steady_state(pair: Pair, duration: int) -> dict[str, Any]:
    """Phase 2: sysbench oltp_insert at 16 threads on the source; sample the replica."""
    print(
        f"  {pair.name}: steady state, sysbench oltp_insert {LOAD_THREADS} threads for "
        f"{duration} s",
        flush=True,
    )
    pair.run(pair.source(), "CREATE DATABASE sbtest")
    sysbench(pair.source_port(), "oltp_insert", "prepare")
    pair.wait_caught_up(600)
    output: list[str] = []
    failures: list[BaseException] = []

    def load() -> None:
        try:
            output.append(
                sysbench(
                    pair.source_port(),
                    "oltp_insert",
                    "run",
                    f"--threads={LOAD_THREADS}",
                    f"--time={duration}",
                )
            )
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            failures.append(exc)

    runner = threading.Thread(target=load, daemon=True)
    samples: list[dict[str, Any]] = []
    size = pair.binlog_bytes()
    started = time.monotonic()
    runner.start()
    next_sample = started
    while runner.is_alive():
        now = time.monotonic()
        if now >= next_sample:
            next_sample += SAMPLE_EVERY
            gap, status = pair.lag()
            sbm = status.get("Seconds_Behind_Master")
            samples.append(
                {
                    "t": round(now - started, 3),
                    "seconds_behind_master": sbm,
                    "transactions_behind": gap,
                    "load": True,
                }
            )
            if len(samples) % 4 == 1:
                print(
                    f"    {pair.name} t={now - started:5.1f} s: Seconds_Behind_Master "
                    f"{sbm}, {gap} transactions behind",
                    flush=True,
                )
        time.sleep(max(0.0, min(next_sample - time.monotonic(), POLL_EVERY)))
    load_ended = time.monotonic()
    if failures:
        raise ReplicationFailure(f"{pair.name} sysbench failed: {failures[0]}")
    committed, tps, _ = sysbench_result(output[0])
    grown = pair.binlog_bytes() - size
    gap_at_end, status = pair.lag()
    print(
        f"    {pair.name} load ended: source {tps:.0f} tps ({committed} transactions); "
        f"replica {gap_at_end} behind, Seconds_Behind_Master "
        f"{status.get('Seconds_Behind_Master')}",
        flush=True,
    )

    # after the load: keep sampling every 0.5 s until the replica has everything
    caught_up_at: float | None = None
    next_sample = load_ended
    deadline = load_ended + max(600.0, 20.0 * duration)
    best, best_at = gap_at_end, load_ended
    while caught_up_at is None:
        now = time.monotonic()
        source, replica = pair.source_gtids(), pair.replica_gtids()
        gap = behind(source, replica)
        if gap == 0:
            caught_up_at = now
        if now >= next_sample or caught_up_at is not None:
            next_sample += SAMPLE_EVERY
            status = pair.slave_status()
            pair.check(status)
            sbm = status.get("Seconds_Behind_Master")
            samples.append(
                {
                    "t": round(now - started, 3),
                    "seconds_behind_master": sbm,
                    "transactions_behind": gap,
                    "load": False,
                }
            )
            if len(samples) % 4 == 1:
                print(
                    f"    {pair.name} t={now - started:5.1f} s (load ended): "
                    f"Seconds_Behind_Master {sbm}, {gap} transactions behind",
                    flush=True,
                )
        if gap < best:
            best, best_at = gap, now
        if caught_up_at is None and (now > deadline or now - best_at > STALL_SECONDS):
            raise ReplicationFailure(
                f"{pair.name} replica did not catch up after the load: {gap} behind\n{pair.logs()}"
            )
        time.sleep(POLL_EVERY)
    tables = [f"sbtest.sbtest{i}" for i in range(1, 5)]
    source_sums, replica_sums = pair.checksums(tables)
    during = [
        s["seconds_behind_master"]
        for s in samples
        if s["load"] and s["seconds_behind_master"] is not None
    ]
    behind_during = [s["transactions_behind"] for s in samples if s["load"]]
    result = {
        "server": pair.name,
        "duration": duration,
        "threads": LOAD_THREADS,
        "source_tps": tps,
        "source_transactions": committed,
        "binlog_bytes": grown,
        "binlog_bytes_per_trx": per_transaction(grown, committed),
        "sbm_mean": sum(during) / len(during) if during else None,
        "sbm_max": max(during) if during else None,
        "sbm_null_samples": sum(
            1 for s in samples if s["load"] and s["seconds_behind_master"] is None
        ),
        "behind_mean": sum(behind_during) / len(behind_during) if behind_during else 0,
        "behind_max": max(behind_during, default=0),
        "behind_at_load_end": gap_at_end,
        "load_seconds": load_ended - started,
        "catch_up_after_load_s": caught_up_at - load_ended,
        "replica_tps_during_load": (committed - gap_at_end) / (load_ended - started),
        "checksum_equal": source_sums == replica_sums,
        "checksum_source": source_sums,
        "checksum_replica": replica_sums,
        "samples": samples,
    }
    print(
        f"    {pair.name} caught up {result['catch_up_after_load_s']:.2f} s after the load; "
        f"Seconds_Behind_Master mean {fmt(result['sbm_mean'])}, max {result['sbm_max']}; "
        f"CHECKSUM TABLE {'equal' if result['checksum_equal'] else 'DIFFERENT'}",
        flush=True,
    )
    if not result["checksum_equal"]:
        raise ReplicationFailure(
            f"{pair.name}: CHECKSUM TABLE differs after the load: "
            f"source {source_sums}, replica {replica_sums}"
        )
    return result


def record_failure(pair: Pair, exc: BaseException, results: dict[str, Any]) -> None:
    text = str(exc) if isinstance(exc, ReplicationFailure) else f"{exc!r}\n{pair.logs()}"
    print(f"  {pair.name} FAILED: {text}", flush=True)
    results["failures"].append({"server": pair.name, "error": text})


def measure(
    pairs: Sequence[Pair], transactions: int, duration: int, results: dict[str, Any]
) -> None:
    """Start every pair, then run each phase on each pair in turn (seconds apart); a pair
    that fails is recorded and left out from then on.
    """
    live: list[Pair] = []
    try:
        for pair in pairs:
            print(f"{pair.name}: starting a source + replica", flush=True)
            live.append(pair)
            try:
                pair.start()
                results["versions"][pair.name] = pair.version()
                pair.setup()
                pair.wait_caught_up(120)
            except (ReplicationFailure, pymysql.MySQLError, RuntimeError) as exc:
                record_failure(pair, exc, results)
                live.remove(pair)
                pair.stop()
        for key in ("catch_up", "steady"):
            for pair in list(live):
                try:
                    results[key].append(
                        catch_up(pair, transactions)
                        if key == "catch_up"
                        else steady_state(pair, duration)
                    )
                except (ReplicationFailure, pymysql.MySQLError) as exc:
                    record_failure(pair, exc, results)
                    live.remove(pair)
                    pair.stop()
    finally:
        for pair in live:
            pair.stop()


def ratios(results: dict[str, Any]) -> None:
    """rpl/MariaDB and rpl ROW/STATEMENT of the catch-up rate and the steady state's
    source tps, into ``results``.
    """
    catch = {r["server"]: r["applied_tps"] for r in results["catch_up"]}
    steady = {r["server"]: r["source_tps"] for r in results["steady"]}
    results["ratios"] = {
        "catch_up_rpl_over_mariadb": ratio(catch.get("rpl"), catch.get("MariaDB")),
        "catch_up_rpl_row_over_statement": ratio(catch.get("rpl"), catch.get(RPL_STATEMENT)),
        "steady_source_tps_rpl_over_mariadb": ratio(steady.get("rpl"), steady.get("MariaDB")),
        "steady_source_tps_rpl_row_over_statement": ratio(
            steady.get("rpl"), steady.get(RPL_STATEMENT)
        ),
    }
    results["catch_up_ratio_rpl_over_mariadb"] = results["ratios"]["catch_up_rpl_over_mariadb"]


# ---------------------------------------------------------------- output
def _missing(results: dict[str, Any], server: str) -> str:
    return "failed" if any(f["server"] == server for f in results["failures"]) else "not run"


def table(results: dict[str, Any]) -> str:
    catch = {r["server"]: r for r in results["catch_up"]}
    steady = {r["server"]: r for r in results["steady"]}
    p = results["parameters"]
    lines = [
        "# Replication: rpl against MariaDB 10.11",
        "",
        f"Source and replica on one machine ({p['machine']}), loopback. rpl "
        f"{results['versions'].get('rpl', '?')}: defaults (sync_binlog=1, "
        "log_replica_updates=ON, GTID auto-position), `--binlog-format=ROW` on both "
        f"servers; `{RPL_STATEMENT}`: the same with `--binlog-format=STATEMENT`. MariaDB "
        f"{results['versions'].get('MariaDB', '?')}: log_bin, binlog_format=ROW, "
        "sync_binlog=1, innodb_flush_log_at_trx_commit=1, log_slave_updates=ON (both "
        "replicas write a binlog), MASTER_USE_GTID=slave_pos, single-threaded applier "
        "(MariaDB's default), otherwise defaults. rpl's applier commits independent "
        "transactions as one group (rpl_applier_batch_size=64, WRITESET tracking on the "
        "source). The three pairs run at once and take turns, phase by phase. "
        "*binlog B/trx*: the source's binlog growth (SHOW BINARY LOGS sizes summed) "
        "during the load over its transactions.",
        "",
        f"## Catch-up ({p['transactions']} single-row INSERT transactions committed on the "
        f"source by {LOAD_THREADS} connections while the replica was stopped, then START SLAVE)",
        "",
        "| server | transactions | source load rate /s (Python client) | binlog B/trx | "
        "catch-up s | applied trx/s | CHECKSUM TABLE equal |",
        "|---|---|---|---|---|---|---|",
    ]
    for server in SERVERS:
        r = catch.get(server)
        if r is None:
            lines.append(f"| {server} | {_missing(results, server)} | | | | | |")
            continue
        lines.append(
            f"| {server} | {r['transactions']} | {r['source_load_tps']:.0f} | "
            f"{fmt(r.get('binlog_bytes_per_trx'), '.0f')} | "
            f"{r['seconds']:.2f} | {r['applied_tps']:.0f} | "
            f"{'yes' if r['checksum_equal'] else 'NO'} |"
        )
    q = results["ratios"]
    lines += [
        "",
        f"Catch-up rate ratio rpl/MariaDB: **{fmt(q['catch_up_rpl_over_mariadb'])}**; "
        f"rpl ROW/STATEMENT: **{fmt(q['catch_up_rpl_row_over_statement'])}**",
    ]
    lines += [
        "",
        f"## Steady state (sysbench oltp_insert, {LOAD_THREADS} threads, {p['duration']} s, "
        f"sampled every {SAMPLE_EVERY} s)",
        "",
        "| server | source tps | binlog B/trx | replica applied trx/s during load | "
        "Seconds_Behind_Master mean | max | transactions behind mean | max | "
        "behind at load end | catch-up after load s | CHECKSUM TABLE equal |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for server in SERVERS:
        r = steady.get(server)
        if r is None:
            lines.append(f"| {server} | {_missing(results, server)} | | | | | | | | | |")
            continue
        lines.append(
            f"| {server} | {r['source_tps']:.0f} | "
            f"{fmt(r.get('binlog_bytes_per_trx'), '.0f')} | "
            f"{r['replica_tps_during_load']:.0f} | "
            f"{fmt(r['sbm_mean'])} | {fmt(r['sbm_max'], 'd')} | {r['behind_mean']:.0f} | "
            f"{r['behind_max']} | {r['behind_at_load_end']} | "
            f"{r['catch_up_after_load_s']:.2f} | {'yes' if r['checksum_equal'] else 'NO'} |"
        )
    lines += [
        "",
        "Source tps ratio rpl/MariaDB: "
        f"**{fmt(q['steady_source_tps_rpl_over_mariadb'])}**; rpl ROW/STATEMENT: "
        f"**{fmt(q['steady_source_tps_rpl_row_over_statement'])}**",
    ]
    for failure in results["failures"]:
        lines += [
            "",
            f"**{failure['server']} failed:**",
            "",
            "```",
            failure["error"].strip(),
            "```",
        ]
    lines += ["", "![catch-up rates and lag over time](replication.png)", ""]
    return "\n".join(lines)


def plot(results: dict[str, Any], path: Path) -> None:
    figure, (bars, sbm, trx) = pyplot().subplots(1, 3, figsize=(16, 4.5))
    catch = {r["server"]: r for r in results["catch_up"]}
    names = [s for s in SERVERS if s in catch]
    rates = [catch[s]["applied_tps"] for s in names]
    drawn = bars.bar(names, rates, color=[COLOURS[n] for n in names])
    bars.bar_label(drawn, fmt="%.0f")
    bars.set_ylabel("transactions/s applied")
    bars.set_title(f"catch-up of {results['parameters']['transactions']} transactions")
    for server, style in COLOURS.items():
        run = next((r for r in results["steady"] if r["server"] == server), None)
        if run is None:
            continue
        t = [s["t"] for s in run["samples"]]
        sbm.plot(t, [s["seconds_behind_master"] for s in run["samples"]], color=style, label=server)
        trx.plot(t, [s["transactions_behind"] for s in run["samples"]], color=style, label=server)
    ends = [r["load_seconds"] for r in results["steady"]] or [results["parameters"]["duration"]]
    for axis, label in ((sbm, "Seconds_Behind_Master"), (trx, "transactions behind")):
        axis.axvline(max(ends), color="grey", linestyle=":", label="load ends")
        axis.set_xlabel("seconds since the load started")
        axis.set_ylabel(label)
        axis.set_title(f"{label}, oltp_insert {LOAD_THREADS} threads")
        axis.legend()
    figure.suptitle("asynchronous replication, durable commits, loopback, same machine")
    save_figure(figure, path)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--transactions",
        type=int,
        default=100_000,
        help="transactions the replica catches up on (default 100000)",
    )
    parser.add_argument(
        "--duration", type=int, default=30, help="seconds of steady-state load (default 30)"
    )
    add_servers_argument(parser, SERVERS)
    add_out_argument(parser)
    args = parser.parse_args()
    wanted = args.servers
    results: dict[str, Any] = {
        "parameters": {
            "transactions": args.transactions,
            "duration": args.duration,
            "load_threads": LOAD_THREADS,
            "sample_every_s": SAMPLE_EVERY,
            "machine": machine_line(),
        },
        "versions": {},
        "catch_up": [],
        "steady": [],
        "failures": [],
    }
    with tempfile.TemporaryDirectory(prefix="rpl-bench-") as root:
        pairs = [kind(Path(root)) for kind in PAIRS if kind.name in wanted]
        measure(pairs, args.transactions, args.duration, results)
    ratios(results)
    publish(args.out, "replication", results, table(results), plot)
    return 1 if results["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
