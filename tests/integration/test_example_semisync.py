"""A third party runs the conformance suite with tox: examples/inline_ack_semisync's own
tox.ini, from a fresh environment holding only tox, installs the example and the folders
it names and runs the suite. Every test whose requirements the example leaves open passes,
and exactly the tests that need one of the requirements it closes are skipped.

One lossless-failover trial (``RPL_FAILOVER_TRIALS=1``), not the example's default seven:
the trials are the semisync environment's to run; here they only have to run.
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path
from xml.etree import ElementTree

from rpl.core.testing.suite import SemisyncSuite
from rpl.core.testing.suite.requirements import required_by

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "inline_ack_semisync"
CLOSED = {
    "ack_receiver_thread",
    "after_commit_wait_point",
    "wait_point_switch_at_runtime",
    "wait_for_slave_count",
}
"""The requirements the example's tests/test_conformance.py closes."""


def suite_tests() -> dict[str, set[str]]:
    """Each test of SemisyncSuite and the requirements it declares."""
    return {
        name: set(required_by(getattr(SemisyncSuite, name)))
        for name in dir(SemisyncSuite)
        if name.startswith("test_")
    }


def test_example_plugin_imports_nothing_from_rpl_core() -> None:
    code = (
        "import sys, rpl_inline_ack_semisync.plugin; "
        "print(' '.join(m for m in sys.modules if m.startswith('rpl.core')))"
    )
    env = {**os.environ, "PYTHONPATH": str(EXAMPLE / "src")}
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == []


def test_example_runs_the_conformance_suite_with_tox(tmp_path: Path) -> None:
    python = tmp_path / "tox-venv" / "bin" / "python"
    venv.EnvBuilder(with_pip=True).create(python.parents[1])
    subprocess.run([str(python), "-m", "pip", "install", "-q", "tox>=4"], check=True)
    junit = tmp_path / "junit.xml"
    env = {**os.environ, "RPL_FAILOVER_TRIALS": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    env.pop("RPL_SUITE_OPEN", None)
    result = subprocess.run(
        [
            str(python),
            "-m",
            "tox",
            "-c",
            str(EXAMPLE / "tox.ini"),
            "--workdir",
            str(tmp_path / "tox"),
            "--",
            f"--junitxml={junit}",
        ],
        cwd=EXAMPLE,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-3000:]
    outcomes: dict[str, str] = {}
    for case in ElementTree.parse(junit).iter("testcase"):
        kinds = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
        outcomes[f"{case.get('classname')}::{case.get('name')}"] = (kinds or ["passed"])[0]
    suite = {
        name: outcome for name, outcome in outcomes.items() if "TestInlineAckSemisync::" in name
    }
    expected = {
        name: "skipped" if needs & CLOSED else "passed" for name, needs in suite_tests().items()
    }
    assert {name.rsplit("::", 1)[1]: outcome for name, outcome in suite.items()} == expected
    trials = [
        outcome for name, outcome in outcomes.items() if "TestInlineAckLosslessFailover::" in name
    ]
    assert trials == ["passed"], outcomes
