"""What every Group Replication area of the suite takes its groups from: the plugin under
test, the requirements, real etcd members and real server processes.

Every test starts its own group (one to three ``rpl server`` processes with the plugin
loaded through ``--plugin-load``, each paired with an etcd member,
:mod:`rpl.core.testing.group`) and reuses it for the whole test. The plugin need only be
installed (its ``rpl.plugins`` entry point) in the environment that runs pytest, with
Debian's ``etcd`` on the PATH. Two server facilities the suite relies on, both in every
rpl server: the sync points ``pause_plugin_applier`` (a plugin's applier channel holds
its next transaction) and ``pause_before_sync_binlog`` (every commit holds before the
binlog sync), set with ``SET GLOBAL debug``; and information_schema.PROCESSLIST.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import attrs
import pymysql
import pytest

from rpl.core.testing.group import (
    Group,
    Statement,
    etcd_members,
    started_group,
    wait_until,
)
from rpl.core.testing.process import ServerProcess
from rpl.core.testing.suite.requirements import RequirementsFixtures

ER_RUN_HOOK_ERROR = 3100
ER_GRP_TRX_CONSISTENCY_NOT_ALLOWED = 3796
ER_GRP_TRX_CONSISTENCY_BEFORE = 3797
ER_GRP_TRX_CONSISTENCY_AFTER_ON_TRX_BEGIN = 3798
CONSISTENT_LEVELS = ("BEFORE", "AFTER", "BEFORE_AND_AFTER")
LEVELS = ("EVENTUAL", *CONSISTENT_LEVELS)


@attrs.frozen
class GroupPlugin:
    """The Group Replication implementation under test.

    ``name`` is the plugin (``--plugin-load``; its variables are MySQL's
    ``group_replication_*``). ``member_version_env`` is the environment variable that
    makes a member announce another version to the group, the suite's way of putting a
    member older than 8.0.14 in a group (FR-10, FR-11; requirement
    ``member_version_override``).
    """

    name: str = "group_replication"
    member_version_env: str = "RPL_GR_MEMBER_VERSION"


class Groups:
    """The groups of one test: started on demand, all stopped at the end."""

    def __init__(self, root: Path, plugin: GroupPlugin) -> None:
        self.root = root
        self.plugin = plugin
        self._stack = ExitStack()
        self._made = 0

    def start(
        self,
        count: int,
        *,
        etcd: int = 3,
        versions: Mapping[int, str] | None = None,
    ) -> Group:
        """``count`` started servers (not in a group yet) on ``etcd`` etcd members;
        member ``i`` announces the version ``versions[i]`` when given.
        """
        self._made += 1
        root = self.root / f"group{self._made}"
        members = self._stack.enter_context(etcd_members(root / "etcd", etcd))
        env = {i: {self.plugin.member_version_env: v} for i, v in (versions or {}).items()}
        return self._stack.enter_context(
            started_group(root, members, count, plugin=self.plugin.name, member_env=env)
        )

    def formed(self, count: int, **settings: Any) -> Group:
        """A group of ``count`` members, all ONLINE, with ``settings``, holding the table
        ``d.t (id INT PRIMARY KEY)`` with the row 1 on every member.
        """
        group = self.start(count)
        group.form(**settings)
        with_table(group)
        return group

    def close(self) -> None:
        """Stop every server and etcd member."""
        self._stack.close()


def with_table(group: Group, *, row: bool = True) -> None:
    """``d.t (id INT PRIMARY KEY)`` made on member 0 (with the row 1 unless told), until
    every member that is ONLINE has it.
    """
    first = group.servers[0]
    first.query("CREATE DATABASE d")
    first.query("CREATE TABLE d.t (id INT PRIMARY KEY)")
    if row:
        first.query("INSERT INTO d.t VALUES (1)")
    for index in range(1, len(group.servers)):
        if "ONLINE" in group.states(index):
            wait_until(shows(group.servers[index], 1 if row else 0), 30)


def shows(server: ServerProcess, rows: int, where: str = "") -> Callable[[], bool]:
    """A condition: :func:`count` on ``server`` is ``rows``."""
    return lambda: count(server, where) == rows


def count(server: ServerProcess, where: str = "") -> int:
    """SELECT COUNT(*) FROM d.t [WHERE ``where``] on ``server``."""
    clause = f" WHERE {where}" if where else ""
    return int(server.query(f"SELECT COUNT(*) FROM d.t{clause}")[0][0])


def refused(server: ServerProcess, sql: str, level: str) -> tuple[Any, ...]:
    """The error (code, message) ``sql`` gets at ``level`` on a fresh connection to
    ``server`` (AssertionError if it succeeds).
    """
    connection = server.connect()
    try:
        with connection.cursor() as cursor:
            cursor.execute(f"SET SESSION group_replication_consistency = '{level}'")
            try:
                cursor.execute(sql)
            except pymysql.err.MySQLError as exc:
                return tuple(exc.args)
        raise AssertionError(f"{sql} at {level} was not refused")
    finally:
        connection.close()


def holds_new_transactions(server: ServerProcess) -> bool:
    """Whether ``server`` holds a new EVENTUAL transaction behind a prepared AFTER one:
    a read with a one-second ``wait_timeout`` ends with ER_GRP_TRX_CONSISTENCY_AFTER_ON_
    TRX_BEGIN (3798). What a member shows once it prepared an AFTER transaction.
    """
    probe = Statement(server, "SELECT COUNT(*) FROM d.t", wait_timeout=1)
    probe.start()
    probe.finish()
    return probe.error is not None and probe.error[0] == ER_GRP_TRX_CONSISTENCY_AFTER_ON_TRX_BEGIN


class GroupFixtures(RequirementsFixtures):
    """The fixtures every Group Replication suite class takes its groups from. A third
    party overrides ``group_plugin`` (its plugin) and ``requirements`` (the behaviours it
    lacks) in its subclass.
    """

    @pytest.fixture
    def group_plugin(self) -> GroupPlugin:
        """The implementation under test (override to test another one)."""
        return GroupPlugin()

    @pytest.fixture
    def groups(self, tmp_path: Path, group_plugin: GroupPlugin) -> Iterator[Groups]:
        """A factory of groups of real servers on real etcd members, stopped at the end."""
        made = Groups(tmp_path, group_plugin)
        try:
            yield made
        finally:
            made.close()
