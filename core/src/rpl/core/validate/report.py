"""The result of ``rpl validate``: a readable summary and a JSON report.

Exit codes: 0 when no violation was found (notices allowed), 1 on violations, 2 on usage
errors (a path that is not a data directory, a malformed history, pyspark missing).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final

import attrs

from rpl.core.validate.findings import CHECKS, NOTICE, VIOLATION, Finding, sort_key
from rpl.core.validate.layout import Node, Split
from rpl.core.validate.scan import Summary

CLEAN: Final = 0
VIOLATIONS: Final = 1
USAGE: Final = 2


@attrs.define
class LogCounts:
    """What was read of one node's log of one kind."""

    files: int = 0
    bytes: int = 0
    events: int = 0
    transactions: int = 0


def log_counts(
    nodes: list[Node], splits: Iterable[tuple[Split, Summary]]
) -> dict[str, dict[str, LogCounts]]:
    """Files, bytes and events read, by node and kind (transactions: the caller counts)."""
    logs: dict[str, dict[str, LogCounts]] = {}
    for node in nodes:
        for log in node.files:
            counts = logs.setdefault(node.name, {}).setdefault(log.kind, LogCounts())
            counts.files += 1
            counts.bytes += log.size
    for split, summary in splits:
        logs[split.file.node][split.file.kind].events += summary.events
    return logs


@attrs.define
class Report:
    """Everything ``rpl validate`` found, and what it read to find it."""

    master: str
    splits: int
    seconds: float = 0.0
    checks: list[str] = attrs.field(factory=list)
    logs: dict[str, dict[str, LogCounts]] = attrs.field(factory=dict)
    """node -> kind -> counts."""
    findings: list[Finding] = attrs.field(factory=list)
    history_operations: int = 0
    stale_reads_by_table: dict[str, int] = attrs.field(factory=dict)
    """Stale reads found (``--fresh-reads``), how many of each table (``db.table``;
    tables with none absent); at most 1000 are listed."""
    method: str = "exact"
    """"sketches" (the fast path proved the run clean) or "exact" (row by row)."""
    unproven: str = ""
    """Why the sketches did not prove the run clean (the exact checks then ran)."""

    @property
    def stale_reads(self) -> int:
        """Stale reads found in all."""
        return sum(self.stale_reads_by_table.values())

    @property
    def violations(self) -> list[Finding]:
        """The findings that make the run fail."""
        return [f for f in self.findings if f.severity == VIOLATION]

    @property
    def notices(self) -> list[Finding]:
        """The findings worth knowing that are not wrong."""
        return [f for f in self.findings if f.severity == NOTICE]

    @property
    def events(self) -> int:
        """Events read, all nodes and logs."""
        return sum(c.events for kinds in self.logs.values() for c in kinds.values())

    @property
    def transactions(self) -> int:
        """Transactions read, all nodes and logs."""
        return sum(c.transactions for kinds in self.logs.values() for c in kinds.values())

    @property
    def exit_code(self) -> int:
        """0 clean, 1 violations."""
        return VIOLATIONS if self.violations else CLEAN

    def summary(self) -> str:
        """The readable summary."""
        lines = [
            f"rpl validate: {len(self.logs)} nodes, {self.splits} splits on {self.master}, "
            f"{self.seconds:.1f} s"
        ]
        for node, kinds in sorted(self.logs.items()):
            for kind, c in sorted(kinds.items()):
                lines.append(
                    f"  {node:<16} {kind:<7} {c.files:>4} files {c.bytes:>14,} bytes "
                    f"{c.events:>12,} events {c.transactions:>10,} transactions"
                )
        lines.append(
            f"  {self.events:,} events, {self.transactions:,} transactions"
            + (
                f", {self.history_operations:,} history operations"
                if self.history_operations
                else ""
            )
            + (f", {self.stale_reads:,} stale reads" if self.stale_reads else "")
        )
        lines.append(
            "checks: "
            + (
                "proven clean by split sketches (counts and fingerprints)"
                if self.method == "sketches"
                else "row by row"
                + (
                    f" (the sketches did not prove it clean: {self.unproven})"
                    if self.unproven
                    else ""
                )
            )
        )
        for name in self.checks:
            count = sum(1 for f in self.violations if f.check == name)
            lines.append(
                f"  {'FAIL' if count else 'ok':<4} {name:<18} {CHECKS[name]}"
                + (f" ({count} violations)" if count else "")
            )
        for title, findings in (("violations", self.violations), ("notices", self.notices)):
            if findings:
                lines.append(f"{title} ({len(findings)}):")
                lines += [f"  {f.line()}" for f in sorted(findings, key=sort_key)]
        lines.append(
            "result: "
            + ("CLEAN" if self.exit_code == CLEAN else f"{len(self.violations)} VIOLATIONS")
        )
        return "\n".join(lines)

    def as_json(self) -> dict[str, Any]:
        """The JSON report."""
        return {
            "result": "clean" if self.exit_code == CLEAN else "violations",
            "exit_code": self.exit_code,
            "master": self.master,
            "splits": self.splits,
            "seconds": round(self.seconds, 3),
            "events": self.events,
            "transactions": self.transactions,
            "history_operations": self.history_operations,
            "stale_reads": self.stale_reads,
            "stale_reads_by_table": self.stale_reads_by_table,
            "checks": {name: CHECKS[name] for name in self.checks},
            "method": self.method,
            "unproven": self.unproven,
            "logs": {
                node: {kind: attrs.asdict(c) for kind, c in kinds.items()}
                for node, kinds in self.logs.items()
            },
            "violations": [f.as_json() for f in sorted(self.violations, key=sort_key)],
            "notices": [f.as_json() for f in sorted(self.notices, key=sort_key)],
        }

    def write_json(self, path: str | Path) -> None:
        """Write the JSON report to ``path``."""
        Path(path).write_text(json.dumps(self.as_json(), indent=2) + "\n", encoding="utf-8")
