"""Plugin classes the core tests install through entry points of their own."""

from __future__ import annotations

from collections.abc import Generator

from rpl.observers import (
    ObserverError,
    ReplicationPlugin,
    ServerServices,
    StatusVariable,
    SystemVariable,
    TransParam,
    VarType,
    hookimpl,
)


class SamplePlugin(ReplicationPlugin):
    """Declares one variable of each kind and counts before_commit calls."""

    description = "sample"

    def __init__(self, services: ServerServices) -> None:
        super().__init__(services)
        self.commits = 0
        self.deinitialised = False
        name = services.plugin_name
        self.level = services.variables.register_system_variable(
            SystemVariable(f"{name}_level", VarType.INT, 3, min_value=1, max_value=10)
        )
        services.variables.register_status_variable(
            StatusVariable(f"{name.capitalize()}_commits", lambda: self.commits)
        )

    @hookimpl
    def before_commit(self, param: TransParam) -> None:
        self.commits += 1

    def deinit(self) -> None:
        self.deinitialised = True


class MisspelledHook(ReplicationPlugin):
    constructed = False

    def __init__(self, services: ServerServices) -> None:
        super().__init__(services)
        MisspelledHook.constructed = True

    @hookimpl
    def after_comit(self, param: TransParam) -> None:
        """Misspelled on purpose."""


class WrongArguments(ReplicationPlugin):
    @hookimpl
    def after_flush(self, param: object, log_name: str) -> None:
        """``log_name`` is not an argument of after_flush."""


class WrapperHook(ReplicationPlugin):
    @hookimpl(wrapper=True)
    def after_commit(self, param: TransParam) -> Generator[None, None, None]:
        yield


class FailingInit(ReplicationPlugin):
    def __init__(self, services: ServerServices) -> None:
        super().__init__(services)
        services.variables.register_system_variable(
            SystemVariable("failing_init_x", VarType.BOOL, False)
        )
        raise RuntimeError("cannot start")


class BusyPlugin(ReplicationPlugin):
    busy = True

    def check_uninstall(self) -> None:
        if BusyPlugin.busy:
            raise ObserverError("Stop any active semisynchronous slaves of this master first.")

    @hookimpl
    def after_commit(self, param: TransParam) -> None:
        """Observes something, so that it is in use."""


class BadPrefix(ReplicationPlugin):
    def __init__(self, services: ServerServices) -> None:
        super().__init__(services)
        services.variables.register_system_variable(
            SystemVariable("innodb_flush_log_at_trx_commit", VarType.INT, 1)
        )


class OtherStatusPrefix(ReplicationPlugin):
    """Declares a status prefix of its own (as Group Replication declares ``Gr_``)."""

    status_prefixes = ("Xy_",)

    def __init__(self, services: ServerServices) -> None:
        super().__init__(services)
        services.variables.register_status_variable(StatusVariable("Xy_count", lambda: 7))
        services.variables.register_status_variable(StatusVariable("other_prefix_count", lambda: 8))


class NotAPlugin:
    """Not a ReplicationPlugin subclass."""
