"""What every percona-toolkit tool sends first: ``SET @@SQL_QUOTE_SHOW_CREATE = 1`` with
its sql_mode, then session variables. The tools themselves run against a real source
and replica in tests/replication/test_seed_replica.py (pt-table-checksum, pt-heartbeat)."""

from __future__ import annotations

from typing import Any


def test_first_statements_of_every_tool(server: Any) -> None:
    """What percona-toolkit's DSN code sends on connecting, in order."""
    connection = server.connect()
    cursor = connection.cursor()
    cursor.execute("SELECT @@SQL_MODE")
    cursor.execute(
        "SET @@SQL_QUOTE_SHOW_CREATE = 1/*!40101, @@SQL_MODE='NO_AUTO_VALUE_ON_ZERO,"
        "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES'*/"
    )
    cursor.execute("SET SESSION wait_timeout=10000")
    cursor.execute("SELECT @@SQL_QUOTE_SHOW_CREATE, @@SESSION.wait_timeout, @@SESSION.sql_mode")
    assert cursor.fetchall() == (
        (1, 10000, "NO_AUTO_VALUE_ON_ZERO,ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES"),
    )
    connection.close()
