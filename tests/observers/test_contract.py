"""The hook contract: every callback of the five interfaces, documented, with frozen parameters."""

from __future__ import annotations

import inspect
from collections.abc import Callable

import attrs
import pytest

import rpl.observers as observers
from rpl.observers import HOOKS, INTERFACES

# The callbacks the issue and reference/semisync.md list, per interface.
EXPECTED = {
    "transaction": [
        "begin",
        "before_dml",
        "before_commit",
        "before_rollback",
        "after_commit",
        "after_rollback",
    ],
    "binlog_storage": ["after_flush", "after_sync"],
    "binlog_transmit": [
        "transmit_start",
        "transmit_stop",
        "reserve_header",
        "before_send_event",
        "after_send_event",
        "after_reset_master",
    ],
    "binlog_relay_io": [
        "thread_start",
        "thread_stop",
        "applier_start",
        "applier_stop",
        "before_request_transmit",
        "after_read_event",
        "after_queue_event",
        "after_reset_slave",
    ],
    "server_state": [
        "before_recovery",
        "after_engine_recovery",
        "after_recovery",
        "before_server_shutdown",
        "after_server_shutdown",
    ],
}


def test_every_interface_has_exactly_mysqls_callbacks() -> None:
    assert {name: sorted(h for h, i in HOOKS.items() if i == name) for name in INTERFACES} == {
        name: sorted(hooks) for name, hooks in EXPECTED.items()
    }


def test_markers_use_the_rpl_project() -> None:
    assert observers.PROJECT_NAME == "rpl" and observers.ENTRY_POINT_GROUP == "rpl.plugins"

    @observers.hookimpl
    def after_commit(param: object) -> None:
        """An implementation."""

    assert hasattr(after_commit, "rpl_impl")
    spec = getattr(observers.TransactionObserver.after_commit, "rpl_spec", None)
    assert spec is not None


@pytest.mark.parametrize("hook", sorted(HOOKS))
def test_each_hook_documents_when_it_runs_and_what_failing_does(hook: str) -> None:
    function = getattr(INTERFACES[HOOKS[hook]], hook)
    doc = inspect.getdoc(function) or ""
    assert "Failure" in doc, f"{hook}: say what failing it does"
    assert len(doc.split()) >= 20, f"{hook}: the docstring is its reference documentation"
    assert "param" in inspect.signature(function).parameters


@pytest.mark.parametrize(
    "cls",
    [
        observers.TransParam,
        observers.BinlogStorageParam,
        observers.TransmitParam,
        observers.RelayIOParam,
        observers.ServerStateParam,
        observers.TableInfo,
    ],
)
def test_parameters_are_frozen_attrs_classes(cls: type) -> None:
    assert attrs.has(cls)
    instance = cls(
        **{field.name: 0 for field in attrs.fields(cls) if field.default is attrs.NOTHING}
    )
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        setattr(instance, attrs.fields(cls)[0].name, 1)


def test_trans_param_defaults_mean_nothing_binlogged_yet() -> None:
    param = observers.TransParam(server_id=1, server_uuid="u", thread_id=2)
    assert (param.log_file, param.log_pos, param.gtid) == ("", 0, None)


def test_services_are_runtime_checkable_protocols() -> None:
    class Net:
        def read(self, timeout: float | None = None) -> bytes:
            return b""

        def write(self, payload: bytes) -> None: ...

        def flush(self) -> None: ...

        def fileno(self) -> int:
            return 3

    assert isinstance(Net(), observers.ServerNet)
    assert not isinstance(Net(), observers.SourceConnection), "query() is missing"


def test_observers_import_nothing_from_the_server(
    server_modules_imported_by: Callable[[str], list[str]],
) -> None:
    assert server_modules_imported_by("rpl.observers") == []


def test_observer_error_carries_an_optional_mysql_error() -> None:
    error = observers.ObserverError("rollback", errno=3101, sqlstate="40000")
    assert (error.message, error.errno, error.sqlstate) == ("rollback", 3101, "40000")
    assert observers.ObserverError("x").errno is None
