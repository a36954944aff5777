"""Expression evaluation with MySQL's semantics for the subset.

An expression is compiled once per statement into a closure over a row (a tuple in
the table's column order), so a WHERE clause costs one Python call per row, not a
tree walk. A query over several tables compiles against a :class:`Scope` (the row is
the tables' rows side by side); a correlated subquery's row is its own followed by the
outer query's, so an outer column is read at the outer position plus the inner width.
Aggregates compile to a read of the current group (:attr:`Compiler.group`), subqueries
to the plan the query layer builds (:attr:`Compiler.subqueries`): one evaluator.
NULL is ``None`` and follows SQL's three-valued logic: a comparison with NULL is NULL,
and WHERE keeps a row only when the condition is true. Comparing a number with a string
converts the string to a number, as MySQL does.
"""

from __future__ import annotations

import datetime
import decimal
import hashlib
import math
import operator
import re
import zlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from rpl.core import json_text
from rpl.core.binlog.gtid import GtidSet
from rpl.core.errors import (
    ER_BAD_FIELD_ERROR,
    ER_INVALID_GROUP_FUNC_USE,
    ER_MALFORMED_GTID_SET_SPECIFICATION,
    ER_NON_UNIQ_ERROR,
    ER_NOT_SUPPORTED_YET,
    ER_OPERAND_COLUMNS,
    ER_SUBQUERY_NO_1_ROW,
    ER_WRONG_PARAMCOUNT_TO_NATIVE_FCT,
    MySQLError,
)
from rpl.core.hex_literal import HexBytes
from rpl.core.sql import ast
from rpl.core.variables import like_pattern

Row = Sequence[object]
Compiled = Callable[[Row], object]
_NUMBER = re.compile(r"\s*[-+]?(\d+\.?\d*([eE][-+]?\d+)?|\.\d+([eE][-+]?\d+)?)")


_NUMBERS = (int, float, decimal.Decimal)


def to_number(value: object) -> int | float | decimal.Decimal:
    """MySQL's string-to-number conversion (leading numeric prefix, else 0)."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | float | decimal.Decimal):
        return value
    if isinstance(value, HexBytes):
        return value.number()
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
    if (isinstance(left, HexBytes) and isinstance(right, _NUMBERS)) or (
        isinstance(right, HexBytes) and isinstance(left, _NUMBERS)
    ):
        return to_number(left), to_number(right)  # a hex literal against a number: numbers
    if isinstance(left, bytes) or isinstance(right, bytes):
        lb = left if isinstance(left, bytes) else str(left).encode("utf-8", "surrogateescape")
        rb = right if isinstance(right, bytes) else str(right).encode("utf-8", "surrogateescape")
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

    def set_user_variable(self, name: str, value: object) -> None:
        """``@name := value``."""
        raise NotImplementedError


class ScopeTable:
    """One table of a :class:`Scope`: the name it is qualified by, its database, its
    columns, where its row starts in the joined row, and the USING columns an
    unqualified name does not count twice for.
    """

    __slots__ = ("qualifier", "db", "names", "offset", "hidden")

    def __init__(
        self,
        qualifier: str,
        db: str | None,
        names: Sequence[str],
        offset: int,
        hidden: frozenset[str] = frozenset(),
    ) -> None:
        self.qualifier = qualifier
        self.db = db
        self.names = {name.lower(): i for i, name in enumerate(names)}
        self.offset = offset
        self.hidden = hidden


class Scope:
    """The columns a query over several tables sees: ``tables`` side by side in one row.

    ``visible`` limits lookups to the first tables (an ON condition sees only the
    tables joined so far, as MySQL's 'on clause' does).
    """

    def __init__(self, tables: Sequence[ScopeTable], width: int) -> None:
        self.tables = list(tables)
        self.width = width
        self.visible = len(self.tables)

    def find(self, column: ast.Column, clause: str) -> int | None:
        """``column``'s position, None if no table has it; ER_NON_UNIQ_ERROR if two do."""
        name = column.name.lower()
        qualifier = column.table.lower() if column.table is not None else None
        found: list[int] = []
        for table in self.tables[: self.visible]:
            if qualifier is not None:
                if table.qualifier.lower() != qualifier:
                    continue
                if column.schema is not None and (table.db or "").lower() != column.schema.lower():
                    continue
            elif name in table.hidden:
                continue
            index = table.names.get(name)
            if index is not None:
                found.append(table.offset + index)
        if len(found) > 1:
            raise MySQLError.of(ER_NON_UNIQ_ERROR, column.name, clause)
        return found[0] if found else None


class SubqueryRunner(Protocol):
    """A subquery planned for one outer query (see :attr:`Compiler.subqueries`)."""

    @property
    def width(self) -> int:
        """How many columns the subquery selects."""

    def rows(self, outer: Row) -> Sequence[Sequence[object]]:
        """The subquery's result for the outer row ``outer``."""


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

    def __init__(
        self,
        columns: Sequence[str],
        table: str,
        context: Context,
        scope: Scope | None = None,
        outer: Compiler | None = None,
    ) -> None:
        self.positions = {name.lower(): i for i, name in enumerate(columns)}
        self.table = table
        self.context = context
        self.clause: str | None = None
        """The clause being compiled, as MySQL names it in ER_BAD_FIELD_ERROR."""
        self.scope = scope
        self.outer = outer
        self.width = scope.width if scope is not None else len(columns)
        """Columns of this query's own row; an outer query's row follows them."""
        self.correlated = False
        """Whether a compiled expression read a column of an outer query."""
        self.group: list[Sequence[Row]] | None = None
        """Where aggregates are allowed: a cell holding the current group's rows."""
        self.subqueries: Callable[[ast.Select | ast.Union, Compiler], SubqueryRunner] | None = None
        """Plans a subquery of this query (set by the query layer)."""

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
        if self.scope is None and self.outer is None:
            position = self.positions.get(column.name.lower())
        else:
            position = self.find(column)
        if position is None:
            where = self.clause or ("field list" if not self.table else "where clause")
            parts = [p for p in (column.schema, column.table) if p is not None] + [column.name]
            name = ".".join(parts) if self.scope is not None else column.name
            raise MySQLError.of(ER_BAD_FIELD_ERROR, name, where)
        return position

    def find(self, column: ast.Column) -> int | None:
        """``column``'s position in this query's row or, failing that, an outer query's."""
        if self.scope is not None:
            position = self.scope.find(column, self.clause or "field list")
        else:
            position = self.positions.get(column.name.lower())
        if position is None and self.outer is not None:
            outer = self.outer.find(column)
            if outer is not None:
                self.correlated = True
                return self.width + outer
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
            return self._aggregate(expr)
        arity = ARITY.get(expr.name)
        if arity is not None and not arity[0] <= len(expr.args) <= (arity[1] or len(expr.args)):
            raise MySQLError.of(ER_WRONG_PARAMCOUNT_TO_NATIVE_FCT, expr.name)
        args = [self.compile(a) for a in expr.args]
        scalar = SCALAR_FUNCTIONS.get(expr.name)
        if scalar is not None:
            return lambda row: scalar([a(row) for a in args])
        context, name = self.context, expr.name
        return lambda row: context.function(name, [a(row) for a in args])

    def _default(self, expr: ast.Default) -> Compiled:
        raise MySQLError.of(ER_NOT_SUPPORTED_YET, "DEFAULT in this position")

    def _aggregate(self, expr: ast.FuncCall) -> Compiled:
        """An aggregate over the current group's rows (1111 where there is no group)."""
        cell = self.group
        if cell is None:
            raise MySQLError.of(ER_INVALID_GROUP_FUNC_USE)
        self.group = None  # no aggregate inside an aggregate
        try:
            arg = self.compile(expr.args[0]) if expr.args else None
            rest = [self.compile(a) for a in expr.args[1:]]
        finally:
            self.group = cell
        if rest and expr.name != "GROUP_CONCAT":
            raise MySQLError.of(ER_NOT_SUPPORTED_YET, f"{expr.name} of several arguments")
        if expr.name == "GROUP_CONCAT" and arg is not None:
            return self._group_concat(expr, cell, [arg, *rest])
        name, star, distinct = expr.name, expr.star, expr.distinct

        def run(row: Row) -> object:
            rows = cell[0]
            if arg is None:
                return aggregate(name, [1] * len(rows), star, distinct)
            return aggregate(name, [arg(r) for r in rows], star, distinct)

        return run

    def _group_concat(
        self, expr: ast.FuncCall, cell: list[Sequence[Row]], args: list[Compiled]
    ) -> Compiled:
        """GROUP_CONCAT([DISTINCT] x, ... [ORDER BY ...] [SEPARATOR s]): a row with a NULL
        argument is skipped; NULL when no row is left.
        """
        group, self.group = self.group, None
        try:
            keys = [(self.compile(o.expr), o.descending) for o in expr.order_by]
        finally:
            self.group = group
        separator = "," if expr.separator is None else expr.separator
        distinct = expr.distinct

        def run(row: Row) -> object:
            rows = list(cell[0])
            for key, descending in reversed(keys):
                rows.sort(key=_by(key), reverse=descending)
            values = [_concat([a(r) for a in args]) for r in rows]
            present = [v for v in values if v is not None]
            if distinct:
                present = list(dict.fromkeys(present))
            return separator.join(as_text(v) for v in present) if present else None

        return run

    def _runner(self, select: ast.Select | ast.Union) -> SubqueryRunner:
        if self.subqueries is None:
            raise MySQLError.of(ER_NOT_SUPPORTED_YET, "subqueries in this statement")
        group, self.group = self.group, None
        try:
            return self.subqueries(select, self)
        finally:
            self.group = group

    def _subquery(self, expr: ast.Subquery) -> Compiled:
        runner = self._runner(expr.select)
        if runner.width != 1:
            raise MySQLError.of(ER_OPERAND_COLUMNS, 1)

        def run(row: Row) -> object:
            rows = runner.rows(row)
            if len(rows) > 1:
                raise MySQLError.of(ER_SUBQUERY_NO_1_ROW)
            return rows[0][0] if rows else None

        return run

    def _exists(self, expr: ast.Exists) -> Compiled:
        runner = self._runner(expr.select)
        return lambda row: int(bool(runner.rows(row)))

    def _insubquery(self, expr: ast.InSubquery) -> Compiled:
        operand = self.compile(expr.operand)
        runner = self._runner(expr.select)
        if runner.width != 1:
            raise MySQLError.of(ER_OPERAND_COLUMNS, 1)
        eq, negated = BINARY_OPERATORS["="], expr.negated

        def run(row: Row) -> object:
            rows = runner.rows(row)
            if not rows:
                return int(negated)
            value = operand(row)
            seen_null = False
            for item in rows:
                result = eq(value, item[0])
                if result == 1:
                    return int(not negated)
                seen_null |= result is None
            return None if seen_null else int(negated)

        return run

    def _quantifiedcomparison(self, expr: ast.QuantifiedComparison) -> Compiled:
        """``x op ANY (...)`` is true if the comparison is true for some row, ``ALL`` if it
        is for every row (so over no rows ANY is false and ALL true); otherwise NULL when
        a comparison was NULL, else false.
        """
        operand = self.compile(expr.operand)
        runner = self._runner(expr.select)
        if runner.width != 1:
            raise MySQLError.of(ER_OPERAND_COLUMNS, 1)
        op, wanted = BINARY_OPERATORS[expr.op], expr.quantifier == "ANY"

        def run(row: Row) -> object:
            value = operand(row)
            seen_null = False
            for item in runner.rows(row):
                result = op(value, item[0])
                if result is None:
                    seen_null = True
                elif bool(result) == wanted:
                    return int(wanted)
            return None if seen_null else int(not wanted)

        return run

    def _istruth(self, expr: ast.IsTruth) -> Compiled:
        operand, negated = self.compile(expr.operand), expr.negated
        wanted: bool | None = {"TRUE": True, "FALSE": False, "UNKNOWN": None}[expr.value]
        return lambda row: int((truth(operand(row)) is wanted) != negated)

    def _assignuservar(self, expr: ast.AssignUserVar) -> Compiled:
        value, context, name = self.compile(expr.value), self.context, expr.name

        def run(row: Row) -> object:
            result = value(row)
            context.set_user_variable(name, result)
            return result

        return run

    def _cast(self, expr: ast.Cast) -> Compiled:
        operand = self.compile(expr.operand)
        convert = cast_function(expr)
        return lambda row: convert(operand(row))


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


def _by(key: Compiled) -> Callable[[Row], tuple[int, object]]:
    """A sort key over rows by the compiled expression ``key``."""
    return lambda row: order_key(key(row))


def order_key(value: object) -> tuple[int, object]:
    """ORDER BY's order of values: NULL first, strings as strings, the rest as numbers."""
    if value is None:
        return (0, 0)
    return (1, value if isinstance(value, str | bytes) else to_number(value))


def as_text(value: object) -> str:
    """A value as MySQL prints it in a string context."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "surrogateescape")
    if isinstance(value, datetime.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, float):
        return repr(value).removesuffix(".0")
    return str(value)


def _as_bytes(value: object) -> bytes:
    return value if isinstance(value, bytes) else as_text(value).encode("utf-8", "surrogateescape")


_U64 = (1 << 64) - 1


def _to_integer(value: object) -> int:
    """CAST(value AS SIGNED/UNSIGNED) before wrapping: numbers round half away from zero,
    strings take their integer prefix as MySQL does, a hexadecimal literal its number.
    """
    if isinstance(value, HexBytes):
        return value.number()
    if isinstance(value, str | bytes):
        text = as_text(value).strip()
        match = re.match(r"[-+]?\d+", text)
        if match is None:
            return 0
        return int(match.group(0))
    number = to_number(value)
    if isinstance(number, int):
        return number
    return int(decimal.Decimal(number).quantize(decimal.Decimal(1), decimal.ROUND_HALF_UP))


def _cast_signed(value: object) -> object:
    number = _to_integer(value) & _U64
    return number - (1 << 64) if number >> 63 else number


def _cast_decimal(length: int | None, scale: int | None) -> Callable[[object], object]:
    digits, places = length or 10, scale or 0
    quantum = decimal.Decimal(1).scaleb(-places)
    largest = decimal.Decimal(10) ** (digits - places) - quantum

    def run(value: object) -> object:
        number = decimal.Decimal(to_number(value)).quantize(quantum, decimal.ROUND_HALF_UP)
        return max(-largest, min(largest, number))

    return run


def _cast_temporal(kind: str) -> Callable[[object], object]:
    def run(value: object) -> object:
        if isinstance(value, datetime.datetime):
            moment = value
        elif isinstance(value, datetime.date):
            moment = datetime.datetime(value.year, value.month, value.day)
        else:
            text = as_text(value).strip()
            try:
                if kind == "TIME" and len(text) <= 10 and ":" in text:
                    return text if len(text.split(":")[0]) > 1 else "0" + text
                moment = datetime.datetime.fromisoformat(text)
            except ValueError:
                return None
        if kind == "DATE":
            return moment.date()
        if kind == "TIME":
            return moment.time().isoformat()
        return moment

    return run


def cast_function(expr: ast.Cast) -> Callable[[object], object]:
    """The conversion CAST/CONVERT applies to a non-NULL value (NULL stays NULL)."""
    kind, length = expr.type_name, expr.length

    def convert(value: object) -> object:
        return None if value is None else inner(value)

    inner: Callable[[object], object]
    if kind == "SIGNED":
        inner = _cast_signed
    elif kind == "UNSIGNED":
        inner = lambda v: _to_integer(v) & _U64  # noqa: E731
    elif kind == "CHAR" and expr.charset in ("binary",):
        inner = _as_bytes
    elif kind == "CHAR":
        inner = lambda v: as_text(v)[:length] if length is not None else as_text(v)  # noqa: E731
    elif kind == "BINARY":
        if length is None:
            inner = _as_bytes
        else:
            inner = lambda v: _as_bytes(v)[:length].ljust(length, b"\0")  # noqa: E731
    elif kind == "DECIMAL":
        inner = _cast_decimal(length, expr.scale)
    elif kind in ("DOUBLE", "FLOAT"):
        inner = lambda v: float(to_number(v))  # noqa: E731
    elif kind == "JSON":
        inner = lambda v: json_text.normalize(as_text(v))  # noqa: E731
    else:
        inner = _cast_temporal(kind)
    return convert


def _crc32(args: list[object]) -> object:
    return None if args[0] is None else zlib.crc32(_as_bytes(args[0]))


def _concat_ws(args: list[object]) -> object:
    """CONCAT_WS(separator, ...): NULL arguments are skipped, a NULL separator is NULL."""
    if args[0] is None:
        return None
    return as_text(args[0]).join(as_text(a) for a in args[1:] if a is not None)


_DIGITS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _conv(args: list[object]) -> object:
    """CONV(n, from_base, to_base): n read as unsigned in from_base, written in to_base
    (upper case); a negative to_base writes it signed.
    """
    if any(a is None for a in args):
        return None
    source, target = int(to_number(args[1])), int(to_number(args[2]))
    if not (2 <= abs(source) <= 36 and 2 <= abs(target) <= 36):
        return None
    text = as_text(args[0]).strip().upper()
    negative = text.startswith("-")
    digits = text.lstrip("+-")
    number = 0
    for char in digits:
        digit = _DIGITS.find(char)
        if digit < 0 or digit >= abs(source):
            break
        number = number * abs(source) + digit
    number = min(number, _U64)
    if negative:
        number = -number if source < 0 else (-number) & _U64
    sign = ""
    if number < 0 or (target < 0 and number >> 63):
        number = -number if number < 0 else (1 << 64) - number
        sign = "-"
    out = ""
    while True:
        number, digit = divmod(number, abs(target))
        out = _DIGITS[digit] + out
        if number == 0:
            return sign + out


def _hex(args: list[object]) -> object:
    value = args[0]
    if value is None:
        return None
    if isinstance(value, int | float | decimal.Decimal) and not isinstance(value, bool):
        return format(_to_integer(value) & _U64, "X")
    return _as_bytes(value).hex().upper()


def _digest(name: str) -> Callable[[list[object]], object]:
    def run(args: list[object]) -> object:
        if args[0] is None:
            return None
        return hashlib.new(name, _as_bytes(args[0])).hexdigest()

    return run


def _null_in(function: Callable[[list[object]], object]) -> Callable[[list[object]], object]:
    """``function`` returning NULL when any argument is NULL, as most of MySQL's do."""

    def run(args: list[object]) -> object:
        return None if any(a is None for a in args) else function(args)

    return run


def _substring(args: list[object]) -> object:
    """SUBSTRING(s, pos[, len]): 1-based, a negative pos counts from the end, 0 is ''."""
    text, start = as_text(args[0]), int(to_number(args[1]))
    length = int(to_number(args[2])) if len(args) > 2 else len(text)
    if start == 0 or length < 1 or abs(start) > len(text):
        return ""
    first = start - 1 if start > 0 else len(text) + start
    return text[first : first + length]


def _pad(left: bool) -> Callable[[list[object]], object]:
    def run(args: list[object]) -> object:
        text, width, pad = as_text(args[0]), int(to_number(args[1])), as_text(args[2])
        if width < 0:
            return None
        if len(text) >= width:
            return text[:width]
        if not pad:
            return None
        fill = (pad * (width // len(pad) + 1))[: width - len(text)]
        return fill + text if left else text + fill

    return run


def _extreme(pick: Callable[..., Any]) -> Callable[[list[object]], object]:
    """GREATEST / LEAST: as numbers unless every argument is a string."""

    def run(args: list[object]) -> object:
        if all(isinstance(a, str | bytes) for a in args):
            return pick(args, key=as_text)
        return pick(args, key=to_number)

    return run


def _unhex(args: list[object]) -> object:
    try:
        return bytes.fromhex(as_text(args[0]))
    except ValueError:
        return None


def _whole(rounding: str) -> Callable[[list[object]], object]:
    """FLOOR / CEILING: an integer for an exact value, a float for a float."""

    def run(args: list[object]) -> object:
        number = to_number(args[0])
        if isinstance(number, float):
            return float(
                math.floor(number) if rounding == decimal.ROUND_FLOOR else math.ceil(number)
            )
        return int(decimal.Decimal(number).to_integral_value(rounding))

    return run


def _nullif(args: list[object]) -> object:
    return None if BINARY_OPERATORS["="](args[0], args[1]) == 1 else args[0]


SCALAR_FUNCTIONS: Mapping[str, Callable[[list[object]], object]] = {
    "SUBSTRING": _null_in(_substring),
    "SUBSTR": _null_in(_substring),
    "MID": _null_in(_substring),
    "LPAD": _null_in(_pad(True)),
    "RPAD": _null_in(_pad(False)),
    "REPLACE": _null_in(
        lambda a: as_text(a[0]).replace(as_text(a[1]), as_text(a[2])) if as_text(a[1]) else a[0]
    ),
    "TRIM": _null_in(lambda a: as_text(a[0]).strip(" ")),
    "LTRIM": _null_in(lambda a: as_text(a[0]).lstrip(" ")),
    "RTRIM": _null_in(lambda a: as_text(a[0]).rstrip(" ")),
    "LEFT": _null_in(lambda a: as_text(a[0])[: max(int(to_number(a[1])), 0)]),
    "RIGHT": _null_in(
        lambda a: as_text(a[0])[-int(to_number(a[1])) :] if int(to_number(a[1])) > 0 else ""
    ),
    "REVERSE": _null_in(lambda a: as_text(a[0])[::-1]),
    "NULLIF": _nullif,
    "GREATEST": _null_in(_extreme(max)),
    "LEAST": _null_in(_extreme(min)),
    "UNHEX": _null_in(_unhex),
    "FLOOR": _null_in(_whole(decimal.ROUND_FLOOR)),
    "CEIL": _null_in(_whole(decimal.ROUND_CEILING)),
    "CEILING": _null_in(_whole(decimal.ROUND_CEILING)),
    "CRC32": _crc32,
    "CONCAT_WS": _concat_ws,
    "CONV": _conv,
    "ISNULL": lambda a: int(a[0] is None),
    "HEX": _hex,
    "MD5": _digest("md5"),
    "SHA1": _digest("sha1"),
    "SHA": _digest("sha1"),
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
    "LENGTH": lambda a: None if a[0] is None else len(_as_bytes(a[0])),
    "CHAR_LENGTH": lambda a: None if a[0] is None else len(str(a[0])),
    "ABS": lambda a: None if a[0] is None else abs(to_number(a[0])),
}
_ONE = (
    "TRIM LTRIM RTRIM REVERSE UNHEX FLOOR CEIL CEILING CRC32 ISNULL HEX MD5 SHA1 SHA UPPER "
    "UCASE LOWER LCASE LENGTH CHAR_LENGTH ABS"
).split()
ARITY: Mapping[str, tuple[int, int | None]] = {
    **dict.fromkeys(_ONE, (1, 1)),
    **dict.fromkeys(("LEFT", "RIGHT", "NULLIF", "IFNULL", "GTID_SUBSET", "GTID_SUBTRACT"), (2, 2)),
    **dict.fromkeys(("LPAD", "RPAD", "REPLACE", "CONV", "IF"), (3, 3)),
    **dict.fromkeys(("SUBSTRING", "SUBSTR", "MID"), (2, 3)),
    **dict.fromkeys(("GREATEST", "LEAST", "CONCAT_WS"), (2, None)),
    **dict.fromkeys(("CONCAT", "COALESCE"), (1, None)),
}
"""(least, most or None for any) arguments of each function of :data:`SCALAR_FUNCTIONS`:
another count is 1582 when the statement is compiled, before any row is read."""
AGGREGATES = frozenset(
    ("COUNT", "SUM", "MIN", "MAX", "AVG", "BIT_XOR", "BIT_OR", "BIT_AND", "GROUP_CONCAT")
)


def aggregate(name: str, values: list[object], star: bool, distinct: bool) -> object:
    """An aggregate over a column of values (NULLs ignored, as SQL does)."""
    present = [v for v in values if v is not None] if not star else values
    if distinct:
        present = list(dict.fromkeys(present))
    if name == "COUNT":
        return len(present)
    if name.startswith("BIT_"):
        return _bit_aggregate(name, present)
    if not present:
        return None
    if name == "GROUP_CONCAT":
        return ",".join(as_text(v) for v in present)
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


def _bit_aggregate(name: str, values: list[object]) -> int:
    """BIT_XOR / BIT_OR / BIT_AND over unsigned 64-bit integers (0, 0 and all ones over
    no rows, as MySQL returns).
    """
    numbers = [_to_integer(v) & _U64 for v in values]
    if name == "BIT_AND":
        result = _U64
        for n in numbers:
            result &= n
        return result
    result = 0
    if name == "BIT_OR":
        for n in numbers:
            result |= n
        return result
    for n in numbers:
        result ^= n
    return result
