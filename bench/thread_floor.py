"""Benchmark: how fast can a thread-per-connection CPython server answer sysbench at all?

Not a test: ``tox -e bench`` runs it. It puts rpl and MariaDB beside three *floor*
servers, in one run on this machine, all under sysbench ``oltp_insert``
(``--db-ps-mode=disable``) at 1 and 16 threads, and measures each server process's CPU
time (user + system, from /proc) per transaction.

The floors are written by hand here, on purpose minimal, and are not MySQL servers: they
speak just enough of the protocol for sysbench's run phase (the rpl handshake packet,
any login accepted, every COM_QUERY answered with OK), one thread per connection, as
rpl is built:

* ``protocol``: no work at all per statement;
* ``group commit``: each INSERT appends a record to a file through a minimal group commit
  (the first waiter writes and fsyncs what is queued; the others wait on a condition,
  wake and reply themselves, as rpl's followers do);
* ``leader replies``: the same, but the leader sends every queued OK itself and the
  connection threads go straight back to reading (no wake-up per commit).

What it shows: the floor of the threading model (how much of the CPU per transaction a
Python server spends before doing any SQL work) and so how much of rpl's cost is the
work itself. Writes docs/bench/floor.md, .json and .png.
"""

from __future__ import annotations

import argparse
import functools
import os
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from common import (
    add_out_argument,
    cpu_seconds,
    each_server,
    interpreter,
    publish,
    pyplot,
    save_figure,
    sysbench,
    sysbench_result,
)
from rpl.core.net.handshake import handshake_v10, new_scramble
from rpl.core.net.responses import ok_packet
from rpl.core.testing.process import free_port

FLOORS = ("protocol", "group commit", "leader replies")
THREADS = (1, 16)
_FRAME = struct.Struct("<I")
SERVER_STATUS_AUTOCOMMIT = 2


# -- the floor server (runs in its own process: python thread_floor.py --serve PORT MODE) --


class GroupLog:
    """A file that INSERTs append to, fsynced once per group (``leader replies``: the
    leader also sends each member's reply).
    """

    def __init__(self, path: Path, leader_replies: bool) -> None:
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self.leader_replies = leader_replies
        self.cond = threading.Condition()
        self.queue: list[tuple[bytes, Callable[[], None]]] = []
        self.queued = self.synced = 0
        self.leading = False

    def commit(self, record: bytes, reply: Callable[[], None]) -> None:
        """Queue ``record``; ``reply`` is called once it is durable (by this thread, or by
        the leader when ``leader_replies``).
        """
        with self.cond:
            self.queue.append((record, reply))
            self.queued += 1
            mine = self.queued
            if self.leader_replies and self.leading:
                return
            while self.synced < mine:
                if self.leading:
                    self.cond.wait()
                    continue
                self._lead()
        if not self.leader_replies:
            reply()

    def _lead(self) -> None:
        """Write and sync the queue until it is empty (called with ``cond`` held)."""
        self.leading = True
        while self.queue:
            batch, self.queue, upto = self.queue, [], self.queued
            self.cond.release()
            try:
                os.write(self.fd, b"".join(record for record, _ in batch))
                os.fsync(self.fd)
                if self.leader_replies:
                    for _, reply in batch:
                        reply()
            finally:
                self.cond.acquire()
            self.synced = upto
            self.cond.notify_all()
            if not self.leader_replies:
                break
        self.leading = False


def _serve_connection(sock: socket.socket, connection_id: int, log: GroupLog | None) -> None:
    stream = sock.makefile("rb", buffering=65536)

    def send(sequence: int, payload: bytes) -> None:
        try:
            sock.sendall(_FRAME.pack(len(payload) | (sequence & 0xFF) << 24) + payload)
        except OSError:
            pass  # the client went away; its thread sees the end of the stream

    def read() -> tuple[int, bytes]:
        header = stream.read(4)
        if len(header) < 4:
            raise EOFError
        return header[3], stream.read(header[0] | header[1] << 8 | header[2] << 16)

    try:
        send(
            0,
            handshake_v10("8.0.36-floor", connection_id, new_scramble(), SERVER_STATUS_AUTOCOMMIT),
        )
        sequence, _ = read()
        send(sequence + 1, ok_packet(status=SERVER_STATUS_AUTOCOMMIT))
        while True:
            sequence, payload = read()
            if not payload or payload[0] == 1:  # COM_QUIT
                return
            ok = ok_packet(affected_rows=1, status=SERVER_STATUS_AUTOCOMMIT)
            if log is not None and payload[1:7].upper() == b"INSERT":
                log.commit(payload[1:65], functools.partial(send, sequence + 1, ok))
            else:
                send(sequence + 1, ok)
    except (EOFError, OSError):
        pass
    finally:
        sock.close()


def serve(port: int, mode: str, directory: Path) -> None:
    """The floor server of ``mode`` on 127.0.0.1:``port``, until killed."""
    log = (
        None if mode == "protocol" else GroupLog(directory / "floor.log", mode == "leader replies")
    )
    listener = socket.create_server(("127.0.0.1", port), backlog=256)
    number = 0
    while True:
        sock, _ = listener.accept()
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        number += 1
        threading.Thread(target=_serve_connection, args=(sock, number, log), daemon=True).start()


# -- the measurement ------------------------------------------------------------------------


def run_point(name: str, port: int, pid: int, threads: int, seconds: int) -> dict[str, Any]:
    """Sysbench oltp_insert at ``threads`` for ``seconds``, and the server's CPU."""
    before = cpu_seconds(pid)
    out = sysbench(
        port, "oltp_insert", "run", f"--threads={threads}", f"--time={seconds}", "--percentile=95"
    )
    used = cpu_seconds(pid) - before
    transactions, tps, _ = sysbench_result(out)
    row = {
        "server": name,
        "threads": threads,
        "tps": tps,
        "cpu_percent": 100 * used / seconds,
        "cpu_us_per_trx": 1e6 * used / transactions if transactions else 0.0,
    }
    print(
        f"  {name:15} {threads:3} threads: {tps:9.1f} tps, server CPU "
        f"{row['cpu_percent']:5.1f}%, {row['cpu_us_per_trx']:6.1f} µs/trx",
        flush=True,
    )
    return row


def measure_floor(mode: str, root: Path, seconds: int) -> list[dict[str, Any]]:
    port = free_port()
    directory = root / mode.replace(" ", "-")
    directory.mkdir()
    process = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(port), mode, str(directory)]
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        return [run_point(mode, port, process.pid, t, seconds) for t in THREADS]
    finally:
        process.kill()
        process.wait()


def measure_server(name: str, port: int, pid: int, seconds: int) -> list[dict[str, Any]]:
    sysbench(port, "oltp_insert", "prepare")
    rows = [run_point(name, port, pid, t, seconds) for t in THREADS]
    sysbench(port, "oltp_insert", "cleanup")
    return rows


def table(results: list[dict[str, Any]]) -> str:
    mariadb = {r["threads"]: r for r in results if r["server"] == "MariaDB"}
    lines = [
        "| server | threads | tps | tps / MariaDB | server CPU % | server CPU µs/trx |",
        "|---|---|---|---|---|---|",
    ]
    for r in results:
        ratio = r["tps"] / mariadb[r["threads"]]["tps"]
        lines.append(
            f"| {r['server']} | {r['threads']} | {r['tps']:.0f} | {ratio:.2f} | "
            f"{r['cpu_percent']:.0f} | {r['cpu_us_per_trx']:.0f} |"
        )
    return "\n".join(lines)


def plot(results: list[dict[str, Any]], path: Path) -> None:
    rows = [r for r in results if r["threads"] == max(THREADS)]
    names = [r["server"] for r in rows]
    figure, (left, right) = pyplot().subplots(1, 2, figsize=(11, 4))
    left.bar(names, [r["tps"] for r in rows], color="tab:blue")
    left.set_ylabel("transactions/s")
    left.set_title(f"oltp_insert, {max(THREADS)} threads")
    right.bar(names, [r["cpu_us_per_trx"] for r in rows], color="tab:orange")
    right.set_ylabel("server CPU µs per transaction")
    right.set_title("CPU per transaction (user + system)")
    for axis in (left, right):
        axis.tick_params(axis="x", rotation=20)
    save_figure(figure, path)


def main() -> int:
    if len(sys.argv) == 5 and sys.argv[1] == "--serve":
        serve(int(sys.argv[2]), sys.argv[3], Path(sys.argv[4]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=int, default=10, help="run time per point")
    add_out_argument(parser)
    args = parser.parse_args()
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for name, server, _ in each_server(root):
            assert server.process is not None
            results += measure_server(name, server.port, server.process.pid, args.seconds)
        for mode in FLOORS:
            results += measure_floor(mode, root, args.seconds)
    publish(
        args.out,
        "floor",
        results,
        "# How fast a thread-per-connection CPython server can answer sysbench\n\n"
        "sysbench oltp_insert (`--db-ps-mode=disable`), server CPU from /proc (user + "
        f"system) over each run, on {interpreter()}; see bench/thread_floor.py "
        "for the three floor servers.\n\n"
        + table(results)
        + "\n\n![tps and CPU per transaction](floor.png)\n",
        plot,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
