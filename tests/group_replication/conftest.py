"""Fixtures of the Group Replication tests: three etcd members, and rpl servers with the
plugin loaded (three unless a module overrides ``group_size``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from group_kit import EtcdMembers, Group


@pytest.fixture
def etcd(tmp_path: Path) -> Iterator[EtcdMembers]:
    members = EtcdMembers(tmp_path / "etcd").start()
    yield members
    members.stop()


@pytest.fixture
def group_size() -> int:
    """How many servers ``group`` starts."""
    return 3


@pytest.fixture
def group(tmp_path: Path, etcd: EtcdMembers, group_size: int) -> Iterator[Group]:
    made = Group(tmp_path, etcd, count=group_size).start_servers()
    yield made
    made.stop()
