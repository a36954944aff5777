"""The ``group_replication`` plugin descriptor: its variables, SQL commands, tables and
the transaction hooks through which a member's commits go to the group.

Built only on :mod:`rpl.observers`. The group communication engine is etcd
(:mod:`rpl.group_replication.gcs`): ``group_replication_group_seeds`` lists the etcd
members' client addresses (``host:port``), ``group_replication_local_address`` this
member's own (tried first).
"""

from __future__ import annotations

import functools
import threading
import time
import uuid
from collections.abc import Callable, Iterable

import attrs

from rpl.group_replication import variables as gr_vars
from rpl.group_replication.autorejoin import AutoRejoin
from rpl.group_replication.consistency import COUNTERS
from rpl.group_replication.gcs import Gcs, GcsError
from rpl.group_replication.group import (
    APPLIER_CHANNEL,
    CONSISTENCY_BEFORE_TEXT,
    CONSISTENCY_NOT_ALLOWED_TEXT,
    ER_GRP_TRX_CONSISTENCY_BEFORE,
    ER_GRP_TRX_CONSISTENCY_NOT_ALLOWED,
    GroupConfig,
    GroupMember,
)
from rpl.group_replication.members import MemberState
from rpl.group_replication.recovery import RECOVERY_CHANNEL, recovery
from rpl.group_replication.timings import CommitTimings
from rpl.observers import (
    CommitDecision,
    ObserverError,
    PluginTable,
    ReplicationPlugin,
    ServerServices,
    StatusVariable,
    SysVarValue,
    ThreadKind,
    TransParam,
    hookimpl,
)

ER_GROUP_REPLICATION_CONFIGURATION = 3092
ER_GROUP_REPLICATION_RUNNING = 3093
ER_GROUP_REPLICATION_APPLIER_INIT_ERROR = 3094
ER_GROUP_REPLICATION_COMMUNICATION_LAYER_SESSION_ERROR = 3096
REJOIN_VIEW_TIMEOUT = 60.0
"""Seconds an auto-rejoin attempt waits for its join view before it counts as failed."""
CONFIGURATION_TEXT = (
    "The server is not configured properly to be an active member of the group. "
    "Please see more details on error log."
)
COMMUNICATION_TEXT = (
    "The START GROUP_REPLICATION command failed as there was an error when initializing "
    "the group communication layer."
)
GcsFactory = Callable[[GroupConfig, str], Gcs]
"""Makes the group communication engine for a configuration and this member's
local address."""


def etcd_gcs(config: GroupConfig, local_address: str) -> Gcs:
    """The etcd binding over the seeds (the local address first)."""
    from rpl.group_replication.gcs.etcd import EtcdGcs

    endpoints = [a for a in (local_address, *config.seeds) if a]
    return EtcdGcs(
        endpoints=list(dict.fromkeys(endpoints)),
        group_name=config.group_name,
        ttl=config.expel_timeout + 5,
    )


class GroupReplicationPlugin(ReplicationPlugin):
    """Group Replication."""

    description = "Group Replication (certification over etcd, single- and multi-primary)"
    author = "rpl"
    gcs_factory: GcsFactory = staticmethod(etcd_gcs)
    status_prefixes = ("Gr_",)

    def __init__(self, services: ServerServices) -> None:
        super().__init__(services)
        self._lock = threading.Lock()
        self.member: GroupMember | None = None
        self._forcing = threading.Lock()
        self._autorejoin = AutoRejoin(services.threads, services.error_log)
        self.vars = gr_vars.register(
            services.variables,
            self._check_not_running,
            self._check_force_members,
            self._check_autorejoin_tries,
        )
        services.variables.register_status_variable(
            StatusVariable("group_replication_primary_member", self._primary_member)
        )
        for counter in COUNTERS:
            for suffix in ("count", "time_sum"):
                services.variables.register_status_variable(
                    StatusVariable(
                        f"Gr_transactions_consistency_{counter}_{suffix}",
                        functools.partial(self._consistency_counter, counter, suffix),
                        self._reset_consistency_counters,
                    )
                )
        self.timings = CommitTimings()
        for variable in self.timings.status_variables():
            services.variables.register_status_variable(variable)
        commands = services.commands
        commands.register_command("START GROUP_REPLICATION", self._start, "GROUP_REPLICATION_ADMIN")
        commands.register_command("STOP GROUP_REPLICATION", self._stop, "GROUP_REPLICATION_ADMIN")
        services.tables.register_table(
            PluginTable("replication_group_members", gr_vars.MEMBER_COLUMNS, self._member_rows)
        )
        services.tables.register_table(
            PluginTable("replication_group_member_stats", gr_vars.STATS_COLUMNS, self._stats_rows)
        )

    # ---------------------------------------------------------- commands
    def _check_not_running(self) -> None:
        if self.member is not None:
            raise ObserverError(
                "This option cannot be changed while Group Replication is running.",
                errno=ER_GROUP_REPLICATION_RUNNING,
            )

    def _config(self) -> GroupConfig:
        """The start's configuration; ObserverError 3092 when it is not usable."""
        log = self.services.error_log
        name = self.vars.text("group_replication_group_name")
        if not name:
            log.error(
                "Plugin group_replication reported: 'The group_replication_group_name "
                "option is mandatory'"
            )
            raise ObserverError(CONFIGURATION_TEXT, errno=ER_GROUP_REPLICATION_CONFIGURATION)
        try:
            name = str(uuid.UUID(name))
        except ValueError:
            log.error(
                f"Plugin group_replication reported: 'The group_replication_group_name "
                f"field is not a valid UUID' ({name})"
            )
            raise ObserverError(
                CONFIGURATION_TEXT, errno=ER_GROUP_REPLICATION_CONFIGURATION
            ) from None
        seeds = tuple(
            s.strip()
            for s in self.vars.text("group_replication_group_seeds").split(",")
            if s.strip()
        )
        local = self.vars.text("group_replication_local_address")
        if not seeds and not local:
            log.error(
                "Plugin group_replication reported: 'Unable to join the group: "
                "group_replication_group_seeds and group_replication_local_address "
                "are empty'"
            )
            raise ObserverError(CONFIGURATION_TEXT, errno=ER_GROUP_REPLICATION_CONFIGURATION)
        for address in (*seeds, local):
            if address and not gr_vars.valid_address(address):
                log.error(
                    f"Plugin group_replication reported: 'Invalid address {address!r} "
                    "in the group seeds or local address'"
                )
                raise ObserverError(CONFIGURATION_TEXT, errno=ER_GROUP_REPLICATION_CONFIGURATION)
        forced = self.vars.text("group_replication_force_members")
        if forced.strip():
            log.error(
                "Plugin group_replication reported: 'group_replication_force_members must "
                f"be empty on group start. Current value: '{forced}''"
            )
            raise ObserverError(CONFIGURATION_TEXT, errno=ER_GROUP_REPLICATION_CONFIGURATION)
        return GroupConfig(
            group_name=name,
            seeds=seeds,
            bootstrap=bool(self.vars.value("group_replication_bootstrap_group")),
            single_primary=bool(self.vars.value("group_replication_single_primary_mode")),
            expel_timeout=int(self.vars.value("group_replication_member_expel_timeout") or 0),
            unreachable_majority_timeout=int(
                self.vars.value("group_replication_unreachable_majority_timeout") or 0
            ),
            exit_state_action=self.vars.text("group_replication_exit_state_action"),
            weight=int(self.vars.value("group_replication_member_weight") or 0),
            recovery_user=self.vars.text("group_replication_recovery_user"),
            recovery_password=self.vars.text("group_replication_recovery_password"),
            local_address=local,
            recovery_retry_count=int(
                self.vars.value("group_replication_recovery_retry_count") or 0
            ),
            recovery_reconnect_interval=int(
                self.vars.value("group_replication_recovery_reconnect_interval") or 0
            ),
        )

    def _start(self, thread_id: int) -> None:
        """START GROUP_REPLICATION."""
        with self._lock:
            if self.member is not None:
                raise ObserverError(
                    "The START GROUP_REPLICATION command failed since the group is already "
                    "running.",
                    errno=ER_GROUP_REPLICATION_RUNNING,
                )
            self._join(self._config())

    def _join(self, config: GroupConfig) -> GroupMember:
        """Make the member of ``config`` this server's and join (lock held);
        ObserverError (3096, 3092) when the engine does not start or the join fails,
        and then no member is left.
        """
        services = self.services
        log = services.error_log
        try:
            gcs = self.gcs_factory(config, config.local_address)
        except GcsError as exc:
            log.error(
                f"Plugin group_replication reported: 'Error on group communication "
                f"engine start: {exc}'"
            )
            self.member = None
            raise ObserverError(
                COMMUNICATION_TEXT,
                errno=ER_GROUP_REPLICATION_COMMUNICATION_LAYER_SESSION_ERROR,
            ) from exc
        member = GroupMember(
            config,
            gcs,
            services.server,
            services.channels.applier_channel(APPLIER_CHANNEL, high_priority=True),
            log,
            recovery(services.channels),
        )
        member.on_expelled = self._expelled
        log.note(
            f"Plugin group_replication reported: 'Group communication engine etcd "
            f"joining group {config.group_name}'"
        )
        self.member = member  # before the join: its first view's commits keep the order
        try:
            member.start()
        except GcsError as exc:
            log.error(f"Plugin group_replication reported: 'Unable to join the group: {exc}'")
            member.stop()
            self.member = None
            raise ObserverError(
                CONFIGURATION_TEXT, errno=ER_GROUP_REPLICATION_CONFIGURATION
            ) from exc
        return member

    # ------------------------------------------------------- auto-rejoin
    def _expelled(self, member: GroupMember) -> None:
        """The group expelled ``member`` (or its majority timeout ran out) and it has
        left: the auto-rejoin procedure, or at once the exit state action.
        """
        if self.member is not member:
            return  # STOP GROUP_REPLICATION came first
        tries = int(self.vars.value("group_replication_autorejoin_tries") or 0)
        if tries == 0:
            member.exit_state_action()
            return
        self._autorejoin.start(
            tries, lambda: self._attempt_rejoin(member), member.exit_state_action
        )

    def _attempt_rejoin(self, failed: GroupMember) -> bool:
        """One auto-rejoin attempt: STOP and START with the current option values (never
        bootstrapping); whether the member joined a view. A failed attempt leaves an
        ERROR member behind, as the procedure shows it between attempts.
        """
        with self._lock:
            if self.member is None or self._autorejoin.aborted:
                return False
            self.member.stop(final_state=MemberState.ERROR)
            try:
                member = self._join(attrs.evolve(self._config(), bootstrap=False))
            except ObserverError:
                self.member = failed
                return False
        deadline = time.monotonic() + REJOIN_VIEW_TIMEOUT
        while time.monotonic() < deadline and not self._autorejoin.aborted:
            if member.state is MemberState.ERROR:
                break
            if member.view_id:
                return True
            time.sleep(0.1)
        with self._lock:
            if self.member is member:
                member.stop(final_state=MemberState.ERROR)
        return False

    def _stop(self, thread_id: int) -> None:
        """STOP GROUP_REPLICATION (a member that is not running: nothing to do); it
        ends an auto-rejoin procedure first.
        """
        self._autorejoin.abort()
        with self._lock:
            member = self.member
            if member is not None:
                member.stop()  # the hooks still see it: nothing commits past the group
            self.member = None
        if member is not None:
            self.services.error_log.note(
                "Plugin group_replication reported: 'Plugin 'group_replication' has been stopped.'"
            )

    def _check_autorejoin_tries(self, value: SysVarValue) -> None:
        if self._autorejoin.running:
            raise ObserverError(
                "Cannot update the number of auto-rejoin retry attempts when an auto-rejoin "
                "process is already running.",
                errno=gr_vars.ER_WRONG_VALUE_FOR_VAR,
            )

    def _check_force_members(self, value: SysVarValue) -> None:
        """SET GLOBAL group_replication_force_members, as MySQL's check does: empty is
        always accepted; a list only while this member is ONLINE and cannot reach a
        majority, and then the new membership is forced before the SET returns. A
        refusal is ER_WRONG_VALUE_FOR_VAR (1231), the reason in the error log.
        """
        text = "" if value is None else str(value)
        if not text:
            return
        log = self.services.error_log
        if not self._forcing.acquire(blocking=False):
            log.error(
                "Plugin group_replication reported: 'There is one "
                "group_replication_force_members operation already ongoing.'"
            )
            raise ObserverError("force_members already running")
        try:
            member = self.member
            if member is None or not member.in_minority:
                log.error(
                    "Plugin group_replication reported: 'group_replication_force_members "
                    "can only be updated when Group Replication is running and a majority "
                    "of the members are unreachable.'"
                )
                raise ObserverError("force_members not allowed")
            if member.state is not MemberState.ONLINE:
                log.error(
                    "Plugin group_replication reported: 'Member is not ONLINE, it is not "
                    "possible to force a new group membership.'"
                )
                raise ObserverError("force_members on a member not ONLINE")
            addresses = [a.strip() for a in text.split(",") if a.strip()]
            bad = [a for a in addresses if not gr_vars.valid_address(a)]
            try:
                if bad or not addresses:
                    raise GcsError(f"invalid address {', '.join(bad) or repr(text)}")
                member.force_members(addresses)
            except GcsError as exc:
                log.error(
                    "Plugin group_replication reported: 'Error setting "
                    f"group_replication_force_members value '{text}' on group "
                    f"communication interfaces' ({exc})"
                )
                raise ObserverError(str(exc)) from exc
            log.note(
                "Plugin group_replication reported: 'The group_replication_force_members "
                f"value '{text}' was set in the group communication interfaces'"
            )
        finally:
            self._forcing.release()

    def check_uninstall(self) -> None:
        """UNINSTALL PLUGIN is refused while the member runs (as MySQL refuses it)."""
        if self.member is not None:
            raise ObserverError(
                "Plugin is busy, it cannot be uninstalled. To force it, "
                "stop Group Replication first."
            )

    def deinit(self) -> None:
        """Leave the group if still in it."""
        self._stop(0)

    def _consistency_counter(self, counter: str, suffix: str) -> int:
        """Gr_transactions_consistency_*: waits and their microseconds (this run's)."""
        member = self.member
        if member is None:
            return 0
        table = member.consistency.counts if suffix == "count" else member.consistency.microseconds
        return table[counter]

    def _reset_consistency_counters(self) -> None:
        member = self.member
        if member is not None:
            member.consistency.reset()

    # ------------------------------------------------------------- hooks
    @hookimpl
    def begin(self, param: TransParam) -> None:
        """group_replication_consistency at a transaction's start (WL#10379): on a new
        primary applying the old one's backlog, BEFORE_ON_PRIMARY_FAILOVER and the
        levels above it wait until it is applied; BEFORE (and BEFORE_AND_AFTER) waits
        until what the group ordered before it is committed here; then every
        transaction, whatever its level, waits while this member's applier holds
        prepared AFTER transactions (FR-06). BEFORE, AFTER and BEFORE_AND_AFTER are
        refused outside ONLINE (FR-04). Not while the member is OFFLINE, nor on the
        group's own channels.
        """
        member = self.member
        if (
            member is None
            or member.state is MemberState.OFFLINE
            or param.channel_name in (APPLIER_CHANNEL, RECOVERY_CHANNEL)
        ):
            return
        level = param.group_replication_consistency
        if level in gr_vars.AFTER_LEVELS and member.state is not MemberState.ONLINE:
            raise ObserverError(
                CONSISTENCY_NOT_ALLOWED_TEXT, errno=ER_GRP_TRX_CONSISTENCY_NOT_ALLOWED
            )
        failover = level in gr_vars.FAILOVER_HOLD_LEVELS and member.applying_backlog()
        waits = failover or level in gr_vars.WAITING_LEVELS
        if not waits and not member.consistency.holding():
            return
        timeout = float(param.hold_timeout)
        server = self.services.server
        with server.thd_wait():
            if failover:
                member.hold_for_primary_failover(timeout)
            if level in gr_vars.WAITING_LEVELS:
                begun = time.perf_counter_ns()
                until = member.sync_before_execution(timeout)
                if not server.wait_for_gtid_set(until, timeout):
                    raise ObserverError(
                        CONSISTENCY_BEFORE_TEXT, errno=ER_GRP_TRX_CONSISTENCY_BEFORE
                    )
                member.consistency.count("before_begin", begun)
            member.hold_behind_prepared(timeout)

    @hookimpl
    def before_dml(self, param: TransParam) -> None:
        """Refuse what certification cannot handle: logging that is not ROW."""
        if self.member is None or param.thread_kind is not ThreadKind.CLIENT:
            return
        if param.binlog_format != "ROW":
            self.services.error_log.error(
                "Plugin group_replication reported: 'Binlog format should be ROW for Group "
                "Replication'"
            )
            raise ObserverError("Binlog format should be ROW for Group Replication")

    @hookimpl
    def before_commit(self, param: TransParam) -> CommitDecision | None:
        """Certify a local commit; hold every commit to the group's order."""
        member = self.member
        if member is None or member.state is MemberState.OFFLINE:
            return None
        if param.thread_kind is ThreadKind.PLUGIN_APPLIER and param.channel_name == APPLIER_CHANNEL:
            if param.gtid is None:
                return None
            member.applier_prepared(param.gtid)
            return self._in_order(member, param.gtid, param.hold_timeout)
        if (
            param.thread_kind is ThreadKind.REPLICA_APPLIER
            and param.channel_name == RECOVERY_CHANNEL
            and member.state is MemberState.RECOVERING
        ):
            return None  # distributed recovery: the donor's history, already the group's
        gtid, stages = member.local_commit(
            param.gtid_executed,
            param.write_set,
            param.trx_cache,
            param.server_id,
            float(param.hold_timeout),
            param.group_replication_consistency,
        )
        waiting = time.perf_counter_ns()
        decision = self._in_order(member, gtid, param.hold_timeout)
        self.timings.decided(
            param.thread_id, {**stages, "order_wait": time.perf_counter_ns() - waiting}
        )
        return decision

    @hookimpl
    def after_commit(self, param: TransParam) -> None:
        """Count a local commit's server commit time (:mod:`.timings`); an applied AFTER
        transaction releases the transactions held behind it.
        """
        member = self.member
        if (
            member is not None
            and param.gtid is not None
            and param.thread_kind is ThreadKind.PLUGIN_APPLIER
            and param.channel_name == APPLIER_CHANNEL
        ):
            member.consistency.committed(param.gtid)
            return
        self.timings.committed(param.thread_id)

    @hookimpl
    def after_rollback(self, param: TransParam) -> None:
        """A transaction certified here that did not commit is not counted."""
        self.timings.abandoned(param.thread_id)

    @staticmethod
    def _in_order(member: GroupMember, gtid: str, timeout: float) -> CommitDecision:
        gno = int(gtid.rsplit(":", 1)[1])
        if not member.order.wait_turn(gno, float(timeout)):
            member.order.passed(gno)
            raise ObserverError("Timeout waiting for the group's commit order.", errno=3100)
        return CommitDecision(gtid, queued=lambda: member.order.passed(gno))

    # ------------------------------------------------------------ tables
    def _primary_member(self) -> str:
        member = self.member
        return (member.primary or "") if member is not None else ""

    def _member_rows(self) -> Iterable[tuple[object, ...]]:
        member = self.member
        server = self.services.server
        if member is None:
            return [
                (
                    APPLIER_CHANNEL,
                    server.server_uuid,
                    server.host,
                    server.port,
                    "OFFLINE",
                    "",
                    "",
                    "",
                )
            ]
        with member._lock:
            members = sorted(member.members.values(), key=lambda m: m.member_id)
            return [
                (
                    APPLIER_CHANNEL,
                    m.member_id,
                    m.host,
                    m.port,
                    m.shown_state.value,
                    m.role.value if m.shown_state is MemberState.ONLINE else "",
                    m.version,
                    gr_vars.COMMUNICATION_STACK,
                )
                for m in members
            ] or [
                (
                    APPLIER_CHANNEL,
                    member.me,
                    server.host,
                    server.port,
                    member.state.value,
                    "",
                    server.version,
                    gr_vars.COMMUNICATION_STACK,
                )
            ]

    def _stats_rows(self) -> Iterable[tuple[object, ...]]:
        member = self.member
        if member is None:
            return []
        return [stats.row(APPLIER_CHANNEL) for stats in member.member_stats()]
