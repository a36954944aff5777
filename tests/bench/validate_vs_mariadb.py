"""Benchmark: ``rpl validate`` on Spark against mariadb-binlog and a plain Python pass.

Writes a source's binlog, a replica's relay log and the replica's binlog holding at least
``--events`` events in all (rpl.core.testing.binlogs: what a replication run leaves, in
seconds), then, in one run, on the same files (in the page cache for every reader):

* ``mariadb-binlog --verify-binlog-checksum`` over every file, output to /dev/null (one C
  thread, decoding only);
* one plain Python process reading every file with the project's codec (``read_events``);
* the validator's own scanner in one Python process (no Spark, no cross-node checks);
* ``rpl validate`` on Spark ``local[*]``: every check (structure, transactions, relay vs
  source, applied vs source), end to end (Spark start included) and from the start of
  the scan (a warm session).

Reports events/s and events/s per core, and the ratios, in docs/bench/validate.md,
validate.json and validate.png.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
# a sibling script, not a package: mypy sees it as Any (MYPYPATH=tests/bench to follow it)
from replication_vs_mariadb import cpu_model  # type: ignore[import-not-found, unused-ignore] # noqa: E402,I001

from rpl.core.binlog.logfile import read_events  # noqa: E402
from rpl.core.testing.binlogs import write_topology  # noqa: E402
from rpl.core.validate.layout import discover_all, plan_splits  # noqa: E402
from rpl.core.validate.scan import scan_all  # noqa: E402

OUT = Path(__file__).resolve().parents[2] / "docs" / "bench"
EVENTS_PER_TRANSACTION = 12
"""Four events per transaction, in each of the three logs."""
READERS = ("mariadb-binlog", "codec pass", "scanner, 1 process", "rpl validate, scan+checks",
           "rpl validate, end to end")


def say(text: str) -> None:
    print(f"[{datetime.datetime.now():%H:%M:%S}] {text}", flush=True)


def log_files(root: Path) -> list[Path]:
    return sorted(p for p in root.glob("*/*.0*") if p.is_file())


def mariadb_binlog(files: list[Path]) -> float:
    tool = shutil.which("mariadb-binlog") or shutil.which("mysqlbinlog")
    if tool is None:
        raise SystemExit("mariadb-binlog is not installed (tools/system-packages installs it)")
    started = time.perf_counter()
    done = subprocess.run([tool, "--verify-binlog-checksum", *map(str, files)],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    seconds = time.perf_counter() - started
    errors = done.stderr.decode(errors="replace")
    if done.returncode != 0 or "ERROR" in errors:
        raise SystemExit(f"mariadb-binlog exited {done.returncode}: {errors[-2000:]}")
    return seconds


def codec_pass(files: list[Path]) -> tuple[float, int]:
    started, events = time.perf_counter(), 0
    for path in files:
        for _ in read_events(path, check_log_pos=False):
            events += 1
    return time.perf_counter() - started, events


def scanner_pass(root: Path, split_bytes: int) -> tuple[float, int]:
    started = time.perf_counter()
    nodes = discover_all([str(root / "source"), str(root / "replica")])
    rows = scan_all(plan_splits(nodes, split_bytes))
    assert not [f for r in rows for f in r.findings], "the synthetic run has findings"
    return time.perf_counter() - started, sum(r.summary.events for r in rows)


def spark_validate(root: Path, split_bytes: int) -> dict[str, Any]:
    from rpl.core.validate.checks import validate
    from rpl.core.validate.job import spark_session
    started = time.perf_counter()
    spark = spark_session()
    session_s = time.perf_counter() - started
    marks: dict[str, float] = {}

    def progress(text: str) -> None:
        marks[text] = time.perf_counter() - started
        say(f"  validate: {text}")
    report = validate([str(root / "source"), str(root / "replica")], spark=spark,
                      split_bytes=split_bytes, progress=progress)
    total = time.perf_counter() - started
    cores = spark.sparkContext.defaultParallelism
    spark.stop()
    if report.findings:
        raise SystemExit(f"the synthetic run did not validate clean:\n{report.summary()}")
    return {"end_to_end_s": total, "session_s": session_s, "checks_s": total - session_s,
            "events": report.events, "cores": cores, "marks": marks,
            "checks": report.checks}


def rate(events: int, seconds: float, cores: int) -> dict[str, float]:
    return {"seconds": seconds, "events_per_s": events / seconds,
            "events_per_s_per_core": events / seconds / cores, "cores": cores}


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
        "scanner, 1 process": "the validator's scanner, no Spark, no cross-node checks",
        "rpl validate, scan+checks": "every check, Spark session already up",
        "rpl validate, end to end": "every check, Spark session start included",
    }
    for name in READERS:
        r = readers[name]
        lines.append(f"| {name} | {what[name]} | {r['seconds']:.1f} | "
                     f"{r['events_per_s']:,.0f} | {r['events_per_s_per_core']:,.0f} |")
    lines += [
        "",
        f"Ratios (events/s): rpl validate end to end / mariadb-binlog "
        f"**{ratios['validate_over_mariadb_binlog']:.2f}**; scan+checks / mariadb-binlog "
        f"**{ratios['checks_over_mariadb_binlog']:.2f}**; rpl validate end to end / codec pass "
        f"{ratios['validate_over_codec_pass']:.2f}; scanner / codec pass "
        f"{ratios['scanner_over_codec_pass']:.2f}.",
        "",
        "Phases of the validate run (seconds from the session start): " + ", ".join(
            f"{name} {at:.1f}" for name, at in results["marks"].items()),
        "",
        "![events/s](validate.png)",
        "",
    ]
    return "\n".join(lines)


def plot(results: dict[str, Any], path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    figure, axis = plt.subplots(figsize=(9, 4.8))
    readers = results["readers"]
    values = [readers[n]["events_per_s"] for n in READERS]
    drawn = axis.bar([n.replace(", ", ",\n") for n in READERS], values,
                     color=["tab:gray", "tab:orange", "tab:green", "tab:blue", "tab:purple"])
    axis.bar_label(drawn, labels=[f"{v:,.0f}" for v in values])
    axis.set_ylabel("events/s")
    axis.set_ylim(0, max(values) * 1.2)
    axis.set_title(f"validating {results['parameters']['events']:,} events "
                   f"({results['parameters']['bytes'] / 2**20:,.0f} MiB)")
    figure.tight_layout()
    figure.savefig(path, dpi=110)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=10_000_000)
    parser.add_argument("--file-mb", type=int, default=256)
    parser.add_argument("--split-mb", type=int, default=32)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="rpl-bench-validate-"))
    try:
        transactions = -(-args.events // EVENTS_PER_TRANSACTION)
        say(f"writing {transactions:,} transactions into three logs under {root}")
        run = write_topology(root, transactions, max_file_bytes=args.file_mb << 20,
                             progress=lambda n: say(f"  {n:,} transactions written")
                             if n % 500_000 == 0 else None)
        files = log_files(root)
        say(f"{run.events:,} events, {run.bytes / 2**20:,.0f} MiB in {len(files)} files")
        subprocess.run(["cat", *map(str, files)], stdout=subprocess.DEVNULL, check=True)
        say("mariadb-binlog")
        maria_s = mariadb_binlog(files)
        say("codec pass")
        codec_s, codec_events = codec_pass(files)
        assert codec_events == run.events, (codec_events, run.events)
        say("scanner, one process")
        scanner_s, scanner_events = scanner_pass(root, args.split_mb << 20)
        assert scanner_events == run.events
        say("rpl validate on Spark")
        spark = spark_validate(root, args.split_mb << 20)
        assert spark["events"] == run.events
        cores = spark["cores"]
        readers = {
            "mariadb-binlog": rate(run.events, maria_s, 1),
            "codec pass": rate(run.events, codec_s, 1),
            "scanner, 1 process": rate(run.events, scanner_s, 1),
            "rpl validate, scan+checks": rate(run.events, spark["checks_s"], cores),
            "rpl validate, end to end": rate(run.events, spark["end_to_end_s"], cores),
        }
        e2e = readers["rpl validate, end to end"]["events_per_s"]
        results = {
            "parameters": {"machine": f"{cpu_model()}, {os.cpu_count()} CPUs",
                           "events": run.events, "transactions": run.transactions,
                           "bytes": run.bytes, "files": len(files), "file_mb": args.file_mb,
                           "split_mb": args.split_mb},
            "readers": readers,
            "marks": spark["marks"],
            "ratios": {
                "validate_over_mariadb_binlog": e2e / readers["mariadb-binlog"]["events_per_s"],
                "checks_over_mariadb_binlog":
                    readers["rpl validate, scan+checks"]["events_per_s"]
                    / readers["mariadb-binlog"]["events_per_s"],
                "validate_over_codec_pass": e2e / readers["codec pass"]["events_per_s"],
                "scanner_over_codec_pass": readers["scanner, 1 process"]["events_per_s"]
                / readers["codec pass"]["events_per_s"],
            },
        }
    finally:
        shutil.rmtree(root, ignore_errors=True)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "validate.json").write_text(json.dumps(results, indent=2) + "\n")
    (args.out / "validate.md").write_text(table(results))
    plot(results, args.out / "validate.png")
    print(table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
