"""One stage of one (arm, method) of a GPU-protocol arm (App. D.9's ladder and its dial arm, the
phase diagram's fine grid): its runs as one batch in float64 on the configured device, written as
one bundle. The extension and cosine-all stages read lr* from the selection's bundle
(sensing.ladder.stage_cells); a dial arm's methods are Adam-p variants (sensing.dial_gpu.rules)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

from gaugelab.core import records  # noqa: E402
from gaugelab.sensing import dial_gpu, ladder, runner  # noqa: E402

w, p = snakemake.wildcards, snakemake.params
selection = records.read_bundle(snakemake.input.selection) if w.stage != ladder.SELECTION else None
cells = ladder.stage_cells(w.stage, p.settings, w.method, selection)
experiment = ladder.experiment_name(w.arm, p.settings, w.stage)
recs = runner.run_batch(experiment, ladder.stage_settings(p.settings, w.stage), cells, rules=dial_gpu.rules(p.settings),
                        dtype=ladder.DTYPE, device=p.device, threads=snakemake.threads) if cells else []
records.write_bundle(snakemake.output[0], recs, *ladder.bundle_identity(w.arm, p.settings, w.method, w.stage))
print(f"{len(recs)} runs: " + ", ".join(f"lr {r['lr']:g} seed {r['seed']} {r['status']} rec {r['rec']:.4f}"
                                        for r in recs))
