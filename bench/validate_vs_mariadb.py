"""Benchmark: ``rpl validate`` on Spark against mariadb-binlog and a plain Python pass.

Writes a source's binlog, a replica's relay log and the replica's binlog holding at least
``--events`` events in all (rpl.core.testing.binlogs: what a replication run leaves, in
seconds), then, in one run, on the same files (in the page cache for every reader):

* ``mariadb-binlog --verify-binlog-checksum`` over every file, output to /dev/null (one C
  thread, decoding only);
* one plain Python process reading every file with the project's codec (``read_events``);
* the validator's two scanners in one Python process (no Spark, no cross-node checks):
  the exact one (row by row) and the sketcher (the fast path);
* ``rpl validate`` on Spark ``local[*]``: every check (structure, transactions, relay vs
  source, applied vs source), end to end (Spark start included) and from the start of
  the scan (a warm session), as it runs by default (the sketches prove the run clean)
  and with ``--exact`` (row by row).

Reports events/s and events/s per core, and the ratios, in docs/bench/validate.md,
validate.json and validate.png.
"""

from __future__ import annotations

import argparse
import datetime
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import (
    add_out_argument,
    codec_pass,
    machine_line,
    mariadb_binlog,
    mariadb_binlog_tool,
    publish,
    pyplot,
    save_figure,
)
from rpl.core.testing.binlogs import write_topology
from rpl.core.validate.layout import discover_all, plan_splits
from rpl.core.validate.scan import scan_all
from rpl.core.validate.sketch import sketch

EVENTS_PER_TRANSACTION = 12
"""Four events per transaction, in each of the three logs."""
READERS = (
    "mariadb-binlog",
    "codec pass",
    "exact scanner, 1 process",
    "sketcher, 1 process",
    "rpl validate --exact, end to end",
    "rpl validate, scan+checks",
    "rpl validate, end to end",
)


def say(text: str) -> None:
    print(f"[{datetime.datetime.now():%H:%M:%S}] {text}", flush=True)


def log_files(root: Path) -> list[Path]:
    return sorted(p for p in root.glob("*/*.0*") if p.is_file())


def scanner_pass(root: Path, split_bytes: int) -> tuple[float, int]:
    started = time.perf_counter()
    nodes = discover_all([str(root / "source"), str(root / "replica")])
    rows = scan_all(plan_splits(nodes, split_bytes))
    assert not [f for r in rows for f in r.findings], "the synthetic run has findings"
    return time.perf_counter() - started, sum(r.summary.events for r in rows)


def sketcher_pass(root: Path, split_bytes: int) -> tuple[float, int]:
    started = time.perf_counter()
    nodes = discover_all([str(root / "source"), str(root / "replica")])
    made = [sketch(split) for split in plan_splits(nodes, split_bytes)]
    assert not [s.irregular for s in made if s.irregular], "the synthetic run is irregular"
    return time.perf_counter() - started, sum(s.summary.events for s in made)


def cli_validate(root: Path, split_mb: int, exact: bool) -> dict[str, Any]:
    """``rpl validate`` as a user runs it: a new process (Python, imports, the JVM and
    the Spark session included); its wall time, its report and its phase lines.
    """
    report = root / "report.json"
    command = [
        sys.executable,
        "-m",
        "rpl.core.cli",
        "validate",
        str(root / "source"),
        str(root / "replica"),
        "--split-mb",
        str(split_mb),
        "--report",
        str(report),
        *(["--exact"] if exact else []),
    ]
    started = time.perf_counter()
    marks: dict[str, float] = {}
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as child:
        assert child.stderr is not None and child.stdout is not None
        for line in child.stderr:
            if line.startswith("rpl validate: "):
                text = line.removeprefix("rpl validate: ").strip()
                marks[text] = time.perf_counter() - started
                say(f"  {text}")
        summary = child.stdout.read()
    seconds = time.perf_counter() - started
    data = json.loads(report.read_text())
    if child.returncode != 0 or data["method"] != ("exact" if exact else "sketches"):
        raise SystemExit(
            f"the synthetic run did not validate clean ({data['method']}, "
            f"{data['unproven']}):\n{summary}"
        )
    return {
        "end_to_end_s": seconds,
        "events": data["events"],
        "marks": marks,
        "checks": list(data["checks"]),
    }


def warm_validate(root: Path, split_bytes: int) -> tuple[float, int, int]:
    """The default validation in a session already up: (seconds, events, cores)."""
    from rpl.core.validate.checks import validate
    from rpl.core.validate.job import spark_session

    spark = spark_session()
    spark.sparkContext.parallelize(range(4), 2).count()
    started = time.perf_counter()
    report = validate(
        [str(root / "source"), str(root / "replica")], spark=spark, split_bytes=split_bytes
    )
    seconds = time.perf_counter() - started
    cores = spark.sparkContext.defaultParallelism
    spark.stop()
    assert report.method == "sketches" and not report.findings, report.summary()
    return seconds, report.events, cores


def rate(events: int, seconds: float, cores: int) -> dict[str, float]:
    return {
        "seconds": seconds,
        "events_per_s": events / seconds,
        "events_per_s_per_core": events / seconds / cores,
        "cores": cores,
    }


def table(results: dict[str, Any]) -> str:
    p, readers, ratios = results["parameters"], results["readers"], results["ratios"]
    lines = [
        "# rpl validate against mariadb-binlog",
        "",
        f"Machine: {p['machine']}. {p['events']:,} events in {p['files']} files, "
        f"{p['bytes'] / 2**20:,.0f} MiB (a source's binlog, the replica's relay log and the "
        f"replica's binlog: {p['transactions']:,} transactions of GTID, BEGIN, INSERT, XID, "
        f"files of {p['file_mb']} MiB), Spark splits of {p['split_mb']} MiB, on "
        f"{readers['rpl validate, end to end']['cores']} cores. Every reader reads the same "
        "files, in the page cache.",
        "",
        "| reader | what it does | s | events/s | events/s per core |",
        "|---|---|---|---|---|",
    ]
    what = {
        "mariadb-binlog": "`--verify-binlog-checksum`, output to /dev/null (one C thread)",
        "codec pass": "one Python process, `read_events` over every file",
        "exact scanner, 1 process": "the validator's row-by-row scanner, no Spark, no "
        "cross-node checks",
        "sketcher, 1 process": "the validator's fast-path scanner (split sketches), no Spark, "
        "no cross-node checks",
        "rpl validate --exact, end to end": "every check row by row on Spark: the command's "
        "wall time",
        "rpl validate, scan+checks": "every check (split sketches reconciled), Spark session "
        "already up",
        "rpl validate, end to end": "every check (split sketches reconciled): the command's "
        "wall time (Python, the JVM, Spark's start included)",
    }
    for name in READERS:
        r = readers[name]
        lines.append(
            f"| {name} | {what[name]} | {r['seconds']:.1f} | "
            f"{r['events_per_s']:,.0f} | {r['events_per_s_per_core']:,.0f} |"
        )
    lines += [
        "",
        f"Ratios (events/s): rpl validate end to end / mariadb-binlog "
        f"**{ratios['validate_over_mariadb_binlog']:.2f}**; scan+checks / mariadb-binlog "
        f"**{ratios['checks_over_mariadb_binlog']:.2f}**; rpl validate end to end / codec pass "
        f"{ratios['validate_over_codec_pass']:.2f}; rpl validate / rpl validate --exact "
        f"{ratios['sketches_over_exact']:.2f}; sketcher / codec pass "
        f"{ratios['sketcher_over_codec_pass']:.2f}; exact scanner / codec pass "
        f"{ratios['scanner_over_codec_pass']:.2f}.",
        "",
        f"Target (rpl validate end to end, every check, >= mariadb-binlog's events/s): "
        f"**{'met' if ratios['validate_over_mariadb_binlog'] >= 1 else 'not met'}**.",
        "",
        "Phases of the `rpl validate` run (seconds from the command's start): "
        + ", ".join(f"{name} {at:.1f}" for name, at in results["marks"].items())
        + ".",
        "",
        "Phases of the `--exact` run: "
        + ", ".join(f"{name} {at:.1f}" for name, at in results["exact_marks"].items())
        + ".",
        "",
        "![events/s](validate.png)",
        "",
    ]
    return "\n".join(lines)


def plot(results: dict[str, Any], path: Path) -> None:
    figure, axis = pyplot().subplots(figsize=(12, 5))
    readers = results["readers"]
    values = [readers[n]["events_per_s"] for n in READERS]
    drawn = axis.bar(
        [n.replace(", ", ",\n") for n in READERS],
        values,
        color=[
            "tab:gray",
            "tab:orange",
            "tab:green",
            "tab:olive",
            "tab:cyan",
            "tab:blue",
            "tab:purple",
        ],
    )
    axis.bar_label(drawn, labels=[f"{v:,.0f}" for v in values])
    axis.set_ylabel("events/s")
    axis.set_ylim(0, max(values) * 1.2)
    axis.set_title(
        f"validating {results['parameters']['events']:,} events "
        f"({results['parameters']['bytes'] / 2**20:,.0f} MiB)"
    )
    save_figure(figure, path)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=10_000_000)
    parser.add_argument("--file-mb", type=int, default=256)
    parser.add_argument("--split-mb", type=int, default=32)
    add_out_argument(parser)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="rpl-bench-validate-"))
    try:
        transactions = -(-args.events // EVENTS_PER_TRANSACTION)
        say(f"writing {transactions:,} transactions into three logs under {root}")
        run = write_topology(
            root,
            transactions,
            max_file_bytes=args.file_mb << 20,
            progress=lambda n: say(f"  {n:,} transactions written") if n % 500_000 == 0 else None,
        )
        files = log_files(root)
        say(f"{run.events:,} events, {run.bytes / 2**20:,.0f} MiB in {len(files)} files")
        subprocess.run(["cat", *map(str, files)], stdout=subprocess.DEVNULL, check=True)
        say("mariadb-binlog")
        maria_s = mariadb_binlog(mariadb_binlog_tool(), files)
        say("codec pass")
        codec_s, codec_events = codec_pass(files)
        assert codec_events == run.events, (codec_events, run.events)
        say("exact scanner, one process")
        scanner_s, scanner_events = scanner_pass(root, args.split_mb << 20)
        assert scanner_events == run.events
        say("sketcher, one process")
        sketcher_s, sketcher_events = sketcher_pass(root, args.split_mb << 20)
        assert sketcher_events == run.events
        say("rpl validate (a new process)")
        spark = cli_validate(root, args.split_mb, exact=False)
        say("rpl validate --exact (a new process)")
        exact = cli_validate(root, args.split_mb, exact=True)
        say("rpl validate in a Spark session already up")
        warm_s, warm_events, cores = warm_validate(root, args.split_mb << 20)
        assert spark["events"] == exact["events"] == warm_events == run.events
        readers = {
            "mariadb-binlog": rate(run.events, maria_s, 1),
            "codec pass": rate(run.events, codec_s, 1),
            "exact scanner, 1 process": rate(run.events, scanner_s, 1),
            "sketcher, 1 process": rate(run.events, sketcher_s, 1),
            "rpl validate --exact, end to end": rate(run.events, exact["end_to_end_s"], cores),
            "rpl validate, scan+checks": rate(run.events, warm_s, cores),
            "rpl validate, end to end": rate(run.events, spark["end_to_end_s"], cores),
        }
        e2e = readers["rpl validate, end to end"]["events_per_s"]
        results = {
            "parameters": {
                "machine": machine_line(),
                "events": run.events,
                "transactions": run.transactions,
                "bytes": run.bytes,
                "files": len(files),
                "file_mb": args.file_mb,
                "split_mb": args.split_mb,
            },
            "readers": readers,
            "marks": spark["marks"],
            "exact_marks": exact["marks"],
            "ratios": {
                "validate_over_mariadb_binlog": e2e / readers["mariadb-binlog"]["events_per_s"],
                "checks_over_mariadb_binlog": readers["rpl validate, scan+checks"]["events_per_s"]
                / readers["mariadb-binlog"]["events_per_s"],
                "validate_over_codec_pass": e2e / readers["codec pass"]["events_per_s"],
                "scanner_over_codec_pass": readers["exact scanner, 1 process"]["events_per_s"]
                / readers["codec pass"]["events_per_s"],
                "sketcher_over_codec_pass": readers["sketcher, 1 process"]["events_per_s"]
                / readers["codec pass"]["events_per_s"],
                "sketches_over_exact": e2e
                / readers["rpl validate --exact, end to end"]["events_per_s"],
            },
        }
    finally:
        shutil.rmtree(root, ignore_errors=True)
    publish(args.out, "validate", results, table(results), plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
