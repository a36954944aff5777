"""Benchmark: rpl against MariaDB 10.11 with sysbench, side by side in one run.

Not a test: ``tox -e bench`` runs it. Both servers run on this machine on loopback
with a durable commit (rpl: sync_binlog=1; MariaDB: sync_binlog=1,
innodb_flush_log_at_trx_commit=1, log_bin on), both logging rows (binlog_format=ROW, the
same work; rpl's default, passed explicitly). For each workload and thread count it
records transactions/s and p95 latency, the rpl/MariaDB ratios, each server's average
binlog group size and fsyncs per transaction, and the bytes its binlog grew by per
transaction sysbench reported (SHOW BINARY LOGS, summed, before and after the run), then
writes a Markdown table, a JSON file and a plot.

``rpl STATEMENT`` is ``rpl`` logging statements (``--binlog-format=STATEMENT``): the
ROW/STATEMENT column is what logging rows costs rpl.

All the servers run at once and take turns: for each workload and thread count, each
server runs once per round (``--rounds``), seconds after the previous one, so the
machine's drift (a shared two-CPU machine) stays out of the ratios as far as it can. A
cell shows its median run by tps.

``--ps-modes`` are sysbench's ``--db-ps-mode`` values to run each cell in: ``auto``
(sysbench's default: the workloads' statements are prepared and executed through the
binary protocol, where the Lua script prepares them) and ``disable`` (every statement is
sent as text), both by default, so one run compares the servers with prepared statements
and without. oltp_insert's script prepares nothing (its INSERTs are text in every mode),
so it runs once, in the first mode.

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
from pathlib import Path
from typing import Any

from common import (
    PER_CONNECTION,
    PURE,
    RPL_STATEMENT,
    Measured,
    add_list_argument,
    add_out_argument,
    add_servers_argument,
    all_servers,
    binlog_bytes,
    fmt,
    installed_build,
    int_list,
    interpreter,
    machine_line,
    median_cells,
    name_list,
    per_transaction,
    publish,
    pyplot,
    ratio,
    round_ratios,
    rpl_builds,
    save_figure,
    sysbench,
    sysbench_result,
)

WORKLOADS = ("oltp_insert", "oltp_point_select", "oltp_read_write", "oltp_write_only")
THREADS = (1, 4, 16, 32)
PS_MODES = ("auto", "disable")
UNPREPARED = frozenset({"oltp_insert"})
"""Workloads whose Lua script prepares no statement: every ``--db-ps-mode`` is the same work."""
TARGET = ("oltp_insert", 16)
PREPARED_TARGETS = (("oltp_insert", 16), ("oltp_point_select", 16))
"""Cells where rpl/MariaDB >= 1.0 is the target with prepared statements (``auto``)."""
CELL = ("server", "workload", "threads", "ps_mode")
Row = dict[str, Any]
"""One measured point: server, workload, threads, round and the figures."""


def measure_point(
    server: Measured, workload: str, threads: int, seconds: int, round_: int, ps_mode: str
) -> Row:
    """One sysbench run against one server, with its binlog's growth."""
    name, process, status = server
    before, size = status(), binlog_bytes(process.port)
    out = sysbench(
        process.port,
        workload,
        "run",
        f"--threads={threads}",
        f"--time={seconds}",
        "--percentile=95",
        f"--db-ps-mode={ps_mode}",
    )
    after, grown = status(), binlog_bytes(process.port) - size
    transactions, tps, p95 = sysbench_result(out)
    commits = after["commits"] - before["commits"]
    groups = after["groups"] - before["groups"]
    fsyncs = after["fsyncs"] - before["fsyncs"]
    row = {
        "server": name,
        "workload": workload,
        "threads": threads,
        "ps_mode": ps_mode,
        "round": round_,
        "tps": tps,
        "p95_ms": p95,
        "transactions": transactions,
        "binlog_bytes": grown,
        "binlog_bytes_per_trx": per_transaction(grown, transactions),
        "group_size": commits / groups if groups else 0.0,
        "fsyncs_per_trx": fsyncs / commits if commits else 0.0,
    }
    print(
        f"  {name:26} {workload:18} {threads:3} threads, {ps_mode:7}, round {round_}: "
        f"{tps:9.1f} tps, "
        f"p95 {p95:7.2f} ms, group {row['group_size']:.2f}, "
        f"fsyncs/trx {row['fsyncs_per_trx']:.2f}, binlog B/trx "
        f"{fmt(row['binlog_bytes_per_trx'], '.0f')}",
        flush=True,
    )
    return row


def modes_of(workload: str, ps_modes: list[str]) -> list[str]:
    """The ``--db-ps-mode`` values ``workload`` runs in: one when it prepares nothing."""
    return ps_modes[:1] if workload in UNPREPARED else ps_modes


def measure(
    servers: list[Measured],
    workloads: list[str],
    threads: list[int],
    seconds: int,
    rounds: int,
    ps_modes: list[str],
) -> list[Row]:
    """Every cell, each server taking its turn in every round."""
    runs: list[Row] = []
    for workload in workloads:
        for _, process, _ in servers:
            sysbench(process.port, workload, "prepare")
        for count in threads:
            for mode in modes_of(workload, ps_modes):
                for round_ in range(1, rounds + 1):
                    for server in servers:
                        runs.append(measure_point(server, workload, count, seconds, round_, mode))
        for _, process, _ in servers:
            sysbench(process.port, workload, "cleanup")
    return runs


def find(
    results: dict[str, Any], server: str, workload: str, threads: int, ps_mode: str
) -> Row | None:
    """The median run of one cell, or None when it was not measured."""
    key = (server, workload, threads, ps_mode)
    return next((r for r in results["cells"] if tuple(r[k] for k in CELL) == key), None)


def tps(row: Row | None) -> float | None:
    return None if row is None else float(row["tps"])


def p95_ratio(a: Row | None, b: Row | None) -> float | None:
    if a is None or b is None:
        return None
    return ratio(a["p95_ms"], max(float(b["p95_ms"]), 0.01))


def summarise(results: dict[str, Any]) -> None:
    """The cells (median runs), each with its ratios, and the targets, into ``results``."""
    results["cells"] = median_cells(results["runs"], CELL)
    for cell in results["cells"]:
        where = (cell["workload"], cell["threads"], cell["ps_mode"])
        cell["over_mariadb"] = ratio(cell["tps"], tps(find(results, "MariaDB", *where)))
        if cell["server"] == "rpl":
            statement = find(results, RPL_STATEMENT, *where)
            cell["row_over_statement"] = ratio(cell["tps"], tps(statement))
    mode = results["parameters"]["ps_modes"][0]
    wanted = [
        ("rpl ROW/STATEMENT >= 0.95", TARGET, mode, RPL_STATEMENT, "row_over_statement", 0.95),
        ("rpl/MariaDB >= 1.0", TARGET, mode, "MariaDB", "over_mariadb", 1.0),
    ] + [
        ("rpl/MariaDB >= 1.0, prepared", cell, "auto", "MariaDB", "over_mariadb", 1.0)
        for cell in PREPARED_TARGETS
        if cell != TARGET and "auto" in results["parameters"]["ps_modes"]
    ]
    results["targets"] = [
        target(results, what, cell, ps_mode, other, key, floor)
        for what, cell, ps_mode, other, key, floor in wanted
    ]


def target(
    results: dict[str, Any],
    what: str,
    cell: tuple[str, int],
    ps_mode: str,
    other: str,
    key: str,
    floor: float,
) -> dict[str, Any]:
    """One target: rpl's ratio ``key`` in ``cell``, whether it reaches ``floor``, and the
    ratio of rpl's tps to ``other``'s round by round.
    """
    rpl = find(results, "rpl", *cell, ps_mode)
    value = None if rpl is None else rpl.get(key)
    where = {"workload": cell[0], "threads": cell[1], "ps_mode": ps_mode}
    return {
        "what": what,
        "cell": f"{cell[0]}, {cell[1]} threads, --db-ps-mode={ps_mode}",
        "ratio": value,
        "met": None if value is None else value >= floor,
        "round_ratios": round_ratios(results["runs"], "rpl", other, **where),
    }


def measured_cells(parameters: dict[str, Any]) -> list[tuple[str, int, str]]:
    """(workload, threads, ps mode) of every cell the run measured, in run order."""
    return [
        (workload, threads, mode)
        for workload in parameters["workloads"]
        for threads in parameters["threads"]
        for mode in modes_of(workload, parameters["ps_modes"])
    ]


def table(results: dict[str, Any]) -> str:
    servers = results["parameters"]["servers"]
    others = [s for s in servers if s != "MariaDB"]
    logged = [s for s in ("rpl", RPL_STATEMENT, "MariaDB") if s in servers]
    head = (
        ["workload", "threads", "ps mode"]
        + [f"{s} tps" for s in servers]
        + [f"{s}/MariaDB" for s in others]
        + ["rpl ROW/STATEMENT", "rpl p95 ms", "MariaDB p95 ms", "p95 ratio"]
        + [f"{s} B/trx" for s in logged]
        + ["rpl group", "rpl fsyncs/trx", "MariaDB group", "MariaDB fsyncs/trx"]
    )
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    targets = {(cell, "auto") for cell in PREPARED_TARGETS} | {(TARGET, "auto")}
    for workload, threads, mode in measured_cells(results["parameters"]):
        rows = {s: find(results, s, workload, threads, mode) for s in servers}
        a, b = rows.get("rpl"), rows.get("MariaDB")

        def get(row: Row | None, key: str, spec: str = ".2f") -> str:
            return fmt(None if row is None else row.get(key), spec)

        cells = (
            [workload, str(threads), mode]
            + [get(rows[s], "tps", ".0f") for s in servers]
            + [get(rows[s], "over_mariadb") for s in others]
            + [get(a, "row_over_statement"), get(a, "p95_ms"), get(b, "p95_ms")]
            + [fmt(p95_ratio(a, b))]
            + [get(rows[s], "binlog_bytes_per_trx", ".0f") for s in logged]
            + [get(a, "group_size"), get(a, "fsyncs_per_trx")]
            + [get(b, "group_size"), get(b, "fsyncs_per_trx")]
        )
        if ((workload, threads), mode) in targets:
            cells = [f"**{c}**" for c in cells]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def report(results: dict[str, Any]) -> str:
    p = results["parameters"]
    targets = results["targets"]
    lines = [
        "# sysbench: rpl against MariaDB 10.11",
        "",
        f"On {p['machine']}; rpl on {interpreter()}, {p['rpl_core_build']} build of "
        f"rpl-core. Both log rows (binlog_format=ROW); `{RPL_STATEMENT}` is `rpl` "
        "(pool-of-threads) with `--binlog-format=STATEMENT`. sync_binlog=1 everywhere, "
        "MariaDB innodb_flush_log_at_trx_commit=1. "
        f"{', '.join(p['workloads'])} at {', '.join(map(str, p['threads']))} threads, "
        f"{p['rounds']} run(s) of {p['seconds']} s per server and cell "
        f"(sysbench --db-ps-mode {' and '.join(p['ps_modes'])}: `auto` prepares the "
        "statements, `disable` sends them as text; oltp_insert prepares nothing and runs "
        "once), all the servers "
        "running at once and taking turns (seconds apart); a cell is its median run by "
        "tps. *X/MariaDB* and *rpl ROW/STATEMENT* divide median tps; *B/trx*: the "
        "binlog's growth (SHOW BINARY LOGS sizes summed) during the run over the "
        "transactions sysbench reported; *group*: Binlog_commits / Binlog_group_commits.",
        "",
        "Targets: "
        + "; ".join(
            f"{t['what']} at {t['cell']}: **{fmt(t['ratio'])}** "
            f"({'met' if t['met'] else 'not met' if t['met'] is not None else 'not measured'}; "
            f"round by round {', '.join(f'{r:.2f}' for r in t['round_ratios']) or 'n/a'})"
            for t in targets
        )
        + ".",
        "",
        table(results),
        "",
        "![tps against threads](tps.png)",
        "",
    ]
    return "\n".join(lines)


STYLES = {
    "rpl": ("o-", "tab:blue"),
    RPL_STATEMENT: ("D-", "tab:purple"),
    PER_CONNECTION: ("v-.", "tab:green"),
    PURE: ("^:", "tab:red"),
    "MariaDB": ("s--", "tab:orange"),
}
"""Each server's line and colour (rpl, rpl STATEMENT and MariaDB as in the replication
and semisync plots)."""


def plot(results: dict[str, Any], path: Path) -> None:
    """A panel per workload and ps mode: each server's median tps against threads, with
    its lowest and highest run.
    """
    p = results["parameters"]
    panels = [(w, mode) for w in p["workloads"] for mode in modes_of(w, p["ps_modes"])]
    figure, axes = pyplot().subplots(1, len(panels), figsize=(4.5 * len(panels), 4))
    axes = [axes] if len(panels) == 1 else list(axes)
    for axis, (workload, mode) in zip(axes, panels, strict=True):
        for server, (style, colour) in STYLES.items():
            points = [
                r
                for r in results["cells"]
                if (r["server"], r["workload"], r["ps_mode"]) == (server, workload, mode)
            ]
            points.sort(key=lambda r: int(r["threads"]))
            if not points:
                continue
            axis.errorbar(
                [p["threads"] for p in points],
                [p["tps"] for p in points],
                yerr=[
                    [p["tps"] - p["tps_min"] for p in points],
                    [p["tps_max"] - p["tps"] for p in points],
                ],
                fmt=style,
                color=colour,
                label=server,
                capsize=3,
            )
        axis.set_title(workload if workload in UNPREPARED else f"{workload}, {mode}")
        axis.set_xscale("log", base=2)
        axis.set_xlabel("threads")
        axis.set_ylabel("transactions/s")
        axis.legend(fontsize="small")
    figure.suptitle(
        "sysbench, durable commits (sync_binlog=1), binlog_format=ROW (and rpl STATEMENT), "
        "loopback, same machine"
    )
    save_figure(figure, path)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=int, default=10, help="run time per point")
    parser.add_argument(
        "--rounds", type=int, default=1, help="runs per server and cell (default 1)"
    )
    add_list_argument(
        parser, "--ps-modes", PS_MODES, "sysbench --db-ps-mode values (auto, disable)", name_list
    )
    add_list_argument(parser, "--workloads", WORKLOADS, "sysbench workloads", name_list)
    add_list_argument(parser, "--threads", THREADS, "sysbench thread counts", int_list)
    add_servers_argument(parser, [name for name, _, _ in rpl_builds(True)] + ["MariaDB"])
    add_out_argument(parser)
    args = parser.parse_args()
    if not args.ps_modes or set(args.ps_modes) - set(PS_MODES):
        parser.error(f"--ps-modes takes {' and/or '.join(PS_MODES)}, not {args.ps_modes}")
    with (
        tempfile.TemporaryDirectory() as root,
        all_servers(Path(root), wanted=args.servers) as servers,
    ):
        runs = measure(
            servers, args.workloads, args.threads, args.seconds, args.rounds, args.ps_modes
        )
        names = [name for name, _, _ in servers]
    results: dict[str, Any] = {
        "parameters": {
            "workloads": args.workloads,
            "threads": args.threads,
            "seconds": args.seconds,
            "rounds": args.rounds,
            "ps_modes": args.ps_modes,
            "servers": names,
            "rpl_core_build": installed_build(),
            "machine": machine_line(),
        },
        "runs": runs,
    }
    summarise(results)
    publish(args.out, "results", results, report(results), plot, png="tps")
    return 0


if __name__ == "__main__":
    sys.exit(main())
