"""Replication topologies of real server processes, for tests and demos.

Helpers that a MySQL user would otherwise type by hand: create the replication
account on a source, point a replica at it, wait until replicas have executed
everything their source has, and read SHOW SLAVE STATUS as a dict.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from rpl.core.testing.process import ServerProcess

REPL_USER = "repl"
REPL_PASSWORD = "repl-pw"


def create_replication_user(
    source: ServerProcess, user: str = REPL_USER, password: str = REPL_PASSWORD
) -> None:
    """CREATE USER + GRANT REPLICATION SLAVE on ``source``."""
    source.query(f"CREATE USER '{user}'@'%' IDENTIFIED BY '{password}'")
    source.query(f"GRANT REPLICATION SLAVE ON *.* TO '{user}'@'%'")


def replicate(
    replica: ServerProcess,
    source: ServerProcess,
    *,
    auto_position: bool = True,
    start: bool = True,
    user: str = REPL_USER,
    password: str = REPL_PASSWORD,
    **options: object,
) -> None:
    """CHANGE MASTER TO ``source`` on ``replica`` (plus MASTER_* ``options``), then START SLAVE."""
    settings = {
        "MASTER_HOST": "127.0.0.1",
        "MASTER_PORT": source.port,
        "MASTER_USER": user,
        "MASTER_PASSWORD": password,
    }
    if auto_position:
        settings["MASTER_AUTO_POSITION"] = 1
    settings.update({k.upper(): v for k, v in options.items()})
    text = ", ".join(
        f"{k}={v!r}" if isinstance(v, str) else f"{k}={v}" for k, v in settings.items()
    )
    replica.query(f"CHANGE MASTER TO {text}")
    if start:
        replica.query("START SLAVE")


def slave_status(server: ServerProcess) -> dict[str, Any]:
    """SHOW SLAVE STATUS as a dict (empty when the server is not a replica)."""
    import pymysql.cursors

    connection = server.connect(cursorclass=pymysql.cursors.DictCursor)
    try:
        with connection.cursor() as cursor:
            cursor.execute("SHOW SLAVE STATUS")
            row = cursor.fetchone()
            return dict(row) if row else {}
    finally:
        connection.close()


def status(server: ServerProcess, name: str) -> str:
    """One global status variable's value as SHOW STATUS prints it."""
    rows = server.query(f"SHOW GLOBAL STATUS LIKE '{name}'")
    assert rows, f"{name} is not a status variable of {server.datadir.name}"
    return str(rows[0][1])


def gtid_executed(server: ServerProcess) -> str:
    """@@GLOBAL.gtid_executed."""
    return str(server.query("SELECT @@GLOBAL.gtid_executed")[0][0])


def wait_for(
    condition: Callable[[], bool],
    timeout: float = 30.0,
    what: str = "condition",
    interval: float = 0.05,
) -> None:
    """Poll ``condition`` until true; AssertionError naming ``what`` after ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def wait_caught_up(source: ServerProcess, *replicas: ServerProcess, timeout: float = 60.0) -> str:
    """Wait until every replica's gtid_executed equals the source's; that set.

    Fails early, with the replica's errors, when a replication thread stopped on one.
    """
    target = gtid_executed(source)

    def done() -> bool:
        for replica in replicas:
            status = slave_status(replica)
            if status and (
                status["Last_SQL_Errno"]
                or (status["Last_IO_Errno"] and status["Slave_IO_Running"] == "No")
            ):
                raise AssertionError(
                    f"replication stopped on {replica.datadir.name}: IO "
                    f"{status['Last_IO_Errno']} {status['Last_IO_Error']!r}, SQL "
                    f"{status['Last_SQL_Errno']} {status['Last_SQL_Error']!r}"
                )
            if gtid_executed(replica) != target:
                return False
        return True

    wait_for(done, timeout, f"replicas to reach {target}", interval=0.1)
    return target


def drain(replica: ServerProcess) -> dict[str, Any]:
    """After its source died: wait until the receiver noticed, stop it, wait until the
    applier has applied everything received (Retrieved_Gtid_Set within gtid_executed);
    SHOW SLAVE STATUS as it was when the receiver stopped.
    """
    from rpl.core.binlog.gtid import GtidSet

    def receiver_down() -> bool:
        return str(slave_status(replica)["Slave_IO_Running"]) != "Yes"

    def applied_everything() -> bool:
        retrieved = GtidSet.parse(str(slave_status(replica)["Retrieved_Gtid_Set"]))
        return retrieved.is_subset(GtidSet.parse(gtid_executed(replica)))

    wait_for(receiver_down, 30, "the receiver to notice the source is gone")
    replica.query("STOP SLAVE IO_THREAD")
    status = slave_status(replica)
    wait_for(applied_everything, 60, "the applier to apply what it received")
    return status
