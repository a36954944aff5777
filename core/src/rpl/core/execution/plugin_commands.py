"""SQL statements plugins answer (``rpl.observers.CommandRegistry``): ``START
GROUP_REPLICATION``, ``STOP GROUP_REPLICATION``.

A plugin command is a fixed run of keywords. :func:`PluginCommands.match` compares a
statement's words (case-insensitive, any whitespace, an optional trailing ``;``) with the
registered ones before the statement is parsed, so the grammar knows nothing of plugins;
a statement that matches none is parsed as usual (and a plugin's command while the plugin
is not installed is the parser's syntax error, as in MySQL).

What holds: the client needs the command's privilege or SUPER
(ER_SPECIFIC_ACCESS_DENIED_ERROR, 1227, otherwise); a command the plugin fails with
:class:`rpl.observers.ObserverError` carrying ``errno`` gives the client that error, any
other failure ER_UNKNOWN_ERROR (1105) with the reason; the server goes on either way. A
command commits the session's open transaction first (as MySQL's START GROUP_REPLICATION
does).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

import attrs

from rpl.core.errors import ER_SPECIFIC_ACCESS_DENIED_ERROR, ER_UNKNOWN_ERROR, MySQLError
from rpl.core.execution.results import Ok, Result
from rpl.observers import ObserverError, PluginCommand

if TYPE_CHECKING:
    from rpl.core.execution.session import Session


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.strip().rstrip(";").upper().split())


@attrs.frozen
class RegisteredCommand:
    """One plugin command."""

    owner: str
    words: tuple[str, ...]
    body: PluginCommand
    privilege: str


class PluginCommands:
    """The commands installed plugins registered, by their words."""

    def __init__(self) -> None:
        self._commands: dict[tuple[str, ...], RegisteredCommand] = {}
        self._first_words: frozenset[str] = frozenset()
        self._lock = threading.Lock()

    def __bool__(self) -> bool:
        return bool(self._commands)

    def register(self, owner: str, statement: str, body: PluginCommand, privilege: str) -> None:
        """Answer ``statement`` with ``body``; ValueError if another plugin has it."""
        words = _words(statement)
        if not words:
            raise ValueError("a command needs at least one word")
        with self._lock:
            found = self._commands.get(words)
            if found is not None and found.owner != owner:
                raise ValueError(f"'{statement}' is plugin '{found.owner}''s command")
            self._commands[words] = RegisteredCommand(owner, words, body, privilege.upper())
            self._first_words = frozenset(w[0] for w in self._commands)

    def unregister_owner(self, owner: str) -> None:
        """Forget every command of plugin ``owner``."""
        with self._lock:
            self._commands = {w: c for w, c in self._commands.items() if c.owner != owner}
            self._first_words = frozenset(w[0] for w in self._commands)

    def match(self, sql: str) -> RegisteredCommand | None:
        """The command ``sql`` is, if any (cheap for every other statement: one split of
        its first word).
        """
        head = sql.lstrip()[:32].split(None, 1)
        if not head or head[0].upper() not in self._first_words:
            return None
        return self._commands.get(_words(sql))

    def run(self, session: Session, command: RegisteredCommand) -> Result:
        """Run ``command`` for ``session``: privilege check, implicit commit, the body."""
        account = session.account
        accounts = session.server.accounts
        if account is not None and not any(
            accounts.allowed(account, p) for p in (command.privilege, "SUPER")
        ):
            raise MySQLError.of(ER_SPECIFIC_ACCESS_DENIED_ERROR, f"SUPER or {command.privilege}")
        session.commit()
        try:
            command.body(session.thread_id)
        except ObserverError as exc:
            if exc.errno is None:
                raise MySQLError.of(ER_UNKNOWN_ERROR, exc.message) from exc
            raise MySQLError(exc.errno, exc.sqlstate, exc.message) from exc
        except MySQLError:
            raise
        except Exception as exc:  # noqa: BLE001 - a plugin's bug fails the command only
            raise MySQLError.of(ER_UNKNOWN_ERROR, f"{type(exc).__name__}: {exc}") from exc
        return Ok()
