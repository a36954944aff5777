"""Read-only tables computed at each read: ``performance_schema.threads`` and
``information_schema.COLUMNS`` (what change-data-capture readers ask to name a table's
columns when TABLE_MAP carries no names).

A SELECT on one of them builds an ordinary engine :class:`Table` from the server's
state of that moment, so WHERE, ORDER BY, LIMIT and projections work as on any table.
"""

from __future__ import annotations

import threading

from rpl.core.engine import NO_DEFAULT, Engine, Row, Table
from rpl.core.engine.schema import ColumnSchema, TableSchema
from rpl.core.errors import ER_NO_SUCH_TABLE, MySQLError
from rpl.core.threads import ThreadRegistry

SCHEMA = "performance_schema"
INFORMATION_SCHEMA = "information_schema"
SCHEMAS = frozenset((SCHEMA, INFORMATION_SCHEMA))
"""The databases whose tables this module computes (lower case)."""

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


def database_exists(engine: Engine, name: str) -> bool:
    """Whether ``name`` is a database: the engine's, or one of :data:`SCHEMAS`."""
    return engine.has_database(name) or name.lower() in SCHEMAS


def virtual_table(threads: ThreadRegistry, engine: Engine, db: str, name: str) -> Table:
    """The table ``db.name`` as of now; ER_NO_SUCH_TABLE if there is none."""
    if db.lower() == SCHEMA and name.lower() == "threads":
        return _threads(threads)
    if db.lower() == INFORMATION_SCHEMA and name.lower() == "columns":
        return _columns(engine)
    raise MySQLError.of(ER_NO_SUCH_TABLE, db, name)


def _threads(threads: ThreadRegistry) -> Table:
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


COLUMNS = TableSchema(
    INFORMATION_SCHEMA,
    "COLUMNS",
    (
        ColumnSchema("TABLE_CATALOG", "VARCHAR", 64, nullable=False),
        ColumnSchema("TABLE_SCHEMA", "VARCHAR", 64, nullable=False),
        ColumnSchema("TABLE_NAME", "VARCHAR", 64, nullable=False),
        ColumnSchema("COLUMN_NAME", "VARCHAR", 64, nullable=False),
        ColumnSchema("ORDINAL_POSITION", "INT", unsigned=True, nullable=False),
        ColumnSchema("COLUMN_DEFAULT", "TEXT"),
        ColumnSchema("IS_NULLABLE", "VARCHAR", 3, nullable=False),
        ColumnSchema("DATA_TYPE", "VARCHAR", 64, nullable=False),
        ColumnSchema("COLUMN_TYPE", "VARCHAR", 255, nullable=False),
        ColumnSchema("COLUMN_KEY", "VARCHAR", 3, nullable=False),
        ColumnSchema("EXTRA", "VARCHAR", 256, nullable=False),
    ),
    ("TABLE_SCHEMA", "TABLE_NAME", "ORDINAL_POSITION"),
)


_MEMBER_ESCAPES = str.maketrans(
    {"\\": "\\\\", "\0": "\\0", "\n": "\\n", "\r": "\\r", "\x1a": "\\Z", "'": "''"}
)


def column_type_text(column: ColumnSchema) -> str:
    """A column's type as SHOW CREATE TABLE, SHOW COLUMNS and information_schema.COLUMNS
    write it (``Field::sql_type``): ``int``, ``varchar(40)``, ``decimal(10,2)``,
    ``enum('a','b')``, ``set('x','y')`` (each member quoted as ``append_unescaped`` does:
    ``'`` doubled, backslash and control characters escaped). UNSIGNED is not part of it.
    """
    kind = column.type_name.lower()
    if column.members:
        quoted = ",".join(f"'{m.translate(_MEMBER_ESCAPES)}'" for m in column.members)
        return f"{kind}({quoted})"
    if column.length is not None:
        kind += f"({column.length}" + (f",{column.scale})" if column.scale is not None else ")")
    return kind


def _unique_keys(schema: TableSchema) -> list[tuple[str, ...]]:
    return [cols for name, cols in schema.indexes.items() if name in schema.unique]


def column_facts(schema: TableSchema, column: ColumnSchema) -> tuple[str, str, object, str]:
    """(type, key, default, extra) of a column as SHOW COLUMNS and
    information_schema.COLUMNS give them: ``int``/``varchar(40)``, PRI/UNI/MUL/"", the
    default (None for none), ``auto_increment`` or "".
    """
    kind = column_type_text(column)
    if column.name in schema.primary_key:
        key = "PRI"
    elif any(cols == (column.name,) for cols in _unique_keys(schema)):
        key = "UNI"
    elif any(c[0] == column.name for c in schema.indexes.values()):
        key = "MUL"
    else:
        key = ""
    default = None if column.default is NO_DEFAULT else column.default
    return kind, key, default, "auto_increment" if column.auto_increment else ""


def _columns(engine: Engine) -> Table:
    rows: list[tuple[object, Row]] = []
    for db in engine.databases():
        for name in engine.tables(db):
            schema = engine.table(db, name).schema
            for position, column in enumerate(schema.columns, 1):
                kind, key, default, extra = column_facts(schema, column)
                row: Row = (
                    "def",
                    db,
                    name,
                    column.name,
                    position,
                    None if default is None else str(default),
                    "YES" if column.nullable else "NO",
                    column.type_name.lower(),
                    kind + (" unsigned" if column.unsigned else ""),
                    key,
                    extra,
                )
                rows.append(((db, name, position), row))
    return Table(0, COLUMNS, threading.Lock(), rows)
