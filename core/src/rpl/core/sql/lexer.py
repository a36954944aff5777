"""Tokenizer for MySQL 8.0 statements: one compiled regex, tokens as small tuples.

A token is ``(kind, key, value, start, end)``:

* ``kind`` is one of the ``K_*`` constants below;
* ``key`` is what the parser dispatches on: the upper-cased word for a plain word
  (so keywords compare case-insensitively), the operator text for an operator, ``""``
  for everything else, so a quoted ```SELECT``` or ``'SELECT'`` never reads as a keyword;
* ``value`` is the token's Python value: the word as written, the unescaped
  identifier or string, an ``int``/``Decimal``/``float`` for numbers, ``bytes`` for
  ``X'..'``/``0x..``/``B'..'``/``0b..``, a user variable's name;
* ``start``/``end`` index the token's text in the statement, for error messages
  (MySQL quotes the text from the offending token on) and for select items' text.

Whitespace and comments (``-- ``, ``#``, ``/* */``, optimizer hints ``/*+ */``) leave no
token. A versioned comment ``/*! ... */`` or ``/*!NNNNN ... */`` with NNNNN <= 80036 is
*executed*: its opener and closer leave no token, its content is tokenized as if it
were not commented out, as MySQL does; with a higher version it is a plain comment.
The last token is always ``(K_EOF, "", None, len(sql), len(sql))``.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal
from typing import Any, Final, TypeAlias

from rpl.core.errors import ER_ILLEGAL_VALUE_FOR_TYPE, ER_PARSE_ERROR, MySQLError
from rpl.core.hex_literal import HexBytes

Token: TypeAlias = tuple[str, str, Any, int, int]

K_WORD: Final = "word"
"""A plain (unquoted) word: keyword or identifier."""
K_QUOTED: Final = "quoted"
"""A backquoted identifier."""
K_STRING: Final = "string"
K_NUMBER: Final = "number"
K_BYTES: Final = "bytes"
K_USERVAR: Final = "uservar"
"""``@name``, ``@'name'``, ``@`name```; the value is the name without ``@``."""
K_OP: Final = "op"
K_EOF: Final = "eof"

SERVER_VERSION_ID: Final = 80036
"""Versioned comments for versions up to this one are executed."""

IDENT_CHARS = r"0-9A-Za-z_$\u0080-\U0010ffff"
# quoted text as "unrolled loops" (a run of plain characters, then an escape and another
# run, ...): the same strings as (?:[^'\\]|\\.|'')*, matched a run at a time, not a character
SQ_PATTERN = r"'[^'\\]*(?:(?:\\.|'')[^'\\]*)*'"
DQ_PATTERN = r'"[^"\\]*(?:(?:\\.|"")[^"\\]*)*"'
BQ_PATTERN = r"`[^`]*(?:``[^`]*)*`"

_TOKEN = re.compile(
    rf"""
    \s*(?:
    (?P<punct>[(),=;])
    |(?P<name>(?![xXbB]')[A-Za-z_$\u0080-\U0010ffff][{IDENT_CHARS}]*)
    |(?P<vopen>/\*!(?P<ver>\d{{5}})?)
    |(?P<vclose>\*/)
    |(?P<comment>/\*.*?\*/|--(?:[\s]|$)[^\n]*|\#[^\n]*)
    |(?P<hexstr>[xX]'[0-9a-fA-F]*')
    |(?P<bitstr>[bB]'[01]*')
    |(?P<hexnum>0x[0-9a-fA-F]+(?![{IDENT_CHARS}]))
    |(?P<bitnum>0b[01]+(?![{IDENT_CHARS}]))
    |(?P<float>(?:\d+(?:\.\d*)?|\.\d+)[eE][-+]?\d+(?![{IDENT_CHARS}]))
    |(?P<decimal>(?:\d+\.\d*|\.\d+)(?![{IDENT_CHARS}]))
    |(?P<int>\d+(?![{IDENT_CHARS}]))
    |(?P<word>[{IDENT_CHARS}]+)
    |(?P<quoted>{BQ_PATTERN})
    |(?P<sq>{SQ_PATTERN})
    |(?P<dq>{DQ_PATTERN})
    |(?P<uservar>@(?:[{IDENT_CHARS}.]+|{BQ_PATTERN}|{SQ_PATTERN}|{DQ_PATTERN}))
    |(?P<op><=>|<=|>=|<>|!=|:=|&&|\|\||<<|>>|@@|[-+*/%=<>!~&|^(),.;?@{{}}])
    )""",
    re.VERBOSE | re.DOTALL,
)

_STRING_ESCAPE: Final = {
    "'": re.compile(r"\\(.)|''", re.DOTALL),
    '"': re.compile(r"\\(.)|\"\"", re.DOTALL),
}
"""Escapes inside a string quoted with the key: only the enclosing quote doubles."""
_BACKSLASH: Final = {
    "0": "\0",
    "'": "'",
    '"': '"',
    "b": "\b",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "Z": "\x1a",
    "\\": "\\",
    "%": "\\%",
    "_": "\\_",
}


def _unescape_match(match: re.Match[str]) -> str:
    char = match.group(1)
    if char is None:
        return match.group()[0]
    return _BACKSLASH.get(char, char)


def unescape_string(body: str, quote: str = "'") -> str:
    """A string literal's value from the text between its quotes (``quote``).

    MySQL's rules: ``\\0 \\' \\" \\b \\n \\r \\t \\Z \\\\`` are escapes, ``\\%`` and ``\\_``
    keep their backslash (they are LIKE escapes), any other ``\\x`` is ``x``; the
    enclosing quote doubled is one quote (the other quote doubled is two characters).
    """
    if "\\" not in body and quote * 2 not in body:
        return body
    return _STRING_ESCAPE[quote].sub(_unescape_match, body)


def _string_value(text: str) -> str:
    return unescape_string(text[1:-1], text[0])


def _quoted_value(text: str) -> str:
    return text[1:-1].replace("``", "`")


def parse_error(sql: str, pos: int) -> MySQLError:
    """MySQL's 1064 for a statement that goes wrong at ``pos``.

    The message quotes the statement from ``pos`` on (at most 80 characters, as
    MySQL's ``%-.80s``) and names ``pos``'s 1-based line.
    """
    return MySQLError.of(ER_PARSE_ERROR, sql[pos : pos + 80], sql.count("\n", 0, pos) + 1)


MAX_NESTING: Final = 100
"""The deepest nesting of parentheses tokenized: the parser recurses once per level, and
deeper text gets 1436 before it does (the pure build's recursion limit stops it at about
this depth; the compiled build's native recursion would overflow the C stack)."""
MAX_INTEGER_DIGITS: Final = 4300
"""The longest integer literal read (Python's int-from-text bound): longer ones get 1367."""


def _integer(text: str) -> int:
    if len(text) > MAX_INTEGER_DIGITS:
        raise MySQLError.of(ER_ILLEGAL_VALUE_FOR_TYPE, "decimal", text[:192])
    return int(text)


def _double(text: str) -> float:
    """An e-notation literal; 1367 beyond DOUBLE's range, as MySQL (``1e400``)."""
    value = float(text)
    if value in (math.inf, -math.inf):
        raise MySQLError.of(ER_ILLEGAL_VALUE_FOR_TYPE, "double", text[:192])
    return value


def tokenize(sql: str) -> list[Token]:
    """The tokens of ``sql``, ending with the EOF token.

    Raises the 1064 parse error for text no token matches (an unterminated string,
    identifier or comment, a stray character).
    """
    tokens: list[Token] = []
    append = tokens.append
    match = _TOKEN.match
    pos = 0
    end = len(sql.rstrip())
    in_versioned = False
    depth = 0
    while pos < end:
        m = match(sql, pos)
        if m is None:
            raise parse_error(sql, pos + len(sql[pos:]) - len(sql[pos:].lstrip()))
        group = m.lastgroup
        pos, stop = m.span(m.lastindex or 0)
        text = sql[pos:stop]
        if group == "name" or group == "word":
            append((K_WORD, text.upper(), text, pos, stop))
        elif group == "punct" or group == "op":
            if text == "(":
                depth += 1
                if depth > MAX_NESTING:  # parsing would recurse this deep: 1436
                    raise RecursionError(f"parentheses nested deeper than {MAX_NESTING}")
            elif text == ")":
                depth -= 1
            append((K_OP, text, text, pos, stop))
        elif group == "int":
            append((K_NUMBER, "", _integer(text), pos, stop))
        elif group == "sq" or group == "dq":
            append((K_STRING, "", _string_value(text), pos, stop))
        elif group == "quoted":
            append((K_QUOTED, "", _quoted_value(text), pos, stop))
        elif group == "decimal":
            append((K_NUMBER, "", Decimal(text), pos, stop))
        elif group == "float":
            append((K_NUMBER, "", _double(text), pos, stop))
        elif group == "uservar":
            name = text[1:]
            if name[0] in "'\"":
                name = _string_value(name)
            elif name[0] == "`":
                name = _quoted_value(name)
            append((K_USERVAR, "", name, pos, stop))
        elif group == "hexstr":
            append((K_BYTES, "", HexBytes(bytes.fromhex(_even(text[2:-1]))), pos, stop))
        elif group == "hexnum":
            append((K_BYTES, "", HexBytes(bytes.fromhex(_even(text[2:]))), pos, stop))
        elif group == "bitstr":
            append((K_BYTES, "", HexBytes(_bits(text[2:-1])), pos, stop))
        elif group == "bitnum":
            append((K_BYTES, "", HexBytes(_bits(text[2:])), pos, stop))
        elif group == "vopen":
            version = m.group("ver")
            if version is None or int(version) <= SERVER_VERSION_ID:
                in_versioned = True
            else:
                close = sql.find("*/", stop)
                if close < 0:
                    raise parse_error(sql, pos)
                stop = close + 2
        elif group == "vclose":
            if in_versioned:
                in_versioned = False
            else:  # "*/" outside a versioned comment is "*" then "/"
                append((K_OP, "*", "*", pos, pos + 1))
                stop = pos + 1
        # a comment leaves no token; whitespace is skipped by every match
        pos = stop
    if in_versioned:  # "/*!" never closed: MySQL's lexer fails at the end of the text
        raise parse_error(sql, len(sql))
    append((K_EOF, "", None, len(sql), len(sql)))
    return tokens


def _even(digits: str) -> str:
    """Hex digits padded to whole bytes: MySQL reads ``0xABC`` as ``0x0ABC``."""
    return "0" + digits if len(digits) % 2 else digits


def _bits(digits: str) -> bytes:
    """A bit literal's bytes, big-endian, as few as hold the digits (none for ``b''``)."""
    if not digits:
        return b""
    return int(digits, 2).to_bytes((len(digits) + 7) // 8, "big")
