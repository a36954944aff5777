"""The server's storage engine: in-memory tables with InnoDB's multi-versioned reads.

:mod:`.schema` defines tables; :mod:`.coercion` converts values as MySQL strict mode does;
:mod:`.locks` is the row lock manager (FIFO waits, lock wait timeout, deadlock
detection); :mod:`.storage` holds the engine, its tables and transactions.
"""

from rpl.core.engine.coercion import Value, coerce
from rpl.core.engine.locks import LockKey, LockManager, LockOwner
from rpl.core.engine.schema import NO_DEFAULT, ColumnSchema, Row, TableSchema
from rpl.core.engine.storage import (
    Engine,
    Key,
    RowChange,
    Table,
    Transaction,
    TransactionStateError,
)

__all__ = [
    "NO_DEFAULT",
    "ColumnSchema",
    "Engine",
    "Key",
    "LockKey",
    "LockManager",
    "LockOwner",
    "Row",
    "RowChange",
    "Table",
    "TableSchema",
    "Transaction",
    "TransactionStateError",
    "Value",
    "coerce",
]
