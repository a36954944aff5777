"""Replication statements: CHANGE MASTER (CHANGE REPLICATION SOURCE), START / STOP SLAVE
(REPLICA), RESET MASTER (RESET BINARY LOGS AND GTIDS), RESET SLAVE (REPLICA) and PURGE
BINARY LOGS.

The 8.0.22+ words are read as the old ones (``SOURCE_*`` options are ``MASTER_*``,
REPLICA is SLAVE, RELAY_THREAD is SQL_THREAD); CHANGE MASTER records which were used
(``new_terms``). The replication SHOW statements are SHOW's, in
:mod:`rpl.core.sql.parser.admin`.
"""

from __future__ import annotations

from typing import Final

from rpl.core.sql import ast
from rpl.core.sql.lexer import K_NUMBER, K_STRING, K_USERVAR, K_WORD
from rpl.core.sql.parser.cursor import Parser, Rule, not_supported
from rpl.core.sql.parser.expressions import expr

_THREADS: Final = frozenset(("IO_THREAD", "SQL_THREAD", "RELAY_THREAD"))


def change(p: Parser) -> ast.ChangeMaster:
    p.i += 1
    new_terms = False
    if p.accept("MASTER"):
        pass
    elif p.accept_seq("REPLICATION", "SOURCE"):
        new_terms = True
    elif p.accept_seq("REPLICATION", "FILTER"):
        raise not_supported("CHANGE REPLICATION FILTER")
    else:
        p.error()
    p.expect("TO")
    options: list[tuple[str, ast.ChangeMasterValue]] = []
    while True:
        if p.toks[p.i][0] is not K_WORD:
            p.error()
        name = p.key
        p.i += 1
        if name.startswith("SOURCE_"):
            name = "MASTER_" + name[7:]
        elif name == "GET_SOURCE_PUBLIC_KEY":
            name = "GET_MASTER_PUBLIC_KEY"
        p.expect("=")
        options.append((name, change_value(p, name)))
        if not p.accept(","):
            break
    return ast.ChangeMaster(tuple(options), channel(p), new_terms)


def change_value(p: Parser, name: str) -> ast.ChangeMasterValue:
    if name == "IGNORE_SERVER_IDS":
        p.expect("(")
        ids: list[int] = []
        if not p.accept(")"):
            ids.append(p.integer())
            while p.accept(","):
                ids.append(p.integer())
            p.expect(")")
        return tuple(ids)
    kind, _, value, _, _ = p.toks[p.i]
    if kind is K_STRING:
        p.i += 1
        if p.toks[p.i][0] is K_USERVAR:
            raise not_supported(f"{name} = account")
        result: ast.ChangeMasterValue = value
        return result
    if kind is K_NUMBER and type(value) is not float:
        p.i += 1
        result = value
        return result
    if p.key == "NULL":
        raise not_supported(f"{name} = NULL")
    if kind is K_WORD:
        p.i += 1
        return p.toks[p.i - 1][1]
    p.error()


def start_slave(p: Parser) -> ast.StartSlave:
    """START SLAVE (or REPLICA)."""
    p.i += 2
    threads, until, channel_name = slave_tail(p, "START")
    return ast.StartSlave(threads, channel_name, until)


def stop_slave(p: Parser) -> ast.StopSlave:
    """STOP SLAVE (or REPLICA)."""
    p.i += 2
    threads, until, channel_name = slave_tail(p, "STOP")
    if until is not None:
        p.error()
    return ast.StopSlave(threads, channel_name)


def slave_tail(p: Parser, verb: str) -> tuple[tuple[str, ...], str | None, str | None]:
    """START/STOP SLAVE's ``[thread, ...] [UNTIL SQL_AFTER_GTIDS = 'set'] [FOR CHANNEL
    'c']``: the threads, the UNTIL set, the channel. The other UNTIL conditions and the
    connection options are refused with 1235.
    """
    threads: list[str] = []
    if p.key in _THREADS:
        while True:
            if p.key not in _THREADS:
                p.error()
            threads.append("SQL_THREAD" if p.key == "RELAY_THREAD" else p.key)
            p.i += 1
            if not p.accept(","):
                break
    until: str | None = None
    if verb == "START" and p.key == "UNTIL" and p.peek_key() == "SQL_AFTER_GTIDS":
        p.i += 2
        p.expect("=")
        until = p.string()
    if p.key in ("UNTIL", "USER", "PASSWORD", "DEFAULT_AUTH", "PLUGIN_DIR"):
        raise not_supported(f"{verb} SLAVE ... {p.key}")
    return tuple(threads), until, channel(p)


def channel(p: Parser) -> str | None:
    if p.accept_seq("FOR", "CHANNEL"):
        return p.name_or_string()
    return None


def reset_master(p: Parser) -> ast.ResetMaster:
    """RESET MASTER [TO n]."""
    p.i += 2
    return ast.ResetMaster(p.integer() if p.accept("TO") else None)


def reset_binary_logs(p: Parser) -> ast.ResetMaster:
    """RESET BINARY LOGS AND GTIDS [TO n], 8.4's name for RESET MASTER."""
    p.i += 1
    if not p.accept_seq("BINARY", "LOGS", "AND", "GTIDS"):
        p.i -= 1
        raise not_supported(p.verb_name())
    return ast.ResetMaster(p.integer() if p.accept("TO") else None)


def reset_slave(p: Parser) -> ast.ResetSlave:
    """RESET SLAVE (or REPLICA) [ALL] [FOR CHANNEL c]."""
    p.i += 2
    all_ = p.accept("ALL")
    return ast.ResetSlave(all_, channel(p))


def purge(p: Parser) -> ast.Purge:
    p.i += 1
    if not (p.accept("BINARY") or p.accept("MASTER")):
        p.error()
    p.expect("LOGS")
    if p.accept("TO"):
        return ast.Purge(to_file=p.string())
    p.expect("BEFORE")
    return ast.Purge(before=expr(p))


STATEMENTS: Final[dict[str, Rule]] = {
    "CHANGE": change,
    "START SLAVE": start_slave,
    "START REPLICA": start_slave,
    "STOP SLAVE": stop_slave,
    "STOP REPLICA": stop_slave,
    "RESET MASTER": reset_master,
    "RESET BINARY": reset_binary_logs,
    "RESET SLAVE": reset_slave,
    "RESET REPLICA": reset_slave,
    "PURGE": purge,
}
"""This family's statements by their first word, or first two words."""
