"""What the benchmarks share, written once: the machine's facts, sysbench, the servers they
start (rpl's builds and MariaDB), mariadb-binlog and the codec as yardsticks, and writing a
report (JSON, Markdown, a plot).

Not a benchmark: the scripts beside it import it (``python bench/<script>.py`` puts this
folder first on ``sys.path``). The source + replica pairs the replication benchmarks share
are in ``pairs.py``, the rpl group and the Galera cluster of the group benchmarks in
``clusters.py``.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.machinery
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import pymysql

from rpl.core.binlog.logfile import read_events
from rpl.core.testing.process import ServerProcess, free_port

ROOT = Path(__file__).resolve().parents[1]
"""The repository."""
OUT = ROOT / "docs" / "bench"
"""Where the reports go unless ``--out`` says otherwise."""
SOURCE = ROOT / "core" / "src"
"""rpl-core's sources: the pure Python build, on ``PYTHONPATH``."""
MB = 1024 * 1024
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")

T = TypeVar("T")


class BenchFailure(RuntimeError):
    """A server, a tool or a check failed: the run's figures would mean nothing."""


# ---------------------------------------------------------------- the machine
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


def installed_build() -> str:
    """Which build of rpl-core is installed: ``compiled`` (mypyc) or ``pure``."""
    import rpl.core.sql.parser as probe

    compiled = (probe.__file__ or "").endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))
    return "compiled" if compiled else "pure"


def cpu_model() -> str:
    """The CPU's model name (/proc/cpuinfo), for the reports' machine facts."""
    cpuinfo = Path("/proc/cpuinfo")
    lines = cpuinfo.read_text().splitlines() if cpuinfo.exists() else []
    return next(
        (line.split(":", 1)[1].strip() for line in lines if line.startswith("model name")),
        platform.processor(),
    )


def machine_line() -> str:
    """The machine, in one line of a report: architecture, CPUs, Python, kernel."""
    return (
        f"{platform.machine()}, {os.cpu_count()} CPUs ({cpu_model()}), Python "
        f"{platform.python_version()} ({interpreter()}), {platform.system()} "
        f"{platform.release()}"
    )


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (all its threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


# ---------------------------------------------------------------- sysbench
class SysbenchRun(NamedTuple):
    """What a sysbench run printed: transactions, their rate, the 95th percentile latency."""

    transactions: int
    tps: float
    p95_ms: float


def sysbench_command(port: int, workload: str, phase: str, *extra: str) -> list[str]:
    """The command line of one sysbench phase (prepare, run, cleanup) against
    127.0.0.1:``port``, database ``sbtest``, 4 tables of 10000 rows unless ``extra`` says
    otherwise.
    """
    return [
        "sysbench",
        workload,
        "--db-driver=mysql",
        "--mysql-host=127.0.0.1",
        f"--mysql-port={port}",
        "--mysql-user=root",
        "--mysql-db=sbtest",
        "--tables=4",
        "--table-size=10000",
        "--db-ps-mode=disable",
        *extra,
        phase,
    ]


def sysbench(port: int, workload: str, phase: str, *extra: str) -> str:
    """One sysbench phase (:func:`sysbench_command`), waited for; its output."""
    done = subprocess.run(
        sysbench_command(port, workload, phase, *extra), capture_output=True, text=True
    )
    if done.returncode != 0:
        raise RuntimeError(f"sysbench {workload} {phase}: {done.stdout[-1500:]}{done.stderr}")
    return done.stdout


def sysbench_result(out: str) -> SysbenchRun:
    """The figures of a sysbench run's output."""
    found = re.search(r"transactions:\s+(\d+)\s+\(([\d.]+) per sec", out)
    p95 = re.search(r"95th percentile:\s+([\d.]+)", out)
    if found is None or p95 is None:
        raise RuntimeError(f"sysbench output not understood:\n{out[-1500:]}")
    return SysbenchRun(int(found[1]), float(found[2]), float(p95[1]))


# ---------------------------------------------------------------- servers
POOL = "--thread-handling=pool-of-threads"
ROW = "--binlog-format=ROW"
"""Every side-by-side run logs rows on both sides (the same work): rpl's default, said
explicitly; MariaDB's default is MIXED."""
STATEMENT = "--binlog-format=STATEMENT"
PER_CONNECTION = "rpl thread per connection"
"""The installed build with one thread per connection, beside ``rpl`` (the pool)."""
PURE = "rpl pure Python"
"""The pure build's name in the results (with the pool), beside ``rpl`` (the installed,
compiled build)."""
RPL_STATEMENT = "rpl STATEMENT"
"""``rpl`` (installed build, the pool) logging statements (``--binlog-format=STATEMENT``),
beside ``rpl`` logging rows: what ROW costs rpl."""


def rpl_builds(statement: bool = False) -> list[tuple[str, dict[str, str], list[str]]]:
    """(name, environment, options) of each rpl server to measure, all logging rows: the
    installed build with thread_handling=pool-of-threads as ``rpl``, with ``statement``
    the same logging statements (:data:`RPL_STATEMENT`), the same with one thread per
    connection, and when the installed build is compiled, the pure Python source with
    the pool.
    """
    builds: list[tuple[str, dict[str, str], list[str]]] = [("rpl", {}, [POOL, ROW])]
    if statement:
        builds.append((RPL_STATEMENT, {}, [POOL, STATEMENT]))
    builds.append((PER_CONNECTION, {}, [ROW]))
    if installed_build() == "compiled":
        builds.append((PURE, {"PYTHONPATH": str(SOURCE)}, [POOL, ROW]))
    return builds


def binlog_bytes(port: int) -> int:
    """The sizes of the server's binlog files summed (SHOW BINARY LOGS: the same on rpl
    and MariaDB); the growth across a run over its transactions is the bytes each logged.
    """
    connection = pymysql.connect(host="127.0.0.1", port=port, user="root")
    try:
        with connection.cursor() as cursor:
            cursor.execute("SHOW BINARY LOGS")
            return sum(int(row[1]) for row in cursor.fetchall())
    finally:
        connection.close()


def per_transaction(grown: int, transactions: int) -> float | None:
    """Binlog bytes per transaction (None when the run committed none)."""
    return grown / transactions if transactions else None


def ratio(a: float | None, b: float | None) -> float | None:
    """A / b, or None when either is missing or b is 0."""
    return None if a is None or not b else float(a) / float(b)


def round_ratios(runs: Sequence[dict[str, Any]], a: str, b: str, **cell: Any) -> list[float]:
    """Server ``a``'s tps over server ``b``'s, round by round (the runs seconds apart), in
    the cell whose runs have the values of ``cell``.
    """

    def by_round(server: str) -> dict[int, float]:
        return {
            r["round"]: float(r["tps"])
            for r in runs
            if r["server"] == server and all(r[k] == v for k, v in cell.items())
        }

    first, second = by_round(a), by_round(b)
    return [first[n] / second[n] for n in sorted(first) if second.get(n)]


def median_cells(
    runs: Sequence[dict[str, Any]], keys: Sequence[str], by: str = "tps"
) -> list[dict[str, Any]]:
    """One row per cell (the runs with the same ``keys``): its median run by ``by`` (the
    lower middle one for an even count), with every run's value in round order
    (``<by>_runs``), the lowest and the highest (``<by>_min``, ``<by>_max``).
    """
    cells: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for run in runs:
        cells.setdefault(tuple(run[k] for k in keys), []).append(run)
    rows = []
    for cell in cells.values():
        values = [run[by] for run in cell]
        middle = statistics.median_low(values)
        median = next(run for run in cell if run[by] == middle)
        rows.append(
            {**median, f"{by}_runs": values, f"{by}_min": min(values), f"{by}_max": max(values)}
        )
    return rows


class MariaDB:
    """A throw-away MariaDB server in a temporary directory."""

    def __init__(
        self, root: Path, name: str = "mariadb", server_id: int = 1, options: Sequence[str] = ()
    ) -> None:
        self.datadir = root / name
        self.port = free_port()
        self.socket = root / f"{name}.sock"
        self.server_id = server_id
        self.options = list(options)
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, install: bool = True) -> MariaDB:
        """Initialise the data directory (unless ``install`` is off: a Galera joiner's
        comes from its donor), start the server, wait until it answers.
        """
        if install:
            subprocess.run(
                [
                    shutil.which("mariadb-install-db") or "mysql_install_db",
                    f"--datadir={self.datadir}",
                    "--user=root",
                    "--auth-root-authentication-method=normal",
                ],
                check=True,
                capture_output=True,
            )
        server = shutil.which("mariadbd") or "/usr/sbin/mariadbd"
        self.process = subprocess.Popen(
            [
                server,
                "--no-defaults",
                f"--datadir={self.datadir}",
                f"--port={self.port}",
                "--bind-address=127.0.0.1",
                f"--socket={self.socket}",
                "--user=root",
                f"--log-bin={self.datadir}/binlog",
                f"--server-id={self.server_id}",
                "--sync-binlog=1",
                "--innodb-flush-log-at-trx-commit=1",
                "--max-connections=500",
                f"--pid-file={self.datadir}/mariadb.pid",
                "--skip-name-resolve=0",
                ROW,
                *self.options,
            ],
            stdout=subprocess.DEVNULL,
            stderr=(self.datadir.parent / f"{self.datadir.name}.err").open("wb"),
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                pymysql.connect(host="127.0.0.1", port=self.port, user="root").close()
                return self
            except pymysql.MySQLError:
                time.sleep(0.2)
        raise TimeoutError("MariaDB did not start")

    def status(self) -> dict[str, int]:
        """Binlog commits, binlog groups and fsyncs so far."""
        connection = pymysql.connect(host="127.0.0.1", port=self.port, user="root")
        with connection.cursor() as cursor:
            cursor.execute("SHOW GLOBAL STATUS")
            rows = dict(cursor.fetchall())
        connection.close()
        return {
            "commits": int(rows.get("Binlog_commits", 0)),
            "groups": int(rows.get("Binlog_group_commits", 0)),
            "fsyncs": int(rows.get("Innodb_data_fsyncs", 0))
            + int(rows.get("Binlog_group_commits", 0)),
        }

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(60)


def rpl_status(server: ServerProcess) -> dict[str, int]:
    """Binlog commits, binlog groups and fsyncs so far, as :meth:`MariaDB.status`."""
    rows = dict(server.query("SHOW GLOBAL STATUS"))
    return {
        "commits": int(rows["Binlog_commits"]),
        "groups": int(rows["Binlog_group_commits"]),
        "fsyncs": int(rows["Rpl_binlog_fsyncs"]),
    }


Server = ServerProcess | MariaDB


Measured = tuple[str, Server, Callable[[], dict[str, int]]]
"""(name, server, its status counters)."""


def _servers(root: Path, statement: bool, wanted: Sequence[str] | None) -> list[Measured]:
    """Each rpl build, then MariaDB (of ``wanted``, when given), not started yet."""
    servers: list[Measured] = []
    for name, env, options in rpl_builds(statement):
        rpl = ServerProcess(root / name.replace(" ", "_"), options=options, env=env)
        servers.append((name, rpl, functools.partial(rpl_status, rpl)))
    mariadb = MariaDB(root)
    servers.append(("MariaDB", mariadb, mariadb.status))
    return [s for s in servers if wanted is None or s[0] in wanted]


def _start(name: str, server: Server) -> None:
    """Start ``server`` with an empty ``sbtest`` database."""
    server.start()
    connection = pymysql.connect(host="127.0.0.1", port=server.port, user="root")
    connection.cursor().execute("CREATE DATABASE sbtest")
    connection.close()
    print(f"{name}: started on port {server.port}", flush=True)


def each_server(root: Path) -> Iterator[Measured]:
    """(name, server, its status counters) for each rpl build, then MariaDB: each started
    under ``root`` with an empty ``sbtest`` database, and stopped before the next starts.
    """
    for name, server, status in _servers(root, False, None):
        _start(name, server)
        try:
            yield name, server, status
        finally:
            server.stop()


@contextlib.contextmanager
def all_servers(
    root: Path, statement: bool = True, wanted: Sequence[str] | None = None
) -> Iterator[list[Measured]]:
    """Every rpl build (with ``statement``, :data:`RPL_STATEMENT` too) and MariaDB, or
    those of ``wanted``, started at once under ``root``, each with an empty ``sbtest``
    database, so the measurements can take turns (a cell's servers run seconds apart, and
    the machine's drift stays out of their ratios); all stopped after the block.
    """
    servers = _servers(root, statement, wanted)
    started: list[Server] = []
    try:
        for name, server, _ in servers:
            _start(name, server)
            started.append(server)
        yield servers
    finally:
        for server in started:
            server.stop()


# ---------------------------------------------------------------- binlog readers
def mariadb_binlog_tool() -> str:
    """mariadb-binlog (or mysqlbinlog); SystemExit when neither is installed."""
    tool = shutil.which("mariadb-binlog") or shutil.which("mysqlbinlog")
    if tool is None:
        raise SystemExit("mariadb-binlog is not installed (tools/system-packages installs it)")
    return tool


def mariadb_binlog_command(tool: str, files: Sequence[Path]) -> list[str]:
    return [tool, "--verify-binlog-checksum", *map(str, files)]


def mariadb_binlog(tool: str, files: Sequence[Path]) -> float:
    """One ``mariadb-binlog`` run over ``files``, its output to /dev/null; the seconds."""
    started = time.perf_counter()
    done = subprocess.run(
        mariadb_binlog_command(tool, files), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    seconds = time.perf_counter() - started
    errors = done.stderr.decode(errors="replace")
    if done.returncode != 0 or "ERROR" in errors:
        raise BenchFailure(f"mariadb-binlog exited {done.returncode}: {errors[-2000:]}")
    return seconds


def codec_pass(files: Sequence[Path]) -> tuple[float, int]:
    """One pass of the project's codec (``read_events``) over ``files``; (seconds, events)."""
    started = time.perf_counter()
    events = 0
    for path in files:
        for _ in read_events(path, check_log_pos=False):
            events += 1
    return time.perf_counter() - started, events


# ---------------------------------------------------------------- reports
def fmt(value: Any, spec: str = ".2f") -> str:
    """``value`` formatted, or ``n/a`` for None."""
    return "n/a" if value is None else format(value, spec)


def add_out_argument(parser: Any) -> None:
    """``--out DIR``: where the report goes (docs/bench)."""
    parser.add_argument(
        "--out", type=Path, default=OUT, help="where the report goes (default docs/bench)"
    )


def int_list(text: str) -> list[int]:
    """``1,4,16`` -> [1, 4, 16] (an argparse type)."""
    return [int(part) for part in text.split(",") if part.strip()]


def name_list(text: str) -> list[str]:
    """``a, b`` -> ["a", "b"] (an argparse type)."""
    return [part.strip() for part in text.split(",") if part.strip()]


def add_list_argument(
    parser: Any, option: str, default: Sequence[Any], what: str, kind: Callable[[str], Any]
) -> None:
    """``option A,B``: a comma-separated list (``kind``: :func:`int_list` or
    :func:`name_list`) of ``what``, all of ``default`` unless given.
    """
    parser.add_argument(
        option,
        default=list(default),
        type=kind,
        help=f"{what}, comma-separated (default {','.join(map(str, default))})",
    )


def add_servers_argument(parser: Any, servers: Sequence[str]) -> None:
    """``--servers A,B``: which of ``servers`` to run (all by default), as a list."""
    add_list_argument(parser, "--servers", servers, "which to run", name_list)


def pyplot() -> Any:
    """matplotlib.pyplot, drawing to files (no display)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(figure: Any, path: Path) -> None:
    figure.tight_layout()
    figure.savefig(path, dpi=110)


def publish(
    out: Path,
    name: str,
    results: T,
    report: str,
    plot: Callable[[T, Path], None],
    png: str | None = None,
) -> None:
    """``results`` to ``out/<name>.json``, ``report`` to ``out/<name>.md``, the plot to
    ``out/<png or name>.png``; the report printed.
    """
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.json").write_text(json.dumps(results, indent=2) + "\n")
    (out / f"{name}.md").write_text(report)
    plot(results, out / f"{png or name}.png")
    print(report)
