"""Figures in the paper's house style (spec: sensing.md §15), drawn from run records only."""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402,F401
from matplotlib.patches import Patch  # noqa: E402

from . import select  # noqa: E402

INK, MUTED, FAINT = "#1A1A1A", "#5A5A5A", "#9A9A9A"
CLASS_COLOUR = {"eq": "#0072B2", "cw": "#D55E00"}
METHOD_COLOUR = {
    "gd": "#000000", "adam": "#D55E00", "muon": "#0072B2", "shampoo": "#009E73",
    "scalar_adam": "#56B4E9", "rmsprop": "#E69F00", "adafactor": "#CC79A7", "lion": "#C7A100",
    "signum": "#7A5C00",
}
LABEL = {"muon": "Muon", "gd": "GD", "scalar_adam": "scalar-Adam ($p{=}0$)", "shampoo": "Shampoo",
         "lion": "Lion", "signum": "signum", "rmsprop": "RMSProp", "adafactor": "Adafactor",
         "adam": "Adam", "momentum": "momentum"}


def house_style() -> None:
    plt.rcParams.update({
        "font.family": "serif",
        "font.serif": ["Times New Roman", "Nimbus Roman No9 L", "Nimbus Roman", "DejaVu Serif"],
        "mathtext.fontset": "stix", "font.size": 9.5, "xtick.labelsize": 8.5, "ytick.labelsize": 8.5,
        "axes.spines.top": False, "axes.spines.right": False, "axes.edgecolor": "#3C3C3C",
        "axes.linewidth": 0.8, "grid.color": "#E8E8E8", "grid.linewidth": 0.6,
        "axes.axisbelow": True, "text.color": INK, "axes.labelcolor": INK,
        "pdf.fonttype": 42, "svg.hashsalt": "gaugelab",
    })


def save(fig, pdf: str | Path, png: str | Path) -> None:
    """Vector PDF at 300 dpi and a PNG twin at 200 dpi, both byte-stable (no dates)."""
    kw = {"bbox_inches": "tight", "pad_inches": 0.03}
    fig.savefig(pdf, dpi=300, metadata={"CreationDate": None, "ModDate": None}, **kw)
    fig.savefig(png, dpi=200, metadata={"Software": None}, **kw)
    plt.close(fig)


def value_label(rec: float) -> str:
    if rec < 5e-4:
        mantissa, exponent = f"{rec:.1e}".split("e")
        return f"{mantissa}$\\times10^{{{int(exponent)}}}$"
    return f"{rec:.3f}"


def figure1(rows: list[dict], strict: bool = True):
    """The zoo map: one bar per selected method, best recovery at the top, the eq/cw gap shaded."""
    house_style()
    rows = sorted((r for r in rows if math.isfinite(r["rec"])), key=lambda r: r["rec"])
    if strict and len(rows) != 9:
        raise AssertionError(f"Figure 1 needs the 9 zoo rows, got {len(rows)}")
    split = select.clean_split_from_values([(r["method"], r["rec"]) for r in rows])
    if strict and split["verdict"] != "CLEAN":
        raise AssertionError("Figure 1: eq_max < cw_min does not hold (the split is not clean)")
    fig, ax = plt.subplots(figsize=(5.75, 2.36))
    top = len(rows) - 1
    ys = [top - i for i in range(len(rows))]
    for y, r in zip(ys, rows):
        ax.barh(y, r["rec"], height=0.66, alpha=0.92, color=CLASS_COLOUR[select.klass(r["method"])],
                edgecolor="white", linewidth=0.6, zorder=3)
        ax.text(r["rec"] + 0.010, y, value_label(r["rec"]), va="center", fontsize=8.6, color=MUTED)
    if split["verdict"] == "CLEAN":
        lo, hi = split["eq_max"], split["cw_min"]
        mid = 0.5 * (lo + hi)
        ax.axvspan(lo, hi, color="#F1F1F1", zorder=1, linewidth=0)
        ax.plot([mid, mid], [-0.6, top + 0.6], ls="--", lw=0.8, color=FAINT, zorder=2)
        ax.text(mid, top - 1.5, "empty gap\n(this budget)", style="italic", fontsize=8.4, color=MUTED,
                ha="center", va="center", zorder=4,
                bbox={"boxstyle": "round,pad=0.25", "fc": "white", "ec": "none"})
    ax.set_yticks(ys)
    ax.set_yticklabels([LABEL[r["method"]] for r in rows], fontsize=9.0)
    for tick, r in zip(ax.get_yticklabels(), rows):
        tick.set_color(CLASS_COLOUR[select.klass(r["method"])])
    ax.tick_params(axis="y", length=0)
    ax.grid(axis="x")
    ax.set_xlim(0, 0.72)
    ax.set_ylim(-0.7, top + 0.9)
    ax.set_xlabel("ground-truth recovery error $\\|W-X^\\ast\\|_F/\\|X^\\ast\\|_F$\n"
                  "(lower = better recovery of the planted matrix)")
    legend = ax.legend(handles=[Patch(color=CLASS_COLOUR["eq"], label="gauge-equivariant"),
                                Patch(color=CLASS_COLOUR["cw"], label="coordinate-wise")],
                       loc="upper right", frameon=True, fontsize=8.2, framealpha=0.96)
    legend.get_frame().set_edgecolor("#DDDDDD")
    return fig


def figure_dial(envelope: list[dict], gd_erank: float, planted_rank: int):
    """The dial: effective rank of the tuned solution against p (RMS scalar), Adam on the left.

    ``envelope``: rows with p, erank, rec (arm A, RMS); ``gd_erank``: Table 2's GD row, read from
    the zoo's records; both drawn as reference lines with the planted rank.
    """
    house_style()
    rows = sorted(envelope, key=lambda r: -r["p"])
    ps = [r["p"] for r in rows]
    eranks = [round(r["erank"], 1) for r in rows]
    colour = METHOD_COLOUR["adam"]
    fig, ax = plt.subplots(figsize=(4.3, 2.8))
    ax.plot(ps, eranks, color=colour, lw=2.0, zorder=3)
    ax.scatter(ps, eranks, s=34, color=colour, edgecolors="white", linewidths=0.7, zorder=4)
    box = {"boxstyle": "round,pad=0.2", "fc": "white", "ec": "none"}
    if math.isfinite(gd_erank):
        ax.axhline(gd_erank, color="black", lw=1.1, dashes=(5, 3), zorder=2)
        ax.text(0.80, gd_erank + 0.11, f"GD  ({gd_erank:.2f})", ha="left", va="bottom", fontsize=8.4, bbox=box)
    ax.axhline(planted_rank, color=FAINT, lw=1.0, ls=":", zorder=2)
    ax.text(0.80, planted_rank + 0.10, f"planted rank  ({planted_rank})", ha="left", va="bottom",
            fontsize=8.4, color=MUTED, bbox=box)
    first, last = rows[0], rows[-1]
    ax.text(1.02, 16.9, f"Adam ($p{{=}}1$)\nrec {first['rec']:.3f}", ha="left", va="top", fontsize=8.4, color=colour)
    ax.annotate(f"scalar-Adam ($p{{=}}0$)\nrec {last['rec']:.3f}", xy=(0.0, round(last["erank"], 1)),
                xytext=(0.0, 7.5), ha="right", va="bottom", fontsize=8.4, color=colour,
                arrowprops={"arrowstyle": "->", "color": colour, "lw": 0.8})
    ax.set_xticks([1, 0.75, 0.5, 0.25, 0])
    ax.set_xticklabels(["1\n(Adam)", "0.75", "0.5", "0.25", "0\n(scalar)"])
    ax.set_xlim(1.08, -0.12)
    ax.set_ylim(2.2, 17.0)
    ax.set_xlabel("preconditioner anisotropy $p$")
    ax.set_ylabel("effective rank of solution")
    ax.grid(axis="y")
    return fig


def figure_lr_sensitivity(rows: list[dict]):
    """App. D.2: mean recovery against the learning rate per method (log lr), the flow-limit
    point (smallest lr that interpolates) ringed. ``rows``: method, lr, rec, flow_limit."""
    house_style()
    fig, ax = plt.subplots(figsize=(4.3, 2.6))
    methods = list(dict.fromkeys(r["method"] for r in rows))
    for method in methods:
        mine = sorted((r for r in rows if r["method"] == method), key=lambda r: r["lr"])
        colour = METHOD_COLOUR.get(method, INK)
        ax.plot([r["lr"] for r in mine], [r["rec"] for r in mine], color=colour, lw=1.6, marker="o", ms=3.8,
                label=LABEL.get(method, method), zorder=3)
        for r in mine:
            if r["flow_limit"] and math.isfinite(r["rec"]):
                ax.scatter([r["lr"]], [r["rec"]], s=70, facecolors="none", edgecolors=colour, linewidths=1.0,
                           zorder=4)
    ax.set_xscale("log")
    ax.set_xlabel("learning rate $\\eta$")
    ax.set_ylabel("recovery error")
    ax.set_ylim(bottom=0)
    ax.grid(axis="y")
    legend = ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize=8.2,
                       title="ringed: flow limit\n(smallest lr that\ninterpolates)", title_fontsize=7.6)
    legend.get_title().set_color(MUTED)
    return fig


# --- Figure 2 (Section 6): attention gauge drift ------------------------------------------------

# Legend label, (optimizer, twin, sigma of a noise twin), colour, line style, marker (attention.md §11.4)
FIGURE2_SERIES = [
    ("Adam, gauge twin", ("adam", "gauge"), "#D55E00", "-", "o"),
    ("Adam, noise twin ($10^{-7}$)", ("adam", "noise"), "#D55E00", ":", "s"),
    ("Muon, gauge twin", ("muon", "gauge"), "#0072B2", "-", "o"),
    ("Muon, noise twin ($10^{-7}$)", ("muon", "noise"), "#0072B2", ":", "s"),
    ("SGD, gauge twin", ("sgd", "gauge"), "#8C8C8C", "-", "^"),
    ("scalar-Adam, gauge twin", ("scalar_adam", "gauge"), "#56B4E9", "-", "D"),
]


def figure2(curves: dict[tuple[str, str], list[tuple[int, float]]]):
    """Drift between twins against step + 1, log-log. ``curves`` maps (optimizer, twin) to the
    S6 record's [(step, drift)]; every series is required and every value must be positive."""
    house_style()
    fig, ax = plt.subplots(figsize=(6.4, 2.62))
    for label, which, colour, style, marker in FIGURE2_SERIES:
        if which not in curves:
            raise ValueError(f"Figure 2: no record for the {label} series")
        steps, drifts = zip(*curves[which])
        bad = [s for s, d in zip(steps, drifts) if not d > 0]
        if bad:
            raise ValueError(f"Figure 2: {label} has drift <= 0 (or missing) at step(s) {bad}; a log axis cannot show it")
        ax.plot([s + 1 for s in steps], drifts, label=label, color=colour, ls=style, marker=marker, lw=1.8,
                ms=3.4, mew=0, alpha=0.95, zorder=3)
    at = lambda which, step: dict(curves[which]).get(step)
    adam1, noise1 = at(("adam", "gauge"), 1), at(("adam", "noise"), 1)
    if adam1 and noise1:
        k = math.floor(math.log10(adam1 / noise1))
        ax.annotate(f"structural split:\none step, $10^{{{k}}}\\times$ the noise twin", xy=(2, adam1),
                    xytext=(2.4, 0.5), fontsize=8.2, color="#D55E00",
                    arrowprops={"arrowstyle": "->", "color": "#D55E00", "lw": 0.8,
                                "connectionstyle": "arc3,rad=0.25"})
    muon100 = at(("muon", "gauge"), 100)
    if muon100:
        ax.annotate("chaos: Muon's gauge and\nnoise twins trace one curve", xy=(101, muon100),
                    xytext=(200, 2.4e-3), fontsize=8.2, color="#0072B2",
                    arrowprops={"arrowstyle": "->", "color": "#0072B2", "lw": 0.8,
                                "connectionstyle": "arc3,rad=0.3"})
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks([1, 2, 11, 101, 1001])
    ax.set_xticklabels(["0", "1", "10", "100", "1000"])
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_xlim(0.9, 2400)
    ax.set_ylim(6e-8, 4)
    ax.set_xlabel("training step")
    ax.set_ylabel("relative logit distance between twins")
    ax.grid(True, which="major")
    ax.legend(loc="upper left", bbox_to_anchor=(1.005, 1.02), fontsize=8.0, frameon=False, labelspacing=0.4,
              handlelength=1.9)
    fig.tight_layout()
    return fig
