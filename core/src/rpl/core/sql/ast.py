"""Statement and expression nodes for the SQL subset the server runs.

Every node is a frozen, slotted attrs class: once parsed, a statement cannot change, so
a node may be cached, shared between sessions and compared by value. Nodes record what
the statement *says*, never what the server makes of it: names keep the case they were
written in (MySQL compares them per its own rules later), keywords are normalised to
upper case, synonyms to one spelling (``!=`` is ``<>``, ``MOD`` is ``%``, ``&&`` is
``AND``, ``SCHEMA`` is ``DATABASE``, ``SOURCE_*`` options are ``MASTER_*``, ``REPLICA``
is ``SLAVE``), so that the executor has one case per meaning.

Sequences are tuples, so nodes stay hashable. Optional clauses are ``None`` (or an empty
tuple) when absent.

The module also writes expressions back as SQL (:func:`to_sql`) with the quoting helpers
:func:`quote_identifier` and :func:`quote_literal`: the server logs rows as generated
statements, and ``parse_expression(quote_literal(v)) == Literal(v)`` holds for every
``str``, ``int`` and ``bytes`` (tested with hypothesis).
"""

from __future__ import annotations

import math
import re
import typing
from decimal import Decimal
from typing import TypeAlias

import attrs

LiteralValue: TypeAlias = int | float | Decimal | str | bytes | bool | None
"""A literal's Python value: ``int`` for integers, ``Decimal`` for ``1.5``, ``float``
for e-notation, ``str`` for strings, ``bytes`` for ``X'..'``/``0x..``/``_binary'..'``,
``bool`` for TRUE/FALSE, ``None`` for NULL."""


# ---------------------------------------------------------------------------------------
# Expressions


@attrs.frozen
class Expression:
    """Base class of expression nodes."""


@attrs.frozen
class Literal(Expression):
    """A constant; see :data:`LiteralValue` for the Python type of each SQL spelling.

    A minus sign directly before a numeric literal is folded into it (``-5`` is
    ``Literal(-5)``), as MySQL does, so negative numbers written by :func:`quote_literal`
    read back as the same literal.
    """

    value: LiteralValue


@attrs.frozen
class Default(Expression):
    """``DEFAULT`` as a value: an INSERT/UPDATE column's default, or a variable's."""


@attrs.frozen
class Placeholder(Expression):
    """A ``?`` parameter of a prepared statement; ``index`` counts from 0 in text order."""

    index: int


@attrs.frozen
class Column(Expression):
    """A column reference ``name``, ``table.name`` or ``schema.table.name``."""

    name: str
    table: str | None = None
    schema: str | None = None


@attrs.frozen
class UserVar(Expression):
    """A user variable ``@name`` (name without the ``@``, as written)."""

    name: str


@attrs.frozen
class SysVar(Expression):
    """A system variable ``@@name``, ``@@global.name``, ``@@session.name``.

    ``scope`` is ``"GLOBAL"``, ``"SESSION"`` (also for ``@@local.``) or ``None`` when
    the reference names no scope (MySQL then reads the session value if there is one).
    """

    name: str
    scope: str | None = None


@attrs.frozen
class FuncCall(Expression):
    """A function call; ``name`` is upper-cased.

    ``COUNT(*)`` has ``star=True`` and no args; ``COUNT(DISTINCT x)`` has
    ``distinct=True``. Niladic keywords written without parentheses
    (``CURRENT_TIMESTAMP``, ``CURRENT_USER``...) are calls with no args.
    """

    name: str
    args: tuple[Expression, ...] = ()
    distinct: bool = False
    star: bool = False
    order_by: tuple[OrderItem, ...] = ()
    """GROUP_CONCAT's ``ORDER BY`` (empty otherwise)."""
    separator: str | None = None
    """GROUP_CONCAT's ``SEPARATOR`` (None: the default ``,``)."""


@attrs.frozen
class Unary(Expression):
    """A prefix operator: ``"-"``, ``"~"``, or ``"NOT"`` (for both ``NOT`` and ``!``).

    Unary ``+`` leaves no node (it does nothing in MySQL).
    """

    op: str
    operand: Expression


@attrs.frozen
class Binary(Expression):
    """An infix operator, in one canonical spelling.

    Arithmetic ``+ - * / DIV %`` (``MOD`` is ``%``), bitwise ``| & ^ << >>``,
    comparison ``= <> < <= > >= <=>`` (``!=`` is ``<>``), logical ``AND OR XOR``
    (``&&`` is ``AND``, ``||`` is ``OR`` as in MySQL's default sql_mode).
    """

    op: str
    left: Expression
    right: Expression


@attrs.frozen
class IsNull(Expression):
    """``operand IS NULL``, or ``IS NOT NULL`` when ``negated``."""

    operand: Expression
    negated: bool = False


@attrs.frozen
class Between(Expression):
    """``operand [NOT] BETWEEN low AND high``."""

    operand: Expression
    low: Expression
    high: Expression
    negated: bool = False


@attrs.frozen
class InList(Expression):
    """``operand [NOT] IN (items...)``."""

    operand: Expression
    items: tuple[Expression, ...]
    negated: bool = False


@attrs.frozen
class Like(Expression):
    """``operand [NOT] LIKE pattern [ESCAPE escape]``."""

    operand: Expression
    pattern: Expression
    negated: bool = False
    escape: Expression | None = None


@attrs.frozen
class When:
    """One ``WHEN condition THEN result`` arm of a CASE."""

    condition: Expression
    result: Expression


@attrs.frozen
class Case(Expression):
    """``CASE [operand] WHEN .. THEN .. [ELSE ..] END``."""

    operand: Expression | None
    whens: tuple[When, ...]
    else_: Expression | None = None


@attrs.frozen
class Subquery(Expression):
    """A parenthesised query used as a value: ``(SELECT ...)`` (a scalar subquery)."""

    select: Select | Union


@attrs.frozen
class Exists(Expression):
    """``EXISTS (SELECT ...)``; ``NOT EXISTS`` is ``Unary("NOT", Exists(...))``."""

    select: Select | Union


@attrs.frozen
class InSubquery(Expression):
    """``operand [NOT] IN (SELECT ...)``."""

    operand: Expression
    select: Select | Union
    negated: bool = False


@attrs.frozen
class QuantifiedComparison(Expression):
    """``operand op ANY|ALL (SELECT ...)`` (SOME is ANY); ``op`` as in :class:`Binary`."""

    op: str
    operand: Expression
    quantifier: str
    select: Select | Union


@attrs.frozen
class Cast(Expression):
    """``CAST(x AS type)`` and ``CONVERT(x, type)``; ``CONVERT(x USING cs)`` has
    ``type_name="CHAR"`` and ``charset`` set.

    ``type_name`` is one of SIGNED, UNSIGNED, CHAR, BINARY, DECIMAL, DATE, DATETIME,
    TIME, JSON, DOUBLE, FLOAT (``SIGNED INTEGER`` is SIGNED, NCHAR is CHAR); ``length`` and
    ``scale`` are the ``(n[,m])`` arguments when written.
    """

    operand: Expression
    type_name: str
    length: int | None = None
    scale: int | None = None
    charset: str | None = None


@attrs.frozen
class IsTruth(Expression):
    """``operand IS [NOT] TRUE|FALSE|UNKNOWN``; ``value`` is the upper-cased word."""

    operand: Expression
    value: str
    negated: bool = False


@attrs.frozen
class AssignUserVar(Expression):
    """``@name := value`` in an expression: sets the user variable, yields the value."""

    name: str
    value: Expression


# ---------------------------------------------------------------------------------------
# Pieces shared by statements


@attrs.frozen
class TableName:
    """A table reference ``[schema.]name [[AS] alias]``."""

    name: str
    schema: str | None = None
    alias: str | None = None


@attrs.frozen
class Star:
    """``*`` or ``table.*`` in a select list."""

    table: str | None = None
    schema: str | None = None


@attrs.frozen
class SelectItem:
    """One select-list item; ``text`` is the item's source text as written.

    MySQL names an unaliased result column after the expression as written
    (``@@version_comment``, ``COUNT(*)``), hence ``text``: the source from the item's
    first token to its last, so comments and whitespace around it are excluded and a
    comment inside it stays.
    """

    expr: Expression | Star
    alias: str | None
    text: str


@attrs.frozen
class OrderItem:
    """``expr [ASC|DESC]`` in ORDER BY (or GROUP BY)."""

    expr: Expression
    descending: bool = False


@attrs.frozen
class Assignment:
    """``column = value`` in UPDATE ... SET, INSERT ... SET, ON DUPLICATE KEY UPDATE."""

    column: Column
    value: Expression


@attrs.frozen
class UserName:
    """An account ``'user'@'host'`` (host ``%`` when not given), or CURRENT_USER."""

    user: str
    host: str = "%"
    current: bool = False


@attrs.frozen
class ColumnDef:
    """One column of CREATE TABLE.

    ``type_name`` is upper-cased (``INTEGER`` stays ``INTEGER``: synonyms are the
    executor's business); ``length``/``scale`` are the ``(n[,m])`` arguments;
    ``values`` the members of ENUM/SET. ``nullable`` is ``None`` when neither NULL nor
    NOT NULL is written. ``default`` is ``None`` without a DEFAULT clause, else a
    :class:`Literal` (``Literal(None)`` for DEFAULT NULL) or a :class:`FuncCall`
    (``CURRENT_TIMESTAMP``). ``on_update`` is ``ON UPDATE CURRENT_TIMESTAMP``'s call.
    """

    name: str
    type_name: str
    length: int | None = None
    scale: int | None = None
    values: tuple[str, ...] = ()
    unsigned: bool = False
    zerofill: bool = False
    charset: str | None = None
    collation: str | None = None
    nullable: bool | None = None
    default: Expression | None = None
    on_update: Expression | None = None
    auto_increment: bool = False
    primary_key: bool = False
    unique: bool = False
    comment: str | None = None


@attrs.frozen
class IndexDef:
    """A table-level key of CREATE TABLE: PRIMARY KEY, UNIQUE [KEY], KEY/INDEX.

    ``columns`` are the key's column names in order (a prefix length ``c(10)`` and
    ``ASC``/``DESC`` are parsed and dropped). ``name`` is ``None`` when not given
    (always for PRIMARY KEY).
    """

    name: str | None
    columns: tuple[str, ...]
    primary: bool = False
    unique: bool = False


@attrs.frozen
class ForeignKeyDef:
    """``[CONSTRAINT [name]] FOREIGN KEY [index] (cols) REFERENCES parent (cols) [ON DELETE
    action] [ON UPDATE action]``; ``name`` is ``None`` when not given (the server names
    it ``<table>_ibfk_<n>``), actions are upper-cased (``SET NULL``) or ``None``.
    """

    name: str | None
    columns: tuple[str, ...]
    parent: TableName
    parent_columns: tuple[str, ...]
    on_delete: str | None = None
    on_update: str | None = None


@attrs.frozen
class AddColumn:
    """ALTER TABLE ADD [COLUMN] def [FIRST | AFTER col] (``after`` ``""`` for FIRST)."""

    column: ColumnDef
    after: str | None = None


@attrs.frozen
class DropColumn:
    """ALTER TABLE DROP [COLUMN] name."""

    name: str


@attrs.frozen
class ModifyColumn:
    """ALTER TABLE MODIFY [COLUMN] def / CHANGE [COLUMN] old def [FIRST | AFTER col]."""

    old_name: str
    column: ColumnDef
    after: str | None = None


@attrs.frozen
class RenameColumn:
    """ALTER TABLE RENAME COLUMN old TO new."""

    old_name: str
    new_name: str


@attrs.frozen
class AlterColumnDefault:
    """ALTER TABLE ALTER [COLUMN] c SET DEFAULT literal | DROP DEFAULT (``default`` None)."""

    name: str
    default: Expression | None


@attrs.frozen
class AddIndex:
    """ALTER TABLE ADD {PRIMARY KEY | UNIQUE | INDEX | KEY} ..."""

    index: IndexDef


@attrs.frozen
class DropIndexAction:
    """ALTER TABLE DROP {INDEX | KEY} name, or DROP PRIMARY KEY (``name`` ``PRIMARY``)."""

    name: str


@attrs.frozen
class AddForeignKey:
    """ALTER TABLE ADD [CONSTRAINT [name]] FOREIGN KEY ..."""

    foreign_key: ForeignKeyDef


@attrs.frozen
class DropForeignKey:
    """ALTER TABLE DROP FOREIGN KEY name."""

    name: str


@attrs.frozen
class RenameTo:
    """ALTER TABLE RENAME [TO | AS] new."""

    table: TableName


@attrs.frozen
class Keys:
    """ALTER TABLE DISABLE KEYS / ENABLE KEYS."""

    enable: bool


@attrs.frozen
class TableOptions:
    """ALTER TABLE's table options (ENGINE=, AUTO_INCREMENT=, [DEFAULT] CHARSET=...)."""

    options: tuple[tuple[str, str], ...]


AlterAction: TypeAlias = (
    AddColumn
    | DropColumn
    | ModifyColumn
    | RenameColumn
    | AlterColumnDefault
    | AddIndex
    | DropIndexAction
    | AddForeignKey
    | DropForeignKey
    | RenameTo
    | Keys
    | TableOptions
)
"""One action of ALTER TABLE."""


@attrs.frozen
class DerivedTable:
    """``(SELECT ...) [AS] alias`` in FROM (MySQL requires the alias: 1248)."""

    select: Select | Union
    alias: str


@attrs.frozen
class JoinStep:
    """One table of a FROM clause with several tables, and how it joins the ones before it.

    ``kind`` is ``"FIRST"`` for the first table, ``"INNER"`` for ``,``, ``JOIN``,
    ``INNER JOIN``, ``CROSS JOIN`` and ``STRAIGHT_JOIN``, ``"LEFT"`` for ``LEFT [OUTER]
    JOIN`` and ``"RIGHT"`` for ``RIGHT [OUTER] JOIN``. ``on`` is the ON condition,
    ``using`` the USING column list (at most one of them is given). Index hints are
    parsed and dropped: the server has no secondary index to choose.
    """

    source: TableName | DerivedTable
    kind: str = "FIRST"
    on: Expression | None = None
    using: tuple[str, ...] = ()


# ---------------------------------------------------------------------------------------
# Statements


@attrs.frozen
class Statement:
    """Base class of statement nodes."""


@attrs.frozen
class Select(Statement):
    """SELECT; ``table`` is FROM's table when it names exactly one, ``joins`` otherwise.

    ``limit``/``offset`` are ``None`` when absent (``LIMIT m, n`` is offset m, limit n).
    ``lock`` is ``"FOR UPDATE"``, ``"SHARE"`` (``LOCK IN SHARE MODE``/``FOR SHARE``) or
    ``None``.
    """

    items: tuple[SelectItem, ...]
    table: TableName | None = None
    distinct: bool = False
    where: Expression | None = None
    group_by: tuple[OrderItem, ...] = ()
    having: Expression | None = None
    order_by: tuple[OrderItem, ...] = ()
    limit: int | Placeholder | None = None
    offset: int | Placeholder | None = None
    lock: str | None = None
    joins: tuple[JoinStep, ...] = ()
    """Set (and ``table`` None) when FROM names more than one table or a derived table."""
    subqueries: bool = False
    """Whether a subquery appears in the statement's own clauses."""


@attrs.frozen
class Insert(Statement):
    """INSERT or REPLACE (``replace=True``).

    ``INSERT ... SET a=1, b=2`` is stored as ``columns=("a", "b")``, one row
    ``(1, 2)``: the two spellings mean the same. ``columns`` is empty when the
    statement lists none (all columns in table order). ``on_duplicate`` holds ON
    DUPLICATE KEY UPDATE's assignments (``VALUES(col)`` there is a FuncCall).
    """

    table: TableName
    columns: tuple[str, ...]
    rows: tuple[tuple[Expression, ...], ...]
    ignore: bool = False
    replace: bool = False
    on_duplicate: tuple[Assignment, ...] = ()
    select: Select | Union | None = None
    """``INSERT ... SELECT``: the rows come from this query (``rows`` is empty)."""


@attrs.frozen
class Update(Statement):
    """Single-table UPDATE."""

    table: TableName
    assignments: tuple[Assignment, ...]
    where: Expression | None = None
    order_by: tuple[OrderItem, ...] = ()
    limit: int | Placeholder | None = None
    ignore: bool = False


@attrs.frozen
class Delete(Statement):
    """Single-table DELETE."""

    table: TableName
    where: Expression | None = None
    order_by: tuple[OrderItem, ...] = ()
    limit: int | Placeholder | None = None
    ignore: bool = False


@attrs.frozen
class CreateTable(Statement):
    """CREATE TABLE; ``options`` are the table options as (UPPER NAME, value) pairs.

    Option names are normalised (``DEFAULT CHARSET``/``CHARACTER SET`` →
    ``CHARSET``, ``DEFAULT COLLATE`` → ``COLLATE``); values are the word or string as
    written (``AUTO_INCREMENT`` keeps its digits as text).
    """

    table: TableName
    columns: tuple[ColumnDef, ...]
    indexes: tuple[IndexDef, ...] = ()
    if_not_exists: bool = False
    options: tuple[tuple[str, str], ...] = ()
    foreign_keys: tuple[ForeignKeyDef, ...] = ()


@attrs.frozen
class DropTable(Statement):
    """DROP [TEMPORARY] TABLE [IF EXISTS] t1[, t2...]."""

    tables: tuple[TableName, ...]
    if_exists: bool = False
    temporary: bool = False


@attrs.frozen
class CreateDatabase(Statement):
    """CREATE DATABASE|SCHEMA; ``options`` as in :class:`CreateTable`."""

    name: str
    if_not_exists: bool = False
    options: tuple[tuple[str, str], ...] = ()


@attrs.frozen
class DropDatabase(Statement):
    """DROP DATABASE|SCHEMA [IF EXISTS] name."""

    name: str
    if_exists: bool = False


@attrs.frozen
class CreateIndex(Statement):
    """CREATE [UNIQUE] INDEX name ON table (columns)."""

    name: str
    table: TableName
    columns: tuple[str, ...]
    unique: bool = False


@attrs.frozen
class DropIndex(Statement):
    """DROP INDEX name ON table."""

    name: str
    table: TableName


@attrs.frozen
class AlterTable(Statement):
    """ALTER TABLE t action[, action...]: the actions in written order, applied as one."""

    table: TableName
    actions: tuple[AlterAction, ...]


@attrs.frozen
class RenameTable(Statement):
    """RENAME TABLE a TO b[, c TO d...]: pairs applied in order, all or none."""

    pairs: tuple[tuple[TableName, TableName], ...]


@attrs.frozen
class Truncate(Statement):
    """TRUNCATE [TABLE] t."""

    table: TableName


@attrs.frozen
class Begin(Statement):
    """BEGIN [WORK] or START TRANSACTION [characteristics].

    ``read_only`` is ``None`` when no access mode is given.
    """

    read_only: bool | None = None
    consistent_snapshot: bool = False


@attrs.frozen
class Commit(Statement):
    """COMMIT [WORK]."""


@attrs.frozen
class Rollback(Statement):
    """ROLLBACK [WORK]."""


@attrs.frozen
class Use(Statement):
    """USE db."""

    database: str


@attrs.frozen
class SetVariable:
    """One assignment of SET.

    ``scope`` is ``"GLOBAL"``, ``"SESSION"`` (also LOCAL and ``@@session.``/``@@local.``),
    ``"PERSIST"``, ``"PERSIST_ONLY"``, ``"USER"`` for ``@name``, or ``None`` for a
    system variable named without scope (``SET autocommit=0``, ``SET @@autocommit=0``).
    For a system variable a bare word value (``ROW``, ``ON``, ``OFF``) is
    ``Literal("ROW")``; DEFAULT is :class:`Default`.
    """

    name: str
    value: Expression
    scope: str | None = None


@attrs.frozen
class SetNames:
    """SET NAMES charset [COLLATE x]; ``charset`` is ``None`` for NAMES DEFAULT."""

    charset: str | None
    collation: str | None = None


@attrs.frozen
class SetCharset:
    """SET CHARACTER SET x / SET CHARSET x; ``None`` for DEFAULT."""

    charset: str | None


SetItem: TypeAlias = SetVariable | SetNames | SetCharset


@attrs.frozen
class Set(Statement):
    """SET item[, item...], items in written order."""

    items: tuple[SetItem, ...]


@attrs.frozen
class SetTransaction(Statement):
    """SET [GLOBAL|SESSION] TRANSACTION characteristic[, ...].

    ``scope`` is ``None`` (next transaction only), ``"GLOBAL"`` or ``"SESSION"``;
    ``isolation_level`` is e.g. ``"REPEATABLE READ"``; ``read_only`` is ``None`` when
    no access mode is given.
    """

    scope: str | None = None
    isolation_level: str | None = None
    read_only: bool | None = None


@attrs.frozen
class TableLock:
    """One table of LOCK TABLES: ``table`` (its alias, if any, is the name statements must
    use) and the lock: ``write`` for WRITE, else READ (READ LOCAL is READ).
    """

    table: TableName
    write: bool


@attrs.frozen
class LockTables(Statement):
    """LOCK TABLES t [[AS] a] READ [LOCAL] | [LOW_PRIORITY] WRITE[, ...]."""

    locks: tuple[TableLock, ...]


@attrs.frozen
class UnlockTables(Statement):
    """UNLOCK TABLES."""


@attrs.frozen
class FlushTablesWithReadLock(Statement):
    """FLUSH TABLES [t[, ...]] WITH READ LOCK: the global read lock when ``tables`` is
    empty, else READ locks on those tables.
    """

    tables: tuple[TableName, ...] = ()


@attrs.frozen
class Savepoint(Statement):
    """SAVEPOINT name."""

    name: str


@attrs.frozen
class RollbackToSavepoint(Statement):
    """ROLLBACK [WORK] TO [SAVEPOINT] name."""

    name: str


@attrs.frozen
class ReleaseSavepoint(Statement):
    """RELEASE SAVEPOINT name."""

    name: str


ShowKind: TypeAlias = typing.Literal[
    "VARIABLES",
    "STATUS",
    "DATABASES",
    "TABLES",
    "COLUMNS",
    "INDEX",
    "PROCESSLIST",
    "MASTER STATUS",
    "BINARY LOGS",
    "BINLOG EVENTS",
    "PLUGINS",
    "ENGINES",
    "WARNINGS",
    "ERRORS",
    "CREATE TABLE",
    "CREATE DATABASE",
    "GRANTS",
    "TABLE STATUS",
    "SLAVE STATUS",
    "SLAVE HOSTS",
    "CHARACTER SET",
    "COLLATION",
]
"""What a SHOW statement shows (:attr:`Show.kind`), one value per result whatever the
spelling: SCHEMAS is DATABASES, FIELDS is COLUMNS, INDEXES and KEYS are INDEX, MASTER LOGS
is BINARY LOGS, BINARY LOG STATUS is MASTER STATUS, STORAGE ENGINES is ENGINES, REPLICA
STATUS is SLAVE STATUS, REPLICAS and REPLICA HOSTS are SLAVE HOSTS, CHARSET is CHARACTER
SET."""


@attrs.frozen
class Show(Statement):
    """A SHOW statement (DESCRIBE/DESC t is ``Show("COLUMNS", table=t)``).

    ``kind`` is one of :data:`ShowKind`. ``new_terms`` is true when the
    statement used the 8.0.22+ words (REPLICA, SOURCE, BINARY LOG STATUS), whose result
    columns MySQL names with the new terms too.

    The other fields are filled only where the kind has them: ``scope``
    (``"GLOBAL"``/``"SESSION"``) for VARIABLES/STATUS; ``like`` pattern; ``full``;
    ``database`` for TABLES FROM db and CREATE DATABASE; ``table`` for CREATE TABLE,
    COLUMNS, INDEX; ``file``/``pos``/``limit``/``offset`` for BINLOG EVENTS (limit also
    for WARNINGS/ERRORS); ``user`` for GRANTS FOR; ``where`` for the SHOWs that take
    LIKE (a filter over the result rows, which names their columns); ``if_not_exists``
    for CREATE DATABASE IF NOT EXISTS; ``channel`` for SLAVE STATUS FOR CHANNEL.
    """

    kind: ShowKind
    scope: str | None = None
    like: str | None = None
    full: bool = False
    database: str | None = None
    table: TableName | None = None
    file: str | None = None
    pos: int | None = None
    limit: int | None = None
    offset: int | None = None
    user: UserName | None = None
    new_terms: bool = False
    where: Expression | None = None
    if_not_exists: bool = False
    channel: str | None = None


@attrs.frozen
class Flush(Statement):
    """FLUSH [LOCAL|NO_WRITE_TO_BINLOG] target[, ...].

    ``targets`` are upper-cased: ``BINARY LOGS``, ``LOGS``, ``STATUS``,
    ``PRIVILEGES``, ``TABLES`` (others: ``ENGINE LOGS``, ``ERROR LOGS``,
    ``GENERAL LOGS``, ``RELAY LOGS``, ``SLOW LOGS``, ``HOSTS``, ``USER_RESOURCES``,
    ``OPTIMIZER_COSTS``). ``local`` says the statement is not to be binlogged.
    """

    targets: tuple[str, ...]
    local: bool = False


@attrs.frozen
class Purge(Statement):
    """PURGE BINARY|MASTER LOGS TO 'file' | BEFORE expr (exactly one is set)."""

    to_file: str | None = None
    before: Expression | None = None


@attrs.frozen
class ResetMaster(Statement):
    """RESET MASTER (also RESET BINARY LOGS AND GTIDS); ``to`` for RESET MASTER TO n."""

    to: int | None = None


@attrs.frozen
class ResetSlave(Statement):
    """RESET SLAVE|REPLICA [ALL] [FOR CHANNEL 'c']."""

    all: bool = False
    channel: str | None = None


@attrs.frozen
class Checksum(Statement):
    """CHECKSUM TABLE t1[, t2] [QUICK|EXTENDED]; ``mode`` upper-cased or ``None``."""

    tables: tuple[TableName, ...]
    mode: str | None = None


@attrs.frozen
class InstallPlugin(Statement):
    """INSTALL PLUGIN name SONAME 'lib'."""

    name: str
    soname: str


@attrs.frozen
class UninstallPlugin(Statement):
    """UNINSTALL PLUGIN name."""

    name: str


@attrs.frozen
class Shutdown(Statement):
    """SHUTDOWN."""


@attrs.frozen
class Kill(Statement):
    """KILL [CONNECTION|QUERY] id; ``query`` true for KILL QUERY."""

    connection_id: int
    query: bool = False


@attrs.frozen
class UserSpec:
    """An account with its optional authentication.

    ``IDENTIFIED BY 'pw'`` sets ``password``; ``IDENTIFIED WITH plugin [BY 'pw']``
    sets ``auth_plugin`` (and ``password``); ``AS 'hash'`` sets ``auth_string``.
    """

    user: UserName
    auth_plugin: str | None = None
    password: str | None = None
    auth_string: str | None = None


@attrs.frozen
class CreateUser(Statement):
    """CREATE USER [IF NOT EXISTS] spec[, spec...]."""

    users: tuple[UserSpec, ...]
    if_not_exists: bool = False


@attrs.frozen
class DropUser(Statement):
    """DROP USER [IF EXISTS] user[, user...]."""

    users: tuple[UserName, ...]
    if_exists: bool = False


@attrs.frozen
class AlterUser(Statement):
    """ALTER USER [IF EXISTS] spec[, spec...] (authentication changes only)."""

    users: tuple[UserSpec, ...]
    if_exists: bool = False


@attrs.frozen
class GrantLevel:
    """What a GRANT applies to: ``*.*`` (both ``"*"``), ``db.*``, ``db.tbl``.

    ``database`` is ``None`` for a bare ``*`` or ``tbl`` (the current database).
    """

    database: str | None
    table: str


@attrs.frozen
class Grant(Statement):
    """GRANT privileges ON level TO users [WITH GRANT OPTION].

    ``privileges`` are upper-cased, one space between words (``ALL PRIVILEGES`` is
    ``ALL``, ``REPLICATION SLAVE`` stays as is; ``REPLICATION REPLICA`` is
    ``REPLICATION SLAVE``).
    """

    privileges: tuple[str, ...]
    level: GrantLevel
    users: tuple[UserName, ...]
    grant_option: bool = False


@attrs.frozen
class Revoke(Statement):
    """REVOKE privileges ON level FROM users (privileges as in :class:`Grant`)."""

    privileges: tuple[str, ...]
    level: GrantLevel
    users: tuple[UserName, ...]


ChangeMasterValue: TypeAlias = str | int | Decimal | tuple[int, ...]


@attrs.frozen
class ChangeMaster(Statement):
    """CHANGE MASTER TO / CHANGE REPLICATION SOURCE TO.

    ``options`` are (name, value) pairs in written order; names are upper-cased with
    ``SOURCE_`` mapped to ``MASTER_`` (``GET_SOURCE_PUBLIC_KEY`` to
    ``GET_MASTER_PUBLIC_KEY``). Values are ``str`` for strings, ``int``/``Decimal`` for
    numbers, a tuple of ints for IGNORE_SERVER_IDS.
    """

    options: tuple[tuple[str, ChangeMasterValue], ...]
    channel: str | None = None
    new_terms: bool = False


@attrs.frozen
class StartSlave(Statement):
    """START SLAVE|REPLICA [IO_THREAD|SQL_THREAD][, ...] [UNTIL SQL_AFTER_GTIDS = 'set']
    [FOR CHANNEL 'c'].

    ``threads`` is empty for both threads; ``until_sql_after_gtids`` is the UNTIL
    condition's GTID set text (None without UNTIL).
    """

    threads: tuple[str, ...] = ()
    channel: str | None = None
    until_sql_after_gtids: str | None = None


@attrs.frozen
class StopSlave(Statement):
    """STOP SLAVE|REPLICA [IO_THREAD|SQL_THREAD][, ...] [FOR CHANNEL 'c']."""

    threads: tuple[str, ...] = ()
    channel: str | None = None


@attrs.frozen
class Prepare(Statement):
    """PREPARE name FROM 'text' | @var: ``text`` is the statement text, or None when it
    is read from the user variable ``variable`` at execution.
    """

    name: str
    text: str | None = None
    variable: str | None = None


@attrs.frozen
class ExecutePrepared(Statement):
    """EXECUTE name [USING @a, @b, ...]: ``variables`` are the user variables' names."""

    name: str
    variables: tuple[str, ...] = ()


@attrs.frozen
class DeallocatePrepare(Statement):
    """{DEALLOCATE | DROP} PREPARE name."""

    name: str


@attrs.frozen
class Union(Statement):
    """``SELECT ... UNION [ALL|DISTINCT] SELECT ...``; ``all[i]`` says whether the
    operator between ``selects[i]`` and ``selects[i+1]`` was UNION ALL. ORDER BY and
    LIMIT after the last SELECT apply to the whole union.
    """

    selects: tuple[Select, ...]
    all: tuple[bool, ...]
    order_by: tuple[OrderItem, ...] = ()
    limit: int | Placeholder | None = None
    offset: int | Placeholder | None = None


@attrs.frozen
class Explain(Statement):
    """EXPLAIN / DESCRIBE / DESC of a SELECT, UPDATE, DELETE, INSERT or REPLACE;
    ``format`` is ``"TRADITIONAL"`` (also when not written) or ``"TREE"``/``"JSON"``.
    """

    statement: Statement
    format: str = "TRADITIONAL"


# ---------------------------------------------------------------------------------------
# Writing SQL back


def quote_identifier(name: str) -> str:
    """``name`` in backticks, inner backticks doubled: always a valid identifier."""
    return "`" + name.replace("`", "``") + "`"


_STRING_ESCAPES = str.maketrans(
    {"\\": "\\\\", "'": "\\'", "\0": "\\0", "\n": "\\n", "\r": "\\r", "\x1a": "\\Z"}
)
_NEEDS_ESCAPE = re.compile("[" + re.escape("".join(map(chr, _STRING_ESCAPES))) + "]")
"""Any character _STRING_ESCAPES changes, derived from it (a search is cheaper than a
translate that changes nothing, the common case)."""


def quote_literal(value: LiteralValue) -> str:
    """``value`` as a MySQL literal that reads back as the same value.

    Strings escape ``\\ ' NUL \\n \\r \\x1a`` the way mysql_real_escape_string does;
    bytes are ``X'hex'``; floats keep ``repr`` precision and always carry an exponent
    (``1.5e0``) so they read back as floats, not decimals; decimals are written in
    plain notation (an exponent would make them floats). NaN and infinities have no
    SQL spelling: ValueError.
    """
    if value is None:
        return "NULL"
    if value is True:
        return "TRUE"
    if value is False:
        return "FALSE"
    if isinstance(value, str):
        if _NEEDS_ESCAPE.search(value) is None:
            return "'" + value + "'"
        return "'" + value.translate(_STRING_ESCAPES) + "'"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, bytes):
        return "X'" + value.hex().upper() + "'"
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise ValueError(f"no SQL literal for {value}")
        return format(value, "f")
    if not math.isfinite(value):
        raise ValueError(f"no SQL literal for {value}")
    text = repr(value)
    return text if "e" in text else text + "e0"


def _is_atom(expr: Expression) -> bool:
    """Whether ``expr`` needs no parentheses as an operand of any operator."""
    if isinstance(expr, Literal):
        value = expr.value
        return not (
            isinstance(value, int | float | Decimal) and not isinstance(value, bool) and value < 0
        )
    return isinstance(expr, Column | UserVar | SysVar | FuncCall | Default | Placeholder | Case)


def _operand(expr: Expression) -> str:
    text = to_sql(expr)
    return text if _is_atom(expr) else "(" + text + ")"


def to_sql(expr: Expression) -> str:
    """``expr`` as SQL text that parses back to an equal expression.

    Every operand that is not an atom is parenthesised, so the text does not depend
    on operator precedence; identifiers are always backquoted, so it does not depend
    on the reserved word list either.
    """
    if isinstance(expr, Literal):
        return quote_literal(expr.value)
    if isinstance(expr, Column):
        parts = [p for p in (expr.schema, expr.table) if p is not None] + [expr.name]
        return ".".join(quote_identifier(p) for p in parts)
    if isinstance(expr, Binary):
        return f"{_operand(expr.left)} {expr.op} {_operand(expr.right)}"
    if isinstance(expr, Unary):
        sep = " " if expr.op == "NOT" else ""
        return f"{expr.op}{sep}{_operand(expr.operand)}"
    if isinstance(expr, FuncCall):
        if expr.star:
            return f"{expr.name}(*)"
        args = ", ".join(to_sql(a) for a in expr.args)
        if expr.order_by:
            args += " ORDER BY " + ", ".join(
                to_sql(o.expr) + (" DESC" if o.descending else "") for o in expr.order_by
            )
        if expr.separator is not None:
            args += " SEPARATOR " + quote_literal(expr.separator)
        return f"{expr.name}({'DISTINCT ' if expr.distinct else ''}{args})"
    if isinstance(expr, UserVar):
        return "@" + quote_identifier(expr.name)
    if isinstance(expr, SysVar):
        scope = expr.scope.lower() + "." if expr.scope else ""
        return f"@@{scope}{quote_identifier(expr.name)}"
    if isinstance(expr, IsNull):
        return f"{_operand(expr.operand)} IS {'NOT ' if expr.negated else ''}NULL"
    if isinstance(expr, Between):
        return (
            f"{_operand(expr.operand)} {'NOT ' if expr.negated else ''}BETWEEN "
            f"{_operand(expr.low)} AND {_operand(expr.high)}"
        )
    if isinstance(expr, InList):
        items = ", ".join(to_sql(i) for i in expr.items)
        return f"{_operand(expr.operand)} {'NOT ' if expr.negated else ''}IN ({items})"
    if isinstance(expr, Like):
        escape = f" ESCAPE {_operand(expr.escape)}" if expr.escape is not None else ""
        return (
            f"{_operand(expr.operand)} {'NOT ' if expr.negated else ''}LIKE "
            f"{_operand(expr.pattern)}{escape}"
        )
    if isinstance(expr, Case):
        parts = ["CASE"]
        if expr.operand is not None:
            parts.append(_operand(expr.operand))
        for when in expr.whens:
            parts += ["WHEN", to_sql(when.condition), "THEN", to_sql(when.result)]
        if expr.else_ is not None:
            parts += ["ELSE", to_sql(expr.else_)]
        parts.append("END")
        return " ".join(parts)
    if isinstance(expr, Cast):
        size = ""
        if expr.length is not None:
            size = f"({expr.length}" + (f",{expr.scale})" if expr.scale is not None else ")")
        if expr.charset is not None:
            return f"CONVERT({to_sql(expr.operand)} USING {expr.charset})"
        return f"CAST({to_sql(expr.operand)} AS {expr.type_name}{size})"
    if isinstance(expr, IsTruth):
        return f"{_operand(expr.operand)} IS {'NOT ' if expr.negated else ''}{expr.value}"
    if isinstance(expr, AssignUserVar):
        return f"@{quote_identifier(expr.name)} := {_operand(expr.value)}"
    if isinstance(expr, Subquery | Exists | InSubquery | QuantifiedComparison):
        return "(subquery)"
    if isinstance(expr, Default):
        return "DEFAULT"
    if isinstance(expr, Placeholder):
        return "?"
    raise TypeError(f"not an expression node: {expr!r}")
