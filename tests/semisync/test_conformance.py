"""The semisync conformance suite (rpl.core.testing.suite.semisync) against the bundled
plugins, rpl_semi_sync_master and rpl_semi_sync_slave."""

from __future__ import annotations

from rpl.core.testing.suite.semisync import SemisyncSuite


class TestBundledSemisync(SemisyncSuite):
    """Every behaviour, with the suite's default plugins (the bundled ones)."""
