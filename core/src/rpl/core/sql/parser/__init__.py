"""Recursive-descent parser for the MySQL 8.0 subset the server runs.

:func:`parse` turns one statement (a trailing ``;`` allowed) into a
:class:`~rpl.core.sql.ast.Statement`; :func:`parse_expression` one expression into an
:class:`~rpl.core.sql.ast.Expression`. Failures are the errors MySQL reports:

* 1064 ER_PARSE_ERROR for text that is not MySQL, quoting the statement from the
  offending token on (at most 80 characters) and naming that token's line;
* 1065 ER_EMPTY_QUERY for a statement of only whitespace and comments;
* 1235 ER_NOT_SUPPORTED_YET for a recognisable MySQL statement or clause outside the
  subset (ALTER TABLE, JOIN, UNION, subqueries...), naming it.

Why by hand: sqlglot (already a dev dependency) parses MySQL, but timed on the sysbench
OLTP statements (``timeit``, CPython 3.11, one Xeon core) ``sqlglot.parse_one(sql,
read="mysql")`` takes 90-190 µs a statement against 11-33 µs here (2 µs for BEGIN and
COMMIT), about 8x faster; an oltp_read_write transaction (10 point selects, 4 ranges, 2
updates, a delete, an insert, BEGIN/COMMIT) spends ~2.5 ms parsing with sqlglot against
~0.3 ms with this parser (``docs/research/sql-parser.md`` has the table and the script),
and sqlglot's tree would still have to be translated into nodes the executor can use and
its errors into MySQL's texts. The subset is small enough that one regex tokenizer
(:mod:`rpl.core.sql.lexer`) and a recursive-descent parser cover it in one pass, with
MySQL's 1064 "near '...' at line N" texts exact. About half of a short statement's time
is the tokenizer; the rarer SELECT clauses are skipped with one end-of-statement check.

The package's modules: :mod:`~rpl.core.sql.parser.cursor` (the token cursor and what all
rules share), :mod:`~rpl.core.sql.parser.expressions`, and one module per statement
family, each with a ``STATEMENTS`` table of its statements' rules:
:mod:`~rpl.core.sql.parser.dml` (SELECT, INSERT, REPLACE, UPDATE, DELETE),
:mod:`~rpl.core.sql.parser.ddl` (CREATE / DROP of tables, databases, indexes; TRUNCATE),
:mod:`~rpl.core.sql.parser.session` (transactions, USE, SET),
:mod:`~rpl.core.sql.parser.admin` (SHOW, DESCRIBE, FLUSH, plugins, KILL...),
:mod:`~rpl.core.sql.parser.accounts` (users, GRANT, REVOKE) and
:mod:`~rpl.core.sql.parser.replication` (CHANGE MASTER, START / STOP / RESET SLAVE, RESET
MASTER, PURGE BINARY LOGS). A table is keyed by a statement's first word, or by its first
two words where several families share the first (CREATE, DROP, ALTER, START, STOP,
RESET), so a new statement is a rule and an entry in its family's module. This module
joins the tables and dispatches on them.
"""

from __future__ import annotations

from typing import Final

from rpl.core.errors import ER_EMPTY_QUERY, MySQLError
from rpl.core.sql import ast
from rpl.core.sql.lexer import K_EOF, K_WORD
from rpl.core.sql.parser import accounts, admin, ddl, dml, replication, session
from rpl.core.sql.parser import prepared as prepared_statements
from rpl.core.sql.parser.cursor import RESERVED, Parser, Rule, not_supported
from rpl.core.sql.parser.expressions import expr
from rpl.core.sql.shapes import ShapeCache

__all__ = ["RESERVED", "not_supported", "parse", "parse_expression", "parse_text"]


def parse(sql: str) -> ast.Statement:
    """The statement ``sql`` holds: exactly one, optionally followed by ``;``.

    Statements of a shape seen before are built from that shape's tree
    (:mod:`rpl.core.sql.shapes`); the result is the same as :func:`parse_text`'s.
    """
    return _SHAPES.parse(sql)


def parse_text(sql: str) -> ast.Statement:
    """:func:`parse` without the shape cache: tokenize and parse ``sql`` in full."""
    parser = Parser(sql)
    if parser.toks[0][0] is K_EOF:
        raise MySQLError.of(ER_EMPTY_QUERY)
    result = statement(parser)
    parser.accept(";")
    parser.expect_end()
    check_depth(result)
    return result


MAX_DEPTH: Final = 400
"""The deepest statement tree the server runs (an operator chain of 400 terms, a
nesting of 400 levels); deeper ones get 1436 in every build. The pure build's recursion
limit would stop them a little further on; the compiled build's native recursion would
not, and would overflow the thread's C stack instead."""


def check_depth(tree: ast.Statement) -> None:
    """RecursionError (1436 for the client, see ``execution.execute.stack_guard``) when
    ``tree`` is deeper than :data:`MAX_DEPTH`; measured without recursion.
    """
    stack: list[tuple[object, int]] = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, tuple | list):
            stack.extend((item, depth) for item in node)
            continue
        fields = getattr(type(node), "__attrs_attrs__", None)
        if fields is None:
            continue
        if depth > MAX_DEPTH:
            raise RecursionError(f"statement deeper than {MAX_DEPTH}")
        stack.extend((getattr(node, f.name), depth + 1) for f in fields)


_SHAPES: Final = ShapeCache(parse_text)


def parse_expression(sql: str) -> ast.Expression:
    """The single expression ``sql`` holds (nothing may follow it)."""
    parser = Parser(sql)
    result = expr(parser)
    parser.expect_end()
    return result


def _join(*tables: dict[str, Rule]) -> dict[str, Rule]:
    """The families' tables as one; a statement in two of them is a mistake."""
    joined: dict[str, Rule] = {}
    for table in tables:
        for words, rule in table.items():
            if words in joined:
                raise AssertionError(f"{words} has two rules")
            joined[words] = rule
    return joined


STATEMENTS: Final = _join(
    dml.STATEMENTS,
    ddl.STATEMENTS,
    session.STATEMENTS,
    admin.STATEMENTS,
    accounts.STATEMENTS,
    replication.STATEMENTS,
    prepared_statements.STATEMENTS,
)
"""Every statement's rule, by its first word or first two words."""
_SHARED_VERBS: Final = frozenset(words.split()[0] for words in STATEMENTS if " " in words)
"""First words whose statements are found by their first two words."""
_OBJECT_VERBS: Final = frozenset(("CREATE", "DROP", "ALTER"))
"""Shared first words after which anything the subset lacks is named in a 1235 (MySQL
has many objects: VIEW, TRIGGER, EVENT...); after the others only a word is."""
_UNSUPPORTED_VERBS: Final = frozenset(
    """
    ALTER ANALYZE BINLOG CACHE CALL CHECK CLONE DECLARE DO GET HANDLER HELP
    IMPORT LOAD OPTIMIZE RENAME REPAIR RESIGNAL RESTART SIGNAL
    TABLE VALUES WITH XA
""".split()
)


def statement(p: Parser) -> ast.Statement:
    """The statement at the cursor, by its rule in :data:`STATEMENTS`."""
    key = p.key
    if p.toks[p.i][0] is K_WORD:
        rule = STATEMENTS.get(key)
        if rule is not None:
            return rule(p)
        if key in _SHARED_VERBS:
            rule = STATEMENTS.get(f"{key} {p.peek_key()}")
            if rule is not None:
                return rule(p)
            if key in _OBJECT_VERBS or p.toks[p.i + 1][0] is K_WORD:
                raise not_supported(p.verb_name())
            p.i += 1
            p.error()
    if key in _UNSUPPORTED_VERBS or key == "(":
        raise not_supported(p.verb_name())
    p.error()
