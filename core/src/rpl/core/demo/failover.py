"""``rpl demo failover``: what AFTER_SYNC prevents, shown on real processes.

For each wait point (AFTER_SYNC, then AFTER_COMMIT): a sandbox of a source and two
semisync replicas (the replicas reach the source through a TCP forwarder that delays the
source's events by 50 ms, and that the demo can cut, as a network partition does);
writers and readers run against the source, every operation recorded; mid-run the
network to the replicas is cut and the source SIGKILLed (a host failure); the most
advanced replica is promoted, the other repointed to it; then the client history is
checked against the new source, directly and with ``rpl validate``. AFTER_SYNC must lose
nothing a client saw; AFTER_COMMIT lets readers see rows that no replica has yet, which
the failover then loses (a phantom read).

What holds when the command returns, or is interrupted: no server process of the demo is
left running (their data directories stay, for ``rpl validate`` or ``mariadb-binlog``).
"""

from __future__ import annotations

import random
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import attrs

from rpl.core.binlog.gtid import GtidSet
from rpl.core.demo.workload import TABLE, Recorder, start_clients
from rpl.core.sandbox.sandbox import SOURCE, Sandbox, deploy, stop
from rpl.core.testing.process import ServerProcess
from rpl.core.testing.proxy import TcpProxy
from rpl.core.testing.topology import (
    REPL_PASSWORD,
    REPL_USER,
    drain,
    gtid_executed,
    replicate,
    status,
    wait_caught_up,
    wait_for,
)
from rpl.core.validate.history import READ, WRITE, write_history

WAIT_POINTS: Final = ("after_sync", "after_commit")
LATENCY: Final = 0.05
"""Seconds the source's events take to reach its replicas (a slow link shows AFTER_COMMIT's
window: a committed row is readable on the source while its events are still in flight)."""
FAILED: Final = "failed"


@attrs.define
class Trial:
    """One wait point's run and its verdict."""

    wait_point: str
    directory: Path
    acknowledged: int = 0
    reads: int = 0
    unknown: int = 0
    lost: list[str] = attrs.field(factory=list)
    """Keys of acknowledged writes the new source lacks."""
    phantom: list[str] = attrs.field(factory=list)
    """Keys of rows some reader saw that the new source lacks (each row once)."""
    lost_reads: list[tuple[float, str, str]] = attrs.field(factory=list)
    """(seconds, reader, key) of each read of such a row: one per reader that read it, as
    ``rpl validate`` lists them."""
    promoted: str = ""
    timeline: list[tuple[float, str]] = attrs.field(factory=list)
    samples: list[tuple[float, int, int]] = attrs.field(factory=list)
    """(seconds, acknowledged writes, rows read) as the run went."""
    validate_exit: int | None = None
    validate_violations: int = 0
    validate_summary: str = ""

    @property
    def lossless(self) -> bool:
        """Nothing a client saw is missing on the new source."""
        return not self.lost and not self.phantom


def _mark(trial: Trial, origin: float, what: str, say: Callable[[str], None]) -> None:
    trial.timeline.append((time.time() - origin, what))
    say(f"[{trial.wait_point}] {time.time() - origin:5.1f} s  {what}")


def _route_through_proxies(sandbox: Sandbox, latency: float) -> list[TcpProxy]:
    """Point each replica at a forwarder that delays the source's events by ``latency``
    seconds (a replica in another data centre); wait until they are semisync clients again.
    """
    source = sandbox.server(sandbox.source)
    proxies = []
    for spec in sandbox.nodes:
        if spec.role == SOURCE:
            continue
        proxy = TcpProxy(sandbox.source.port, delay=latency)
        proxies.append(proxy)
        replica = sandbox.server(spec)
        replica.query("STOP SLAVE")
        replicate(replica, source, master_port=proxy.port)
    wait_for(
        lambda: status(source, "Rpl_semi_sync_master_clients") == str(len(proxies)),
        30,
        "the replicas to reconnect",
    )
    return proxies


def _run_load(
    trial: Trial,
    sandbox: Sandbox,
    proxies: list[TcpProxy],
    duration: float,
    writers: int,
    readers: int,
    say: Callable[[str], None],
    interrupted: threading.Event,
) -> Recorder:
    source = sandbox.server(sandbox.source)
    source.query("CREATE DATABASE d")
    source.query(f"CREATE TABLE {TABLE} (id BIGINT PRIMARY KEY, v VARCHAR(20))")
    recorder = Recorder()
    origin = recorder.origin
    threads = start_clients(source.connect, writers, readers, recorder)
    _mark(trial, origin, f"{writers} writers and {readers} readers started", say)
    kill_at = duration * (0.6 + 0.3 * random.random())
    while time.time() - origin < kill_at:
        time.sleep(0.2)
        if interrupted.is_set():  # Ctrl-C whose KeyboardInterrupt went astray
            raise KeyboardInterrupt
        trial.samples.append((time.time() - origin, recorder.acknowledged(), recorder.reads()))
        _progress(trial, recorder, origin)
    for proxy in proxies:
        proxy.cut()
    _mark(trial, origin, "network to the replicas cut", say)
    time.sleep(0.3)
    sandbox.kill_node(sandbox.source)
    _mark(trial, origin, "source SIGKILLed", say)
    for proxy in proxies:
        proxy.close()
    recorder.stop.set()
    for thread in threads:
        thread.join(30)
    trial.samples.append((time.time() - origin, recorder.acknowledged(), recorder.reads()))
    return recorder


def _progress(trial: Trial, recorder: Recorder, origin: float) -> None:
    if sys.stderr.isatty():
        print(
            f"\r[{trial.wait_point}] {time.time() - origin:5.1f} s  acknowledged writes "
            f"{recorder.acknowledged():>6}  rows read {recorder.reads():>6}",
            end="",
            file=sys.stderr,
            flush=True,
        )


def _promote(
    trial: Trial, sandbox: Sandbox, origin: float, say: Callable[[str], None]
) -> ServerProcess:
    """Promote the replica that applied the most; repoint the others; the new source."""
    replicas = [s for s in sandbox.nodes if s.role != SOURCE]
    for spec in replicas:
        drain(sandbox.server(spec))
    executed = {s.name: GtidSet.parse(gtid_executed(sandbox.server(s))).count() for s in replicas}
    chosen = max(replicas, key=lambda s: executed[s.name])
    new_source = sandbox.server(chosen)
    new_source.query("STOP SLAVE")
    new_source.query("RESET SLAVE ALL")
    sandbox.source.role, chosen.role = FAILED, SOURCE
    sandbox.save()
    trial.promoted = chosen.name
    _mark(trial, origin, f"{chosen.name} promoted ({executed[chosen.name]} transactions)", say)
    for spec in replicas:
        if spec is not chosen:
            other = sandbox.server(spec)
            other.query("STOP SLAVE")
            replicate(other, new_source, user=REPL_USER, password=REPL_PASSWORD)
            wait_caught_up(new_source, other)
            _mark(trial, origin, f"{spec.name} repointed to {chosen.name} and caught up", say)
    return new_source


def _verdict(trial: Trial, recorder: Recorder, new_source: ServerProcess) -> None:
    held = {str(k): str(v) for k, v in new_source.query(f"SELECT id, v FROM {TABLE}")}
    ops = recorder.operations
    trial.acknowledged = sum(1 for o in ops if o.op == WRITE and o.outcome == "ok")
    trial.unknown = sum(1 for o in ops if o.op == WRITE and o.outcome == "unknown")
    trial.reads = sum(1 for o in ops if o.op == READ)
    trial.lost = sorted(
        {o.key for o in ops if o.op == WRITE and o.outcome == "ok" and held.get(o.key) != o.value}
    )
    trial.phantom = sorted({o.key for o in ops if o.op == READ and held.get(o.key) != o.value})
    trial.lost_reads = [
        (o.end - recorder.origin, o.client, o.key)
        for o in ops
        if o.op == READ and held.get(o.key) != o.value
    ]


def _validate(
    trial: Trial, sandbox: Sandbox, recorder: Recorder, spark: Any, say: Callable[[str], None]
) -> None:
    history = trial.directory / "history.jsonl"
    from rpl.core.validate.checks import validate

    report = validate(
        [str(sandbox.directory / n.name) for n in sandbox.nodes],
        history=str(history),
        expect_on=trial.promoted,
        spark=spark,
        progress=lambda text: say(f"[{trial.wait_point}] rpl validate: {text}"),
    )
    report.write_json(trial.directory / "validate.json")
    trial.validate_exit = report.exit_code
    trial.validate_violations = len(report.violations)
    trial.validate_summary = report.summary()
    (trial.directory / "validate.txt").write_text(report.summary() + "\n")


def run_trial(
    directory: Path,
    wait_point: str,
    *,
    duration: float,
    writers: int,
    readers: int,
    spark: Any,
    latency: float = LATENCY,
    break_wait_point: bool = False,
    interrupted: threading.Event,
    say: Callable[[str], None] = print,
) -> Trial:
    """One wait point's run (see the module docstring). ``interrupted`` set (Ctrl-C) ends
    the load with KeyboardInterrupt within 0.2 s, the servers stopped on the way out.
    """
    trial = Trial(wait_point, directory)
    sandbox = deploy(directory, replicas=2, semisync=wait_point, say=lambda _: None)
    proxies: list[TcpProxy] = []
    try:
        if break_wait_point:  # the deliberately broken variant: acknowledge without waiting
            sandbox.server(sandbox.source).query("SET GLOBAL rpl_semi_sync_master_enabled = OFF")
        proxies = _route_through_proxies(sandbox, latency)
        recorder = _run_load(trial, sandbox, proxies, duration, writers, readers, say, interrupted)
        new_source = _promote(trial, sandbox, recorder.origin, say)
        _verdict(trial, recorder, new_source)
        write_history(trial.directory / "history.jsonl", recorder.operations)
        stop(sandbox)
        if spark is not None:
            _validate(trial, sandbox, recorder, spark, say)
    finally:
        for proxy in proxies:
            proxy.close()
        stop(sandbox)
    return trial
