"""The engine's multi-versioning: read views by commit sequence number, old versions kept
only while a view needs them, consistent and current reads (in process; the server-level
anomalies are in test_isolation.py).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rpl.core.engine import ColumnSchema, Engine, Table, TableSchema, Transaction
from rpl.core.errors import MySQLError


def _engine() -> tuple[Engine, Table]:
    engine = Engine(lambda: 0.2)
    engine.create_database("d")
    table = engine.create_table(
        TableSchema(
            "d",
            "t",
            (ColumnSchema("id", "INT", nullable=False), ColumnSchema("v", "INT")),
            ("id",),
        )
    )
    assert table is not None
    return engine, table


def _write(engine: Engine, table: Table, writes: dict[int, int | None]) -> None:
    trx = engine.begin(1)
    for pk, v in writes.items():
        if v is None:
            trx.delete(table, pk)
        elif trx.get(table, pk) is None:
            trx.insert(table, (pk, v))
        else:
            trx.update(table, pk, {"v": v})
    trx.commit()


def _reader(engine: Engine) -> Transaction:
    trx = engine.begin(2)
    trx.consistent_reads = True
    return trx


def test_a_view_sees_the_rows_as_of_its_first_consistent_read() -> None:
    engine, table = _engine()
    _write(engine, table, {1: 10, 2: 20})
    reader = _reader(engine)
    assert reader.read_view is None
    assert reader.get(table, 1) == (1, 10)
    assert reader.read_view == engine.commit_seq == 1
    _write(engine, table, {1: 11, 2: None, 3: 30})
    assert reader.get(table, 1) == (1, 10)
    assert reader.get(table, 2) == (2, 20)
    assert reader.get(table, 3) is None
    assert reader.scan(table) == [(1, (1, 10)), (2, (2, 20))]
    assert reader.scan(table, 2, None) == [(2, (2, 20))]
    assert reader.scan(table, reverse=True, limit=1) == [(2, (2, 20))]
    reader.consistent_reads = False  # a current read sees the latest
    assert reader.scan(table) == [(1, (1, 11)), (3, (3, 30))]
    assert engine.versions_kept() == 3
    reader.commit()
    assert engine.versions_kept() == 0
    assert len(table.history) == 0


def test_own_writes_show_over_the_view() -> None:
    engine, table = _engine()
    _write(engine, table, {1: 10, 2: 20})
    reader = _reader(engine)
    reader.open_view()
    _write(engine, table, {2: 21})
    reader.update(table, 1, {"v": 99})
    reader.delete(table, 2)  # deletes the latest (21), a current read
    assert reader.scan(table) == [(1, (1, 99))]
    assert reader.get(table, 2) is None
    reader.rollback()
    assert engine.versions_kept() == 0


def test_no_view_no_versions_and_pruning_follows_the_oldest_view() -> None:
    engine, table = _engine()
    _write(engine, table, {1: 1})
    assert engine.versions_kept() == 0
    old = _reader(engine)
    old.open_view()
    _write(engine, table, {1: 2})
    young = _reader(engine)
    young.open_view()
    _write(engine, table, {1: 3})
    assert engine.versions_kept() == 2
    assert (old.get(table, 1), young.get(table, 1)) == ((1, 1), (1, 2))
    old.rollback()
    assert engine.versions_kept() == 1  # the version of commit 2 is no one's any more
    assert young.get(table, 1) == (1, 2)
    young.release_view()
    assert young.get(table, 1) == (1, 3)  # a new view
    young.commit()
    assert engine.versions_kept() == 0


ops = st.lists(
    st.one_of(
        st.tuples(
            st.just("commit"),
            st.dictionaries(
                st.integers(0, 7), st.one_of(st.none(), st.integers(0, 99)), max_size=4
            ),
        ),
        st.tuples(st.just("open"), st.integers(0, 2)),
        st.tuples(st.just("close"), st.integers(0, 2)),
        st.tuples(st.just("read"), st.integers(0, 2), st.integers(0, 7), st.integers(0, 7)),
    ),
    max_size=40,
)


@settings(max_examples=150, deadline=None)
@given(ops)
def test_views_match_a_model_of_committed_states(steps: list[tuple[object, ...]]) -> None:
    """Readers opening and closing views between random commits always see the committed
    state of the moment their view was taken (model: every committed state kept)."""
    engine, table = _engine()
    states: list[dict[int, int]] = [{}]
    readers: dict[int, tuple[Transaction, int]] = {}
    for step in steps:
        if step[0] == "commit":
            writes = step[1]
            assert isinstance(writes, dict)
            _write(engine, table, writes)
            state = dict(states[-1])
            for pk, v in writes.items():
                if v is None:
                    state.pop(pk, None)
                else:
                    state[pk] = v
            if writes:
                states.append(state)
        elif step[0] == "open":
            n = step[1]
            assert isinstance(n, int)
            if n not in readers:
                trx = _reader(engine)
                trx.open_view()
                readers[n] = (trx, len(states) - 1)
        elif step[0] == "close":
            reader = readers.pop(step[1], None)  # type: ignore[call-overload]
            if reader is not None:
                reader[0].commit()
        else:
            _, n, lo, hi = step
            reader = readers.get(n)  # type: ignore[call-overload]
            if reader is None:
                continue
            trx, at = reader
            expect = sorted((k, (k, v)) for k, v in states[at].items() if lo <= k <= hi)
            assert trx.scan(table, lo, hi) == expect
            assert trx.get(table, lo) == (None if lo not in states[at] else (lo, states[at][lo]))
    for trx, _ in readers.values():
        trx.rollback()
    assert engine.versions_kept() == 0
    assert len(table.history) == 0


def test_the_view_starts_at_the_first_consistent_read_even_of_an_own_row() -> None:
    engine, table = _engine()
    _write(engine, table, {1: 10})
    reader = _reader(engine)
    reader.insert(table, (5, 50))  # a write takes no view
    assert reader.read_view is None
    _write(engine, table, {1: 11})
    assert reader.get(table, 5) == (5, 50)
    assert reader.read_view == engine.commit_seq
    _write(engine, table, {1: 12})
    assert reader.get(table, 1) == (1, 11)
    reader.rollback()


def test_a_view_older_than_a_rebuild_of_the_table_cannot_read_it() -> None:
    engine, table = _engine()
    _write(engine, table, {1: 10})
    old = _reader(engine)
    old.open_view()
    _write(engine, table, {1: 11})
    engine.table_rebuilt(table)  # e.g. TRUNCATE or ALTER TABLE ... ADD COLUMN
    assert len(table.history) == 0
    for read in (lambda: old.get(table, 1), lambda: old.scan(table)):
        with pytest.raises(MySQLError) as info:
            read()
        assert (info.value.errno, info.value.message) == (
            1412,
            "Table definition has changed, please retry transaction",
        )
    old.consistent_reads = False
    assert old.get(table, 1) == (1, 11)  # a current read is fine
    old.rollback()
    new = _reader(engine)
    assert new.scan(table) == [(1, (1, 11))]
    new.rollback()
    assert engine.versions_kept() == 0


@settings(max_examples=100, deadline=None)
@given(
    st.dictionaries(st.integers(0, 15), st.integers(0, 9), max_size=12),
    st.dictionaries(st.integers(0, 15), st.one_of(st.none(), st.integers(0, 9)), max_size=8),
    st.integers(0, 15),
    st.booleans(),
    st.integers(1, 6),
)
def test_limited_scans_through_a_view(
    before: dict[int, int],
    after: dict[int, int | None],
    lo: int,
    reverse: bool,
    limit: int,
) -> None:
    """A scan with a limit (either direction) through a view equals the view's rows cut."""
    engine, table = _engine()
    _write(engine, table, dict(before))
    reader = _reader(engine)
    reader.open_view()
    _write(engine, table, after)
    expect = sorted(((k, (k, v)) for k, v in before.items() if k >= lo), reverse=reverse)
    assert reader.scan(table, lo, None, reverse=reverse, limit=limit) == expect[:limit]
    reader.rollback()
