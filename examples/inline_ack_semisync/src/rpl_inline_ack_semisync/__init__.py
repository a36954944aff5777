"""rpl-inline-ack-semisync: a second semisync source for rpl, written as a third party
writes one (only rpl.observers), whose dump threads read the ACKs themselves.

The plugin is :class:`rpl_inline_ack_semisync.plugin.InlineAckSemisyncMaster`, declared
as ``rpl_semi_sync`` in the entry-point group ``rpl.plugins``.
"""
