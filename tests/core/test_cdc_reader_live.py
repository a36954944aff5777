"""python-mysql-replication (PyPI ``mysql-replication``, the decoder Python CDC tools use)
streaming row events from a running server over COM_BINLOG_DUMP, as a CDC tool does: with
``binlog_row_metadata = FULL`` it names the columns from TABLE_MAP; with MINIMAL it asks
``information_schema.COLUMNS``. Either way it must return exactly the rows written.
"""

from __future__ import annotations

import decimal
from pathlib import Path

import pytest
from pymysqlreplication import BinLogStreamReader
from pymysqlreplication.row_event import DeleteRowsEvent, UpdateRowsEvent, WriteRowsEvent

from rpl.core.testing.process import ServerProcess


@pytest.mark.parametrize("metadata", ["FULL", "MINIMAL"])
def test_cdc_reader_gets_the_rows_written(tmp_path: Path, metadata: str) -> None:
    server = ServerProcess(tmp_path / "data").start()
    try:
        server.query(f"SET GLOBAL binlog_row_metadata = {metadata}")
        server.query("CREATE DATABASE d")
        server.query("CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(20), n DECIMAL(8,2))")
        server.query("INSERT INTO d.t VALUES (1, 'a', 1.5), (2, NULL, -2.25)")
        server.query("UPDATE d.t SET v = 'zz' WHERE id = 1")
        server.query("DELETE FROM d.t WHERE id = 2")
        stream = BinLogStreamReader(
            connection_settings={"host": "127.0.0.1", "port": server.port, "user": "root"},
            server_id=99,
            blocking=False,
            only_events=[WriteRowsEvent, UpdateRowsEvent, DeleteRowsEvent],
            use_column_name_cache=metadata == "MINIMAL",
        )
        seen = [(type(e).__name__, e.schema, e.table, e.rows) for e in stream]
        stream.close()
    finally:
        server.stop()
    one = {"id": 1, "v": "a", "n": decimal.Decimal("1.50")}
    two = {"id": 2, "v": None, "n": decimal.Decimal("-2.25")}
    assert [(name, schema, table) for name, schema, table, _ in seen] == [
        ("WriteRowsEvent", "d", "t"),
        ("UpdateRowsEvent", "d", "t"),
        ("DeleteRowsEvent", "d", "t"),
    ]
    assert [r["values"] for r in seen[0][3]] == [one, two]
    assert [(r["before_values"], r["after_values"]) for r in seen[1][3]] == [
        (one, {**one, "v": "zz"})
    ]
    assert [r["values"] for r in seen[2][3]] == [two]
