"""Sections 5 and 7: Table 2, the controls of Section 5 and Appendix D (with their released logs),
the dial. Each value as published.values says."""

from __future__ import annotations

from ...optim import cards
from .values import Value, claim, count, printed_value

# --- Section 5: Table 2, its classification counts and the convex reference row ---------------

_TABLE2 = [  # method, lr*, rec, printed rec, erank (sensing.md §16)
    (cards.MUON, 0.1, 6.8e-6, "0.0000", 2.95),
    (cards.GD, 0.01, 0.1312, "0.1312", 4.51),
    (cards.SCALAR_ADAM, 1e-3, 0.2010, "0.2010", 5.43),
    (cards.SHAMPOO, 0.03, 0.2856, "0.2856", 6.95),
    (cards.LION, 3e-4, 0.4248, "0.4248", 10.58),
    (cards.SIGNUM, 3e-3, 0.4454, "0.4454", 7.83),
    (cards.RMSPROP, 1e-4, 0.5266, "0.5266", 12.80),
    (cards.ADAFACTOR, 3e-4, 0.5430, "0.5430", 10.72),
    (cards.ADAM, 0.01, 0.5734, "0.5734", 14.37),
]
T2 = "Table 2 (selection S1, mean over seeds 42, 123, 456)"

TABLE2: list[Value] = []
for _method, _lr, _rec, _printed, _erank in _TABLE2:
    TABLE2 += [
        count("Table 2", _method, "lr", _lr, f"{_lr:g}", T2, "the selected grid point: must be equal"),
        printed_value("Table 2", _method, "rec", _rec, _printed, T2),
        printed_value("Table 2", _method, "erank", _erank, f"{_erank:.2f}", T2),
    ]

TABLE2_SPLIT: list[Value] = [
    count("Table 2", "clean split", "count", 9, "9/9", "Section 5, Table 2 classification (sensing.md §8)"),
    printed_value("Table 2", "clean split", "gap", 0.139, "0.139", "Section 5: gap Shampoo 0.2856 to Lion 0.4248"),
    count("Table 2", "rank split", "count", 8, "8/9", "Section 5: rank split at threshold (4.51 + 14.37) / 2"),
]

# Table 2's convex reference row: the mean over the three seeds (sensing.md §9, §16).
NUCLEAR: list[Value] = [
    printed_value("Table 2", "min-nuclear-norm reference", "rec", 0.0335, "0.0335", "Table 2, reference row"),
    printed_value("Table 2", "min-nuclear-norm reference", "erank", 3.30, "3.30", "Table 2, reference row"),
]

# --- Section 5's controls -----------------------------------------------------------------------

_SIZE = "Section 5: 'a larger setting (60x60, rank 5), not tabulated: 0.000 (Muon), 0.077 (GD), 0.465 (Adam)'"
SECOND_SIZE: list[Value] = [
    printed_value("Section 5 60x60", method, "rec", value, printed, _SIZE)
    for method, value, printed in ((cards.MUON, 0.0, "0.000"), (cards.GD, 0.077, "0.077"), (cards.ADAM, 0.465, "0.465"))
]

# App. D.4, init scale: the paper's released log logs/zoo_init_scale.txt (sensing.md §16); S2 rows.
INIT_LOG = "App. D.4, released log logs/zoo_init_scale.txt (sensing.md §16)"
INIT_METHODS = (cards.GD, cards.ADAM, cards.SCALAR_ADAM, cards.MUON, cards.SHAMPOO)
_INIT = {  # init -> (rec, erank) per method in INIT_METHODS order
    1e-3: [(0.1312, 4.51), (0.5734, 14.37), (0.2010, 5.43), (0.0000, 2.95), (0.2856, 6.95)],
    3e-3: [(0.2032, 5.52), (0.5747, 14.56), (0.2603, 6.38), (0.0000, 2.95), (0.3524, 8.15)],
    1e-2: [(0.3182, 7.57), (0.5836, 14.91), (0.3584, 8.35), (0.0000, 2.95), (0.5754, 14.19)],
}


def init_row(init: float, method: str) -> str:
    return f"init {init:g} {method}"


INIT_SCALE: list[Value] = []
for _init, _cells in _INIT.items():
    for _method, (_rec, _erank) in zip(INIT_METHODS, _cells):
        INIT_SCALE += [printed_value("App. D.4", init_row(_init, _method), "rec", _rec, f"{_rec:.4f}", INIT_LOG),
                       printed_value("App. D.4", init_row(_init, _method), "erank", _erank, f"{_erank:.2f}", INIT_LOG)]
    _eq = max(rec for m, (rec, _) in zip(INIT_METHODS, _cells) if m != cards.ADAM)
    _adam = dict(zip(INIT_METHODS, _cells))[cards.ADAM][0]
    INIT_SCALE += [
        claim("App. D.4", f"init {_init:g} split check", "holds", "max equivariant rec < Adam's",
              "Section 5: 'The same is true for initialization scales of 1e-3 and 3e-3, though it is less "
              "pronounced at 1e-2'", "a yes/no check (sensing.md §8.4)"),
        # The gap between Adam and the best equivariant method, derived from the log's own rows.
        printed_value("App. D.4", f"init {_init:g} split check", "gap", round(_adam - _eq, 4), f"{_adam - _eq:.4f}",
                      INIT_LOG, "derived from two printed values: one unit in their last digit"),
    ]
INIT_SCALE += [
    claim("App. D.4", "init 0.01 edge lost", "holds", "every method but Muon recovers worse at 1e-2 than at 1e-3",
          "Section 5: 'at 1e-2, where every method but Muon has lost the small-initialization edge'",
          "a yes/no check: rec(1e-2) > rec(1e-3) for GD, Adam, scalar-Adam, Shampoo; Muon's rec < 1e-3 at both"),
    count("App. D.4", "init 0.001 as Table 2", "count", 5, "5 of 5 rows",
          "App. D.4: the 1e-3 rows are Table 2's rows (sensing.md §10.2)",
          "a count: lr and rec of the S2 row equal Table 2's S1 row"),
]

# App. D.2, lr sensitivity: the flow-limit row (smallest lr whose mean train < 1e-7) per method,
# from the released log logs/zoo_lr_sensitivity.txt (sensing.md §16).
FLOW_LOG = "App. D.2, released log logs/zoo_lr_sensitivity.txt (sensing.md §16)"
LR_SENSITIVITY: list[Value] = []
for _method, _lr, _rec, _erank in ((cards.GD, 3e-3, 0.1132, 4.29), (cards.ADAM, 3e-4, 0.5598, 13.81),
                                   (cards.SCALAR_ADAM, 3e-4, 0.1647, 4.94), (cards.MUON, 3e-3, 0.9147, 33.72),
                                   (cards.SHAMPOO, 3e-2, 0.2856, 6.95)):
    LR_SENSITIVITY += [
        count("App. D.2", f"{_method} flow limit", "lr", _lr, f"{_lr:g}", FLOW_LOG, "a grid point: must be equal"),
        printed_value("App. D.2", f"{_method} flow limit", "rec", _rec, f"{_rec:.4f}", FLOW_LOG),
        printed_value("App. D.2", f"{_method} flow limit", "erank", _erank, f"{_erank:.2f}", FLOW_LOG),
    ]

# The decay control (App. D.1, Table 6) and RMSProp under it (App. D.7). "count" of the RMSProp
# rows: learning rates of the grid whose mean train reaches the bar at a constant lr.
_D7 = ("Section 5: RMSProp 'cannot reach the interpolation threshold at a fixed step size, and it recovers 0.527 "
       "either way'")
_T6 = ("Section 5: 'giving GD and Adam ... the full 2x10^4-step cosine decay horizon, no early stopping, does not "
       "improve their results (Table 6)'")
SCHEDULE: list[Value] = [
    count("Table 6", "midpoint split (decay, rec-sel)", "count", 9, "9/9",
          "Section 5: 'under a single shared cosine decay we still get 9/9'"),
    count("App. D.7", "rmsprop const", "count", 0, "never reaches the bar", _D7),
    count("App. D.7", "rmsprop const-60k", "count", 0, "never reaches the bar", _D7),
    printed_value("App. D.7", "rmsprop const spd-sel", "rec", 0.527, "0.527", _D7),
    printed_value("App. D.7", "rmsprop const-60k spd-sel", "rec", 0.527, "0.527", _D7),
    printed_value("App. D.7", "rmsprop decay rec-sel", "rec", 0.527, "0.527", _D7),
] + [
    # "does not improve": the full horizon lowers the recovery error by less than one printed unit.
    Value("Table 6", f"{method} decay-full vs const", "gain", 0.0, 1e-4, "no improvement", "at_most", _T6,
          "a bound: rec(const) - rec(decay-full) <= 1e-4 (one unit of the printed 4 decimals), rec-sel rows")
    for method in (cards.GD, cards.ADAM)
]


# The decay control's released log, logs/zoo_decay_control.txt (sensing.md §16): every rec-sel cell
# of the three arms (rec / erank, mean over seeds; "floor": no lr interpolates, the rule fell back
# to every finite lr), the four midpoint split counts and RMSProp at lr 1e-4 (App. D.7).
SCHEDULE_LOG = "Table 6 / App. D.1, D.7, released log logs/zoo_decay_control.txt (sensing.md §16)"
_TABLE6 = {  # method -> (rec, erank) in the arms const | decay | decay-full; None: not in the arm
    cards.GD: ((0.1312, 4.51), (0.1312, 4.51), (0.1312, 4.51)),
    cards.ADAM: ((0.5734, 14.37), (0.5734, 14.37), (0.5764, 14.38)),
    cards.SCALAR_ADAM: ((0.2010, 5.43), (0.2010, 5.43), (0.2010, 5.43)),
    cards.RMSPROP: ((0.3179, 5.55), (0.5266, 12.80), None),
    cards.SIGNUM: ((0.0089, 3.07), (0.4454, 7.83), None),
    cards.LION: ((0.4242, 10.58), (0.4248, 10.58), None),
    cards.ADAFACTOR: ((0.5430, 10.72), (0.5430, 10.72), None),
    cards.MUON: ((0.0084, 3.05), (0.0000, 2.95), (0.0000, 2.95)),
    cards.SHAMPOO: ((0.2856, 6.95), (0.2856, 6.95), (0.2856, 6.95)),
}
TABLE6_FLOORS = {(cards.RMSPROP, "const"), (cards.SIGNUM, "const"), (cards.LION, "const"), (cards.MUON, "const")}
SCHEDULE_LOGGED: list[Value] = []
for _method, _arms in _TABLE6.items():
    for _mode, _cell in zip(("const", "decay", "decay-full"), _arms):
        if _cell is None:
            continue
        _floor = (_method, _mode) in TABLE6_FLOORS
        _why = ("a floor (no lr interpolates): printed precision (one unit in the last digit)" if _floor
                else "printed precision (one unit in the last digit)")
        SCHEDULE_LOGGED += [
            printed_value("Table 6", f"{_method} {_mode} rec-sel", "rec", _cell[0],
                          f"{_cell[0]:.4f}" + (" (floor)" if _floor else ""), SCHEDULE_LOG, _why),
            printed_value("Table 6", f"{_method} {_mode} rec-sel", "erank", _cell[1], f"{_cell[1]:.2f}", SCHEDULE_LOG,
                          _why)]
# The midpoint split counts (threshold: midpoint of the selected GD and Adam recoveries) and the
# methods each misses; decay rec-sel (9/9) is the text's own row (SCHEDULE above).
TABLE6_SPLITS = {("const", "rec-sel"): (7, f"{cards.RMSPROP}, {cards.SIGNUM}"), ("const", "spd-sel"): (8, cards.MUON),
                 ("decay", "spd-sel"): (8, cards.MUON)}
SCHEDULE_LOGGED += [count("Table 6", f"midpoint split ({_mode}, {_rule})", "count", _n,
                          f"{_n}/9 (misses: {_misses})", SCHEDULE_LOG)
                    for (_mode, _rule), (_n, _misses) in TABLE6_SPLITS.items()]
# The log's two deltas, rec-sel, const -> decay-full ("neither gains from the full horizon"; the
# text's bound is the "gain" rows of SCHEDULE): a difference of two printed means.
SCHEDULE_LOGGED += [
    Value("Table 6", f"{_method} const -> decay-full", "delta", round(_full - _const, 4), 1e-4,
          f"{_const:.4f} -> {_full:.4f}", "abs", SCHEDULE_LOG,
          "a difference of two printed means: one unit in the last digit")
    for _method, _const, _full in ((cards.ADAM, 0.5734, 0.5764), (cards.GD, 0.1312, 0.1312))]
# App. D.7: RMSProp at lr 1e-4 in each arm; "0.527 either way" is each of these to 3 decimals.
for _row, _rec, _erank, _train in (("rmsprop const lr 1e-4", 0.5270, 12.81, "2.9e-4"),
                                   ("rmsprop const-60k lr 1e-4", 0.5277, 12.83, "2.8e-4"),
                                   ("rmsprop decay lr 1e-4", 0.5266, 12.80, "6.0e-8")):
    SCHEDULE_LOGGED += [
        printed_value("App. D.7", _row, "rec", _rec, f"{_rec:.4f}", SCHEDULE_LOG),
        printed_value("App. D.7", _row, "erank", _erank, f"{_erank:.2f}", SCHEDULE_LOG),
        Value("App. D.7", _row, "train", float(_train), 1.0, _train, "decades", SCHEDULE_LOG,
              "a train floor, order of magnitude only: at a constant lr RMSProp stalls above the bar, where "
              "its final loss jitters from step to step" if float(_train) > 1e-7 else
              "below the interpolation bar: order of magnitude only"),
    ]

# The 60x60 size's released log, logs/zoo_size_check.txt (sensing.md §16): S2's rows to 4 decimals.
SIZE_LOG = "Section 5 60x60, released log logs/zoo_size_check.txt (sensing.md §16)"
SECOND_SIZE_LOGGED: list[Value] = []
for _method, _lr, _rec, _erank in ((cards.GD, 0.01, 0.0770, 6.50), (cards.ADAM, 1e-3, 0.4651, 19.72),
                                   (cards.MUON, 0.3, 0.0000, 4.84)):
    SECOND_SIZE_LOGGED += [
        count("Section 5 60x60 log", _method, "lr", _lr, f"{_lr:g}", SIZE_LOG,
              "the selected grid point: must be equal"),
        printed_value("Section 5 60x60 log", _method, "rec", _rec, f"{_rec:.4f}", SIZE_LOG),
        printed_value("Section 5 60x60 log", _method, "erank", _erank, f"{_erank:.2f}", SIZE_LOG),
    ]


def table2() -> list[Value]:
    return TABLE2 + TABLE2_SPLIT


def controls() -> list[Value]:
    return NUCLEAR + SECOND_SIZE + SECOND_SIZE_LOGGED + INIT_SCALE + LR_SENSITIVITY + SCHEDULE + SCHEDULE_LOGGED


# --- Section 7: the dial, arm A (per-p tuned envelope) and arm B (fixed lr); rows: dial.label() ---

_DIAL_TABLE = "Section 7, the dial table (RMS convention, erank to 1 decimal; sensing.md §16)"
_GEO = "Section 7, footnote 3 and the geometric-mean robustness rows (sensing.md §16)"
DIAL: list[Value] = [
    printed_value("Section 7 dial", "p1", "rec", 0.5704, "0.5704", _DIAL_TABLE),
    printed_value("Section 7 dial", "p1", "erank", 14.5, "14.5", _DIAL_TABLE),
]
for _p, _rec, _erank in ((0.75, 0.4588, 11.1), (0.5, 0.3481, 8.2), (0.25, 0.2595, 6.4), (0.0, 0.2010, 5.43)):
    _printed = "0.201" if _p == 0 else f"{_rec:.4f}"
    _where = ("Section 7: 'the results are identical (0.201, erank 5.43)'" if _p == 0 else _DIAL_TABLE)
    DIAL += [printed_value("Section 7 dial", f"rms_p{_p:g}", "rec", _rec, _printed, _where),
             printed_value("Section 7 dial", f"rms_p{_p:g}", "erank", _erank, f"{_erank:g}", _where)]
for _p, _rec, _erank in ((0.75, 0.4604, 11.1), (0.5, 0.3551, 8.3), (0.25, 0.2766, 6.6), (0.0, 0.2292, 5.8)):
    _printed = "0.229" if _p == 0 else f"{_rec:.4f}"
    DIAL += [printed_value("Section 7 dial", f"geo_p{_p:g}", "rec", _rec, _printed, _GEO),
             printed_value("Section 7 dial", f"geo_p{_p:g}", "erank", _erank, f"{_erank:g}", _GEO)]
DIAL += [
    claim("Section 7 dial", "rms", "monotone", "monotone in p",
          "Section 7: the tuned envelope's rec and erank fall from p = 1 to p = 0 (sensing.md §11.3)",
          "a yes/no check: each consecutive pair non-increasing"),
    claim("Section 7 dial", "geo", "monotone", "traces the same monotone curve",
          "Section 7, footnote 3: 'The geometric-mean dial traces the same monotone curve'",
          "a yes/no check: each consecutive pair non-increasing"),
    Value("Section 7 dial", "geo vs rms at p = 0", "rec_diff", 0.03, 0.03, "within 0.03", "at_most",
          "Section 7, footnote 3: 'agrees with the RMS dial at the endpoint to within 0.03'",
          "a bound: |rec(GEO, p=0) - rec(RMS, p=0)| <= 0.03"),
]
for _lr in (1e-3, 3e-3, 1e-2, 3e-2, 0.1):
    _holds = _lr < 0.1
    DIAL.append(claim("Section 7 dial", f"fixed lr {_lr:g}", "monotone", "monotone" if _holds else "not monotone",
                      "Section 7 / App. C, arm B: 'restoration is monotone at the four smaller shared rates "
                      "(1e-3 ... 3e-2); at the largest rate (0.1) it is not' (sensing.md §11.3)",
                      "a yes/no outcome (1 = monotone): must be equal", holds=_holds))

# Section 8: the Muon spectral-tail phase diagram (sensing.md §13, §16). tau* is a grid point (the
# first at or beyond the crossing of Muon's curve with GD's), so it is equal or not.
PHASE_WHERE = ("Section 8 / App. D.9: 'tau* ~ 0.35 on the coarse 3-seed CPU grid; ~ 0.2 on the fine 10-seed grid' "
               "(sensing.md §16)")
SECTION8: list[Value] = [
    count("Section 8", "tau* (coarse CPU grid, 3 seeds)", "tau_star", 0.35, "≈ 0.35", PHASE_WHERE,
          "a grid point of the coarse grid (0, 0.05, 0.1, 0.2, 0.35, 0.5): must be equal", target="section8"),
    count("Section 8", "tau* (fine GPU grid, 10 seeds, n = 40)", "tau_star", 0.2, "≈ 0.2", PHASE_WHERE,
          "a grid point of the fine grid: must be equal", target="gpu"),
]

# App. D.10: the signum audit (sensing.md §12, §16). Its (T = 2x10^4, cos, 3e-3) cell must reproduce
# Table 2's signum row: a chaotic cell, read against Table 2's cell's ensemble.
SIGNUM_AUDIT_LR = 3e-3
SIGNUM_AUDIT: list[Value] = [
    printed_value("App. D.10", "T = 20000, cos, lr 0.003 (Table 2's signum row)", "rec", 0.4454, "0.4454",
                  "App. D.10 / sensing.md §12 P2: 'the (T = 20000, cos, eta = 3e-3) cell must reproduce Table 2's "
                  "signum row (0.4454)'", target="signum_audit"),
]

# App. D.9, Table 11: the GPU problem-size ladder (sensing.md §14.5, §16: only its qualitative
# statements are compared, each a yes/no check on the reproduced table; opt-in `snakemake ladder`).
_T11 = "App. D.9 / Table 11 (sensing.md §14.5)"
LADDER: list[Value] = [
    claim("Table 11", "Muon up to n = 256", "recovers", "holds", _T11,
          "'Muon recovers essentially exactly up to n = 256': its mean rec at lr* prints 0.0000 at every size "
          "row (and the canary) with n <= 256", target="ladder"),
    claim("Table 11", "GD < scalar-Adam < Adam", "order", "holds", _T11,
          "'GD < scalar-Adam < Adam in recovery at every n': the mean recs at lr* in that order at every size row "
          "and the canary", target="ladder"),
    claim("Table 11", "every size row", "split", "OVERLAP", _T11,
          "'Every size row is OVERLAP; the clean 9/9 split is specific to n = 40 at 2x10^4 steps': no size row "
          "(n = 64 to 384) is CLEAN", target="ladder"),
]
