"""What a statement returns to the client: an OK or a result set."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from rpl.core.net.responses import Column


class Ok:
    """An OK packet's content (immutable). A plain class, not attrs: every statement
    makes one, and the compiled build makes this class native.
    """

    __slots__ = ("affected_rows", "last_insert_id", "info")

    def __init__(self, affected_rows: int = 0, last_insert_id: int = 0, info: str = "") -> None:
        self.affected_rows: Final = affected_rows
        self.last_insert_id: Final = last_insert_id
        self.info: Final = info

    def _fields(self) -> tuple[int, int, str]:
        return (self.affected_rows, self.last_insert_id, self.info)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Ok):
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return (
            f"Ok(affected_rows={self.affected_rows}, last_insert_id={self.last_insert_id}, "
            f"info={self.info!r})"
        )


class Rows:
    """A result set (immutable). A plain class, as :class:`Ok`: every SELECT makes one."""

    __slots__ = ("columns", "rows")

    def __init__(self, columns: Sequence[Column], rows: Sequence[Sequence[object]]) -> None:
        self.columns: Final = columns
        self.rows: Final = rows

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Rows):
            return NotImplemented
        return (self.columns, self.rows) == (other.columns, other.rows)

    def __hash__(self) -> int:
        return hash((tuple(self.columns), tuple(map(tuple, self.rows))))

    def __repr__(self) -> str:
        return f"Rows(columns={self.columns!r}, rows={self.rows!r})"


Result = Ok | Rows
