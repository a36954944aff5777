"""rpl.core: the rpl server, its delegates and plugin loading, and the ``rpl`` command."""
