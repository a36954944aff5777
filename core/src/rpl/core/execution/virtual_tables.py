"""Read-only tables computed at each read: ``information_schema``, ``performance_schema``
and the ``mysql`` schema's account tables.

A SELECT on one of them builds an ordinary engine :class:`Table` from the server's state
of that moment (the catalogue, the sessions, the variables, the accounts, the plugins),
so WHERE, ORDER BY, LIMIT and projections work as on any table. The column names, types
and order are MySQL 8.0's. Nothing is stored: a write to one of them is refused
(:func:`refuse_write`), so nothing needs binlogging.

Every server's :class:`VirtualTables` holds the tables the statement layer computes itself;
a feature adds the rows only it knows (the replica channel: ``replication_*``) by
registering a provider at start (:meth:`VirtualTables.provide`), since this layer may not
import it.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, cast

from rpl.core.engine import NO_DEFAULT, Engine, Row, Table
from rpl.core.engine.schema import ColumnSchema, TableSchema
from rpl.core.errors import (
    ER_DBACCESS_DENIED_ERROR,
    ER_NO_SUCH_TABLE,
    ER_OPEN_AS_READONLY,
    ER_TABLEACCESS_DENIED_ERROR,
    ER_UNKNOWN_TABLE,
    MySQLError,
)
from rpl.core.execution import privileges
from rpl.core.sql import ast
from rpl.core.sql.redact import redacted

if TYPE_CHECKING:
    from rpl.core.execution.session import Session

SCHEMA = "performance_schema"
PERFORMANCE_SCHEMA = SCHEMA
INFORMATION_SCHEMA = "information_schema"
MYSQL_SCHEMA = "mysql"
SCHEMAS = frozenset((PERFORMANCE_SCHEMA, INFORMATION_SCHEMA, MYSQL_SCHEMA))
"""The databases whose tables this module computes (lower case)."""
MONITORING_SCHEMAS = frozenset((PERFORMANCE_SCHEMA, INFORMATION_SCHEMA, "sys"))
"""The schemas a read of which runs no ``begin`` hook (MySQL holds no monitoring
query of a session waiting at its transaction's start)."""
LISTED_SCHEMAS = frozenset((PERFORMANCE_SCHEMA, INFORMATION_SCHEMA))
"""The system schemas the catalogue lists (SHOW DATABASES, SCHEMATA, TABLES, COLUMNS).
``mysql`` is readable by name but not listed: its tables are views of the account list,
which replicates through CREATE USER and GRANT, so tools that walk every database
(``mariadb-dump --all-databases``, pt-table-checksum) must leave it alone, as they leave
the other two; a dump of it could not be loaded back (its tables refuse writes)."""

CHARSET: Final = "utf8mb4"
COLLATION: Final = "utf8mb4_0900_ai_ci"
"""The server's (and every table's and text column's) character set and collation."""

Computed = Sequence[object]
"""A computed row: its values in its table's column order (any value a result set sends)."""

RowsOf = Callable[["Session"], Iterable[Computed]]
"""Computes a table's rows, each in its schema's column order, for the reading session."""

FactsOf = Callable[["Session"], Iterable[Mapping[str, object]]]
"""A feature's provider: one mapping of column name -> value per row (missing: NULL)."""


# ------------------------------------------------------------------ definitions
_COLUMN = re.compile(
    r"(?P<name>\w+)\s+(?P<type>\w+)(?:\((?P<args>[^)]*)\))?(?P<unsigned>\s+unsigned)?"
    r"(?P<not_null>\s+not null)?\s*$",
    re.IGNORECASE,
)


def _column(spec: str) -> ColumnSchema:
    """One column from ``NAME type[(args)] [unsigned] [NOT NULL]`` (MySQL's DDL spelling)."""
    match = _COLUMN.match(spec.strip())
    assert match is not None, spec
    type_name, args = match["type"].upper(), match["args"]
    length = scale = None
    members: tuple[str, ...] = ()
    if args and type_name in ("ENUM", "SET"):
        members = tuple(m.strip().strip("'") for m in args.split(","))
    elif args:
        numbers = [int(a) for a in args.split(",")]
        length, scale = numbers[0], (numbers[1] if len(numbers) > 1 else None)
    return ColumnSchema(
        match["name"],
        type_name,
        length,
        unsigned=bool(match["unsigned"]),
        nullable=not match["not_null"],
        scale=scale,
        members=members,
    )


def definition(db: str, name: str, columns: str, key: Sequence[str]) -> TableSchema:
    """A computed table's definition: one column a line, as MySQL's SHOW CREATE TABLE
    writes it; ``key`` names the columns that identify a row (the rows are kept in the
    order of that key, and a WHERE pinning a one-column key reads just that row).
    """
    specs = [line for line in columns.strip().splitlines() if line.strip()]
    return TableSchema(db, name, tuple(_column(s) for s in specs), tuple(key))


def _table(schema: TableSchema, rows: Iterable[Computed]) -> Table:
    """An engine table holding ``rows``, keyed as ``schema``'s primary key says."""
    key_of = schema.key_of
    values = [cast(Row, tuple(row)) for row in rows]
    return Table(0, schema, threading.Lock(), ((key_of(row), row) for row in values))


class VirtualTables:
    """One server's computed tables: (schema, table) in lower case -> definition and rows.

    Built with the tables this layer computes itself; a feature fills a table only it
    can (``performance_schema.replication_*``) with :meth:`provide` at start. A table
    nobody provides rows for is empty, as MySQL's are without that feature.
    """

    def __init__(self) -> None:
        self._tables: dict[tuple[str, str], tuple[TableSchema, RowsOf]] = {}
        for schema, rows in _builtin_tables():
            self.add(schema, rows)

    def add(self, schema: TableSchema, rows: RowsOf) -> None:
        """Define the table ``schema`` whose rows ``rows`` computes."""
        self._tables[(schema.db.lower(), schema.name.lower())] = (schema, rows)

    def find(self, db: str, name: str) -> tuple[TableSchema, RowsOf] | None:
        """The definition and rows of ``db.name``, if the server has that table."""
        return self._tables.get((db.lower(), name.lower()))

    def remove(self, db: str, name: str) -> None:
        """Forget the table ``db.name`` (a plugin's, as it is uninstalled)."""
        self._tables.pop((db.lower(), name.lower()), None)

    def provide(self, db: str, name: str, facts: FactsOf) -> None:
        """Give the existing table ``db.name`` its rows from ``facts`` (a feature's
        provider: column name -> value, the columns it does not name NULL).
        """
        schema, _ = self._tables[(db.lower(), name.lower())]
        names = [c.name for c in schema.columns]

        def rows(session: Session) -> Iterable[Computed]:
            return [tuple(fact.get(n) for n in names) for fact in facts(session)]

        self.add(schema, rows)

    def names(self, db: str) -> list[str]:
        """The tables of system schema ``db``, as MySQL spells them, sorted."""
        key = db.lower()
        return sorted(s.name for (d, _), (s, _) in self._tables.items() if d == key)

    def schemas(self) -> list[TableSchema]:
        """The definitions of the computed tables the catalogue lists (those of
        :data:`LISTED_SCHEMAS`).
        """
        return [s for s, _ in self._tables.values() if s.db.lower() in LISTED_SCHEMAS]

    def table(self, session: Session, db: str, name: str) -> Table:
        """The table ``db.name`` as of now; if there is none, ER_UNKNOWN_TABLE in
        information_schema (as MySQL 8.0 says of GLOBAL_VARIABLES there), else
        ER_NO_SUCH_TABLE.
        """
        found = self._tables.get((db.lower(), name.lower()))
        if found is None and db.lower() == INFORMATION_SCHEMA:
            raise MySQLError.of(ER_UNKNOWN_TABLE, name, db)
        if found is None:
            raise MySQLError.of(ER_NO_SUCH_TABLE, db, name)
        schema, rows = found
        return _table(schema, rows(session))


def database_exists(engine: Engine, name: str) -> bool:
    """Whether ``name`` is a database: the engine's, or one of :data:`SCHEMAS`."""
    return engine.has_database(name) or name.lower() in SCHEMAS


def databases(engine: Engine) -> list[str]:
    """Every database, the listed system schemas included, sorted (SHOW DATABASES,
    SCHEMATA).
    """
    return sorted({*engine.databases(), *LISTED_SCHEMAS})


def refuse_write(session: Session, db: str, name: str, command: str) -> None:
    """The error for a statement writing ``db.name`` if ``db`` is a system schema:
    ER_DBACCESS_DENIED_ERROR for information_schema (MySQL refuses every change there),
    ER_TABLEACCESS_DENIED_ERROR for performance_schema (``command`` denied, as MySQL
    denies INSERT on its tables), ER_OPEN_AS_READONLY for the ``mysql`` schema, whose
    account tables here are views of the account list (CREATE USER and GRANT change it).
    """
    key = db.lower()
    if key == INFORMATION_SCHEMA:
        raise MySQLError.of(ER_DBACCESS_DENIED_ERROR, session.user, session.host, db)
    if key == PERFORMANCE_SCHEMA:
        raise MySQLError.of(ER_TABLEACCESS_DENIED_ERROR, command, session.user, session.host, name)
    if key == MYSQL_SCHEMA:
        raise MySQLError.of(ER_OPEN_AS_READONLY, name)


def refuse_statement(session: Session, statement: ast.Statement) -> None:
    """:func:`refuse_write`'s error for a statement that would change a table, or create
    or drop a table, index or database, in a system schema; nothing for any other.
    """
    db = session.db or ""
    if isinstance(statement, ast.CreateDatabase | ast.DropDatabase):
        if statement.name.lower() in SCHEMAS:
            raise MySQLError.of(
                ER_DBACCESS_DENIED_ERROR, session.user, session.host, statement.name
            )
        return
    targets = _WRITES.get(type(statement))
    if targets is None:
        return
    command, names = targets(statement)
    for name in names:
        refuse_write(session, name.schema or db, name.name, command)


_WRITES: dict[type[ast.Statement], Callable[[Any], tuple[str, Sequence[ast.TableName]]]] = {
    ast.Insert: lambda s: ("REPLACE" if s.replace else "INSERT", [s.table]),
    ast.Update: lambda s: ("UPDATE", [s.table]),
    ast.Delete: lambda s: ("DELETE", [s.table]),
    ast.CreateTable: lambda s: ("CREATE", [s.table]),
    ast.DropTable: lambda s: ("DROP", s.tables),
    ast.CreateIndex: lambda s: ("INDEX", [s.table]),
}
"""The statements that write a table: the command MySQL names in a denial, and the
tables written."""


# ----------------------------------------------------------------- column facts
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


def unique_indexes(schema: TableSchema) -> frozenset[str]:
    """The names of ``schema``'s UNIQUE secondary indexes: the one place STATISTICS,
    TABLE_CONSTRAINTS, KEY_COLUMN_USAGE and COLUMN_KEY learn uniqueness from.
    """
    return frozenset(schema.unique)


def column_facts(schema: TableSchema, column: ColumnSchema) -> tuple[str, str, object, str]:
    """(type, key, default, extra) of a column as SHOW COLUMNS and
    information_schema.COLUMNS give them: ``int``/``varchar(40)``, PRI/UNI/MUL/"", the
    default (None for none), ``auto_increment`` or "". The key is PRI for a primary key
    column, UNI for the column of a one-column UNIQUE index, MUL for the first column of
    any other index; none in information_schema, whose tables are views without keys.
    """
    kind = column_type_text(column)
    if schema.db == INFORMATION_SCHEMA:
        return kind, "", None, ""
    unique = unique_indexes(schema)
    firsts = [(name, cols[0]) for name, cols in schema.indexes.items() if cols]
    if column.name in schema.primary_key:
        key = "PRI"
    elif any(cols == (column.name,) for name, cols in schema.indexes.items() if name in unique):
        key = "UNI"
    elif any(first == column.name for _, first in firsts):
        key = "MUL"
    else:
        key = ""
    default = None if column.default is NO_DEFAULT else column.default
    extra = "auto_increment" if column.auto_increment else ""
    if column.default_now:
        default, extra = now_text(column), "DEFAULT_GENERATED"
    if column.on_update_now:
        extra = f"{extra} on update {now_text(column)}".strip()
    return kind, key, default, extra


def now_text(column: ColumnSchema) -> str:
    """CURRENT_TIMESTAMP as MySQL prints a column's DEFAULT / ON UPDATE: with the
    column's fractional-second digits (``CURRENT_TIMESTAMP(3)``).
    """
    return f"CURRENT_TIMESTAMP({column.length})" if column.length else "CURRENT_TIMESTAMP"


_TEXT_LENGTHS = {
    "TINYTEXT": 255,
    "TEXT": 65535,
    "MEDIUMTEXT": 16777215,
    "LONGTEXT": 4294967295,
    "TINYBLOB": 255,
    "BLOB": 65535,
    "MEDIUMBLOB": 16777215,
    "LONGBLOB": 4294967295,
}
_INT_PRECISION = {"TINYINT": 3, "SMALLINT": 5, "MEDIUMINT": 7, "INT": 10, "INTEGER": 10}
_CHAR_TYPES = frozenset(("CHAR", "VARCHAR", "ENUM", "SET", "TINYTEXT", "TEXT"))
_CHAR_TYPES |= {"MEDIUMTEXT", "LONGTEXT"}


def column_sizes(column: ColumnSchema) -> tuple[object, ...]:
    """information_schema.COLUMNS' CHARACTER_MAXIMUM_LENGTH, CHARACTER_OCTET_LENGTH,
    NUMERIC_PRECISION, NUMERIC_SCALE, DATETIME_PRECISION, CHARACTER_SET_NAME and
    COLLATION_NAME of ``column`` (NULL where they do not apply), as MySQL 8.0 fills them
    for a utf8mb4 table: 4 bytes a character, TEXT types sized in bytes.
    """
    kind = column.type_name
    chars = octets = precision = scale = fsp = None
    if kind in _TEXT_LENGTHS:
        chars = octets = _TEXT_LENGTHS[kind]
    elif kind in ("CHAR", "VARCHAR"):
        chars = column.length if column.length is not None else 1
        octets = chars * 4
    elif kind in ("BINARY", "VARBINARY"):
        chars = octets = column.length if column.length is not None else 1
    elif kind == "ENUM":
        chars = max((len(m) for m in column.members), default=0)
        octets = chars * 4
    elif kind == "SET":
        chars = sum(len(m) for m in column.members) + max(len(column.members) - 1, 0)
        octets = chars * 4
    elif kind in _INT_PRECISION:
        precision, scale = _INT_PRECISION[kind], 0
    elif kind == "BIGINT":
        precision, scale = (20 if column.unsigned else 19), 0
    elif kind in ("DECIMAL", "NUMERIC"):
        precision, scale = column.length or 10, column.scale or 0
    elif kind == "FLOAT":
        precision = 12
    elif kind in ("DOUBLE", "REAL"):
        precision = 22
    elif kind == "BIT":
        precision = column.length or 1
    elif kind in ("DATETIME", "TIMESTAMP", "TIME"):
        fsp = column.length or 0
    textual = kind in _CHAR_TYPES
    return (
        chars,
        octets,
        precision,
        scale,
        fsp,
        CHARSET if textual else None,
        COLLATION if textual else None,
    )


# -------------------------------------------------------------- information_schema
I_S = INFORMATION_SCHEMA
_NAME = "varchar(64)"

SCHEMATA = definition(
    I_S,
    "SCHEMATA",
    f"""
    CATALOG_NAME {_NAME} NOT NULL
    SCHEMA_NAME {_NAME} NOT NULL
    DEFAULT_CHARACTER_SET_NAME {_NAME} NOT NULL
    DEFAULT_COLLATION_NAME {_NAME} NOT NULL
    SQL_PATH binary(0)
    DEFAULT_ENCRYPTION enum('NO','YES') NOT NULL
    """,
    ("SCHEMA_NAME",),
)

TABLES = definition(
    I_S,
    "TABLES",
    f"""
    TABLE_CATALOG {_NAME} NOT NULL
    TABLE_SCHEMA {_NAME} NOT NULL
    TABLE_NAME {_NAME} NOT NULL
    TABLE_TYPE enum('BASE TABLE','VIEW','SYSTEM VIEW') NOT NULL
    ENGINE {_NAME}
    VERSION int
    ROW_FORMAT enum('Fixed','Dynamic','Compressed','Redundant','Compact','Paged')
    TABLE_ROWS bigint unsigned
    AVG_ROW_LENGTH bigint unsigned
    DATA_LENGTH bigint unsigned
    MAX_DATA_LENGTH bigint unsigned
    INDEX_LENGTH bigint unsigned
    DATA_FREE bigint unsigned
    AUTO_INCREMENT bigint unsigned
    CREATE_TIME timestamp
    UPDATE_TIME datetime
    CHECK_TIME datetime
    TABLE_COLLATION {_NAME}
    CHECKSUM bigint
    CREATE_OPTIONS varchar(256)
    TABLE_COMMENT text
    """,
    ("TABLE_SCHEMA", "TABLE_NAME"),
)

COLUMNS = definition(
    I_S,
    "COLUMNS",
    f"""
    TABLE_CATALOG {_NAME} NOT NULL
    TABLE_SCHEMA {_NAME} NOT NULL
    TABLE_NAME {_NAME} NOT NULL
    COLUMN_NAME {_NAME} NOT NULL
    ORDINAL_POSITION int unsigned NOT NULL
    COLUMN_DEFAULT text
    IS_NULLABLE varchar(3) NOT NULL
    DATA_TYPE longtext
    CHARACTER_MAXIMUM_LENGTH bigint
    CHARACTER_OCTET_LENGTH bigint
    NUMERIC_PRECISION bigint unsigned
    NUMERIC_SCALE bigint unsigned
    DATETIME_PRECISION int unsigned
    CHARACTER_SET_NAME {_NAME}
    COLLATION_NAME {_NAME}
    COLUMN_TYPE mediumtext NOT NULL
    COLUMN_KEY enum('','PRI','UNI','MUL') NOT NULL
    EXTRA varchar(256)
    PRIVILEGES varchar(154)
    COLUMN_COMMENT text NOT NULL
    GENERATION_EXPRESSION longtext NOT NULL
    SRS_ID int unsigned
    """,
    ("TABLE_SCHEMA", "TABLE_NAME", "ORDINAL_POSITION"),
)

STATISTICS = definition(
    I_S,
    "STATISTICS",
    f"""
    TABLE_CATALOG {_NAME} NOT NULL
    TABLE_SCHEMA {_NAME} NOT NULL
    TABLE_NAME {_NAME} NOT NULL
    NON_UNIQUE int NOT NULL
    INDEX_SCHEMA {_NAME} NOT NULL
    INDEX_NAME {_NAME}
    SEQ_IN_INDEX int unsigned NOT NULL
    COLUMN_NAME {_NAME}
    COLLATION varchar(1)
    CARDINALITY bigint
    SUB_PART bigint
    PACKED binary(0)
    NULLABLE varchar(3) NOT NULL
    INDEX_TYPE varchar(11) NOT NULL
    COMMENT varchar(8) NOT NULL
    INDEX_COMMENT varchar(2048) NOT NULL
    IS_VISIBLE varchar(3) NOT NULL
    EXPRESSION longtext
    """,
    ("TABLE_SCHEMA", "TABLE_NAME", "INDEX_NAME", "SEQ_IN_INDEX"),
)

KEY_COLUMN_USAGE = definition(
    I_S,
    "KEY_COLUMN_USAGE",
    f"""
    CONSTRAINT_CATALOG {_NAME} NOT NULL
    CONSTRAINT_SCHEMA {_NAME} NOT NULL
    CONSTRAINT_NAME {_NAME}
    TABLE_CATALOG {_NAME} NOT NULL
    TABLE_SCHEMA {_NAME} NOT NULL
    TABLE_NAME {_NAME} NOT NULL
    COLUMN_NAME {_NAME}
    ORDINAL_POSITION int unsigned NOT NULL
    POSITION_IN_UNIQUE_CONSTRAINT int unsigned
    REFERENCED_TABLE_SCHEMA {_NAME}
    REFERENCED_TABLE_NAME {_NAME}
    REFERENCED_COLUMN_NAME {_NAME}
    """,
    ("TABLE_SCHEMA", "TABLE_NAME", "CONSTRAINT_NAME", "ORDINAL_POSITION"),
)

TABLE_CONSTRAINTS = definition(
    I_S,
    "TABLE_CONSTRAINTS",
    f"""
    CONSTRAINT_CATALOG {_NAME} NOT NULL
    CONSTRAINT_SCHEMA {_NAME} NOT NULL
    CONSTRAINT_NAME {_NAME}
    TABLE_SCHEMA {_NAME} NOT NULL
    TABLE_NAME {_NAME} NOT NULL
    CONSTRAINT_TYPE varchar(11) NOT NULL
    ENFORCED varchar(3) NOT NULL
    """,
    ("TABLE_SCHEMA", "TABLE_NAME", "CONSTRAINT_NAME"),
)

REFERENTIAL_CONSTRAINTS = definition(
    I_S,
    "REFERENTIAL_CONSTRAINTS",
    f"""
    CONSTRAINT_CATALOG {_NAME} NOT NULL
    CONSTRAINT_SCHEMA {_NAME} NOT NULL
    CONSTRAINT_NAME {_NAME}
    UNIQUE_CONSTRAINT_CATALOG {_NAME} NOT NULL
    UNIQUE_CONSTRAINT_SCHEMA {_NAME} NOT NULL
    UNIQUE_CONSTRAINT_NAME {_NAME}
    MATCH_OPTION enum('NONE','PARTIAL','FULL') NOT NULL
    UPDATE_RULE enum('NO ACTION','RESTRICT','CASCADE','SET NULL','SET DEFAULT') NOT NULL
    DELETE_RULE enum('NO ACTION','RESTRICT','CASCADE','SET NULL','SET DEFAULT') NOT NULL
    TABLE_NAME {_NAME} NOT NULL
    REFERENCED_TABLE_NAME {_NAME} NOT NULL
    """,
    ("CONSTRAINT_SCHEMA", "TABLE_NAME", "CONSTRAINT_NAME"),
)

VIEWS = definition(
    I_S,
    "VIEWS",
    f"""
    TABLE_CATALOG {_NAME} NOT NULL
    TABLE_SCHEMA {_NAME} NOT NULL
    TABLE_NAME {_NAME} NOT NULL
    VIEW_DEFINITION longtext
    CHECK_OPTION enum('NONE','LOCAL','CASCADED')
    IS_UPDATABLE enum('NO','YES')
    DEFINER varchar(288)
    SECURITY_TYPE varchar(7)
    CHARACTER_SET_CLIENT {_NAME} NOT NULL
    COLLATION_CONNECTION {_NAME} NOT NULL
    """,
    ("TABLE_SCHEMA", "TABLE_NAME"),
)

ROUTINES = definition(
    I_S,
    "ROUTINES",
    f"""
    SPECIFIC_NAME {_NAME} NOT NULL
    ROUTINE_CATALOG {_NAME} NOT NULL
    ROUTINE_SCHEMA {_NAME} NOT NULL
    ROUTINE_NAME {_NAME} NOT NULL
    ROUTINE_TYPE enum('FUNCTION','PROCEDURE') NOT NULL
    DATA_TYPE longtext
    CHARACTER_MAXIMUM_LENGTH bigint
    CHARACTER_OCTET_LENGTH bigint
    NUMERIC_PRECISION int unsigned
    NUMERIC_SCALE int unsigned
    DATETIME_PRECISION int unsigned
    CHARACTER_SET_NAME {_NAME}
    COLLATION_NAME {_NAME}
    DTD_IDENTIFIER longtext
    ROUTINE_BODY varchar(8) NOT NULL
    ROUTINE_DEFINITION longtext
    EXTERNAL_NAME binary(0)
    EXTERNAL_LANGUAGE varchar(64) NOT NULL
    PARAMETER_STYLE varchar(3) NOT NULL
    IS_DETERMINISTIC varchar(3) NOT NULL
    SQL_DATA_ACCESS enum('CONTAINS SQL','NO SQL','READS SQL DATA','MODIFIES SQL DATA') NOT NULL
    SQL_PATH binary(0)
    SECURITY_TYPE enum('DEFAULT','INVOKER','DEFINER') NOT NULL
    CREATED timestamp NOT NULL
    LAST_ALTERED timestamp NOT NULL
    SQL_MODE varchar(520) NOT NULL
    ROUTINE_COMMENT text NOT NULL
    DEFINER varchar(288) NOT NULL
    CHARACTER_SET_CLIENT {_NAME} NOT NULL
    COLLATION_CONNECTION {_NAME} NOT NULL
    DATABASE_COLLATION {_NAME} NOT NULL
    """,
    ("ROUTINE_SCHEMA", "SPECIFIC_NAME"),
)

TRIGGERS = definition(
    I_S,
    "TRIGGERS",
    f"""
    TRIGGER_CATALOG {_NAME} NOT NULL
    TRIGGER_SCHEMA {_NAME} NOT NULL
    TRIGGER_NAME {_NAME} NOT NULL
    EVENT_MANIPULATION enum('INSERT','UPDATE','DELETE') NOT NULL
    EVENT_OBJECT_CATALOG {_NAME} NOT NULL
    EVENT_OBJECT_SCHEMA {_NAME} NOT NULL
    EVENT_OBJECT_TABLE {_NAME} NOT NULL
    ACTION_ORDER int unsigned NOT NULL
    ACTION_CONDITION binary(0)
    ACTION_STATEMENT longtext NOT NULL
    ACTION_ORIENTATION varchar(3) NOT NULL
    ACTION_TIMING enum('BEFORE','AFTER') NOT NULL
    ACTION_REFERENCE_OLD_TABLE binary(0)
    ACTION_REFERENCE_NEW_TABLE binary(0)
    ACTION_REFERENCE_OLD_ROW varchar(3) NOT NULL
    ACTION_REFERENCE_NEW_ROW varchar(3) NOT NULL
    CREATED timestamp(2) NOT NULL
    SQL_MODE varchar(520) NOT NULL
    DEFINER varchar(288) NOT NULL
    CHARACTER_SET_CLIENT {_NAME} NOT NULL
    COLLATION_CONNECTION {_NAME} NOT NULL
    DATABASE_COLLATION {_NAME} NOT NULL
    """,
    ("TRIGGER_SCHEMA", "TRIGGER_NAME"),
)

EVENTS = definition(
    I_S,
    "EVENTS",
    f"""
    EVENT_CATALOG {_NAME} NOT NULL
    EVENT_SCHEMA {_NAME} NOT NULL
    EVENT_NAME {_NAME} NOT NULL
    DEFINER varchar(288) NOT NULL
    TIME_ZONE {_NAME} NOT NULL
    EVENT_BODY varchar(3) NOT NULL
    EVENT_DEFINITION longtext NOT NULL
    EVENT_TYPE varchar(9) NOT NULL
    EXECUTE_AT datetime
    INTERVAL_VALUE varchar(256)
    INTERVAL_FIELD varchar(18)
    SQL_MODE varchar(520) NOT NULL
    STARTS datetime
    ENDS datetime
    STATUS varchar(21) NOT NULL
    ON_COMPLETION varchar(12) NOT NULL
    CREATED timestamp NOT NULL
    LAST_ALTERED timestamp NOT NULL
    LAST_EXECUTED datetime
    EVENT_COMMENT varchar(2048) NOT NULL
    ORIGINATOR int unsigned NOT NULL
    CHARACTER_SET_CLIENT {_NAME} NOT NULL
    COLLATION_CONNECTION {_NAME} NOT NULL
    DATABASE_COLLATION {_NAME} NOT NULL
    """,
    ("EVENT_SCHEMA", "EVENT_NAME"),
)

PARTITIONS = definition(
    I_S,
    "PARTITIONS",
    f"""
    TABLE_CATALOG {_NAME} NOT NULL
    TABLE_SCHEMA {_NAME} NOT NULL
    TABLE_NAME {_NAME} NOT NULL
    PARTITION_NAME {_NAME}
    SUBPARTITION_NAME {_NAME}
    PARTITION_ORDINAL_POSITION int unsigned
    SUBPARTITION_ORDINAL_POSITION int unsigned
    PARTITION_METHOD varchar(13)
    SUBPARTITION_METHOD varchar(13)
    PARTITION_EXPRESSION varchar(2048)
    SUBPARTITION_EXPRESSION varchar(2048)
    PARTITION_DESCRIPTION text
    TABLE_ROWS bigint unsigned
    AVG_ROW_LENGTH bigint unsigned
    DATA_LENGTH bigint unsigned
    MAX_DATA_LENGTH bigint unsigned
    INDEX_LENGTH bigint unsigned
    DATA_FREE bigint unsigned
    CREATE_TIME timestamp
    UPDATE_TIME datetime
    CHECK_TIME datetime
    CHECKSUM bigint
    PARTITION_COMMENT text NOT NULL
    NODEGROUP varchar(256)
    TABLESPACE_NAME varchar(268)
    """,
    ("TABLE_SCHEMA", "TABLE_NAME"),
)

FILES = definition(
    I_S,
    "FILES",
    """
    FILE_ID bigint NOT NULL
    FILE_NAME text
    FILE_TYPE varchar(256)
    TABLESPACE_NAME varchar(268)
    TABLE_CATALOG char(0)
    TABLE_SCHEMA binary(0)
    TABLE_NAME binary(0)
    LOGFILE_GROUP_NAME varchar(256)
    LOGFILE_GROUP_NUMBER bigint
    ENGINE varchar(64) NOT NULL
    FULLTEXT_KEYS binary(0)
    DELETED_ROWS binary(0)
    UPDATE_COUNT binary(0)
    FREE_EXTENTS bigint
    TOTAL_EXTENTS bigint
    EXTENT_SIZE bigint
    INITIAL_SIZE bigint
    MAXIMUM_SIZE bigint
    AUTOEXTEND_SIZE bigint
    CREATION_TIME binary(0)
    LAST_UPDATE_TIME binary(0)
    LAST_ACCESS_TIME binary(0)
    RECOVER_TIME binary(0)
    TRANSACTION_COUNTER binary(0)
    VERSION bigint
    ROW_FORMAT varchar(256)
    TABLE_ROWS binary(0)
    AVG_ROW_LENGTH binary(0)
    DATA_LENGTH binary(0)
    MAX_DATA_LENGTH binary(0)
    INDEX_LENGTH binary(0)
    DATA_FREE bigint
    CREATE_TIME binary(0)
    UPDATE_TIME binary(0)
    CHECK_TIME binary(0)
    CHECKSUM binary(0)
    STATUS varchar(256)
    EXTRA varchar(256)
    """,
    ("FILE_ID",),
)

ENGINES = definition(
    I_S,
    "ENGINES",
    """
    ENGINE varchar(64) NOT NULL
    SUPPORT varchar(8) NOT NULL
    COMMENT varchar(80) NOT NULL
    TRANSACTIONS varchar(3)
    XA varchar(3)
    SAVEPOINTS varchar(3)
    """,
    ("ENGINE",),
)

ENGINE_ROWS: Final[tuple[Computed, ...]] = (
    ("InnoDB", "DEFAULT", "rpl's in-memory engine, recovered from the binlog", "YES", "NO", "YES"),
)
"""The storage engines (SHOW ENGINES, information_schema.ENGINES): the one there is."""

CHARACTER_SETS = definition(
    I_S,
    "CHARACTER_SETS",
    f"""
    CHARACTER_SET_NAME {_NAME} NOT NULL
    DEFAULT_COLLATE_NAME {_NAME} NOT NULL
    DESCRIPTION varchar(2048) NOT NULL
    MAXLEN int unsigned NOT NULL
    """,
    ("CHARACTER_SET_NAME",),
)

CHARACTER_SET_ROWS: Final[tuple[Computed, ...]] = (
    ("ascii", "ascii_general_ci", "US ASCII", 1),
    ("binary", "binary", "Binary pseudo charset", 1),
    ("latin1", "latin1_swedish_ci", "cp1252 West European", 1),
    ("utf8mb3", "utf8mb3_general_ci", "UTF-8 Unicode", 3),
    ("utf8mb4", "utf8mb4_0900_ai_ci", "UTF-8 Unicode", 4),
)
"""The character sets clients name (SET NAMES, character_set_*), with MySQL 8.0's facts."""

COLLATIONS = definition(
    I_S,
    "COLLATIONS",
    f"""
    COLLATION_NAME {_NAME} NOT NULL
    CHARACTER_SET_NAME {_NAME} NOT NULL
    ID bigint unsigned NOT NULL
    IS_DEFAULT varchar(3) NOT NULL
    IS_COMPILED varchar(3) NOT NULL
    SORTLEN int unsigned NOT NULL
    PAD_ATTRIBUTE enum('PAD SPACE','NO PAD') NOT NULL
    """,
    ("COLLATION_NAME",),
)

COLLATION_ROWS: Final[tuple[Computed, ...]] = (
    ("ascii_bin", "ascii", 65, "", "Yes", 1, "PAD SPACE"),
    ("ascii_general_ci", "ascii", 11, "Yes", "Yes", 1, "PAD SPACE"),
    ("binary", "binary", 63, "Yes", "Yes", 1, "NO PAD"),
    ("latin1_bin", "latin1", 47, "", "Yes", 1, "PAD SPACE"),
    ("latin1_swedish_ci", "latin1", 8, "Yes", "Yes", 1, "PAD SPACE"),
    ("latin1_general_ci", "latin1", 48, "", "Yes", 1, "PAD SPACE"),
    ("utf8mb3_bin", "utf8mb3", 83, "", "Yes", 1, "PAD SPACE"),
    ("utf8mb3_general_ci", "utf8mb3", 33, "Yes", "Yes", 1, "PAD SPACE"),
    ("utf8mb3_unicode_ci", "utf8mb3", 192, "", "Yes", 8, "PAD SPACE"),
    ("utf8mb4_0900_ai_ci", "utf8mb4", 255, "Yes", "Yes", 0, "NO PAD"),
    ("utf8mb4_0900_as_cs", "utf8mb4", 278, "", "Yes", 0, "NO PAD"),
    ("utf8mb4_0900_bin", "utf8mb4", 309, "", "Yes", 1, "NO PAD"),
    ("utf8mb4_bin", "utf8mb4", 46, "", "Yes", 1, "PAD SPACE"),
    ("utf8mb4_general_ci", "utf8mb4", 45, "", "Yes", 1, "PAD SPACE"),
    ("utf8mb4_unicode_520_ci", "utf8mb4", 246, "", "Yes", 8, "PAD SPACE"),
    ("utf8mb4_unicode_ci", "utf8mb4", 224, "", "Yes", 8, "PAD SPACE"),
)
"""The collations of :data:`CHARACTER_SET_ROWS` (MySQL 8.0's ids, sort lengths, padding)."""

COLLATION_CHARACTER_SET_APPLICABILITY = definition(
    I_S,
    "COLLATION_CHARACTER_SET_APPLICABILITY",
    f"""
    COLLATION_NAME {_NAME} NOT NULL
    CHARACTER_SET_NAME {_NAME} NOT NULL
    """,
    ("COLLATION_NAME",),
)

PROCESSLIST = definition(
    I_S,
    "PROCESSLIST",
    """
    ID bigint unsigned NOT NULL
    USER varchar(32) NOT NULL
    HOST varchar(261) NOT NULL
    DB varchar(64)
    COMMAND varchar(16) NOT NULL
    TIME int NOT NULL
    STATE varchar(64)
    INFO longtext
    """,
    ("ID",),
)

PLUGINS = definition(
    I_S,
    "PLUGINS",
    f"""
    PLUGIN_NAME {_NAME} NOT NULL
    PLUGIN_VERSION varchar(20) NOT NULL
    PLUGIN_STATUS varchar(10) NOT NULL
    PLUGIN_TYPE varchar(80) NOT NULL
    PLUGIN_TYPE_VERSION varchar(20) NOT NULL
    PLUGIN_LIBRARY {_NAME}
    PLUGIN_LIBRARY_VERSION varchar(20)
    PLUGIN_AUTHOR varchar(64)
    PLUGIN_DESCRIPTION longtext
    PLUGIN_LICENSE varchar(80)
    LOAD_OPTION varchar(64) NOT NULL
    """,
    ("PLUGIN_NAME",),
)

USER_PRIVILEGES = definition(
    I_S,
    "USER_PRIVILEGES",
    """
    GRANTEE varchar(292) NOT NULL
    TABLE_CATALOG varchar(512) NOT NULL
    PRIVILEGE_TYPE varchar(64) NOT NULL
    IS_GRANTABLE varchar(3) NOT NULL
    """,
    ("GRANTEE", "PRIVILEGE_TYPE"),
)

SCHEMA_PRIVILEGES = definition(
    I_S,
    "SCHEMA_PRIVILEGES",
    """
    GRANTEE varchar(292) NOT NULL
    TABLE_CATALOG varchar(512) NOT NULL
    TABLE_SCHEMA varchar(64) NOT NULL
    PRIVILEGE_TYPE varchar(64) NOT NULL
    IS_GRANTABLE varchar(3) NOT NULL
    """,
    ("GRANTEE", "TABLE_SCHEMA", "PRIVILEGE_TYPE"),
)


def _schemata(session: Session) -> Iterable[Computed]:
    listed = privileges.may_list_databases(session)
    for db in databases(session.server.engine):
        if not (listed or privileges.visible(session, db)):
            continue
        charset, collation = (
            ("utf8mb3", "utf8mb3_general_ci") if db == INFORMATION_SCHEMA else (CHARSET, COLLATION)
        )
        yield ("def", db, charset, collation, None, "NO")


def _user_tables(session: Session) -> Iterable[tuple[str, Table]]:
    """(database, table) for every table of the engine's databases the session holds a
    privilege on (MySQL's information_schema shows no other).
    """
    engine = session.server.engine
    for db in engine.databases():
        for name in engine.tables(db):
            if privileges.visible(session, db, name):
                yield db, engine.table(db, name)


PAGE_SIZE: Final = 16384
"""InnoDB's page size: the unit TABLES' DATA_LENGTH and INDEX_LENGTH count in."""


def _table_sizes(table: Table) -> tuple[int, int, int, int, int, int]:
    """TABLE_ROWS, AVG_ROW_LENGTH, DATA_LENGTH, MAX_DATA_LENGTH, INDEX_LENGTH, DATA_FREE of
    an engine table. The rows are counted exactly; the engine keeps no pages, so the
    lengths are those of an InnoDB table of one page per index (the numbers are there
    for tools that read them, not a measure of memory).
    """
    rows = len(table)
    return (
        rows,
        PAGE_SIZE // rows if rows else 0,
        PAGE_SIZE,
        0,
        PAGE_SIZE * len(table.schema.indexes),
        0,
    )


def _tables(session: Session) -> Iterable[Computed]:
    for db, table in _user_tables(session):
        schema = table.schema
        auto = table.auto_increment if schema.auto_increment_column is not None else None
        yield (
            "def",
            db,
            schema.name,
            "BASE TABLE",
            "InnoDB",
            10,
            "Dynamic",
            *_table_sizes(table),
            auto,
            None,
            None,
            None,
            COLLATION,
            None,
            "",
            "",
        )
    for schema in session.server.dispatch.virtual_tables.schemas():
        system_view = schema.db == INFORMATION_SCHEMA
        yield (
            "def",
            schema.db,
            schema.name,
            "SYSTEM VIEW" if system_view else "BASE TABLE",
            None if system_view else "PERFORMANCE_SCHEMA",
            10,
            None if system_view else "Dynamic",
            None if system_view else 0,
            *((None,) * 6 if system_view else (0, 0, 0, 0, 0, None)),
            None,
            None,
            None,
            "utf8mb3_general_ci" if system_view else COLLATION,
            None,
            "",
            "",
        )


def _columns(session: Session) -> Iterable[Computed]:
    schemas = [table.schema for _, table in _user_tables(session)]
    schemas += session.server.dispatch.virtual_tables.schemas()
    for schema in schemas:
        for position, column in enumerate(schema.columns, 1):
            kind, key, default, extra = column_facts(schema, column)
            yield (
                "def",
                schema.db,
                schema.name,
                column.name,
                position,
                None if default is None else str(default),
                "YES" if column.nullable else "NO",
                kind.split("(", 1)[0],
                *column_sizes(column),
                kind + (" unsigned" if column.unsigned else ""),
                key,
                extra,
                "select,insert,update,references",
                "",
                "",
                None,
            )


def _indexes(schema: TableSchema) -> list[tuple[str, tuple[str, ...], bool]]:
    """(name, columns, unique) of the primary key and each secondary index."""
    unique = unique_indexes(schema)
    return [("PRIMARY", schema.primary_key, True)] + [
        (name, columns, name in unique) for name, columns in schema.indexes.items()
    ]


def _statistics(session: Session) -> Iterable[Computed]:
    for db, table in _user_tables(session):
        schema = table.schema
        rows = list(table.rows.values())
        for name, columns, unique in _indexes(schema):
            for seq, column_name in enumerate(columns, 1):
                prefix = [schema.positions[c] for c in columns[:seq]]
                cardinality = len({tuple(row[p] for p in prefix) for row in rows})
                yield (
                    "def",
                    db,
                    schema.name,
                    0 if unique else 1,
                    db,
                    name,
                    seq,
                    column_name,
                    "A",
                    cardinality,
                    None,
                    None,
                    "YES" if schema.column(column_name).nullable else "",
                    "BTREE",
                    "",
                    "",
                    "YES",
                    None,
                )


def _key_column_usage(session: Session) -> Iterable[Computed]:
    """The columns of each PRIMARY KEY and UNIQUE index (no foreign keys: no
    REFERENCED_* values).
    """
    for db, table in _user_tables(session):
        schema = table.schema
        for name, columns, unique in _indexes(schema):
            if not unique:
                continue
            for position, column_name in enumerate(columns, 1):
                yield ("def", db, name, "def", db, schema.name, column_name, position, *(None,) * 4)


def _table_constraints(session: Session) -> Iterable[Computed]:
    for db, table in _user_tables(session):
        schema = table.schema
        for name, _, unique in _indexes(schema):
            if unique:
                kind = "PRIMARY KEY" if name == "PRIMARY" else "UNIQUE"
                yield ("def", db, name, db, schema.name, kind, "YES")


def _processlist(session: Session) -> Iterable[Computed]:
    return processlist_rows(session)


def visible_sessions(session: Session) -> list[Session]:
    """The sessions ``session`` may see in SHOW PROCESSLIST and PROCESSLIST: every one
    with PROCESS, else those of its own user, as MySQL shows them.
    """
    everyone = session.server.sessions()
    account = session.account
    if account is None or session.server.accounts.allowed(account, "PROCESS"):
        return everyone
    return [s for s in everyone if s.user == session.user]


def processlist_rows(session: Session) -> list[Computed]:
    """One row per session ``session`` may see (:func:`visible_sessions`), as SHOW
    PROCESSLIST and PROCESSLIST show them: id, user, host, db, command, seconds in the
    current state, state, statement (passwords shown as ``<secret>``).
    """
    now = time.monotonic()
    return [
        (
            s.thread_id,
            s.user,
            s.host,
            s.db,
            s.command,
            int(now - s.started),
            s.state,
            redacted(s.info),
        )
        for s in visible_sessions(session)
    ]


def _plugins(session: Session) -> Iterable[Computed]:
    for plugin in session.server.plugins.installed():
        source = plugin.source
        yield (
            plugin.name,
            source.version or "1.0",
            "ACTIVE",
            "REPLICATION",
            "8.0",
            source.entry_point.value,
            None,
            source.distribution or None,
            (type(plugin.instance).__doc__ or "").strip().split("\n", 1)[0],
            "GPL",
            "ON",
        )


def grantee(user: str, host: str) -> str:
    """An account as the privilege tables name it: ``'user'@'host'``."""
    return f"'{user}'@'{host}'"


def _accounts(session: Session) -> list[dict[str, object]]:
    """The accounts whose privileges information_schema shows the session: its own, or
    every one with SELECT on the mysql schema (as MySQL's USER_PRIVILEGES and
    SCHEMA_PRIVILEGES).
    """
    rows = session.server.accounts.export()
    mine = session.account
    if mine is None or session.server.accounts.allowed(mine, "SELECT", MYSQL_SCHEMA):
        return rows
    return [row for row in rows if (row["user"], row["host"]) == (mine.user, mine.host)]


def _user_privileges(session: Session) -> Iterable[Computed]:
    for account in _accounts(session):
        who = grantee(str(account["user"]), str(account["host"]))
        grantable = "YES" if account["grant_option"] else "NO"
        privileges = sorted(account["global_privileges"])  # type: ignore[call-overload]
        for privilege in privileges or ["USAGE"]:
            yield (who, "def", privilege, grantable)


def _schema_privileges(session: Session) -> Iterable[Computed]:
    for account in _accounts(session):
        who = grantee(str(account["user"]), str(account["host"]))
        per_db: Mapping[str, Iterable[str]] = account["database_privileges"]  # type: ignore[assignment]
        for db, held in sorted(per_db.items()):
            for privilege in sorted(held):
                yield (who, "def", db, privilege, "NO")


def _nothing(session: Session) -> Iterable[Computed]:
    return ()


def _partitions(session: Session) -> Iterable[Computed]:
    """One row per table of the engine with no partition (PARTITION_NAME NULL), as MySQL
    shows an unpartitioned table; the sizes are TABLES' (:func:`_table_sizes`).
    """
    for db, table in _user_tables(session):
        sizes = _table_sizes(table)
        tail = (None, None, None, None, "", None, None)
        yield ("def", db, table.schema.name, *((None,) * 9), *sizes, *tail)


def _information_schema() -> list[tuple[TableSchema, RowsOf]]:
    return [
        (SCHEMATA, _schemata),
        (TABLES, _tables),
        (COLUMNS, _columns),
        (STATISTICS, _statistics),
        (KEY_COLUMN_USAGE, _key_column_usage),
        (TABLE_CONSTRAINTS, _table_constraints),
        (REFERENTIAL_CONSTRAINTS, _nothing),
        (VIEWS, _nothing),
        (ROUTINES, _nothing),
        (TRIGGERS, _nothing),
        (EVENTS, _nothing),
        (PARTITIONS, _partitions),
        (FILES, _nothing),
        (ENGINES, lambda s: ENGINE_ROWS),
        (CHARACTER_SETS, lambda s: CHARACTER_SET_ROWS),
        (COLLATIONS, lambda s: COLLATION_ROWS),
        (COLLATION_CHARACTER_SET_APPLICABILITY, lambda s: [r[:2] for r in COLLATION_ROWS]),
        (PROCESSLIST, _processlist),
        (PLUGINS, _plugins),
        (USER_PRIVILEGES, _user_privileges),
        (SCHEMA_PRIVILEGES, _schema_privileges),
    ]


def _builtin_tables() -> list[tuple[TableSchema, RowsOf]]:
    from rpl.core.execution import system_tables

    return _information_schema() + system_tables.tables()
