"""Seeded runs of the memory layer on the 16 tasks, and what is reported from them.

What users type sits at this level, one module per command: ``run``, ``report``, ``campaign``,
``publish`` and ``wandb_group`` (``python -m experiments.<command>``). The code beneath is in three
packages, imported one way (``tests/test_import_direction.py``):

- ``loop/``: configuration, conditions and the run loop: config and presets, conditions, work
  units, episodes, executors, the results file, streams, render schedule, the official backend's
  parts, the factories for composers and memories.
- ``audit/``: instruments that score the memory inside an episode: the retrospective state
  assessment and the oracle ladder. They import nothing else of ``experiments``.
- ``reporting/``: everything read back from rows: statistics, report sections and tables, failure
  reasons, the paper comparison, the README's generated blocks, campaigns, publishing, W&B.
"""
