"""Accounts and privileges: CREATE / ALTER / DROP USER, GRANT and REVOKE, and the account
names (``'user'@'host'``, CURRENT_USER) other statements take (SHOW GRANTS FOR).

Authentication is ``IDENTIFIED BY 'password'`` or ``IDENTIFIED WITH plugin [BY | AS
...]``; of what may follow the accounts only REQUIRE NONE is run. Privileges are kept as
their upper-case names (ALL PRIVILEGES is ALL, REPLICATION REPLICA is REPLICATION SLAVE)
on a :class:`~rpl.core.sql.ast.GrantLevel`; roles, proxies, column privileges and
routine privileges are refused with 1235.
"""

from __future__ import annotations

from typing import Final

from rpl.core.sql import ast
from rpl.core.sql.lexer import K_QUOTED, K_STRING, K_USERVAR, K_WORD
from rpl.core.sql.parser.cursor import RESERVED, Parser, Rule, not_supported


def user_name(p: Parser) -> ast.UserName:
    kind, key, value, _, _ = p.toks[p.i]
    if key == "CURRENT_USER" or (key == "USER" and p.peek_key() == "("):
        p.i += 1
        if p.accept("("):
            p.expect(")")
        return ast.UserName("", "", current=True)
    if kind not in (K_STRING, K_QUOTED, K_WORD) or (kind is K_WORD and key in RESERVED):
        p.error()
    p.i += 1
    user: str = value
    kind, key, value, _, _ = p.toks[p.i]
    if kind is K_USERVAR:
        p.i += 1
        return ast.UserName(user, value)
    if key == "@":
        p.i += 1
        if p.accept("%"):
            return ast.UserName(user, "%")
        return ast.UserName(user, p.name_or_string())
    return ast.UserName(user)


def user_list(p: Parser) -> tuple[ast.UserName, ...]:
    users = [user_name(p)]
    while p.accept(","):
        users.append(user_name(p))
    return tuple(users)


def user_specs(p: Parser) -> tuple[ast.UserSpec, ...]:
    specs = []
    while True:
        user = user_name(p)
        plugin = password = auth_string = None
        if p.accept("IDENTIFIED"):
            if p.accept("WITH"):
                plugin = p.name_or_string()
                if p.accept("AS"):
                    auth_string = p.string()
                elif p.accept("BY"):
                    password = auth_password(p)
            else:
                p.expect("BY")
                password = auth_password(p)
        specs.append(ast.UserSpec(user, plugin, password, auth_string))
        if not p.accept(","):
            return tuple(specs)


def auth_password(p: Parser) -> str:
    if p.accept_seq("RANDOM", "PASSWORD"):
        raise not_supported("IDENTIFIED BY RANDOM PASSWORD")
    return p.string()


def user_tail(p: Parser, verb: str) -> None:
    """What may follow CREATE/ALTER USER's accounts: only REQUIRE NONE is run."""
    p.accept_seq("REQUIRE", "NONE")
    if p.at_end():
        return
    if p.toks[p.i][0] is K_WORD:
        raise not_supported(f"{verb} ... {p.key}")
    p.error()


def create_user(p: Parser) -> ast.CreateUser:
    p.i += 2
    if_not_exists = p.if_not_exists()
    users = user_specs(p)
    user_tail(p, "CREATE USER")
    return ast.CreateUser(users, if_not_exists)


def alter_user(p: Parser) -> ast.AlterUser:
    p.i += 2
    if_exists = p.accept_seq("IF", "EXISTS")
    users = user_specs(p)
    user_tail(p, "ALTER USER")
    return ast.AlterUser(users, if_exists)


def drop_user(p: Parser) -> ast.DropUser:
    p.i += 2
    if_exists = p.accept_seq("IF", "EXISTS")
    return ast.DropUser(user_list(p), if_exists)


def privileges(p: Parser) -> tuple[str, ...]:
    """GRANT/REVOKE's privilege list up to ON."""
    privileges = []
    while True:
        words: list[str] = []
        while p.toks[p.i][0] is K_WORD and not (p.key == "ON" and words):
            words.append(p.key)
            p.i += 1
        if not words:
            p.error()
        if p.key == "(":
            raise not_supported("column privileges")
        privilege = " ".join(words)
        if privilege == "ALL PRIVILEGES":
            privilege = "ALL"
        elif privilege == "REPLICATION REPLICA":
            privilege = "REPLICATION SLAVE"
        privileges.append(privilege)
        if not p.accept(","):
            break
    if p.key != "ON":
        raise not_supported("GRANT/REVOKE of roles")
    p.i += 1
    return tuple(privileges)


def grant_level(p: Parser) -> ast.GrantLevel:
    if p.key in ("FUNCTION", "PROCEDURE"):
        raise not_supported(f"privileges on a {p.key}")
    p.accept("TABLE")
    if p.accept("*"):
        if p.accept("."):
            p.expect("*")
            return ast.GrantLevel("*", "*")
        return ast.GrantLevel(None, "*")
    name = p.ident()
    if p.accept("."):
        if p.accept("*"):
            return ast.GrantLevel(name, "*")
        return ast.GrantLevel(name, p.any_word())
    return ast.GrantLevel(None, name)


def grant(p: Parser) -> ast.Grant:
    p.i += 1
    if p.key == "PROXY":
        raise not_supported("GRANT PROXY")
    granted = privileges(p)
    level = grant_level(p)
    p.expect("TO")
    users = user_list(p)
    grant_option = p.accept_seq("WITH", "GRANT", "OPTION")
    if p.key in ("WITH", "AS", "REQUIRE", "IDENTIFIED"):
        raise not_supported(f"GRANT ... {p.key}")
    return ast.Grant(granted, level, users, grant_option)


def revoke(p: Parser) -> ast.Revoke:
    p.i += 1
    if p.key == "IF":
        raise not_supported("REVOKE IF EXISTS")
    if p.key == "PROXY":
        raise not_supported("REVOKE PROXY")
    if p.accept_seq("ALL", "PRIVILEGES", ",", "GRANT", "OPTION") or p.accept_seq(
        "ALL", ",", "GRANT", "OPTION"
    ):
        p.expect("FROM")
        return ast.Revoke(("ALL", "GRANT OPTION"), ast.GrantLevel("*", "*"), user_list(p))
    revoked = privileges(p)
    level = grant_level(p)
    p.expect("FROM")
    return ast.Revoke(revoked, level, user_list(p))


STATEMENTS: Final[dict[str, Rule]] = {
    "CREATE USER": create_user,
    "ALTER USER": alter_user,
    "DROP USER": drop_user,
    "GRANT": grant,
    "REVOKE": revoke,
}
"""This family's statements by their first word, or first two words."""
