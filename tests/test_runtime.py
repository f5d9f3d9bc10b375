"""The one place that sets global torch state (gaugelab.runtime)."""

import subprocess
import sys

CHECK = """
import sys, torch
from gaugelab import runtime
runtime.configure(threads=1)
print(torch.are_deterministic_algorithms_enabled(), torch.get_num_threads(), "torch._inductor.config" in sys.modules)
"""


def test_configure_sets_determinism_and_threads_without_importing_the_compiler():
    out = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["True", "1", "False"]
