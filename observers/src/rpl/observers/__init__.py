"""rpl.observers: the replication observer interfaces of rpl (WL#4398).

This distribution is the whole contract between the rpl server and its plugins:
pluggy markers, the five hook specifications (their docstrings are the reference
documentation), the hook parameters, the server services a plugin may use, the
variable declarations and the plugin base class. It contains no server code.
"""

from rpl.observers.errors import NetError, ObserverError, QueryError, UserVariableNotFound
from rpl.observers.hookspecs import (
    HOOKS,
    INTERFACES,
    BinlogRelayIOObserver,
    BinlogStorageObserver,
    BinlogTransmitObserver,
    ServerStateObserver,
    TransactionObserver,
)
from rpl.observers.markers import ENTRY_POINT_GROUP, PROJECT_NAME, hookimpl, hookspec
from rpl.observers.params import (
    BinlogDumpFlags,
    BinlogRelayFlags,
    BinlogStorageParam,
    CommitDecision,
    RelayIOParam,
    ServerStateParam,
    TableInfo,
    ThreadKind,
    TransFlags,
    TransmitParam,
    TransParam,
)
from rpl.observers.plugin import ReplicationPlugin
from rpl.observers.services import (
    ApplierChannel,
    ChannelService,
    CommandRegistry,
    ErrorLog,
    PluginCommand,
    PluginTable,
    ServerControl,
    ServerNet,
    ServerServices,
    SourceConnection,
    SystemVariableHandle,
    TableRegistry,
    ThreadHandle,
    ThreadRegistry,
    ThreadType,
    UserVariables,
    VariableRegistry,
)
from rpl.observers.variables import (
    Scope,
    StatusValue,
    StatusVariable,
    SystemVariable,
    SysVarValue,
    VarType,
)

__all__ = [
    "ThreadKind",
    "TableRegistry",
    "ServerControl",
    "PluginTable",
    "PluginCommand",
    "CommitDecision",
    "CommandRegistry",
    "ChannelService",
    "ApplierChannel",
    "ENTRY_POINT_GROUP",
    "HOOKS",
    "INTERFACES",
    "PROJECT_NAME",
    "BinlogDumpFlags",
    "BinlogRelayFlags",
    "BinlogRelayIOObserver",
    "BinlogStorageObserver",
    "BinlogStorageParam",
    "BinlogTransmitObserver",
    "ErrorLog",
    "NetError",
    "ObserverError",
    "QueryError",
    "RelayIOParam",
    "ReplicationPlugin",
    "Scope",
    "ServerNet",
    "ServerServices",
    "ServerStateObserver",
    "ServerStateParam",
    "SourceConnection",
    "StatusValue",
    "StatusVariable",
    "SysVarValue",
    "SystemVariable",
    "SystemVariableHandle",
    "TableInfo",
    "ThreadHandle",
    "ThreadRegistry",
    "ThreadType",
    "TransFlags",
    "TransParam",
    "TransactionObserver",
    "TransmitParam",
    "UserVariableNotFound",
    "UserVariables",
    "VarType",
    "VariableRegistry",
    "hookimpl",
    "hookspec",
]
