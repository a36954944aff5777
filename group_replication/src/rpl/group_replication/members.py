"""Members as MySQL names them: states, roles, and the primary election.

States (``performance_schema.replication_group_members.MEMBER_STATE``): OFFLINE (the
plugin is installed, not in a group), RECOVERING (joined, catching up), ONLINE,
ERROR (left the group's work after a failure), UNREACHABLE (suspected by the failure
detector). Roles: PRIMARY and SECONDARY in single-primary mode, every ONLINE member
PRIMARY in multi-primary mode.

The election (single-primary mode, when the primary leaves or at bootstrap) is MySQL
8.0's: among the ONLINE members, the lowest MySQL version wins, then the highest
``group_replication_member_weight``, then the lowest ``server_uuid``. Every member runs
it on the same view, so every member elects the same primary.
"""

from __future__ import annotations

import enum
import json

import attrs


class MemberState(enum.Enum):
    """MEMBER_STATE."""

    OFFLINE = "OFFLINE"
    RECOVERING = "RECOVERING"
    ONLINE = "ONLINE"
    ERROR = "ERROR"
    UNREACHABLE = "UNREACHABLE"


class MemberRole(enum.Enum):
    """MEMBER_ROLE."""

    PRIMARY = "PRIMARY"
    SECONDARY = "SECONDARY"


@attrs.define
class Member:
    """One member as this member sees it."""

    member_id: str
    host: str
    port: int
    version: str
    weight: int = 50
    state: MemberState = MemberState.RECOVERING
    role: MemberRole = MemberRole.SECONDARY
    suspected: bool = False
    local_address: str = ""
    """Its ``group_replication_local_address`` (what force_members lists)."""

    @property
    def address(self) -> str:
        """``host:port`` as MySQL's log lines print a member."""
        return f"{self.host}:{self.port}"

    @property
    def shown_state(self) -> MemberState:
        """MEMBER_STATE: UNREACHABLE while suspected."""
        return MemberState.UNREACHABLE if self.suspected else self.state


def member_data(weight: int, bootstrap: bool) -> bytes:
    """The data a member publishes with its membership (its weight; ONLINE at once
    when it bootstraps the group).
    """
    return json.dumps({"weight": weight, "bootstrap": bootstrap}).encode()


def read_member_data(data: bytes) -> tuple[int, bool]:
    """(weight, bootstrap) from :func:`member_data`'s bytes; defaults if unreadable."""
    try:
        fields = json.loads(data or b"{}")
        return int(fields.get("weight", 50)), bool(fields.get("bootstrap", False))
    except (ValueError, TypeError, AttributeError):
        return 50, False


def _version_key(version: str) -> tuple[int, ...]:
    digits = version.split("-", 1)[0].split(".")
    return tuple(int(d) if d.isdigit() else 0 for d in digits)


def elect(members: list[Member]) -> Member | None:
    """The primary MySQL elects among ``members`` (the ONLINE ones count)."""
    online = [m for m in members if m.state is MemberState.ONLINE]
    if not online:
        return None
    return min(online, key=lambda m: (_version_key(m.version), -m.weight, m.member_id))
