"""Each distribution installs on its own: observers without the server, plugins without
pyspark or the server; every rpl distribution has the repository's one version, and
each requirement on another rpl distribution admits it.

The four installs (a fresh virtual environment and a pip run each, mostly waiting on pip)
run at once in a module fixture, and each test checks its own: about half the time of one
after another. The plugins take rpl-observers from one wheel built beforehand: four pip runs
building it from its folder at once would share setuptools' ``build/`` directory there and
collide.
"""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
import tomllib
import venv
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
DISTRIBUTIONS = [
    # folder, what a fresh environment must then hold, and what it must not
    ("observers", {"rpl-observers", "pluggy", "attrs"}, {"rpl-core", "pyspark"}),
    ("semisync_master", {"rpl-semisync-master", "rpl-observers"}, {"rpl-core", "pyspark"}),
    ("semisync_slave", {"rpl-semisync-slave", "rpl-observers"}, {"rpl-core", "pyspark"}),
    ("group_replication", {"rpl-group-replication", "rpl-observers"}, {"rpl-core", "pyspark"}),
]
FOLDERS = tuple(folder for folder, _, _ in DISTRIBUTIONS)
VERSION = (ROOT / "VERSION").read_text().strip()
"""The one version of every rpl distribution (README.md, "Development notes")."""
RPL = {
    "observers": "rpl-observers",
    "core": "rpl-core",
    "semisync_master": "rpl-semisync-master",
    "semisync_slave": "rpl-semisync-slave",
    "group_replication": "rpl-group-replication",
}
"""Every distribution that takes the repository's version, by folder."""
PYPROJECTS = sorted([*ROOT.glob("*/pyproject.toml"), *ROOT.glob("examples/*/pyproject.toml")])


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


def observers_wheel(directory: Path) -> Path:
    """rpl-observers built once into ``directory`` (by this environment's pip)."""
    built = run(
        Path(sys.executable),
        *("-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation"),
        *("-w", str(directory), str(ROOT / "observers")),
    )
    assert built.returncode == 0, built.stderr
    return next(directory.glob("rpl_observers-*.whl"))


def install_alone(path: Path, folder: str, observers: Path) -> Install:
    """``folder``'s distribution pip-installed into a fresh environment at ``path``; a
    plugin's dependency on rpl-observers is satisfied by the ``observers`` wheel."""
    python = fresh_venv(path)
    local = [str(observers)] if folder != "observers" else []
    return python, run(python, "-m", "pip", "install", "-q", *local, str(ROOT / folder))


@pytest.fixture(scope="module")
def installs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Install]:
    """Every distribution of :data:`FOLDERS` installed alone, the installs run at once."""
    root = tmp_path_factory.mktemp("installs")
    observers = observers_wheel(root / "wheels")
    with ThreadPoolExecutor(len(FOLDERS)) as pool:
        done = pool.map(lambda folder: install_alone(root / folder, folder, observers), FOLDERS)
        return dict(zip(FOLDERS, done, strict=True))


@pytest.mark.parametrize("folder, present, absent", DISTRIBUTIONS)
def test_distribution_installs_alone(
    installs: dict[str, Install], folder: str, present: set[str], absent: set[str]
) -> None:
    python, result = installs[folder]
    assert result.returncode == 0, result.stderr
    names = installed(python)
    assert present <= names and not absent & names, names
    assert run(python, "-c", "import rpl.observers").returncode == 0
    assert run(python, "-c", "import rpl.core").returncode != 0
    if folder.startswith("semisync"):
        imported = run(python, "-c", f"import rpl.{folder}.plugin")
        assert imported.returncode == 0, imported.stderr


@pytest.mark.parametrize("folder", sorted(RPL))
def test_version_is_the_repository_version(folder: str) -> None:
    """Built from the VERSION its folder links to (the integration environment installs
    every one from the working tree)."""
    assert (ROOT / folder / "VERSION").resolve() == (ROOT / "VERSION").resolve()
    assert importlib.metadata.version(RPL[folder]) == VERSION


@pytest.mark.parametrize("pyproject", PYPROJECTS, ids=lambda path: path.parent.name)
def test_rpl_requirements_admit_the_version(pyproject: Path) -> None:
    """A bump of VERSION past a requirement's release series fails here, not at install."""
    project = tomllib.loads(pyproject.read_text())["project"]
    requirements = [Requirement(text) for text in project.get("dependencies", [])]
    for requirement in requirements:
        if requirement.name in RPL.values():
            assert requirement.specifier.contains(VERSION), (requirement, VERSION)
