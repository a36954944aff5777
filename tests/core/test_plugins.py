"""Plugin loading: INSTALL / UNINSTALL through entry points, --plugin-load, clear errors."""

from __future__ import annotations

import pytest

import sample_plugins
from rpl.core.delegates import Delegates
from rpl.core.errors import MySQLError
from rpl.core.plugins import Plugins
from rpl.core.variables import SystemVariables
from rpl.observers import TransParam

TRANS = TransParam(server_id=1, server_uuid="u", thread_id=1)


def error_of(call: object, *args: str) -> MySQLError:
    with pytest.raises(MySQLError) as raised:
        call(*args)  # type: ignore[operator]
    return raised.value


def test_install_registers_observers_and_variables(
    plugins: Plugins, delegates: Delegates, system_variables: SystemVariables
) -> None:
    installed = plugins.install("sample")
    assert installed.hooks == ("before_commit",)
    assert system_variables.get_global("sample_level") == 7, "startup option --sample-level=7"
    delegates.transaction.before_commit(TRANS)
    assert installed.instance.commits == 1  # type: ignore[attr-defined]
    assert plugins._status.show("Sample_%") == [("Sample_commits", "1")]


def test_uninstall_removes_variables_and_observers(
    plugins: Plugins, delegates: Delegates, system_variables: SystemVariables
) -> None:
    instance = plugins.install("sample").instance
    plugins.uninstall("sample")
    assert error_of(system_variables.lookup, "sample_level").errno == 1193
    assert plugins._status.show("Sample%") == []
    delegates.transaction.before_commit(TRANS)
    assert instance.commits == 0 and instance.deinitialised  # type: ignore[attr-defined]
    assert plugins.installed() == []


def test_two_plugins_keep_their_own_variables(
    plugins: Plugins, system_variables: SystemVariables
) -> None:
    plugins.install("sample")
    plugins.install("sample_other")
    plugins.uninstall("sample")
    assert system_variables.get_global("sample_other_level") == 3
    assert [row[0] for row in system_variables.show("sample%")] == ["sample_other_level"]


def test_unknown_plugin(plugins: Plugins) -> None:
    error = error_of(plugins.install, "no_such_plugin")
    assert (error.errno, error.sqlstate) == (1126, "HY000")
    assert "no entry point 'no_such_plugin' in group 'rpl.plugins'" in error.message


def test_entry_point_that_cannot_be_imported(plugins: Plugins) -> None:
    error = error_of(plugins.install, "missing_module")
    assert error.errno == 1126 and "ModuleNotFoundError" in error.message


def test_entry_point_that_is_not_a_plugin_class(plugins: Plugins) -> None:
    error = error_of(plugins.install, "not_a_plugin")
    assert error.errno == 1126 and "ReplicationPlugin" in error.message


def test_misspelled_hook_is_refused_before_init(plugins: Plugins, delegates: Delegates) -> None:
    sample_plugins.MisspelledHook.constructed = False
    error = error_of(plugins.install, "misspelled")
    assert error.errno == 1123
    assert "hook 'after_comit' is not in the replication observer interfaces" in error.message
    assert "did you mean 'after_commit'" in error.message
    assert not sample_plugins.MisspelledHook.constructed
    assert plugins.installed() == [] and delegates.registry.plugin_names() == frozenset()


def test_hook_with_an_argument_the_spec_lacks(plugins: Plugins) -> None:
    error = error_of(plugins.install, "wrong_args")
    assert error.errno == 1123 and "hook 'after_flush'" in error.message
    assert "log_name" in error.message


def test_wrapper_hooks_are_refused(plugins: Plugins) -> None:
    error = error_of(plugins.install, "wrapper")
    assert error.errno == 1123 and "'after_commit' is declared as a wrapper" in error.message


def test_failing_init_leaves_nothing_behind(
    plugins: Plugins, system_variables: SystemVariables
) -> None:
    error = error_of(plugins.install, "failing_init")
    assert error.errno == 1123 and "cannot start" in error.message
    assert error_of(system_variables.lookup, "failing_init_x").errno == 1193
    assert plugins.installed() == []


def test_variables_must_carry_the_plugin_prefix(
    plugins: Plugins, system_variables: SystemVariables
) -> None:
    error = error_of(plugins.install, "bad_prefix")
    assert error.errno == 1123 and "must start with 'bad_prefix_'" in error.message
    assert system_variables.show("innodb%") == []
    plugins.install("other_prefix")  # its declared status prefix, and its name
    assert plugins.installed() != []


def test_install_twice(plugins: Plugins) -> None:
    plugins.install("sample")
    error = error_of(plugins.install, "sample")
    assert (error.errno, error.message) == (1125, "Function 'sample' already exists")


def test_uninstall_unknown(plugins: Plugins) -> None:
    error = error_of(plugins.uninstall, "sample")
    assert (error.errno, error.sqlstate, error.message) == (
        1305,
        "42000",
        "PLUGIN sample does not exist",
    )


def test_plugin_refuses_uninstall_while_in_use(plugins: Plugins, delegates: Delegates) -> None:
    sample_plugins.BusyPlugin.busy = True
    plugins.install("busy")
    error = error_of(plugins.uninstall, "busy")
    assert error.errno == 1883
    assert error.message == (
        "Plugin 'busy' cannot be uninstalled now. Stop any active "
        "semisynchronous slaves of this master first."
    )
    assert [p.name for p in plugins.installed()] == ["busy"]
    assert not delegates.transaction.is_empty("after_commit")
    sample_plugins.BusyPlugin.busy = False
    plugins.uninstall("busy")
    assert delegates.transaction.is_empty("after_commit")


def test_plugin_load_option(plugins: Plugins, rpl_log: pytest.LogCaptureFixture) -> None:
    errors = plugins.load("sample; sample_other=sample.so;;nope")
    assert [p.name for p in plugins.installed()] == ["sample", "sample_other"]
    assert [e.errno for e in errors] == [1126]
    assert "Couldn't load plugin named 'nope'" in rpl_log.text


def test_shutdown_deinitialises_newest_first(plugins: Plugins) -> None:
    first = plugins.install("sample").instance
    plugins.install("sample_other")
    plugins.shutdown()
    assert plugins.installed() == [] and first.deinitialised  # type: ignore[attr-defined]
