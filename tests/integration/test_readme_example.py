"""The observer the README teaches works as the README says."""

from __future__ import annotations

import importlib.metadata
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rpl.core.delegates import HookError
from rpl.core.plugins import Plugins, PluginSource
from rpl.core.threads import ThreadRegistry
from rpl.observers import TransParam

README = Path(__file__).resolve().parents[2] / "README.md"


@pytest.fixture
def readme_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    text = README.read_text()
    code = re.search(r"```python\n# my_observer/__init__.py\n(.*?)```", text, re.S)
    assert code, "the README's observer example is missing"
    package = tmp_path / "readme_observer"
    package.mkdir()
    (package / "__init__.py").write_text(code.group(1))
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "readme_observer"
    sys.modules.pop("readme_observer", None)


def test_readme_observer(plugin_env: Any, readme_module: str) -> None:
    entry_point = importlib.metadata.EntryPoint(
        "commit_counter", f"{readme_module}:CommitCounter", "rpl.plugins")
    plugins = Plugins(plugin_env.delegates.registry, plugin_env.system, plugin_env.status,
                      ThreadRegistry(),
                      sources=lambda: {"commit_counter": PluginSource("commit_counter",
                                                                      entry_point)})
    installed = plugins.install("commit_counter")
    assert installed.hooks == ("before_commit", "after_commit")
    trans = TransParam(server_id=1, server_uuid="u", thread_id=1)
    plugin_env.delegates.transaction.before_commit(trans)
    plugin_env.delegates.transaction.after_commit(trans)
    assert plugin_env.status.value("Commit_counter_commits") == 1
    plugin_env.system.set_global("commit_counter_paused", "ON")
    with pytest.raises(HookError) as raised:
        plugin_env.delegates.transaction.before_commit(trans)
    assert raised.value.errno == 3100
    plugins.uninstall("commit_counter")
    assert plugin_env.system.show("commit_counter%") == []
