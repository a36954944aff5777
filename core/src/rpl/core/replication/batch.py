"""The applier's commit batch: independent replicated transactions committed as one group.

A replica's applier runs one transaction at a time, so without help each one would pay
for its own binlog sync. The source's GTID events carry its logical clock
(``last_committed``, ``sequence_number``): transactions whose ``last_committed`` is at or
below what has committed here held their row locks at the same time on the source, so
they touch disjoint rows. The applier executes such a run one after another, each in its
own engine transaction that keeps its locks, defers their commits, and then commits them
all with :meth:`Binlog.commit_batch`: one write, one sync, engine commits in order. This
is the replica-side group commit MySQL reaches with parallel workers and
``replica_preserve_commit_order``, without threads (the GIL would serialise them anyway).

What holds: the batch commits in relay-log order; a transaction that may depend on one
in the batch (its ``last_committed`` is past what has committed), DDL, a batch that is
full, and an idle relay log all commit the batch first; a lock wait inside a batch (which
the clock says cannot happen) is cut short, the batch commits, and the transaction is
retried alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rpl.core.binlog.gtid import Gtid
from rpl.core.replication.relay_transaction import RelayTransaction

if TYPE_CHECKING:
    from rpl.core.binlog.writer import Binlog, CommitTicket
    from rpl.core.engine import Transaction as EngineTransaction

BATCH_LOCK_WAIT = 0.2
"""Seconds a batched transaction may wait for a row lock before the batch commits."""


class CommitBatch:
    """Executed, not yet committed replicated transactions (their tickets are deferred)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.transactions: list[RelayTransaction] = []
        self.tickets: list[tuple[CommitTicket, EngineTransaction | None]] = []
        """The applier session's ``deferred`` list: its commits land here."""
        self._gtids: set[Gtid] = set()
        self.committed_seq = 0
        """The source sequence number up to which everything has committed here."""
        self._last_seq = -1

    def holds(self, gtid: Gtid) -> bool:
        """Whether ``gtid`` is in the batch (a duplicate in the relay log)."""
        return gtid in self._gtids

    def admits(self, transaction: RelayTransaction) -> bool:
        """Whether ``transaction`` may join the batch without a commit first."""
        return not self.transactions or (
            len(self.transactions) < self.limit
            and not transaction.is_ddl
            and transaction.sequence_number > self._last_seq
            and transaction.last_committed <= self.committed_seq
        )

    def start(self, transaction: RelayTransaction) -> None:
        """``transaction`` is about to run (after :meth:`admits`, or a commit)."""
        if not self.transactions:
            # Everything before it has committed: that is its whole dependency window.
            self.committed_seq = transaction.sequence_number - 1

    def add(self, transaction: RelayTransaction) -> None:
        """``transaction`` ran; its commit is among the tickets."""
        self.transactions.append(transaction)
        self._gtids.add(transaction.gtid)
        self._last_seq = transaction.sequence_number

    def full(self) -> bool:
        """Whether the batch reached its size limit."""
        return len(self.transactions) >= self.limit

    def oldest_timestamp(self) -> int | None:
        """The source commit time (µs) of the oldest uncommitted transaction."""
        return self.transactions[0].commit_timestamp if self.transactions else None

    def commit(self, binlog: Binlog) -> list[RelayTransaction]:
        """Commit every deferred ticket as one group; the transactions, in order.

        On an error the engine transactions still active roll back and the error is
        raised: nothing of the batch is left half-done.
        """
        if not self.tickets:
            done, self.transactions = self.transactions, []
            self._gtids.clear()
            return done
        tickets = [ticket for ticket, _ in self.tickets]
        engines = [trx for _, trx in self.tickets]
        self.tickets.clear()
        try:
            binlog.commit_batch(tickets)
        except BaseException:
            for trx in engines:
                if trx is not None and trx.active:
                    trx.rollback()
            self.transactions = []
            self._gtids.clear()
            raise
        done, self.transactions = self.transactions, []
        self._gtids.clear()
        self.committed_seq = max(self.committed_seq, self._last_seq)
        return done
