"""The group communication system (MySQL's libmysqlgcs, reduced): total-order delivery
to every member, the sender included, with views, suspicions and forced memberships.

:mod:`.interface` is what the plugin codes against; :mod:`.etcd` binds it to etcd;
:mod:`.memory` is an in-process binding for unit tests.
"""

from rpl.group_replication.gcs.interface import (
    Gcs,
    GcsError,
    GcsListener,
    GcsMember,
    GcsMessage,
    GcsView,
)

__all__ = ["Gcs", "GcsError", "GcsListener", "GcsMember", "GcsMessage", "GcsView"]
