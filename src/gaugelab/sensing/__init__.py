"""Matrix sensing (Sections 5, 7 and 8, App. D): the testbed and its training loop
(:mod:`.testbed`), from an experiment's config to run records (:mod:`.runner`), the learning-rate
selection rules S1-S6 (:mod:`.select`), Section 5's controls and the workflow's sensing
experiments (:mod:`.controls`), the Adam-p dial (:mod:`.dial`), Section 8's phase diagram
(:mod:`.phase`), App. D.10's signum audit (:mod:`.signum_audit`), the convex min-nuclear-norm
reference (:mod:`.nuclear`) and the continuous-time flows the analysis reads them against
(:mod:`.flow`).

The package itself imports nothing, so a job that reads only ``select``, ``dial`` or ``phase``
(the summaries, tables and comparisons) starts without torch (tests/test_select.py).
"""
