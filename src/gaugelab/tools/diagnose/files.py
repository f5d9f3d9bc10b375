"""A diagnosis file: one report per testbed, bundled with its provenance; and its figures."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ...core import records
from .optimizers import source_of

SCHEMA = records.DIAGNOSE_SCHEMA


def bundle(source: str, reports: list[dict], provenance: dict) -> dict:
    """The JSON file of one diagnosis: the optimizer and one report per testbed."""
    return {"schema": SCHEMA, "optimizer": source_of(source), "reports": {r["testbed"]["testbed"]: r for r in reports},
            "provenance": provenance}


def provenance(source: str, testbeds: Sequence[str], *, steps: int = 100, lr: float | None = 1e-2,
               dtype: str = "float64", sigma: float | None = None, options: dict | None = None,
               sizes: dict | None = None, **_) -> dict:
    """A diagnosis's provenance (records.provenance): the optimizer and every setting of its runs
    (the defaults are :func:`diagnose`'s); the workflow computes the same to check a file it finds."""
    settings = {"testbeds": list(testbeds), "steps": steps, "lr": lr, "dtype": dtype, "sigma": sigma,
                "options": dict(options or {}), "sizes": {k: v for k, v in (sizes or {}).items() if k in testbeds}}
    return records.provenance({"optimizer": source_of(source)}, settings)


def read_bundle(path) -> dict:
    """A diagnosis file written by :func:`bundle` (records.load: schema and digest checked; a
    malformed one is a RecordError naming the file and the field)."""
    return records.load(path, SCHEMA)


def write(diagnosis: dict, json_path, figure_stem=None) -> list[str]:
    """Write the JSON report and, unless ``figure_stem`` is None, ``<stem>.<testbed>.pdf/.png``
    per testbed. Returns the paths written."""
    from ...paper import figures, figures_twins  # matplotlib only where a figure is drawn

    records.write_json(json_path, diagnosis)
    written = [str(json_path)]
    if figure_stem is not None:
        for name, report in diagnosis["reports"].items():
            pdf, png = Path(f"{figure_stem}.{name}.pdf"), Path(f"{figure_stem}.{name}.png")
            pdf.parent.mkdir(parents=True, exist_ok=True)
            figures.save(figures_twins.diagnosis_figure(report), pdf, png)
            written += [str(pdf), str(png)]
    return written
