"""rpl.semisync_master: the semisynchronous replication source plugin (``rpl_semi_sync_master``).

Built only on :mod:`rpl.observers`; it imports nothing from the server.
"""
