"""gaugelab: the engine of the reproduction of "The Loss Does Not See the Basis, but Adam Does".

Importing it puts the numerics contract in the environment before any torch arithmetic runs
(:mod:`gaugelab.core.runtime`), so every way of starting the engine computes the same bits.
"""

from gaugelab.core import runtime as _runtime

_runtime.apply_contract()
