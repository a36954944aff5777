"""Stitching split summaries back into whole files (runs in the driver, on one small row
per split; no Spark).

What holds after :func:`stitch`, for each file:

* the splits agree on event boundaries: where one split's chain of events crossed its
  end is where the next one started. When the next split started earlier (a false start
  inside an event), its rows before that point are dropped (``valid_from``); when it
  started later, the bytes in between belong to no intact event and are reported;
* in a binlog, the difference between each event's end log_pos and its real end is 0 at
  the start of every file and changes only where a finding says so, also across splits;
* the last event of every file but the newest is a ROTATE naming the next file of the
  index, or a STOP_EVENT: what a clean shutdown writes before the next start opens a new
  file (a file ending in neither is a crash's, reported as a notice);
* a relay split's events whose source file was named in an earlier split get it
  (``carry``), and source positions stay contiguous across split boundaries.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import groupby
from typing import Any

import attrs

from rpl.core.binlog.events import GTID_LOG_EVENT, ROTATE_EVENT, STOP_EVENT
from rpl.core.validate.findings import NOTICE, VIOLATION, Finding
from rpl.core.validate.layout import BINLOG, Node, Split, discover_all, plan_splits
from rpl.core.validate.scan import Summary, scan_all


@attrs.frozen
class Carry:
    """What one split inherits from those before it."""

    node: str
    kind: str
    file: str
    split: int
    valid_from: int
    source_file: str | None
    source_server_id: int | None


def _finding(
    split: Split, position: int, detail: str, check: str = "structure", **extra: Any
) -> Finding:
    log = split.file
    return Finding(check, log.node, log.kind, log.name, position, detail, **extra)


@attrs.define
class _RelayState:
    source_file: str | None = None
    source_server_id: int | None = None
    expected: int | None = None


def _file_chain(splits: list[tuple[Split, Summary]], findings: list[Finding]) -> list[int]:
    """Boundary agreement within one file; each split's valid_from."""
    valid = []
    pending: int | None = None  # where the previous split's chain said the next event is
    for split, summary in splits:
        first = summary.first
        false_start = pending is not None and first is not None and pending > first
        valid.append(pending if false_start and pending is not None else split.start)
        if first is None:
            continue  # no event starts here; pending carries on
        if pending is not None and first > pending:
            findings.append(
                _finding(
                    split,
                    pending,
                    f"no intact event at {pending}: the "
                    f"{first - pending} bytes before {first} are not events",
                )
            )
        pending = summary.next
    return valid


def _shift_chain(splits: list[tuple[Split, Summary]], findings: list[Finding]) -> None:
    previous: int | None = 0
    for split, summary in splits:
        if summary.first_shift is None:
            continue
        if previous is not None and summary.first_shift != previous and summary.first:
            findings.append(
                _finding(
                    split,
                    summary.first,
                    f"end log_pos is {summary.first_shift:+d} bytes off the "
                    f"event's end from here on (an event missing, or one too many)",
                )
            )
        previous = summary.last_shift


def _rotate_check(splits: list[tuple[Split, Summary]], findings: list[Finding]) -> None:
    """A file the index follows with another ends in a ROTATE naming it (the server
    rotated) or in a STOP_EVENT (the server shut down cleanly and the next start opened
    the next file); anything else is a crash's file, a notice.
    """
    log = splits[0][0].file
    if log.next_name is None:
        return
    owning = [(s, m) for s, m in splits if m.first is not None]
    if not owning:
        return
    split, summary = owning[-1]
    if summary.last_type == STOP_EVENT:
        return  # a clean shutdown, then a restart
    if summary.last_type != ROTATE_EVENT:
        findings.append(
            _finding(
                split,
                log.size,
                f"the file ends with neither a ROTATE to "
                f"{log.next_name}, the next file of the index, nor a "
                f"STOP_EVENT (its last event is of type "
                f"{summary.last_type}): the server stopped without closing "
                f"it, a crash",
                severity=NOTICE,
            )
        )
    elif summary.last_rotate != log.next_name:
        findings.append(
            _finding(
                split,
                log.size,
                f"the last ROTATE names "
                f"{summary.last_rotate!r}, but the index's next file is "
                f"{log.next_name!r}",
            )
        )


def _relay_carry(
    splits: list[tuple[Split, Summary]], state: _RelayState, findings: list[Finding]
) -> list[tuple[str | None, int | None]]:
    carried = []
    for split, summary in splits:
        carried.append((state.source_file, state.source_server_id))
        if (
            summary.first_source_pos is not None
            and not summary.marker_before_first_source
            and state.expected is not None
            and summary.first_source_pos != state.expected
            and not (
                summary.first_source_pos > state.expected
                and summary.first_source_type == GTID_LOG_EVENT
            )
        ):
            findings.append(
                _finding(
                    split,
                    split.start,
                    f"source events between source positions "
                    f"{state.expected} and {summary.first_source_pos} missing or received twice "
                    f"(across the split boundary)",
                    check="relay_vs_source",
                    source_file=state.source_file or "",
                    source_position=summary.first_source_pos,
                )
            )
        if summary.source_file is not None:
            state.source_file = summary.source_file
            state.source_server_id = summary.source_server_id
        if summary.source_expected is not None:
            state.expected = summary.source_expected
    return carried


def stitch(
    nodes: list[Node], summaries: Iterable[tuple[Split, Summary]]
) -> tuple[list[Finding], list[Carry]]:
    """Findings about split boundaries and whole files, and what each split inherits."""
    findings: list[Finding] = [
        Finding(
            "structure",
            node.name,
            kind,
            name,
            0,
            "the index lists this file but it is not in the data directory",
        )
        for node in nodes
        for kind, name in node.missing
    ]
    carries: list[Carry] = []
    ordered = sorted(
        summaries,
        key=lambda pair: (
            pair[0].file.node,
            pair[0].file.kind,
            pair[0].file.ordinal,
            pair[0].number,
        ),
    )
    for (_, kind), log_splits in groupby(ordered, key=lambda p: (p[0].file.node, p[0].file.kind)):
        state = _RelayState()
        for _, file_splits in groupby(log_splits, key=lambda p: p[0].file.ordinal):
            pairs = list(file_splits)
            valid = _file_chain(pairs, findings)
            _rotate_check(pairs, findings)
            if kind == BINLOG:
                _shift_chain(pairs, findings)
                carried: list[tuple[str | None, int | None]] = [(None, None)] * len(pairs)
            else:
                carried = _relay_carry(pairs, state, findings)
            carries += [
                Carry(s.file.node, s.file.kind, s.file.name, s.number, v, *c)
                for (s, _), v, c in zip(pairs, valid, carried, strict=True)
            ]
    return findings, carries


def check_files(datadirs: list[str], split_bytes: int = 1 << 20) -> list[Finding]:
    """The structure and transaction findings of the nodes' logs, in this process (no
    Spark, no cross-node checks): what a fault test adds after a crash and recovery.
    """
    nodes = discover_all(datadirs)
    rows = scan_all(plan_splits(nodes, split_bytes))
    findings, _ = stitch(nodes, [(r.split, r.summary) for r in rows])
    return findings + [f for r in rows for f in r.findings]


def violations_in(datadirs: list[str]) -> list[str]:
    """:func:`check_files`' violations, one line each (empty: the logs are sound)."""
    return [f.line() for f in check_files(datadirs) if f.severity == VIOLATION]
