"""rpl-core's build: pure Python by default; ``RPL_COMPILE=1`` compiles the hot modules.

Everything else about the distribution is in pyproject.toml. The compiled build runs the
modules below through mypyc (part of mypy: typed Python to a C extension per module),
which needs mypy, a C compiler and the interpreter's headers at build time, so it is
opt-in: ``tools/compile-core`` replaces an installed pure build by it (mypyc checks the
sources against the installed dependencies, so they come first). The compiled modules
behave as their Python source does; the ``core_compiled`` tox environment runs the core,
asynchronous replication and semisync tests against them, and the benchmark measures
both builds side by side.

The list holds the statement path (protocol, parser, executor, engine, binlog group
commit) and the replication threads. Modules left out either gain nothing (cold paths),
hold attrs classes with ``attrs.field()`` defaults that mypyc cannot compile as native
classes (the table schema; the event codec's attrs classes have none and are compiled as
Python classes, ``mypyc_attr(native_class=False)``), or keep weak references to their
instances (the observer registry). A package is listed module by module, its
``__init__.py`` included. Three helpers are written in C by hand: ``rpl.core.net._nogil``,
the group commit leader's many replies sent with the interpreter lock let go once
(rpl.core.net.nogil.send_many, which the pure build makes one send at a time) and the
single socket calls made holding it (through ctypes in the pure build), and
``rpl.core.binlog._finish``, the loop that sets a group's ``log_pos`` and CRCs
(rpl.core.binlog.events.fastpath.finish_in_python in the pure build); it links zlib; and
``rpl.core.sql._shapes``, a statement's shape key and literals in one pass over its text
(rpl.core.sql.shapes.split in the pure build).
"""

from __future__ import annotations

import os
import shutil

from setuptools import Extension, setup

COMPILED = [
    "rpl/core/binlog/dependency.py",
    "rpl/core/binlog/events/__init__.py",
    "rpl/core/binlog/events/codec.py",
    "rpl/core/binlog/events/column_types.py",
    "rpl/core/binlog/events/control.py",
    "rpl/core/binlog/events/fastpath.py",
    "rpl/core/binlog/events/gtid_log.py",
    "rpl/core/binlog/events/header.py",
    "rpl/core/binlog/events/row_values.py",
    "rpl/core/binlog/events/rows.py",
    "rpl/core/binlog/events/table_map.py",
    "rpl/core/binlog/events/temporal.py",
    "rpl/core/binlog/events/transaction.py",
    "rpl/core/binlog/gtid.py",
    "rpl/core/binlog/logfile.py",
    "rpl/core/binlog/tail.py",
    "rpl/core/binlog/writer.py",
    "rpl/core/debug.py",
    "rpl/core/delegates.py",
    "rpl/core/engine/coercion.py",
    "rpl/core/engine/locks.py",
    "rpl/core/engine/memo.py",
    "rpl/core/engine/storage.py",
    "rpl/core/errors.py",
    "rpl/core/net/binary.py",
    "rpl/core/net/nogil.py",
    "rpl/core/net/packets.py",
    "rpl/core/net/responses.py",
    "rpl/core/observer_registry.py",
    "rpl/core/replication/applier.py",
    "rpl/core/replication/relay_transaction.py",
    "rpl/core/replication/batch.py",
    "rpl/core/replication/channel.py",
    "rpl/core/replication/channel_state.py",
    "rpl/core/replication/receiver.py",
    "rpl/core/replication/relaylog.py",
    "rpl/core/replication/sender.py",
    "rpl/core/replication/services.py",
    "rpl/core/replication/statements.py",
    "rpl/core/replication/worker.py",
    "rpl/core/execution/binlogging.py",
    "rpl/core/execution/prepared.py",
    "rpl/core/execution/transactions.py",
    "rpl/core/execution/connection.py",
    "rpl/core/execution/dispatch.py",
    "rpl/core/execution/dml.py",
    "rpl/core/execution/execute.py",
    "rpl/core/execution/expressions.py",
    "rpl/core/execution/results.py",
    "rpl/core/execution/session.py",
    "rpl/core/execution/statements.py",
    "rpl/core/execution/threadpool.py",
    "rpl/core/execution/values.py",
    "rpl/core/sql/ast.py",
    "rpl/core/sql/lexer.py",
    "rpl/core/sql/parser/__init__.py",
    "rpl/core/sql/parser/accounts.py",
    "rpl/core/sql/parser/admin.py",
    "rpl/core/sql/parser/cursor.py",
    "rpl/core/sql/parser/ddl.py",
    "rpl/core/sql/parser/dml.py",
    "rpl/core/sql/parser/expressions.py",
    "rpl/core/sql/parser/replication.py",
    "rpl/core/sql/parser/session.py",
    "rpl/core/sql/shapes.py",
    "rpl/core/threads.py",
    "rpl/core/variables.py",
    "rpl/core/waits.py",
]
"""Paths under src/ of the modules the compiled build compiles."""

C_EXTENSIONS = [
    Extension("rpl.core.net._nogil", ["src/rpl/core/net/_nogil.c"]),
    Extension("rpl.core.binlog._finish", ["src/rpl/core/binlog/_finish.c"], libraries=["z"]),
    Extension("rpl.core.sql._shapes", ["src/rpl/core/sql/_shapes.c"]),
]
"""Hand-written C helpers of the compiled build (the pure build does without them)."""


COMPILED_BUILD = "build/compiled"
"""The compiled build's own build tree, emptied at each compiled build: a pure build never
packages its extensions, and a module taken off the list leaves none behind."""


def _compiled() -> dict[str, object]:
    """setup() arguments for the compiled build; none for the pure one."""
    if os.environ.get("RPL_COMPILE", "") in ("", "0"):
        return {}
    from mypyc.build import mypycify  # only the compiled build needs mypy

    shutil.rmtree(COMPILED_BUILD, ignore_errors=True)
    os.environ["MYPYPATH"] = "src"  # module names from paths under src/
    sources = [f"src/{path}" for path in COMPILED]
    # one C file per module, compiled in parallel: 1m16s against 2m20s for one C file of
    # everything on 2 cores, and no slower (oltp_insert at 16 threads, three pairs of runs)
    modules = mypycify(
        ["--explicit-package-bases", *sources],
        opt_level="3",
        multi_file=True,
        target_dir=f"{COMPILED_BUILD}/c",
    )
    return {
        "ext_modules": [*modules, *C_EXTENSIONS],
        "options": {
            "build": {"build_base": COMPILED_BUILD},
            "build_ext": {"parallel": os.cpu_count() or 1},
        },
    }


if __name__ == "__main__":  # as the build runs it; tests import COMPILED alone
    setup(**_compiled())
