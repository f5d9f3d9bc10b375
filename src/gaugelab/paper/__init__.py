"""What the paper prints, beside what the records give: its published values (``published``),
the verdicts (``compare``), the per-section quantities (``sensing_quantities``, ``twin_summary``),
the tables (``tables``, ``table9``, ``merge_table``, and ``table_files``: each table from its job's
files), the figures (``figures``, ``figures_twins``) and the pages (``pages``). Read from records
only: nothing here imports torch (tests/test_layering.py holds it).
"""
