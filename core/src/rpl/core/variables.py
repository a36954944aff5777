"""System and status variables: the server's registries, with MySQL's rules.

A system variable has a type, a range, a scope and may be read-only; assigning it
follows MySQL: a wrong type is ER_WRONG_TYPE_FOR_VAR (1232), a value outside an
ENUM or BOOL is ER_WRONG_VALUE_FOR_VAR (1231), an integer outside its range is
clamped with warning ER_TRUNCATED_WRONG_VALUE (1292), a read-only variable is
ER_INCORRECT_GLOBAL_LOCAL_VAR (1238), SET SESSION of a GLOBAL-only variable is
ER_GLOBAL_VARIABLE (1229), an unknown name is ER_UNKNOWN_SYSTEM_VARIABLE (1193).
Names are case-insensitive; startup options may spell ``_`` as ``-``.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable, Mapping

import attrs

from rpl.core.errors import (
    ER_GLOBAL_VARIABLE,
    ER_INCORRECT_GLOBAL_LOCAL_VAR,
    ER_LOCAL_VARIABLE,
    ER_TRUNCATED_WRONG_VALUE,
    ER_UNKNOWN_SYSTEM_VARIABLE,
    ER_WRONG_TYPE_FOR_VAR,
    ER_WRONG_VALUE_FOR_VAR,
    MySQLError,
)
from rpl.observers import (
    ObserverError,
    Scope,
    StatusValue,
    StatusVariable,
    SystemVariable,
    SysVarValue,
    VarType,
)

_BOOL_WORDS = {"ON": True, "TRUE": True, "OFF": False, "FALSE": False}


@attrs.frozen
class Warning:
    """A SHOW WARNINGS row."""

    level: str
    code: int
    message: str


def option_name(name: str) -> str:
    """The canonical variable name for a startup option or SQL name."""
    return name.strip().lower().replace("-", "_")


def like_pattern(pattern: str) -> re.Pattern[str]:
    """A case-insensitive regex for a SQL LIKE pattern (``%``, ``_``, ``\\`` escapes)."""
    out, escaped = [], False
    for char in pattern:
        if escaped:
            out.append(re.escape(char))
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == "%":
            out.append(".*")
        elif char == "_":
            out.append(".")
        else:
            out.append(re.escape(char))
    return re.compile("".join(out) + r"\Z", re.IGNORECASE | re.DOTALL)


def display(value: SysVarValue | StatusValue) -> str:
    """A value as SHOW VARIABLES / SHOW STATUS prints it."""
    if isinstance(value, bool):
        return "ON" if value else "OFF"
    if value is None:
        return ""
    return str(value)


def _wrong_value(name: str, raw: object) -> MySQLError:
    shown = "NULL" if raw is None else display(raw) if isinstance(raw, bool) else str(raw)
    return MySQLError.of(ER_WRONG_VALUE_FOR_VAR, name, shown)


def coerce(definition: SystemVariable, raw: object) -> tuple[SysVarValue, list[Warning]]:
    """Convert an assigned value to the variable's type, as MySQL's SET does."""
    name, kind = definition.name, definition.type
    if kind is VarType.BOOL:
        if isinstance(raw, bool):
            return raw, []
        if isinstance(raw, int) and raw in (0, 1):
            return bool(raw), []
        if isinstance(raw, str) and raw.upper() in _BOOL_WORDS:
            return _BOOL_WORDS[raw.upper()], []
        if isinstance(raw, float):
            raise MySQLError.of(ER_WRONG_TYPE_FOR_VAR, name)
        raise _wrong_value(name, raw)
    if kind is VarType.ENUM:
        if isinstance(raw, str):
            for value in definition.enum_values:
                if value.upper() == raw.upper():
                    return value, []
        elif (
            isinstance(raw, int)
            and not isinstance(raw, bool)
            and 0 <= raw < len(definition.enum_values)
        ):
            return definition.enum_values[raw], []
        if isinstance(raw, float):
            raise MySQLError.of(ER_WRONG_TYPE_FOR_VAR, name)
        raise _wrong_value(name, raw)
    if kind is VarType.STR:
        if raw is None or isinstance(raw, str):
            return raw, []
        raise MySQLError.of(ER_WRONG_TYPE_FOR_VAR, name)
    return _coerce_number(definition, raw)


def _coerce_number(definition: SystemVariable, raw: object) -> tuple[SysVarValue, list[Warning]]:
    integer = definition.type is VarType.INT
    if isinstance(raw, bool):
        raw = int(raw)
    if not isinstance(raw, int | float) or (integer and isinstance(raw, float)):
        raise MySQLError.of(ER_WRONG_TYPE_FOR_VAR, definition.name)
    value: int | float = raw if integer else float(raw)
    low, high = definition.min_value, definition.max_value
    clamped = max(low, value) if low is not None else value
    clamped = min(high, clamped) if high is not None else clamped
    if clamped == value:
        return value, []
    warning = Warning(
        "Warning",
        ER_TRUNCATED_WRONG_VALUE.errno,
        ER_TRUNCATED_WRONG_VALUE.format(definition.name, raw),
    )
    return (int(clamped) if integer else float(clamped)), [warning]


def parse_option(definition: SystemVariable, text: str) -> object:
    """Turn a startup option's text into the value SET would receive."""
    if definition.type in (VarType.INT, VarType.REAL):
        try:
            return int(text) if definition.type is VarType.INT else float(text)
        except ValueError:
            raise MySQLError.of(ER_WRONG_TYPE_FOR_VAR, definition.name) from None
    if definition.type is VarType.BOOL and text.strip() in ("0", "1"):
        return int(text)
    return text


class SystemVariableEntry:
    """A registered system variable with its global value
    (implements ``rpl.observers.SystemVariableHandle``).
    """

    def __init__(self, definition: SystemVariable, owner: str, value: SysVarValue) -> None:
        self.definition = definition
        self.owner = owner
        self._value = value
        self.update_lock = threading.Lock()
        self.session_only = definition.scope is Scope.SESSION
        """No global value (SELECT @@GLOBAL.name is an error)."""

    @property
    def name(self) -> str:
        """The variable's name."""
        return self.definition.name

    @property
    def value(self) -> SysVarValue:
        """The current global value."""
        return self._value


class SystemVariables:
    """The server's system variables, its own and its plugins'."""

    def __init__(self, startup_options: Mapping[str, str] | None = None) -> None:
        self._lock = threading.Lock()
        self._entries: dict[str, SystemVariableEntry] = {}
        self._aliases: dict[str, str] = {}
        self._options = {option_name(k): v for k, v in (startup_options or {}).items()}

    def register(self, definition: SystemVariable, owner: str) -> SystemVariableEntry:
        """Add a variable; its value comes from a startup option or its default.

        Raises ValueError for a name already taken and MySQLError for a startup
        option value the variable does not accept.
        """
        key = option_name(definition.name)
        value, _ = coerce(definition, definition.default)
        if key in self._options:
            value, _ = coerce(definition, parse_option(definition, self._options[key]))
        entry = SystemVariableEntry(definition, owner, value)
        with self._lock:
            if key in self._entries:
                raise ValueError(f"system variable '{definition.name}' already exists")
            self._entries[key] = entry
        return entry

    def alias(self, old_name: str, name: str) -> None:
        """``old_name`` names the variable ``name`` too (``slave_net_timeout`` for
        ``replica_net_timeout``); SHOW VARIABLES lists the variable once, by ``name``.
        A startup option given under the old name applies.
        """
        key, old_key = option_name(name), option_name(old_name)
        self._aliases[old_key] = key
        if old_key in self._options and key not in self._options:
            entry = self._entries[key]
            entry._value, _ = coerce(
                entry.definition, parse_option(entry.definition, self._options[old_key])
            )

    def unregister_owner(self, owner: str) -> None:
        """Remove every variable ``owner`` registered."""
        with self._lock:
            for key in [k for k, e in self._entries.items() if e.owner == owner]:
                del self._entries[key]

    def find(self, name: str) -> SystemVariableEntry | None:
        """The variable of canonical name ``name``, or None (no error built)."""
        return self._entries.get(name)

    def lookup(self, name: str) -> SystemVariableEntry:
        """The variable ``name``; ER_UNKNOWN_SYSTEM_VARIABLE if there is none.

        A canonical name (the server's own calls) is found at once; any other spelling
        goes through :func:`option_name` and the aliases.
        """
        entry = self._entries.get(name)
        if entry is None:
            key = option_name(name)
            entry = self._entries.get(self._aliases.get(key, key))
            if entry is None:
                raise MySQLError.of(ER_UNKNOWN_SYSTEM_VARIABLE, name)
        return entry

    def get_global(self, name: str) -> SysVarValue:
        """SELECT @@GLOBAL.name."""
        entry = self.lookup(name)
        if entry.session_only:
            raise MySQLError.of(ER_INCORRECT_GLOBAL_LOCAL_VAR, entry.name, "SESSION")
        return entry._value

    def global_int(self, name: str) -> int:
        """The global value of the integer variable ``name``."""
        value = self.get_global(name)
        assert isinstance(value, int), (name, value)
        return value

    def global_float(self, name: str) -> float:
        """The global value of the numeric variable ``name``, as a float."""
        value = self.get_global(name)
        assert isinstance(value, (int, float)), (name, value)
        return float(value)

    def int_reader(self, name: str) -> Callable[[], int]:
        """A function returning the global value of the integer variable ``name`` as it is
        at each call (SET GLOBAL shows at once): what the server's hot paths hold instead
        of a lambda over :meth:`get_global`, so no interpreted frame runs per read.
        """
        entry = self.lookup(name)
        return lambda: int(entry._value)  # type: ignore[arg-type]

    def str_reader(self, name: str) -> Callable[[], str]:
        """:meth:`int_reader` for a variable whose value is text."""
        entry = self.lookup(name)
        return lambda: str(entry._value)

    def set_global(self, name: str, raw: object) -> list[Warning]:
        """SET GLOBAL name = raw, with MySQL's checks; returns the warnings."""
        entry = self.lookup(name)
        definition = entry.definition
        if not definition.dynamic:
            raise MySQLError.of(ER_INCORRECT_GLOBAL_LOCAL_VAR, definition.name, "read only")
        if definition.scope is Scope.SESSION:
            raise MySQLError.of(ER_LOCAL_VARIABLE, definition.name)
        value, warnings = coerce(definition, raw)
        with entry.update_lock:
            self.check(definition, value, raw)
            previous, entry._value = entry._value, value
            if definition.on_update is not None:
                try:
                    definition.on_update(value)
                except ObserverError as exc:
                    entry._value = previous
                    raise MySQLError.of(
                        ER_WRONG_VALUE_FOR_VAR, definition.name, display(value)
                    ) from exc
        return warnings

    def check_session_scope(self, name: str) -> SystemVariableEntry:
        """The variable, if SET SESSION may assign it; ER_GLOBAL_VARIABLE otherwise."""
        entry = self.lookup(name)
        if entry.definition.scope is Scope.GLOBAL:
            raise MySQLError.of(ER_GLOBAL_VARIABLE, entry.name)
        return entry

    def show(self, pattern: str | None = None) -> list[tuple[str, str]]:
        """(Variable_name, Value) rows, sorted, filtered by a LIKE pattern."""
        return _rows(((e.name, e.value) for e in list(self._entries.values())), pattern)

    @staticmethod
    def check(definition: SystemVariable, value: SysVarValue, raw: object) -> None:
        """The declaration's own check of a new value (GLOBAL or SESSION): its error,
        or ER_WRONG_VALUE_FOR_VAR.
        """
        if definition.check is None:
            return
        try:
            definition.check(value)
        except ObserverError as exc:
            if exc.errno is not None:
                raise MySQLError(exc.errno, exc.sqlstate, exc.message) from exc
            raise _wrong_value(definition.name, raw) from exc


def _rows(
    items: Iterable[tuple[str, SysVarValue | StatusValue]], pattern: str | None
) -> list[tuple[str, str]]:
    regex = like_pattern(pattern) if pattern is not None else None
    return sorted(
        (name, display(value)) for name, value in items if regex is None or regex.match(name)
    )


class StatusVariables:
    """The server's status variables (SHOW STATUS), each read through its getter."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[str, tuple[StatusVariable, str]] = {}

    def register(self, definition: StatusVariable, owner: str) -> None:
        """Add a status variable; ValueError for a name already taken."""
        key = definition.name.lower()
        with self._lock:
            if key in self._entries:
                raise ValueError(f"status variable '{definition.name}' already exists")
            self._entries[key] = (definition, owner)

    def unregister_owner(self, owner: str) -> None:
        """Remove every status variable ``owner`` registered."""
        with self._lock:
            for key in [k for k, (_, o) in self._entries.items() if o == owner]:
                del self._entries[key]

    def value(self, name: str) -> StatusValue:
        """The current value of ``name``; KeyError if there is none."""
        definition, _ = self._entries[name.lower()]
        return definition.getter()

    def show(self, pattern: str | None = None) -> list[tuple[str, str]]:
        """(Variable_name, Value) rows, sorted, filtered by a LIKE pattern."""
        entries = [definition for definition, _ in list(self._entries.values())]
        return _rows(((d.name, d.getter()) for d in entries), pattern)

    def flush(self) -> None:
        """FLUSH STATUS: reset every variable that declares a reset."""
        for definition, _ in list(self._entries.values()):
            if definition.reset is not None:
                definition.reset()
