"""Fixtures of the Group Replication tests: three etcd members, and rpl servers with the
plugin loaded (three unless a module overrides ``group_size``), from
:mod:`rpl.core.testing.group`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from rpl.core.testing.group import EtcdMembers, Group, etcd_members, started_group


@pytest.fixture
def etcd(tmp_path: Path) -> Iterator[EtcdMembers]:
    with etcd_members(tmp_path / "etcd") as members:
        yield members


@pytest.fixture
def group_size() -> int:
    """How many servers ``group`` starts."""
    return 3


@pytest.fixture
def group(tmp_path: Path, etcd: EtcdMembers, group_size: int) -> Iterator[Group]:
    with started_group(tmp_path, etcd, group_size) as made:
        yield made
