"""What a statement returns to the client: an OK or a result set."""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from rpl.core.net.responses import Column


@attrs.frozen
class Ok:
    """An OK packet's content."""

    affected_rows: int = 0
    last_insert_id: int = 0
    info: str = ""


@attrs.frozen
class Rows:
    """A result set."""

    columns: Sequence[Column]
    rows: Sequence[Sequence[object]]


Result = Ok | Rows
