"""SQL prepared statements: PREPARE, EXECUTE and DEALLOCATE PREPARE (or DROP PREPARE).

The statement text of PREPARE is a string literal or a user variable, read when the
PREPARE runs; EXECUTE's USING list holds user variables only, as in MySQL.
"""

from __future__ import annotations

from typing import Final

from rpl.core.sql import ast
from rpl.core.sql.lexer import K_USERVAR
from rpl.core.sql.parser.cursor import Parser, Rule


def _user_variable(p: Parser) -> str:
    """``@name``: the variable's name."""
    kind, _, value, _, _ = p.toks[p.i]
    if kind is not K_USERVAR:
        p.error()
    p.i += 1
    name: str = value
    return name


def prepare(p: Parser) -> ast.Prepare:
    """PREPARE name FROM 'text' | @var."""
    p.i += 1
    name = p.ident()
    p.expect("FROM")
    if p.toks[p.i][0] is K_USERVAR:
        return ast.Prepare(name, variable=_user_variable(p))
    return ast.Prepare(name, text=p.string())


def execute(p: Parser) -> ast.ExecutePrepared:
    """EXECUTE name [USING @a, @b, ...]."""
    p.i += 1
    name = p.ident()
    variables: list[str] = []
    if p.accept("USING"):
        variables.append(_user_variable(p))
        while p.accept(","):
            variables.append(_user_variable(p))
    return ast.ExecutePrepared(name, tuple(variables))


def deallocate(p: Parser) -> ast.DeallocatePrepare:
    """{DEALLOCATE | DROP} PREPARE name."""
    p.i += 2
    return ast.DeallocatePrepare(p.ident())


STATEMENTS: Final[dict[str, Rule]] = {
    "PREPARE": prepare,
    "EXECUTE": execute,
    "DEALLOCATE PREPARE": deallocate,
    "DROP PREPARE": deallocate,
}
"""This family's statements by their first word, or first two words."""
