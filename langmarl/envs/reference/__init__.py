"""The ``reference`` game (the referential or Lewis game), the same episodes in both spaces.

A speaker sees N items (size × colour × shape, e.g. ``small red circle``) and which one is
the target; a listener sees the same items shuffled and labelled ``A``, ``B``, ``C`` and
hears the first word of the speaker's answer; the team scores 1 when the listener picks
the target. In ``far`` episodes the items share no attribute value, so any word of the
target will do; in ``close`` ones the distractors differ from the target in one attribute,
so only that attribute's value tells it apart. Held-out targets are attribute combinations
no training episode contains (:mod:`~langmarl.envs.reference.episodes`). Unlike the poster
task, the listener cannot do better than chance without the message: the team has to talk.

How the message travels, per space, and why:

- **Weight space** (:mod:`langmarl.magrpo.reference`): by default the listener is the
  frozen ranking listener (:func:`~langmarl.envs.reference.scoring.rank_pick`) inside the
  reward, and the speaker, the one trained agent, speaks in a single turn; the message
  reaches the listener in the reward's own call. With ``listener: generate`` the listener
  is a second trained agent: MAGRPO's agents all answer at every turn of a rollout tree and
  see nothing of each other within a turn, so the game takes two turns and the external
  transition between them puts what the channel carried into the listener's turn-2 prompt.
- **Language space** (:class:`~langmarl.envs.reference.env.ReferenceEnv`): an episode is
  a sequence of steps an environment runs itself, so the speaker's step comes first and its
  answer is in the listener's observation of the next step; no extra turn is needed.

The speaker either writes its word (``speaker: generate``) or chooses one of the target's
words by its likelihood (``speaker: rank``, the run files' setting): the embedded model
rarely writes a size word where the size varies, so a trained writer never learned to name
one, while choosing among the target's words it samples one often enough to be credited.

Modules: ``episodes`` (items, conditions, seeded splits), ``scoring`` (channel, pick,
reward), ``prompts`` (observations and demonstrations, shared by both spaces), ``env``.
"""
