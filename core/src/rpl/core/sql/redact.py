"""Statement text as others may see it: passwords replaced by ``<secret>``.

SHOW PROCESSLIST (and whatever else shows a statement's text to another account) shows
``CREATE USER 'u'@'%' IDENTIFIED BY <secret>`` where the client sent the password, as
MySQL rewrites statements for its processlist and logs: the password of IDENTIFIED [WITH
plugin] BY, SET PASSWORD [FOR user] = , ``[MASTER_|SOURCE_]PASSWORD = '...'`` and
``PASSWORD('...')``. The rewrite
works on the text as sent, so it also covers a statement that does not parse.
"""

from __future__ import annotations

import re
from typing import Final

_SECRET: Final = re.compile(
    r"""(\bIDENTIFIED\s+(?:WITH\s+\S+\s+)?BY\s+|\bSET\s+PASSWORD\b[^=]*=\s*"""
    r"""|\b(?:MASTER_|SOURCE_)?PASSWORD\s*(?:=\s*|\(\s*))"""
    r"""('(?:[^'\\]|\\.|'')*'?|"(?:[^"\\]|\\.|"")*"?)""",
    re.IGNORECASE,
)


def redacted(text: str | None) -> str | None:
    """``text`` with every password literal replaced by ``<secret>`` (None stays None)."""
    if not text:
        return text
    return _SECRET.sub(r"\1<secret>", text)
