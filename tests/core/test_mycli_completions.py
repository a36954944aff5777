"""mycli, unchanged, against a real rpl server process: every query of its completion
refresher (information_schema, mysql.user, mysql.help_topic, SHOW CHARACTER SET, SHOW
COLLATION...) runs without an error, and the completer learns the real catalogue."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from mycli.packages.completion.completion_refresher import (
    CompletionRefresher,
)
from mycli.packages.completion.sql_completer import SQLCompleter
from mycli.packages.execution.sql_execute import SQLExecute

from rpl.core.testing.process import ServerProcess


@pytest.fixture
def shop(tmp_path: Path) -> Any:
    server = ServerProcess(tmp_path / "data").start()
    server.query("CREATE DATABASE shop")
    server.query(
        "CREATE TABLE shop.items (id int PRIMARY KEY, name varchar(20), kind enum('a','b'), "
        "KEY k_name (name))"
    )
    server.query("CREATE TABLE shop.orders (id int PRIMARY KEY, item int, qty int)")
    yield server
    server.stop()


def test_every_completion_refresher_runs_without_error(
    shop: ServerProcess, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="mycli")
    executor = SQLExecute("shop", "root", "", "127.0.0.1", shop.port, None, "utf8mb4", False, None)
    completer = SQLCompleter()
    refreshers = CompletionRefresher.refreshers
    assert {"databases", "tables", "users", "show_commands", "collations"} <= set(refreshers)
    for refresh in refreshers.values():
        refresh(completer, executor)
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert errors == []
    assert executor.databases() == ["information_schema", "performance_schema", "shop"]
    assert list(executor.table_columns()) == [
        ("items", "id"),
        ("items", "name"),
        ("items", "kind"),
        ("orders", "id"),
        ("orders", "item"),
        ("orders", "qty"),
    ]
    assert list(executor.indexed_columns()) == [
        ("items", "id"),
        ("items", "name"),
        ("orders", "id"),
    ]
    assert list(executor.enum_values()) == [("items", "kind", ["a", "b"])]
    assert list(executor.users()) == [("'root'@'localhost'",)]
    assert ("utf8mb4", "UTF-8 Unicode", "utf8mb4_0900_ai_ci", 4) in executor.character_sets()
    assert ("SLAVE STATUS",) in list(executor.show_candidates())
    assert list(executor.functions()) == [] and list(executor.procedures()) == []
    # mycli quotes the keyword `name` itself
    assert completer.dbmetadata["tables"]["shop"]["items"] == ["*", "id", "`name`", "kind"]
    executor.close()
