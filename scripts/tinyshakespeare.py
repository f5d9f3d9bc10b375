"""Fetch the char-LM corpus (local copy or download) and verify its sha256."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

from gaugelab.attention import corpus  # noqa: E402

p = snakemake.params
path = corpus.fetch(snakemake.output[0], local=p.local, url=p.url, expected=p.sha256)
print(f"{path}: sha256 {p.sha256} verified ({'copied from ' + p.local if p.local else 'downloaded from ' + p.url})")
