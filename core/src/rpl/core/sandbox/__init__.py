"""``rpl sandbox``: local replication topologies of real server processes on loopback, in
a directory of their own, in the spirit of dbdeployer and MySQL Shell sandboxes.

A sandbox directory holds ``sandbox.json`` (the nodes: name, role, port, server_id, pid,
options), one data directory per node, each node's console output, and a script per
node (``./source``, ``./replica1``, ...) that runs the ``mariadb`` client against it.
Nodes are detached processes (their own session), so they outlive the command that
started them; ``stop`` shuts them down cleanly (SIGTERM, as ``mysqladmin shutdown``),
``start`` starts them again on the same ports (replicas resume replication by themselves),
``destroy`` stops them and removes the directory.
"""
