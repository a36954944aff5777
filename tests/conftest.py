"""Fixtures shared by every test directory."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable

import attrs
import pytest
from hypothesis import settings

# Property tests assert what holds, not how fast: hypothesis's per-example deadline
# (200 ms) turned a slow moment of a loaded CI machine into a failure.
settings.register_profile("rpl", deadline=None)
settings.load_profile("rpl")


@pytest.fixture
def server_modules_imported_by() -> Callable[[str], list[str]]:
    """The rpl.core modules that importing ``module`` in a fresh interpreter loads."""

    def imported(module: str) -> list[str]:
        code = (
            f"import sys, {module}; "
            "print('\\n'.join(m for m in sys.modules if m.startswith('rpl.core')))"
        )
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout
        return out.split()

    return imported


@attrs.frozen
class PluginEnvironment:
    """A server's plugin manager with its variable registries, without the server."""

    delegates: object
    plugins: object
    system: object
    status: object


@pytest.fixture
def plugin_env() -> PluginEnvironment:
    from rpl.core.delegates import Delegates
    from rpl.core.plugins import Plugins
    from rpl.core.threads import ThreadRegistry
    from rpl.core.variables import StatusVariables, SystemVariables

    system, status = SystemVariables(), StatusVariables()
    delegates = Delegates.create()
    plugins = Plugins(delegates.registry, system, status, ThreadRegistry())
    return PluginEnvironment(delegates, plugins, system, status)
