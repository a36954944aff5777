"""Transaction characteristics and table locks, as a session sees them.

* Isolation: ``transaction_isolation`` (default REPEATABLE-READ) is read through
  :meth:`Session.isolation_level`; a plain SELECT is a consistent read (the engine's read
  view), every other statement a current read. REPEATABLE READ and SERIALIZABLE keep the
  view of the transaction's first consistent read (or of START TRANSACTION WITH
  CONSISTENT SNAPSHOT); READ COMMITTED and READ UNCOMMITTED take one per statement.
  SERIALIZABLE makes a plain SELECT inside a transaction a locking read (the engine's
  row locks are exclusive, so such readers also wait for each other).
* Access mode: START TRANSACTION READ ONLY, SET TRANSACTION READ ONLY or
  ``transaction_read_only`` make INSERT/UPDATE/DELETE fail with 1792.
* LOCK TABLES / UNLOCK TABLES and FLUSH TABLES [t, ...] WITH READ LOCK, with MySQL's rules
  for the holder (1100 for a table not locked, 1099 for a write to a READ-locked table,
  1223 for a write under one's own global read lock) and waits for the others
  (:class:`rpl.core.engine.table_locks.TableLocks`). LOCK TABLES commits an open
  transaction; UNLOCK TABLES commits when tables were locked; START TRANSACTION releases
  the table locks. None of them is binlogged, as in MySQL.

:func:`before_statement` and :func:`after_statement` frame every statement
(:func:`rpl.core.execution.execute.execute` calls them).
"""

from __future__ import annotations

from collections.abc import Iterator

import attrs

from rpl.core.errors import (
    ER_CANT_CHANGE_TX_CHARACTERISTICS,
    ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION,
    ER_CANT_UPDATE_WITH_READLOCK,
    ER_LOCK_OR_ACTIVE_TRANSACTION,
    ER_NO_DB_ERROR,
    ER_SP_DOES_NOT_EXIST,
    ER_TABLE_NOT_LOCKED,
    ER_TABLE_NOT_LOCKED_FOR_WRITE,
    MySQLError,
)
from rpl.core.execution.results import Ok, Result
from rpl.core.execution.session import STATEMENT_VIEW_LEVELS, Session
from rpl.core.sql import ast

_DATA_WRITES = (ast.Insert, ast.Update, ast.Delete)
"""Statements that change rows (READ ONLY transactions refuse them)."""
_UNCHECKED = (
    ast.Show,
    ast.LockTables,
    ast.UnlockTables,
    ast.FlushTablesWithReadLock,
    ast.CreateTable,
)
"""Statements LOCK TABLES does not restrict (SHOW reads the catalogue; a table being
created cannot have been locked)."""
_SYSTEM_SCHEMAS = frozenset(("information_schema", "performance_schema"))


# ------------------------------------------------------------------ per statement
def before_statement(session: Session, statement: ast.Statement, writes: bool) -> ast.Statement:
    """Set up ``statement``'s reads and locks; ``writes``: it changes data or the catalogue.
    Returns the statement to run: at SERIALIZABLE in a transaction (BEGIN, or autocommit
    off) a plain SELECT becomes a locking read (``LOCK IN SHARE MODE``), as InnoDB makes it.

    Raises 1792 (a write in a READ ONLY transaction), 1223 (a write under the session's
    own global read lock), 1100/1099 (LOCK TABLES held and a table outside it or written
    under READ); waits (1205 after lock_wait_timeout) while other sessions' locks conflict.
    """
    consistent = isinstance(statement, ast.Select) and statement.lock is None
    if (
        consistent
        and session.in_transaction
        and session.isolation_level() == "SERIALIZABLE"
        and isinstance(statement, ast.Select)
        and statement.table is not None
    ):
        statement = attrs.evolve(statement, lock="SHARE")
        consistent = False
    session.consistent_statement = consistent
    locks = session.server.engine.table_locks
    if (
        writes
        and isinstance(statement, _DATA_WRITES)
        and session.account is not None  # the applier and recovery replay what was written
        and session.read_only()
    ):
        if session.trx is None:  # the refused statement was SET TRANSACTION's one transaction
            session.next_isolation = session.next_read_only = None
        raise MySQLError.of(ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION)
    writing = writes or (
        isinstance(statement, ast.Commit) and session.trx is not None and session.trx.has_changes
    )
    owner = session.thread_id
    if not locks.active and not session.locked_tables:
        if writing:
            locks.begin_write(owner, (), (), True, session.table_lock_timeout)
        return statement
    if writes and locks.holds_global_read(owner):
        raise MySQLError.of(ER_CANT_UPDATE_WITH_READLOCK)
    if isinstance(statement, ast.Begin) and session.locked_tables:
        session.commit()
        session.release_table_locks()
    reads: list[tuple[str, str]] = []
    written: list[tuple[str, str]] = []
    if not isinstance(statement, _UNCHECKED):
        target = getattr(statement, "table", None) if writes else None
        for ref in _table_refs(statement):
            db = ref.schema or session.db
            if db is None or db.lower() in _SYSTEM_SCHEMAS:
                continue
            write = ref is target
            if session.locked_tables:
                _check_locked(session, db, ref, write)
            (written if write else reads).append((db, ref.name))
    state = session.state
    session.state = (
        "Waiting for global read lock"
        if writing and locks.global_read_by_other(owner)
        else "Waiting for table metadata lock"
    )
    try:
        locks.begin_write(owner, reads, written, writing, session.table_lock_timeout)
    finally:
        session.state = state
    return statement


def after_statement(session: Session) -> None:
    """The statement ended: it no longer holds up FLUSH TABLES WITH READ LOCK (unless the
    group commit leader replies for it: the leader says so once the commit is done).
    """
    if not session.replied:
        session.server.engine.table_locks.end_write(session.thread_id)


def _check_locked(session: Session, db: str, ref: ast.TableName, write: bool) -> None:
    alias = ref.alias.lower() if ref.alias else None
    mode = session.locked_tables.get((db, ref.name, alias))
    if mode is None:
        raise MySQLError.of(ER_TABLE_NOT_LOCKED, ref.alias or ref.name)
    if write and not mode:
        raise MySQLError.of(ER_TABLE_NOT_LOCKED_FOR_WRITE, ref.alias or ref.name)


def _table_refs(node: object) -> Iterator[ast.TableName]:
    """Every table a statement names, wherever in its tree (joins and subqueries too)."""
    if isinstance(node, ast.TableName):
        yield node
    elif isinstance(node, tuple | list):
        for item in node:
            yield from _table_refs(item)
    else:  # an attrs node: its fields (nothing for a str, a number, None)
        for field in getattr(type(node), "__attrs_attrs__", ()):
            yield from _table_refs(getattr(node, field.name))


# ------------------------------------------------------------------ statements
def begin(session: Session, stmt: ast.Begin) -> Result:
    """BEGIN / START TRANSACTION [READ ONLY | READ WRITE] [, WITH CONSISTENT SNAPSHOT]:
    commit what is open, open a transaction; WITH CONSISTENT SNAPSHOT takes the read view
    now (at REPEATABLE READ; other levels ignore it, as InnoDB does).
    """
    if stmt.read_only is not None:
        session.commit()
        session.next_read_only = stmt.read_only
    session.begin()
    if stmt.consistent_snapshot and session.trx_isolation not in STATEMENT_VIEW_LEVELS:
        trx = session.transaction()
        trx.open_view()
    return Ok()


def set_transaction(session: Session, stmt: ast.SetTransaction) -> Result:
    """SET [GLOBAL | SESSION] TRANSACTION ISOLATION LEVEL ... | READ ONLY | READ WRITE.

    Without a scope the characteristics are the next transaction's only, and 1568 inside
    an open transaction; SESSION and GLOBAL set transaction_isolation /
    transaction_read_only.
    """
    level = stmt.isolation_level.replace(" ", "-") if stmt.isolation_level else None
    if stmt.scope is None:
        if session.in_transaction:
            raise MySQLError.of(ER_CANT_CHANGE_TX_CHARACTERISTICS)
        if level is not None:
            session.next_isolation = level
        if stmt.read_only is not None:
            session.next_read_only = stmt.read_only
        return Ok()
    variables = session.server.variables
    for name, value in (
        ("transaction_isolation", level),
        ("transaction_read_only", stmt.read_only),
    ):
        if value is None:
            continue
        if stmt.scope == "GLOBAL":
            session.require("SUPER", "SYSTEM_VARIABLES_ADMIN")
            variables.set_global(name, value)
        else:
            session.session_vars[name] = value
    return Ok()


def lock_tables(session: Session, stmt: ast.LockTables) -> Result:
    """LOCK TABLES: commit the open transaction, release the session's table locks, then
    lock every listed table at once (1146 for a missing table; waits for other sessions'
    conflicting locks, 1205 after lock_wait_timeout, holding nothing).
    """
    session.commit()
    session.release_table_locks()
    locked: dict[tuple[str, str, str | None], bool] = {}
    wanted: dict[tuple[str, str], bool] = {}
    for lock in stmt.locks:
        ref = lock.table
        db = ref.schema or session.db
        if db is None:
            raise MySQLError.of(ER_NO_DB_ERROR)
        session.server.engine.table(db, ref.name)  # ER_NO_SUCH_TABLE
        alias = ref.alias.lower() if ref.alias else None
        locked[(db, ref.name, alias)] = lock.write or locked.get((db, ref.name, alias), False)
        wanted[(db, ref.name)] = lock.write or wanted.get((db, ref.name), False)
    session.server.engine.table_locks.lock_tables(
        session.thread_id, wanted, session.table_lock_timeout()
    )
    session.locked_tables = locked
    return Ok()


def unlock_tables(session: Session, stmt: ast.UnlockTables) -> Result:
    """UNLOCK TABLES: commit if tables were locked, release them and the global read lock."""
    if session.locked_tables:
        session.commit()
    session.release_table_locks()
    return Ok()


def flush_tables_with_read_lock(session: Session, stmt: ast.FlushTablesWithReadLock) -> Result:
    """FLUSH TABLES WITH READ LOCK (the global read lock: waits for other sessions' writing
    statements, then holds up their writes and commits until UNLOCK TABLES); with a table
    list, READ locks on those tables as LOCK TABLES takes them. 1192 while the session
    holds LOCK TABLES.
    """
    session.require("RELOAD")
    if session.locked_tables:
        raise MySQLError.of(ER_LOCK_OR_ACTIVE_TRANSACTION)
    if stmt.tables:
        return lock_tables(
            session, ast.LockTables(tuple(ast.TableLock(t, False) for t in stmt.tables))
        )
    session.server.engine.table_locks.lock_global_read(
        session.thread_id, session.table_lock_timeout()
    )
    return Ok()


def savepoint(session: Session, stmt: ast.Savepoint) -> Result:
    """SAVEPOINT: remember the transaction's writes and binlog events so far (a name set
    again moves; outside a transaction there is nothing to return to, as in MySQL).
    """
    if session.in_transaction:
        trx = session.transaction()
        name = stmt.name.lower()
        session.savepoints.pop(name, None)
        session.savepoints[name] = (trx.savepoint(), len(session.events))
    return Ok()


def _savepoint_index(session: Session, name: str) -> tuple[list[str], int]:
    """The savepoint names in order and the position of ``name`` (1305 if it is not set)."""
    names = list(session.savepoints) if session.trx is not None else []
    if name.lower() not in names:
        raise MySQLError.of(ER_SP_DOES_NOT_EXIST, "SAVEPOINT", name)
    return names, names.index(name.lower())


def rollback_to_savepoint(session: Session, stmt: ast.RollbackToSavepoint) -> Result:
    """ROLLBACK TO SAVEPOINT: undo the writes made since, and drop their binlog events so
    the transaction logs (and a replica applies) only what stays; later savepoints go,
    row locks stay held, as in InnoDB.
    """
    names, index = _savepoint_index(session, stmt.name)
    trx = session.transaction()
    undo, events = session.savepoints[names[index]]
    trx.rollback_to(undo)
    del session.events[events:]
    for later in names[index + 1 :]:
        del session.savepoints[later]
    return Ok()


def release_savepoint(session: Session, stmt: ast.ReleaseSavepoint) -> Result:
    """RELEASE SAVEPOINT: forget it and every savepoint set after it."""
    names, index = _savepoint_index(session, stmt.name)
    for name in names[index:]:
        del session.savepoints[name]
    return Ok()
