"""Certification (MySQL's ``certifier.cc``): one decision per delivered transaction,
the same on every member because every member certifies the same transactions in the
same order from the same state.

The certification info maps each write-set item (a row's key hash) to the GTID set of
the last transaction certified that wrote it: that transaction's snapshot plus its own
GTID. A transaction is **negative** (a conflict) when, for any item of its write set,
that set is not contained in the transaction's snapshot: it ran without seeing a
concurrent write to the same row. Otherwise it is **positive** and gets the next free
GNO of the group's UUID (``group_replication_group_name``), and each of its items now
records its snapshot plus that GTID.

Garbage collection drops items whose recorded set is contained in the stable set (the
GTIDs every member has committed): any transaction still to be certified has those in
its snapshot, so they can no longer cause a conflict.

A transaction with an empty write set (DDL) never conflicts and records nothing.

A view with joining members takes the next GNO too (:meth:`Certifier.view_change`), at
its place in the order, so every member logs that view's VIEW_CHANGE with one GTID.
"""

from __future__ import annotations

import attrs

from rpl.group_replication.gtid_sets import GtidSet

GTID_EXTRACTED = "gtid_extracted"
"""The certification-info key of the group's executed GTIDs in a VIEW_CHANGE event."""


@attrs.frozen
class Certified:
    """A positive certification: commit as ``group:gno``."""

    gno: int

    def gtid(self, group: str) -> str:
        """The transaction's GTID text."""
        return f"{group}:{self.gno}"


class Certifier:
    """The certification info of one member."""

    def __init__(self, group: str, executed: GtidSet | None = None) -> None:
        """For group UUID ``group``; ``executed`` is what the group has certified and
        executed before (the GNOs certification must not hand out again).
        """
        self.group = group
        self.group_executed = executed.copy() if executed is not None else GtidSet()
        """Every GTID the group certified (or had before): the next GNO is its first gap."""
        self.info: dict[int, GtidSet] = {}
        self.positive = 0
        self.negative = 0
        self.last_positive = 0
        """The GNO of the last transaction certified positive (0: none yet)."""

    def certify(self, snapshot: GtidSet, write_set: frozenset[int]) -> Certified | None:
        """The decision for a transaction that ran on ``snapshot``; None is negative."""
        info = self.info
        for item in write_set:
            last = info.get(item)
            if last is not None and not last.issubset(snapshot):
                self.negative += 1
                return None
        gno = self.group_executed.next_free(self.group)
        self.group_executed.add(self.group, gno)
        if write_set:
            recorded = snapshot.copy()
            recorded.add(self.group, gno)
            for item in write_set:
                info[item] = recorded
        self.positive += 1
        self.last_positive = gno
        return Certified(gno)

    def view_change(self) -> Certified:
        """The GTID of a view change with joining members (MySQL logs each as a
        transaction of its own): the next free GNO, outside the certified counts.
        """
        gno = self.group_executed.next_free(self.group)
        self.group_executed.add(self.group, gno)
        return Certified(gno)

    def certification_info(self) -> dict[str, str]:
        """The info as a VIEW_CHANGE event carries it: each item (decimal) to its GTID
        set, and ``gtid_extracted`` (MySQL's key) to the group's executed set.
        """
        info = {str(item): str(gtids) for item, gtids in self.info.items()}
        info[GTID_EXTRACTED] = str(self.group_executed)
        return info

    def add_executed(self, gtids: GtidSet) -> None:
        """GNOs the group used outside certification (a member's own history at
        bootstrap): never handed out.
        """
        self.group_executed.update(gtids)

    def garbage_collect(self, stable: GtidSet) -> int:
        """Drop the items ``stable`` covers; how many went."""
        doomed = [item for item, last in self.info.items() if last.issubset(stable)]
        for item in doomed:
            del self.info[item]
        return len(doomed)

    def state(self) -> tuple[str, list[tuple[int, str]]]:
        """The group's executed set and the info, as text (the state a joiner takes)."""
        return str(self.group_executed), [(item, str(s)) for item, s in self.info.items()]

    @classmethod
    def from_state(cls, group: str, executed: str, info: list[tuple[int, str]]) -> Certifier:
        """The certifier :meth:`state` described; ValueError if it is malformed."""
        certifier = cls(group, GtidSet.parse(executed))
        shared: dict[str, GtidSet] = {}
        for item, text in info:
            certifier.info[int(item)] = shared.setdefault(text, GtidSet.parse(text))
        return certifier
