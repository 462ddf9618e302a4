"""The ``reference`` game in weight space: two turns, the message carried by the transition.

The game (:mod:`langmarl.envs.reference`) is one speaker message and one listener pick.
MAGRPO's agents all answer at every turn of a rollout tree, and the only way one agent's
answer reaches another's prompt is the external transition between turns, so the game
takes two turns:

- turn 1: the speaker (agent 0) sees the items and the target and says its word; the
  listener (agent 1) sees the labelled items with no message yet. Reward 0.
- the transition hands each branch's message, through the channel (its first word), to the
  listener: the child's listener prompt is the labelled items plus what it heard.
- turn 2: the listener picks a label; the speaker's prompt is :data:`SPEAKER_DONE`.
  Reward 1.0 when the pick is the target.

Run it with ``num_turns=2``, ``discount=1.0`` (the return is then the pick's reward) and
``joint_mode="cross"``: in ``cross`` every completion of an agent at a node is paired with
every completion of the other, so the two unscored answers (the listener's first turn,
the speaker's second) get exactly the same credit as their siblings, a zero advantage,
while in ``align`` each would inherit its partner's luck as noise.

The dataset items carry the episode (:func:`~langmarl.envs.reference.episodes.episode_record`)
with ``prompt`` set to its id; the formatters tell the turns apart by ``prompt``: the id at
turn 1, the transition's text at turn 2 (the trainer re-runs the formatter on
``{**example, "prompt": <the transition's text>}``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langmarl.core.transitions import Branch, ExternalTransition, transition_from
from langmarl.envs.reference import prompts
from langmarl.envs.reference.episodes import (
    Condition,
    episode_from_record,
    episode_record,
    make_episodes,
)
from langmarl.envs.reference.scoring import channel, reference_reward
from langmarl.magrpo.rollout import JointSample

TURNS = 2
"""The game's turns in weight space (speaker speaks, listener picks)."""
NUM_TRAIN = 500
"""Generated training episodes when a run file gives no ``num_train``."""
SPEAKER_DONE = prompts.SPEAKER_DONE


def reference_items(
    condition: Condition, num_train: int | None, num_eval: int, *, num_items: int = 3
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Training and held-out dataset items (episodes of seed 0, as in language space)."""
    train = make_episodes(condition, "train", num_train or NUM_TRAIN, num_items=num_items)
    test = make_episodes(condition, "test", num_eval, num_items=num_items)
    return [_item(e) for e in train], [_item(e) for e in test]


def _item(episode: Any) -> dict[str, Any]:
    return {"prompt": episode.id, **episode_record(episode)}


def heard_message(example: Mapping[str, Any]) -> str | None:
    """What the listener heard at this turn: ``None`` at turn 1 (``prompt`` is the id)."""
    prompt = str(example["prompt"])
    return None if prompt == example["id"] else prompt


def speaker_prompt(example: Mapping[str, Any]) -> str:
    """The speaker's prompt: demonstrations and the episode (turn 1), else :data:`SPEAKER_DONE`."""
    if heard_message(example) is not None:
        return SPEAKER_DONE
    observation = prompts.speaker_observation(episode_from_record(example))
    return prompts.with_demonstrations(
        prompts.SPEAKER_INSTRUCTION, prompts.SPEAKER_DEMOS, observation
    )


def listener_prompt(example: Mapping[str, Any]) -> str:
    """The listener's prompt: demonstrations, the labelled items and what it heard."""
    observation = prompts.listener_observation(episode_from_record(example), heard_message(example))
    return prompts.with_demonstrations(
        prompts.LISTENER_INSTRUCTION, prompts.LISTENER_DEMOS, observation
    )


def reference_formatters() -> list[Any]:
    """Prompt builders of the two agents (speaker, listener), for both turns."""
    return [speaker_prompt, listener_prompt]


def reference_transition(message_words: int = 1) -> ExternalTransition:
    """The channel between the turns: the listener's next prompt text is what it hears of
    the speaker's answer on this branch (an empty message is heard as ``"..."``, so the
    formatter never mistakes it for turn 1)."""

    def next_prompts(branch: Branch) -> list[str]:
        heard = channel(branch.completions[0], message_words) or "..."
        return [SPEAKER_DONE, heard]

    return transition_from(next_prompts)


def reference_reward_func(samples: Sequence[JointSample]) -> list[float]:
    """0 at turn 1; at turn 2, 1.0 when the listener's answer picks the target."""
    return [
        reference_reward(episode_from_record(s.example), s.completions[1]) if s.turn else 0.0
        for s in samples
    ]
