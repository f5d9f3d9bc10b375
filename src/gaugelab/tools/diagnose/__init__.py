"""The equivariance diagnostic (Section 6): put any optimizer through the twin triplet.

A claim "this optimizer respects the gauge" is tested the way the paper tests its five: train a
base copy and three twins side by side, each with its own optimizer state, and follow how far
each twin's *function* drifts from the base's. The parts, one job each:

* :mod:`.triplet`: the gauge, identity and noise twins beside the base, and the drift between them;
* :mod:`.verdicts`: the thresholds (from the dtype's ε) and the six rules that give the verdict;
* :mod:`.testbeds`: the models (matrix sensing, the Section 6 attention model);
* :mod:`.optimizers` and :mod:`.steppers`: any optimizer, by registry name or ``package.module:Attr``;
* :mod:`.runs`: one diagnosis (a report per testbed) and the diagnoses a workflow config asks for;
* :mod:`.files` and :mod:`.summary`: the diagnosis file, and the rows of the table over many.

The table and the figure are drawn by :mod:`gaugelab.paper.tables` and :mod:`gaugelab.paper.figures_twins`.
Everything a caller uses is importable from here (``diagnose.run_all``, ``diagnose.verdict``...).
"""

from .errors import DiagnoseError
from .files import SCHEMA, bundle, provenance, read_bundle, write
from .optimizers import OptimizerSpec, import_source, label_of, resolve, source_of
from .runs import diagnose, format_line, plan, run_all
from .steppers import RuleStepper, Stepper, TorchStepper
from .summary import caption, summary_rows
from .testbeds import (GAUGE_SEED, NOISE_SEED, TESTBEDS, AttentionTestbed, SensingTestbed, Testbed, make_testbed,
                       testbeds_of)
from .triplet import COPIES, TWINS, bit_identical, drift, run_triplet
from .verdicts import DECADES, RATIO, VERDICTS, agrees, checkpoints, decades, thresholds, verdict

__all__ = [
    "AttentionTestbed", "COPIES", "DECADES", "DiagnoseError", "GAUGE_SEED", "NOISE_SEED", "OptimizerSpec", "RATIO",
    "RuleStepper", "SCHEMA", "SensingTestbed", "Stepper", "TESTBEDS", "TWINS", "Testbed", "TorchStepper", "VERDICTS",
    "agrees", "bit_identical", "bundle", "caption", "checkpoints", "decades", "diagnose", "drift", "format_line",
    "import_source", "label_of", "make_testbed", "plan", "provenance", "read_bundle", "resolve", "run_all",
    "run_triplet", "source_of", "summary_rows", "testbeds_of", "thresholds", "verdict", "write",
]
