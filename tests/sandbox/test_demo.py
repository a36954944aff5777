"""``rpl demo failover --short`` end to end: the verdict, the validator's agreement, the HTML
report, nothing left running; and a loud failure when AFTER_SYNC is deliberately broken."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest


def demo(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rpl.core.cli", "demo", "failover", "--short", *args],
        capture_output=True,
        text=True,
        timeout=600,
    )


def servers_left(directory: Path) -> list[str]:
    """The live rpl servers and etcd members whose command line names ``directory``."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            text = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        ours = "rpl.core.cli server" in text or text.startswith("etcd ")
        if ours and str(directory) in text:
            stat = (cmdline.parent / "stat").read_text()
            if stat.rsplit(")", 1)[-1].split()[0] != "Z":
                found.append(text)
    return found


def verdict(stdout: str, wait_point: str) -> list[str]:
    line = next(x for x in stdout.splitlines() if x.startswith(wait_point))
    return line.split()


def test_short_demo(tmp_path: Path) -> None:
    directory = tmp_path / "demo"
    done = demo("--dir", str(directory))
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    after_sync = verdict(done.stdout, "AFTER_SYNC")
    acknowledged, lost, _, rows_lost, reads_lost, validated = after_sync[1:7]
    assert int(acknowledged) > 0 and lost == rows_lost == reads_lost == "0"
    assert validated == "clean"
    assert "AFTER_COMMIT" in done.stdout
    report = (directory / "report.html").read_text()
    assert report.count("data:image/png;base64,") == 2 and "source SIGKILLed" in report
    for wait_point in ("after_sync", "after_commit"):
        assert (directory / wait_point / "history.jsonl").stat().st_size > 0
        assert (directory / wait_point / "validate.json").exists()
    assert (directory / "after_sync" / "validate.txt").read_text().rstrip().endswith("CLEAN")
    assert servers_left(directory) == []


def test_broken_after_sync_fails_loudly(tmp_path: Path) -> None:
    directory = tmp_path / "broken"
    done = demo("--dir", str(directory), "--break-after-sync", "--no-validate")
    assert done.returncode == 1, done.stdout + done.stderr[-3000:]
    lost = int(verdict(done.stdout, "AFTER_SYNC")[2])
    assert lost > 0
    assert "FAILED: AFTER_SYNC lost what a client saw" in done.stderr
    assert servers_left(directory) == []


def interrupt(demo_args: list[str], directory: Path, marker: str) -> tuple[int, int]:
    """Run ``rpl demo <demo_args>`` in ``directory``, SIGINT it once its stderr shows
    ``marker``: its exit code, and how many of its servers and etcd members were
    running when it was interrupted.
    """
    command = [sys.executable, "-m", "rpl.core.cli", "demo", *demo_args, "--dir", str(directory)]
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as run:
        assert run.stderr is not None
        for line in run.stderr:
            if marker in line:
                break
        running = len(servers_left(directory))
        run.send_signal(signal.SIGINT)
        return run.wait(60), running


def test_ctrl_c_leaves_nothing_running(tmp_path: Path) -> None:
    directory = tmp_path / "interrupted"
    code, running = interrupt(
        ["failover", "--duration", "30", "--no-validate"], directory, "writers and"
    )
    assert running, "the demo's servers are running"
    assert code == 130
    assert servers_left(directory) == []


def test_ctrl_c_stops_the_demo_even_when_its_keyboardinterrupt_goes_astray(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A SIGINT that lands in a finalizer raises KeyboardInterrupt there, where Python
    prints and drops it. The demo must stop anyway, with 130, and not go on to the next
    wait point or the report. The stand-in trial here swallows the exception the way a
    finalizer does."""
    from rpl.core.demo import cli

    trials: list[str] = []

    def swallowing_trial(directory: Path, wait_point: str, **_: object) -> object:
        trials.append(wait_point)
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(1)  # the handler runs here, in this (the main) thread
        except KeyboardInterrupt:
            pass  # gone astray
        return object()

    monkeypatch.setattr(cli, "run_trial", swallowing_trial)
    args = argparse.Namespace(
        dir=str(tmp_path / "astray"),
        short=True,
        duration=3.0,
        writers=1,
        readers=1,
        no_validate=True,
        break_after_sync=False,
    )
    before = signal.getsignal(signal.SIGINT)
    assert cli.run(args) == 130
    assert trials == ["after_sync"]  # no second wait point after the interrupt
    assert not (tmp_path / "astray" / "report.html").exists()
    assert signal.getsignal(signal.SIGINT) is before  # the demo's handler is gone again
