"""``rpl demo consistency``'s verdict table and HTML report.

What the table's columns count, so that a row and its verdict never disagree: ``writes
acknowledged`` writes whose client saw OK, with their commit latency (median and 95th
percentile, ms, as the client measured it); ``reads`` the reads on the secondaries, with
their latency; ``stale reads`` the reads that returned an older value than one whose
write was acknowledged before the read began (the demo's direct count); ``rpl validate``
the same count by the validator on Spark, and anything else it found.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import TYPE_CHECKING, Final

from rpl.core.demo.consistency import PAUSE_EVERY, PAUSE_SECONDS, LevelRun, median, percentile
from rpl.core.demo.report import STYLE, html_table, image, text_table

if TYPE_CHECKING:
    from matplotlib.figure import Figure

COLUMNS: Final = (
    "level",
    "writes acknowledged",
    "commit ms (median)",
    "commit ms (p95)",
    "reads",
    "read ms (p95)",
    "stale reads",
    "rpl validate",
    "verdict",
)
NOTE: Final = (
    "stale read: a read that returned an older value than one whose write was "
    "acknowledged before the read began. One secondary's applier stops for "
    f"{PAUSE_SECONDS} s out of every {PAUSE_EVERY} s."
)
_LISTED: Final = 20


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def validated(run: LevelRun) -> str:
    """The ``rpl validate`` cell: not run, or its stale-read count and what else it found."""
    if run.validate_stale is None:
        return "not run"
    cell = f"{run.validate_stale} stale reads"
    if run.validate_others:
        cell += f", {len(run.validate_others)} other violations"
    return cell


def verdict(run: LevelRun) -> str:
    """One sentence: did the level keep its promise."""
    stale = len(run.stale)
    if run.validate_stale is not None and run.validate_stale != stale:
        return f"BROKEN: rpl validate counted {run.validate_stale} stale reads, the demo {stale}"
    if run.validate_others:
        return f"BROKEN: rpl validate found {len(run.validate_others)} other violations"
    if run.allows_stale:
        if stale:
            return f"stale reads, as {run.level} allows"
        return f"no stale read this time ({run.level} allows them)"
    if stale:
        return f"BROKEN: {stale} stale reads at {run.level}"
    return "no stale read: the promise kept"


def row(run: LevelRun) -> tuple[str, ...]:
    """The run's cells, in :data:`COLUMNS` order."""
    return (
        run.level,
        str(run.writes),
        _ms(median(run.commit_ms)),
        _ms(percentile(run.commit_ms, 0.95)),
        str(run.reads),
        _ms(percentile(run.read_ms, 0.95)),
        str(len(run.stale)),
        validated(run),
        verdict(run),
    )


def verdict_table(runs: list[LevelRun]) -> str:
    """The table the demo ends with, in text, the note below it."""
    table = text_table(COLUMNS, [row(r) for r in runs], {0, len(COLUMNS) - 2})
    return f"{table}\n\n{NOTE}"


def timeline(runs: list[LevelRun]) -> Figure:
    """One panel per level: acknowledged writes (left axis) and reads (right axis) over
    time, each stale read marked where it returned, the slow secondary's applier stops
    shaded.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    drawn, axes = plt.subplots(len(runs), 1, figsize=(8, 2.4 * len(runs)), squeeze=False)
    for axis, run in zip(axes[:, 0], runs, strict=True):
        times = [s[0] for s in run.samples]
        reads = [s[2] for s in run.samples]
        axis.plot(times, [s[1] for s in run.samples], color="tab:blue", label="writes acknowledged")
        twin = axis.twinx()
        twin.plot(times, reads, color="tab:orange", label="reads")
        if run.stale:
            at = [s[0] for s in run.stale]
            twin.scatter(
                at,
                np.interp(at, times, reads) if times else [0] * len(at),
                marker="x",
                s=30,
                color="red",
                zorder=3,
                label=f"stale reads ({len(run.stale)})",
            )
        for number, (began, ended) in enumerate(run.pauses):
            axis.axvspan(
                began,
                ended,
                color="gray",
                alpha=0.2,
                label="slow secondary's applier stopped" if number == 0 else None,
            )
        axis.set_ylabel("writes")
        twin.set_ylabel("reads")
        axis.set_title(
            f"{run.level}: {len(run.stale)} stale reads, commit p95 "
            f"{_ms(percentile(run.commit_ms, 0.95))} ms",
            fontsize=10,
        )
        handles = axis.get_legend_handles_labels()
        more = twin.get_legend_handles_labels()
        axis.legend(handles[0] + more[0], handles[1] + more[1], loc="upper left", fontsize=7)
    axes[-1, 0].set_xlabel("seconds")
    drawn.tight_layout()
    return drawn


def summary(runs: list[LevelRun]) -> Figure:
    """Commit latency (median and p95) and stale reads, per level, side by side."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    drawn, (latency, stale) = plt.subplots(1, 2, figsize=(8, 3.2))
    names = [r.level for r in runs]
    places = range(len(runs))
    latency.bar([p - 0.2 for p in places], [median(r.commit_ms) or 0 for r in runs], 0.4,
                label="median")  # fmt: skip
    latency.bar([p + 0.2 for p in places], [percentile(r.commit_ms, 0.95) or 0 for r in runs],
                0.4, label="p95")  # fmt: skip
    latency.set_title("commit latency (ms)", fontsize=10)
    latency.legend(fontsize=8)
    bars = stale.bar(list(places), [len(r.stale) for r in runs], 0.5, color="red")
    stale.bar_label(bars, fontsize=8)
    stale.set_title("stale reads", fontsize=10)
    for axis in (latency, stale):
        axis.set_xticks(list(places), names, fontsize=7)
    drawn.tight_layout()
    return drawn


def _stale_listed(run: LevelRun) -> str:
    if not run.stale:
        return "none"
    shown = "; ".join(f"{at:.2f} s {reader} {what}" for at, reader, what in run.stale[:_LISTED])
    more = f"; and {len(run.stale) - _LISTED} more" if len(run.stale) > _LISTED else ""
    return shown + more


def write_html(runs: list[LevelRun], path: Path) -> None:
    """The HTML report: the verdict table, the summary plot, the timeline, per level
    its stale reads, then the validator's summary. Long lines wrap.
    """
    parts = [
        "<!doctype html><meta charset='utf-8'><title>rpl demo consistency</title>",
        STYLE,
        "<h1>rpl demo consistency</h1>",
        "<p>A single-primary group of three members; writers on the primary, readers on "
        "the two secondaries, one of which falls behind now and then; every session at "
        "the level under test. Does a read see every write acknowledged before it "
        "began?</p>",
        html_table(COLUMNS, [row(r) for r in runs], NOTE),
        image("commit latency and stale reads per level", summary(runs)),
        image("timeline per level", timeline(runs)),
    ]
    for run in runs:
        parts += [
            f"<h2>{html.escape(run.level)}</h2>",
            f"<p>Stale reads: {html.escape(_stale_listed(run))}</p>",
        ]
    if runs and runs[0].validate_summary:  # one run of the validator over every level
        parts.append(f"<h2>rpl validate</h2><pre>{html.escape(runs[0].validate_summary)}</pre>")
    path.write_text("\n".join(parts) + "\n", encoding="utf-8")
