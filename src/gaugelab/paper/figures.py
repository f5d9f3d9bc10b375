"""Figures in the paper's house style (spec: sensing.md §15), drawn from run records only; the paper's
values (gaugelab.paper.published, passed in by the scripts) appear as open markers beside them."""

from __future__ import annotations

import io
import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from matplotlib.text import Text  # noqa: E402

from ..sensing import dial, select  # noqa: E402
from ..core import sealed  # noqa: E402
from ..optim import cards  # noqa: E402

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
    """Vector PDF at 300 dpi and a PNG twin at 200 dpi, both byte-stable (no dates), each written
    whole and sealed (gaugelab.core.sealed)."""
    kw = {"bbox_inches": "tight", "pad_inches": 0.03}
    for path, fmt, dpi, metadata in ((pdf, "pdf", 300, {"CreationDate": None, "ModDate": None}),
                                     (png, "png", 200, {"Software": None})):
        buffer = io.BytesIO()
        fig.savefig(buffer, format=fmt, dpi=dpi, metadata=metadata, **kw)
        sealed.write(path, buffer.getvalue())
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


def figure1_rows(runs, selected, tol: float | None = None) -> list[dict]:
    """Figure 1's rows from the zoo's runs (select.frame) and its selected cells (the summary's
    selected rows, indexed by method): each method's rec and erank and its seeds' values. With
    ``tol``, every selected cell must have interpolated on every seed (worst train < tol)."""
    failed = [m for m, r in selected.iterrows() if tol is not None and not r["worst_train"] < tol]
    if failed:
        raise AssertionError(f"Figure 1: the selected cells of {', '.join(failed)} did not interpolate on every seed")
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
    colour = cards.colour(cards.ADAM)  # the dial is Adam's
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


# --- Section 8: the phase diagram (spec §15.4) ----------------------------------------------------

def keep_inside(ax, note, margin: float = 0.005):
    """Move an annotation's text left, as little as needed, so that it ends ``margin`` (data units)
    inside the axes' right limit: §15.4 places the phase figure's text for tau* = 0.2, and
    following a larger computed tau* would carry it past the axis."""
    ax.figure.canvas.draw()
    to_data = ax.transData.inverted()
    box = Text.get_window_extent(note)  # the text alone, not its arrow (Annotation's extent has both)
    width = to_data.transform((box.x1, 0))[0] - to_data.transform((box.x0, 0))[0]
    x, y = note.xyann
    note.xyann = (min(x, ax.get_xlim()[1] - margin - width), y)


PHASE_ORDER = (cards.ADAM, cards.SHAMPOO, cards.GD, cards.MUON)  # draw order; the legend follows cards


def figure_phase(table, tau_star: float, published_tau: float | None = None, title: str = ""):
    """Mean rec at lr* ± one population sd against the tail amplitude tau, one curve per method
    (``table``: phase.selected's rows of one arm), the crossing tau* where Muon cedes to GD as a
    dashed line, and the paper's tau* as an open marker on the axis. Annotations follow the
    computed values, not the paper's coordinates (§15.4: the line follows the computed tau*)."""
    house_style()
    fig, ax = plt.subplots(figsize=(4.15, 2.32))
    curves, cedes = {}, None
    for method in PHASE_ORDER:
        rows = table[table["method"] == method].sort_values("tau")
        if not len(rows):
            continue
        colour = cards.colour(method) or INK
        tau, rec, sd = rows["tau"].to_numpy(), rows["rec"].to_numpy(), rows["rec_sd"].to_numpy()
        ax.fill_between(tau, rec - sd, rec + sd, color=colour, alpha=0.12, lw=0)
        ax.plot(tau, rec, color=colour, lw=1.9, marker="o", ms=3.8, mew=0, label=cards.plain(method))
        curves[method] = dict(zip(tau, rec))
    if math.isfinite(tau_star):
        ax.axvline(tau_star, color=MUTED, lw=0.9, dashes=(4, 3))
        ax.text(tau_star - 0.012, 0.135, f"$\\tau^\\ast\\approx{tau_star:g}$\n({100 * tau_star ** 2:.0f}% tail energy)",
                ha="right", fontsize=8.4, color=MUTED)
        muon = curves.get(cards.MUON, {})
        if tau_star in muon:
            cedes = ax.annotate("Muon cedes to GD", xy=(tau_star, muon[tau_star]), xytext=(tau_star + 0.115, 0.235),
                                color=cards.colour(cards.MUON), fontsize=8.2,
                                arrowprops=dict(arrowstyle="->", color=cards.colour(cards.MUON), lw=0.8,
                                                connectionstyle="arc3,rad=-0.25"))
    adam = curves.get(cards.ADAM, {})
    if adam and all(adam[t] >= max(c.get(t, -math.inf) for c in curves.values()) for t in adam):
        at = sorted(adam)[len(adam) // 2]
        ax.annotate("coordinate-wise baseline:\nAdam highest at every $\\tau$", xy=(at, adam[at]),
                    xytext=(0.145, 0.86), color=cards.colour(cards.ADAM), fontsize=8.2,
                    bbox=dict(boxstyle="square,pad=0.2", fc="white", ec="none"),
                    arrowprops=dict(arrowstyle="->", color=cards.colour(cards.ADAM), lw=0.8,
                                    connectionstyle="arc3,rad=-0.2"))
    if published_tau is not None:
        mark_published(ax, [published_tau], [0.0], s=26)
    ax.set_xlabel("target tail amplitude τ   (τ² = fraction of target energy in the tail)")
    ax.set_ylabel("recovery error")
    ax.set_ylim(0, 1)
    ax.set_xlim(-0.01, 0.52)
    if cedes is not None:
        keep_inside(ax, cedes)
    handles, labels = ax.get_legend_handles_labels()
    order = [labels.index(cards.plain(m)) for m in (cards.GD, cards.ADAM, cards.MUON, cards.SHAMPOO)
             if cards.plain(m) in labels]
    handles, labels = [handles[i] for i in order], [labels[i] for i in order]
    if published_tau is not None:
        handles.append(published_handle("published τ*"))
        labels.append("published τ*")
    ax.legend(handles, labels, loc="upper left", frameon=False, fontsize=8.6)
    if title:
        ax.set_title(title, fontsize=8.6, color=MUTED)
    return fig
