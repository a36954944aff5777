"""``rpl validate`` as a command: exit codes 0 (clean), 1 (violations), 2 (usage), the
summary on stdout, progress on stderr, the JSON report."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from faults import find, rewrite

from rpl.core.binlog.events import XidEvent


def rpl_validate(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "rpl.core.cli", "validate", "--master", "local[2]", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=300)


def test_clean_run_exit_0_and_json_report(run: Path) -> None:
    report = run / "report.json"
    done = rpl_validate(
        str(run / "source"), str(run / "replica"), "--split-mb", "0.002", "--report", str(report)
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "result: CLEAN" in done.stdout
    assert "proven clean by split sketches" in done.stdout
    assert "sketching splits" in done.stderr
    data = json.loads(report.read_text())
    assert data["result"] == "clean" and data["violations"] == []
    assert data["method"] == "sketches"
    assert data["events"] > 500 and data["logs"]["replica"]["relay"]["files"] == 1


def test_violation_exit_1(run: Path) -> None:
    path = run / "source" / "binlog.000003"
    target = find(path, lambda e: isinstance(e.event, XidEvent), nth=2)
    at = target.position + 20
    rewrite(path, lambda data: data.__setitem__(at, data[at] ^ 1))
    report = run / "report.json"
    done = rpl_validate(str(run / "source"), "--report", str(report))
    assert done.returncode == 1, done.stdout + done.stderr
    data = json.loads(report.read_text())
    assert [(v["check"], v["file"], v["position"]) for v in data["violations"]] == [
        ("structure", "binlog.000003", target.position)
    ]
    assert f"binlog.000003:{target.position}" in done.stdout
    assert data["method"] == "exact" and "CRC32 mismatch" in data["unproven"]


def test_usage_errors_exit_2(run: Path, tmp_path: Path) -> None:
    done = rpl_validate(str(tmp_path / "nowhere"))
    assert done.returncode == 2 and "not a directory" in done.stderr
    history = tmp_path / "bad.jsonl"
    history.write_text(
        '{"client": "a", "op": "delete", "table": "d.t", "key": 1, "outcome": "ok"}\n'
    )
    done = rpl_validate(str(run / "source"), "--history", str(history))
    assert done.returncode == 2 and "history line 1: op 'delete'" in done.stderr


def test_console_is_ours_on_a_server_that_never_committed(tmp_path: Path) -> None:
    """A first look at a new server's data directory: clean, and everything on the
    console is rpl validate's own (no JVM or Spark start-up lines, no stage bars)."""
    from rpl.core.testing.process import ServerProcess

    ServerProcess(tmp_path / "new").start().stop()
    done = rpl_validate(str(tmp_path / "new"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "result: CLEAN" in done.stdout
    assert [
        line for line in done.stderr.splitlines() if not line.startswith("rpl validate: ")
    ] == [], done.stderr
