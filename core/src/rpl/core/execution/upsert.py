"""INSERT ... ON DUPLICATE KEY UPDATE: the row an insert collides with, updated instead.

As MySQL: the row updated is the first one the new row collides with, on the PRIMARY KEY
first, then on each UNIQUE index in the order the table lists them
(:meth:`~rpl.core.engine.Transaction.duplicates`). The assignments run left to right over
that row, each seeing the ones before it; ``VALUES(col)`` is the value the INSERT would
have written into ``col``. Affected rows: 2 when the row changed, 0 when it did not (1
with CLIENT_FOUND_ROWS). The update is an ordinary engine update, so it is checked (UNIQUE,
FOREIGN KEY), binlogged as an UPDATE_ROWS event and replicated like any other.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import attrs

from rpl.core.engine import Table, Transaction
from rpl.core.engine.coercion import Value
from rpl.core.execution.expressions import Compiler
from rpl.core.execution.session import Session
from rpl.core.sql import ast


def _with_values(expr: object, names: dict[str, int], row: Sequence[object]) -> object:
    """``expr`` with each ``VALUES(col)`` replaced by the inserted row's value for it."""
    if (
        isinstance(expr, ast.FuncCall)
        and expr.name == "VALUES"
        and len(expr.args) == 1
        and isinstance(expr.args[0], ast.Column)
    ):
        position = names.get(expr.args[0].name.lower())
        if position is not None:
            return ast.Literal(row[position])  # type: ignore[arg-type]
    if not isinstance(expr, ast.Expression | ast.When):
        return expr
    changes: dict[str, object] = {}
    for field in attrs.fields(type(expr)):
        value = getattr(expr, field.name)
        new: object
        if isinstance(value, tuple):
            new = tuple(_with_values(v, names, row) for v in value)
        else:
            new = _with_values(value, names, row)
        if new != value:
            changes[field.name] = new
    return attrs.evolve(expr, **changes) if changes else expr  # type: ignore[arg-type]


def on_duplicate_key_update(
    session: Session,
    trx: Transaction,
    table: Table,
    row: Sequence[object],
    number: int,
    assignments: Sequence[ast.Assignment],
) -> int:
    """Update the first row ``row`` collides with by ``assignments``; the affected-rows
    count MySQL reports for it (2 changed, 0 unchanged, 1 unchanged under CLIENT_FOUND_ROWS).
    """
    schema = table.schema
    key = trx.duplicates(table, row)[0]
    current = trx.lock_for_update(table, key)
    assert current is not None
    names = {c.name.lower(): i for i, c in enumerate(schema.columns)}
    compiler = Compiler([c.name for c in schema.columns], schema.name, session.context)
    new = list(current)
    assigned: list[int] = []
    for assignment in assignments:
        position = compiler.column_position(assignment.column)
        value = _with_values(assignment.value, names, row)
        assert isinstance(value, ast.Expression)
        if isinstance(value, ast.Default):
            new[position] = schema.default_row[position]
        else:
            new[position] = cast(Value, compiler.compile_in("field list", value)(tuple(new)))
        assigned.append(position)
    changes = {schema.columns[i].name: new[i] for i in assigned}
    change = trx.update(table, key, changes, row_number=number)
    if change is not None and change.before != change.after:
        return 2
    return 1 if session.found_rows else 0
