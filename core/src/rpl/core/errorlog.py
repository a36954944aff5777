"""The error log: MySQL 8.0-style lines through Python's logging.

Every line reads ``<UTC timestamp> <thread id> [<Label>] [MY-<code>] [<Subsystem>] <message>``,
e.g. ``2026-11-22T10:00:00.123456Z 12 [Warning] [MY-011153] [Repl] Timeout ...``.
Server code logs through :func:`logger` with an optional MySQL error-log code;
plugins get an :class:`ErrorLog` (the ``rpl.observers.ErrorLog`` service).

A failure logged with its exception (a server bug: the client got 1105) carries its
traceback the first time its kind is seen (exception type and the line that raised it),
cut to the last :data:`TRACEBACK_FRAMES` frames; the same failure again is one line with
its count. So a client repeating a statement that hits a bug cannot flood the log.
"""

from __future__ import annotations

import datetime
import logging
import threading
import traceback
from pathlib import Path
from typing import Final

ROOT_LOGGER: Final = "rpl"

ER_RPL_PLUGIN_FUNCTION_FAILED: Final = 10207
"""MY-010207: Run function '<hook>' in plugin '<plugin>' failed."""

_LABELS: Final = {
    logging.ERROR: "ERROR",
    logging.WARNING: "Warning",
    logging.INFO: "Note",
    logging.CRITICAL: "ERROR",
    logging.DEBUG: "Note",
}
_thread_ids = threading.local()
TRACEBACK_FRAMES: Final = 40
"""The most frames of a traceback the error log shows (the innermost ones)."""
KINDS_REMEMBERED: Final = 1024
"""How many kinds of failure are remembered; past that, every traceback is one line."""
_seen: dict[tuple[str, str, int], int] = {}
_seen_lock = threading.Lock()


def set_thread_id(thread_id: int) -> None:
    """Name the MySQL thread id that lines logged by the calling thread carry."""
    _thread_ids.value = thread_id


def current_thread_id() -> int:
    """The MySQL thread id of the calling thread (0 for the server's own threads)."""
    value: int = getattr(_thread_ids, "value", 0)
    return value


class ErrorLogFormatter(logging.Formatter):
    """Formats records as MySQL 8.0 error-log lines."""

    def format(self, record: logging.LogRecord) -> str:
        stamp = datetime.datetime.fromtimestamp(record.created, datetime.UTC)
        code = getattr(record, "mysql_code", 0)
        subsystem = getattr(record, "subsystem", "Server")
        thread_id = getattr(record, "mysql_thread_id", 0)
        label = _LABELS.get(record.levelno, "Note")
        line = (
            f"{stamp.strftime('%Y-%m-%dT%H:%M:%S.%f')}Z {thread_id} [{label}] "
            f"[MY-{code:06d}] [{subsystem}] {record.getMessage()}"
        )
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


class _ThreadIdFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "mysql_thread_id"):
            record.mysql_thread_id = current_thread_id()
        return True


def logger(name: str) -> logging.Logger:
    """The logger for one part of the server, below the ``rpl`` root logger."""
    return logging.getLogger(f"{ROOT_LOGGER}.{name}")


def log(
    log: logging.Logger,
    level: int,
    message: str,
    *,
    code: int = 0,
    subsystem: str = "Server",
    exc_info: BaseException | None = None,
) -> None:
    """Log ``message`` with a MySQL error-log ``code`` and ``subsystem``; with
    ``exc_info``, its traceback the first time that kind of failure is seen.
    """
    if exc_info is not None:
        message += _traceback_once(exc_info)
    log.log(level, "%s", message, extra={"mysql_code": code, "subsystem": subsystem})


def _traceback_once(bug: BaseException) -> str:
    """The text after a failure's message: its (innermost) traceback for a kind not seen
    before, else how many times it has been seen.
    """
    frames = traceback.extract_tb(bug.__traceback__)
    where = frames[-1] if frames else None
    kind = (
        type(bug).__qualname__,
        where.filename if where else "",
        where.lineno or 0 if where else 0,
    )
    with _seen_lock:
        count = _seen.get(kind, 0) + 1
        remembered = count > 1 or len(_seen) < KINDS_REMEMBERED
        if remembered:
            _seen[kind] = count
    if count > 1:
        return f" (the same failure, {count} times: its traceback is logged at the first)"
    if not remembered:
        return " (no traceback: too many kinds of failure were logged before)"
    lines = traceback.format_exception(bug, limit=-TRACEBACK_FRAMES)
    return "\n" + "".join(lines).rstrip("\n")


def open_error_log(path: Path | None) -> logging.Handler:
    """Send the server's log lines to ``path`` (stderr when None), MySQL-formatted. A new
    log file is readable by its owner and group only (0640), as mysqld's.
    """
    if path is not None:
        path.touch(mode=0o640, exist_ok=True)
    handler: logging.Handler = (
        logging.FileHandler(path, encoding="utf-8") if path else logging.StreamHandler()
    )
    handler.setFormatter(ErrorLogFormatter())
    handler.addFilter(_ThreadIdFilter())
    root = logging.getLogger(ROOT_LOGGER)
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    return handler


class ErrorLog:
    """The ``rpl.observers.ErrorLog`` service: a plugin's lines, subsystem [Repl]."""

    def __init__(self, plugin_name: str) -> None:
        self._log = logger(f"plugin.{plugin_name}")

    def error(self, message: str) -> None:
        """Log at [ERROR]."""
        log(self._log, logging.ERROR, message, subsystem="Repl")

    def warning(self, message: str) -> None:
        """Log at [Warning]."""
        log(self._log, logging.WARNING, message, subsystem="Repl")

    def note(self, message: str) -> None:
        """Log at [Note]."""
        log(self._log, logging.INFO, message, subsystem="Repl")
