"""Data definition: CREATE and DROP of tables, databases and indexes, and TRUNCATE.

CREATE TABLE reads column definitions (types, NULL, DEFAULT, ON UPDATE, AUTO_INCREMENT,
keys, charset and collation, comments) and key definitions; table and database options
are kept as (name, value) pairs for the executor. Foreign keys, CHECK constraints,
generated columns, functional key parts, CREATE TABLE ... SELECT / LIKE and PARTITION BY
are refused with 1235, and so is any CREATE or DROP of an object this module has no rule
for (VIEW, TRIGGER, ...): see ``rpl.core.sql.parser`` for how a two-word statement is
dispatched.
"""

from __future__ import annotations

from typing import Final

from rpl.core.sql import ast
from rpl.core.sql.lexer import K_NUMBER, K_QUOTED, K_STRING, K_WORD
from rpl.core.sql.parser.cursor import Parser, Rule, not_supported
from rpl.core.sql.parser.expressions import expr, unary


def create_database(p: Parser) -> ast.CreateDatabase:
    p.i += 2
    if_not_exists = p.if_not_exists()
    name = p.ident()
    return ast.CreateDatabase(name, if_not_exists, options(p))


def create_index(p: Parser) -> ast.CreateIndex:
    """CREATE [UNIQUE] INDEX (CREATE UNIQUE followed by anything else is not run)."""
    if p.peek_key() == "UNIQUE" and p.peek_key(2) != "INDEX":
        raise not_supported(p.verb_name())
    p.i += 1
    unique = p.accept("UNIQUE")
    p.i += 1
    name = p.ident()
    skip_index_type(p)
    p.expect("ON")
    table = p.table_name()
    columns = key_parts(p)
    skip_index_options(p)
    return ast.CreateIndex(name, table, columns, unique)


def create_table(p: Parser) -> ast.CreateTable:
    p.i += 2
    if_not_exists = p.if_not_exists()
    table = p.table_name()
    if p.key == "LIKE":
        raise not_supported("CREATE TABLE ... LIKE")
    if p.key != "(" or p.peek_key() in ("SELECT", "WITH"):
        if p.key in ("AS", "SELECT", "(", "WITH", "IGNORE", "REPLACE"):
            raise not_supported("CREATE TABLE ... SELECT")
        p.error()
    p.i += 1
    columns: list[ast.ColumnDef] = []
    indexes: list[ast.IndexDef] = []
    while True:
        index = table_key(p)
        if index is not None:
            indexes.append(index)
        else:
            columns.append(column_def(p))
        if not p.accept(","):
            break
    p.expect(")")
    table_options = options(p)
    if p.key in ("AS", "SELECT", "IGNORE", "REPLACE"):
        raise not_supported("CREATE TABLE ... SELECT")
    return ast.CreateTable(table, tuple(columns), tuple(indexes), if_not_exists, table_options)


def table_key(p: Parser) -> ast.IndexDef | None:
    """A key definition of CREATE TABLE, or None (cursor unmoved) for a column."""
    if p.toks[p.i][0] is not K_WORD:
        return None
    key = p.key
    if key == "CONSTRAINT":
        p.i += 1
        if p.key not in ("PRIMARY", "UNIQUE", "FOREIGN", "CHECK"):
            p.ident()
        key = p.key
        if key not in ("PRIMARY", "UNIQUE", "FOREIGN", "CHECK"):
            p.error()
    if key == "FOREIGN":
        raise not_supported("FOREIGN KEY")
    if key == "CHECK":
        raise not_supported("CHECK constraints")
    if key in ("FULLTEXT", "SPATIAL"):
        raise not_supported(f"{key} indexes")
    if key == "PRIMARY":
        p.i += 1
        p.expect("KEY")
        skip_index_type(p)
        columns = key_parts(p)
        skip_index_options(p)
        return ast.IndexDef(None, columns, primary=True)
    if key in ("UNIQUE", "KEY", "INDEX"):
        p.i += 1
        unique = key == "UNIQUE"
        if unique and p.key in ("KEY", "INDEX"):
            p.i += 1
        name = None if p.key in ("(", "USING") else p.ident()
        skip_index_type(p)
        columns = key_parts(p)
        skip_index_options(p)
        return ast.IndexDef(name, columns, unique=unique)
    return None


def key_parts(p: Parser) -> tuple[str, ...]:
    """``(col [(len)] [ASC|DESC], ...)``: the column names."""
    p.expect("(")
    names = []
    while True:
        if p.key == "(":
            raise not_supported("functional key parts")
        names.append(p.ident())
        if p.accept("("):
            p.integer()
            p.expect(")")
        if not p.accept("ASC"):
            p.accept("DESC")
        if not p.accept(","):
            break
    p.expect(")")
    return tuple(names)


def skip_index_type(p: Parser) -> None:
    if p.accept("USING"):
        if not (p.accept("BTREE") or p.accept("HASH")):
            p.error()


def skip_index_options(p: Parser) -> None:
    while True:
        if p.key == "USING":
            skip_index_type(p)
        elif p.accept("COMMENT"):
            p.string()
        elif p.key in ("VISIBLE", "INVISIBLE"):
            p.i += 1
        elif p.key in ("KEY_BLOCK_SIZE", "ALGORITHM", "LOCK"):
            p.i += 1
            p.accept("=")
            option_value(p)
        else:
            return


def column_type(p: Parser) -> tuple[str, int | None, int | None, tuple[str, ...]]:
    """A column's data type: its upper-case name, ``(length[, scale])`` or ENUM / SET's
    ``('member', ...)``.
    """
    type_name = p.any_word().upper()
    if type_name == "DOUBLE" and p.accept("PRECISION"):
        type_name = "DOUBLE PRECISION"
    length = scale = None
    values: tuple[str, ...] = ()
    if p.accept("("):
        if type_name in ("ENUM", "SET"):
            members = [p.string()]
            while p.accept(","):
                members.append(p.string())
            values = tuple(members)
        else:
            length = p.integer()
            if p.accept(","):
                scale = p.integer()
        p.expect(")")
    return type_name, length, scale, values


def column_def(p: Parser) -> ast.ColumnDef:
    """A column definition of CREATE TABLE: name, data type, then its attributes."""
    name = p.ident()
    type_name, length, scale, values = column_type(p)
    unsigned = zerofill = auto_increment = primary_key = unique = False
    charset = collation = comment = None
    nullable: bool | None = None
    default = on_update = None
    while True:
        key = p.key
        if p.toks[p.i][0] is not K_WORD:
            break
        p.i += 1
        if key == "UNSIGNED":
            unsigned = True
        elif key == "SIGNED":
            pass
        elif key == "ZEROFILL":
            zerofill = unsigned = True
        elif key == "BINARY":
            collation = collation or "binary"
        elif key == "NOT":
            p.expect("NULL")
            nullable = False
        elif key == "NULL":
            nullable = True
        elif key == "CHARACTER" or key == "CHARSET":
            if key == "CHARACTER":
                p.expect("SET")
            charset = p.name_or_string()
        elif key == "COLLATE":
            collation = p.name_or_string()
        elif key == "DEFAULT":
            default = column_default(p)
        elif key == "ON":
            p.expect("UPDATE")
            on_update = column_default(p)
        elif key == "AUTO_INCREMENT":
            auto_increment = True
        elif key == "PRIMARY":
            p.expect("KEY")
            primary_key = True
        elif key == "KEY":
            primary_key = True
        elif key == "UNIQUE":
            unique = True
            p.accept("KEY")
        elif key == "COMMENT":
            comment = p.string()
        elif key in ("VISIBLE", "INVISIBLE"):
            pass
        elif key in ("COLUMN_FORMAT", "STORAGE"):
            p.any_word()
        elif key in ("GENERATED", "AS"):
            raise not_supported("generated columns")
        elif key == "REFERENCES":
            raise not_supported("FOREIGN KEY")
        elif key in ("CHECK", "CONSTRAINT"):
            raise not_supported("CHECK constraints")
        else:
            p.i -= 1
            p.error()
    return ast.ColumnDef(
        name,
        type_name,
        length,
        scale,
        values,
        unsigned,
        zerofill,
        charset,
        collation,
        nullable,
        default,
        on_update,
        auto_increment,
        primary_key,
        unique,
        comment,
    )


def column_default(p: Parser) -> ast.Expression:
    """A DEFAULT / ON UPDATE value: a signed literal, a niladic call, ``(expr)``."""
    if p.accept("("):
        default = expr(p)
        p.expect(")")
        return default
    default = unary(p)
    if isinstance(default, ast.Literal | ast.FuncCall):
        return default
    p.i -= 1
    p.error()


def option_value(p: Parser) -> str:
    kind, _, value, _, _ = p.toks[p.i]
    if kind in (K_WORD, K_QUOTED, K_STRING):
        p.i += 1
        text: str = value
        return text
    if kind is K_NUMBER:
        p.i += 1
        return str(value)
    p.error()


def options(p: Parser) -> tuple[tuple[str, str], ...]:
    """Table or database options up to the end of the statement."""
    result = []
    while p.toks[p.i][0] is K_WORD:
        key = p.key
        if key in ("PARTITION", "AS", "SELECT", "IGNORE", "REPLACE", "START"):
            if key == "PARTITION":
                raise not_supported("PARTITION BY")
            break
        p.i += 1
        if key == "DEFAULT":
            key = p.key
            p.i += 1
        if key == "CHARACTER":
            p.expect("SET")
            key = "CHARSET"
        p.accept("=")
        result.append((key, option_value(p)))
        p.accept(",")
    return tuple(result)


def drop_table(p: Parser) -> ast.DropTable:
    """DROP [TEMPORARY] TABLE[S] (DROP TEMPORARY followed by anything else is not run)."""
    if p.peek_key() == "TEMPORARY" and p.peek_key(2) != "TABLE":
        raise not_supported(p.verb_name())
    p.i += 1
    temporary = p.accept("TEMPORARY")
    p.i += 1
    if_exists = p.accept_seq("IF", "EXISTS")
    tables = [p.table_name()]
    while p.accept(","):
        tables.append(p.table_name())
    if not p.accept("RESTRICT"):
        p.accept("CASCADE")
    return ast.DropTable(tuple(tables), if_exists, temporary)


def drop_database(p: Parser) -> ast.DropDatabase:
    p.i += 2
    if_exists = p.accept_seq("IF", "EXISTS")
    return ast.DropDatabase(p.ident(), if_exists)


def drop_index(p: Parser) -> ast.DropIndex:
    p.i += 2
    name = p.ident()
    p.expect("ON")
    table = p.table_name()
    skip_index_options(p)
    return ast.DropIndex(name, table)


def truncate(p: Parser) -> ast.Truncate:
    p.i += 1
    p.accept("TABLE")
    return ast.Truncate(p.table_name())


STATEMENTS: Final[dict[str, Rule]] = {
    "CREATE TABLE": create_table,
    "CREATE DATABASE": create_database,
    "CREATE SCHEMA": create_database,
    "CREATE INDEX": create_index,
    "CREATE UNIQUE": create_index,
    "DROP TABLE": drop_table,
    "DROP TABLES": drop_table,
    "DROP TEMPORARY": drop_table,
    "DROP DATABASE": drop_database,
    "DROP SCHEMA": drop_database,
    "DROP INDEX": drop_index,
    "TRUNCATE": truncate,
}
"""This family's statements by their first word, or first two words."""
