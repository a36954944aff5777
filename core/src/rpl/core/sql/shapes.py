"""Parse a statement once per *shape*: the parse cache behind :func:`rpl.core.sql.parser.parse`.

A statement's shape is its text with every plain literal (a single-quoted string, an
unsigned decimal integer standing alone) replaced by ``?``. Clients (sysbench, an ORM,
the applier replaying binlog statements) send few shapes with many values, so the
tokenizer and the parser run once per shape; a later statement of a known shape is
built from the shape's tree with its own literals, in a few microseconds instead of
the 10-30 µs of a full parse.

What holds, and why:

* **The tree is the parser's.** A shape is only trusted after the tree built from it
  for the statement it was first seen with has the same ``repr`` as that statement's
  full parse (same node types, same field values, same Python types of the values).
  Shapes that fail, and shapes whose ``?`` text does not parse, are remembered as
  unshapeable and those statements are always parsed in full.
* **One check covers every later statement of the shape.** Two statements of one shape
  differ only in the values of literal tokens of the same kinds (the key records which
  ``?`` was a string and which a number), so the parser takes the same path through
  both: it branches on token kinds and keys, never on a literal's value, except in the
  rules that read a token's value directly (a column length, a server id, ...), which
  do not accept ``?`` and so never produce a trusted shape.
* **The split never misreads the text.** Only text whose parts outside literals and
  backquoted identifiers hold none of ``' " @ # \\ ?``, ``/*`` or ``--`` is shaped:
  no comment, user variable, introducer (``_utf8mb4'x'``, ``X'0A'``) or double-quoted
  text can make a quote mean something else than the start of a string literal there.
  Numbers next to a letter, digit, dot or quote (``t1``, ``1.5``, ``1e5``, ``0x1F``)
  stay in the shape as written.
* **Errors are the parser's.** A statement that does not parse never makes a shape; its
  error comes from the full parse, with MySQL's text and position.

Trees are shared between statements: every node is a frozen attrs class holding tuples,
so no caller can change one. The cache holds at most ``max_shapes`` (by default
:data:`MAX_SHAPES`) shapes and is emptied when full, so a client sending endless distinct
shapes costs memory only up to that bound. Written by hand: no parsing library offers a
literal-agnostic cache.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from typing import Final, TypeAlias

import attrs

from rpl.core import c_helpers
from rpl.core.sql import ast
from rpl.core.sql.lexer import (
    BQ_PATTERN,
    IDENT_CHARS,
    MAX_INTEGER_DIGITS,
    SQ_PATTERN,
    unescape_string,
)

MAX_SHAPES: Final = 4096

Values: TypeAlias = list[ast.LiteralValue]
Builder: TypeAlias = Callable[[Values], object]

_SPLIT: Final = re.compile(
    rf"(?=[`'0-9\"@#\\\\?/-])({BQ_PATTERN}|(?<![{IDENT_CHARS}.'])(?:{SQ_PATTERN}|\d+(?![{IDENT_CHARS}.']))"
    r"|['\"`@#\\?]|/\*|--)"
)
"""Backquoted identifiers (kept), string literals and unsigned integers (made ``?``),
and, outside those, whatever keeps a text from being shaped (a quote that starts no
literal, ``" @ # \\ ?``, ``/*``, ``--``); the lookahead lets the scan pass over other
characters without trying each alternative."""


def split(sql: str) -> tuple[str, Values] | None:
    """``(key, values)`` for a shapeable ``sql``, else None.

    ``key`` is the shape text (``?`` for each literal), a NUL and one letter per literal
    (``s`` string, ``n`` number); ``values`` are the literals' values in text order.
    """
    parts = _SPLIT.split(sql)
    out = [parts[0]]
    values: Values = []
    kinds = []
    for index in range(1, len(parts), 2):
        token = parts[index]
        first = token[0]
        if first == "'" and len(token) > 1:
            out.append("?")
            values.append(unescape_string(token[1:-1]))
            kinds.append("s")
        elif first.isdigit():
            if len(token) > MAX_INTEGER_DIGITS:
                return None  # the full parse gives its error
            out.append("?")
            values.append(int(token))
            kinds.append("n")
        elif first == "`" and len(token) > 1:
            out.append(token)
        else:
            return None  # not shapeable: see _SPLIT
        out.append(parts[index + 1])
    return "".join(out) + "\0" + "".join(kinds), values


_shapes_helper = c_helpers.load("rpl.core.sql._shapes")
_split_in_c: Callable[[str, Callable[[str], str]], tuple[str, Values] | None] | None = (
    _shapes_helper.split if _shapes_helper is not None else None
)
"""The compiled build's ``_shapes.split`` (core/setup.py), or None."""


def shape_of(sql: str) -> tuple[str, Values] | None:
    """:func:`split`, by the compiled build's C scan when it is there (core/setup.py:
    ``rpl.core.sql._shapes``, the same rules in one pass), else by :func:`split`.
    """
    if _split_in_c is not None:
        try:
            return _split_in_c(sql, unescape_string)
        except ValueError:  # an integer literal too long for int(): the full parse says 1367
            return None
    return split(sql)


def _compile(node: object) -> Builder | None:
    """A function that rebuilds ``node`` with the literals it is given, or None when
    ``node`` holds no placeholder (it is then shared as it is).

    The builders call constructors with the fields in order and fill tuples from lists:
    a statement of a known shape is rebuilt at each execution, and keyword calls and
    generator expressions cost about twice as much per node. A node that cannot be built
    that way fails its first build, which leaves its shape untrusted (:meth:`_learn`).
    """
    if isinstance(node, ast.Placeholder):
        index = node.index
        return lambda values: ast.Literal(values[index])
    if isinstance(node, tuple):
        return _compile_tuple(node)
    cls = type(node)
    if attrs.has(cls):
        fields = [field for field in attrs.fields(cls) if field.init]
        base = [getattr(node, field.name) for field in fields]
        changing = [
            (i, build) for i, build in enumerate(_compile(value) for value in base) if build
        ]
        if not changing:
            return None
        return _rebuild(cls, base, changing)
    return None


def _rebuild(cls: type, base: list[object], changing: list[tuple[int, Builder]]) -> Builder:
    """A builder calling ``cls`` with the fields ``base`` but for those ``changing`` names
    (their positions and builders): only the fields holding a placeholder are built
    again, the others passed as they are.
    """
    if len(changing) == 1:
        position, only = changing[0]

        def build_one(values: Values) -> object:
            args = base.copy()
            args[position] = only(values)
            return cls(*args)

        return build_one

    def build(values: Values) -> object:
        args = base.copy()
        for at, field_builder in changing:
            args[at] = field_builder(values)
        return cls(*args)

    return build


def _compile_tuple(node: tuple[object, ...]) -> Builder | None:
    """:func:`_compile` of a tuple; a row of placeholders alone (``VALUES (?, ?, ?)``)
    gets a builder of its own, the common case.
    """
    indexes = [item.index for item in node if isinstance(item, ast.Placeholder)]
    if node and len(indexes) == len(node):
        return lambda values: tuple([ast.Literal(values[index]) for index in indexes])
    items = [(_compile(item), item) for item in node]
    if all(build is None for build, _ in items):
        return None
    return lambda values: tuple([item if build is None else build(values) for build, item in items])


def builder(template: object) -> Builder | None:
    """A function that builds ``template`` (a parsed statement holding ``?``
    placeholders) with the values it is given in place of them, the value of placeholder
    ``i`` at ``values[i]`` as a :class:`~rpl.core.sql.ast.Literal`; None when
    ``template`` holds no placeholder. A prepared statement binds its parameters with
    it, the same builders a shape's statements are rebuilt by.
    """
    return _compile(template)


class ShapeCache:
    """Statements' trees by shape, in front of a full parser ``parse_text``."""

    def __init__(
        self, parse_text: Callable[[str], ast.Statement], max_shapes: int = MAX_SHAPES
    ) -> None:
        self._parse_text = parse_text
        self._max_shapes = max_shapes
        self._shapes: dict[str, Builder | ast.Statement | None] = {}
        self._lock = threading.Lock()

    def parse(self, sql: str) -> ast.Statement:
        """The statement ``sql`` holds, as ``parse_text`` would return it."""
        found = shape_of(sql)
        if found is None:
            return self._parse_text(sql)
        key, values = found
        entry = self._shapes.get(key, _UNKNOWN)
        if entry is None:
            return self._parse_text(sql)
        if isinstance(entry, ast.Statement):
            return entry
        if entry is not _UNKNOWN:
            return entry(values)  # type: ignore[operator,no-any-return]
        statement = self._parse_text(sql)
        self._learn(key, values, statement)
        return statement

    def _learn(self, key: str, values: Values, statement: ast.Statement) -> None:
        entry: Builder | ast.Statement | None = None
        try:  # any failure (a shape that does not parse, a node built otherwise than by
            # its fields in order): the shape is not trusted
            template = self._parse_text(key[: key.index("\0")])
            build = _compile(template)
            if repr(template if build is None else build(values)) == repr(statement):
                entry = template if build is None else build
        except Exception:  # noqa: BLE001
            entry = None
        with self._lock:
            if len(self._shapes) >= self._max_shapes:
                self._shapes.clear()
            self._shapes[key] = entry

    def __len__(self) -> int:
        return len(self._shapes)


_UNKNOWN: Final = object()
