"""Data definition and account statements.

Each commits the session's open transaction first (MySQL's implicit commit), changes
the catalogue, then is written to the binlog as a transaction of its own (GTID +
QUERY). Account statements are logged with the stored password hash
(``IDENTIFIED WITH 'mysql_native_password' AS '*...'``), never with the password.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from rpl.core.engine import NO_DEFAULT, ColumnSchema, Row, Table, TableSchema
from rpl.core.engine.coercion import member_key
from rpl.core.engine.schema import ForeignKey, normalize_type
from rpl.core.engine.storage import check_unique
from rpl.core.errors import (
    ER_BAD_DB_ERROR,
    ER_BAD_TABLE_ERROR,
    ER_DB_CREATE_EXISTS,
    ER_DB_DROP_EXISTS,
    ER_DUPLICATED_VALUE_IN_TYPE,
    ER_FK_CANNOT_DROP_PARENT,
    ER_ILLEGAL_HA,
    ER_ILLEGAL_VALUE_FOR_TYPE,
    ER_INVALID_DEFAULT,
    ER_INVALID_ON_UPDATE,
    ER_MULTIPLE_PRI_KEY,
    ER_NO_DB_ERROR,
    ER_NO_SUCH_TABLE,
    ER_NOT_SUPPORTED_YET,
    ER_TABLE_EXISTS_ERROR,
    ER_TOO_BIG_SET,
    MySQLError,
)
from rpl.core.execution import limits, virtual_tables
from rpl.core.execution.alter import Draft, check_child_rows, foreign_key
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


_NOW_FUNCTIONS = frozenset(("CURRENT_TIMESTAMP", "NOW", "LOCALTIMESTAMP", "LOCALTIME"))
"""The spellings of CURRENT_TIMESTAMP a DEFAULT or ON UPDATE clause takes."""


def _is_now(expr: ast.Expression | None) -> bool:
    return isinstance(expr, ast.FuncCall) and expr.name in _NOW_FUNCTIONS


def _column(definition: ast.ColumnDef, session: Session) -> ColumnSchema:
    default: object = NO_DEFAULT
    if isinstance(definition.default, ast.Literal):
        default = definition.default.value
    elif definition.default is not None:
        default = NO_DEFAULT
    nullable = (
        definition.nullable if definition.nullable is not None else not definition.primary_key
    )
    type_name, length, scale = normalize_type(
        definition.type_name, definition.length, definition.scale
    )
    default_now, on_update_now = _is_now(definition.default), _is_now(definition.on_update)
    if (default_now or on_update_now) and type_name not in ("TIMESTAMP", "DATETIME"):
        raise MySQLError.of(ER_INVALID_DEFAULT, definition.name)
    if definition.on_update is not None and not on_update_now:
        raise MySQLError.of(ER_INVALID_ON_UPDATE, definition.name)
    column = ColumnSchema(
        definition.name,
        type_name,
        length,
        definition.unsigned,
        nullable,
        default,
        definition.auto_increment,
        scale,
        _members(definition),
        default_now,
        on_update_now,
    )
    limits.check_type(column)
    return column


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
    """CREATE TABLE: types as MySQL stores them, keys (UNIQUE enforced), FOREIGN KEYs
    (see :mod:`rpl.core.execution.alter`).
    """
    session.commit()
    db = _database(session, stmt.table)
    columns = [_column(c, session) for c in stmt.columns]
    primary = [i for i in stmt.indexes if i.primary]
    inline = [c.name for c in stmt.columns if c.primary_key]
    if len(primary) + (1 if inline else 0) > 1 or len(inline) > 1:
        raise MySQLError.of(ER_MULTIPLE_PRI_KEY)
    draft = Draft(
        db,
        stmt.table.name,
        columns,
        [None] * len(columns),
        list(primary[0].columns if primary else inline),
        {},
        set(),
        [],
    )
    for index in stmt.indexes:
        if not index.primary:
            draft.add_index(index)
    for column in stmt.columns:
        if column.unique and not column.primary_key:
            draft.add_index(ast.IndexDef(None, (column.name,), unique=True))
    _add_foreign_keys(session, draft, stmt.foreign_keys)
    schema = draft.build()
    if session.server.engine.create_table(schema, stmt.if_not_exists) is not None:
        session.log_ddl(text)
    else:
        session.warn(MySQLError.of(ER_TABLE_EXISTS_ERROR, stmt.table.name), "Note")
    return Ok()


def _add_foreign_keys(
    session: Session, draft: Draft, definitions: Sequence[ast.ForeignKeyDef]
) -> None:
    """Each FOREIGN KEY clause checked against its parent and added to ``draft``."""
    checks = checking_foreign_keys(session)
    for definition in definitions:
        parent_db = definition.parent.schema or draft.db
        parent: TableSchema | None
        if (parent_db, definition.parent.name) == (draft.db, draft.name):
            parent = draft.build_unchecked()
        else:
            try:
                parent = session.server.engine.table(parent_db, definition.parent.name).schema
            except MySQLError:
                parent = None
        draft.add_foreign_key(foreign_key(draft, definition, parent, checks))


def checking_foreign_keys(session: Session) -> bool:
    """Whether DDL checks FOREIGN KEYs against other tables and existing rows: with
    foreign_key_checks on, and not when a replica's applier or crash recovery replays a
    statement the source already ran (and checked, or ran with the checks off: a QUERY
    event does not say which here, so the replay trusts it).
    """
    replaying = session.origin is not None or not session.binlogging
    return session.foreign_key_checks() and not replaying


def drop_table(session: Session, stmt: ast.DropTable, text: str) -> Result:
    """DROP TABLE (a parent a FOREIGN KEY of another table references is 3730 while
    foreign_key_checks is on; all tables or none are dropped).
    """
    session.commit()
    engine = session.server.engine
    targets = [(_database(session, name), name.name) for name in stmt.tables]
    missing = [f"{db}.{name}" for db, name in targets if not _table_exists(session, db, name)]
    if missing and not stmt.if_exists:
        # atomic, as in MySQL 8.0: one unknown table and nothing is dropped
        raise MySQLError.of(ER_BAD_TABLE_ERROR, ",".join(missing))
    if checking_foreign_keys(session):
        for db, name in targets:
            if _table_exists(session, db, name):
                _check_not_referenced(session, db, name, targets)
    for db, name in targets:
        if not engine.drop_table(db, name, stmt.if_exists):
            session.warn(MySQLError.of(ER_BAD_TABLE_ERROR, f"{db}.{name}"), "Note")
    session.log_ddl(text)
    return Ok()


def _check_not_referenced(
    session: Session, db: str, name: str, dropping: Sequence[tuple[str, str]]
) -> None:
    for child, fk in session.server.engine.children_of(db, name):
        key = (child.schema.db, child.schema.name)
        if key != (db, name) and key not in dropping:
            raise MySQLError.of(ER_FK_CANNOT_DROP_PARENT, name, fk.name, child.schema.name)


def create_database(session: Session, stmt: ast.CreateDatabase, text: str) -> Result:
    """CREATE DATABASE."""
    session.commit()
    limits.check_names(stmt.name)
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
    """CREATE [UNIQUE] INDEX: a UNIQUE one over rows that repeat a value is 1062 and
    leaves the table unchanged.
    """
    action = ast.AddIndex(ast.IndexDef(stmt.name, stmt.columns, unique=stmt.unique))
    return alter_table(session, ast.AlterTable(stmt.table, (action,)), text)


def drop_index(session: Session, stmt: ast.DropIndex, text: str) -> Result:
    """DROP INDEX name ON t (``PRIMARY`` is the primary key, which the engine needs)."""
    return alter_table(session, ast.AlterTable(stmt.table, (ast.DropIndexAction(stmt.name),)), text)


def alter_table(session: Session, stmt: ast.AlterTable, text: str) -> Result:
    """ALTER TABLE: every action applied to a draft of the definition, in written order;
    then the rows rewritten if their shape changed, UNIQUE keys and (with
    foreign_key_checks) new FOREIGN KEYs checked over them, and only then the table
    changed and the statement logged (a QUERY event). A failing action or check leaves
    the table as it was.
    """
    session.commit()
    engine = session.server.engine
    db = _database(session, stmt.table)
    table = engine.table(db, stmt.table.name)
    old = table.schema
    draft = Draft.of(old)
    auto_increment = None
    new_name: ast.TableName | None = None
    for action in stmt.actions:
        if isinstance(action, ast.TableOptions):
            auto_increment = _table_options(action, auto_increment)
        elif isinstance(action, ast.Keys):
            session.warn(MySQLError.of(ER_ILLEGAL_HA, old.name), "Note")
        elif isinstance(action, ast.RenameTo):
            limits.check_names(action.table.name)
            new_name = action.table
        else:
            _apply(session, draft, action)
    schema = draft.build()
    if new_name is not None:
        schema = attrs.evolve(schema, db=new_name.schema or db, name=new_name.name)
    current = table.committed_rows()
    rows = draft.rewrite(schema, current) if draft.changed else None
    check_unique(schema, current if rows is None else [r for _, r in rows])
    if checking_foreign_keys(session):
        _check_new_foreign_keys(
            session, schema, draft, current if rows is None else [r for _, r in rows]
        )
    children = engine.children_of(db, old.name)
    engine.redefine_table(db, old.name, schema, rows)
    _follow_parent(session, children, old, schema, draft.renamed)
    if auto_increment is not None:
        table.set_auto_increment(auto_increment)
    session.log_ddl(text)
    return Ok()


def _apply(session: Session, draft: Draft, action: ast.AlterAction) -> None:
    """One column, key or constraint action of ALTER TABLE on ``draft``."""
    if isinstance(action, ast.AddColumn):
        draft.add_column(_column(action.column, session), action.after)
        if action.column.primary_key:
            draft.add_index(ast.IndexDef(None, (action.column.name,), primary=True))
        elif action.column.unique:
            draft.add_index(ast.IndexDef(None, (action.column.name,), unique=True))
    elif isinstance(action, ast.DropColumn):
        draft.drop_column(action.name)
    elif isinstance(action, ast.ModifyColumn):
        draft.modify_column(action.old_name, _column(action.column, session), action.after)
    elif isinstance(action, ast.RenameColumn):
        draft.rename_column(action.old_name, action.new_name)
    elif isinstance(action, ast.AlterColumnDefault):
        value = action.default.value if isinstance(action.default, ast.Literal) else NO_DEFAULT
        draft.set_default(action.name, value)
    elif isinstance(action, ast.AddIndex):
        draft.add_index(action.index)
    elif isinstance(action, ast.DropIndexAction):
        draft.drop_index(action.name)
    elif isinstance(action, ast.AddForeignKey):
        _add_foreign_keys(session, draft, (action.foreign_key,))
    elif isinstance(action, ast.DropForeignKey):
        draft.drop_foreign_key(action.name)


def _table_options(action: ast.TableOptions, auto_increment: int | None) -> int | None:
    """ENGINE, CHARSET, COLLATE, COMMENT... are accepted (the engine is InnoDB, the
    character set utf8mb4); AUTO_INCREMENT = n is returned to be set.
    """
    for name, value in action.options:
        if name == "AUTO_INCREMENT":
            auto_increment = int(value)
    return auto_increment


def _check_new_foreign_keys(
    session: Session, schema: TableSchema, draft: Draft, rows: Sequence[Row]
) -> None:
    """ALTER TABLE ADD FOREIGN KEY: the existing rows must have their parents (1452)."""
    for fk in draft.added_foreign_keys:
        fk = next(f for f in schema.foreign_keys if f.name == fk.name)
        if fk.references(draft.db, draft.name):
            check_child_rows(schema, rows, fk, schema, rows)
            continue
        parent = session.server.engine.table(fk.parent_db, fk.parent_table)
        check_child_rows(schema, rows, fk, parent.schema, parent.committed_rows())


def _follow_parent(
    session: Session,
    children: Sequence[tuple[Table, ForeignKey]],
    old: TableSchema,
    new: TableSchema,
    renamed: dict[str, str],
) -> None:
    """The FOREIGN KEYs of other tables referencing a table renamed, or columns of it
    renamed, follow the new names (as MySQL's data dictionary does).
    """
    if (old.db, old.name) == (new.db, new.name) and not renamed:
        return
    engine = session.server.engine
    for child in {id(c): c for c, _ in children}.values():
        if child.schema.name == old.name and child.schema.db == old.db:
            continue  # a self reference: the draft renamed it already
        fks = tuple(
            attrs.evolve(
                f,
                parent_db=new.db,
                parent_table=new.name,
                parent_columns=tuple(renamed.get(c, c) for c in f.parent_columns),
            )
            if f.references(old.db, old.name)
            else f
            for f in child.schema.foreign_keys
        )
        schema = attrs.evolve(child.schema, foreign_keys=fks)
        engine.redefine_table(child.schema.db, child.schema.name, schema)


def rename_table(session: Session, stmt: ast.RenameTable, text: str) -> Result:
    """RENAME TABLE a TO b[, ...]: checked in full first (an unknown source 1146, a taken
    target 1050), so all pairs are renamed or none.
    """
    session.commit()
    engine = session.server.engine
    names = {(db, t) for db in engine.databases() for t in engine.tables(db)}
    moves = []
    for old, new in stmt.pairs:
        source = (_database(session, old), old.name)
        target = (_database(session, new), new.name)
        if source not in names:
            raise MySQLError.of(ER_NO_SUCH_TABLE, *source)
        if target in names:
            raise MySQLError.of(ER_TABLE_EXISTS_ERROR, new.name)
        if not engine.has_database(target[0]):
            raise MySQLError.of(ER_BAD_DB_ERROR, target[0])
        limits.check_names(new.name)
        names.remove(source)
        names.add(target)
        moves.append((source, target))
    for (db, name), (new_db, new_name) in moves:
        before = engine.table(db, name).schema
        children = engine.children_of(db, name)
        schema = attrs.evolve(
            before,
            db=new_db,
            name=new_name,
            foreign_keys=tuple(
                attrs.evolve(f, parent_db=new_db, parent_table=new_name)
                if f.references(db, name)
                else f
                for f in before.foreign_keys
            ),
        )
        engine.redefine_table(db, name, schema)
        _follow_parent(session, children, before, schema, {})
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


def _grant_target(
    session: Session, level: ast.GrantLevel, granted: Sequence[str]
) -> tuple[str | None, str | None]:
    """(database, table) of a GRANT of ``granted`` or a REVOKE (``granted`` empty):
    (None, None) for ``*.*``, (db, None) for ``db.*`` and a bare ``*`` (the current
    database: 1046 without one), (db, table) for ``db.tbl`` and a bare ``tbl``. A table
    granted on must exist (1146) unless CREATE is granted (to create it), as in MySQL; one
    revoked from need not (its grants outlive it).
    """
    if level.database == "*":
        return None, None
    database = level.database or session.db
    if database is None:
        raise MySQLError.of(ER_NO_DB_ERROR)
    if level.table == "*":
        return database, None
    must_exist = bool(granted) and not {"CREATE", "ALL"} & set(granted)
    if must_exist and not _table_exists(session, database, level.table):
        raise MySQLError.of(ER_NO_SUCH_TABLE, database, level.table)
    return database, level.table


def grant(session: Session, stmt: ast.Grant, text: str) -> Result:
    """GRANT privileges ON *.* | db.* | db.tbl TO users."""
    session.require("CREATE USER")
    session.commit()
    database, table = _grant_target(session, stmt.level, stmt.privileges)
    for user in stmt.users:
        session.server.accounts.grant(
            user.user, user.host, stmt.privileges, database, stmt.grant_option, table
        )
    session.log_ddl(text)
    return Ok()


def revoke(session: Session, stmt: ast.Revoke, text: str) -> Result:
    """REVOKE privileges ON *.* | db.* | db.tbl FROM users."""
    session.require("CREATE USER")
    session.commit()
    database, table = _grant_target(session, stmt.level, ())
    for user in stmt.users:
        session.server.accounts.revoke(user.user, user.host, stmt.privileges, database, table)
    session.log_ddl(text)
    return Ok()
