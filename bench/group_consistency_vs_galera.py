"""Benchmark: what each Group Replication consistency level costs, a 3-member rpl group
against a 3-node MariaDB Galera cluster with each wsrep_sync_wait, side by side in one run.

Not a test: ``tox -e bench`` runs it. The two clusters are those of ``group_vs_galera.py``
(:mod:`clusters`): on this machine on loopback at once, every member and node logging
rows with a durable commit, rpl single-primary with thread_handling=pool-of-threads and
an etcd member per member.

rpl is single-primary, so the workload that writes, sysbench oltp_read_write, runs
against the primary (Galera: its first node), reads and writes in the same transactions.
The read-only one, oltp_point_select, runs against a secondary (Galera: the second node)
while a steady background writer, sysbench oltp_update_index at :data:`WRITER_THREADS`
threads and ``--writer-rate`` transactions per second (``--rate``), runs on the primary
(Galera: the first node) for the whole run: so a read at BEFORE (wsrep_sync_wait=1) has
something ordered before it to wait for. The writer's tps and p95 are recorded beside the
reads'.

The level is set before each run with ``SET GLOBAL group_replication_consistency`` on
every member (sysbench's sessions inherit it, the writer's too; the variable wants SUPER
or GROUP_REPLICATION_ADMIN: sysbench runs as root), Galera's ``SET GLOBAL
wsrep_sync_wait`` on every node. The peers are rpl EVENTUAL and Galera
wsrep_sync_wait=0 (neither waits: a read sees what its member has applied), rpl BEFORE
and Galera wsrep_sync_wait=1 (a read waits until its member has applied everything the
group ordered before it); AFTER and BEFORE_AND_AFTER, which Galera has no peer for (its
commit returns once certified, before the other nodes apply), are reported against both
Galera settings. Each rpl level is also reported against rpl EVENTUAL, and Galera
wsrep_sync_wait=1 against 0: what waiting costs each side.

For each workload (prepared afresh on both clusters) and thread count, every setting
takes its turn round by round, rpl and its Galera peer next to each other, seconds apart,
so the machine's drift stays out of the ratios as far as it can; a cell shows its median
run by tps, with that run's p95 (sysbench's). Targets (issue 40): rpl/Galera >= 1.0 for
each pair of peers at 16 threads; BEFORE within 15% of EVENTUAL on oltp_read_write
(MySQL's published cost is about 10%).

Writes docs/bench/consistency.md, consistency.json and consistency.png.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import attrs

from clusters import GALERA, RPL, Cluster, clusters, missing_programs, prepare, run_options
from clusters import query as cluster_query
from common import (
    BenchFailure,
    add_list_argument,
    add_out_argument,
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
    sysbench_command,
    sysbench_result,
)

WORKLOADS = ("oltp_read_write", "oltp_point_select")
READ_ONLY = frozenset(("oltp_point_select", "oltp_read_only"))
"""The workloads that read on a secondary, beside the background writer on the primary."""
THREADS = (1, 4, 16)
LEVELS = ("EVENTUAL", "BEFORE", "AFTER", "BEFORE_AND_AFTER")
SYNC_WAITS = (0, 1)
PEERS = {"EVENTUAL": 0, "BEFORE": 1}
"""rpl's level -> the wsrep_sync_wait that gives a read the same guarantee."""
TARGET_THREADS = 16
TARGET_RATIO = 1.0
"""rpl/Galera for each pair of peers at :data:`TARGET_THREADS`."""
BEFORE_WORKLOAD = "oltp_read_write"
BEFORE_FLOOR = 0.85
"""rpl BEFORE/EVENTUAL on :data:`BEFORE_WORKLOAD`: within 15%."""
WRITER = "oltp_update_index"
WRITER_THREADS = 2
WRITER_RATE = 20
"""The background writer's transactions per second (both threads together) by default."""
WRITER_LEAD = 1
"""Seconds the writer runs before the reads start (and, its run being longer by twice
this, after they end)."""
Row = dict[str, Any]


# ------------------------------------------------------------------ the settings
@attrs.frozen
class Setting:
    """A cluster at one level: rpl's group_replication_consistency, or Galera's
    wsrep_sync_wait.
    """

    cluster: str
    level: str

    @property
    def name(self) -> str:
        if self.cluster == RPL:
            return f"rpl {self.level}"
        return f"Galera wsrep_sync_wait={self.level}"

    @property
    def variable(self) -> str:
        return "group_replication_consistency" if self.cluster == RPL else "wsrep_sync_wait"

    def apply(self, cluster: Cluster) -> None:
        """SET GLOBAL on every member (node), then check that each has it."""
        value = f"'{self.level}'" if self.cluster == RPL else self.level
        for port in cluster.ports:
            cluster_query(port, f"SET GLOBAL {self.variable} = {value}")
            found = str(cluster_query(port, f"SELECT @@GLOBAL.{self.variable}")[0][0])
            if found != self.level:
                raise BenchFailure(f"{self.variable} is {found} on port {port}, not {self.level}")


def rpl_setting(level: str) -> Setting:
    return Setting(RPL, level)


def galera_setting(sync_wait: int) -> Setting:
    return Setting(GALERA, str(sync_wait))


def settings(levels: Sequence[str], sync_waits: Sequence[int]) -> list[Setting]:
    """The order a round runs them in: each rpl level, followed by the Galera setting
    that is its peer (or, for a level without one, the next unused), so a pair's runs
    are next to each other.
    """
    galera = [galera_setting(w) for w in sync_waits]
    order: list[Setting] = []
    for level in levels:
        order.append(rpl_setting(level))
        peer = PEERS.get(level)
        wanted = [g for g in galera if peer is None or g.level == str(peer)]
        if wanted:
            order.append(wanted[0])
            galera.remove(wanted[0])
    return order + galera


# ------------------------------------------------------------------ measuring
def _writer(cluster: Cluster, seconds: int, rate: int) -> subprocess.Popen[str]:
    """The background writer on the primary, started :data:`WRITER_LEAD` seconds before
    the reads' ``seconds`` and running as long after them.
    """
    options = run_options(WRITER_THREADS, seconds + 2 * WRITER_LEAD)
    command = sysbench_command(cluster.port, WRITER, "run", *options, f"--rate={rate}")
    writer = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(WRITER_LEAD)
    return writer


def measure_point(
    setting: Setting,
    cluster: Cluster,
    workload: str,
    threads: int,
    seconds: int,
    round_: int,
    rate: int,
) -> Row:
    """One sysbench run against one cluster at one setting (already applied)."""
    reads = workload in READ_ONLY
    writer = _writer(cluster, seconds, rate) if reads else None
    try:
        port = cluster.ports[1] if reads else cluster.port
        out = sysbench(port, workload, "run", *run_options(threads, seconds))
    finally:
        written = writer.communicate(timeout=seconds + 120) if writer is not None else None
    transactions, tps, p95 = sysbench_result(out)
    row: Row = {
        "server": setting.name,
        "cluster": setting.cluster,
        "level": setting.level,
        "workload": workload,
        "threads": threads,
        "round": round_,
        "runs_on": "secondary" if reads else "primary",
        "tps": tps,
        "p95_ms": p95,
        "transactions": transactions,
        "writer_tps": None,
        "writer_p95_ms": None,
    }
    if writer is not None and written is not None:
        if writer.returncode != 0:
            raise BenchFailure(f"the background writer failed: {written[0][-1500:]}{written[1]}")
        found = sysbench_result(written[0])
        row["writer_tps"], row["writer_p95_ms"] = found.tps, found.p95_ms
    shown = (
        f"; writer {row['writer_tps']:.1f} tps, p95 {row['writer_p95_ms']:.2f} ms"
        if row["writer_tps"] is not None
        else ""
    )
    print(
        f"  {setting.name:29} {workload:17} {threads:3} threads, round {round_}: "
        f"{tps:8.1f} tps, p95 {p95:7.2f} ms{shown}",
        flush=True,
    )
    return row


def measure(
    running: dict[str, Cluster],
    order: list[Setting],
    workloads: list[str],
    threads: list[int],
    seconds: int,
    rounds: int,
    rate: int,
) -> list[Row]:
    """Every run: per workload (prepared afresh on both clusters at their baseline,
    EVENTUAL and wsrep_sync_wait=0), per thread count, every setting in ``order`` taking
    its turn ``rounds`` times.
    """
    runs: list[Row] = []
    for workload in workloads:
        for baseline in (rpl_setting("EVENTUAL"), galera_setting(0)):
            baseline.apply(running[baseline.cluster])
            prepare(running[baseline.cluster], workload)
        for count in threads:
            for round_ in range(1, rounds + 1):
                for setting in order:
                    cluster = running[setting.cluster]
                    setting.apply(cluster)
                    runs.append(
                        measure_point(setting, cluster, workload, count, seconds, round_, rate)
                    )
    return runs


# ------------------------------------------------------------------ results
def _comparisons(runs: list[Row], cells: list[Row], order: list[Setting]) -> Iterator[Row]:
    """Each rpl level against rpl EVENTUAL and against each Galera setting, and each
    Galera setting against wsrep_sync_wait=0, per workload and thread count.
    """
    rpl = [s for s in order if s.cluster == RPL]
    galera = [s for s in order if s.cluster == GALERA]
    pairs = [(a, b) for a in rpl for b in galera]
    pairs += [(a, b) for b in rpl if b.level == "EVENTUAL" for a in rpl if a != b]
    pairs += [(a, b) for b in galera if b.level == "0" for a in galera if a != b]
    for workload, threads in dict.fromkeys((c["workload"], c["threads"]) for c in cells):
        here = {
            c["server"]: c for c in cells if (c["workload"], c["threads"]) == (workload, threads)
        }
        for a, b in pairs:
            if a.name in here and b.name in here:
                yield {
                    "workload": workload,
                    "threads": threads,
                    "a": a.name,
                    "b": b.name,
                    "peers": a.cluster != b.cluster and str(PEERS.get(a.level)) == b.level,
                    "ratio": ratio(here[a.name]["tps"], here[b.name]["tps"]),
                    "round_ratios": round_ratios(
                        runs, a.name, b.name, workload=workload, threads=threads
                    ),
                }


def _targets(comparisons: list[Row], parameters: dict[str, Any]) -> list[Row]:
    """The issue's targets, each with the ratio found and whether it is met (None when
    its cell was not measured).
    """
    targets: list[Row] = []

    def target(text: str, a: str, b: str, workload: str, threads: int, floor: float) -> None:
        found = next(
            (
                c
                for c in comparisons
                if (c["a"], c["b"], c["workload"], c["threads"]) == (a, b, workload, threads)
            ),
            None,
        )
        value = None if found is None else found["ratio"]
        targets.append(
            {
                "target": text,
                "workload": workload,
                "threads": threads,
                "a": a,
                "b": b,
                "floor": floor,
                "ratio": value,
                "round_ratios": [] if found is None else found["round_ratios"],
                "met": None if value is None else value >= floor,
            }
        )

    for workload in parameters["workloads"]:
        for level, sync_wait in PEERS.items():
            a, b = rpl_setting(level).name, galera_setting(sync_wait).name
            text = f"{a} / {b} >= {TARGET_RATIO:.1f} at {TARGET_THREADS} threads"
            target(text, a, b, workload, TARGET_THREADS, TARGET_RATIO)
    for threads in parameters["threads"]:
        a, b = rpl_setting("BEFORE").name, rpl_setting("EVENTUAL").name
        text = f"{a} within {1 - BEFORE_FLOOR:.0%} of {b}"
        target(text, a, b, BEFORE_WORKLOAD, threads, BEFORE_FLOOR)
    return targets


def summarise(runs: list[Row], parameters: dict[str, Any], order: list[Setting]) -> dict[str, Any]:
    cells = median_cells(runs, ("server", "workload", "threads"))
    comparisons = list(_comparisons(runs, cells, order))
    return {
        "machine": f"{machine_line()}; rpl's {installed_build()} build",
        "parameters": parameters,
        "settings": [s.name for s in order],
        "runs": runs,
        "cells": cells,
        "comparisons": comparisons,
        "targets": _targets(comparisons, parameters),
    }


# ------------------------------------------------------------------ report
def _verdict(target: Row) -> str:
    if target["met"] is None:
        return f"{target['workload']}, {target['threads']} threads: not measured"
    rounds = ", ".join(f"{r:.2f}" for r in target["round_ratios"])
    return (
        f"{target['workload']}, {target['threads']} threads: **{target['ratio']:.2f}** "
        f"({'met' if target['met'] else 'not met'}; round by round {rounds})"
    )


def report(results: dict[str, Any]) -> str:
    p = results["parameters"]
    reads = ", ".join(sorted(READ_ONLY & set(p["workloads"]))) or "a read-only workload"
    lines = [
        "# Group Replication consistency levels: a 3-member rpl group against a 3-node "
        "MariaDB Galera cluster",
        "",
        f"On {results['machine']}. Both clusters on this machine at once, on loopback, every "
        "member logging rows with sync_binlog=1 (MariaDB also "
        "innodb_flush_log_at_trx_commit=1); rpl single-primary, "
        "thread_handling=pool-of-threads, one etcd member per member. The level is set "
        "before each run with SET GLOBAL on every member (group_replication_consistency) "
        "and node (wsrep_sync_wait). oltp_read_write runs on the rpl primary and Galera's "
        f"first node; {reads} "
        "on a secondary (Galera's second node) while a background writer "
        f"({WRITER}, {WRITER_THREADS} threads, --rate={p['writer_rate']}) runs on the "
        "primary (the first node): its tps and p95 are the *writer* columns. "
        f"{', '.join(p['workloads'])} at {', '.join(map(str, p['threads']))} threads, "
        f"{p['rounds']} run(s) of {p['seconds']} s per setting and cell, the settings taking "
        "turns round by round; a cell is its median run by tps, with that run's p95. "
        "Peers: rpl EVENTUAL and Galera wsrep_sync_wait=0, rpl BEFORE and Galera "
        "wsrep_sync_wait=1; AFTER and BEFORE_AND_AFTER have no Galera peer and are shown "
        "against both. *÷ baseline*: rpl's level over rpl EVENTUAL, Galera's "
        "wsrep_sync_wait=1 over wsrep_sync_wait=0. A peer pair's ratio is in bold.",
        "",
        "Targets:",
        "",
    ]
    for text in dict.fromkeys(t["target"] for t in results["targets"]):
        shown = "; ".join(_verdict(t) for t in results["targets"] if t["target"] == text)
        lines.append(f"- {text}: {shown}.")
    lines.append("")
    galera = [s for s in results["settings"] if s.startswith("Galera")]
    by_pair = {(c["workload"], c["threads"], c["a"], c["b"]): c for c in results["comparisons"]}
    for workload in p["workloads"]:
        header = ["threads", "setting", "runs on", "tps", "p95 ms"]
        if workload in READ_ONLY:
            header += ["writer tps", "writer p95 ms"]
        header += ["÷ baseline"] + [f"rpl ÷ {g}" for g in galera]
        lines += [
            f"## {workload}",
            "",
            "| " + " | ".join(header) + " |",
            "|" + "---|" * len(header),
        ]
        for threads in p["threads"]:
            for name in results["settings"]:
                cell = next(
                    (
                        c
                        for c in results["cells"]
                        if (c["server"], c["workload"], c["threads"]) == (name, workload, threads)
                    ),
                    None,
                )
                if cell is None:
                    continue
                base = "rpl EVENTUAL" if cell["cluster"] == RPL else "Galera wsrep_sync_wait=0"
                spread = (
                    f" ({cell['tps_min']:.0f}–{cell['tps_max']:.0f})"
                    if len(cell["tps_runs"]) > 1
                    else ""
                )
                row = [str(threads), name, cell["runs_on"], f"{cell['tps']:.0f}{spread}"]
                row.append(fmt(cell["p95_ms"]))
                if workload in READ_ONLY:
                    row += [fmt(cell["writer_tps"], ".1f"), fmt(cell["writer_p95_ms"])]
                found = by_pair.get((workload, threads, name, base))
                row.append(fmt(found["ratio"]) if found else "")
                for g in galera:
                    found = by_pair.get((workload, threads, name, g))
                    shown = fmt(found["ratio"]) if found and cell["cluster"] == RPL else ""
                    row.append(f"**{shown}**" if found and found["peers"] else shown)
                lines.append("| " + " | ".join(row) + " |")
        lines.append("")
    lines += ["![tps and p95 per level](consistency.png)", ""]
    return "\n".join(lines)


def plot(results: dict[str, Any], path: Path) -> None:
    """A column per workload: tps (the median run, with the lowest and highest) and p95
    per setting, a bar per thread count.
    """
    p = results["parameters"]
    workloads, threads, names = p["workloads"], p["threads"], results["settings"]
    figure, axes = pyplot().subplots(
        2, len(workloads), figsize=(max(6.5, 1.2 * len(names)) * len(workloads), 8), squeeze=False
    )
    width = 0.8 / len(threads)
    labels = [
        n.replace("Galera wsrep_", "Galera\n").replace("rpl ", "rpl\n").replace("_AND_", "_AND\n_")
        for n in names
    ]
    for column, workload in enumerate(workloads):
        tps_axis, p95_axis = axes[0][column], axes[1][column]
        for index, count in enumerate(threads):
            cells = {
                c["server"]: c
                for c in results["cells"]
                if (c["workload"], c["threads"]) == (workload, count)
            }
            xs = [i + (index - (len(threads) - 1) / 2) * width for i in range(len(names))]
            shown = [(x, cells[n]) for x, n in zip(xs, names, strict=True) if n in cells]
            hatches = ["//" if c["cluster"] == GALERA else "" for _, c in shown]
            tps_axis.bar(
                [x for x, _ in shown],
                [c["tps"] for _, c in shown],
                width,
                yerr=[
                    [c["tps"] - c["tps_min"] for _, c in shown],
                    [c["tps_max"] - c["tps"] for _, c in shown],
                ],
                capsize=2,
                color=f"C{index}",
                hatch=hatches,
                label=f"{count} threads",
            )
            p95_axis.bar(
                [x for x, _ in shown],
                [c["p95_ms"] for _, c in shown],
                width,
                color=f"C{index}",
                hatch=hatches,
                label=f"{count} threads",
            )
        where = "secondary, writer on the primary" if workload in READ_ONLY else "primary"
        for axis, what in ((tps_axis, "transactions/s"), (p95_axis, "p95 latency, ms (log)")):
            axis.set_xticks(range(len(names)), labels, fontsize="small")
            axis.set_ylabel(what)
            axis.legend(fontsize="small")
        tps_axis.set_title(f"{workload} ({where}): tps")
        p95_axis.set_title(f"{workload}: p95")
        p95_axis.set_yscale("log")
    figure.suptitle(
        "Consistency levels: 3-member rpl group vs 3-node Galera (hatched), durable commits, "
        "loopback, same machine"
    )
    save_figure(figure, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_list_argument(parser, "--workloads", WORKLOADS, "sysbench workloads", name_list)
    add_list_argument(parser, "--threads", THREADS, "thread counts", int_list)
    add_list_argument(parser, "--levels", LEVELS, "rpl consistency levels", name_list)
    add_list_argument(parser, "--sync-waits", SYNC_WAITS, "Galera wsrep_sync_wait values", int_list)
    parser.add_argument("--seconds", type=int, default=10, help="seconds per run (default 10)")
    parser.add_argument("--rounds", type=int, default=3, help="runs per cell (default 3)")
    parser.add_argument(
        "--writer-rate",
        type=int,
        default=WRITER_RATE,
        help=f"the background writer's transactions/s (default {WRITER_RATE})",
    )
    add_out_argument(parser)
    args = parser.parse_args(argv)
    for program in missing_programs():
        print(f"{program} is not installed: tools/system-packages --bench", file=sys.stderr)
        return 1
    order = settings([level.upper() for level in args.levels], args.sync_waits)
    parameters = {
        "workloads": args.workloads,
        "threads": args.threads,
        "levels": [s.level for s in order if s.cluster == RPL],
        "sync_waits": [int(s.level) for s in order if s.cluster == GALERA],
        "seconds": args.seconds,
        "rounds": args.rounds,
        "writer": WRITER,
        "writer_threads": WRITER_THREADS,
        "writer_rate": args.writer_rate,
    }
    with clusters("rpl-consistency-bench-") as running:
        runs = measure(
            running,
            order,
            args.workloads,
            args.threads,
            args.seconds,
            args.rounds,
            args.writer_rate,
        )
    results = summarise(runs, parameters, order)
    publish(args.out, "consistency", results, report(results), plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
