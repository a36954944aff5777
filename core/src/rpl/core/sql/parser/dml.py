"""Data manipulation: SELECT, INSERT, REPLACE, UPDATE and DELETE (single-table, as the
subset runs them).

SELECT reads its common clauses first (select list, FROM one table, WHERE) and skips the
rarer ones (GROUP BY, HAVING, ORDER BY, LIMIT, locking reads) with one end-of-statement
check. JOINs, subqueries, set operations, multi-table UPDATE/DELETE, INSERT ... SELECT
and PARTITION are recognised and refused with 1235.
"""

from __future__ import annotations

from typing import Final

from rpl.core.sql import ast
from rpl.core.sql.lexer import K_QUOTED, K_STRING, K_WORD
from rpl.core.sql.parser.cursor import RESERVED, Parser, Rule, not_supported
from rpl.core.sql.parser.expressions import column_ref, expr

_SELECT_OPTIONS: Final = frozenset(
    (
        "ALL",
        "HIGH_PRIORITY",
        "STRAIGHT_JOIN",
        "SQL_SMALL_RESULT",
        "SQL_BIG_RESULT",
        "SQL_BUFFER_RESULT",
        "SQL_NO_CACHE",
        "SQL_CACHE",
    )
)
_JOIN_WORDS: Final = frozenset(
    (
        "JOIN",
        "INNER",
        "LEFT",
        "RIGHT",
        "CROSS",
        "STRAIGHT_JOIN",
        "NATURAL",
        "OUTER",
        "FULL",
    )
)
_SET_OPS: Final = frozenset(("UNION", "EXCEPT", "INTERSECT"))


def select(p: Parser) -> ast.Select:
    p.i += 1  # SELECT
    distinct = False
    while True:
        key = p.key
        if key == "DISTINCT" or key == "DISTINCTROW":
            distinct = True
        elif key == "SQL_CALC_FOUND_ROWS":
            raise not_supported("SQL_CALC_FOUND_ROWS")
        elif key not in _SELECT_OPTIONS:
            break
        p.i += 1
    items = [select_item(p)]
    while p.accept(","):
        items.append(select_item(p))
    table = None
    if p.key == "INTO":
        raise not_supported("SELECT ... INTO")
    if p.accept("FROM"):
        if p.key == "(":
            raise not_supported("subqueries")
        if not p.accept("DUAL"):
            table = p.table_name(alias=True)
        key = p.key
        if key == "," or key in _JOIN_WORDS:
            raise not_supported("JOIN")
        if key in ("USE", "FORCE", "IGNORE"):
            raise not_supported("index hints")
        if key == "PARTITION":
            raise not_supported("PARTITION")
    where = expr(p) if p.accept("WHERE") else None
    group_by: tuple[ast.OrderItem, ...] = ()
    having = None
    order_by: tuple[ast.OrderItem, ...] = ()
    limit = offset = None
    lock = None
    if not p.at_end():  # the rarer clauses: one check skips them all
        if p.accept_seq("GROUP", "BY"):
            group_by = order_list(p)
            if p.key == "WITH":
                raise not_supported("WITH ROLLUP")
        having = expr(p) if p.accept("HAVING") else None
        if p.key == "WINDOW":
            raise not_supported("WINDOW")
        order_by = order_list(p) if p.accept_seq("ORDER", "BY") else ()
        if p.accept("LIMIT"):
            limit, offset = limit_clause(p)
        if p.accept_seq("FOR", "UPDATE"):
            lock = "FOR UPDATE"
        elif p.accept_seq("FOR", "SHARE"):
            lock = "SHARE"
        elif p.accept_seq("LOCK", "IN", "SHARE", "MODE"):
            lock = "SHARE"
        if lock is not None and p.key in ("NOWAIT", "SKIP", "OF"):
            raise not_supported(f"FOR UPDATE {p.key}")
        if p.key in _SET_OPS:
            raise not_supported(p.key)
        if p.key == "INTO":
            raise not_supported("SELECT ... INTO")
    return ast.Select(
        tuple(items), table, distinct, where, group_by, having, order_by, limit, offset, lock
    )


def select_item(p: Parser) -> ast.SelectItem:
    toks, i = p.toks, p.i
    start = toks[i][3]
    if toks[i][1] == "*":
        p.i += 1
        return ast.SelectItem(ast.Star(), None, "*")
    kind = toks[i][0]
    if (kind is K_WORD or kind is K_QUOTED) and toks[i + 1][1] == ".":
        if toks[i + 2][1] == "*":
            p.i += 3
            star = ast.Star(toks[i][2])
            return ast.SelectItem(star, None, p.sql[start : toks[i + 2][4]])
        if len(toks) > i + 4 and toks[i + 3][1] == "." and toks[i + 4][1] == "*":
            p.i += 5
            star = ast.Star(toks[i + 2][2], toks[i][2])
            return ast.SelectItem(star, None, p.sql[start : toks[i + 4][4]])
    item = expr(p)
    text = p.sql[start : p.toks[p.i - 1][4]]
    alias = None
    kind, key, value, _, _ = p.toks[p.i]
    if key == "AS":
        p.i += 1
        alias = p.name_or_string()
    elif kind is K_QUOTED or kind is K_STRING or (kind is K_WORD and key not in RESERVED):
        p.i += 1
        alias = value
    return ast.SelectItem(item, alias, text)


def order_list(p: Parser) -> tuple[ast.OrderItem, ...]:
    items = []
    while True:
        value = expr(p)
        descending = False
        if p.accept("DESC"):
            descending = True
        else:
            p.accept("ASC")
        items.append(ast.OrderItem(value, descending))
        if not p.accept(","):
            return tuple(items)


def limit_value(p: Parser) -> int | ast.Placeholder:
    if p.accept("?"):
        p.placeholders += 1
        return ast.Placeholder(p.placeholders - 1)
    return p.integer()


def limit_clause(p: Parser) -> tuple[int | ast.Placeholder, int | ast.Placeholder | None]:
    """``n``, ``n OFFSET m`` or ``m, n``: (limit, offset)."""
    first = limit_value(p)
    if p.accept(","):
        return limit_value(p), first
    if p.accept("OFFSET"):
        return first, limit_value(p)
    return first, None


def insert(p: Parser) -> ast.Insert:
    replace = p.key == "REPLACE"
    p.i += 1
    ignore = False
    while True:
        if p.key in ("LOW_PRIORITY", "DELAYED", "HIGH_PRIORITY"):
            p.i += 1
        elif not replace and p.key == "IGNORE":
            p.i += 1
            ignore = True
        else:
            break
    p.accept("INTO")
    table = p.table_name()
    verb = "REPLACE" if replace else "INSERT"
    if p.key == "PARTITION":
        raise not_supported(f"{verb} ... PARTITION")
    columns: tuple[str, ...] = ()
    rows: list[tuple[ast.Expression, ...]] = []
    if p.key == "(":
        if p.peek_key() in ("SELECT", "WITH", "("):
            raise not_supported(f"{verb} ... SELECT")
        if p.peek_key() == ")":
            p.i += 2
        else:
            columns = p.paren_names()
    key = p.key
    if key == "VALUES" or key == "VALUE":
        p.i += 1
        while True:
            if p.key == "ROW":
                p.i += 1
            rows.append(row(p))
            if not p.accept(","):
                break
    elif key == "SET" and not columns:
        p.i += 1
        pairs = assignments(p)
        columns = tuple(a.column.name for a in pairs)
        rows.append(tuple(a.value for a in pairs))
    elif key in ("SELECT", "TABLE", "WITH", "("):
        raise not_supported(f"{verb} ... {'SELECT' if key in ('(', 'WITH') else key}")
    else:
        p.error()
    if p.key == "AS":
        raise not_supported(f"{verb} ... AS alias")
    on_duplicate: tuple[ast.Assignment, ...] = ()
    if not replace and p.accept_seq("ON", "DUPLICATE", "KEY", "UPDATE"):
        on_duplicate = assignments(p)
    return ast.Insert(table, columns, tuple(rows), ignore, replace, on_duplicate)


def row(p: Parser) -> tuple[ast.Expression, ...]:
    p.expect("(")
    if p.accept(")"):
        return ()
    values = [expr(p)]
    while p.accept(","):
        values.append(expr(p))
    p.expect(")")
    return tuple(values)


def assignments(p: Parser) -> tuple[ast.Assignment, ...]:
    result = []
    while True:
        column = column_ref(p)
        p.expect("=")
        result.append(ast.Assignment(column, expr(p)))
        if not p.accept(","):
            return tuple(result)


def update(p: Parser) -> ast.Update:
    p.i += 1
    ignore = False
    while p.key in ("LOW_PRIORITY", "IGNORE"):
        ignore = ignore or p.key == "IGNORE"
        p.i += 1
    table = p.table_name(alias=True)
    if p.key == "," or p.key in _JOIN_WORDS:
        raise not_supported("multi-table UPDATE")
    p.expect("SET")
    pairs = assignments(p)
    where = expr(p) if p.accept("WHERE") else None
    order_by = order_list(p) if p.accept_seq("ORDER", "BY") else ()
    limit = limit_value(p) if p.accept("LIMIT") else None
    return ast.Update(table, pairs, where, order_by, limit, ignore)


def delete(p: Parser) -> ast.Delete:
    p.i += 1
    ignore = False
    while p.key in ("LOW_PRIORITY", "QUICK", "IGNORE"):
        ignore = ignore or p.key == "IGNORE"
        p.i += 1
    if p.key != "FROM":
        if p.toks[p.i][0] in (K_WORD, K_QUOTED):
            raise not_supported("multi-table DELETE")
        p.error()
    p.i += 1
    table = p.table_name(alias=True)
    if p.key in (",", "USING") or p.key in _JOIN_WORDS:
        raise not_supported("multi-table DELETE")
    if p.key == "PARTITION":
        raise not_supported("DELETE ... PARTITION")
    where = expr(p) if p.accept("WHERE") else None
    order_by = order_list(p) if p.accept_seq("ORDER", "BY") else ()
    limit = limit_value(p) if p.accept("LIMIT") else None
    return ast.Delete(table, where, order_by, limit, ignore)


STATEMENTS: Final[dict[str, Rule]] = {
    "SELECT": select,
    "INSERT": insert,
    "REPLACE": insert,
    "UPDATE": update,
    "DELETE": delete,
}
"""This family's statements by their first word."""
