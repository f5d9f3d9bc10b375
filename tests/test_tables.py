"""LaTeX as LaTeX users expect it: every special character escaped, numbers in scientific
notation typeset, and the result compiles."""

import os
import shutil
import subprocess

import pandas as pd
import pytest

from gaugelab.paper import tables

SPECIALS = "a_b & 50% $x$ #1 {y} ~z ^w \\v <u> ≤ ≥ × σ ± †"


def test_every_special_character_is_escaped_once():
    text = tables.latex_text(SPECIALS)
    for escaped in ("a\\_b", "\\&", "50\\%", "\\$x\\$", "\\#1", "\\{y\\}", "\\textasciitilde{}z",
                    "\\textasciicircum{}w", "\\textbackslash{}v", "$<$u$>$", "$\\leq$", "$\\sigma$"):
        assert escaped in text, escaped
    assert "\\\\" not in text  # the backslash became \textbackslash{}, not an escaped escape


def test_scientific_numbers_are_typeset():
    assert tables.latex_numbers("drift 5.1e-08, lr 1e-05") == "drift $5.1\\times10^{-8}$, lr $1\\times10^{-5}$"
    assert tables.latex_numbers("f64-mod47-L2d64h4 and e5") == "f64-mod47-L2d64h4 and e5"  # names stay


def test_a_table_of_special_characters_compiles(tmp_path):
    if shutil.which("pdflatex") is None:
        if os.environ.get("CI"):
            pytest.fail("pdflatex is missing in CI (.ci/run installs TeX Live)")
        pytest.skip("pdflatex not installed (Debian: texlive-latex-recommended)")
    frame = pd.DataFrame([{"name": SPECIALS, "value": 5.1e-8}])
    latex, _ = tables.simple_table(frame, [("name", "text", 0), ("value", "sci", 1)], [SPECIALS, "value"],
                                   "special characters", [SPECIALS])
    (tmp_path / "doc.tex").write_text("\\documentclass{article}\\usepackage{booktabs}\\begin{document}\n"
                                      + latex + "\\end{document}\n")
    proc = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "doc.tex"],
                          cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:]
