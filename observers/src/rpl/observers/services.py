"""Server services: what a plugin may ask of the server (WL#4398 part B and more).

Each service is a :class:`typing.Protocol`; the server implements it and hands
it to the plugin, either in a hook parameter (the NET services and user-variable
getters belong to one connection) or at plugin initialisation
(:class:`ServerServices`: variables, threads, error log). A plugin never imports
the server: these Protocols are everything it may rely on.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from rpl.observers.variables import StatusVariable, SystemVariable, SysVarValue


@runtime_checkable
class ServerNet(Protocol):
    """``thd_net_read/write/flush``: the source's side of a replica's dump connection.

    The dump thread writes event packets; a plugin may write its own packets and
    read the replica's replies (semisync ACKs). Payloads are whole MySQL packet
    payloads: the service adds and strips the 4-byte packet header and keeps
    the sequence ids. Writes and reads may come from different threads (the dump
    thread writes while an ACK receiver reads); two writers must not interleave.
    """

    def read(self, timeout: float | None = None) -> bytes:
        """Read one packet payload. Raises :class:`rpl.observers.NetError` when
        the connection fails or ``timeout`` seconds pass without a packet.

        The service may receive more than one payload at once and keep the rest for
        the next read, which then returns at once: a packet already received makes
        the descriptor no more readable to ``select``.
        """
        ...

    def write(self, payload: bytes) -> None:
        """Queue one packet. Raises :class:`rpl.observers.NetError` on failure."""
        ...

    def flush(self) -> None:
        """Send what was written. Raises :class:`rpl.observers.NetError` on failure."""
        ...

    def fileno(self) -> int:
        """The socket's descriptor, for polling several connections at once. Once
        ``select`` reports it readable, call ``read(timeout=0)`` until it times out:
        that takes every payload that has arrived, including ones the service
        received with an earlier read.
        """
        ...


@runtime_checkable
class SourceConnection(Protocol):
    """``mysql_net_read/write/flush`` plus queries: the replica's connection to its source."""

    def read(self, timeout: float | None = None) -> bytes:
        """Read one packet payload from the source (see :meth:`ServerNet.read`)."""
        ...

    def write(self, payload: bytes) -> None:
        """Queue one packet to the source, starting a new command sequence."""
        ...

    def flush(self) -> None:
        """Send what was written."""
        ...

    def query(self, statement: str) -> Sequence[Sequence[object]]:
        """Run a statement on the source and return its rows (empty for a
        statement without a result set). Raises :class:`rpl.observers.QueryError`
        with the source's error, or :class:`rpl.observers.NetError`. Only valid
        before the dump is requested (``before_request_transmit``).
        """
        ...


@runtime_checkable
class UserVariables(Protocol):
    """``get_user_var_int/real/str``: the user variables (``@name``) of one session.

    Each getter returns ``None`` for SQL NULL and raises
    :class:`rpl.observers.UserVariableNotFound` when the variable was never set.
    Values convert as MySQL converts them (``'1'`` is 1, ``1.6`` is 2 as an integer).
    """

    def get_user_var_int(self, name: str) -> int | None:
        """The variable as an integer."""
        ...

    def get_user_var_real(self, name: str) -> float | None:
        """The variable as a double."""
        ...

    def get_user_var_str(self, name: str, precision: int = 6) -> str | None:
        """The variable as a string; ``precision`` digits for a real value."""
        ...


@runtime_checkable
class SystemVariableHandle(Protocol):
    """A registered system variable; ``value`` is its current global value."""

    @property
    def name(self) -> str:
        """The variable's name."""
        ...

    @property
    def value(self) -> SysVarValue:
        """The current global value (bool, int, float, str or None by type)."""
        ...


@runtime_checkable
class VariableRegistry(Protocol):
    """System and status variable registration for one plugin.

    Names must start with the plugin's name (``rpl_semi_sync_master_timeout``,
    ``Rpl_semi_sync_master_status``), as MySQL requires of plugin variables.
    Everything a plugin registers appears in SHOW VARIABLES / SHOW STATUS while
    it is installed and disappears when it is uninstalled; the server removes it.
    """

    def register_system_variable(self, variable: SystemVariable) -> SystemVariableHandle:
        """Add a system variable. Its value starts from a matching startup
        option (``--rpl-semi-sync-master-timeout=500``) or its default.
        """
        ...

    def register_status_variable(self, variable: StatusVariable) -> None:
        """Add a status variable, read through its getter at each SHOW STATUS."""
        ...


class ThreadType(enum.Enum):
    """performance_schema.threads.TYPE."""

    FOREGROUND = "FOREGROUND"
    BACKGROUND = "BACKGROUND"


@runtime_checkable
class ThreadHandle(Protocol):
    """One registered thread, shown in performance_schema.threads."""

    @property
    def thread_id(self) -> int:
        """performance_schema THREAD_ID."""
        ...

    @property
    def name(self) -> str:
        """NAME, e.g. ``thread/semisync/Ack_receiver``."""
        ...

    def set_state(self, state: str | None) -> None:
        """Set PROCESSLIST_STATE (MySQL's thread state text, e.g.
        ``Waiting for semi-sync ACK from slave``).
        """
        ...

    def close(self) -> None:
        """Remove the thread from the registry (it is ending)."""
        ...


@runtime_checkable
class ThreadRegistry(Protocol):
    """Registration of a plugin's own threads for observability."""

    def register_thread(
        self, name: str, thread_type: ThreadType = ThreadType.BACKGROUND
    ) -> ThreadHandle:
        """Register the calling thread under ``name``; close the handle when it ends."""
        ...


@runtime_checkable
class ErrorLog(Protocol):
    """The server's error log (MySQL-style lines in the data directory)."""

    def error(self, message: str) -> None:
        """Log at [ERROR]."""
        ...

    def warning(self, message: str) -> None:
        """Log at [Warning]."""
        ...

    def note(self, message: str) -> None:
        """Log at [Note]."""
        ...


@runtime_checkable
class ServerServices(Protocol):
    """What a plugin receives at initialisation."""

    @property
    def plugin_name(self) -> str:
        """The name the plugin was installed under."""
        ...

    @property
    def variables(self) -> VariableRegistry:
        """System/status variable registration, scoped to this plugin."""
        ...

    @property
    def threads(self) -> ThreadRegistry:
        """Thread registration (performance_schema.threads)."""
        ...

    @property
    def error_log(self) -> ErrorLog:
        """The server's error log."""
        ...
