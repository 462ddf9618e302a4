"""The LLM agents of a session: who writes, judges and rewrites the reward.

- :mod:`~langmarl.p2p.agents.author`: intent -> criteria -> reward code -> review -> fix;
- :mod:`~langmarl.p2p.agents.judge`: code, VLM and summary judges of a trained policy
  (``_judge_harness`` runs an LLM-written judge in the sandbox);
  :mod:`~langmarl.p2p.agents.synthesis`: one judgment from the judges' verdicts;
- :mod:`~langmarl.p2p.agents.reviser`: the revision after a judgment, in a conversation
  (:func:`langmarl.llm.tools.converse`) with :mod:`~langmarl.p2p.agents.lookback`, read-only
  views of earlier iterations as a :class:`~langmarl.llm.tools.Toolset`;
- :mod:`~langmarl.p2p.agents.video`: frames of an evaluation video, for the VLM judge and the
  look-back; :mod:`~langmarl.p2p.agents.prompts` and :mod:`~langmarl.p2p.agents.parsing`: the
  templates the agents fill and the pure parsers of their replies.
"""
