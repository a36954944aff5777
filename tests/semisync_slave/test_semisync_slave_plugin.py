"""rpl_semi_sync_slave installs through its entry point with MySQL's variables."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from rpl.core.errors import MySQLError
from rpl.core.plugins import discover


def test_entry_point_is_discovered() -> None:
    assert discover()["rpl_semi_sync_slave"].distribution == "rpl-semisync-slave"


def test_variables_have_mysqls_defaults_and_go_with_the_plugin(plugin_env: Any) -> None:
    plugin_env.plugins.install("rpl_semi_sync_slave")
    assert plugin_env.system.show("rpl_semi_sync_slave%") == [
        ("rpl_semi_sync_slave_enabled", "OFF"),
        ("rpl_semi_sync_slave_trace_level", "32"),
    ]
    with pytest.raises(MySQLError) as raised:
        plugin_env.system.set_global("rpl_semi_sync_slave_enabled", "maybe")
    assert raised.value.errno == 1231
    plugin_env.plugins.uninstall("rpl_semi_sync_slave")
    assert plugin_env.system.show("rpl_semi_sync%") == []


def test_imports_nothing_from_the_server(
    server_modules_imported_by: Callable[[str], list[str]],
) -> None:
    assert server_modules_imported_by("rpl.semisync_slave.plugin") == []
