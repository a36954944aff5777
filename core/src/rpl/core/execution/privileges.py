"""Database and table privileges, checked before a statement runs, as MySQL checks them.

Each statement needs privileges on the tables and databases it names
(:func:`needs`); a client session holds one when its account has it globally, on the
database or on the table (:meth:`rpl.core.accounts.Accounts.allowed`). What it lacks
is MySQL's error, and nothing runs:

- on a table, 1142 ``SELECT command denied to user 'u'@'h' for table 't'``;
- on a database (CREATE DATABASE, DROP DATABASE, USE, LOCK TABLES), 1044 ``Access
  denied for user 'u'@'h' to database 'd'``.

What each statement needs, from MySQL's manual:

| statement | needs |
|---|---|
| SELECT, UNION, a subquery, CHECKSUM TABLE, EXPLAIN's reads | SELECT on each table read |
| INSERT | INSERT; REPLACE also DELETE; ON DUPLICATE KEY UPDATE also UPDATE |
| UPDATE, DELETE | UPDATE or DELETE; SELECT too when WHERE or SET reads a column |
| CREATE TABLE | CREATE; REFERENCES on each FOREIGN KEY's parent |
| DROP TABLE, TRUNCATE | DROP |
| ALTER TABLE | ALTER, CREATE, INSERT; RENAME TO: DROP on the old, CREATE, INSERT on the new |
| RENAME TABLE | ALTER and DROP on the old name, CREATE and INSERT on the new |
| CREATE INDEX, DROP INDEX | INDEX |
| CREATE / DROP DATABASE | CREATE / DROP on the database |
| LOCK TABLES | LOCK TABLES on the database, SELECT on each table |
| USE, SHOW TABLES, SHOW TABLE STATUS, SHOW CREATE DATABASE | any on the database or its tables |
| SHOW CREATE TABLE, SHOW COLUMNS, SHOW INDEX | any privilege on the table |

information_schema is open to every account and shows only what the account holds a
privilege on (:func:`visible`; so do SHOW DATABASES without the SHOW DATABASES
privilege, SHOW TABLES and SHOW TABLE STATUS). performance_schema's variable and status
tables are open to every account, as MySQL's are; its other tables need SELECT.
Sessions without an account (the replica's applier, crash recovery) and accounts
holding every table privilege globally skip the checks: the common case costs one
subset test a statement.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from rpl.core.accounts import ANY
from rpl.core.errors import ER_DBACCESS_DENIED_ERROR, ER_TABLEACCESS_DENIED_ERROR, MySQLError
from rpl.core.sql import ast
from rpl.core.sql.walk import nodes, table_names

if TYPE_CHECKING:  # the session imports the computed tables, which list through here
    from rpl.core.execution.session import Session

Need = tuple[str, str, str | None]
"""(privilege, database, table): a table privilege, or a database one when table is None."""

INFORMATION_SCHEMA = "information_schema"
PERFORMANCE_SCHEMA = "performance_schema"
OPEN_PERFORMANCE_TABLES = frozenset(
    (
        "global_variables",
        "session_variables",
        "variables_by_thread",
        "global_status",
        "session_status",
        "status_by_thread",
        "persisted_variables",
        "variables_info",
        "session_account_connect_attrs",
    )
)
"""performance_schema tables every account may read (MySQL grants SELECT on them to all)."""
_SHOW_TABLE_KINDS = frozenset(("CREATE TABLE", "COLUMNS", "INDEX"))
_SHOW_DATABASE_KINDS = frozenset(("TABLES", "TABLE STATUS", "CREATE DATABASE"))


def check(session: Session, statement: ast.Statement) -> None:
    """1142 or 1044 for the first privilege ``statement`` needs that the session's
    account lacks; nothing for a session without an account or one that holds every
    table privilege globally.
    """
    account = session.account
    if account is None or account.holds_everywhere:
        return
    accounts = session.server.accounts
    for privilege, db, table in needs(session, statement):
        if not accounts.allowed(account, privilege, db, table):
            raise denied(session, privilege, db, table)


def denied(session: Session, privilege: str, db: str, table: str | None) -> MySQLError:
    """MySQL's error for ``privilege`` lacking on ``db`` or ``db.table``."""
    if table is None:
        return MySQLError.of(ER_DBACCESS_DENIED_ERROR, session.user, session.host, db)
    command = "SHOW" if privilege == ANY else privilege
    return MySQLError.of(ER_TABLEACCESS_DENIED_ERROR, command, session.user, session.host, table)


def visible(session: Session, db: str, table: str | None = None) -> bool:
    """Whether the session may see ``db`` (or ``db.table``) listed: in information_schema,
    SHOW DATABASES, SHOW TABLES. Always for information_schema, performance_schema and
    the performance_schema tables every account may read.
    """
    account = session.account
    schema = db.lower()
    if account is None or schema == INFORMATION_SCHEMA:
        return True
    if schema == PERFORMANCE_SCHEMA and (table is None or _open_to_all(schema, table)):
        return True
    accounts = session.server.accounts
    return account.holds_everywhere or accounts.allowed(account, ANY, db, table)


def may_list_databases(session: Session) -> bool:
    """Whether SHOW DATABASES lists every database (the SHOW DATABASES privilege)."""
    account = session.account
    return account is None or session.server.accounts.allowed(account, "SHOW DATABASES")


# ----------------------------------------------------------------------------- needs
def needs(session: Session, statement: ast.Statement) -> Iterator[Need]:
    """The privileges ``statement`` needs, in the order they are checked."""
    if isinstance(statement, ast.Select | ast.Union | ast.Checksum):
        yield from _reads(session, table_names(statement))
    elif isinstance(statement, ast.Explain):
        yield from needs(session, statement.statement)
    elif isinstance(statement, ast.Insert):
        yield from _insert(session, statement)
    elif isinstance(statement, ast.Update):
        yield from _change(session, "UPDATE", statement.table, statement)
    elif isinstance(statement, ast.Delete):
        yield from _change(session, "DELETE", statement.table, statement)
    elif isinstance(statement, ast.CreateTable):
        yield from _on(session, statement.table, "CREATE")
        for foreign_key in statement.foreign_keys:
            yield from _on(session, foreign_key.parent, "REFERENCES")
    elif isinstance(statement, ast.DropTable):
        for name in statement.tables:
            yield from _on(session, name, "DROP")
    elif isinstance(statement, ast.Truncate):
        yield from _on(session, statement.table, "DROP")
    elif isinstance(statement, ast.CreateIndex | ast.DropIndex):
        yield from _on(session, statement.table, "INDEX")
    elif isinstance(statement, ast.AlterTable):
        yield from _alter(session, statement)
    elif isinstance(statement, ast.RenameTable):
        for old, new in statement.pairs:
            yield from _on(session, old, "ALTER", "DROP")
            yield from _on(session, new, "CREATE", "INSERT")
    else:
        yield from _database_needs(session, statement)


def _database_needs(session: Session, statement: ast.Statement) -> Iterator[Need]:
    if isinstance(statement, ast.CreateDatabase):
        yield ("CREATE", statement.name, None)
    elif isinstance(statement, ast.DropDatabase):
        yield ("DROP", statement.name, None)
    elif isinstance(statement, ast.Use):
        yield from _any_database(statement.database)
    elif isinstance(statement, ast.LockTables):
        for lock in statement.locks:
            db = lock.table.schema or session.db
            if db is not None and db.lower() != INFORMATION_SCHEMA:
                yield ("LOCK TABLES", db, None)
        yield from _reads(session, (lock.table for lock in statement.locks))
    elif isinstance(statement, ast.Show):
        yield from _show(session, statement)


def _any_database(db: str) -> Iterator[Need]:
    """Any privilege on ``db`` or one of its tables; none for the schemas every account
    may use.
    """
    if db.lower() not in (INFORMATION_SCHEMA, PERFORMANCE_SCHEMA):
        yield (ANY, db, None)


def _show(session: Session, statement: ast.Show) -> Iterator[Need]:
    if statement.kind in _SHOW_TABLE_KINDS and statement.table is not None:
        db = statement.table.schema or statement.database or session.db
        if db is not None and db.lower() != INFORMATION_SCHEMA:
            yield (ANY, db, statement.table.name)
    elif statement.kind in _SHOW_DATABASE_KINDS:
        db = statement.database or session.db
        if db is not None:
            yield from _any_database(db)


def _database_of(session: Session, name: ast.TableName) -> str | None:
    return name.schema or session.db


def _on(session: Session, name: ast.TableName, *privileges: str) -> Iterator[Need]:
    """``privileges`` on the table ``name`` (none without a database: the statement
    gets 1046 when it runs).
    """
    db = _database_of(session, name)
    if db is not None:
        for privilege in privileges:
            yield (privilege, db, name.name)


def _reads(session: Session, names: Iterable[ast.TableName]) -> Iterator[Need]:
    """SELECT on each table read, but the tables every account may read."""
    for name in names:
        db = _database_of(session, name)
        if db is None:
            continue
        if not _open_to_all(db.lower(), name.name):
            yield ("SELECT", db, name.name)


def _open_to_all(schema: str, table: str) -> bool:
    """Whether every account may read ``schema.table`` (``schema`` lower-cased):
    information_schema's tables and performance_schema's variable and status tables.
    """
    return schema == INFORMATION_SCHEMA or (
        schema == PERFORMANCE_SCHEMA and table.lower() in OPEN_PERFORMANCE_TABLES
    )


def _insert(session: Session, statement: ast.Insert) -> Iterator[Need]:
    yield from _on(session, statement.table, "INSERT")
    if statement.replace:
        yield from _on(session, statement.table, "DELETE")
    if statement.on_duplicate:
        yield from _on(session, statement.table, "UPDATE")
    sources = (statement.rows, statement.select, statement.on_duplicate)
    yield from _reads(session, table_names(sources))


def _change(
    session: Session, privilege: str, table: ast.TableName, statement: ast.Update | ast.Delete
) -> Iterator[Need]:
    """UPDATE or DELETE on ``table``, SELECT on it when the statement reads a column, and
    SELECT on the tables its subqueries read.
    """
    yield from _on(session, table, privilege)
    read = (
        (statement.where, statement.order_by, tuple(a.value for a in statement.assignments))
        if isinstance(statement, ast.Update)
        else (statement.where, statement.order_by)
    )
    if _reads_a_column(read):
        yield from _on(session, table, "SELECT")
    yield from _reads(session, table_names(read))


def _reads_a_column(node: object) -> bool:
    """Whether ``node`` reads a column of the statement's own table (outside a
    subquery, whose tables are checked as reads of their own).
    """
    return any(isinstance(n, ast.Column) for n in nodes(node, skip=(ast.Statement,)))


def _alter(session: Session, statement: ast.AlterTable) -> Iterator[Need]:
    yield from _on(session, statement.table, "ALTER", "CREATE", "INSERT")
    for action in statement.actions:
        if isinstance(action, ast.RenameTo):
            yield from _on(session, statement.table, "DROP")
            yield from _on(session, action.table, "CREATE", "INSERT")
        elif isinstance(action, ast.AddForeignKey):
            yield from _on(session, action.foreign_key.parent, "REFERENCES")
