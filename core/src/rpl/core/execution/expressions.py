"""Expression evaluation with MySQL's semantics for the subset.

An expression is compiled once per statement into a closure over a row (a tuple in
the table's column order), so a WHERE clause costs one Python call per row, not a
tree walk. NULL is ``None`` and follows SQL's three-valued logic: a comparison with
NULL is NULL, and WHERE keeps a row only when the condition is true. Comparing a
number with a string converts the string to a number, as MySQL does.
"""

from __future__ import annotations

import decimal
import math
import operator
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rpl.core.binlog.gtid import GtidSet
from rpl.core.errors import (
    ER_BAD_FIELD_ERROR,
    ER_MALFORMED_GTID_SET_SPECIFICATION,
    ER_NOT_SUPPORTED_YET,
    MySQLError,
)
from rpl.core.sql import ast
from rpl.core.variables import like_pattern

Row = Sequence[object]
Compiled = Callable[[Row], object]
_NUMBER = re.compile(r"\s*[-+]?(\d+\.?\d*([eE][-+]?\d+)?|\.\d+([eE][-+]?\d+)?)")


def to_number(value: object) -> int | float | decimal.Decimal:
    """MySQL's string-to-number conversion (leading numeric prefix, else 0)."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | float | decimal.Decimal):
        return value
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    match = _NUMBER.match(str(value))
    if not match:
        return 0
    text = match.group(0).strip()
    try:
        return int(text)
    except ValueError:
        return float(text)


def _comparable(left: object, right: object) -> tuple[object, object]:
    if isinstance(left, str) and isinstance(right, str):
        return left, right
    if isinstance(left, bytes) or isinstance(right, bytes):
        lb = left if isinstance(left, bytes) else str(left).encode()
        rb = right if isinstance(right, bytes) else str(right).encode()
        return lb, rb
    return to_number(left), to_number(right)


def compare(op: Callable[[Any, Any], Any]) -> Callable[[object, object], object]:
    """A SQL comparison: NULL if either side is NULL, else 1 or 0."""

    def run(left: object, right: object) -> object:
        if left is None or right is None:
            return None
        a, b = _comparable(left, right)
        return 1 if op(a, b) else 0

    return run


def _null_safe_equal(left: object, right: object) -> object:
    if left is None or right is None:
        return 1 if left is None and right is None else 0
    a, b = _comparable(left, right)
    return 1 if a == b else 0


def _arith(op: Callable[[object, object], object]) -> Callable[[object, object], object]:
    def run(left: object, right: object) -> object:
        if left is None or right is None:
            return None
        return op(to_number(left), to_number(right))

    return run


def _divide(left: object, right: object) -> object:
    if left is None or right is None:
        return None
    a, b = to_number(left), to_number(right)
    if b == 0:
        return None
    return _quotient(a, b)


def _quotient(
    a: int | float | decimal.Decimal, b: int | float | decimal.Decimal
) -> float | decimal.Decimal:
    """``a / b``: exact (DECIMAL) unless a float is involved, as MySQL's ``/``."""
    if isinstance(a, float) or isinstance(b, float):
        return float(a) / float(b)
    return decimal.Decimal(a) / decimal.Decimal(b)


def _int_div(left: object, right: object) -> object:
    if left is None or right is None:
        return None
    a, b = to_number(left), to_number(right)
    return None if b == 0 else int(_quotient(a, b))


def _modulo(left: object, right: object) -> object:
    """MySQL's MOD: the result has the sign of the dividend."""
    if left is None or right is None:
        return None
    a, b = to_number(left), to_number(right)
    if b == 0:
        return None
    if isinstance(a, float) or isinstance(b, float):
        return math.fmod(float(a), float(b))
    if isinstance(a, int) and isinstance(b, int):
        return (abs(a) % abs(b)) * (1 if a >= 0 else -1)
    return decimal.Decimal(a) % decimal.Decimal(b)


BINARY_OPERATORS: Mapping[str, Callable[[object, object], object]] = {
    "=": compare(operator.eq),
    "<>": compare(operator.ne),
    "<": compare(operator.lt),
    "<=": compare(operator.le),
    ">": compare(operator.gt),
    ">=": compare(operator.ge),
    "<=>": _null_safe_equal,
    "+": _arith(operator.add),
    "-": _arith(operator.sub),
    "*": _arith(operator.mul),
    "/": _divide,
    "DIV": _int_div,
    "%": _modulo,
}


def truth(value: object) -> bool | None:
    """SQL truth of a value: None for NULL."""
    if value is None:
        return None
    return bool(to_number(value)) if not isinstance(value, str) or value else False


class Context:
    """What an expression may consult besides the row: the session's functions."""

    def variable(self, name: str, scope: str | None) -> object:
        """@@[scope.]name."""
        raise NotImplementedError

    def user_variable(self, name: str) -> object:
        """@name (NULL when unset)."""
        raise NotImplementedError

    def function(self, name: str, args: list[object]) -> object:
        """A scalar function the session answers (DATABASE(), USER(), ...)."""
        raise NotImplementedError


def _logic(op: str, left: Compiled, right: Compiled) -> Compiled:
    if op == "AND":

        def run_and(row: Row) -> object:
            a = truth(left(row))
            if a is False:
                return 0
            b = truth(right(row))
            if b is False:
                return 0
            return None if a is None or b is None else 1

        return run_and
    if op == "OR":

        def run_or(row: Row) -> object:
            a = truth(left(row))
            if a:
                return 1
            b = truth(right(row))
            if b:
                return 1
            return None if a is None or b is None else 0

        return run_or

    def run_xor(row: Row) -> object:
        a, b = truth(left(row)), truth(right(row))
        return None if a is None or b is None else int(a != b)

    return run_xor


def _literal_value(expr: ast.Literal) -> object:
    """A literal's SQL value: TRUE and FALSE are the integers 1 and 0."""
    return int(expr.value) if isinstance(expr.value, bool) else expr.value


class Compiler:
    """Compiles expressions for one table's column layout (or none)."""

    def __init__(self, columns: Sequence[str], table: str, context: Context) -> None:
        self.positions = {name.lower(): i for i, name in enumerate(columns)}
        self.table = table
        self.context = context
        self.clause: str | None = None
        """The clause being compiled, as MySQL names it in ER_BAD_FIELD_ERROR."""

    def compile_in(self, clause: str, expr: ast.Expression) -> Compiled:
        """:meth:`compile` for an expression of ``clause`` ('field list', 'where clause'...)."""
        outer, self.clause = self.clause, clause
        try:
            return self.compile(expr)
        finally:
            self.clause = outer

    def compile(self, expr: ast.Expression) -> Compiled:
        """A closure computing ``expr`` for a row."""
        method = getattr(self, "_" + type(expr).__name__.lower(), None)
        if method is None:
            raise MySQLError.of(ER_NOT_SUPPORTED_YET, f"expression {ast.to_sql(expr)}")
        compiled: Compiled = method(expr)
        return compiled

    def evaluate(self, expr: ast.Expression) -> object:
        """``expr``'s value for no row (an INSERT's VALUES); a literal's without compiling."""
        if type(expr) is ast.Literal:
            return _literal_value(expr)
        return self.compile(expr)(())

    def _literal(self, expr: ast.Literal) -> Compiled:
        value = _literal_value(expr)
        return lambda row: value

    def column_position(self, column: ast.Column) -> int:
        """The row index of ``column``; ER_BAD_FIELD_ERROR if the table has none."""
        position = self.positions.get(column.name.lower())
        if position is None:
            where = self.clause or ("field list" if not self.table else "where clause")
            raise MySQLError.of(ER_BAD_FIELD_ERROR, column.name, where)
        return position

    def _column(self, expr: ast.Column) -> Compiled:
        return operator.itemgetter(self.column_position(expr))

    def _sysvar(self, expr: ast.SysVar) -> Compiled:
        context = self.context
        return lambda row: context.variable(expr.name, expr.scope)

    def _uservar(self, expr: ast.UserVar) -> Compiled:
        context = self.context
        return lambda row: context.user_variable(expr.name)

    def _binary(self, expr: ast.Binary) -> Compiled:
        left, right = self.compile(expr.left), self.compile(expr.right)
        if expr.op in ("AND", "OR", "XOR"):
            return _logic(expr.op, left, right)
        op = BINARY_OPERATORS.get(expr.op)
        if op is None:
            raise MySQLError.of(ER_NOT_SUPPORTED_YET, f"operator {expr.op}")
        return lambda row: op(left(row), right(row))

    def _unary(self, expr: ast.Unary) -> Compiled:
        operand = self.compile(expr.operand)
        if expr.op == "NOT":

            def run_not(row: Row) -> object:
                value = truth(operand(row))
                return None if value is None else int(not value)

            return run_not
        if expr.op == "-":

            def negate(row: Row) -> object:
                value = operand(row)
                return None if value is None else -to_number(value)

            return negate
        raise MySQLError.of(ER_NOT_SUPPORTED_YET, f"operator {expr.op}")

    def _isnull(self, expr: ast.IsNull) -> Compiled:
        operand, negated = self.compile(expr.operand), expr.negated
        return lambda row: int((operand(row) is None) != negated)

    def _between(self, expr: ast.Between) -> Compiled:
        operand, low, high = (self.compile(e) for e in (expr.operand, expr.low, expr.high))
        ge, le, negated = BINARY_OPERATORS[">="], BINARY_OPERATORS["<="], expr.negated

        def run(row: Row) -> object:
            value = operand(row)
            a, b = truth(ge(value, low(row))), truth(le(value, high(row)))
            if a is False or b is False:
                return int(negated)
            return None if a is None or b is None else int(not negated)

        return run

    def _inlist(self, expr: ast.InList) -> Compiled:
        operand = self.compile(expr.operand)
        items = [self.compile(i) for i in expr.items]
        eq, negated = BINARY_OPERATORS["="], expr.negated

        def run(row: Row) -> object:
            value = operand(row)
            seen_null = False
            for item in items:
                result = eq(value, item(row))
                if result == 1:
                    return int(not negated)
                seen_null |= result is None
            return None if seen_null else int(negated)

        return run

    def _like(self, expr: ast.Like) -> Compiled:
        operand, pattern, negated = (
            self.compile(expr.operand),
            self.compile(expr.pattern),
            expr.negated,
        )

        def run(row: Row) -> object:
            value, text = operand(row), pattern(row)
            if value is None or text is None:
                return None
            return int(bool(like_pattern(str(text)).match(str(value))) != negated)

        return run

    def _funccall(self, expr: ast.FuncCall) -> Compiled:
        if expr.name in AGGREGATES:
            raise MySQLError.of(ER_NOT_SUPPORTED_YET, f"{expr.name} in this position")
        args = [self.compile(a) for a in expr.args]
        scalar = SCALAR_FUNCTIONS.get(expr.name)
        if scalar is not None:
            return lambda row: scalar([a(row) for a in args])
        context, name = self.context, expr.name
        return lambda row: context.function(name, [a(row) for a in args])

    def _default(self, expr: ast.Default) -> Compiled:
        raise MySQLError.of(ER_NOT_SUPPORTED_YET, "DEFAULT in this position")


def _concat(args: list[object]) -> object:
    if any(a is None for a in args):
        return None
    return "".join(a.decode() if isinstance(a, bytes) else str(a) for a in args)


def _coalesce(args: list[object]) -> object:
    return next((a for a in args if a is not None), None)


def _if(args: list[object]) -> object:
    return args[1] if truth(args[0]) else args[2]


def _gtid_set(value: object) -> GtidSet:
    text = value.decode() if isinstance(value, bytes) else str(value)
    try:
        return GtidSet.parse(text)
    except ValueError as exc:
        raise MySQLError.of(ER_MALFORMED_GTID_SET_SPECIFICATION, text) from exc


def _gtid_subset(args: list[object]) -> object:
    """GTID_SUBSET(set1, set2): 1 when every GTID of set1 is in set2."""
    if args[0] is None or args[1] is None:
        return None
    return int(_gtid_set(args[0]).is_subset(_gtid_set(args[1])))


def _gtid_subtract(args: list[object]) -> object:
    """GTID_SUBTRACT(set1, set2): the GTIDs of set1 that are not in set2."""
    if args[0] is None or args[1] is None:
        return None
    return str(_gtid_set(args[0]).difference(_gtid_set(args[1])))


SCALAR_FUNCTIONS: Mapping[str, Callable[[list[object]], object]] = {
    "GTID_SUBSET": _gtid_subset,
    "GTID_SUBTRACT": _gtid_subtract,
    "CONCAT": _concat,
    "COALESCE": _coalesce,
    "IFNULL": lambda a: a[1] if a[0] is None else a[0],
    "IF": _if,
    "UPPER": lambda a: None if a[0] is None else str(a[0]).upper(),
    "UCASE": lambda a: None if a[0] is None else str(a[0]).upper(),
    "LOWER": lambda a: None if a[0] is None else str(a[0]).lower(),
    "LCASE": lambda a: None if a[0] is None else str(a[0]).lower(),
    "LENGTH": lambda a: None if a[0] is None else len(str(a[0]).encode()),
    "CHAR_LENGTH": lambda a: None if a[0] is None else len(str(a[0])),
    "ABS": lambda a: None if a[0] is None else abs(to_number(a[0])),
}
AGGREGATES = frozenset(("COUNT", "SUM", "MIN", "MAX", "AVG"))


def aggregate(name: str, values: list[object], star: bool, distinct: bool) -> object:
    """An aggregate over a column of values (NULLs ignored, as SQL does)."""
    present = [v for v in values if v is not None] if not star else values
    if distinct:
        present = list(dict.fromkeys(present))
    if name == "COUNT":
        return len(present)
    if not present:
        return None
    if name == "MIN":
        return min(present, key=to_number if not isinstance(present[0], str) else str)
    if name == "MAX":
        return max(present, key=to_number if not isinstance(present[0], str) else str)
    numbers = [to_number(v) for v in present]
    total = sum(decimal.Decimal(n) if not isinstance(n, float) else n for n in numbers)
    if name == "SUM":
        return total
    if isinstance(total, float):
        return total / len(numbers)
    # MySQL: an exact AVG has the argument's scale plus div_precision_increment (4) digits
    scale = max(_scale(n) for n in numbers) + DIV_PRECISION_INCREMENT
    return (decimal.Decimal(total) / len(numbers)).quantize(
        decimal.Decimal(1).scaleb(-scale), rounding=decimal.ROUND_HALF_UP
    )


DIV_PRECISION_INCREMENT = 4
"""MySQL's default div_precision_increment: digits an exact division adds to the scale."""


def _scale(number: object) -> int:
    if isinstance(number, decimal.Decimal):
        exponent = number.as_tuple().exponent
        return -exponent if isinstance(exponent, int) and exponent < 0 else 0
    return 0
