"""The failover demo's verdict and report say what they mean: the table's columns count
what their names say and agree with the verdict and with ``rpl validate``; the plot marks
the lost reads and its labels neither collide nor leave the figure; the HTML report,
rendered in headless Chromium at 1400 px, is no wider than the window.

The trials are made up (an AFTER_COMMIT run whose two lost rows were each read by both
readers, four lost reads, as in the run the issue describes), so the test needs no
servers; tests/sandbox/test_demo.py runs the real demo.
"""

from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rpl.core.demo.failover import Trial
from rpl.core.demo.report import COLUMNS, figure, verdict_table, write_html

WIDTH = 1400
TIMELINE = [
    (0.0, "8 writers and 2 readers started"),
    (5.02, "network to the replicas cut"),
    (5.33, "source SIGKILLed"),
    (6.1, "replica1 promoted (1234 transactions)"),
    (6.4, "replica2 repointed to replica1 and caught up"),
]
LONG_FINDING = (
    "  [history] replica1 history history.jsonl:2417: read lost: reader-1 read "
    "d.t key 80000412 = 'w8', committed elsewhere, but the node's binlog does not "
    "hold it (/tmp/rpl-demo-very-long-directory-name/after_commit/replica1/"
    "binlog.000002)"
)


def trials(tmp_path: Path) -> list[Trial]:
    samples = [(t / 5, 40 * t, 90 * t) for t in range(27)]
    after_sync = Trial(
        "after_sync",
        tmp_path / "after_sync",
        acknowledged=1250,
        reads=3040,
        timeline=TIMELINE,
        samples=samples,
        validate_exit=0,
        validate_summary="result: CLEAN",
    )
    after_commit = Trial(
        "after_commit",
        tmp_path / "after_commit",
        acknowledged=1251,
        reads=9807,
        phantom=["20000412", "80000412"],
        lost_reads=[
            (5.20, "reader-1", "20000412"),
            (5.21, "reader-2", "20000412"),
            (5.25, "reader-1", "80000412"),
            (5.26, "reader-2", "80000412"),
        ],
        timeline=TIMELINE,
        samples=samples,
        validate_exit=1,
        validate_violations=4,
        validate_summary="\n".join([LONG_FINDING] * 4 + ["result: 4 VIOLATIONS"]),
    )
    return [after_sync, after_commit]


def test_table_columns_count_what_they_say(tmp_path: Path) -> None:
    table = verdict_table(trials(tmp_path))
    header, _, sync, commit = table.splitlines()[:4]
    for name in COLUMNS:
        assert name in header
    assert sync.split()[:7] == ["AFTER_SYNC", "1250", "0", "3040", "0", "0", "clean"]
    assert commit.split()[:8] == ["AFTER_COMMIT", "1251", "0", "9807", "2", "4", "4", "violations"]
    assert "2 rows that clients read lost with the source (4 reads)" in commit
    assert "one per reader" in table


def test_plot_marks_lost_reads_and_its_labels_fit(tmp_path: Path) -> None:
    drawn = figure(trials(tmp_path)[1])
    drawn.canvas.draw()  # lays the legend out, as saving the PNG does
    canvas: Any = drawn.canvas  # Agg's: it has a renderer
    renderer = canvas.get_renderer()
    marks = [c for c in drawn.axes[0].collections if str(c.get_label()).startswith("lost reads")]
    assert len(marks) == 1
    assert sorted(np.asarray(marks[0].get_offsets())[:, 0].tolist()) == [5.20, 5.21, 5.25, 5.26]
    page = drawn.bbox
    labels = [t for legend in drawn.legends for t in legend.get_texts()]
    assert {t.get_text().split("  ", 1)[-1] for t in labels} >= {w for _, w in TIMELINE}
    boxes = [t.get_window_extent(renderer) for t in [*labels, *drawn.axes[0].texts]]
    for box in boxes:
        assert page.x0 <= box.x0 and box.x1 <= page.x1 and page.y0 <= box.y0 <= page.y1
    for number, box in enumerate(boxes):
        assert not any(box.overlaps(other) for other in boxes[number + 1 :])


def chromium(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    binary = shutil.which("chromium")
    if binary is None:
        pytest.fail("chromium is not installed (tools/system-packages --chromium)")
    return subprocess.run(
        [
            binary,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={cwd / 'profile'}",
            "--hide-scrollbars",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )


MEASURE = """<script>
const page = document.documentElement.clientWidth;
const wide = [...document.querySelectorAll('body *')].filter(e =>
    e.getBoundingClientRect().right > page + 1 || e.scrollWidth > e.clientWidth + 1);
document.body.dataset.wide = wide.map(e => e.tagName).join(',') || 'nothing';
document.body.dataset.scrollWidth = document.documentElement.scrollWidth;
</script>"""


def test_report_renders_in_chromium_within_the_window(tmp_path: Path) -> None:
    report = tmp_path / "report.html"
    write_html(trials(tmp_path), report)
    measured = tmp_path / "measured.html"
    measured.write_text(report.read_text() + MEASURE)
    dom = chromium(f"--window-size={WIDTH},1000", "--dump-dom", measured.as_uri(), cwd=tmp_path)
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert 'data-wide="nothing"' in dom.stdout, (
        "wider than the window: " + dom.stdout[dom.stdout.find("data-wide") :][:80]
    )
    assert f'data-scroll-width="{WIDTH}"' in dom.stdout
    text = dom.stdout
    for name in (
        "writes acknowledged",
        "of them lost",
        "lost reads",
        "4 violations",
        "acknowledged writes none",
        "reader-2 read 80000412 at 5.26 s",
    ):
        assert name in text, name
    assert "<td>-</td>" not in text
    shot = tmp_path / "report.png"
    done = chromium(
        f"--screenshot={shot}", f"--window-size={WIDTH},2400", report.as_uri(), cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr[-2000:]
    header = shot.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", header[16:24]) == (WIDTH, 2400)
    assert shot.stat().st_size > 50_000, "the screenshot is (nearly) blank"
