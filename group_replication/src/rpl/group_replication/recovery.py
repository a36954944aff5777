"""Distributed recovery: a joiner catches up with a donor before it goes ONLINE.

The joiner replicates from the donor through a receiver channel of its own named
``group_replication_recovery``, as MySQL's does: GTID auto-positioning, the
``group_replication_recovery_user`` / ``group_replication_recovery_password``
credentials, and ``UNTIL SQL_AFTER_GTIDS`` the GTIDs the group had certified at the join
view, so the channel's applier stops by itself once they are executed; then the channel
is stopped and purged (RESET SLAVE ALL on it: relay logs and settings gone). What the
group delivered since the view waits in the ``group_replication_applier`` channel and
is applied after.

The channel is the server's receiver machinery under that name
(:class:`rpl.observers.ReceiverChannel`): its own relay log
(``<relay_log>-group_replication_recovery.NNNNNN``) and info files, crash-safe as any
replica, visible in SHOW SLAVE STATUS (Channel_Name) and performance_schema's
replication tables while recovery runs. Its applier's transactions reach the
transaction hooks with ``thread_kind`` REPLICA_APPLIER and that channel name, so the
plugin does not certify them (they are the group's history). Since recovery no longer
uses the default channel ``''``, a member can be an asynchronous replica there too.

Donors, as MySQL tries them: the member that sent the certification state first, then
the other ONLINE members in turn, ``group_replication_recovery_retry_count`` attempts in
all (each logged "Attempt n/N"), waiting ``group_replication_recovery_reconnect_interval``
seconds after each round of every donor; an attempt fails when its donor refuses or
cannot be reached, or its channel stops before the GTIDs are applied.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from rpl.group_replication.gtid_sets import GtidSet
from rpl.group_replication.members import Member
from rpl.observers import ChannelService, QueryError, ReceiverChannel

if TYPE_CHECKING:
    from rpl.group_replication.group import GroupMember

RECOVERY_CHANNEL = "group_replication_recovery"
"""The channel distributed recovery replicates through (MySQL's name)."""
RECOVERY_TIMEOUT = 3600.0
"""Seconds a recovery may take before the joiner gives up (ERROR)."""


def recovery(channels: ChannelService) -> Callable[[GroupMember, Member, GtidSet], None]:
    """The recovery :class:`~rpl.group_replication.group.GroupMember` runs: replicate
    from a donor through ``channels``' ``group_replication_recovery`` channel.
    """

    def recover(member: GroupMember, donor: Member, until: GtidSet) -> None:
        channel = channels.receiver_channel(RECOVERY_CHANNEL)
        config = member.config
        attempts = max(config.recovery_retry_count, 1)
        for attempt in range(1, attempts + 1):
            candidates = _donors(member, donor)
            if not candidates:
                raise RuntimeError("no ONLINE member is left to recover from")
            current = candidates[(attempt - 1) % len(candidates)]
            try:
                recover_from_donor(member, current, until, channel, attempt=(attempt, attempts))
                return
            except RuntimeError as exc:
                if attempt == attempts:
                    raise
                member.log.error(
                    "Plugin group_replication reported: 'There was an error when connecting "
                    f"to the donor server ({current.address}): {exc}. Retrying with another "
                    "donor.'"
                )
            if attempt % len(candidates) == 0 and member.leaving(
                config.recovery_reconnect_interval
            ):
                raise RuntimeError("the member left the group during recovery")

    return recover


def _donors(member: GroupMember, first: Member) -> list[Member]:
    """The members recovery may replicate from, in the order it tries them: the one
    that sent the certification state first, then the other ONLINE members.
    """
    others = [m for m in member.online_members() if m.member_id != first.member_id]
    return [first, *others]


def recover_from_donor(
    member: GroupMember,
    donor: Member,
    until: GtidSet,
    channel: ReceiverChannel,
    timeout: float = RECOVERY_TIMEOUT,
    attempt: tuple[int, int] = (1, 1),
) -> None:
    """Replicate from ``donor`` through ``channel`` until ``until`` is executed here;
    RuntimeError if not (the channel's error says why). The channel is purged after,
    whatever happened.
    """
    config = member.config
    member.log.note(
        "Plugin group_replication reported: 'Establishing group recovery connection with "
        f"a possible donor. Attempt {attempt[0]}/{attempt[1]}' (donor {donor.address})"
    )
    try:
        _purge(channel)  # what a recovery cut short (a crash) left
        channel.configure(
            host=donor.host,
            port=donor.port,
            user=config.recovery_user,
            password=config.recovery_password,
            auto_position=True,
        )
        channel.start(until_sql_after_gtids=str(until))
        deadline = time.monotonic() + timeout
        while not channel.wait_until_applier_stops(min(1.0, deadline - time.monotonic())):
            if time.monotonic() >= deadline:
                raise RuntimeError(f"the donor did not send {until} in time")
        executed = GtidSet.parse(member.server.gtid_executed())
        if not until.issubset(executed):
            errno, message = channel.last_sql_error
            if not errno:
                errno, message = channel.last_io_error
            raise RuntimeError(
                f"the recovery channel stopped before {until} was applied: "
                f"error {errno}: {message or 'stopped'}"
            )
    except QueryError as exc:
        raise RuntimeError(f"recovery channel operation failed: {exc}") from exc
    finally:
        try:
            _purge(channel)
        except QueryError as exc:
            member.log.error(
                f"Plugin group_replication reported: 'Error when purging the recovery "
                f"channel: {exc}'"
            )
    member.log.note(
        "Plugin group_replication reported: 'Terminating existing group replication donor "
        "connection and purging the corresponding logs.'"
    )


def _purge(channel: ReceiverChannel) -> None:
    """Stop the channel and remove it (RESET SLAVE ALL FOR CHANNEL)."""
    channel.stop()
    channel.reset()
