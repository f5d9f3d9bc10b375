"""The tools beyond the paper: Section 6's twin triplet turned on any optimizer and any model.

:mod:`.diagnose` puts one optimizer through the gauge, A = I and noise twins on the paper's
testbeds and gives its verdict (``gaugelab diagnose``, ``snakemake diagnose``); :mod:`.symmetries`
finds a real model's gauge symmetries from its structure, :mod:`.audit` verifies each and puts an
optimizer through the triplet on it (``gaugelab audit``), with the built-in models of
:mod:`.audit_models`; :mod:`.census` runs every optimizer of a library through both
(``snakemake census``).

The package itself imports nothing: each tool loads torch only when imported.
"""
