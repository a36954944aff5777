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
    1123, "ER_CANT_INITIALIZE_UDF", "HY000", "Can't initialize function '%s'; %s")
ER_UDF_EXISTS: Final = _code(1125, "ER_UDF_EXISTS", "HY000", "Function '%s' already exists")
ER_CANT_OPEN_LIBRARY: Final = _code(
    1126, "ER_CANT_OPEN_LIBRARY", "HY000", "Can't open shared library '%s' (errno: %d %s)")
ER_CANT_FIND_DL_ENTRY: Final = _code(
    1127, "ER_CANT_FIND_DL_ENTRY", "HY000", "Can't find symbol '%s' in library")
ER_UNKNOWN_SYSTEM_VARIABLE: Final = _code(
    1193, "ER_UNKNOWN_SYSTEM_VARIABLE", "HY000", "Unknown system variable '%s'")
ER_LOCAL_VARIABLE: Final = _code(
    1228, "ER_LOCAL_VARIABLE", "HY000",
    "Variable '%s' is a SESSION variable and can't be used with SET GLOBAL")
ER_GLOBAL_VARIABLE: Final = _code(
    1229, "ER_GLOBAL_VARIABLE", "HY000",
    "Variable '%s' is a GLOBAL variable and should be set with SET GLOBAL")
ER_WRONG_VALUE_FOR_VAR: Final = _code(
    1231, "ER_WRONG_VALUE_FOR_VAR", "42000", "Variable '%s' can't be set to the value of '%s'")
ER_WRONG_TYPE_FOR_VAR: Final = _code(
    1232, "ER_WRONG_TYPE_FOR_VAR", "42000", "Incorrect argument type to variable '%s'")
ER_MASTER_FATAL_ERROR_READING_BINLOG: Final = _code(
    1236, "ER_MASTER_FATAL_ERROR_READING_BINLOG", "HY000",
    "Got fatal error %d from master when reading data from binary log: '%s'")
ER_INCORRECT_GLOBAL_LOCAL_VAR: Final = _code(
    1238, "ER_INCORRECT_GLOBAL_LOCAL_VAR", "HY000", "Variable '%s' is a %s variable")
ER_TRUNCATED_WRONG_VALUE: Final = _code(
    1292, "ER_TRUNCATED_WRONG_VALUE", "22007", "Truncated incorrect %s value: '%s'")
ER_SP_DOES_NOT_EXIST: Final = _code(1305, "ER_SP_DOES_NOT_EXIST", "42000", "%s %s does not exist")
ER_SLAVE_FATAL_ERROR: Final = _code(1593, "ER_SLAVE_FATAL_ERROR", "HY000", "Fatal error: %s")
ER_PLUGIN_CANNOT_BE_UNINSTALLED: Final = _code(
    1883, "ER_PLUGIN_CANNOT_BE_UNINSTALLED", "HY000", "Plugin '%s' cannot be uninstalled now. %s")
ER_BEFORE_DML_VALIDATION_ERROR: Final = _code(
    3098, "ER_BEFORE_DML_VALIDATION_ERROR", "HY000",
    "The table does not comply with the requirements by an external plugin.")
ER_RUN_HOOK_ERROR: Final = _code(
    3100, "ER_RUN_HOOK_ERROR", "HY000", "Error on observer while running replication hook '%s'.")
ER_TRANSACTION_ROLLBACK_DURING_COMMIT: Final = _code(
    3101, "ER_TRANSACTION_ROLLBACK_DURING_COMMIT", "40000",
    "Plugin instructed the server to rollback the current transaction.")
