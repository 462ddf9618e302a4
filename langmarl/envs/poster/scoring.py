"""The ``poster`` task's reward: a cooperative format task the embedded SmolLM2-135M can learn.

Two agents make a poster about a topic: agent 0 gives its **key word** (one word), agent 1
writes a **tagline of three to six words that uses the key word**. Neither sees the other's
answer (one turn), so the shared word is a convention the team has to settle on — e.g. both
use the topic's noun ("Ocean" / "The ocean calls you home").

It is a format task by design: the untrained 135M model rambles (about 20% of its sampled
key words are one word, a third of its taglines fit the band, 2–8% of pairs share the word),
and weight-space training can teach it what a capable model does from the instruction alone —
within minutes on a CPU (see benchmarks/RESULTS.md). Nothing here checks meaning.

Reward of one joint answer, in [0, 1]::

    0.35 × key_word_score + 0.35 × tagline_score + 0.3 × [the tagline uses the key word]

Each score is 1 inside its word band and falls linearly outside it (see :func:`band_score`),
so partial progress is rewarded; the last term is the team's and pays only when the key word
is one word found in the tagline (case and a plural/possessive ``s`` ignored). Words are runs
of letters/digits (``Sea.`` and ``"Sea"`` are one word); an empty answer scores 0.

A tagline that echoes the instruction (any of :data:`ECHO_WORDS`) scores 0 and shares no
word: without this rule the agents learned the degenerate convention "<Topic>'s Key Word"
within 30 steps (measured), a tagline in form only.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources
from pathlib import Path

from langmarl.core.errors import ConfigError
from langmarl.core.files import read_input_text

LABEL_BAND = (1, 1, 6)
"""Key word: exactly one word; the score reaches 0 at 1 + 6 words."""
TAGLINE_BAND = (3, 6, 8)
"""Tagline: three to six words; the score reaches 0 at 6 + 8 words."""

WEIGHTS = {"key_word": 0.35, "tagline": 0.35, "shared": 0.3}
"""The reward's terms: the key word's format, the tagline's format, the shared word."""

ECHO_WORDS = frozenset({"key", "keyword", "word", "words", "tagline", "poster"})
"""Words of the instruction; a tagline containing one is an echo, not a tagline."""

_WORD = re.compile(r"[A-Za-z0-9]+(?:['’-][A-Za-z0-9]+)*")


def word_count(text: str) -> int:
    """Words in ``text``: runs of letters and digits (inner apostrophes/hyphens allowed)."""
    return len(_WORD.findall(text))


def band_score(count: int, low: int, high: int, slack: int) -> float:
    """1.0 for ``low <= count <= high``; ``count / low`` below; ``1 - (count - high) / slack``
    above (not below 0); 0.0 for an empty answer."""
    if count <= 0:
        return 0.0
    if count < low:
        return count / low
    if count <= high:
        return 1.0
    return max(0.0, 1.0 - (count - high) / slack)


def _stem(word: str) -> str:
    word = word.lower().replace("’", "'")
    word = word.removesuffix("'s").removesuffix("s'")
    return word.removesuffix("s") if len(word) > 3 else word


def shares_key_word(label: str, tagline: str) -> bool:
    """True when ``label`` is one word and the tagline contains it (case, plural and
    possessive ``s`` ignored: ``Oceans`` matches ``ocean's``)."""
    words = _WORD.findall(label)
    if len(words) != 1:
        return False
    return _stem(words[0]) in {_stem(word) for word in _WORD.findall(tagline)}


def echoes_instruction(tagline: str) -> bool:
    """True when the tagline contains a word of the instruction (:data:`ECHO_WORDS`)."""
    return any(word.lower() in ECHO_WORDS for word in _WORD.findall(tagline))


def poster_scores(label: str, tagline: str) -> dict[str, float]:
    """The parts of the reward of one (key word, tagline) pair and the reward itself."""
    label_score = band_score(word_count(label), *LABEL_BAND)
    if echoes_instruction(tagline):
        tagline_score, shared = 0.0, 0.0
    else:
        tagline_score = band_score(word_count(tagline), *TAGLINE_BAND)
        shared = float(shares_key_word(label, tagline))
    reward = (
        WEIGHTS["key_word"] * label_score
        + WEIGHTS["tagline"] * tagline_score
        + WEIGHTS["shared"] * shared
    )
    return {"key_word": label_score, "tagline": tagline_score, "shared": shared, "reward": reward}


def agent_credit(parts: dict[str, float]) -> dict[str, float]:
    """Each agent's share of :func:`poster_scores`' reward: its own format term plus half the
    shared-word term (the two sum to the reward)."""
    shared = WEIGHTS["shared"] / 2 * parts["shared"]
    return {agent: WEIGHTS[agent] * parts[agent] + shared for agent in ("key_word", "tagline")}


@cache
def builtin_topics() -> tuple[str, ...]:
    """The shipped topics (``data/poster_topics.txt``), in file order."""
    text = resources.files("langmarl.envs.poster").joinpath("data/poster_topics.txt").read_text()
    return tuple(topic_lines(text))


def topic_lines(text: str) -> list[str]:
    """The topics of a topics file's text: one per non-blank line, ``#`` starts a comment."""
    lines = (line.strip() for line in text.splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def load_topics(path: str | None, field: str) -> list[str]:
    """Topics from the text file ``path`` (the config field ``field`` names it), or the
    shipped ones when ``path`` is ``None``.

    Raises:
        ConfigError: if ``path`` is not a file.
    """
    if path is None:
        return list(builtin_topics())
    file = Path(path).expanduser()
    if not file.is_file():
        raise ConfigError(
            f"{field} {path!r} does not exist: give a text file with one topic per line, "
            "or leave it out for the shipped topics"
        )
    return topic_lines(read_input_text(file, "Topics file"))
