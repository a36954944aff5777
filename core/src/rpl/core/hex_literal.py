"""Hexadecimal and bit literals (``0x41``, ``X'41'``, ``0b1``, ``b'1'``).

MySQL gives them two faces: a binary string in a string context (``SELECT 0x41`` is
``'A'``), an unsigned integer in a numeric one (``0x10 + 1`` is 17, and ``0x10`` stored
into an INT column is 16). The lexer makes them :class:`HexBytes`, which is ``bytes``
everywhere bytes go; arithmetic, comparisons with a number and numeric columns ask for
its number. A value that leaves the statement (a user variable, a stored row) is plain
bytes again, as in MySQL.
"""

from __future__ import annotations


class HexBytes(bytes):
    """The bytes of a hexadecimal or bit literal, a number in numeric context."""

    __slots__ = ()

    def number(self) -> int:
        """The literal as MySQL reads it in numeric context: its bytes, big-endian."""
        return int.from_bytes(self, "big")

    def __repr__(self) -> str:  # apart from plain bytes: the shape cache compares reprs
        return f"HexBytes({bytes.__repr__(self)})"
