"""``rpl validate --master spark://...`` on a real Spark standalone cluster: a master and
two workers started with pyspark's own ``bin/spark-class`` on loopback, the recorded run
validated clean, and a seeded fault found, by executors in the workers' JVMs."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from faults import find, rewrite
from test_validate import _insert

MASTER = "org.apache.spark.deploy.master.Master"
WORKER = "org.apache.spark.deploy.worker.Worker"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _spark_class() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent / "bin" / "spark-class"


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[str]:
    """A standalone master and two workers (1 core, 1 GiB each); its master URL."""
    env = {
        **os.environ,
        "SPARK_HOME": str(_spark_class().parent.parent),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "PYSPARK_PYTHON": sys.executable,
    }
    port, ui = _free_port(), _free_port()
    url = f"spark://127.0.0.1:{port}"
    logs = tmp_path / "spark-logs"
    logs.mkdir()
    processes = [
        subprocess.Popen(
            [str(_spark_class()), MASTER, "--host", "127.0.0.1", "--port", str(port)]
            + ["--webui-port", str(ui)],
            env=env,
            stdout=(logs / "master.log").open("wb"),
            stderr=subprocess.STDOUT,
        )
    ]
    for n in range(2):
        work = tmp_path / f"worker{n}"
        processes.append(
            subprocess.Popen(
                [str(_spark_class()), WORKER, url, "--cores", "1", "--memory", "1g"]
                + ["--work-dir", str(work), "--webui-port", str(_free_port())],
                env=env,
                stdout=(logs / f"worker{n}.log").open("wb"),
                stderr=subprocess.STDOUT,
            )
        )
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{ui}/json/", timeout=2) as page:
                    alive = [w for w in json.load(page)["workers"] if w["state"] == "ALIVE"]
                if len(alive) == 2:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, (logs / "master.log").read_text()[-2000:]
            time.sleep(0.5)
        yield url
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(30)


def _validate(url: str, run: Path, report: Path) -> tuple[int, dict[str, object]]:
    done = subprocess.run(
        [sys.executable, "-m", "rpl.core.cli", "validate", str(run / "source")]
        + [str(run / "replica"), "--master", url, "--report", str(report), "--split-mb", "0.002"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert report.exists(), done.stderr[-3000:]
    return done.returncode, json.loads(report.read_text())


def test_validate_runs_on_a_standalone_cluster(cluster: str, run: Path, tmp_path: Path) -> None:
    code, clean = _validate(cluster, run, tmp_path / "clean.json")
    assert code == 0 and clean["master"] == cluster, clean
    assert clean["splits"] > 2  # type: ignore[operator]
    path = run / "source" / "binlog.000002"
    target = find(path, _insert, nth=2)
    at = target.position + 40
    rewrite(path, lambda data: data.__setitem__(at, data[at] ^ 0x10))
    code, damaged = _validate(cluster, run, tmp_path / "damaged.json")
    assert code == 1, damaged
    found = damaged["violations"]
    assert isinstance(found, list) and found, damaged
    structure = [f for f in found if f["check"] == "structure"]
    assert [(f["node"], f["file"], f["position"]) for f in structure] == [
        ("source", "binlog.000002", target.position)
    ]
    assert "CRC32 mismatch" in structure[0]["detail"]
