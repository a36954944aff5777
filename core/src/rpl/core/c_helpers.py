"""The compiled build's hand-written C helpers (``C_EXTENSIONS`` in core/setup.py).

A module with a helper keeps its pure-Python way beside it and takes the helper when
this build has one; the pure build has none. Which modules are C helpers, and that the
compiled build really has them, is checked by tests/core/test_compiled_build.py.
"""

from __future__ import annotations

import importlib
from typing import Any


def load(name: str) -> Any:
    """The C helper module ``name`` when this build has it, else None."""
    try:
        return importlib.import_module(name)
    except ImportError:
        return None
