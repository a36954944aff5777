"""Each distribution installs on its own: observers without the server, plugins without
pyspark or the server.

The four installs (a fresh virtual environment and a pip run each, mostly waiting on pip)
run at once in a module fixture, and each test checks its own: about half the time of one
after another.
"""

from __future__ import annotations

import subprocess
import venv
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DISTRIBUTIONS = [
    # folder, what a fresh environment must then hold, and what it must not
    ("observers", {"rpl-observers", "pluggy", "attrs"}, {"rpl-core", "pyspark"}),
    ("semisync_master", {"rpl-semisync-master", "rpl-observers"}, {"rpl-core", "pyspark"}),
    ("semisync_slave", {"rpl-semisync-slave", "rpl-observers"}, {"rpl-core", "pyspark"}),
    ("group_replication", {"rpl-group-replication", "rpl-observers"}, {"rpl-core", "pyspark"}),
]
FOLDERS = tuple(folder for folder, _, _ in DISTRIBUTIONS)


def fresh_venv(path: Path) -> Path:
    venv.EnvBuilder(with_pip=True).create(path)
    return path / "bin" / "python"


def run(python: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(python), *args], capture_output=True, text=True)


def installed(python: Path) -> set[str]:
    out = run(python, "-m", "pip", "list", "--format=freeze").stdout
    return {line.split("==")[0].lower() for line in out.splitlines()}


Install = tuple[Path, "subprocess.CompletedProcess[str]"]
"""A fresh environment's python and the pip run that installed one distribution into it."""


def install_alone(path: Path, folder: str) -> Install:
    """``folder``'s distribution pip-installed into a fresh environment at ``path``."""
    python = fresh_venv(path)
    # a plugin's dependency on rpl-observers is satisfied from the local folder
    local = [str(ROOT / "observers")] if folder != "observers" else []
    return python, run(python, "-m", "pip", "install", "-q", *local, str(ROOT / folder))


@pytest.fixture(scope="module")
def installs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Install]:
    """Every distribution of :data:`FOLDERS` installed alone, the installs run at once."""
    root = tmp_path_factory.mktemp("installs")
    with ThreadPoolExecutor(len(FOLDERS)) as pool:
        done = pool.map(lambda folder: install_alone(root / folder, folder), FOLDERS)
        return dict(zip(FOLDERS, done, strict=True))


@pytest.mark.parametrize("folder, present, absent", DISTRIBUTIONS)
def test_distribution_installs_alone(installs: dict[str, Install], folder: str,
                                     present: set[str], absent: set[str]) -> None:
    python, result = installs[folder]
    assert result.returncode == 0, result.stderr
    names = installed(python)
    assert present <= names and not absent & names, names
    assert run(python, "-c", "import rpl.observers").returncode == 0
    assert run(python, "-c", "import rpl.core").returncode != 0
    if folder.startswith("semisync"):
        imported = run(python, "-c", f"import rpl.{folder}.plugin")
        assert imported.returncode == 0, imported.stderr
