"""What ``rpl validate`` found: violations (the logs are inconsistent) and notices (worth
knowing, not wrong: a trailing partial transaction a crash left, which recovery truncates
at the next start).

Every finding names its node, log kind, file and position, and the GTID and the source
coordinates when it has them, so a reader can go straight to the bytes with
``mariadb-binlog --start-position``.
"""

from __future__ import annotations

from typing import Any, Final

import attrs

VIOLATION: Final = "violation"
NOTICE: Final = "notice"

CHECKS: Final = {
    "structure": "magic, FORMAT_DESCRIPTION first, event sizes, CRC32, end log_pos, ROTATE "
    "to the next file of the index",
    "transactions": "every GTID group whole (GTID, BEGIN ... XID/COMMIT, or one DDL)",
    "relay_vs_source": "every relay event byte-identical to the source's event at its source "
    "position, in order, no gap, no duplicate",
    "applied_vs_source": "each replica's binlog holds the source's GTIDs in the source's "
    "order, no errant GTID, no duplicate",
    "history": "every acknowledged write present on the named node; no read of a value "
    "never committed",
    "fresh_reads": "no read misses a write acknowledged before it began (--fresh-reads)",
    "group_order": "every member's binlog holds the group's GTIDs in the group's order, each "
    "once, none missing below its last (--group)",
}
"""The checks, by the name findings carry, and what each proves."""


@attrs.frozen
class Finding:
    """One violation or notice."""

    check: str
    node: str
    kind: str
    file: str
    position: int
    detail: str
    severity: str = VIOLATION
    gtid: str = ""
    source_file: str = ""
    source_position: int = -1

    def where(self) -> str:
        """``node kind file:position [gtid] (source file:position)``."""
        parts = [f"{self.node} {self.kind} {self.file}:{self.position}"]
        if self.gtid:
            parts.append(f"GTID {self.gtid}")
        if self.source_file or self.source_position >= 0:
            parts.append(f"source {self.source_file or '?'}:{self.source_position}")
        return ", ".join(parts)

    def line(self) -> str:
        """One line of the summary."""
        return f"[{self.check}] {self.where()}: {self.detail}"

    def as_json(self) -> dict[str, Any]:
        """The finding as a JSON object."""
        return attrs.asdict(self)


def sort_key(finding: Finding) -> tuple[str, str, str, str, int, str]:
    """Findings grouped by check, then in log order."""
    return (
        finding.check,
        finding.node,
        finding.kind,
        finding.file,
        finding.position,
        finding.detail,
    )
