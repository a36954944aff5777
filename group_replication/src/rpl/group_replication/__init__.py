"""rpl.group_replication: the Group Replication plugin (``group_replication``).

Built only on :mod:`rpl.observers`; it imports nothing from the server.
"""
