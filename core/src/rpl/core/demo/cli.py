"""``rpl demo failover [--dir D] [--duration S] [--writers N] [--readers N] [--short]
[--no-validate]``: exit 0 when AFTER_SYNC lost nothing a client saw (and ``rpl validate``
agrees), 1 otherwise.

``rpl demo consistency [--dir D] [--seconds S] [--writers N] [--readers N] [--short]
[--no-validate]``: exit 0 when BEFORE, AFTER and BEFORE_AND_AFTER showed no stale read
(and ``rpl validate`` agrees with every count), 1 otherwise.
"""

from __future__ import annotations

import argparse
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any, TypeVar

from rpl.core.demo import consistency_report
from rpl.core.demo.consistency import run_demo
from rpl.core.demo.failover import WAIT_POINTS, Trial, run_trial
from rpl.core.demo.report import verdict_table, write_html
from rpl.core.sandbox.sandbox import SandboxError

_T = TypeVar("_T")

DESCRIPTION = (
    "Lossless failover, shown on real processes: for AFTER_SYNC, then AFTER_COMMIT, a "
    "source and two semisync replicas on loopback, writers and readers on the source, the "
    "network to the replicas cut and the source SIGKILLed mid-run, the most advanced "
    "replica promoted; then what the clients saw is checked against the new source, "
    "directly and with rpl validate. Ends with a verdict table and an HTML report. Exit "
    "code 0 when AFTER_SYNC lost nothing a client saw (and rpl validate agrees), 1 "
    "otherwise, 130 when interrupted."
)


def _say(text: str) -> None:
    prefix = "\r" if sys.stderr.isatty() else ""
    print(f"{prefix}{text}", file=sys.stderr, flush=True)


def _on_interrupt(interrupted: threading.Event) -> Callable[[int, FrameType | None], None]:
    """Ctrl-C: raise KeyboardInterrupt as Python does, and remember it. The exception
    goes astray when the signal lands in a finalizer (it is printed and dropped there);
    the demo then sees ``interrupted`` at its next check and stops all the same.
    """

    def handler(signum: int, frame: FrameType | None) -> None:
        interrupted.set()
        raise KeyboardInterrupt

    return handler


def _spark(enabled: bool) -> Any:
    if not enabled:
        return None
    try:
        from rpl.core.validate.job import spark_session

        return spark_session("local[2]")
    except ImportError:
        _say(
            "pyspark is not installed: the logs are not checked with rpl validate "
            "(pip install 'rpl-core[spark]')"
        )
        return None


CONSISTENCY = (
    "Group Replication's consistency levels, shown on real processes: a single-primary "
    "group of three members on loopback (each with its etcd member); for EVENTUAL, "
    "BEFORE, AFTER and BEFORE_AND_AFTER, writers on the primary and readers on the "
    "secondaries, one secondary's applier falling behind now and then; every read checked "
    "for a write acknowledged before it began that it missed (a stale read), directly "
    "and with rpl validate. Ends with a verdict table (stale reads and commit latency per "
    "level) and an HTML report. Exit code 0 when BEFORE, AFTER and BEFORE_AND_AFTER "
    "showed no stale read (and rpl validate agrees), 1 otherwise, 130 when interrupted."
)


def _root(args: argparse.Namespace) -> Path:
    """The demo's directory: ``--dir`` emptied, or a new temporary one."""
    root = Path(args.dir).expanduser() if args.dir else Path(tempfile.mkdtemp(prefix="rpl-demo-"))
    if args.dir and root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True, exist_ok=True)
    return root


def _guarded(work: Callable[[threading.Event], _T], spark: Any, stopped: str) -> _T | int:
    """Run ``work`` with Ctrl-C caught: its result, or the exit code (130 interrupted,
    1 when a sandbox failed); Spark stopped and the SIGINT handler restored either way.
    ``work`` checks the event it is given between its steps (an interrupt whose
    KeyboardInterrupt went astray sets it all the same).
    """
    interrupted = threading.Event()
    previous = signal.signal(signal.SIGINT, _on_interrupt(interrupted))
    try:
        result = work(interrupted)
        if interrupted.is_set():
            raise KeyboardInterrupt
        return result
    except KeyboardInterrupt:
        _say(f"interrupted: every {stopped} of the demo is stopped")
        return 130
    except (SandboxError, AssertionError) as exc:
        _say(f"the demo failed: {exc}")
        return 1
    finally:
        signal.signal(signal.SIGINT, previous)
        if spark is not None:
            spark.stop()


def run(args: argparse.Namespace) -> int:
    """Run the failover demo; the exit code."""
    root = _root(args)
    duration = 3.0 if args.short else args.duration
    writers, readers = (4, 2) if args.short else (args.writers, args.readers)
    spark = _spark(not args.no_validate)
    started = time.time()

    def trials_of(interrupted: threading.Event) -> list[Trial]:
        trials: list[Trial] = []
        for wait_point in WAIT_POINTS:
            if interrupted.is_set():
                raise KeyboardInterrupt
            _say(
                f"[{wait_point}] deploying a source and two semisync replicas "
                f"({wait_point.upper()})"
            )
            trials.append(
                run_trial(
                    root / wait_point,
                    wait_point,
                    duration=duration,
                    writers=writers,
                    readers=readers,
                    spark=spark,
                    say=_say,
                    interrupted=interrupted,
                    break_wait_point=args.break_after_sync and wait_point == "after_sync",
                )
            )
        return trials

    trials = _guarded(trials_of, spark, "server")
    if isinstance(trials, int):
        return trials
    report = root / "report.html"
    write_html(trials, report)
    print(verdict_table(trials))
    print(
        f"\n{time.time() - started:.0f} s. Report: {report}. Data directories, histories "
        f"and validator reports: {root}/<wait point>/"
    )
    after_sync = trials[0]
    if not after_sync.lossless or after_sync.validate_exit not in (None, 0):
        print(
            "\nFAILED: AFTER_SYNC lost what a client saw: "
            f"{len(after_sync.lost)} acknowledged writes, {len(after_sync.phantom)} rows "
            f"read",
            file=sys.stderr,
        )
        return 1
    return 0


def run_consistency(args: argparse.Namespace) -> int:
    """Run the consistency demo; the exit code."""
    root = _root(args)
    seconds = 3.0 if args.short else args.seconds
    writers, readers = (2, 1) if args.short else (args.writers, args.readers)
    spark = _spark(not args.no_validate)
    started = time.time()
    runs = _guarded(
        lambda interrupted: run_demo(
            root,
            seconds=seconds,
            writers=writers,
            readers=readers,
            spark=spark,
            break_levels=args.break_levels,
            interrupted=interrupted,
            say=_say,
        ),
        spark,
        "server and etcd member",
    )
    if isinstance(runs, int):
        return runs
    report = root / "report.html"
    consistency_report.write_html(runs, report)
    print(consistency_report.verdict_table(runs))
    print(
        f"\n{time.time() - started:.0f} s. Report: {report}. Histories and validator "
        f"reports: {root}/; the group's data directories: {root}/group/"
    )
    broken = [r.level for r in runs if not r.kept]
    if broken:
        print(f"\nFAILED: {', '.join(broken)} did not keep the promise", file=sys.stderr)
        return 1
    return 0


def _add_consistency(demos: Any) -> None:
    parser = demos.add_parser(
        "consistency",
        help="Group Replication's consistency levels: stale reads and commit latency",
        description=CONSISTENCY,
    )
    parser.add_argument(
        "--dir",
        help="where the group and the reports go (default: a new temporary directory; "
        "an existing one is replaced)",
    )
    parser.add_argument(
        "--seconds",
        type=float,
        default=8.0,
        help="seconds of load per level (default %(default)s)",
    )
    parser.add_argument(
        "--writers",
        type=int,
        default=4,
        help="client threads updating rows on the primary, each write recorded "
        "(default %(default)s)",
    )
    parser.add_argument(
        "--readers",
        type=int,
        default=2,
        help="client threads on each secondary reading the row last acknowledged, each "
        "read recorded (default %(default)s)",
    )
    parser.add_argument(
        "--short", action="store_true", help="3 s per level, 2 writers, 1 reader per secondary"
    )
    parser.add_argument("--no-validate", action="store_true", help="skip rpl validate (no Spark)")
    parser.add_argument(
        "--break-levels", action="store_true", help=argparse.SUPPRESS
    )  # tests: every session at EVENTUAL, whatever the level
    parser.set_defaults(run=run_consistency)


def add_parser(commands: Any) -> None:
    """The ``demo`` subcommand."""
    parser = commands.add_parser("demo", help="demonstrations on local sandboxes")
    demos = parser.add_subparsers(dest="demo", required=True)
    failover = demos.add_parser(
        "failover",
        help="lossless failover: AFTER_SYNC against AFTER_COMMIT",
        description=DESCRIPTION,
    )
    failover.add_argument(
        "--dir",
        help="where the sandboxes go (default: a new temporary "
        "directory; an existing one is replaced)",
    )
    failover.add_argument(
        "--duration",
        type=float,
        default=8.0,
        help="seconds of load before the failure, about (default %(default)s)",
    )
    failover.add_argument(
        "--writers",
        type=int,
        default=8,
        help="client threads inserting rows into the source, each "
        "acknowledged write recorded (default %(default)s)",
    )
    failover.add_argument(
        "--readers",
        type=int,
        default=2,
        help="client threads reading the rows being inserted, each row "
        "read recorded (default %(default)s)",
    )
    failover.add_argument("--short", action="store_true", help="3 s, 4 writers, 2 readers")
    failover.add_argument("--no-validate", action="store_true", help="skip rpl validate (no Spark)")
    failover.add_argument(
        "--break-after-sync", action="store_true", help=argparse.SUPPRESS
    )  # tests: AFTER_SYNC that does not wait
    failover.set_defaults(run=run)
    _add_consistency(demos)
