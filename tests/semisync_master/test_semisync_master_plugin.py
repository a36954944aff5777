"""rpl_semi_sync_master installs through its entry point with MySQL's variables."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from rpl.core.errors import MySQLError
from rpl.core.plugins import discover


def test_entry_point_is_discovered() -> None:
    assert discover()["rpl_semi_sync_master"].distribution == "rpl-semisync-master"


def test_variables_have_mysqls_defaults_and_go_with_the_plugin(plugin_env: Any) -> None:
    plugin_env.plugins.install("rpl_semi_sync_master")
    assert plugin_env.system.show("rpl_semi_sync_master%") == [
        ("rpl_semi_sync_master_enabled", "OFF"),
        ("rpl_semi_sync_master_timeout", "10000"),
        ("rpl_semi_sync_master_trace_level", "32"),
        ("rpl_semi_sync_master_wait_for_slave_count", "1"),
        ("rpl_semi_sync_master_wait_no_slave", "ON"),
        ("rpl_semi_sync_master_wait_point", "AFTER_SYNC"),
    ]
    plugin_env.plugins.uninstall("rpl_semi_sync_master")
    assert plugin_env.system.show("rpl_semi_sync%") == []


def test_variable_rules(plugin_env: Any) -> None:
    """Behaviour 17 of reference/semisync.md."""
    plugin_env.plugins.install("rpl_semi_sync_master")
    system = plugin_env.system
    for name, value, errno in [
        ("rpl_semi_sync_master_wait_point", "AFTER_FLUSH", 1231),
        ("rpl_semi_sync_master_timeout", "abc", 1232),
        ("rpl_semi_sync_master_timeout", 1.5, 1232),
    ]:
        with pytest.raises(MySQLError) as raised:
            system.set_global(name, value)
        assert raised.value.errno == errno
    system.set_global("rpl_semi_sync_master_wait_point", "after_commit")
    assert system.get_global("rpl_semi_sync_master_wait_point") == "AFTER_COMMIT"
    assert system.set_global("rpl_semi_sync_master_wait_for_slave_count", 0)[0].code == 1292
    assert system.get_global("rpl_semi_sync_master_wait_for_slave_count") == 1
    system.set_global("rpl_semi_sync_master_wait_for_slave_count", 65536)
    assert system.get_global("rpl_semi_sync_master_wait_for_slave_count") == 65535
    for name in (
        "rpl_semi_sync_master_enabled",
        "rpl_semi_sync_master_wait_point",
        "rpl_semi_sync_master_timeout",
        "rpl_semi_sync_master_wait_for_slave_count",
    ):
        with pytest.raises(MySQLError) as raised:
            system.check_session_scope(name)
        assert raised.value.errno == 1229


def test_imports_nothing_from_the_server(
    server_modules_imported_by: Callable[[str], list[str]],
) -> None:
    assert server_modules_imported_by("rpl.semisync_master.plugin") == []
