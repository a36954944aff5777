"""Transactions and session state: BEGIN, START TRANSACTION, COMMIT, ROLLBACK, savepoints,
USE, SET, LOCK TABLES and UNLOCK TABLES.

SET covers user variables, system variables in every scope spelling (``GLOBAL x``,
``@@global.x``, ``@@x``, ``PERSIST``...), SET NAMES / CHARACTER SET and SET TRANSACTION;
a system variable's value may be a bare word (``SET autocommit = ON``), kept as its text.
SAVEPOINT, ROLLBACK TO SAVEPOINT and RELEASE SAVEPOINT are parsed; chains, COMMIT/ROLLBACK
RELEASE and SET PASSWORD / ROLE / RESOURCE GROUP are refused with 1235.
"""

from __future__ import annotations

from typing import Final

from rpl.core.sql import ast
from rpl.core.sql.lexer import K_EOF, K_OP, K_USERVAR, K_WORD
from rpl.core.sql.parser.cursor import SCOPES, Parser, Rule, not_supported
from rpl.core.sql.parser.expressions import expr, variable_name

_ISOLATION_LEVELS: Final = {"READ UNCOMMITTED", "READ COMMITTED", "REPEATABLE READ", "SERIALIZABLE"}


def begin(p: Parser) -> ast.Begin:
    p.i += 1
    p.accept("WORK")
    return ast.Begin()


def start_transaction(p: Parser) -> ast.Begin:
    p.i += 2
    read_only: bool | None = None
    snapshot = False
    if not p.at_end():
        while True:
            if p.accept_seq("WITH", "CONSISTENT", "SNAPSHOT"):
                snapshot = True
            elif p.accept_seq("READ", "ONLY"):
                read_only = True
            elif p.accept_seq("READ", "WRITE"):
                read_only = False
            else:
                p.error()
            if not p.accept(","):
                break
    return ast.Begin(read_only, snapshot)


def commit(p: Parser) -> ast.Statement:
    rollback = p.key == "ROLLBACK"
    p.i += 1
    p.accept("WORK")
    if rollback and p.accept("TO"):
        p.accept("SAVEPOINT")
        return ast.RollbackToSavepoint(p.ident())
    if p.accept("AND"):
        if not p.accept("NO"):
            raise not_supported(f"{'ROLLBACK' if rollback else 'COMMIT'} AND CHAIN")
        p.expect("CHAIN")
    if p.key == "RELEASE":
        raise not_supported(f"{'ROLLBACK' if rollback else 'COMMIT'} RELEASE")
    if p.accept("NO"):
        p.expect("RELEASE")
    return ast.Rollback() if rollback else ast.Commit()


def use(p: Parser) -> ast.Use:
    p.i += 1
    return ast.Use(p.ident())


def set_(p: Parser) -> ast.Statement:
    p.i += 1
    if p.key == "TRANSACTION" or (
        p.key in ("GLOBAL", "SESSION", "LOCAL") and p.peek_key() == "TRANSACTION"
    ):
        return set_transaction(p)
    if p.key in ("PASSWORD", "ROLE", "RESOURCE") or (p.key == "DEFAULT" and p.peek_key() == "ROLE"):
        raise not_supported(f"SET {'DEFAULT ROLE' if p.key == 'DEFAULT' else p.key}")
    items: list[ast.SetItem] = []
    while True:
        items.append(set_item(p))
        if not p.accept(","):
            return ast.Set(tuple(items))


def set_item(p: Parser) -> ast.SetItem:
    kind, key, value, _, _ = p.toks[p.i]
    if kind is K_WORD:
        if key == "NAMES":
            p.i += 1
            charset = None if p.accept("DEFAULT") else p.name_or_string()
            collation = p.name_or_string() if p.accept("COLLATE") else None
            return ast.SetNames(charset, collation)
        if key == "CHARSET" or (key == "CHARACTER" and p.peek_key() == "SET"):
            p.i += 2 if key == "CHARACTER" else 1
            return ast.SetCharset(None if p.accept("DEFAULT") else p.name_or_string())
    if kind is K_USERVAR:
        p.i += 1
        if not (p.accept("=") or p.accept(":=")):
            p.error()
        return ast.SetVariable(value, expr(p), "USER")
    scope = None
    if kind is K_WORD and key in SCOPES and p.peek_key() not in ("=", ":=", "."):
        scope = SCOPES[key]
        p.i += 1
    elif key == "@@":
        p.i += 1
        if p.key in ("GLOBAL", "SESSION", "LOCAL") and p.peek_key() == ".":
            scope = SCOPES[p.key]
            p.i += 2
    name = variable_name(p)
    if not (p.accept("=") or p.accept(":=")):
        p.error()
    return ast.SetVariable(name, set_value(p), scope)


def set_value(p: Parser) -> ast.Expression:
    """A system variable's value: an expression, or a bare word as its text."""
    kind, key, value, _, _ = p.toks[p.i]
    if (
        kind is K_WORD
        and key not in ("NULL", "TRUE", "FALSE", "DEFAULT")
        and p.toks[p.i + 1][1] in (",", ";", "")
        and p.toks[p.i + 1][0] in (K_OP, K_EOF)
    ):
        p.i += 1
        return ast.Literal(value)
    return expr(p)


def set_transaction(p: Parser) -> ast.SetTransaction:
    scope = None
    if p.key != "TRANSACTION":
        scope = SCOPES[p.key]
        p.i += 1
    p.i += 1
    level = None
    read_only = None
    while True:
        if p.accept_seq("ISOLATION", "LEVEL"):
            words = [p.any_word().upper()]
            if words[0] in ("READ", "REPEATABLE"):
                words.append(p.any_word().upper())
            level = " ".join(words)
            if level not in _ISOLATION_LEVELS:
                p.i -= len(words)
                p.error()
        elif p.accept_seq("READ", "WRITE"):
            read_only = False
        elif p.accept_seq("READ", "ONLY"):
            read_only = True
        else:
            p.error()
        if not p.accept(","):
            return ast.SetTransaction(scope, level, read_only)


def savepoint(p: Parser) -> ast.Statement:
    p.i += 1
    return ast.Savepoint(p.ident())


def release_savepoint(p: Parser) -> ast.Statement:
    p.i += 1
    p.expect("SAVEPOINT")
    return ast.ReleaseSavepoint(p.ident())


def lock_tables(p: Parser) -> ast.Statement:
    p.i += 1
    if not (p.accept("TABLES") or p.accept("TABLE")):
        raise not_supported(p.verb_name() if p.at_end() else f"LOCK {p.key}")
    locks = []
    while True:
        table = p.table_name(alias=True)
        if p.accept("READ"):
            p.accept("LOCAL")
            write = False
        else:
            p.accept("LOW_PRIORITY")
            p.expect("WRITE")
            write = True
        locks.append(ast.TableLock(table, write))
        if not p.accept(","):
            return ast.LockTables(tuple(locks))


def unlock_tables(p: Parser) -> ast.Statement:
    p.i += 1
    if not (p.accept("TABLES") or p.accept("TABLE")):
        raise not_supported(p.verb_name() if p.at_end() else f"UNLOCK {p.key}")
    return ast.UnlockTables()


STATEMENTS: Final[dict[str, Rule]] = {
    "BEGIN": begin,
    "START TRANSACTION": start_transaction,
    "COMMIT": commit,
    "ROLLBACK": commit,
    "USE": use,
    "SET": set_,
    "SAVEPOINT": savepoint,
    "RELEASE": release_savepoint,
    "LOCK": lock_tables,
    "UNLOCK": unlock_tables,
}
"""This family's statements by their first word, or first two words."""
