"""The installed rpl-core is the build the environment asks for (``RPL_BUILD``).

``core_compiled`` (tox) installs the mypyc build and sets ``RPL_BUILD=compiled``: every
module core/setup.py lists must then load from a C extension, or the core tests of that
environment would silently run on pure Python. Elsewhere the build is pure and none may.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import os
from pathlib import Path
from typing import Any

import pytest

SETUP = Path(__file__).resolve().parents[2] / "core" / "setup.py"


def _setup() -> Any:
    spec = importlib.util.spec_from_file_location("rpl_core_setup", SETUP)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _listed_modules() -> list[str]:
    """The listed modules' names (a package's ``__init__.py`` is the package)."""
    return [
        path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
        for path in _setup().COMPILED
    ]


def _c_helpers() -> list[str]:
    return [extension.name for extension in _setup().C_EXTENSIONS]


def _is_extension(name: str) -> bool:
    origin = importlib.import_module(name).__file__ or ""
    return origin.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))


@pytest.mark.parametrize("name", _listed_modules())
def test_module_is_of_the_build_asked_for(name: str) -> None:
    compiled = os.environ.get("RPL_BUILD", "pure") == "compiled"
    assert _is_extension(name) == compiled, (name, importlib.import_module(name).__file__)


@pytest.mark.parametrize("name", _c_helpers())
def test_c_helpers_are_in_the_compiled_build_alone(name: str) -> None:
    compiled = os.environ.get("RPL_BUILD", "pure") == "compiled"
    try:
        importlib.import_module(name)
    except ImportError:
        assert not compiled, name
    else:
        assert compiled, name
