"""Reward design that a small model can drive (issue 38), one module per part:

- :mod:`~langmarl.p2p.design.checks`: a check, a person's ground truth for an intent
  (``check(trajectory, summary) -> float`` in [0, 1]), run confined on a trained run's
  evaluation episodes; with a check, its score decides instead of the LLM judges.
- :mod:`~langmarl.p2p.design.catalog` and :mod:`~langmarl.p2p.design.proposals`: per env,
  the quantities a reward may read and the objectives over them; proposals compiled to
  reward code.
- :mod:`~langmarl.p2p.design.structured`: the structured author, where the model ranks the
  objectives by likelihood.
- :mod:`~langmarl.p2p.design.baseline`: the env's own reward at the session's budget, checked.
- :mod:`~langmarl.p2p.design.demonstrations`: verified rewards of other envs shown to a
  model that writes code, as earlier chat turns; checked passes join them.
- :mod:`~langmarl.p2p.design.search`: K candidates per iteration: the model's ranked
  objectives (or random draws, the control), then rule-made variants of the best.
- :mod:`~langmarl.p2p.design.candidates`: an iteration's candidates on disk, trained at
  once where the cores allow, the best kept and promoted to the iteration.
"""
