"""Walking a statement's tree: every table it names.

Generic over the tree (any attrs node, any tuple of them), so a node class added to
:mod:`rpl.core.sql.ast` is walked without a change here: the privilege checks and the
subquery checks of UPDATE and DELETE cannot miss a table in a new kind of clause.
"""

from __future__ import annotations

from collections.abc import Iterator

import attrs

from rpl.core.sql import ast


def table_names(node: object) -> Iterator[ast.TableName]:
    """Every table ``node`` names, in its subqueries, derived tables, joins and
    FOREIGN KEY references too, in tree order (a table named twice comes twice).
    """
    if isinstance(node, ast.TableName):
        yield node
    elif isinstance(node, tuple):
        for item in node:
            yield from table_names(item)
    else:
        kind = type(node)
        if attrs.has(kind):
            for field in attrs.fields(kind):
                yield from table_names(getattr(node, field.name))
