"""Debian's ``mariadb-dump``, unchanged, reading the catalogue of a real rpl server
process (INFORMATION_SCHEMA.TABLES, SHOW CREATE TABLE, the session variables it sets),
and its dump reloaded by the ``mariadb`` client into a fresh server giving the same
tables and rows."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from rpl.core.testing.process import ServerProcess

pytestmark = pytest.mark.skipif(
    shutil.which("mariadb-dump") is None or shutil.which("mariadb") is None,
    reason="Debian's mariadb client tools are not installed",
)

ENV = {**os.environ, "HOME": os.environ.get("HOME", "/tmp")}


def run(tool: str, server: ServerProcess, *args: str, stdin: str | None = None) -> Any:
    command = [tool, "--no-defaults", "-h127.0.0.1", f"-P{server.port}", "-uroot", "--skip-ssl"]
    return subprocess.run(
        [*command, *args], input=stdin, capture_output=True, text=True, timeout=60, env=ENV
    )


@pytest.fixture
def source(tmp_path: Path) -> Any:
    server = ServerProcess(tmp_path / "source").start()
    server.query("CREATE DATABASE shop")
    server.query(
        "CREATE TABLE shop.items (id int unsigned PRIMARY KEY AUTO_INCREMENT, "
        "name varchar(20) NOT NULL DEFAULT '', kind enum('a','b'), price decimal(8,2), "
        "KEY k_name (name))"
    )
    server.query(
        "INSERT INTO shop.items (name, kind, price) VALUES ('x', 'a', 1.25), ('y', NULL, 2)"
    )
    yield server
    server.stop()


def test_no_data_dump_without_tablespaces_and_locks(source: ServerProcess) -> None:
    dump = run(
        "mariadb-dump", source, "--no-data", "--no-tablespaces", "--skip-lock-tables", "shop"
    )
    assert dump.returncode == 0, dump.stderr
    assert dump.stderr == ""
    assert "CREATE TABLE `items` (\n  `id` int unsigned NOT NULL AUTO_INCREMENT," in dump.stdout


@pytest.mark.parametrize("which", [["--databases", "shop"], ["--all-databases"]])
def test_dump_reloads_into_a_fresh_server(
    source: ServerProcess, tmp_path: Path, which: list[str]
) -> None:
    """Without the LOCK TABLES and ALTER TABLE ... DISABLE KEYS lines and the key-check
    variables, which other parts of issue 38 add. --all-databases dumps the user
    databases: the system schemas are not dumped (mysql is not listed)."""
    dump = run(
        "mariadb-dump",
        source,
        "--no-tablespaces",
        "--skip-lock-tables",
        "--skip-add-locks",
        "--skip-disable-keys",
        *which,
    )
    assert dump.returncode == 0, dump.stderr
    created = [
        line.split(" /*!40100")[0].rstrip(";")  # the character set: SHOW CREATE DATABASE's
        for line in dump.stdout.split("\n")
        if line.startswith("CREATE DATABASE")
    ]
    assert created == ["CREATE DATABASE /*!32312 IF NOT EXISTS*/ `shop`"]
    target = ServerProcess(tmp_path / "target").start()
    try:
        load = run("mariadb", target, stdin=_without_key_checks(dump.stdout))
        assert load.returncode == 0, load.stderr
        for query in ("SHOW CREATE TABLE shop.items", "SELECT * FROM shop.items ORDER BY id"):
            assert target.query(query) == source.query(query)
        assert target.query("CHECKSUM TABLE shop.items") == source.query(
            "CHECKSUM TABLE shop.items"
        )
    finally:
        target.stop()


KEY_CHECKS = ("UNIQUE_CHECKS", "FOREIGN_KEY_CHECKS")
"""The dump's variables the DDL part of issue 38 adds (unknown here until it lands)."""


def _without_key_checks(dump: str) -> str:
    """The dump minus its lines that set :data:`KEY_CHECKS`."""
    return "\n".join(line for line in dump.split("\n") if not any(k in line for k in KEY_CHECKS))


def test_default_no_data_dump(source: ServerProcess) -> None:
    dump = run("mariadb-dump", source, "--no-data", "shop")
    assert dump.returncode == 0, dump.stderr
