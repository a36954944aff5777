"""Exceptions of the observer contract.

An observer fails a hook by raising :class:`ObserverError` (any other exception
fails it too, but is treated as a bug in the plugin and logged with its
traceback). What failing means depends on the hook; each hook's docstring in
:mod:`rpl.observers.hookspecs` says so.
"""

from __future__ import annotations


class ObserverError(Exception):
    """Raised by an observer callback to fail the hook it implements.

    Without ``errno`` the client sees the hook's default MySQL error with
    MySQL's text (ER_RUN_HOOK_ERROR, 3100, "Error on observer while running
    replication hook 'before_commit'.", as MySQL's client does) and ``message``
    goes only to the error log. With ``errno`` the client sees that errno,
    ``sqlstate`` and ``message`` itself: ``ObserverError("commits are paused",
    errno=3100)`` gives ``ERROR 3100 (HY000): commits are paused`` (Group
    Replication fails ``before_commit`` with ER_TRANSACTION_ROLLBACK_DURING_COMMIT,
    3101, sqlstate 40000). Mid-dump (``reserve_header``, ``before_send_event``,
    ``after_send_event``) the replica always gets 1236, with ``message`` as its
    text when ``errno`` is given. Hooks whose failure is ignored only log the
    message. ``rpl.observers.hookspecs`` says per hook what a failure does.
    """

    def __init__(self, message: str, *, errno: int | None = None, sqlstate: str = "HY000") -> None:
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
    """A statement sent to the source over the replica's connection failed, or the
    server refused a statement (``ServerControl.execute``) or a channel operation
    (``ReceiverChannel``).

    Carries the MySQL error: ``errno`` (e.g. 1193, ER_UNKNOWN_SYSTEM_VARIABLE),
    ``sqlstate`` and ``message``.
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
