"""Expressions: MySQL's ``expr`` and everything under it, to an
:class:`~rpl.core.sql.ast.Expression`.

Precedence follows MySQL's grammar (``sql_yacc.yy``), lowest first:
``OR ||`` < ``XOR`` < ``AND &&`` < ``NOT`` < comparisons and ``IS [NOT] NULL`` <
``[NOT] IN / BETWEEN / LIKE`` < ``|`` < ``&`` < ``<< >>`` < ``+ -`` < ``* / DIV % MOD``
< ``^`` < unary ``- ~ !``. ``NOT`` is a prefix of a whole comparison (``NOT a = 1`` is
``NOT (a = 1)``) while ``!`` binds to its operand only, as in MySQL. One function per
level; the arithmetic and bitwise levels are one precedence-climbing loop
(:func:`bit_expr`).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Final

from rpl.core.sql import ast
from rpl.core.sql.lexer import K_BYTES, K_NUMBER, K_OP, K_QUOTED, K_STRING, K_USERVAR, K_WORD
from rpl.core.sql.parser.cursor import RESERVED, SCOPES, Parser, not_supported

_COMPARISON: Final = {
    "=": "=",
    "<>": "<>",
    "!=": "<>",
    "<": "<",
    "<=": "<=",
    ">": ">",
    ">=": ">=",
    "<=>": "<=>",
}
_BIT_OPS: Final = {
    "|": 1,
    "&": 2,
    "<<": 3,
    ">>": 3,
    "+": 4,
    "-": 4,
    "*": 5,
    "/": 5,
    "DIV": 5,
    "%": 5,
    "MOD": 5,
    "^": 6,
}
_NILADIC: Final = frozenset(
    (
        "CURRENT_TIMESTAMP",
        "CURRENT_USER",
        "CURRENT_DATE",
        "CURRENT_TIME",
        "LOCALTIME",
        "LOCALTIMESTAMP",
        "UTC_TIMESTAMP",
        "UTC_DATE",
        "UTC_TIME",
    )
)


def expr(p: Parser) -> ast.Expression:
    """``expr`` of MySQL's grammar: OR / || at the loosest level."""
    left = xor_expr(p)
    while p.toks[p.i][1] in ("OR", "||"):
        p.i += 1
        left = ast.Binary("OR", left, xor_expr(p))
    return left


def xor_expr(p: Parser) -> ast.Expression:
    left = and_expr(p)
    while p.toks[p.i][1] == "XOR":
        p.i += 1
        left = ast.Binary("XOR", left, and_expr(p))
    return left


def and_expr(p: Parser) -> ast.Expression:
    left = not_expr(p)
    while p.toks[p.i][1] in ("AND", "&&"):
        p.i += 1
        left = ast.Binary("AND", left, not_expr(p))
    return left


def not_expr(p: Parser) -> ast.Expression:
    if p.toks[p.i][1] == "NOT":
        p.i += 1
        return ast.Unary("NOT", not_expr(p))
    return bool_primary(p)


def bool_primary(p: Parser) -> ast.Expression:
    """Comparisons and IS [NOT] NULL, left-associative over predicates."""
    left = predicate(p)
    toks = p.toks
    while True:
        key = toks[p.i][1]
        op = _COMPARISON.get(key)
        if op is not None and toks[p.i][0] is K_OP:
            p.i += 1
            if p.key in ("ANY", "ALL", "SOME") and p.peek_key() == "(":
                quantifier = "ALL" if p.key == "ALL" else "ANY"
                p.i += 2
                if p.key not in ("SELECT", "WITH"):
                    p.error()
                inner = query(p)
                p.expect(")")
                left = ast.QuantifiedComparison(op, left, quantifier, inner)
                continue
            left = ast.Binary(op, left, predicate(p))
        elif key == "IS":
            p.i += 1
            negated = p.accept("NOT")
            if p.key in ("TRUE", "FALSE", "UNKNOWN"):
                left = ast.IsTruth(left, p.key, negated)
                p.i += 1
                continue
            p.expect("NULL")
            left = ast.IsNull(left, negated)
        else:
            return left


def predicate(p: Parser) -> ast.Expression:
    left = bit_expr(p, 1)
    toks = p.toks
    key = toks[p.i][1]
    negated = False
    if key == "NOT" and toks[p.i + 1][1] in ("IN", "BETWEEN", "LIKE", "REGEXP", "RLIKE"):
        negated = True
        p.i += 1
        key = toks[p.i][1]
    if key == "IN":
        p.i += 1
        p.expect("(")
        if p.key in ("SELECT", "WITH"):
            inner = query(p)
            p.expect(")")
            return ast.InSubquery(left, inner, negated)
        items = [expr(p)]
        while p.accept(","):
            items.append(expr(p))
        p.expect(")")
        return ast.InList(left, tuple(items), negated)
    if key == "BETWEEN":
        p.i += 1
        low = bit_expr(p, 1)
        p.expect("AND")
        return ast.Between(left, low, predicate(p), negated)
    if key == "LIKE":
        p.i += 1
        pattern = unary(p)
        escape = unary(p) if p.accept("ESCAPE") else None
        return ast.Like(left, pattern, negated, escape)
    if key in ("REGEXP", "RLIKE", "SOUNDS", "MEMBER"):
        raise not_supported(key)
    return left


def bit_expr(p: Parser, min_power: int) -> ast.Expression:
    """Arithmetic and bitwise operators by precedence climbing (all left-assoc)."""
    left = unary(p)
    toks = p.toks
    while True:
        key = toks[p.i][1]
        power = _BIT_OPS.get(key)
        if power is None or power < min_power:
            return left
        p.i += 1
        right = bit_expr(p, power + 1)
        op = "%" if key == "MOD" else key
        left = ast.Binary(op, left, right)


def unary(p: Parser) -> ast.Expression:
    """MySQL's simple_expr: prefix ``- + ~ !`` over a primary."""
    key = p.toks[p.i][1]
    if key == "-":
        p.i += 1
        operand = unary(p)
        if isinstance(operand, ast.Literal):
            value = operand.value
            if isinstance(value, Decimal) and value:  # exact: -x would round to 28 digits
                return ast.Literal(value.copy_negate())
            if isinstance(value, int | Decimal | float) and not isinstance(value, bool):
                return ast.Literal(-value)
        return ast.Unary("-", operand)
    if key == "+":
        p.i += 1
        return unary(p)
    if key == "!":
        p.i += 1
        return ast.Unary("NOT", unary(p))
    if key == "~":
        p.i += 1
        return ast.Unary("~", unary(p))
    expr = primary(p)
    key = p.toks[p.i][1]
    if key == "COLLATE":
        raise not_supported("COLLATE in expressions")
    return expr


def primary(p: Parser) -> ast.Expression:
    toks = p.toks
    kind, key, value, _, end = toks[p.i]
    p.i += 1
    if kind is K_NUMBER:
        return ast.Literal(value)
    if kind is K_WORD:
        nxt = toks[p.i][1]
        if key == "CASE":
            return case(p)
        if nxt == "(" and toks[p.i][0] is K_OP:
            if key == "CAST" or key == "CONVERT":
                return cast(p, key)
            if key == "EXISTS":
                p.i += 1
                exists = query(p)
                p.expect(")")
                return ast.Exists(exists)
            return call(p, key)
        if nxt == "." and toks[p.i][0] is K_OP:
            if key in RESERVED:
                p.i -= 1
                p.error()
            return qualified(p, value)
        if key == "NULL":
            return ast.Literal(None)
        if key == "TRUE":
            return ast.Literal(True)
        if key == "FALSE":
            return ast.Literal(False)
        if key == "DEFAULT":
            return ast.Default()
        if key in _NILADIC:
            return ast.FuncCall(key)
        nkind = toks[p.i][0]
        if nkind is K_STRING or nkind is K_BYTES:
            if key[0] == "_" or (key == "N" and toks[p.i][3] == end):
                return introduced(p, key)
            if key in ("DATE", "TIME", "TIMESTAMP"):
                raise not_supported("temporal literals")
        if key in ("INTERVAL", "EXISTS", "BINARY", "MATCH", "ROW"):
            raise not_supported(key)
        if key in RESERVED:
            p.i -= 1
            p.error()
        return ast.Column(value)
    if kind is K_STRING:
        if toks[p.i][0] is K_STRING:
            parts = [value]
            while toks[p.i][0] is K_STRING:
                parts.append(toks[p.i][2])
                p.i += 1
            return ast.Literal("".join(parts))
        return ast.Literal(value)
    if kind is K_QUOTED:
        if toks[p.i][1] == ".":
            return qualified(p, value)
        return ast.Column(value)
    if kind is K_USERVAR:
        if toks[p.i][1] == ":=":
            p.i += 1
            return ast.AssignUserVar(value, expr(p))
        return ast.UserVar(value)
    if kind is K_BYTES:
        return ast.Literal(value)
    if key == "(":
        if p.key in ("SELECT", "WITH"):
            subquery = query(p)
            p.expect(")")
            return ast.Subquery(subquery)
        inner = expr(p)
        if p.key == ",":
            raise not_supported("row constructors")
        p.expect(")")
        return inner
    if key == "@@":
        return system_variable(p)
    if key == "?":
        p.placeholders += 1
        return ast.Placeholder(p.placeholders - 1)
    p.i -= 1
    p.error()


def qualified(p: Parser, first: str) -> ast.Column:
    parts = [first]
    while len(parts) < 3 and p.accept("."):
        parts.append(p.any_word())
    return _column(parts)


def introduced(p: Parser, charset: str) -> ast.Literal:
    """``_charset'..'`` or ``N'..'``: the string, as bytes for ``_binary``."""
    value: str | bytes = p.toks[p.i][2]
    p.i += 1
    if charset == "_BINARY" and isinstance(value, str):
        value = value.encode("utf-8", "surrogateescape")
    elif charset != "_BINARY" and isinstance(value, bytes):
        value = value.decode("utf-8", "surrogateescape")
    return ast.Literal(value)


def system_variable(p: Parser) -> ast.SysVar:
    scope = None
    if p.key in ("GLOBAL", "SESSION", "LOCAL") and p.peek_key() == ".":
        scope = SCOPES[p.key]
        p.i += 2
    return ast.SysVar(variable_name(p), scope)


def variable_name(p: Parser) -> str:
    """A system variable name, possibly a component's ``comp.name``."""
    name = p.any_word()
    if p.accept("."):
        name = f"{name}.{p.any_word()}"
    return name


def call(p: Parser, name: str) -> ast.FuncCall:
    p.i += 1  # (
    if p.accept(")"):
        call = ast.FuncCall(name)
    elif p.key == "*" and p.peek_key() == ")":
        p.i += 2
        call = ast.FuncCall(name, star=True)
    else:
        distinct = p.accept("DISTINCT")
        if p.key in ("SELECT", "WITH"):
            raise not_supported("subqueries")
        args = [expr(p)]
        while p.accept(","):
            args.append(expr(p))
        order_by: tuple[ast.OrderItem, ...] = ()
        separator = None
        if name == "GROUP_CONCAT":
            if p.accept_seq("ORDER", "BY"):
                order_by = _order_items(p)
            if p.accept("SEPARATOR"):
                separator = p.string()
        if p.key != ")":
            if p.toks[p.i][0] is K_WORD:
                raise not_supported(f"{name}(... {p.key} ...)")
            p.error()
        p.i += 1
        call = ast.FuncCall(name, tuple(args), distinct, False, order_by, separator)
    if p.key == "OVER":
        raise not_supported("window functions")
    return call


def case(p: Parser) -> ast.Case:
    operand = None if p.key == "WHEN" else expr(p)
    whens = []
    while p.accept("WHEN"):
        condition = expr(p)
        p.expect("THEN")
        whens.append(ast.When(condition, expr(p)))
    if not whens:
        p.error()
    else_ = expr(p) if p.accept("ELSE") else None
    p.expect("END")
    return ast.Case(operand, tuple(whens), else_)


def column_ref(p: Parser) -> ast.Column:
    parts = [p.ident()]
    while len(parts) < 3 and p.accept("."):
        parts.append(p.any_word())
    return _column(parts)


def _column(parts: list[str]) -> ast.Column:
    if len(parts) == 3:
        return ast.Column(parts[2], parts[1], parts[0])
    if len(parts) == 2:
        return ast.Column(parts[1], parts[0])
    return ast.Column(parts[0])


def query(p: Parser) -> ast.Select | ast.Union:
    """A query expression (SELECT ... [UNION ...]) as a subquery or derived table holds."""
    from rpl.core.sql.parser.dml import query_expression  # the grammar is recursive

    if p.key == "WITH":
        raise not_supported("WITH")
    return query_expression(p)


_CAST_TYPES: Final = {
    "SIGNED": "SIGNED",
    "UNSIGNED": "UNSIGNED",
    "CHAR": "CHAR",
    "NCHAR": "CHAR",
    "BINARY": "BINARY",
    "DECIMAL": "DECIMAL",
    "DATE": "DATE",
    "DATETIME": "DATETIME",
    "TIME": "TIME",
    "JSON": "JSON",
    "DOUBLE": "DOUBLE",
    "FLOAT": "FLOAT",
    "REAL": "DOUBLE",
}


def cast(p: Parser, name: str) -> ast.Cast:
    """``CAST(x AS type)``, ``CONVERT(x, type)``, ``CONVERT(x USING charset)``."""
    p.i += 1  # (
    operand = expr(p)
    if name == "CONVERT" and p.accept("USING"):
        target = p.any_word().lower()
        p.expect(")")
        return ast.Cast(operand, "CHAR", charset=target)
    if name == "CAST":
        p.expect("AS")
    else:
        p.expect(",")
    type_name = _CAST_TYPES.get(p.key)
    if type_name is None:
        if p.toks[p.i][0] is K_WORD and p.key not in RESERVED:
            raise not_supported(f"CAST AS {p.key}")
        p.error()
    p.i += 1
    if type_name in ("SIGNED", "UNSIGNED"):
        p.accept("INTEGER") or p.accept("INT")
    length: int | None = None
    scale: int | None = None
    if p.accept("("):
        length = p.integer()
        if p.accept(","):
            scale = p.integer()
        p.expect(")")
    charset: str | None = None
    if type_name == "CHAR" and (p.accept_seq("CHARACTER", "SET") or p.accept("CHARSET")):
        charset = p.any_word().lower()
    p.expect(")")
    return ast.Cast(operand, type_name, length, scale, charset)


def _order_items(p: Parser) -> tuple[ast.OrderItem, ...]:
    """``expr [ASC|DESC], ...`` (GROUP_CONCAT's ORDER BY)."""
    items = []
    while True:
        value = expr(p)
        descending = p.accept("DESC")
        if not descending:
            p.accept("ASC")
        items.append(ast.OrderItem(value, descending))
        if not p.accept(","):
            return tuple(items)
