"""Read-only tables computed at each read: ``performance_schema.threads``.

A SELECT on one of them builds an ordinary engine :class:`Table` from the server's
state of that moment, so WHERE, ORDER BY, LIMIT and projections work as on any table.
"""

from __future__ import annotations

import threading

from rpl.core.engine import Table
from rpl.core.engine.schema import ColumnSchema, TableSchema
from rpl.core.errors import ER_NO_SUCH_TABLE, MySQLError
from rpl.core.threads import ThreadRegistry

SCHEMA = "performance_schema"

THREADS = TableSchema(
    SCHEMA,
    "threads",
    (
        ColumnSchema("THREAD_ID", "BIGINT", unsigned=True, nullable=False),
        ColumnSchema("NAME", "VARCHAR", 128, nullable=False),
        ColumnSchema("TYPE", "VARCHAR", 10, nullable=False),
        ColumnSchema("PROCESSLIST_COMMAND", "VARCHAR", 16),
        ColumnSchema("PROCESSLIST_STATE", "VARCHAR", 64),
        ColumnSchema("THREAD_OS_ID", "BIGINT", unsigned=True),
    ),
    ("THREAD_ID",),
)


def virtual_table(threads: ThreadRegistry, db: str, name: str) -> Table:
    """The table ``db.name`` as of now; ER_NO_SUCH_TABLE if there is none."""
    if name.lower() != "threads":
        raise MySQLError.of(ER_NO_SUCH_TABLE, db, name)
    rows = [
        (
            row.thread_id,
            (
                row.thread_id,
                row.name,
                row.type,
                row.processlist_command,
                row.processlist_state,
                row.thread_os_id,
            ),
        )
        for row in threads.rows()
    ]
    return Table(0, THREADS, threading.Lock(), rows)
