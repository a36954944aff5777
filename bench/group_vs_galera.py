"""Benchmark: a 3-member rpl Group Replication group against a 3-node MariaDB Galera
cluster, side by side in one run, with sysbench against the primary (rpl) and the first
node (Galera).

Not a test: ``tox -e bench`` runs it. Both clusters run on this machine on loopback at
once, every member and node logging rows with a durable commit (rpl: sync_binlog=1;
MariaDB: sync_binlog=1, innodb_flush_log_at_trx_commit=1), Galera with
``wsrep_sync_wait=0`` and rpl's consistency EVENTUAL: a commit returns once the group
has ordered and certified it and the member it ran on has committed it, on both sides.
rpl is single-primary (its default), each member with its own etcd member, started by
``rpl sandbox deploy group`` (:func:`rpl.core.sandbox.sandbox.deploy_group`); Galera's
joiners take their first state from the first node (rsync SST).

For each workload and thread count, the two take turns round by round, seconds apart,
so the machine's drift stays out of the ratios as far as it can; a cell shows its
median run by tps. Besides tps and p95 each run records the conflicts the run met (rpl:
COUNT_CONFLICTS_DETECTED of replication_group_member_stats on the primary; Galera:
wsrep_local_cert_failures + wsrep_local_bf_aborts on the node) and, for rpl, where a
commit's time went: the primary's ``group_replication_commit_*`` status totals
(:mod:`rpl.group_replication.timings`) over the run, divided by its local commits.

Writes docs/bench/group.md, group.json and group.png.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from clusters import (
    GALERA,
    RPL,
    Cluster,
    clusters,
    missing_programs,
    prepare,
    query,
    run_options,
    status,
)
from common import (
    add_list_argument,
    add_out_argument,
    cpu_seconds,
    fmt,
    installed_build,
    int_list,
    machine_line,
    median_cells,
    name_list,
    publish,
    pyplot,
    ratio,
    round_ratios,
    save_figure,
    sysbench,
    sysbench_result,
)

WORKLOADS = ("oltp_write_only", "oltp_insert")
THREADS = (1, 4, 16)
TARGET_THREADS = 16
STAGES = ("broadcast", "delivery", "certification", "order_wait", "server")
Row = dict[str, Any]


# ------------------------------------------------------------------ measuring
def _counters(server: str, port: int) -> dict[str, int]:
    """The conflicts so far and, for rpl, the commit-time totals."""
    now = status(port)
    if server == GALERA:
        failures = int(now.get("wsrep_local_cert_failures", 0))
        return {"conflicts": failures + int(now.get("wsrep_local_bf_aborts", 0))}
    table = "performance_schema.replication_group_member_stats"
    rows = query(port, f"SELECT COUNT_CONFLICTS_DETECTED FROM {table}")
    found = {"conflicts": int(rows[0][0]) if rows else 0}
    found["commits"] = int(now.get("group_replication_commit_count", 0))
    for stage in STAGES:
        found[stage] = int(now.get(f"group_replication_commit_{stage}_time", 0))
    return found


def _cpu(cluster: Cluster) -> dict[str, float]:
    """CPU seconds so far of each kind of the cluster's processes, summed."""
    return {kind: sum(cpu_seconds(p) for p in pids) for kind, pids in cluster.processes.items()}


def measure_point(
    server: str, cluster: Cluster, workload: str, threads: int, seconds: int, round_: int
) -> Row:
    """One sysbench run against one cluster."""
    port = cluster.port
    before, cpu_before = _counters(server, port), _cpu(cluster)
    out = sysbench(port, workload, "run", *run_options(threads, seconds))
    after, cpu_after = _counters(server, port), _cpu(cluster)
    transactions, tps, p95 = sysbench_result(out)
    row: Row = {
        "server": server,
        "workload": workload,
        "threads": threads,
        "round": round_,
        "tps": tps,
        "p95_ms": p95,
        "transactions": transactions,
        "conflicts": after["conflicts"] - before["conflicts"],
    }
    for kind in ("servers", "etcd"):
        spent = cpu_after.get(kind, 0.0) - cpu_before.get(kind, 0.0)
        row[f"cpu_{kind}_us"] = spent * 1e6 / transactions if transactions else None
    commits = after.get("commits", 0) - before.get("commits", 0)
    for stage in STAGES:
        spent = after.get(stage, 0) - before.get(stage, 0)
        row[f"{stage}_us"] = spent / commits if commits else None
    shown = ", ".join(f"{s} {fmt(row[f'{s}_us'], '.0f')}" for s in STAGES if row[f"{s}_us"])
    cpu = f"CPU µs/trx servers {fmt(row['cpu_servers_us'], '.0f')}" + (
        f", etcd {fmt(row['cpu_etcd_us'], '.0f')}" if server == RPL else ""
    )
    print(
        f"  {server:15} {workload:16} {threads:3} threads, round {round_}: {tps:8.1f} tps, "
        f"p95 {p95:7.2f} ms, conflicts {row['conflicts']}, {cpu}"
        + (f"; µs: {shown}" if shown else ""),
        flush=True,
    )
    return row


def measure(
    running: dict[str, Cluster], workloads: list[str], threads: list[int], seconds: int, rounds: int
) -> list[Row]:
    """Every run: per workload (prepared afresh on both), per thread count, the
    clusters taking turns ``rounds`` times.
    """
    runs: list[Row] = []
    for workload in workloads:
        for cluster in running.values():
            prepare(cluster, workload)
        for count in threads:
            for round_ in range(1, rounds + 1):
                for server, cluster in running.items():
                    runs.append(measure_point(server, cluster, workload, count, seconds, round_))
    return runs


# ------------------------------------------------------------------ report
def report(results: dict[str, Any]) -> str:
    p = results["parameters"]
    lines = [
        "# Group Replication: a 3-member rpl group against a 3-node MariaDB Galera cluster",
        "",
        f"On {results['machine']}. Both clusters on this machine at once, on loopback, every "
        "member logging rows with sync_binlog=1 (MariaDB also "
        "innodb_flush_log_at_trx_commit=1); rpl single-primary, consistency EVENTUAL, "
        "thread_handling=pool-of-threads, one etcd member per member; Galera "
        "wsrep_sync_wait=0. sysbench drives the rpl primary and Galera's first node: "
        f"{', '.join(p['workloads'])} at {', '.join(map(str, p['threads']))} threads, "
        f"{p['rounds']} run(s) of {p['seconds']} s per cluster and cell, the clusters taking "
        "turns; a cell is its median run by tps. *conflicts*: rpl's "
        "COUNT_CONFLICTS_DETECTED, Galera's wsrep_local_cert_failures + "
        "wsrep_local_bf_aborts, over the run. The µs columns are where an rpl commit's time "
        "went on the primary (group_replication_commit_* totals over the run / its local "
        "commits): the etcd put (broadcast), waiting for the message to come back in the "
        "group's order (delivery), certification, waiting for the commit order, and the "
        "server's own commit (binlog sync, engine). *CPU µs/trx*: the CPU time of every "
        "process of the cluster over the run (/proc) per transaction sysbench reported.",
        "",
    ]
    targets = []
    for workload in p["workloads"]:
        cell = next(
            (
                c
                for c in results["ratios"]
                if c["workload"] == workload and c["threads"] == TARGET_THREADS
            ),
            None,
        )
        if cell is not None and cell["ratio"] is not None:
            met = "met" if cell["ratio"] >= 1.0 else "not met"
            rounds = ", ".join(f"{r:.2f}" for r in cell["round_ratios"])
            targets.append(
                f"{workload}, {TARGET_THREADS} threads: **{cell['ratio']:.2f}** ({met}; round "
                f"by round {rounds})"
            )
    if targets:
        lines += ["Target: rpl/Galera >= 1.0 at 16 threads: " + "; ".join(targets) + ".", ""]
    header = ["workload", "threads", "rpl tps", "Galera tps", "rpl/Galera", "rpl p95 ms"]
    header += ["Galera p95 ms", "rpl conflicts", "Galera conflicts"]
    header += ["rpl CPU µs/trx (servers + etcd)", "Galera CPU µs/trx"]
    header += [f"{s} µs" for s in STAGES]
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for cell in results["ratios"]:
        a, b = cell[RPL], cell[GALERA]
        row = [cell["workload"], str(cell["threads"]), fmt(a["tps"], ".0f"), fmt(b["tps"], ".0f")]
        row += [fmt(cell["ratio"]), fmt(a["p95_ms"]), fmt(b["p95_ms"])]
        row += [str(a["conflicts"]), str(b["conflicts"])]
        row += [
            f"{fmt(a['cpu_servers_us'], '.0f')} + {fmt(a['cpu_etcd_us'], '.0f')}",
            fmt(b["cpu_servers_us"], ".0f"),
        ]
        row += [fmt(a[f"{s}_us"], ".0f") for s in STAGES]
        lines.append("| " + " | ".join(row) + " |")
    lines += ["", "![tps against threads](group.png)", ""]
    return "\n".join(lines)


def plot(results: dict[str, Any], path: Path) -> None:
    """A panel per workload: each cluster's median tps against threads (with its lowest
    and highest run), and the rpl commit's stages at each thread count.
    """
    workloads = results["parameters"]["workloads"]
    figure, axes = pyplot().subplots(2, len(workloads), figsize=(5 * len(workloads), 7.5))
    axes = [[a] for a in axes] if len(workloads) == 1 else [list(r) for r in axes]
    for column, workload in enumerate(workloads):
        axis = axes[0][column]
        for server, style in ((RPL, "o-"), (GALERA, "s--")):
            points = sorted(
                (c for c in results["cells"] if (c["server"], c["workload"]) == (server, workload)),
                key=lambda c: int(c["threads"]),
            )
            axis.errorbar(
                [c["threads"] for c in points],
                [c["tps"] for c in points],
                yerr=[
                    [c["tps"] - c["tps_min"] for c in points],
                    [c["tps_max"] - c["tps"] for c in points],
                ],
                fmt=style,
                label=server,
                capsize=3,
            )
        axis.set_title(workload)
        axis.set_xscale("log", base=2)
        axis.set_xlabel("threads")
        axis.set_ylabel("transactions/s")
        axis.legend(fontsize="small")
        stages = axes[1][column]
        cells = sorted(
            (c for c in results["cells"] if (c["server"], c["workload"]) == (RPL, workload)),
            key=lambda c: int(c["threads"]),
        )
        bottom = [0.0] * len(cells)
        labels = [str(c["threads"]) for c in cells]
        for stage in STAGES:
            heights = [float(c[f"{stage}_us"] or 0.0) / 1000 for c in cells]
            stages.bar(labels, heights, bottom=bottom, label=stage)
            bottom = [b + h for b, h in zip(bottom, heights, strict=True)]
        stages.set_title(f"{workload}: an rpl commit's time")
        stages.set_xlabel("threads")
        stages.set_ylabel("ms per commit (primary)")
        stages.legend(fontsize="small")
    figure.suptitle("3-member rpl group vs 3-node Galera, durable commits, loopback, same machine")
    save_figure(figure, path)


def summarise(runs: list[Row], parameters: dict[str, Any]) -> dict[str, Any]:
    cells = median_cells(runs, ("server", "workload", "threads"))
    ratios = []
    for workload in parameters["workloads"]:
        for count in parameters["threads"]:
            pair = {
                c["server"]: c for c in cells if c["workload"] == workload and c["threads"] == count
            }
            if RPL in pair and GALERA in pair:
                ratios.append(
                    {
                        "workload": workload,
                        "threads": count,
                        RPL: pair[RPL],
                        GALERA: pair[GALERA],
                        "ratio": ratio(pair[RPL]["tps"], pair[GALERA]["tps"]),
                        "round_ratios": round_ratios(
                            runs, RPL, GALERA, workload=workload, threads=count
                        ),
                    }
                )
    return {
        "machine": f"{machine_line()}; rpl's {installed_build()} build",
        "parameters": parameters,
        "runs": runs,
        "cells": cells,
        "ratios": ratios,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_list_argument(parser, "--workloads", WORKLOADS, "sysbench workloads", name_list)
    add_list_argument(parser, "--threads", THREADS, "thread counts", int_list)
    parser.add_argument("--seconds", type=int, default=10, help="seconds per run (default 10)")
    parser.add_argument("--rounds", type=int, default=3, help="runs per cell (default 3)")
    add_out_argument(parser)
    args = parser.parse_args(argv)
    for program in missing_programs():
        print(f"{program} is not installed: tools/system-packages --bench", file=sys.stderr)
        return 1
    parameters = {
        "workloads": args.workloads,
        "threads": args.threads,
        "seconds": args.seconds,
        "rounds": args.rounds,
    }
    with clusters("rpl-group-bench-") as running:
        runs = measure(running, args.workloads, args.threads, args.seconds, args.rounds)
    results = summarise(runs, parameters)
    publish(args.out, "group", results, report(results), plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
