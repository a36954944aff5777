"""Table definitions: columns, the PRIMARY KEY, secondary indexes.

A :class:`TableSchema` is immutable: DDL that changes a table (``add_index``) builds a new
schema, so a :class:`~rpl.core.engine.storage.RowChange` always carries the definition the
row was written under. Every table has a PRIMARY KEY (the server runs with
``sql_require_primary_key``-like rules: the engine's rows are keyed by it), so a definition
without one is refused with ER_TABLE_WITHOUT_PK (3750).

Values are converted into a column's type by :mod:`rpl.core.engine.coercion`, which
the compiled build compiles (this module's attrs classes it cannot).
"""

from __future__ import annotations

import enum
import operator
from collections.abc import Callable, Iterable, Mapping
from typing import Final, TypeAlias

import attrs

from rpl.core.engine.coercion import Value, coerce
from rpl.core.errors import (
    ER_BAD_FIELD_ERROR,
    ER_DUP_FIELDNAME,
    ER_DUP_KEYNAME,
    ER_INVALID_DEFAULT,
    ER_KEY_COLUMN_DOES_NOT_EXITS,
    ER_MULTIPLE_PRI_KEY,
    ER_TABLE_WITHOUT_PK,
    ER_WRONG_AUTO_KEY,
    ER_WRONG_NAME_FOR_INDEX,
    MySQLError,
)

_TYPE_SYNONYMS: Final = {
    "BOOL": "TINYINT",
    "BOOLEAN": "TINYINT",
    "INTEGER": "INT",
    "MIDDLEINT": "MEDIUMINT",
    "INT1": "TINYINT",
    "INT2": "SMALLINT",
    "INT3": "MEDIUMINT",
    "INT4": "INT",
    "INT8": "BIGINT",
    "DEC": "DECIMAL",
    "NUMERIC": "DECIMAL",
    "FIXED": "DECIMAL",
    "REAL": "DOUBLE",
    "DOUBLE PRECISION": "DOUBLE",
    "FLOAT8": "DOUBLE",
    "FLOAT4": "FLOAT",
    "CHARACTER": "CHAR",
    "CHARACTER VARYING": "VARCHAR",
    "CHAR VARYING": "VARCHAR",
    "NCHAR": "CHAR",
    "NATIONAL CHAR": "CHAR",
    "NVARCHAR": "VARCHAR",
    "NATIONAL VARCHAR": "VARCHAR",
    "LONG": "MEDIUMTEXT",
    "LONG VARCHAR": "MEDIUMTEXT",
    "LONG VARBINARY": "MEDIUMBLOB",
}
"""Type synonyms CREATE TABLE accepts, by the type MySQL stores (and shows) instead."""
_INTEGER_TYPES: Final = frozenset(("TINYINT", "SMALLINT", "MEDIUMINT", "INT", "BIGINT"))


def normalize_type(
    type_name: str, length: int | None, scale: int | None
) -> tuple[str, int | None, int | None]:
    """A declared type as MySQL 8.0 stores it: ``(type, length, scale)``.

    Synonyms become the stored type (BOOL and BOOLEAN are TINYINT(1), INTEGER is INT,
    NUMERIC/DEC/FIXED are DECIMAL, REAL and DOUBLE PRECISION are DOUBLE, CHARACTER VARYING
    is VARCHAR...); integer display widths are dropped, as 8.0.19+ shows them, except
    TINYINT(1), which connectors read as a boolean; DECIMAL gets its default precision
    and scale (10,0) and a DECIMAL(M) scale 0; CHAR without a length is CHAR(1).
    """
    upper = type_name.upper()
    kind = _TYPE_SYNONYMS.get(upper, upper)
    if upper in ("BOOL", "BOOLEAN"):
        return kind, 1, None
    if kind in _INTEGER_TYPES:
        return kind, (1 if kind == "TINYINT" and length == 1 else None), None
    if kind == "DECIMAL":
        return kind, 10 if length is None else length, 0 if scale is None else scale
    if kind in ("CHAR", "BINARY") and length is None:
        return kind, 1, None
    return kind, length, scale


FK_ACTIONS: Final = ("RESTRICT", "CASCADE", "SET NULL", "NO ACTION", "SET DEFAULT")
"""The referential actions of ON DELETE / ON UPDATE."""


@attrs.frozen
class ForeignKey:
    """A FOREIGN KEY constraint of a (child) table: ``columns`` reference
    ``parent_columns`` of ``parent_db.parent_table``.

    ``on_delete`` / ``on_update`` are the declared actions (one of :data:`FK_ACTIONS`),
    ``None`` when the clause was not written: InnoDB then behaves as NO ACTION, which is
    RESTRICT (checked at once), and SHOW CREATE TABLE prints nothing.
    """

    name: str
    columns: tuple[str, ...]
    parent_db: str
    parent_table: str
    parent_columns: tuple[str, ...]
    on_delete: str | None = None
    on_update: str | None = None
    parent_key: str | None = None
    """The parent's unique key the constraint references (``PRIMARY`` or a UNIQUE
    index's name), ``None`` when it references a non-unique index (write sets hash it)."""

    def clause(self, child_db: str) -> str:
        """The constraint as SHOW CREATE TABLE prints it (the parent's database only when
        it is not the child's).
        """
        q = _quote
        parent = q(self.parent_table)
        if self.parent_db != child_db:
            parent = f"{q(self.parent_db)}.{parent}"
        text = (
            f"CONSTRAINT {q(self.name)} FOREIGN KEY ({', '.join(map(q, self.columns))}) "
            f"REFERENCES {parent} ({', '.join(map(q, self.parent_columns))})"
        )
        if self.on_delete not in (None, "NO ACTION"):
            text += f" ON DELETE {self.on_delete}"
        if self.on_update not in (None, "NO ACTION"):
            text += f" ON UPDATE {self.on_update}"
        return text

    def references(self, db: str, name: str) -> bool:
        """Whether the constraint's parent is the table ``db.name``."""
        return self.parent_db == db and self.parent_table == name


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


Row: TypeAlias = tuple[Value, ...]
"""A row: one value per column, in the table's column order."""


class _NoDefault(enum.Enum):
    NO_DEFAULT = "NO_DEFAULT"

    def __repr__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT: Final = _NoDefault.NO_DEFAULT
"""``ColumnSchema.default`` of a column declared without DEFAULT."""


def _upper(name: str) -> str:
    return name.upper()


def _names(names: Iterable[str]) -> frozenset[str]:
    return frozenset(names)


@attrs.frozen
class ColumnSchema:
    """One column: its name, type and attributes as CREATE TABLE declares them.

    ``length`` is the declared M (characters for CHAR/VARCHAR, bytes for BINARY/VARBINARY,
    precision for DECIMAL, fractional-second digits for DATETIME/TIMESTAMP/TIME); ``scale``
    is DECIMAL's D. ``members`` are an ENUM's or SET's values in declaration order (trailing
    spaces removed, as CREATE TABLE does); ``()`` for every other type, and for an ENUM or
    SET column of an engine snapshot written before members were kept, which stores its
    values as unchecked text and is logged as statements. ``default`` is a Python value
    (``None`` for DEFAULT NULL) or :data:`NO_DEFAULT`. ``default_now`` is DEFAULT
    CURRENT_TIMESTAMP and ``on_update_now`` ON UPDATE CURRENT_TIMESTAMP (TIMESTAMP and
    DATETIME): the SQL layer evaluates them and passes explicit values, so the engine, a
    replica and recovery only ever see the values a statement wrote.
    """

    name: str
    type_name: str = attrs.field(converter=_upper)
    length: int | None = None
    unsigned: bool = False
    nullable: bool = True
    default: object = NO_DEFAULT
    auto_increment: bool = False
    scale: int | None = None
    members: tuple[str, ...] = ()
    default_now: bool = False
    on_update_now: bool = False

    def __getstate__(self) -> dict[str, object]:
        return {f.name: getattr(self, f.name) for f in attrs.fields(ColumnSchema)}

    def __setstate__(self, state: dict[str, object] | tuple[object, ...]) -> None:
        # A snapshot written before a field existed lacks it: the field takes its default
        # (an ENUM/SET column of such a snapshot gets no members).
        fields = [(f.name, f.default) for f in attrs.fields(ColumnSchema)]
        if isinstance(state, tuple):
            state = {name: value for (name, _), value in zip(fields, state, strict=False)}
        for name, default in fields:
            object.__setattr__(self, name, state[name] if name in state else default)


@attrs.frozen
class TableSchema:
    """A table definition: columns in order, the PRIMARY KEY and the secondary indexes.

    Construction validates the definition as CREATE TABLE would: a PRIMARY KEY is required
    (ER_TABLE_WITHOUT_PK), key columns must exist (ER_KEY_COLUMN_DOES_NOT_EXITS), column
    names are unique (ER_DUP_FIELDNAME), at most one AUTO_INCREMENT column and it must be the
    first column of a key (ER_WRONG_AUTO_KEY), defaults must fit their column
    (ER_INVALID_DEFAULT). As in MySQL, PRIMARY KEY columns become NOT NULL.
    ``auto_increment_column`` may be left ``None``: it is taken from the column flagged
    ``auto_increment``. ``indexes`` are the secondary indexes, in declaration order: the
    engine keeps each one's entries for lookups (:meth:`Table.lookup`) and enforces those
    named in ``unique``; ``foreign_keys`` are checked by the engine
    (:mod:`rpl.core.engine.foreign_keys`).
    """

    db: str
    name: str
    columns: tuple[ColumnSchema, ...]
    primary_key: tuple[str, ...]
    indexes: Mapping[str, tuple[str, ...]] = attrs.field(factory=dict, hash=False)
    auto_increment_column: str | None = None
    positions: Mapping[str, int] = attrs.field(init=False, eq=False, hash=False, repr=False)
    """Column name -> index in the row."""
    pk_positions: tuple[int, ...] = attrs.field(init=False, eq=False, hash=False, repr=False)
    """Row indexes of the primary key columns, in key order."""
    auto_increment_position: int | None = attrs.field(init=False, eq=False, hash=False, repr=False)
    default_row: Row = attrs.field(init=False, eq=False, hash=False, repr=False)
    """The defaults, coerced (``None`` also where a column has no default)."""
    key_of: Callable[[Row], object] = attrs.field(init=False, eq=False, hash=False, repr=False)
    """``key_of(row)``: the primary key value of ``row``, the value itself for a one-column
    key, else the tuple of the key columns' values in key order (an ``itemgetter``: the
    engine asks for every row it writes, and this costs no Python frame)."""
    unique: frozenset[str] = attrs.field(factory=frozenset, converter=_names, hash=False)
    """The names of the ``indexes`` that are UNIQUE."""
    foreign_keys: tuple[ForeignKey, ...] = ()
    """The FOREIGN KEY constraints this table (the child) declares, in declaration order."""
    index_positions: Mapping[str, tuple[int, ...]] = attrs.field(
        init=False, eq=False, hash=False, repr=False
    )
    """Secondary index name -> the row indexes of its columns, in key order."""
    unique_positions: tuple[tuple[str, tuple[int, ...]], ...] = attrs.field(
        init=False, eq=False, hash=False, repr=False
    )
    """``(name, positions)`` of each UNIQUE secondary index, in declaration order."""

    def __attrs_post_init__(self) -> None:
        positions: dict[str, int] = {}
        for i, column in enumerate(self.columns):
            if column.name in positions:
                raise MySQLError.of(ER_DUP_FIELDNAME, column.name)
            positions[column.name] = i
        if not self.primary_key:
            raise MySQLError.of(ER_TABLE_WITHOUT_PK)
        if len(set(self.primary_key)) != len(self.primary_key):
            raise MySQLError.of(ER_MULTIPLE_PRI_KEY)
        for key_columns in (self.primary_key, *self.indexes.values()):
            for col in key_columns:
                if col not in positions:
                    raise MySQLError.of(ER_KEY_COLUMN_DOES_NOT_EXITS, col)
        if any(name.upper() == "PRIMARY" for name in self.indexes):
            raise MySQLError.of(ER_WRONG_NAME_FOR_INDEX, "PRIMARY")
        for name in self.unique:
            if name not in self.indexes:
                raise MySQLError.of(ER_KEY_COLUMN_DOES_NOT_EXITS, name)
        for fk in self.foreign_keys:
            for col in fk.columns:
                if col not in positions:
                    raise MySQLError.of(ER_KEY_COLUMN_DOES_NOT_EXITS, col)
        pk = set(self.primary_key)
        columns = tuple(
            attrs.evolve(c, nullable=False) if c.name in pk and c.nullable else c
            for c in self.columns
        )
        flagged = [c.name for c in columns if c.auto_increment]
        auto = self.auto_increment_column
        if auto is None and flagged:
            auto = flagged[0]
        if len(flagged) > 1 or (flagged and flagged[0] != auto):
            raise MySQLError.of(ER_WRONG_AUTO_KEY)
        if auto is not None:
            if auto not in positions:
                raise MySQLError.of(ER_BAD_FIELD_ERROR, auto, self.name)
            firsts = {cols[0] for cols in (self.primary_key, *self.indexes.values()) if cols}
            if auto not in firsts:
                raise MySQLError.of(ER_WRONG_AUTO_KEY)
        defaults: list[Value] = []
        for column in columns:
            if column.default is NO_DEFAULT or column.default is None:
                if column.default is None and not column.nullable:
                    raise MySQLError.of(ER_INVALID_DEFAULT, column.name)
                defaults.append(None)
                continue
            try:
                defaults.append(coerce(column, column.default, 1))
            except MySQLError:
                raise MySQLError.of(ER_INVALID_DEFAULT, column.name) from None
        set_ = object.__setattr__
        set_(self, "columns", columns)
        set_(self, "indexes", dict(self.indexes))
        set_(self, "auto_increment_column", auto)
        set_(self, "positions", positions)
        pk_positions = tuple(positions[c] for c in self.primary_key)
        set_(self, "pk_positions", pk_positions)
        set_(self, "key_of", operator.itemgetter(*pk_positions))
        set_(self, "auto_increment_position", None if auto is None else positions[auto])
        set_(self, "default_row", tuple(defaults))
        index_positions = {
            name: tuple(positions[c] for c in cols) for name, cols in self.indexes.items()
        }
        set_(self, "index_positions", index_positions)
        set_(
            self,
            "unique_positions",
            tuple((n, p) for n, p in index_positions.items() if n in self.unique),
        )

    @property
    def qualified_name(self) -> str:
        """``db.name``, as MySQL 8.0 names a table in error messages."""
        return f"{self.db}.{self.name}"

    def column(self, name: str) -> ColumnSchema:
        """The column ``name`` (ER_BAD_FIELD_ERROR when there is none)."""
        pos = self.positions.get(name)
        if pos is None:
            raise MySQLError.of(ER_BAD_FIELD_ERROR, name, "field list")
        return self.columns[pos]

    def with_index(self, name: str, columns: tuple[str, ...], unique: bool = False) -> TableSchema:
        """This schema with one more secondary index (ER_DUP_KEYNAME if the name is taken)."""
        if name in self.indexes or name.upper() == "PRIMARY":
            raise MySQLError.of(ER_DUP_KEYNAME, name)
        return attrs.evolve(
            self,
            indexes={**self.indexes, name: tuple(columns)},
            unique=self.unique | {name} if unique else self.unique,
        )

    def unique_values(self, row: Row) -> list[tuple[str, tuple[Value, ...]]]:
        """``(index name, key values)`` of each UNIQUE index ``row`` has a key in: keys with a
        NULL part are left out, as any number of rows may share them.
        """
        out = []
        for name, key_positions in self.unique_positions:
            values = tuple(row[i] for i in key_positions)
            if None not in values:
                out.append((name, values))
        return out

    def __getstate__(self) -> dict[str, object]:
        # Only the declared fields: the derived ones are rebuilt by __setstate__.
        return {
            "db": self.db,
            "name": self.name,
            "columns": self.columns,
            "primary_key": self.primary_key,
            "indexes": dict(self.indexes),
            "auto_increment_column": self.auto_increment_column,
            "unique": self.unique,
            "foreign_keys": self.foreign_keys,
        }

    def __setstate__(self, state: dict[str, object]) -> None:
        # A snapshot written before UNIQUE and FOREIGN KEY were kept lacks them: none.
        state = {"unique": frozenset(), "foreign_keys": (), **state}
        for key, value in state.items():
            object.__setattr__(self, key, value)
        self.__attrs_post_init__()
