"""group_replication installs and uninstalls through its entry point."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rpl.core.plugins import discover


def test_installs_and_uninstalls(plugin_env: Any) -> None:
    assert discover()["group_replication"].distribution == "rpl-group-replication"
    installed = plugin_env.plugins.install("group_replication")
    assert installed.hooks == ()
    plugin_env.plugins.uninstall("group_replication")
    assert plugin_env.plugins.installed() == []


def test_imports_nothing_from_the_server(
    server_modules_imported_by: Callable[[str], list[str]],
) -> None:
    assert server_modules_imported_by("rpl.group_replication.plugin") == []
