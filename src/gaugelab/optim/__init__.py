"""The optimizers: each update rule (:mod:`.rules`) and its card (:mod:`.cards`).

``optim.adam``, ``optim.make``, ``optim.REGISTRY``, ``optim.Rule``... are the rules' names. They
load on first use, not with the package: the rules need torch and the cards do not, so a job that
reads only the cards (summaries, tables, the comparison) starts without torch.
"""

from importlib import import_module

_SUBMODULES = ("cards", "rules")  # left to the import system, which sets them here once loaded


def __getattr__(name: str):
    if name.startswith("__") or name in _SUBMODULES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(".rules", __name__), name)


def __dir__() -> list[str]:
    return sorted({*globals(), *dir(import_module(".rules", __name__))})
