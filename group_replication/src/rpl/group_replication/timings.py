"""Where the time of a local commit goes on a group member, stage by stage.

A transaction a client commits on a member passes, in its session's thread, through:

* ``broadcast``: the send of its message to the group (the etcd put, until etcd answers);
* ``delivery``: from that answer until this member's delivery thread reads the message
  back in the group's order (0 when it was read before the put's answer came back);
* ``certification``: the certifier's test of its write set (in the delivery thread);
* ``order_wait``: waiting for its turn in the group's commit order (every transaction
  delivered before it has entered the binary log's commit queue);
* ``server``: the server's commit after the plugin said yes: binary log flush and
  sync, engine commit, up to the ``after_commit`` hook.

The totals are status variables of rpl's own (MySQL has none like them; a plugin's names
start with its own, as MySQL requires): ``group_replication_commit_count`` counts the local
commits measured through every stage, and ``group_replication_commit_<stage>_time`` is the
microseconds all of them spent in that stage, so a difference of two readings over the
difference of the counts is a stage's mean. ``FLUSH STATUS`` sets them back to zero.
"""

from __future__ import annotations

import threading
import time

from rpl.observers import StatusVariable

STAGES = ("broadcast", "delivery", "certification", "order_wait", "server")
PREFIX = "group_replication_commit_"


class CommitTimings:
    """Per-stage totals of the local commits (thread-safe: sessions and the delivery
    thread add to it at once).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._totals = dict.fromkeys(STAGES, 0)
        self._commits = 0
        self._decided: dict[int, tuple[int, dict[str, int]]] = {}

    def decided(self, thread_id: int, stages: dict[str, int]) -> None:
        """Session ``thread_id``'s transaction may commit: its first four stages took
        ``stages`` (nanoseconds); its server commit starts now.
        """
        with self._lock:
            self._decided[thread_id] = (time.perf_counter_ns(), stages)

    def committed(self, thread_id: int) -> None:
        """Session ``thread_id``'s transaction committed (``after_commit``): count it."""
        now = time.perf_counter_ns()
        with self._lock:
            entry = self._decided.pop(thread_id, None)
            if entry is None:
                return  # not a local transaction certified here (a remote one, recovery)
            started, stages = entry
            for stage, spent in stages.items():
                self._totals[stage] += spent
            self._totals["server"] += now - started
            self._commits += 1

    def abandoned(self, thread_id: int) -> None:
        """Session ``thread_id``'s transaction did not commit after all: forget it."""
        with self._lock:
            self._decided.pop(thread_id, None)

    def reset(self) -> None:
        """Start again from zero (FLUSH STATUS)."""
        with self._lock:
            self._totals = dict.fromkeys(STAGES, 0)
            self._commits = 0

    def commits(self) -> int:
        """Local commits measured through every stage."""
        return self._commits

    def microseconds(self, stage: str) -> int:
        """What every measured commit spent in ``stage``, in microseconds."""
        return self._totals[stage] // 1000

    def status_variables(self) -> list[StatusVariable]:
        """The status variables that show these totals."""
        found = [StatusVariable(f"{PREFIX}count", self.commits, self.reset)]
        for stage in STAGES:
            found.append(
                StatusVariable(
                    f"{PREFIX}{stage}_time",
                    lambda stage=stage: self.microseconds(stage),  # type: ignore[misc]
                    self.reset,
                )
            )
        return found
