"""Group Replication checks of ``rpl validate``: fresh reads (``--fresh-reads``) and the
group's one order (``--group UUID``), as DataFrame queries.

* fresh reads: a read that saw OK must show every write acknowledged before it began
  (what BEFORE, AFTER and BEFORE_AND_AFTER promise, WL#10379). A key's versions are
  ordered by the GTIDs of the transactions that wrote them (the group's total order:
  group GTIDs are handed out in delivery order); the read's value must not be older than
  the newest write of its key whose client had OK before the read started, and a read
  that found no row is stale when such a write exists. Values are compared as text and
  must be unique per key for the check to mean anything (the harnesses write unique
  values). Under EVENTUAL stale reads are allowed; the check then counts what it finds.
* group order: on every node, the group's GTIDs (those of the group's UUID) follow each
  other in increasing sequence numbers in its binary log (members commit in the group's
  delivery order, which the sequence numbers follow), each once; and a node lacks none
  of the group's GTIDs below the highest it holds, unless its oldest binlog's
  PREVIOUS_GTIDS says it was purged.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final

from rpl.core.binlog.gtid import Gtid, GtidSet
from rpl.core.validate.findings import Finding
from rpl.core.validate.history import READ, WRITE, Operation

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

MAX_LISTED: Final = 1000
"""At most this many findings of one kind are collected to the driver."""
_OPS: Final = (
    "tbl string, key string, value string, t double, line long, client string, node string"
)


def _versions(writes: DataFrame) -> DataFrame:
    """(tbl, key, value) -> the (sid, gno) of the first transaction that wrote it."""
    from pyspark.sql import functions as F

    parts = F.split("gtid", ":")
    return (
        writes.filter("gtid IS NOT NULL")
        .select(
            "tbl",
            "key",
            "value",
            parts.getItem(0).alias("sid"),
            parts.getItem(1).cast("long").alias("gno"),
        )
        .groupBy("tbl", "key", "value", "sid")
        .agg(F.min("gno").alias("gno"))
    )


def stale_reads(
    spark: SparkSession, writes: DataFrame, operations: Sequence[Operation], history: str
) -> tuple[list[Finding], dict[str, int]]:
    """The reads that missed a write acknowledged before they began (module docstring):
    the first MAX_LISTED of them, and how many there are of each table (all of them).
    """
    from pyspark.sql import functions as F

    acked = [
        (o.table, o.key, o.value, o.end, o.line, o.client, o.node)
        for o in operations
        if o.op == WRITE and o.outcome == "ok" and o.value is not None
    ]
    reads = [
        (o.table, o.key, o.value, o.start, o.line, o.client, o.node)
        for o in operations
        if o.op == READ and o.outcome == "ok"
    ]
    if not acked or not reads:
        return [], {}
    versions = _versions(writes)
    done = spark.createDataFrame(acked, _OPS).join(versions, ["tbl", "key", "value"])
    w = done.select(
        "tbl",
        "key",
        "sid",
        F.col("gno").alias("w_gno"),
        F.col("t").alias("w_end"),
        F.col("value").alias("w_value"),
        F.col("client").alias("w_client"),
    )
    r = spark.createDataFrame(reads, _OPS).join(versions, ["tbl", "key", "value"], "left")
    r = r.filter("value IS NULL OR gno IS NOT NULL")  # a phantom read is the history check's
    before = r.alias("r").join(
        w.alias("w"),
        (F.col("r.tbl") == F.col("w.tbl"))
        & (F.col("r.key") == F.col("w.key"))
        & (F.col("w.w_end") < F.col("r.t"))
        & (F.col("r.sid").isNull() | (F.col("r.sid") == F.col("w.sid"))),
    )
    newest = before.groupBy("r.line").agg(
        F.max(F.struct("w_gno", "w_value", "w_client", "w_end")).alias("newest"),
        F.first("r.tbl").alias("tbl"),
        F.first("r.key").alias("key"),
        F.first("r.value").alias("value"),
        F.first("r.gno").alias("gno"),
        F.first("r.client").alias("client"),
        F.first("r.node").alias("node"),
        F.first("r.t").alias("start"),
    )
    stale = newest.filter("gno IS NULL OR gno < newest.w_gno").orderBy("line").persist()
    listed = [_stale_finding(row, history) for row in stale.limit(MAX_LISTED).collect()]
    by_table = {str(row.tbl): int(row["count"]) for row in stale.groupBy("tbl").count().collect()}
    stale.unpersist()
    return listed, by_table


def _stale_finding(row: Any, history: str) -> Finding:
    seen = "no row" if row.value is None else f"{row.value!r}"
    newest = row.newest
    return Finding(
        "fresh_reads",
        row.node or "",
        "history",
        history,
        int(row.line),
        f"stale read: {row.client} read {row.tbl} key {row.key} and got {seen}, but "
        f"{newest.w_client} had OK for {newest.w_value!r} (group sequence number "
        f"{newest.w_gno}) {row.start - newest.w_end:.3f} s before the read began",
    )


def group_order(
    trx: DataFrame, group: str, purged: Callable[[str], GtidSet], binlog_kind: str
) -> list[Finding]:
    """The group's GTIDs out of the group's order, twice, or missing on a node."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    mine = (
        trx.filter((F.col("kind") == binlog_kind) & (F.col("state") == "complete"))
        .filter(F.lower(F.col("gtid")).startswith(group.lower() + ":"))
        .withColumn("gno", F.split("gtid", ":").getItem(1).cast("long"))
    )
    order = Window.partitionBy("node").orderBy("file", "pos")
    paired = mine.withColumn("prev", F.lag("gno").over(order))
    findings = [
        Finding(
            "group_order",
            row.node,
            row.kind,
            row.file,
            int(row.pos),
            f"group GTID {row.gtid} after sequence number {row.prev}: not the group's order"
            + (" (a duplicate)" if row.prev == row.gno else ""),
            gtid=row.gtid,
        )
        for row in paired.filter("prev IS NOT NULL AND gno <= prev")
        .orderBy("node", "file", "pos")
        .limit(MAX_LISTED)
        .collect()
    ]
    return findings + _holes(mine, group, purged)


def _holes(mine: DataFrame, group: str, purged: Callable[[str], GtidSet]) -> list[Finding]:
    from pyspark.sql import functions as F

    every = mine.select("gno").distinct()
    tops = mine.groupBy("node").agg(F.max("gno").alias("top"))
    wanted = tops.crossJoin(every).filter("gno <= top").select("node", "gno")
    missing = wanted.join(mine.select("node", "gno"), ["node", "gno"], "left_anti")
    found = []
    for row in missing.orderBy("node", "gno").limit(MAX_LISTED).collect():
        if Gtid.parse(f"{group}:{row.gno}") in purged(row.node):
            continue
        found.append(
            Finding(
                "group_order",
                row.node,
                "binlog",
                "",
                -1,
                f"group GTID {group}:{row.gno} is missing, though this member has later "
                "ones and another member has it",
                gtid=f"{group}:{row.gno}",
            )
        )
    return found
