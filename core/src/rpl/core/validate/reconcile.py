"""The driver side of ``rpl validate``'s fast path: the split sketches
(:mod:`rpl.core.validate.sketch`) reconciled into a proof that the run is clean, or the
first reason it may not be (then the exact checks run and explain it).

No Spark here: a sketch is a few numbers per split. What is proven, check by check, as
the exact checks (:mod:`rpl.core.validate.checks`) define them:

* structure, transactions: every split regular (its own events), and the splits stitched
  with no finding (:func:`rpl.core.validate.stitch.stitch`: boundaries, log_pos shifts,
  ROTATEs, relay source positions across splits);
* duplicates: the GTID runs of each node's log never overlap;
* relay vs source: per relay log and source, the transactions received and the source's
  transactions between the first and last one received (by source file and position)
  have the same count and fingerprints; a source binlog split the span cuts is summed
  over its part only (``restrict``: one more pass over that split). Source events outside
  transactions (the source's ROTATE) are compared one by one;
* applied vs source: each replica binlog's GTIDs lie in its source's binlog or purged
  set, and taken in order they map to ascending source positions.

Fingerprints are sums of 64-bit hashes: a difference goes unnoticed only if hashes
collide, which no fault (a flipped byte, a lost or repeated event) arranges.
"""

from __future__ import annotations

import uuid
from bisect import bisect_left
from collections.abc import Callable
from typing import Final

import attrs

from rpl.core.binlog.gtid import GtidSet
from rpl.core.validate.layout import BINLOG, RELAY, Node, Split, oldest_previous
from rpl.core.validate.report import LogCounts, log_counts
from rpl.core.validate.sketch import Group, Sketch
from rpl.core.validate.stitch import Carry, stitch

Position = tuple[int, int]
"""(file ordinal, position) in one node's binlog."""
Request = tuple[Split, Position, Position]
"""A source binlog split and the span ``[lo, hi]`` to sum it over."""
Restrict = Callable[[list[Request]], list[tuple[int, int, int]]]
_MOD64: Final = 1 << 64
_MAX_PIECES: Final = 1_000_000


class Unproven(Exception):
    """The sketches do not prove the run clean: the exact checks must run."""


@attrs.define
class Proof:
    """What the fast path found: counts and checks of a clean run, or why not clean."""

    unproven: str = ""
    logs: dict[str, dict[str, LogCounts]] = attrs.field(factory=dict)
    checks: list[str] = attrs.field(factory=list)


@attrs.define
class _Sum:
    count: int = 0
    xor: int = 0
    total: int = 0

    def add(self, count: int, xor: int, total: int) -> None:
        self.count += count
        self.xor ^= xor
        self.total = (self.total + total) % _MOD64


def reconcile(nodes: list[Node], sketches: list[tuple[Split, Sketch]], restrict: Restrict) -> Proof:
    """Prove the run clean from its sketches (see the module docstring)."""
    try:
        return _Reconcile(nodes, sketches, restrict).prove()
    except Unproven as exc:
        return Proof(unproven=str(exc))


class _Reconcile:
    def __init__(
        self, nodes: list[Node], sketches: list[tuple[Split, Sketch]], restrict: Restrict
    ) -> None:
        self.nodes, self.restrict = nodes, restrict
        self.sketches = sorted(
            sketches, key=lambda p: (p[0].file.node, p[0].file.kind, p[0].file.ordinal, p[0].number)
        )
        self.by_name = {n.name: n for n in nodes}

    def prove(self) -> Proof:
        for _, sketch in self.sketches:
            if sketch.irregular:
                raise Unproven(sketch.irregular)
        findings, carries = stitch(self.nodes, [(s, k.summary) for s, k in self.sketches])
        if findings:
            raise Unproven(findings[0].line())
        self._carry(carries)
        proof = Proof(logs=self._counts())
        proof.checks = ["structure", "transactions"]
        self._duplicates()
        pairs = self._pairs()
        if pairs:
            proof.checks += ["relay_vs_source", "applied_vs_source"]
            for (node, server_id), source in pairs.items():
                self._relay_vs_source(node, server_id, source)
            latest: dict[str, str] = {}
            for (node, _), source in pairs.items():
                latest[node] = max(latest.get(node, source), source)
            for node, source in latest.items():
                self._applied_vs_source(node, source)
        return proof

    # ------------------------------------------------------------------ per split
    def _carry(self, carries: list[Carry]) -> None:
        """Fill in relay groups' source files named in earlier splits."""
        carried = {(c.node, c.kind, c.file, c.split): c for c in carries}
        for split, sketch in self.sketches:
            log = split.file
            carry = carried[(log.node, log.kind, log.name, split.number)]
            if sketch.summary.first is not None and carry.valid_from > sketch.summary.first:
                raise Unproven(f"{log.node} {log.name}: a split started inside an event")
            for group in sketch.groups:
                if log.kind == RELAY and group.file is None:
                    group.file, group.server_id = carry.source_file, carry.source_server_id
            for event in sketch.file_events:
                if event[4] is not None and event[3] is None:
                    event[3] = carry.source_file

    def _log(self, node: str, kind: str) -> list[tuple[Split, Sketch]]:
        return [(s, k) for s, k in self.sketches if s.file.node == node and s.file.kind == kind]

    def _groups(self, node: str, kind: str) -> list[Group]:
        return [g for _, k in self._log(node, kind) for g in k.groups]

    def _counts(self) -> dict[str, dict[str, LogCounts]]:
        logs = log_counts(self.nodes, [(s, k.summary) for s, k in self.sketches])
        for split, sketch in self.sketches:
            logs[split.file.node][split.file.kind].transactions += sum(
                g.count for g in sketch.groups
            )
        return logs

    # ------------------------------------------------------------------ checks
    def _duplicates(self) -> None:
        for node in self.nodes:
            for kind in (BINLOG, RELAY):
                seen = GtidSet()
                for group in self._groups(node.name, kind):
                    for sid, lo, hi in group.runs:
                        run = GtidSet()
                        run.add_interval(uuid.UUID(sid), lo, hi)
                        if seen.intersection(run):
                            raise Unproven(
                                f"{node.name} {kind}: a GTID of {sid}:{lo}-{hi} is there twice"
                            )
                        seen.update(run)

    def _pairs(self) -> dict[tuple[str, int | None], str]:
        """(relay node, source server_id) -> source node."""
        server_ids = {n.server_id: n.name for n in self.nodes if n.server_id >= 0}
        pairs = {}
        for node in self.nodes:
            for group in self._groups(node.name, RELAY):
                source = server_ids.get(group.server_id) if group.server_id is not None else None
                if source is None or source == node.name:
                    raise Unproven(
                        f"{node.name}: the relay log's source (server_id "
                        f"{group.server_id}) is not among the data directories"
                    )
                pairs[(node.name, group.server_id)] = source
        return pairs

    def _relay_vs_source(self, node: str, server_id: int | None, source: str) -> None:
        ordinals = {f.name: f.ordinal for f in self.by_name[source].binlogs}
        received, lo, hi = _Sum(), (1 << 62, 0), (-1, 0)
        for group in self._groups(node, RELAY):
            if group.server_id != server_id or not group.count:
                continue
            if group.file not in ordinals:
                raise Unproven(f"{node}: source binlog {group.file} is not in {source}")
            ordinal = ordinals[group.file]
            received.add(group.count, group.xor, group.total)
            lo, hi = min(lo, (ordinal, group.first)), max(hi, (ordinal, group.last))
        there = _Sum()
        cut: list[Request] = []
        for split, sketch in self._log(source, BINLOG):
            for group in sketch.groups:
                first = (split.file.ordinal, group.first)
                last = (split.file.ordinal, group.last)
                if not group.count or last < lo or first > hi:
                    continue
                if lo <= first and last <= hi:
                    there.add(group.count, group.xor, group.total)
                else:
                    cut.append((split, lo, hi))
        for part in self.restrict(cut) if cut else []:
            there.add(*part)
        if received != there:
            raise Unproven(
                f"{node}: the relay log's {received.count} transactions from "
                f"{source} differ from the source's {there.count} over the span"
            )
        self._relay_file_events(node, server_id, source)

    def _relay_file_events(self, node: str, server_id: int | None, source: str) -> None:
        theirs = {
            (s.file.name, e[0]): e[2] for s, k in self._log(source, BINLOG) for e in k.file_events
        }
        for split, sketch in self._log(node, RELAY):
            for pos, code, digest, source_file, source_pos in sketch.file_events:
                if source_pos is not None and theirs.get((source_file, source_pos)) != digest:
                    raise Unproven(
                        f"{node} {split.file.name}:{pos}: event of type {code} "
                        f"differs from {source} {source_file}:{source_pos}"
                    )

    def _applied_vs_source(self, node: str, source: str) -> None:
        source_runs = [run for g in self._groups(source, BINLOG) for run in g.runs]
        theirs = GtidSet()
        index: dict[str, list[tuple[int, int, int]]] = {}
        for number, (sid, lo, hi) in enumerate(source_runs):
            theirs.add_interval(uuid.UUID(sid), lo, hi)
            index.setdefault(sid, []).append((lo, hi, number))
        mine_runs = [run for g in self._groups(node, BINLOG) for run in g.runs]
        mine = GtidSet()
        for sid, lo, hi in mine_runs:
            mine.add_interval(uuid.UUID(sid), lo, hi)
        purged = oldest_previous(self.by_name[source].binlogs)
        if not mine.is_subset(theirs.union(purged)):
            raise Unproven(f"{node}: its binlog has GTIDs {source} never had")
        for sid in index:
            index[sid].sort()
        _in_source_order(node, mine_runs, index)


def _in_source_order(
    node: str, runs: list[list[object]], index: dict[str, list[tuple[int, int, int]]]
) -> None:
    """Raise Unproven unless the GTIDs of ``runs``, those in the source taken in order,
    map to ascending (source run, GNO).
    """
    previous = (-1, 0)
    pieces = 0
    ends = {sid: [end for _, end, _ in spans] for sid, spans in index.items()}
    for sid, lo, hi in runs:
        assert isinstance(sid, str) and isinstance(lo, int) and isinstance(hi, int)
        spans = index.get(sid, [])
        for start, end, number in spans[bisect_left(ends.get(sid, []), lo) :]:
            if start > hi:
                break
            first, last = max(lo, start), min(hi, end)
            if (number, first) <= previous:
                raise Unproven(f"{node}: {sid}:{first} applied out of the source's order")
            previous = (number, last)
            pieces += 1
            if pieces > _MAX_PIECES:
                raise Unproven(f"{node}: the binlog's GTIDs are too interleaved to compare by runs")
