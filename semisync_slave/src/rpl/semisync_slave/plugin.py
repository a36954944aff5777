"""The ``rpl_semi_sync_slave`` plugin descriptor and its system variables.

The variables carry MySQL's names, types, defaults and GLOBAL scope. Requesting
semisync from the source and sending ACKs are the subject of the semisync
issue; until they land this plugin declares its variables only and observes no hook.
"""

from __future__ import annotations

from typing import Final

from rpl.observers import ReplicationPlugin, ServerServices, SystemVariable, VarType

UINT32_MAX: Final = 4294967295

SYSTEM_VARIABLES: Final = (
    SystemVariable("rpl_semi_sync_slave_enabled", VarType.BOOL, False,
                   "Enable semi-synchronous replication on the replica."),
    SystemVariable("rpl_semi_sync_slave_trace_level", VarType.INT, 32,
                   "Trace bits of the semisync replica.", min_value=0, max_value=UINT32_MAX),
)


class SemisyncSlavePlugin(ReplicationPlugin):
    """Semisynchronous replication, replica side."""

    description = "Semi-synchronous replication slave"
    author = "rpl"

    def __init__(self, services: ServerServices) -> None:
        super().__init__(services)
        self.variables = {variable.name: services.variables.register_system_variable(variable)
                          for variable in SYSTEM_VARIABLES}
