"""Each distribution installs on its own: observers without the server, plugins without
pyspark or the server."""

from __future__ import annotations

import subprocess
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def fresh_venv(path: Path) -> Path:
    venv.EnvBuilder(with_pip=True).create(path)
    return path / "bin" / "python"


def run(python: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(python), *args], capture_output=True, text=True)


def installed(python: Path) -> set[str]:
    out = run(python, "-m", "pip", "list", "--format=freeze").stdout
    return {line.split("==")[0].lower() for line in out.splitlines()}


@pytest.mark.parametrize("folder, present, absent", [
    ("observers", {"rpl-observers", "pluggy", "attrs"}, {"rpl-core", "pyspark"}),
    ("semisync_master", {"rpl-semisync-master", "rpl-observers"}, {"rpl-core", "pyspark"}),
    ("semisync_slave", {"rpl-semisync-slave", "rpl-observers"}, {"rpl-core", "pyspark"}),
    ("group_replication", {"rpl-group-replication", "rpl-observers"}, {"rpl-core", "pyspark"}),
])
def test_distribution_installs_alone(tmp_path: Path, folder: str, present: set[str],
                                     absent: set[str]) -> None:
    python = fresh_venv(tmp_path / "venv")
    # a plugin's dependency on rpl-observers is satisfied from the local folder
    local = [str(ROOT / "observers")] if folder != "observers" else []
    result = run(python, "-m", "pip", "install", "-q", *local, str(ROOT / folder))
    assert result.returncode == 0, result.stderr
    names = installed(python)
    assert present <= names and not absent & names, names
    assert run(python, "-c", "import rpl.observers").returncode == 0
    assert run(python, "-c", "import rpl.core").returncode != 0
    if folder.startswith("semisync"):
        imported = run(python, "-c", f"import rpl.{folder}.plugin")
        assert imported.returncode == 0, imported.stderr
