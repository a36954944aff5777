"""MySQL errors the server reports: code, SQLSTATE and message, as MySQL 8.0 has them.

A :class:`MySQLError` is what reaches a client as an ERR packet (or a replica
thread's Last_*_Errno/Error); the catalogue below holds the codes the server
uses, with MySQL's symbol, SQLSTATE and message template.
"""

from __future__ import annotations

from typing import Final

import attrs


@attrs.frozen
class ErrorCode:
    """One entry of MySQL's client error catalogue."""

    errno: int
    symbol: str
    sqlstate: str
    template: str

    def format(self, *args: object) -> str:
        """The message with ``args`` in the template's ``%`` placeholders."""
        return self.template % args if args else self.template


class MySQLError(Exception):
    """An error with MySQL's code, SQLSTATE and message."""

    def __init__(self, errno: int, sqlstate: str, message: str) -> None:
        super().__init__(f"ERROR {errno} ({sqlstate}): {message}")
        self.errno = errno
        self.sqlstate = sqlstate
        self.message = message

    @classmethod
    def of(cls, code: ErrorCode, *args: object) -> MySQLError:
        """The error ``code`` with its message formatted from ``args``."""
        return cls(code.errno, code.sqlstate, code.format(*args))


def _code(errno: int, symbol: str, sqlstate: str, template: str) -> ErrorCode:
    return ErrorCode(errno, symbol, sqlstate, template)


ER_CANT_INITIALIZE_UDF: Final = _code(
    1123, "ER_CANT_INITIALIZE_UDF", "HY000", "Can't initialize function '%s'; %s"
)
ER_UDF_EXISTS: Final = _code(1125, "ER_UDF_EXISTS", "HY000", "Function '%s' already exists")
ER_CANT_OPEN_LIBRARY: Final = _code(
    1126, "ER_CANT_OPEN_LIBRARY", "HY000", "Can't open shared library '%s' (errno: %d %s)"
)
ER_CANT_FIND_DL_ENTRY: Final = _code(
    1127, "ER_CANT_FIND_DL_ENTRY", "HY000", "Can't find symbol '%s' in library"
)
ER_UNKNOWN_SYSTEM_VARIABLE: Final = _code(
    1193, "ER_UNKNOWN_SYSTEM_VARIABLE", "HY000", "Unknown system variable '%s'"
)
ER_LOCAL_VARIABLE: Final = _code(
    1228,
    "ER_LOCAL_VARIABLE",
    "HY000",
    "Variable '%s' is a SESSION variable and can't be used with SET GLOBAL",
)
ER_GLOBAL_VARIABLE: Final = _code(
    1229,
    "ER_GLOBAL_VARIABLE",
    "HY000",
    "Variable '%s' is a GLOBAL variable and should be set with SET GLOBAL",
)
ER_WRONG_VALUE_FOR_VAR: Final = _code(
    1231, "ER_WRONG_VALUE_FOR_VAR", "42000", "Variable '%s' can't be set to the value of '%s'"
)
ER_WRONG_TYPE_FOR_VAR: Final = _code(
    1232, "ER_WRONG_TYPE_FOR_VAR", "42000", "Incorrect argument type to variable '%s'"
)
ER_MASTER_FATAL_ERROR_READING_BINLOG: Final = _code(
    1236,
    "ER_MASTER_FATAL_ERROR_READING_BINLOG",
    "HY000",
    "Got fatal error %d from master when reading data from binary log: '%s'",
)
ER_INCORRECT_GLOBAL_LOCAL_VAR: Final = _code(
    1238, "ER_INCORRECT_GLOBAL_LOCAL_VAR", "HY000", "Variable '%s' is a %s variable"
)
ER_TRUNCATED_WRONG_VALUE: Final = _code(
    1292, "ER_TRUNCATED_WRONG_VALUE", "22007", "Truncated incorrect %s value: '%s'"
)
ER_SP_DOES_NOT_EXIST: Final = _code(1305, "ER_SP_DOES_NOT_EXIST", "42000", "%s %s does not exist")
ER_SLAVE_FATAL_ERROR: Final = _code(1593, "ER_SLAVE_FATAL_ERROR", "HY000", "Fatal error: %s")
ER_PLUGIN_CANNOT_BE_UNINSTALLED: Final = _code(
    1883, "ER_PLUGIN_CANNOT_BE_UNINSTALLED", "HY000", "Plugin '%s' cannot be uninstalled now. %s"
)
ER_BEFORE_DML_VALIDATION_ERROR: Final = _code(
    3098,
    "ER_BEFORE_DML_VALIDATION_ERROR",
    "HY000",
    "The table does not comply with the requirements by an external plugin.",
)
ER_RUN_HOOK_ERROR: Final = _code(
    3100, "ER_RUN_HOOK_ERROR", "HY000", "Error on observer while running replication hook '%s'."
)
ER_TRANSACTION_ROLLBACK_DURING_COMMIT: Final = _code(
    3101,
    "ER_TRANSACTION_ROLLBACK_DURING_COMMIT",
    "40000",
    "Plugin instructed the server to rollback the current transaction.",
)

# Server core: protocol, SQL, engine, binlog (MySQL 8.0 symbols, SQLSTATEs and messages).
ER_DB_CREATE_EXISTS: Final = _code(
    1007, "ER_DB_CREATE_EXISTS", "HY000", "Can't create database '%s'; database exists"
)
ER_DB_DROP_EXISTS: Final = _code(
    1008, "ER_DB_DROP_EXISTS", "HY000", "Can't drop database '%s'; database doesn't exist"
)
ER_DBACCESS_DENIED_ERROR: Final = _code(
    1044, "ER_DBACCESS_DENIED_ERROR", "42000", "Access denied for user '%s'@'%s' to database '%s'"
)
ER_ACCESS_DENIED_ERROR: Final = _code(
    1045, "ER_ACCESS_DENIED_ERROR", "28000", "Access denied for user '%s'@'%s' (using password: %s)"
)
ER_NO_DB_ERROR: Final = _code(1046, "ER_NO_DB_ERROR", "3D000", "No database selected")
ER_UNKNOWN_COM_ERROR: Final = _code(1047, "ER_UNKNOWN_COM_ERROR", "08S01", "Unknown command")
ER_BAD_NULL_ERROR: Final = _code(1048, "ER_BAD_NULL_ERROR", "23000", "Column '%s' cannot be null")
ER_BAD_DB_ERROR: Final = _code(1049, "ER_BAD_DB_ERROR", "42000", "Unknown database '%s'")
ER_TABLE_EXISTS_ERROR: Final = _code(
    1050, "ER_TABLE_EXISTS_ERROR", "42S01", "Table '%s' already exists"
)
ER_BAD_TABLE_ERROR: Final = _code(1051, "ER_BAD_TABLE_ERROR", "42S02", "Unknown table '%s'")
ER_BAD_FIELD_ERROR: Final = _code(
    1054, "ER_BAD_FIELD_ERROR", "42S22", "Unknown column '%s' in '%s'"
)
ER_DUP_KEYNAME: Final = _code(1061, "ER_DUP_KEYNAME", "42000", "Duplicate key name '%s'")
ER_DUP_ENTRY: Final = _code(1062, "ER_DUP_ENTRY", "23000", "Duplicate entry '%s' for key '%s'")
ER_PARSE_ERROR: Final = _code(
    1064,
    "ER_PARSE_ERROR",
    "42000",
    "You have an error in your SQL syntax; check the manual that corresponds to your MySQL "
    "server version for the right syntax to use near '%s' at line %d",
)
ER_EMPTY_QUERY: Final = _code(1065, "ER_EMPTY_QUERY", "42000", "Query was empty")
ER_MULTIPLE_PRI_KEY: Final = _code(
    1068, "ER_MULTIPLE_PRI_KEY", "42000", "Multiple primary key defined"
)
ER_WRONG_AUTO_KEY: Final = _code(
    1075,
    "ER_WRONG_AUTO_KEY",
    "42000",
    "Incorrect table definition; there can be only one auto column and it must be defined as a key",
)
ER_CANT_DROP_FIELD_OR_KEY: Final = _code(
    1091, "ER_CANT_DROP_FIELD_OR_KEY", "42000", "Can't DROP '%s'; check that column/key exists"
)
ER_UNKNOWN_ERROR: Final = _code(1105, "ER_UNKNOWN_ERROR", "HY000", "%s")
ER_FIELD_SPECIFIED_TWICE: Final = _code(
    1110, "ER_FIELD_SPECIFIED_TWICE", "42000", "Column '%s' specified twice"
)
ER_WRONG_VALUE_COUNT_ON_ROW: Final = _code(
    1136, "ER_WRONG_VALUE_COUNT_ON_ROW", "21S01", "Column count doesn't match value count at row %d"
)
ER_NONEXISTING_GRANT: Final = _code(
    1141,
    "ER_NONEXISTING_GRANT",
    "42000",
    "There is no such grant defined for user '%s' on host '%s'",
)
ER_NO_SUCH_TABLE: Final = _code(1146, "ER_NO_SUCH_TABLE", "42S02", "Table '%s.%s' doesn't exist")
ER_NET_PACKET_TOO_LARGE: Final = _code(
    1153, "ER_NET_PACKET_TOO_LARGE", "08S01", "Got a packet bigger than 'max_allowed_packet' bytes"
)
ER_CLIENT_INTERACTION_TIMEOUT: Final = _code(
    4031,
    "ER_CLIENT_INTERACTION_TIMEOUT",
    "HY000",
    "The client was disconnected by the server because of inactivity. See wait_timeout and "
    "interactive_timeout for configuring this behavior.",
)
ER_NET_READ_ERROR: Final = _code(
    1158, "ER_NET_READ_ERROR", "08S01", "Got an error reading communication packets"
)
ER_ERROR_DURING_COMMIT: Final = _code(
    1180, "ER_ERROR_DURING_COMMIT", "HY000", "Got error %d - '%s' during COMMIT"
)
ER_LOCK_OR_ACTIVE_TRANSACTION: Final = _code(
    1192,
    "ER_LOCK_OR_ACTIVE_TRANSACTION",
    "HY000",
    "Can't execute the given command because you have active locked tables or an active "
    "transaction",
)
ER_LOCK_WAIT_TIMEOUT: Final = _code(
    1205, "ER_LOCK_WAIT_TIMEOUT", "HY000", "Lock wait timeout exceeded; try restarting transaction"
)
ER_LOCK_DEADLOCK: Final = _code(
    1213,
    "ER_LOCK_DEADLOCK",
    "40001",
    "Deadlock found when trying to get lock; try restarting transaction",
)
ER_SPECIFIC_ACCESS_DENIED_ERROR: Final = _code(
    1227,
    "ER_SPECIFIC_ACCESS_DENIED_ERROR",
    "42000",
    "Access denied; you need (at least one of) the %s privilege(s) for this operation",
)
ER_NOT_SUPPORTED_YET: Final = _code(
    1235, "ER_NOT_SUPPORTED_YET", "42000", "This version of MySQL doesn't yet support '%s'"
)
ER_WARN_DATA_OUT_OF_RANGE: Final = _code(
    1264, "ER_WARN_DATA_OUT_OF_RANGE", "22003", "Out of range value for column '%s' at row %d"
)
ER_NO_DEFAULT_FOR_FIELD: Final = _code(
    1364, "ER_NO_DEFAULT_FOR_FIELD", "HY000", "Field '%s' doesn't have a default value"
)
ER_TRUNCATED_WRONG_VALUE_FOR_FIELD: Final = _code(
    1366,
    "ER_TRUNCATED_WRONG_VALUE_FOR_FIELD",
    "HY000",
    "Incorrect %s value: '%s' for column '%s' at row %d",
)
ER_UNKNOWN_TARGET_BINLOG: Final = _code(
    1373, "ER_UNKNOWN_TARGET_BINLOG", "HY000", "Target log not found in binlog index"
)
ER_IO_ERR_LOG_INDEX_READ: Final = _code(
    1374, "ER_IO_ERR_LOG_INDEX_READ", "HY000", "I/O error reading log index file"
)
ER_LOG_IN_USE: Final = _code(
    1378, "ER_LOG_IN_USE", "HY000", "A purgeable log is in use, will not purge"
)
ER_TOO_BIG_SET: Final = _code(
    1097, "ER_TOO_BIG_SET", "HY000", "Too many strings for column %s and SET"
)
ER_INVALID_CHARACTER_STRING: Final = _code(
    1300, "ER_INVALID_CHARACTER_STRING", "HY000", "Invalid %s character string: '%s'"
)
ER_TOO_LONG_IDENT: Final = _code(
    1059, "ER_TOO_LONG_IDENT", "42000", "Identifier name '%s' is too long"
)
ER_TOO_BIG_FIELDLENGTH: Final = _code(
    1074,
    "ER_TOO_BIG_FIELDLENGTH",
    "42000",
    "Column length too big for column '%s' (max = %d); use BLOB or TEXT instead",
)
ER_TOO_MANY_FIELDS: Final = _code(1117, "ER_TOO_MANY_FIELDS", "HY000", "Too many columns")
ER_TOO_BIG_SCALE: Final = _code(
    1425,
    "ER_TOO_BIG_SCALE",
    "42000",
    "Too big scale %d specified for column '%s'. Maximum is %d.",
)
ER_TOO_BIG_PRECISION: Final = _code(
    1426,
    "ER_TOO_BIG_PRECISION",
    "42000",
    "Too-big precision %d specified for '%s'. Maximum is %d.",
)
ER_M_BIGGER_THAN_D: Final = _code(
    1427,
    "ER_M_BIGGER_THAN_D",
    "42000",
    "For float(M,D), double(M,D) or decimal(M,D), M must be >= D (column '%s').",
)
ER_DUPLICATED_VALUE_IN_TYPE: Final = _code(
    1291, "ER_DUPLICATED_VALUE_IN_TYPE", "HY000", "Column '%s' has duplicated value '%s' in %s"
)
ER_ILLEGAL_VALUE_FOR_TYPE: Final = _code(
    1367, "ER_ILLEGAL_VALUE_FOR_TYPE", "22007", "Illegal %s '%s' value found during parsing"
)
ER_CANNOT_USER: Final = _code(1396, "ER_CANNOT_USER", "HY000", "Operation %s failed for %s")
WARN_DATA_TRUNCATED: Final = _code(
    1265, "WARN_DATA_TRUNCATED", "01000", "Data truncated for column '%s' at row %d"
)
ER_DATA_TOO_LONG: Final = _code(
    1406, "ER_DATA_TOO_LONG", "22001", "Data too long for column '%s' at row %d"
)
ER_INVALID_JSON_TEXT: Final = _code(
    3140,
    "ER_INVALID_JSON_TEXT",
    "22032",
    "Invalid JSON text: \"%s\" at position %d in value for column '%s'.",
)
ER_JSON_KEY_TOO_BIG: Final = _code(
    3151, "ER_JSON_KEY_TOO_BIG", "22032", "The JSON object contains a key name that is too long."
)
ER_JSON_DOCUMENT_TOO_DEEP: Final = _code(
    3157,
    "ER_JSON_DOCUMENT_TOO_DEEP",
    "22032",
    "The JSON document exceeds the maximum depth of 100.",
)
ER_ERROR_WHEN_EXECUTING_COMMAND: Final = _code(
    1220, "ER_ERROR_WHEN_EXECUTING_COMMAND", "HY000", "Error when executing command %s: %s"
)
ER_TABLE_WITHOUT_PK: Final = _code(
    3750,
    "ER_TABLE_WITHOUT_PK",
    "HY000",
    "Unable to create or change a table without a primary key, when the system variable "
    "'sql_require_primary_key' is set. Add a primary key to the table or unset this variable "
    "to avoid this warning. Note that tables without a primary key can cause performance "
    "problems in row-based replication, so please consult your DBA before adding such a table.",
)
ER_CANT_OPEN_FILE: Final = _code(
    1016, "ER_CANT_OPEN_FILE", "HY000", "Can't open file: '%s' (errno: %d - %s)"
)
ER_ERROR_ON_WRITE: Final = _code(
    1026, "ER_ERROR_ON_WRITE", "HY000", "Error writing file '%s' (errno: %d - %s)"
)
ER_STACK_OVERRUN_NEED_MORE: Final = _code(
    1436,
    "ER_STACK_OVERRUN_NEED_MORE",
    "HY000",
    "Thread stack overrun:  %d bytes used of a %d byte stack, and %d bytes needed.  "
    "Use 'mysqld --thread_stack=#' to specify a bigger stack.",
)
ER_CON_COUNT_ERROR: Final = _code(1040, "ER_CON_COUNT_ERROR", "08004", "Too many connections")
ER_BINLOG_LOGGING_IMPOSSIBLE: Final = _code(
    1598, "ER_BINLOG_LOGGING_IMPOSSIBLE", "HY000", "Binary logging not possible. Message: %s"
)
ER_BINLOG_EVENT_CORRUPT: Final = _code(
    1610, "ER_SLAVE_CORRUPT_EVENT", "HY000", "Corrupted replication event was detected"
)

ER_DUP_FIELDNAME: Final = _code(1060, "ER_DUP_FIELDNAME", "42S21", "Duplicate column name '%s'")
ER_WRONG_PARAMCOUNT_TO_NATIVE_FCT: Final = _code(
    1582,
    "ER_WRONG_PARAMCOUNT_TO_NATIVE_FCT",
    "42000",
    "Incorrect parameter count in the call to native function '%s'",
)
ER_INVALID_DEFAULT: Final = _code(
    1067, "ER_INVALID_DEFAULT", "42000", "Invalid default value for '%s'"
)
ER_INVALID_ON_UPDATE: Final = _code(
    1294, "ER_INVALID_ON_UPDATE", "HY000", "Invalid ON UPDATE clause for '%s' column"
)
ER_KEY_COLUMN_DOES_NOT_EXITS: Final = _code(
    1072, "ER_KEY_COLUMN_DOES_NOT_EXITS", "42000", "Key column '%s' doesn't exist in table"
)
ER_WRONG_NAME_FOR_INDEX: Final = _code(
    1280, "ER_WRONG_NAME_FOR_INDEX", "42000", "Incorrect index name '%s'"
)

# -- replication ----------------------------------------------------------------------------
ER_SLAVE_MUST_STOP: Final = _code(
    1198,
    "ER_SLAVE_MUST_STOP",
    "HY000",
    "This operation cannot be performed with a running replica; run STOP REPLICA first",
)
ER_BAD_SLAVE: Final = _code(
    1200,
    "ER_BAD_SLAVE",
    "HY000",
    "The server is not configured as replica; fix in config file or with CHANGE "
    "REPLICATION SOURCE TO",
)
ER_WRONG_ARGUMENTS: Final = _code(1210, "ER_WRONG_ARGUMENTS", "HY000", "Incorrect arguments to %s")
ER_OPTION_PREVENTS_STATEMENT: Final = _code(
    1290,
    "ER_OPTION_PREVENTS_STATEMENT",
    "HY000",
    "The MySQL server is running with the %s option so it cannot execute this statement",
)
ER_SLAVE_HEARTBEAT_VALUE_OUT_OF_RANGE: Final = _code(
    1703,
    "ER_SLAVE_HEARTBEAT_VALUE_OUT_OF_RANGE",
    "HY000",
    "The requested value for the heartbeat period is either negative or exceeds the "
    "maximum allowed (4294967 seconds).",
)
ER_SLAVE_HEARTBEAT_VALUE_OUT_OF_RANGE_MAX: Final = _code(
    1704,
    "ER_SLAVE_HEARTBEAT_VALUE_OUT_OF_RANGE_MAX",
    "HY000",
    "The requested value for the heartbeat period exceeds the value of "
    "`replica_net_timeout' seconds. A sensible value for the period should be less than "
    "the timeout.",
)
ER_BAD_SLAVE_AUTO_POSITION: Final = _code(
    1777,
    "ER_BAD_SLAVE_AUTO_POSITION",
    "HY000",
    "Parameters SOURCE_LOG_FILE, SOURCE_LOG_POS, RELAY_LOG_FILE and RELAY_LOG_POS cannot "
    "be set when SOURCE_AUTO_POSITION is active.",
)
ER_SLAVE_SQL_THREAD_MUST_STOP: Final = _code(
    3017,
    "ER_SLAVE_SQL_THREAD_MUST_STOP",
    "HY000",
    "This operation cannot be performed with a running replica sql thread; run STOP "
    "REPLICA SQL_THREAD first",
)
ER_SLAVE_CHANNEL_IO_THREAD_MUST_STOP: Final = _code(
    3021,
    "ER_SLAVE_CHANNEL_IO_THREAD_MUST_STOP",
    "HY000",
    "This operation cannot be performed with a running replica io thread; run STOP "
    "REPLICA IO_THREAD FOR CHANNEL '%s' first.",
)
ER_SLAVE_CHANNEL_WAS_RUNNING: Final = _code(
    3083,
    "ER_SLAVE_CHANNEL_WAS_RUNNING",
    "HY000",
    "Replication thread(s) for channel '%s' are already runnning.",
)
ER_SLAVE_CHANNEL_WAS_NOT_RUNNING: Final = _code(
    3084,
    "ER_SLAVE_CHANNEL_WAS_NOT_RUNNING",
    "HY000",
    "Replication thread(s) for channel '%s' are already stopped.",
)
ER_SLAVE_CHANNEL_DOES_NOT_EXIST: Final = _code(
    3074, "ER_SLAVE_CHANNEL_DOES_NOT_EXIST", "HY000", "Replica channel '%s' does not exist."
)
ER_SLAVE_CHANNEL_NAME_INVALID_OR_TOO_LONG: Final = _code(
    3072,
    "ER_SLAVE_CHANNEL_NAME_INVALID_OR_TOO_LONG",
    "HY000",
    "Invalid channel name provided. Channel names must be at most 64 characters.",
)
ER_SLAVE_MULTIPLE_CHANNELS_CMD: Final = _code(
    3079,
    "ER_SLAVE_MULTIPLE_CHANNELS_CMD",
    "HY000",
    "Multiple channels exist on the replica. Please provide channel name as an argument.",
)
ER_SLAVE_CHANNEL_OPERATION_NOT_ALLOWED: Final = _code(
    3139,
    "ER_SLAVE_CHANNEL_OPERATION_NOT_ALLOWED",
    "HY000",
    "%s cannot be performed on channel '%s'.",
)
ER_BAD_SLAVE_UNTIL_COND: Final = _code(
    1277,
    "ER_BAD_SLAVE_UNTIL_COND",
    "HY000",
    "Incorrect parameter or combination of parameters for START REPLICA UNTIL",
)
ER_SERVER_MASTER_FATAL_ERROR_READING_BINLOG: Final = _code(
    13114,
    "ER_SERVER_MASTER_FATAL_ERROR_READING_BINLOG",
    "HY000",
    "Got fatal error %d from source when reading data from binary log: '%s'",
)
ER_SLAVE_MASTER_COM_FAILURE: Final = _code(
    13120, "ER_SLAVE_MASTER_COM_FAILURE", "HY000", "Source command %s failed: %s (Errno: %d)"
)
ER_MIX_OF_GROUP_FUNC_AND_FIELDS_V2: Final = _code(
    1140,
    "ER_MIX_OF_GROUP_FUNC_AND_FIELDS_V2",
    "42000",
    "In aggregated query without GROUP BY, expression #%s of SELECT list contains "
    "nonaggregated column '%s'; this is incompatible with sql_mode=only_full_group_by",
)
ER_MALFORMED_GTID_SET_SPECIFICATION: Final = _code(
    1772, "ER_MALFORMED_GTID_SET_SPECIFICATION", "HY000", "Malformed GTID set specification '%s'."
)
ER_SLAVE_RELAY_LOG_READ_FAILURE: Final = _code(
    1594, "ER_SLAVE_RELAY_LOG_READ_FAILURE", "HY000", "Relay log read failure: %s"
)
ER_SLAVE_RELAY_LOG_WRITE_FAILURE: Final = _code(
    13122, "ER_SLAVE_RELAY_LOG_WRITE_FAILURE", "HY000", "Relay log write failure: %s"
)
ER_SLAVE_INCIDENT: Final = _code(1590, "ER_SLAVE_INCIDENT", "HY000", "%s")
ER_KEY_NOT_FOUND: Final = _code(1032, "ER_KEY_NOT_FOUND", "HY000", "Can't find record in '%s'")
ER_INSIDE_TRANSACTION_PREVENTS_SWITCH_BINLOG_FORMAT: Final = _code(
    1679,
    "ER_INSIDE_TRANSACTION_PREVENTS_SWITCH_BINLOG_FORMAT",
    "HY000",
    "Cannot modify @@session.binlog_format inside a transaction",
)
ER_SLAVE_CONVERSION_FAILED: Final = _code(
    1677,
    "ER_SLAVE_CONVERSION_FAILED",
    "HY000",
    "Column %d of table '%s.%s' cannot be converted from type '%s' to type '%s'",
)
ER_BINLOG_ROW_WRONG_TABLE_DEF: Final = _code(
    1535,
    "ER_BINLOG_ROW_WRONG_TABLE_DEF",
    "HY000",
    "Table definition on master and slave does not match: %s",
)

# --- keys, foreign keys, ALTER TABLE (DDL and the catalogue) ---
ER_CANT_REMOVE_ALL_FIELDS: Final = _code(
    1090,
    "ER_CANT_REMOVE_ALL_FIELDS",
    "42000",
    "You can't delete all columns with ALTER TABLE; use DROP TABLE instead",
)
ER_ILLEGAL_HA: Final = _code(
    1031, "ER_ILLEGAL_HA", "HY000", "Table storage engine for '%s' doesn't have this option"
)
ER_CANNOT_ADD_FOREIGN: Final = _code(
    1215, "ER_CANNOT_ADD_FOREIGN", "HY000", "Cannot add foreign key constraint"
)
ER_ROW_IS_REFERENCED_2: Final = _code(
    1451,
    "ER_ROW_IS_REFERENCED_2",
    "23000",
    "Cannot delete or update a parent row: a foreign key constraint fails (%s)",
)
ER_NO_REFERENCED_ROW_2: Final = _code(
    1452,
    "ER_NO_REFERENCED_ROW_2",
    "23000",
    "Cannot add or update a child row: a foreign key constraint fails (%s)",
)
ER_DROP_INDEX_FK: Final = _code(
    1553, "ER_DROP_INDEX_FK", "HY000", "Cannot drop index '%s': needed in a foreign key constraint"
)
ER_FK_NO_INDEX_PARENT: Final = _code(
    1822,
    "ER_FK_NO_INDEX_PARENT",
    "HY000",
    "Failed to add the foreign key constraint. Missing index for constraint '%s' in the "
    "referenced table '%s'",
)
ER_FK_CANNOT_OPEN_PARENT: Final = _code(
    1824, "ER_FK_CANNOT_OPEN_PARENT", "HY000", "Failed to open the referenced table '%s'"
)
ER_FK_DUP_NAME: Final = _code(
    1826, "ER_FK_DUP_NAME", "HY000", "Duplicate foreign key constraint name '%s'"
)
ER_FK_COLUMN_CANNOT_DROP: Final = _code(
    1828,
    "ER_FK_COLUMN_CANNOT_DROP",
    "HY000",
    "Cannot drop column '%s': needed in a foreign key constraint '%s'",
)
ER_FK_COLUMN_NOT_NULL: Final = _code(
    1830,
    "ER_FK_COLUMN_NOT_NULL",
    "HY000",
    "Column '%s' cannot be NOT NULL: needed in a foreign key constraint '%s' SET NULL",
)
ER_FK_CANNOT_DROP_PARENT: Final = _code(
    3730,
    "ER_FK_CANNOT_DROP_PARENT",
    "HY000",
    "Cannot drop table '%s' referenced by a foreign key constraint '%s' on table '%s'.",
)
ER_FK_NO_COLUMN_PARENT: Final = _code(
    3734,
    "ER_FK_NO_COLUMN_PARENT",
    "HY000",
    "Failed to add the foreign key constraint. Missing column '%s' for constraint '%s' in "
    "the referenced table '%s'",
)
ER_FK_INCOMPATIBLE_COLUMNS: Final = _code(
    3780,
    "ER_FK_INCOMPATIBLE_COLUMNS",
    "HY000",
    "Referencing column '%s' and referenced column '%s' in foreign key constraint '%s' are "
    "incompatible.",
)
ER_WRONG_FK_DEF: Final = _code(
    1239,
    "ER_WRONG_FK_DEF",
    "42000",
    "Incorrect foreign key definition for '%s': %s",
)
ER_UNKNOWN_STMT_HANDLER: Final = _code(
    1243,
    "ER_UNKNOWN_STMT_HANDLER",
    "HY000",
    "Unknown prepared statement handler (%.*s) given to %s",
)
ER_UNSUPPORTED_PS: Final = _code(
    1295,
    "ER_UNSUPPORTED_PS",
    "HY000",
    "This command is not supported in the prepared statement protocol yet",
)
ER_PS_MANY_PARAM: Final = _code(
    1390, "ER_PS_MANY_PARAM", "HY000", "Prepared statement contains too many placeholders"
)
ER_STMT_HAS_NO_OPEN_CURSOR: Final = _code(
    1421, "ER_STMT_HAS_NO_OPEN_CURSOR", "HY000", "The statement (%lu) has no open cursor."
)
ER_MAX_PREPARED_STMT_COUNT_REACHED: Final = _code(
    1461,
    "ER_MAX_PREPARED_STMT_COUNT_REACHED",
    "42000",
    "Can't create more than max_prepared_stmt_count statements (current value: %u)",
)
ER_OPEN_AS_READONLY: Final = _code(1036, "ER_OPEN_AS_READONLY", "HY000", "Table '%s' is read only")
ER_TABLEACCESS_DENIED_ERROR: Final = _code(
    1142,
    "ER_TABLEACCESS_DENIED_ERROR",
    "42000",
    "%s command denied to user '%s'@'%s' for table '%s'",
)
ER_ILLEGAL_GRANT_FOR_TABLE: Final = _code(
    1144,
    "ER_ILLEGAL_GRANT_FOR_TABLE",
    "42000",
    "Illegal GRANT/REVOKE command; please consult the manual to see which privileges can be used",
)
ER_WRONG_USAGE: Final = _code(1221, "ER_WRONG_USAGE", "HY000", "Incorrect usage of %s and %s")
ER_INSIDE_TRANSACTION_PREVENTS_SWITCH_SQL_LOG_BIN: Final = _code(
    1694,
    "ER_INSIDE_TRANSACTION_PREVENTS_SWITCH_SQL_LOG_BIN",
    "HY000",
    "Cannot modify @@session.sql_log_bin inside a transaction",
)
ER_TABLE_NOT_LOCKED_FOR_WRITE: Final = _code(
    1099,
    "ER_TABLE_NOT_LOCKED_FOR_WRITE",
    "HY000",
    "Table '%s' was locked with a READ lock and can't be updated",
)
ER_TABLE_NOT_LOCKED: Final = _code(
    1100, "ER_TABLE_NOT_LOCKED", "HY000", "Table '%s' was not locked with LOCK TABLES"
)
ER_CANT_UPDATE_WITH_READLOCK: Final = _code(
    1223,
    "ER_CANT_UPDATE_WITH_READLOCK",
    "HY000",
    "Can't execute the query because you have a conflicting read lock",
)
ER_CANT_CHANGE_TX_CHARACTERISTICS: Final = _code(
    1568,
    "ER_CANT_CHANGE_TX_CHARACTERISTICS",
    "25001",
    "Transaction characteristics can't be changed while a transaction is in progress",
)
ER_UNKNOWN_CHARACTER_SET: Final = _code(
    1115, "ER_UNKNOWN_CHARACTER_SET", "42000", "Unknown character set: '%s'"
)
ER_UNKNOWN_COLLATION: Final = _code(
    1273, "ER_UNKNOWN_COLLATION", "HY000", "Unknown collation: '%s'"
)
ER_UNKNOWN_TIME_ZONE: Final = _code(
    1298, "ER_UNKNOWN_TIME_ZONE", "HY000", "Unknown or incorrect time zone: '%s'"
)
ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION: Final = _code(
    1792,
    "ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION",
    "25006",
    "Cannot execute statement in a READ ONLY transaction.",
)
ER_UNKNOWN_TABLE: Final = _code(1109, "ER_UNKNOWN_TABLE", "42S02", "Unknown table '%s' in %s")
ER_UPDATE_WITHOUT_KEY_IN_SAFE_MODE: Final = _code(
    1175,
    "ER_UPDATE_WITHOUT_KEY_IN_SAFE_MODE",
    "HY000",
    "You are using safe update mode and you tried to update a table without a WHERE that "
    "uses a KEY column. To disable safe mode, toggle the option in Preferences -> SQL Editor "
    "and reconnect.",
)
ER_COLLATION_CHARSET_MISMATCH: Final = _code(
    1253,
    "ER_COLLATION_CHARSET_MISMATCH",
    "42000",
    "COLLATION '%s' is not valid for CHARACTER SET '%s'",
)
ER_NON_UNIQ_ERROR: Final = _code(
    1052, "ER_NON_UNIQ_ERROR", "23000", "Column '%s' in %s is ambiguous"
)
ER_NONUNIQ_TABLE: Final = _code(1066, "ER_NONUNIQ_TABLE", "42000", "Not unique table/alias: '%s'")
ER_WRONG_FIELD_WITH_GROUP: Final = _code(
    1055,
    "ER_WRONG_FIELD_WITH_GROUP",
    "42000",
    "Expression #%s of SELECT list is not in GROUP BY clause and contains nonaggregated column"
    " '%s' which is not functionally dependent on columns in GROUP BY clause; this is"
    " incompatible with sql_mode=only_full_group_by",
)
ER_INVALID_GROUP_FUNC_USE: Final = _code(
    1111, "ER_INVALID_GROUP_FUNC_USE", "HY000", "Invalid use of group function"
)
ER_WRONG_NUMBER_OF_COLUMNS_IN_SELECT: Final = _code(
    1222,
    "ER_WRONG_NUMBER_OF_COLUMNS_IN_SELECT",
    "21000",
    "The used SELECT statements have a different number of columns",
)
ER_OPERAND_COLUMNS: Final = _code(
    1241, "ER_OPERAND_COLUMNS", "21000", "Operand should contain %d column(s)"
)
ER_SUBQUERY_NO_1_ROW: Final = _code(
    1242, "ER_SUBQUERY_NO_1_ROW", "21000", "Subquery returns more than 1 row"
)
ER_DERIVED_MUST_HAVE_ALIAS: Final = _code(
    1248, "ER_DERIVED_MUST_HAVE_ALIAS", "42000", "Every derived table must have its own alias"
)
ER_UPDATE_TABLE_USED: Final = _code(
    1093,
    "ER_UPDATE_TABLE_USED",
    "HY000",
    "You can't specify target table '%s' for update in FROM clause",
)
ER_NO_TABLES_USED: Final = _code(1096, "ER_NO_TABLES_USED", "HY000", "No tables used")
ER_TABLE_DEF_CHANGED: Final = _code(
    1412,
    "ER_TABLE_DEF_CHANGED",
    "HY000",
    "Table definition has changed, please retry transaction",
)
