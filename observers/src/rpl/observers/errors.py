"""Exceptions of the observer contract.

An observer fails a hook by raising :class:`ObserverError` (any other exception
fails it too, but is treated as a bug in the plugin and logged with its
traceback). What failing means depends on the hook; each hook's docstring in
:mod:`rpl.observers.hookspecs` says so.
"""

from __future__ import annotations


class ObserverError(Exception):
    """Raised by an observer callback to fail the hook it implements.

    ``errno`` and ``sqlstate`` optionally name the MySQL error the client should
    see instead of the hook's default error (Group Replication, for example,
    fails ``before_commit`` with ER_TRANSACTION_ROLLBACK_DURING_COMMIT, 3101).
    Hooks whose failure is ignored only log the message.
    """

    def __init__(self, message: str, *, errno: int | None = None,
                 sqlstate: str = "HY000") -> None:
        super().__init__(message)
        self.message = message
        self.errno = errno
        self.sqlstate = sqlstate


class NetError(Exception):
    """A NET service could not read, write or flush: the connection is broken
    or the read timed out (then ``timed_out`` is true).
    """

    def __init__(self, message: str, *, timed_out: bool = False) -> None:
        super().__init__(message)
        self.timed_out = timed_out


class QueryError(Exception):
    """A statement sent to the source over the replica's connection failed.

    Carries the source's MySQL error: ``errno`` (e.g. 1193,
    ER_UNKNOWN_SYSTEM_VARIABLE), ``sqlstate`` and ``message``.
    """

    def __init__(self, errno: int, sqlstate: str, message: str) -> None:
        super().__init__(f"{errno} ({sqlstate}): {message}")
        self.errno = errno
        self.sqlstate = sqlstate
        self.message = message


class UserVariableNotFound(LookupError):
    """The user variable was never set on the session (WL#4398 part B: the
    getters' "return 1, variable not found").
    """
