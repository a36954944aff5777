"""Data definition: CREATE and DROP of tables, databases and indexes, and TRUNCATE.

CREATE TABLE reads column definitions (types, NULL, DEFAULT, ON UPDATE, AUTO_INCREMENT,
keys, charset and collation, comments), key definitions and FOREIGN KEY clauses (an
inline column ``REFERENCES`` is parsed and ignored, as MySQL 8.0 does); table and database
options are kept as (name, value) pairs for the executor. ALTER TABLE's actions and RENAME
TABLE are parsed here too. CHECK constraints,
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
    foreign_keys: list[ast.ForeignKeyDef] = []
    while True:
        index = table_key(p)
        if isinstance(index, ast.ForeignKeyDef):
            foreign_keys.append(index)
        elif index is not None:
            indexes.append(index)
        else:
            columns.append(column_def(p))
        if not p.accept(","):
            break
    p.expect(")")
    table_options = options(p)
    if p.key in ("AS", "SELECT", "IGNORE", "REPLACE"):
        raise not_supported("CREATE TABLE ... SELECT")
    return ast.CreateTable(
        table,
        tuple(columns),
        tuple(indexes),
        if_not_exists,
        table_options,
        tuple(foreign_keys),
    )


def table_key(p: Parser) -> ast.IndexDef | ast.ForeignKeyDef | None:
    """A key definition of CREATE TABLE, or None (cursor unmoved) for a column."""
    if p.toks[p.i][0] is not K_WORD:
        return None
    key = p.key
    constraint = None
    if key == "CONSTRAINT":
        p.i += 1
        if p.key not in ("PRIMARY", "UNIQUE", "FOREIGN", "CHECK"):
            constraint = p.ident()
        key = p.key
        if key not in ("PRIMARY", "UNIQUE", "FOREIGN", "CHECK"):
            p.error()
    if key == "FOREIGN":
        return foreign_key(p, constraint)
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
        if unique and name is None:
            name = constraint
        skip_index_type(p)
        columns = key_parts(p)
        skip_index_options(p)
        return ast.IndexDef(name, columns, unique=unique)
    return None


def foreign_key(p: Parser, name: str | None) -> ast.ForeignKeyDef:
    """``FOREIGN KEY [index_name] (cols) REFERENCES ...`` (the cursor at FOREIGN)."""
    p.i += 1
    p.expect("KEY")
    if p.key != "(":
        index_name = p.ident()
        name = name or index_name
    columns = key_parts(p)
    parent, parent_columns, on_delete, on_update = references(p)
    return ast.ForeignKeyDef(name, columns, parent, parent_columns, on_delete, on_update)


def references(p: Parser) -> tuple[ast.TableName, tuple[str, ...], str | None, str | None]:
    """``REFERENCES parent (cols) [MATCH ...] [ON DELETE action] [ON UPDATE action]``."""
    p.expect("REFERENCES")
    parent = p.table_name()
    parent_columns = key_parts(p)
    if p.accept("MATCH"):
        if not (p.accept("FULL") or p.accept("PARTIAL") or p.accept("SIMPLE")):
            p.error()
    on_delete = on_update = None
    while p.key == "ON" and p.peek_key() in ("DELETE", "UPDATE"):
        p.i += 1
        which = p.key
        p.i += 1
        action = referential_action(p)
        if which == "DELETE":
            on_delete = action
        else:
            on_update = action
    return parent, parent_columns, on_delete, on_update


def referential_action(p: Parser) -> str:
    """RESTRICT | CASCADE | SET NULL | SET DEFAULT | NO ACTION."""
    for words in (
        ("RESTRICT",),
        ("CASCADE",),
        ("SET", "NULL"),
        ("SET", "DEFAULT"),
        ("NO", "ACTION"),
    ):
        if p.accept_seq(*words):
            return " ".join(words)
    p.error()


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
    elif type_name in ("CHARACTER", "CHAR") and p.accept("VARYING"):
        type_name = "CHARACTER VARYING"
    elif type_name == "NATIONAL" and p.key in ("CHAR", "CHARACTER", "VARCHAR"):
        type_name = "NATIONAL VARCHAR" if p.any_word().upper() == "VARCHAR" else "NATIONAL CHAR"
        if type_name == "NATIONAL CHAR" and p.accept("VARYING"):
            type_name = "NATIONAL VARCHAR"
    elif type_name == "LONG" and p.key in ("VARCHAR", "VARBINARY"):
        type_name = "LONG " + p.any_word().upper()
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
            # MySQL 8.0 parses an inline REFERENCES and ignores it (only table-level
            # FOREIGN KEY clauses make constraints)
            p.i -= 1
            references(p)
        elif key in ("CHECK", "CONSTRAINT"):
            raise not_supported("CHECK constraints")
        elif key in ("FIRST", "AFTER"):
            p.i -= 1  # ALTER TABLE's column position
            break
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


_TABLE_OPTIONS: Final = frozenset(
    """
    ENGINE AUTO_INCREMENT CHARSET CHARACTER COLLATE COMMENT ROW_FORMAT KEY_BLOCK_SIZE
    STATS_PERSISTENT STATS_AUTO_RECALC STATS_SAMPLE_PAGES PACK_KEYS CHECKSUM AVG_ROW_LENGTH
    MAX_ROWS MIN_ROWS DELAY_KEY_WRITE COMPRESSION ENCRYPTION INSERT_METHOD
""".split()
)
"""Table options ALTER TABLE takes among its actions."""


def alter_table(p: Parser) -> ast.AlterTable:
    """ALTER TABLE t action[, action...] (ALTER ONLINE / IGNORE TABLE are not run)."""
    p.i += 2
    table = p.table_name()
    actions: list[ast.AlterAction] = []
    while not p.at_end():
        action = alter_action(p)
        if action is not None:
            actions.append(action)
        if not p.accept(","):
            break
    if p.key == "PARTITION":
        raise not_supported("ALTER TABLE ... PARTITION")
    return ast.AlterTable(table, tuple(actions))


def _position(p: Parser) -> str | None:
    """``FIRST`` (``""``) or ``AFTER col``; None when neither is written."""
    if p.accept("FIRST"):
        return ""
    if p.accept("AFTER"):
        return p.ident()
    return None


def alter_action(p: Parser) -> ast.AlterAction | None:
    """One action of ALTER TABLE; None for one that changes nothing here (ALGORITHM=,
    LOCK=, FORCE).
    """
    key = p.key
    if p.toks[p.i][0] is not K_WORD:
        p.error()
    if key == "ADD":
        p.i += 1
        return _alter_add(p)
    if key == "DROP":
        p.i += 1
        return _alter_drop(p)
    if key in ("MODIFY", "CHANGE"):
        p.i += 1
        p.accept("COLUMN")
        old = p.ident() if key == "CHANGE" else None
        column = column_def(p)
        return ast.ModifyColumn(old or column.name, column, _position(p))
    if key == "RENAME":
        p.i += 1
        if p.accept("COLUMN"):
            old = p.ident()
            p.expect("TO")
            return ast.RenameColumn(old, p.ident())
        if p.key in ("INDEX", "KEY"):
            raise not_supported("ALTER TABLE ... RENAME INDEX")
        if not p.accept("TO"):
            p.accept("AS")
        return ast.RenameTo(p.table_name())
    if key == "ALTER":
        p.i += 1
        p.accept("COLUMN")
        name = p.ident()
        if p.accept_seq("DROP", "DEFAULT"):
            return ast.AlterColumnDefault(name, None)
        p.expect("SET")
        p.expect("DEFAULT")
        return ast.AlterColumnDefault(name, column_default(p))
    if key in ("DISABLE", "ENABLE"):
        p.i += 1
        p.expect("KEYS")
        return ast.Keys(key == "ENABLE")
    if key in ("ALGORITHM", "LOCK"):
        p.i += 1
        p.accept("=")
        option_value(p)
        return None
    if key == "FORCE":
        p.i += 1
        return None
    if key == "DEFAULT" or key in _TABLE_OPTIONS:
        return ast.TableOptions(_table_option(p))
    raise not_supported(f"ALTER TABLE ... {key}")


def _table_option(p: Parser) -> tuple[tuple[str, str], ...]:
    """One table option (``[DEFAULT] CHARSET [=] x [COLLATE [=] y]`` gives two)."""
    key = p.key
    p.i += 1
    if key == "DEFAULT":
        key = p.key
        p.i += 1
    if key == "CHARACTER":
        p.expect("SET")
        key = "CHARSET"
    p.accept("=")
    result = [(key, option_value(p))]
    if key == "CHARSET" and p.accept("COLLATE"):
        p.accept("=")
        result.append(("COLLATE", option_value(p)))
    return tuple(result)


def _alter_add(p: Parser) -> ast.AlterAction:
    if p.key in (
        "CONSTRAINT",
        "PRIMARY",
        "UNIQUE",
        "INDEX",
        "KEY",
        "FOREIGN",
        "CHECK",
        "FULLTEXT",
        "SPATIAL",
    ):
        definition = table_key(p)
        if isinstance(definition, ast.ForeignKeyDef):
            return ast.AddForeignKey(definition)
        assert definition is not None
        return ast.AddIndex(definition)
    p.accept("COLUMN")
    if p.key == "(":
        raise not_supported("ALTER TABLE ... ADD (columns)")
    column = column_def(p)
    return ast.AddColumn(column, _position(p))


def _alter_drop(p: Parser) -> ast.AlterAction:
    if p.accept_seq("PRIMARY", "KEY"):
        return ast.DropIndexAction("PRIMARY")
    if p.accept_seq("FOREIGN", "KEY"):
        return ast.DropForeignKey(p.ident())
    if p.key in ("INDEX", "KEY"):
        p.i += 1
        return ast.DropIndexAction(p.ident())
    if p.key in ("CHECK", "CONSTRAINT"):
        raise not_supported(f"ALTER TABLE ... DROP {p.key}")
    p.accept("COLUMN")
    name = p.ident()
    if not p.accept("RESTRICT"):
        p.accept("CASCADE")
    return ast.DropColumn(name)


def rename_table(p: Parser) -> ast.RenameTable:
    """RENAME TABLE a TO b[, c TO d...]."""
    p.i += 2
    pairs = []
    while True:
        old = p.table_name()
        p.expect("TO")
        pairs.append((old, p.table_name()))
        if not p.accept(","):
            return ast.RenameTable(tuple(pairs))


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
    "ALTER TABLE": alter_table,
    "RENAME TABLE": rename_table,
}
"""This family's statements by their first word, or first two words."""
