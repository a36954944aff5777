"""The plugin descriptor: what an entry point in group ``rpl.plugins`` names.

A plugin distribution declares, in its ``pyproject.toml``::

    [project.entry-points."rpl.plugins"]
    rpl_semi_sync_master = "rpl.semisync_master.plugin:SemisyncMasterPlugin"

The entry point's name is the plugin's name (INSTALL PLUGIN <name>); its object
is a subclass of :class:`ReplicationPlugin`. The server constructs it with the
:class:`rpl.observers.ServerServices` scoped to the plugin (MySQL's plugin
``init``), registers its ``@hookimpl`` methods as observers, and on UNINSTALL
asks :meth:`ReplicationPlugin.check_uninstall`, unregisters the observers, waits
for calls in flight to return and calls :meth:`ReplicationPlugin.deinit`.
"""

from __future__ import annotations

from typing import ClassVar

from rpl.observers.services import ServerServices


class ReplicationPlugin:
    """Base class of a replication plugin (``st_mysql_plugin`` + its observers)."""

    description: ClassVar[str] = ""
    """One line for SHOW PLUGINS and ``rpl plugins``."""
    author: ClassVar[str] = ""
    license: ClassVar[str] = "GPL"
    status_prefixes: ClassVar[tuple[str, ...]] = ()
    """Prefixes its status variables may have besides ``<plugin name>_`` (MySQL's
    Group Replication also names some ``Gr_...``)."""

    def __init__(self, services: ServerServices) -> None:
        """Initialise the plugin: register variables, start threads. Raising
        fails INSTALL PLUGIN; whatever was registered so far is removed.
        """
        self.services = services

    def check_uninstall(self) -> None:
        """Refuse UNINSTALL PLUGIN while the plugin is in use by raising
        :class:`rpl.observers.ObserverError` with the reason (the client gets
        ER_PLUGIN_CANNOT_BE_UNINSTALLED). The default allows it.
        """

    def deinit(self) -> None:
        """Release what the plugin holds (stop its threads). Called after its
        observers were unregistered and no call is inside them any more.
        """
