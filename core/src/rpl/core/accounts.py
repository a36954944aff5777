"""User accounts and privileges: CREATE USER, GRANT, REVOKE, and the login check.

An account is ``'user'@'host'``; the host may hold the SQL wildcards ``%`` and ``_``.
At login the most specific matching account wins, as in MySQL: literal hosts before
patterns, longer literal prefixes before shorter, named users before the anonymous
user. A TCP connection from the loopback address also matches host ``localhost``.

Privileges are kept per account at three levels, global (``*.*``), per database
(``db.*``) and per table (``db.tbl``); ``ALL [PRIVILEGES]`` expands to every privilege
the level takes, and a privilege the level does not take is MySQL's error (1221 for a
database, 1144 for a table). A privilege held at a level holds for everything below it.
Database and table names are compared exactly, as the engine compares them
(``lower_case_table_names=0``). The account table is part of the server's durable
state: account statements are written to the binlog (the stored password hash, never
the password) and replayed at recovery, and checkpoints carry a copy.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable

import attrs

from rpl.core.errors import (
    ER_CANNOT_USER,
    ER_ILLEGAL_GRANT_FOR_TABLE,
    ER_NONEXISTING_GRANT,
    ER_WRONG_USAGE,
    MySQLError,
)

STATIC_PRIVILEGES = (
    "SELECT",
    "INSERT",
    "UPDATE",
    "DELETE",
    "CREATE",
    "DROP",
    "RELOAD",
    "SHUTDOWN",
    "PROCESS",
    "FILE",
    "REFERENCES",
    "INDEX",
    "ALTER",
    "SHOW DATABASES",
    "SUPER",
    "CREATE TEMPORARY TABLES",
    "LOCK TABLES",
    "EXECUTE",
    "REPLICATION SLAVE",
    "REPLICATION CLIENT",
    "CREATE VIEW",
    "SHOW VIEW",
    "CREATE ROUTINE",
    "ALTER ROUTINE",
    "CREATE USER",
    "EVENT",
    "TRIGGER",
    "CREATE TABLESPACE",
    "CREATE ROLE",
    "DROP ROLE",
)
DATABASE_PRIVILEGES = frozenset(
    (
        "SELECT",
        "INSERT",
        "UPDATE",
        "DELETE",
        "CREATE",
        "DROP",
        "REFERENCES",
        "INDEX",
        "ALTER",
        "CREATE TEMPORARY TABLES",
        "LOCK TABLES",
        "EXECUTE",
        "CREATE VIEW",
        "SHOW VIEW",
        "CREATE ROUTINE",
        "ALTER ROUTINE",
        "EVENT",
        "TRIGGER",
    )
)
TABLE_PRIVILEGES = DATABASE_PRIVILEGES - {
    "CREATE TEMPORARY TABLES",
    "LOCK TABLES",
    "EXECUTE",
    "CREATE ROUTINE",
    "ALTER ROUTINE",
    "EVENT",
}
"""The privileges a table-level grant (``ON db.tbl``) takes."""
ANY = "ANY"
"""Not a privilege: :meth:`Accounts.allowed` with it asks whether the account holds any
privilege on the object (what SHOW and USE need)."""
_NOT_PRIVILEGES = frozenset(("ALL", "USAGE", "GRANT OPTION"))
"""Words of a privilege list that name no privilege held at a level (ALL expands; GRANT
OPTION is the account's flag)."""
_ALIASES = {"REPLICATION REPLICA": "REPLICATION SLAVE", "ALL PRIVILEGES": "ALL"}
LOOPBACK = ("127.0.0.1", "::1", "localhost")


@attrs.define
class Account:
    """One row of the account table, with its grants."""

    user: str
    host: str
    password_hash: str = ""
    global_privileges: set[str] = attrs.field(factory=set)
    database_privileges: dict[str, set[str]] = attrs.field(factory=dict)
    grant_option: bool = False
    table_privileges: dict[str, dict[str, set[str]]] = attrs.field(factory=dict)
    """database -> table -> privileges (ON db.tbl)."""
    holds_everywhere: bool = attrs.field(default=False, init=False)
    """Whether it holds every table privilege globally (root does): no database or table
    check can refuse it. Kept by :class:`Accounts` as grants change; not exported."""

    def refresh(self) -> None:
        """Recompute what is derived from the grants (after a change)."""
        self.holds_everywhere = TABLE_PRIVILEGES <= self.global_privileges

    @property
    def name(self) -> str:
        """``'user'@'host'`` as MySQL prints it."""
        return f"'{self.user}'@'{self.host}'"


def normalise_privilege(word: str) -> str:
    """The canonical spelling of a privilege name."""
    name = " ".join(word.upper().split())
    return _ALIASES.get(name, name)


def _host_regex(pattern: str) -> re.Pattern[str]:
    parts = (".*" if c == "%" else "." if c == "_" else re.escape(c) for c in pattern)
    return re.compile("".join(parts) + r"\Z", re.IGNORECASE)


def _specificity(account: Account) -> tuple[int, int, int]:
    wildcard = account.host.find("%") if "%" in account.host else -1
    literal = 1 if wildcard < 0 and "_" not in account.host else 0
    prefix = len(account.host) if literal else max(wildcard, 0)
    return (-literal, -prefix, 0 if account.user else 1)


class Accounts:
    """The account table; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._accounts: dict[tuple[str, str], Account] = {}

    def match(self, user: str, client_host: str) -> Account | None:
        """The account a connection from ``client_host`` logging in as ``user`` gets."""
        hosts = LOOPBACK if client_host in LOOPBACK else (client_host,)
        with self._lock:
            candidates = [
                a
                for a in self._accounts.values()
                if a.user in (user, "") and any(_host_regex(a.host).match(h) for h in hosts)
            ]
        candidates.sort(key=_specificity)
        return candidates[0] if candidates else None

    def get(self, user: str, host: str) -> Account | None:
        """The account exactly named ``'user'@'host'``."""
        with self._lock:
            return self._accounts.get((user, host.lower()))

    def create(self, user: str, host: str, password_hash: str, if_not_exists: bool) -> bool:
        """CREATE USER; False when it existed and IF NOT EXISTS was given."""
        with self._lock:
            key = (user, host.lower())
            if key in self._accounts:
                if if_not_exists:
                    return False
                raise MySQLError.of(ER_CANNOT_USER, "CREATE USER", f"'{user}'@'{host}'")
            self._accounts[key] = Account(user, host.lower(), password_hash)
            return True

    def drop(self, user: str, host: str, if_exists: bool) -> bool:
        """DROP USER; False when it was absent and IF EXISTS was given."""
        with self._lock:
            if self._accounts.pop((user, host.lower()), None) is None:
                if if_exists:
                    return False
                raise MySQLError.of(ER_CANNOT_USER, "DROP USER", f"'{user}'@'{host}'")
            return True

    def set_password(self, user: str, host: str, password_hash: str) -> None:
        """ALTER USER ... IDENTIFIED BY."""
        with self._lock:
            account = self._accounts.get((user, host.lower()))
            if account is None:
                raise MySQLError.of(ER_CANNOT_USER, "ALTER USER", f"'{user}'@'{host}'")
            account.password_hash = password_hash

    def grant(
        self,
        user: str,
        host: str,
        privileges: Iterable[str],
        database: str | None,
        grant_option: bool = False,
        table: str | None = None,
    ) -> None:
        """GRANT privileges ON *.* (database None), ON database.* (table None) or ON
        database.table.
        """
        names = {normalise_privilege(p) for p in privileges}
        with self._lock:
            target = self._level(user, host, names, database, table)
            target |= _expanded(names, database, table)
            account = self._accounts[(user, host.lower())]
            account.grant_option |= grant_option
            account.refresh()

    def revoke(
        self,
        user: str,
        host: str,
        privileges: Iterable[str],
        database: str | None,
        table: str | None = None,
    ) -> None:
        """REVOKE privileges ON *.*, database.* or database.table."""
        names = {normalise_privilege(p) for p in privileges}
        with self._lock:
            target = self._level(user, host, names, database, table)
            account = self._accounts[(user, host.lower())]
            if "ALL" in names:
                target.clear()
            else:
                target -= names
            if names & {"ALL", "GRANT OPTION"}:
                account.grant_option = False
            account.refresh()

    def _level(
        self, user: str, host: str, names: set[str], database: str | None, table: str | None
    ) -> set[str]:
        """The privilege set GRANT or REVOKE of ``names`` changes (lock held): 1141 for
        an unknown account, 1221 or 1144 for a privilege the level does not take.
        """
        account = self._accounts.get((user, host.lower()))
        if account is None:
            raise MySQLError.of(ER_NONEXISTING_GRANT, user, host)
        if database is None:
            return account.global_privileges
        if table is None:
            if names - _NOT_PRIVILEGES - DATABASE_PRIVILEGES:
                raise MySQLError.of(ER_WRONG_USAGE, "DB GRANT", "GLOBAL PRIVILEGES")
            return account.database_privileges.setdefault(database, set())
        if names - _NOT_PRIVILEGES - TABLE_PRIVILEGES:
            raise MySQLError.of(ER_ILLEGAL_GRANT_FOR_TABLE)
        return account.table_privileges.setdefault(database, {}).setdefault(table, set())

    def allowed(
        self,
        account: Account,
        privilege: str,
        database: str | None = None,
        table: str | None = None,
    ) -> bool:
        """Whether ``account`` holds ``privilege`` globally, on ``database`` or on
        ``database.table``. With :data:`ANY`: whether it holds any privilege there; on a
        database (``table`` None) that includes a privilege on any of its tables, as
        MySQL's SHOW DATABASES and USE count them.
        """
        with self._lock:
            if privilege == ANY:
                return _holds_any(account, database, table)
            if privilege in account.global_privileges:
                return True
            if database is None:
                return False
            if privilege in account.database_privileges.get(database, ()):
                return True
            return table is not None and privilege in account.table_privileges.get(
                database, {}
            ).get(table, ())

    def grants_of(self, account: Account) -> list[str]:
        """SHOW GRANTS lines for ``account``: the static global privileges (USAGE for
        none), the dynamic ones (CONNECTION_ADMIN...) on a line of their own as MySQL 8.0
        prints them, then each database's and each table's.
        """
        with self._lock:
            static = [p for p in STATIC_PRIVILEGES if p in account.global_privileges]
            dynamic = sorted(account.global_privileges.difference(STATIC_PRIVILEGES))
            lines = [
                f"GRANT {', '.join(static) or 'USAGE'} ON *.* TO {account.name}"
                + (" WITH GRANT OPTION" if account.grant_option else "")
            ]
            if dynamic:
                lines.append(f"GRANT {','.join(dynamic)} ON *.* TO {account.name}")
            for database, privs in sorted(account.database_privileges.items()):
                if privs:
                    lines.append(f"GRANT {_listed(privs)} ON `{database}`.* TO {account.name}")
            for database, tables in sorted(account.table_privileges.items()):
                for table, privs in sorted(tables.items()):
                    if privs:
                        lines.append(
                            f"GRANT {_listed(privs)} ON `{database}`.`{table}` TO {account.name}"
                        )
            return lines

    def export(self) -> list[dict[str, object]]:
        """The whole table as plain data (for checkpoints)."""
        with self._lock:
            return [
                attrs.asdict(a, filter=lambda field, _: field.init) for a in self._accounts.values()
            ]

    def load(self, rows: Iterable[dict[str, object]]) -> None:
        """Replace the table with ``rows`` from :meth:`export`."""
        accounts = {}
        for row in rows:
            account = Account(**row)  # type: ignore[arg-type]
            account.global_privileges = set(account.global_privileges)
            account.database_privileges = {
                k: set(v) for k, v in account.database_privileges.items()
            }
            account.table_privileges = {
                db: {t: set(v) for t, v in tables.items()}
                for db, tables in account.table_privileges.items()
            }
            account.refresh()
            accounts[(account.user, account.host)] = account
        with self._lock:
            self._accounts = accounts


def _expanded(names: set[str], database: str | None, table: str | None) -> set[str]:
    """``names`` with ALL replaced by every privilege of the level, USAGE dropped."""
    if "ALL" in names:
        return set(
            STATIC_PRIVILEGES
            if database is None
            else DATABASE_PRIVILEGES
            if table is None
            else TABLE_PRIVILEGES
        )
    return names - _NOT_PRIVILEGES


def _holds_any(account: Account, database: str | None, table: str | None) -> bool:
    """Whether ``account`` holds a privilege on ``database`` (or ``database.table``)
    at any level, a table's counting for its database when ``table`` is None.
    """
    if account.global_privileges & DATABASE_PRIVILEGES:
        return True
    if database is None:
        return False
    if account.database_privileges.get(database):
        return True
    tables = account.table_privileges.get(database, {})
    if table is None:
        return any(tables.values())
    return bool(tables.get(table))


def _listed(privileges: Iterable[str]) -> str:
    """Privileges in MySQL's order, as SHOW GRANTS lists them."""
    return ", ".join(sorted(privileges, key=STATIC_PRIVILEGES.index))
