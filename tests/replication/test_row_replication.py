"""Row-based replication between real server processes: formats interoperate, a chain
keeps the format each transaction arrived in, and the applier stops on a missing row with
MySQL's Last_SQL_Errno/Last_SQL_Error and goes on in IDEMPOTENT mode.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from conftest import ServerFactory, Writers
from test_async_replication import assert_same_data

from rpl.core.binlog.events import QUERY_EVENT, WRITE_ROWS_EVENT, QueryEvent
from rpl.core.testing.binlogs import binlog_entries
from rpl.core.testing.process import ServerProcess
from rpl.core.testing.topology import (
    create_replication_user,
    replicate,
    slave_status,
    wait_caught_up,
    wait_for,
)


def dml_formats(server: ServerProcess) -> Counter[str]:
    """How ``server``'s binlog logged changes to d.t: "rows" events, "statement"s."""
    seen: Counter[str] = Counter()
    for entry in binlog_entries(server.datadir):
        code = entry.header.type_code
        if code == WRITE_ROWS_EVENT:
            seen["rows"] += 1
        elif code == QUERY_EVENT and isinstance(entry.event, QueryEvent):
            if entry.event.query.startswith("INSERT INTO `d`.`t`"):
                seen["statement"] += 1
    return seen


def test_statement_source_and_row_replica_interoperate(servers: ServerFactory) -> None:
    source = servers("source", "--binlog-format=STATEMENT")
    create_replication_user(source)
    source.query("CREATE DATABASE d")
    source.query("CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(40), n INT)")
    replica = servers("replica")
    assert replica.query("SELECT @@global.binlog_format") == [("ROW",)]
    replicate(replica, source)
    Writers(source, 3).start(30).join()
    assert_same_data(source, replica)
    assert dml_formats(source)["rows"] == 0 and dml_formats(source)["statement"] > 0
    formats = dml_formats(replica)
    assert formats["rows"] == 0 and formats["statement"] == dml_formats(source)["statement"], (
        "the replica logs what it applied in the format it received"
    )


def test_a_chain_keeps_the_format_each_transaction_arrived_in(
    servers: ServerFactory, source: ServerProcess, writers: Callable[..., Writers]
) -> None:
    middle = servers("middle", "--binlog-format=STATEMENT")
    last = servers("last")
    replicate(middle, source)
    wait_caught_up(source, middle)  # the replication account reaches the middle
    replicate(last, middle)
    writers(3).start(30).join()
    source.query("SET GLOBAL binlog_format = STATEMENT")
    Writers(source, 2, start_id=100_000).start(10).join()
    assert_same_data(source, middle, last)
    for server in (source, middle, last):
        formats = dml_formats(server)
        assert formats["rows"] > 0 and formats["statement"] > 0, (server.datadir.name, formats)
    assert dml_formats(middle)["rows"] == dml_formats(source)["rows"]
    assert dml_formats(last) == dml_formats(source)


def test_applier_stops_on_a_missing_row_then_idempotent_goes_on(
    servers: ServerFactory, source: ServerProcess
) -> None:
    replica = servers("replica")
    replicate(replica, source)
    source.query("INSERT INTO d.t VALUES (1, 'a', 1), (2, 'b', 2)")
    wait_caught_up(source, replica)  # the CREATE TABLE and the rows, in order
    assert replica.query("SELECT COUNT(*) FROM d.t") == [(2,)]
    replica.query("DELETE FROM d.t WHERE id = 2")
    source.query("UPDATE d.t SET n = n + 10")
    wait_for(lambda: slave_status(replica)["Last_SQL_Errno"] != 0, what="the applier stops")
    status = slave_status(replica)
    assert status["Slave_SQL_Running"] == "No" and status["Last_SQL_Errno"] == 1032
    message = status["Last_SQL_Error"]
    assert message.startswith(
        "Could not execute Update_rows event on table d.t; Can't find record in 't', "
        "Error_code: 1032; handler error HA_ERR_KEY_NOT_FOUND; the event's master log "
        "binlog.000001, end_log_pos "
    ), message
    assert replica.query("SELECT id, n FROM d.t") == [(1, 1)], "nothing half-applied"
    replica.query("SET GLOBAL replica_exec_mode = IDEMPOTENT")
    replica.query("START SLAVE SQL_THREAD")
    wait_for(
        lambda: replica.query("SELECT id, n FROM d.t") == [(1, 11)], what="the applier goes on"
    )
    assert slave_status(replica)["Last_SQL_Errno"] == 0
