"""rpl.semisync_slave: the semisynchronous replication replica plugin (``rpl_semi_sync_slave``).

Built only on :mod:`rpl.observers`; it imports nothing from the server.
"""
