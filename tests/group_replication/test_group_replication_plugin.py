"""group_replication installs and uninstalls through its entry point, on a real server."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pymysql
import pytest

from rpl.core.plugins import discover
from rpl.core.testing.process import ServerProcess


def test_installs_and_uninstalls(tmp_path: Path) -> None:
    assert discover()["group_replication"].distribution == "rpl-group-replication"
    server = ServerProcess(tmp_path / "s").start()
    try:
        server.query("INSTALL PLUGIN group_replication SONAME 'group_replication.so'")
        names = {r[0] for r in server.query("SHOW VARIABLES LIKE 'group_replication_%'")}
        assert {"group_replication_group_name", "group_replication_single_primary_mode"} <= names
        assert server.query("SELECT @@group_replication_member_expel_timeout") == [(5,)]
        assert server.query("SELECT @@group_replication_autorejoin_tries") == [(3,)]
        server.query("SET GLOBAL group_replication_autorejoin_tries = 2017")
        assert server.query("SELECT @@group_replication_autorejoin_tries") == [(2016,)]
        rows = server.query("SELECT MEMBER_STATE FROM performance_schema.replication_group_members")
        assert rows == [("OFFLINE",)]
        server.query("STOP GROUP_REPLICATION")  # not running: nothing to do
        server.query("UNINSTALL PLUGIN group_replication")
        assert server.query("SHOW VARIABLES LIKE 'group_replication_%'") == []
        assert server.query("SELECT * FROM performance_schema.replication_group_members") == []
        with pytest.raises(pymysql.err.MySQLError) as failure:
            server.query("START GROUP_REPLICATION")
        assert failure.value.args[0] == 1235  # without the plugin the server has no such command
    finally:
        server.stop()


def test_imports_nothing_from_the_server(
    server_modules_imported_by: Callable[[str], list[str]],
) -> None:
    for module in ("plugin", "group", "gcs.etcd", "certifier", "recovery"):
        assert server_modules_imported_by(f"rpl.group_replication.{module}") == []
