"""What the implementation under test can do: the optional behaviours of the suite.

SQLAlchemy's ``requirements.py`` is the model. :class:`Requirements` has one property per
optional behaviour, each documented with what the suite then checks; every property is
:data:`OPEN` here, so the bundled plugins run every test. A third party whose plugin lacks
a behaviour subclasses it and returns :func:`closed` with the reason::

    class MyRequirements(Requirements):
        @property
        def ack_receiver_thread(self) -> Requirement:
            return closed("the dump thread reads each ACK itself")

and hands an instance to the suite through its ``requirements`` fixture. A test declares
what it needs with :func:`requires`; the suite's gate skips it, with the requirement's
name and reason, when one of them is closed.

What holds:

* The gate decides before the test body runs, from the requirements alone: a test whose
  requirements are all open runs to its end, and its failure is a failure, never a skip.
* :func:`requires` refuses (at import) a name that is no property of :class:`Requirements`,
  and the gate refuses (an error, not a skip) a property whose value is no
  :class:`Requirement`: a typo or a wrong override cannot close a behaviour silently.
* Behaviours that are not listed here are what conformance means (MySQL's variable and
  status names, the wire format, switching off on timeout and back on after a catch-up;
  for Group Replication, ``group_replication_consistency`` itself, its scopes, values and
  privilege, and the levels refused outside ONLINE): no requirement closes them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, TypeVar

import attrs
import pytest

REQUIRES_ATTRIBUTE: Final = "rpl_suite_requires"
"""The attribute :func:`requires` sets on a test function: the names it needs."""

Test = TypeVar("Test", bound=Callable[..., object])


@attrs.frozen
class Requirement:
    """One optional behaviour's state: open (``reason`` None) or closed, with the reason
    the implementation gives for lacking it.
    """

    reason: str | None = None

    @property
    def is_open(self) -> bool:
        """The implementation has the behaviour: the tests that need it run."""
        return self.reason is None


OPEN: Final = Requirement()
"""The implementation has the behaviour."""


def closed(reason: str) -> Requirement:
    """The implementation lacks the behaviour, for ``reason`` (shown in the skip)."""
    if not reason.strip():
        raise ValueError("a closed requirement says why")
    return Requirement(reason)


class Requirements:
    """The optional behaviours of a semisync or Group Replication implementation, all
    open.

    Override a property in a subclass to close one; every property returns a
    :class:`Requirement`.
    """

    @property
    def ack_receiver_thread(self) -> Requirement:
        """WL#6630: one thread, ``thread/semisync/Ack_receiver`` in
        performance_schema.threads, reads every semisync replica's ACKs; it runs exactly
        while ``rpl_semi_sync_master_enabled`` is ON, shows MySQL's states ("Waiting for
        semi-sync slave connection", "Waiting for semi-sync ACK from slave", "Reading
        semi-sync ACK from slave"), and keeps the list of replicas while it is down.
        """
        return OPEN

    @property
    def after_commit_wait_point(self) -> Requirement:
        """``rpl_semi_sync_master_wait_point = AFTER_COMMIT``: the session waits for the
        ACK in ``after_commit``, after engine commit, so other sessions see its rows
        before the replica has them.
        """
        return OPEN

    @property
    def wait_point_switch_at_runtime(self) -> Requirement:
        """``SET GLOBAL rpl_semi_sync_master_wait_point`` takes either wait point (in any
        letter case, stored upper case) on a running source, and the next commit waits
        where the new value says (MySQL reads it at every commit). Needs
        :attr:`after_commit_wait_point` as well.
        """
        return OPEN

    @property
    def wait_for_slave_count(self) -> Requirement:
        """``rpl_semi_sync_master_wait_for_slave_count`` (1..65535, out-of-range values
        clamped): a commit waits until that many distinct replicas acknowledged it.
        """
        return OPEN

    @property
    def uninstall_refused_while_in_use(self) -> Requirement:
        """``UNINSTALL PLUGIN`` fails with ER_PLUGIN_CANNOT_BE_UNINSTALLED (1883) for the
        master plugin while a semisync replica is connected and for the slave plugin while
        its status is ON; once they are not, both uninstall and their status variables go.
        """
        return OPEN

    # ------------------------------------------------------- Group Replication
    @property
    def before_consistency(self) -> Requirement:
        """``group_replication_consistency = BEFORE`` (WL#10379): a transaction waits at
        its start, in "Executing hook on transaction begin.", until this member has
        committed every transaction the group ordered before it, then reads them
        (FR-01); only that member waits; after ``wait_timeout`` it fails with
        ER_GRP_TRX_CONSISTENCY_BEFORE (3797). Needed as well by every test of
        BEFORE_AND_AFTER.
        """
        return OPEN

    @property
    def after_consistency(self) -> Requirement:
        """``group_replication_consistency = AFTER`` and ``BEFORE_AND_AFTER``
        (WL#10379): a RW transaction commits once every member ONLINE at its delivery
        has prepared it (FR-05), a member that prepared it holds every new transaction
        until it commits there (FR-06, 3798 after ``wait_timeout``), so that what its
        client was told is committed every ONLINE member reads (FR-02); a member leaving
        or expelled counts as acknowledged (FR-07), an unreachable one holds the commit
        (FR-08), the origin leaving rolls it back there only (FR-12).
        """
        return OPEN

    @property
    def consistency_status_counters(self) -> Requirement:
        """MySQL 8.1's ``Gr_transactions_consistency_before_begin_count``,
        ``_after_termination_count``, ``_after_sync_count`` and their ``_time_sum``
        (microseconds): BEFORE waits at begin, this member's AFTER transactions from
        delivery to the last acknowledgement, new transactions held behind prepared ones.
        """
        return OPEN

    @property
    def member_version_override(self) -> Requirement:
        """A member can be made to announce an older version to the group (the
        environment variable :attr:`GroupPlugin.member_version_env` names, as MySQL's
        tests lower a member's version with a debug point), so that the suite can put
        a member older than 8.0.14 in a group: AFTER and BEFORE_AND_AFTER then roll back
        (FR-10), BEFORE still works on the members that support it (FR-11).
        """
        return OPEN

    @property
    def force_members(self) -> Requirement:
        """``SET GLOBAL group_replication_force_members`` on a member that lost its
        majority installs a view of the listed members (after the member's share of the
        consensus, its etcd member, is re-formed alone), and what was blocked resumes
        with the new membership (FR-09).
        """
        return OPEN

    @property
    def before_on_primary_failover(self) -> Requirement:
        """``group_replication_consistency = BEFORE_ON_PRIMARY_FAILOVER`` (MySQL 8.0.14):
        a member just elected primary holds such transactions (and those at the levels
        above) at their start, in "Executing hook on transaction begin.", until it has
        applied the backlog the old primary left; ER_GR_HOLD_WAIT_TIMEOUT (3781) past
        ``wait_timeout``; EVENTUAL ones are not held (their reads may be stale, their
        writes get 1290 while the member is still read-only).
        """
        return OPEN


def requires(*names: str) -> Callable[[Test], Test]:
    """Mark a suite test as needing the behaviours ``names`` (properties of
    :class:`Requirements`); the gate skips it when one of them is closed.
    """
    for name in names:
        if not isinstance(getattr(Requirements, name, None), property):
            raise AttributeError(f"no requirement named {name!r} in Requirements")

    def mark(test: Test) -> Test:
        setattr(test, REQUIRES_ATTRIBUTE, (*required_by(test), *names))
        return test

    return mark


def required_by(test: object) -> tuple[str, ...]:
    """The requirements ``test`` declared with :func:`requires` (none: empty)."""
    names: tuple[str, ...] = getattr(test, REQUIRES_ATTRIBUTE, ())
    return names


def gate(requirements: Requirements, names: tuple[str, ...]) -> None:
    """Skip the running test if one of ``names`` is closed in ``requirements`` (the skip
    names each closed requirement and its reason); TypeError if a property of
    ``requirements`` is no :class:`Requirement`.
    """
    closed_ones = []
    for name in names:
        value = getattr(requirements, name)
        if not isinstance(value, Requirement):
            raise TypeError(
                f"{type(requirements).__name__}.{name} is {value!r}, "
                "not a Requirement (OPEN or closed(reason))"
            )
        if not value.is_open:
            closed_ones.append(f"{name} ({value.reason})")
    if closed_ones:
        pytest.skip("requirement closed: " + "; ".join(closed_ones))


class RequirementsFixtures:
    """What every suite class (semisync and Group Replication) shares: the
    ``requirements`` fixture a third party overrides, and the gate.
    """

    @pytest.fixture
    def requirements(self) -> Requirements:
        """What the implementation under test can do (override to close a behaviour)."""
        return Requirements()

    @pytest.fixture(autouse=True)
    def _requirements_gate(
        self, request: pytest.FixtureRequest, requirements: Requirements
    ) -> None:
        """Skip a test that needs a closed requirement, before anything of it runs."""
        gate(requirements, required_by(request.function))
