"""The ``rpl`` command."""

from __future__ import annotations

import argparse
import json
import logging
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

import attrs

from rpl.core.errors import MySQLError
from rpl.core.observer_registry import ObserverRegistry, PluginLoadError
from rpl.core.plugins import PluginSource, discover


@attrs.frozen
class PluginListing:
    """One row of ``rpl plugins``."""

    name: str
    distribution: str
    version: str
    description: str
    hooks: tuple[str, ...]
    error: str = ""


def describe(source: PluginSource, registry: ObserverRegistry) -> PluginListing:
    """What ``rpl plugins`` shows of one plugin, without initialising it."""
    try:
        plugin_class = source.load()
        hooks = registry.validate(plugin_class, source.name)
    except (MySQLError, PluginLoadError) as exc:
        message = exc.message if isinstance(exc, MySQLError) else str(exc)
        return PluginListing(source.name, source.distribution, source.version, "", (), message)
    return PluginListing(
        source.name, source.distribution, source.version, plugin_class.description, hooks
    )


def _plugins(args: argparse.Namespace) -> int:
    registry = ObserverRegistry()
    rows = [describe(source, registry) for _, source in sorted(discover().items())]
    if args.json:
        print(json.dumps([attrs.asdict(row) for row in rows], indent=2))
        return 0
    if not rows:
        print("no plugins installed (entry-point group 'rpl.plugins' is empty)")
    for row in rows:
        print(f"{row.name}  ({row.distribution} {row.version})")
        if row.description:
            print(f"    {row.description}")
        if row.error:
            print(f"    error: {row.error}")
        print(f"    hooks: {', '.join(row.hooks) if row.hooks else '(none)'}")
    return 1 if any(row.error for row in rows) else 0


def _start_failure(exc: Exception) -> list[str]:
    """What the console says when a server cannot start: the error as error.log has it
    (an OSError's own text, without Python's ``[Errno N]``), and for a data directory
    another server holds, error.log's hint too.
    """
    from rpl.core.instance.datadir import DataDirectoryInUse

    text = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    lines = [f"cannot start: {text}"]
    if isinstance(exc, DataDirectoryInUse):
        lines.append(exc.hint)
    return lines


def _server(args: argparse.Namespace) -> int:
    from rpl.core.instance.crash_recovery import RecoveryError
    from rpl.core.instance.server import Server, ServerConfig

    options = {}
    for extra in args.extra:
        name, sep, value = extra.lstrip("-").partition("=")
        if not extra.startswith("--") or not name:
            print(f"rpl server: unknown argument {extra!r}", file=sys.stderr)
            return 2
        options[name] = value if sep else "ON"
    config = ServerConfig(
        datadir=Path(args.datadir),
        port=args.port,
        bind_address=args.bind_address,
        server_id=args.server_id,
        log_bin=args.log_bin,
        plugin_load=args.plugin_load,
        root_password=args.root_password,
        debug=args.debug,
        options=options,
    )
    server = Server(config)
    try:
        server.start()
    except (MySQLError, OSError, ValueError, RecoveryError) as exc:
        logging.getLogger("rpl.server").error("Aborting: %s", exc)
        for line in _start_failure(exc):
            print(f"rpl server: {line}", file=sys.stderr)
        return 1
    print(f"rpl server: {server.ready_line()}", flush=True)
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    signal.signal(signal.SIGINT, lambda *_: threading.Thread(target=server.shutdown).start())
    while not server.wait(0.5):
        pass
    return 0


def _add_server(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    server = commands.add_parser(
        "server",
        help="run a server (mysqld style options)",
        description="Run an rpl server. Any other --name=value sets the system variable "
        "name at start, as mysqld options do (--sync-binlog=1, ...).",
    )
    server.add_argument("--datadir", required=True, help="data directory (created if empty)")
    server.add_argument("--port", type=int, default=3306, help="TCP port (0: any free port)")
    server.add_argument(
        "--bind-address", default="127.0.0.1", help="address to listen on (default %(default)s)"
    )
    server.add_argument(
        "--server-id",
        type=int,
        default=1,
        help="server_id, unique in a topology (default %(default)s)",
    )
    server.add_argument("--log-bin", default="binlog", help="binlog base name")
    server.add_argument("--plugin-load", default="", help="NAME[=LIB][;...]")
    server.add_argument(
        "--root-password",
        default="",
        help="root@localhost's password at initialisation (default empty)",
    )
    server.add_argument("--debug", default="", help="crash points, e.g. +d,name")
    server.set_defaults(run=_server)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``rpl``."""
    parser = argparse.ArgumentParser(prog="rpl", description="rpl: MySQL replication plugins")
    commands = parser.add_subparsers(dest="command", required=True)
    _add_server(commands)
    plugins = commands.add_parser("plugins", help="list the installable replication plugins")
    plugins.add_argument("--json", action="store_true", help="print JSON")
    plugins.set_defaults(run=_plugins)
    from rpl.core.demo.cli import add_parser as add_demo
    from rpl.core.sandbox.cli import add_parser as add_sandbox
    from rpl.core.validate.cli import add_parser as add_validate

    add_validate(commands)
    add_sandbox(commands)
    add_demo(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``rpl`` command."""
    args, extra = build_parser().parse_known_args(argv)
    if extra and args.command != "server":
        build_parser().error(f"unrecognized arguments: {' '.join(extra)}")
    args.extra = extra
    code: int = args.run(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
