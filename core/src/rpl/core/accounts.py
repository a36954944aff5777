"""User accounts and privileges: CREATE USER, GRANT, REVOKE, and the login check.

An account is ``'user'@'host'``; the host may hold the SQL wildcards ``%`` and ``_``.
At login the most specific matching account wins, as in MySQL: literal hosts before
patterns, longer literal prefixes before shorter, named users before the anonymous
user. A TCP connection from the loopback address also matches host ``localhost``.

Privileges are kept per account at two levels, global (``*.*``) and per database
(``db.*``); ``ALL [PRIVILEGES]`` expands to every static privilege. The account
table is part of the server's durable state: account statements are written to the
binlog (the stored password hash, never the password) and replayed at recovery,
and checkpoints carry a copy.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable

import attrs

from rpl.core.errors import ER_CANNOT_USER, ER_NONEXISTING_GRANT, MySQLError

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
    ) -> None:
        """GRANT privileges ON *.* (database None) or ON database.*."""
        names = {normalise_privilege(p) for p in privileges}
        with self._lock:
            account = self._accounts.get((user, host.lower()))
            if account is None:
                raise MySQLError.of(ER_NONEXISTING_GRANT, user, host)
            if database is None:
                expanded = set(STATIC_PRIVILEGES) if "ALL" in names else names
                account.global_privileges |= expanded
            else:
                expanded = set(DATABASE_PRIVILEGES) if "ALL" in names else names
                account.database_privileges.setdefault(database, set()).update(expanded)
            account.grant_option |= grant_option

    def revoke(self, user: str, host: str, privileges: Iterable[str], database: str | None) -> None:
        """REVOKE privileges ON *.* or database.*."""
        names = {normalise_privilege(p) for p in privileges}
        with self._lock:
            account = self._accounts.get((user, host.lower()))
            if account is None:
                raise MySQLError.of(ER_NONEXISTING_GRANT, user, host)
            target = (
                account.global_privileges
                if database is None
                else account.database_privileges.setdefault(database, set())
            )
            if "ALL" in names:
                target.clear()
                account.grant_option = False
            else:
                target -= names

    def allowed(self, account: Account, privilege: str, database: str | None = None) -> bool:
        """Whether ``account`` holds ``privilege`` globally or on ``database``."""
        with self._lock:
            if privilege in account.global_privileges:
                return True
            return database is not None and privilege in account.database_privileges.get(
                database, ()
            )

    def grants_of(self, account: Account) -> list[str]:
        """SHOW GRANTS lines for ``account``."""
        with self._lock:
            global_privs = sorted(account.global_privileges, key=STATIC_PRIVILEGES.index)
            lines = [
                f"GRANT {', '.join(global_privs) or 'USAGE'} ON *.* TO {account.name}"
                + (" WITH GRANT OPTION" if account.grant_option else "")
            ]
            for database, privs in sorted(account.database_privileges.items()):
                if privs:
                    lines.append(
                        f"GRANT {', '.join(sorted(privs))} ON `{database}`.* TO {account.name}"
                    )
            return lines

    def export(self) -> list[dict[str, object]]:
        """The whole table as plain data (for checkpoints)."""
        with self._lock:
            return [attrs.asdict(a) for a in self._accounts.values()]

    def load(self, rows: Iterable[dict[str, object]]) -> None:
        """Replace the table with ``rows`` from :meth:`export`."""
        accounts = {}
        for row in rows:
            account = Account(**row)  # type: ignore[arg-type]
            account.global_privileges = set(account.global_privileges)
            account.database_privileges = {
                k: set(v) for k, v in account.database_privileges.items()
            }
            accounts[(account.user, account.host)] = account
        with self._lock:
            self._accounts = accounts
