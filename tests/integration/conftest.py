"""Fixtures for the integration tests: the example observer pip-installed for a module."""

from __future__ import annotations

import importlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "audit_observer"


def pip(*args: str) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q", *args], check=True
    )


@pytest.fixture(scope="module")
def example_installed() -> Iterator[None]:
    pip("install", "--no-deps", "--no-build-isolation", str(EXAMPLE))
    importlib.invalidate_caches()
    try:
        yield
    finally:
        pip("uninstall", "-y", "rpl-audit-observer")
        importlib.invalidate_caches()
