"""``rpl validate DATADIR... [--history FILE] [--node NAME] [--fresh-reads] [--group UUID]
[--master URL] [--report FILE.json] [--split-mb N] [--exact]``: exit 0 clean, 1 violations,
2 usage errors.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from rpl.core.validate.history import HistoryError
from rpl.core.validate.layout import DEFAULT_SPLIT_BYTES, LayoutError
from rpl.core.validate.report import USAGE


def add_parser(commands: Any) -> None:
    """The ``validate`` subcommand."""
    parser = commands.add_parser(
        "validate",
        help="check binlogs, relay logs and client histories across nodes (Spark)",
        description="Check the binlogs, relay logs and client histories of a run across "
        "nodes, on Spark (pip install 'rpl-core[spark]'). Exit code 0 when "
        "clean, 1 on violations, 2 on usage errors.",
    )
    parser.add_argument(
        "datadirs",
        nargs="+",
        metavar="DATADIR",
        help="data directories of the nodes (a node is named by its directory)",
    )
    parser.add_argument("--history", help="client history, JSON lines (see docs/validate.md)")
    parser.add_argument(
        "--node",
        help="the node every acknowledged write of the history must "
        "be on, for records that name none (default: all)",
    )
    parser.add_argument(
        "--fresh-reads",
        action="store_true",
        help="with --history: every read must see every write acknowledged before it "
        "began (Group Replication's BEFORE, AFTER, BEFORE_AND_AFTER)",
    )
    parser.add_argument(
        "--group",
        metavar="UUID",
        help="the nodes are members of the Group Replication group of this name: check "
        "that every binlog holds the group's GTIDs in the group's order",
    )
    parser.add_argument("--master", help="Spark master URL (default local[*])")
    parser.add_argument("--report", help="write the JSON report here")
    parser.add_argument(
        "--exact",
        action="store_true",
        help="compare row by row even where the split sketches prove the run "
        "clean (slower; the same verdict)",
    )
    parser.add_argument(
        "--split-mb",
        type=float,
        default=DEFAULT_SPLIT_BYTES / (1 << 20),
        help="bytes per Spark task, in MiB (default %(default)s)",
    )
    parser.set_defaults(run=run)


def _progress(text: str) -> None:
    print(f"rpl validate: {text}", file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    """Run the validation; the exit code."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        print("rpl validate needs pyspark: pip install 'rpl-core[spark]'", file=sys.stderr)
        return USAGE
    from rpl.core.validate.checks import validate

    try:
        report = validate(
            args.datadirs,
            history=args.history,
            expect_on=args.node,
            fresh_reads=args.fresh_reads,
            group=args.group,
            master=args.master,
            split_bytes=max(1024, int(args.split_mb * (1 << 20))),
            exact=args.exact,
            progress=_progress,
        )
    except (LayoutError, HistoryError, OSError) as exc:
        print(f"rpl validate: {exc}", file=sys.stderr)
        return USAGE
    print(report.summary())
    if args.report:
        report.write_json(args.report)
    return report.exit_code
