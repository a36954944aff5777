"""Demonstrations on local sandboxes: ``rpl demo failover`` and ``rpl demo consistency``."""
