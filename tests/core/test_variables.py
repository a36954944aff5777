"""System and status variables follow MySQL's type, range, scope and read-only rules."""

from __future__ import annotations

import pytest

from rpl.core.errors import MySQLError
from rpl.core.variables import StatusVariables, SystemVariables, like_pattern
from rpl.observers import ObserverError, Scope, StatusVariable, SystemVariable, VarType

VARIABLES = (
    SystemVariable("x_enabled", VarType.BOOL, False),
    SystemVariable("x_count", VarType.INT, 1, min_value=1, max_value=65535),
    SystemVariable(
        "x_point", VarType.ENUM, "AFTER_SYNC", enum_values=("AFTER_SYNC", "AFTER_COMMIT")
    ),
    SystemVariable("x_name", VarType.STR, None),
    SystemVariable("x_ratio", VarType.REAL, 0.5, min_value=0.0, max_value=1.0),
    SystemVariable("x_fixed", VarType.INT, 4, dynamic=False),
    SystemVariable("x_local", VarType.INT, 0, scope=Scope.SESSION),
)


@pytest.fixture
def variables() -> SystemVariables:
    registry = SystemVariables({"x-count": "9"})
    for variable in VARIABLES:
        registry.register(variable, "x")
    return registry


def error(variables: SystemVariables, name: str, value: object) -> tuple[int, str]:
    with pytest.raises(MySQLError) as raised:
        variables.set_global(name, value)
    return raised.value.errno, raised.value.message


@pytest.mark.parametrize(
    "value, expected",
    [("ON", True), ("off", False), (1, True), (0, False), ("TRUE", True), (True, True)],
)
def test_bool_accepts_mysql_spellings(
    variables: SystemVariables, value: object, expected: bool
) -> None:
    variables.set_global("x_enabled", value)
    assert variables.get_global("X_ENABLED") is expected


@pytest.mark.parametrize("value, code", [(2, 1231), ("yes!", 1231), (None, 1231), (1.5, 1232)])
def test_bool_rejects(variables: SystemVariables, value: object, code: int) -> None:
    assert error(variables, "x_enabled", value)[0] == code
    assert variables.get_global("x_enabled") is False


def test_int_out_of_range_is_clamped_with_a_warning(variables: SystemVariables) -> None:
    warnings = variables.set_global("x_count", 0)
    assert variables.get_global("x_count") == 1
    assert [(w.code, w.message) for w in warnings] == [
        (1292, "Truncated incorrect x_count value: '0'")
    ]
    variables.set_global("x_count", 70000)
    assert variables.get_global("x_count") == 65535


@pytest.mark.parametrize("value", ["abc", 1.5, None])
def test_int_rejects_other_types(variables: SystemVariables, value: object) -> None:
    assert error(variables, "x_count", value) == (
        1232,
        "Incorrect argument type to variable 'x_count'",
    )


def test_enum(variables: SystemVariables) -> None:
    variables.set_global("x_point", "after_commit")
    assert variables.get_global("x_point") == "AFTER_COMMIT"
    variables.set_global("x_point", 0)
    assert variables.get_global("x_point") == "AFTER_SYNC"
    assert error(variables, "x_point", "AFTER_FLUSH") == (
        1231,
        "Variable 'x_point' can't be set to the value of 'AFTER_FLUSH'",
    )
    assert error(variables, "x_point", 5)[0] == 1231


def test_str_and_real(variables: SystemVariables) -> None:
    variables.set_global("x_name", "abc")
    assert variables.get_global("x_name") == "abc"
    assert error(variables, "x_name", 3)[0] == 1232
    assert [w.code for w in variables.set_global("x_ratio", 2)] == [1292]
    assert variables.get_global("x_ratio") == 1.0


def test_read_only_unknown_and_scope_errors(variables: SystemVariables) -> None:
    assert error(variables, "x_fixed", 5) == (1238, "Variable 'x_fixed' is a read only variable")
    assert error(variables, "x_nope", 5) == (1193, "Unknown system variable 'x_nope'")
    assert error(variables, "x_local", 5)[0] == 1228
    with pytest.raises(MySQLError) as raised:
        variables.check_session_scope("x_count")
    assert (raised.value.errno, raised.value.message) == (
        1229,
        "Variable 'x_count' is a GLOBAL variable and should be set with SET GLOBAL",
    )


def test_readers_follow_set_global(variables: SystemVariables) -> None:
    count, point = variables.int_reader("x-count"), variables.str_reader("x_point")
    assert (count(), point()) == (9, "AFTER_SYNC")
    variables.set_global("x_count", 300)
    variables.set_global("x_point", "after_commit")
    assert (count(), point()) == (300, "AFTER_COMMIT")
    with pytest.raises(MySQLError) as raised:
        variables.int_reader("x_nope")
    assert raised.value.errno == 1193
    with pytest.raises(MySQLError) as raised:
        variables.get_global("x_local")
    assert raised.value.errno == 1238


def test_startup_option_sets_the_initial_value(variables: SystemVariables) -> None:
    assert variables.get_global("x_count") == 9


def test_bad_startup_option_is_refused() -> None:
    registry = SystemVariables({"x_count": "many"})
    with pytest.raises(MySQLError) as raised:
        registry.register(VARIABLES[1], "x")
    assert raised.value.errno == 1232


def test_check_and_on_update() -> None:
    seen: list[object] = []

    def check(value: object) -> None:
        if value == 13:
            raise ObserverError("unlucky")

    def on_update(value: object) -> None:
        if value == 7:
            raise ObserverError("cannot apply")
        seen.append(value)

    registry = SystemVariables()
    registry.register(SystemVariable("y_n", VarType.INT, 1, check=check, on_update=on_update), "y")
    registry.set_global("y_n", 5)
    assert seen == [5]
    for refused in (13, 7):
        with pytest.raises(MySQLError) as raised:
            registry.set_global("y_n", refused)
        assert raised.value.errno == 1231
        assert registry.get_global("y_n") == 5, "a refused value must not stay"


def test_show_with_like(variables: SystemVariables) -> None:
    assert variables.show("x\\_e%") == [("x_enabled", "OFF")]
    assert [name for name, _ in variables.show("X_R_TIO")] == ["x_ratio"]
    assert like_pattern("a%").match("abc") and not like_pattern("a_").match("abc")


def test_status_flush_calls_reset() -> None:
    counter = {"n": 4}
    status = StatusVariables()
    status.register(
        StatusVariable("Z_calls", lambda: counter["n"], reset=lambda: counter.update(n=0)), "z"
    )
    status.register(StatusVariable("Z_on", lambda: True), "z")
    assert status.show("z%") == [("Z_calls", "4"), ("Z_on", "ON")]
    status.flush()
    assert status.value("z_calls") == 0
    status.unregister_owner("z")
    assert status.show() == []
