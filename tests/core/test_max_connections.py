"""max_connections as MySQL enforces it: that many client sessions for any account, one
more for an account with CONNECTION_ADMIN or SUPER, then 1040 "Too many connections";
a session that ends frees its place. The replica's applier is not a client session.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pymysql
import pytest

from rpl.core.testing.process import ServerProcess


def status(server: ServerProcess, name: str) -> int:
    return int(server.query(f"SHOW GLOBAL STATUS LIKE '{name}'")[0][1])


def reconnect(server: ServerProcess) -> Any:
    """Log in as u once the server has seen a closed session end (it ends a moment
    after the client's COM_QUIT)."""
    deadline = time.monotonic() + 10
    while True:
        try:
            return server.connect(user="u", password="p")
        except pymysql.MySQLError as exc:
            if exc.args[0] != 1040 or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def test_the_limit_keeps_one_place_for_an_administrator(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path / "data", options=["--max-connections=3"]).start()
    try:
        server.query("CREATE USER 'u'@'%' IDENTIFIED BY 'p'")
        held: list[Any] = [server.connect(user="u", password="p") for _ in range(3)]
        with pytest.raises(pymysql.MySQLError) as refused:
            server.connect(user="u", password="p")
        assert refused.value.args == (1040, "Too many connections")
        held.append(server.connect())  # root: SUPER, the place kept for an administrator
        with pytest.raises(pymysql.MySQLError) as refused:
            server.connect()
        assert refused.value.args[0] == 1040
        held.pop().close()  # root's; u still finds max_connections sessions
        held.pop(0).close()
        held.append(reconnect(server))  # a freed place is reused
        with held[-1].cursor() as cursor:
            cursor.execute("SELECT 1")
            assert cursor.fetchall() == ((1,),)
        for connection in held:
            connection.close()
        assert status(server, "Connection_errors_max_connections") >= 2
        assert status(server, "Max_used_connections") == 4
    finally:
        server.stop()
