"""Benchmark: rpl against MariaDB 10.11 with sysbench, side by side in one run.

Not a test: ``tox -e bench`` runs it. Both servers run on this machine on loopback
with a durable commit (rpl: sync_binlog=1; MariaDB: sync_binlog=1,
innodb_flush_log_at_trx_commit=1, log_bin on). For each workload and thread count it
records transactions/s and p95 latency, the rpl/MariaDB ratios, and each server's
average binlog group size and fsyncs per transaction, then writes a Markdown table,
a JSON file and a plot.

``rpl`` is the installed build with ``thread_handling=pool-of-threads``; the same build with
one thread per connection (rpl's default, as MySQL's) runs beside it. When the installed
rpl-core is the compiled build (``RPL_COMPILE=1``, core/setup.py), the pure Python build
(with the pool) runs too, from the source tree (``PYTHONPATH=core/src`` puts its ``.py``
modules before the installed extensions), so the table shows each against MariaDB in
the same run.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from common import (
    PER_CONNECTION,
    PURE,
    add_out_argument,
    each_server,
    interpreter,
    publish,
    pyplot,
    rpl_builds,
    save_figure,
    sysbench,
    sysbench_result,
)

WORKLOADS = ("oltp_insert", "oltp_point_select", "oltp_write_only")
THREADS = (1, 4, 16, 32)
Row = dict[str, Any]
"""One measured point: server, workload, threads and the figures."""


def measure(
    name: str, port: int, status: Callable[[], dict[str, int]], seconds: int, results: list[Row]
) -> None:
    for workload in WORKLOADS:
        sysbench(port, workload, "prepare")
        for threads in THREADS:
            before = status()
            out = sysbench(
                port,
                workload,
                "run",
                f"--threads={threads}",
                f"--time={seconds}",
                "--percentile=95",
            )
            after = status()
            _, tps, p95 = sysbench_result(out)
            commits = after["commits"] - before["commits"]
            groups = after["groups"] - before["groups"]
            fsyncs = after["fsyncs"] - before["fsyncs"]
            row = {
                "server": name,
                "workload": workload,
                "threads": threads,
                "tps": tps,
                "p95_ms": p95,
                "group_size": commits / groups if groups else 0.0,
                "fsyncs_per_trx": fsyncs / commits if commits else 0.0,
            }
            results.append(row)
            print(
                f"  {name:15} {workload:18} {threads:3} threads: {tps:9.1f} tps, "
                f"p95 {p95:7.2f} ms, group {row['group_size']:.2f}, "
                f"fsyncs/trx {row['fsyncs_per_trx']:.2f}",
                flush=True,
            )
        sysbench(port, workload, "cleanup")


def table(results: list[Row]) -> str:
    extra = [name for name, _, _ in rpl_builds()[1:] if any(r["server"] == name for r in results)]
    lines = [
        "| workload | threads | rpl tps | MariaDB tps | tps ratio | "
        + "".join(f"{name} tps | ratio | " for name in extra)
        + "rpl p95 ms | MariaDB p95 ms | p95 ratio | rpl group | rpl fsyncs/trx | "
        "MariaDB group | MariaDB fsyncs/trx |",
        "|" + "---|" * (12 + 2 * len(extra)),
    ]
    index = {(r["server"], r["workload"], r["threads"]): r for r in results}
    for workload in WORKLOADS:
        for threads in THREADS:
            a, b = index[("rpl", workload, threads)], index[("MariaDB", workload, threads)]
            mariadb_tps = float(b["tps"])
            others = [index[(name, workload, threads)] for name in extra]
            lines.append(
                f"| {workload} | {threads} | {a['tps']:.0f} | {b['tps']:.0f} | "
                f"{float(a['tps']) / mariadb_tps:.2f} | "
                + "".join(
                    f"{o['tps']:.0f} | {float(o['tps']) / mariadb_tps:.2f} | " for o in others
                )
                + f"{a['p95_ms']:.2f} | {b['p95_ms']:.2f} | "
                f"{float(a['p95_ms']) / max(float(b['p95_ms']), 0.01):.2f} | "
                f"{a['group_size']:.2f} | {a['fsyncs_per_trx']:.2f} | {b['group_size']:.2f} | "
                f"{b['fsyncs_per_trx']:.2f} |"
            )
    return "\n".join(lines)


def plot(results: list[Row], path: Path) -> None:
    figure, axes = pyplot().subplots(1, len(WORKLOADS), figsize=(5 * len(WORKLOADS), 4))
    for axis, workload in zip(axes, WORKLOADS, strict=True):
        for server, style in (
            ("rpl", "o-"),
            (PER_CONNECTION, "v-."),
            (PURE, "^:"),
            ("MariaDB", "s--"),
        ):
            points = [r for r in results if r["server"] == server and r["workload"] == workload]
            if not points:
                continue
            axis.plot(
                [p["threads"] for p in points], [p["tps"] for p in points], style, label=server
            )
        axis.set_title(workload)
        axis.set_xscale("log", base=2)
        axis.set_xlabel("threads")
        axis.set_ylabel("transactions/s")
        axis.legend()
    figure.suptitle("sysbench, durable commits (sync_binlog=1), loopback, same machine")
    save_figure(figure, path)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=int, default=10, help="run time per point")
    add_out_argument(parser)
    args = parser.parse_args()
    results: list[Row] = []
    with tempfile.TemporaryDirectory() as root:
        for name, server, status in each_server(Path(root)):
            measure(name, server.port, status, args.seconds, results)
    publish(
        args.out,
        "results",
        results,
        f"rpl on {interpreter()}.\n\n{table(results)}\n",
        plot,
        png="tps",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
