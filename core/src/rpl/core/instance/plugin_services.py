"""The server services beyond variables, threads and the error log that a plugin
receives (``rpl.observers.ServerServices``: ``server``, ``channels``, ``commands``,
``tables``), bound to one server.

They resolve the server's parts at each call, not at construction: plugins are installed
(``--plugin-load``) before recovery has built the binary log, and a plugin may keep its
services for as long as it is installed.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

import attrs

from rpl.core.binlog.gtid import GtidSet
from rpl.core.engine.schema import TableSchema
from rpl.core.errors import MySQLError
from rpl.core.execution.execute import execute
from rpl.core.execution.results import Rows
from rpl.core.execution.session import Session
from rpl.core.execution.virtual_tables import PERFORMANCE_SCHEMA, Computed, RowsOf, definition
from rpl.core.replication.channel import ReplicaChannels, valid_channel_name
from rpl.core.replication.plugin_channel import (
    PluginApplierChannel,
    PluginChannels,
    PluginReceiverChannel,
)
from rpl.core.waits import thd_wait
from rpl.observers import PluginCommand, PluginTable, QueryError

if TYPE_CHECKING:
    from rpl.core.instance.server import Server


class PluginServer:
    """``rpl.observers.ServerControl`` over one server."""

    def __init__(self, server: Server) -> None:
        self._server = server

    @property
    def server_uuid(self) -> str:
        """``@@server_uuid``."""
        return self._server.server_uuid_text

    @property
    def server_id(self) -> int:
        """``@@server_id``."""
        return self._server.server_id

    @property
    def host(self) -> str:
        """The host members and replicas should reach this server at: ``report_host``
        when set, else the machine's host name (MySQL's ``@@hostname``).
        """
        return str(self._server.variables.get_global("report_host") or socket.gethostname())

    @property
    def port(self) -> int:
        """The port clients connect to."""
        return int(self._server.port)

    @property
    def version(self) -> str:
        """``@@version``."""
        return self._server.version

    @property
    def binlog_checksum(self) -> bool:
        """Whether binlog_checksum is CRC32."""
        return self._server.encoder.checksum

    def gtid_executed(self) -> str:
        """``@@gtid_executed``."""
        return str(self._server.binlog.gtid_executed)

    def wait_for_gtid_set(self, gtid_set: str, timeout: float) -> bool:
        """Wait until ``gtid_set`` is committed here."""
        return self._server.binlog.wait_for_gtid_set(GtidSet.parse(gtid_set), timeout)

    def thd_wait(self) -> AbstractContextManager[None]:
        """The calling worker's pool is told the body blocks (rpl.core.waits)."""
        return thd_wait()

    def set_super_read_only(self, on: bool) -> None:
        """SET GLOBAL super_read_only."""
        self._server.variables.set_global("super_read_only", on)

    @property
    def super_read_only(self) -> bool:
        """``@@super_read_only``."""
        return bool(self._server.variables.get_global("super_read_only"))

    def execute(self, statement: str) -> Sequence[Sequence[object]]:
        """Run ``statement`` in an internal session; its rows."""
        session = Session(self._server, None, "localhost")
        try:
            result = execute(session, statement)
        except MySQLError as exc:
            raise QueryError(exc.errno, exc.sqlstate, exc.message) from exc
        finally:
            session.close()
        return [list(row) for row in result.rows] if isinstance(result, Rows) else []


@attrs.frozen
class PluginChannelService:
    """``rpl.observers.ChannelService`` for one plugin. ``receivers`` gives the server's
    receiver channels at each call (they are built after the plugins are loaded).
    """

    channels: PluginChannels
    receivers: Callable[[], ReplicaChannels]

    def applier_channel(self, name: str, *, high_priority: bool = False) -> PluginApplierChannel:
        """The applier-only channel ``name`` (``high_priority``: see rpl.observers)."""
        channel = self.channels.applier_channel(name)
        channel.high_priority = high_priority
        return channel

    def receiver_channel(self, name: str) -> PluginReceiverChannel:
        """The receiver channel ``name``."""
        if not name:
            raise ValueError("'' is the asynchronous replica's channel")
        if not valid_channel_name(name):
            raise ValueError(f"invalid channel name (at most 64 characters, no /): {name!r}")
        if any(c.name == name.lower() for c in self.channels.all()):
            raise ValueError(f"{name!r} is an applier-only channel")
        return PluginReceiverChannel(self.receivers(), name)


@attrs.frozen
class PluginCommandRegistry:
    """``rpl.observers.CommandRegistry`` for one plugin."""

    server: Server
    owner: str

    def register_command(self, statement: str, body: PluginCommand, privilege: str) -> None:
        """Answer ``statement``."""
        self.server.plugin_commands.register(self.owner, statement, body, privilege)


class PluginTables:
    """The performance_schema tables plugins add (``rpl.observers.TableRegistry`` per
    plugin through :meth:`for_plugin`). A table the server already defines (empty until a
    feature fills it, as ``replication_group_members``) gets the plugin's rows while the
    plugin is installed, and is empty again after.
    """

    def __init__(self, server: Server) -> None:
        self._server = server
        self._owned: dict[str, list[tuple[str, tuple[TableSchema, RowsOf] | None]]] = {}

    def register(self, owner: str, table: PluginTable) -> None:
        """Add or fill ``performance_schema.<table.name>`` for plugin ``owner``."""
        tables = self._server.dispatch.virtual_tables
        existing = tables.find(PERFORMANCE_SCHEMA, table.name)
        names = [name for name, _ in table.columns]
        if existing is not None:
            schema = existing[0]
            if [c.name for c in schema.columns] != names:
                raise ValueError(f"performance_schema.{table.name} has other columns")
        else:
            spec = "\n".join(f"{name} {kind}" for name, kind in table.columns)
            schema = definition(PERFORMANCE_SCHEMA, table.name, spec, tuple(names))
        rows = table.rows

        def computed(session: Session) -> Iterable[Computed]:
            return [tuple(row) for row in rows()]

        tables.add(schema, computed)
        self._owned.setdefault(owner, []).append((table.name, existing))

    def unregister_owner(self, owner: str) -> None:
        """Take plugin ``owner``'s tables away (restore what the server had)."""
        tables = self._server.dispatch.virtual_tables
        for name, existing in reversed(self._owned.pop(owner, [])):
            if existing is None:
                tables.remove(PERFORMANCE_SCHEMA, name)
            else:
                tables.add(*existing)


@attrs.frozen
class PluginTableRegistry:
    """``rpl.observers.TableRegistry`` for one plugin."""

    tables: PluginTables
    owner: str

    def register_table(self, table: PluginTable) -> None:
        """Add ``performance_schema.<table.name>``."""
        self.tables.register(self.owner, table)
