"""``rpl ... --help`` reads as plain text: every option and argument of every command says
what it does, and no description shows reStructuredText markup."""

from __future__ import annotations

import argparse
from collections.abc import Iterator

from rpl.core.cli import build_parser


def commands(
    parser: argparse.ArgumentParser, name: str = "rpl"
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """Every command and subcommand, by its full name."""
    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub, subparser in action.choices.items():
                yield from commands(subparser, f"{name} {sub}")


def test_every_option_has_help_and_no_backticks() -> None:
    undocumented = [
        f"{name} {action.option_strings or action.dest}"
        for name, parser in commands(build_parser())
        for action in parser._actions
        if action.help is None
        and not isinstance(action, (argparse._HelpAction, argparse._SubParsersAction))
    ]
    assert undocumented == []
    marked = [name for name, parser in commands(build_parser()) if "`" in parser.format_help()]
    assert marked == []


def test_demo_failover_help_names_the_clients() -> None:
    failover = dict(commands(build_parser()))["rpl demo failover"].format_help()
    assert "client threads inserting rows" in failover
    assert "client threads reading the rows being inserted" in failover
