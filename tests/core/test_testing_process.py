"""rpl.core.testing.process: the executable a ServerProcess runs on."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from rpl.core.testing.process import SERVER_PYTHON_ENV, ServerProcess


def test_server_runs_on_the_named_executable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With RPL_SERVER_PYTHON set, the server is started by that executable (here a
    wrapper that notes its arguments, then runs this interpreter), and it serves.
    """
    calls = tmp_path / "calls"
    wrapper = tmp_path / "python-wrapper"
    wrapper.write_text(f'#!/bin/sh\necho "$@" >> {calls}\nexec {sys.executable} "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv(SERVER_PYTHON_ENV, str(wrapper))
    server = ServerProcess(tmp_path / "data").start()
    try:
        assert server.query("SELECT 1") == [(1,)]
        assert server.process is not None
        assert os.readlink(f"/proc/{server.process.pid}/exe") == os.path.realpath(
            sys.executable
        )  # the wrapper exec'd: the pid is the server's own
    finally:
        server.stop()
    assert calls.read_text().startswith("-m rpl.core.cli server --datadir")
