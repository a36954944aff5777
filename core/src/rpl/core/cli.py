"""The ``rpl`` command."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

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
    return PluginListing(source.name, source.distribution, source.version,
                         plugin_class.description, hooks)


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


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``rpl``."""
    parser = argparse.ArgumentParser(prog="rpl", description="rpl: MySQL replication plugins")
    commands = parser.add_subparsers(dest="command", required=True)
    plugins = commands.add_parser("plugins", help="list the installable replication plugins")
    plugins.add_argument("--json", action="store_true", help="print JSON")
    plugins.set_defaults(run=_plugins)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``rpl`` command."""
    args = build_parser().parse_args(argv)
    code: int = args.run(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
