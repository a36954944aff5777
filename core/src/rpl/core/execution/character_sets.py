"""SHOW CHARACTER SET and SHOW COLLATION: the character sets and collations of
information_schema (:data:`~rpl.core.execution.virtual_tables.CHARACTER_SET_ROWS`,
:data:`~rpl.core.execution.virtual_tables.COLLATION_ROWS`) with MySQL's SHOW columns.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rpl.core.execution.results import Result, Rows
from rpl.core.execution.session import Session
from rpl.core.execution.virtual_tables import CHARACTER_SET_ROWS, COLLATION_ROWS
from rpl.core.net.responses import int_column, text_column
from rpl.core.sql import ast
from rpl.core.variables import like_pattern


def _like(rows: Sequence[Sequence[object]], like: str | None) -> list[list[object]]:
    regex = like_pattern(like) if like is not None else None
    return [list(r) for r in rows if regex is None or regex.match(str(r[0]))]


def show_character_sets(session: Session, stmt: ast.Show) -> Result:
    """SHOW CHARACTER SET [LIKE]: Charset, Description, Default collation, Maxlen."""
    rows = [[r[0], r[2], r[1], r[3]] for r in _like(CHARACTER_SET_ROWS, stmt.like)]
    columns = [text_column(n) for n in ("Charset", "Description", "Default collation")]
    return Rows([*columns, int_column("Maxlen")], rows)


def show_collations(session: Session, stmt: ast.Show) -> Result:
    """SHOW COLLATION [LIKE]: Collation, Charset, Id, Default, Compiled, Sortlen,
    Pad_attribute.
    """
    return Rows(
        [
            text_column("Collation"),
            text_column("Charset"),
            int_column("Id", unsigned=True),
            text_column("Default"),
            text_column("Compiled"),
            int_column("Sortlen", unsigned=True),
            text_column("Pad_attribute"),
        ],
        _like(COLLATION_ROWS, stmt.like),
    )


SHOW_KINDS: dict[ast.ShowKind, Callable[[Session, ast.Show], Result]] = {
    "CHARACTER SET": show_character_sets,
    "COLLATION": show_collations,
}
