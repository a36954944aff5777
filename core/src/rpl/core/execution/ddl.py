"""Data definition and account statements.

Each commits the session's open transaction first (MySQL's implicit commit), changes
the catalogue, then is written to the binlog as a transaction of its own (GTID +
QUERY). Account statements are logged with the stored password hash
(``IDENTIFIED WITH 'mysql_native_password' AS '*...'``), never with the password.
"""

from __future__ import annotations

from rpl.core.engine import NO_DEFAULT, ColumnSchema, TableSchema
from rpl.core.engine.coercion import member_key
from rpl.core.errors import (
    ER_BAD_DB_ERROR,
    ER_BAD_TABLE_ERROR,
    ER_DB_CREATE_EXISTS,
    ER_DB_DROP_EXISTS,
    ER_DUPLICATED_VALUE_IN_TYPE,
    ER_ILLEGAL_VALUE_FOR_TYPE,
    ER_MULTIPLE_PRI_KEY,
    ER_NO_DB_ERROR,
    ER_NOT_SUPPORTED_YET,
    ER_TABLE_EXISTS_ERROR,
    ER_TOO_BIG_SET,
    MySQLError,
)
from rpl.core.execution import virtual_tables
from rpl.core.execution.results import Ok, Result
from rpl.core.execution.session import Session
from rpl.core.net.handshake import NATIVE_PASSWORD, password_hash
from rpl.core.sql import ast
from rpl.core.sql.ast import quote_literal


def _database(session: Session, name: ast.TableName) -> str:
    db = name.schema or session.db
    if db is None:
        raise MySQLError.of(ER_NO_DB_ERROR)
    return db


def _table_exists(session: Session, db: str, name: str) -> bool:
    try:
        session.server.engine.table(db, name)
    except MySQLError:
        return False
    return True


def _column(definition: ast.ColumnDef, session: Session) -> ColumnSchema:
    default: object = NO_DEFAULT
    if isinstance(definition.default, ast.Literal):
        default = definition.default.value
    elif definition.default is not None:
        default = NO_DEFAULT
    nullable = (
        definition.nullable if definition.nullable is not None else not definition.primary_key
    )
    return ColumnSchema(
        definition.name,
        definition.type_name,
        definition.length,
        definition.unsigned,
        nullable,
        default,
        definition.auto_increment,
        definition.scale,
        _members(definition),
    )


def _members(definition: ast.ColumnDef) -> tuple[str, ...]:
    """An ENUM's or SET's members as MySQL keeps them (trailing spaces removed), checked
    as strict mode checks them: a repeat (compared as the collation compares) is 1291, a
    SET member with a comma 1367, more than 64 SET members 1097.
    """
    kind = definition.type_name.upper()
    if kind not in ("ENUM", "SET"):
        return ()
    members = tuple(value.rstrip(" ") for value in definition.values)
    seen: set[str] = set()
    for member in members:
        if member_key(member) in seen:
            raise MySQLError.of(ER_DUPLICATED_VALUE_IN_TYPE, definition.name, member, kind)
        seen.add(member_key(member))
        if kind == "SET" and "," in member:
            raise MySQLError.of(ER_ILLEGAL_VALUE_FOR_TYPE, "set", member)
    if kind == "SET" and len(members) > 64:
        raise MySQLError.of(ER_TOO_BIG_SET, definition.name)
    return members


def create_table(session: Session, stmt: ast.CreateTable, text: str) -> Result:
    """CREATE TABLE."""
    session.commit()
    db = _database(session, stmt.table)
    columns = tuple(_column(c, session) for c in stmt.columns)
    primary = [i for i in stmt.indexes if i.primary]
    inline = [c.name for c in stmt.columns if c.primary_key]
    if len(primary) + (1 if inline else 0) > 1 or len(inline) > 1:
        raise MySQLError.of(ER_MULTIPLE_PRI_KEY)
    primary_key = primary[0].columns if primary else tuple(inline)
    indexes = {(i.name or i.columns[0]): i.columns for i in stmt.indexes if not i.primary}
    schema = TableSchema(db, stmt.table.name, columns, primary_key, indexes)
    if session.server.engine.create_table(schema, stmt.if_not_exists) is not None:
        session.log_ddl(text)
    else:
        session.warn(MySQLError.of(ER_TABLE_EXISTS_ERROR, stmt.table.name), "Note")
    return Ok()


def drop_table(session: Session, stmt: ast.DropTable, text: str) -> Result:
    """DROP TABLE."""
    session.commit()
    engine = session.server.engine
    targets = [(_database(session, name), name.name) for name in stmt.tables]
    missing = [f"{db}.{name}" for db, name in targets if not _table_exists(session, db, name)]
    if missing and not stmt.if_exists:
        # atomic, as in MySQL 8.0: one unknown table and nothing is dropped
        raise MySQLError.of(ER_BAD_TABLE_ERROR, ",".join(missing))
    for db, name in targets:
        if not engine.drop_table(db, name, stmt.if_exists):
            session.warn(MySQLError.of(ER_BAD_TABLE_ERROR, f"{db}.{name}"), "Note")
    session.log_ddl(text)
    return Ok()


def create_database(session: Session, stmt: ast.CreateDatabase, text: str) -> Result:
    """CREATE DATABASE."""
    session.commit()
    if session.server.engine.create_database(stmt.name, stmt.if_not_exists):
        session.log_ddl(text)
    else:
        session.warn(MySQLError.of(ER_DB_CREATE_EXISTS, stmt.name), "Note")
    return Ok(1)


def drop_database(session: Session, stmt: ast.DropDatabase, text: str) -> Result:
    """DROP DATABASE."""
    session.commit()
    if stmt.if_exists and not session.server.engine.has_database(stmt.name):
        session.warn(MySQLError.of(ER_DB_DROP_EXISTS, stmt.name), "Note")
    dropped = session.server.engine.drop_database(stmt.name, stmt.if_exists)
    if session.db == stmt.name:
        session.db = None
    session.log_ddl(text)
    return Ok(len(dropped or ()))


def create_index(session: Session, stmt: ast.CreateIndex, text: str) -> Result:
    """CREATE INDEX (secondary indexes are descriptive: rows are found by primary key)."""
    if stmt.unique:
        raise MySQLError.of(ER_NOT_SUPPORTED_YET, "UNIQUE secondary indexes")
    session.commit()
    session.server.engine.add_index(
        _database(session, stmt.table), stmt.table.name, stmt.name, stmt.columns
    )
    session.log_ddl(text)
    return Ok()


def use_database(session: Session, stmt: ast.Use) -> Result:
    """USE db."""
    if not virtual_tables.database_exists(session.server.engine, stmt.database):
        raise MySQLError.of(ER_BAD_DB_ERROR, stmt.database)
    session.db = stmt.database
    return Ok()


# ---------------------------------------------------------------- accounts
def _spec_hash(spec: ast.UserSpec) -> str:
    if spec.auth_plugin not in (None, NATIVE_PASSWORD, "caching_sha2_password"):
        raise MySQLError.of(ER_NOT_SUPPORTED_YET, f"authentication plugin {spec.auth_plugin}")
    if spec.auth_string is not None:
        return spec.auth_string
    return password_hash(spec.password or "")


def _logged_spec(spec: ast.UserSpec, stored: str) -> str:
    name = f"{quote_literal(spec.user.user)}@{quote_literal(spec.user.host)}"
    if not stored:
        return name
    return f"{name} IDENTIFIED WITH {quote_literal(NATIVE_PASSWORD)} AS {quote_literal(stored)}"


def create_user(session: Session, stmt: ast.CreateUser) -> Result:
    """CREATE USER."""
    session.require("CREATE USER")
    session.commit()
    accounts = session.server.accounts
    logged = []
    for spec in stmt.users:
        stored = _spec_hash(spec)
        accounts.create(spec.user.user, spec.user.host, stored, stmt.if_not_exists)
        logged.append(_logged_spec(spec, stored))
    exists = "IF NOT EXISTS " if stmt.if_not_exists else ""
    session.log_ddl(f"CREATE USER {exists}{', '.join(logged)}")
    return Ok()


def alter_user(session: Session, stmt: ast.AlterUser) -> Result:
    """ALTER USER ... IDENTIFIED BY."""
    session.require("CREATE USER")
    session.commit()
    logged = []
    for spec in stmt.users:
        stored = _spec_hash(spec)
        session.server.accounts.set_password(spec.user.user, spec.user.host, stored)
        logged.append(_logged_spec(spec, stored))
    session.log_ddl(f"ALTER USER {', '.join(logged)}")
    return Ok()


def drop_user(session: Session, stmt: ast.DropUser, text: str) -> Result:
    """DROP USER."""
    session.require("CREATE USER")
    session.commit()
    for user in stmt.users:
        session.server.accounts.drop(user.user, user.host, stmt.if_exists)
    session.log_ddl(text)
    return Ok()


def _grant_database(level: ast.GrantLevel) -> str | None:
    if level.table != "*":
        raise MySQLError.of(ER_NOT_SUPPORTED_YET, "table-level privileges")
    return None if level.database in (None, "*") else level.database


def grant(session: Session, stmt: ast.Grant, text: str) -> Result:
    """GRANT privileges ON *.* | db.* TO users."""
    session.require("CREATE USER")
    session.commit()
    database = _grant_database(stmt.level)
    for user in stmt.users:
        session.server.accounts.grant(
            user.user, user.host, stmt.privileges, database, stmt.grant_option
        )
    session.log_ddl(text)
    return Ok()


def revoke(session: Session, stmt: ast.Revoke, text: str) -> Result:
    """REVOKE privileges ON *.* | db.* FROM users."""
    session.require("CREATE USER")
    session.commit()
    database = _grant_database(stmt.level)
    for user in stmt.users:
        session.server.accounts.revoke(user.user, user.host, stmt.privileges, database)
    session.log_ddl(text)
    return Ok()
