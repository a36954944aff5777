"""The Spark side of ``rpl validate``: the scan as Spark tasks, then the cross-node checks.

The splits become a DataFrame of one row each, partitioned one split per partition, and
``mapInArrow`` runs :func:`rpl.core.validate.scan.scan` on each in the executors'
Python workers, so the parsing spreads over every core (``local[*]``) or every executor
of a cluster (``--master spark://host:port``; the workers then need rpl-core installed
and the data directories at the same paths). A task returns Arrow record batches of one
wide schema (``rec`` says which kind of row: T transaction, E event, F finding,
S summary, W written row); the driver caches that once and reads each kind from it.

:func:`events_frame` gives the events DataFrame (one row per event, the columns of
:data:`rpl.core.validate.scan.EVENT_COLUMNS`); the checks themselves run on transaction
rows, whose digests fold every event's digest, which moves a quarter of the rows
through the JVM.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final

import attrs

from rpl.core.validate.layout import LogFile, Split
from rpl.core.validate.scan import EVENT_COLUMNS, SplitRows, scan
from rpl.core.validate.sketch import Sketch, restricted, sketch

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark import RDD, SparkConf
    from pyspark.sql import DataFrame, SparkSession

_FIELDS: Final = (
    ("rec", "string"),
    ("node", "string"),
    ("kind", "string"),
    ("file", "string"),
    ("ordinal", "int"),
    ("split", "int"),
    ("pos", "long"),
    ("end", "long"),
    ("size", "long"),
    ("type", "int"),
    ("server_id", "long"),
    ("log_pos", "long"),
    ("gtid", "string"),
    ("xid", "long"),
    ("crc_ok", "boolean"),
    ("digest", "long"),
    ("state", "string"),
    ("events", "long"),
    ("source_file", "string"),
    ("source_server_id", "long"),
    ("source_pos", "long"),
    ("source_end", "long"),
    ("check", "string"),
    ("severity", "string"),
    ("detail", "string"),
    ("tbl", "string"),
    ("key", "string"),
    ("value", "string"),
)
SCHEMA: Final = ", ".join(f"{name} {kind}" for name, kind in _FIELDS)
"""The wide schema of the scan's rows, as a Spark DDL string."""
_COLUMNS: Final = [name for name, _ in _FIELDS]

_SPARK_NOISE: Final = (
    "WARNING: Using incubator modules",
    "Setting default log level to",
    "To adjust logging level use sc.setLogLevel",
)
"""Lines the JVM and Spark print at every start, which say nothing about the run."""


def _forward_quietly(stream: IO[bytes], to: IO[str]) -> None:
    """Copy the JVM's stderr to ``to`` line by line, without Spark's start-up lines."""
    for raw in iter(stream.readline, b""):
        line = raw.decode(errors="replace")
        if not line.startswith(_SPARK_NOISE):
            to.write(line)
            to.flush()


def _launch_quiet_gateway(conf: SparkConf) -> None:
    """Start the JVM (once per process) with its stderr through :func:`_forward_quietly`:
    errors still reach the console, Spark's start-up chatter does not.
    """
    from pyspark import SparkContext
    from pyspark.java_gateway import launch_gateway

    if SparkContext._gateway is not None:
        return
    gateway = launch_gateway(conf, popen_kwargs={"stderr": subprocess.PIPE})
    threading.Thread(
        target=_forward_quietly,
        args=(gateway.proc.stderr, sys.stderr),
        name="rpl-spark-stderr",
        daemon=True,
    ).start()
    SparkContext._ensure_initialized(gateway=gateway, conf=conf)


def spark_session(master: str | None = None, app: str = "rpl validate") -> SparkSession:
    """A Spark session: ``local[*]`` unless ``master`` names another (the UI and Spark's
    console progress bars off, its start-up lines dropped, its log at ERROR: what reaches
    the console is ours, :func:`stage_progress`; the executors' Python the same as this
    one).
    """
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark import SparkConf
    from pyspark.sql import SparkSession

    quiet = f"-Dlog4j2.configurationFile={Path(__file__).with_name('log4j2.properties')}"
    conf = (
        SparkConf()
        .setAppName(app)
        .setMaster(master or "local[*]")
        .set("spark.driver.extraJavaOptions", quiet)
        .set("spark.ui.enabled", "false")
        .set("spark.ui.showConsoleProgress", "false")
        .set("spark.sql.shuffle.partitions", "8")
        .set("spark.driver.memory", "2g")
    )
    _launch_quiet_gateway(conf)
    session = SparkSession.builder.config(conf=conf).getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session


@contextmanager
def stage_progress(
    spark: SparkSession, say: Callable[[str], None], every: float = 2.0
) -> Iterator[None]:
    """While the block runs, Spark's tasks as our own progress: ``say("Spark tasks:
    done/total")`` for the running stages, when the count changed and at most every
    ``every`` seconds (Spark's own bars are off, see :func:`spark_session`).
    """
    stop = threading.Event()
    tracker = spark.sparkContext.statusTracker()

    def poll() -> None:
        shown = (-1, -1)
        while not stop.wait(every):
            stages = [tracker.getStageInfo(i) for i in tracker.getActiveStageIds()]
            counts = (
                sum(st.numCompletedTasks for st in stages if st),
                sum(st.numTasks for st in stages if st),
            )
            if counts[1] and counts != shown:
                say(f"Spark tasks: {counts[0]}/{counts[1]} done")
                shown = counts

    watcher = threading.Thread(target=poll, name="rpl-spark-progress", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        stop.set()
        watcher.join()


def _one_task_each(spark: SparkSession, items: list[Any]) -> RDD[Any]:
    """``items`` as an RDD of one partition each: one Spark task per split."""
    return spark.sparkContext.parallelize(items, max(1, len(items)))


def _split_json(split: Split) -> str:
    return json.dumps(
        {
            "file": attrs.asdict(split.file),
            "number": split.number,
            "start": split.start,
            "end": split.end,
        }
    )


def _split_from_json(text: str) -> Split:
    record = json.loads(text)
    return Split(LogFile(**record["file"]), record["number"], record["start"], record["end"])


class _Columns:
    """Columns of the wide schema, filled a kind of row at a time."""

    def __init__(self, split: Split) -> None:
        self.split = split
        self.values: dict[str, list[Any]] = {name: [] for name in _COLUMNS}
        self.rows = 0

    def add(self, rec: str, count: int, columns: dict[str, list[Any]]) -> None:
        """``count`` rows of kind ``rec``; columns not given are null, except the split's
        own node, kind, file, ordinal and number.
        """
        log = self.split.file
        given: dict[str, list[Any]] = {
            "rec": [rec] * count,
            "node": [log.node] * count,
            "kind": [log.kind] * count,
            "file": [log.name] * count,
            "ordinal": [log.ordinal] * count,
            "split": [self.split.number] * count,
            **columns,
        }
        for name, values in self.values.items():
            values += given.get(name) or [None] * count
        self.rows += count


def _optional(values: list[int], missing: int = -1) -> list[int | None]:
    return [None if v == missing else v for v in values]


def columns_of(rows: SplitRows) -> dict[str, list[Any]]:
    """Every row of one split, as columns of the wide schema."""
    out = _Columns(rows.split)
    trx = rows.transactions
    out.add(
        "T",
        len(trx),
        {
            "pos": [t.pos for t in trx],
            "end": [t.end for t in trx],
            "gtid": [t.gtid for t in trx],
            "state": [t.state for t in trx],
            "events": [t.events for t in trx],
            "digest": [t.digest for t in trx],
            "source_file": [t.source_file for t in trx],
            "source_server_id": [t.source_server_id for t in trx],
            "source_pos": _optional([t.source_pos for t in trx]),
            "source_end": _optional([t.source_end for t in trx]),
        },
    )
    out.add("E", len(rows.events["pos"]), dict(rows.events))
    found = rows.findings
    out.add(
        "F",
        len(found),
        {
            "file": [f.file for f in found],
            "pos": [f.position for f in found],
            "check": [f.check for f in found],
            "severity": [f.severity for f in found],
            "detail": [f.detail for f in found],
            "gtid": [f.gtid or None for f in found],
            "source_file": [f.source_file or None for f in found],
            "source_pos": _optional([f.source_position for f in found]),
        },
    )
    writes = rows.writes
    out.add(
        "W",
        len(writes),
        {
            "gtid": [w[0] for w in writes],
            "tbl": [w[1] for w in writes],
            "key": [w[2] for w in writes],
            "value": [w[3] for w in writes],
        },
    )
    out.add("S", 1, {"detail": [json.dumps(rows.summary.as_json())]})
    return out.values


def _arrow_schema() -> pa.Schema:
    import pyarrow as pa

    types = {"string": pa.string(), "int": pa.int32(), "long": pa.int64(), "boolean": pa.bool_()}
    return pa.schema([(name, types[kind]) for name, kind in _FIELDS])


def _batch(columns: dict[str, list[Any]]) -> pa.RecordBatch:
    import pyarrow as pa

    return pa.RecordBatch.from_pydict(columns, schema=_arrow_schema())


def _scan_partition(extract_writes: bool, every_event: bool) -> Any:
    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for text in batch.column("split").to_pylist():
                rows = scan(
                    _split_from_json(text), extract_writes=extract_writes, every_event=every_event
                )
                yield _batch(columns_of(rows))

    return run


def scan_frame(
    spark: SparkSession,
    splits: list[Split],
    *,
    extract_writes: bool = False,
    every_event: bool = False,
) -> DataFrame:
    """The rows of every split (the wide schema), one Spark task per split."""
    frame = spark.createDataFrame(
        _one_task_each(spark, [(_split_json(s),) for s in splits]), "split string"
    )
    return frame.mapInArrow(_scan_partition(extract_writes, every_event), SCHEMA)


def events_frame(spark: SparkSession, splits: list[Split]) -> DataFrame:
    """One row per event of every split (see the module docstring)."""
    rows = scan_frame(spark, splits, every_event=True)
    return rows.filter("rec = 'E'").select("node", "kind", "file", "ordinal", *EVENT_COLUMNS)


def _sketch_task(text: str) -> str:
    return json.dumps(sketch(_split_from_json(text)).as_json())


def _restricted_task(request: tuple[str, list[int], list[int]]) -> tuple[int, int, int]:
    text, lo, hi = request
    return restricted(_split_from_json(text), (lo[0], lo[1]), (hi[0], hi[1]))


def sketches(spark: SparkSession, splits: list[Split]) -> list[tuple[Split, Sketch]]:
    """The sketch of every split (:mod:`rpl.core.validate.sketch`), one Spark task each."""
    done = _one_task_each(spark, [_split_json(s) for s in splits]).map(_sketch_task)
    return [
        (split, Sketch.from_json(json.loads(text)))
        for split, text in zip(splits, done.collect(), strict=True)
    ]


def restricted_sums(
    spark: SparkSession, requests: list[tuple[Split, tuple[int, int], tuple[int, int]]]
) -> list[tuple[int, int, int]]:
    """(count, xor, total) of each requested binlog split over its span, one task each."""
    done = _one_task_each(
        spark, [(_split_json(s), list(lo), list(hi)) for s, lo, hi in requests]
    ).map(_restricted_task)
    return [(r[0], r[1], r[2]) for r in done.collect()]
