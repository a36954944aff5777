"""``rpl sandbox deploy replication [--replicas N] [--semisync after_sync|after_commit|off]
[--base-port P] [--dir D]``, ``rpl sandbox deploy group [--members N] [--multi-primary]
[--base-port P] [--dir D]``, ``rpl sandbox status|stop|start|destroy [--dir D]``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from rpl.core.sandbox.sandbox import (
    DEFAULT_BASE_PORT,
    DEFAULT_DIR,
    SEMISYNC_MODES,
    Sandbox,
    SandboxError,
    deploy,
    deploy_group,
    destroy,
    start,
    status,
    stop,
)


def _say(text: str) -> None:
    print(f"rpl sandbox: {text}", file=sys.stderr, flush=True)


def _deploy(args: argparse.Namespace) -> int:
    if args.topology == "group":
        sandbox = deploy_group(
            Path(args.dir).expanduser(),
            members=args.members,
            multi_primary=args.multi_primary,
            base_port=args.base_port,
            say=_say,
        )
    else:
        sandbox = deploy(
            Path(args.dir).expanduser(),
            replicas=args.replicas,
            semisync=args.semisync,
            base_port=args.base_port,
            say=_say,
        )
    print(f"sandbox deployed in {sandbox.directory}:")
    for spec in sandbox.nodes:
        script = sandbox.directory / (spec.name + ".sh")
        print(
            f"  {spec.name:<10} {spec.role:<8} port {spec.port}   "
            + (str(script) if script.exists() else "")
        )
    return 0


def _table(rows: list[dict[str, Any]]) -> str:
    columns: tuple[str, ...] = ("node", "role", "port", "state", "lag", "gtid_executed", "semisync")
    if any("view" in r for r in rows):
        rows = [{"view": "", **r} for r in rows]
        columns = ("node", "role", "port", "state", "gtid_executed", "view")
    widths = {c: max(len(c), *(len(str(r[c])) for r in rows)) for c in columns}
    lines = ["  ".join(c.upper().ljust(widths[c]) for c in columns)]
    lines += ["  ".join(str(r[c]).ljust(widths[c]) for c in columns) for r in rows]
    return "\n".join(line.rstrip() for line in lines)


def _status(args: argparse.Namespace) -> int:
    sandbox = Sandbox.load(Path(args.dir).expanduser())
    rows = status(sandbox)
    print(json.dumps(rows, indent=2) if args.json else _table(rows))
    return 0


def _simple(action: Any, done: str) -> Any:
    def run(args: argparse.Namespace) -> int:
        sandbox = Sandbox.load(Path(args.dir).expanduser())
        action(sandbox)
        print(f"sandbox in {sandbox.directory}: {done}")
        return 0

    return run


def add_parser(commands: Any) -> None:
    """The ``sandbox`` subcommand."""
    parser = commands.add_parser(
        "sandbox",
        help="local replication topologies",
        description="Local replication topologies of rpl server processes on loopback: "
        "deploy a source and its replicas or a Group Replication group, show their "
        "status, stop, start "
        "and destroy them.",
    )
    actions = parser.add_subparsers(dest="action", required=True)
    dir_help = f"sandbox directory (default {DEFAULT_DIR})"
    new = actions.add_parser("deploy", help="start a source and replicas, or a group")
    new.add_argument(
        "topology",
        choices=["replication", "group"],
        help="replication: one source and its replicas; group: a Group Replication group, "
        "each member with an etcd member of its own",
    )
    new.add_argument(
        "--members", type=int, default=3, help="group: its members, 1 to 9 (default %(default)s)"
    )
    new.add_argument(
        "--multi-primary",
        action="store_true",
        help="group: every member takes writes (default: single-primary)",
    )
    new.add_argument(
        "--replicas",
        type=int,
        default=2,
        help="replicas of the source, 0 to 9 (default %(default)s)",
    )
    new.add_argument(
        "--semisync",
        choices=SEMISYNC_MODES,
        default="after_sync",
        help="the source's semisync wait point, or off for asynchronous "
        "replication (default %(default)s)",
    )
    new.add_argument(
        "--base-port",
        type=int,
        default=DEFAULT_BASE_PORT,
        help="the nodes take the first free ports above it (default %(default)s)",
    )
    new.add_argument("--dir", default=str(DEFAULT_DIR), help=dir_help)
    new.set_defaults(run=_guarded(_deploy))
    shown = actions.add_parser("status", help="each node's role, state, GTIDs, lag, semisync")
    shown.add_argument("--dir", default=str(DEFAULT_DIR), help=dir_help)
    shown.add_argument("--json", action="store_true", help="print JSON")
    shown.set_defaults(run=_guarded(_status))
    for name, action, done in (
        ("stop", stop, "stopped"),
        ("start", start, "started"),
        ("destroy", destroy, "destroyed"),
    ):
        sub = actions.add_parser(name, help=f"{name} every node")
        sub.add_argument("--dir", default=str(DEFAULT_DIR), help=dir_help)
        sub.set_defaults(run=_guarded(_simple(action, done)))


def _guarded(run: Any) -> Any:
    def guarded(args: argparse.Namespace) -> int:
        try:
            code: int = run(args)
        except SandboxError as exc:
            print(f"rpl sandbox: {exc}", file=sys.stderr)
            return 1
        return code

    return guarded
