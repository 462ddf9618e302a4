"""The ``poster`` task in weight space: its joint reward, dataset items and prompt builders.

The reward, the topics and the prompts live with the environment
(:mod:`langmarl.envs.poster`), so language space trains the same task on the same
held-out topics; this module adapts them to MAGRPO's joint samples.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langmarl.envs.poster import prompts
from langmarl.envs.poster.scoring import (
    ECHO_WORDS,
    LABEL_BAND,
    TAGLINE_BAND,
    band_score,
    builtin_topics,
    echoes_instruction,
    poster_scores,
    shares_key_word,
    word_count,
)
from langmarl.magrpo.rollout import JointSample

__all__ = [
    "ECHO_WORDS",
    "LABEL_BAND",
    "TAGLINE_BAND",
    "band_score",
    "builtin_topics",
    "echoes_instruction",
    "poster_formatters",
    "poster_items",
    "poster_reward",
    "poster_scores",
    "shares_key_word",
    "word_count",
]


def poster_reward(samples: Sequence[JointSample]) -> list[float]:
    """Reward of each (key word, tagline) joint completion."""
    return [poster_scores(*sample.completions[:2])["reward"] for sample in samples]


def poster_items(topics: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Dataset items (``{"prompt": topic}``) of the given or the shipped topics."""
    return [{"prompt": topic} for topic in (topics or builtin_topics())]


def poster_formatters() -> list[Any]:
    """Prompt builders of the two agents (key word, tagline)."""
    return [
        lambda ex: prompts.KEY_WORD.format(prompt=ex["prompt"]),
        lambda ex: prompts.TAGLINE.format(prompt=ex["prompt"]),
    ]
