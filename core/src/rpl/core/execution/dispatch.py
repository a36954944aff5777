"""The server's statement table: which code runs each statement class and each SHOW kind.

A server builds one :class:`Dispatch` at start: the statement and session layer
registers the statements it runs itself (:func:`rpl.core.execution.statements.register`),
then each feature registers its own (replication: CHANGE MASTER, START SLAVE, SHOW SLAVE
STATUS...). Nothing is registered at import, so two servers in one process share no table.

Registration is typed: :meth:`Dispatch.statement` takes a statement class and a handler of
exactly that class, and mypy checks the pair; at dispatch the statement is narrowed back to
its class by ``isinstance``, so a handler never sees a statement of another class.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from rpl.core.errors import ER_NOT_SUPPORTED_YET, MySQLError
from rpl.core.execution.expressions import Compiler, truth
from rpl.core.execution.results import Result, Rows
from rpl.core.execution.session import Session, StatementHandler
from rpl.core.execution.virtual_tables import VirtualTables
from rpl.core.sql import ast

S = TypeVar("S", bound=ast.Statement)

ShowHandler = Callable[[Session, ast.Show], Result]
"""Runs one SHOW statement of the kind it was registered for."""


def plain(run: Callable[[Session, S], Result]) -> Callable[[Session, S, str], Result]:
    """A handler that does not need the statement's text."""
    return lambda session, statement, text: run(session, statement)


class Dispatch:
    """Statement class -> handler, and SHOW kind -> handler (implements the session
    layer's ``StatementDispatch``).
    """

    def __init__(self) -> None:
        self._statements: dict[type[ast.Statement], StatementHandler] = {}
        self._shows: dict[ast.ShowKind, ShowHandler] = {}
        self._virtual_tables = VirtualTables()
        self.statement(ast.Show, plain(self.run_show))

    def statement(self, kind: type[S], handler: Callable[[Session, S, str], Result]) -> None:
        """Run ``handler`` for every statement of class ``kind`` (replacing any before)."""

        def run(session: Session, statement: ast.Statement, text: str) -> Result:
            assert isinstance(statement, kind)
            return handler(session, statement, text)

        self._statements[kind] = run

    @property
    def virtual_tables(self) -> VirtualTables:
        """The server's computed tables; features fill theirs at start
        (:meth:`VirtualTables.provide`).
        """
        return self._virtual_tables

    def show(self, kind: ast.ShowKind, handler: ShowHandler) -> None:
        """Run ``handler`` for ``SHOW <kind>``."""
        self._shows[kind] = handler

    def handler_for(self, statement: ast.Statement) -> StatementHandler | None:
        """The handler of ``statement``'s class; None for a statement nothing runs."""
        return self._statements.get(type(statement))

    def run_show(self, session: Session, statement: ast.Show) -> Result:
        """A SHOW statement; ER_NOT_SUPPORTED_YET for a kind nothing registered. A WHERE
        is applied here, to whatever the kind's handler returned (:func:`filtered`).
        """
        handler = self._shows.get(statement.kind)
        if handler is None:
            raise MySQLError.of(ER_NOT_SUPPORTED_YET, f"SHOW {statement.kind}")
        result = handler(session, statement)
        if statement.where is not None and isinstance(result, Rows):
            result = filtered(session, result, statement.where)
        return result


def filtered(session: Session, result: Rows, where: ast.Expression) -> Rows:
    """``SHOW ... WHERE expr``: the rows of ``result`` for which ``expr`` is true, the
    result's column names naming the values (case-insensitively, as MySQL).
    """
    names = [column.name for column in result.columns]
    test = Compiler(names, "", session.context).compile_in("where clause", where)
    return Rows(result.columns, [row for row in result.rows if truth(test(tuple(row)))])
