"""Replication: the source side (register, binlog dump) and the replica side (receiver,
relay log, applier, CHANGE MASTER / START / STOP / RESET SLAVE, SHOW SLAVE STATUS).

Every step calls the binlog transmit and relay IO observers where MySQL calls them
(see the hook docstrings in :mod:`rpl.observers.hookspecs`).
"""
