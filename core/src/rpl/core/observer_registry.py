"""The set of registered observers, as immutable generations over a pluggy PluginManager.

pluggy validates hook implementations against the specifications in
:mod:`rpl.observers.hookspecs` and keeps them per hook; this module adds what a
server calling hooks from many threads needs and pluggy does not give:

* **Registration order.** pluggy calls implementations last-registered-first
  (LIFO, with ``tryfirst`` ones first and ``trylast`` ones last); MySQL's
  delegates walk observers in the order they were added. pluggy's
  ``get_hookimpls()`` lists plain implementations in registration order, between
  the ``trylast`` ones (most recent first) and the ``tryfirst`` ones (registration
  order). A :class:`Generation` stores, per hook: the ``tryfirst`` implementations,
  then the plain ones, then the ``trylast`` ones, each group in registration
  order. The delegates call them in that order themselves and never through
  ``pm.hook``, so they can stop at the first failure and name its plugin.
* **Atomic views.** Each register/unregister builds a new immutable
  :class:`Generation` for every hook and publishes it with one reference
  assignment. A hook call reads the current generation once and uses it to the
  end, so it sees a plugin either with all its hooks or not at all, and never a
  list being changed under it. Registrations are serialised by one lock; hook
  calls take no lock except to count themselves in and out of their generation.
* **Quiescence.** :meth:`ObserverRegistry.unregister` returns only after every
  call that could still reach the removed plugin (calls in flight on an older
  generation that contains it) has returned, so the plugin can be deinitialised
  safely, as MySQL's plugin reference counts ensure. A hook call takes no lock for
  this: each thread has a record of its own (how deep in hook calls it is, and the
  generation its outermost call uses), which only that thread writes; unregister
  publishes the new generation first and then reads every thread's record (see
  :class:`HookCall` for why no call can slip past it).

pluggy has no notion of these, so they are written here by hand.
"""

from __future__ import annotations

import difflib
import threading
import weakref
from collections.abc import Callable, Mapping, Sequence

import pluggy
from mypy_extensions import mypyc_attr

from rpl.observers import HOOKS, INTERFACES, PROJECT_NAME


class PluginLoadError(Exception):
    """A plugin's hooks do not match the specification (unknown hook, argument
    not in the specification, wrapper).
    """


class Callback:
    """One observer callback: the plugin's implementation of one hook.

    The delegates pass a hook's arguments as a tuple in the order of its
    specification; an implementation may declare any subset of them, in any order
    (pluggy's rule), so ``positions`` says where each argument it declares is in that
    tuple. Most declare them all, in order (``takes_all``): those get the tuple as it is.

    Nothing changes a callback once made (a :class:`Generation` shares it). It is a plain
    class, not an attrs one, so that the compiled build makes it native: a hook call then
    reaches :meth:`__call__` and the fields directly, not through a Python-level
    ``__call__`` lookup and a generic attribute read per field (the receiver makes two
    hook calls per event, the dump thread one with two callbacks).
    """

    __slots__ = ("plugin", "hook", "function", "positions", "takes_all")

    def __init__(
        self,
        plugin: str,
        hook: str,
        function: Callable[..., object],
        positions: tuple[int, ...],
        takes_all: bool,
    ) -> None:
        self.plugin = plugin
        self.hook = hook
        self.function = function
        self.positions = positions
        self.takes_all = takes_all

    def __repr__(self) -> str:
        return f"Callback({self.plugin!r}, {self.hook!r})"

    @classmethod
    def of(
        cls,
        plugin: str,
        hook: str,
        function: Callable[..., object],
        argnames: Sequence[str],
        spec_argnames: Sequence[str],
    ) -> Callback:
        """The callback of ``function``, which declares ``argnames`` of the hook's
        ``spec_argnames`` (validated: each is one of them).
        """
        positions = tuple(list(spec_argnames).index(name) for name in argnames)
        return cls(plugin, hook, function, positions, positions == tuple(range(len(spec_argnames))))

    def __call__(self, args: tuple[object, ...]) -> object:
        """Call with the hook's arguments (``args``, in specification order) that the
        implementation declares.
        """
        if self.takes_all:
            return self.function(*args)
        return self.function(*[args[i] for i in self.positions])


class Generation:
    """One immutable view of all observers."""

    __slots__ = ("callbacks", "plugins", "selected")

    def __init__(
        self, callbacks: Mapping[str, tuple[Callback, ...]], plugins: frozenset[str]
    ) -> None:
        self.callbacks = callbacks
        self.plugins = plugins
        self.selected: dict[tuple[str, frozenset[str]], tuple[Callback, ...]] = {}
        """Callbacks of a hook restricted to some plugins (a dump's observers), kept as
        the delegates first select them: the generation never changes."""


@mypyc_attr(native_class=False)  # the registry lists the records in a WeakSet
class ThreadCalls:
    """One thread's hook calls in progress: written by that thread only.

    ``depth`` counts the calls it is inside (a hook may make another hook call);
    ``generation`` is the one its outermost call uses, None while it is outside any
    call (and for the moment between counting itself in and reading the generation).
    The record lives as long as its thread (held by a ``threading.local``).
    """

    __slots__ = ("depth", "generation", "__weakref__")

    def __init__(self) -> None:
        self.depth = 0
        self.generation: Generation | None = None

    def may_reach(self, plugin: str) -> bool:
        """Whether this thread's calls may be inside ``plugin``."""
        generation = self.generation
        return bool(self.depth) and (generation is None or plugin in generation.plugins)


def _ordered(impls: list[pluggy.HookImpl]) -> list[pluggy.HookImpl]:
    first = [impl for impl in impls if impl.tryfirst]
    last = [impl for impl in reversed(impls) if impl.trylast]
    plain = [impl for impl in impls if not impl.tryfirst and not impl.trylast]
    return first + plain + last


class ObserverRegistry:
    """All registered observers of all interfaces, published as generations."""

    def __init__(self) -> None:
        self._pm = pluggy.PluginManager(PROJECT_NAME)
        for interface in INTERFACES.values():
            self._pm.add_hookspecs(interface)
        self._register_lock = threading.Lock()
        self._quiet = threading.Condition()
        """Where unregister waits for calls to leave a removed plugin."""
        self._waiting = 0
        """Unregisters waiting (under ``_quiet``): only then does a call's end notify."""
        self._records: weakref.WeakSet[ThreadCalls] = weakref.WeakSet()
        self._local = threading.local()
        self.current = Generation({}, frozenset())
        self._publish()

    # --- registration -----------------------------------------------------------

    def validate(self, plugin: object, name: str) -> tuple[str, ...]:
        """Check ``plugin``'s hook implementations; return the hooks it implements.

        Raises :class:`PluginLoadError` naming the first hook that does not match
        the specification: an unknown (misspelled) hook name, an argument the
        specification does not have, or a pluggy wrapper.
        """
        hooks = []
        for attr in dir(plugin):
            opts = self._pm.parse_hookimpl_opts(plugin, attr)
            if opts is None:
                continue
            hook = opts.get("specname") or attr
            if hook not in HOOKS:
                close = difflib.get_close_matches(hook, HOOKS, n=1)
                hint = f" (did you mean '{close[0]}'?)" if close else ""
                raise PluginLoadError(
                    f"Plugin '{name}': hook '{hook}' is not in the replication observer "
                    f"interfaces{hint}"
                )
            if opts.get("wrapper") or opts.get("hookwrapper"):
                raise PluginLoadError(
                    f"Plugin '{name}': hook '{hook}' is declared as a wrapper; observers "
                    "are plain callbacks run in order"
                )
            impl = pluggy.HookImpl(plugin, name, getattr(plugin, attr), opts)
            spec = getattr(self._pm.hook, hook).spec
            unknown = sorted(set(impl.argnames) - set(spec.argnames))
            if unknown:
                raise PluginLoadError(
                    f"Plugin '{name}': hook '{hook}' takes argument(s) {', '.join(unknown)} "
                    f"that the specification does not have ({', '.join(spec.argnames)})"
                )
            hooks.append(hook)
        return tuple(sorted(hooks, key=list(HOOKS).index))

    def register(self, plugin: object, name: str) -> tuple[str, ...]:
        """Validate and register ``plugin`` under ``name``; return its hooks.

        The new observers take part in hook calls that start after this returns.
        """
        with self._register_lock:
            if self._pm.has_plugin(name):
                raise PluginLoadError(f"Plugin '{name}' is already registered")
            hooks = self.validate(plugin, name)
            try:
                self._pm.register(plugin, name)
            except (pluggy.PluginValidationError, ValueError) as exc:
                if self._pm.has_plugin(name):
                    self._pm.unregister(name=name)
                raise PluginLoadError(f"Plugin '{name}': {exc}") from exc
            self._publish()
            return hooks

    def unregister(self, name: str) -> None:
        """Remove plugin ``name``'s observers and wait until no call is inside them.

        Calls that start after the swap do not see the plugin. If the calling
        thread is itself inside a hook call, it cannot wait for itself: it
        returns right after the swap.
        """
        with self._register_lock:
            if not self._pm.has_plugin(name):
                raise PluginLoadError(f"Plugin '{name}' is not registered")
            self._pm.unregister(name=name)
            self._publish()
        if self.thread_calls().depth:
            return
        with self._quiet:
            self._waiting += 1
            try:
                # A call's end notifies; the timeout covers a record read in the moment
                # between counting in and taking a generation (see HookCall).
                while any(record.may_reach(name) for record in list(self._records)):
                    self._quiet.wait(0.01)
            finally:
                self._waiting -= 1

    def thread_calls(self) -> ThreadCalls:
        """The calling thread's record (made on its first hook call)."""
        try:
            record: ThreadCalls = self._local.record
        except AttributeError:
            record = self._local.record = ThreadCalls()
            self._records.add(record)
        return record

    def plugin_names(self) -> frozenset[str]:
        """Names of the registered plugins."""
        return self.current.plugins

    def _publish(self) -> None:
        callbacks: dict[str, tuple[Callback, ...]] = {}
        for hook in HOOKS:
            impls = _ordered(getattr(self._pm.hook, hook).get_hookimpls())
            if impls:
                spec = getattr(self._pm.hook, hook).spec
                callbacks[hook] = tuple(
                    Callback.of(impl.plugin_name, hook, impl.function, impl.argnames, spec.argnames)
                    for impl in impls
                )
        names = frozenset(name for name, _ in self._pm.list_name_plugin())
        self.current = Generation(callbacks, names)  # one reference: calls see old or new

    # --- calls ------------------------------------------------------------------

    def calling(self) -> HookCall:
        """Enter a hook call (``with registry.calling() as generation``): count the call
        in the thread's record and take the current generation.
        """
        return HookCall(self)


class HookCall:
    """One hook call's hold on a generation (see :meth:`ObserverRegistry.calling`): a
    plain context manager, as it is entered on every hook call.

    Entering counts the call in the thread's record *before* reading ``current``;
    :meth:`ObserverRegistry.unregister` publishes the new generation *before* reading
    the records. So a call that read the old generation was counted before the
    unregister looked, and the unregister waits for it (a record counted in with no
    generation yet is waited for too); a call counted in after the unregister looked
    reads the new generation. No lock is taken: each step is one reference read or
    write, and only the record's thread writes the record.
    """

    __slots__ = ("_registry", "_record")

    def __init__(self, registry: ObserverRegistry) -> None:
        self._registry = registry

    def __enter__(self) -> Generation:
        registry = self._registry
        record = self._record = registry.thread_calls()
        depth = record.depth
        record.depth = depth + 1
        generation = registry.current
        if not depth:
            record.generation = generation
        return generation

    def __exit__(self, *exc_info: object) -> None:
        record = self._record
        record.depth -= 1
        if record.depth:
            return
        record.generation = None
        registry = self._registry
        if registry._waiting:
            with registry._quiet:
                registry._quiet.notify_all()
