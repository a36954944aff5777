"""What multi-versioning costs the engine: the commit path and point selects, before and
after, in one process.

"Before" is ``engine/storage.py`` as of a given commit (default: the one before
multi-versioning, 7998466), loaded from git under another module name; "after" is the
working tree's. Each case is timed with ``timeit`` (best of ``--repeat`` runs of
``--number`` operations), the two builds alternated, and printed as µs per operation and
the after/before ratio:

* ``point select``: begin, get one row by primary key, commit (an autocommit SELECT; after:
  a consistent read, so the read view is opened and closed);
* ``commit``: begin, update one row, commit, with no read view open;
* ``commit, view open``: the same while another transaction holds a read view (after:
  every commit records the version it replaces; memory is released when the view closes).

Run: ``python bench/mvcc_micro.py [--base COMMIT]``.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import timeit
from pathlib import Path
from types import ModuleType
from typing import Any

from rpl.core.engine import storage as after
from rpl.core.engine.schema import ColumnSchema, TableSchema

ROWS = 10_000


def load_before(commit: str) -> ModuleType:
    """engine/storage.py at ``commit``, imported as ``rpl_storage_before``."""
    root = Path(__file__).resolve().parent.parent
    source = subprocess.run(
        ["git", "-C", str(root), "show", f"{commit}:core/src/rpl/core/engine/storage.py"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    path = Path("/tmp") / f"rpl_storage_before_{commit}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("rpl_storage_before", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["rpl_storage_before"] = module
    spec.loader.exec_module(module)
    return module


def setup(module: Any) -> tuple[Any, Any]:
    engine = module.Engine(lambda: 1.0)
    engine.create_database("b")
    schema = TableSchema(
        "b",
        "t",
        (ColumnSchema("id", "INT", nullable=False), ColumnSchema("k", "INT")),
        ("id",),
    )
    table = engine.create_table(schema)
    trx = engine.begin(1)
    for i in range(ROWS):
        trx.insert(table, (i, i))
    trx.commit()
    return engine, table


def cases(module: Any, consistent: bool) -> dict[str, Any]:
    engine, table = setup(module)
    counter = iter(range(10**9))

    def point_select() -> None:
        trx = engine.begin(1)
        if consistent:
            trx.consistent_reads = True
        trx.get(table, next(counter) % ROWS)
        trx.commit()

    def commit() -> None:
        trx = engine.begin(1)
        n = next(counter)
        trx.update(table, n % ROWS, {"k": n})  # a new value every time: a real write
        trx.commit()

    return {"point select": point_select, "commit": commit, "engine": engine, "table": table}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="7998466")
    parser.add_argument("--number", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    before = load_before(args.base)
    builds = {"before": cases(before, False), "after": cases(after, True)}
    results: dict[tuple[str, str], float] = {}
    for case in ("point select", "commit"):
        for _ in range(args.repeat):
            for name, build in builds.items():
                seconds = timeit.timeit(build[case], number=args.number) / args.number
                key = (case, name)
                results[key] = min(results.get(key, seconds), seconds)
    for name, build in builds.items():
        reader = build["engine"].begin(2)  # a long reader
        if name == "after":
            reader.consistent_reads = True
        reader.get(build["table"], 0)
        build["reader"] = reader
    for _ in range(args.repeat):
        for name, build in builds.items():
            seconds = timeit.timeit(build["commit"], number=args.number) / args.number
            key = ("commit, view open", name)
            results[key] = min(results.get(key, seconds), seconds)
    kept = builds["after"]["engine"].versions_kept()
    builds["after"]["reader"].rollback()
    print(f"{'case':<20} {'before µs':>10} {'after µs':>10} {'after/before':>13}")
    for case in ("point select", "commit", "commit, view open"):
        b, a = results[(case, "before")] * 1e6, results[(case, "after")] * 1e6
        print(f"{case:<20} {b:>10.2f} {a:>10.2f} {a / b:>13.3f}")
    print(
        f"versions kept by the open view: {kept}; "
        f"after it closed: {builds['after']['engine'].versions_kept()}"
    )


if __name__ == "__main__":
    main()
