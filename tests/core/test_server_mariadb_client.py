"""Debian's ``mariadb`` command-line client against a real rpl server process.

The client is libmariadb plus its own start-up queries (``select @@version_comment limit 1``
in an interactive session, table-name completion after ``use``, ``status``), so these tests
check that a stock client sees a MySQL server: result tables, SHOW statements, and errors
printed as ``ERROR 1146 (42S02)`` with a non-zero exit code.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from typing import Any

import pytest

pytestmark = pytest.mark.skipif(
    shutil.which("mariadb") is None, reason="Debian's mariadb client is not installed"
)

ENV = {**os.environ, "TERM": "dumb", "HOME": os.environ.get("HOME", "/tmp")}


def mariadb(
    server: Any, *args: str, stdin: str | None = None, timeout: float = 30
) -> subprocess.CompletedProcess[str]:
    """Run the client as root over TCP; the finished process."""
    command = [
        "mariadb",
        "--no-defaults",
        "-h127.0.0.1",
        f"-P{server.port}",
        "-uroot",
        "--skip-ssl",
        *args,
    ]
    return subprocess.run(
        command, input=stdin, capture_output=True, text=True, timeout=timeout, env=ENV, check=False
    )


def ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    return result.stdout


def test_execute_and_batch(server: Any) -> None:
    assert (
        ok(mariadb(server, "-e", "SELECT 1 AS a, 'x' AS b, NULL AS c")) == "a\tb\tc\n1\tx\tNULL\n"
    )
    out = ok(
        mariadb(
            server,
            "--batch",
            "-e",
            "CREATE DATABASE cli1; CREATE TABLE cli1.t (id INT PRIMARY KEY "
            "AUTO_INCREMENT, s VARCHAR(10)); "
            "INSERT INTO cli1.t (s) VALUES ('a'), (NULL), ('tab\there'); "
            "SELECT * FROM cli1.t ORDER BY id; SELECT LAST_INSERT_ID()",
        )
    )
    assert out == ("id\ts\n1\ta\n2\tNULL\n3\ttab\\there\nLAST_INSERT_ID()\n1\n")
    assert ok(mariadb(server, "-N", "-B", "cli1", "-e", "SELECT COUNT(*) FROM t")) == "3\n"


def test_table_output(server: Any) -> None:
    ok(
        mariadb(
            server,
            "-e",
            "CREATE DATABASE cli2; CREATE TABLE cli2.t "
            "(id INT PRIMARY KEY, name VARCHAR(8)); "
            "INSERT INTO cli2.t VALUES (1, 'ann'), (20, 'bo')",
        )
    )
    out = ok(mariadb(server, "--table", "cli2", "-e", "SELECT id, name FROM t ORDER BY id"))
    assert out == (
        "+----+------+\n| id | name |\n+----+------+\n|  1 | ann  |\n| 20 | bo   |\n+----+------+\n"
    )


def test_show_statements(server: Any) -> None:
    ok(
        mariadb(
            server,
            "-e",
            "CREATE DATABASE cli3; CREATE TABLE cli3.t "
            "(id INT NOT NULL, v BIGINT DEFAULT 7, PRIMARY KEY (id))",
        )
    )
    databases = ok(mariadb(server, "-N", "-e", "SHOW DATABASES")).split("\n")
    assert "cli3" in databases
    assert ok(mariadb(server, "-B", "cli3", "-e", "SHOW TABLES")) == "Tables_in_cli3\nt\n"
    columns = ok(mariadb(server, "-B", "-N", "cli3", "-e", "SHOW COLUMNS FROM t"))
    assert columns == "id\tint\tNO\tPRI\tNULL\t\nv\tbigint\tYES\t\t7\t\n"
    create = ok(mariadb(server, "-B", "-N", "-r", "cli3", "-e", "SHOW CREATE TABLE t"))
    assert create.startswith("t\tCREATE TABLE `t` (\n  `id` int NOT NULL,\n")
    assert (
        ok(mariadb(server, "-B", "-N", "-e", "SHOW VARIABLES LIKE 'autocommit'"))
        == "autocommit\tON\n"
    )
    status = ok(mariadb(server, "-B", "-N", "-e", "SHOW MASTER STATUS"))
    assert re.fullmatch(r"binlog\.000001\t\d+\t\t\t[0-9a-f-]{36}:1-\d+\n", status), status
    logs = ok(mariadb(server, "-B", "-N", "-e", "SHOW BINARY LOGS"))
    assert logs.startswith("binlog.000001\t")


def test_error_exit_code_and_text(server: Any) -> None:
    ok(mariadb(server, "-e", "CREATE DATABASE IF NOT EXISTS cli4"))
    result = mariadb(server, "cli4", "-e", "SELECT * FROM nope")
    assert result.returncode == 1
    assert result.stdout == ""
    # the 10.x client echoes the failing statement of -e between dashes, then the error
    assert result.stderr.endswith(
        "SELECT * FROM nope\n--------------\n\n"
        "ERROR 1146 (42S02) at line 1: Table 'cli4.nope' doesn't exist\n"
    )
    result = mariadb(server, "-e", "SELEKT 1")
    assert result.returncode == 1
    assert result.stderr.split("\n\n", 1)[1].startswith(
        "ERROR 1064 (42000) at line 1: You have an error in your SQL syntax; "
    )
    # a script stops at its first error unless --force
    script = "SELECT 1 AS one;\nSELECT * FROM cli4.nope;\nSELECT 2 AS two;\n"
    result = mariadb(server, "-B", stdin=script)
    assert result.returncode == 1
    assert result.stdout == "one\n1\n"
    assert result.stderr.endswith(
        "\n\nERROR 1146 (42S02) at line 2: Table 'cli4.nope' doesn't exist\n"
    )
    result = mariadb(server, "-B", "--force", stdin=script)
    assert result.returncode == 0  # the client forgives errors it was told to skip
    assert "ERROR 1146 (42S02) at line 2" in result.stderr
    assert result.stdout == "one\n1\ntwo\n2\n"


def test_script_on_stdin(server: Any) -> None:
    script = (
        "CREATE DATABASE cli5;\n"
        "USE cli5;\n"
        "CREATE TABLE t (id INT PRIMARY KEY, v INT);\n"
        "BEGIN;\n"
        "INSERT INTO t VALUES (1, 10), (2, 20);\n"
        "UPDATE t SET v = v + 1\n  WHERE id = 2;\n"
        "COMMIT;\n"
        "SELECT id, v FROM t ORDER BY id;\n"
        "SELECT @@autocommit, DATABASE();\n"
    )
    assert (
        ok(mariadb(server, "-B", stdin=script))
        == "id\tv\n1\t10\n2\t21\n@@autocommit\tDATABASE()\n1\tcli5\n"
    )


@pytest.mark.skipif(shutil.which("script") is None, reason="util-linux script is missing")
def test_interactive_session(server: Any) -> None:
    """A session on a terminal: the monitor's greeting and start-up queries, the prompt,
    table completion after ``use``, ``status``, results and an error, then ``quit``."""
    ok(
        mariadb(
            server,
            "-e",
            "CREATE DATABASE cli6; CREATE TABLE cli6.t (id INT PRIMARY KEY); "
            "INSERT INTO cli6.t VALUES (1), (2)",
        )
    )
    command = (
        f"mariadb --no-defaults -h127.0.0.1 -P{server.port} -uroot --skip-ssl --prompt='rpl> '"
    )
    session = (
        "select 41 + 1 as answer;\n"
        "use cli6\n"
        "select count(*) from t;\n"
        "select * from nope;\n"
        "status\n"
        "quit\n"
    )
    result = subprocess.run(
        ["script", "-qec", command, "/dev/null"],
        input=session,
        capture_output=True,
        text=True,
        timeout=30,
        env=ENV,
        check=False,
    )
    out = re.sub(r"\x1b[\[(][0-9;]*[A-Za-z]|\x1b\(B|\r", "", result.stdout)
    assert result.returncode == 0, out
    assert "Welcome to the MariaDB monitor." in out
    assert "Server version: 8.0.36-rpl rpl - MySQL replication plugin architecture in Python" in out
    assert "+--------+\n| answer |\n+--------+\n|     42 |\n+--------+\n1 row in set" in out
    assert "Database changed" in out
    assert "| count(*) |\n+----------+\n|        2 |" in out
    assert "ERROR 1146 (42S02): Table 'cli6.nope' doesn't exist" in out
    assert re.search(r"Current database:\s+cli6\n", out), out
    assert re.search(r"Server version:\s+8\.0\.36-rpl", out)
    assert out.rstrip().endswith("Bye")
