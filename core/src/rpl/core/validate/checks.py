"""``rpl validate`` end to end: plan, scan on Spark, stitch, then the cross-node checks as
DataFrame queries; :func:`validate` returns the :class:`Report`.

Cross-node checks (transaction rows; a transaction's digest folds every event's):

* relay vs source: each complete relay transaction is matched with the source's
  transaction at the same source file and position (the source is the node whose binlog
  server_id the relay log's source ROTATE names); a missing one, another GTID, other
  event count or another digest is a violation (the first differing event is then found
  by reading both copies). Every source transaction inside the span the relay log holds
  must be in it, unless the relay log's PREVIOUS_GTIDS already had it; a GTID received
  twice complete is a duplicate. Source events outside transactions (the source's ROTATE)
  are compared one by one.
* applied vs source: a replica's binlog GTIDs must all be in its source's binlog (or in
  the source's purged set), in the source's order, each once.
* history: acknowledged writes on the named node(s), reads of committed values only.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rpl.core.binlog.gtid import Gtid, GtidSet
from rpl.core.binlog.logfile import LogError, read_events
from rpl.core.validate.findings import NOTICE, VIOLATION, Finding
from rpl.core.validate.history import READ, WRITE, Operation, read_history
from rpl.core.validate.layout import (
    BINLOG,
    DEFAULT_SPLIT_BYTES,
    RELAY,
    Node,
    Split,
    discover_all,
    oldest_previous,
    plan_splits,
)
from rpl.core.validate.reconcile import Proof, reconcile
from rpl.core.validate.report import Report, log_counts
from rpl.core.validate.scan import Summary
from rpl.core.validate.stitch import Carry, stitch

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

_MAX_LISTED = 1000
"""At most this many findings of one kind are collected to the driver."""


def validate(
    datadirs: list[str],
    *,
    history: str | None = None,
    expect_on: str | None = None,
    fresh_reads: bool = False,
    group: str | None = None,
    master: str | None = None,
    split_bytes: int = DEFAULT_SPLIT_BYTES,
    spark: SparkSession | None = None,
    exact: bool = False,
    progress: Callable[[str], None] = lambda _: None,
) -> Report:
    """Validate the nodes in ``datadirs`` (see the module docstring): first by split
    sketches (:mod:`rpl.core.validate.reconcile`), which prove a clean run clean; row by
    row when they do not (or ``exact``, or with a history).
    """
    started = time.perf_counter()
    nodes = discover_all(datadirs)
    operations = list(read_history(history)) if history else []
    splits = plan_splits(nodes, split_bytes)
    size = sum(f.size for n in nodes for f in n.files)
    progress(
        f"{len(nodes)} nodes, {sum(len(n.files) for n in nodes)} files, {size:,} bytes "
        f"in {len(splits)} splits"
    )
    if spark is None:
        from rpl.core.validate.job import spark_session

        spark = spark_session(master)
    from rpl.core.validate.job import stage_progress

    with stage_progress(spark, progress):
        rows_needed = exact or operations or group
        proof = None if rows_needed else _prove(spark, nodes, splits, progress)
        if proof is not None and not proof.unproven:
            report = Report(
                master="",
                splits=len(splits),
                checks=proof.checks,
                logs=proof.logs,
                method="sketches",
            )
        else:
            if proof is not None:
                progress(
                    f"not proven clean by the sketches ({proof.unproven}): checking row by row"
                )
            run = _Run(spark, nodes, splits, operations, expect_on, progress)
            run.history_name = Path(history).name if history else ""
            run.fresh_reads, run.group = fresh_reads, group
            report = run.execute()
            report.unproven = proof.unproven if proof is not None else ""
    report.master = spark.sparkContext.master
    report.seconds = time.perf_counter() - started
    return report


def _prove(
    spark: SparkSession, nodes: list[Node], splits: list[Split], progress: Callable[[str], None]
) -> Proof:
    from rpl.core.validate.job import restricted_sums, sketches

    progress("sketching splits (Spark tasks: one per split)")
    made = sketches(spark, splits)
    progress("reconciling the sketches")
    return reconcile(nodes, made, lambda requests: restricted_sums(spark, requests))


class _Run:
    """One validation: the scan's cached rows and the checks over them."""

    def __init__(
        self,
        spark: SparkSession,
        nodes: list[Node],
        splits: list[Split],
        operations: list[Operation],
        expect_on: str | None,
        progress: Callable[[str], None],
    ) -> None:
        self.spark, self.nodes, self.splits = spark, nodes, splits
        self.operations, self.expect_on, self.progress = operations, expect_on, progress
        self.by_name = {n.name: n for n in nodes}
        self.history_name = ""
        self.fresh_reads = False
        self.group: str | None = None
        self.findings: list[Finding] = []
        self.report = Report(master="", splits=len(splits))

    # ------------------------------------------------------------------ scan + stitch
    def execute(self) -> Report:
        from pyspark import StorageLevel

        from rpl.core.validate.job import scan_frame

        self.progress("scanning (Spark tasks: one per split)")
        rows = scan_frame(self.spark, self.splits, extract_writes=bool(self.operations))
        rows = rows.persist(StorageLevel.MEMORY_AND_DISK)
        summaries = self._summaries(rows)
        self.progress("stitching splits")
        stitched, carries = stitch(self.nodes, summaries)
        self.findings += stitched
        carry = self._carry_frame(carries)
        self._scan_findings(rows, carries)
        trx = self._transactions(rows, carry).persist()
        self.progress("counting transactions")
        self._count(summaries, trx)
        self.report.checks = ["structure", "transactions"]
        self.progress("checking: duplicates")
        self._duplicates(trx)
        pairs = self._source_pairs(trx)
        if pairs is not None:
            self.progress("checking: relay logs against their sources")
            self._relay_vs_source(trx, rows, carry, pairs)
            self.progress("checking: replicas' binlogs against their sources")
            self._applied_vs_source(trx, pairs)
        if self.operations:
            self.progress("checking: the client history")
            self._history(rows)
        self._group_checks(rows, trx)
        trx.unpersist()
        rows.unpersist()
        self.report.findings = self.findings
        return self.report

    def _summaries(self, rows: DataFrame) -> list[tuple[Split, Summary]]:
        import json

        by_key = {(s.file.node, s.file.kind, s.file.name, s.number): s for s in self.splits}
        result = []
        for row in (
            rows.filter("rec = 'S'").select("node", "kind", "file", "split", "detail").collect()
        ):
            split = by_key[(row.node, row.kind, row.file, row.split)]
            result.append((split, Summary(**json.loads(row.detail))))
        return result

    def _carry_frame(self, carries: list[Carry]) -> DataFrame:
        return self.spark.createDataFrame(
            [
                (c.node, c.kind, c.file, c.split, c.valid_from, c.source_file, c.source_server_id)
                for c in carries
            ],
            "c_node string, c_kind string, c_file string, c_split int, valid_from long, "
            "c_source_file string, c_source_server_id long",
        )

    def _with_carry(self, frame: DataFrame, carry: DataFrame) -> DataFrame:
        from pyspark.sql import functions as F

        joined = frame.join(
            F.broadcast(carry),
            (frame.node == carry.c_node)
            & (frame.kind == carry.c_kind)
            & (frame.file == carry.c_file)
            & (frame.split == carry.c_split),
        )
        return (
            joined.filter(F.col("pos") >= F.col("valid_from"))
            .withColumn("source_file", F.coalesce("source_file", "c_source_file"))
            .withColumn("source_server_id", F.coalesce("source_server_id", "c_source_server_id"))
        )

    def _scan_findings(self, rows: DataFrame, carries: list[Carry]) -> None:
        carried = {(c.node, c.kind, c.file, c.split): c for c in carries}
        for row in rows.filter("rec = 'F'").collect():
            c = carried[(row.node, row.kind, row.file, row.split)]
            if row.pos < c.valid_from:
                continue
            source_file = row.source_file or (c.source_file if row.source_pos is not None else None)
            self.findings.append(
                Finding(
                    row.check,
                    row.node,
                    row.kind,
                    row.file,
                    row.pos,
                    row.detail,
                    row.severity,
                    row.gtid or "",
                    source_file or "",
                    row.source_pos if row.source_pos is not None else -1,
                )
            )

    def _transactions(self, rows: DataFrame, carry: DataFrame) -> DataFrame:
        trx = self._with_carry(rows.filter("rec = 'T'"), carry)
        return trx.select(
            "node",
            "kind",
            "file",
            "ordinal",
            "pos",
            "end",
            "gtid",
            "state",
            "events",
            "digest",
            "source_file",
            "source_server_id",
            "source_pos",
            "source_end",
        )

    def _count(self, summaries: list[tuple[Split, Summary]], trx: DataFrame) -> None:
        logs = log_counts(self.nodes, summaries)
        for row in trx.filter("state = 'complete'").groupBy("node", "kind").count().collect():
            logs[row.node][row.kind].transactions = row["count"]
        self.report.logs = logs
        self.report.history_operations = len(self.operations)

    # ------------------------------------------------------------------ checks
    def _duplicates(self, trx: DataFrame) -> None:
        from pyspark.sql import functions as F

        duplicated = (
            trx.filter("state = 'complete'")
            .groupBy("node", "kind", "gtid")
            .agg(
                F.count("*").alias("n"),
                F.sort_array(F.collect_list(F.struct("ordinal", "file", "pos"))).alias("at"),
            )
            .filter("n > 1")
            .limit(_MAX_LISTED)
            .collect()
        )
        for row in duplicated:
            first, *others = row.at
            check = "relay_vs_source" if row.kind == RELAY else "applied_vs_source"
            again = ", ".join(f"{o.file}:{o.pos}" for o in others)
            self.findings.append(
                Finding(
                    check,
                    row.node,
                    row.kind,
                    first.file,
                    first.pos,
                    f"GTID {row.gtid} is {row.n} times in the {row.kind} (again at {again})",
                    gtid=row.gtid,
                )
            )

    def _source_pairs(self, trx: DataFrame) -> DataFrame | None:
        """(replica node, source node) for every relay log whose source is given."""
        server_ids = {n.server_id: n.name for n in self.nodes if n.server_id >= 0}
        relayed = trx.filter("kind = 'relay'").select("node", "source_server_id").distinct()
        pairs = []
        for row in relayed.collect():
            source = server_ids.get(row.source_server_id)
            if source is None or source == row.node:
                self.findings.append(
                    Finding(
                        "relay_vs_source",
                        row.node,
                        RELAY,
                        "",
                        0,
                        f"the source with server_id {row.source_server_id} is not among the "
                        f"data directories given: its relay log events are not compared",
                        severity=NOTICE,
                    )
                )
                continue
            pairs.append((row.node, row.source_server_id, source))
        self.report.checks += ["relay_vs_source", "applied_vs_source"] if pairs else []
        if not pairs:
            return None
        return self.spark.createDataFrame(pairs, "p_node string, p_server_id long, p_source string")

    def _source_side(self, trx: DataFrame) -> DataFrame:
        return trx.filter("kind = 'binlog'").select(
            *[
                trx[c].alias(f"s_{c}")
                for c in ("node", "file", "ordinal", "pos", "gtid", "digest", "events", "state")
            ]
        )

    def _relay_vs_source(
        self, trx: DataFrame, rows: DataFrame, carry: DataFrame, pairs: DataFrame
    ) -> None:
        from pyspark.sql import functions as F

        relay = trx.filter("kind = 'relay' AND state = 'complete'").join(
            pairs, (trx.node == pairs.p_node) & (trx.source_server_id == pairs.p_server_id)
        )
        source = self._source_side(trx)
        joined = relay.join(
            source,
            (relay.p_source == source.s_node)
            & (relay.source_file == source.s_file)
            & (relay.source_pos == source.s_pos),
            "left",
        )
        differing = joined.filter(
            "s_gtid IS NULL OR s_gtid != gtid OR s_digest != digest OR s_events != events"
        )
        for row in differing.limit(_MAX_LISTED).collect():
            self._relay_difference(row)
        matched = joined.filter("s_gtid = gtid")
        spans = matched.groupBy("node", "p_source").agg(
            F.min(F.struct("s_ordinal", "s_pos")).alias("lo"),
            F.max(F.struct("s_ordinal", "s_pos")).alias("hi"),
        )
        inside = source.filter("s_state = 'complete'").join(
            spans,
            (source.s_node == spans.p_source)
            & (F.struct("s_ordinal", "s_pos") >= spans.lo)
            & (F.struct("s_ordinal", "s_pos") <= spans.hi),
        )
        received = relay.select(relay.node.alias("r_node"), relay.gtid.alias("r_gtid"))
        missing = inside.join(
            received,
            (inside.node == received.r_node) & (inside.s_gtid == received.r_gtid),
            "left_anti",
        )
        for row in missing.limit(_MAX_LISTED).collect():
            if Gtid.parse(row.s_gtid) in self._relay_previous(row.node):
                continue
            self.findings.append(
                Finding(
                    "relay_vs_source",
                    row.node,
                    RELAY,
                    "",
                    -1,
                    f"the relay log misses the source's transaction {row.s_gtid} "
                    f"({row.s_node} {row.s_file}:{row.s_pos}), inside the span it received",
                    gtid=row.s_gtid,
                    source_file=row.s_file,
                    source_position=row.s_pos,
                )
            )
        self._relay_file_events(rows, carry, pairs)

    def _relay_previous(self, node: str) -> GtidSet:
        """The GTIDs the node's oldest relay file says were retrieved before it."""
        return oldest_previous(self.by_name[node].relay_logs)

    def _relay_difference(self, row: Any) -> None:
        where = f"{row.p_source} {row.source_file}:{row.source_pos}"
        if row.s_gtid is None:
            known = {f.name for f in self.by_name[row.p_source].binlogs}
            absent = row.source_file not in known
            detail = (
                f"the source's binlog {row.source_file} is not in {row.p_source} "
                f"(purged?): not compared"
                if absent
                else f"no source transaction starts at {where}"
            )
            self.findings.append(
                Finding(
                    "relay_vs_source",
                    row.node,
                    RELAY,
                    row.file,
                    row.pos,
                    detail,
                    NOTICE if absent else VIOLATION,
                    row.gtid,
                    row.source_file or "",
                    row.source_pos,
                )
            )
            return
        if row.s_gtid != row.gtid:
            detail = f"the source has {row.s_gtid} at {where}, the relay log {row.gtid}"
        else:
            detail = self._first_difference(row)
        self.findings.append(
            Finding(
                "relay_vs_source",
                row.node,
                RELAY,
                row.file,
                row.pos,
                detail,
                VIOLATION,
                row.gtid,
                row.source_file or "",
                row.source_pos,
            )
        )

    def _first_difference(self, row: Any) -> str:
        """Which event of the relay copy differs from the source's (read directly)."""
        relay_path = Path(self.by_name[row.node].path) / row.file
        source_path = Path(self.by_name[row.p_source].path) / row.s_file
        try:
            mine = read_events(relay_path, row.pos, check_log_pos=False)
            theirs = read_events(source_path, row.s_pos)
            for n in range(max(row.events, row.s_events)):
                a, b = next(mine, None), next(theirs, None)
                if a is None or b is None or a.raw != b.raw:
                    at = f"relay position {a.position}" if a else "the relay copy's end"
                    return (
                        f"event {n + 1} of the transaction differs from the source's "
                        f"(at {at}; source position {b.position if b else '-'}), "
                        f"{row.events} events in the relay copy, {row.s_events} at the "
                        f"source"
                    )
        except LogError as exc:
            return f"the relay copy differs from the source's ({exc})"
        return "the relay copy's digest differs from the source's"

    def _relay_file_events(self, rows: DataFrame, carry: DataFrame, pairs: DataFrame) -> None:
        """Source events outside transactions (the source's ROTATE) one by one."""
        events = self._with_carry(
            rows.filter("rec = 'E' AND kind = 'relay' AND source_pos IS NOT NULL"), carry
        )
        events = events.join(
            pairs, (events.node == pairs.p_node) & (events.source_server_id == pairs.p_server_id)
        )
        source = rows.filter("rec = 'E' AND kind = 'binlog'").select(
            rows.node.alias("s_node"),
            rows.file.alias("s_file"),
            rows.pos.alias("s_pos"),
            rows.digest.alias("s_digest"),
        )
        joined = events.join(
            source,
            (events.p_source == source.s_node)
            & (events.source_file == source.s_file)
            & (events.source_pos == source.s_pos),
            "left",
        )
        for row in joined.filter("s_digest IS NULL OR s_digest != digest").collect():
            self.findings.append(
                Finding(
                    "relay_vs_source",
                    row.node,
                    RELAY,
                    row.file,
                    row.pos,
                    f"event of type {row.type} differs from the source's at {row.p_source} "
                    f"{row.source_file}:{row.source_pos}"
                    if row.s_digest is not None
                    else f"event of type {row.type} has no source event at {row.p_source} "
                    f"{row.source_file}:{row.source_pos}",
                    VIOLATION,
                    "",
                    row.source_file or "",
                    row.source_pos,
                )
            )

    def _applied_vs_source(self, trx: DataFrame, pairs: DataFrame) -> None:
        from pyspark.sql import Window
        from pyspark.sql import functions as F

        latest = pairs.groupBy("p_node").agg(F.max("p_source").alias("p_source"))
        applied = trx.filter("kind = 'binlog' AND state = 'complete'").join(
            latest, trx.node == latest.p_node
        )
        source = self._source_side(trx).filter("s_state = 'complete'")
        joined = applied.join(
            source, (applied.p_source == source.s_node) & (applied.gtid == source.s_gtid), "left"
        )
        for row in joined.filter("s_gtid IS NULL").limit(_MAX_LISTED).collect():
            if Gtid.parse(row.gtid) in self._purged(row.p_source):
                continue
            self.findings.append(
                Finding(
                    "applied_vs_source",
                    row.node,
                    BINLOG,
                    row.file,
                    row.pos,
                    f"errant transaction: {row.p_source} (the source) never had it",
                    gtid=row.gtid,
                )
            )
        order = Window.partitionBy("node").orderBy("ordinal", "pos")
        ordered = joined.filter("s_gtid IS NOT NULL").withColumn(
            "prev", F.lag(F.struct("s_ordinal", "s_pos", "gtid")).over(order)
        )
        late = ordered.filter(
            F.struct(ordered.prev.s_ordinal, ordered.prev.s_pos) > F.struct("s_ordinal", "s_pos")
        )
        for row in late.limit(_MAX_LISTED).collect():
            self.findings.append(
                Finding(
                    "applied_vs_source",
                    row.node,
                    BINLOG,
                    row.file,
                    row.pos,
                    f"applied out of the source's order: after {row.prev.gtid}, which the source "
                    f"logged later ({row.s_file}:{row.s_pos} comes first there)",
                    gtid=row.gtid,
                )
            )

    def _purged(self, node: str) -> GtidSet:
        """The GTIDs the node's oldest binlog file says came before it."""
        return oldest_previous(self.by_name[node].binlogs)

    def _group_checks(self, rows: DataFrame, trx: DataFrame) -> None:
        from rpl.core.validate.group import group_order, stale_reads

        if self.fresh_reads and self.operations:
            self.progress("checking: fresh reads")
            self.report.checks.append("fresh_reads")
            writes = rows.filter("rec = 'W'").select("node", "gtid", "tbl", "key", "value")
            found, self.report.stale_reads_by_table = stale_reads(
                self.spark, writes, self.operations, self.history_name
            )
            self.findings += found
        if self.group:
            self.progress(f"checking: group {self.group}'s order")
            self.report.checks.append("group_order")
            self.findings += group_order(trx, self.group, self._purged, BINLOG)

    def _history(self, rows: DataFrame) -> None:
        self.report.checks.append("history")
        writes = rows.filter("rec = 'W'").select("node", "tbl", "key", "value").distinct()
        everywhere = [n.name for n in self.nodes if n.binlogs]
        targets, reads = [], []
        for op in self.operations:
            if op.outcome != "ok":
                continue
            named = op.node or self.expect_on
            if op.op == WRITE:
                targets += [
                    (name, op.table, op.key, op.value, op.line, op.client)
                    for name in ([named] if named else everywhere)
                ]
            elif op.op == READ and op.value is not None:
                reads.append((named or "", op.table, op.key, op.value, op.line, op.client))
        if targets:
            self._acknowledged(writes, targets)
        if reads:
            self._reads(writes, reads)

    def _acknowledged(self, writes: DataFrame, targets: list[tuple[Any, ...]]) -> None:
        wanted = self.spark.createDataFrame(
            targets, "node string, tbl string, key string, value string, line long, client string"
        )
        missing = wanted.join(writes, ["node", "tbl", "key", "value"], "left_anti")
        for row in missing.limit(_MAX_LISTED).collect():
            self.findings.append(
                Finding(
                    "history",
                    row.node,
                    "history",
                    self.history_name,
                    int(row.line),
                    f"acknowledged write lost: {row.client} wrote {row.tbl} key {row.key} = "
                    f"{row.value!r} and saw OK, but the node's binlog has no committed "
                    f"transaction writing it",
                )
            )

    def _reads(self, writes: DataFrame, reads: list[tuple[Any, ...]]) -> None:
        """A read's value must have been committed somewhere, and be on the node the
        record names (a read the promoted replica lacks: lost after a client saw it).
        """
        seen = self.spark.createDataFrame(
            reads, "node string, tbl string, key string, value string, line long, client string"
        )
        committed = writes.select("tbl", "key", "value").distinct()
        phantom = seen.join(committed, ["tbl", "key", "value"], "left_anti")
        for row in phantom.limit(_MAX_LISTED).collect():
            self.findings.append(
                Finding(
                    "history",
                    row.node,
                    "history",
                    self.history_name,
                    int(row.line),
                    f"read of a value never committed: {row.client} read {row.tbl} key "
                    f"{row.key} = {row.value!r}, which no node's binlog holds a committed "
                    f"write of",
                )
            )
        named = seen.filter("node != ''").join(committed, ["tbl", "key", "value"], "left_semi")
        lost = named.join(writes, ["node", "tbl", "key", "value"], "left_anti")
        for row in lost.limit(_MAX_LISTED).collect():
            self.findings.append(
                Finding(
                    "history",
                    row.node,
                    "history",
                    self.history_name,
                    int(row.line),
                    f"read lost: {row.client} read {row.tbl} key {row.key} = {row.value!r}, "
                    f"committed elsewhere, but the node's binlog does not hold it",
                )
            )
