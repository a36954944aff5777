"""What the layers read of a column definition, named once.

The engine's value conversion (:mod:`rpl.core.engine.coercion`) and the binlog's row-event
codec (:mod:`rpl.core.binlog.events.column_types`) both read a column's name, type and
size; neither imports the other, so the shape they read lives below both.
:class:`rpl.core.engine.schema.ColumnSchema` has it all.
"""

from __future__ import annotations

from typing import Protocol


class ColumnDefinition(Protocol):
    """A column's definition as conversion and the row codec read it."""

    @property
    def name(self) -> str: ...
    @property
    def type_name(self) -> str: ...
    @property
    def length(self) -> int | None: ...
    @property
    def unsigned(self) -> bool: ...
    @property
    def nullable(self) -> bool: ...
    @property
    def scale(self) -> int | None: ...
    @property
    def members(self) -> tuple[str, ...]:
        """An ENUM's or SET's values in declaration order (``()`` for other types)."""
        ...
