"""The twins' drift figures: Figure 2 (Section 6, the attention twins) and the equivariance
diagnostic's one figure per diagnosis (its three twins, drawn as Figure 2 draws them)."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import matplotlib.ticker
from matplotlib.patches import Patch

from ..optim import cards
from .figures import FAINT, MUTED, house_style, mark_published, published_handle, span


# --- Figure 2 (Section 6): attention gauge drift ------------------------------------------------

# The series (optimizer, twin), line style and marker (attention.md §11.4); the noise twins are the
# S6 records' sigma = 1e-7. Legend label, series, colour (the optimizer's card), style, marker:
_TWIN_TEXT = {"gauge": "gauge twin", "noise": "noise twin ($10^{-7}$)"}
_FIGURE2 = [((cards.ADAM, "gauge"), "-", "o"), ((cards.ADAM, "noise"), ":", "s"),
            ((cards.MUON, "gauge"), "-", "o"), ((cards.MUON, "noise"), ":", "s"),
            ((cards.SGD, "gauge"), "-", "^"), ((cards.SCALAR_ADAM, "gauge"), "-", "D")]
FIGURE2_SERIES = [(f"{cards.short(opt)}, {_TWIN_TEXT[twin]}", (opt, twin), cards.colour(opt), style, marker)
                  for (opt, twin), style, marker in _FIGURE2]


# The published rows (Table 3's and the reference log's) of each plotted series.
FIGURE2_ROWS = {"Adam gauge": (cards.ADAM, "gauge"), "Adam noise 1e-7": (cards.ADAM, "noise"),
                "Muon gauge": (cards.MUON, "gauge"), "Muon noise 1e-7": (cards.MUON, "noise"),
                "SGD gauge": (cards.SGD, "gauge"), "scalar-Adam gauge": (cards.SCALAR_ADAM, "gauge")}


def figure2_published(values, final_step: int) -> dict[tuple[str, str], list[tuple[int, float]]]:
    """The published drifts of each Figure 2 series as [(step, drift)]: every value whose row names
    a plotted series and whose quantity is drift_<step> (drift_final: at ``final_step``, the paper's
    run length). Pass published.SECTION6, and any reference trajectory beside it."""
    out: dict[tuple[str, str], list[tuple[int, float]]] = {}
    for v in values:
        which, quantity = FIGURE2_ROWS.get(v.row), v.quantity.removeprefix("drift_")
        if which is None or quantity == v.quantity or not (quantity.isdigit() or quantity == "final"):
            continue
        point = (final_step if quantity == "final" else int(quantity), v.value)
        if point not in out.setdefault(which, []):
            out[which].append(point)
    return {which: sorted(points) for which, points in out.items()}


def band_of(curves: list[list[tuple[int, float]]]) -> list[tuple[int, float, float]]:
    """[(step, min, max)] over two or more curves, at the steps where all are positive; [] else."""
    if len(curves) < 2:
        return []
    steps = [s for s, _ in curves[0]]
    at = [dict(curve) for curve in curves]
    values = {s: [a.get(s, math.nan) for a in at] for s in steps}
    return [(s, min(v), max(v)) for s, v in values.items() if all(x > 0 for x in v)]


def figure2_annotations(ax, curves: dict[tuple[str, str], list[tuple[int, float]]]) -> None:
    """Adam's structural split at step 1 (its power of ten from the records) and Muon's chaos at
    step 100, each where the records reach it; the texts sit clear of the curves and the legend."""
    at = lambda which, step: dict(curves[which]).get(step)
    adam1, noise1 = at((cards.ADAM, "gauge"), 1), at((cards.ADAM, "noise"), 1)
    if adam1 and noise1:
        k = math.floor(math.log10(adam1 / noise1))
        ax.annotate(f"structural split:\none step, $10^{{{k}}}\\times$ the noise twin", xy=(2, adam1),
                    xytext=(1.0, 0.985), textcoords=ax.get_xaxis_transform(), va="top",  # left of the rise
                    fontsize=8.2, color=cards.colour(cards.ADAM),
                    arrowprops={"arrowstyle": "->", "color": cards.colour(cards.ADAM), "lw": 0.8,
                                "connectionstyle": "arc3,rad=0.25"})
    muon100 = at((cards.MUON, "gauge"), 100)
    if muon100:
        ax.annotate("chaos: Muon's gauge\nand noise twins\ntrace one curve", xy=(101, muon100),
                    xytext=(0.99, 2.4e-4), textcoords=ax.get_yaxis_transform(), ha="right",  # clear of the legend
                    fontsize=8.2, color=cards.colour(cards.MUON),
                    arrowprops={"arrowstyle": "->", "color": cards.colour(cards.MUON), "lw": 0.8,
                                "connectionstyle": "arc3,rad=0.3"})


def figure2(curves: dict[tuple[str, str], list[tuple[int, float]]],
            published: dict[tuple[str, str], list[tuple[int, float]]] | None = None,
            spread: dict[tuple[str, str], list[list[tuple[int, float]]]] | None = None):
    """Drift between twins against step + 1, log-log. ``curves`` maps (optimizer, twin) to the
    S6 record's [(step, drift)]; every series is required and every value must be positive.
    ``published`` (figure2_published()) maps a series to the paper's [(step, drift)], drawn as open
    diamonds in the series' colour; ``spread`` maps a series to several pairs' curves (other seeds),
    shaded from their min to their max where there are two or more. The axes hold the spec's range
    and every line, band and marker."""
    house_style()
    published, spread = published or {}, spread or {}
    fig, ax = plt.subplots(figsize=(6.4, 2.62))
    xs, ys = [0.9, 2400], [6e-8, 4]  # the spec's range (attention.md §11.4), widened to what is drawn
    handles, bands = [], []
    for label, which, colour, style, marker in FIGURE2_SERIES:
        if which not in curves:
            raise ValueError(f"Figure 2: no record for the {label} series")
        steps, drifts = zip(*curves[which])
        bad = [s for s, d in zip(steps, drifts) if not d > 0]
        if bad:
            raise ValueError(f"Figure 2: {label} has drift <= 0 (or missing) at step(s) {bad}; "
                             "a log axis cannot show it")
        handles += ax.plot([s + 1 for s in steps], drifts, label=label, color=colour, ls=style, marker=marker, lw=1.8,
                           ms=3.4, mew=0, alpha=0.95, zorder=3)
        band = band_of(spread.get(which, []))
        if band:
            ax.fill_between([s + 1 for s, _, _ in band], [lo for _, lo, _ in band], [hi for _, _, hi in band],
                            color=colour, alpha=0.16, linewidth=0, zorder=2)
            ys += [v for _, lo, hi in band for v in (lo / 1.5, hi * 1.5)]
            bands.append(colour)
        paper = [(s, d) for s, d in published.get(which, []) if d > 0]
        if paper:
            mark_published(ax, [s + 1 for s, _ in paper], [d for _, d in paper], colour=colour, s=26)
        drawn = [(s + 1, d) for s, d in zip(steps, drifts)] + [(s + 1, d) for s, d in paper]
        xs += [x * f for x, _ in drawn for f in (1 / 1.1, 1.1)]  # a margin where a point leaves the range
        ys += [y * f for _, y in drawn for f in (1 / 1.5, 1.5)]
    if bands:
        handles.append(Patch(color=bands[0], alpha=0.16, linewidth=0, label="range over the\nD.5 seed pairs"))
    if any(published.get(which) for _, which, *_ in FIGURE2_SERIES):
        handles.append(published_handle("published"))
    figure2_annotations(ax, curves)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks([1, 2, 11, 101, 1001])
    ax.set_xticklabels(["0", "1", "10", "100", "1000"])
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_xlim(*span(xs, 0.0, 0.0, log=True))
    ax.set_ylim(*span(ys, 0.0, 0.0, log=True))
    ax.set_xlabel("training step")
    ax.set_ylabel("relative logit distance between twins")
    ax.grid(True, which="major")
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.005, 1.02), fontsize=8.0, frameon=False,
              labelspacing=0.4, handlelength=1.9)
    fig.tight_layout()
    return fig


# --- the equivariance diagnostic (beyond the paper) ----------------------------------------------

TWIN_STYLE = {  # colour, line style, marker: Figure 2's convention (gauge solid, noise dotted)
    "gauge": ("#D55E00", "-", "o"),
    "noise": ("#5A5A5A", ":", "s"),
    "identity": ("#0072B2", "--", "^"),
}
_OUTPUT_NAME = {"sensing": "$W=UV^\\top$", "attention": "validation logits"}


def diagnosis_figure(report: dict):
    """Drift of the three twins against step + 1, log–log (as Figure 2), with the floor and σ.

    The identity twin is drawn only where it is non-zero (a bit-identical twin has no point on a
    log axis); a note says so.
    """
    house_style()
    fig, ax = plt.subplots(figsize=(5.2, 2.7))
    x = [s + 1 for s in report["curve"]["step"]]
    limits = report["thresholds"]
    labels = {"gauge": "gauge twin", "noise": f"noise twin ($\\sigma$={limits['sigma']:.1e})",
              "identity": "$A{=}I$ twin"}
    low = limits["eps"] / 10
    for twin in ("gauge", "noise", "identity"):
        ys = [y if (math.isfinite(y) and y > 0) else math.nan for y in report["curve"][twin]]
        if all(math.isnan(y) for y in ys):
            continue
        colour, style, marker = TWIN_STYLE[twin]
        ax.plot(x, ys, ls=style, color=colour, lw=1.6, marker=marker, ms=2.6, mew=0, alpha=0.95,
                label=labels[twin], zorder=3)
    ax.axhline(limits["floor"], color=FAINT, lw=0.9, dashes=(4, 3), zorder=2)
    ax.text(1.05, limits["floor"] * 1.6, f"round-off floor {limits['floor']:.1e}", fontsize=7.6,
            color=MUTED, va="bottom")
    note = ("$A{=}I$ twin: bit-identical at every step" if report["evidence"].get("identity_first_difference") is None
            and report["verdict"] != "determinism failure" else "$A{=}I$ twin: NOT bit-identical")
    ax.text(1.02, 0.02, note, transform=ax.transAxes, ha="left", va="bottom", fontsize=7.6, color=MUTED)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(low, 4)
    ax.set_xlim(0.9, x[-1] * 1.15)
    ax.set_xlabel("training step + 1")
    ax.set_ylabel(f"relative distance of {_OUTPUT_NAME.get(report['testbed']['testbed'], 'outputs')}")
    ax.set_title(f"{report['optimizer']} on {report['testbed']['testbed']} ({report['environment']['dtype']}): "
                 f"{report['verdict']}", fontsize=9.0)
    ax.grid(True, which="major")
    ax.legend(loc="upper left", bbox_to_anchor=(1.005, 1.02), frameon=False, fontsize=8.0)
    return fig


