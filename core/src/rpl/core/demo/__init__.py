"""Demonstrations on local sandboxes: ``rpl demo failover``."""
