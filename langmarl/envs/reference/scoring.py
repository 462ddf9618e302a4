"""The reference game's channel, the listener's pick and the reward (pure functions).

Decisions:

- The channel carries the first ``message_words`` words of the speaker's answer (words are
  runs of letters, lower-cased; punctuation dropped). With the default of one word the
  ``close`` condition asks the speaker to choose: only the value of the attribute in which
  the distractors differ tells the target apart, while in ``far`` any word of the target
  does. The speaker may say more; the rest is not heard.
- The pick is the first standalone capital letter of the listener's answer that is one of
  the episode's labels (``"B"``, ``"B."``, ``"Answer: B"``); an answer without one picks
  nothing. A lower-case ``a`` is an article, never the label ``A``.
- Reward: 1.0 when the pick is the target, else 0.0. No format terms: the measured
  quantity is how often the team gets it right, and the pick's parsing already accepts
  any answer that leads with a label.
- The ranking listener (:func:`rank_pick`) picks the item under which the heard word is
  most likely, ``log P(" <word>" | "The <item>. In one word, it is")``, with any scorer
  of continuations (a local model's :func:`~langmarl.llm.local.scoring.option_logprobs`):
  the embedded model cannot answer with a label but ranks well (DESIGN.md). Both spaces
  use it, so their listeners are the same. The prefix was chosen on training episodes
  (given the right word, w16 engine: 113 of 120 ``close`` and 51 of 60 ``far`` picks
  right, against 105 and 48 with ``"Object: <item>\\nOne word for it:"``); on the 30
  held-out episodes of each condition it picks the target 25 (``close``) and 30 (``far``)
  times (27 and 29 with the earlier prefix): the ceiling of a perfect speaker. Nothing heard
  picks the first label, which is the target one time in ``num_items`` (the target's
  place is uniform).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from langmarl.envs.reference.episodes import ATTRIBUTES, Episode, describe

_WORD = re.compile(r"[A-Za-z]+")
_LABEL = re.compile(r"(?<![A-Za-z])([A-Z])(?![A-Za-z])")
RANK_PREFIX = "The {item}. In one word, it is"
"""What the heard word continues when the ranking listener scores an item."""
Scorer = Callable[[str, list[str]], list[float]]
"""``score(prefix, options) -> log-probabilities``: how likely each option continues the
prefix (a local model's ``option_logprobs``)."""


def channel(message: str, message_words: int = 1) -> str:
    """What the listener hears of ``message``: its first ``message_words`` words, lower case."""
    return " ".join(word.lower() for word in _WORD.findall(message)[:message_words])


def parse_pick(answer: str, labels: str) -> str | None:
    """The label the listener's ``answer`` picks (see the module docstring), or ``None``."""
    for match in _LABEL.finditer(answer):
        if match.group(1) in labels:
            return match.group(1)
    return None


def reference_reward(episode: Episode, answer: str) -> float:
    """1.0 when the listener's ``answer`` picks the episode's target, else 0.0."""
    return float(parse_pick(answer, episode.labels) == episode.target_label)


def distinguishing_word(episode: Episode) -> str:
    """A one-word message that tells the target apart: the value of the attribute in which
    the distractors differ (``close``), or the target's colour (``far``, where any word
    would do). It shows the game is solvable with the default channel."""
    names = list(ATTRIBUTES)
    attribute = episode.varying or "colour"
    return episode.target_item[names.index(attribute)]


def matching_items(episode: Episode, heard: str) -> list[int]:
    """Positions of the items that contain every word ``heard`` (a literal listener)."""
    words = set(heard.lower().split())
    return [i for i, item in enumerate(episode.items) if words and words <= set(item)]


def rank_pick(episode: Episode, heard: str, score: Scorer) -> tuple[str, list[float] | None]:
    """The ranking listener: the label of the item under which ``heard`` is most likely
    (see the module docstring), and each item's score (``None`` when nothing was heard)."""
    if not heard:
        return episode.labels[0], None
    scores = [score(RANK_PREFIX.format(item=describe(item)), [f" {heard}"])[0]
              for item in episode.items]  # fmt: skip
    best = max(range(len(scores)), key=scores.__getitem__)
    return episode.labels[best], scores
