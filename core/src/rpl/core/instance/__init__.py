"""The wiring: :class:`rpl.core.instance.server.Server` builds a server from its parts (the
engine, the binlog, the delegates, the plugins, the statement table, the replication
features), recovers it at start and stops it. Nothing below this package imports it: the
layers under it name the server only as ``rpl.core.execution.session.ServerContext``.
"""
