"""The ``rpl_semi_sync_master`` plugin descriptor and its system variables.

The variables carry MySQL's names, types, defaults, ranges and GLOBAL scope.
The wait points, the ACK receiver and the status counters are the subject of
the semisync issue; until they land this plugin declares its variables only and
observes no hook.
"""

from __future__ import annotations

from typing import Final

from rpl.observers import ReplicationPlugin, ServerServices, SystemVariable, VarType

UINT32_MAX: Final = 4294967295

SYSTEM_VARIABLES: Final = (
    SystemVariable("rpl_semi_sync_master_enabled", VarType.BOOL, False,
                   "Enable semi-synchronous replication on the source."),
    SystemVariable("rpl_semi_sync_master_timeout", VarType.INT, 10000,
                   "Milliseconds a commit waits for an ACK before semisync switches off.",
                   min_value=0, max_value=UINT32_MAX),
    SystemVariable("rpl_semi_sync_master_trace_level", VarType.INT, 32,
                   "Trace bits of the semisync source.", min_value=0, max_value=UINT32_MAX),
    SystemVariable("rpl_semi_sync_master_wait_for_slave_count", VarType.INT, 1,
                   "ACKs from this many distinct replicas release a commit.",
                   min_value=1, max_value=65535),
    SystemVariable("rpl_semi_sync_master_wait_no_slave", VarType.BOOL, True,
                   "Keep waiting while fewer replicas than required are connected."),
    SystemVariable("rpl_semi_sync_master_wait_point", VarType.ENUM, "AFTER_SYNC",
                   "Where a commit waits for the ACK.",
                   enum_values=("AFTER_SYNC", "AFTER_COMMIT")),
)


class SemisyncMasterPlugin(ReplicationPlugin):
    """Semisynchronous replication, source side."""

    description = "Semi-synchronous replication master"
    author = "rpl"

    def __init__(self, services: ServerServices) -> None:
        super().__init__(services)
        self.variables = {variable.name: services.variables.register_system_variable(variable)
                          for variable in SYSTEM_VARIABLES}
