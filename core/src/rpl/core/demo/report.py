"""The demo's verdict table and its HTML report (the timeline plotted per wait point)."""

from __future__ import annotations

import base64
import html
import io
from pathlib import Path

from rpl.core.demo.failover import Trial


def verdict_table(trials: list[Trial]) -> str:
    """The short table the demo ends with."""
    header = (f"{'wait point':<13} {'acknowledged':>12} {'lost':>5} {'rows read':>10} "
              f"{'phantom reads':>14} {'rpl validate':>13}  verdict")
    lines = [header, "-" * len(header)]
    for t in trials:
        validated = "-" if t.validate_exit is None else (
            "clean" if t.validate_exit == 0 else "VIOLATIONS")
        verdict = "nothing a client saw was lost" if t.lossless else (
            f"LOST {len(t.lost)} acknowledged writes" if t.lost else
            f"{len(t.phantom)} rows read were lost with the source")
        lines.append(f"{t.wait_point.upper():<13} {t.acknowledged:>12} {len(t.lost):>5} "
                     f"{t.reads:>10} {len(t.phantom):>14} {validated:>13}  {verdict}")
    return "\n".join(lines)


def _plot(trial: Trial) -> str:
    """The trial's timeline as a base64 PNG."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    figure, axis = plt.subplots(figsize=(8, 3.2))
    times = [s[0] for s in trial.samples]
    axis.plot(times, [s[1] for s in trial.samples], label="acknowledged writes")
    axis.plot(times, [s[2] for s in trial.samples], label="rows read")
    for at, what in trial.timeline:
        axis.axvline(at, color="gray", linestyle=":")
        axis.annotate(what, (at, 0), rotation=90, fontsize=7, va="bottom", ha="right")
    axis.set_xlabel("seconds")
    axis.set_title(f"{trial.wait_point.upper()}: {len(trial.lost)} lost, "
                   f"{len(trial.phantom)} phantom reads")
    axis.legend(loc="upper left", fontsize=8)
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100)
    plt.close(figure)
    return base64.b64encode(buffer.getvalue()).decode()


def write_html(trials: list[Trial], path: Path) -> None:
    """The HTML report: the verdict table, then per wait point its plot, its timeline and
    the validator's summary.
    """
    parts = ["<!doctype html><meta charset='utf-8'><title>rpl demo failover</title>",
             "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto}"
             "pre{background:#f4f4f4;padding:1em;overflow-x:auto}</style>",
             "<h1>rpl demo failover</h1>",
             "<p>A source and two semisync replicas; writers and readers on the source; the "
             "network to the replicas cut and the source SIGKILLed mid-run; the most "
             "advanced replica promoted. What did the clients see that the new source "
             "lacks?</p>", f"<pre>{html.escape(verdict_table(trials))}</pre>"]
    for t in trials:
        parts += [f"<h2>{t.wait_point.upper()}</h2>",
                  f"<img alt='timeline' src='data:image/png;base64,{_plot(t)}'>",
                  "<pre>" + html.escape("\n".join(f"{at:6.2f} s  {what}"
                                                  for at, what in t.timeline)) + "</pre>"]
        if t.lost or t.phantom:
            parts.append("<p>Missing on the new source: acknowledged writes "
                         f"{html.escape(', '.join(t.lost[:20]) or '-')}; rows read "
                         f"{html.escape(', '.join(t.phantom[:20]) or '-')}</p>")
        if t.validate_summary:
            parts.append(f"<h3>rpl validate</h3><pre>{html.escape(t.validate_summary)}</pre>")
    path.write_text("\n".join(parts) + "\n", encoding="utf-8")
