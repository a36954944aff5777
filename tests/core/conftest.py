"""Fixtures for the core tests: a fresh registry with its delegates, and the plugin manager."""

from __future__ import annotations

import importlib.metadata
import logging

import pytest

from rpl.core.delegates import Delegates
from rpl.core.plugins import Plugins, PluginSource
from rpl.core.threads import ThreadRegistry
from rpl.core.variables import StatusVariables, SystemVariables


@pytest.fixture
def delegates() -> Delegates:
    return Delegates.create()


@pytest.fixture
def rpl_log(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.INFO, logger="rpl")
    return caplog


def source(name: str, target: str) -> PluginSource:
    """A plugin source for a class in sample_plugins (tests/core is on sys.path)."""
    entry_point = importlib.metadata.EntryPoint(name, f"sample_plugins:{target}", "rpl.plugins")
    return PluginSource(name, entry_point, "rpl-tests", "0")


SAMPLE_SOURCES = {
    "sample": source("sample", "SamplePlugin"),
    "sample_other": source("sample_other", "SamplePlugin"),
    "misspelled": source("misspelled", "MisspelledHook"),
    "wrong_args": source("wrong_args", "WrongArguments"),
    "wrapper": source("wrapper", "WrapperHook"),
    "failing_init": source("failing_init", "FailingInit"),
    "busy": source("busy", "BusyPlugin"),
    "bad_prefix": source("bad_prefix", "BadPrefix"),
    "other_prefix": source("other_prefix", "OtherStatusPrefix"),
    "not_a_plugin": source("not_a_plugin", "NotAPlugin"),
    "missing_module": PluginSource(
        "missing_module",
        importlib.metadata.EntryPoint("missing_module", "no_such_module:Plugin", "rpl.plugins"),
    ),
}


@pytest.fixture
def system_variables() -> SystemVariables:
    return SystemVariables({"sample-level": "7"})


@pytest.fixture
def plugins(delegates: Delegates, system_variables: SystemVariables) -> Plugins:
    return Plugins(
        delegates.registry,
        system_variables,
        StatusVariables(),
        ThreadRegistry(),
        sources=lambda: SAMPLE_SOURCES,
    )


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """One rpl server process for a test module (clean shutdown at the end)."""
    from rpl.core.testing.process import ServerProcess

    process = ServerProcess(tmp_path_factory.mktemp("server") / "data").start()
    yield process
    process.stop()


@pytest.fixture
def fresh_server(tmp_path):  # type: ignore[no-untyped-def]
    """An rpl server process of this test's own (killed if the test leaves it running)."""
    from rpl.core.testing.process import ServerProcess

    process = ServerProcess(tmp_path / "data")
    yield process
    process.kill()
