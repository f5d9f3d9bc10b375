"""Compile the reproduction appendix with pdflatex (TeX Live, from the system: it is not a Python
package), in the appendix's own folder so its relative paths resolve."""
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

from gaugelab.core import sealed  # noqa: E402

sealed.made_from_job(snakemake)  # the seal of every file it writes names its inputs

tex = Path(snakemake.input.tex)
if shutil.which("pdflatex") is None:
    sys.exit("gaugelab: pdflatex not found: install TeX Live (Debian: texlive-latex-base texlive-latex-recommended)")
proc = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", tex.name], cwd=tex.parent,
                      capture_output=True, text=True)
print(proc.stdout)
if proc.returncode != 0:
    sys.exit(f"gaugelab: pdflatex failed on {tex} (exit {proc.returncode}); its log is above")
sealed.seal(snakemake.output[0])
