"""``rpl validate``: check the binlogs, relay logs and client histories of a run across
nodes, on Spark (extra ``rpl-core[spark]``).

Layers, each usable alone:

* :mod:`.layout` finds the nodes' log files and cuts them into splits;
* :mod:`.scan` checks one split with the project's event codec and turns it into rows
  (no Spark: a test or a single process can call it);
* :mod:`.job` runs the scan as Spark tasks and the cross-node checks as DataFrame
  queries (:mod:`.checks`), and :mod:`.report` writes the summary and the JSON report;
* :mod:`.history` reads client histories and the rows statements wrote.

Only :mod:`.job` and :mod:`.checks` import pyspark.
"""
