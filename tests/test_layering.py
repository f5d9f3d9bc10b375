"""The engine's layers (issue 40): a module imports only from its own folder and the folders below it.

LAYERS lists the folders of ``gaugelab`` from the bottom up, siblings side by side (sensing and
attention: neither imports the other). The modules beside the folders (``configuration``,
``arguments``, ``cli``) sit on top of them all: they may import anything, and no folder may import
them. Imports inside functions count too: they are imports all the same, only later.
"""

import ast
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[1] / "src" / "gaugelab"

LAYERS = (("core",), ("optim",), ("sensing", "attention"), ("paper",), ("tools",))  # bottom up; siblings share a tuple
FOLDERS = [folder for level in LAYERS for folder in level]

def module_name(path: Path) -> str:
    parts = path.relative_to(SOURCE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(source: str, module: str, is_package: bool = False) -> set[str]:
    """Every gaugelab name ``source`` (the text of ``module``) imports, absolute: ``from A import
    b`` gives ``A.b`` (a submodule, or a name whose layer is A's), relative imports resolved."""
    package = module if is_package else module.rpartition(".")[0]
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return {name for name in names if name.split(".")[0] == "gaugelab"}


def folder(name: str) -> str | None:
    """The layered folder of a gaugelab module (or of a name in one); None: not layered yet."""
    parts = name.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in FOLDERS else None


def layer(name: str) -> int | None:
    """The level in LAYERS of a gaugelab module (or of a name in one); None: not layered yet."""
    own = folder(name)
    return None if own is None else next(i for i, level in enumerate(LAYERS) if own in level)


def against_the_layers(module: str, names: set[str]) -> set[str]:
    """The names ``module`` may not import: those of a higher layer or of no layer. The package
    ``gaugelab`` itself is always loaded first, whatever is imported, so it is no edge."""
    own = layer(module)
    if own is None:
        return set()
    return {name for name in names if name != "gaugelab" and folder(name) != folder(module)
            and (layer(name) is None or layer(name) >= own)}


def edges() -> dict[str, set[str]]:
    """Each engine module and the gaugelab names it imports."""
    return {module_name(path): imported(path.read_text(), module_name(path), path.name == "__init__.py")
            for path in sorted(SOURCE.rglob("*.py"))}


def test_every_layered_module_imports_only_its_own_layer_and_those_below():
    found = {(module, name) for module, names in edges().items() for name in against_the_layers(module, names)}
    assert not found, f"imports against the layers {LAYERS}:\n" + "\n".join(
        f"  {module} imports {name}" for module, name in sorted(found))


def test_every_layer_is_a_folder():
    assert all((SOURCE / name / "__init__.py").is_file() for name in FOLDERS)


@pytest.mark.parametrize("module, source, wrong", [
    ("gaugelab.core.records", "from gaugelab import sensing", {"gaugelab.sensing"}),
    ("gaugelab.core.records", "def f():\n    from ..attention import twins", {"gaugelab.attention.twins"}),
    ("gaugelab.core.records", "import gaugelab.optim.rules", {"gaugelab.optim.rules"}),
    ("gaugelab.core.records", "from ..optim import cards", {"gaugelab.optim.cards"}),
    ("gaugelab.optim.rules", "from gaugelab.core import portable\nfrom . import cards\nimport torch", set()),
    ("gaugelab.optim.rules", "from ..paper import twin_summary", {"gaugelab.paper.twin_summary"}),
    ("gaugelab.optim.rules", "from .. import cli", {"gaugelab.cli"}),  # not in a folder: above them all
    ("gaugelab.optim.rules", "from ..attention import harness", {"gaugelab.attention.harness"}),
    ("gaugelab.attention.harness", "from . import pairs\nfrom ..optim import cards", set()),
    ("gaugelab.attention.merge", "from ..paper import tables", {"gaugelab.paper.tables"}),
    ("gaugelab.sensing.runner", "from .. import optim\nfrom ..core import records\nfrom . import testbed", set()),
    ("gaugelab.sensing.runner", "from ..paper.compare import Found", {"gaugelab.paper.compare.Found"}),
    ("gaugelab.sensing.runner", "from ..attention import pairs", {"gaugelab.attention.pairs"}),  # siblings
    ("gaugelab.optim.rules", "from ..sensing import testbed", {"gaugelab.sensing.testbed"}),
    ("gaugelab.paper.tables", "from gaugelab import sensing, optim", set()),
    ("gaugelab.cli", "from gaugelab import paper, sensing", set()),  # not layered: may import anything
])
def test_the_check_sees_each_form_of_import(module, source, wrong):
    """Negative controls: each way of spelling an import against the layers is caught."""
    assert against_the_layers(module, imported(source, module)) == wrong


def test_paper_imports_no_torch():
    """The published values, verdicts, quantities, tables, figures and pages are read from records
    only: every module of ``paper`` imports without torch (its jobs start in a fraction of a second)."""
    import os
    import subprocess
    import sys

    modules = sorted(module_name(p) for p in (SOURCE / "paper").rglob("*.py"))
    code = f"import importlib, sys\nfor m in {modules!r}:\n    importlib.import_module(m)\n" \
           "print('torch' in sys.modules)"
    env = {**os.environ, "PYTHONPATH": str(SOURCE.parent)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert out.stdout.strip() == "False", modules


def test_every_module_is_named_in_the_architecture_page():
    """docs/architecture.md names each engine module by its path under src/gaugelab, and each
    folder of LAYERS, so the page is the whole plan."""
    page = (SOURCE.parents[1] / "docs" / "architecture.md").read_text()
    modules = [p.relative_to(SOURCE).as_posix() for p in sorted(SOURCE.rglob("*.py")) if p.name != "__init__.py"]
    missing = [m for m in modules if f"`{m}`" not in page] + [f for f in FOLDERS if f"{f}/" not in page]
    assert not missing, f"not named in docs/architecture.md: {missing}"
