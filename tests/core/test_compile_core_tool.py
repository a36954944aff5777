"""``tools/compile-core`` shows its progress while the build runs: the type check, then a
line per C extension with the seconds since the start, not one line for the whole build.

pip is a stand-in here (a ``python`` first on PATH whose ``-m pip`` prints what pip -v
prints for the compiled build, slowly); the real build runs in tox's core_compiled."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

FAKE_PYTHON = """#!/usr/bin/env bash
if [[ "$1 $2" == "-m pip" ]]; then
    echo "  Preparing metadata (pyproject.toml): started"
    echo "  running build_ext"
    echo "  building '1c20e9cd0b298b3ba405__mypyc' extension"
    echo "  building 'rpl.core.binlog.events' extension"
    echo "  gcc -c build/compiled/c/rpl/core/binlog/events.c"
    sleep 30
    echo "  building 'rpl.core.binlog.gtid' extension"
    exit 0
fi
exec {python} "$@"
"""


def test_progress_lines_arrive_while_the_build_runs(tmp_path: Path) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    fake = bindir / "python"
    fake.write_text(FAKE_PYTHON.format(python=sys.executable))
    fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}"}
    started = time.monotonic()
    with subprocess.Popen(
        [str(ROOT / "tools" / "compile-core")],
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    ) as tool:
        assert tool.stdout is not None
        lines = []
        for line in tool.stdout:
            lines.append(line.rstrip())
            if "[1/" in line:
                break
        assert time.monotonic() - started < 25, "the first extension shown only at the end"
        tool.kill()
        tool.wait()
    text = "\n".join(lines)
    assert "type-checking with mypyc" in text
    assert "building the C extensions" in text
    assert lines[-1].endswith("rpl.core.binlog.events") and "__mypyc" not in text
