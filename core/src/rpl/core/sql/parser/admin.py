"""Administration: SHOW (every kind, the replication ones included), DESCRIBE, FLUSH,
CHECKSUM TABLE, INSTALL / UNINSTALL PLUGIN, SHUTDOWN and KILL.

A SHOW's result is named by its :data:`~rpl.core.sql.ast.ShowKind`, one per result
whatever the spelling; :data:`SHOW_RULES` holds a rule per word after SHOW, so a new SHOW
is a rule and an entry there. The SHOWs that take LIKE take WHERE too (SHOW INDEX takes
WHERE only). EXPLAIN / DESCRIBE of a data statement is
:func:`rpl.core.sql.parser.dml.explain`'s; EXPLAIN ANALYZE / FOR CONNECTION and FLUSH ...
FOR CHANNEL are refused with 1235 (SHOW SLAVE STATUS FOR CHANNEL is SHOW's).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, TypeAlias

from rpl.core.sql import ast
from rpl.core.sql.lexer import K_WORD
from rpl.core.sql.parser import dml
from rpl.core.sql.parser.accounts import user_name
from rpl.core.sql.parser.cursor import SCOPES, Parser, Rule, not_supported
from rpl.core.sql.parser.expressions import expr


def show(p: Parser) -> ast.Show:
    """SHOW [FULL] [GLOBAL | SESSION] word ...: the word's rule in :data:`SHOW_RULES`.

    FULL and a scope are errors at the word unless the word takes them; a word without a
    rule, or whose rule does not match what follows it, is a SHOW the subset does not run.
    """
    p.i += 1
    full = p.accept("FULL")
    scope = None
    if p.key in ("GLOBAL", "SESSION", "LOCAL"):
        scope = SCOPES[p.key]
        p.i += 1
    start = p.i
    key = p.key
    p.i += 1
    if (scope is not None and key not in _TAKES_SCOPE) or (full and key not in _TAKES_FULL):
        p.i -= 1
        p.error()
    rule = SHOW_RULES.get(key)
    shown = rule(p, key, full, scope) if rule is not None else None
    if shown is not None:
        return shown
    if p.toks[start][0] is K_WORD:
        words = [key] + ([p.key] if p.toks[p.i][0] is K_WORD else [])
        raise not_supported("SHOW " + " ".join(words))
    p.i -= 1
    p.error()


ShowRule: TypeAlias = Callable[[Parser, str, bool, str | None], ast.Show | None]
"""The rule of a SHOW word: called with the cursor after the word, given the word, FULL
and the scope; None (the cursor unmoved) when what follows is not a SHOW it knows."""


def show_variables(p: Parser, key: str, full: bool, scope: str | None) -> ast.Show:
    """VARIABLES, STATUS: ``[LIKE 'pattern']``."""
    kind: ast.ShowKind = "VARIABLES" if key == "VARIABLES" else "STATUS"
    like, where = show_filter(p)
    return ast.Show(kind, scope, like, where=where)


def show_databases(p: Parser, key: str, full: bool, scope: str | None) -> ast.Show:
    """DATABASES, SCHEMAS."""
    like, where = show_filter(p)
    return ast.Show("DATABASES", like=like, where=where)


def show_tables(p: Parser, key: str, full: bool, scope: str | None) -> ast.Show:
    """TABLES ``[FROM db] [LIKE 'pattern']``."""
    database = p.ident() if p.accept("FROM") or p.accept("IN") else None
    like, where = show_filter(p)
    return ast.Show("TABLES", like=like, full=full, database=database, where=where)


def show_table_status(p: Parser, key: str, full: bool, scope: str | None) -> ast.Show | None:
    """TABLE STATUS ``[FROM db] [LIKE 'pattern' | WHERE expr]``."""
    if not p.accept("STATUS"):
        return None
    database = p.ident() if p.accept("FROM") or p.accept("IN") else None
    like, where = show_filter(p)
    return ast.Show("TABLE STATUS", like=like, database=database, where=where)


def show_columns(p: Parser, key: str, full: bool, scope: str | None) -> ast.Show:
    """COLUMNS, FIELDS ``FROM t [FROM db] [LIKE 'pattern']``."""
    table = show_table(p)
    like, where = show_filter(p)
    return ast.Show("COLUMNS", like=like, full=full, table=table, where=where)


def show_index(p: Parser, key: str, full: bool, scope: str | None) -> ast.Show:
    """INDEX, INDEXES, KEYS ``FROM t [FROM db]``."""
    table = show_table(p)
    where = expr(p) if p.accept("WHERE") else None
    return ast.Show("INDEX", table=table, where=where)


def show_word(p: Parser, key: str, full: bool, scope: str | None) -> ast.Show:
    """PROCESSLIST, PLUGINS, ENGINES (also STORAGE ENGINES), REPLICAS: nothing follows."""
    if key == "PROCESSLIST":
        return ast.Show("PROCESSLIST", full=full)
    if key == "PLUGINS":
        return ast.Show("PLUGINS")
    if key == "REPLICAS":
        return ast.Show("SLAVE HOSTS", new_terms=True)
    return ast.Show("ENGINES")


def show_storage(p: Parser, key: str, full: bool, scope: str | None) -> ast.Show | None:
    """STORAGE ENGINES."""
    return ast.Show("ENGINES") if p.accept("ENGINES") else None


def show_messages(p: Parser, key: str, full: bool, scope: str | None) -> ast.Show:
    """WARNINGS, ERRORS ``[LIMIT [offset,] n]``."""
    limit, offset = show_limit(p) if p.accept("LIMIT") else (None, None)
    kind: ast.ShowKind = "WARNINGS" if key == "WARNINGS" else "ERRORS"
    return ast.Show(kind, limit=limit, offset=offset)


def show_create(p: Parser, key: str, full: bool, scope: str | None) -> ast.Show | None:
    """CREATE TABLE t, CREATE DATABASE [IF NOT EXISTS] db."""
    if p.accept("TABLE"):
        return ast.Show("CREATE TABLE", table=p.table_name())
    if p.accept("DATABASE") or p.accept("SCHEMA"):
        exists = p.if_not_exists()
        return ast.Show("CREATE DATABASE", database=p.ident(), if_not_exists=exists)
    return None


def show_grants(p: Parser, key: str, full: bool, scope: str | None) -> ast.Show:
    """GRANTS ``[FOR account]``."""
    user = None
    if p.accept("FOR"):
        user = user_name(p)
        if p.key == "USING":
            raise not_supported("SHOW GRANTS ... USING")
    return ast.Show("GRANTS", user=user)


def show_master(p: Parser, key: str, full: bool, scope: str | None) -> ast.Show | None:
    """MASTER STATUS, MASTER LOGS; BINARY LOGS, BINARY LOG STATUS (8.2+)."""
    if key == "MASTER" and p.accept("STATUS"):
        return ast.Show("MASTER STATUS")
    if p.accept("LOGS"):
        return ast.Show("BINARY LOGS")
    if key == "BINARY" and p.accept_seq("LOG", "STATUS"):
        return ast.Show("MASTER STATUS", new_terms=True)
    return None


def show_binlog_events(p: Parser, key: str, full: bool, scope: str | None) -> ast.Show | None:
    """BINLOG EVENTS ``[IN 'file'] [FROM pos] [LIMIT [offset,] n]``."""
    if not p.accept("EVENTS"):
        return None
    file = p.string() if p.accept("IN") else None
    pos = p.integer() if p.accept("FROM") else None
    limit, offset = show_limit(p) if p.accept("LIMIT") else (None, None)
    return ast.Show("BINLOG EVENTS", file=file, pos=pos, limit=limit, offset=offset)


def show_slave(p: Parser, key: str, full: bool, scope: str | None) -> ast.Show | None:
    """SLAVE STATUS, SLAVE HOSTS (also REPLICA STATUS, REPLICA HOSTS)."""
    if p.key == "STATUS":
        p.i += 1
        name = p.name_or_string() if p.accept_seq("FOR", "CHANNEL") else None
        return ast.Show("SLAVE STATUS", new_terms=key == "REPLICA", channel=name)
    if p.key == "HOSTS":
        p.i += 1
        return ast.Show("SLAVE HOSTS", new_terms=key == "REPLICA")
    return None


def show_character_sets(p: Parser, key: str, full: bool, scope: str | None) -> ast.Show | None:
    """CHARACTER SET, CHARSET, COLLATION: ``[LIKE 'pattern' | WHERE expr]``."""
    if key == "CHARACTER" and not p.accept("SET"):
        return None
    kind: ast.ShowKind = "COLLATION" if key == "COLLATION" else "CHARACTER SET"
    like, where = show_filter(p)
    return ast.Show(kind, like=like, where=where)


SHOW_RULES: Final[dict[str, ShowRule]] = {
    "VARIABLES": show_variables,
    "STATUS": show_variables,
    "DATABASES": show_databases,
    "SCHEMAS": show_databases,
    "TABLES": show_tables,
    "TABLE": show_table_status,
    "COLUMNS": show_columns,
    "FIELDS": show_columns,
    "INDEX": show_index,
    "INDEXES": show_index,
    "KEYS": show_index,
    "PROCESSLIST": show_word,
    "PLUGINS": show_word,
    "ENGINES": show_word,
    "REPLICAS": show_word,
    "STORAGE": show_storage,
    "WARNINGS": show_messages,
    "ERRORS": show_messages,
    "CREATE": show_create,
    "GRANTS": show_grants,
    "MASTER": show_master,
    "BINARY": show_master,
    "BINLOG": show_binlog_events,
    "SLAVE": show_slave,
    "REPLICA": show_slave,
    "CHARACTER": show_character_sets,
    "CHARSET": show_character_sets,
    "COLLATION": show_character_sets,
}
"""SHOW's rules by the word after SHOW [FULL] [scope]."""
_TAKES_FULL: Final = frozenset(("TABLES", "COLUMNS", "FIELDS", "PROCESSLIST"))
_TAKES_SCOPE: Final = frozenset(("VARIABLES", "STATUS"))


def show_filter(p: Parser) -> tuple[str | None, ast.Expression | None]:
    """``[LIKE 'pattern' | WHERE expr]``: the pattern or the condition."""
    if p.accept("LIKE"):
        return p.string(), None
    if p.accept("WHERE"):
        return None, expr(p)
    return None, None


def show_table(p: Parser) -> ast.TableName:
    if not (p.accept("FROM") or p.accept("IN")):
        p.error()
    table = p.table_name()
    if p.accept("FROM") or p.accept("IN"):
        table = ast.TableName(table.name, p.ident())
    return table


def show_limit(p: Parser) -> tuple[int, int | None]:
    first = p.integer()
    if p.accept(","):
        return p.integer(), first
    return first, None


def describe(p: Parser) -> ast.Statement:
    p.i += 1
    if p.key in ("SELECT", "INSERT", "UPDATE", "DELETE", "REPLACE", "FORMAT"):
        return dml.explain(p)
    if p.key in (
        "ANALYZE",
        "(",
        "TABLE",
        "WITH",
        "FOR",
        "EXTENDED",
        "PARTITIONS",
    ):
        raise not_supported("EXPLAIN")
    table = p.table_name()
    if not p.at_end():
        raise not_supported("DESCRIBE table column")
    return ast.Show("COLUMNS", table=table)


def flush(p: Parser) -> ast.Flush | ast.FlushTablesWithReadLock:
    p.i += 1
    local = p.accept("LOCAL") or p.accept("NO_WRITE_TO_BINLOG")
    targets = []
    while True:
        key = p.key
        if p.toks[p.i][0] is not K_WORD:
            p.error()
        p.i += 1
        if key in ("BINARY", "ENGINE", "ERROR", "GENERAL", "RELAY", "SLOW"):
            p.expect("LOGS")
            if key == "RELAY" and p.key == "FOR":
                raise not_supported("FLUSH RELAY LOGS FOR CHANNEL")
            targets.append(f"{key} LOGS")
        elif key in ("TABLE", "TABLES"):
            if p.accept_seq("WITH", "READ", "LOCK"):
                return ast.FlushTablesWithReadLock()
            if not (p.at_end() or p.key == ","):
                tables = [p.table_name()]
                while p.accept(","):
                    tables.append(p.table_name())
                if p.accept_seq("WITH", "READ", "LOCK"):
                    return ast.FlushTablesWithReadLock(tuple(tables))
                if not p.at_end():
                    raise not_supported("FLUSH TABLES with options")
                return ast.Flush(("TABLES",), local)
            targets.append("TABLES")
        elif key in ("LOGS", "STATUS", "PRIVILEGES", "HOSTS", "USER_RESOURCES", "OPTIMIZER_COSTS"):
            targets.append(key)
        else:
            p.i -= 1
            p.error()
        if not p.accept(","):
            return ast.Flush(tuple(targets), local)


def checksum(p: Parser) -> ast.Checksum:
    p.i += 1
    if not (p.accept("TABLE") or p.accept("TABLES")):
        p.error()
    tables = [p.table_name()]
    while p.accept(","):
        tables.append(p.table_name())
    mode = None
    if p.key in ("QUICK", "EXTENDED"):
        mode = p.key
        p.i += 1
    return ast.Checksum(tuple(tables), mode)


def install(p: Parser) -> ast.Statement:
    uninstall = p.key == "UNINSTALL"
    p.i += 1
    if p.key == "COMPONENT":
        raise not_supported(f"{'UNINSTALL' if uninstall else 'INSTALL'} COMPONENT")
    p.expect("PLUGIN")
    name = p.ident()
    if uninstall:
        return ast.UninstallPlugin(name)
    p.expect("SONAME")
    return ast.InstallPlugin(name, p.string())


def shutdown(p: Parser) -> ast.Shutdown:
    p.i += 1
    return ast.Shutdown()


def kill(p: Parser) -> ast.Kill:
    p.i += 1
    query = False
    if p.accept("QUERY"):
        query = True
    else:
        p.accept("CONNECTION")
    return ast.Kill(p.integer(), query)


STATEMENTS: Final[dict[str, Rule]] = {
    "SHOW": show,
    "DESCRIBE": describe,
    "DESC": describe,
    "EXPLAIN": describe,
    "FLUSH": flush,
    "CHECKSUM": checksum,
    "INSTALL": install,
    "UNINSTALL": install,
    "SHUTDOWN": shutdown,
    "KILL": kill,
}
"""This family's statements by their first word."""
