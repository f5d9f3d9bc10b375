"""Figures in the paper's house style (spec: sensing.md §15), drawn from run records only; the paper's
values (gaugelab.published, passed in by the scripts) appear as open markers beside them."""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402,F401
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

from . import cards, dial, select  # noqa: E402

INK, MUTED, FAINT = "#1A1A1A", "#5A5A5A", "#9A9A9A"
CLASS_COLOUR = {"eq": "#0072B2", "cw": "#D55E00"}


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


def published_handle(label: str = "published", marker: str = "D", colour: str = INK) -> Line2D:
    """Legend entry of the paper's values: an open marker, drawn the same way in every figure."""
    return Line2D([], [], ls="none", marker=marker, ms=5.2, mfc="none", mec=colour, mew=1.0, label=label)


def mark_published(ax, xs, ys, colour: str = INK, marker: str = "D", s: float = 30) -> None:
    ax.scatter(xs, ys, s=s, marker=marker, facecolors="none", edgecolors=colour, linewidths=1.0, zorder=6)


def span(values, below: float, above: float, log: bool = False) -> tuple[float, float]:
    """Axis limits holding every finite value, padded by fractions of the range (of log10 on a log axis)."""
    finite = [math.log10(v) if log else v for v in values if math.isfinite(v) and (v > 0 or not log)]
    lo, hi = min(finite), max(finite)
    width = (hi - lo) or 1.0
    lo, hi = lo - below * width, hi + above * width
    return (10 ** lo, 10 ** hi) if log else (lo, hi)


def table2_published(values) -> dict[str, dict[str, float]]:
    """Table 2's rec and erank per method, from published.of("Table 2")."""
    out: dict[str, dict[str, float]] = {}
    for v in values:
        if v.source == "Table 2" and v.quantity in ("rec", "erank"):
            out.setdefault(v.row, {})[v.quantity] = v.value
    return out


def figure1_row(ax, ax_rank, y: float, r: dict, paper: dict[str, float]) -> dict[str, list[float]]:
    """One method of Figure 1: its bar, seeds and value label, its erank point and seeds, the
    paper's rec and erank; returns every x drawn per panel (for the limits)."""
    colour = CLASS_COLOUR[select.klass(r["method"])]
    seen = {}
    for quantity, axis in (("rec", ax), ("erank", ax_rank)):
        seeds = r.get(f"seeds_{quantity}", [])
        axis.scatter(seeds, [y] * len(seeds), s=26, marker="|", color=INK, linewidths=0.9, zorder=5)
        if quantity in paper:
            mark_published(axis, [paper[quantity]], [y], s=22)
        seen[quantity] = [r.get(quantity, math.nan), *seeds, paper.get(quantity, math.nan)]
    ax.barh(y, r["rec"], height=0.66, alpha=0.92, color=colour, edgecolor="white", linewidth=0.6, zorder=3)
    right = max(v for v in (r["rec"], *r.get("seeds_rec", [])) if math.isfinite(v))  # past its own seeds
    ax.text(right + 0.010, y, value_label(r["rec"]), va="center", fontsize=8.6, color=MUTED, zorder=4,
            bbox={"boxstyle": "square,pad=0.05", "fc": "white", "ec": "none", "alpha": 0.8})
    ax_rank.scatter([r.get("erank", math.nan)], [y], s=26, color=colour, edgecolors="white", linewidths=0.6, zorder=4)
    return seen


def figure1_rows(runs, selected) -> list[dict]:
    """Figure 1's rows from the zoo's runs (select.frame) and its selected cells (select.select's
    selected rows, indexed by method): each method's rec and erank and its seeds' values."""
    return [{"method": m, "rec": float(r["rec"]), "erank": float(r["erank"]),
             **{f"seeds_{q}": select.seed_values(runs, m, r["lr"], q) for q in ("rec", "erank")}}
            for m, r in selected.iterrows()]


def figure1(rows: list[dict], strict: bool = True, published: dict[str, dict[str, float]] | None = None):
    """The zoo map: one bar per selected method, best recovery at the top, the eq/cw gap shaded;
    beside it each method's effective rank. ``rows``: method, rec, erank and the per-seed
    ``seeds_rec``, ``seeds_erank`` (ticks); ``published``: Table 2's rec and erank (open diamonds).
    ``strict``: every zoo card (cards.zoo(), the paper's nine) has a finite row and the split is clean."""
    house_style()
    published = published or {}
    rows = sorted((r for r in rows if math.isfinite(r["rec"])), key=lambda r: r["rec"])
    missing = [m for m in cards.zoo() if m not in {r["method"] for r in rows}]
    if strict and missing:  # the paper's nine; an added method may join them
        raise AssertionError(f"Figure 1 needs the {len(cards.zoo())} zoo rows; missing {', '.join(missing)}")
    split = select.clean_split_from_values([(r["method"], r["rec"]) for r in rows])
    if strict and split["verdict"] != "CLEAN":
        raise AssertionError("Figure 1: eq_max < cw_min does not hold (the split is not clean)")
    fig, (ax, ax_rank) = plt.subplots(1, 2, figsize=(6.9, 2.36), sharey=True,
                                      gridspec_kw={"width_ratios": [3.4, 1.0], "wspace": 0.05})
    top = len(rows) - 1
    ys = [top - i for i in range(len(rows))]
    seen = {"rec": [], "erank": []}
    for y, r in zip(ys, rows):
        for quantity, values in figure1_row(ax, ax_rank, y, r, published.get(r["method"], {})).items():
            seen[quantity] += values
    if split["verdict"] == "CLEAN":
        lo, hi = split["eq_max"], split["cw_min"]
        mid = 0.5 * (lo + hi)
        ax.axvspan(lo, hi, color="#F1F1F1", zorder=1, linewidth=0)
        ax.plot([mid, mid], [-0.6, top + 0.6], ls="--", lw=0.8, color=FAINT, zorder=2)
        ax.text(mid, top - 1.5, "empty gap\n(this budget)", style="italic", fontsize=8.4, color=MUTED,
                ha="center", va="center", zorder=4,
                bbox={"boxstyle": "round,pad=0.25", "fc": "white", "ec": "none"})
    ax.set_yticks(ys)
    ax.set_yticklabels([cards.label(r["method"]) for r in rows], fontsize=9.0)
    for tick, r in zip(ax.get_yticklabels(), rows):
        tick.set_color(CLASS_COLOUR[select.klass(r["method"])])
    for axis in (ax, ax_rank):
        axis.tick_params(axis="y", length=0)
        axis.grid(axis="x")
    ax.set_xlim(0, max(v for v in seen["rec"] if math.isfinite(v)) + 0.15)  # room for the value labels
    ax.set_ylim(-0.7, top + 0.9)
    ax.set_xlabel("ground-truth recovery error $\\|W-X^\\ast\\|_F/\\|X^\\ast\\|_F$\n"
                  "(lower = better recovery of the planted matrix)")
    if any(math.isfinite(v) for v in seen["erank"]):
        ax_rank.set_xlim(*span(seen["erank"], 0.12, 0.12))
    ax_rank.set_xlabel("effective rank\nof solution")
    handles = [Patch(color=CLASS_COLOUR["eq"], label="gauge-equivariant"),
               Patch(color=CLASS_COLOUR["cw"], label="coordinate-wise"),
               Line2D([], [], ls="none", marker="|", ms=6, mew=0.9, color=INK, label="seeds")]
    if published:
        handles.append(published_handle("published (Table 2)"))
    legend = ax.legend(handles=handles, loc="best", frameon=True, fontsize=8.2, framealpha=0.96)  # upper right, if free
    legend.get_frame().set_edgecolor("#DDDDDD")
    return fig


def dial_published(values) -> dict[tuple[str | None, float], dict[str, float]]:
    """Section 7's rec and erank per (convention, p), from published.of("Section 7 dial"); the rows
    are dial.label()s, stock Adam under convention None."""
    out: dict[tuple[str | None, float], dict[str, float]] = {}
    for v in values:
        if v.source == "Section 7 dial" and v.quantity in ("rec", "erank"):
            out.setdefault(dial.parse_label(v.row), {})[v.quantity] = v.value
    return out


DIAL_CONVENTION = {  # line width, dashes, marker size, published marker, legend label
    "rms": (2.0, (), 34, "D", "RMS $\\bar s$"),
    "geo": (1.0, (3, 2), 12, "s", "geometric mean (check)"),
}


def dial_references(ax, gd_erank: float, planted_rank: int) -> None:
    """The GD and planted-rank lines, each labelled just above it (the lower one below where the
    two would overlap), under the data where they meet. Call after the y limits are set."""
    lo, hi = ax.get_ylim()
    close = abs(gd_erank - planted_rank) < 0.08 * (hi - lo)  # labels would overlap: the lower one goes below
    box = {"boxstyle": "round,pad=0.2", "fc": "white", "ec": "none"}
    for y, text, style in ((gd_erank, f"GD  ({gd_erank:.2f})", {"color": "black", "lw": 1.1, "dashes": (5, 3)}),
                           (planted_rank, f"planted rank  ({planted_rank})", {"color": FAINT, "lw": 1.0, "ls": ":"})):
        if not math.isfinite(y):
            continue
        ax.axhline(y, zorder=2, **style)
        below = close and y < max(gd_erank, planted_rank)
        ax.annotate(text, xy=(0.80, y), xytext=(0, -2 if below else 2), textcoords="offset points", ha="left",
                    va="top" if below else "bottom", fontsize=8.4, color=MUTED if y == planted_rank else INK,
                    bbox=box, zorder=2.5)  # under the data where they meet


def dial_end_labels(ax, envelope: list[dict], published: dict, colour: str) -> None:
    """Recovery at the RMS ends, ± its sd over seeds and the paper's value where published: Adam
    (p = 1) at the top left, scalar-Adam (p = 0) above its point, with an arrow."""
    rms = sorted((r for r in envelope if r.get("convention", "rms") == "rms"), key=lambda r: -r["p"])
    for row, name, where in ((rms[0], "Adam ($p{=}1$)", "top"), (rms[-1], "scalar-Adam ($p{=}0$)", "end")):
        text = f"{name}\nrec {row['rec']:.3f}"
        if math.isfinite(row.get("rec_sd", math.nan)):
            text += f" $\\pm$ {row['rec_sd']:.3f}"
        paper = published.get((None if row["p"] >= 1 else "rms", row["p"]), {})
        if "rec" in paper:  # at p = 0 on a line of its own, to keep the label clear of the curve
            text += ("\n" if where == "end" else " ") + f"(paper {paper['rec']:.3f})"
        if where == "top":
            ax.text(1.02, 0.985, text, transform=ax.get_xaxis_transform(), ha="left", va="top", fontsize=8.4,
                    color=colour)
        else:
            ax.annotate(text, xy=(row["p"], round(row["erank"], 1)), xytext=(-6, 24), textcoords="offset points",
                        ha="right", va="bottom", fontsize=8.4, color=colour,  # clear of the markers at p = 0
                        arrowprops={"arrowstyle": "->", "color": colour, "lw": 0.8, "relpos": (1.0, 0.0)})


def figure_dial(envelope: list[dict], gd_erank: float, planted_rank: int,
                seeds: dict[tuple[str, float], list[float]] | None = None,
                published: dict[tuple[str | None, float], dict[str, float]] | None = None):
    """The dial: effective rank of the tuned solution against p, Adam on the left.

    ``envelope``: rows with convention, p, erank, rec, rec_sd (arm A; RMS drawn bold, GEO thin as
    the paper's consistency check); ``gd_erank``: Table 2's GD row, read from the zoo's records,
    drawn with the planted rank as reference lines; ``seeds``: per-seed erank of each RMS row;
    ``published``: dial_published(). The y range holds every line, point and label.
    """
    house_style()
    seeds, published = seeds or {}, published or {}
    colour = cards.colour("adam")  # the dial is Adam's
    fig, ax = plt.subplots(figsize=(4.3, 2.8))
    handles, ys = [], [planted_rank, gd_erank]
    for convention, (lw, dashes, size, marker, label) in DIAL_CONVENTION.items():
        rows = sorted((r for r in envelope if r.get("convention", "rms") == convention), key=lambda r: -r["p"])
        if not rows:
            continue
        ps, eranks = [r["p"] for r in rows], [round(r["erank"], 1) for r in rows]
        handles.append(ax.plot(ps, eranks, color=colour, lw=lw, dashes=dashes, zorder=3, label=label)[0])
        ax.scatter(ps, eranks, s=size, color=colour, edgecolors="white", linewidths=0.7, zorder=4)
        ys += eranks
        owners = (convention, None) if convention == "rms" else (convention,)  # stock Adam is marked once
        paper = [(p, v["erank"]) for (c, p), v in published.items() if c in owners and "erank" in v]
        if paper:
            mark_published(ax, *zip(*paper), marker=marker)
            handles.append(published_handle(f"published ({'RMS' if convention == 'rms' else 'geo. mean'})", marker))
            ys += [v for _, v in paper]
    spread = [(p, v) for (c, p), values in seeds.items() if c == "rms" for v in values]
    if spread:
        ax.scatter(*zip(*spread), s=9, color=colour, alpha=0.5, linewidths=0, zorder=5)
        handles.insert(1, Line2D([], [], ls="none", marker="o", ms=3, color=colour, alpha=0.5, label="seeds (RMS)"))
        ys += [v for _, v in spread]
    lo, hi = span(ys, 0.10, 0.26)
    ax.set_ylim(lo, hi)
    dial_references(ax, gd_erank, planted_rank)
    dial_end_labels(ax, envelope, published, colour)
    ax.set_xticks([1, 0.75, 0.5, 0.25, 0])
    ax.set_xticklabels(["1\n(Adam)", "0.75", "0.5", "0.25", "0\n(scalar)"])
    ax.set_xlim(1.08, -0.12)
    ax.set_xlabel("preconditioner anisotropy $p$")
    ax.set_ylabel("effective rank of solution")
    ax.grid(axis="y")
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize=8.0,
              handlelength=1.8, labelspacing=0.4)
    return fig


def flow_limit_published(values) -> dict[str, dict[str, float]]:
    """App. D.2's flow-limit rows ("<method> flow limit": lr, rec, erank) per method key."""
    out: dict[str, dict[str, float]] = {}
    for v in values:
        if v.source == "App. D.2" and v.row.endswith(" flow limit"):
            method = v.row.removesuffix(" flow limit").split(" ")[0].lower().replace("-", "_")
            out.setdefault(method, {})[v.quantity] = v.value
    return out


def figure_lr_sensitivity(rows: list[dict], published: dict[str, dict[str, float]] | None = None):
    """App. D.2: mean recovery against the learning rate per method (log lr), ± the population sd
    over seeds where ``rec_sd`` is given, the flow-limit point (smallest lr that interpolates)
    ringed; ``published``: flow_limit_published() (open diamonds at the paper's lr and rec)."""
    house_style()
    published = published or {}
    fig, ax = plt.subplots(figsize=(4.3, 2.6))
    methods = list(dict.fromkeys(r["method"] for r in rows))
    handles, bars = [], False
    for method in methods:
        mine = sorted((r for r in rows if r["method"] == method), key=lambda r: r["lr"])
        colour = cards.colour(method) or INK
        lrs, recs = [r["lr"] for r in mine], [r["rec"] for r in mine]
        label = cards.label(method) if method in cards.ALL else method
        handles.append(ax.plot(lrs, recs, color=colour, lw=1.6, marker="o", ms=3.8, label=label, zorder=3)[0])
        sds = [r.get("rec_sd", math.nan) for r in mine]
        if any(math.isfinite(sd) and sd > 0 for sd in sds):
            bars = True
            ax.errorbar(lrs, recs, yerr=sds, fmt="none", ecolor=colour, elinewidth=0.8, capsize=2, zorder=3)
        for r in mine:
            if r["flow_limit"] and math.isfinite(r["rec"]):
                ax.scatter([r["lr"]], [r["rec"]], s=70, facecolors="none", edgecolors=colour, linewidths=1.0,
                           zorder=4)
        paper = published.get(method, {})
        if "lr" in paper and "rec" in paper:
            mark_published(ax, [paper["lr"]], [paper["rec"]], colour=colour)
    if any("lr" in v and "rec" in v for m, v in published.items() if m in methods):
        handles.append(published_handle("published\nflow limit"))
    ax.set_xscale("log")
    ax.set_xlabel("learning rate $\\eta$")
    ax.set_ylabel("recovery error")
    ax.set_ylim(bottom=0)
    ax.grid(axis="y")
    title = "ringed: flow limit\n(smallest lr that\ninterpolates)" + ("\nbars: $\\pm$ sd over seeds" if bars else "")
    legend = ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize=8.2,
                       title=title, title_fontsize=7.6)
    legend.get_title().set_color(MUTED)
    return fig


# --- Figure 2 (Section 6): attention gauge drift ------------------------------------------------

# The series (optimizer, twin), line style and marker (attention.md §11.4); the noise twins are the
# S6 records' sigma = 1e-7. Legend label, series, colour (the optimizer's card), style, marker:
_TWIN_TEXT = {"gauge": "gauge twin", "noise": "noise twin ($10^{-7}$)"}
_FIGURE2 = [(("adam", "gauge"), "-", "o"), (("adam", "noise"), ":", "s"),
            (("muon", "gauge"), "-", "o"), (("muon", "noise"), ":", "s"),
            (("sgd", "gauge"), "-", "^"), (("scalar_adam", "gauge"), "-", "D")]
FIGURE2_SERIES = [(f"{cards.short(opt)}, {_TWIN_TEXT[twin]}", (opt, twin), cards.colour(opt), style, marker)
                  for (opt, twin), style, marker in _FIGURE2]


# The published rows (Table 3's and the reference log's) of each plotted series.
FIGURE2_ROWS = {"Adam gauge": ("adam", "gauge"), "Adam noise 1e-7": ("adam", "noise"), "Muon gauge": ("muon", "gauge"),
                "Muon noise 1e-7": ("muon", "noise"), "SGD gauge": ("sgd", "gauge"),
                "scalar-Adam gauge": ("scalar_adam", "gauge")}


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
    adam1, noise1 = at(("adam", "gauge"), 1), at(("adam", "noise"), 1)
    if adam1 and noise1:
        k = math.floor(math.log10(adam1 / noise1))
        ax.annotate(f"structural split:\none step, $10^{{{k}}}\\times$ the noise twin", xy=(2, adam1),
                    xytext=(1.0, 0.985), textcoords=ax.get_xaxis_transform(), va="top",  # left of the rise
                    fontsize=8.2, color=cards.colour("adam"),
                    arrowprops={"arrowstyle": "->", "color": cards.colour("adam"), "lw": 0.8,
                                "connectionstyle": "arc3,rad=0.25"})
    muon100 = at(("muon", "gauge"), 100)
    if muon100:
        ax.annotate("chaos: Muon's gauge\nand noise twins\ntrace one curve", xy=(101, muon100),
                    xytext=(0.99, 2.4e-4), textcoords=ax.get_yaxis_transform(), ha="right",  # clear of the legend
                    fontsize=8.2, color=cards.colour("muon"),
                    arrowprops={"arrowstyle": "->", "color": cards.colour("muon"), "lw": 0.8,
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
            raise ValueError(f"Figure 2: {label} has drift <= 0 (or missing) at step(s) {bad}; a log axis cannot show it")
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
