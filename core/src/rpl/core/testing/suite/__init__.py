"""The conformance suite: abstract pytest classes a plugin implementation runs to prove
it behaves as MySQL's does (SQLAlchemy's dialect suite is the model).

Subclass a suite class in a test module of your own (its name must start with ``Test``)
and, to test another implementation, override its plugin fixture::

    from rpl.core.testing.suite.semisync import SemisyncPlugins, SemisyncSuite

    class TestMySemisync(SemisyncSuite):
        @pytest.fixture
        def semisync_plugins(self) -> SemisyncPlugins:
            return SemisyncPlugins(master="my_semi_sync_master", slave="my_semi_sync_slave")

Every test runs real server processes (``rpl server``) with the plugins loaded through
``--plugin-load``, so the plugins need only be installed (their entry points) in the
environment that runs pytest.
"""
