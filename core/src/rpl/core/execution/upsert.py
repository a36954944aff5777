"""ON DUPLICATE KEY UPDATE's ``VALUES(col)``, rewritten to read the proposed row.

Its own module, outside the compiled build's list (core/setup.py): compiled by mypyc, the
rewrite over the expression's attrs fields returned the tree unchanged (``n + VALUES(n)``
then reached the function table: 1235).
"""

from __future__ import annotations

import attrs

from rpl.core.sql import ast

NEW_ROW = "\0new"
"""The qualifier ``VALUES(col)`` of ON DUPLICATE KEY UPDATE reads the proposed row by."""


def values_function(expr: ast.Expression) -> ast.Expression:
    """``expr`` with each ``VALUES(col)`` read from the proposed row."""
    if isinstance(expr, ast.FuncCall) and expr.name == "VALUES":
        if len(expr.args) == 1 and isinstance(expr.args[0], ast.Column):
            return ast.Column(expr.args[0].name, NEW_ROW)
    if not isinstance(expr, ast.Expression):
        return expr
    changed: dict[str, object] = {}
    for field in attrs.fields(type(expr)):
        value = getattr(expr, field.name)
        if isinstance(value, ast.Expression):
            changed[field.name] = values_function(value)
        elif isinstance(value, tuple):
            changed[field.name] = tuple(
                values_function(v) if isinstance(v, ast.Expression) else v for v in value
            )
    return attrs.evolve(expr, **changed)
