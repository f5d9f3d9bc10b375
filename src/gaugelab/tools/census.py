"""The optimizer census: every optimizer of a library through the triplet, on the sensing
testbed (:mod:`gaugelab.tools.diagnose`) and one real model (:mod:`gaugelab.tools.audit`), with
each library's own default settings.

Libraries: ``torch`` (every :class:`torch.optim.Optimizer` subclass in ``torch.optim``) and
``pytorch_optimizer`` (every name of its ``get_supported_optimizers()``). An optimizer that
cannot be loaded, built on the testbed's parameters or stepped is a row with ``built`` /
``stepped`` false and the reason, never dropped. The learning rate is the optimizer's default;
one that has none gets :data:`FALLBACK_LR`.

One overall verdict per optimizer (:func:`overall`): ``basis-dependent`` if any testbed or
symmetry shows a structural split (one is proof), else ``determinism failure``, ``inconclusive``,
``chaotic`` in that order if any reads so, else ``equivariant``; ``failed`` if it could not be
built or stepped.
"""

from __future__ import annotations

import inspect
import time

import torch

from . import audit, diagnose
from ..core import records

SCHEMA = records.CENSUS_SCHEMA
LIBRARIES = ("torch", "pytorch_optimizer")
FALLBACK_LR = 1e-3
OVERALL = ("equivariant", "basis-dependent", "chaotic", "inconclusive", "determinism failure", "failed")


def optimizers(library: str) -> list[tuple[str, str | None, str | None]]:
    """(name, ``package.module:Attr`` source or None, reason it could not be loaded) per optimizer."""
    if library == "torch":
        found = sorted(name for name, obj in vars(torch.optim).items()
                       if inspect.isclass(obj) and issubclass(obj, torch.optim.Optimizer)
                       and obj is not torch.optim.Optimizer)
        return [(name, f"torch.optim:{name}", None) for name in found]
    if library == "pytorch_optimizer":
        import pytorch_optimizer

        out = []
        for name in pytorch_optimizer.get_supported_optimizers():
            try:
                cls = pytorch_optimizer.load_optimizer(name)
                out.append((name, f"{cls.__module__}:{cls.__qualname__}", None))
            except Exception as exc:  # noqa: BLE001 - a row with the reason, never dropped
                out.append((name, None, f"cannot load: {type(exc).__name__}: {exc}"))
        return out
    raise diagnose.DiagnoseError(f"unknown census library {library!r}; use one of {', '.join(LIBRARIES)}")


def version(library: str) -> str:
    from importlib.metadata import version as dist_version

    return dist_version("torch" if library == "torch" else "pytorch-optimizer")


def _lr_for(source: str) -> float | None:
    """None (the optimizer's default) when its constructor has one, else FALLBACK_LR."""
    obj = diagnose.import_source(source)
    try:
        lr = inspect.signature(obj).parameters.get("lr")
    except (TypeError, ValueError):
        return FALLBACK_LR
    return FALLBACK_LR if lr is None or lr.default is inspect.Parameter.empty else None


def muon_groups(source: str):
    """pytorch-optimizer's Muon family takes parameter groups flagged ``use_muon``: a factory that
    puts the matrices in a Muon group and the rest in its AdamW group (the paper's hybrid)."""
    cls = diagnose.import_source(source)

    def build(params, lr=None, **options):
        params = list(params)
        groups = [{"params": [p for p in params if p.ndim == 2], "use_muon": True},
                  {"params": [p for p in params if p.ndim != 2], "use_muon": False}]
        return cls([g for g in groups if g["params"]], **({} if lr is None else {"lr": lr}), **options)

    build.__module__, build.__qualname__ = cls.__module__, cls.__qualname__  # named as the class
    return build


def _needs_groups(reason: str) -> bool:
    return "use_muon" in reason or "Tensor.__contains__" in reason


def overall(verdicts: dict[str, str]) -> str:
    values = set(verdicts.values())
    for v in ("basis-dependent", "determinism failure", "inconclusive", "chaotic"):
        if v in values:
            return v
    return "equivariant"


def _failure(exc: Exception) -> tuple[bool, str]:
    """(built, reason) from the error of a run: a step failure means it was built."""
    text = f"{type(exc).__name__}: {exc}" if not isinstance(exc, diagnose.DiagnoseError) else str(exc)
    return "failed at step" in text, " ".join(text.split())[:300]


def census_row(name: str, source: str | None, reason: str | None, settings: dict) -> dict:
    """One optimizer: its verdict on the sensing testbed and on every symmetry of the model. A
    testbed it cannot be built or stepped on is ``failed`` there, with the reason; ``built`` and
    ``stepped`` say whether it was on at least one."""
    row = {"optimizer": name, "source": source or "", "built": False, "stepped": False, "lr": None,
           "verdicts": {}, "evidence": {}, "overall": "failed", "reason": reason, "seconds": 0.0}
    if source is None:
        return row
    start = time.perf_counter()
    reasons = []
    try:
        row["lr"] = _lr_for(source)
    except Exception as exc:  # noqa: BLE001 - an import failure is the row's result
        row["reason"] = _failure(exc)[1]
        return row
    optimizer, notes = source, []
    for stage in ("sensing", settings["model"]):
        one = {**settings, "stage": stage}
        for attempt in (0, 1):
            try:
                for key, (verdict, summary) in _stage(optimizer, row["lr"], one):
                    row["verdicts"][key], row["evidence"][key] = verdict, summary
                    row["built"] = row["stepped"] = True
                break
            except Exception as exc:  # noqa: BLE001 - the optimizer's own failure is the row's result
                built, why = _failure(exc)
                if attempt == 0 and not built and _needs_groups(why) and optimizer is source:
                    optimizer = muon_groups(source)  # then every later stage uses the groups too
                    notes.append("built with parameter groups: matrices use_muon=True, the rest False")
                    continue
                row["built"] |= built
                row["verdicts"][stage] = "failed"
                reasons.append(f"{stage}: {why}")
                break
    ran = {k: v for k, v in row["verdicts"].items() if v != "failed"}
    row["overall"] = overall(ran) if ran else "failed"
    row["reason"] = "; ".join(notes + reasons) or None
    row["seconds"] = round(time.perf_counter() - start, 3)
    return row


def _stage(source: str, lr: float | None, settings: dict):
    """(testbed, (verdict, summary)) of one stage: the sensing testbed, or every present
    symmetry of the model (``<model>/<symmetry>``)."""
    if settings["stage"] == "sensing":
        report = diagnose.diagnose(source, "sensing", steps=settings["steps"], lr=lr, dtype=settings["dtype"])
        return [("sensing", (report["verdict"], report["summary"]))]
    record = audit.audit(settings["model"], source, steps=settings["steps"], lr=lr, dtype=settings["dtype"])
    return [(f"{settings['model']}/{s['name']}", (s["verdict"], s["summary"]))
            for s in record["symmetries"] if s["present"]]


def run(library: str, settings: dict, names: list[str] | None = None, log=print) -> dict:
    """The census of one library (``names``: only these), as a ``gaugelab.census/1`` record."""
    start = time.perf_counter()
    rows = []
    for name, source, reason in optimizers(library):
        if names is not None and name not in names:
            continue
        row = census_row(name, source, reason, settings)
        log(f"{library}:{name}: {row['overall']}" + (f" ({row['reason']})" if row["reason"] else "")
            + f" [{row['seconds']:.1f} s]")
        rows.append(row)
    return {"schema": SCHEMA, "library": library, "version": version(library), "rows": rows,
            "wall_s": round(time.perf_counter() - start, 1),
            "provenance": records.provenance({"library": library}, {**settings, "names": names})}


def counts(rows: list[dict]) -> dict[str, int]:
    """built, stepped and one count per overall verdict."""
    out = {"optimizers": len(rows), "built": sum(r["built"] for r in rows), "stepped": sum(r["stepped"] for r in rows)}
    out.update({v: sum(r["overall"] == v for r in rows) for v in OVERALL})
    return out


# --- the table ----------------------------------------------------------------------------------


def table_rows(censuses: list[dict]) -> list[dict]:
    """One flat row per optimizer, library by library: the CSV's data."""
    out = []
    for c in censuses:
        for r in c["rows"]:
            out.append({"library": c["library"], "version": c["version"], "optimizer": r["optimizer"],
                        "source": r["source"], "lr": "default" if r["lr"] is None else r["lr"],
                        "built": r["built"], "stepped": r["stepped"], "overall": r["overall"],
                        **{f"verdict:{k}": v for k, v in r["verdicts"].items()},
                        "reason": r["reason"] or "", "seconds": r["seconds"]})
    columns = _columns(out)
    for r in out:  # a model that failed as a whole fails on each of its symmetries' columns
        for key in [k for k in r if k.startswith("verdict:") and k != "verdict:sensing" and "/" not in k]:
            value = r.pop(key)
            for column in (c for c in columns if c.startswith(f"{key}/")):
                r.setdefault(column, value)
    return out


def _columns(rows: list[dict]) -> list[str]:
    found = {k for r in rows for k in r if k.startswith("verdict:") and (k == "verdict:sensing" or "/" in k)}
    return sorted(found, key=lambda k: (k != "verdict:sensing", k))  # sensing first


def _caption(rows: list[dict]) -> str:
    n = counts(rows)
    return (f"{n['optimizers']} optimizers: {n['built']} built, {n['stepped']} stepped; "
            + ", ".join(f"{n[v]} {v}" for v in OVERALL))


def table_latex(rows: list[dict]) -> str:
    from ..paper.tables import latex_text as tex

    cols = _columns(rows)
    lines = ["% The optimizer census, generated from the workflow's census files. Do not edit.",
             "% One row per optimizer, over pages: needs \\usepackage{booktabs, longtable}.",
             f"% {_caption(rows)}",
             "\\begin{longtable}{ll" + "l" * len(cols) + "lp{4.5cm}}", "\\toprule",
             " & ".join(["Library", "Optimizer", *(tex(c.removeprefix("verdict:")) for c in cols), "Overall",
                         "Reason"]) + " \\\\", "\\midrule", "\\endhead"]
    for r in rows:
        cells = [tex(r["library"]), f"\\texttt{{{tex(r['optimizer'])}}}", *(tex(r.get(c, "--")) for c in cols),
                 tex(r["overall"]), tex(r["reason"][:80] or "--")]
        lines.append(" & ".join(cells) + " \\\\")
    lines += ["\\bottomrule", "\\end{longtable}"]
    return "\n".join(lines) + "\n"


CLASS = {"equivariant": "exact", "basis-dependent": "differs", "chaotic": "within", "inconclusive": "within",
         "determinism failure": "differs", "failed": ""}


def table_html(rows: list[dict]) -> str:
    from ..paper import tables

    cols = _columns(rows)
    body = [[r["library"], r["optimizer"], *(str(r.get(c, "--")) for c in cols), r["overall"], r["reason"] or "--"]
            for r in rows]
    return tables._html_table(["Library", "Optimizer", *(c.removeprefix("verdict:") for c in cols), "Overall",
                               "Reason"], body, _caption(rows), [CLASS[r["overall"]] for r in rows])
