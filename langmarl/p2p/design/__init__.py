"""Reward design that a small model can drive (issue 38), one module per part:

- :mod:`~langmarl.p2p.design.checks`: a check, a person's ground truth for an intent
  (``check(trajectory, summary) -> float`` in [0, 1]), run confined on a trained run's
  evaluation episodes; with a check, its score decides instead of the LLM judges.
"""
