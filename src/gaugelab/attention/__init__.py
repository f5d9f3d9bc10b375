"""Section 6 and Table 9: the attention-head gauge twins.

``configs`` (the models, Table 9's table) and ``pairs`` (the key of a twin run) import no torch, so
the tables and the workflow's parse read them without it; ``transformer``, ``tasks`` and
``corpus`` make the model and its data; ``harness`` is what every twin run shares; ``twins`` runs
Section 6's float32 CPU pairs, ``float64`` (with ``float64_step1``, ``float64_train`` and
``float64_local``) Table 9's float64 suite; ``merge`` is the head-merging extension.
"""
