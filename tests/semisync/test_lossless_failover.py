"""Lossless failover (WL#6355) with the bundled plugins, and proof that the checker can
fail: with AFTER_COMMIT a network cut lets clients read rows that the promoted
replica never received."""

from __future__ import annotations

from rpl.core.testing.suite.semisync import FailoverHarness, LosslessFailoverSuite, Nodes

AFTER_COMMIT_ATTEMPTS = 6


class TestLosslessFailover(LosslessFailoverSuite):
    """AFTER_SYNC: nothing acknowledged or read is lost, at any kill."""


class TestAfterCommitIsCaught(FailoverHarness):
    """The same harness with AFTER_COMMIT reports a read row lost."""

    wait_point = "AFTER_COMMIT"

    def test_phantom_read_detected(self, nodes: Nodes) -> None:
        verdicts = []
        for seed in range(AFTER_COMMIT_ATTEMPTS):
            verdict = self.run_trial(nodes, "network_cut", seed)
            verdicts.append(verdict)
            if verdict.phantom_reads:
                break
        assert verdicts[-1].phantom_reads, f"no trial caught AFTER_COMMIT: {verdicts}"
        assert verdicts[-1].read > 0
