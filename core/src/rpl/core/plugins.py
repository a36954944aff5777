"""Plugin loading: discovery through entry points, INSTALL / UNINSTALL PLUGIN, ``--plugin-load``.

A plugin is an entry point in group ``rpl.plugins`` whose name is the plugin's
name and whose object is a :class:`rpl.observers.ReplicationPlugin` subclass.
Installing one validates its hooks against the specification before anything
runs, constructs it with services scoped to it (its variables are its own and
leave with it), and registers its observers. Every failure leaves nothing
behind and is a MySQL error:

* unknown name, or an entry point that cannot be imported: ER_CANT_OPEN_LIBRARY (1126);
* already installed: ER_UDF_EXISTS (1125);
* hooks that do not match the specification, or a failing initialisation:
  ER_CANT_INITIALIZE_UDF (1123), naming the hook or the reason;
* UNINSTALL of a plugin that is not installed: ER_SP_DOES_NOT_EXIST (1305);
* a plugin refusing UNINSTALL: ER_PLUGIN_CANNOT_BE_UNINSTALLED (1883) with its reason.
"""

from __future__ import annotations

import importlib.metadata
import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any, cast

import attrs

from rpl.core import errorlog
from rpl.core.errorlog import ErrorLog
from rpl.core.errors import (
    ER_CANT_INITIALIZE_UDF,
    ER_CANT_OPEN_LIBRARY,
    ER_PLUGIN_CANNOT_BE_UNINSTALLED,
    ER_SP_DOES_NOT_EXIST,
    ER_UDF_EXISTS,
    MySQLError,
)
from rpl.core.observer_registry import ObserverRegistry, PluginLoadError
from rpl.core.threads import ThreadRegistry
from rpl.core.variables import StatusVariables, SystemVariables
from rpl.observers import (
    ENTRY_POINT_GROUP,
    ChannelService,
    CommandRegistry,
    ObserverError,
    ReplicationPlugin,
    ServerControl,
    StatusVariable,
    SystemVariable,
    SystemVariableHandle,
    TableRegistry,
)

_log = errorlog.logger("plugins")


@attrs.frozen
class PluginSource:
    """An installable plugin: one entry point of group ``rpl.plugins``."""

    name: str
    entry_point: importlib.metadata.EntryPoint
    distribution: str = ""
    version: str = ""

    def load(self) -> type[ReplicationPlugin]:
        """Import the plugin class; MySQLError 1126 if that fails or it is no plugin class."""
        try:
            loaded = self.entry_point.load()
        except Exception as exc:  # noqa: BLE001 - any import failure is reported
            raise MySQLError.of(
                ER_CANT_OPEN_LIBRARY, self.entry_point.value, 0, f"{type(exc).__name__}: {exc}"
            ) from exc
        if not (isinstance(loaded, type) and issubclass(loaded, ReplicationPlugin)):
            raise MySQLError.of(
                ER_CANT_OPEN_LIBRARY,
                self.entry_point.value,
                0,
                "not a subclass of rpl.observers.ReplicationPlugin",
            )
        return loaded


def discover() -> dict[str, PluginSource]:
    """Every plugin the installed distributions declare, by name."""
    sources: dict[str, PluginSource] = {}
    for entry_point in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        dist = entry_point.dist
        sources.setdefault(
            entry_point.name,
            PluginSource(
                entry_point.name,
                entry_point,
                dist.metadata["Name"] if dist is not None else "",
                dist.version if dist is not None else "",
            ),
        )
    return sources


class PluginVariables:
    """One plugin's view of the variable registries (``rpl.observers.VariableRegistry``)."""

    def __init__(
        self,
        plugin: str,
        system: SystemVariables,
        status: StatusVariables,
        status_prefixes: tuple[str, ...] = (),
    ) -> None:
        self._plugin = plugin
        self._system = system
        self._status = status
        self._status_prefixes = tuple(p.lower() for p in status_prefixes)

    def register_system_variable(self, variable: SystemVariable) -> SystemVariableHandle:
        """Add a system variable named ``<plugin>_...``."""
        self._check_prefix(variable.name)
        return self._system.register(variable, self._plugin)

    def register_status_variable(self, variable: StatusVariable) -> None:
        """Add a status variable named ``<Plugin>_...`` (or with one of the plugin's
        ``status_prefixes``).
        """
        name = variable.name.lower()
        if not any(name.startswith(prefix) for prefix in self._status_prefixes):
            self._check_prefix(variable.name)
        self._status.register(variable, self._plugin)

    def _check_prefix(self, name: str) -> None:
        if not name.lower().startswith(self._plugin.lower() + "_"):
            raise ValueError(f"variable '{name}' must start with '{self._plugin}_'")


class Detached:
    """The server, channel, command and table services of a plugin registry that serves
    no server (unit tests of plugins and of loading): each call raises RuntimeError.
    """

    def __getattr__(self, name: str) -> object:
        raise RuntimeError(f"'{name}': this plugin registry serves no server")


@attrs.frozen
class ServerBound:
    """The services that need the running server, for one plugin (see
    :mod:`rpl.core.instance.plugin_services`).
    """

    server: ServerControl
    channels: ChannelService
    commands: CommandRegistry
    tables: TableRegistry


ServerBoundFor = Callable[[str], ServerBound]
"""Makes the server-bound services of the plugin named by its argument."""
Unregister = Callable[[str], None]
"""Removes what a plugin registered through its server-bound services."""


def _detached(name: str) -> ServerBound:
    detached = cast(Any, Detached())
    return ServerBound(detached, detached, detached, detached)


@attrs.frozen
class PluginServices:
    """The ``rpl.observers.ServerServices`` one plugin receives."""

    plugin_name: str
    variables: PluginVariables
    threads: ThreadRegistry
    error_log: ErrorLog
    bound: ServerBound

    @property
    def server(self) -> ServerControl:
        """The server's identity, GTIDs, super_read_only."""
        return self.bound.server

    @property
    def channels(self) -> ChannelService:
        """Named applier-only channels."""
        return self.bound.channels

    @property
    def commands(self) -> CommandRegistry:
        """The plugin's SQL commands."""
        return self.bound.commands

    @property
    def tables(self) -> TableRegistry:
        """The plugin's performance_schema tables."""
        return self.bound.tables


@attrs.frozen
class InstalledPlugin:
    """A plugin that is installed and whose observers are registered."""

    source: PluginSource
    instance: ReplicationPlugin
    hooks: tuple[str, ...]

    @property
    def name(self) -> str:
        """The plugin's name."""
        return self.source.name


class Plugins:
    """The server's installed plugins."""

    def __init__(
        self,
        registry: ObserverRegistry,
        system: SystemVariables,
        status: StatusVariables,
        threads: ThreadRegistry,
        sources: Callable[[], Mapping[str, PluginSource]] = discover,
        bound: ServerBoundFor = _detached,
        unregister: Unregister | None = None,
    ) -> None:
        self._bound = bound
        self._unregister = unregister
        self._registry = registry
        self._system = system
        self._status = status
        self._threads = threads
        self._sources = sources
        self._lock = threading.RLock()
        self._installed: dict[str, InstalledPlugin] = {}

    def installed(self) -> list[InstalledPlugin]:
        """Installed plugins in installation order."""
        with self._lock:
            return list(self._installed.values())

    def install(self, name: str) -> InstalledPlugin:
        """INSTALL PLUGIN name; raises MySQLError, leaving nothing behind, on failure."""
        with self._lock:
            if name in self._installed:
                raise MySQLError.of(ER_UDF_EXISTS, name)
            source = self._sources().get(name)
            if source is None:
                raise MySQLError.of(
                    ER_CANT_OPEN_LIBRARY,
                    name,
                    2,
                    f"no entry point '{name}' in group '{ENTRY_POINT_GROUP}'",
                )
            plugin_class = source.load()
            try:
                self._registry.validate(plugin_class, name)
            except PluginLoadError as exc:
                raise MySQLError.of(ER_CANT_INITIALIZE_UDF, name, str(exc)) from exc
            instance = self._construct(name, plugin_class)
            try:
                hooks = self._registry.register(instance, name)
            except PluginLoadError as exc:
                self._discard(name, instance)
                raise MySQLError.of(ER_CANT_INITIALIZE_UDF, name, str(exc)) from exc
            installed = InstalledPlugin(source, instance, hooks)
            self._installed[name] = installed
        errorlog.log(
            _log,
            logging.INFO,
            f"Plugin '{name}' installed ({source.distribution} {source.version})",
            subsystem="Server",
        )
        return installed

    def uninstall(self, name: str) -> None:
        """UNINSTALL PLUGIN name; the plugin may refuse while it is in use."""
        with self._lock:
            installed = self._installed.get(name)
            if installed is None:
                raise MySQLError.of(ER_SP_DOES_NOT_EXIST, "PLUGIN", name)
            try:
                installed.instance.check_uninstall()
            except ObserverError as exc:
                raise MySQLError.of(ER_PLUGIN_CANNOT_BE_UNINSTALLED, name, exc.message) from exc
            self._remove(installed)
        errorlog.log(_log, logging.INFO, f"Plugin '{name}' uninstalled", subsystem="Server")

    def load(self, option: str) -> list[MySQLError]:
        """``--plugin-load=NAME[=LIBRARY][;...]``: install each, as mysqld does at start.

        A plugin that fails to load is logged and skipped; the errors are returned.
        """
        errors = []
        for item in filter(None, (part.strip() for part in option.split(";"))):
            name = item.split("=", 1)[0].strip()
            try:
                self.install(name)
            except MySQLError as exc:
                errorlog.log(
                    _log,
                    logging.ERROR,
                    f"Couldn't load plugin named '{name}': {exc.message}",
                    subsystem="Server",
                )
                errors.append(exc)
        return errors

    def shutdown(self) -> None:
        """Deinitialise every plugin, most recently installed first (no refusal at shutdown)."""
        with self._lock:
            for installed in reversed(list(self._installed.values())):
                self._remove(installed)

    def _construct(self, name: str, plugin_class: type[ReplicationPlugin]) -> ReplicationPlugin:
        services = PluginServices(
            name,
            PluginVariables(name, self._system, self._status, plugin_class.status_prefixes),
            self._threads,
            ErrorLog(name),
            self._bound(name),
        )
        try:
            return plugin_class(services)
        except Exception as exc:  # noqa: BLE001 - any init failure fails INSTALL
            self._unregister_variables(name)
            raise MySQLError.of(
                ER_CANT_INITIALIZE_UDF, name, f"Plugin initialization function failed: {exc}"
            ) from exc

    def _remove(self, installed: InstalledPlugin) -> None:
        self._registry.unregister(installed.name)
        self._discard(installed.name, installed.instance)
        del self._installed[installed.name]

    def _discard(self, name: str, instance: ReplicationPlugin) -> None:
        try:
            instance.deinit()
        except Exception as exc:  # noqa: BLE001 - deinit failures are only logged
            errorlog.log(_log, logging.ERROR, f"Plugin '{name}' deinit failed", exc_info=exc)
        self._unregister_variables(name)

    def _unregister_variables(self, name: str) -> None:
        self._system.unregister_owner(name)
        self._status.unregister_owner(name)
        if self._unregister is not None:
            self._unregister(name)
