"""The demo's verdict table and its HTML report (the timeline plotted per wait point).

What the table's columns count, so that a row and its verdict never disagree:
``writes acknowledged`` writes whose client saw OK, ``of them lost`` those the new source
lacks; ``rows read`` rows the readers saw, ``of them lost`` those the new source lacks
(each row once); ``lost reads`` the reads of such rows, one per reader that read it (what
``rpl validate`` lists, one violation each). The plot marks every lost read at the time
it returned, and names the failure's events in its legend, not on the axes.
"""

from __future__ import annotations

import base64
import html
import io
from pathlib import Path
from typing import TYPE_CHECKING, Final

from rpl.core.demo.failover import Trial

if TYPE_CHECKING:
    from matplotlib.figure import Figure

COLUMNS: Final = (
    "wait point",
    "writes acknowledged",
    "of them lost",
    "rows read",
    "of them lost",
    "lost reads",
    "rpl validate",
    "verdict",
)
NOTE: Final = (
    "lost reads: reads of a row the new source lacks, one per reader that "
    "read it; rpl validate lists each as a violation."
)
_LISTED: Final = 20


def validated(trial: Trial) -> str:
    """The ``rpl validate`` cell: not run, clean, or how many violations it listed."""
    if trial.validate_exit is None:
        return "not run"
    if trial.validate_exit == 0:
        return "clean"
    return f"{trial.validate_violations} violations"


def verdict(trial: Trial) -> str:
    """One sentence: what the failover lost of what the clients saw."""
    if trial.lossless:
        return "nothing a client saw was lost"
    parts = []
    if trial.lost:
        parts.append(f"{len(trial.lost)} acknowledged writes lost")
    if trial.phantom:
        parts.append(
            f"{len(trial.phantom)} rows that clients read lost with the source "
            f"({len(trial.lost_reads)} reads)"
        )
    return "; ".join(parts)


def row(trial: Trial) -> tuple[str, ...]:
    """The trial's cells, in :data:`COLUMNS` order."""
    return (
        trial.wait_point.upper(),
        str(trial.acknowledged),
        str(len(trial.lost)),
        str(trial.reads),
        str(len(trial.phantom)),
        str(len(trial.lost_reads)),
        validated(trial),
        verdict(trial),
    )


def text_table(columns: tuple[str, ...], rows: list[tuple[str, ...]], left: set[int]) -> str:
    """``rows`` under ``columns`` in aligned text: the cells of the columns in ``left``
    to the left, the others (numbers) to the right; the last column unpadded.
    """
    every = [columns, *rows]
    widths = [max(len(r[i]) for r in every) for i in range(len(columns))]

    def line(cells: tuple[str, ...]) -> str:
        placed = [
            c.ljust(w) if i in left else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells[:-1], widths, strict=False))
        ]
        return "  ".join([*placed, cells[-1]])

    header = line(columns)
    return "\n".join([header, "-" * len(header), *(line(r) for r in rows)])


def verdict_table(trials: list[Trial]) -> str:
    """The table the demo ends with, in text; the note on lost reads below it."""
    table = text_table(COLUMNS, [row(t) for t in trials], {0, len(COLUMNS) - 2})
    return f"{table}\n\n{NOTE}"


def figure(trial: Trial) -> Figure:
    """The trial's timeline: acknowledged writes and rows read over time, each lost read
    marked where it returned, each event of the failure a vertical line named in the
    legend below the plot.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    drawn, axis = plt.subplots(figsize=(8, 4.2))
    times = [s[0] for s in trial.samples]
    reads = [s[2] for s in trial.samples]
    axis.plot(times, [s[1] for s in trial.samples], label="writes acknowledged")
    axis.plot(times, reads, label="rows read")
    if trial.lost_reads:
        returned = [r[0] for r in trial.lost_reads]
        axis.scatter(
            returned,
            np.interp(returned, times, reads) if times else [0] * len(returned),
            marker="x",
            s=60,
            color="red",
            zorder=3,
            label=f"lost reads ({len(trial.lost_reads)}): the row is not on the new source",
        )
    styles = ["dotted", "dashed", "dashdot", (0, (1, 4)), (0, (5, 2, 1, 2))]
    for number, (at, what) in enumerate(trial.timeline):
        axis.axvline(
            at, color="gray", linestyle=styles[number % len(styles)], label=f"{at:.1f} s  {what}"
        )
    axis.set_xlabel("seconds")
    axis.set_title(
        f"{trial.wait_point.upper()}: {len(trial.lost)} acknowledged writes lost, "
        f"{len(trial.lost_reads)} lost reads",
        fontsize=10,
    )
    drawn.legend(
        *axis.get_legend_handles_labels(), loc="lower center", ncol=2, fontsize=8, frameon=False
    )
    drawn.tight_layout(rect=(0, 0.24, 1, 1))
    return drawn


def embedded_png(drawn: Figure) -> str:
    """``drawn`` as a base64 PNG (for an ``<img src='data:...'>``), the figure closed."""
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    drawn.savefig(buffer, format="png", dpi=100)
    plt.close(drawn)
    return base64.b64encode(buffer.getvalue()).decode()


def image(alt: str, drawn: Figure) -> str:
    """An ``<img>`` holding ``drawn`` (the figure closed)."""
    return f"<img alt='{html.escape(alt)}' src='data:image/png;base64,{embedded_png(drawn)}'>"


def _listed(keys: list[str]) -> str:
    if not keys:
        return "none"
    more = f" and {len(keys) - _LISTED} more" if len(keys) > _LISTED else ""
    return ", ".join(keys[:_LISTED]) + more


def html_table(columns: tuple[str, ...], rows: list[tuple[str, ...]], note: str) -> str:
    """``rows`` under ``columns`` as an HTML table, ``note`` below it."""
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>" for cells in rows
    )
    return (
        f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
        f"<p class='note'>{html.escape(note)}</p>"
    )


STYLE: Final = (
    "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto;padding:0 1em}"
    "pre{background:#f4f4f4;padding:1em;white-space:pre-wrap;overflow-wrap:anywhere}"
    "table{border-collapse:collapse}th,td{border:1px solid #ccc;padding:.3em .5em;"
    "text-align:right;vertical-align:top}th:first-child,td:first-child,th:last-child,"
    "td:last-child,td:nth-last-child(2){text-align:left}.note{font-size:90%}"
    "img{max-width:100%}</style>"
)


def write_html(trials: list[Trial], path: Path) -> None:
    """The HTML report: the verdict table, then per wait point its plot, its timeline,
    what the new source lacks and the validator's summary. Nothing in it is wider than
    the page: long lines wrap.
    """
    parts = [
        "<!doctype html><meta charset='utf-8'><title>rpl demo failover</title>",
        STYLE,
        "<h1>rpl demo failover</h1>",
        "<p>A source and two semisync replicas; writers and readers on the source; the "
        "network to the replicas cut and the source SIGKILLed mid-run; the most "
        "advanced replica promoted. What did the clients see that the new source "
        "lacks?</p>",
        html_table(COLUMNS, [row(t) for t in trials], NOTE),
    ]
    for t in trials:
        parts += [
            f"<h2>{t.wait_point.upper()}</h2>",
            image(f"{t.wait_point.upper()} timeline", figure(t)),
            "<pre>"
            + html.escape("\n".join(f"{at:6.2f} s  {what}" for at, what in t.timeline))
            + "</pre>",
            "<p>Missing on the new source: acknowledged writes "
            f"{html.escape(_listed(t.lost))}; rows read "
            f"{html.escape(_listed(t.phantom))}.</p>",
        ]
        if t.lost_reads:
            parts.append(
                "<p>Lost reads: "
                + html.escape(
                    "; ".join(
                        f"{reader} read {key} at {at:.2f} s"
                        for at, reader, key in t.lost_reads[:_LISTED]
                    )
                )
                + "</p>"
            )
        if t.validate_summary:
            parts.append(f"<h3>rpl validate</h3><pre>{html.escape(t.validate_summary)}</pre>")
    path.write_text("\n".join(parts) + "\n", encoding="utf-8")
