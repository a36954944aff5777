"""The pluggy markers of the replication observer interfaces.

Every hook of rpl lives in the pluggy project ``"rpl"``. A plugin marks its
callbacks with :data:`hookimpl`; the server's delegates are the only callers.
"""

from __future__ import annotations

from typing import Final

import pluggy

PROJECT_NAME: Final = "rpl"
"""The pluggy project name shared by the hook specifications and implementations."""

ENTRY_POINT_GROUP: Final = "rpl.plugins"
"""Entry-point group through which the server discovers installable plugins."""

hookspec: Final = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl: Final = pluggy.HookimplMarker(PROJECT_NAME)
