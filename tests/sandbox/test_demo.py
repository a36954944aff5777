"""``rpl demo failover --short`` end to end: the verdict, the validator's agreement, the HTML
report, nothing left running; and a loud failure when AFTER_SYNC is deliberately broken."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path


def demo(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rpl.core.cli", "demo", "failover",
                           "--short", *args], capture_output=True, text=True, timeout=600)


def servers_left(directory: Path) -> list[str]:
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            text = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if "rpl.core.cli server" in text and str(directory) in text:
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
    acknowledged, lost, _, phantom, validated = after_sync[1:6]
    assert int(acknowledged) > 0 and lost == "0" and phantom == "0"
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


def test_ctrl_c_leaves_nothing_running(tmp_path: Path) -> None:
    directory = tmp_path / "interrupted"
    command = [sys.executable, "-m", "rpl.core.cli", "demo", "failover", "--dir",
               str(directory), "--duration", "30", "--no-validate"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True) as run:
        assert run.stderr is not None
        for line in run.stderr:
            if "writers and" in line:
                break
        assert servers_left(directory), "the demo's servers are running"
        run.send_signal(signal.SIGINT)
        code = run.wait(60)
    assert code == 130
    assert servers_left(directory) == []
