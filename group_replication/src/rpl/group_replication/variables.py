"""The ``group_replication_*`` system variables, with MySQL 8.0's defaults, scopes and
ranges, and the columns of the plugin's performance_schema tables.

Differences from MySQL, because the group communication engine is etcd: the seeds and
the local address name etcd members' client addresses; ``group_replication_recovery_user``
and ``..._password`` hold distributed recovery's credentials (MySQL keeps them in the
``group_replication_recovery`` channel's CHANGE MASTER).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable

from rpl.observers import (
    ObserverError,
    Scope,
    SystemVariable,
    SystemVariableHandle,
    SysVarValue,
    VariableRegistry,
    VarType,
)

ER_WRONG_VALUE_FOR_VAR = 1231
CONSISTENCY_LEVELS: tuple[str, ...] = (
    "EVENTUAL",
    "BEFORE_ON_PRIMARY_FAILOVER",
    "BEFORE",
    "AFTER",
    "BEFORE_AND_AFTER",
)
"""``group_replication_consistency``'s values, MySQL 8.0's (its ENUM order)."""
WAITING_LEVELS: frozenset[str] = frozenset(("BEFORE", "BEFORE_AND_AFTER"))
"""The levels whose transactions wait at their start for what was ordered before."""
AFTER_LEVELS: frozenset[str] = frozenset(("AFTER", "BEFORE_AND_AFTER"))
"""The levels whose commits wait for every ONLINE member's prepared acknowledgement."""
FAILOVER_HOLD_LEVELS: frozenset[str] = frozenset(CONSISTENCY_LEVELS[1:])
"""The levels whose transactions a new primary holds at their start while it applies the
backlog the old primary left (BEFORE_ON_PRIMARY_FAILOVER and every level above it in
MySQL's order)."""
COMMUNICATION_STACK = "etcd"
"""MEMBER_COMMUNICATION_STACK (MySQL: XCom or MySQL)."""

MEMBER_COLUMNS: tuple[tuple[str, str], ...] = (
    ("CHANNEL_NAME", "char(64)"),
    ("MEMBER_ID", "char(36)"),
    ("MEMBER_HOST", "char(255)"),
    ("MEMBER_PORT", "int"),
    ("MEMBER_STATE", "char(64)"),
    ("MEMBER_ROLE", "char(64)"),
    ("MEMBER_VERSION", "char(64)"),
    ("MEMBER_COMMUNICATION_STACK", "char(64)"),
)
STATS_COLUMNS: tuple[tuple[str, str], ...] = (
    ("CHANNEL_NAME", "char(64)"),
    ("VIEW_ID", "char(60)"),
    ("MEMBER_ID", "char(36)"),
    ("COUNT_TRANSACTIONS_IN_QUEUE", "bigint unsigned"),
    ("COUNT_TRANSACTIONS_CHECKED", "bigint unsigned"),
    ("COUNT_CONFLICTS_DETECTED", "bigint unsigned"),
    ("COUNT_TRANSACTIONS_ROWS_VALIDATING", "bigint unsigned"),
    ("TRANSACTIONS_COMMITTED_ALL_MEMBERS", "longtext"),
    ("LAST_CONFLICT_FREE_TRANSACTION", "text"),
    ("COUNT_TRANSACTIONS_REMOTE_IN_APPLIER_QUEUE", "bigint unsigned"),
    ("COUNT_TRANSACTIONS_REMOTE_APPLIED", "bigint unsigned"),
    ("COUNT_TRANSACTIONS_LOCAL_PROPOSED", "bigint unsigned"),
    ("COUNT_TRANSACTIONS_LOCAL_ROLLBACK", "bigint unsigned"),
)

_ADDRESS = re.compile(r"^[A-Za-z0-9_.\-\[\]:]+:\d{1,5}$")


def valid_address(text: str) -> bool:
    """Whether ``text`` is ``host:port`` with a port in 1..65535."""
    if not _ADDRESS.match(text):
        return False
    return 1 <= int(text.rsplit(":", 1)[1]) <= 65535


def _check_group_name(value: SysVarValue) -> None:
    if value is None or value == "":
        return
    try:
        uuid.UUID(str(value))
    except ValueError:
        raise ObserverError(
            "The group_replication_group_name is not a valid UUID", errno=ER_WRONG_VALUE_FOR_VAR
        ) from None


class GroupVariables:
    """The registered variables, read by name."""

    def __init__(self, handles: dict[str, SystemVariableHandle]) -> None:
        self._handles = handles

    def value(self, name: str) -> SysVarValue:
        """The current global value."""
        return self._handles[name].value

    def text(self, name: str) -> str:
        """The current global value as text ('' for NULL)."""
        value = self._handles[name].value
        return "" if value is None else str(value)


def register(
    registry: VariableRegistry,
    not_running: Callable[[], None],
    force_members: Callable[[SysVarValue], None] | None = None,
    autorejoin_tries: Callable[[SysVarValue], None] | None = None,
) -> GroupVariables:
    """Register every variable; ``not_running`` refuses (raises) a change of a variable
    that must not change while the member runs; ``force_members`` checks (and carries
    out) a new ``group_replication_force_members``; ``autorejoin_tries`` refuses a new
    ``group_replication_autorejoin_tries`` while an auto-rejoin procedure runs.
    """

    def frozen_while_running(
        extra: Callable[[SysVarValue], None] | None = None,
    ) -> Callable[[SysVarValue], None]:
        def check(value: SysVarValue) -> None:
            not_running()
            if extra is not None:
                extra(value)

        return check

    declared = [
        SystemVariable(
            "group_replication_group_name",
            VarType.STR,
            None,
            "The group's name: a UUID, the UUID of the group's GTIDs",
            check=frozen_while_running(_check_group_name),
        ),
        SystemVariable(
            "group_replication_group_seeds",
            VarType.STR,
            "",
            "etcd members' client addresses (host:port, comma separated)",
        ),
        SystemVariable(
            "group_replication_local_address",
            VarType.STR,
            "",
            "This member's etcd member's client address (host:port)",
            check=frozen_while_running(),
        ),
        SystemVariable(
            "group_replication_bootstrap_group",
            VarType.BOOL,
            False,
            "Start the group with this member",
        ),
        SystemVariable(
            "group_replication_start_on_boot",
            VarType.BOOL,
            True,
            "Start Group Replication when the server starts",
        ),
        SystemVariable(
            "group_replication_single_primary_mode",
            VarType.BOOL,
            True,
            "One primary takes writes; the others are read-only",
            check=frozen_while_running(),
        ),
        SystemVariable(
            "group_replication_enforce_update_everywhere_checks",
            VarType.BOOL,
            False,
            "Multi-primary mode's stricter checks",
            check=frozen_while_running(),
        ),
        SystemVariable(
            "group_replication_member_expel_timeout",
            VarType.INT,
            5,
            "Seconds a suspected member has before it is expelled",
            min_value=0,
            max_value=3600,
        ),
        SystemVariable(
            "group_replication_unreachable_majority_timeout",
            VarType.INT,
            0,
            "Seconds without a majority before the member goes to ERROR (0: wait)",
            min_value=0,
            max_value=31536000,
        ),
        SystemVariable(
            "group_replication_force_members",
            VarType.STR,
            "",
            "Force a new membership (after a majority is lost): a comma-separated list of "
            "the members' group_replication_local_address values",
            check=force_members,
        ),
        SystemVariable(
            "group_replication_exit_state_action",
            VarType.ENUM,
            "READ_ONLY",
            "What a member does when it leaves the group involuntarily",
            enum_values=("ABORT_SERVER", "OFFLINE_MODE", "READ_ONLY"),
        ),
        SystemVariable(
            "group_replication_autorejoin_tries",
            VarType.INT,
            3,
            "Attempts an expelled member makes to rejoin the group by itself, 300 s apart "
            "(0: none)",
            min_value=0,
            max_value=2016,
            check=autorejoin_tries,
        ),
        SystemVariable(
            "group_replication_member_weight",
            VarType.INT,
            50,
            "Weight in the primary election",
            min_value=0,
            max_value=100,
        ),
        SystemVariable(
            "group_replication_consistency",
            VarType.ENUM,
            "EVENTUAL",
            "Transaction consistency guarantee",
            scope=Scope.BOTH,
            enum_values=CONSISTENCY_LEVELS,
            global_privileges=("SUPER", "GROUP_REPLICATION_ADMIN"),
        ),
        SystemVariable(
            "group_replication_recovery_retry_count",
            VarType.INT,
            10,
            "Donor connection attempts of distributed recovery",
            min_value=0,
            max_value=31536000,
        ),
        SystemVariable(
            "group_replication_recovery_reconnect_interval",
            VarType.INT,
            60,
            "Seconds between donor connection rounds",
            min_value=0,
            max_value=31536000,
        ),
        SystemVariable(
            "group_replication_transaction_size_limit",
            VarType.INT,
            150000000,
            "The largest transaction the group accepts (bytes)",
            min_value=0,
            max_value=2147483647,
        ),
        SystemVariable(
            "group_replication_recovery_user",
            VarType.STR,
            "root",
            "The account distributed recovery replicates from a donor with",
        ),
        SystemVariable(
            "group_replication_recovery_password", VarType.STR, "", "That account's password"
        ),
    ]
    handles = {v.name: registry.register_system_variable(v) for v in declared}
    return GroupVariables(handles)
