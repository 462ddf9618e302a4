"""The session: the loop that ties reward, learner and agents together, and its records.

- :mod:`~langmarl.p2p.session.loop`: intent -> rewards -> train -> judge -> revise, until it
  passes; :mod:`~langmarl.p2p.session.config`: ``LoopConfig``, its settings;
- :mod:`~langmarl.p2p.session.proposing` and :mod:`~langmarl.p2p.session.iteration`: where an
  iteration's candidates come from and how they are trained;
- :mod:`~langmarl.p2p.session.trainers`: the default trainer and validator a session uses;
- :mod:`~langmarl.p2p.session.guardrails`: reward hacking by one term, and plateaus;
- :mod:`~langmarl.p2p.session.contracts` and :mod:`~langmarl.p2p.session.records`: the typed
  records and the on-disk contract of iterations and sessions (``IterationRecord`` says which
  run of an iteration was judged); :mod:`~langmarl.p2p.session.resume`: picking a session up.
"""
