"""Distributed recovery: a joiner catches up with a donor before it goes ONLINE.

The joiner replicates from the donor with GTID auto-positioning until it has executed
every GTID the group had certified at its join view, then stops replicating; what the
group delivered since the view waits in the ``group_replication_applier`` channel and is
applied after. The replication is the server's own asynchronous replica (its receiver,
relay log and applier: crash-safe as any replica), driven through
:meth:`rpl.observers.ServerControl.execute`.

Differs from MySQL: MySQL replicates through a channel of its own named
``group_replication_recovery``; here it is the server's default channel (``''``), so a
member must not also be an asynchronous replica while it recovers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rpl.group_replication.gtid_sets import GtidSet
from rpl.group_replication.members import Member
from rpl.observers import QueryError

if TYPE_CHECKING:
    from rpl.group_replication.group import GroupMember

RECOVERY_TIMEOUT = 3600.0
"""Seconds a recovery may take before the joiner gives up (ERROR)."""


def _quoted(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def recover_from_donor(member: GroupMember, donor: Member, until: GtidSet) -> None:
    """Replicate from ``donor`` until ``until`` is executed here; RuntimeError if not."""
    server = member.server
    config = member.config
    member.log.note(
        "Plugin group_replication reported: 'Establishing group recovery connection with "
        f"a possible donor. Attempt 1/1' (donor {donor.address})"
    )
    try:
        server.execute("STOP SLAVE")
        server.execute(
            f"CHANGE MASTER TO MASTER_HOST={_quoted(donor.host)}, MASTER_PORT={donor.port}, "
            f"MASTER_USER={_quoted(config.recovery_user)}, "
            f"MASTER_PASSWORD={_quoted(config.recovery_password)}, MASTER_AUTO_POSITION=1"
        )
        server.execute("START SLAVE")
        if not server.wait_for_gtid_set(str(until), RECOVERY_TIMEOUT):
            raise RuntimeError(f"the donor did not send {until} in time")
        server.execute("STOP SLAVE")
        server.execute("RESET SLAVE ALL")
    except QueryError as exc:
        raise RuntimeError(f"recovery statement failed: {exc}") from exc
    member.log.note(
        "Plugin group_replication reported: 'Terminating existing group replication donor "
        "connection and purging the corresponding logs.'"
    )
