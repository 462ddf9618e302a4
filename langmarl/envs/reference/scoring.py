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
"""

from __future__ import annotations

import re

from langmarl.envs.reference.episodes import ATTRIBUTES, Episode

_WORD = re.compile(r"[A-Za-z]+")
_LABEL = re.compile(r"(?<![A-Za-z])([A-Z])(?![A-Za-z])")


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
