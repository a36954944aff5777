"""Declarations of a plugin's system and status variables.

A plugin registers these through :class:`rpl.observers.services.VariableRegistry`
at initialisation; the server enforces MySQL's rules for them (type, range,
scope, dynamic or read-only) and answers SET / SELECT @@ / SHOW with them.
"""

from __future__ import annotations

import enum
from collections.abc import Callable

import attrs

SysVarValue = bool | int | float | str | None
"""A system variable's value: bool (BOOL), int (INT), float (REAL), str (ENUM,
STR) or None (an unset STR)."""

StatusValue = bool | int | float | str | None
"""A status variable's value (bool shows as ON/OFF)."""


class VarType(enum.Enum):
    """A system variable's type, as MySQL's plugin variable types."""

    BOOL = "BOOL"
    INT = "INT"
    REAL = "REAL"
    ENUM = "ENUM"
    STR = "STR"


class Scope(enum.Enum):
    """Where a variable lives: GLOBAL only, SESSION only, or both."""

    GLOBAL = "GLOBAL"
    SESSION = "SESSION"
    BOTH = "BOTH"


@attrs.frozen
class SystemVariable:
    """A system variable declaration.

    ``min_value``/``max_value`` bound an INT or REAL (out-of-range values are
    clamped with a warning, as MySQL does); ``enum_values`` lists an ENUM's
    values (compared case-insensitively, stored as written here). ``check`` may
    refuse a new value, GLOBAL or SESSION, by raising
    :class:`rpl.observers.ObserverError` (the client gets ER_WRONG_VALUE_FOR_VAR,
    1231, or the error's ``errno`` and message when it has one);
    ``global_privileges``: SET GLOBAL needs one of them besides SUPER or
    SYSTEM_VARIABLES_ADMIN (ER_SPECIFIC_ACCESS_DENIED_ERROR, 1227, otherwise), as
    MySQL's check of ``group_replication_consistency`` asks for SUPER or
    GROUP_REPLICATION_ADMIN;
    ``on_update`` is called with the new value after it is stored, serialised
    with other updates of the same variable.
    """

    name: str
    type: VarType
    default: SysVarValue
    description: str = ""
    scope: Scope = Scope.GLOBAL
    dynamic: bool = True
    min_value: int | float | None = None
    max_value: int | float | None = None
    enum_values: tuple[str, ...] = ()
    check: Callable[[SysVarValue], None] | None = None
    on_update: Callable[[SysVarValue], None] | None = None
    global_privileges: tuple[str, ...] = ()


@attrs.frozen
class StatusVariable:
    """A status variable declaration.

    ``getter`` is called at each SHOW STATUS; ``reset``, when given, is called
    by FLUSH STATUS (counters start again from zero).
    """

    name: str
    getter: Callable[[], StatusValue]
    reset: Callable[[], None] | None = None
