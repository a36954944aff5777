"""Table definitions built and changed: the keys and FOREIGN KEYs of CREATE TABLE, CREATE /
DROP INDEX, ALTER TABLE and RENAME TABLE.

A :class:`Draft` is a table definition being edited: CREATE TABLE adds its keys and
constraints to one, ALTER TABLE applies its actions to one in written order, and only
when every action has been applied and every check passed does the engine get the new
:class:`~rpl.core.engine.TableSchema` (and, when the rows change shape, the rewritten
rows): an ALTER TABLE is all or nothing.

What MySQL does and this module does too:

* keys are listed PRIMARY first, then UNIQUE keys (those on NOT NULL columns first), then
  the others, each group in creation order (SHOW CREATE TABLE, SHOW INDEX);
* an index without a name takes its first column's (``c``, ``c_2``...);
* a FOREIGN KEY without a name is ``<table>_ibfk_<n>``; its parent must exist (1824), have
  the columns (3734) and an index starting with them (1822), of compatible types (3780);
  SET NULL needs nullable columns (1830); the child gets an index on its columns when no
  key starts with them, named after the constraint (or its first column);
* with ``foreign_key_checks = 0`` a missing parent is accepted (mariadb-dump reloads
  create children first), and ALTER TABLE ADD FOREIGN KEY does not check existing rows;
* dropping a column removes it from its keys (a key left empty is dropped); one a
  FOREIGN KEY uses is 1828; an index a FOREIGN KEY needs is 1553;
* renaming a table or a column renames it in the FOREIGN KEYs that reference it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import attrs

from rpl.core.engine import ColumnSchema, Row, TableSchema
from rpl.core.engine.coercion import Value, coerce, coerce_leniently
from rpl.core.engine.schema import ForeignKey
from rpl.core.errors import (
    ER_BAD_FIELD_ERROR,
    ER_CANNOT_ADD_FOREIGN,
    ER_CANT_DROP_FIELD_OR_KEY,
    ER_CANT_REMOVE_ALL_FIELDS,
    ER_DROP_INDEX_FK,
    ER_DUP_ENTRY,
    ER_DUP_FIELDNAME,
    ER_DUP_KEYNAME,
    ER_FK_CANNOT_OPEN_PARENT,
    ER_FK_COLUMN_CANNOT_DROP,
    ER_FK_COLUMN_NOT_NULL,
    ER_FK_DUP_NAME,
    ER_FK_INCOMPATIBLE_COLUMNS,
    ER_FK_NO_COLUMN_PARENT,
    ER_FK_NO_INDEX_PARENT,
    ER_KEY_COLUMN_DOES_NOT_EXITS,
    ER_MULTIPLE_PRI_KEY,
    ER_NO_REFERENCED_ROW_2,
    ER_WRONG_FK_DEF,
    ER_WRONG_NAME_FOR_INDEX,
    MySQLError,
)
from rpl.core.execution import limits
from rpl.core.sql import ast

_INTEGERS = frozenset(("TINYINT", "SMALLINT", "MEDIUMINT", "INT", "BIGINT"))
_STRINGS = frozenset(("CHAR", "VARCHAR"))
_BINARIES = frozenset(("BINARY", "VARBINARY"))


@attrs.define
class Draft:
    """A table definition being edited; :meth:`build` makes it a TableSchema.

    ``sources[i]`` is the position in the old row of column ``i``'s value, ``None`` for
    a column added (it takes its default); ``changed`` says whether the rows must be
    rewritten (a column added, dropped, moved or retyped, the PRIMARY KEY changed).
    ``renamed`` maps old column names to new ones, for the FOREIGN KEYs of other tables.
    """

    db: str
    name: str
    columns: list[ColumnSchema]
    sources: list[int | None]
    primary_key: list[str]
    indexes: dict[str, tuple[str, ...]]
    unique: set[str]
    foreign_keys: list[ForeignKey]
    auto_increment_column: str | None = None
    changed: bool = False
    renamed: dict[str, str] = attrs.field(factory=dict)
    added_foreign_keys: list[ForeignKey] = attrs.field(factory=list)
    dropped_indexes: dict[str, tuple[str, ...]] = attrs.field(factory=dict)

    @classmethod
    def of(cls, schema: TableSchema) -> Draft:
        """A draft of ``schema`` as it is."""
        return cls(
            schema.db,
            schema.name,
            list(schema.columns),
            list(range(len(schema.columns))),
            list(schema.primary_key),
            dict(schema.indexes),
            set(schema.unique),
            list(schema.foreign_keys),
            schema.auto_increment_column,
        )

    # --- columns -----------------------------------------------------------------------

    def position(self, name: str) -> int:
        """The index of column ``name`` (ER_BAD_FIELD_ERROR, "Unknown column 'c' in 't'")."""
        for i, column in enumerate(self.columns):
            if column.name.lower() == name.lower():
                return i
        raise MySQLError.of(ER_BAD_FIELD_ERROR, name, self.name)

    def _place(self, column: ColumnSchema, source: int | None, after: str | None) -> None:
        if any(c.name.lower() == column.name.lower() for c in self.columns):
            raise MySQLError.of(ER_DUP_FIELDNAME, column.name)
        if after is None:
            at = len(self.columns)
        elif after == "":
            at = 0
        else:
            at = self.position(after) + 1
        self.columns.insert(at, column)
        self.sources.insert(at, source)
        self.changed = True

    def add_column(self, column: ColumnSchema, after: str | None) -> None:
        """ADD COLUMN (FIRST: ``after`` ``""``)."""
        self._place(column, None, after)
        if column.auto_increment:
            self.auto_increment_column = column.name

    def drop_column(self, name: str) -> None:
        """DROP COLUMN: out of its keys too (a key left empty goes); an unknown column is
        ER_CANT_DROP_FIELD_OR_KEY, as MySQL words it.
        """
        try:
            i = self.position(name)
        except MySQLError:
            raise MySQLError.of(ER_CANT_DROP_FIELD_OR_KEY, name) from None
        name = self.columns[i].name
        if len(self.columns) == 1:
            raise MySQLError.of(ER_CANT_REMOVE_ALL_FIELDS)
        for fk in self.foreign_keys:
            if name in fk.columns:
                raise MySQLError.of(ER_FK_COLUMN_CANNOT_DROP, name, fk.name)
        del self.columns[i]
        del self.sources[i]
        self.primary_key = [c for c in self.primary_key if c != name]
        for index, cols in list(self.indexes.items()):
            kept = tuple(c for c in cols if c != name)
            if kept:
                self.indexes[index] = kept
            else:
                self._forget_index(index)
        if self.auto_increment_column == name:
            self.auto_increment_column = None
        self.changed = True

    def modify_column(self, old_name: str, column: ColumnSchema, after: str | None) -> None:
        """MODIFY / CHANGE COLUMN: the new definition (and name), in place or moved."""
        i = self.position(old_name)
        old = self.columns[i]
        source = self.sources[i]
        if after is None:
            if column.name.lower() != old.name.lower() and any(
                c.name.lower() == column.name.lower() for c in self.columns
            ):
                raise MySQLError.of(ER_DUP_FIELDNAME, column.name)
            self.columns[i] = column
        else:
            del self.columns[i]
            del self.sources[i]
            self._place(column, source, after)
        if self.auto_increment_column == old.name and not column.auto_increment:
            self.auto_increment_column = None
        if column.auto_increment:
            self.auto_increment_column = column.name
        if column.name != old.name:
            self._rename_in_keys(old.name, column.name)
        self.changed = True

    def rename_column(self, old_name: str, new_name: str) -> None:
        """RENAME COLUMN old TO new."""
        i = self.position(old_name)
        old = self.columns[i]
        if any(c.name.lower() == new_name.lower() for c in self.columns if c is not old):
            raise MySQLError.of(ER_DUP_FIELDNAME, new_name)
        self.columns[i] = attrs.evolve(old, name=new_name)
        if self.auto_increment_column == old.name:
            self.auto_increment_column = new_name
        self._rename_in_keys(old.name, new_name)

    def set_default(self, name: str, default: object) -> None:
        """ALTER COLUMN c SET DEFAULT v / DROP DEFAULT (``NO_DEFAULT``)."""
        i = self.position(name)
        self.columns[i] = attrs.evolve(self.columns[i], default=default)

    def _rename_in_keys(self, old: str, new: str) -> None:
        def renamed(cols: Iterable[str]) -> tuple[str, ...]:
            return tuple(new if c == old else c for c in cols)

        self.primary_key = list(renamed(self.primary_key))
        self.indexes = {n: renamed(cols) for n, cols in self.indexes.items()}
        self.foreign_keys = [
            attrs.evolve(
                fk,
                columns=renamed(fk.columns),
                parent_columns=renamed(fk.parent_columns)
                if fk.references(self.db, self.name)
                else fk.parent_columns,
            )
            for fk in self.foreign_keys
        ]
        for key, value in self.renamed.items():
            if value == old:
                self.renamed[key] = new
                break
        else:
            self.renamed[old] = new

    # --- keys ------------------------------------------------------------------------

    def add_index(self, index: ast.IndexDef) -> None:
        """A PRIMARY KEY (ER_MULTIPLE_PRI_KEY if there is one), UNIQUE or plain index."""
        for column in index.columns:
            if not any(c.name.lower() == column.lower() for c in self.columns):
                raise MySQLError.of(ER_KEY_COLUMN_DOES_NOT_EXITS, column)
        columns = tuple(self.columns[self.position(c)].name for c in index.columns)
        if index.primary:
            if self.primary_key:
                raise MySQLError.of(ER_MULTIPLE_PRI_KEY)
            self.primary_key = list(columns)
            self.changed = True
            return
        name = index.name or self._index_name(columns)
        if name.upper() == "PRIMARY":
            raise MySQLError.of(ER_WRONG_NAME_FOR_INDEX, name)
        if name in self.indexes:
            raise MySQLError.of(ER_DUP_KEYNAME, name)
        self.indexes[name] = columns
        if index.unique:
            self.unique.add(name)

    def _index_name(self, columns: tuple[str, ...]) -> str:
        base, name, n = columns[0], columns[0], 2
        while name in self.indexes or name.upper() == "PRIMARY":
            name, n = f"{base}_{n}", n + 1
        return name

    def drop_index(self, name: str) -> None:
        """DROP INDEX / KEY name, DROP PRIMARY KEY (``PRIMARY``)."""
        if name.upper() == "PRIMARY":
            if not self.primary_key:
                raise MySQLError.of(ER_CANT_DROP_FIELD_OR_KEY, name)
            self.primary_key = []
            self.changed = True
            return
        if name not in self.indexes:
            raise MySQLError.of(ER_CANT_DROP_FIELD_OR_KEY, name)
        self.dropped_indexes[name] = self.indexes[name]
        self._forget_index(name)

    def _forget_index(self, name: str) -> None:
        del self.indexes[name]
        self.unique.discard(name)

    def _supported(self, columns: Sequence[str]) -> bool:
        """Whether a key starts with ``columns`` (a FOREIGN KEY's index)."""
        n = len(columns)
        keys = [tuple(self.primary_key), *self.indexes.values()]
        return any(tuple(k[:n]) == tuple(columns) for k in keys)

    def add_foreign_key(self, fk: ForeignKey) -> None:
        """A checked constraint (see :func:`foreign_key`), with an index made for it when
        no key starts with its columns.
        """
        if any(f.name.lower() == fk.name.lower() for f in self.foreign_keys):
            raise MySQLError.of(ER_FK_DUP_NAME, fk.name)
        if not self._supported(fk.columns):
            self.add_index(ast.IndexDef(self._fk_index_name(fk), fk.columns))
        self.foreign_keys.append(fk)
        self.added_foreign_keys.append(fk)

    def _fk_index_name(self, fk: ForeignKey) -> str:
        if fk.name not in self.indexes and not fk.name.startswith(f"{self.name}_ibfk_"):
            return fk.name
        return self._index_name(fk.columns)

    def drop_foreign_key(self, name: str) -> None:
        """DROP FOREIGN KEY name (its index stays, as in MySQL)."""
        kept = [fk for fk in self.foreign_keys if fk.name.lower() != name.lower()]
        if len(kept) == len(self.foreign_keys):
            raise MySQLError.of(ER_CANT_DROP_FIELD_OR_KEY, name)
        self.foreign_keys = kept

    def next_fk_name(self) -> str:
        """``<table>_ibfk_<n>``: one past the highest such number in use."""
        pattern = re.compile(re.escape(self.name) + r"_ibfk_(\d+)$")
        numbers = [int(m.group(1)) for f in self.foreign_keys if (m := pattern.match(f.name))]
        return f"{self.name}_ibfk_{max(numbers, default=0) + 1}"

    # --- the result ------------------------------------------------------------------

    def build_unchecked(self) -> TableSchema:
        """The definition as it stands, for a FOREIGN KEY referencing its own table."""
        return TableSchema(
            self.db,
            self.name,
            tuple(self.columns),
            tuple(self.primary_key) or (self.columns[0].name,),
            self.indexes,
        )

    def build(self) -> TableSchema:
        """The definition, checked as CREATE TABLE checks one; keys in MySQL's order."""
        for fk in self.foreign_keys:
            if not self._supported(fk.columns):
                n = len(fk.columns)
                dropped = [i for i, c in self.dropped_indexes.items() if c[:n] == fk.columns]
                raise MySQLError.of(ER_DROP_INDEX_FK, dropped[0] if dropped else fk.name)
        nullable = {c.name for c in self.columns if c.nullable}

        def rank(item: tuple[str, tuple[str, ...]]) -> int:
            name, cols = item
            if name not in self.unique:
                return 2
            return 1 if nullable.intersection(cols) else 0

        ordered = dict(sorted(self.indexes.items(), key=rank))
        limits.check_table(
            self.name, self.columns, [*ordered, *(fk.name for fk in self.foreign_keys)]
        )
        return TableSchema(
            self.db,
            self.name,
            tuple(self.columns),
            tuple(self.primary_key),
            ordered,
            self.auto_increment_column,
            unique=self.unique,
            foreign_keys=tuple(self.foreign_keys),
        )

    def rewrite(self, schema: TableSchema, rows: Iterable[Row]) -> list[tuple[object, Row]]:
        """The rows in the new definition's shape, by its primary key: moved values
        coerced to their new types (strict mode's errors), added columns at their default
        (NOT NULL without one: the type's implicit default; AUTO_INCREMENT: numbered), a
        primary key value repeated ER_DUP_ENTRY.
        """
        out: dict[object, Row] = {}
        counter = 0
        for number, old in enumerate(rows, 1):
            values: list[Value] = []
            for i, column in enumerate(schema.columns):
                source = self.sources[i]
                if source is not None:
                    values.append(coerce(column, old[source], number))
                elif column.auto_increment:
                    counter += 1
                    values.append(counter)
                else:
                    values.append(_added_value(schema, i))
            row = tuple(values)
            pk = schema.key_of(row)
            if pk in out:
                text = "-".join(map(str, pk if isinstance(pk, tuple) else (pk,)))
                raise MySQLError.of(ER_DUP_ENTRY, text, f"{schema.name}.PRIMARY")
            out[pk] = row
        return sorted(out.items())


def _added_value(schema: TableSchema, i: int) -> Value:
    column = schema.columns[i]
    value = schema.default_row[i]
    if value is None and not column.nullable:
        value, _ = coerce_leniently(column, None)
    return value


def foreign_key(
    draft: Draft,
    definition: ast.ForeignKeyDef,
    parent: TableSchema | None,
    checks: bool,
) -> ForeignKey:
    """``definition`` as a constraint of the table ``draft`` describes, checked against
    ``parent`` (the draft's own definition for a self reference; ``None`` when the parent
    does not exist, which only ``foreign_key_checks = 0`` lets pass).
    """
    name = definition.name or draft.next_fk_name()
    parent_db = definition.parent.schema or draft.db
    columns = tuple(draft.columns[draft.position(c)].name for c in definition.columns)
    if len(columns) != len(definition.parent_columns):
        raise MySQLError.of(ER_WRONG_FK_DEF, name, "Key reference and table reference don't match")
    fk = ForeignKey(
        name,
        columns,
        parent_db,
        definition.parent.name,
        definition.parent_columns,
        definition.on_delete,
        definition.on_update,
    )
    if "SET DEFAULT" in (fk.on_delete, fk.on_update):
        raise MySQLError.of(ER_CANNOT_ADD_FOREIGN)
    for column in columns:
        if "SET NULL" in (fk.on_delete, fk.on_update):
            if not draft.columns[draft.position(column)].nullable:
                raise MySQLError.of(ER_FK_COLUMN_NOT_NULL, column, name)
    if parent is None:
        if checks:
            raise MySQLError.of(ER_FK_CANNOT_OPEN_PARENT, definition.parent.name)
        return fk
    _check_parent(draft, fk, parent)
    return attrs.evolve(fk, parent_key=parent_key(fk, parent))


def _check_parent(draft: Draft, fk: ForeignKey, parent: TableSchema) -> None:
    for child_column, parent_column in zip(fk.columns, fk.parent_columns, strict=True):
        if parent_column not in parent.positions:
            raise MySQLError.of(ER_FK_NO_COLUMN_PARENT, parent_column, fk.name, parent.name)
        theirs = parent.column(parent_column)
        ours = draft.columns[draft.position(child_column)]
        if not _compatible(ours, theirs):
            raise MySQLError.of(ER_FK_INCOMPATIBLE_COLUMNS, child_column, parent_column, fk.name)
    n = len(fk.parent_columns)
    keys = [parent.primary_key, *parent.indexes.values()]
    if not any(tuple(k[:n]) == fk.parent_columns for k in keys):
        raise MySQLError.of(ER_FK_NO_INDEX_PARENT, fk.name, parent.name)


def parent_key(fk: ForeignKey, parent: TableSchema | None) -> str | None:
    """The name of ``parent``'s unique key on exactly ``fk``'s referenced columns."""
    if parent is None:
        return None
    if parent.primary_key == fk.parent_columns:
        return "PRIMARY"
    for name, columns in parent.indexes.items():
        if name in parent.unique and columns == fk.parent_columns:
            return name
    return None


def _compatible(child: ColumnSchema, parent: ColumnSchema) -> bool:
    """Whether InnoDB accepts the two column types in one FOREIGN KEY: integers of one
    size and sign, strings of one kind (lengths may differ), otherwise the same type.
    """
    a, b = child.type_name, parent.type_name
    if a in _INTEGERS or b in _INTEGERS:
        return a == b and child.unsigned == parent.unsigned
    if a in _STRINGS and b in _STRINGS or a in _BINARIES and b in _BINARIES:
        return True
    return (a, child.length, child.scale) == (b, parent.length, parent.scale)


def check_child_rows(
    schema: TableSchema,
    rows: Sequence[Row],
    fk: ForeignKey,
    parent: TableSchema,
    parent_rows: Iterable[Row],
) -> None:
    """ALTER TABLE ADD FOREIGN KEY over existing rows: ER_NO_REFERENCED_ROW_2 (1452) when
    a row's values are held by no parent row.
    """
    positions = [schema.positions[c] for c in fk.columns]
    wanted = {tuple(row[i] for i in positions) for row in rows}
    wanted = {values for values in wanted if None not in values}
    if not wanted:
        return
    parent_positions = [parent.positions[c] for c in fk.parent_columns]
    present = {tuple(row[i] for i in parent_positions) for row in parent_rows}
    if not wanted <= present:
        detail = f"`{schema.db}`.`{schema.name}`, {fk.clause(schema.db)}"
        raise MySQLError.of(ER_NO_REFERENCED_ROW_2, detail)
