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
import functools
import importlib.machinery
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pymysql

from rpl.core.testing.process import ServerProcess, free_port

WORKLOADS = ("oltp_insert", "oltp_point_select", "oltp_write_only")
THREADS = (1, 4, 16, 32)
POOL = "--thread-handling=pool-of-threads"
PER_CONNECTION = "rpl thread per connection"
"""The installed build with one thread per connection, beside ``rpl`` (the pool)."""
PURE = "rpl pure Python"
"""The pure build's name in the results (with the pool), beside ``rpl`` (the installed,
compiled build)."""
SOURCE = Path(__file__).resolve().parents[2] / "core" / "src"


def installed_build() -> str:
    """Which build of rpl-core is installed: ``compiled`` (mypyc) or ``pure``."""
    import rpl.core.sql.parser as probe
    compiled = (probe.__file__ or "").endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))
    return "compiled" if compiled else "pure"


def interpreter() -> str:
    """The interpreter the rpl servers run on: its executable and whether libpython is a
    shared library. rpl ran ~20% faster on Debian's /usr/bin/python3.11 (3.11.2; libpython
    linked into the executable, profile-guided and link-time optimised) than on pyenv's
    3.11.7, configured with ``--enable-shared`` alone (docs/server.md, "The
    interpreter"), so a figure names its interpreter.
    """
    with open("/proc/self/maps", encoding="ascii", errors="replace") as maps:
        shared = any("libpython" in line for line in maps)
    executable = os.path.realpath(getattr(sys, "_base_executable", sys.executable))
    return f"{executable}, libpython {'shared' if shared else 'linked in'}"


def rpl_builds() -> list[tuple[str, dict[str, str], list[str]]]:
    """(name, environment, options) of each rpl server to measure: the installed build
    with thread_handling=pool-of-threads as ``rpl``, the same with one thread per
    connection, and when the installed build is compiled, the pure Python source with
    the pool."""
    builds = [("rpl", {}, [POOL]), (PER_CONNECTION, {}, [])]
    if installed_build() == "compiled":
        builds.append((PURE, {"PYTHONPATH": str(SOURCE)}, [POOL]))
    return builds


class MariaDB:
    """A throw-away MariaDB server in a temporary directory."""

    def __init__(self, root: Path, name: str = "mariadb", server_id: int = 1,
                 options: Sequence[str] = ()) -> None:
        self.datadir = root / name
        self.port = free_port()
        self.socket = root / f"{name}.sock"
        self.server_id = server_id
        self.options = list(options)
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> MariaDB:
        install = shutil.which("mariadb-install-db") or "mysql_install_db"
        subprocess.run([install, f"--datadir={self.datadir}", "--user=root",
                        "--auth-root-authentication-method=normal"],
                       check=True, capture_output=True)
        server = shutil.which("mariadbd") or "/usr/sbin/mariadbd"
        self.process = subprocess.Popen(
            [server, "--no-defaults", f"--datadir={self.datadir}", f"--port={self.port}",
             "--bind-address=127.0.0.1", f"--socket={self.socket}", "--user=root",
             f"--log-bin={self.datadir}/binlog", f"--server-id={self.server_id}",
             "--sync-binlog=1", "--innodb-flush-log-at-trx-commit=1", "--max-connections=500",
             f"--pid-file={self.datadir}/mariadb.pid", "--skip-name-resolve=0", *self.options],
            stdout=subprocess.DEVNULL,
            stderr=(self.datadir.parent / f"{self.datadir.name}.err").open("wb"))
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                pymysql.connect(host="127.0.0.1", port=self.port, user="root").close()
                return self
            except pymysql.MySQLError:
                time.sleep(0.2)
        raise TimeoutError("MariaDB did not start")

    def status(self) -> dict[str, int]:
        connection = pymysql.connect(host="127.0.0.1", port=self.port, user="root")
        with connection.cursor() as cursor:
            cursor.execute("SHOW GLOBAL STATUS")
            rows = dict(cursor.fetchall())
        connection.close()
        return {"commits": int(rows.get("Binlog_commits", 0)),
                "groups": int(rows.get("Binlog_group_commits", 0)),
                "fsyncs": int(rows.get("Innodb_data_fsyncs", 0))
                + int(rows.get("Binlog_group_commits", 0))}

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(60)


def rpl_status(server: ServerProcess) -> dict[str, int]:
    rows = dict(server.query("SHOW GLOBAL STATUS"))
    return {"commits": int(rows["Binlog_commits"]), "groups": int(rows["Binlog_group_commits"]),
            "fsyncs": int(rows["Rpl_binlog_fsyncs"])}


def sysbench(port: int, workload: str, phase: str, *extra: str) -> str:
    command = ["sysbench", workload, "--db-driver=mysql", "--mysql-host=127.0.0.1",
               f"--mysql-port={port}", "--mysql-user=root", "--mysql-db=sbtest",
               "--tables=4", "--table-size=10000", "--db-ps-mode=disable", *extra, phase]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"sysbench {workload} {phase}: {done.stdout[-1500:]}{done.stderr}")
    return done.stdout


def measure(name: str, port: int, status: Callable[[], dict[str, int]], seconds: int,
            results: list[dict[str, object]]) -> None:
    for workload in WORKLOADS:
        sysbench(port, workload, "prepare")
        for threads in THREADS:
            before = status()
            out = sysbench(port, workload, "run", f"--threads={threads}", f"--time={seconds}",
                           "--percentile=95")
            after = status()
            tps = float(re.search(r"transactions:\s+\d+\s+\(([\d.]+) per sec", out)[1])  # type: ignore[index]
            p95 = float(re.search(r"95th percentile:\s+([\d.]+)", out)[1])  # type: ignore[index]
            commits = after["commits"] - before["commits"]
            groups = after["groups"] - before["groups"]
            fsyncs = after["fsyncs"] - before["fsyncs"]
            row = {"server": name, "workload": workload, "threads": threads, "tps": tps,
                   "p95_ms": p95, "group_size": commits / groups if groups else 0.0,
                   "fsyncs_per_trx": fsyncs / commits if commits else 0.0}
            results.append(row)
            print(f"  {name:15} {workload:18} {threads:3} threads: {tps:9.1f} tps, "
                  f"p95 {p95:7.2f} ms, group {row['group_size']:.2f}, "
                  f"fsyncs/trx {row['fsyncs_per_trx']:.2f}", flush=True)
        sysbench(port, workload, "cleanup")


def table(results: list[dict[str, object]]) -> str:
    extra = [name for name, _, _ in rpl_builds()[1:]
             if any(r["server"] == name for r in results)]
    lines = ["| workload | threads | rpl tps | MariaDB tps | tps ratio | "
             + "".join(f"{name} tps | ratio | " for name in extra)
             + "rpl p95 ms | MariaDB p95 ms | p95 ratio | rpl group | rpl fsyncs/trx | "
             "MariaDB group | MariaDB fsyncs/trx |", "|" + "---|" * (12 + 2 * len(extra))]
    index = {(r["server"], r["workload"], r["threads"]): r for r in results}
    for workload in WORKLOADS:
        for threads in THREADS:
            a, b = index[("rpl", workload, threads)], index[("MariaDB", workload, threads)]
            mariadb_tps = float(b["tps"])  # type: ignore[arg-type]
            others = [index[(name, workload, threads)] for name in extra]
            lines.append(
                f"| {workload} | {threads} | {a['tps']:.0f} | {b['tps']:.0f} | "
                f"{float(a['tps']) / mariadb_tps:.2f} | "  # type: ignore[arg-type]
                + "".join(f"{o['tps']:.0f} | {float(o['tps']) / mariadb_tps:.2f} | "  # type: ignore[arg-type]
                          for o in others)
                + f"{a['p95_ms']:.2f} | {b['p95_ms']:.2f} | "
                f"{float(a['p95_ms']) / max(float(b['p95_ms']), 0.01):.2f} | "  # type: ignore[arg-type]
                f"{a['group_size']:.2f} | {a['fsyncs_per_trx']:.2f} | {b['group_size']:.2f} | "
                f"{b['fsyncs_per_trx']:.2f} |")
    return "\n".join(lines)


def plot(results: list[dict[str, object]], path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    figure, axes = plt.subplots(1, len(WORKLOADS), figsize=(5 * len(WORKLOADS), 4))
    for axis, workload in zip(axes, WORKLOADS, strict=True):
        for server, style in (("rpl", "o-"), (PER_CONNECTION, "v-."), (PURE, "^:"),
                              ("MariaDB", "s--")):
            points = [r for r in results if r["server"] == server and r["workload"] == workload]
            if not points:
                continue
            axis.plot([p["threads"] for p in points], [p["tps"] for p in points], style,
                      label=server)
        axis.set_title(workload)
        axis.set_xscale("log", base=2)
        axis.set_xlabel("threads")
        axis.set_ylabel("transactions/s")
        axis.legend()
    figure.suptitle("sysbench, durable commits (sync_binlog=1), loopback, same machine")
    figure.tight_layout()
    figure.savefig(path, dpi=110)


Server = ServerProcess | MariaDB


def each_server(root: Path) -> Iterator[tuple[str, Server, Callable[[], dict[str, int]]]]:
    """(name, server, its status counters) for each rpl build, then MariaDB: each started
    under ``root`` with an empty ``sbtest`` database, and stopped before the next starts."""
    servers: list[tuple[str, Server, Callable[[], dict[str, int]]]] = []
    for name, env, options in rpl_builds():
        rpl = ServerProcess(root / name.replace(" ", "_"), options=options, env=env)
        servers.append((name, rpl, functools.partial(rpl_status, rpl)))
    mariadb = MariaDB(root)
    servers.append(("MariaDB", mariadb, mariadb.status))
    for name, server, status in servers:
        server.start()
        try:
            pymysql.connect(host="127.0.0.1", port=server.port, user="root").cursor().execute(
                "CREATE DATABASE sbtest")
            print(f"{name}:", flush=True)
            yield name, server, status
        finally:
            server.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=int, default=10, help="run time per point")
    parser.add_argument("--out", type=Path, default=Path("docs/bench"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    results: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory() as root:
        for name, server, status in each_server(Path(root)):
            measure(name, server.port, status, args.seconds, results)
    (args.out / "results.json").write_text(json.dumps(results, indent=2))
    text = table(results)
    (args.out / "results.md").write_text(f"rpl on {interpreter()}.\n\n{text}\n")
    plot(results, args.out / "tps.png")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
