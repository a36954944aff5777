"""Status, counters, variables and the plugins' lifecycle: what a DBA reads and sets.

``Rpl_semi_sync_master_status`` and ``_clients`` right after enabling, ``_yes_tx`` per
acknowledged commit, ``FLUSH STATUS`` and ``RESET MASTER`` zeroing the counters, the
variables' type and scope errors, ``wait_for_slave_count``'s range, the wait point's
names, and ``UNINSTALL PLUGIN`` refused while in use.
"""

from __future__ import annotations

from typing import Final

import pymysql
import pytest

from rpl.core.testing.suite.fixtures import (
    Inserts,
    Nodes,
    SemisyncFixtures,
    clients_are,
    counter,
    master_on,
)
from rpl.core.testing.suite.requirements import requires
from rpl.core.testing.topology import wait_for

ER_PLUGIN_CANNOT_BE_UNINSTALLED: Final = 1883
ER_WRONG_VALUE_FOR_VAR: Final = 1231
ER_WRONG_TYPE_FOR_VAR: Final = 1232
ER_GLOBAL_VARIABLE: Final = 1229


class StatusSuite(SemisyncFixtures):
    """Status, counters, variables, UNINSTALL. Abstract: subclass it as ``Test...``."""

    def test_enabled_without_replica_is_on(self, nodes: Nodes) -> None:
        source = nodes.source()
        assert master_on(source)
        assert counter(source, "clients") == 0

    def test_disable_and_enable(self, nodes: Nodes) -> None:
        source = nodes.source()
        source.query("SET GLOBAL rpl_semi_sync_master_enabled = OFF")
        assert not master_on(source)
        source.query("SET GLOBAL rpl_semi_sync_master_enabled = ON")
        assert master_on(source)

    def test_each_acknowledged_transaction_counts_in_yes_tx(self, nodes: Nodes) -> None:
        source = nodes.source()
        nodes.replica(source)
        wait_for(clients_are(source, 1), 20, "the semisync dump")
        yes_tx = counter(source, "yes_tx")
        inserts = Inserts(source)
        for _ in range(10):
            inserts.one()
        assert counter(source, "yes_tx") == yes_tx + 10
        assert counter(source, "no_tx") == 0
        assert master_on(source)

    def test_flush_status_and_reset_master_zero_the_counters(self, nodes: Nodes) -> None:
        source = nodes.source()
        replica = nodes.replica(source)
        wait_for(clients_are(source, 1), 20, "the semisync dump")
        inserts = Inserts(source)
        for _ in range(3):
            inserts.one()
        assert counter(source, "yes_tx") >= 3 and counter(source, "tx_waits") >= 1
        source.query("FLUSH STATUS")
        for name in ("yes_tx", "no_tx", "no_times", "tx_waits", "tx_wait_time"):
            assert counter(source, name) == 0, name
        inserts.one()
        assert counter(source, "yes_tx") == 1
        replica.query("STOP SLAVE")
        wait_for(clients_are(source, 0), 20, "the dump to end")
        inserts.close()
        source.query("RESET MASTER")
        for name in ("yes_tx", "no_tx", "no_times", "tx_waits"):
            assert counter(source, name) == 0, name
        assert master_on(source)

    def test_variable_type_and_scope_errors(self, nodes: Nodes) -> None:
        source = nodes.source()
        for statement, errno in [
            ("SET GLOBAL rpl_semi_sync_master_wait_point = 'AFTER_FLUSH'", ER_WRONG_VALUE_FOR_VAR),
            ("SET GLOBAL rpl_semi_sync_master_timeout = 'abc'", ER_WRONG_TYPE_FOR_VAR),
            ("SET GLOBAL rpl_semi_sync_master_timeout = 1.5", ER_WRONG_TYPE_FOR_VAR),
            ("SET SESSION rpl_semi_sync_master_enabled = ON", ER_GLOBAL_VARIABLE),
            ("SET SESSION rpl_semi_sync_master_wait_point = 'AFTER_SYNC'", ER_GLOBAL_VARIABLE),
            ("SET rpl_semi_sync_master_timeout = 10", ER_GLOBAL_VARIABLE),
        ]:
            with pytest.raises(pymysql.MySQLError) as refused:
                source.query(statement)
            assert refused.value.args[0] == errno, statement

    @requires("wait_for_slave_count")
    def test_wait_for_slave_count_is_clamped_to_its_range(self, nodes: Nodes) -> None:
        source = nodes.source()
        source.query("SET GLOBAL rpl_semi_sync_master_wait_for_slave_count = 0")
        assert source.query("SELECT @@global.rpl_semi_sync_master_wait_for_slave_count") == [(1,)]
        source.query("SET GLOBAL rpl_semi_sync_master_wait_for_slave_count = 65536")
        assert source.query("SELECT @@global.rpl_semi_sync_master_wait_for_slave_count") == [
            (65535,)
        ]

    @requires("after_commit_wait_point", "wait_point_switch_at_runtime")
    def test_wait_point_names_in_any_case(self, nodes: Nodes) -> None:
        source = nodes.source()
        source.query("SET GLOBAL rpl_semi_sync_master_wait_point = 'after_commit'")
        assert source.query("SELECT @@global.rpl_semi_sync_master_wait_point") == [
            ("AFTER_COMMIT",)
        ]
        source.query("SET GLOBAL rpl_semi_sync_master_wait_point = 'After_Sync'")
        assert source.query("SELECT @@global.rpl_semi_sync_master_wait_point") == [("AFTER_SYNC",)]

    @requires("uninstall_refused_while_in_use")
    def test_uninstall_refused_while_in_use(self, nodes: Nodes) -> None:
        source = nodes.source()
        replica = nodes.replica(source)
        wait_for(clients_are(source, 1), 20, "the semisync dump")
        for server, plugin in ((source, nodes.plugins.master), (replica, nodes.plugins.slave)):
            with pytest.raises(pymysql.MySQLError) as refused:
                server.query(f"UNINSTALL PLUGIN {plugin}")
            assert refused.value.args[0] == ER_PLUGIN_CANNOT_BE_UNINSTALLED
        replica.query("STOP SLAVE")
        wait_for(clients_are(source, 0), 20, "the dump to end")
        replica.query(f"UNINSTALL PLUGIN {nodes.plugins.slave}")
        source.query(f"UNINSTALL PLUGIN {nodes.plugins.master}")
        assert source.query("SHOW STATUS LIKE 'Rpl_semi_sync%'") == []
