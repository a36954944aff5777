"""Walking a statement's tree: every node in it, and every table it names.

Generic over the tree (any attrs node, any tuple of them), so a node class added to
:mod:`rpl.core.sql.ast` is walked without a change here: the privilege checks and the
subquery checks of UPDATE and DELETE cannot miss a table in a new kind of clause.
"""

from __future__ import annotations

from collections.abc import Iterator

import attrs

from rpl.core.sql import ast


def nodes(node: object, skip: tuple[type, ...] = ()) -> Iterator[object]:
    """``node`` and every node below it, in tree order; a node of a ``skip`` class is
    yielded but not entered.
    """
    if isinstance(node, tuple):
        for item in node:
            yield from nodes(item, skip)
        return
    kind = type(node)
    if not attrs.has(kind):
        return
    yield node
    if isinstance(node, skip):
        return
    for field in attrs.fields(kind):
        yield from nodes(getattr(node, field.name), skip)


def table_names(node: object) -> Iterator[ast.TableName]:
    """Every table ``node`` names, in its subqueries, derived tables, joins and
    FOREIGN KEY references too, in tree order (a table named twice comes twice).
    """
    for found in nodes(node):
        if isinstance(found, ast.TableName):
            yield found
